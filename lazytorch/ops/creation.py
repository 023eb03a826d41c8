"""Tensor creation: from data, constant fills, ranges, eye.

Data is copied into the tensor at creation (``tensor``, ``from_numpy`` and ``as_tensor``
alike): lazytorch buffers are immutable, so a later write to the source array cannot change
a pending computation behind the user's back. Fill values given by the user are program
inputs (changing them never recompiles); ``zeros``/``ones`` are literals.
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import Device, as_device
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops._core import (
    P,
    cast,
    const_node,
    expand_node,
    leaf_node,
    scalar_node,
    shape_arg,
    wrap,
)
from lazytorch.tensor import Tensor

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
    "ones",
    "ones_like",
    "scalar_tensor",
    "tensor",
    "zeros",
    "zeros_like",
]


def resolve_device(device: Any, op: str) -> Device:
    dev = _config.get_default_device() if device is None else as_device(device)
    if dev.type != "cpu":
        raise op_error(
            RuntimeError,
            op,
            f"device '{dev}' is not available: lazytorch has no backend registered for "
            f"'{dev.type}' (available: cpu)",
        )
    return dev


def resolve_dtype(dtype: Any, op: str) -> dt.DType | None:
    if dtype is None or isinstance(dtype, dt.DType):
        return dtype
    if isinstance(dtype, str) and dtype in dt.BY_NAME:
        return dt.BY_NAME[dtype]
    try:
        return dt.from_numpy_dtype(getattr(dtype, "dtype", dtype))
    except TypeError:
        raise op_error(TypeError, op, f"dtype must be a lazytorch dtype, got {dtype!r}") from None


def _check_requires_grad(requires_grad: bool, dtype: dt.DType, op: str) -> None:
    if requires_grad:
        raise op_error(
            NotImplementedError,
            op,
            "requires_grad=True needs autograd, which lazytorch does not have yet",
        )


def _infer_dtype_from_data(data: Any) -> tuple[Any, dt.DType]:
    import numpy as np

    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        return arr, dt.from_numpy_dtype(arr.dtype)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise op_error(
            ValueError, "tensor", f"could not build a tensor from ragged data: {e}"
        ) from None
    kind = arr.dtype.kind
    if kind == "b":
        return arr, dt.bool_
    if kind in "iu":
        if kind == "u" or arr.dtype.itemsize > 8:
            raise op_error(RuntimeError, "tensor", "Overflow when unpacking long")
        return arr, dt.int64
    if kind == "f":
        return arr, _config.get_default_dtype()
    if kind == "O" or kind in "SUV":
        raise op_error(
            TypeError, "tensor", f"could not infer a dtype for data of type {type(data).__name__}"
        )
    raise op_error(TypeError, "tensor", f"unsupported data of NumPy kind {kind!r}")


def _materialize_nested(data: Any) -> Any:
    """Lists of tensors (``tensor([t0, t1])``) read each tensor's value."""
    if isinstance(data, Tensor):
        return data.numpy()
    if isinstance(data, (list, tuple)):
        return [_materialize_nested(x) for x in data]
    return data


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

    dtype = resolve_dtype(dtype, "tensor")
    dev = resolve_device(device, "tensor")
    if isinstance(data, Tensor):
        target = dtype or data.dtype
        return (
            wrap(cast(data._node, target))
            if data._node.buffer is None
            else _from_array(data.numpy(), target, dev)
        )
    if isinstance(data, (list, tuple)):
        data = _materialize_nested(data)
    arr, inferred = _infer_dtype_from_data(data)
    target = dtype or inferred
    _check_requires_grad(requires_grad, target, "tensor")
    return _from_array(np.asarray(arr), target, dev)


def _from_array(arr: Any, dtype: dt.DType, device: Device) -> Tensor:
    import numpy as np

    buf = np.array(arr, dtype=dtype.np, copy=True, order="C")
    return wrap(leaf_node(buf, device))


def from_numpy(ndarray: Any) -> Tensor:
    """A tensor with a copy of a NumPy array's values (dtype kept).

    Unlike torch, the tensor does not share memory with the array: lazytorch buffers are
    immutable, so later writes to the array do not reach the tensor.
    """
    import numpy as np

    if not isinstance(ndarray, np.ndarray):
        raise op_error(
            TypeError, "from_numpy", f"expected np.ndarray (got {type(ndarray).__name__})"
        )
    return _from_array(ndarray, dt.from_numpy_dtype(ndarray.dtype), _config.get_default_device())


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor: the same tensor if it already matches, else a copy."""
    dtype = resolve_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        dev = data.device if device is None else as_device(device)
        if (dtype is None or dtype is data.dtype) and dev == data.device:
            return data
        return data.to(device=dev, dtype=dtype)  # type: ignore[attr-defined,no-any-return]
    return tensor(data, dtype=dtype, device=device)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    d = resolve_dtype(dtype, "scalar_tensor") or _config.get_default_dtype()
    return wrap(scalar_node(s, d, resolve_device(device, "scalar_tensor")))


def _fill(shape: tuple[Any, ...], value: Node) -> Tensor:
    return wrap(expand_node(value, shape))


def _literal_fill(
    size: Any, value: int, dtype: Any, device: Any, requires_grad: bool, op: str
) -> Tensor:
    shape = shape_arg(size, op)
    d = resolve_dtype(dtype, op) or _config.get_default_dtype()
    _check_requires_grad(requires_grad, d, op)
    return _fill(shape, const_node(value, d, resolve_device(device, op)))


def zeros(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None
) -> Tensor:
    """A tensor of zeros. ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return _literal_fill(size, 0, dtype, device, requires_grad, "zeros")


def ones(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, out: Any = None
) -> Tensor:
    """A tensor of ones."""
    return _literal_fill(size, 1, dtype, device, requires_grad, "ones")


def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """An "uninitialized" tensor; lazytorch fills it with zeros (values are never garbage)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor filled with `fill_value`; its dtype follows the value (float -> default)."""
    shape = shape_arg((size,), "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    d = resolve_dtype(dtype, "full") or dt.scalar_dtype(fill_value, _config.get_default_dtype())
    _check_requires_grad(requires_grad, d, "full")
    return _fill(shape, scalar_node(fill_value, d, resolve_device(device, "full")))


def _like(t: Tensor, dtype: Any, device: Any, op: str) -> tuple[tuple[Any, ...], dt.DType, Device]:
    if not isinstance(t, Tensor):
        raise op_error(TypeError, op, f"expected a Tensor, got {type(t).__name__}")
    d = resolve_dtype(dtype, op) or t.dtype
    dev = t.device if device is None else resolve_device(device, op)
    return t._node.shape, d, dev


def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "zeros_like")
    return _fill(shape, const_node(0, d, dev))


def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "ones_like")
    return _fill(shape, const_node(1, d, dev))


empty_like = zeros_like


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    shape, d, dev = _like(input, dtype, device, "full_like")
    return _fill(shape, scalar_node(fill_value, d, dev))


def _iota(n: Any, dtype: dt.DType, device: Device) -> Node:
    return make_node(P.iota, (), ((n,), 0, dtype, device), (n,), dtype, device)


def _affine(i: Node, start: Any, step: Any, dtype: dt.DType) -> Node:
    dev = i.device
    scaled = make_node(P.mul, (i, const_node(step, i.dtype, dev)), (), i.shape, i.dtype, dev)
    shifted = make_node(P.add, (scaled, const_node(start, i.dtype, dev)), (), i.shape, i.dtype, dev)
    return cast(shifted, dtype)


def _number(x: Any, op: str, what: str) -> Any:
    if isinstance(x, Tensor):
        x = x.item()
    if not isinstance(x, (int, float)):
        raise op_error(TypeError, op, f"{what} must be a number, got {type(x).__name__}")
    return x


def arange(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    out: Any = None,
) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`.

    >>> import lazytorch
    >>> lazytorch.arange(5).tolist(), lazytorch.arange(1, 2, 0.25).tolist()
    ([0, 1, 2, 3, 4], [1.0, 1.25, 1.5, 1.75])
    """
    if end is None:
        start, end = 0, start
    start = _number(start, "arange", "start")
    end = _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    if step == 0:
        raise op_error(RuntimeError, "arange", "step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise op_error(
            RuntimeError, "arange", "upper bound and larger bound inconsistent with step sign"
        )
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, end, step)):
        raise op_error(
            RuntimeError, "arange", "unsupported range: start, end and step must be finite"
        )
    is_float = any(isinstance(v, float) for v in (start, end, step))
    d = resolve_dtype(dtype, "arange") or (_config.get_default_dtype() if is_float else dt.int64)
    dev = resolve_device(device, "arange")
    n = max(0, math.ceil((end - start) / step))
    # Values are computed in float64 (int64 for integer ranges) and rounded once, as torch does.
    work = dt.float64 if (is_float or d.is_floating_point) else dt.int64
    return wrap(_affine(_iota(n, work, dev), start, step, d))


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    out: Any = None,
) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    start = _number(start, "linspace", "start")
    end = _number(end, "linspace", "end")
    if not isinstance(steps, int) or steps < 0:
        raise op_error(
            RuntimeError, "linspace", f"number of steps must be non-negative, got {steps}"
        )
    d = resolve_dtype(dtype, "linspace") or _config.get_default_dtype()
    dev = resolve_device(device, "linspace")
    if steps <= 1:
        return full((steps,), start, dtype=d, device=dev)
    step = (end - start) / (steps - 1)
    i = _iota(steps, dt.float64, dev)
    # Symmetric like torch: the first half counts up from start, the second down from end.
    up = _affine(i, start, step, dt.float64)
    down = _affine(i, end - step * (steps - 1), step, dt.float64)
    half = const_node(steps // 2, dt.float64, dev)
    first = make_node(P.lt, (i, half), (), i.shape, dt.bool_, dev)
    vals = make_node(P.where, (first, up, down), (), i.shape, dt.float64, dev)
    if not d.is_floating_point:
        vals = make_node(P.floor, (vals,), (), vals.shape, dt.float64, dev)
    return wrap(cast(vals, d))


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The n×m identity matrix."""
    m = n if m is None else m
    if n < 0 or m < 0:
        raise op_error(RuntimeError, "eye", f"n and m must be non-negative, got {n}, {m}")
    d = resolve_dtype(dtype, "eye") or _config.get_default_dtype()
    dev = resolve_device(device, "eye")
    rows = make_node(P.iota, (), ((n, m), 0, dt.int64, dev), (n, m), dt.int64, dev)
    cols = make_node(P.iota, (), ((n, m), 1, dt.int64, dev), (n, m), dt.int64, dev)
    diag = make_node(P.eq, (rows, cols), (), (n, m), dt.bool_, dev)
    return wrap(cast(diag, d))


def legacy_tensor_new(*args: Any, **kwargs: Any) -> Tensor:
    """``lazytorch.Tensor(data)`` / ``lazytorch.Tensor(2, 3)`` as torch.Tensor: float tensors."""
    if kwargs.keys() - {"device"}:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}")
    device = kwargs.get("device")
    if len(args) == 1 and not isinstance(args[0], int):
        return tensor(args[0], dtype=_config.get_default_dtype(), device=device)
    return zeros(*args, device=device)
