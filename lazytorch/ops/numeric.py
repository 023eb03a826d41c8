"""Statistics, integration, polynomial grids and scatter reductions composed of other
public ops: `mode`, `histc`, `cov`, `corrcoef`, `trapezoid` (`trapz`),
`cumulative_trapezoid`, `combinations`, `vander`, `scatter_reduce`, and the view writers
`select_scatter`, `slice_scatter`, `diagonal_scatter`, `masked_scatter`, with `renorm` and
`narrow_copy`.

Like `lazytorch.ops.composite`, each is torch's function written in lazytorch's ops (so it is
lazy and differentiable wherever its parts are), following torch's formulas step by step so
the rounding is torch's too.

>>> import lazytorch
>>> lazytorch.trapezoid(lazytorch.tensor([1.0, 2.0, 3.0]))
tensor(4.)
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import namedtuple
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import shape as S
from lazytorch.ops._core import normalize_dim, tensor_arg
from lazytorch.ops.creation import into_out
from lazytorch.tensor import Tensor

__all__ = [
    "combinations",
    "corrcoef",
    "cov",
    "cumulative_trapezoid",
    "diagonal_scatter",
    "histc",
    "masked_scatter",
    "mode",
    "narrow_copy",
    "renorm",
    "scatter_reduce",
    "select_scatter",
    "slice_scatter",
    "trapezoid",
    "trapz",
    "vander",
]

mode_result = namedtuple("mode", ["values", "indices"])


# -- order statistics -------------------------------------------------------------------------
@public(method=True)
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """``(values, indices)``: the most frequent value along `dim` (the smallest of equally
    frequent ones, as torch) and the index of its last occurrence.

    torch's CPU kernel sorts unstably, so for rows longer than 16 its index may be any
    occurrence of the value; lazytorch always gives the last. NaN entries never count as
    equal (a row of only NaN gives NaN at its last index). Work is quadratic in the size of
    `dim`.

    >>> import lazytorch
    >>> lazytorch.mode(lazytorch.tensor([1, 2, 2, 3, 3]))
    mode(values=tensor(2), indices=tensor(2))
    """
    x = tensor_arg(input, "mode")
    if x.ndim == 0:
        normalize_dim(dim, 0, "mode")
        result = mode_result(x.clone(), C.zeros((), dtype=dt.int64, device=x.device))
        return _into_pair(result, out)
    axis = normalize_dim(dim, x.ndim, "mode")
    n = x.shape[axis]
    if n == 0:
        raise op_error(
            IndexError,
            "mode",
            f"mode(): Expected reduction dim {axis} to have non-zero size.",
        )
    m = x.movedim(axis, -1)  # (..., n)
    work = m.to(dt.uint8) if m.dtype is dt.bool_ else m
    srt = work.sort(-1).values
    counts = (srt.unsqueeze(-1) == srt.unsqueeze(-2)).sum(-1)  # (..., n)
    best = counts.amax(-1, keepdim=True)
    first = (counts == best).to(dt.int64).argmax(-1, keepdim=True)  # the smallest such value
    value = srt.gather(-1, first)
    last = (n - 1) - (work == value).flip(-1).to(dt.int64).argmax(-1, keepdim=True)
    values = m.gather(-1, last)  # from the input: the gradient reaches the entry picked
    values, last = values.movedim(-1, axis), last.movedim(-1, axis)
    if not keepdim:
        values, last = values.squeeze(axis), last.squeeze(axis)
    return _into_pair(mode_result(values, last), out)


def _into_pair(result: Any, out: Any) -> Any:
    if out is None:
        return result
    values, indices = out
    return mode_result(
        into_out(result.values, values, "mode"), into_out(result.indices, indices, "mode")
    )


@public(method=True)
def histc(
    input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *, out: Any = None
) -> Tensor:
    """Counts of the entries in `bins` equal-width bins over ``[min, max]`` (both 0, or
    equal: the data's range; entries outside it and NaN are not counted; the last bin
    includes `max`). Reads the data's range on the host when it needs it; no gradient.

    >>> import lazytorch
    >>> lazytorch.histc(lazytorch.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    x = tensor_arg(input, "histc")
    if not x.dtype.is_floating_point:
        raise op_error(
            NotImplementedError,
            "histc",
            f"\"histogram_cpu\" not implemented for '{x.dtype.legacy_name}'",
        )
    if bins <= 0:
        raise op_error(
            RuntimeError, "histc", "torch.histc(): bins must be > 0, but got " + str(bins)
        )
    lo, hi = float(min), float(max)
    if lo == hi and x.numel() > 0:
        flat = x.detach().reshape(-1)
        lo, hi = float(flat.amin().item()), float(flat.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise op_error(RuntimeError, "histc", f"torch.histc: range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise op_error(RuntimeError, "histc", "torch.histc: max must be larger than min")
    # torch's bin edges are in the input's dtype: so are the range and the arithmetic
    lo, hi = (float(np.asarray(v, dtype=x.dtype.np)) for v in (lo, hi))
    v = x.detach().reshape(-1)
    inside = (v >= lo) & (v <= hi)
    pos = ((v - lo) * bins / (hi - lo)).trunc()
    pos = E.where(inside, pos, C.zeros((), dtype=x.dtype, device=x.device)).to(dt.int64)
    pos = pos.clamp(max=bins - 1)  # the right edge belongs to the last bin
    counts = C.zeros(bins, dtype=x.dtype, device=x.device).index_add(0, pos, inside.to(x.dtype))
    return into_out(counts, out, "histc")


# -- covariance -------------------------------------------------------------------------------
@public(method=True)
def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in the rows of `input` (observations in its
    columns; a 1-d input is one variable), weighted by frequency and/or observation weights.

    >>> import lazytorch
    >>> lazytorch.cov(lazytorch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    x = tensor_arg(input, "cov")
    if x.ndim > 2:
        raise op_error(
            RuntimeError,
            "cov",
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{x.ndim} dimensions",
        )
    if x.dtype is dt.bool_:
        raise op_error(RuntimeError, "cov", "cov(): bool dtype is not supported for input")
    rows = x.reshape(1, -1) if x.ndim < 2 else x
    n_obs = rows.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        _check_weights(w, n_obs, "fweights")
        if w.dtype.is_floating_point or w.dtype is dt.bool_:
            raise op_error(
                RuntimeError,
                "cov",
                "cov(): expected fweights to have integral dtype but got fweights with "
                f"{w.dtype.legacy_name} dtype",
            )
        if n_obs and not bool((w.min() >= 0).item()):
            raise op_error(RuntimeError, "cov", "cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        _check_weights(aw, n_obs, "aweights")
        if not aw.dtype.is_floating_point:
            raise op_error(
                RuntimeError,
                "cov",
                "cov(): expected aweights to have floating point dtype but got aweights with "
                f"{aw.dtype.legacy_name} dtype",
            )
        if n_obs and not bool((aw.min() >= 0).item()):
            raise op_error(RuntimeError, "cov", "cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    if w is None:
        w_sum = C.tensor(n_obs, dtype=dt.int64, device=x.device)
    else:
        w_sum = w.sum()
        if not bool((w_sum != 0).item()):
            raise op_error(RuntimeError, "cov", "cov(): weights sum to zero, can't be normalized")
    avg = (rows if w is None else rows * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool((norm_factor <= 0).item()):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            stacklevel=2,
        )
        norm_factor = C.zeros((), dtype=norm_factor.dtype, device=x.device)
    centered = rows - avg.unsqueeze(1)
    c = centered.mm((centered if w is None else centered * w).t())
    return E.true_divide(c, norm_factor).squeeze()


def _check_weights(w: Tensor, n_obs: int, name: str) -> None:
    if w.ndim > 1:
        raise op_error(
            RuntimeError,
            "cov",
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.ndim} dimensions",
        )
    if w.numel() != n_obs:
        raise op_error(
            RuntimeError,
            "cov",
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n_obs}",
        )


@public(method=True)
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of `input` (`cov`
    scaled by the standard deviations, clipped to [-1, 1]).

    >>> import lazytorch
    >>> lazytorch.corrcoef(lazytorch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    x = tensor_arg(input, "corrcoef")
    if x.ndim > 2:
        raise op_error(
            RuntimeError,
            "corrcoef",
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{x.ndim} dimensions",
        )
    c = cov(x)
    if c.ndim == 0:
        return c / c  # NaN for a zero, infinite or NaN variance, else 1
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)


# -- integration ------------------------------------------------------------------------------
def _spacing(y: Tensor, x: Tensor, axis: int, op: str) -> Tensor:
    """torch's ``dx`` of sample points `x` for `y` along `axis` (broadcast after the
    difference, as numpy)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[axis]:
            raise op_error(
                RuntimeError, op, f"{op}: There must be one `x` value for each sample point"
            )
        sizes = [1] * y.ndim
        sizes[axis] = x.shape[0]
        x = x.reshape(sizes)
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    n = x.shape[axis]
    return x.narrow(axis, min(n, 1), max(n - 1, 0)) - x.narrow(axis, 0, max(n - 1, 0))


def _integrand(y: Any, x: Any, dx: Any, dim: int, op: str) -> tuple[Tensor, Any, int]:
    yt = tensor_arg(y, op, "y")
    if x is not None and dx is not None:
        raise op_error(
            TypeError, op, f"{op}() takes the sample points `x` or the spacing `dx`, not both"
        )
    axis = normalize_dim(dim, yt.ndim, op)
    return yt, x, axis


def _no_bool(y: Tensor, x: Any, op: str) -> None:
    if y.dtype is dt.bool_ or (isinstance(x, Tensor) and x.dtype is dt.bool_):
        raise op_error(
            RuntimeError,
            op,
            f"{op}: received a bool input for `x` or `y`, but bool is not supported",
        )


@public()
def trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1
) -> Tensor:
    """The integral of `y` along `dim` by the trapezoid rule, at sample points `x` (a 1-d
    tensor along `dim`, or one that broadcasts with `y`) or spaced `dx` apart (default 1).

    >>> import lazytorch
    >>> lazytorch.trapezoid(lazytorch.tensor([1.0, 2.0, 3.0]), dx=2)
    tensor(8.)
    """
    yt, x, axis = _integrand(y, x, dx, dim, "trapezoid")
    n = yt.shape[axis]
    if n == 0:
        return C.zeros(
            [s for k, s in enumerate(yt.shape) if k != axis], dtype=yt.dtype, device=yt.device
        )
    _no_bool(yt, x, "trapezoid")
    if x is None:
        step = 1.0 if dx is None else float(dx)
        ends = yt.select(axis, 0) + yt.select(axis, -1)
        return (yt.sum(axis) - ends * 0.5) * step
    spacing = _spacing(yt, tensor_arg(x, "trapezoid", "x"), axis, "trapezoid")
    left, right = yt.narrow(axis, 0, n - 1), yt.narrow(axis, 1, n - 1)
    return ((left + right) * spacing).sum(axis) / 2.0


@public()
def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    """`trapezoid` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


@public()
def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1
) -> Tensor:
    """The running trapezoid-rule integral of `y` along `dim` (one entry fewer than `y`).

    >>> import lazytorch
    >>> lazytorch.cumulative_trapezoid(lazytorch.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    yt, x, axis = _integrand(y, x, dx, dim, "cumulative_trapezoid")
    _no_bool(yt, x, "cumulative_trapezoid")
    n = yt.shape[axis]
    left = yt.narrow(axis, 0, max(n - 1, 0))
    right = yt.narrow(axis, min(n, 1), max(n - 1, 0))
    if x is None:
        step = 1.0 if dx is None else float(dx)
        return ((left + right) * (step / 2.0)).cumsum(axis)
    spacing = _spacing(yt, tensor_arg(x, "cumulative_trapezoid", "x"), axis, "cumulative_trapezoid")
    return ((left + right) * spacing).cumsum(axis) / 2.0


# -- grids ------------------------------------------------------------------------------------
@public()
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-`r` combinations of the entries of a 1-d tensor, one per row, in
    lexicographic order of position (``with_replacement``: entries may repeat).

    >>> import lazytorch
    >>> lazytorch.combinations(lazytorch.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    x = tensor_arg(input, "combinations")
    if x.ndim != 1:
        raise op_error(
            RuntimeError, "combinations", f"Expect a 1D vector, but got shape {list(x.shape)}"
        )
    if r < 0:
        raise op_error(RuntimeError, "combinations", f"Expect a non-negative number, but got {r}")
    if r == 0:
        return C.empty(0, dtype=x.dtype, device=x.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(x.shape[0]), r))
    idx = C.tensor(np.asarray(rows, dtype=np.int64).reshape(len(rows), r), device=x.device)
    return x.index_select(0, idx.reshape(-1)).reshape(len(rows), r)


@public()
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-d tensor: columns ``x**(N-1), ..., x, 1`` (or
    increasing), each power the running product torch computes (integers as int64).

    >>> import lazytorch
    >>> lazytorch.vander(lazytorch.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    v = tensor_arg(x, "vander", "x")
    if v.ndim != 1:
        raise op_error(RuntimeError, "vander", "x must be a one-dimensional tensor.")
    n = v.shape[0] if N is None else N
    if n < 0:
        raise op_error(RuntimeError, "vander", "N must be non-negative.")
    d = v.dtype if v.dtype.is_floating_point or v.dtype.is_complex else dt.int64
    v = v.to(d)
    if n == 0:
        return C.empty(v.shape[0], 0, dtype=d, device=v.device)
    cols = [C.ones(v.shape[0], dtype=d, device=v.device)]
    for _ in range(n - 1):
        cols.append(v if len(cols) == 1 else cols[-1] * v)
    if not increasing:
        cols.reverse()
    return S.stack(cols, 1)


# -- scatter reductions -----------------------------------------------------------------------
_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
_DENSE_LIMIT = 1 << 26  # entries of the (src x dim size) mask amax/amin build


@public(method=True, inplace=True)
def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
    out: Any = None,
) -> Tensor:
    """`input` with each ``src`` entry combined into the position `index` selects along
    `dim` by `reduce` ("sum", "prod", "mean", "amax", "amin"); ``include_self=False``
    leaves `input`'s own values out at the positions written to. Integer "mean" rounds
    down, as torch.

    "sum"/"mean" are scatter-adds, "prod" a multiplying scatter (no gradient); "amax" and
    "amin" compare every ``src`` entry with every position along `dim` (a mask of
    ``src.numel() * input.size(dim)`` entries: NotImplementedError beyond 2**26) and need
    `index` of `input`'s shape outside `dim`.

    >>> import lazytorch
    >>> x = lazytorch.tensor([1.0, 2.0])
    >>> x.scatter_reduce(0, lazytorch.tensor([0, 0, 1]), lazytorch.tensor([5.0, 3.0, 1.0]), "amax")
    tensor([5., 2.])
    """
    x = tensor_arg(input, "scatter_reduce")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch takes these too
    if reduce not in _SCATTER_REDUCES:
        raise op_error(
            RuntimeError,
            "scatter_reduce",
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}",
        )
    if not isinstance(src, Tensor) or not isinstance(index, Tensor):
        raise op_error(TypeError, "scatter_reduce", "index and src must be tensors")
    if src.dtype is not x.dtype:
        raise op_error(
            RuntimeError,
            "scatter_reduce",
            "scatter_reduce(): Expected self.dtype to be equal to src.dtype",
        )
    touched = C.zeros(x.shape, dtype=dt.bool_, device=x.device).scatter(dim, index, True)
    if reduce in ("amax", "amin"):
        result = _scatter_extreme(x, dim, index, src, reduce == "amax", include_self, touched)
        return into_out(result, out, "scatter_reduce")
    identity = 1 if reduce == "prod" else 0
    base = x if include_self else E.where(touched, C.full((), identity, dtype=x.dtype), x)
    if reduce == "prod":
        return into_out(base.scatter(dim, index, src, reduce="multiply"), out, "scatter_reduce")
    total = base.scatter_add(dim, index, _leading_block(src, index))
    if reduce == "sum":
        return into_out(total, out, "scatter_reduce")
    ones = C.ones(index.shape, dtype=x.dtype, device=x.device)
    count = C.zeros(x.shape, dtype=x.dtype, device=x.device).scatter_add(dim, index, ones)
    if include_self:
        count = count + 1
    count = count.clamp(min=1)
    mean = total / count if x.dtype.is_floating_point else total.div(count, rounding_mode="floor")
    return into_out(E.where(touched, mean, x), out, "scatter_reduce")


def _leading_block(src: Tensor, index: Tensor) -> Tensor:
    """The part of `src` that `index` covers (torch reads only that block)."""
    for d, k in enumerate(index.shape):
        if src.shape[d] != k:
            src = src.narrow(d, 0, k)
    return src


def _scatter_extreme(
    x: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    largest: bool,
    include_self: bool,
    touched: Tensor,
) -> Tensor:
    axis = normalize_dim(dim, x.ndim, "scatter_reduce") if x.ndim else 0
    if index.ndim != x.ndim or any(
        index.shape[d] != x.shape[d] for d in range(x.ndim) if d != axis
    ):
        raise op_error(
            NotImplementedError,
            "scatter_reduce",
            "scatter_reduce(reduce='amax'/'amin') in lazytorch needs index of input's shape "
            "outside dim; expand the index (and src) to it",
        )
    n = x.shape[axis] if x.ndim else 1
    if index.numel() * n > _DENSE_LIMIT:
        raise op_error(
            NotImplementedError,
            "scatter_reduce",
            f"scatter_reduce(reduce='amax'/'amin') compares every src entry with every "
            f"position along dim: {index.numel()} x {n} is beyond lazytorch's limit of 2**26",
        )
    s = _leading_block(src, index).movedim(axis, -1).unsqueeze(-1)  # (..., m, 1)
    idx = index.movedim(axis, -1).unsqueeze(-1)  # (..., m, 1)
    hit = idx == C.arange(n, device=x.device)  # (..., m, n)
    if x.dtype.is_floating_point:
        fill = -math.inf if largest else math.inf
    else:
        lim = np.iinfo(x.dtype.np)
        fill = int(lim.min if largest else lim.max)
    masked = E.where(hit, s, C.full((), fill, dtype=x.dtype, device=x.device))
    best = masked.amax(-2) if largest else masked.amin(-2)  # (..., n)
    best = best.movedim(-1, axis)
    if include_self:
        best = E.maximum(best, x) if largest else E.minimum(best, x)
    return E.where(touched, best, x)


# -- writing into views and scaling slices ------------------------------------------------------
@public(method=True, inplace=True)
def renorm(input: Tensor, p: float, dim: int, maxnorm: float, *, out: Any = None) -> Tensor:
    """Each slice along `dim` whose `p`-norm exceeds `maxnorm` scaled down to it (by
    ``maxnorm / (norm + 1e-7)``, as torch).

    >>> import lazytorch
    >>> lazytorch.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    x = tensor_arg(input, "renorm")
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "renorm",
            f"renorm: expected a floating point input, got {x.dtype.legacy_name}",
        )
    if maxnorm < 0:
        raise op_error(
            RuntimeError, "renorm", f"renorm: expected maxnorm to be >= 0 but got {maxnorm}"
        )
    axis = normalize_dim(dim, x.ndim, "renorm")
    others = [d for d in range(x.ndim) if d != axis]
    norms = x.norm(p, dim=others, keepdim=True) if others else x.abs()
    one = C.ones((), dtype=x.dtype, device=x.device)
    factor = E.where(norms > maxnorm, maxnorm / (norms + 1e-7), one)
    return into_out(x * factor, out, "renorm")


@public(method=True)
def narrow_copy(input: Tensor, dim: int, start: int, length: int, *, out: Any = None) -> Tensor:
    """`narrow`, as a new tensor."""
    return into_out(
        tensor_arg(input, "narrow_copy").narrow(dim, start, length).clone(), out, "narrow_copy"
    )


@public(method=True)
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """`input` with the positions where `mask` (broadcast to it) is True filled, in order,
    from the leading entries of `source`.

    >>> import lazytorch
    >>> x = lazytorch.zeros(4)
    >>> x.masked_scatter(lazytorch.tensor([True, False, True, False]), lazytorch.tensor([7.0, 8.0]))
    tensor([7., 0., 8., 0.])
    """
    x = tensor_arg(input, "masked_scatter")
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        raise op_error(
            RuntimeError, "masked_scatter", "masked_scatter_: expected BoolTensor for mask"
        )
    if source.dtype is not x.dtype:
        raise op_error(
            RuntimeError,
            "masked_scatter",
            f"masked_scatter: expected self and source to have same dtypes but got "
            f"{x.dtype.legacy_name} and {source.dtype.legacy_name}",
        )
    m = mask.expand(x.shape).reshape(-1)
    flat_src = source.reshape(-1)
    needed = int(m.sum().item())
    if needed > flat_src.shape[0]:
        raise op_error(
            RuntimeError,
            "masked_scatter",
            "masked_scatter: expected source to have at least as many elements as ones in mask",
        )
    if flat_src.shape[0] == 0:
        return x.clone()
    pos = (m.to(dt.int64).cumsum(0) - 1).clamp(min=0)
    picked = flat_src.index_select(0, pos)
    return E.where(m, picked, x.reshape(-1)).reshape(x.shape)


def _scatter_into_view(x: Tensor, src: Tensor, view: Any, op: str) -> Tensor:
    out = x.clone()
    target = view(out)
    if tuple(target.shape) != tuple(src.shape):
        raise op_error(
            RuntimeError,
            op,
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(target.shape)}",
        )
    target.copy_(src)
    return out


@public(method=True)
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of `input` with ``select(dim, index)`` replaced by `src`."""
    x = tensor_arg(input, "select_scatter")
    return _scatter_into_view(x, src, lambda t: t.select(dim, index), "select_scatter")


@public(method=True)
def slice_scatter(
    input: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
    *,
    out: Any = None,
) -> Tensor:
    """A copy of `input` with the slice ``start:end:step`` along `dim` replaced by `src`."""
    x = tensor_arg(input, "slice_scatter")
    axis = normalize_dim(dim, x.ndim, "slice_scatter")
    index = (slice(None),) * axis + (slice(start, end, step),)
    result = _scatter_into_view(x, src, lambda t: t[index], "slice_scatter")
    return into_out(result, out, "slice_scatter")


@public(method=True)
def diagonal_scatter(
    input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    """A copy of `input` with ``diagonal(offset, dim1, dim2)`` replaced by `src`."""
    x = tensor_arg(input, "diagonal_scatter")
    return _scatter_into_view(x, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")
