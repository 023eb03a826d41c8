"""Tensor creation: from data, constant fills, ranges, eye.

Data is copied into the tensor at creation (``tensor``, ``from_numpy`` and ``as_tensor``
alike): lazytorch buffers are immutable, so a later write to the source array cannot change
a pending computation behind the user's back. Fill values given by the user are program
inputs (changing them never recompiles); ``zeros``/``ones`` are literals.
"""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Mapping
from typing import Any

from lazytorch import _config
from lazytorch._devices import check_available, find
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch._threads import get_num_threads
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import CPU as _CPU
from lazytorch.ir.device import Device, as_device
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops import range_values as RV
from lazytorch.ops._core import (
    INT64_MAX,
    INT64_MIN,
    ComplexBase,
    HostScalar,
    P,
    cast,
    check_new_tensor,
    check_numel,
    check_python_int,
    const_node,
    expand_node,
    int_like,
    leaf_node,
    scalar_node,
    shape_arg,
    unpack_int64,
    wrap,
)
from lazytorch.tensor import Size, Tensor

__all__ = [
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "scalar_tensor",
    "tensor",
    "zeros",
    "zeros_like",
]


def resolve_device(device: Any, op: str) -> Device:
    """The device a tensor made by `op` lives on: `device`, or the default one.

    An index-less device of a type whose module has ``current_device()`` (``"cuda"``)
    becomes that device's current one, as in torch: ``ones(2, device="cuda")`` is on
    ``cuda:0``, so it mixes with tensors made on ``"cuda:0"``.
    """
    dev = _config.get_default_device() if device is None else as_device(device)
    if dev.type != "cpu":
        check_available(dev, op)  # loads the device's plugin on first use
        current = getattr(find(dev.type), "current_device", None)
        if dev.index is None and callable(current):
            dev = Device(dev.type, int(current()))
    return dev


def resolve_dtype(dtype: Any, op: str) -> dt.DType | None:
    if dtype is None:
        return dtype
    if isinstance(dtype, dt.DType):
        return dtype
    if isinstance(dtype, str) and dtype in dt.BY_NAME:
        return dt.BY_NAME[dtype]
    try:
        return dt.from_numpy_dtype(getattr(dtype, "dtype", dtype))
    except TypeError:
        raise op_error(TypeError, op, f"dtype must be a lazytorch dtype, got {dtype!r}") from None


# lazytorch.ops.complex, which registers itself here when it loads (it sits above this
# module: complex -> elementwise -> creation). The factories hand it what is complex: a
# complex dtype, a complex fill value, complex data.
_complex: Any = None


def complex_dtype(dtype: Any) -> Any:
    """`dtype` if it is a complex one (`lazytorch.ops.complex.ComplexDType`), else None."""
    return dtype if getattr(dtype, "is_complex", False) is True else None


def is_complex_number(x: Any) -> bool:
    """Whether `x` is a complex number that is not a real one (1j, numpy.complex64(1))."""
    return isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real)


def _check_requires_grad(requires_grad: bool, dtype: Any, op: str) -> None:
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise op_error(
            RuntimeError,
            op,
            "Only Tensors of floating point and complex dtype can require gradients",
        )


def with_requires_grad(fn: Any) -> Any:
    """Make a factory honour ``requires_grad=True``: its result becomes a grad leaf."""
    import functools

    @functools.wraps(fn)
    def factory(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Tensor:
        t = fn(*args, **kwargs)
        if requires_grad:
            _check_requires_grad(True, t.dtype, fn.__name__)
            t.requires_grad_()
        return t  # type: ignore[no-any-return]

    return factory


def _int_range(d: dt.DType) -> tuple[int, int]:
    if d.is_signed:
        return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
    return 0, (1 << d.bits) - 1


_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": math.inf,
}


def checked_scalar(value: Any, d: dt.DType, op: str, *, check_float: bool = True) -> Any:
    """`value` converted to `d` with torch's overflow check (c10::checked_convert).

    Integers must fit the dtype, except that an unsigned dtype also takes negative ints down
    to -max, which wrap (torch allows ``a - b`` to be computed as ``a + 255 * b`` in uint8);
    floats converted to an integer dtype must be finite and in range before truncation,
    compared as doubles as c10 compares them (so 2.0**63 passes for int64 and, truncated,
    wraps to -2**63 as torch's x86 build gives). With `check_float`, a finite value beyond
    a float dtype's range is an error too: torch checks it in float32 for most ops, and in
    float16/bfloat16 for some (masked_fill, clamp, index_fill, pad, alpha) but not for its
    fills (setitem, where, scalar_tensor, and full and fill_ of one element: too large is inf there, and the
    number goes by way of a double), so callers pass ``check_float=not d.is_low_float`` for
    those. A Python int that is no torch Scalar
    (beyond [-2**63, 2**64)) is an OverflowError first, whatever the dtype. (full and fill_
    check float16 and bfloat16 too, except on one element: `fill_checks`.)

    The value returned is not yet rounded to a float dtype: `scalar_node` does that
    (`DType.to_python`), as c10 converts.
    """
    check_python_int(value)
    if is_complex_number(value):
        # c10 converts a complex value to a real dtype only when its imaginary part is 0
        c = complex(value)
        if c.imag != 0 and d is not dt.bool_:
            raise _overflow(d, op)
        value = c if d is dt.bool_ else c.real
    if d is dt.bool_:
        return bool(value)
    if d.is_floating_point:
        v = float(value)
        if check_float and math.isfinite(v) and builtins.abs(v) > _FLOAT_MAX[d.name]:
            raise _overflow(d, op)
        # (a HostScalar keeps its tag: the same value, which a compiled step's replay reads
        # anew; lazytorch._compile.step.) A checked conversion keeps an int, which c10
        # rounds to float32 once; an unchecked one (torch's float16/bfloat16 fills) takes
        # the number as a double first, as torch does (an int rounded twice past 2**53).
        keep = value.__class__ is HostScalar or (check_float and isinstance(value, int))
        return value if keep else v
    lo, hi = _int_range(d)
    if isinstance(value, float) or getattr(getattr(value, "dtype", None), "kind", "") == "f":
        f = float(value)
        if not math.isfinite(f) or not float(lo) <= f <= float(hi):
            raise _overflow(d, op)
        return d.to_python(int(f))  # truncates toward zero (and wraps 2**63 in int64)
    v = int(value)
    if not d.is_signed and -hi <= v < 0:
        return v + hi + 1  # two's complement wrap
    if not lo <= v <= hi:
        raise _overflow(d, op)
    return v


def fill_checks(shape: tuple[Any, ...], d: dt.DType) -> bool:
    """Whether torch's fill_ (full, full_like) checks a float value against `d`'s range.

    A one-element CPU tensor takes torch's scalar fast path (``at::detail::scalar_fill``),
    which converts a float16 or bfloat16 value unchecked, by way of a double (too large is
    inf); a larger one takes the fill kernel, which checks. (float32 is checked on both.)
    """
    return not d.is_low_float or not all(type(s) is int and s == 1 for s in shape)


def _overflow(d: dt.DType, op: str) -> Exception:
    return op_error(
        RuntimeError, op, f"value cannot be converted to type {d.name} without overflow"
    )


def _numpy_dtype(np_dtype: Any, op: str) -> dt.DType:
    try:
        return dt.from_numpy_dtype(np_dtype)
    except TypeError as e:
        raise op_error(TypeError, op, str(e)) from None


def _array_dtype(a: Any, op: str) -> Any:
    """The dtype of a NumPy array or scalar (complex ones too)."""
    if a.dtype.kind == "c":
        return _complex.of_numpy(a.dtype, op)
    return _numpy_dtype(a.dtype, op)


def _leaf_dtype(x: Any) -> Any:
    """torch's infer_scalar_type: an element's dtype, promoted over nested sequences."""
    import numpy as np

    if isinstance(x, bool):
        return dt.bool_
    if isinstance(x, int):
        return dt.int64
    if isinstance(x, float):
        return _config.get_default_dtype()
    if isinstance(x, (Tensor, ComplexBase)):
        return x.dtype  # type: ignore[no-any-return]
    if isinstance(x, (np.ndarray, np.generic)):
        return _array_dtype(x, "tensor")
    if is_complex_number(x):
        return _complex.default_dtype("tensor")
    if _is_sequence(x):
        d: Any = None
        for item in x:
            i = _leaf_dtype(item)
            d = i if d is None else _complex.promote_types(d, i)
        return d or _config.get_default_dtype()  # an empty list is a float tensor
    if isinstance(x, (str, bytes)):
        raise op_error(TypeError, "tensor", f"new(): invalid data type '{type(x).__name__}'")
    raise op_error(RuntimeError, "tensor", f"Could not infer dtype of {type(x).__name__}")


def _is_sequence(x: Any) -> bool:
    """Whether ``tensor()`` reads `x` as a sequence, as torch's PySequence_Check does:
    lists and tuples, and any other sequence type (a deque, a range, an array.array, a
    UserList), but not a string, bytes or a mapping (nor a tensor or array, read apart)."""
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (str, bytes, bytearray, Mapping, Tensor, ComplexBase)) or hasattr(x, "ndim"):
        return False
    return hasattr(type(x), "__getitem__") and hasattr(type(x), "__len__")


def _data_shape(x: Any) -> list[int]:
    """torch's compute_sizes: the lengths along the first element of each nesting level."""
    shape: list[int] = []
    while _is_sequence(x):
        shape.append(len(x))
        if not x:
            return shape
        x = x[0]
        if isinstance(x, str):  # torch walks into a string as a sequence of strings
            raise op_error(ValueError, "tensor", "too many dimensions 'str'")
    if isinstance(x, (Tensor, ComplexBase)) or getattr(x, "ndim", 0):
        shape.extend(int(s) for s in x.shape)
    return shape


def _flatten_data(x: Any, shape: list[int], dim: int, out: list[Any]) -> None:
    """Append the leaves of `x` to `out`, checking that every level has the expected length."""
    if isinstance(x, Tensor):
        x = x._values()
    elif isinstance(x, ComplexBase):
        x = x.detach().numpy()  # type: ignore[attr-defined]
    if not _is_sequence(x) and getattr(x, "ndim", 0):
        if list(x.shape) != shape[dim:]:
            raise op_error(
                ValueError,
                "tensor",
                f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})",
            )
        out.extend(x.reshape(-1).tolist())
        return
    if dim == len(shape):
        if _is_sequence(x):
            raise op_error(
                TypeError,
                "tensor",
                f"'{type(x).__name__}' object cannot be interpreted as a number",
            )
        v = x.item() if hasattr(x, "item") else x
        if not isinstance(v, (int, float, complex)):
            raise op_error(TypeError, "tensor", f"must be real number, not {type(v).__name__}")
        out.append(v)
        return
    if not _is_sequence(x):
        raise op_error(TypeError, "tensor", "not a sequence")
    if len(x) != shape[dim]:
        raise op_error(
            ValueError,
            "tensor",
            f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})",
        )
    for item in x:
        _flatten_data(item, shape, dim + 1, out)


def _flat_numbers(data: Any, dtype: dt.DType | None) -> tuple[Any, dt.DType] | None:
    """`_from_python`'s result for its commonest input, a flat list or tuple of Python ints
    (int64) or of Python floats (the default dtype), read by NumPy in one call; None for
    anything else (or an int out of int64's range: the general path raises torch's error).
    A dataset's ``torch.tensor(token_ids)`` per sample took ~0.1 ms through the general
    path's per-element checks, which these inputs cannot fail."""
    import numpy as np

    if (type(data) is not list and type(data) is not tuple) or not data:
        return None
    kind = type(data[0])
    if kind is int and (dtype is None or dtype is dt.int64):
        if all(type(v) is int for v in data):
            try:
                return np.array(data, dtype=np.int64), dt.int64
            except OverflowError:
                return None
        return None
    if kind is float and (dtype is None or dtype.is_floating_point):
        d = _config.get_default_dtype() if dtype is None else dtype
        if d in (dt.float32, dt.float64) and all(type(v) is float for v in data):
            return RV.from_float64(np.array(data, dtype=np.float64), d.np), d
    return None


def _from_python(data: Any, dtype: dt.DType | None) -> tuple[Any, dt.DType]:
    """A NumPy array for (nested) Python data, with torch's dtype inference and checks."""
    import numpy as np

    if isinstance(data, (str, bytes)):
        raise op_error(TypeError, "tensor", f"new(): invalid data type '{type(data).__name__}'")
    fast = _flat_numbers(data, dtype)
    if fast is not None:
        return fast
    shape = _data_shape(data)
    d = _leaf_dtype(data) if dtype is None else dtype
    leaves: list[Any] = []
    _flatten_data(data, shape, 0, leaves)
    if complex_dtype(d) is not None:
        return np.array(leaves, dtype=np.complex128).reshape(shape), d
    if d is not dt.bool_:
        for v in leaves:  # torch's unpacking of a complex number as a real one
            if isinstance(v, complex):
                if d.is_floating_point:
                    raise op_error(TypeError, "tensor", "must be real number, not complex")
                raise op_error(
                    TypeError, "tensor", "'complex' object cannot be interpreted as an integer"
                )
    if d is dt.bool_:  # a number converts to its truth, however large
        values = np.array([bool(v) for v in leaves], dtype=np.bool_)
    elif d.is_floating_point:
        # Ints convert as a float holds them (2**64 is fine, 10**400 is Python's
        # OverflowError); out-of-range floats round to inf (1e300 in float32), as in torch.
        # torch unpacks each number as a double, then converts it as c10 does (float16
        # and bfloat16 by way of float32: two roundings).
        values = RV.from_float64(np.array(leaves, dtype=np.float64), d.np)
    else:
        # torch unpacks each int for an integer tensor as an int64 first.
        for v in leaves:
            if isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX:
                raise op_error(ValueError, "tensor", "Overflow when unpacking long long")
        checked = [checked_scalar(v, d, "tensor", check_float=False) for v in leaves]
        values = np.array(checked, dtype=d.np)
    return values.reshape(shape), d


@public()
@with_requires_grad
def tensor(
    data: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor holding a copy of `data` (nested lists, a number, a NumPy array or a tensor).

    Python floats become the default dtype, ints int64 and bools bool; NumPy arrays keep
    their dtype.

    >>> import lazytorch
    >>> lazytorch.tensor([[1, 2], [3, 4]]).dtype
    lazytorch.int64
    >>> lazytorch.tensor([1.5, 2.0])
    tensor([1.5000, 2.0000])
    """
    import numpy as np

    cd = complex_dtype(dtype)
    dtype = cd or resolve_dtype(dtype, "tensor")
    dev = resolve_device(device, "tensor")
    if isinstance(data, ComplexBase) or (isinstance(data, Tensor) and cd is not None):
        return _complex.copy_of(data, dtype, dev)  # type: ignore[no-any-return]
    if isinstance(data, Tensor):
        # a copy outside the graph, as torch's: no gradient reaches `data` through it (the
        # cast of an unmaterialized leaf of the same dtype is that leaf's own node)
        data = data.detach()
        target = dtype or data.dtype
        return (
            wrap(cast(data._node, target))
            if data._node.buffer is None
            else _from_array(data._values(), target, dev)
        )
    if isinstance(data, (np.ndarray, np.generic)):
        # Arrays keep their dtype and convert with NumPy's (unchecked) casts, as in torch.
        target = dtype or _array_dtype(data, "tensor")
        _check_requires_grad(requires_grad, target, "tensor")
        if complex_dtype(target) is not None or data.dtype.kind == "c":
            return _complex.from_array(np.asarray(data), target, dev)  # type: ignore[no-any-return]
        return _from_array(np.asarray(data), target, dev)
    arr, target = _from_python(data, dtype)
    _check_requires_grad(requires_grad, target, "tensor")
    if complex_dtype(target) is not None:
        return _complex.from_array(arr, target, dev)  # type: ignore[no-any-return]
    return _from_array(arr, target, dev)


def _from_array(arr: Any, dtype: dt.DType, device: Device) -> Tensor:
    import numpy as np

    buf = np.array(arr, dtype=dtype.np, copy=True, order="C")
    return wrap(leaf_node(buf, device))


@public()
def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor sharing a NumPy array's memory (dtype kept), as torch's: a write to
    either is seen by the other (`lazytorch.ops.numpy_bridge` gives the rules; an array
    that is not C-contiguous, aligned, native-endian and writable is copied).

    >>> import numpy as np, lazytorch
    >>> a = np.zeros(2, dtype=np.float32)
    >>> t = lazytorch.from_numpy(a)
    >>> a[1] = 7
    >>> t
    tensor([0., 7.])
    """
    import numpy as np

    if not isinstance(ndarray, np.ndarray):
        raise op_error(
            TypeError, "from_numpy", f"expected np.ndarray (got {type(ndarray).__name__})"
        )
    if ndarray.dtype.kind == "c":
        return _complex.from_numpy(ndarray)  # type: ignore[no-any-return]
    d = _numpy_dtype(ndarray.dtype, "from_numpy")
    if _share is not None and ndarray.dtype == d.np and _shareable(ndarray):
        return _share(ndarray)  # type: ignore[no-any-return]
    return _from_array(ndarray, d, _CPU)


def _shareable(a: Any) -> bool:
    f = a.flags
    return bool(f.c_contiguous and f.aligned and f.writeable and a.dtype.isnative)


# lazytorch.ops.numpy_bridge.share (it sits above this module): a tensor over an array
_share: Any = None


@public()
def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor: the same tensor if it already matches, else a copy."""
    dtype = complex_dtype(dtype) or resolve_dtype(dtype, "as_tensor")
    if isinstance(data, ComplexBase) and dtype in (None, data.dtype) and device is None:
        return data  # type: ignore[return-value]
    if isinstance(data, Tensor):
        dev = data.device if device is None else as_device(device)
        if (dtype is None or dtype is data.dtype) and dev == data.device:
            return data
        return data.to(device=dev, dtype=dtype)  # type: ignore[attr-defined,no-any-return]
    if _share is not None and type(data).__module__ == "numpy" and type(data).__name__ == "ndarray":
        # torch shares a NumPy array's memory when neither dtype nor device changes it
        d = _array_dtype(data, "as_tensor")
        same = (dtype is None or dtype is d) and (device is None or as_device(device) == _CPU)
        if same and data.dtype == d.np and _shareable(data):
            return from_numpy(data) if data.dtype.kind == "c" else _share(data)
    return tensor(data, dtype=dtype, device=device)


@public()
@with_requires_grad
def scalar_tensor(
    s: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    check_python_int(s)
    cd = complex_dtype(dtype)
    if cd is not None:
        dev = resolve_device(device, "scalar_tensor")
        return _complex.fill((), s, cd, dev, "scalar_tensor")  # type: ignore[no-any-return]
    d = resolve_dtype(dtype, "scalar_tensor") or _config.get_default_dtype()
    value = checked_scalar(s, d, "scalar_tensor", check_float=not d.is_low_float)
    return wrap(scalar_node(value, d, resolve_device(device, "scalar_tensor")))


def size_args(size: tuple[Any, ...], kwargs: dict[str, Any], op: str) -> tuple[Any, ...]:
    """The shape of a factory called as ``op(2, 3)``, ``op((2, 3))`` or ``op(size=(2, 3))``.

    `kwargs` holds the factory's extra keywords: only ``size`` is allowed there.
    """
    size_kw = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if size_kw is not None:
        if size:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        size = (size_kw,)
    elif not size:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    return shape_arg(size, op)


def into_out(result: Tensor, out: Any, op: str) -> Tensor:
    """Write a factory's result into `out=` (converted to its dtype) and return `out`."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise op_error(TypeError, op, f"out must be a Tensor, not {type(out).__name__}")
    n = cast(result._node, out.dtype)
    if tuple(out.shape) != tuple(n.shape):
        if out._view is not None or out._views:
            raise op_error(
                RuntimeError,
                op,
                f"out= has shape {list(out.shape)} but the result {list(n.shape)}, and a "
                "tensor with views cannot be resized",
            )
        out._node = n  # torch resizes `out`; nothing else aliases it
        return out
    return _assign(out, n)


# `lazytorch.ops.views.assign` (the in-place write), which that module registers here when
# it loads: views sits above this module (views -> elementwise -> creation)
_assign: Any = None


def cast_into_out(result: Tensor, out: Any, op: str) -> Tensor:
    """Return `result`, or write it into `out=` as torch does: out's dtype must be able to
    hold the result (no float -> integer, no non-bool -> bool), and out is resized when its
    shape differs."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise op_error(TypeError, op, f"out must be a Tensor, not {type(out).__name__}")
    src, dst = result.dtype, out.dtype
    if (src.is_floating_point and not dst.is_floating_point) or (
        dst is dt.bool_ and src is not dt.bool_
    ):
        raise op_error(
            RuntimeError,
            op,
            f"result type {src.legacy_name} can't be cast to the desired output type "
            f"{dst.legacy_name}",
        )
    return into_out(result, out, op)


def _out_dtype(dtype: Any, out: Any, op: str) -> dt.DType | None:
    """The dtype argument, or out='s dtype when only that is given (torch's rule)."""
    if isinstance(out, ComplexBase):
        raise op_error(NotImplementedError, op, "out= is not supported for complex results")
    if complex_dtype(dtype) is not None:
        if out is not None:
            tensor_dtype = getattr(out, "dtype", None)
            raise op_error(
                RuntimeError,
                op,
                f"dtype {dtype.legacy_name} does not match dtype of out parameter "
                f"({getattr(tensor_dtype, 'legacy_name', tensor_dtype)})",
            )
        return dtype  # type: ignore[no-any-return]
    d = resolve_dtype(dtype, op)
    if d is None and isinstance(out, Tensor):
        return out.dtype
    return d


def _fill(shape: tuple[Any, ...], value: Node) -> Tensor:
    return wrap(expand_node(value, shape))


def _literal_fill(
    size: tuple[Any, ...],
    kwargs: dict[str, Any],
    value: int,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    out: Any,
    op: str,
) -> Tensor:
    shape = size_args(size, kwargs, op)
    d = _out_dtype(dtype, out, op) or _config.get_default_dtype()
    _check_requires_grad(requires_grad, d, op)
    if complex_dtype(d) is not None:
        return _complex.fill(shape, value, d, resolve_device(device, op), op, literal=True)  # type: ignore[no-any-return]
    check_new_tensor(shape, d, op)
    return into_out(_fill(shape, const_node(value, d, resolve_device(device, op))), out, op)


@public()
@with_requires_grad
def zeros(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> Tensor:
    """A tensor of zeros. ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    return _literal_fill(size, kwargs, 0, dtype, device, requires_grad, out, "zeros")


@public()
@with_requires_grad
def ones(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> Tensor:
    """A tensor of ones."""
    return _literal_fill(size, kwargs, 1, dtype, device, requires_grad, out, "ones")


@public()
@with_requires_grad
def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    pin_memory: bool = False,
    out: Any = None,
    **kwargs: Any,
) -> Tensor:
    """An "uninitialized" tensor; lazytorch fills it with zeros (values are never garbage)."""
    return _literal_fill(size, kwargs, 0, dtype, device, requires_grad, out, "empty")


@public()
@with_requires_grad
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
) -> Tensor:
    """A tensor filled with `fill_value`; its dtype follows the value (float -> default).

    The value must fit the dtype (torch's overflow check): ``full((2,), 300, dtype=uint8)``
    is a RuntimeError. It is a program input, so a new value reuses the compiled program.
    """
    shape = shape_arg((size,), "full")
    if isinstance(fill_value, (Tensor, ComplexBase)):
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number):  # (a str would parse as a number)
        raise op_error(
            TypeError,
            "full",
            f"argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}",
        )
    d = _out_dtype(dtype, out, "full")
    if d is None and is_complex_number(fill_value):
        d = _complex.default_dtype("full")
    d = d or dt.scalar_dtype(fill_value, _config.get_default_dtype())
    _check_requires_grad(requires_grad, d, "full")
    if complex_dtype(d) is not None:
        return _complex.fill(shape, fill_value, d, resolve_device(device, "full"), "full")  # type: ignore[no-any-return]
    value = checked_scalar(fill_value, d, "full", check_float=fill_checks(shape, d))
    check_new_tensor(shape, d, "full")
    return into_out(
        _fill(shape, scalar_node(value, d, resolve_device(device, "full"))), out, "full"
    )


def _like(t: Tensor, dtype: Any, device: Any, op: str) -> tuple[tuple[Any, ...], Any, Device]:
    """(shape, dtype, device) of a ``*_like`` factory's result; the dtype may be complex
    (`t` complex, or a complex `dtype`: the caller hands those to `_complex`)."""
    if not isinstance(t, (Tensor, ComplexBase)):
        raise op_error(TypeError, op, f"expected a Tensor, got {type(t).__name__}")
    d = complex_dtype(dtype) or resolve_dtype(dtype, op) or t.dtype
    dev = t.device if device is None else resolve_device(device, op)
    shape = t._node.shape if isinstance(t, Tensor) else tuple(t.shape)
    if complex_dtype(d) is None:
        check_new_tensor(shape, d, op)
    return shape, d, dev


@public()
@with_requires_grad
def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "zeros_like")
    if complex_dtype(d) is not None:
        return _complex.fill(shape, 0, d, dev, "zeros_like", literal=True)  # type: ignore[no-any-return]
    return _fill(shape, const_node(0, d, dev))


@public()
@with_requires_grad
def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "ones_like")
    if complex_dtype(d) is not None:
        return _complex.fill(shape, 1, d, dev, "ones_like", literal=True)  # type: ignore[no-any-return]
    return _fill(shape, const_node(1, d, dev))


empty_like = public(torch="empty_like")(with_requires_grad(zeros_like.__wrapped__))
"""torch.empty_like: an uninitialized tensor, which zeros are a valid value of."""


@public()
@with_requires_grad
def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "full_like")
    if isinstance(fill_value, ComplexBase):
        fill_value = fill_value.item()
    if complex_dtype(d) is not None:
        return _complex.fill(shape, fill_value, d, dev, "full_like")  # type: ignore[no-any-return]
    value = checked_scalar(fill_value, d, "full_like", check_float=fill_checks(shape, d))
    return _fill(shape, scalar_node(value, d, dev))


def _iota(n: Any, dtype: dt.DType, device: Device) -> Node:
    return make_node(P.iota, (), ((n,), 0, dtype, device), (n,), dtype, device)


def _affine(i: Node, start: Any, step: Any, dtype: dt.DType) -> Node:
    dev = i.device
    scaled = make_node(P.mul, (i, const_node(step, i.dtype, dev)), (), i.shape, i.dtype, dev)
    shifted = make_node(P.add, (scaled, const_node(start, i.dtype, dev)), (), i.shape, i.dtype, dev)
    return cast(shifted, dtype)


# The integers each float dtype holds exactly, from 0: an arange of them is exact however
# torch's kernel rounds (for float16 and bfloat16, its vectors start from a base rounded to
# the dtype, so past these even whole steps differ from a plain cast)
_EXACT_INTS = {"float16": 2**11, "bfloat16": 2**8, "float32": 2**24, "float64": 2**53}


def _number(x: Any, op: str, what: str) -> Any:
    if isinstance(x, (Tensor, ComplexBase)):
        if op != "arange" and x.ndim != 0:
            raise op_error(
                RuntimeError,
                op,
                f"{op} only supports 0-dimensional start and end tensors, but got {what} "
                f"with {x.ndim} dimension(s).",
            )
        x = x.item()
    if is_complex_number(x):
        if op != "arange":
            # torch takes a Python complex (NumPy's complex128 is one) as a complex end
            # point, and only the real part of another complex scalar (numpy.complex64)
            return complex(x) if isinstance(x, complex) else float(x.real)
        if complex(x).imag != 0:  # torch's arange takes its numbers as doubles
            raise op_error(
                RuntimeError, op, "value cannot be converted to type double without overflow"
            )
        x = complex(x).real
    if not isinstance(x, (int, float)):
        raise op_error(TypeError, op, f"{what} must be a number, got {type(x).__name__}")
    return x


@public()
@with_requires_grad
def arange(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`.

    Element i is ``start + i * step`` computed in torch's accumulate type: float64 for
    float32/float64 (so float steps do not accumulate error), float32 for float16 and
    bfloat16, rounded as torch's CPU kernel rounds (`range_values.arange_values`), and
    int64 for integer dtypes — whose start and step are truncated to integers first, as
    torch does (``arange(0, 2, 0.5, dtype=int32)`` is four zeros).

    >>> import lazytorch
    >>> lazytorch.arange(5).tolist(), lazytorch.arange(1, 2, 0.25).tolist()
    ([0, 1, 2, 3, 4], [1.0, 1.25, 1.5, 1.75])
    """
    if end is None:
        start, end = 0, start
    start = _number(start, "arange", "start")
    end = _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    for v in (start, end, step):
        check_python_int(v)
    is_float = any(isinstance(v, float) for v in (start, end, step))
    d = _out_dtype(dtype, out, "arange")
    d = d or (_config.get_default_dtype() if is_float else dt.int64)
    dev = resolve_device(device, "arange")
    if d is dt.bool_ or complex_dtype(d) is not None:
        raise op_error(
            NotImplementedError, "arange", f"\"arange_cpu\" not implemented for '{d.legacy_name}'"
        )
    if not (math.isfinite(start) and math.isfinite(end)):
        raise op_error(RuntimeError, "arange", f"unsupported range: {start} -> {end}")
    if step == 0:
        raise op_error(RuntimeError, "arange", "step must be nonzero")
    if d.is_floating_point:
        n = _arange_length(start, end, step)
        check_new_tensor((n,), d, "arange")
        whole = float(start).is_integer() and float(step).is_integer()
        if not (whole and abs(start) + n * abs(step) <= _EXACT_INTS[d.name]):
            vals = RV.arange_values(start, step, n, d.np, get_num_threads())
            return into_out(wrap(leaf_node(vals, dev)), out, "arange")
        # Every value is an integer the dtype holds, whatever the rounding: an iota the
        # program fuses, which costs no host work.
        work = dt.float32 if d.is_low_float else dt.float64
        return into_out(wrap(_affine(_iota(n, work, dev), start, step, d)), out, "arange")
    # Integer dtypes: torch's accumulate type is int64, so start and step are truncated.
    istart, istep = math.trunc(start), math.trunc(step)
    if d is dt.int64:
        # ... and for int64 the length comes from the truncated values too, computed as
        # torch does in int64 arithmetic: a range wider than int64 wraps to a bad length.
        iend = math.trunc(end)
        for v in (istart, iend, istep):
            if not INT64_MIN <= v <= INT64_MAX:
                raise op_error(
                    RuntimeError,
                    "arange",
                    f"value cannot be converted to type int64_t without overflow: {v}",
                )
        if istep == 0:
            raise op_error(ValueError, "arange", "step must be nonzero")
        _check_direction(istart, iend, istep)
        sign = (istep > 0) - (istep < 0)
        n = _c_div(_wrap_int64(iend - istart + istep - sign), istep)
        _check_length(n)
    else:
        n = _arange_length(start, end, step)
    check_new_tensor((n,), d, "arange")
    return into_out(wrap(_affine(_iota(n, dt.int64, dev), istart, istep, d)), out, "arange")


def _check_direction(start: Any, end: Any, step: Any) -> None:
    if step == 0:
        raise op_error(RuntimeError, "arange", "step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise op_error(
            RuntimeError, "arange", "upper bound and lower bound inconsistent with step sign"
        )


def _arange_length(start: Any, end: Any, step: Any) -> int:
    _check_direction(start, end, step)
    n = max(0, math.ceil((float(end) - float(start)) / float(step)))
    _check_length(n)
    return n


def _check_length(n: int) -> None:
    # torch compares the length, as a double, with int64's maximum (2**63 as a double)
    if not 0 <= n <= 1 << 63:
        raise op_error(RuntimeError, "arange", f"invalid size, possible overflow? (length {n})")


def _wrap_int64(v: int) -> int:
    return (v - INT64_MIN) % (1 << 64) + INT64_MIN


def _c_div(a: int, b: int) -> int:
    """C's integer division: truncation toward zero."""
    q = builtins.abs(a) // builtins.abs(b)
    return q if (a < 0) == (b < 0) else -q


@public()
@with_requires_grad
def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive, bit for bit torch's.

    As torch's kernel: start and end are converted to the dtype, the step is ``(end -
    start) / (steps - 1)`` in the dtype's arithmetic (float64 for integer dtypes), the first
    half counts up from start (``start + step * i``) and the second half down from end
    (``end - step * (steps - 1 - i)``), and integer results truncate. In float64 (and the
    integer dtypes) and float32 the product and sum are one fused multiply-add, rounded
    once; float16 and bfloat16 round every operation, in float and then in the dtype. The
    values are computed on the host with those roundings (`range_values`: an exact fused
    multiply-add, since NumPy has none). (Plain float64 arithmetic was an ulp off torch in 9
    of 10 float64 linspaces, off by one after truncation in some integer ones; bfloat16
    computed in float32 differed in one element in twenty.) With 0 or 1 steps nothing is
    computed: torch fills `start` (unchecked in float16 and bfloat16, where it may be inf).

    >>> import lazytorch
    >>> lazytorch.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    import numpy as np

    start = _number(start, "linspace", "start")
    end = _number(end, "linspace", "end")
    steps = int_like(steps)
    if not isinstance(steps, int) or steps < 0:
        raise op_error(RuntimeError, "linspace", "number of steps must be non-negative")
    unpack_int64(steps, "linspace")
    d = _range_dtype(start, end, _out_dtype(dtype, out, "linspace"), "linspace")
    dev = resolve_device(device, "linspace")
    if complex_dtype(d) is not None:
        check_new_tensor((steps, 2), d.real, "linspace")
        # c10::complex's step and ramp (a complex divided or multiplied by a real number,
        # added to a complex one) work part by part, each part as a real linspace of the
        # parts' dtype rounds it: torch's complex linspace is two real ones side by side
        re, im = (_linspace_part(p, steps, d, "linspace") for p in zip(*map(_parts, (start, end))))
        return _complex.ComplexTensor(wrap(leaf_node(np.stack([re, im], -1), dev)))  # type: ignore[no-any-return]
    check_new_tensor((steps,), d, "linspace")
    if steps <= 1:
        first = [_fill_value(start, d, "linspace")] if steps else []
        return into_out(_from_array(first, d, dev), out, "linspace")
    if d is dt.bool_:
        raise op_error(
            NotImplementedError, "linspace", "\"linspace_cpu\" not implemented for 'Bool'"
        )
    s = checked_scalar(start, d, "linspace")
    e = checked_scalar(end, d, "linspace")
    if d in (dt.float32, dt.float16, dt.bfloat16):
        # (start and end as given: converted as c10 converts them, an int in one rounding)
        vals = RV.linspace_values(start, end, steps, d.np)
        return into_out(wrap(leaf_node(vals, dev)), out, "linspace")
    return into_out(wrap(cast(leaf_node(_float64_linspace(s, e, steps), dev), d)), out, "linspace")


def _float64_linspace(s: Any, e: Any, steps: int) -> Any:
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        step = (float(e) - float(s)) / float(steps - 1)
    return RV.fma_ramp(float(s), float(e), step, steps)


def _range_dtype(start: Any, end: Any, d: Any, op: str) -> Any:
    """The dtype of a linspace or logspace, as torch infers it: a complex end point makes
    it the default complex dtype, and refuses a real `d`."""
    if isinstance(start, complex) or isinstance(end, complex):
        inferred = _complex.default_dtype(op)
        if d is None:
            return inferred
        if complex_dtype(d) is None:
            raise op_error(
                RuntimeError,
                op,
                f"inferred dtype {_complex.c_name(inferred)} can't be safely "
                f"cast to passed dtype {d.legacy_name}",
            )
    return d or _config.get_default_dtype()


def _parts(x: Any) -> tuple[Any, Any]:
    """(real part, imaginary part) of an end point; an int stays an int (c10 converts
    it to the part's dtype in one rounding)."""
    return (x.real, x.imag) if isinstance(x, complex) else (x, 0.0)


def _linspace_part(ends: tuple[Any, Any], steps: int, d: Any, op: str) -> Any:
    """One part of a complex linspace: the part's values (a NumPy array of `d.real`),
    its end points converted as c10 converts a Scalar to `d` (overflow checked)."""
    import numpy as np

    for v in ends[: min(steps, 2)]:  # (one step fills start; end is not converted)
        _complex.checked_part(v, d, op)
    part = d.real
    if steps <= 1:
        return np.array([RV.to_dtype(ends[0], part.np)] if steps else [], dtype=part.np)
    if part is dt.float32:
        return RV.linspace_values(ends[0], ends[1], steps, part.np)
    return _float64_linspace(*ends, steps)


def _fill_value(value: Any, d: dt.DType, op: str) -> Any:
    """`value` as torch's fill_ writes it into a tensor of dtype `d`: checked for overflow,
    except in float16 and bfloat16 (converted by way of float, where too large is inf)."""
    checked = checked_scalar(value, d, op, check_float=not d.is_low_float)
    return RV.to_dtype(value, d.np) if d.is_floating_point else checked


@public()
@with_requires_grad
def logspace(
    start: Any,
    end: Any,
    steps: int | None = None,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """`steps` values from ``base**start`` to ``base**end``, evenly spaced in exponent, bit
    for bit torch's (`steps` is required; its None default is the one torch's stub shows).

    As torch's kernel: start and end are converted to the dtype (an integer dtype truncates
    them), their difference taken in the dtype's arithmetic; the exponents are float64,
    ``start + step * i`` for the first half and ``end - step * (steps - 1 - i)`` for the
    rest (each operation rounded, no fused multiply-add there); each value is the C
    library's ``pow(base, exponent)`` converted to the dtype. One step is ``pow(base,
    start)`` of the unconverted start.

    >>> import lazytorch
    >>> lazytorch.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    import numpy as np

    if steps is None:
        raise op_error(TypeError, "logspace", "logspace() missing required argument 'steps'")
    start = _number(start, "logspace", "start")
    steps = int_like(steps)
    end = _number(end, "logspace", "end")
    base = float(_number(base, "logspace", "base"))
    if not isinstance(steps, int) or steps < 0:
        raise op_error(RuntimeError, "logspace", "number of steps must be non-negative")
    unpack_int64(steps, "logspace")
    d = _range_dtype(start, end, _out_dtype(dtype, None, "logspace"), "logspace")
    if complex_dtype(d) is not None:
        # torch's values are glibc's cpow of a complex exponent ramp, with its roundings in
        # the parts' precision: not reproduced yet (an approximation is not torch's values)
        raise op_error(
            NotImplementedError,
            "logspace",
            "logspace with a complex dtype or complex end points is not supported by "
            "lazytorch yet (torch computes it with glibc's complex pow, not reproduced)",
        )
    dev = resolve_device(device, "logspace")
    check_new_tensor((steps,), d, "logspace")
    if steps <= 1:
        value = float(RV.pow_libm(base, float(start))) if steps else 0.0
        first = [_fill_value(value, d, "logspace")] if steps else []
        return _from_array(first, d, dev)
    if d is dt.bool_:
        raise op_error(
            NotImplementedError, "logspace", "\"logspace_cpu\" not implemented for 'Bool'"
        )
    s = checked_scalar(start, d, "logspace")
    e = checked_scalar(end, d, "logspace")
    if d.is_floating_point:
        s, e = RV.to_dtype(start, d.np), RV.to_dtype(end, d.np)
        with np.errstate(over="ignore", invalid="ignore"):
            if d.is_low_float:  # c10: computed in float, rounded to the dtype
                diff = float(RV.from_float32(np.float32(e) - np.float32(s), d.np))
            else:
                diff = float(e - s)
    else:  # C's integer arithmetic: int at least, wrapping at 32 and 64 bits
        diff = e - s
        if d.bits >= 32:
            lo, hi = _int_range(d)
            diff = (diff - lo) % (hi - lo + 1) + lo
    exps = RV.logspace_exponents(float(s), float(e), diff, steps)
    vals = RV.pow_libm(base, exps)
    if d.is_floating_point:
        return wrap(leaf_node(RV.from_float64(vals, d.np), dev))
    return wrap(cast(leaf_node(vals, dev), d))


@public()
@with_requires_grad
def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    out: Any = None,
) -> Tensor:
    """The n×m identity matrix."""
    n, m = int_like(n), int_like(m)
    unpack_int64(n, "eye")
    if m is not None:
        unpack_int64(m, "eye")
    if n < 0:
        raise op_error(RuntimeError, "eye", f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise op_error(RuntimeError, "eye", f"m must be greater or equal to 0, got {m}")
    d = _out_dtype(dtype, out, "eye") or _config.get_default_dtype()
    if complex_dtype(d) is not None:  # the identity's real part; its imaginary part is 0
        real = eye(n, m, dtype=d.real, device=device)
        return _complex.with_zero_imag(real)  # type: ignore[no-any-return]
    check_numel((n, m), "eye")
    check_new_tensor((n, m), d, "eye")
    dev = resolve_device(device, "eye")
    rows = make_node(P.iota, (), ((n, m), 0, dt.int64, dev), (n, m), dt.int64, dev)
    cols = make_node(P.iota, (), ((n, m), 1, dt.int64, dev), (n, m), dt.int64, dev)
    diag = make_node(P.eq, (rows, cols), (), (n, m), dt.bool_, dev)
    return into_out(wrap(cast(diag, d)), out, "eye")


def legacy_tensor_new(*args: Any, **kwargs: Any) -> Tensor:
    """``lazytorch.Tensor(data)`` / ``lazytorch.Tensor(2, 3)`` as torch.Tensor: float tensors."""
    if kwargs.keys() - {"device"}:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    device = kwargs.get("device")
    if len(args) == 1 and not isinstance(args[0], int):
        if isinstance(args[0], Size):  # a Size is a shape (``Tensor(x.shape)``); a list is data
            return zeros(tuple(args[0]), device=device)
        return tensor(args[0], dtype=_config.get_default_dtype(), device=device)
    return zeros(*(args or (0,)), device=device)  # Tensor() is an empty 1-d tensor
