"""torch.nn.functional: activations, softmax family, normalization, linear/embedding,
dropout, conv2d and pooling, losses, pad, attention.

All of these are decompositions into primitives, written with tensor ops so they read like
the math; the scheduler fuses what they record. Convolution is im2col: the kernel-offset
windows of the (padded) input are strided slices stacked into columns, then one matmul.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import lazytorch as lt
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import normalize_dim
from lazytorch.ops.elementwise import _tensor_arg
from lazytorch.ops.shape import pad
from lazytorch.tensor import Tensor

__all__ = [
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "conv2d",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "elu",
    "embedding",
    "gelu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "max_pool2d",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "relu6",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
]

sigmoid = E.sigmoid
tanh = E.tanh


# -- activations -------------------------------------------------------------------------------
def _maybe_inplace(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    if inplace:
        from lazytorch.ops.views import assign

        return assign(input, result._node)
    return result


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _maybe_inplace(input, E.relu(input), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    return _maybe_inplace(input, E.clamp(input, min_val, max_val), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, E.where(input > 0, input, input * negative_slope), inplace)  # type: ignore[operator]


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, E.where(input > 0, input, E.expm1(input) * alpha), inplace)  # type: ignore[operator]


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return _maybe_inplace(input, elu(input, alpha) * scale, inplace)  # type: ignore[operator]


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(
        input,
        E.where(input > 0, input, E.expm1(input / alpha) * alpha),
        inplace,  # type: ignore[operator]
    )


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: exact (erf) or the tanh approximation."""
    x = _tensor_arg(input, "gelu")
    if approximate == "none":
        return x * 0.5 * (1.0 + E.erf(x * (1.0 / math.sqrt(2.0))))  # type: ignore[operator,no-any-return]
    if approximate == "tanh":
        inner = (x + 0.044715 * x * x * x) * math.sqrt(2.0 / math.pi)  # type: ignore[operator]
        return 0.5 * x * (1.0 + E.tanh(inner))  # type: ignore[operator,no-any-return]
    raise op_error(
        RuntimeError,
        "gelu",
        f"approximate argument must be either none or tanh, got {approximate!r}",
    )


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _maybe_inplace(input, input * E.sigmoid(input), inplace)  # type: ignore[operator]


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, input * E.tanh(softplus(input)), inplace)  # type: ignore[operator]


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, linear above `threshold` (as torch)."""
    x = _tensor_arg(input, "softplus")
    bx = x * beta  # type: ignore[operator]
    return E.where(bx > threshold, x, E.log1p(E.exp(bx)) / beta)  # type: ignore[operator,no-any-return]


def logsigmoid(input: Tensor) -> Tensor:
    x = _tensor_arg(input, "logsigmoid")
    return -(E.log1p(E.exp(-E.abs(x))) + E.relu(-x))  # type: ignore[operator,no-any-return]


def softsign(input: Tensor) -> Tensor:
    return input / (1 + E.abs(input))  # type: ignore[operator,no-any-return]


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, E.clamp(input / 6.0 + 0.5, 0.0, 1.0), inplace)  # type: ignore[operator]


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, input * E.clamp(input / 6.0 + 0.5, 0.0, 1.0), inplace)  # type: ignore[operator]


# -- softmax family -----------------------------------------------------------------------------
def _softmax_input(input: Tensor, dim: Any, dtype: Any, op: str) -> tuple[Tensor, int]:
    x = _tensor_arg(input, op)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # torch's legacy implicit choice
    if dtype is not None:
        x = x.to(dtype)  # type: ignore[attr-defined]
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"\"{op}_lastdim_kernel_impl\" not implemented for '{x.dtype.name.capitalize()}'",
        )
    return x, normalize_dim(dim, x.ndim, op)


def softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim`."""
    x, d = _softmax_input(input, dim, dtype, "softmax")
    if x.ndim == 0:
        return E.exp(x - x)  # type: ignore[operator]
    shifted = x - R.amax(x, d, keepdim=True)  # type: ignore[operator]
    e = E.exp(shifted)
    return e / R.sum(e, d, keepdim=True)  # type: ignore[operator,no-any-return]


def softmin(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype=dtype)  # type: ignore[operator]


def log_softmax(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """x - max - log(sum(exp(x - max))) along `dim`."""
    x, d = _softmax_input(input, dim, dtype, "log_softmax")
    if x.ndim == 0:
        return x - x  # type: ignore[operator,no-any-return]
    shifted = x - R.amax(x, d, keepdim=True)  # type: ignore[operator]
    return shifted - E.log(R.sum(E.exp(shifted), d, keepdim=True))  # type: ignore[operator,no-any-return]


# -- normalization -------------------------------------------------------------------------------
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims, then scale and shift."""
    x = _tensor_arg(input, "layer_norm")
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if x.ndim < k or tuple(x.shape[x.ndim - k :]) != ns:
        raise op_error(
            RuntimeError,
            "layer_norm",
            f"Given normalized_shape={list(ns)}, expected input with shape [*, {', '.join(map(str, ns))}], "
            f"but got input of size{list(x.shape)}",
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != ns:
            raise op_error(
                RuntimeError,
                "layer_norm",
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape {list(p.shape)} and normalized_shape = {list(ns)}",
            )
    dims = tuple(range(x.ndim - k, x.ndim))
    work = x.float() if x.dtype is dt.float16 else x  # type: ignore[attr-defined]
    mu = R.mean(work, dims, keepdim=True)
    centered = work - mu  # type: ignore[operator]
    var = R.mean(centered * centered, dims, keepdim=True)  # type: ignore[operator]
    y = centered * E.rsqrt(var + eps)  # type: ignore[operator]
    if weight is not None:
        y = y * weight  # type: ignore[operator]
    if bias is not None:
        y = y + bias  # type: ignore[operator]
    return y.to(x.dtype)  # type: ignore[attr-defined,no-any-return]


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over every dim but the channel dim (1); updates running stats in training."""
    x = _tensor_arg(input, "batch_norm")
    if x.ndim < 2:
        raise op_error(
            ValueError, "batch_norm", f"expected at least 2D input (got {x.ndim}D input)"
        )
    dims = tuple(d for d in range(x.ndim) if d != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    if training:
        count = 1
        for d in dims:
            count *= x.shape[d]
        if count <= 1:
            raise op_error(
                ValueError,
                "batch_norm",
                f"Expected more than 1 value per channel when training, got input size {list(x.shape)}",
            )
        mu = R.mean(x, dims, keepdim=True)
        var = R.var(x, dims, keepdim=True, correction=0)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(S.reshape(mu, -1).detach() * momentum)  # type: ignore[attr-defined,operator]
        if running_var is not None:
            unbiased = S.reshape(var, -1) * (count / (count - 1))  # type: ignore[operator]
            running_var.mul_(1 - momentum).add_(unbiased.detach() * momentum)  # type: ignore[attr-defined]
    else:
        if running_mean is None or running_var is None:
            raise op_error(
                RuntimeError,
                "batch_norm",
                "running_mean and running_var must be defined in evaluation mode",
            )
        mu = S.reshape(running_mean, shape)
        var = S.reshape(running_var, shape)
    y = (x - mu) * E.rsqrt(var + eps)  # type: ignore[operator]
    if weight is not None:
        y = y * S.reshape(weight, shape)  # type: ignore[operator]
    if bias is not None:
        y = y + S.reshape(bias, shape)  # type: ignore[operator]
    return y  # type: ignore[no-any-return]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim`."""
    n = lt.linalg.vector_norm(input, p, dim, keepdim=True)
    return input / E.clamp(n, min=eps)  # type: ignore[operator,no-any-return]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    dot = R.sum(x1 * x2, dim)  # type: ignore[operator]
    n1 = lt.linalg.vector_norm(x1, 2, dim)
    n2 = lt.linalg.vector_norm(x2, 2, dim)
    return dot / E.clamp(n1 * n2, min=eps)  # type: ignore[operator,no-any-return]


# -- linear, embedding, dropout -------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    x, w = _tensor_arg(input, "linear"), _tensor_arg(weight, "linear", "weight")
    if w.ndim not in (1, 2):
        raise op_error(RuntimeError, "linear", f"weight must be 1-D or 2-D, got {w.ndim}-D")
    y = lt.matmul(x, S.t(w) if w.ndim == 2 else w)
    if bias is not None:
        y = y + bias  # type: ignore[operator]
    return y


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of `weight` at the (integer) positions in `input`."""
    idx = _tensor_arg(input, "embedding")
    if idx.dtype not in (dt.int64, dt.int32):
        raise op_error(
            RuntimeError,
            "embedding",
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {idx.dtype} instead",
        )
    if max_norm is not None:
        raise op_error(
            NotImplementedError,
            "embedding",
            "max_norm renormalizes weight in place and is not supported",
        )
    flat = S.reshape(idx, -1)
    rows = lt.index_select(weight, 0, flat)
    return S.reshape(rows, (*idx.shape, weight.shape[-1]))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only)."""
    if not 0.0 <= p <= 1.0:
        raise op_error(
            ValueError, "dropout", f"dropout probability has to be between 0 and 1, but got {p}"
        )
    x = _tensor_arg(input, "dropout")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return _maybe_inplace(x, x * 0.0, inplace)  # type: ignore[operator]
    keep = (
        lt.rand(x.shape, dtype=x.dtype if x.dtype.is_floating_point else None, device=x.device) >= p
    )  # type: ignore[operator]
    return _maybe_inplace(x, E.where(keep, x * (1.0 / (1.0 - p)), 0.0), inplace)  # type: ignore[operator]


# -- convolution and pooling ----------------------------------------------------------------------
def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    t = tuple(v)
    if len(t) == 1:
        return (t[0], t[0])
    if len(t) != 2:
        raise op_error(ValueError, name, f"expected an int or a pair, got {v!r}")
    return (int(t[0]), int(t[1]))


def _windows(
    x: Tensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> Tensor:
    """(N, C, kh*kw, Ho, Wo): for each kernel offset, the strided slice it reads."""
    kh, kw = kernel
    sh, sw = stride
    dh, dw = dilation
    ho, wo = out_hw
    pieces = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            win = x[:, :, r0 : r0 + sh * (ho - 1) + 1 : sh, c0 : c0 + sw * (wo - 1) + 1 : sw]
            pieces.append(win)
    return S.stack(pieces, 2)


def _conv_out(size: int, k: int, s: int, p_lo: int, p_hi: int, d: int) -> int:
    return (size + p_lo + p_hi - d * (k - 1) - 1) // s + 1


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution (cross-correlation) by im2col + one batched matmul."""
    x = _tensor_arg(input, "conv2d")
    w = _tensor_arg(weight, "conv2d", "weight")
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    if x.ndim != 4 or w.ndim != 4:
        raise op_error(
            RuntimeError,
            "conv2d",
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}",
        )
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * groups:
        raise op_error(
            RuntimeError,
            "conv2d",
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead",
        )
    if o % groups:
        raise op_error(RuntimeError, "conv2d", "out_channels must be divisible by groups")
    sh, sw = _pair(stride, "conv2d")
    dh, dw = _pair(dilation, "conv2d")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if (sh, sw) != (1, 1):
                raise op_error(
                    ValueError, "conv2d", "padding='same' is not supported for strided convolutions"
                )
            th, tw = dh * (kh - 1), dw * (kw - 1)
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            raise op_error(ValueError, "conv2d", f"Invalid padding string {padding!r}")
    else:
        ph, pw = _pair(padding, "conv2d")
        pads = (ph, ph, pw, pw)
    ho = _conv_out(h, kh, sh, pads[0], pads[1], dh)
    wo = _conv_out(wd, kw, sw, pads[2], pads[3], dw)
    if ho <= 0 or wo <= 0:
        raise op_error(
            RuntimeError,
            "conv2d",
            f"Calculated padded input size per channel: ({h + pads[0] + pads[1]} x {wd + pads[2] + pads[3]}). Kernel size: ({dh * (kh - 1) + 1} x {dw * (kw - 1) + 1}). Kernel size can't be greater than actual input size",
        )
    xp = pad(x, (pads[2], pads[3], pads[0], pads[1])) if any(pads) else x
    cols = _windows(xp, (kh, kw), (sh, sw), (dh, dw), (ho, wo))  # (N, C, kh*kw, Ho, Wo)
    cols = S.reshape(cols, (n, groups, cg * kh * kw, ho * wo))
    wm = S.reshape(w, (1, groups, o // groups, cg * kh * kw))
    out = lt.matmul(wm, cols)  # (N, g, O/g, Ho*Wo)
    out = S.reshape(out, (n, o, ho, wo))
    if bias is not None:
        out = out + S.reshape(bias, (1, o, 1, 1))  # type: ignore[operator]
    return S.squeeze(out, 0) if unbatched else out


def _pool_geometry(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> tuple[int, int]:
    """(output size, extra right padding) following torch's pooling shape rule."""
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    needed = (out - 1) * s + eff
    extra = max(0, needed - (size + 2 * p))
    return out, extra


def _pool_args(
    kernel_size: Any, stride: Any, padding: Any, dilation: Any, op: str
) -> tuple[Any, ...]:
    k = _pair(kernel_size, op)
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else _pair(stride, op)
    )
    p = _pair(padding, op)
    d = _pair(dilation, op)
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2:
            raise op_error(
                RuntimeError,
                op,
                f"pad should be at most half of effective kernel size, but got pad={pi}, kernel_size={ki} and dilation={di}",
            )
    return k, s, p, d


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over kernel windows (padding with -inf). With return_indices, also the flat
    index of each max within its input plane."""
    x = _tensor_arg(input, "max_pool2d")
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pool_args(
        kernel_size, stride, padding, dilation, "max_pool2d"
    )
    h, w = x.shape[2], x.shape[3]
    ho, eh = _pool_geometry(h, kh, sh, ph, dh, ceil_mode)
    wo, ew = _pool_geometry(w, kw, sw, pw, dw, ceil_mode)
    fill = -math.inf if x.dtype.is_floating_point else int(_int_min(x.dtype))
    xp = pad(x, (pw, pw + ew, ph, ph + eh), value=fill) if (ph or pw or eh or ew) else x
    win = _windows(xp, (kh, kw), (sh, sw), (dh, dw), (ho, wo))  # (N, C, K, Ho, Wo)
    values = R.amax(win, 2)
    if not return_indices:
        return S.squeeze(values, 0) if unbatched else values
    k = R.argmax(win, 2)  # which kernel offset won
    ki = E.div(k, kw, rounding_mode="floor")
    kj = k - ki * kw  # type: ignore[operator]
    rows = lt.arange(ho, device=x.device).reshape(1, 1, ho, 1) * sh - ph + ki * dh  # type: ignore[attr-defined,operator]
    cols = lt.arange(wo, device=x.device).reshape(1, 1, 1, wo) * sw - pw + kj * dw  # type: ignore[attr-defined,operator]
    idx = rows * w + cols  # type: ignore[operator]
    if unbatched:
        return S.squeeze(values, 0), S.squeeze(idx, 0)
    return values, idx


def _int_min(d: dt.DType) -> int:
    import numpy as np

    return int(np.iinfo(d.np).min) if d is not dt.bool_ else 0


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over kernel windows; the divisor follows torch's padding rules."""
    x = _tensor_arg(input, "avg_pool2d")
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    (kh, kw), (sh, sw), (ph, pw), _ = _pool_args(kernel_size, stride, padding, 1, "avg_pool2d")
    h, w = x.shape[2], x.shape[3]
    ho, eh = _pool_geometry(h, kh, sh, ph, 1, ceil_mode)
    wo, ew = _pool_geometry(w, kw, sw, pw, 1, ceil_mode)
    xp = pad(x, (pw, pw + ew, ph, ph + eh)) if (ph or pw or eh or ew) else x
    total = R.sum(_windows(xp, (kh, kw), (sh, sw), (1, 1), (ho, wo)), 2)
    if divisor_override is not None:
        out = total / divisor_override  # type: ignore[operator]
    else:
        # Count what each window covers: real elements only, or the zero padding too
        # (but never the extra ceil_mode padding past it), exactly as torch divides.
        ones = lt.ones(
            (1, 1, h, w), dtype=x.dtype if x.dtype.is_floating_point else None, device=x.device
        )
        if count_include_pad:
            ones = pad(ones, (pw, pw, ph, ph), value=1.0)
            ones = pad(ones, (0, ew, 0, eh))
        else:
            ones = pad(ones, (pw, pw + ew, ph, ph + eh))
        counts = R.sum(_windows(ones, (kh, kw), (sh, sw), (1, 1), (ho, wo)), 2)
        out = total / counts  # type: ignore[operator]
    return S.squeeze(out, 0) if unbatched else out  # type: ignore[no-any-return]


# -- losses ------------------------------------------------------------------------------------------
def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "none":
        return loss
    raise op_error(ValueError, op, f"{reduction} is not a valid value for reduction")


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    d = input - target  # type: ignore[operator]
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    return _reduce(E.abs(input - target), reduction, "l1_loss")  # type: ignore[operator]


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    d = E.abs(input - target)  # type: ignore[operator]
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    loss = E.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)  # type: ignore[operator]
    return _reduce(loss, reduction, "smooth_l1_loss")


def _class_dim_last(input: Tensor) -> tuple[Tensor, int]:
    """(N, C, d1, ...) -> (N*d1*..., C); a (C,) input is one sample."""
    if input.ndim == 1:
        return S.unsqueeze(input, 0), input.shape[0]
    c = input.shape[1]
    if input.ndim == 2:
        return input, c
    moved = S.movedim(input, 1, -1)
    return S.reshape(moved, (-1, c)), c


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities `input`."""
    return _nll(input, target, weight, ignore_index, reduction, 0.0, "nll_loss")


def _nll(
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    smoothing: float,
    op: str,
) -> Tensor:
    if target.dtype.is_floating_point:
        raise op_error(RuntimeError, op, "expected scalar type Long but found Float")
    batch_shape = tuple(target.shape)
    lp, c = _class_dim_last(logp)
    t = S.reshape(target, -1)
    if lp.shape[0] != t.shape[0]:
        raise op_error(
            ValueError,
            op,
            f"Expected input batch_size ({lp.shape[0]}) to match target batch_size ({t.shape[0]}).",
        )
    valid = t != ignore_index  # type: ignore[operator]
    safe_t = E.where(valid, t, 0)
    picked = S.squeeze(lt.gather(lp, 1, S.unsqueeze(safe_t, 1)), 1)
    w_t = lt.index_select(weight, 0, safe_t) if weight is not None else lt.ones_like(picked)
    w_t = E.where(valid, w_t, 0.0)
    loss = -picked * w_t  # type: ignore[operator]
    if smoothing:
        wrow = S.reshape(weight, (1, c)) if weight is not None else 1.0
        smooth = -R.sum(lp * wrow, 1) / c  # type: ignore[operator]
        smooth = E.where(valid, smooth, 0.0)
        loss = loss * (1 - smoothing) + smooth * smoothing  # type: ignore[operator]
    if reduction == "none":
        return S.reshape(loss, batch_shape) if logp.ndim != 1 else S.reshape(loss, ())
    if reduction == "sum":
        return R.sum(loss)
    if reduction == "mean":
        return R.sum(loss) / R.sum(w_t)  # type: ignore[operator,no-any-return]
    raise op_error(ValueError, op, f"{reduction} is not a valid value for reduction")


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dim (1) then NLL; targets are class indices or
    probabilities; optional class weights, ignore_index and label smoothing."""
    x = _tensor_arg(input, "cross_entropy")
    class_dim = 0 if x.ndim == 1 else 1
    logp = log_softmax(x, class_dim)
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(x.shape):
            raise op_error(
                RuntimeError,
                "cross_entropy",
                "probability targets must have the same shape as the input",
            )
        c = x.shape[class_dim]
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target  # type: ignore[operator]
        wshape = [1] * x.ndim
        wshape[class_dim] = c
        wt = S.reshape(weight, wshape) if weight is not None else 1.0
        loss = -R.sum(logp * t * wt, class_dim)  # type: ignore[operator]
        if reduction == "mean":
            n = loss.numel() if loss.ndim else 1
            return R.sum(loss) / n  # type: ignore[operator,no-any-return]
        return _reduce(loss, reduction, "cross_entropy")
    return _nll(logp, target, weight, ignore_index, reduction, label_smoothing, "cross_entropy")


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    log_x = E.clamp(E.log(input), min=-100.0)
    log_1mx = E.clamp(E.log(1 - input), min=-100.0)  # type: ignore[operator]
    loss = -(target * log_x + (1 - target) * log_1mx)  # type: ignore[operator]
    if weight is not None:
        loss = loss * weight  # type: ignore[operator]
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + BCE in the numerically stable form torch uses."""
    x = _tensor_arg(input, "binary_cross_entropy_with_logits")
    if tuple(target.shape) != tuple(x.shape):
        raise op_error(
            ValueError,
            "binary_cross_entropy_with_logits",
            f"Target size ({list(target.shape)}) must be the same as input size ({list(x.shape)})",
        )
    softplus_neg = E.log1p(E.exp(-E.abs(x))) + E.relu(-x)  # log(1 + exp(-x)), stable  # type: ignore[operator]
    if pos_weight is not None:
        coef = 1 + (pos_weight - 1) * target  # type: ignore[operator]
        loss = (1 - target) * x + coef * softplus_neg  # type: ignore[operator]
    else:
        loss = (1 - target) * x + softplus_neg  # type: ignore[operator]
    if weight is not None:
        loss = loss * weight  # type: ignore[operator]
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    t = _tensor_arg(tensor, "one_hot")
    if t.dtype is not dt.int64:
        raise op_error(
            RuntimeError,
            "one_hot",
            "one_hot is only applicable to index tensor of type LongTensor.",
        )
    if num_classes < 0:
        num_classes = int(R.amax(t).item()) + 1 if t.numel() else 0
    classes = lt.arange(num_classes, device=t.device)
    return (S.unsqueeze(t, -1) == classes).long()  # type: ignore[attr-defined,no-any-return]


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q kᵀ · scale + mask) v, with an optional causal mask and dropout."""
    q, k, v = query, key, value
    L, Skv = q.shape[-2], k.shape[-2]
    s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = lt.matmul(q, S.transpose(k, -2, -1)) * s  # type: ignore[operator]
    if is_causal:
        causal = S.tril(lt.ones(L, Skv, dtype=dt.bool_, device=q.device))
        scores = lt.masked_fill(scores, ~causal, -math.inf)  # type: ignore[operator]
    if attn_mask is not None:
        if attn_mask.dtype is dt.bool_:
            scores = lt.masked_fill(scores, ~attn_mask, -math.inf)  # type: ignore[operator]
        else:
            scores = scores + attn_mask  # type: ignore[operator]
    p = softmax(scores, -1)
    if dropout_p > 0.0:
        p = dropout(p, dropout_p)
    return lt.matmul(p, v)
