"""Statistics: ``histogram``, ``histogramdd``, ``unique_consecutive``, ``nanmedian`` and
``nanquantile``, with torch's semantics, composed of the existing ops.

Histograms bin each entry by a search among the bin edges (an entry on an edge goes to the
bin it opens; the last bin includes the right edge), exactly as torch's local search after
its linear guess does; entries outside the range and NaN are not counted. With an int
`bins` the range is the data's when not given (read on the host: an implicit
materialization), widened by 0.5 either side when empty, as torch and NumPy.

>>> import lazytorch
>>> lazytorch.histogram(lazytorch.tensor([1.0, 2.0, 1.0]), bins=4).hist
tensor([2., 0., 0., 1.])
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import shape as S
from lazytorch.ops._core import normalize_dim, tensor_arg
from lazytorch.ops.composite import searchsorted
from lazytorch.ops.reduction import _into_out, _into_outs
from lazytorch.ops.sorting import sort
from lazytorch.runtime import implicit_point
from lazytorch.tensor import Tensor, _host_value

__all__: list[str] = []

histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])


# -- histograms -----------------------------------------------------------------------------------
def _check_float(x: Tensor, op: str) -> None:
    if x.dtype not in (dt.float32, dt.float64):
        raise op_error(
            NotImplementedError, op, f"\"histogramdd\" not implemented for '{x.dtype.legacy_name}'"
        )


def _outer_edges(values: Tensor, rng: Any, op: str) -> tuple[float, float]:
    """The leftmost and rightmost edge of one dim: `rng`, or the data's range (empty: 0, 0),
    widened by 0.5 either side when it is empty."""
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    elif values.numel() > 0:
        lo, hi = float(values.amin().item()), float(values.amax().item())
    else:
        lo, hi = 0.0, 1.0  # torch's range for no data
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise op_error(
            ValueError if rng is None else RuntimeError,
            op,
            f"{op}: range of [{lo}, {hi}] is not finite",
        )
    if lo > hi:
        raise op_error(
            RuntimeError,
            op,
            f"{op}: min should not exceed max, but got min {lo} max {hi}",
        )
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _bin_positions(values: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """(bin index, inside) of each entry of the 1-d `values` among the sorted `edges`."""
    nb = edges.shape[0] - 1
    pos = searchsorted(edges, values, right=True) - 1
    inside = (values >= edges[0]) & (values <= edges[-1])  # NaN: False
    pos = E.where(values == edges[-1], C.full((), nb - 1, dtype=dt.int64), pos)
    pos = pos.clamp(0, max(nb - 1, 0))
    return pos, inside


def _histdd(
    op: str,
    x: Tensor,
    bins: Any,
    rng: Any,
    weight: Tensor | None,
    density: bool,
) -> tuple[Tensor, list[Tensor]]:
    """The D-dimensional histogram of the points ``x`` (N, D) and its D edge tensors."""
    _check_float(x, op)
    n, d = x.shape
    if isinstance(bins, Tensor) or (
        isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor)
    ):
        edge_list = [bins] if isinstance(bins, Tensor) else list(bins)
        if len(edge_list) != d:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: expected {d} sequences of bin edges for each of the {d} input "
                f"dimensions, but got {len(edge_list)} bin edge tensors",
            )
        if rng is not None:
            raise op_error(
                TypeError, op, f"{op}(): range is only supported with an int number of bins"
            )
        for e in edge_list:
            if e.dtype is not x.dtype:
                raise op_error(
                    RuntimeError,
                    op,
                    f"{op}: input tensor and bins tensors should have the same dtype, but got "
                    f"input {x.dtype.legacy_name} and bins {e.dtype.legacy_name}",
                )
            if e.ndim != 1 or e.shape[0] < 1:
                raise op_error(
                    RuntimeError,
                    op,
                    f"{op}: bins tensor should have one dimension and at least 1 element",
                )
        edges = [e.detach() for e in edge_list]
    else:
        counts = [int(bins)] * d if not isinstance(bins, (list, tuple)) else [int(b) for b in bins]
        if len(counts) != d:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: expected {d} bin counts for each of the {d} input dimensions, but got "
                f"{len(counts)} bin counts",
            )
        if any(c <= 0 for c in counts):
            raise op_error(
                RuntimeError,
                op,
                f"{op}: bins must be > 0, but got {min(counts)} for dimension "
                f"{counts.index(min(counts))}",
            )
        if rng is not None and len(rng) != 2 * d:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: for a {d}-dimensional histogram range should have {2 * d} elements, "
                f"but got {len(rng)}",
            )
        edges = []
        for k in range(d):
            col = x[:, k].detach()
            lo, hi = _outer_edges(col, None if rng is None else rng[2 * k : 2 * k + 2], op)
            edges.append(C.linspace(lo, hi, counts[k] + 1, dtype=x.dtype, device=x.device))
    sizes = [e.shape[0] - 1 for e in edges]
    hist_dtype = x.dtype if weight is None else weight.dtype
    if weight is not None:
        if tuple(weight.shape) != (n,):
            raise op_error(
                RuntimeError,
                op,
                f"{op}: if weight tensor is provided it should have the same shape as the "
                "input tensor excluding its innermost dimension",
            )
        if weight.dtype is not x.dtype:
            raise op_error(
                RuntimeError,
                op,
                f"{op}: if weight tensor is provided, input tensor and weight tensor should "
                "have the same dtype",
            )
    total = 1
    for s in sizes:
        total *= s
    if min(sizes, default=1) <= 0 or n == 0:
        hist = C.zeros(*sizes, dtype=hist_dtype, device=x.device)
    else:
        lin = C.zeros(n, dtype=dt.int64, device=x.device)
        keep = C.ones(n, dtype=dt.bool_, device=x.device)
        for k in range(d):
            pos, inside = _bin_positions(x[:, k].detach(), edges[k])
            lin = lin * sizes[k] + pos
            keep = keep & inside
        w = C.ones(n, dtype=hist_dtype, device=x.device) if weight is None else weight.detach()
        w = E.where(keep, w, C.zeros((), dtype=hist_dtype, device=x.device))
        hist = C.zeros(total, dtype=hist_dtype, device=x.device).index_add(0, lin, w)
        hist = S.reshape(hist, tuple(sizes))
    if density:
        hist = hist / hist.sum()
        for k, e in enumerate(edges):
            shape = [1] * d
            shape[k] = sizes[k]
            hist = hist / S.reshape(e[1:] - e[:-1], tuple(shape))
    return hist, edges


@public(method=True)
def histogram(
    input: Tensor,
    bins: Any = 100,
    *,
    range: Sequence[float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
    out: Any = None,
) -> Any:
    """The histogram of `input`'s entries: ``(hist, bin_edges)``. `bins` is a count of
    equal-width bins over `range` (default: the data's min and max) or a 1-d tensor of
    increasing edges; `weight` weighs each entry; `density` normalizes to a density.

    >>> import lazytorch
    >>> lazytorch.histogram(lazytorch.tensor([0.0, 1.0, 1.0]), 2, range=(0.0, 2.0))
    histogram(hist=tensor([1., 2.]), bin_edges=tensor([0., 1., 2.]))
    """
    x = tensor_arg(input, "histogram")
    _check_float(x, "histogram")
    if weight is not None and tuple(weight.shape) != tuple(x.shape):
        raise op_error(
            RuntimeError,
            "histogram",
            "torch.histogram: if weight tensor is provided it should have the same shape as "
            "the input tensor",
        )
    points = S.reshape(x, (x.numel(), 1))
    w = None if weight is None else S.reshape(weight, (x.numel(),))
    if isinstance(bins, Tensor):
        bins_arg: Any = [bins]
    else:
        bins_arg = int(bins)
    hist, edges = _histdd("torch.histogram", points, bins_arg, range, w, density)
    result = histogram_result(hist, edges[0])
    if out is not None:
        h, e = out
        return histogram_result(
            _into_out(result.hist, h, "histogram"), _into_out(result.bin_edges, e, "histogram")
        )
    return result


@public()
def histogramdd(
    input: Tensor,
    bins: Any,
    range: Sequence[float] | None = None,
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """The histogram of the points in `input`'s last dimension (``(..., D)``):
    ``(hist, bin_edges)``, hist of D dims, bin_edges a tuple of D edge tensors. `bins`: one
    count, D counts, or D 1-d tensors of edges; `range`: 2*D floats (per dim min, max).

    >>> import lazytorch
    >>> p = lazytorch.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    >>> lazytorch.histogramdd(p, bins=2).hist
    tensor([[1., 0.],
            [1., 1.]])
    """
    x = tensor_arg(input, "histogramdd")
    if x.ndim < 2:
        raise op_error(
            RuntimeError,
            "histogramdd",
            f"torch.histogramdd: input tensor should have at least 2 dimensions, but got {x.ndim}",
        )
    d = x.shape[-1]
    points = S.reshape(x, (-1, d))
    w = None
    if weight is not None:
        if tuple(weight.shape) != tuple(x.shape[:-1]):
            raise op_error(
                RuntimeError,
                "histogramdd",
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension",
            )
        w = S.reshape(weight, (points.shape[0],))
    hist, edges = _histdd("torch.histogramdd", points, bins, range, w, density)
    return histogramdd_result(hist, tuple(edges))


# -- unique_consecutive ---------------------------------------------------------------------------
@public(method=True)
def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """Each run of equal consecutive entries (or slices along `dim`) collapsed to one;
    optionally where each entry's run sits (`return_inverse`) and each run's length
    (`return_counts`). The result's size depends on the data: an implicit materialization.

    >>> import lazytorch
    >>> lazytorch.unique_consecutive(lazytorch.tensor([1, 1, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 1, 1]))
    """
    x = tensor_arg(input, "unique_consecutive")
    implicit_point(x, "unique_consecutive()")
    arr = np.asarray(_host_value(x._node), dtype=x.dtype.np).reshape(tuple(x.shape))
    if dim is None:
        flat = arr.reshape(-1)
        if flat.size:
            change = np.empty(flat.size, dtype=bool)
            change[0] = True
            change[1:] = flat[1:] != flat[:-1]
        else:
            change = np.zeros(0, dtype=bool)
        values = flat[change]
        inverse = (np.cumsum(change) - 1).reshape(arr.shape)
    else:
        axis = normalize_dim(dim, x.ndim, "unique_consecutive")
        moved = np.moveaxis(arr, axis, 0) if arr.ndim else arr.reshape(1)
        m = moved.shape[0]
        rows = moved.reshape(m, -1)
        change = np.ones(m, dtype=bool)
        if m > 1:
            change[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values = np.moveaxis(moved[change], 0, axis) if arr.ndim else moved[change]
        inverse = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, change.size))
    out = [C.tensor(np.ascontiguousarray(values), dtype=x.dtype, device=x.device)]
    if return_inverse:
        out.append(C.tensor(np.array(inverse, dtype=np.int64), device=x.device))
    if return_counts:
        out.append(C.tensor(np.array(counts, dtype=np.int64), device=x.device))
    return out[0] if len(out) == 1 else tuple(out)


# -- nanmedian, nanquantile ---------------------------------------------------------------------
@public(method=True)
def nanmedian(
    input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None
) -> Any:
    """The lower median ignoring NaN (of all entries, or ``(values, indices)`` along `dim`);
    NaN where every entry considered is NaN. Among equal values the index is the first in
    stable sorted order (torch's selection picks among ties in its own way, which agrees
    where values are distinct); a row of NaN only gives index 0 here (torch: unspecified).

    >>> import lazytorch
    >>> lazytorch.nanmedian(lazytorch.tensor([3.0, float("nan"), 1.0, 2.0]))
    tensor(2.)
    """
    x = tensor_arg(input, "nanmedian")
    if x.dtype is dt.bool_:
        raise op_error(
            NotImplementedError,
            "nanmedian",
            f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for 'Bool'",
        )
    flat = dim is None
    if flat and out is not None:  # torch's overload without dim takes no out=
        raise TypeError('nanmedian() missing 1 required positional arguments: "dim"')
    if flat:
        if x.numel() == 0:
            return C.full((), math.nan, dtype=x.dtype, device=x.device)
        src, axis = S.reshape(x, (-1,)), 0
    else:
        axis = normalize_dim(dim, max(x.ndim, 1), "nanmedian")
        src = x if x.ndim else S.reshape(x, (1,))
        if src.shape[axis] == 0:
            raise op_error(
                IndexError,
                "nanmedian",
                f"nanmedian(): Expected reduction dim {axis} to have non-zero size.",
            )
    values, indices = sort(src, axis, stable=True)  # NaN last
    if x.dtype.is_floating_point:
        count = (~src.isnan()).sum(axis, keepdim=True)
        k = ((count - 1).clamp(min=0)) // 2
    else:
        k = C.full((1,) * src.ndim, (src.shape[axis] - 1) // 2, dtype=dt.int64, device=x.device)
        shape = list(src.shape)
        shape[axis] = 1
        k = k.expand(*shape)
    v = values.gather(axis, k)
    i = indices.gather(axis, k)
    if flat:  # torch's overloads: NanmedianBackward0, and with a dim NanmedianBackward1
        return name_grad_fn(S.reshape(v, ()), "NanmedianBackward0", input)
    if not keepdim or x.ndim == 0:
        v, i = v.squeeze(axis), i.squeeze(axis)
        if x.ndim == 0:
            v, i = S.reshape(v, ()), S.reshape(i, ())
    v = name_grad_fn(v, "NanmedianBackward1", input)
    return _into_outs(nanmedian_result(v, i), out, "nanmedian")


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@public(method=True)
def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """`quantile` ignoring NaN: the q-th quantiles (q a number or a 1-d tensor in [0, 1])
    of the non-NaN entries, of all or along `dim`; NaN where all are NaN.

    >>> import lazytorch
    >>> lazytorch.nanquantile(lazytorch.tensor([0.0, float("nan"), 1.0, 2.0]), 0.5)
    tensor(1.)
    """
    x = tensor_arg(input, "nanquantile")
    op = "quantile"
    if x.dtype not in (dt.float32, dt.float64):
        raise op_error(
            RuntimeError,
            "nanquantile",
            f"{op}() input tensor must be either float or double dtype, got {x.dtype.legacy_name}",
        )
    if interpolation not in _INTERPOLATIONS:
        raise op_error(
            RuntimeError,
            "nanquantile",
            f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
            f"Got {interpolation}",
        )
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        qv = float(q)
        if not 0 <= qv <= 1:
            raise op_error(
                RuntimeError, "nanquantile", f"{op}() q must be in the range [0, 1] but got {qv}"
            )
        qs = C.full((1,), qv, dtype=x.dtype, device=x.device)
    else:
        if q.ndim > 1:
            raise op_error(RuntimeError, "nanquantile", f"{op}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise op_error(
                RuntimeError,
                "nanquantile",
                f"{op}() q tensor must be same dtype as the input tensor",
            )
        qs = S.reshape(q.detach(), (-1,))
        if qs.numel() and bool(((qs < 0) | (qs > 1)).any().item()):
            raise op_error(
                RuntimeError, "nanquantile", f"{op}() q values must be in the range [0, 1]"
            )
    if dim is None:
        src, axis = S.reshape(x, (-1,)), 0
    else:
        axis = normalize_dim(dim, max(x.ndim, 1), "nanquantile")
        src = x if x.ndim else S.reshape(x, (1,))
    if src.shape[axis] == 0:
        raise op_error(
            RuntimeError,
            "nanquantile",
            f"{op}() input tensor must be non-empty",
        )
    srt = sort(src, axis).values.movedim(axis, -1)  # (..., n), NaN last
    count = (~srt.isnan()).sum(-1, keepdim=True).to(x.dtype)  # (..., 1)
    ranks = qs * (count - 1)  # (..., nq)
    ranks = E.where(ranks < 0, C.zeros((), dtype=x.dtype, device=x.device), ranks)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    vals = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = (
            C.full((), 0.5, dtype=x.dtype, device=x.device).expand(*ranks.shape)
            if interpolation == "midpoint"
            else ranks - below.to(x.dtype)
        )
        above = srt.gather(-1, ranks.ceil().long())
        vals = E.lerp(vals, above, weights)
    vals = vals.movedim(-1, 0)  # (nq, ...)
    if keepdim:
        if dim is None:
            vals = S.reshape(vals, (vals.shape[0], *([1] * x.ndim)))
        elif x.ndim:
            vals = vals.unsqueeze(axis + 1)
    elif x.ndim == 0 and dim is not None:
        vals = S.reshape(vals, (vals.shape[0],))
    result = vals[0] if scalar_q else vals
    return _into_out(result, out, "nanquantile")
