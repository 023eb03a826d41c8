"""Reading torch's checkpoint formats without importing torch.

``torch.save`` pickles the object with every storage as a persistent id and every tensor as
a call of ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` (see
`lazytorch._checkpoint_save`). Two layouts hold the storages' bytes:

* the zip archive (torch 1.6 and later): ``<prefix>/data.pkl`` and ``<prefix>/data/<key>``;
* the legacy stream (``_use_new_zipfile_serialization=False``): pickles of a magic number,
  a protocol version and system info, then the object, then the list of storage keys, then
  each storage as an int64 element count followed by its bytes.

`Reader` unpickles either with `find_class` as the gate. With ``weights_only`` (torch's
default since 2.6) only the globals torch's weights-only unpickler allows resolve — the
tensor rebuild functions, storage classes, dtypes, ``torch.Size``, ``torch.device``,
``collections.OrderedDict``, ``set`` — each mapped to its lazytorch counterpart, plus what
``lazytorch.serialization.add_safe_globals`` allowed; anything else raises
``pickle.UnpicklingError`` naming it. Nothing else in the file is called. With
``weights_only=False`` other globals import normally (``torch.*`` names map to
``lazytorch.*`` where lazytorch has them), so the file can run any code it names.

Tensors that share a storage in the file load as views of one tensor where lazytorch can
express the view (slices, selects, transposes, reshapes, expands), so writing through one
shows in the others, as in torch; otherwise each loads with its own copy of its values.
"""

from __future__ import annotations

import codecs
import collections
import importlib
import io
import itertools
import math
import pickle
import struct
import warnings
import weakref
import zipfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np

import lazytorch
from lazytorch import cuda
from lazytorch._checkpoint_save import (
    COMPLEX_STORAGE_NAMES,
    LEGACY_MAGIC,
    LEGACY_PROTOCOL,
    STORAGE_NAMES,
    view_layout,
)
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import Device
from lazytorch.nn.parameter import Parameter
from lazytorch.ops._core import ComplexBase, leaf_node, wrap
from lazytorch.ops.complex import ComplexTensor
from lazytorch.tensor import Size, Tensor

__all__ = [
    "DAMAGE",
    "DAMAGE_UNSAFE",
    "CheckpointError",
    "DeviceUnavailableError",
    "NotDamage",
    "Reader",
    "WeightsOnlyError",
    "load_torch_legacy",
    "load_torch_zip",
    "torch_zip_prefix",
]


class CheckpointError(ValueError):
    """A file that `load` cannot read: not a checkpoint, truncated or damaged."""


class WeightsOnlyError(pickle.UnpicklingError):
    """A global that a weights-only load does not allow."""


class NotDamage(Exception):
    """Carries an error that is not the file's fault (from a map_location function, or about
    it) past the handler that turns reading errors into CheckpointError."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class DeviceUnavailableError(RuntimeError):
    """The file's tensors were saved on a device this machine lacks (torch's RuntimeError)."""


# What a damaged file makes zipfile, json, struct or pickle raise (CRC mismatch, truncated
# records, bad headers, odd flags, an opcode stream that builds nonsense).
DAMAGE = (
    zipfile.BadZipFile,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
    TypeError,
    struct.error,
    pickle.UnpicklingError,
    NotImplementedError,
    RuntimeError,
    RecursionError,
    OverflowError,
    UnicodeDecodeError,
)
# With weights_only=False the file runs code of its own, whose errors are its own: only
# what zip or pickle raise on their own means damage.
DAMAGE_UNSAFE = (zipfile.BadZipFile, EOFError, struct.error, pickle.UnpicklingError)


class _StorageType:
    """torch.FloatStorage and its kin, as named in a pickle: which dtype a storage holds."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = dtype  # None: torch.UntypedStorage, whose tensors name their dtype


class _ComplexElements:
    """The element type of a complex storage (lazytorch has no complex DType: its complex
    tensors are pairs of real parts); what a storage read needs of a DType."""

    __slots__ = ("name", "np")

    def __init__(self, name: str) -> None:
        self.name = name
        self.np = np.dtype(name)


_STORAGE_TYPES = {
    name: _StorageType(name, getattr(dt, "bool_" if d == "bool" else d))
    for d, name in STORAGE_NAMES.items()
}
_STORAGE_TYPES["UntypedStorage"] = _StorageType("UntypedStorage", None)
for _d, _name in COMPLEX_STORAGE_NAMES.items():
    _STORAGE_TYPES[_name] = _StorageType(_name, _ComplexElements(_d))
# torch element types lazytorch lacks: named in the error rather than loaded wrongly.
_MISSING_DTYPES = {
    "ComplexHalfStorage": "complex32",
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}
_DTYPES = {d.name: d for d in (getattr(dt, n) for n in dt.__all__) if isinstance(d, dt.DType)}
_TORCH_ONLY_DTYPES = frozenset(
    (
        "complex32",
        "complex64",
        "complex128",
        "uint16",
        "uint32",
        "uint64",
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "qint8",
        "quint8",
        "qint32",
        "quint4x2",
        "quint2x4",
        "cfloat",
        "cdouble",
        "chalf",
    )
)
_PLAIN_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): codecs.encode,  # how protocol 2 pickles bytes
    ("torch", "Size"): Size,
    ("torch", "Tensor"): Tensor,
    ("torch.nn.parameter", "Parameter"): Parameter,
}


def _missing_dtype(name: str) -> CheckpointError:
    return CheckpointError(
        f"lazytorch.load: the file holds a torch.{name} tensor or dtype, and lazytorch has no "
        f"{name} dtype; convert it in torch before saving (for example .float())"
    )


class _MapStorage:
    """What a ``map_location`` callable receives: a storage, read on the CPU, whose
    ``cpu()``/``cuda()``/``to()`` say where it should go."""

    __slots__ = ("device", "nbytes_")

    def __init__(self, device: Device, nbytes: int) -> None:
        self.device = device
        self.nbytes_ = nbytes

    def nbytes(self) -> int:
        return self.nbytes_

    def size(self) -> int:
        return self.nbytes_

    def cpu(self) -> _MapStorage:
        return _MapStorage(lazytorch.device("cpu"), self.nbytes_)

    def cuda(self, device: Any = None, non_blocking: bool = False) -> _MapStorage:
        target = "cuda" if device is None else device
        if isinstance(device, int):
            target = f"cuda:{device}"
        return _MapStorage(lazytorch.device(target), self.nbytes_)

    def to(self, device: Any = None, non_blocking: bool = False) -> _MapStorage:
        return _MapStorage(lazytorch.device(str(device)), self.nbytes_)


def _as_device(where: Any) -> Device:
    # torch.device objects (real torch's too) print as their name.
    return lazytorch.device(where if isinstance(where, (str, Device)) else str(where))


def restore_device(map_location: Any, location: str, nbytes: int) -> Device:
    """Where a storage saved at `location` loads (torch's map_location rules)."""
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif callable(map_location) and not isinstance(map_location, (str, Device)):
        try:
            result = map_location(_MapStorage(lazytorch.device("cpu"), nbytes), location)
        except Exception as exc:
            raise NotDamage(exc) from exc
        if result is None:
            target = location
        elif isinstance(result, _MapStorage):
            return result.device
        else:
            raise NotDamage(
                TypeError(
                    "lazytorch.load: a map_location function must return the storage it "
                    "was given (or its .cpu()/.cuda()/.to() result) or None, not "
                    f"{type(result).__name__}"
                )
            )
    else:
        target = map_location
    device = _as_device(target)
    if device.type == "cuda" and not cuda.is_available():
        raise DeviceUnavailableError(
            "Attempting to deserialize object on a CUDA device but "
            "lazytorch.cuda.is_available() is False. If you are running on a CPU-only "
            "machine, please use lazytorch.load with map_location='cpu' to map your "
            "storages to the CPU."
        )
    return device


class _Storage:
    """A storage's values as read from the file, and the tensors made from it."""

    __slots__ = ("array", "device", "key", "users")

    def __init__(self, key: str, array: np.ndarray, device: Device) -> None:
        self.key = key
        self.array = array  # flat; dtype uint8 for an untyped storage
        self.device = device
        self.users: list[tuple[Tensor, int, tuple[int, ...], tuple[int, ...]]] = []


class Reader:
    """One load: resolves globals, reads storages, rebuilds tensors, then re-links views.

    `read_storage(key, dtype_np, numel)` returns a storage's flat values (checked against
    the size the pickle claims); the pickle-facing methods check every argument, since
    a damaged or hostile file chooses them.
    """

    def __init__(
        self,
        read_storage: Callable[[str, np.dtype, int], np.ndarray],
        map_location: Any,
        weights_only: bool,
        safe_globals: list[Any],
        where: str,
    ) -> None:
        self.read_storage = read_storage
        self.map_location = map_location
        self.weights_only = weights_only
        self.safe_globals = safe_globals
        self.where = where
        self.storages: dict[str, _Storage] = {}
        self.rebuilders = {
            ("torch._utils", "_rebuild_tensor"): self.rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v2"): self.rebuild_tensor,
            ("torch._utils", "_rebuild_tensor_v3"): self.rebuild_tensor_v3,
            ("torch._utils", "_rebuild_parameter"): self.rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): self.rebuild_parameter,
            ("torch._tensor", "_rebuild_from_type_v2"): self.rebuild_from_type_v2,
        }

    def unpickler(self, f: IO[bytes], **pickle_load_args: Any) -> pickle.Unpickler:
        reader = self

        class _Unpickler(pickle.Unpickler):
            def find_class(self, module: str, name: str) -> Any:
                # The plain import, for weights_only=False, is pickle's own.
                return reader.find_class(module, name, super().find_class)

            def persistent_load(self, pid: Any) -> Any:
                return reader.persistent_load(pid)

        return _Unpickler(f, **pickle_load_args)

    # -- globals ---------------------------------------------------------------------------
    def find_class(self, module: str, name: str, plain: Callable[[str, str], Any]) -> Any:
        if module == "__builtin__":  # protocol 2 names Python 2's module
            module = "builtins"
        found = self._torch_global(module, name)
        if found is not None:
            return found
        for entry in self.safe_globals:
            obj, full = entry if isinstance(entry, tuple) else (entry, _full_name(entry))
            if full == f"{module}.{name}":
                return obj
        if self.weights_only:
            short = name.rsplit(".", 1)[-1]
            hint = (
                " (lazytorch follows torch: NumPy arrays load only with weights_only=False)"
                if module.split(".")[0] == "numpy"
                else ""
            )
            raise WeightsOnlyError(
                f"lazytorch.load({self.where}, weights_only=True): the global {module}.{name} "
                f"is not allowed{hint}. If you trust this file, allow it with "
                f"lazytorch.serialization.add_safe_globals([{short}]) or the "
                f"lazytorch.serialization.safe_globals([{short}]) context manager, or load "
                "with weights_only=False, which lets the file run any code it names"
            )
        if module == "torch" or module.startswith("torch."):
            mirrored = _lazytorch_counterpart(module, name)
            if mirrored is not None:
                return mirrored
        return plain(module, name)

    def _torch_global(self, module: str, name: str) -> Any:
        rebuild = self.rebuilders.get((module, name))
        if rebuild is not None:
            return rebuild
        plain = _PLAIN_GLOBALS.get((module, name))
        if plain is not None:
            return plain
        if module != "torch":
            return None
        if name in _STORAGE_TYPES:
            return _STORAGE_TYPES[name]
        if name in _MISSING_DTYPES:
            raise _missing_dtype(_MISSING_DTYPES[name])
        if name == "device":
            return _as_device
        if name in _DTYPES:
            return _DTYPES[name]
        if name in _TORCH_ONLY_DTYPES:
            raise _missing_dtype(name)
        return None

    # -- storages and tensors --------------------------------------------------------------
    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) not in (5, 6):
            raise self._bad(f"an unknown persistent id {pid!r}")
        kind, storage_type, key, location, numel, *view = (
            p.decode("ascii") if isinstance(p, bytes) else p for p in pid
        )
        if (
            kind != "storage"
            or not isinstance(storage_type, _StorageType)
            or not isinstance(key, str)
            or not isinstance(location, str)
            or type(numel) is not int
            or numel < 0
        ):
            raise self._bad(f"a bad storage reference {pid!r}")
        storage = self.storages.get(key)
        if storage is None:
            np_dtype = np.dtype(np.uint8) if storage_type.dtype is None else storage_type.dtype.np
            array = self.read_storage(key, np_dtype, numel)
            device = restore_device(self.map_location, location, array.nbytes)
            storage = self.storages[key] = _Storage(key, array, device)
        if view and view[0] is not None:  # legacy: a storage view (key, offset, numel)
            view_key, offset, size = view[0]
            if view_key not in self.storages:
                if not (offset >= 0 and offset + size <= storage.array.size):
                    raise self._bad(f"storage view {view_key!r} lies outside its storage")
                part = storage.array[offset : offset + size]
                self.storages[view_key] = _Storage(view_key, part, storage.device)
            storage = self.storages[view_key]
        return storage

    def rebuild_tensor(
        self,
        storage: Any,
        storage_offset: Any,
        size: Any,
        stride: Any,
        requires_grad: Any = False,
        backward_hooks: Any = None,
        metadata: Any = None,
    ) -> Tensor:
        return self._tensor(storage, storage_offset, size, stride, requires_grad, None)

    def rebuild_tensor_v3(
        self,
        storage: Any,
        storage_offset: Any,
        size: Any,
        stride: Any,
        requires_grad: Any,
        backward_hooks: Any,
        dtype: Any,
        metadata: Any = None,
    ) -> Tensor:
        if not isinstance(dtype, dt.DType):
            raise self._bad(f"_rebuild_tensor_v3 with dtype {dtype!r}")
        return self._tensor(storage, storage_offset, size, stride, requires_grad, dtype)

    def _tensor(
        self,
        storage: Any,
        offset: Any,
        size: Any,
        stride: Any,
        requires_grad: Any,
        dtype: dt.DType | None,
    ) -> Tensor:
        if not isinstance(storage, _Storage):
            raise self._bad(f"a tensor whose storage is {type(storage).__name__}")
        size, stride = _int_tuple(size), _int_tuple(stride)
        if (
            type(offset) is not int
            or size is None
            or stride is None
            or len(size) != len(stride)
            or offset < 0
            or any(d < 0 for d in size)
            or any(s < 0 for s in stride)
        ):
            raise self._bad(f"a tensor with offset {offset!r}, size {size!r}, stride {stride!r}")
        flat = storage.array
        if dtype is not None and flat.dtype != dtype.np:  # an untyped storage's bytes
            if flat.nbytes % dtype.itemsize:
                raise self._bad(f"a {dtype.name} tensor on {flat.nbytes} bytes")
            flat = flat.view(dtype.np)
        count = math.prod(size)
        if count and offset + sum((d - 1) * s for d, s in zip(size, stride)) >= flat.size:
            raise self._bad(
                f"a tensor (offset {offset}, size {list(size)}, stride {list(stride)}) that "
                f"reaches past its storage of {flat.size} elements"
            )
        if count == 0:
            values = np.empty(size, flat.dtype)
        elif _is_contiguous(size, stride):
            values = flat[offset : offset + count].reshape(size)  # no copy
        else:
            item = flat.itemsize
            window = np.lib.stride_tricks.as_strided(
                flat[offset:], size, tuple(s * item for s in stride), writeable=False
            )
            values = np.ascontiguousarray(window)
        if values.dtype.kind == "c":  # a complex tensor: its pairs of parts, not shared
            pairs = np.ascontiguousarray(values).view(values.real.dtype).reshape(*size, 2)
            z = ComplexTensor(wrap(leaf_node(pairs, storage.device)))
            if requires_grad is True:
                z.requires_grad_(True)
            return z  # type: ignore[return-value]
        t = wrap(leaf_node(values, storage.device))
        if requires_grad is True:
            t.requires_grad_(True)
        else:
            storage.users.append((t, offset, size, stride))
        return t

    def rebuild_parameter(
        self, data: Any, requires_grad: Any, backward_hooks: Any, state: Any = None
    ) -> Parameter:
        if not isinstance(data, (Tensor, ComplexBase)):
            raise self._bad(f"a Parameter of {type(data).__name__}")
        param = Parameter(data, bool(requires_grad))
        _set_state(param, state)
        return param

    def rebuild_from_type_v2(self, func: Any, new_type: Any, args: Any, state: Any) -> Any:
        if not isinstance(args, tuple) or not callable(func):
            raise self._bad("a bad _rebuild_from_type_v2 call")
        ret = func(*args)
        if new_type is Parameter and not isinstance(ret, Parameter):
            ret = Parameter(ret, ret.requires_grad)
        elif new_type not in (Tensor, Parameter, type(ret)):
            raise self._bad(f"a tensor subclass {new_type!r}")
        _set_state(ret, state)
        return ret

    def _bad(self, what: str) -> CheckpointError:
        return CheckpointError(
            f"{self.where} is damaged or not a torch checkpoint: it holds {what}"
        )

    # -- sharing ---------------------------------------------------------------------------
    def link_shared_storages(self) -> None:
        """Make the tensors that shared a storage views of one tensor, as torch loads them."""
        for storage in self.storages.values():
            if len(storage.users) < 2:
                continue
            flat = storage.array
            tensors = [(t, o, s, st) for t, o, s, st in storage.users if t.dtype.np == flat.dtype]
            if len(tensors) < 2:
                continue
            root = wrap(leaf_node(flat, storage.device))
            for t, offset, size, stride in tensors:
                v = _view_of(root, flat.size, offset, size, stride)
                if v is not None:
                    _adopt_view(t, v)


def _view_of(
    root: Tensor, n: int, offset: int, size: tuple[int, ...], stride: tuple[int, ...]
) -> Tensor | None:
    """`root` (flat, n elements) viewed at (offset, size, stride) through lazytorch's view
    ops, or None where they cannot express it (checked: the view's own layout must match)."""
    if 0 in size:
        return None
    spans = [i for i, (d, s) in enumerate(zip(size, stride)) if d != 1 and s != 0]
    order = sorted(spans, key=lambda i: -stride[i])
    steps = [stride[i] for i in order]
    if any(a == b or a % b for a, b in itertools.pairwise(steps)):
        return None
    if not order:
        v = root[offset : offset + 1]
    else:
        # A row-major shape in which each dim of the view is a dim: (rows, s0/s1, ..., sk).
        rows = n // steps[0]
        shape = [rows, *(a // b for a, b in itertools.pairwise(steps))]
        if steps[-1] != 1:
            shape.append(steps[-1])
        if offset >= rows * steps[0]:
            return None
        index: list[Any] = []
        rest = offset
        for extent in reversed(shape):
            index.append(rest % extent)
            rest //= extent
        index.reverse()
        picks: list[Any] = []
        for j, i in enumerate(order):
            if index[j] + size[i] > shape[j]:
                return None
            picks.append(slice(index[j], index[j] + size[i]))
        picks.extend(index[len(order) :])  # the trailing dim, when steps[-1] > 1
        v = root[: rows * steps[0]].view(*shape)[tuple(picks)]
        # The dims come out in stride order; put them in the view's order.
        v = v.permute(*sorted(range(len(order)), key=lambda j: order[j]))
    v = v.reshape(*(1 if (d == 1 or s == 0) else d for d, s in zip(size, stride)))
    v = v.expand(*size)
    layout = None if v._view is None else view_layout(v)
    # Size-1 dims' strides carry no meaning (torch and lazytorch may pick differently).
    if layout is None or layout[0] != offset:
        return None
    if any(d != 1 and s != got for d, s, got in zip(size, stride, layout[1])):
        return None
    return v


def _adopt_view(t: Tensor, v: Tensor) -> None:
    """Link tensor `t` (already holding the view's values) into `v`'s place among its
    root's views, so in-place writes through either reach the other."""
    root = v._view[0]  # type: ignore[index]
    t._view = v._view
    root._views = [r for r in (root._views or []) if r() is not v] + [weakref.ref(t)]


def _set_state(t: Tensor, state: Any) -> None:
    """The attributes a saved tensor or parameter carried (its ``__dict__``), set back as
    torch sets them. torch writes a slotted subclass's as (dict, slots): no lazytorch
    tensor has such slots, so those are dropped with a warning."""
    if not state:
        return
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        if slots:
            warnings.warn(
                f"lazytorch.load: dropped the slot attributes {sorted(slots)} a torch "
                f"{type(t).__name__} subclass carried (lazytorch tensors have no such slots)",
                stacklevel=4,
            )
    if isinstance(state, dict):
        t.__dict__.update(state)


def _int_tuple(value: Any) -> tuple[int, ...] | None:
    if not isinstance(value, tuple) or not all(type(v) is int for v in value):
        return None
    return tuple(value)


def _is_contiguous(size: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    expected = 1
    for d, s in zip(reversed(size), reversed(stride)):
        if d != 1:
            if s != expected:
                return False
            expected *= d
    return True


def _full_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"


def _lazytorch_counterpart(module: str, name: str) -> Any:
    """torch.nn.modules.linear.Linear -> lazytorch.nn.modules.linear.Linear, if it exists."""
    try:
        mod = importlib.import_module("lazy" + module)
    except ImportError:
        return None
    return getattr(mod, name, None)


# pickle.Unpickler.find_class, called unbound on a plain unpickler (it only reads proto and
# fix_imports) so the weights_only=False path imports exactly as pickle.load would.
_PLAIN_UNPICKLER = pickle.Unpickler(io.BytesIO())


# -- files -------------------------------------------------------------------------------------
def torch_zip_prefix(names: list[str]) -> str | None:
    """The record prefix of a torch.save zip (``archive/``), or None if it is not one."""
    pickles = [n[: -len("data.pkl")] for n in names if n.endswith("data.pkl")]
    pickles = [p for p in pickles if p == "" or (p.endswith("/") and p.count("/") == 1)]
    return min(pickles, key=len) if pickles else None


def load_torch_zip(
    zf: zipfile.ZipFile, prefix: str, size: int, reader_args: dict[str, Any], **pickle_args: Any
) -> Any:
    """The object in a torch.save zip archive `zf` (of `size` bytes) whose records start
    with `prefix`."""
    names = set(zf.namelist())
    where = reader_args["where"]
    if f"{prefix}constants.pkl" in names or any(n.startswith(f"{prefix}code/") for n in names):
        raise CheckpointError(
            f"{where} is a TorchScript archive (torch.jit.save), which holds code; lazytorch "
            "cannot run TorchScript: save the model's state_dict() with torch.save instead"
        )
    big_endian = False
    if f"{prefix}byteorder" in names:
        order = zf.read(f"{prefix}byteorder").decode("ascii", "replace").strip()
        if order not in ("little", "big"):
            raise CheckpointError(f"{where}: unknown byte order {order!r}")
        big_endian = order == "big"

    def read_storage(key: str, dtype: np.dtype, numel: int) -> np.ndarray:
        member = f"{prefix}data/{key}"
        if member not in names:
            raise CheckpointError(f"{where} is damaged: the storage {member} is missing")
        info = zf.getinfo(member)
        if info.file_size > size:  # a damaged record; reading it would allocate that much
            raise CheckpointError(f"{where} is damaged: bad zip entry for {member}")
        if info.file_size != numel * dtype.itemsize:
            raise CheckpointError(
                f"{where} is damaged: {member} has {info.file_size} bytes where "
                f"{numel} {dtype.name} elements need {numel * dtype.itemsize}"
            )
        return _read_exactly(lambda: zf.open(info), dtype, numel, big_endian, member, where)

    reader = Reader(read_storage, **reader_args)
    with zf.open(f"{prefix}data.pkl") as pkl:
        obj = reader.unpickler(pkl, **pickle_args).load()
    reader.link_shared_storages()
    return obj


def _read_exactly(
    open_member: Callable[[], IO[bytes]],
    dtype: np.dtype,
    numel: int,
    big_endian: bool,
    member: str,
    where: str,
) -> np.ndarray:
    array = np.empty(numel, dtype.newbyteorder(">") if big_endian else dtype)
    with open_member() as m:
        got = m.readinto(memoryview(array.view(np.uint8)).cast("B")) if array.nbytes else 0
        if got != array.nbytes or m.read(1):  # reading to the end checks the CRC
            raise CheckpointError(f"{where} is damaged: {member} has the wrong length")
    return array.astype(dtype) if big_endian else array


class _Skim(pickle.Unpickler):
    """Reads a pickle's storage references without building anything it names: every
    global is a `_Anything`. The legacy format's storage bytes follow the object pickle,
    so their sizes must be known before the object is built."""

    def __init__(self, f: IO[bytes], **kwargs: Any) -> None:
        super().__init__(f, **kwargs)
        self.storage_types: dict[str, tuple[_StorageType, int]] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in _STORAGE_TYPES:
            return _STORAGE_TYPES[name]
        if module == "torch" and name in _MISSING_DTYPES:
            raise _missing_dtype(_MISSING_DTYPES[name])
        return _Anything

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 6 and isinstance(pid[1], _StorageType):
            key = pid[2].decode("ascii") if isinstance(pid[2], bytes) else pid[2]
            if isinstance(key, str) and type(pid[4]) is int:
                self.storage_types.setdefault(key, (pid[1], pid[4]))
        return _Anything()


class _Anything:
    """Accepts any call, attribute state or item: a stand-in for what `_Skim` skips."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Anything:
        return object.__new__(_Anything)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __setstate__(self, state: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass

    def extend(self, values: Any) -> None:
        pass


def load_torch_legacy(fh: IO[bytes], reader_args: dict[str, Any], **pickle_args: Any) -> Any:
    """The object in torch's legacy (non-zip) format, read from the seekable `fh`."""
    where = reader_args["where"]

    def plain() -> Any:
        # The header pickles hold only numbers, strings and dicts: no globals at all.
        return Reader(_no_storage, None, True, [], where).unpickler(fh, **pickle_args).load()

    if plain() != LEGACY_MAGIC:
        raise CheckpointError(f"{where} is a pickle, not a torch or lazytorch checkpoint")
    if plain() != LEGACY_PROTOCOL:
        raise CheckpointError(f"{where}: unknown legacy torch protocol version")
    sys_info = plain()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)
    start = fh.tell()
    skim = _Skim(fh, **pickle_args)
    skim.load()
    keys = plain()
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise CheckpointError(f"{where} is damaged: bad storage key list")
    arrays: dict[str, np.ndarray] = {}
    for key in keys:
        if key not in skim.storage_types:
            raise CheckpointError(f"{where} is damaged: storage {key!r} is never used")
        storage_type, numel = skim.storage_types[key]
        np_dtype = np.dtype(np.uint8) if storage_type.dtype is None else storage_type.dtype.np
        (count,) = struct.unpack("<q" if little else ">q", fh.read(8))
        if count != numel:
            raise CheckpointError(f"{where} is damaged: storage {key!r} has a wrong size")
        data = fh.read(count * np_dtype.itemsize)
        if len(data) != count * np_dtype.itemsize:
            raise CheckpointError(f"{where} is truncated: storage {key!r} is cut short")
        stored = np_dtype.newbyteorder("<" if little else ">")
        arrays[key] = np.frombuffer(data, stored).astype(np_dtype)  # a writable copy

    def read_storage(key: str, dtype: np.dtype, numel: int) -> np.ndarray:
        if key not in arrays:
            raise CheckpointError(f"{where} is damaged: storage {key!r} has no data")
        return arrays[key]

    end = fh.tell()
    fh.seek(start)
    reader = Reader(read_storage, **reader_args)
    obj = reader.unpickler(fh, **pickle_args).load()
    reader.link_shared_storages()
    fh.seek(end)
    return obj


def _no_storage(key: str, dtype: np.dtype, numel: int) -> np.ndarray:
    raise CheckpointError(f"a storage {key!r} where none may be")
