"""Errors that name the op and the user's line.

Argument, shape and dtype problems are raised when an op is *recorded*, with torch's
exception types, so the traceback already points at the user's line; the message repeats
it (``add(): ... (at train.py:12)``) because a lazy library's errors are otherwise easy to
misread as coming from wherever the graph was later materialized. Errors only knowable at
materialization carry the line that recorded the failing node instead.
"""

from __future__ import annotations

from typing import NoReturn

from lazytorch.ir.node import format_loc, user_loc

__all__ = [
    "ImplicitMaterializationError",
    "check",
    "check_index",
    "check_type",
    "check_value",
    "op_error",
]


class ImplicitMaterializationError(RuntimeError):
    """An implicit materialization (``.item()``, ``print``, ``bool``...) in strict mode."""


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
