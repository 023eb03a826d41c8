"""The activations that are also Tensor methods: softmax and log_softmax along a dim,
hardshrink and prelu.

They live among the ops (not in `lazytorch.nn.functional`, which re-exports them) because
``Tensor.softmax``, ``Tensor.hardshrink`` and the rest are methods: a method must not reach
up into `nn` for its implementation.
"""

from __future__ import annotations

from typing import Any

from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops._core import normalize_dim, tensor_arg
from lazytorch.tensor import Tensor

__all__ = ["hardshrink", "log_softmax", "prelu", "softmax"]


def opmath(x: Tensor) -> Tensor:
    """float16 math runs in float32 and is rounded once at the end, as in torch's kernels;
    in float16 itself exp() overflows already at 11.1."""
    return x.float() if x.dtype.is_low_float else x  # type: ignore[attr-defined,no-any-return]


def _softmax_input(input: Tensor, dim: Any, dtype: Any, op: str) -> tuple[Tensor, int]:
    x = tensor_arg(input, op)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    if dtype is not None:
        x = x.to(dtype)  # type: ignore[attr-defined]
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"\"{op}_lastdim_kernel_impl\" not implemented for '{x.dtype.legacy_name}'",
        )
    return x, normalize_dim(dim, x.ndim, op)


def _shift_by_max(x: Tensor, d: int) -> Tensor:
    """x - max along d, so exp() cannot overflow; an empty dim has no max (nor results)."""
    if x.shape[d] == 0:
        return x
    # The shift cancels out of the result, so it takes no gradient (backward then needs no
    # pass over the row to find and share the max, as torch's softmax backward needs none).
    return x - R.amax(x.detach(), d, keepdim=True)  # type: ignore[operator,no-any-return]


def softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim` (`dtype`: convert the input first).

    >>> import lazytorch
    >>> lazytorch.tensor([0.0, 0.0]).softmax(0)
    tensor([0.5000, 0.5000])
    """
    x, d = _softmax_input(input, dim, dtype, "softmax")
    if x.ndim == 0:
        y = E.exp(x - x)  # type: ignore[operator]
    else:
        e = E.exp(_shift_by_max(opmath(x), d))
        y = (e / R.sum(e, d, keepdim=True)).to(x.dtype)  # type: ignore[operator]
    return name_grad_fn(y, "SoftmaxBackward0", input)


def log_softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """x - max - log(sum(exp(x - max))) along `dim` (`dtype`: convert the input first).

    >>> import lazytorch
    >>> lazytorch.tensor([1.0, 1.0]).log_softmax(0).exp()
    tensor([0.5000, 0.5000])
    """
    x, d = _softmax_input(input, dim, dtype, "log_softmax")
    if x.ndim == 0:
        y = x - x  # type: ignore[operator]
    else:
        shifted = _shift_by_max(opmath(x), d)
        y = (shifted - E.log(R.sum(E.exp(shifted), d, keepdim=True))).to(x.dtype)  # type: ignore[operator]
    return name_grad_fn(y, "LogSoftmaxBackward0", input)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 inside [-lambd, lambd], x outside.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.hardshrink(lazytorch.tensor([-1.0, 0.25, 2.0]))
    tensor([-1.,  0.,  2.])
    """
    x = tensor_arg(input, "hardshrink")
    if not x.dtype.is_floating_point:  # torch's kernel is for floating dtypes only
        raise op_error(
            NotImplementedError,
            "hardshrink",
            f"\"hardshrink_cpu\" not implemented for '{x.dtype.legacy_name}'",
        )
    inside = (x >= -lambd) & (x <= lambd)  # type: ignore[operator]
    return E.where(inside, 0.0, x)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), one weight for all channels or one per channel (dim 1).

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.prelu(lazytorch.tensor([[-2.0, 3.0]]), lazytorch.tensor([0.25]))
    tensor([[-0.5000,  3.0000]])
    """
    x = tensor_arg(input, "prelu")
    w = tensor_arg(weight, "prelu")
    if w.ndim > 1:
        raise op_error(
            RuntimeError,
            "prelu",
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.ndim}",
        )
    if w.numel() != 1:
        if x.ndim == 0:
            raise op_error(RuntimeError, "prelu", "Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim > 1 else 1
        if channels != w.numel():
            raise op_error(
                RuntimeError,
                "prelu",
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {w.numel()} and channel size = {channels}.",
            )
    if w.ndim == 1 and x.ndim >= 2:
        w = w.reshape(1, -1, *([1] * (x.ndim - 2)))  # type: ignore[attr-defined]
    return E.where(x > 0, x, w * x)  # type: ignore[operator]
