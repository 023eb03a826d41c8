"""Max and average pooling over 1, 2 or 3 spatial dims, as torch computes them.

A pooling is the convolution's window gather (`_windows`: one strided slice per kernel
offset, stacked) followed by a reduction over the offsets. Padding is explicit: -inf (or
the integer minimum) for max, zeros for average; ceil_mode adds extra high-side padding
that torch never counts in a divisor. The max's index is torch's: the first in-bounds
element equal to the max, or the last NaN; the gradient goes to that one element.
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.nn.functional.conv import _ntuple, _windows
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import indexing as IX
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.pad import pad
from lazytorch.tensor import Tensor

_AXES = ("T", "H", "W")


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


def _check_rank(x: Tensor, n: int, op: str) -> None:
    if x.ndim < 3 and op == "avg_pool2d":
        # torch's avg_pool2d reads size(-3) before it checks the rank
        raise op_error(
            IndexError,
            op,
            f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got -3)",
        )
    if x.ndim not in (n + 1, n + 2) or any(d == 0 for d in x.shape[-(n + 1) :]):
        raise op_error(
            RuntimeError,
            op,
            f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch size for input, but got:{list(x.shape)}",
        )


def _pool_args(
    x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, n: int, op: str
) -> tuple[tuple[int, ...], ...]:
    """Kernel, stride, padding and dilation n-tuples, validated as torch's pooling shape
    check."""
    _check_rank(x, n, op)
    names = _AXES[-n:]
    k = _ntuple(kernel_size, n, op)
    empty = stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
    s = k if empty else _ntuple(stride, n, op)
    p = _ntuple(padding, n, op)
    d = _ntuple(dilation, n, op)
    if min(k) <= 0:
        got = " ".join(f"k{a}: {v}" for a, v in zip(names, k))
        raise op_error(RuntimeError, op, f"kernel size should be greater than zero, but got {got}")
    if min(s) <= 0:
        raise op_error(RuntimeError, op, "stride should not be zero")
    if min(d) <= 0:
        got = " ".join(f"dilation{a}: {v}" for a, v in zip(names, d))
        raise op_error(RuntimeError, op, f"dilation should be greater than zero, but got {got}")
    # torch bounds padding by half the kernel size, not of the dilated window.
    if min(p) < 0 or any(pp > kk // 2 for pp, kk in zip(p, k)):
        raise op_error(
            RuntimeError,
            op,
            f"pad should be smaller than or equal to half of kernel size, but got padding={p}, kernel_size={k}, dilation={d}",
        )
    return k, s, p, d


def _check_pool_output(x: Tensor, out: tuple[int, ...], op: str) -> None:
    if min(out) < 1:
        n = len(out)
        c = x.shape[1]
        given = "x".join(str(v) for v in (c, *x.shape[-n:]))
        calc = "x".join(str(v) for v in (c, *out))
        raise op_error(
            RuntimeError,
            op,
            f"Given input size: ({given}). Calculated output size: ({calc}). Output size is too small",
        )


def _geometry(
    x: Tensor,
    k: tuple[int, ...],
    s: tuple[int, ...],
    p: tuple[int, ...],
    d: tuple[int, ...],
    ceil_mode: bool,
    op: str,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Output sizes and the extra (ceil_mode) high-side padding per spatial dim."""
    n = len(k)
    geo = [_pool_geometry(*args, ceil_mode) for args in zip(x.shape[-n:], k, s, p, d)]
    out = tuple(g[0] for g in geo)
    _check_pool_output(x, out, op)
    return out, tuple(g[1] for g in geo)


def _widths(lo: tuple[int, ...], hi: tuple[int, ...]) -> list[int]:
    """F.pad's widths (last dim first) from per-dim low and high amounts."""
    return [v for i in reversed(range(len(lo))) for v in (lo[i], hi[i])]


def _max_pool(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
    n: int,
    op: str,
) -> Any:
    x = tensor_arg(input, op)
    k, s, p, d = _pool_args(x, kernel_size, stride, padding, dilation, n, op)
    if x.dtype is dt.bool_:
        raise op_error(NotImplementedError, op, f"\"{op}\" not implemented for 'Bool'")
    if op == "max_pool1d" and not return_indices and not x.dtype.is_floating_point:
        # torch's max_pool1d without indices has a kernel for floating dtypes only
        raise op_error(
            NotImplementedError,
            op,
            f"\"max_pool1d_impl\" not implemented for '{x.dtype.legacy_name}'",
        )
    unbatched = x.ndim == n + 1
    if unbatched:
        x = S.unsqueeze(x, 0)
    spatial = tuple(x.shape[2:])
    out, extra = _geometry(x, k, s, p, d, ceil_mode, op)
    widths = _widths(p, tuple(pp + e for pp, e in zip(p, extra)))
    fill = -math.inf if x.dtype.is_floating_point else int(_int_min(x.dtype))
    xp = pad(x, widths, value=fill) if any(widths) else x
    if _tiles(widths, out, s, k, d):
        win = _tiled_windows(xp, k, out)  # (N, C, K, *out), by reshapes: no per-offset slice
    else:
        win = _windows(xp, k, s, d, out)  # (N, C, K, *out)
    values = R.amax(win, 2)
    winner = None
    if return_indices or x.requires_grad:
        winner = _max_pool_winner(win, values, spatial, k, s, widths, d)
    if x.requires_grad:
        # torch's gradient goes to the one element its index names, not shared between
        # tied maxima: take the values as those elements (the same values as the max).
        values = S.squeeze(IX.gather(win, 2, S.unsqueeze(winner, 2)), 2)
    if not return_indices:
        return S.squeeze(values, 0) if unbatched else values
    assert winner is not None
    # The winner's kernel offset, unravelled per dim, gives its input position per dim; the
    # index is that position flattened over the input's spatial dims.
    idx: Any = 0
    for i in range(n):
        inner = math.prod(k[i + 1 :])
        offset = E.remainder(E.div(winner, inner, rounding_mode="floor"), k[i])
        shape = [1] * (n + 2)
        shape[2 + i] = out[i]
        start = C.arange(out[i], device=x.device).reshape(shape) * s[i] - p[i]  # type: ignore[attr-defined]
        idx = idx + (start + offset * d[i]) * math.prod(spatial[i + 1 :])
    if unbatched:
        return S.squeeze(values, 0), S.squeeze(idx, 0)
    return values, idx


def _max_pool_winner(
    win: Tensor,
    values: Tensor,
    spatial: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    widths: list[int],
    dilation: tuple[int, ...],
) -> Tensor:
    """Which kernel offset (0..K-1) torch reports for each window's max: the first in-bounds
    element equal to the max (padding never wins, even when a real value equals the fill,
    e.g. 0 in uint8), or, when the max is NaN, the last NaN (its kernel lets every NaN win)."""
    out = tuple(values.shape[2:])
    hit = win == S.unsqueeze(values, 2)  # type: ignore[operator]
    if any(widths):  # padding never wins
        inside = C.ones((1, 1, *spatial), dtype=dt.bool_, device=win.device)
        inside = pad(inside, widths, value=False)
        hit = hit & _windows(inside, kernel, stride, dilation, out)  # (1, 1, K, *out)
    first = R.argmax(hit.to(dt.uint8), 2)  # type: ignore[attr-defined]
    if not win.dtype.is_floating_point:
        return first
    nan = E.isnan(win)
    last_nan = (win.shape[2] - 1) - R.argmax(S.flip(nan, (2,)).to(dt.uint8), 2)  # type: ignore[attr-defined,operator]
    return E.where(E.isnan(values), last_nan, first)


def _int_min(d: dt.DType) -> int:
    import numpy as np

    return int(np.iinfo(d.np).min) if d is not dt.bool_ else 0


def _tiles(
    widths: list[int], out: tuple[int, ...], s: tuple[int, ...], k: tuple[int, ...], d: Any
) -> bool:
    """Whether the windows tile the input: no padding, no dilation, and along each dim
    stride = kernel or a single window."""
    return not any(widths) and all(
        dd == 1 and (o == 1 or st == kk) for o, st, kk, dd in zip(out, s, k, d)
    )


def _tiled_windows(x: Tensor, k: tuple[int, ...], out: tuple[int, ...]) -> Tensor:
    """`_windows`' (N, C, K, *out) for windows that tile (N, C, *spatial) `x` (`_tiles`):
    each dim cut to out*k and split into (out, k), the k axes moved before the out axes and
    merged, kernel offsets in `_windows`' row-major order. A few view nodes, where the
    offset gather records prod(k) slices: a global max pooling over a length-L text
    (``max_pool1d(x, x.size(2))``) recorded a graph that grew with L, new at every length."""
    for axis, (kk, o) in enumerate(zip(k, out), start=2):
        if x.shape[axis] != o * kk:
            x = S.slice_view(x, axis, 0, o * kk, 1)
    n = len(k)
    x = S.reshape(x, (*x.shape[:2], *[v for o, kk in zip(out, k) for v in (o, kk)]))
    x = S.permute(x, (0, 1, *[3 + 2 * i for i in range(n)], *[2 + 2 * i for i in range(n)]))
    return S.reshape(x, (*x.shape[:2], math.prod(k), *out))


def _tiled_sum(x: Tensor, k: tuple[int, ...], out: tuple[int, ...]) -> Tensor:
    """Sums of the windows of (N, C, *spatial) `x` that tile its first out*k elements along
    each spatial dim: each dim cut to out*k, split into (out, k), and the k axes summed."""
    for axis, (kk, o) in enumerate(zip(k, out), start=2):
        if x.shape[axis] != o * kk:
            x = S.slice_view(x, axis, 0, o * kk, 1)
    split = [v for o, kk in zip(out, k) for v in (o, kk)]
    x = S.reshape(x, (*x.shape[:2], *split))
    return R.sum(x, tuple(3 + 2 * i for i in range(len(k))))


def _avg_pool(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    n: int,
    op: str,
) -> Tensor:
    x = tensor_arg(input, op)
    k, s, p, _ = _pool_args(x, kernel_size, stride, padding, 1, n, op)
    if not x.dtype.is_floating_point and x.dtype is not dt.int64:
        raise op_error(
            NotImplementedError, op, f"\"{op}\" not implemented for '{x.dtype.legacy_name}'"
        )
    if divisor_override is not None and divisor_override == 0:
        raise op_error(RuntimeError, op, "divisor must be not zero")
    unbatched = x.ndim == n + 1
    if unbatched:
        x = S.unsqueeze(x, 0)
    spatial = tuple(x.shape[2:])
    ones_d = (1,) * n
    out, extra = _geometry(x, k, s, p, ones_d, ceil_mode, op)
    widths = _widths(p, tuple(pp + e for pp, e in zip(p, extra)))
    # int64 (torch's one integer avg_pool) divides in integer arithmetic, toward zero.
    rounding = None if x.dtype.is_floating_point else "trunc"
    if not any(widths) and all(o == 1 or st == kk for o, st, kk in zip(out, s, k)):
        # Windows that tile the input (stride = kernel, or one window along a dim) with no
        # padding: a reshape and one sum, where the offset gather would record prod(k)
        # slices (1024 for a 32x32 global pooling, and as many again in its gradient).
        total = _tiled_sum(x, k, out)
        divisor = math.prod(k) if divisor_override is None else divisor_override
        result = E.div(total, divisor, rounding_mode=rounding)
        return S.squeeze(result, 0) if unbatched else result  # type: ignore[no-any-return]
    xp = pad(x, widths) if any(widths) else x
    total = R.sum(_windows(xp, k, s, ones_d, out), 2)
    if divisor_override is not None:
        result = E.div(total, divisor_override, rounding_mode=rounding)
    else:
        # Count what each window covers: real elements only, or the zero padding too
        # (but never the extra ceil_mode padding past it), exactly as torch divides.
        ones = C.ones((1, 1, *spatial), dtype=x.dtype, device=x.device)
        if count_include_pad:
            ones = pad(ones, _widths(p, p), value=1)
            ones = pad(ones, _widths((0,) * n, extra))
        else:
            ones = pad(ones, widths)
        counts = R.sum(_windows(ones, k, s, ones_d, out), 2)
        result = E.div(total, counts, rounding_mode=rounding)
    return S.squeeze(result, 0) if unbatched else result  # type: ignore[no-any-return]


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
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d"
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
    index of each max within its input plane.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[[1.0, 2.0], [4.0, 3.0]]])
    >>> lazytorch.nn.functional.max_pool2d(x, 2, return_indices=True)
    (tensor([[[4.]]]), tensor([[[2]]]))
    """
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d"
    )


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> lazytorch.nn.functional.max_pool3d(lazytorch.ones(1, 2, 4, 5, 6), 2).shape
    lazytorch.Size([1, 2, 2, 2, 3])
    """
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d"
    )


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
    return _avg_pool(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d"
    )


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over kernel windows; the divisor follows torch's padding rules.

    >>> import lazytorch
    >>> lazytorch.nn.functional.avg_pool2d(lazytorch.ones(1, 1, 3, 3), 2, padding=1)
    tensor([[[[0.2500, 0.5000],
              [0.5000, 1.0000]]]])
    """
    return _avg_pool(
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        2,
        "avg_pool2d",
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> lazytorch.nn.functional.avg_pool3d(lazytorch.ones(1, 2, 4, 5, 6), 2).shape
    lazytorch.Size([1, 2, 2, 2, 3])
    """
    return _avg_pool(
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        3,
        "avg_pool3d",
    )


def _lp_pool(
    input: Tensor,
    norm_type: float,
    kernel_size: Any,
    stride: Any,
    ceil_mode: bool,
    n: int,
    op: str,
) -> Tensor:
    """torch's composition: (sum over the window of x^p)^(1/p), the sum as the average
    times the window size."""
    x = tensor_arg(input, op)
    k = _ntuple(kernel_size, n, op)
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = avg(x.pow(norm_type), kernel_size, stride, 0, ceil_mode)  # type: ignore[attr-defined]
    out = E.sign(out) * E.relu(E.abs(out))  # type: ignore[attr-defined]
    return (out * math.prod(k)).pow(1.0 / norm_type)  # type: ignore[no-any-return]


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling over length-k windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> lazytorch.nn.functional.lp_pool1d(lazytorch.tensor([[3.0, 4.0, 1.0, 1.0]]), 2, 2)
    tensor([[5.0000, 1.4142]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling over kH x kW windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> lazytorch.nn.functional.lp_pool2d(lazytorch.ones(1, 1, 2, 2), 1, 2)
    tensor([[[[4.]]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling over kT x kH x kW windows: (sum x^p)^(1/p).

    >>> import lazytorch
    >>> lazytorch.nn.functional.lp_pool3d(lazytorch.ones(1, 1, 2, 2, 2), 2, 2).shape
    lazytorch.Size([1, 1, 1, 1, 1])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """`max_pool1d` with its indices: (values, indices)."""
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, True, 1, "max_pool1d"
    )


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """`max_pool2d` with its indices: (values, indices)."""
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, True, 2, "max_pool2d"
    )


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """`max_pool3d` with its indices: (values, indices)."""
    return _max_pool(
        input, kernel_size, stride, padding, dilation, ceil_mode, True, 3, "max_pool3d"
    )


# -- unpooling ---------------------------------------------------------------------------------
def _unpool_size(
    x: Tensor, k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...], output_size: Any
) -> tuple[int, ...]:
    n = len(k)
    default = [(x.shape[-n + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n)]
    if output_size is None:
        return tuple(default)
    size = list(output_size)
    if len(size) == n + 2:
        size = size[2:]
    if len(size) != n:
        raise ValueError(
            f"output_size should be a sequence containing {n} or {n + 2} elements, but it "
            f"has a length of '{len(size)}'"
        )
    for i in range(n):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(
                f'invalid output_size "{tuple(output_size)}" (dim {i} must be between {lo} and {hi})'
            )
    return tuple(int(v) for v in size)


def _max_unpool(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Any,
    n: int,
    op: str,
) -> Tensor:
    x = tensor_arg(input, op)
    k = _ntuple(kernel_size, n, op)
    s = k if stride is None else _ntuple(stride, n, op)
    p = _ntuple(padding, n, op)
    out = _unpool_size(x, k, s, p, output_size)
    if tuple(indices.shape) != tuple(x.shape):
        raise op_error(
            RuntimeError,
            op,
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(x.shape)}) but got indices tensor with shape: {list(indices.shape)}",
        )
    lead = tuple(x.shape[: x.ndim - n])
    flat_in = S.reshape(x, (*lead, -1))
    flat_idx = S.reshape(indices, (*lead, -1))
    volume = math.prod(out)
    # an index outside the output stops the scatter with IndexOutOfRangeError (checked when
    # the program runs: no synchronization here)
    zeros = C.zeros((*lead, volume), dtype=x.dtype, device=x.device)
    return S.reshape(zeros.scatter(-1, flat_idx, flat_in), (*lead, *out))  # type: ignore[attr-defined]


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of `max_pool1d`: each value placed at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of `max_pool2d`: each value placed at its flat index in its output plane,
    zeros elsewhere.

    >>> import lazytorch
    >>> from lazytorch.nn import functional as F
    >>> y, i = F.max_pool2d(lazytorch.tensor([[[[1.0, 2.0], [4.0, 3.0]]]]), 2, return_indices=True)
    >>> F.max_unpool2d(y, i, 2)
    tensor([[[[0., 0.],
              [4., 0.]]]])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of `max_pool3d`: each value placed at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")
