"""``lazytorch.save`` and ``lazytorch.load``: checkpoints in torch's own format.

``save`` writes what ``torch.save`` writes — a zip archive holding the object pickled with
each tensor as a reference to a storage, and each storage's raw bytes (see
`lazytorch._checkpoint_save`) — so real torch loads the file, and ``load`` reads files
real torch saved (the zip format and the legacy ``_use_new_zipfile_serialization=False``
one), without importing torch (see `lazytorch._checkpoint_load`).

Loading is weights-only by default, as in torch 2.6 and later: only tensors, containers
(dict, list, tuple, set, ``OrderedDict``), numbers, strings, None, ``Size``, dtypes and
devices load, plus the classes `add_safe_globals` allows; any other global the file names
raises ``pickle.UnpicklingError`` naming it, and nothing in the file is run.
``weights_only=False`` unpickles anything (NumPy arrays, ``argparse.Namespace``, user
classes) and so runs whatever code the file names: use it only for files you trust.
Files written by lazytorch's first format (a JSON manifest and ``.npy`` members) still load.

>>> import io, lazytorch
>>> buf = io.BytesIO()
>>> lazytorch.save({"w": lazytorch.ones(2, 2), "step": 10}, buf)
>>> _ = buf.seek(0)
>>> lazytorch.load(buf)
{'w': tensor([[1., 1.],
        [1., 1.]]), 'step': 10}
"""

from __future__ import annotations

import contextlib
import io
import mmap as _mmap
import os
import pickle
import secrets
import zipfile
from collections.abc import Callable
from typing import IO, Any

from lazytorch._checkpoint_load import (
    DAMAGE,
    DAMAGE_UNSAFE,
    CheckpointError,
    DeviceUnavailableError,
    NotDamage,
    WeightsOnlyError,
    load_torch_legacy,
    load_torch_zip,
    torch_zip_prefix,
)

__all__ = [
    "CheckpointError",
    "WeightsOnlyError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

# The globals a weights-only load allows beyond torch's own (as torch's allowlist): each a
# class or function, or (object, "module.name") for one pickled under another name.
_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes/functions in weights-only loads, as ``torch.serialization`` does.

    >>> import argparse, io, lazytorch
    >>> buf = io.BytesIO()
    >>> lazytorch.save({"args": argparse.Namespace(lr=0.1)}, buf)
    >>> lazytorch.serialization.add_safe_globals([argparse.Namespace])
    >>> _ = buf.seek(0)
    >>> lazytorch.load(buf)
    {'args': Namespace(lr=0.1)}
    >>> lazytorch.serialization.clear_safe_globals()
    """
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals `add_safe_globals` allowed."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global `add_safe_globals` allowed."""
    _safe_globals.clear()


class safe_globals:
    """Context manager: `add_safe_globals` for the duration of the block.

    >>> import lazytorch
    >>> with lazytorch.serialization.safe_globals([dict]):
    ...     dict in lazytorch.serialization.get_safe_globals()
    True
    >>> dict in lazytorch.serialization.get_safe_globals()
    False
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        self._saved = list(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _safe_globals[:] = self._saved


# -- save --------------------------------------------------------------------------------------
def save(
    obj: Any,
    f: str | os.PathLike[str] | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Write `obj` to `f` (a path or a binary file object) as ``torch.save`` does.

    `obj` may hold anything picklable: tensors (Parameters stay Parameters), NumPy arrays,
    dicts, lists, tuples, sets, namedtuples, ``OrderedDict``, numbers, strings, None,
    ``Size``, dtypes, devices and plain objects (``argparse.Namespace``, dataclasses).
    Tensors are materialized first, all in one program (a save is a cut), and stored by
    value; a tensor object saved twice loads as one object, and tensors viewing one tensor
    share a storage in the file, as torch writes them. Writing to a path is atomic: the
    file appears complete or not at all. ``_use_new_zipfile_serialization=False`` writes
    torch's legacy format. Only pickle protocol 2 is written (torch's default).

    >>> import io, lazytorch
    >>> w = lazytorch.arange(3.0)
    >>> buf = io.BytesIO()
    >>> lazytorch.save({"a": w, "b": w}, buf)
    >>> _ = buf.seek(0)
    >>> sd = lazytorch.load(buf)
    >>> sd["a"] is sd["b"], sd["a"].tolist()
    (True, [0.0, 1.0, 2.0])
    """
    # lazy: import time (loads nn)
    from lazytorch._checkpoint_save import write_torch_legacy, write_torch_zip

    if pickle_module not in (None, pickle):
        raise ValueError("lazytorch.save: pickle_module must be None or the pickle module")
    if pickle_protocol != 2:
        raise ValueError(
            f"lazytorch.save(pickle_protocol={pickle_protocol!r}): only protocol 2, the one "
            "torch.save writes, is supported"
        )
    write = write_torch_zip if _use_new_zipfile_serialization else write_torch_legacy
    if isinstance(f, (str, os.PathLike)):
        _write_atomically(os.fspath(f), lambda out: write(obj, out))
    else:
        write(obj, f)


def _write_atomically(path: str, write: Callable[[IO[bytes]], None]) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # os.open with 0o666 lets the umask decide the mode, as a plain open() would
    # (tempfile's files are always 0600).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())  # the rename must not land before the data does
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# -- load --------------------------------------------------------------------------------------
def load(
    f: str | os.PathLike[str] | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Read an object that `save` or ``torch.save`` wrote to `f` (a path or a binary file).

    ``weights_only`` (None means True, torch's default since 2.6) allows only tensors,
    containers and plain values, plus `add_safe_globals`; other globals raise
    ``pickle.UnpicklingError`` naming them. ``weights_only=False`` unpickles anything (it
    runs the code the file names: only for trusted files). ``map_location`` is torch's:
    None (each tensor where it was saved), a device or its name, a dict from saved
    location to target (``{"cuda:0": "cpu"}``), or a function ``(storage, location)``
    returning ``storage`` or ``storage.cpu()``/``.cuda()``, or None. Tensors come back
    materialized. A file that is not a checkpoint, or is truncated or damaged, raises
    `CheckpointError` (a ValueError). ``mmap=True`` (a path only) reads through a memory
    map.

    >>> import io, lazytorch
    >>> buf = io.BytesIO()
    >>> lazytorch.save([lazytorch.tensor([1, 2], dtype=lazytorch.int8), (1.5, None)], buf)
    >>> _ = buf.seek(0)
    >>> lazytorch.load(buf, map_location="cpu")
    [tensor([1, 2], dtype=lazytorch.int8), (1.5, None)]
    """
    if pickle_module not in (None, pickle):
        raise ValueError("lazytorch.load: pickle_module must be None or the pickle module")
    unknown = set(pickle_load_args) - {"encoding", "errors", "fix_imports"}
    if unknown:
        raise TypeError(f"lazytorch.load got unexpected keyword arguments {sorted(unknown)}")
    options = {
        "map_location": map_location,
        "weights_only": weights_only is None or bool(weights_only),
        "safe_globals": list(_safe_globals),
    }
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            if mmap:
                with _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ) as mapped:
                    view = _MappedFile(mapped)
                    return _load_file(view, repr(os.fspath(f)), options, pickle_load_args)
            return _load_file(fh, repr(os.fspath(f)), options, pickle_load_args)
    if mmap:
        raise ValueError("lazytorch.load: f must be a file path in order to use mmap=True")
    named = getattr(f, "name", None)  # an open file's path
    where = repr(named) if isinstance(named, str) else "the file object"
    return _load_file(f, where, options, pickle_load_args)


class _MappedFile(io.RawIOBase):
    """A read-only file over a memory map (zipfile wants a file object that can seek)."""

    def __init__(self, mapped: _mmap.mmap) -> None:
        self.mapped = mapped

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.mapped.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.mapped.seek(offset, whence)
        return self.mapped.tell()

    def tell(self) -> int:
        return self.mapped.tell()


def _load_file(fh: Any, where: str, options: dict[str, Any], pickle_args: dict[str, Any]) -> Any:
    if not (hasattr(fh, "seekable") and fh.seekable()):
        fh = io.BytesIO(fh.read())  # zipfile reads from the end, so it needs to seek
    start = fh.tell()
    head = fh.read(4)
    size = fh.seek(0, io.SEEK_END) - start
    fh.seek(start)
    reader_args = {**options, "where": where}
    # A weights-only load runs no code of the file's, so any error while reading it means
    # damage; with weights_only=False the file's own code may raise anything.
    damage = DAMAGE if options["weights_only"] else DAMAGE_UNSAFE
    if head[:2] == b"PK":
        with _damage_is_checkpoint_error(where, DAMAGE):
            zf = zipfile.ZipFile(fh)
        with zf, _damage_is_checkpoint_error(where, damage):
            return _load_zip(zf, where, size, reader_args, pickle_args)
    if head[:1] == b"\x80":  # a pickle's PROTO opcode: torch's legacy format
        with _damage_is_checkpoint_error(where, damage):
            return load_torch_legacy(fh, reader_args, **pickle_args)
    raise CheckpointError(f"{where} is not a checkpoint (neither a zip archive nor a pickle)")


@contextlib.contextmanager
def _damage_is_checkpoint_error(where: str, damage: tuple[type[BaseException], ...]) -> Any:
    try:
        yield
    except (CheckpointError, WeightsOnlyError, DeviceUnavailableError):
        raise
    except NotDamage as wrapped:
        raise wrapped.error from None
    except damage as exc:
        raise CheckpointError(
            f"{where} is truncated or damaged ({type(exc).__name__}: {exc}); copy the file "
            "again from where it was saved, or save it again"
        ) from exc


def _load_zip(
    zf: zipfile.ZipFile,
    where: str,
    size: int,
    reader_args: dict[str, Any],
    pickle_args: dict[str, Any],
) -> Any:
    from lazytorch import _checkpoint_v1  # lazy: import time (loads nn)

    names = zf.namelist()
    if _checkpoint_v1.MANIFEST in names:  # lazytorch's first format: data only, no code
        with _damage_is_checkpoint_error(where, DAMAGE):
            return _checkpoint_v1.read_archive(zf, where, size)
    prefix = torch_zip_prefix(names)
    if prefix is None:
        raise CheckpointError(f"{where} is a zip archive but not a checkpoint (no data.pkl)")
    return load_torch_zip(zf, prefix, size, reader_args, **pickle_args)
