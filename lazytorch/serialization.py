"""``lazytorch.save`` and ``lazytorch.load``: checkpoints that cannot run code when loaded.

A checkpoint is a zip archive (members stored uncompressed) holding:

* ``lazytorch/manifest.json`` — the format name and version, a table of tensors (dtype and
  shape of each), and the saved object as a tree of tagged JSON values:
  ``{"none": null}``, ``{"bool": true}``, ``{"int": 3}``, ``{"float": "inf"}`` (the repr,
  so inf and nan survive), ``{"str": "fc1"}``, ``{"list": [...]}``, ``{"tuple": [...]}``,
  ``{"dict": [[key, value], ...]}``, ``{"ordered_dict": [[key, value], ...]}`` and
  ``{"tensor": 0}`` (an index into the tensor table);
* ``lazytorch/tensors/<i>.npy`` — tensor i's values in NumPy's ``.npy`` format.

Loading parses JSON and reads ``.npy`` files with ``allow_pickle=False``, and builds only
the types listed above, so a checkpoint cannot name a class to construct or a function to
call: nothing in it is ever executed, unlike a pickle (which ``torch.load`` with
``weights_only=False`` runs).

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
import json
import os
import secrets
import struct
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

import lazytorch
from lazytorch.ir.device import Device
from lazytorch.tensor import Tensor

__all__ = [
    "FORMAT",
    "VERSION",
    "CheckpointError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

# torch's allowlist for its weights-only unpickler. lazytorch checkpoints hold only data
# (no pickled objects), so nothing consults it yet: scripts that register their classes
# run unchanged, and the list is kept for reading torch's own files.
_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes/functions in weights-only loads (torch's API; see above)."""
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    return list(_safe_globals)


def clear_safe_globals() -> None:
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


FORMAT = "lazytorch.save"
VERSION = 1  # raise when the manifest changes meaning; load refuses newer versions

_MANIFEST = "lazytorch/manifest.json"
# Every lazytorch dtype; its name is also NumPy's name for the same dtype.
_DTYPES = frozenset(
    ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
)
# Members near 2 GiB need zip64 records; zipfile must be told before the size is known.
_ZIP64_FROM_BYTES = (1 << 31) - (1 << 16)
_STORABLE = "tensors, dict, OrderedDict, list, tuple, str, int, float, bool and None"
_TORCH_HINT = (
    "this looks like a PyTorch checkpoint; lazytorch.load reads files written by lazytorch.save"
)


class CheckpointError(ValueError):
    """A file that `load` cannot read: not a lazytorch checkpoint, truncated or damaged."""


# What a damaged checkpoint's message ends with: nothing in the file can be trusted.
_RESAVE = "; copy the file again from where it was saved, or save it again"


def _tensor_member(i: int) -> str:
    return f"lazytorch/tensors/{i}.npy"


# -- save --------------------------------------------------------------------------------------
class _Encoder:
    """Turns an object tree into the manifest's tagged JSON, collecting tensors by identity."""

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self._tensor_index: dict[int, int] = {}  # id(tensor) -> its row in the table
        self._open: set[int] = set()  # containers on the current path, to refuse cycles

    def value(self, obj: Any, path: str) -> dict[str, Any]:
        # Exact types: a subclass (IntEnum, namedtuple, np.float64, defaultdict) would come
        # back as its base class, so it is refused rather than silently changed.
        kind = type(obj)
        if obj is None:
            return {"none": None}
        if kind in (bool, int, str):
            return {kind.__name__: obj}
        if kind is float:
            return {"float": repr(obj)}
        if isinstance(obj, Tensor):
            return {"tensor": self._tensor(obj)}
        if kind in (list, tuple, dict, OrderedDict):
            if id(obj) in self._open:
                raise ValueError(f"lazytorch.save: {path} contains itself; cycles cannot be saved")
            self._open.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self._open.discard(id(obj))
        raise TypeError(
            f"lazytorch.save cannot store an object of type {_type_name(obj)} (at {path}); "
            f"it stores {_STORABLE}"
        )

    def _container(self, obj: Any, path: str) -> dict[str, Any]:
        if isinstance(obj, (list, tuple)):
            items = [self.value(v, f"{path}[{i}]") for i, v in enumerate(obj)]
            return {type(obj).__name__: items}
        tag = "ordered_dict" if type(obj) is OrderedDict else "dict"
        pairs = [[self.key(k, path), self.value(v, f"{path}[{k!r}]")] for k, v in obj.items()]
        return {tag: pairs}

    def key(self, k: Any, path: str) -> dict[str, Any]:
        if type(k) is tuple:
            return {"tuple": [self.key(part, path) for part in k]}
        if k is None or type(k) in (bool, int, float, str):
            return self.value(k, path)
        raise TypeError(
            f"lazytorch.save cannot store a dict key of type {_type_name(k)} (in {path}); "
            "keys must be str, int, float, bool, None or tuples of them"
        )

    def _tensor(self, t: Tensor) -> int:
        index = self._tensor_index.get(id(t))
        if index is None:
            index = self._tensor_index[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return index


def _type_name(obj: Any) -> str:
    kind = type(obj)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def save(obj: Any, f: str | os.PathLike[str] | IO[bytes]) -> None:
    """Write `obj` — tensors in dicts, lists, tuples and plain values — to `f`.

    `f` is a path or a binary file object. Writing to a path is atomic: the file appears
    complete or not at all (a temporary file beside it is renamed into place). Tensors
    are materialized (all in one program) and stored by value; a tensor object that
    appears twice is stored once and loads as one object. An unsupported value raises
    TypeError naming its type and where it is (``obj['layer']['fn']``) before anything is
    written.

    >>> import io, lazytorch
    >>> w = lazytorch.arange(3.0)
    >>> buf = io.BytesIO()
    >>> lazytorch.save({"a": w, "b": w}, buf)
    >>> _ = buf.seek(0)
    >>> sd = lazytorch.load(buf)
    >>> sd["a"] is sd["b"], sd["a"].tolist()
    (True, [0.0, 1.0, 2.0])
    """
    encoder = _Encoder()
    root = encoder.value(obj, "obj")
    if encoder.tensors:
        lazytorch.materialize(*encoder.tensors)
    # Values only: detach() so a tensor that requires grad reads like any other. order="C"
    # copies views that are not row-major (np.ascontiguousarray would make 0-d arrays 1-d).
    arrays = [np.asarray(t.detach().numpy(), order="C") for t in encoder.tensors]
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "tensors": [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in arrays],
        "root": root,
    }
    manifest_bytes = json.dumps(manifest, allow_nan=False).encode("utf-8")

    def write(out: IO[bytes]) -> None:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr(_member_info(_MANIFEST), manifest_bytes)
            for i, a in enumerate(arrays):
                info = _member_info(_tensor_member(i))
                with zf.open(info, "w", force_zip64=a.nbytes > _ZIP64_FROM_BYTES) as member:
                    np.save(member, a, allow_pickle=False)

    if isinstance(f, (str, os.PathLike)):
        _write_atomically(os.fspath(f), write)
    else:
        write(f)


def _member_info(name: str) -> zipfile.ZipInfo:
    # A fixed timestamp: saving the same object twice gives byte-identical files.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16  # rw-r--r-- when unzipped
    return info


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
# What a damaged archive makes zipfile, json or numpy raise (CRC mismatch, truncated
# records, bad headers, odd flags); all become CheckpointError.
_DAMAGE = (
    zipfile.BadZipFile,
    EOFError,
    ValueError,
    KeyError,
    TypeError,
    struct.error,
    NotImplementedError,
    RuntimeError,
    RecursionError,
    OverflowError,
)


def load(
    f: str | os.PathLike[str] | IO[bytes],
    map_location: Any = None,
    *,
    weights_only: bool | None = True,
) -> Any:
    """Read an object written by `save`; its tensors come back materialized, on the CPU.

    Only data is read — the format has no way to name code to run — so ``weights_only``
    can only be True (or None, torch's default). ``map_location`` may be None, ``"cpu"``
    or ``lazytorch.device("cpu")``. A file that is not a lazytorch checkpoint (including
    one written by ``torch.save``), or is truncated or damaged, raises `CheckpointError`
    (a ValueError); nothing is returned half-built.

    >>> import io, lazytorch
    >>> buf = io.BytesIO()
    >>> lazytorch.save([lazytorch.tensor([1, 2], dtype=lazytorch.int8), (1.5, None)], buf)
    >>> _ = buf.seek(0)
    >>> lazytorch.load(buf, map_location="cpu")
    [tensor([1, 2], dtype=lazytorch.int8), (1.5, None)]
    """
    if weights_only is not None and not weights_only:
        raise ValueError(
            "lazytorch.load(weights_only=False) is not supported: lazytorch checkpoints hold "
            "only tensors and plain values, and loading never runs code, so there is "
            "nothing that weights_only=False would allow"
        )
    _check_map_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_file(fh, repr(os.fspath(f)))
    named = getattr(f, "name", None)  # an open file's path
    return _load_file(f, repr(named) if isinstance(named, str) else "the file object")


def _check_map_location(map_location: Any) -> None:
    if map_location is None:
        return
    if isinstance(map_location, (str, Device)):
        if lazytorch.device(map_location).type == "cpu":
            return
        raise ValueError(
            f"lazytorch.load(map_location={map_location!r}): lazytorch has only the CPU "
            "device; leave map_location out or pass 'cpu'"
        )
    raise TypeError(
        "lazytorch.load: map_location must be None, 'cpu' or lazytorch.device('cpu'), "
        f"not {_type_name(map_location)}"
    )


def _load_file(fh: IO[bytes], name: str) -> Any:
    if not (hasattr(fh, "seekable") and fh.seekable()):
        fh = io.BytesIO(fh.read())  # zipfile reads from the end, so it needs to seek
    start = fh.tell()
    head = fh.read(4)
    size = fh.seek(0, io.SEEK_END) - start
    fh.seek(start)
    if head[:2] != b"PK":
        if head[:1] == b"\x80":  # a pickle's PROTO opcode: torch's legacy format
            raise CheckpointError(f"{name} is a pickle, not a zip archive: {_TORCH_HINT}")
        raise CheckpointError(f"{name} is not a lazytorch checkpoint (not a zip archive)")
    try:
        with zipfile.ZipFile(fh) as zf:
            return _read_archive(zf, name, size)
    except CheckpointError:
        raise
    except _DAMAGE as exc:
        raise CheckpointError(
            f"{name} is truncated or damaged ({type(exc).__name__}: {exc}){_RESAVE}"
        ) from exc


def _read_archive(zf: zipfile.ZipFile, name: str, size: int) -> Any:
    infos = {info.filename: info for info in zf.infolist()}
    if _MANIFEST not in infos:
        if any(n == "data.pkl" or n.endswith("/data.pkl") for n in infos):
            raise CheckpointError(f"{name}: {_TORCH_HINT}")
        raise CheckpointError(f"{name} is a zip archive but not a lazytorch checkpoint")
    for info in infos.values():
        # save stores members uncompressed; a size beyond the file itself is damage, and
        # reading it would allocate that much first.
        if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
            raise CheckpointError(
                f"{name} is damaged: bad zip entry for {info.filename!r}{_RESAVE}"
            )
    manifest = _parse_manifest(zf.read(_MANIFEST), name)
    tensors = [_read_tensor(zf, i, entry, name) for i, entry in enumerate(manifest["tensors"])]
    return _Decoder(tensors, name).value(manifest["root"], "obj")


def _parse_manifest(data: bytes, name: str) -> dict[str, Any]:
    def refuse_constant(c: str) -> Any:
        raise ValueError(f"JSON constant {c} (save writes floats as strings)")

    manifest = json.loads(data.decode("utf-8"), parse_constant=refuse_constant)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CheckpointError(f"{name}: the manifest does not name the {FORMAT!r} format")
    version = manifest.get("version")
    if type(version) is not int or version < 1:
        raise CheckpointError(f"{name}: the manifest has no valid format version")
    if version > VERSION:
        raise CheckpointError(
            f"{name} was written by a newer lazytorch (format version {version}; "
            f"this version reads up to {VERSION})"
        )
    tensors = manifest.get("tensors")
    if not isinstance(tensors, list) or "root" not in manifest:
        raise CheckpointError(f"{name}: the manifest lacks its tensor table or root")
    for i, entry in enumerate(tensors):
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if (
            not isinstance(entry, dict)
            or entry.get("dtype") not in _DTYPES
            or not isinstance(shape, list)
            or not all(type(d) is int and d >= 0 for d in shape)
        ):
            raise CheckpointError(f"{name}: tensor {i} has a bad entry in the manifest")
    return manifest


def _read_tensor(zf: zipfile.ZipFile, i: int, entry: dict[str, Any], name: str) -> Tensor:
    member = _tensor_member(i)
    try:
        data = zf.read(member)
    except KeyError:
        raise CheckpointError(f"{name} is damaged: {member} is missing{_RESAVE}") from None
    array = _npy_array(data, entry, f"{name} is damaged: {member}")
    if not array.dtype.isnative:  # written on a machine of the other byte order
        array = array.astype(array.dtype.newbyteorder("="))
    return lazytorch.from_numpy(array)


def _npy_array(data: bytes, entry: dict[str, Any], where: str) -> np.ndarray:
    """The array in the ``.npy`` bytes `data`, which must be what the manifest's `entry`
    says; CheckpointError (starting with `where`) otherwise.

    The header is checked against the manifest and the bytes that follow it before
    anything is allocated: a damaged header claiming 2**40 elements is refused, where
    ``np.load`` would first try to allocate terabytes.
    """
    fp = io.BytesIO(data)
    fmt = np.lib.format
    version = fmt.read_magic(fp)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(fp)
    elif version == (2, 0):
        shape, fortran, dtype = fmt.read_array_header_2_0(fp)
    else:  # save writes 1.0 (2.0 for a header over 64 KiB); 3.0 holds only odd field names
        raise CheckpointError(f"{where} has an unsupported .npy version {version}{_RESAVE}")
    if dtype.hasobject:
        raise CheckpointError(
            f"{where} holds pickled Python objects, which load never unpickles "
            "(allow_pickle=False): lazytorch.save writes none, so this file was made otherwise"
        )
    if dtype.name != entry["dtype"] or list(shape) != entry["shape"]:
        raise CheckpointError(
            f"{where} holds {dtype.name}{list(shape)}, which does not match the manifest "
            f"({entry['dtype']}{entry['shape']}){_RESAVE}"
        )
    count = 1
    for d in shape:
        count *= d
    offset = fp.tell()
    if len(data) - offset != count * dtype.itemsize:
        raise CheckpointError(
            f"{where} has {len(data) - offset} bytes of values where {dtype.name}"
            f"{list(shape)} needs {count * dtype.itemsize}{_RESAVE}"
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset).copy()  # writable
    return flat.reshape(shape, order="F" if fortran else "C")


def _is_key(obj: Any) -> bool:
    if type(obj) is tuple:
        return all(_is_key(part) for part in obj)
    return obj is None or type(obj) in (bool, int, float, str)


def _exact(kind: type) -> Callable[[_Decoder, Any, str], Any]:
    """A decoding rule for a JSON scalar that must have exactly type `kind`."""

    def decode(self: _Decoder, payload: Any, path: str) -> Any:
        if type(payload) is not kind:
            raise self._bad(path, f"expected {kind.__name__}")
        return payload

    return decode


class _Decoder:
    """Rebuilds the object tree from the manifest, checking every value it reads."""

    def __init__(self, tensors: list[Tensor], name: str) -> None:
        self.tensors = tensors
        self.name = name

    def value(self, node: Any, path: str) -> Any:
        if not isinstance(node, dict) or len(node) != 1:
            raise self._bad(path, "an entry is not a one-key object")
        ((tag, payload),) = node.items()
        rule = self._RULES.get(tag)
        if rule is None:
            raise self._bad(path, f"unknown entry type {tag!r}")
        return rule(self, payload, path)

    def _bad(self, path: str, what: str) -> CheckpointError:
        return CheckpointError(f"{self.name}: bad manifest at {path}: {what}")

    def _float(self, payload: Any, path: str) -> float:
        if type(payload) is not str:
            raise self._bad(path, "expected a float's text")
        try:
            return float(payload)
        except ValueError:
            raise self._bad(path, f"{payload!r} is not a float") from None

    def _none(self, payload: Any, path: str) -> None:
        if payload is not None:
            raise self._bad(path, "expected null")

    def _items(self, payload: Any, path: str) -> list[Any]:
        if not isinstance(payload, list):
            raise self._bad(path, "expected a list")
        return [self.value(v, f"{path}[{i}]") for i, v in enumerate(payload)]

    def _tuple(self, payload: Any, path: str) -> tuple[Any, ...]:
        return tuple(self._items(payload, path))

    def _pairs(self, payload: Any, path: str) -> list[tuple[Any, Any]]:
        if not isinstance(payload, list):
            raise self._bad(path, "expected a list of pairs")
        pairs = []
        for pair in payload:
            if not isinstance(pair, list) or len(pair) != 2:
                raise self._bad(path, "expected a [key, value] pair")
            key = self.value(pair[0], path)
            if not _is_key(key):
                raise self._bad(path, f"a dict key of type {_type_name(key)}")
            pairs.append((key, self.value(pair[1], f"{path}[{key!r}]")))
        return pairs

    def _dict(self, payload: Any, path: str) -> dict[Any, Any]:
        return dict(self._pairs(payload, path))

    def _ordered_dict(self, payload: Any, path: str) -> OrderedDict[Any, Any]:
        return OrderedDict(self._pairs(payload, path))

    def _tensor(self, payload: Any, path: str) -> Tensor:
        if type(payload) is not int or not 0 <= payload < len(self.tensors):
            raise self._bad(path, f"tensor reference {payload!r} is not in the table")
        return self.tensors[payload]

    # One rule per tag in the manifest; the inverse of _Encoder.value.
    _RULES: dict[str, Callable[[_Decoder, Any, str], Any]] = {
        "none": _none,
        "bool": _exact(bool),
        "int": _exact(int),
        "str": _exact(str),
        "float": _float,
        "list": _items,
        "tuple": _tuple,
        "dict": _dict,
        "ordered_dict": _ordered_dict,
        "tensor": _tensor,
    }
