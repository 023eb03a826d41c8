"""Tensor methods, operators and in-place variants, bound from the public registry.

Most methods are the public op itself (its first parameter is the tensor), declared beside
it with ``@public(method=True)`` (`lazytorch._public`); the autograd API is declared by
`lazytorch.autograd.tensor_methods`. What is not an op function stays here as small tables
(operators, conversions, ``new_*`` factories, adapters, properties, Python protocols), and
`bind` declares them into the same registry before binding everything once, so a name
declared twice, or named here but declared nowhere, is an error at import. In-place
variants run the op and `assign` the result back (functionalized), after torch's check that
the result's dtype can be cast to the tensor's own.

>>> import lazytorch
>>> x = lazytorch.tensor([1.0, -2.0])
>>> x.abs_() is x, x.tolist()
(True, [1.0, 2.0])
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
import weakref
from typing import Any

from lazytorch._config import get_default_dtype
from lazytorch._dtype_info import contiguous_format, preserve_format
from lazytorch._errors import op_error
from lazytorch._public import REGISTRY, Registry, public
from lazytorch.autograd import tensor_methods as _tensor_methods  # declares Tensor.backward
from lazytorch.autograd.engine import keep_leaf, leaf_alias, stop_gradient
from lazytorch.autograd.grad_mode import is_grad_enabled
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import as_device
from lazytorch.ir.symbolic import SymInt
from lazytorch.ops import activation as A
from lazytorch.ops import autocast as _autocast
from lazytorch.ops import complex as CX
from lazytorch.ops import composite as _composite  # (each op module declares its names)
from lazytorch.ops import creation as C
from lazytorch.ops import decomp as _decomp  # noqa: F401  (declares its names)
from lazytorch.ops import elementwise as E
from lazytorch.ops import extras as _extras  # (declares its names)
from lazytorch.ops import foreach as _foreach  # noqa: F401  (declares its names)
from lazytorch.ops import indexing as I
from lazytorch.ops import linalg as L
from lazytorch.ops import lu as _lu  # noqa: F401  (declares its names)
from lazytorch.ops import numeric as _numeric  # noqa: F401  (declares its names)
from lazytorch.ops import numpy_bridge as _numpy_bridge
from lazytorch.ops import pad as _pad
from lazytorch.ops import random as RND
from lazytorch.ops import shape as S
from lazytorch.ops import shared_memory as _shared_memory
from lazytorch.ops import sorting as _sorting
from lazytorch.ops import sparse as _sparse  # noqa: F401  (declares its names)
from lazytorch.ops import special_math as _special_math  # noqa: F401  (declares its names)
from lazytorch.ops import statistics as _statistics  # noqa: F401  (declares its names)
from lazytorch.ops import stft as _stft  # noqa: F401  (declares its names)
from lazytorch.ops import storage as _storage
from lazytorch.ops import transcendental as _transcendental
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    cast,
    const_node,
    expand_node,
    normalize_dim,
    scalar_node,
    wrap,
)
from lazytorch.ops.indexing import _broadcast_value
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Size, Tensor, _host_value, version_counter

# Methods whose op takes its arguments in another order, or whose function has parameters
# the method lacks: small adapters.
ADAPTERS: dict[str, Any] = {
    "where": lambda self, condition, other: E.where(condition, self, other),
    "softmax": lambda self, dim, dtype=None: A.softmax(self, dim, dtype=dtype),
    "hardshrink": lambda self, lambd=0.5: A.hardshrink(self, lambd),
    "prelu": lambda self, weight: A.prelu(self, weight),
    "log_softmax": lambda self, dim, dtype=None: A.log_softmax(self, dim, dtype=dtype),
}


# -- conversions ----------------------------------------------------------------------------------
def _can_cast(src: dt.DType, dst: dt.DType) -> bool:
    """torch's in-place rule: no float -> integral, no non-bool -> bool."""
    if src.is_floating_point and not dst.is_floating_point:
        return False
    return not (src is not dt.bool_ and dst is dt.bool_)


@public(torch=False, method=True)
def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Convert dtype and/or device: ``to(dtype)``, ``to(device)``, ``to(other)``,
    ``to(device, dtype)``. Returns self when nothing changes (unless copy=True)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, dt.DType):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            continue  # legacy non_blocking positional
        elif type(a) is CX.ComplexDType:
            dtype = a
        elif a is not None:
            device = a
    moved = self
    if device is not None:
        target = C.resolve_device(as_device(device), "to")  # "cuda" is the current cuda:N
        if target != self.device:
            moved = _to_device(self, target)
    if dtype is not None and not isinstance(dtype, dt.DType):
        if isinstance(dtype, CX.ComplexDType):
            return CX.to_complex(moved, dtype)
        dtype = C.resolve_dtype(dtype, "to")
    if (dtype is None or dtype is moved.dtype) and not copy:
        return moved
    return wrap(cast(moved._node, dtype or moved.dtype))


def _to_device(t: Tensor, target: Any) -> Tensor:
    """`t`'s value as a new leaf on `target`: computed now, as torch's copy is eager.

    A value in device memory (a cuda tensor's) is copied to the host for ``cpu`` and
    uploaded from the host for ``cuda`` (`lazytorch._devices.place`); between devices that
    keep host arrays, the new leaf shares the source's (immutable) array.
    """
    if t._node.device.type == "meta" or target.type == "meta":
        if target.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return C.empty(tuple(t.shape), dtype=t.dtype, device=target)  # shapes, no values
    implicit_point(t, "to(device)")
    n = t._node
    # a scalar input holds a Python number: as a 0-d array; device buffers move as they are
    value = n.buffer if target.type != "cpu" and hasattr(n.buffer, "shape") else _host_value(n)
    return wrap(C.leaf_node(value, target))


def _as(dtype: Any, memory_format_default: Any = None) -> Any:
    # (torch's stubs give cfloat/cdouble memory_format=preserve_format, the rest none)
    def fn(self: Tensor, memory_format: Any = memory_format_default) -> Tensor:
        return to(self, dtype)

    fn.__name__ = dtype.name
    return fn


CONVERSIONS = {
    "float": _as(dt.float32),
    "double": _as(dt.float64),
    "half": _as(dt.float16),
    "bfloat16": _as(dt.bfloat16),
    "long": _as(dt.int64),
    "int": _as(dt.int32),
    "short": _as(dt.int16),
    "char": _as(dt.int8),
    "byte": _as(dt.uint8),
    "bool": _as(dt.bool_),
    "cfloat": _as(CX.complex64, preserve_format),
    "cdouble": _as(CX.complex128, preserve_format),
}


@public(torch=False, method=True)
def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, other.dtype)


@public(torch=False, method=True)
def cpu(self: Tensor, memory_format: Any = preserve_format) -> Tensor:
    return to(self, "cpu")


@public(torch=False, method=True)
def cuda(
    self: Tensor,
    device: Any = None,
    non_blocking: bool = False,
    memory_format: Any = preserve_format,
) -> Tensor:
    return to(
        self,
        "cuda"
        if device is None
        else as_device(device if not isinstance(device, int) else f"cuda:{device}"),
    )


# -- in-place --------------------------------------------------------------------------------------
def _assign_result(self: Tensor, result: Tensor, op: str) -> Tensor:
    n = result._node
    if n.dtype is not self.dtype:
        if not _can_cast(n.dtype, self.dtype):
            raise op_error(
                RuntimeError,
                op,
                f"result type {n.dtype.legacy_name} can't be cast to the desired output type {self.dtype.legacy_name}",
            )
        n = cast(n, self.dtype)
    if tuple(n.shape) != tuple(self._node.shape):
        raise op_error(
            RuntimeError,
            op,
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(n.shape)}",
        )
    return V.assign(self, n)


def _inplace(fn: Any, name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return _assign_result(self, fn(self, *args, **kwargs), name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of `{name[:-1]}` (rebinds this tensor; views see it)."
    method.__wrapped__ = fn  # inspect.signature shows the op's parameters, as torch's do
    return method


def _inplace_shape(name: str, op: Any) -> Any:
    """``x.unsqueeze_(0)`` & co: `x` takes the new shape and keeps aliasing what it aliased.

    A view becomes the same view with one more step. A base whose views are alive hands
    them a hidden root holding its value (as ``.data =`` does) and becomes a view of that
    root too, so writes through either side still reach the other, as in torch.
    """

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        keep_leaf(self, self._node)  # torch's refusal for a grad leaf, before any view exists
        live = self._views is not None and any(r() is not None for r in self._views)
        vc = version_counter(self)  # torch counts a shape change as a write
        if self._view is None and not live:
            self._node = keep_leaf(self, op(self, *args, **kwargs)._node)
            vc[0] += 1
            return self
        if getattr(self, "_meta", None) is not None and self._node.ag is self._meta:
            raise op_error(
                NotImplementedError,
                name,
                f"{name} on a leaf tensor that has views is not supported in lazytorch: use "
                f"x = x.{name[:-1]}(...) instead",
            )
        src = self
        if self._view is None:
            src = wrap(self._node)
            _storage.hand_over_address(self, src)  # self becomes a view of src's storage
            src._vc = vc  # the memory keeps its count
            src._views = self._views
            for r in src._views or ():
                v = r()
                if v is not None and v._view is not None:
                    v._view = (src, v._view[1])
            self._views = None
        reshaped = op(src, *args, **kwargs)
        self._node, self._view = reshaped._node, reshaped._view
        if src is not self:
            src._views.append(weakref.ref(self))  # type: ignore[union-attr]
        vc[0] += 1
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of `{name[:-1]}`: this tensor takes the new shape."
    method.__wrapped__ = op
    return method


INPLACE_SHAPES: dict[str, Any] = {
    "unsqueeze_": _inplace_shape("unsqueeze_", S.unsqueeze),
    "squeeze_": _inplace_shape("squeeze_", S.squeeze),
    "t_": _inplace_shape("t_", S.t),
    "transpose_": _inplace_shape("transpose_", S.transpose),
    "swapaxes_": _inplace_shape("swapaxes_", S.swapaxes),
    "swapdims_": _inplace_shape("swapdims_", S.transpose),
}


@public(torch=False, method=True)
def detach_(self: Tensor) -> Tensor:
    """Cut this tensor from the graph that made it, in place: it becomes a leaf that does
    not require grad (its value is unchanged)."""
    if self._view is not None:
        raise op_error(
            RuntimeError,
            "detach_",
            "Can't detach views in-place. Use detach() instead.",
        )
    self._node = stop_gradient(self._node)
    return self


@public(torch=False, method=True)
def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """This tensor: lazytorch has no page-locked host memory, and transfers do not need it."""
    return self


@public(torch=False, method=True)
def is_pinned(self: Tensor, device: Any = None) -> bool:
    return False


@public(torch=False, method=True)
def share_memory_(self: Tensor) -> Tensor:
    """Move this tensor's value into shared memory, where processes it is sent to by
    `lazytorch.multiprocessing` see it and write it (`lazytorch.ops.shared_memory`: the
    rules). A no-op for a tensor already shared, or not on the CPU.

    >>> import lazytorch
    >>> lazytorch.ones(2).share_memory_().is_shared()
    True
    """
    return _shared_memory.share(self)


@public(torch=False, method=True)
def is_shared(self: Tensor) -> bool:
    """Whether this tensor's value lives in shared memory (`share_memory_`)."""
    return _shared_memory.is_shared(self)


@public(torch=False, method=True)
def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sum this tensor down to `size` (a shape it broadcasts from), as a gradient is summed.

    >>> import lazytorch
    >>> lazytorch.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    target = tuple(int(v) for v in size)
    lead = len(shape) - len(target)
    if lead < 0 or any(t not in (1, s) for t, s in zip(target, shape[lead:])):
        raise op_error(
            RuntimeError,
            "sum_to_size",
            f"size {{{', '.join(map(str, target))}}} is not expandable to size "
            f"{{{', '.join(map(str, shape))}}}.",
        )
    out = self
    if lead:
        out = out.sum(tuple(range(lead)))  # type: ignore[attr-defined]
    dims = tuple(i for i, t in enumerate(target) if t == 1 and out.shape[i] != 1)
    if dims:
        out = out.sum(dims, keepdim=True)  # type: ignore[attr-defined]
    return out


@public(torch=False, method=True)
def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to `value` (a number or a 0-d tensor)."""
    n = self._node
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise op_error(
                RuntimeError,
                "fill_",
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.",
            )
        v = cast(value._node, n.dtype)
    else:  # converted to the dtype with torch's check (int8 takes no 300)
        value = C.checked_scalar(
            value, n.dtype, "fill_", check_float=C.fill_checks(n.shape, n.dtype)
        )
        v = scalar_node(value, n.dtype, n.device)
    return V.assign(self, expand_node(v, n.shape))


@public(torch=False, method=True)
def zero_(self: Tensor) -> Tensor:
    n = self._node
    return V.assign(self, expand_node(const_node(0, n.dtype, n.device), n.shape))


@public(torch=False, method=True)
def copy_(self: Tensor, other: Any, non_blocking: bool = False) -> Tensor:
    """Copy `other`'s values (broadcast, converted to this dtype) into this tensor."""
    if not isinstance(other, Tensor):
        raise op_error(
            TypeError,
            "copy_",
            f"copy_(): argument 'other' must be Tensor, not {type(other).__name__}",
        )

    if self._node.device.type == "meta":  # no values to copy into: torch does nothing
        return self
    if other._node.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if not is_grad_enabled():  # under no_grad the copy carries no history (torch: same)
        other = other.detach()
    n = cast(other._node, self.dtype)

    # Unlike fill_, torch's copy_ refuses a target whose elements overlap (an expanded view).
    return V.assign(
        self, _broadcast_value(n, tuple(self._node.shape), "copy_"), allow_overlap=False
    )


@public(torch=False, method=True)
def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples uniform in [from_, to) (torch's parser spells it `from`, a Python
    keyword: positionally, as here)."""
    u = RND.rand(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return V.assign(self, E.add(E.mul(u, to - from_), from_)._node)


@public(torch=False, method=True)
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    z = RND.randn(self.shape, dtype=self.dtype, device=self.device, generator=generator)
    return V.assign(self, E.add(E.mul(z, std), mean)._node)


def _new(factory: Any) -> Any:
    def method(
        self: Tensor,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
    ) -> Tensor:
        return factory(
            *size,
            dtype=dtype or self.dtype,
            device=device or self.device,
            requires_grad=requires_grad,
        )

    return method


@public(torch=False, method=True)
def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return C.full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
    )


@public(torch=False, method=True)
def new_tensor(
    self: Tensor,
    data: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    return C.tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


@public(torch=False, method=True)
def split(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split with the method's parameter name (``split_size`` takes sections too).

    >>> import lazytorch
    >>> [p.shape[1] for p in lazytorch.zeros(2, 3).split(split_size=[1, 2], dim=1)]
    [1, 2]
    """
    return S.split(self, split_size, dim)


@public(torch=False, method=True)
def norm(
    self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    """torch.norm as torch's method has it: no out=, so dtype is the fourth argument.

    >>> import lazytorch
    >>> lazytorch.tensor([[3.0, 4.0]]).norm(2, 1).tolist()
    [5.0]
    """
    return L.norm(self, p, dim, keepdim, dtype=dtype)


def _get_data(self: Tensor) -> Tensor:
    out = S.detach(self)
    out._vc = [0]  # torch: .data writes are invisible to autograd's version checks
    return out


def _set_data(self: Tensor, value: Tensor) -> None:
    # torch rebinds the storage: existing views keep the old values, and a view whose
    # .data is replaced stops aliasing its base.
    if not isinstance(value, Tensor):
        raise TypeError("data must be set to a Tensor")
    if self._view is not None:
        root = self._view[0]
        if root._views is not None:
            root._views[:] = [r for r in root._views if r() is not self]
    old = None
    if self._views:
        # The old views now hang off a hidden tensor holding the old value.
        old = wrap(self._node)
        _storage.hand_over_address(self, old)  # the old views keep the old storage
        old._views = self._views
        for r in old._views:
            v = r()
            if v is not None and v._view is not None:
                v._view = (old, v._view[1])
    _numpy_bridge.rebound(self, old)
    node = value._node
    if getattr(self, "_meta", None) is not None and self._node.ag is self._meta:
        # .data = v keeps a leaf that requires grad a leaf, with v's value
        node = leaf_alias(stop_gradient(node), self._meta)
    else:  # a non-leaf keeps its gradient path (torch keeps its grad_fn), with v's value
        node = V._kept_history(self._node, stop_gradient(node))
    self._node, self._view, self._views = node, None, None


def _reversed(fn: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    return method


def _is_ndarray(x: Any) -> bool:
    np = sys.modules.get("numpy")  # not imported: x cannot be an array
    return np is not None and isinstance(x, np.ndarray)


def _defer_to_ndarray(fn: Any, name: str) -> Any:
    """`fn` as a binary operator that returns NotImplemented for a NumPy array, as torch's
    do: Python then calls the array's reflected operator, which NumPy computes on the
    tensor's values (``__array__``) and hands back as a tensor (``__array_wrap__``), so
    ``t * a`` is a tensor (NumPy's dtype rules, no autograd) and ``a * t`` a TypeError."""

    def method(self: Tensor, other: Any) -> Any:
        # Every operator pays this frame (valgrind: about 2,100 instructions on a binary
        # op's 29,400); the common operands then pass with one type test each.
        t = type(other)
        if t is not Tensor and t is not float and t is not int:
            if _is_ndarray(other) or t is CX.ComplexTensor:
                return NotImplemented  # (the complex tensor's reflected operator computes)
            if t is complex:
                return CX.from_operator(name, self, other)
        return fn(self, other)

    method.__name__ = getattr(fn, "__name__", "method")
    method.__doc__ = fn.__doc__
    method.__wrapped__ = fn  # type: ignore[attr-defined]
    return method


def _rdiv(self: Tensor, other: Any) -> Tensor:
    # torch's Tensor.__rdiv__ is ``self.reciprocal() * other``: two roundings, not one
    # division (0.3 / x differs from it in the last bit for a quarter of float32 x)
    t = type(other)  # (``1 / x`` is the common case: a number passes with one type test)
    if t is not float and t is not int and _is_ndarray(other):  # ``*`` defers to the array
        return _transcendental.reciprocal(self) * other  # type: ignore[no-any-return]
    return E.mul(_transcendental.reciprocal(self), other)


def _comparable(other: Any) -> bool:
    """Whether torch's ``==``/``!=`` compare a tensor with `other` elementwise. For anything
    else (None, a string, a list, a function, a dtype) they return NotImplemented, so Python
    compares identities: ``t == None`` is False, and ``t in [None, t]`` works."""
    if isinstance(other, (Tensor, bool, int, float, complex, SymInt, CX.ComplexTensor)):
        return True
    np = sys.modules.get("numpy")  # not imported: other cannot be a NumPy value
    return np is not None and isinstance(other, (np.ndarray, np.generic))


def _eq(self: Tensor, other: Any) -> Any:
    # torch's ``t == a`` compares with a NumPy array's values (a bool tensor), where its
    # other operators defer to NumPy
    t = type(other)
    if t is not Tensor and t is not float and t is not int:
        if _is_ndarray(other):
            other = C.tensor(other, device=self.device)
        elif t is complex:
            return CX.from_operator("__eq__", self, other)
        elif t is CX.ComplexTensor or not _comparable(other):
            return NotImplemented  # (a complex tensor's reflected operator compares)
    return E.eq(self, other)


def _ne(self: Tensor, other: Any) -> Any:
    t = type(other)
    if t is not Tensor and t is not float and t is not int:
        if _is_ndarray(other) or t is CX.ComplexTensor or not _comparable(other):
            return NotImplemented  # (an array's reflected operator computes, as torch's)
        if t is complex:
            return CX.from_operator("__ne__", self, other)
    return E.ne(self, other)


def _array_wrap(
    self: Tensor, array: Any, context: Any = None, return_scalar: bool = False
) -> Tensor:
    """A NumPy function's result on a tensor, as a tensor (torch's ``__array_wrap__``:
    ``np.sin(t)`` and ``t * array`` are tensors; a Boolean result becomes uint8)."""
    if array.dtype == bool:
        array = array.astype("uint8")
    return C.from_numpy(array)  # type: ignore[no-any-return]


def _rfloordiv(self: Tensor, other: Any) -> Tensor:
    return E.div(other, self, rounding_mode="floor")


def _floordiv(self: Tensor, other: Any) -> Tensor:
    return E.div(self, other, rounding_mode="floor")


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return L.matmul(other, self)


def _invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise op_error(
            TypeError,
            "__invert__",
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
        )
    return E.bitwise_not(self)


OPERATORS = {
    "__add__": E.add,
    # torch's __radd__/__rmul__ are __add__/__mul__ (self first: ``2 * b`` records b's
    # history as the first input, which grad_fn.next_functions shows); both commute exactly
    "__radd__": E.add,
    "__sub__": E.sub,
    "__rsub__": _reversed(E.sub),
    "__mul__": E.mul,
    "__rmul__": E.mul,
    "__truediv__": E.div,
    "__rtruediv__": _rdiv,
    "__floordiv__": _floordiv,
    "__rfloordiv__": _rfloordiv,
    "__mod__": E.remainder,
    "__rmod__": _reversed(E.remainder),
    "__pow__": E.pow,
    "__rpow__": _reversed(E.pow),
    "__matmul__": L.matmul,
    "__rmatmul__": _rmatmul,
    "__neg__": E.neg,
    "__pos__": E.positive,
    "__abs__": E.abs,
    "__invert__": _invert,
    "__and__": E.bitwise_and,
    "__rand__": _reversed(E.bitwise_and),
    "__or__": E.bitwise_or,
    "__ror__": _reversed(E.bitwise_or),
    "__xor__": E.bitwise_xor,
    "__rxor__": _reversed(E.bitwise_xor),
    "__eq__": _eq,
    "__ne__": _ne,
    "__lt__": E.lt,
    "__le__": E.le,
    "__gt__": E.gt,
    "__ge__": E.ge,
    "__lshift__": E.bitwise_left_shift,
    "__rlshift__": _reversed(E.bitwise_left_shift),
    "__rshift__": E.bitwise_right_shift,
    "__rrshift__": _reversed(E.bitwise_right_shift),
    "__getitem__": I.getitem,
    "__setitem__": I.setitem,
}
# torch's binary operators return NotImplemented for a NumPy array (all but __eq__, `_eq`,
# and __rtruediv__, `_rdiv`; __ne__, `_ne`, does it itself)
for _name in (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __floordiv__ "
    "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __and__ __rand__ "
    "__or__ __ror__ __xor__ __rxor__ __lt__ __le__ __gt__ __ge__ __lshift__ "
    "__rlshift__ __rshift__ __rrshift__"
).split():
    OPERATORS[_name] = _defer_to_ndarray(OPERATORS[_name], _name)

# in-place operators: dunder -> the in-place method it is (resolved when bound)
INPLACE_OPERATORS = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
    "__iand__": "bitwise_and_",
    "__ior__": "bitwise_or_",
    "__ixor__": "bitwise_xor_",
    "__ilshift__": "bitwise_left_shift_",
    "__irshift__": "bitwise_right_shift_",
}


@public(torch=False, method="type")
def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """With no dtype, torch's type string (``'torch.FloatTensor'``); else ``to(dtype)``
    (a dtype, or such a string). ``torch.Tensor`` (the class or ``'torch.Tensor'``) is the
    default dtype, as torch's default tensor type."""
    if dtype is None:
        return f"torch.{self.dtype.legacy_name}Tensor"
    if dtype is Tensor or dtype == "torch.Tensor":  # x.type(torch.Tensor): the default type
        dtype = get_default_dtype()
    elif isinstance(getattr(dtype, "dtype", None), dt.DType):  # torch.FloatTensor & co
        dtype = dtype.dtype
    elif isinstance(dtype, type):  # another class: torch's message names it
        raise op_error(ValueError, "type", f"invalid type: '{dtype.__name__}'")
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        found = [d for d in dt.ALL_DTYPES if f"{d.legacy_name}Tensor" == name]
        if not found:
            raise op_error(ValueError, "type", f"invalid type: '{dtype}'")
        dtype = found[0]
    return to(self, dtype)


@public(torch=False, method="get_device")
def _get_device(self: Tensor) -> int:
    """The device index: -1 on the CPU (as torch)."""
    d = self.device
    return -1 if d.type == "cpu" else (d.index or 0)


@public(torch=False, method="bitwise_left_shift_")
def _ilshift(self: Tensor, other: Any) -> Tensor:
    return V.assign(self, E.bitwise_left_shift(self, other)._node)


@public(torch=False, method="bitwise_right_shift_")
def _irshift(self: Tensor, other: Any) -> Tensor:
    return V.assign(self, E.bitwise_right_shift(self, other)._node)


# -- what tensor.py would otherwise import upward for ------------------------------------------
def _tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    # lazytorch.Tensor(data) / lazytorch.Tensor(2, 3), like torch.Tensor: float tensors.
    return C.legacy_tensor_new(*args, **kwargs)


@public(torch=False, method=True)
def size(self: Tensor, dim: int | None = None) -> Any:
    """The shape, or the size of one dimension.

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3).size(), lazytorch.zeros(2, 3).size(-1)
    (lazytorch.Size([2, 3]), 3)
    """
    shape = self._node.shape
    if dim is None:
        return Size(shape)
    return shape[normalize_dim(dim, len(shape), "size")]


@public(torch=False, method=True)
def is_contiguous(self: Tensor, memory_format: Any = contiguous_format) -> bool:
    """Whether the elements are in row-major order (torch's rule, from the view's strides)."""
    if self._view is None:
        return True
    return V.is_contiguous(self)


def _reduce_ex(self: Tensor, protocol: Any) -> Any:
    import numpy as np

    rebuild = (_rebuild, (np.array(self._values()), str(self.device)))
    # the script's own attributes travel as the pickle's state, as torch's do
    return (*rebuild, self.__dict__) if self.__dict__ else rebuild


def _rebuild(array: Any, device: str) -> Tensor:
    """Unpickle a tensor (`_reduce_ex` names this function)."""
    return C.tensor(array, device=device)  # type: ignore[no-any-return]


# pickles written before this module held the methods name lazytorch.tensor._rebuild
sys.modules[Tensor.__module__]._rebuild_with = _rebuild  # type: ignore[attr-defined]


# Python's protocols that are not operators.
PROTOCOL: dict[str, Any] = {
    "__new__": staticmethod(_tensor_new),
    "__reduce_ex__": _reduce_ex,
    "__array_wrap__": _array_wrap,
}


def _H(self: Tensor) -> Tensor:
    """``x.H``: the conjugate transpose of a matrix (of a real one: its transpose)."""
    if self.ndim == 0:  # torch: deprecated, the conjugate (itself, for a real tensor)
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", stacklevel=2
        )
        return V.make_view(self, V.Reshape(()))
    if self.ndim != 2:
        raise op_error(
            RuntimeError,
            "H",
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.",
        )
    return S.transpose(self, 0, 1)


PROPERTIES: dict[str, property] = {
    "T": property(S.T),
    "mT": property(S.mT),
    "H": property(_H),
    "mH": property(_extras.adjoint),
    "data": property(_get_data, _set_data),
}

FACTORIES: dict[str, Any] = {
    "new_zeros": _new(C.zeros),
    "new_ones": _new(C.ones),
    "new_empty": _new(C.empty),
}

# The tables above, declared into the registry when the methods are bound.
TABLES: dict[str, dict[str, Any]] = {
    "ADAPTERS": ADAPTERS,
    "CONVERSIONS": CONVERSIONS,
    "FACTORIES": FACTORIES,
    "INPLACE_SHAPES": INPLACE_SHAPES,
    "OPERATORS": OPERATORS,
    "PROPERTIES": PROPERTIES,
    "PROTOCOL": PROTOCOL,
}


# torch's argument parser takes NumPy's names for two parameters of every native op:
# ``axis`` for ``dim`` and ``keepdims`` for ``keepdim`` (``x.sum(1, keepdims=True)``,
# ``torch.cat(xs, axis=0)``; python_arg_parser.cpp's numpy_compatibility_arg_names).
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
_numpy_named: dict[int, Any] = {}


def _numpy_names(fn: Any) -> Any:
    """`fn`, taking `NUMPY_NAMES` for its own parameters, where it has them (the same
    wrapper for the same `fn`, so aliases stay one object)."""
    found = _numpy_named.get(id(fn))
    if found is not None:
        return found
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or a class: no Python signature to read
        return fn
    aliases = {a: n for a, n in NUMPY_NAMES.items() if n in params and a not in params}
    if not aliases:
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias, name in aliases.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(
                            f"{fn.__name__}() got both {name!r} and its alias {alias!r}"
                        )
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    wrapper.numpy_names = aliases  # type: ignore[attr-defined]
    _numpy_named[id(fn)] = wrapper
    return wrapper


def install_numpy_names(names: dict[str, Any], public: list[str]) -> None:
    """In a module's namespace `names`, wrap the functions `public` lists in `_numpy_names`
    (torch.linalg's and torch.special's native functions take ``axis=``/``keepdims=`` too)."""
    for name in public:
        if inspect.isfunction(names.get(name)):
            names[name] = _numpy_names(names[name])


def _install_numpy_names(registry: Registry) -> None:
    """Wrap every declared function with a ``dim``/``keepdim`` parameter in `_numpy_names`
    (properties and tables' non-functions stay as they are)."""
    for e in registry.entries():
        if inspect.isfunction(e.obj):
            e.obj = _numpy_names(e.obj)


def bind(
    cls: type = Tensor,
    registry: Registry = REGISTRY,
    tables: dict[str, dict[str, Any]] = TABLES,
    inplace_operators: dict[str, str] = INPLACE_OPERATORS,
) -> None:
    """Bind every method the registry declares onto `cls`, then seal the registry.

    `tables` are declared first (a name declared twice anywhere raises, naming both
    declarations); the names autocast lists are then wrapped (`lazytorch.ops.autocast`:
    the facade and the methods hold the wrappers); an in-place variant ``n_`` declared with ``inplace=True`` is generated
    here from its op (`_inplace`); `inplace_operators` resolve to the in-place methods they
    name (a name that is not declared raises, with the close names). A name the class body
    defines itself cannot be declared: `lazytorch.tensor` keeps the state methods. Runs
    once, when this module is imported (the parameters are for tests).
    """
    if registry.sealed:
        raise RuntimeError(f"{__name__}.bind: the registry is sealed (the methods are bound)")
    for table_name, table in tables.items():
        for name, value in table.items():
            registry.declare("Tensor", name, value, by=f"{__name__}.{table_name}")
    # inside autocast's wrapper, which finds its caller two frames up
    _install_numpy_names(registry)
    _autocast.install_registry(registry)
    bound: dict[str, Any] = {}
    own = vars(cls)
    for e in registry.entries("Tensor"):
        if e.name in own:
            raise ValueError(
                f"public: {cls.__name__}.{e.name} is declared by {e.declared_by} but the "
                "class defines it itself"
            )
        bound[e.name] = _inplace(e.obj, e.name) if e.of else e.obj
    for dunder, name in inplace_operators.items():
        bound[dunder] = bound[registry.get("Tensor", name).name]
        registry.declare("Tensor", dunder, bound[dunder], by=f"{__name__}.INPLACE_OPERATORS")
    for name, value in bound.items():
        setattr(cls, name, value)
    registry.seal(f"{__name__}.bind")


# -- torch's function forms of in-place methods: ``torch.sin_(x)`` is ``x.sin_()`` -------------
TORCH_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ "
    "clamp_max_ clamp_min_ clip_ cos_ cosh_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ "
    "frac_ i0_ index_put_ log10_ log1p_ log2_ log_ nan_to_num_ neg_ negative_ reciprocal_ relu_ "
    "round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_"
).split()


def _torch_inplace(name: str) -> Any:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if not isinstance(input, Tensor):
            raise op_error(
                TypeError, name, f"argument 'input' must be Tensor, not {type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)  # type: ignore[no-any-return]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: in place, returns `input`."
    return fn


for _name in TORCH_INPLACE_FUNCTIONS:
    public(torch=_name)(_torch_inplace(_name))


# Every op module is imported above, each declaring its names (these only declare, from here
# on nothing reads them): bind them all, once.
_DECLARING = (_tensor_methods, _composite, _pad, _sorting, _transcendental)
bind()
