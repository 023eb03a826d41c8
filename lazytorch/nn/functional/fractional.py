"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d``/``3d``, torch's
algorithm exactly.

Per sample and channel, one uniform draw ``u`` per spatial dim (``_random_samples``, shape
``(N, C, dims)``, drawn from the default generator when not given) places the windows:
``start[i] = int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (in - k) / (out - 1)``
(computed in the input's dtype, as torch), and the last window ends at the input's edge.
Each output is the max of its ``k``-window (the first maximum on ties). The draws are the
generator's, not torch's: pass ``_random_samples`` to reproduce torch's output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import indexing as IX
from lazytorch.ops.random import rand
from lazytorch.ops.shape import cat
from lazytorch.tensor import Tensor

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _tuple(v: Any, n: int) -> tuple[Any, ...]:
    """`v` as an n-tuple: a number repeats (torch's ``_pair``/``_triple``)."""
    if isinstance(v, (int, float)):
        return (v,) * n
    return tuple(v)


_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(u: Tensor, in_size: int, out_size: int, k: int) -> Tensor:
    """Window starts, (N, C, out_size) int64, from the draws `u` (N, C)."""
    n, c = u.shape
    last = C.full((n, c, 1), in_size - k, dtype=dt.int64, device=u.device)
    if out_size <= 1:
        return last[..., :out_size]
    np_dtype = np.float64 if u.dtype is dt.float64 else np.float32
    alpha = float(np_dtype(in_size - k) / np_dtype(out_size - 1))
    i = C.arange(out_size - 1, dtype=u.dtype, device=u.device)
    uu = u.unsqueeze(-1)
    starts = ((i + uu) * alpha).to(dt.int64) - (uu * alpha).to(dt.int64)
    return cat([starts, last], dim=-1)


def _fractional_max_pool(
    nd: int,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    _random_samples: Tensor | None,
) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.shape[-nd:]) if input.dim() >= nd else ()
    if output_size is None:
        if len(output_ratio) > nd:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _tuple(output_ratio, nd)
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    if input.dim() not in (nd + 1, nd + 2):
        if input.dim() < nd + 1:
            input.size(-nd - 1)  # torch's IndexError for too few dims
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = rand((n, c, nd), dtype=x.dtype, device=x.device)
    ks = _tuple(kernel_size, nd)
    outs = _tuple(output_size, nd)
    if _random_samples.dim() != 3 or _random_samples.size(2) != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {_random_samples.size(-1)}."
        )
    if _random_samples.size(0) != n or _random_samples.size(1) != c:
        raise RuntimeError(
            f"Expect _random_samples to have size ({n}, {c}, {nd}); got "
            f"{list(_random_samples.shape)}."
        )
    for d in range(nd):
        # torch's bound: 2-d allows a last window ending at the edge, 3-d does not
        span = outs[d] + ks[d] - 1
        if span > spatial[d] or (nd == 3 and span == spatial[d]):
            what = _DIM_NAMES[nd][d]
            raise RuntimeError(
                f"{name}{'_out' if nd == 3 else ''}(): pool {what} {ks[d]} too large relative "
                f"to input {what} {spatial[d]}"
            )
    # torch's draw order: 2-d takes u[..., 0] for width and u[..., 1] for height; 3-d takes
    # time, height, width in order
    order = (1, 0) if nd == 2 else (0, 1, 2)
    # flat input index of every (output position, window offset), row-major over spatial
    flat = None
    strides = [int(np.prod(spatial[d + 1 :])) for d in range(nd)]
    for d in range(nd):
        starts = _intervals(_random_samples[..., order[d]], spatial[d], outs[d], ks[d])
        pos = starts.unsqueeze(-1) + C.arange(ks[d], dtype=dt.int64, device=x.device)
        # pos: (N, C, out_d, k_d) -> place out_d at axis d and k_d at axis nd + d
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d] = outs[d]
        shape[2 + nd + d] = ks[d]
        term = pos.reshape(shape) * strides[d]
        flat = term if flat is None else flat + term
    assert flat is not None
    flat = flat.expand(n, c, *outs, *ks).reshape(n, c, -1)
    values = IX.gather(x.reshape(n, c, -1), 2, flat).reshape(n, c, *outs, int(np.prod(ks)))
    flat = flat.reshape(n, c, *outs, int(np.prod(ks)))
    out, arg = values.max(dim=-1)
    indices = IX.gather(flat, -1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return out, indices


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """2-d fractional max pooling of (N, C, H, W) or (C, H, W) `input`: the pooled values
    and their flat ``H * W`` indices.

    >>> import lazytorch
    >>> x = lazytorch.arange(25.0).reshape(1, 1, 5, 5)
    >>> u = lazytorch.tensor([[[0.3, 0.9]]])
    >>> fractional_max_pool2d_with_indices(x, 2, output_size=3, _random_samples=u)[1]
    tensor([[[[ 6,  7,  9],
              [11, 12, 14],
              [21, 22, 24]]]])
    """
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """3-d fractional max pooling of (N, C, T, H, W) or (C, T, H, W) `input`: the pooled
    values and their flat ``T * H * W`` indices."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """2-d fractional max pooling; with `return_indices`, ``(values, indices)``."""
    out, idx = fractional_max_pool2d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )
    return (out, idx) if return_indices else out


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """3-d fractional max pooling; with `return_indices`, ``(values, indices)``."""
    out, idx = fractional_max_pool3d_with_indices(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples
    )
    return (out, idx) if return_indices else out
