"""Activations and the softmax family."""

from __future__ import annotations

import math
from typing import Any

from lazytorch._errors import op_error
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional._common import _float_input, _maybe_inplace, _opmath
from lazytorch.ops import elementwise as E
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.activation import hardshrink as hardshrink
from lazytorch.ops.activation import log_softmax as log_softmax
from lazytorch.ops.activation import prelu as prelu
from lazytorch.ops.activation import softmax as softmax
from lazytorch.ops.creation import empty_like, zeros_like
from lazytorch.ops.random import rand
from lazytorch.tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _maybe_inplace(input, E.relu(input), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    x = tensor_arg(input, "hardtanh")
    if x.dtype is dt.bool_:
        raise op_error(RuntimeError, "hardtanh", "Bool inputs not supported for hardtanh")
    if min_val > max_val:
        raise op_error(ValueError, "hardtanh", "min_val cannot be greater than max_val")
    if not x.dtype.is_floating_point:
        if x.dtype is dt.uint8 and (min_val < 0 or max_val < 0):
            raise op_error(
                RuntimeError,
                "hardtanh",
                "cannot do hardtanh on an unsigned type with negative limits",
            )
        # torch converts the limits to the integer dtype (truncating), so the result keeps
        # the input's dtype instead of promoting to float.
        min_val, max_val = int(min_val), int(max_val)
    if not x.requires_grad:
        return _maybe_inplace(x, E.clamp(x, min_val, max_val), inplace)
    # clamp's value; torch's gradient is 0 at the bounds themselves (and 1 at NaN). float16
    # in float32, as torch's kernel (and g++ 12 with binutils 2.40 cannot assemble the
    # float16 AVX-512 code this nested select compiles to on CPUs with avx512_fp16).
    w = _opmath(x)
    y = E.where(w <= min_val, min_val, E.where(w >= max_val, max_val, w))  # type: ignore[operator]
    return _maybe_inplace(x, y.to(x.dtype), inplace)  # type: ignore[attr-defined]


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    x = _float_input(input, "leaky_relu", "leaky_relu_cpu")
    y = E.where(x > 0, x, x * negative_slope)  # type: ignore[operator]
    # (torch names the in-place overload's node LeakyReluBackward1)
    return _maybe_inplace(x, name_grad_fn(y, f"LeakyReluBackward{int(inplace)}", x), inplace)


def _elu(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    """torch's shared elu kernel: scale * (alpha * expm1(x * input_scale) if x <= 0 else x);
    NaN takes the linear side, as in torch's backward."""
    w = _opmath(x)
    neg = w <= 0  # type: ignore[operator]
    # expm1 sees 0 off its side, so that at NaN and inf the side not taken has a finite
    # gradient (0 * inf would be NaN)
    wn = E.where(neg, w, 0.0)
    y = E.where(neg, E.expm1(wn * input_scale) * alpha, w)  # type: ignore[operator]
    if scale != 1.0:
        y = y * scale  # type: ignore[operator]
    return y.to(x.dtype)  # type: ignore[attr-defined,no-any-return]


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    x = _float_input(input, "elu", "elu_cpu")
    return _maybe_inplace(x, _elu(x, alpha, 1.0, 1.0), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    x = _float_input(input, "selu", "elu_cpu")
    return _maybe_inplace(x, _elu(x, alpha, scale, 1.0), inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    x = _float_input(input, "celu", "elu_cpu")
    if alpha == 0:
        raise op_error(RuntimeError, "celu", "ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_inplace(x, _elu(x, alpha, 1.0, 1.0 / alpha), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: exact (erf) or the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise op_error(
            RuntimeError,
            "gelu",
            f"approximate argument must be either none or tanh, got {approximate!r}",
        )
    x = _float_input(input, "gelu", "GeluKernelImpl")
    w = _opmath(x)
    if approximate == "none":
        y = w * 0.5 * (1.0 + E.erf(w * (1.0 / math.sqrt(2.0))))  # type: ignore[operator]
    else:
        inner = (w + 0.044715 * w * w * w) * math.sqrt(2.0 / math.pi)  # type: ignore[operator]
        y = 0.5 * w * (1.0 + E.tanh(inner))  # type: ignore[operator]
    return name_grad_fn(y.to(x.dtype), "GeluBackward0", x)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    x = _float_input(input, "silu", "silu_cpu")
    w = _opmath(x)
    y = name_grad_fn((w * E.sigmoid(w)).to(x.dtype), "SiluBackward0", x)  # type: ignore[operator]
    return _maybe_inplace(x, y, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    x = _float_input(input, "mish", "mish_cpu")
    w = _opmath(x)
    return _maybe_inplace(x, (w * E.tanh(softplus(w))).to(x.dtype), inplace)  # type: ignore[operator]


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, linear above `threshold` (as torch)."""
    x = _float_input(input, "softplus", "softplus_cpu")
    w = _opmath(x)
    bx = w * beta  # type: ignore[operator]
    linear = bx > threshold  # type: ignore[operator]
    # exp sees 0 on the linear side: its gradient at inf would make 0 * inf = NaN there
    soft = E.log1p(E.exp(E.where(linear, 0.0, bx))) / beta  # type: ignore[operator]
    return E.where(linear, w, soft).to(x.dtype)  # type: ignore[attr-defined,no-any-return]


def logsigmoid(input: Tensor) -> Tensor:
    x = _float_input(input, "logsigmoid", "log_sigmoid_cpu")
    return log_sigmoid_opmath(_opmath(x)).to(x.dtype)  # type: ignore[attr-defined,no-any-return]


def log_sigmoid_opmath(w: Tensor) -> Tensor:
    """min(x, 0) - log1p(exp(-|x|)), with both kinks taken on the same side (x >= 0), so that
    the gradient at 0 is the smooth function's 0.5 (torch's), not abs's and min's 0 each."""
    neg = w < 0  # type: ignore[operator]
    return E.where(neg, w, 0.0) - E.log1p(E.exp(E.where(neg, w, -w)))  # type: ignore[operator,no-any-return]


def softsign(input: Tensor) -> Tensor:
    return input / (1 + E.abs(input))  # type: ignore[operator,no-any-return]


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    x = _float_input(input, "hardsigmoid", "hardsigmoid_cpu")
    y = E.clamp(x.detach() / 6.0 + 0.5, 0.0, 1.0)  # type: ignore[attr-defined]
    if x.requires_grad:
        # torch's gradient: 1/6 strictly inside (-3, 3), 0 at the bounds and at NaN
        inside = (x > -3.0) & (x < 3.0)  # type: ignore[operator]
        y = E.where(inside, x / 6.0 + 0.5, y)  # type: ignore[operator]
    return _maybe_inplace(x, y, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    x = _float_input(input, "hardswish", "hardswish_cpu")
    if not x.requires_grad:
        return _maybe_inplace(x, x * E.clamp(x / 6.0 + 0.5, 0.0, 1.0), inplace)  # type: ignore[operator]
    # The same values; torch's gradient: 0 for x <= -3, x/3 + 1/2 below 3, else 1 (NaN too).
    low = x.detach() * 0.0  # type: ignore[attr-defined]  # -0.0, or NaN at -inf
    inside = (x > -3.0) & (x < 3.0)  # type: ignore[operator]
    xm = E.where(inside, x, 0.0)  # 0 off the middle: a finite gradient at NaN and inf
    mid = xm * (xm / 6.0 + 0.5)  # type: ignore[operator]
    y = E.where(x <= -3.0, low, E.where(inside, mid, x))  # type: ignore[operator]
    return _maybe_inplace(x, y, inplace)


# -- softmax family -----------------------------------------------------------------------------
# softmax and log_softmax are `lazytorch.ops.activation`'s (Tensor methods use them too).
def softmin(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype=dtype)  # type: ignore[operator]


# -- thresholds and shrinkage ------------------------------------------------------------------
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """`value` where x <= `threshold`, else x (NaN stays NaN, as in torch).

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.threshold(lazytorch.tensor([-1.0, 0.5, 2.0]), 0.5, 9.0)
    tensor([9., 9., 2.])
    """
    return _threshold(input, threshold, value, inplace)


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool) -> Tensor:
    x = tensor_arg(input, "threshold")
    return _maybe_inplace(x, E.where(x <= threshold, value, x), inplace)  # type: ignore[operator]


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.softshrink(lazytorch.tensor([-1.0, 0.25, 2.0]))
    tensor([-0.5000,  0.0000,  1.5000])
    """
    if lambd < 0:
        raise op_error(
            RuntimeError,
            "softshrink",
            f"lambda must be greater or equal to 0, but found to be {lambd}.",
        )
    x = _float_input(input, "softshrink", "softshrink_cpu")
    inside = (x >= -lambd) & (x <= lambd)  # type: ignore[operator]
    # x * 0 inside (NaN stays NaN with gradient 0 there); a NaN takes the outer branch,
    # whose gradient is torch's 1 at NaN
    outer = E.where(x < -lambd, x + lambd, x - lambd)  # type: ignore[operator]
    return E.where(inside, x * 0.0, outer)  # type: ignore[operator]


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - E.tanh(input)  # type: ignore[operator,no-any-return]


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: a * sigmoid(b), a and b the two halves along `dim`.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> F.glu(lazytorch.tensor([[1.0, 2.0, 0.0, 0.0]]))
    tensor([[0.5000, 1.0000]])
    """
    x = tensor_arg(input, "glu")
    if x.ndim == 0:
        raise op_error(
            RuntimeError, "glu", "glu does not support scalars because halving size must be even"
        )
    d = dim % x.ndim
    n = x.shape[d]
    if n % 2:
        raise op_error(
            RuntimeError,
            "glu",
            f"Halving dimension must be even, but dimension {d} is size {n}",
        )
    a, b = x.chunk(2, d)  # type: ignore[attr-defined]
    return a * E.sigmoid(b)  # type: ignore[no-any-return]


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: in training each negative element is scaled by a slope drawn
    uniformly from [lower, upper] (lazytorch's generator); in evaluation by their mean."""
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(
    input: Tensor, lower: float, upper: float, training: bool, inplace: bool, generator: Any
) -> Tensor:
    x = _float_input(input, "rrelu", "rrelu_with_noise_cpu")
    if not training:
        return leaky_relu(x, (lower + upper) / 2, inplace)
    slope = rand(x.shape, dtype=x.dtype, generator=generator) * (upper - lower) + lower  # type: ignore[operator]
    return _maybe_inplace(x, E.where(x >= 0, x, x * slope), inplace)  # type: ignore[operator]


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Samples of the Gumbel-softmax distribution; with `hard`, one-hot in the forward pass
    and the soft sample's gradient (the straight-through estimator), as torch does."""
    x = tensor_arg(logits, "gumbel_softmax")
    gumbels = -empty_like(x).exponential_().log()  # type: ignore[attr-defined]
    y_soft = softmax((x + gumbels) / tau, dim)  # type: ignore[operator]
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]  # type: ignore[attr-defined]
    y_hard = zeros_like(x).scatter_(dim, index, 1.0)  # type: ignore[attr-defined]
    return y_hard - y_soft.detach() + y_soft  # type: ignore[no-any-return]


# -- in-place forms (torch.nn.functional.relu_ & co) ---------------------------------------------
def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, True)


def rrelu_(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Tensor:
    return _rrelu(input, lower, upper, training, True, generator)
