"""affine_grid and grid_sample (spatial transformers): sampling at data-dependent points.

grid_sample reads each output pixel from the input at the (x, y) its grid entry names, in
[-1, 1] coordinates. The taps are data, so they are a gather: for bilinear, the four
neighbours' flat indices and weights are computed from the grid with tensor ops, the input
is gathered at each, and the weighted sum is formed; taps outside the input contribute
nothing (padding_mode 'zeros') or the coordinates are first clipped ('border') or
reflected ('reflection'), all as torch's kernels do. Gradients reach the input through the
gather and the grid through the weights.
"""

from __future__ import annotations

import warnings
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import indexing as IX
from lazytorch.ops import linalg as LA
from lazytorch.ops import shape as S
from lazytorch.ops._core import tensor_arg
from lazytorch.tensor import Tensor

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _base_coordinates(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """torch's _linspace_from_neg_one: pixel centres (or corners) in [-1, 1]."""
    if steps <= 1:
        return C.zeros(steps, dtype=like.dtype, device=like.device)
    line = C.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    # torch's two roundings: range * (steps - 1), then / steps
    return line if align_corners else line * (steps - 1) / steps  # type: ignore[no-any-return]


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) of a batch of 2-d affine maps `theta` (N, 2, 3) for
    an output of `size` (N, C, H, W).

    >>> import lazytorch
    >>> theta = lazytorch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> lazytorch.nn.functional.affine_grid(theta, (1, 1, 2, 2), align_corners=True)
    tensor([[[[-1., -1.],
              [ 1., -1.]],
    <BLANKLINE>
             [[-1.,  1.],
              [ 1.,  1.]]]])
    """
    t = tensor_arg(theta, "affine_grid")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not t.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {t.dtype}")
    size = [int(s) for s in size]
    if len(size) != 4:
        if len(size) == 5:
            raise op_error(
                NotImplementedError, "affine_grid", "3-d (5-D size) grids are not supported"
            )
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size}."
        )
    n, _, h, w = size
    if t.ndim != 3 or tuple(t.shape[1:]) != (2, 3):
        raise ValueError(
            f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {list(t.shape)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if align_corners and min(h, w) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    xs = S.expand(S.reshape(_base_coordinates(w, align_corners, t), (1, w, 1)), h, w, 1)
    ys = S.expand(S.reshape(_base_coordinates(h, align_corners, t), (h, 1, 1)), h, w, 1)
    ones = C.ones((h, w, 1), dtype=t.dtype, device=t.device)
    base = S.reshape(S.cat([xs, ys, ones], -1), (1, h * w, 3))
    grid = LA.matmul(base, S.transpose(t, 1, 2))  # (N, H*W, 2)
    return S.reshape(grid, (n, h, w, 2))


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)  # type: ignore[no-any-return,operator]
    return ((coord + 1) * size - 1) / 2  # type: ignore[no-any-return,operator]


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """torch's reflect_coordinates: fold `coord` into [low, high] by mirror reflection."""
    if twice_low == twice_high:
        return C.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = E.abs(coord - low)  # type: ignore[operator]
    extra = E.fmod(coord, span)
    flips = E.floor(coord / span)  # type: ignore[operator]
    even = E.fmod(flips, 2) == 0
    return E.where(even, extra + low, span - extra + low)  # type: ignore[no-any-return,operator]


def _source(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Grid coordinates in [-1, 1] as input pixel coordinates, clipped or reflected."""
    return _pad_coordinates(
        _unnormalize(coord, size, align_corners), size, padding_mode, align_corners
    )


def _pad_coordinates(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """torch's compute_coordinates: pixel coordinates clipped ('border') or reflected and
    clipped ('reflection'); unchanged for 'zeros'."""
    if padding_mode == "border":
        coord = E.clamp(coord, 0, size - 1)
    elif padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        coord = E.clamp(coord, 0, size - 1)
    return coord


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) input at the points of `grid` (N, Ho, Wo, 2), given as (x, y) in
    [-1, 1]: mode 'bilinear', 'nearest' or 'bicubic'; padding_mode 'zeros', 'border' or
    'reflection'.

    >>> import lazytorch
    >>> x = lazytorch.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = lazytorch.tensor([[[[0.0, 0.0], [1.0, -1.0]]]])
    >>> lazytorch.nn.functional.grid_sample(x, grid, align_corners=True)
    tensor([[[[1.5000, 1.0000]]]])
    """
    x = tensor_arg(input, "grid_sample")
    g = tensor_arg(grid, "grid_sample", "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if x.ndim == 5:
        raise op_error(NotImplementedError, "grid_sample", "only 4-D input is supported")
    if x.ndim != 4 or g.ndim != 4:
        raise op_error(
            RuntimeError,
            "grid_sample",
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes {list(x.shape)} and grid with sizes {list(g.shape)}",
        )
    n, c, h, w = x.shape
    if g.shape[0] != n or g.shape[3] != 2:
        raise op_error(
            RuntimeError,
            "grid_sample",
            f"grid_sampler(): expected grid and input to have same batch size and grid to have size 2 in its last dimension, but got input with sizes {list(x.shape)} and grid with sizes {list(g.shape)}",
        )
    if x.dtype != g.dtype or not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "grid_sample",
            f"grid_sampler(): expected input and grid to have the same floating dtype, but input has {x.dtype} and grid has {g.dtype}",
        )
    ho, wo = g.shape[1], g.shape[2]
    if mode == "bicubic":
        # torch pads each of the 4x4 taps' coordinates, not the sampling point's
        ix = _unnormalize(g[..., 0], w, align_corners)
        iy = _unnormalize(g[..., 1], h, align_corners)
    else:
        ix = _source(g[..., 0], w, padding_mode, align_corners)  # (N, Ho, Wo)
        iy = _source(g[..., 1], h, padding_mode, align_corners)
    flat = S.reshape(x, (n, c, h * w))

    def tap(col: Tensor, row: Tensor) -> tuple[Tensor, Tensor]:
        """Input values at integer (col, row) (0 outside) and whether each is inside."""
        inside = (col >= 0) & (col <= w - 1) & (row >= 0) & (row <= h - 1)  # type: ignore[operator]
        index = E.clamp(row, 0, h - 1) * w + E.clamp(col, 0, w - 1)  # type: ignore[operator]
        index = S.expand(S.reshape(index, (n, 1, ho * wo)), n, c, ho * wo)
        values = S.reshape(IX.gather(flat, 2, index), (n, c, ho, wo))
        return values, S.unsqueeze(inside, 1)

    if mode == "bicubic":
        x0, y0 = E.floor(ix), E.floor(iy)
        wx, wy = _cubic_weights(ix - x0), _cubic_weights(iy - y0)  # type: ignore[operator]

        def taps(start: Tensor, size: int) -> list[Tensor]:
            # (the padded coordinate cast to an integer by truncation, as torch's kernel does)
            return [
                _pad_coordinates(start + k, size, padding_mode, align_corners).to(dt.int64)  # type: ignore[operator, attr-defined]
                for k in (-1, 0, 1, 2)
            ]

        cols, rows = taps(x0, w), taps(y0, h)
        out: Any = 0
        for row, wr in zip(rows, wy):
            line: Any = 0  # torch's cubic_interp1d along x, then along y, left to right
            for col, wc in zip(cols, wx):
                values, inside = tap(col, row)
                line = line + E.where(inside, values, 0) * S.unsqueeze(wc, 1)  # type: ignore[operator]
            out = out + line * S.unsqueeze(wr, 1)  # type: ignore[operator]
        return out  # type: ignore[no-any-return]
    if mode == "nearest":
        # torch rounds half to even (nearbyint), as lazytorch.round does
        values, inside = tap(E.round(ix).to(dt.int64), E.round(iy).to(dt.int64))  # type: ignore[attr-defined]
        return E.where(inside, values, 0)  # type: ignore[no-any-return]
    x0, y0 = E.floor(ix), E.floor(iy)
    tx, ty = ix - x0, iy - y0  # type: ignore[operator]
    c0, r0 = x0.to(dt.int64), y0.to(dt.int64)  # type: ignore[attr-defined]
    out = 0
    for dc, dr, weight in (
        (0, 0, (1 - tx) * (1 - ty)),
        (1, 0, tx * (1 - ty)),
        (0, 1, (1 - tx) * ty),
        (1, 1, tx * ty),
    ):
        values, inside = tap(c0 + dc, r0 + dr)  # type: ignore[operator]
        out = out + E.where(inside, values * S.unsqueeze(weight, 1), 0)  # type: ignore[operator]
    return out  # type: ignore[no-any-return]


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """torch's get_cubic_upsample_coefficients (A = -0.75) for the taps at -1, 0, 1, 2 from a
    point a fraction `t` past tap 0."""
    a = -0.75

    def near(v: Tensor) -> Tensor:  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1  # type: ignore[no-any-return,operator]

    def far(v: Tensor) -> Tensor:  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a  # type: ignore[no-any-return,operator]

    rest = 1.0 - t  # type: ignore[operator]
    return [far(t + 1.0), near(t), near(rest), far(rest + 1.0)]  # type: ignore[operator]
