"""Writing torch's checkpoint format without importing torch.

``torch.save`` writes a zip archive (members stored uncompressed):

* ``archive/data.pkl`` — the object, pickled with protocol 2. Each tensor is the call
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())``, and each storage a persistent id ``('storage', torch.FloatStorage,
  key, location, numel)``;
* ``archive/data/<key>`` — each storage's elements, raw little-endian bytes (the member's
  data starts at a multiple of 64 bytes, so torch can ``mmap`` it);
* ``archive/byteorder``, ``archive/version``, ``archive/.format_version``,
  ``archive/.storage_alignment`` and ``archive/.data/serialization_id``.

lazytorch writes the same, so ``torch.load`` (``weights_only=True`` included) reads what
``lazytorch.save`` wrote. torch's globals (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``torch.Size``, ``torch.device``) are written by
name: a `_TorchGlobal` stands for each, and the pickler writes its GLOBAL opcode itself
(pickle's own ``save_global`` would import the module to check the name).

Storages: a tensor that is the only one saved from its memory is written alone, compactly
(a view ``x[0]`` saved alone writes one row, where torch writes all of ``x``). Tensors that
view one root — ``{'x': x, 'xt': x.T}`` — share one storage, the root's values, each with
its own offset and strides, as torch writes them; loading makes them views of one tensor
again.

Complex tensors (lazytorch's pairs of real parts) are written as torch writes its own: one
``ComplexFloatStorage`` / ``ComplexDoubleStorage`` each, so torch loads them as complex
tensors, and a complex Parameter inside ``_rebuild_parameter``.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import struct
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

import lazytorch
from lazytorch.ir.device import Device
from lazytorch.ir.dtypes import DType
from lazytorch.nn.parameter import Parameter, _ComplexPair
from lazytorch.ops import views
from lazytorch.ops.complex import ComplexTensor
from lazytorch.tensor import Size, Tensor

__all__ = [
    "LEGACY_MAGIC",
    "LEGACY_PROTOCOL",
    "STORAGE_NAMES",
    "view_layout",
    "write_torch_legacy",
    "write_torch_zip",
]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # torch's legacy format begins with this pickled int
LEGACY_PROTOCOL = 1001

# torch's legacy storage class for each lazytorch dtype (torch writes these names).
STORAGE_NAMES = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
}
# complex tensors (lazytorch's pairs of real parts) are written as torch's complex storages
COMPLEX_STORAGE_NAMES = {"complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_ALIGNMENT = 64  # where each storage's bytes start, as torch aligns them
_ZIP64_FROM_BYTES = (1 << 31) - (1 << 16)  # zipfile must be told before the size is known


class _TorchGlobal:
    """Stands for the torch object ``module.name`` in a pickle: written as its GLOBAL opcode."""

    __slots__ = ("module", "name")
    _cache: dict[tuple[str, str], _TorchGlobal] = {}

    def __new__(cls, module: str, name: str) -> _TorchGlobal:
        key = (module, name)
        if key not in cls._cache:  # one object per name, so the pickle memo reuses it
            obj = cls._cache[key] = object.__new__(cls)
            obj.module, obj.name = module, name
        return cls._cache[key]

    def __call__(self, *args: Any) -> Any:  # pickle requires a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} exists only in a pickle written for torch")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
# a tensor or parameter holding attributes the script set (its __dict__): torch's own forms
_REBUILD_PARAMETER_WITH_STATE = _TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_TENSOR = _TorchGlobal("torch", "Tensor")


class _StorageOut:
    """One storage to write: its key in the archive, its values, where they were."""

    __slots__ = ("array", "key", "location")

    def __init__(self, key: str, array: np.ndarray, location: str) -> None:
        self.key = key
        self.array = array  # flat, C-ordered
        self.location = location


class _Layout:
    """How one tensor is written: its storage, and its offset and strides in it."""

    __slots__ = ("offset", "size", "storage", "stride")

    def __init__(self, storage: _StorageOut, offset: int, size: tuple[int, ...], stride: Any):
        self.storage = storage
        self.offset = offset
        self.size = size
        self.stride = tuple(stride)


class _ParameterData:
    """A Parameter's tensor, pickled inside ``_rebuild_parameter`` as torch does."""

    __slots__ = ("param",)

    def __init__(self, param: Parameter) -> None:
        self.param = param


class _ComplexParameterData:
    """A complex Parameter's values, pickled inside ``_rebuild_parameter`` as torch does."""

    __slots__ = ("z",)

    def __init__(self, z: ComplexTensor) -> None:
        self.z = z


class _Pickler(pickle._Pickler):  # type: ignore[misc,name-defined]
    """Pickles like torch.save: tensors by storage reference, torch's globals by name.

    With `layouts` None it only collects the tensors the object holds (the first pass);
    with the layouts decided it writes the real pickle.
    """

    dispatch = pickle._Pickler.dispatch.copy()  # type: ignore[attr-defined]

    def __init__(
        self, file: IO[bytes], layouts: dict[int, _Layout] | None, legacy: bool = False
    ) -> None:
        super().__init__(file, protocol=2)
        self.layouts = layouts
        self.legacy = legacy
        self.tensors: list[Tensor] = []
        self.complexes: list[ComplexTensor] = []

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageOut:
            dtype = obj.array.dtype.name
            name = STORAGE_NAMES.get(dtype) or COMPLEX_STORAGE_NAMES[dtype]
            storage_type = _TorchGlobal("torch", name)
            pid = ("storage", storage_type, obj.key, obj.location, obj.array.size)
            return (*pid, None) if self.legacy else pid  # legacy: no storage view
        return None

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is ComplexTensor:
            if type(obj._ri) is _ComplexPair:  # a complex Parameter
                args = (_ComplexParameterData(obj), obj.requires_grad, OrderedDict())
                return (_REBUILD_PARAMETER, args)
            return self._complex(obj, obj.requires_grad)
        if kind is _ComplexParameterData:
            return self._complex(obj.z, False)
        if isinstance(obj, Tensor):
            state = obj.__dict__
            if isinstance(obj, Parameter):
                args = (_ParameterData(obj), obj.requires_grad, OrderedDict())
                if state:
                    return (_REBUILD_PARAMETER_WITH_STATE, (*args, dict(state)))
                return (_REBUILD_PARAMETER, args)
            rebuild = self._tensor(obj, obj.requires_grad)
            if state:
                if self.layouts is None:  # the first pass: tensors inside the state count too
                    return (tuple, ([dict(state)],))
                return (_REBUILD_FROM_TYPE, (rebuild[0], _TENSOR, rebuild[1], dict(state)))
            return rebuild
        if kind is _ParameterData:
            return self._tensor(obj.param, False)
        if kind is Size:
            return (_TorchGlobal("torch", "Size"), (tuple(int(d) for d in obj),))
        if kind is Device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_TorchGlobal("torch", "device"), args)
        return NotImplemented

    def _tensor(self, t: Tensor, requires_grad: bool) -> Any:
        return self._rebuild(t, requires_grad, self.tensors)

    def _complex(self, z: ComplexTensor, requires_grad: bool) -> Any:
        return self._rebuild(z, requires_grad, self.complexes)

    def _rebuild(self, obj: Any, requires_grad: bool, found: list[Any]) -> Any:
        """The first pass collects `obj` into `found`; the second writes its rebuild call."""
        if self.layouts is None:
            found.append(obj)
            return (tuple, ())
        lay = self.layouts[id(obj)]
        args = (lay.storage, lay.offset, lay.size, lay.stride, requires_grad, OrderedDict())
        return (_REBUILD_TENSOR, args)

    def save_torch_global(self, obj: _TorchGlobal) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def save_dtype(self, obj: DType) -> None:
        # torch pickles a dtype as the global torch.<name> (torch.float32, torch.bool).
        self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_TorchGlobal] = save_torch_global
    dispatch[DType] = save_dtype


def _tensors_in(obj: Any) -> tuple[list[Tensor], list[ComplexTensor]]:
    """Every tensor `obj` holds, real and complex (first pass: pickling it finds them
    wherever they are)."""
    p = _Pickler(io.BytesIO(), None)
    p.dump(obj)
    return p.tensors, p.complexes


def view_layout(t: Tensor) -> tuple[int, tuple[int, ...]] | None:
    """t's (offset, strides) in its root's row-major memory; None where unknown."""
    assert t._view is not None
    root, steps = t._view
    shape = tuple(root._node.shape)
    if not all(type(d) is int for d in shape):
        return None
    strides = views.contiguous_strides(shape)
    offset = 0
    for step in steps:
        if isinstance(step, views.Slice):
            offset += sum(lo * st for lo, st in zip(step.starts, strides))
        elif isinstance(step, views.Select):
            offset += step.index * strides[step.axis]
        elif not isinstance(step, (views.Reshape, views.Permute, views.Expand, views.Alias)):
            return None
        out = getattr(step, "_out", None)
        if out is None or not all(type(d) is int for d in out):
            return None
        new = step.out_strides(shape, strides, out)
        if new is None or type(offset) is not int:
            return None
        shape, strides = tuple(out), tuple(new)
    if shape != tuple(t._node.shape):
        return None
    return offset, strides


def _plan(
    found: tuple[list[Tensor], list[ComplexTensor]],
) -> tuple[dict[int, _Layout], list[_StorageOut]]:
    """Decide each tensor's storage: shared with the others of its root, or its own (a
    complex tensor: always its own, of complex elements)."""
    tensors, complexes = found
    complexes = list({id(z): z for z in complexes}.values())
    unique = list({id(t): t for t in tensors}.values())
    by_root: dict[int, list[Tensor]] = {}
    roots: dict[int, Tensor] = {}
    for t in unique:
        root = t if t._view is None else t._view[0]
        by_root.setdefault(id(root), []).append(t)
        roots[id(root)] = root
    shared: dict[int, dict[int, tuple[int, tuple[int, ...]]]] = {}
    for rid, group in by_root.items():
        if len(group) < 2:
            continue
        layouts = {}
        for t in group:
            shape = tuple(t._node.shape)
            if t._view is None and all(type(d) is int for d in shape):
                layouts[id(t)] = (0, views.contiguous_strides(shape))
            elif t._view is not None and (lay := view_layout(t)) is not None:
                layouts[id(t)] = lay
            else:  # symbolic sizes: no strides to write, so each is stored alone
                break
        else:
            shared[rid] = layouts
    # One program computes every value written (a save is a cut).
    lazytorch.materialize(
        *(roots[rid] for rid in shared),
        *(t for rid, group in by_root.items() if rid not in shared for t in group),
        *(z._ri for z in complexes),
    )
    storages: list[_StorageOut] = []
    plan: dict[int, _Layout] = {}

    def storage(t: Tensor) -> tuple[_StorageOut, tuple[int, ...]]:
        values = np.asarray(t._values())
        # ravel copies only views that are not row-major; 0-d arrays become 1-d.
        s = _StorageOut(str(len(storages)), values.ravel(order="C"), _location(t))
        storages.append(s)
        return s, values.shape

    for rid, group in by_root.items():
        if rid in shared:
            s, _ = storage(roots[rid])
            for t in group:
                offset, stride = shared[rid][id(t)]
                plan[id(t)] = _Layout(s, offset, tuple(t._node.shape), stride)
        else:
            for t in group:
                s, shape = storage(t)
                plan[id(t)] = _Layout(s, 0, shape, views.contiguous_strides(shape))
    for z in complexes:
        pairs = np.ascontiguousarray(np.asarray(z._ri._values()))
        values = pairs.view(np.complex64 if pairs.dtype == np.float32 else np.complex128)[..., 0]
        s = _StorageOut(str(len(storages)), values.ravel(order="C"), _location(z._ri))
        storages.append(s)
        plan[id(z)] = _Layout(s, 0, values.shape, views.contiguous_strides(values.shape))
    return plan, storages


def _location(t: Tensor) -> str:
    d = t.device
    return d.type if d.index is None or d.type == "cpu" else f"{d.type}:{d.index}"


def write_torch_zip(obj: Any, out: IO[bytes]) -> None:
    """Write `obj` to `out` in torch.save's zip format (see the module docstring)."""
    plan, storages = _plan(_tensors_in(obj))
    pkl = io.BytesIO()
    _Pickler(pkl, plan).dump(obj)
    data_pkl = pkl.getvalue()
    # torch writes a random id; a digest of the contents keeps saves byte-identical.
    digest = hashlib.sha256(data_pkl)
    for s in storages:
        digest.update(s.array.tobytes())
    serialization_id = str(int.from_bytes(digest.digest()[:16], "little")).zfill(40)[:40]
    start = out.tell()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        _write_member(zf, "archive/data.pkl", data_pkl, start)
        _write_member(zf, "archive/.format_version", b"1", start)
        _write_member(zf, "archive/.storage_alignment", str(_ALIGNMENT).encode(), start)
        _write_member(zf, "archive/byteorder", b"little", start)
        for s in storages:
            little = s.array.astype(s.array.dtype.newbyteorder("<"), copy=False)
            _write_member(zf, f"archive/data/{s.key}", little, start)
        _write_member(zf, "archive/version", b"3\n", start)
        _write_member(zf, "archive/.data/serialization_id", serialization_id.encode(), start)


def write_torch_legacy(obj: Any, out: IO[bytes]) -> None:
    """Write `obj` in torch's legacy format (``_use_new_zipfile_serialization=False``):
    pickles of a magic number, the protocol version and system info, the object, the list
    of storage keys, then each storage as an int64 element count and its bytes."""
    plan, storages = _plan(_tensors_in(obj))
    sys_info = {
        "protocol_version": LEGACY_PROTOCOL,
        "little_endian": True,
        "type_sizes": {"short": 2, "int": 4, "long": 4},
    }
    for header in (LEGACY_MAGIC, LEGACY_PROTOCOL, sys_info):
        pickle.dump(header, out, protocol=2)
    _Pickler(out, plan, legacy=True).dump(obj)
    pickle.dump([s.key for s in storages], out, protocol=2)
    for s in storages:
        out.write(struct.pack("<q", s.array.size))
        out.write(s.array.astype(s.array.dtype.newbyteorder("<"), copy=False).tobytes())


def _write_member(zf: zipfile.ZipFile, name: str, data: bytes | np.ndarray, start: int) -> None:
    nbytes = data.nbytes if isinstance(data, np.ndarray) else len(data)
    zip64 = nbytes > _ZIP64_FROM_BYTES
    # A fixed timestamp: saving the same object twice gives byte-identical files.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16  # rw-r--r-- when unzipped
    # Pad the local header's extra field (id "FB", as torch) so the data is aligned.
    header = 30 + len(name.encode()) + (20 if zip64 else 0) + 4
    pad = -(zf.fp.tell() - start + header) % _ALIGNMENT  # type: ignore[union-attr]
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
    with zf.open(info, "w", force_zip64=zip64) as member:
        if isinstance(data, np.ndarray):
            if nbytes:  # the flat array's own memory, not a copy
                # (a uint8 view first: the buffer protocol has no code for ml_dtypes' bfloat16)
                member.write(memoryview(data.view(np.uint8)).cast("B"))
        else:
            member.write(data)
