"""Errors that name the op and the user's line.

Argument, shape and dtype problems are raised when an op is *recorded*, with torch's
exception types, so the traceback already points at the user's line; the message repeats
it (``add(): ... (at train.py:12)``) because a lazy library's errors are otherwise easy to
misread as coming from wherever the graph was later materialized. Errors only knowable at
materialization carry the line that recorded the failing node instead.
"""

from __future__ import annotations

import os
from typing import NoReturn

from lazytorch.ir.node import format_loc, user_loc

__all__ = [
    "ImplicitMaterializationError",
    "SettingError",
    "check",
    "check_index",
    "check_type",
    "check_value",
    "op_error",
]


class ImplicitMaterializationError(RuntimeError):
    """An implicit materialization (``.item()``, ``print``, ``bool``...) in strict mode."""


class SettingError(RuntimeError):
    """A setting names a path lazytorch cannot use: ``LAZYTORCH_DUMP_DIR`` or
    ``LAZYTORCH_RECORD`` (or the function that sets the same thing) is a file where a
    directory is needed, under a file, read-only... The message names the setting, the
    path, what is wrong and the fix."""


def path_problem(exc: OSError, path: str | os.PathLike[str]) -> str:
    """What `exc`, raised while creating or writing `path`, says is wrong with it, worded
    to follow the path ("is a directory", "is read-only (...)").

    >>> import errno
    >>> path_problem(PermissionError(errno.EACCES, "Permission denied"), "/d")
    'is not writable (Permission denied)'
    """
    import errno
    from pathlib import Path

    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, (FileExistsError, NotADirectoryError)):  # a file where a dir must be
        p = Path(os.path.abspath(path))
        blocker = next((a for a in p.parents if a.exists() and not a.is_dir()), None)
        if blocker is not None:
            return f"is under {blocker}, which is a file"
        return "is a file, not a directory"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"is not writable ({exc.strerror})"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"is on a full disk ({exc.strerror})"
    return f"cannot be written ({exc.strerror or exc})"


def op_error(exc: type[Exception], op: str, msg: str) -> Exception:
    """An exception of type `exc` whose message names `op` and the user's line."""
    return exc(f"{op}(): {msg} (at {format_loc(user_loc())})")


def check(cond: bool, op: str, msg: str) -> None:
    """RuntimeError (torch's type for shape mismatches) unless `cond`."""
    if not cond:
        raise op_error(RuntimeError, op, msg)


def check_index(cond: bool, op: str, msg: str) -> None:
    if not cond:
        raise op_error(IndexError, op, msg)


def check_type(cond: bool, op: str, msg: str) -> None:
    if not cond:
        raise op_error(TypeError, op, msg)


def check_value(cond: bool, op: str, msg: str) -> None:
    if not cond:
        raise op_error(ValueError, op, msg)


def not_implemented(op: str, msg: str) -> NoReturn:
    raise op_error(NotImplementedError, op, msg)
