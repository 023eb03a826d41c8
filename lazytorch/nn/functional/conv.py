"""conv2d (im2col + one batched matmul) and 2-d max/avg pooling."""

from __future__ import annotations

import math
from typing import Any

import lazytorch as lt
from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops.elementwise import _tensor_arg
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor


# -- convolution and pooling ----------------------------------------------------------------------
def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    t = tuple(v)
    if len(t) == 1:
        return (t[0], t[0])
    if len(t) != 2:
        raise op_error(RuntimeError, name, f"expected an int or a pair, got {v!r}")
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
    """2-d convolution (cross-correlation) by im2col + one matmul per image and group."""
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
    if min(sh, sw) <= 0:
        raise op_error(RuntimeError, "conv2d", "non-positive stride is not supported")
    if min(dh, dw) <= 0:
        raise op_error(RuntimeError, "conv2d", "non-positive dilation is not supported")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if (sh, sw) != (1, 1):
                raise op_error(
                    RuntimeError,
                    "conv2d",
                    "padding='same' is not supported for strided convolutions",
                )
            th, tw = dh * (kh - 1), dw * (kw - 1)
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            raise op_error(RuntimeError, "conv2d", f"Invalid padding string: {padding!r}")
    else:
        ph, pw = _pair(padding, "conv2d")
        if min(ph, pw) < 0:
            raise op_error(RuntimeError, "conv2d", "negative padding is not supported")
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
    # One GEMM per image and group: (O/g, K) @ (K, Ho*Wo), the weights broadcast over the
    # batch (a zero batch stride, no copy). The im2col buffer is then read in the layout the
    # window kernels write, and the product lands in NCHW order, so neither side needs a
    # transposing copy; the batch's products run one per thread.
    k = cg * kh * kw
    cols = S.reshape(cols, (n, groups, k, ho * wo))
    wm = S.reshape(w, (1, groups, o // groups, k))
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
    x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, op: str
) -> tuple[Any, ...]:
    """Kernel, stride, padding and dilation pairs, validated as torch's pooling shape check."""
    if x.ndim < 3 and op == "avg_pool2d":
        # torch's avg_pool2d reads size(-3) before it checks the rank
        raise op_error(
            IndexError,
            op,
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got -3)",
        )
    if x.ndim not in (3, 4) or any(d == 0 for d in x.shape[-3:]):
        raise op_error(
            RuntimeError,
            op,
            f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{list(x.shape)}",
        )
    k = _pair(kernel_size, op)
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else _pair(stride, op)
    )
    p = _pair(padding, op)
    d = _pair(dilation, op)
    if min(k) <= 0:
        raise op_error(
            RuntimeError,
            op,
            f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}",
        )
    if min(s) <= 0:
        raise op_error(RuntimeError, op, "stride should not be zero")
    if min(d) <= 0:
        raise op_error(
            RuntimeError,
            op,
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}",
        )
    # torch bounds padding by half the kernel size, not of the dilated window.
    if p[0] < 0 or p[1] < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise op_error(
            RuntimeError,
            op,
            f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}",
        )
    return k, s, p, d


def _check_pool_output(x: Tensor, ho: int, wo: int, op: str) -> None:
    if ho < 1 or wo < 1:
        c, h, w = x.shape[-3:]
        raise op_error(
            RuntimeError,
            op,
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{ho}x{wo}). Output size is too small",
        )


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
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pool_args(
        x, kernel_size, stride, padding, dilation, "max_pool2d"
    )
    if x.dtype is dt.bool_:
        raise op_error(
            NotImplementedError, "max_pool2d", "\"max_pool2d\" not implemented for 'Bool'"
        )
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    h, w = x.shape[2], x.shape[3]
    ho, eh = _pool_geometry(h, kh, sh, ph, dh, ceil_mode)
    wo, ew = _pool_geometry(w, kw, sw, pw, dw, ceil_mode)
    _check_pool_output(x, ho, wo, "max_pool2d")
    fill = -math.inf if x.dtype.is_floating_point else int(_int_min(x.dtype))
    xp = pad(x, (pw, pw + ew, ph, ph + eh), value=fill) if (ph or pw or eh or ew) else x
    win = _windows(xp, (kh, kw), (sh, sw), (dh, dw), (ho, wo))  # (N, C, K, Ho, Wo)
    values = R.amax(win, 2)
    k = None
    if return_indices or x.requires_grad:
        k = _max_pool_winner(win, values, (h, w), (kh, kw), (sh, sw), (ph, pw, eh, ew), (dh, dw))
    if x.requires_grad:
        # torch's gradient goes to the one element its index names, not shared between
        # tied maxima: take the values as those elements (the same values as the max).
        values = S.squeeze(lt.gather(win, 2, S.unsqueeze(k, 2)), 2)
    if not return_indices:
        return S.squeeze(values, 0) if unbatched else values
    assert k is not None
    ki = E.div(k, kw, rounding_mode="floor")
    kj = k - ki * kw  # type: ignore[operator]
    rows = lt.arange(ho, device=x.device).reshape(1, 1, ho, 1) * sh - ph + ki * dh  # type: ignore[attr-defined,operator]
    cols = lt.arange(wo, device=x.device).reshape(1, 1, 1, wo) * sw - pw + kj * dw  # type: ignore[attr-defined,operator]
    idx = rows * w + cols  # type: ignore[operator]
    if unbatched:
        return S.squeeze(values, 0), S.squeeze(idx, 0)
    return values, idx


def _max_pool_winner(
    win: Tensor,
    values: Tensor,
    hw: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilation: tuple[int, int],
) -> Tensor:
    """Which kernel offset (0..K-1) torch reports for each window's max: the first in-bounds
    element equal to the max (padding never wins, even when a real value equals the fill,
    e.g. 0 in uint8), or, when the max is NaN, the last NaN (its kernel lets every NaN win)."""
    h, w = hw
    ph, pw, eh, ew = pads
    ho, wo = values.shape[-2:]
    inside = lt.ones((1, 1, h, w), dtype=dt.bool_, device=win.device)
    inside = pad(inside, (pw, pw + ew, ph, ph + eh), value=False)
    inside = _windows(inside, kernel, stride, dilation, (ho, wo))  # (1, 1, K, Ho, Wo)
    hit = (win == S.unsqueeze(values, 2)) & inside  # type: ignore[operator]
    first = R.argmax(hit.to(dt.uint8), 2)  # type: ignore[attr-defined]
    if not win.dtype.is_floating_point:
        return first
    nan = E.isnan(win)
    last_nan = (win.shape[2] - 1) - R.argmax(S.flip(nan, (2,)).to(dt.uint8), 2)  # type: ignore[attr-defined,operator]
    return E.where(E.isnan(values), last_nan, first)


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
    (kh, kw), (sh, sw), (ph, pw), _ = _pool_args(x, kernel_size, stride, padding, 1, "avg_pool2d")
    if not x.dtype.is_floating_point and x.dtype is not dt.int64:
        raise op_error(
            NotImplementedError,
            "avg_pool2d",
            f"\"avg_pool2d\" not implemented for '{x.dtype.legacy_name}'",
        )
    if divisor_override is not None and divisor_override == 0:
        raise op_error(RuntimeError, "avg_pool2d", "divisor must be not zero")
    unbatched = x.ndim == 3
    if unbatched:
        x = S.unsqueeze(x, 0)
    h, w = x.shape[2], x.shape[3]
    ho, eh = _pool_geometry(h, kh, sh, ph, 1, ceil_mode)
    wo, ew = _pool_geometry(w, kw, sw, pw, 1, ceil_mode)
    _check_pool_output(x, ho, wo, "avg_pool2d")
    xp = pad(x, (pw, pw + ew, ph, ph + eh)) if (ph or pw or eh or ew) else x
    total = R.sum(_windows(xp, (kh, kw), (sh, sw), (1, 1), (ho, wo)), 2)
    # int64 (torch's one integer avg_pool2d) divides in integer arithmetic, toward zero.
    rounding = None if x.dtype.is_floating_point else "trunc"
    if divisor_override is not None:
        out = E.div(total, divisor_override, rounding_mode=rounding)
    else:
        # Count what each window covers: real elements only, or the zero padding too
        # (but never the extra ceil_mode padding past it), exactly as torch divides.
        ones = lt.ones((1, 1, h, w), dtype=x.dtype, device=x.device)
        if count_include_pad:
            ones = pad(ones, (pw, pw, ph, ph), value=1)
            ones = pad(ones, (0, ew, 0, eh))
        else:
            ones = pad(ones, (pw, pw + ew, ph, ph + eh))
        counts = R.sum(_windows(ones, (kh, kw), (sh, sw), (1, 1), (ho, wo)), 2)
        out = E.div(total, counts, rounding_mode=rounding)
    return S.squeeze(out, 0) if unbatched else out  # type: ignore[no-any-return]
