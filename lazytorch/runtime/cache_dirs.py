"""The disk cache's directory: where it is, whether it is safe, and careful file writes.

`default_cache_dir` resolves ``LAZYTORCH_CACHE_DIR`` and the XDG defaults. The rest serves
`lazytorch.runtime.disk_cache`, whose module docstring states the rules: directories are
created 0o700 whatever the umask, a directory another user owns or could write is refused
with `CacheDirError` (its message names the path and the fix), and ``tmp/`` and ``locks/``
— whose contents are disposable — are repaired when something else sits in their place.

Example:

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     os.chmod(d, 0o777)
...     try:
...         check_dir(pathlib.Path(d))
...     except CacheDirError as e:
...         print("world-writable" in str(e), "chmod 700" in str(e))
True True
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import re
import shutil
import stat
import sys
import warnings
from typing import Any

from lazytorch._settings import env_value

__all__ = [
    "DIR_MODE",
    "ENV_DIR",
    "FILE_MODE",
    "PREFIX_RE",
    "CacheDirError",
    "check_dir",
    "check_prefix_dirs",
    "default_cache_dir",
    "ensure_scratch_dir",
    "fsync_dir",
    "is_env_dir",
    "listdir",
    "make_private_dirs",
    "remove_tree",
    "same_file",
    "warn",
    "writable",
    "write_private",
]

ENV_DIR = "LAZYTORCH_CACHE_DIR"
DIR_MODE = 0o700
FILE_MODE = 0o600
_CHUNK = 1 << 20
PREFIX_RE = re.compile(r"[0-9a-f]{2}")
"""Names of the key-prefix directories (the first two hex digits of a key)."""
# Warnings are blamed on the first caller outside the cache's own modules.
_INTERNAL_FILES = {__file__, os.path.join(os.path.dirname(__file__), "disk_cache.py")}


class CacheDirError(RuntimeError):
    """The cache directory is unusable or unsafe (its message names the path and the fix)."""


def default_cache_dir() -> pathlib.Path:
    """``LAZYTORCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/lazytorch``, else
    ``~/.cache/lazytorch``.

    Empty variables count as unset, and a relative ``XDG_CACHE_HOME`` is ignored, as the
    XDG base-directory spec requires (a relative cache path would depend on the working
    directory). ``~`` is expanded in ``LAZYTORCH_CACHE_DIR``; a relative value is used
    (against the working directory) with a `RuntimeWarning` that says so, and one whose
    ``~user`` does not expand raises `CacheDirError` naming the variable.
    """
    explicit = env_value(ENV_DIR)
    if explicit:
        try:
            path = pathlib.Path(explicit).expanduser()
        except RuntimeError as exc:  # "~nosuchuser/x", or "~" without a home directory
            raise CacheDirError(
                f"{ENV_DIR}={explicit!r} cannot be used: {exc} "
                f"Fix: set {ENV_DIR} to an absolute path, or unset it"
            ) from None
        if not path.is_absolute():
            warnings.warn(
                f"{ENV_DIR}={explicit!r} is a relative path: the cache is {path.absolute()} "
                "now, and a process started in another directory gets another cache. "
                f"Fix: set {ENV_DIR} to an absolute path",
                RuntimeWarning,
                stacklevel=2,
            )
        return path
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return pathlib.Path(xdg) / "lazytorch"
    return pathlib.Path.home() / ".cache" / "lazytorch"


def is_env_dir(path: pathlib.Path) -> bool:
    """Whether `path` is where ``LAZYTORCH_CACHE_DIR`` points (for error messages)."""
    value = env_value(ENV_DIR)
    try:
        return bool(value) and pathlib.Path(value).expanduser().absolute() == path
    except RuntimeError:
        return False


def same_file(a: os.stat_result, b: os.stat_result | pathlib.Path) -> bool:
    if isinstance(b, pathlib.Path):
        try:
            b = os.lstat(b)
        except FileNotFoundError:
            return False
    return (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)


def make_private_dirs(path: pathlib.Path) -> None:
    """Create `path` and missing parents with mode 0o700 (exactly: the umask can't loosen
    or tighten it). Existing directories are left as they are; `check_dir` judges them.
    """
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_private_dirs(path.parent)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            return
    except OSError as exc:
        raise CacheDirError(
            f"lazytorch cache directory {path} cannot be created: {exc.strerror}. Fix: "
            "create it yourself (mode 700), or set LAZYTORCH_CACHE_DIR to a directory you own"
        ) from exc
    os.chmod(path, DIR_MODE)


def check_dir(path: pathlib.Path) -> None:
    """Refuse a cache directory another user could plant code in; warn if the group can."""
    fix_dir = "set LAZYTORCH_CACHE_DIR to a private directory you own"
    try:
        st = os.stat(path)
    except OSError as exc:
        raise CacheDirError(
            f"lazytorch cache directory {path} is unusable: {exc.strerror}. Fix: {fix_dir}"
        ) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise CacheDirError(
            f"lazytorch cache directory {path} is not a directory. Fix: remove it, or {fix_dir}"
        )
    uid = os.geteuid()
    if st.st_uid != uid:
        raise CacheDirError(
            f"lazytorch cache directory {path} is owned by uid {st.st_uid}, not by you "
            f"(uid {uid}); its owner could plant code that lazytorch would load. "
            f"Fix: chown it to yourself, or {fix_dir}"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        raise CacheDirError(
            f"lazytorch cache directory {path} is world-writable (mode {mode:#o}); any user "
            f"could plant code that lazytorch would load. Fix: chmod 700 {path}, or {fix_dir}"
        )
    if mode & stat.S_IWGRP:
        warn(
            f"lazytorch cache directory {path} is group-writable (mode {mode:#o}): members "
            f"of its group could plant code that lazytorch would load; chmod 700 {path} "
            "unless that group is trusted",
        )


def warn(message: str) -> None:
    """A `RuntimeWarning` blamed on the first caller outside this module."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _INTERNAL_FILES:
        level, frame = level + 1, frame.f_back
    warnings.warn(message, RuntimeWarning, stacklevel=level)


def check_prefix_dirs(entries: pathlib.Path) -> None:
    """`check_dir` for each key-prefix directory: any of them could receive planted entries."""
    for name in listdir(entries):
        path = entries / name
        if PREFIX_RE.fullmatch(name) and os.path.isdir(path) and not os.path.islink(path):
            check_dir(path)


def writable(path: pathlib.Path) -> bool:
    """Whether this process can create files in directory `path` (False on a read-only mount)."""
    return os.access(path, os.W_OK | os.X_OK)


def ensure_scratch_dir(path: pathlib.Path) -> None:
    """Create and check `path`, a directory of disposable contents (tmp/ or locks/).

    Anything else found in its place — a regular file, a symlink, a fifo — is removed and
    replaced by an empty private directory, with a `RuntimeWarning`; a `CacheDirError`
    names the path if that is impossible.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a file"
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CacheDirError(
                f"lazytorch cache directory {path} is {kind}, not a directory, and cannot be "
                f"removed ({exc.strerror}). Fix: rm {path} (lazytorch recreates it)"
            ) from exc
        warn(
            f"lazytorch cache: {path} was {kind}, not a directory; replaced it with an "
            "empty directory (it only holds temporary files or lock files)",
        )
    make_private_dirs(path)
    check_dir(path)


def write_private(path: pathlib.Path, data: Any) -> str:
    """Write a new 0o600 file and fsync it, so a rename after this never exposes a hole.

    `data` is bytes or a binary file object (copied in chunks); returns the SHA-256.
    """
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE
    )
    h = hashlib.sha256()
    with open(fd, "wb") as f:
        os.fchmod(fd, FILE_MODE)
        if isinstance(data, bytes):
            h.update(data)
            f.write(data)
        else:
            while chunk := data.read(_CHUNK):
                h.update(chunk)
                f.write(chunk)
        f.flush()
        os.fsync(fd)
    return h.hexdigest()


def fsync_dir(path: pathlib.Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def listdir(path: pathlib.Path) -> list[str]:
    try:
        return os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []


def remove_tree(path: pathlib.Path) -> None:
    """Remove a directory tree or a file, ignoring what is already gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
