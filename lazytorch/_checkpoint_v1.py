"""Reading lazytorch's first checkpoint format (format version 1), which ``lazytorch.save``
wrote before it wrote torch's format. Files in it still load.

A version-1 checkpoint is a zip archive (members stored uncompressed) holding:

* ``lazytorch/manifest.json`` — the format name and version, a table of tensors (dtype and
  shape of each), and the saved object as a tree of tagged JSON values:
  ``{"none": null}``, ``{"bool": true}``, ``{"int": 3}``, ``{"float": "inf"}`` (the repr,
  so inf and nan survive), ``{"str": "fc1"}``, ``{"list": [...]}``, ``{"tuple": [...]}``,
  ``{"dict": [[key, value], ...]}``, ``{"ordered_dict": [[key, value], ...]}`` and
  ``{"tensor": 0}`` (an index into the tensor table);
* ``lazytorch/tensors/<i>.npy`` — tensor i's values in NumPy's ``.npy`` format.

Loading parses JSON and reads the ``.npy`` files without unpickling, and builds only the
types listed above: nothing in the file can name code to run.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

import lazytorch
from lazytorch._checkpoint_load import CheckpointError
from lazytorch.tensor import Tensor

__all__ = ["FORMAT", "MANIFEST", "VERSION", "read_archive"]

FORMAT = "lazytorch.save"
VERSION = 1  # load refuses newer versions
MANIFEST = "lazytorch/manifest.json"
# Every lazytorch dtype; its name is also NumPy's name for the same dtype.
_DTYPES = frozenset(
    ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
)
# What a damaged checkpoint's message ends with: nothing in the file can be trusted.
_RESAVE = "; copy the file again from where it was saved, or save it again"


def _tensor_member(i: int) -> str:
    return f"lazytorch/tensors/{i}.npy"


def _type_name(obj: Any) -> str:
    kind = type(obj)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def read_archive(zf: zipfile.ZipFile, name: str, size: int) -> Any:
    """The object in the version-1 checkpoint `zf` (`size`: the file's length)."""
    infos = {info.filename: info for info in zf.infolist()}
    for info in infos.values():
        # save stored members uncompressed; a size beyond the file itself is damage, and
        # reading it would allocate that much first.
        if info.compress_type != zipfile.ZIP_STORED or info.file_size > size:
            raise CheckpointError(
                f"{name} is damaged: bad zip entry for {info.filename!r}{_RESAVE}"
            )
    manifest = _parse_manifest(zf.read(MANIFEST), name)
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
