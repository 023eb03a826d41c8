"""Small torch APIs real scripts call: linear-algebra helpers (addmv, addr, addbmm, inner,
vdot, diagflat, adjoint), splits (hsplit, vsplit, dsplit, unsafe_*), integer and float
helpers (gcd, lcm, ldexp, frexp, nextafter, unravel_index, gradient), creation (range,
asarray, frombuffer, fill, empty_strided, the signal windows), predicates, the real-tensor
forms of the complex helpers (conj, real, imag, angle, ...) and the ``*_copy`` functions.

Each is a composition of existing ops (no new primitives), so autograd and the backends
work as for any op.

>>> import lazytorch
>>> lazytorch.gcd(lazytorch.tensor([12, -9]), lazytorch.tensor([18, 6]))
tensor([6, 3])
>>> lazytorch.hann_window(4).tolist()
[0.0, 0.5, 1.0, 0.5]
"""

from __future__ import annotations

import math
import warnings
from builtins import range as _builtin_range
from collections.abc import Sequence
from typing import Any

from lazytorch import _config
from lazytorch._dtype_info import finfo
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ops import composite as CO
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import linalg as L
from lazytorch.ops import reduction as R
from lazytorch.ops import shape as S
from lazytorch.ops._core import ComplexBase, normalize_dim, result_type, tensor_arg, wrap
from lazytorch.ops.elementwise import _zero_gradient
from lazytorch.ops.linalg import _add_product
from lazytorch.ops.reduction import _into_out
from lazytorch.tensor import Tensor


# -- linear algebra helpers ------------------------------------------------------------------------
@public(method=True, inplace=True)
def addmv(
    input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """beta * input + alpha * (mat @ vec).

    >>> import lazytorch
    >>> lazytorch.addmv(lazytorch.ones(2), lazytorch.eye(2), lazytorch.tensor([1.0, 2.0]))
    tensor([2., 3.])
    """
    return _into_out(_add_product(input, L.mv(mat, vec), beta, alpha, "addmv"), out, "addmv")


@public(method=True, inplace=True)
def addr(
    input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1, out: Any = None
) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if tensor_arg(v, "addr", name).ndim != 1:
            raise op_error(
                RuntimeError, "addr", f"addr: Expected 1-D argument {name}, but got {v.ndim}-D"
            )
    if vec1.dtype is dt.bool_:
        raise op_error(NotImplementedError, "addr", "addr of bool tensors is not supported")
    prod = L.outer(vec1, vec2)
    return _into_out(_add_product(input, prod, beta, alpha, "addr"), out, "addr")


@public(method=True, inplace=True)
def addbmm(
    input: Tensor,
    batch1: Tensor,
    batch2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
    out: Any = None,
) -> Tensor:
    """beta * input + alpha * sum_b(batch1[b] @ batch2[b])."""
    prod = R.sum(L.bmm(batch1, batch2), 0)
    return _into_out(_add_product(input, prod, beta, alpha, "addbmm"), out, "addbmm")


@public(torch=False, method=True)
def ger(self: Tensor, vec2: Tensor) -> Tensor:
    """``Tensor.ger``: torch.outer's old name."""
    return L.outer(self, vec2)


@public(method=True)
def inner(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The sum of products over the last dims (a product with a 0-d operand)."""
    a, b = tensor_arg(input, "inner"), tensor_arg(other, "inner", "other")
    if a.ndim == 0 or b.ndim == 0:
        return _into_out(E.mul(a, b), out, "inner")
    if a.shape[-1] != b.shape[-1]:
        raise op_error(
            RuntimeError,
            "inner",
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(a.shape)} and {list(b.shape)}",
        )
    return _into_out(L.tensordot(a, b, ([-1], [-1])), out, "inner")


@public(method=True)
def vdot(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The dot product of two 1-D tensors (the first conjugated: a no-op on real ones)."""
    return L.dot(input, other, out=out)  # type: ignore[no-any-return]


@public(method=True)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D tensor with the flattened input on diagonal `offset`."""
    x = tensor_arg(input, "diagflat")
    return S.diag(S.reshape(x, -1), offset)


@public(method=True)
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view; real tensors: the transpose)."""
    x = tensor_arg(input, "adjoint")
    if x.ndim < 2:
        raise op_error(
            RuntimeError,
            "adjoint",
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got "
            f"{x.ndim}-D tensor.",
        )
    return S.transpose(x, -2, -1)


# -- splits -------------------------------------------------------------------------------------
def _dim_split(
    input: Tensor, sections: Any, dim: int, min_ndim: int, op: str
) -> tuple[Tensor, ...]:
    x = tensor_arg(input, op)
    if x.ndim < min_ndim:
        raise op_error(
            RuntimeError,
            op,
            f"torch.{op} requires a tensor with at least {min_ndim} dimension, but got a tensor "
            f"with {x.ndim} dimensions!",
        )
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = x.shape[dim]
        if sections == 0 or size % sections != 0:
            raise op_error(
                RuntimeError,
                op,
                f"torch.{op} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!",
            )
    return CO.tensor_split(x, sections, dim)  # type: ignore[no-any-return]


@public(method=True)
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 of a 1-D tensor) into equal parts or at indices."""
    x = tensor_arg(input, "hsplit")
    if x.ndim == 0:
        raise op_error(
            RuntimeError,
            "hsplit",
            "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
            "dimensions!",
        )
    return _dim_split(x, indices_or_sections, 1 if x.ndim > 1 else 0, 1, "hsplit")


@public(method=True)
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 0 (at least 2 dims)."""
    return _dim_split(input, indices_or_sections, 0, 2, "vsplit")


@public(method=True)
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dim 2 (at least 3 dims)."""
    return _dim_split(input, indices_or_sections, 2, 3, "dsplit")


@public(method=True)
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.chunk (lazytorch has no unchecked aliasing to skip)."""
    return S.chunk(input, chunks, dim)


@public(method=True)
def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split by a size."""
    return S.split(input, split_size, dim)


@public(method=True)
def unsafe_split_with_sizes(
    input: Tensor, split_sizes: Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """torch.split_with_sizes."""
    return S.split_with_sizes(input, split_sizes, dim)


# -- integer helpers ---------------------------------------------------------------------------
# Euclid's algorithm takes at most n steps for values below Fibonacci(n + 2).
_EUCLID_STEPS = {
    dt.uint8: 13,
    dt.int8: 12,
    dt.int16: 23,
    dt.int32: 46,
    dt.int64: 92,
}


def _int_pair(input: Any, other: Any, op: str) -> tuple[Tensor, Tensor]:
    a = tensor_arg(input, op)
    b = other if isinstance(other, Tensor) else C.tensor(other, device=a.device)
    d = result_type(a, b)
    if d not in _EUCLID_STEPS:
        raise op_error(
            NotImplementedError, op, f"\"{op}_cpu\" not implemented for '{d.legacy_name}'"
        )
    return a.to(d), b.to(d)


@public(method=True, inplace=True)
def gcd(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0).

    >>> import lazytorch
    >>> lazytorch.gcd(lazytorch.tensor([0, -4, 6]), lazytorch.tensor([5, 6, -9]))
    tensor([5, 2, 3])
    """
    a, b = _int_pair(input, other, "gcd")
    shape = S.broadcast_shapes(a.shape, b.shape)
    a, b = E.abs(S.expand(a, shape)), E.abs(S.expand(b, shape))
    one = C.ones((), dtype=a.dtype, device=a.device)
    zero = C.zeros((), dtype=a.dtype, device=a.device)
    for _ in range(_EUCLID_STEPS[a.dtype]):
        nz = b != 0  # type: ignore[operator]
        a, b = E.where(nz, b, a), E.where(nz, E.remainder(a, E.where(nz, b, one)), zero)
    return _into_out(a, out, "gcd")


@public(method=True, inplace=True)
def lcm(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The least common multiple, elementwise (non-negative; 0 when either is 0)."""
    a, b = _int_pair(input, other, "lcm")
    g = gcd(a, b)
    one = C.ones((), dtype=g.dtype, device=g.device)
    zero = C.zeros((), dtype=g.dtype, device=g.device)
    q = E.floor_divide(E.abs(a), E.where(g == 0, one, g))  # type: ignore[operator]
    return _into_out(E.where(g == 0, zero, q * E.abs(b)), out, "lcm")  # type: ignore[operator]


@public(method=True, inplace=True)
def ldexp(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``input * 2 ** other`` (a float result)."""
    x = tensor_arg(input, "ldexp")
    if not x.dtype.is_floating_point:
        x = x.to(_config.get_default_dtype())
    return _into_out(E.mul(x, E.pow(2.0, other)), out, "ldexp")


@public(method=True)
def frexp(input: Tensor, *, out: Any = None) -> tuple[Tensor, Tensor]:
    """(mantissa, exponent) with ``input = mantissa * 2 ** exponent``, 0.5 <= |mantissa| < 1
    (0, inf and NaN keep exponent 0; the exponent is int32).

    >>> import lazytorch
    >>> m, e = lazytorch.frexp(lazytorch.tensor([8.0, 0.3]))
    >>> m.tolist(), e.tolist()
    ([0.5, 0.6000000238418579], [4, -1])
    """
    x = tensor_arg(input, "frexp")
    if not x.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "frexp",
            "torch.frexp() only supports floating-point dtypes",
        )
    if out is not None:
        raise op_error(NotImplementedError, "frexp", "frexp(out=) is not supported")
    w = x.double()
    finite = w.isfinite() & (w != 0)  # type: ignore[operator]
    safe = E.where(finite, E.abs(w), 1.0)
    e = safe.log2().floor() + 1  # type: ignore[operator]
    # log2 may round across a power of two: correct by one step either way
    for _ in range(2):
        m = _scale_pow2(safe, -e)
        e = E.where(m >= 1.0, e + 1, E.where(m < 0.5, e - 1, e))  # type: ignore[operator]
    e = E.where(finite, e, 0.0)
    mant = E.where(finite, _scale_pow2(w, -e), w)
    return mant.to(x.dtype), e.to(dt.int32)


def _scale_pow2(x: Tensor, k: Tensor) -> Tensor:
    """x * 2**k in float64, in two steps so that 2**k itself never overflows."""
    h = (k / 2).floor()  # type: ignore[operator]
    return x * E.pow(2.0, h) * E.pow(2.0, k - h)  # type: ignore[operator,no-any-return]


@public(method=True, inplace=True)
def nextafter(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """The next representable value after `input` towards `other`, elementwise (`other`
    itself where they are equal, NaN where either is NaN).

    Computed exactly from the spacing of floats at each value (frexp's exponent), in
    float64, so every backend gives the bits torch does. The gradient is 1 for `input`
    and 0 for `other`, as torch's.

    >>> import lazytorch
    >>> one = lazytorch.tensor([1.0])
    >>> (lazytorch.nextafter(one, lazytorch.tensor([2.0])) - one).item() == 2.0**-23
    True
    """
    x = tensor_arg(input, "nextafter")
    y = tensor_arg(other, "nextafter", "other")
    d = result_type(x, y)
    if not d.is_floating_point:
        raise op_error(
            NotImplementedError,
            "nextafter",
            f"\"nextafter_cpu\" not implemented for '{d.legacy_name}'",
        )
    info = finfo(d)
    # the significand's bits, and frexp's exponent of the smallest normal number
    digits, emin = 1 - round(math.log2(info.eps)), round(math.log2(info.tiny)) + 1
    w, v = x.detach().double(), y.detach().double()
    _, e = frexp(w)
    e = e.double().clamp(min=emin)  # subnormals are spaced as the smallest binade
    toward_zero = (v > w) != (w > 0)  # type: ignore[operator]
    # moving towards zero from a power of two (down a binade) steps half as far
    halve = toward_zero & (E.abs(w) == _scale_pow2(C.ones_like(w), e - 1)) & (e > emin)  # type: ignore[operator]
    step = _scale_pow2(C.ones_like(w), e - digits - halve.double())  # type: ignore[operator]
    moved = E.where(v > w, w + step, w - step)  # type: ignore[operator]
    moved = E.where(moved == 0, w * 0, moved)  # type: ignore[operator]  # -tiny up gives -0.0
    tiny = C.full_like(w, 2.0 ** (emin - digits))  # (a float32 scalar would flush 2**-1074)
    largest = C.full_like(w, info.max)
    res = E.where(w == 0, E.where(v > 0, tiny, -tiny), moved)  # type: ignore[operator]
    res = E.where(E.isinf(w), E.where(w > 0, largest, -largest), res)  # type: ignore[operator]
    res = E.where(w == v, v, res)  # also +-0 towards -+0: `other`, as C's nextafter
    res = E.where(E.isnan(w) | E.isnan(v), math.nan, res).to(d)  # type: ignore[operator]
    if x.requires_grad:  # torch's gradient: 1 for input (0 for other)
        xd = x.to(d)
        res = res + (xd - xd.detach())  # type: ignore[operator]
    return _into_out(res, out, "nextafter")


@public()
def gradient(
    input: Tensor, *, spacing: Any = None, dim: Any = None, edge_order: int = 1
) -> tuple[Tensor, ...]:
    """The derivative of samples along each of `dim` (all dims by default) by central
    differences inside and one-sided ones of order `edge_order` (1 or 2) at the edges, as
    ``numpy.gradient``. `spacing` is one step for every dim, one step per dim, or one
    tensor of coordinates per dim.

    >>> import lazytorch
    >>> lazytorch.gradient(lazytorch.tensor([1.0, 4.0, 9.0, 16.0]))[0].tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    x = tensor_arg(input, "gradient")
    if edge_order not in (1, 2):
        raise op_error(
            RuntimeError, "gradient", "torch.gradient only supports edge_order=1 and edge_order=2."
        )
    if x.ndim == 0:
        return ()
    if dim is None:
        dims = list(_builtin_range(x.ndim))
    else:
        ks = dim if isinstance(dim, (list, tuple)) else [dim]
        dims = [normalize_dim(k, x.ndim, "gradient") for k in ks]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims) and dim is None:
            raise op_error(
                RuntimeError,
                "gradient",
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {x.ndim}', since dim argument was not given, "
                f"but got a list of length {len(spacing)}",
            )
        if len(spacing) != len(dims):
            raise op_error(
                RuntimeError,
                "gradient",
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.",
            )
        steps = list(spacing)
    else:
        steps = [1.0 if spacing is None else spacing] * len(dims)
    if not x.dtype.is_floating_point:
        x = x.to(_config.get_default_dtype())
    for k in dims:
        if x.shape[k] < edge_order + 1:
            raise op_error(
                RuntimeError,
                "gradient",
                "torch.gradient expected each dimension size to be at least edge_order+1",
            )
    return tuple(_gradient_along(x, k, h, edge_order) for k, h in zip(dims, steps))


def _gradient_along(f: Tensor, k: int, h: Any, edge_order: int) -> Tensor:
    n = f.shape[k]

    def at(a: int, b: int) -> Tensor:
        return f.narrow(k, a, b - a)

    def along(t: Tensor) -> Tensor:  # a 1-D tensor of length n-ish, shaped to broadcast on dim k
        return t.reshape([-1 if j == k else 1 for j in _builtin_range(f.ndim)])

    if isinstance(h, Tensor):
        if h.ndim != 1 or h.shape[0] != n:
            raise op_error(
                RuntimeError,
                "gradient",
                f"torch.gradient expected each spacing tensor to hold the {n} coordinates of "
                f"dim {k}'s samples (1-D), got one of shape {list(h.shape)}",
            )
        # torch's formulas, term by term in its order (ATen's gradient_helper): with
        # coordinates close together the differences are ill-conditioned, and another
        # arrangement (numpy's) differs from torch's by 1e-4 relative at times.
        c = h.to(f.dtype) if not h.dtype.is_floating_point else h
        dx = S.narrow(c, 0, 1, n - 1) - S.narrow(c, 0, 0, n - 1)  # type: ignore[operator]
        dx1, dx2 = along(S.narrow(dx, 0, 0, n - 2)), along(S.narrow(dx, 0, 1, n - 2))
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        cc = dx1 / (dx2 * (dx1 + dx2))
        inner = a * at(0, n - 2) + b * at(1, n - 1) + cc * at(2, n)
        d0, d1 = along(S.narrow(dx, 0, 0, 1)), along(S.narrow(dx, 0, 1, 1))
        e1, e0 = along(S.narrow(dx, 0, n - 2, 1)), along(S.narrow(dx, 0, n - 3, 1))
        if edge_order == 1:
            first = (at(1, 2) - at(0, 1)) / d0  # type: ignore[operator]
            last = (at(n - 1, n) - at(n - 2, n - 1)) / e1  # type: ignore[operator]
        else:
            first = (
                -(2.0 * d0 + d1) / (d0 * (d0 + d1)) * at(0, 1)
                + (d0 + d1) / (d0 * d1) * at(1, 2)
                + (-d0) / (d1 * (d0 + d1)) * at(2, 3)
            )
            last = (
                e1 / (e0 * (e1 + e0)) * at(n - 3, n - 2)
                + -(e1 + e0) / (e1 * e0) * at(n - 2, n - 1)
                + (2 * e1 + e0) / (e1 * (e1 + e0)) * at(n - 1, n)
            )
    else:
        step = float(h)
        inner = (at(2, n) - at(0, n - 2)) / (2 * step)  # type: ignore[operator]
        if edge_order == 1:
            first = (at(1, 2) - at(0, 1)) / step  # type: ignore[operator]
            last = (at(n - 1, n) - at(n - 2, n - 1)) / step  # type: ignore[operator]
        else:
            first = (-1.5 * at(0, 1) + 2 * at(1, 2) - 0.5 * at(2, 3)) / step  # type: ignore[operator]
            last = (0.5 * at(n - 3, n - 2) - 2 * at(n - 2, n - 1) + 1.5 * at(n - 1, n)) / step  # type: ignore[operator]
    return S.cat([first, inner, last], k)


@public()
def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat `indices` in a tensor of `shape` (indices wrap modulo its
    size, as torch's)."""
    idx = tensor_arg(indices, "unravel_index", "indices")
    if idx.dtype is dt.bool_ or idx.dtype.is_floating_point:
        raise op_error(
            TypeError,
            "unravel_index",
            f"expected 'indices' to be integer dtype, but got {idx.dtype}",
        )
    dims = [int(shape)] if isinstance(shape, int) else [int(s) for s in shape]
    if any(d < 0 for d in dims):
        raise op_error(
            ValueError,
            "unravel_index",
            "'shape' cannot have negative values, but got " + str(tuple(dims)),
        )
    numel = math.prod(dims)
    if numel == 0:
        raise op_error(
            ValueError, "unravel_index", "'shape' cannot contain a zero, got " + str(tuple(dims))
        )
    flat = E.remainder(idx.long(), numel)
    coords = []
    stride = numel
    for d in dims:
        stride //= d
        coords.append(E.remainder(E.floor_divide(flat, stride), d))
    return tuple(coords)


# -- in-place float_power: torch requires a float64 tensor -----------------------------------------
@public(torch=False, method=True)
def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place float_power: only a float64 tensor can hold its result."""
    if self.dtype is not dt.float64:
        raise op_error(
            RuntimeError,
            "float_power_",
            f"the base given to float_power_ has dtype {self.dtype.legacy_name} but the "
            "operation's result requires dtype Double",
        )
    return self.copy_(CO.float_power(self, exponent))  # type: ignore[no-any-return]


# -- creation --------------------------------------------------------------------------------------
@public(torch="range")
def range_(
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Deprecated ``torch.range``: from `start` to `end` **inclusive** by `step` (warns,
    as torch).

    >>> import lazytorch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     lazytorch.range(1, 4).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    vals = [float(v) for v in (start, end, step)]
    if vals[2] == 0:
        raise op_error(RuntimeError, "range", "step must be nonzero")
    if (vals[2] > 0 and vals[1] < vals[0]) or (vals[2] < 0 and vals[1] > vals[0]):
        raise op_error(
            RuntimeError, "range", "upper bound and larger bound inconsistent with step sign"
        )
    n = math.floor((vals[1] - vals[0]) / vals[2]) + 1
    dtype = C.resolve_dtype(dtype, "range") or _config.get_default_dtype()
    values = np.asarray([vals[0] + i * vals[2] for i in _builtin_range(n)], dtype=np.float64)
    t = C.tensor(values, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_()
    return _into_out(t, out, "range")


@public()
def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool | None = None,
) -> Tensor:
    """`obj` as a tensor, sharing its memory where it can (a tensor is returned itself and a
    NumPy array is shared when neither dtype nor device changes), copying where `copy`
    asks or sharing is impossible (``copy=False`` then raises, as torch does).

    >>> import numpy as np, lazytorch
    >>> a = np.zeros(2, dtype=np.float32)
    >>> t = lazytorch.asarray(a)
    >>> a[0] = 3
    >>> t.tolist(), lazytorch.asarray([1, 2.5]).dtype
    ([3.0, 0.0], lazytorch.float32)
    """
    d = C.resolve_dtype(dtype, "asarray")
    if isinstance(obj, Tensor):
        dev = obj.device if device is None else C.as_device(device)
        same = (d is None or d is obj.dtype) and dev == obj.device
        if copy is False and not same:
            raise op_error(
                ValueError,
                "asarray",
                f"can't alias tensor with dtype '{obj.dtype.legacy_name}' into dtype "
                f"'{(d or obj.dtype).legacy_name}'.",
            )
        if copy:
            res = obj.detach().to(device=dev, dtype=d).clone()  # type: ignore[attr-defined]
        else:
            res = obj if same else obj.to(device=dev, dtype=d)  # type: ignore[attr-defined]
    elif type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        if copy:
            res = C.tensor(obj, dtype=dtype, device=device)
        else:
            res = C.as_tensor(obj, dtype=dtype, device=device)
            if copy is False and not _shares_with(res, obj):
                src = C._numpy_dtype(obj.dtype, "asarray")
                if res.dtype is not src:
                    why = (
                        f"can't alias tensor with dtype '{src.legacy_name}' into dtype "
                        f"'{res.dtype.legacy_name}'."
                    )
                else:  # torch would alias a strided or unaligned array; lazytorch copies it
                    why = (
                        "can't alias a NumPy array that is not C-contiguous, aligned, "
                        "native-endian and writable (lazytorch shares only those); pass "
                        "copy=None to copy it"
                    )
                raise op_error(ValueError, "asarray", why)
    else:
        if copy is False:
            raise op_error(ValueError, "asarray", "can't alias arbitrary sequence into a tensor.")
        res = C.tensor(obj, dtype=dtype, device=device)
    # None keeps obj's flag; True or False is set on the result, on `obj` itself when it is
    # the result, as torch does
    if requires_grad and not res.requires_grad:
        res.requires_grad_(True)
    elif requires_grad is False and res.requires_grad:
        res = res.requires_grad_(False) if res.is_leaf else res.detach()
    return res


def _shares_with(t: Tensor, array: Any) -> bool:
    return t._node.buffer is array  # as_tensor wraps the array itself when it shares it


@public()
def frombuffer(
    buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-D tensor over an object with the buffer protocol (``bytearray``, ``memoryview``,
    ``array.array``, ``mmap``), sharing its memory as torch's does: `count` elements of
    `dtype` from byte `offset` (-1: all that follow). A buffer that cannot be written is
    read through a copy, with torch's warning.

    >>> import lazytorch
    >>> b = bytearray(8)
    >>> t = lazytorch.frombuffer(b, dtype=lazytorch.int32)
    >>> b[0] = 5
    >>> t.tolist()
    [5, 0]
    """
    d = C.resolve_dtype(dtype, "frombuffer")
    if d is None:
        raise op_error(TypeError, "frombuffer", "missing required keyword argument 'dtype'")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise op_error(
            ValueError, "frombuffer", "object does not implement Python buffer protocol."
        ) from None
    length, size = view.nbytes, d.itemsize
    if length <= 0 or count == 0:
        raise op_error(
            ValueError,
            "frombuffer",
            f"both buffer length ({length}) and count ({count}) must not be 0",
        )
    if not 0 <= offset < length:
        raise op_error(
            ValueError,
            "frombuffer",
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1",
        )
    if count < 0:
        if (length - offset) % size:
            raise op_error(
                ValueError,
                "frombuffer",
                f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be "
                f"a multiple of element size ({size})",
            )
        count = (length - offset) // size
    elif offset + count * size > length:
        raise op_error(
            ValueError,
            "frombuffer",
            f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)",
        )
    array = np.frombuffer(view.cast("B"), dtype=d.np, count=count, offset=offset)
    if not array.flags.writeable:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. lazytorch reads it through a copy: writes to the tensor do not reach "
            "the buffer.",
            UserWarning,
            stacklevel=2,
        )
    res = C.from_numpy(array)  # shares a writable, aligned array's memory
    if requires_grad:
        res.requires_grad_(True)
    return res


@public()
def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor of `input`'s shape and dtype, every element `value`."""
    x = tensor_arg(input, "fill")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise op_error(
                RuntimeError,
                "fill",
                f"fill only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions.",
            )
        return S.expand(value.to(x.dtype), x.shape).clone()
    return C.full_like(x, value)


@public()
def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialized tensor of `size` (zeros in lazytorch). `stride` is checked for
    length and otherwise ignored: lazytorch tensors are contiguous."""
    if len(stride) != len(size):
        raise op_error(
            RuntimeError,
            "empty_strided",
            "mismatch in length of strides and shape",
        )
    return C.empty(  # type: ignore[no-any-return]
        tuple(size), dtype=dtype, device=device, requires_grad=requires_grad
    )


def _window(
    name: str, n: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool, fn: Any
) -> Tensor:
    d = C.resolve_dtype(dtype, name) or _config.get_default_dtype()
    if not d.is_floating_point:
        raise op_error(
            RuntimeError, name, f"{name} expects floating point dtypes, got: {d.legacy_name}"
        )
    if n < 0:
        raise op_error(
            RuntimeError, name, f"{name} requires non-negative window_length, got window_length={n}"
        )
    if n == 0:
        vals = np.zeros(0)
    elif n == 1:
        vals = np.ones(1)
    else:
        m = n + 1 if periodic else n
        vals = fn(np.arange(m, dtype=np.float64), m)[:n]
    t = C.tensor(vals, dtype=d, device=device)
    if requires_grad:
        t.requires_grad_()
    return t


def _cosine_sum(*a: float) -> Any:
    def fn(k: np.ndarray, m: int) -> np.ndarray:
        out = np.zeros_like(k)
        for j, c in enumerate(a):
            out += (-1) ** j * c * np.cos(2 * math.pi * j * k / (m - 1))
        return out

    return fn


@public()
def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` (N = length + 1 when periodic)."""
    f = _cosine_sum(0.5, 0.5)
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, f)


@public()
def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``alpha - beta cos(2 pi k / (N - 1))``."""
    f = _cosine_sum(alpha, beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, f)


@public()
def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    f = _cosine_sum(0.42, 0.5, 0.08)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


@public()
def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The triangular window ``1 - |2k / (N - 1) - 1|``."""

    def f(k: np.ndarray, m: int) -> np.ndarray:
        return 1 - np.abs(2 * k / (m - 1) - 1)  # type: ignore[no-any-return]

    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, f)


@public()
def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta)``."""

    def f(k: np.ndarray, m: int) -> np.ndarray:
        r = 2 * k / (m - 1) - 1
        return np.i0(beta * np.sqrt(np.maximum(1 - r * r, 0.0))) / np.i0(beta)  # type: ignore[no-any-return]

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)


# -- predicates -----------------------------------------------------------------------------------
@public()
def is_complex(input: Tensor) -> bool:
    """Whether `input` is a complex tensor (`lazytorch.ops.complex`)."""
    if isinstance(input, ComplexBase):
        return True
    return tensor_arg(input, "is_complex").is_complex()


@public(method=True)
def is_signed(input: Tensor) -> bool:
    """Whether the dtype is signed (floats and signed integers; not bool or uint8)."""
    d = tensor_arg(input, "is_signed").dtype
    return d.is_floating_point or d in (dt.int8, dt.int16, dt.int32, dt.int64)


@public(method=True)
def is_nonzero(input: Tensor) -> bool:
    """``bool(input)`` for a one-element tensor (RuntimeError otherwise, as torch)."""
    x = tensor_arg(input, "is_nonzero")
    n = x.numel()
    if n == 0:
        raise op_error(
            RuntimeError, "is_nonzero", "Boolean value of Tensor with no values is ambiguous"
        )
    if n > 1:
        raise op_error(
            RuntimeError,
            "is_nonzero",
            "Boolean value of Tensor with more than one value is ambiguous",
        )
    return bool(x.item())


@public(method=True)
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two shapes are equal."""
    return tuple(tensor_arg(input, "is_same_size").shape) == tuple(other.shape)


@public(method=True)
def is_conj(input: Tensor) -> bool:
    """False: no tensor has a conjugate bit here (``conj`` of a complex tensor computes)."""
    if isinstance(input, ComplexBase):
        return False
    tensor_arg(input, "is_conj")
    return False


@public(method=True)
def is_neg(input: Tensor) -> bool:
    """False: lazytorch has no lazily negated (complex) views."""
    tensor_arg(input, "is_neg")
    return False


# -- the complex helpers on real tensors (lazytorch has no complex dtype) --------------------------
@public(method=True)
def conj(input: Tensor) -> Tensor:
    """The conjugate: `input` itself for a real tensor, as torch."""
    if isinstance(input, ComplexBase):
        return input.conj()  # type: ignore[attr-defined, no-any-return]
    return tensor_arg(input, "conj")


@public(method=True)
def resolve_conj(input: Tensor) -> Tensor:
    """`input` itself (no conjugate bit to resolve)."""
    if isinstance(input, ComplexBase):
        return input  # type: ignore[return-value]
    return tensor_arg(input, "resolve_conj")


@public(method=True)
def resolve_neg(input: Tensor) -> Tensor:
    """`input` itself (no negative bit to resolve)."""
    if isinstance(input, ComplexBase):
        return input  # type: ignore[return-value]
    return tensor_arg(input, "resolve_neg")


@public(method=True)
def conj_physical(input: Tensor, *, out: Any = None) -> Tensor:
    """The conjugate, materialized: `input` itself for a real tensor, as torch."""
    if isinstance(input, ComplexBase) and out is None:
        return input.conj()  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "conj_physical")
    return x if out is None else _into_out(x.clone(), out, "conj_physical")


@public(torch="conj_physical_", method="conj_physical_")
def conj_physical_(input: Tensor) -> Tensor:
    """In place: nothing to do on a real tensor."""
    return tensor_arg(input, "conj_physical_")


@public(method=True)
def real(input: Tensor) -> Tensor:
    """The real part: `input` itself for a real tensor, as torch; a view of a complex
    tensor's."""
    if isinstance(input, ComplexBase):
        return input.real  # type: ignore[attr-defined, no-any-return]
    return tensor_arg(input, "real")


@public(method=True)
def imag(input: Tensor) -> Tensor:
    """A view of a complex tensor's imaginary part; raises for a real one, as torch."""
    if isinstance(input, ComplexBase):
        return input.imag  # type: ignore[attr-defined, no-any-return]
    tensor_arg(input, "imag")
    raise op_error(
        RuntimeError, "imag", "imag is not implemented for tensors with non-complex dtypes."
    )


@public(method=True)
def angle(input: Tensor, *, out: Any = None) -> Tensor:
    """The argument of a real number: 0 for x >= 0, pi for x < 0, NaN for NaN (a float
    result; zero gradient, as torch). Of a complex tensor, ``atan2(imag, real)``."""
    if isinstance(input, ComplexBase) and out is None:
        return input.angle()  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "angle")
    if not x.dtype.is_floating_point:
        x = x.to(_config.get_default_dtype())
    y = x.detach()
    res = E.where(y < 0, math.pi, E.where(y.isnan(), y, 0.0))  # type: ignore[operator]
    res = wrap(_zero_gradient(res.to(x.dtype)._node, x._node))  # torch's zero gradient
    return _into_out(res, out, "angle")


# -- *_copy: the view op, then a copy that aliases nothing -----------------------------------------
def _copy_of(name: str, view: Any) -> Any:
    def fn(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Any:
        res = view(tensor_arg(input, name), *args, **kwargs)
        if isinstance(res, (tuple, list)):
            if out is not None:
                raise op_error(NotImplementedError, name, f"{name}(out=) is not supported")
            return [r.clone() for r in res]
        return _into_out(res.clone(), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name[:-5]}`` followed by a copy: the result shares no memory with `input`."
    return fn


def view_copy(input: Tensor, size: Any, *, out: Any = None) -> Tensor:
    """``input.view(size)`` (or ``.view(dtype)``) as a new tensor."""
    return _copy_of("view_copy", lambda x, s: x.view(s))(input, size, out=out)  # type: ignore[no-any-return]


def permute_copy(input: Tensor, dims: Sequence[int], *, out: Any = None) -> Tensor:
    """``input.permute(dims)`` as a new tensor."""
    return _copy_of("permute_copy", lambda x, d: x.permute(*d))(input, dims, out=out)  # type: ignore[no-any-return]


def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Any = None) -> Tensor:
    """``input.transpose(dim0, dim1)`` as a new tensor."""
    return _copy_of("transpose_copy", S.transpose)(input, dim0, dim1, out=out)  # type: ignore[no-any-return]


def t_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """``input.t()`` as a new tensor."""
    return _copy_of("t_copy", lambda x: x.t())(input, out=out)  # type: ignore[no-any-return]


def expand_copy(
    input: Tensor, size: Sequence[int], *, implicit: bool = False, out: Any = None
) -> Tensor:
    """``input.expand(size)`` as a new (materialized) tensor."""
    return _copy_of("expand_copy", lambda x, s: x.expand(*s))(input, size, out=out)  # type: ignore[no-any-return]


def squeeze_copy(input: Tensor, dim: Any = None, *, out: Any = None) -> Tensor:
    """``input.squeeze(dim)`` as a new tensor."""
    f = (lambda x: x.squeeze()) if dim is None else (lambda x: x.squeeze(dim))
    return _copy_of("squeeze_copy", f)(input, out=out)  # type: ignore[no-any-return]


def unsqueeze_copy(input: Tensor, dim: int, *, out: Any = None) -> Tensor:
    """``input.unsqueeze(dim)`` as a new tensor."""
    return _copy_of("unsqueeze_copy", S.unsqueeze)(input, dim, out=out)  # type: ignore[no-any-return]


def select_copy(input: Tensor, dim: int, index: int, *, out: Any = None) -> Tensor:
    """``input.select(dim, index)`` as a new tensor."""
    return _copy_of("select_copy", lambda x, d, i: x.select(d, i))(input, dim, index, out=out)  # type: ignore[no-any-return]


def slice_copy(
    input: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
    *,
    out: Any = None,
) -> Tensor:
    """``input[..., start:end:step, ...]`` (along `dim`) as a new tensor."""

    def view(x: Tensor) -> Tensor:
        d = normalize_dim(dim, x.ndim, "slice_copy")
        if step <= 0:
            raise op_error(RuntimeError, "slice_copy", "slice step must be positive")
        return x[(slice(None),) * d + (slice(start, end, step),)]  # type: ignore[no-any-return]

    return _copy_of("slice_copy", view)(input, out=out)  # type: ignore[no-any-return]


def diagonal_copy(
    input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *, out: Any = None
) -> Tensor:
    """``input.diagonal(offset, dim1, dim2)`` as a new tensor."""
    f = _copy_of("diagonal_copy", lambda x: x.diagonal(offset, dim1, dim2))
    return f(input, out=out)  # type: ignore[no-any-return]


def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """``input.detach()`` as a new tensor."""
    return _copy_of("detach_copy", lambda x: x.detach())(input, out=out)  # type: ignore[no-any-return]


def alias_copy(input: Tensor, *, out: Any = None) -> Tensor:
    """A copy of `input` (torch.alias followed by a copy)."""
    return _copy_of("alias_copy", lambda x: x.view_as(x))(input, out=out)  # type: ignore[no-any-return]


def unbind_copy(input: Tensor, dim: int = 0, *, out: Any = None) -> tuple[Tensor, ...]:
    """``input.unbind(dim)``, each piece a new tensor."""
    return tuple(_copy_of("unbind_copy", S.unbind)(input, dim, out=out))


def split_copy(
    input: Tensor, split_size: int, dim: int = 0, *, out: Any = None
) -> tuple[Tensor, ...]:
    """``input.split(split_size, dim)``, each piece a new tensor."""
    return tuple(_copy_of("split_copy", S.split)(input, split_size, dim, out=out))


def split_with_sizes_copy(
    input: Tensor, split_sizes: Sequence[int], dim: int = 0, *, out: Any = None
) -> tuple[Tensor, ...]:
    """``input.split_with_sizes(split_sizes, dim)``, each piece a new tensor."""
    f = _copy_of("split_with_sizes_copy", S.split_with_sizes)
    return tuple(f(input, split_sizes, dim, out=out))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Any = None) -> Tensor:
    """``input.unfold(dimension, size, step)`` as a new tensor."""
    f = _copy_of("unfold_copy", lambda x: x.unfold(dimension, size, step))
    return f(input, out=out)  # type: ignore[no-any-return]


for _fn in (
    view_copy, permute_copy, transpose_copy, t_copy, expand_copy, squeeze_copy, unsqueeze_copy,
    select_copy, slice_copy, diagonal_copy, detach_copy, alias_copy, unbind_copy, split_copy,
    split_with_sizes_copy, unfold_copy,
):  # fmt: skip
    public()(_fn)


# -- torch.* names kept for old scripts (torch marks the norms deprecated) --------------------
@public()
def get_device(input: Tensor) -> int:
    """``input.get_device()``: the device index, -1 on the CPU.

    >>> import lazytorch
    >>> lazytorch.get_device(lazytorch.ones(2))
    -1
    """
    return tensor_arg(input, "get_device").get_device()  # type: ignore[no-any-return]


@public(torch="detach_")
def detach_(input: Tensor) -> Tensor:
    """``input.detach_()``: `input` cut from its graph in place (returned)."""
    return tensor_arg(input, "detach_").detach_()  # type: ignore[no-any-return]


@public()
def nuclear_norm(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None
) -> Tensor:
    """The nuclear norm (sum of singular values) of a matrix, or over the two dims `dim`
    (``nuclear_norm(x, True)`` is ``keepdim=True``, as in torch's overload). Deprecated in
    torch for ``linalg.matrix_norm(A, 'nuc', dim, keepdim)``."""
    if isinstance(dim, bool):  # torch's overload nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    x = tensor_arg(input, "nuclear_norm")
    warnings.warn(
        "nuclear_norm is deprecated: use linalg.matrix_norm(A, 'nuc', dim, keepdim)",
        UserWarning,
        stacklevel=2,
    )
    if dim is None:
        if x.ndim != 2:
            raise op_error(
                RuntimeError,
                "nuclear_norm",
                f"Expected a tensor with 2 dimensions, but got a tensor with {x.ndim} "
                f"dimension{'' if x.ndim == 1 else 's'} instead.",
            )
        dim = (0, 1)
    return _into_out(L.matrix_norm(x, "nuc", tuple(dim), keepdim), out, "nuclear_norm")


@public()
def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """The 2-norm over `dim`. Deprecated in torch for
    ``linalg.vector_norm(A, 2, dim, keepdim)``."""
    x = tensor_arg(input, "frobenius_norm")
    warnings.warn(
        "frobenius_norm is deprecated: use linalg.vector_norm(A, 2, dim, keepdim)",
        UserWarning,
        stacklevel=2,
    )
    return _into_out(L.vector_norm(x, 2, dim, keepdim), out, "frobenius_norm")
