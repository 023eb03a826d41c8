"""Ops composed entirely of other public ops: no primitive and no rule of their own.

Each one is torch's function written in terms of lazytorch's (so it is lazy, fuses, and is
differentiable wherever its parts are). They are the everyday helpers scripts reach for —
comparisons of whole tensors, index grids, small numeric identities — gathered here so the
files of the primitive-backed ops stay about their primitives.

>>> import lazytorch
>>> lazytorch.allclose(lazytorch.tensor([1.0, 2.0]), lazytorch.tensor([1.0, 2.0 + 1e-9]))
True
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
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import ComplexBase, normalize_dim, result_type, tensor_arg
from lazytorch.ops.creation import into_out
from lazytorch.ops.linalg import cosine_similarity as cosine_similarity
from lazytorch.ops.linalg import norm
from lazytorch.ops.sorting import kthvalue, kthvalue_result
from lazytorch.tensor import Tensor

__all__ = [
    "allclose",
    "atleast_3d",
    "block_diag",
    "bucketize",
    "cartesian_prod",
    "cdist",
    "column_stack",
    "copysign",
    "cosine_similarity",
    "cross",
    "cumprod",
    "deg2rad",
    "diff",
    "dist",
    "dstack",
    "equal",
    "float_power",
    "heaviside",
    "isclose",
    "isin",
    "kron",
    "logit",
    "median",
    "meshgrid",
    "quantile",
    "rad2deg",
    "repeat_interleave",
    "rot90",
    "row_stack",
    "searchsorted",
    "signbit",
    "sinc",
    "tensor_split",
    "tril_indices",
    "triu_indices",
]


# -- comparing whole tensors ------------------------------------------------------------------
@public(method=True)
def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal only to
    themselves; NaN equal to NaN only with `equal_nan`).

    >>> import lazytorch
    >>> lazytorch.isclose(lazytorch.tensor([1.0, float("nan")]), lazytorch.tensor([1.0, float("nan")]))
    tensor([ True, False])
    """
    a, b = tensor_arg(input, "isclose"), tensor_arg(other, "isclose", "other")
    if a.dtype is not b.dtype:
        raise op_error(
            RuntimeError,
            "isclose",
            f"{a.dtype.legacy_name} did not match {b.dtype.legacy_name}",
        )
    same = a == b
    if not a.dtype.is_floating_point:
        if a.dtype is dt.bool_:
            return same
        a, b = a.double(), b.double()
    close = (a - b).abs() <= atol + rtol * b.abs()
    close = same | (close & a.isfinite() & b.isfinite())
    if equal_nan:
        close = close | (a.isnan() & b.isnan())
    return close


@public(method=True)
def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether `isclose` holds everywhere (a Python bool: an implicit materialization)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


@public(method=True)
def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same shape and values (a Python bool).

    >>> import lazytorch
    >>> lazytorch.equal(lazytorch.tensor([1, 2]), lazytorch.tensor([1, 2]))
    True
    """
    a, b = tensor_arg(input, "equal"), tensor_arg(other, "equal", "other")
    if tuple(a.shape) != tuple(b.shape):
        return False
    return bool((a == b).all().item())


@public(method=True)
def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    """Whether each of `elements` occurs in `test_elements` (bool, `elements`' shape).

    >>> import lazytorch
    >>> lazytorch.isin(lazytorch.tensor([1, 2, 3]), lazytorch.tensor([2, 5]))
    tensor([False,  True, False])
    """
    e = elements if isinstance(elements, Tensor) else C.tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else C.tensor(test_elements)
    hit = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return ~hit if invert else hit


# -- index grids -----------------------------------------------------------------------------
@public()
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors (``indexing="ij"``, torch's default, or "xy").

    >>> import lazytorch
    >>> i, j = lazytorch.meshgrid(lazytorch.arange(2), lazytorch.arange(3), indexing="ij")
    >>> j
    tensor([[0, 1, 2],
            [0, 1, 2]])
    """
    ts = (
        list(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple))
        else list(tensors)
    )
    if indexing not in (None, "ij", "xy"):
        raise op_error(
            RuntimeError,
            "meshgrid",
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}',
        )
    for t in ts:
        if t.ndim > 1:
            raise op_error(
                RuntimeError,
                "meshgrid",
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D",
            )
    ts = [t.reshape(-1) for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = [
        t.reshape(tuple(-1 if k == i else 1 for k in range(len(ts)))).expand(shape)
        for i, t in enumerate(ts)
    ]
    if swap:  # built as (y, x, ...) of shape (ny, nx, ...): numpy's "xy" grids, reordered
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _triangle_indices(
    row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any
) -> Tensor:
    import numpy as np

    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return C.tensor(np.stack([r, c]).astype(np.int64), dtype=dtype or dt.int64, device=device)


@public()
def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The (2, N) coordinates of a row x col matrix's lower triangle (diagonal `offset`).

    >>> import lazytorch
    >>> lazytorch.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices(row, col, offset, True, dtype, device)


@public()
def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The (2, N) coordinates of a row x col matrix's upper triangle (diagonal `offset`)."""
    return _triangle_indices(row, col, offset, False, dtype, device)


@public()
def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
    out: Any = None,
) -> Tensor:
    """Where each value would be inserted in the last dim of `sorted_sequence` to keep it
    sorted: the count of entries below it (``right=True``: at or below it).

    >>> import lazytorch
    >>> lazytorch.searchsorted(lazytorch.tensor([1, 3, 5]), lazytorch.tensor([0, 3, 6]))
    tensor([0, 1, 3])
    """
    seq = tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    right = right or side == "right"
    scalar = not isinstance(input, Tensor)
    v = C.tensor(input, dtype=seq.dtype, device=seq.device) if scalar else input
    if seq.ndim == 1:
        below = seq <= v.unsqueeze(-1) if right else seq < v.unsqueeze(-1)
    else:
        below = (
            seq.unsqueeze(-2) <= v.unsqueeze(-1) if right else seq.unsqueeze(-2) < v.unsqueeze(-1)
        )
    idx = below.sum(-1)
    idx = idx.int() if out_int32 else idx
    return into_out(idx, out, "searchsorted")


@public()
def bucketize(
    input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False, out: Any = None
) -> Tensor:
    """The bucket of each value among 1-d sorted `boundaries` (``right`` as torch's).

    >>> import lazytorch
    >>> lazytorch.bucketize(lazytorch.tensor([0.5, 1.0, 9.0]), lazytorch.tensor([1.0, 5.0]))
    tensor([0, 0, 2])
    """
    if boundaries.ndim != 1:
        raise op_error(
            RuntimeError,
            "bucketize",
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})",
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# -- arranging tensors ------------------------------------------------------------------------
@public()
def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Each entry repeated `repeats` times along `dim` (flattened when dim is None).

    A tensor of per-entry counts makes the result's size depend on data: that is an implicit
    materialization of the counts.

    >>> import lazytorch
    >>> lazytorch.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=0)
    tensor([[1, 2],
            [1, 2],
            [3, 4],
            [3, 4]])
    """
    if isinstance(input, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return input.repeat_interleave(repeats, dim, output_size=output_size)  # type: ignore[attr-defined, no-any-return]
    if repeats is None:  # repeat_interleave(counts): indices repeated by their counts
        counts = tensor_arg(input, "repeat_interleave")
        return repeat_interleave(C.arange(counts.shape[0], device=counts.device), counts)
    x = tensor_arg(input, "repeat_interleave")
    if dim is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_dim(dim, max(x.ndim, 1), "repeat_interleave")
        if x.ndim == 0:
            x = x.reshape(1)
    size = x.shape[axis]
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        if repeats.ndim != 1 or repeats.shape[0] != size:
            raise op_error(
                RuntimeError,
                "repeat_interleave",
                "repeats must have the same size as input along dim",
            )
        counts = [int(c) for c in repeats.tolist()]
        if any(c < 0 for c in counts):
            raise op_error(RuntimeError, "repeat_interleave", "repeats can not be negative")
        idx = C.tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype=dt.int64)
        return x.index_select(axis, idx.to(x.device))
    k = int(repeats.item()) if isinstance(repeats, Tensor) else int(repeats)
    if k < 0:
        raise op_error(RuntimeError, "repeat_interleave", "repeats can not be negative")
    shape = tuple(x.shape)
    wide = x.unsqueeze(axis + 1).expand(*shape[: axis + 1], k, *shape[axis + 1 :])
    return wide.reshape(*shape[:axis], size * k, *shape[axis + 1 :])


@public()
def atleast_3d(*tensors: Any) -> Any:
    """Each tensor viewed with at least three dims (as numpy: (N,) -> (1, N, 1)).

    >>> import lazytorch
    >>> lazytorch.atleast_3d(lazytorch.ones(4)).shape
    lazytorch.Size([1, 4, 1])
    """
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors

    def one(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        if t.ndim == 2:
            return t.unsqueeze(-1)
        return t

    out = tuple(one(t) for t in ts)
    return out[0] if len(out) == 1 and not isinstance(tensors[0], (list, tuple)) else out


@public()
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """1-d (and 0-d) tensors as columns, side by side with 2-d ones.

    >>> import lazytorch
    >>> lazytorch.column_stack((lazytorch.tensor([1, 2]), lazytorch.tensor([3, 4])))
    tensor([[1, 3],
            [2, 4]])
    """
    return S.cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


@public()
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along a third dim (after `atleast_3d`).

    >>> import lazytorch
    >>> lazytorch.dstack((lazytorch.ones(2, 3), lazytorch.zeros(2, 3))).shape
    lazytorch.Size([2, 3, 2])
    """
    return S.cat(list(atleast_3d(list(tensors))), 2)


@public()
def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """`vstack` under numpy's other name."""
    return S.vstack(tensors)


@public(method=True)
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The n-th forward difference along `dim` (bools: ``!=``).

    >>> import lazytorch
    >>> lazytorch.diff(lazytorch.tensor([1, 4, 9, 16]), n=2)
    tensor([2, 2])
    """
    x = tensor_arg(input, "diff")
    if x.ndim == 0:
        raise op_error(RuntimeError, "diff", "diff expects input to be at least one-dimensional")
    axis = normalize_dim(dim, x.ndim, "diff")
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = S.cat([p if p.ndim == x.ndim else p.reshape(1) for p in parts], axis)
    for _ in range(n):
        size = x.shape[axis]
        hi, lo = x.narrow(axis, 1, max(size - 1, 0)), x.narrow(axis, 0, max(size - 1, 0))
        x = hi != lo if x.dtype is dt.bool_ else hi - lo
    return x


# -- small numeric identities -----------------------------------------------------------------
@public(method=True, inplace=True)
def cumprod(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:
    """Running product along `dim`: the product over a lower-triangular mask (n² work along
    the dim; exact with zeros and negative values, unlike ``exp(cumsum(log))``).

    >>> import lazytorch
    >>> lazytorch.cumprod(lazytorch.tensor([1.0, -2.0, 0.0, 4.0]), 0)
    tensor([ 1., -2., -0., -0.])
    """
    x = tensor_arg(input, "cumprod")
    if dtype is not None:
        x = x.to(dtype)
    elif not x.dtype.is_floating_point:
        x = x.long()
    if x.ndim == 0:
        y = x.clone()
    else:
        axis = normalize_dim(dim, x.ndim, "cumprod")
        n = x.shape[axis]
        moved = x.movedim(axis, -1)
        keep = C.ones(n, n, dtype=dt.bool_, device=x.device).tril()  # keep[i, j]: j <= i
        rows = E.where(keep, moved.unsqueeze(-2), C.ones((), dtype=x.dtype, device=x.device))
        y = R.prod(rows, -1).movedim(-1, axis)
    return into_out(name_grad_fn(y, "CumprodBackward0", input), out, "cumprod")


@public(method=True, inplace=True)
def deg2rad(input: Tensor) -> Tensor:
    x = tensor_arg(input, "deg2rad")
    return (x if x.dtype.is_floating_point else x.float()) * (math.pi / 180.0)


@public(method=True, inplace=True)
def rad2deg(input: Tensor) -> Tensor:
    x = tensor_arg(input, "rad2deg")
    return (x if x.dtype.is_floating_point else x.float()) * (180.0 / math.pi)


@public(method=True)
def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0 too).

    >>> import lazytorch
    >>> lazytorch.signbit(lazytorch.tensor([-0.0, 0.0, -2.0]))
    tensor([ True, False,  True])
    """
    x = tensor_arg(input, "signbit")
    if not x.dtype.is_floating_point:
        return x < 0
    # -0.0 < 0 is False; 1 / -0.0 = -inf tells it apart (a NaN's sign bit is not read)
    return (x < 0) | ((x == 0) & (1.0 / x < 0))


@public(method=True, inplace=True)
def copysign(input: Any, other: Any) -> Tensor:
    """|input| with the sign (bit) of `other`.

    >>> import lazytorch
    >>> lazytorch.copysign(lazytorch.tensor([1.0, -2.0]), -0.0)
    tensor([-1., -2.])
    """
    a = input if isinstance(input, Tensor) else C.tensor(input)
    mag = (a if a.dtype.is_floating_point else a.float()).abs()
    o = other if isinstance(other, Tensor) else C.tensor(float(other))
    return E.where(signbit(o), -mag, mag)


@public(method=True, inplace=True)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 below zero, 1 above, `values` at zero.

    >>> import lazytorch
    >>> lazytorch.heaviside(lazytorch.tensor([-1.0, 0.0, 2.0]), lazytorch.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    x = tensor_arg(input, "heaviside")
    if x.dtype is not values.dtype:
        raise op_error(
            RuntimeError,
            "heaviside",
            "heaviside is not yet implemented for tensors with different dtypes",
        )
    one = C.ones((), dtype=x.dtype, device=x.device)
    zero = C.zeros((), dtype=x.dtype, device=x.device)
    return E.where(x == 0, values, E.where(x > 0, one, zero))


@public(method=True)
def float_power(input: Any, exponent: Any) -> Tensor:
    """`pow` computed in float64."""
    a = input.double() if isinstance(input, Tensor) else float(input)
    b = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
    return E.pow(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else C.tensor(a**b)


@public(method=True, inplace=True)
def sinc(input: Tensor) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0.

    >>> import lazytorch
    >>> lazytorch.sinc(lazytorch.tensor([0.0, 1.0])).abs() < 1e-6
    tensor([False,  True])
    """
    x = tensor_arg(input, "sinc")
    x = x if x.dtype.is_floating_point else x.float()
    px = x * math.pi
    safe = E.where(x == 0, C.ones((), dtype=x.dtype, device=x.device), px)
    return E.where(x == 0, C.ones((), dtype=x.dtype, device=x.device), safe.sin() / safe)


@public(method=True, inplace=True)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, p clamped to [eps, 1 - eps] when eps is given.

    >>> import lazytorch
    >>> lazytorch.logit(lazytorch.tensor([0.5, 0.0]), eps=0.25)
    tensor([ 0.0000, -1.0986])
    """
    x = tensor_arg(input, "logit")
    x = x if x.dtype.is_floating_point else x.float()
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


@public(method=True)
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other``.

    >>> import lazytorch
    >>> lazytorch.dist(lazytorch.tensor([0.0, 0.0]), lazytorch.tensor([3.0, 4.0]))
    tensor(5.)
    """
    return norm(input - other, p)


@public()
def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """Pairwise p-norm distances between the rows of x1 (…, P, M) and x2 (…, R, M).

    >>> import lazytorch
    >>> lazytorch.cdist(lazytorch.tensor([[0.0, 0.0]]), lazytorch.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    a, b = tensor_arg(x1, "cdist"), tensor_arg(x2, "cdist", "x2")
    if a.ndim < 2 or b.ndim < 2:
        raise op_error(
            RuntimeError, "cdist", f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D"
        )
    if a.shape[-1] != b.shape[-1]:
        raise op_error(
            RuntimeError,
            "cdist",
            f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}",
        )
    d = (a.unsqueeze(-2) - b.unsqueeze(-3)).abs()
    if p == 0:
        return (d != 0).to(a.dtype).sum(-1)
    if p == math.inf:
        return d.amax(-1)
    if p == 2:
        return d.square().sum(-1).sqrt()
    if p == 1:
        return d.sum(-1)
    return d.pow(p).sum(-1).pow(1.0 / p)


# -- order statistics -------------------------------------------------------------------------
@public(method=True)
def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (of all entries, or ``(values, indices)`` along `dim`); NaN if any
    entry considered is NaN, as torch.

    >>> import lazytorch
    >>> lazytorch.median(lazytorch.tensor([3.0, 1.0, 4.0, 1.0]))
    tensor(1.)
    """
    x = tensor_arg(input, "median")
    flat = dim is None
    if flat:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_dim(dim, max(x.ndim, 1), "median")
    n = x.shape[axis] if x.ndim else 1
    if n == 0:
        raise op_error(
            IndexError, "median", f"median(): Expected reduction dim {axis} to have non-zero size."
        )
    values, indices = kthvalue(x, (n + 1) // 2, axis if x.ndim else 0, keepdim=keepdim)
    if x.dtype.is_floating_point:
        # NaN sorts last: where any is present, the NaN (the row's max) is the median
        has_nan = x.isnan().any(axis, keepdim=keepdim) if x.ndim else x.isnan()
        values = E.where(has_nan, C.full((), math.nan, dtype=x.dtype, device=x.device), values)
        last = x.argmax(axis, keepdim=keepdim) if x.ndim else indices
        indices = E.where(has_nan, last, indices)
    if flat:  # torch's overloads: median() is MedianBackward0, median(dim) MedianBackward1
        return name_grad_fn(values.reshape(()), "MedianBackward0", input)
    return kthvalue_result(name_grad_fn(values, "MedianBackward1", input), indices)


@public(method=True)
def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Any = None,
) -> Tensor:
    """The q-th quantiles (q a number or a 1-d tensor in [0, 1]) of all entries or along
    `dim`, interpolated between order statistics as torch's `interpolation` says.

    >>> import lazytorch
    >>> lazytorch.quantile(lazytorch.tensor([0.0, 1.0, 2.0, 10.0]), 0.5)
    tensor(1.5000)
    """
    x = tensor_arg(input, "quantile")
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "quantile",
            f"quantile() input tensor must be either float or double dtype, got {x.dtype.legacy_name}",
        )
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise op_error(
            RuntimeError,
            "quantile",
            f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {interpolation}",
        )
    scalar_q = not isinstance(q, Tensor)
    qs = C.tensor([float(q)] if scalar_q else q.reshape(-1).tolist(), dtype=dt.float64)
    if bool(((qs < 0) | (qs > 1)).any().item()):
        raise op_error(RuntimeError, "quantile", "quantile() q values must be in the range [0, 1]")
    if dim is None:
        src, axis = x.reshape(-1), 0
    else:
        src, axis = x, normalize_dim(dim, max(x.ndim, 1), "quantile")
    if src.ndim == 0:
        src = src.reshape(1)
    n = src.shape[axis]
    srt = src.sort(axis).values.movedim(axis, -1)  # (..., n), NaN last
    pos = qs * (n - 1)
    lo = pos.floor()
    hi = pos.ceil()
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = pos.round()
    frac = (pos - lo).to(x.dtype)
    if interpolation == "midpoint":
        frac = E.where(hi > lo, C.full((), 0.5, dtype=x.dtype), frac)
    a = srt.index_select(-1, lo.long())
    b = srt.index_select(-1, hi.long())
    vals = a + (b - a) * frac  # (..., nq)
    has_nan = srt.isnan().any(-1, keepdim=True)
    vals = E.where(has_nan, C.full((), math.nan, dtype=x.dtype, device=x.device), vals)
    vals = vals.movedim(-1, 0)  # (nq, ...)
    if keepdim:
        vals = vals.unsqueeze(axis + 1) if dim is not None else vals.reshape(-1, *([1] * x.ndim))
    result = vals[0] if scalar_q else vals
    return into_out(result, out, "quantile")


# -- splitting and combining -------------------------------------------------------------------
@public(method=True)
def tensor_split(input: Tensor, sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into `n` near-equal parts (the first ``size % n`` one longer) or at the given
    indices, along `dim` (views).

    >>> import lazytorch
    >>> [t.tolist() for t in lazytorch.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    x = tensor_arg(input, "tensor_split")
    axis = normalize_dim(dim, x.ndim, "tensor_split")
    size = x.shape[axis]
    sec = sections  # a count, or (torch's other overloads) a sequence or tensor of indices
    if isinstance(sec, Tensor):
        sec = sec.item() if sec.ndim == 0 else sec.tolist()
    if isinstance(sec, int):
        if sec <= 0:
            raise op_error(
                RuntimeError,
                "tensor_split",
                f"number of sections must be larger than 0, got {sec}",
            )
        q, r = divmod(size, sec)
        bounds, start = [], 0
        for k in range(sec):
            start += q + (1 if k < r else 0)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = list(sec)
    out, start = [], 0
    for stop in [*bounds, size]:
        lo, hi = min(max(start, 0), size), min(max(stop, 0), size)
        out.append(x.narrow(axis, lo, max(hi - lo, 0)))
        start = stop
    return tuple(out)


@public(method=True)
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along `dim` (None: the first dim of size 3).

    >>> import lazytorch
    >>> lazytorch.cross(lazytorch.tensor([1, 0, 0]), lazytorch.tensor([0, 1, 0]), dim=0)
    tensor([0, 0, 1])
    """
    a, b = tensor_arg(input, "cross"), tensor_arg(other, "cross", "other")
    if dim is None:
        sizes = [k for k, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise op_error(RuntimeError, "cross", "no dimension of size 3 in input")
        dim = sizes[0]
    axis = normalize_dim(dim, a.ndim, "cross")
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise op_error(
            RuntimeError,
            "cross",
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[axis]} and "
            f"{b.shape[axis]}",
        )

    def comp(t: Tensor, i: int) -> Tensor:
        return t.narrow(axis, i, 1)

    parts = [
        comp(a, 1) * comp(b, 2) - comp(a, 2) * comp(b, 1),
        comp(a, 2) * comp(b, 0) - comp(a, 0) * comp(b, 2),
        comp(a, 0) * comp(b, 1) - comp(a, 1) * comp(b, 0),
    ]
    return S.cat(parts, axis)


@public(method=True)
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (inputs of fewer dims gain leading size-1 dims).

    >>> import lazytorch
    >>> lazytorch.kron(lazytorch.tensor([1, 2]), lazytorch.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    a, b = tensor_arg(input, "kron"), tensor_arg(other, "kron", "other")
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + tuple(a.shape))
    b = b.reshape((1,) * (nd - b.ndim) + tuple(b.shape))
    wide_a = a.reshape([s for d in a.shape for s in (d, 1)])
    wide_b = b.reshape([s for d in b.shape for s in (1, d)])
    return (wide_a * wide_b).reshape([x * y for x, y in zip(a.shape, b.shape)])


@public(method=True)
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees `k` times in the plane of `dims` (from the first towards the
    second).

    >>> import lazytorch
    >>> lazytorch.rot90(lazytorch.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    x = tensor_arg(input, "rot90")
    if len(dims) != 2:
        raise op_error(
            RuntimeError, "rot90", f"expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if x.ndim < 2:
        raise op_error(
            RuntimeError, "rot90", f"expected total dims >= 2, but got total dims = {x.ndim}"
        )
    d0, d1 = (normalize_dim(d, x.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise op_error(
            RuntimeError,
            "rot90",
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}",
        )
    k %= 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1)
    if k == 2:
        return x.flip(d0, d1)
    if k == 3:
        return x.flip(d0).transpose(d0, d1)
    return x.clone()


@public()
def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as a row, or 2-d) along the diagonal of one matrix.

    >>> import lazytorch
    >>> lazytorch.block_diag(lazytorch.tensor([[1, 2]]), lazytorch.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    if not tensors:
        return C.zeros(1, 0)
    mats = []
    for t in tensors:
        if t.ndim > 2:
            raise op_error(
                RuntimeError,
                "block_diag",
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input has {t.ndim} dimensions",
            )
        mats.append(t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t)
    d = mats[0].dtype
    for m in mats[1:]:
        d = result_type(C.ones((), dtype=d), m) if m.dtype is not d else d
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        pad_l = C.zeros(r, left, dtype=d, device=m.device)
        pad_r = C.zeros(r, width - left - c, dtype=d, device=m.device)
        rows.append(S.cat([pad_l, m.to(d), pad_r], 1))
        left += c
    return S.cat(rows, 0)


@public()
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one entry from each 1-d tensor, one per row.

    >>> import lazytorch
    >>> lazytorch.cartesian_prod(lazytorch.tensor([1, 2]), lazytorch.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return S.stack([g.reshape(-1) for g in grids], 1)


@public(torch=False, method="repeat_interleave")
def _repeat_interleave_method(
    self: Tensor, repeats: Any, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    return repeat_interleave(self, repeats, dim, output_size=output_size)


# -- running reductions (n² along the dim: a masked reduction per prefix) ---------------------
def _prefixes(x: Tensor, axis: int, fill: float) -> Tensor:
    """(..., n, n) with row i holding entries 0..i of the dim (the rest `fill`), dim last."""
    m = x.movedim(axis, -1)
    n = m.shape[-1]
    keep = C.ones(n, n, dtype=dt.bool_, device=x.device).tril()
    return E.where(keep, m.unsqueeze(-2), C.full((), fill, dtype=m.dtype, device=x.device))


@public(method=True)
def logcumsumexp(input: Tensor, dim: int, *, out: Any = None) -> Tensor:
    """``log(cumsum(exp(input)))`` along `dim`, computed stably.

    >>> import lazytorch
    >>> lazytorch.logcumsumexp(lazytorch.tensor([0.0, 0.0]), 0)
    tensor([0.0000, 0.6931])
    """
    x = tensor_arg(input, "logcumsumexp")
    if x.ndim == 0:
        y = x.clone()
    else:
        axis = normalize_dim(dim, x.ndim, "logcumsumexp")
        y = R.logsumexp(_prefixes(x, axis, -math.inf), -1).movedim(-1, axis)
    return into_out(name_grad_fn(y, "LogcumsumexpBackward0", input), out, "logcumsumexp")


cummax_result = namedtuple("cummax", ["values", "indices"])
cummin_result = namedtuple("cummin", ["values", "indices"])


def _cumulative_extreme(input: Tensor, dim: int, largest: bool, op: str) -> Any:
    sort_result = cummax_result if largest else cummin_result
    x = tensor_arg(input, op)
    if x.ndim == 0:
        return sort_result(x.clone(), C.zeros((), dtype=dt.int64, device=x.device))
    axis = normalize_dim(dim, x.ndim, op)
    if x.dtype.is_floating_point:
        fill = -math.inf if largest else math.inf
    elif x.dtype is dt.bool_:
        fill = not largest
    else:
        import numpy as np

        lim = np.iinfo(x.dtype.np)
        fill = int(lim.min if largest else lim.max)
    rows = _prefixes(x, axis, fill)
    # torch reports the latest position of a tied extreme: search the reversed prefix
    rev = rows.flip(-1)
    found = R.max(rev, -1) if largest else R.min(rev, -1)
    n = rows.shape[-1]
    prefix_len = C.arange(n, device=x.device)
    # position k in the reversed row is n-1-k in the original; positions past the prefix
    # hold the fill, which loses to any entry, except ties with the fill value itself
    idx = (n - 1) - found.indices
    idx = E.minimum(idx, prefix_len)
    return sort_result(found.values.movedim(-1, axis), idx.movedim(-1, axis))


def _into_pair(result: Any, out: Any, op: str) -> Any:
    if out is None:
        return result
    values, indices = out
    return type(result)(into_out(result.values, values, op), into_out(result.indices, indices, op))


@public(method=True)
def cummax(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """Running maximum along `dim` and where it was taken (the latest of ties).

    >>> import lazytorch
    >>> lazytorch.cummax(lazytorch.tensor([1, 3, 3, 2]), 0).indices
    tensor([0, 1, 2, 2])
    """
    return _into_pair(_cumulative_extreme(input, dim, True, "cummax"), out, "cummax")


@public(method=True)
def cummin(input: Tensor, dim: int, *, out: Any = None) -> Any:
    """Running minimum along `dim` and where it was taken (the latest of ties)."""
    return _into_pair(_cumulative_extreme(input, dim, False, "cummin"), out, "cummin")


@public()
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` over the last dim.

    >>> import lazytorch
    >>> lazytorch.pairwise_distance(lazytorch.tensor([[0.0, 0.0]]), lazytorch.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    return norm(x1 - x2 + eps, p, dim=-1, keepdim=keepdim)


@public(method=True)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose `offset`-th diagonal (over the new dims `dim1`, `dim2`) holds the last
    dim of `input`.

    >>> import lazytorch
    >>> lazytorch.diag_embed(lazytorch.tensor([[1, 2]]))
    tensor([[[1, 0],
             [0, 2]]])
    """
    x = tensor_arg(input, "diag_embed")
    n = x.shape[-1] if x.ndim else 1
    if x.ndim == 0:
        x = x.reshape(1)
    size = n + abs(offset)
    rows = C.arange(size, device=x.device).unsqueeze(-1)
    cols = C.arange(size, device=x.device)
    on = (cols - rows) == offset
    pos = (rows if offset >= 0 else cols).expand(size, size)  # which entry lands there
    picked = x.index_select(-1, pos.clamp(max=n - 1).reshape(-1)).reshape(*x.shape[:-1], size, size)
    out = E.where(on, picked, C.zeros((), dtype=x.dtype, device=x.device))
    nd = out.ndim
    a, b = normalize_dim(dim1, nd, "diag_embed"), normalize_dim(dim2, nd, "diag_embed")
    if a == b:
        raise op_error(
            RuntimeError, "diag_embed", f"diagonal dimensions cannot be identical {dim1}, {dim2}"
        )
    return out.movedim((nd - 2, nd - 1), (a, b))
