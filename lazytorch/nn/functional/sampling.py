"""Adaptive pooling, interpolate (upsampling) and pixel shuffle.

Every op here is separable or a fixed gather, and its geometry depends on sizes only, so
the index and weight tables are computed once on the host with NumPy, in the precision
torch's CPU kernels use (float32 for float32 input), and enter the graph as constant
inputs: a resampling along one dim is ``index_select`` of its taps, times the tap weights,
summed. Gradients then come from the gather's and the products' rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.ops.creation import tensor
from lazytorch.ops.indexing import gather, index_select
from lazytorch.tensor import Tensor


# -- adaptive pooling -----------------------------------------------------------------------------
def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """torch's windows: [floor(i * size / out), ceil((i + 1) * size / out)) for each i."""
    i = np.arange(out, dtype=np.int64)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_args(input: Any, output_size: Any, n: int, op: str) -> tuple[Tensor, tuple[int, ...]]:
    x = tensor_arg(input, op)
    if x.ndim not in (n + 1, n + 2) or any(s == 0 for s in x.shape[-n:]):
        raise op_error(
            RuntimeError,
            op,
            f"Expected {n + 1}D or {n + 2}D tensor with non-zero sizes for non-batch dimensions, but got {list(x.shape)}",
        )
    if not x.dtype.is_floating_point:
        raise op_error(
            NotImplementedError, op, f"\"{op}\" not implemented for '{x.dtype.legacy_name}'"
        )
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * n
    if len(sizes) != n:
        raise op_error(
            RuntimeError, op, f"output_size must be {n}, but got output_size of {len(sizes)} values"
        )
    out = tuple(int(x.shape[x.ndim - n + i]) if s is None else int(s) for i, s in enumerate(sizes))
    if min(out) < 0:
        raise op_error(RuntimeError, op, f"elements of output_size must be non-negative, got {out}")
    return x, out


def _adaptive_mean(x: Tensor, dim: int, out: int) -> Tensor:
    """Adaptive average along one dim (the 2-d pool is this along H, then along W)."""
    size = x.shape[dim]
    if out == 0:
        return S.narrow(x, dim, 0, 0)
    if size % out == 0:  # equal windows: a reshape and a mean
        return R.mean(S.unflatten(x, dim, (out, size // out)), dim + 1)
    starts, ends = _adaptive_bounds(size, out)
    pieces = [
        R.mean(S.narrow(x, dim, int(a), int(b - a)), dim, keepdim=True)
        for a, b in zip(starts, ends)
    ]
    return S.cat(pieces, dim)


def _adaptive_avg(input: Any, output_size: Any, n: int, op: str) -> Tensor:
    x, out = _adaptive_args(input, output_size, n, op)
    for i, o in enumerate(out):
        x = _adaptive_mean(x, x.ndim - n + i, o)
    return x


def _adaptive_max(input: Any, output_size: Any, return_indices: bool, n: int, op: str) -> Any:
    """Max over each window; the windows are gathered to (..., *out, K) first (short windows
    repeat their last element, which changes neither the max nor the first index of it), so
    the index is torch's: the first max in row-major order, or the last NaN."""
    x, out = _adaptive_args(input, output_size, n, op)
    spatial = tuple(x.shape[-n:])
    lead = x.ndim - n
    win = x
    positions = []
    for i, (size, o) in enumerate(zip(spatial, out)):
        starts, ends = _adaptive_bounds(size, o)
        taps = int((ends - starts).max()) if o else 1
        pos = np.minimum(starts[:, None] + np.arange(taps), ends[:, None] - 1)  # (o, taps)
        positions.append(pos)
        dim = lead + 2 * i
        win = index_select(win, dim, tensor(pos.reshape(-1), device=x.device))
        win = S.unflatten(win, dim, (o, taps))
    # (..., o1, t1, o2, t2, ...) -> (..., o1, o2, ..., t1 * t2 * ...)
    order = (
        list(range(lead)) + [lead + 2 * i for i in range(n)] + [lead + 2 * i + 1 for i in range(n)]
    )
    win = S.flatten(S.permute(win, order), lead + n, -1) if n > 1 else S.permute(win, order)
    values = R.amax(win, -1)
    if not (return_indices or x.requires_grad):
        return values
    hit = win == S.unsqueeze(values, -1)  # type: ignore[operator]
    first = R.argmax(hit.to(dt.uint8), -1)  # type: ignore[attr-defined]
    last_nan = (win.shape[-1] - 1) - R.argmax(S.flip(E.isnan(win), (-1,)).to(dt.uint8), -1)  # type: ignore[attr-defined,operator]
    k = E.where(E.isnan(values), last_nan, first)
    if x.requires_grad:
        # torch's gradient goes to the one element its index names, never split among ties.
        values = S.squeeze(gather(win, -1, S.unsqueeze(k, -1)), -1)
    if not return_indices:
        return values
    # The flat index within the input plane of every (output position, tap): a constant.
    flat = np.zeros((*out, *(p.shape[1] for p in positions)), dtype=np.int64)
    for i, pos in enumerate(positions):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = pos.shape
        flat = flat + pos.reshape(shape) * math.prod(spatial[i + 1 :])
    table = tensor(flat.reshape(*out, -1), device=x.device)
    table = S.expand(table, *win.shape)
    return values, S.squeeze(gather(table, -1, S.unsqueeze(k, -1)), -1)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average over torch's adaptive windows of (N, C, L) or (C, L) input.

    >>> import lazytorch
    >>> lazytorch.nn.functional.adaptive_avg_pool1d(lazytorch.tensor([[1.0, 2.0, 3.0]]), 2)
    tensor([[1.5000, 2.5000]])
    """
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over torch's adaptive windows of (N, C, H, W) or (C, H, W) input; an
    output_size entry of None keeps that size.

    >>> import lazytorch
    >>> lazytorch.nn.functional.adaptive_avg_pool2d(lazytorch.ones(1, 3, 5, 7), (2, None)).shape
    lazytorch.Size([1, 3, 2, 7])
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average over torch's adaptive windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> lazytorch.nn.functional.adaptive_avg_pool3d(lazytorch.ones(1, 2, 3, 4, 5), 1).shape
    lazytorch.Size([1, 2, 1, 1, 1])
    """
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over torch's adaptive windows of (N, C, L) or (C, L) input; with return_indices,
    also each max's position.

    >>> import lazytorch
    >>> lazytorch.nn.functional.adaptive_max_pool1d(lazytorch.tensor([[1.0, 5.0, 3.0]]), 2, True)
    (tensor([[5., 5.]]), tensor([[1, 1]]))
    """
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over torch's adaptive windows of (N, C, H, W) or (C, H, W) input; with
    return_indices, also each max's flat index in its input plane.

    >>> import lazytorch
    >>> x = lazytorch.arange(12.0).reshape(1, 3, 4)
    >>> lazytorch.nn.functional.adaptive_max_pool2d(x, (2, 3))
    tensor([[[ 5.,  6.,  7.],
             [ 9., 10., 11.]]])
    """
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over torch's adaptive windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import lazytorch
    >>> lazytorch.nn.functional.adaptive_max_pool3d(lazytorch.ones(1, 2, 3, 4, 5), (1, 2, None)).shape
    lazytorch.Size([1, 2, 1, 2, 5])
    """
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


# -- interpolate ----------------------------------------------------------------------------------
_LINEAR_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}


def _resample(x: Tensor, dim: int, index: np.ndarray, weight: np.ndarray | None) -> Tensor:
    """Along `dim`: out[i] = sum_t weight[i, t] * x[index[i, t]] (just the gather when
    `weight` is None and there is one tap)."""
    out, taps = index.shape
    if taps == 1 and weight is None and np.array_equal(index[:, 0], np.arange(x.shape[dim])):
        return x
    y = index_select(x, dim, tensor(index.reshape(-1), device=x.device))
    if weight is None:
        return y
    y = S.unflatten(y, dim, (out, taps))
    w = tensor(
        weight.reshape((out, taps) + (1,) * (x.ndim - dim - 1)), dtype=x.dtype, device=x.device
    )
    return R.sum(y * w, dim + 1)  # type: ignore[operator]


def _scale(size: int, out: int, align_corners: bool, scale: float | None, ftype: Any) -> Any:
    """torch's area_pixel_compute_scale, in the kernel's float type."""
    if align_corners:
        return ftype((size - 1) / (out - 1)) if out > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(size) / ftype(out)


def _taps(
    mode: str, size: int, out: int, align_corners: bool, scale: float | None, ftype: Any
) -> tuple[np.ndarray, np.ndarray | None]:
    """Source indices (out, taps) and weights (or None) of one dim, as torch's CPU kernels
    compute them."""
    dst = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and out == size:
            return dst[:, None], None
        if mode == "nearest" and out == 2 * size:
            return (dst >> 1)[:, None], None
        s = (
            np.float32(1.0 / scale)
            if scale is not None and scale > 0
            else np.float32(size) / np.float32(out)
        )
        shift = 0.5 if mode == "nearest-exact" else 0.0
        src = np.floor(((dst + shift) * s).astype(np.float32)).astype(np.int64)
        return np.minimum(src, size - 1)[:, None], None
    s = _scale(size, out, align_corners, scale, ftype)
    d = dst.astype(ftype)
    real = s * d if align_corners else s * (d + ftype(0.5)) - ftype(0.5)
    if mode == "bicubic":
        i0 = np.floor(real).astype(np.int64)
        t = (real - i0).astype(ftype)
        a = ftype(-0.75)

        def near(v: np.ndarray) -> np.ndarray:  # |v| <= 1
            return ((a + 2) * v - (a + 3)) * v * v + 1

        def far(v: np.ndarray) -> np.ndarray:  # 1 < |v| < 2
            return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

        weight = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)
        index = np.clip(i0[:, None] + np.arange(-1, 3), 0, size - 1)
        return index, weight
    real = np.maximum(real, ftype(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    lam = np.clip(real - i0.astype(ftype), 0, 1).astype(ftype)
    i1 = i0 + (i0 < size - 1)
    return np.stack([i0, i1], 1), np.stack([ftype(1) - lam, lam], 1)


def _antialias_taps(
    mode: str, size: int, out: int, align_corners: bool, scale: float | None, ftype: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Antialiased taps (torch's and PIL's): when shrinking, the filter widens by the scale
    so every input element contributes; each output's weights are normalized to sum 1."""
    interp = 2 if mode == "bilinear" else 4
    s = _scale(size, out, align_corners, scale, ftype)
    support = ftype(interp * 0.5) * s if s >= 1 else ftype(interp * 0.5)
    invscale = ftype(1) / s if s >= 1 else ftype(1)
    index, weight = [], []
    for i in range(out):
        center = s * ftype(i + 0.5)
        lo = max(int(center - support + ftype(0.5)), 0)
        hi = min(int(center + support + ftype(0.5)), size)
        x = np.abs(((np.arange(lo, hi) - center + ftype(0.5)) * invscale).astype(ftype))
        if mode == "bilinear":
            w = np.maximum(ftype(1) - x, ftype(0))
        else:  # Keys' cubic with a = -0.5, as PIL
            a = ftype(-0.5)
            near = ((a + 2) * x - (a + 3)) * x * x + 1
            far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
            w = np.where(x < 1, near, np.where(x < 2, far, ftype(0)))
        total = w.sum(dtype=ftype)
        index.append(np.arange(lo, hi))
        weight.append((w / total if total != 0 else w).astype(ftype))
    taps = max(len(ix) for ix in index)
    pad = [taps - len(ix) for ix in index]
    index_table = np.stack([np.pad(ix, (0, p), mode="edge") for ix, p in zip(index, pad)])
    weight_table = np.stack([np.pad(w, (0, p)) for w, p in zip(weight, pad)])
    return index_table, weight_table


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size`
    or by `scale_factor`: modes 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'trilinear', 'bicubic' and 'area', with torch's index and weight rules; `antialias`
    (bilinear and bicubic) widens the filter when shrinking, as torch and PIL.

    >>> import lazytorch
    >>> x = lazytorch.tensor([[[1.0, 2.0, 4.0]]])
    >>> lazytorch.nn.functional.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2., 4., 4.]]])
    >>> lazytorch.nn.functional.interpolate(x, size=5, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000, 3.0000, 4.0000]]])
    """
    x = tensor_arg(input, "interpolate")
    n = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(x.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                    "(o1, o2, ...,oK) format."
                )
            out = [int(s) for s in size]
        else:
            out = [int(size)] * n
        scales: list[float] | None = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != n:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(x.shape[2:])} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * n
        out = [math.floor(float(x.shape[2 + i]) * scales[i]) for i in range(n)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if recompute_scale_factor:
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic") and x.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D "
            "tensor as input"
        )
    known = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area")
    if (
        mode not in known
        or n not in (1, 2, 3)
        or (mode == "bicubic" and n != 2)
        or (mode in _LINEAR_MODES.values() and _LINEAR_MODES[n] != mode)
    ):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})"
        )
    if min(out) <= 0 or any(s == 0 for s in x.shape[1:]):
        raise op_error(
            RuntimeError,
            "interpolate",
            f"Input and output sizes should be greater than 0, but got input {list(x.shape[2:])} and output {out}",
        )
    if mode == "area":
        return _adaptive_avg(x, tuple(out), n, f"adaptive_avg_pool{n}d")
    # torch's nearest kernels take uint8 too; every other kernel floats only
    if not x.dtype.is_floating_point and not (mode.startswith("nearest") and x.dtype is dt.uint8):
        raise op_error(
            NotImplementedError,
            "interpolate",
            f"\"upsample_{mode}\" not implemented for '{x.dtype.legacy_name}'",
        )
    ftype = np.float64 if x.dtype is dt.float64 else np.float32
    for i in range(n):
        scale = None if scales is None else scales[i]
        taps = _antialias_taps if antialias else _taps
        index, weight = taps(mode, x.shape[2 + i], out[i], bool(align_corners), scale, ftype)
        x = _resample(x, 2 + i, index, weight)
    return x


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of interpolate.

    >>> import lazytorch
    >>> lazytorch.nn.functional.upsample(lazytorch.ones(1, 1, 2), scale_factor=2).shape
    lazytorch.Size([1, 1, 4])
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(..., mode='nearest').

    >>> import lazytorch
    >>> lazytorch.nn.functional.upsample_nearest(lazytorch.ones(1, 1, 2, 2), 3).shape
    lazytorch.Size([1, 1, 3, 3])
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True).

    >>> import lazytorch
    >>> lazytorch.nn.functional.upsample_bilinear(lazytorch.ones(1, 1, 2, 2), 3).shape
    lazytorch.Size([1, 1, 3, 3])
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pixel shuffle --------------------------------------------------------------------------------
def _shuffle_check(x: Tensor, factor: int, op: str, what: str) -> None:
    if x.ndim < 3:
        raise op_error(
            RuntimeError,
            op,
            f"{op} expects input to have at least 3 dimensions, but got input with {x.ndim} dimension(s)",
        )
    if factor <= 0:
        raise op_error(RuntimeError, op, f"{what} must be greater than 0, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r): channel blocks become r x r patches.

    >>> import lazytorch
    >>> lazytorch.nn.functional.pixel_shuffle(lazytorch.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    x = tensor_arg(input, "pixel_shuffle")
    r = int(upscale_factor)
    _shuffle_check(x, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise op_error(
            RuntimeError,
            "pixel_shuffle",
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}",
        )
    k = len(lead)
    y = S.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = S.permute(y, (*range(k), k, k + 3, k + 1, k + 4, k + 2))
    return S.reshape(y, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W): the inverse of pixel_shuffle.

    >>> import lazytorch
    >>> x = lazytorch.arange(4.0).reshape(1, 1, 2, 2)
    >>> lazytorch.nn.functional.pixel_unshuffle(x, 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    x = tensor_arg(input, "pixel_unshuffle")
    r = int(downscale_factor)
    _shuffle_check(x, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise op_error(
            RuntimeError,
            "pixel_unshuffle",
            f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got {h} x {w} for downscale_factor={r}",
        )
    k = len(lead)
    y = S.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = S.permute(y, (*range(k), k, k + 2, k + 4, k + 1, k + 3))
    return S.reshape(y, (*lead, c * r * r, h // r, w // r))


__all__: Sequence[str] = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """`adaptive_max_pool1d` with its indices: (values, indices)."""
    return _adaptive_max(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """`adaptive_max_pool2d` with its indices: (values, indices)."""
    return _adaptive_max(input, output_size, True, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> Any:
    """`adaptive_max_pool3d` with its indices: (values, indices)."""
    return _adaptive_max(input, output_size, True, 3, "adaptive_max_pool3d")
