"""conv1d/2d/3d (im2col + one batched matmul) and 1-d/2-d max/avg pooling."""

from __future__ import annotations

import itertools
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


def _ntuple(v: Any, n: int, name: str, what: str = "an int") -> tuple[int, ...]:
    """`v` as an n-tuple of ints: an int repeats, a 1-sequence repeats, else length n."""
    if isinstance(v, int):
        return (v,) * n
    t = tuple(v)
    if len(t) == 1:
        return (int(t[0]),) * n
    if len(t) != n:
        raise op_error(RuntimeError, name, f"expected {what} or {n} values, got {v!r}")
    return tuple(int(e) for e in t)


def _windows(
    x: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    out: tuple[int, ...],
) -> Tensor:
    """(N, C, K, *out) for K = prod(kernel): for each kernel offset, the strided slice of the
    spatial dims (the last len(kernel)) it reads."""
    pieces = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(offset, dilation, stride, out)
        )
        pieces.append(x[(slice(None), slice(None), *index)])
    return S.stack(pieces, 2)


def _conv_out(size: int, k: int, s: int, p_lo: int, p_hi: int, d: int) -> int:
    return (size + p_lo + p_hi - d * (k - 1) - 1) // s + 1


def _conv_padding(
    padding: Any,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    op: str,
) -> tuple[int, ...]:
    """(lo, hi) per spatial dim, flattened: ints, 'valid', or 'same' (the odd unit of an
    even total goes to the high side, as torch pads)."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * (2 * n)
        if padding == "same":
            if any(s != 1 for s in stride):
                raise op_error(
                    RuntimeError, op, "padding='same' is not supported for strided convolutions"
                )
            pads: list[int] = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        raise op_error(RuntimeError, op, f"Invalid padding string: {padding!r}")
    p = _ntuple(padding, n, op)
    if min(p) < 0:
        raise op_error(RuntimeError, op, "negative padding is not supported")
    return tuple(v for e in p for v in (e, e))


def _conv(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    n: int,
    op: str,
) -> Tensor:
    """n-d convolution (cross-correlation) by im2col + one matmul per image and group."""
    x = _tensor_arg(input, op)
    w = _tensor_arg(weight, op, "weight")
    unbatched = x.ndim == n + 1
    if unbatched:
        x = S.unsqueeze(x, 0)
    if x.ndim != n + 2 or w.ndim != n + 2:
        raise op_error(
            RuntimeError,
            op,
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got input of size: {list(input.shape)}",
        )
    if groups <= 0:
        raise op_error(RuntimeError, op, "non-positive groups is not supported")
    b, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    o, cg = w.shape[:2]
    kernel = tuple(w.shape[2:])
    if c != cg * groups:
        raise op_error(
            RuntimeError,
            op,
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead",
        )
    if o % groups:
        raise op_error(RuntimeError, op, "out_channels must be divisible by groups")
    stride = _ntuple(stride, n, op)
    dilation = _ntuple(dilation, n, op)
    if min(stride) <= 0:
        raise op_error(RuntimeError, op, "non-positive stride is not supported")
    if min(dilation) <= 0:
        raise op_error(RuntimeError, op, "non-positive dilation is not supported")
    pads = _conv_padding(padding, kernel, stride, dilation, op)
    out = tuple(
        _conv_out(size, k, s, pads[2 * i], pads[2 * i + 1], d)
        for i, (size, k, s, d) in enumerate(zip(spatial, kernel, stride, dilation))
    )
    if min(out) <= 0:
        padded = " x ".join(
            str(size + pads[2 * i] + pads[2 * i + 1]) for i, size in enumerate(spatial)
        )
        window = " x ".join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))
        raise op_error(
            RuntimeError,
            op,
            f"Calculated padded input size per channel: ({padded}). Kernel size: ({window}). Kernel size can't be greater than actual input size",
        )
    # F.pad lists the last dim first.
    flat_pads = [v for i in reversed(range(n)) for v in (pads[2 * i], pads[2 * i + 1])]
    xp = pad(x, flat_pads) if any(pads) else x
    cols = _windows(xp, kernel, stride, dilation, out)  # (N, C, K, *out)
    # One GEMM per image and group: (O/g, C/g*K) @ (C/g*K, L), the weights broadcast over the
    # batch (a zero batch stride, no copy). The im2col buffer is then read in the layout the
    # window kernels write, and the product lands in NC* order, so neither side needs a
    # transposing copy; the batch's products run one per thread.
    k = cg * math.prod(kernel)
    cols = S.reshape(cols, (b, groups, k, math.prod(out)))
    wm = S.reshape(w, (1, groups, o // groups, k))
    y = lt.matmul(wm, cols)  # (N, g, O/g, L)
    y = S.reshape(y, (b, o, *out))
    if bias is not None:
        y = y + S.reshape(bias, (1, o) + (1,) * n)  # type: ignore[operator]
    return S.squeeze(y, 0) if unbatched else y


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-d convolution (cross-correlation) of (N, C, L) or (C, L) input with an
    (O, C // groups, k) weight; `padding` is an int, ``'valid'`` or ``'same'``.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> lazytorch.nn.functional.conv1d(x, lazytorch.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution (cross-correlation) by im2col + one matmul per image and group.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 1, 3, 3)
    >>> lazytorch.nn.functional.conv2d(x, lazytorch.ones(2, 1, 2, 2), padding=(0, 1)).shape
    lazytorch.Size([1, 2, 2, 4])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-d convolution (cross-correlation) of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> x = lazytorch.ones(1, 2, 3, 3, 3)
    >>> lazytorch.nn.functional.conv3d(x, lazytorch.ones(4, 2, 2, 2, 2)).shape
    lazytorch.Size([1, 4, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


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


def _as_pool2d(x: Tensor, kernel_size: Any, stride: Any, padding: Any, op: str) -> tuple[Any, ...]:
    """A 1-d pooling's input and arguments as the 2-d pooling of a height-1 image."""
    if x.ndim not in (2, 3):
        raise op_error(RuntimeError, op, f"Expected 2D or 3D input tensor, but got {list(x.shape)}")
    k = _ntuple(kernel_size, 1, op)[0]
    empty = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    s = k if empty else _ntuple(stride, 1, op)[0]
    p = _ntuple(padding, 1, op)[0]
    return S.unsqueeze(x, -2), (1, k), (1, s), (0, p)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over length-k windows of (N, C, L) or (C, L) input (padding with -inf); with
    return_indices, also each max's position along L.

    >>> import lazytorch
    >>> lazytorch.nn.functional.max_pool1d(lazytorch.tensor([[1.0, 3.0, 2.0, 5.0, 4.0]]), 2)
    tensor([[3., 5.]])
    """
    x = _tensor_arg(input, "max_pool1d")
    x2, k, s, p = _as_pool2d(x, kernel_size, stride, padding, "max_pool1d")
    d = (1, _ntuple(dilation, 1, "max_pool1d")[0])
    out = max_pool2d(x2, k, s, p, d, ceil_mode, return_indices)
    if return_indices:
        return S.squeeze(out[0], -2), S.squeeze(out[1], -2)
    return S.squeeze(out, -2)


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over length-k windows of (N, C, L) or (C, L) input; the divisor follows torch's
    padding rules.

    >>> import lazytorch
    >>> lazytorch.nn.functional.avg_pool1d(lazytorch.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
    tensor([[2., 4.]])
    """
    x = _tensor_arg(input, "avg_pool1d")
    x2, k, s, p = _as_pool2d(x, kernel_size, stride, padding, "avg_pool1d")
    return S.squeeze(avg_pool2d(x2, k, s, p, ceil_mode, count_include_pad), -2)
