"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp,
norm, all/any, cumsum, count_nonzero.

Primitive reductions keep the reduced axes (size 1); ``keepdim=False`` adds a reshape. Sums
of integers and bools are int64, as in torch; float16 accumulates in float32.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn, stop_gradient
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import Primitive, make_node
from lazytorch.ops._core import (
    P,
    binary_node,
    cast,
    const_like,
    const_node,
    normalize_dim,
    normalize_dims,
    numel,
    reshape_node,
    tensor_arg,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import _out_dtype, cast_into_out, into_out, resolve_dtype
from lazytorch.ops.elementwise import _safe_sqrt, div, maximum, minimum
from lazytorch.tensor import Tensor

values_indices = namedtuple("values_indices", ["values", "indices"])
max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


def reduce_node(
    prim: Primitive, n: Node, axes: tuple[int, ...], dtype: dt.DType | None = None
) -> Node:
    """Reduce over `axes`, keeping them with size 1."""
    shape = tuple(1 if i in axes else d for i, d in enumerate(n.shape))
    return make_node(prim, (n,), (axes,), shape, dtype or n.dtype, n.device)


def squeeze_axes(n: Node, axes: tuple[int, ...]) -> Node:
    return reshape_node(n, tuple(d for i, d in enumerate(n.shape) if i not in axes))


def squeeze_unless_keepdim(n: Node, axes: tuple[int, ...], keepdim: bool) -> Node:
    return n if keepdim else squeeze_axes(n, axes)


def _dims(dim: Any, n: Node, op: str) -> tuple[int, ...]:
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    return normalize_dims(dim, len(n.shape), op)


def _into_out(result: Tensor, out: Any, op: str, floating: bool = False) -> Tensor:
    """Write a reduction's result into `out=`, as torch does: out must have the result's
    dtype, or (`floating`: mean, std, var, logsumexp) any floating dtype it is cast to. sum,
    prod and cumsum already computed in out's dtype (their dtype defaults to it)."""
    if isinstance(out, Tensor):
        want, got = result.dtype, out.dtype
        if (not got.is_floating_point) if floating else (got is not want):
            raise op_error(
                RuntimeError,
                op,
                f"Expected out tensor to have dtype {want.legacy_name}, but got "
                f"{got.legacy_name} instead",
            )
    return into_out(result, out, op)


def _into_outs(result: Any, out: Any, op: str) -> Any:
    """A (values, indices) result into torch's ``out=(values, indices)``: each as
    `_into_out`, the pair returned as the op's named tuple."""
    if out is None:
        return result
    if not (isinstance(out, (tuple, list)) and len(out) == len(result)):
        raise op_error(
            TypeError, op, f"{op}(): argument 'out' must be tuple of {len(result)} Tensors"
        )
    return type(result)(*(_into_out(r, o, op) for r, o in zip(result, out)))


def _sum_dtype(d: dt.DType) -> dt.DType:
    return d if d.is_floating_point else dt.int64


class _AllDims:
    """The default `dim` of sum and mean: all dims, and torch's overload without a dim
    (its grad_fn is ``SumBackward0``; ``dim=None`` given is ``SumBackward1``)."""

    def __repr__(self) -> str:
        return "None"


ALL_DIMS: Any = _AllDims()


@public(method=True)
def sum(
    input: Tensor, dim: Any = ALL_DIMS, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """Sum over `dim` (all dims by default). Integer and bool inputs sum as int64.

    >>> import lazytorch
    >>> lazytorch.tensor([[1, 2], [3, 4]]).sum(dim=0).tolist()
    [4, 6]
    """
    input = tensor_arg(input, "sum")
    n = input._node
    out_dtype = _out_dtype(dtype, out, "sum") or _sum_dtype(n.dtype)
    overload = 0 if dim is ALL_DIMS else 1
    axes = _dims(None if dim is ALL_DIMS else dim, n, "sum")
    x = cast(n, out_dtype)
    if axes:
        x = squeeze_unless_keepdim(_bool_safe_reduce(P.reduce_sum, x, axes), axes, keepdim)
    # torch's overloads: sum(*, dtype) is SumBackward0, sum(dim, ...) SumBackward1, even
    # with dim=None given
    return _into_out(name_grad_fn(wrap(x), f"SumBackward{overload}", input), out, "sum")


def _bool_safe_reduce(prim: Primitive, x: Node, axes: tuple[int, ...]) -> Node:
    """Reduce `x`; a bool `x` (from ``dtype=bool``) goes through int64, which gives torch's
    bool sum (any) and bool product (all) once cast back."""
    if x.dtype is not dt.bool_:
        return reduce_node(prim, x, axes)
    return cast(reduce_node(prim, cast(x, dt.int64), axes), dt.bool_)


@public(method=True)
def nansum(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    input = tensor_arg(input, "nansum")
    n = input._node
    if isinstance(out, Tensor) and n.dtype.is_floating_point and not out.dtype.is_floating_point:
        # torch sums a float input in out's dtype, but only a floating one
        raise op_error(
            RuntimeError,
            "nansum",
            f"Expected out tensor to have dtype {n.dtype.legacy_name}, but got "
            f"{out.dtype.legacy_name} instead",
        )
    if n.dtype.is_floating_point:
        n = where_node(binary_node(P.ne, n, n, dt.bool_), const_like(0, n), n)
    result = sum(wrap(n), dim, keepdim, dtype=dtype, out=out)
    return result if out is not None else name_grad_fn(result, "NansumBackward0", input)


def _count(n: Node, axes: tuple[int, ...]) -> Any:
    return numel([n.shape[a] for a in axes])


@public(method=True)
def mean(
    input: Tensor, dim: Any = ALL_DIMS, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """Arithmetic mean over `dim`; floating-point inputs only (as torch)."""
    input = tensor_arg(input, "mean")
    n = input._node
    out_dtype = resolve_dtype(dtype, "mean") or n.dtype
    if not out_dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "mean",
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {n.dtype.name.capitalize()}",
        )
    overload = 0 if dim is ALL_DIMS else 1  # as sum's
    axes = _dims(None if dim is ALL_DIMS else dim, n, "mean")
    # float16 accumulates and divides in float32, rounding once at the end.
    work = out_dtype.compute
    x = cast(n, work)
    if axes:
        s = reduce_node(P.reduce_sum, x, axes)
        m = binary_node(P.div, s, const_node(_count(n, axes), work, n.device))
        x = squeeze_unless_keepdim(m, axes, keepdim)
    name = f"MeanBackward{overload}"
    return _into_out(
        name_grad_fn(wrap(cast(x, out_dtype)), name, input), out, "mean", floating=True
    )


@public(method=True)
def nanmean(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    n = tensor_arg(input, "nanmean")._node

    if not n.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            "nanmean",
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{n.dtype.name.capitalize()}",
        )

    valid = binary_node(P.eq, n, n, dt.bool_)  # NaN != NaN
    mean = div(nansum(input, dim, keepdim, dtype=dtype), sum(wrap(valid), dim, keepdim))
    return _into_out(mean, out, "nanmean", floating=True)


@public(method=True)
def prod(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, out: Any = None
) -> Tensor:
    """Product over one `dim` (or all elements)."""
    input = tensor_arg(input, "prod")
    n = input._node
    out_dtype = _out_dtype(dtype, out, "prod") or _sum_dtype(n.dtype)
    if dim is not None and isinstance(dim, (list, tuple)):
        raise op_error(TypeError, "prod", "prod() takes a single dim, not a list of dims")
    axes = _dims(dim, n, "prod")
    x = cast(n, out_dtype)
    if axes:
        x = squeeze_unless_keepdim(_bool_safe_reduce(P.reduce_prod, x, axes), axes, keepdim)
    name = "ProdBackward0" if dim is None else "ProdBackward1"  # as sum's overloads
    return _into_out(name_grad_fn(wrap(x), name, input), out, "prod")


def _check_nonempty(n: Node, axes: tuple[int, ...], op: str) -> None:
    for a in axes:
        if n.shape[a] == 0:
            raise op_error(
                IndexError,
                op,
                f"{op}(): Expected reduction dim {a} to have non-zero size.",
            )
    if not axes and numel(n.shape) == 0:
        raise op_error(
            RuntimeError,
            op,
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0.",
        )


def _no_dim(dim: Any) -> bool:
    return dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0)


def _extreme_reduce(prim: Primitive, op: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    input = tensor_arg(input, op)
    n = input._node
    axes = _dims(dim, n, op)
    if numel(n.shape) == 0:
        # No dim given: torch's RuntimeError; an empty dim named explicitly: its IndexError.
        _check_nonempty(n, () if _no_dim(dim) else axes, op)
    if not axes:
        return wrap(n)
    result = wrap(squeeze_unless_keepdim(reduce_node(prim, n, axes), axes, keepdim))
    return name_grad_fn(result, op.capitalize() + "Backward0", input)  # AmaxBackward0


@public(method=True)
def amax(input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None) -> Tensor:
    """Max over `dim` (all dims by default); NaN propagates."""
    return _into_out(_extreme_reduce(P.reduce_max, "amax", input, dim, keepdim), out, "amax")


@public(method=True)
def amin(input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None) -> Tensor:
    """Min over `dim` (all dims by default); NaN propagates."""
    return _into_out(_extreme_reduce(P.reduce_min, "amin", input, dim, keepdim), out, "amin")


def _arg(prim: Primitive, name: str, input: Tensor, dim: Any, keepdim: bool) -> Node:
    n = tensor_arg(input, name)._node
    if dim is None:
        flat = reshape_node(n, (numel(n.shape),))
        _check_nonempty(flat, (0,), name)
        r = make_node(prim, (flat,), (0,), (1,), dt.int64, n.device)
        return reshape_node(r, (1,) * len(n.shape) if keepdim else ())
    if not n.shape:
        normalize_dim(dim, 0, name)
        return const_node(0, dt.int64, n.device)
    axis = normalize_dim(dim, len(n.shape), name)
    _check_nonempty(n, (axis,), name)
    shape = tuple(1 if i == axis else d for i, d in enumerate(n.shape))
    r = make_node(prim, (n,), (axis,), shape, dt.int64, n.device)
    return squeeze_unless_keepdim(r, (axis,), keepdim)


def _no_bool(input: Tensor, op: str) -> None:
    # torch refuses bool in argmax/argmin (max/min with a dim accept it).
    if tensor_arg(input, op)._node.dtype is dt.bool_:
        raise op_error(RuntimeError, op, f"{op}(): does not support bool input")


@public(method=True)
def argmax(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """Index of the first maximum (over the flattened tensor when dim is None)."""
    _no_bool(input, "argmax")
    return _into_out(wrap(_arg(P.argmax, "argmax", input, dim, keepdim)), out, "argmax")


@public(method=True)
def argmin(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    _no_bool(input, "argmin")
    return _into_out(wrap(_arg(P.argmin, "argmin", input, dim, keepdim)), out, "argmin")


def _extreme(name: str, reducer: Any, arg_prim: Primitive, pairwise: Any, result: Any) -> Any:
    def fn(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if isinstance(dim, Tensor):
            return cast_into_out(pairwise(input, dim), out, name)  # elementwise rule
        if dim is None:
            n = tensor_arg(input, name)._node
            if numel(n.shape) == 0:
                raise op_error(
                    RuntimeError,
                    name,
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.",
                )
            # torch's overloads: max() is MaxBackward1, max(dim) MaxBackward0
            values = name_grad_fn(reducer(input), f"{name.capitalize()}Backward1", input)
            return cast_into_out(values, out, name)  # as torch: a cast is fine
        values = reducer(input, dim, keepdim)
        idx = _arg(arg_prim, name, input, dim, keepdim)
        n = input._node
        if n.ag is not None and n.shape:
            # torch sends the gradient to the one index returned, not shared between ties:
            # the values are that element, gathered (the same value as the reduction).
            values = wrap(_gather_at(n, idx, normalize_dim(dim, len(n.shape), name), keepdim))
        values = name_grad_fn(values, f"{name.capitalize()}Backward0", input)
        return _into_outs(result(values, wrap(idx)), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{name}(input): the {name}imum value; {name}(input, dim, keepdim): (values, indices) "
        f"along dim; {name}(input, other): elementwise {name}imum."
    )
    return fn


def _gather_at(n: Node, idx: Node, axis: int, keepdim: bool) -> Node:
    """n's elements at `idx` (one per slice along `axis`, reduced as keepdim says)."""
    kept = tuple(1 if i == axis else d for i, d in enumerate(n.shape))
    picked = make_node(P.gather, (n, reshape_node(idx, kept)), (axis,), kept, n.dtype, n.device)
    return squeeze_unless_keepdim(picked, (axis,), keepdim)


def _maximum(a: Tensor, b: Tensor) -> Tensor:
    return maximum(a, b)


def _minimum(a: Tensor, b: Tensor) -> Tensor:
    return minimum(a, b)


max = public(method=True)(_extreme("max", amax, P.argmax, _maximum, max_result))
min = public(method=True)(_extreme("min", amin, P.argmin, _minimum, min_result))


aminmax_result = namedtuple("aminmax", ["min", "max"])


@public(method=True)
def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False, out: Any = None) -> Any:
    """(min, max) over one `dim` (all elements by default)."""
    n = tensor_arg(input, "aminmax")._node
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise op_error(
            TypeError, "aminmax", f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}"
        )
    if dim is None and numel(n.shape) == 0:
        raise op_error(
            RuntimeError,
            "aminmax",
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity.",
        )
    d = () if dim is None else dim
    low, high = (
        name_grad_fn(r, "AminmaxBackward0", input)
        for r in (amin(input, d, keepdim), amax(input, d, keepdim))
    )
    return _into_outs(aminmax_result(low, high), out, "aminmax")


def _var_parts(
    input: Tensor, dim: Any, correction: Any, keepdim: bool, op: str
) -> tuple[Node, Node, dt.DType]:
    n = tensor_arg(input, op)._node
    if not n.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            f"{op}(): input dtype should be floating point, got {n.dtype.name.capitalize()}",
        )
    axes = _dims(dim, n, op)
    work = n.dtype.compute
    x = cast(n, work)
    count = _count(n, axes) if axes else 1
    if not axes:
        axes = ()
    s = reduce_node(P.reduce_sum, x, axes) if axes else x
    mu = binary_node(P.div, s, const_node(count, work, n.device))
    centered = binary_node(P.sub, x, mu)
    sq = binary_node(P.mul, centered, centered)
    ss = reduce_node(P.reduce_sum, sq, axes) if axes else sq
    # torch divides by max(0, N - correction): inf (or NaN for 0/0) when too few samples.
    denom = count - correction
    var = binary_node(P.div, ss, const_node(denom if denom > 0 else 0, work, n.device))
    return (
        squeeze_unless_keepdim(var, axes, keepdim),
        squeeze_unless_keepdim(mu, axes, keepdim),
        n.dtype,
    )


def _correction(unbiased: Any, correction: Any, op: str) -> Any:
    if unbiased is not None and correction is not None:
        # torch's argument parser rejects the combination: a TypeError.
        raise op_error(TypeError, op, "cannot specify both unbiased and correction")
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(dim: Any, unbiased: Any) -> tuple[Any, Any]:
    # torch's legacy positional form: var(input, unbiased) with a bool second argument.
    if isinstance(dim, bool):
        return None, dim
    return dim, unbiased


@public(method=True)
def var(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
    out: Any = None,
) -> Tensor:
    """Variance over `dim` with Bessel's `correction` (default 1)."""
    dim, unbiased = _var_args(dim, unbiased)
    v, _, d = _var_parts(input, dim, _correction(unbiased, correction, "var"), keepdim, "var")
    result = name_grad_fn(wrap(cast(v, d)), "VarBackward0", input)
    return _into_out(result, out, "var", floating=True)


@public(method=True)
def std(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
    out: Any = None,
) -> Tensor:
    """Standard deviation over `dim` with Bessel's `correction` (default 1)."""
    dim, unbiased = _var_args(dim, unbiased)
    v, _, d = _var_parts(input, dim, _correction(unbiased, correction, "std"), keepdim, "std")
    result = name_grad_fn(wrap(cast(_safe_sqrt(v), d)), "StdBackward0", input)
    return _into_out(result, out, "std", floating=True)


@public()
def var_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Tensor, Tensor]:
    dim, unbiased = _var_args(dim, unbiased)
    v, m, d = _var_parts(
        input, dim, _correction(unbiased, correction, "var_mean"), keepdim, "var_mean"
    )
    return tuple(  # type: ignore[return-value]
        name_grad_fn(wrap(cast(r, d)), "VarMeanBackward0", input) for r in (v, m)
    )


@public()
def std_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Tensor, Tensor]:
    dim, unbiased = _var_args(dim, unbiased)
    v, m, d = _var_parts(
        input, dim, _correction(unbiased, correction, "std_mean"), keepdim, "std_mean"
    )
    return tuple(  # type: ignore[return-value]
        name_grad_fn(wrap(cast(r, d)), "StdMeanBackward0", input) for r in (_safe_sqrt(v), m)
    )


def logsumexp_node(n: Node, axes: tuple[int, ...]) -> Node:
    """log(sum(exp(x))) over axes (kept), shifted by the max so it never overflows."""
    if _count(n, axes) == 0:
        # log(0) = -inf; the max shift has no identity over an empty dim, so skip it.
        shape = tuple(1 if i in axes else d for i, d in enumerate(n.shape))
        ninf = const_node(-math.inf, n.dtype, n.device)
        return make_node(P.expand, (ninf,), (shape,), shape, n.dtype, n.device)
    m = reduce_node(P.reduce_max, n, axes)
    finite = binary_node(P.lt, unary_node(P.abs, m), const_like(math.inf, m), dt.bool_)
    # The shift cancels out of the result: no gradient flows through it (see softmax).
    shift = stop_gradient(where_node(finite, m, const_like(0, m)))
    s = reduce_node(P.reduce_sum, unary_node(P.exp, binary_node(P.sub, n, shift)), axes)
    return binary_node(P.add, unary_node(P.log, s), shift)


@public(method=True)
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:
    input = tensor_arg(input, "logsumexp")
    n = input._node
    if not n.dtype.is_floating_point:
        n = cast(n, _config.get_default_dtype())
    axes = _dims(dim, n, "logsumexp")
    if not axes:
        return _into_out(wrap(n), out, "logsumexp", floating=True)
    result = wrap(squeeze_unless_keepdim(logsumexp_node(n, axes), axes, keepdim))
    return _into_out(
        name_grad_fn(result, "LogsumexpBackward0", input), out, "logsumexp", floating=True
    )


@public(method=True)
def all(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """True where every element along `dim` is nonzero."""
    return _into_out(_logic_reduce(input, dim, keepdim, P.reduce_min, "all"), out, "all")


@public(method=True)
def any(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """True where some element along `dim` is nonzero."""
    return _into_out(_logic_reduce(input, dim, keepdim, P.reduce_max, "any"), out, "any")


def _logic_reduce(input: Tensor, dim: Any, keepdim: bool, prim: Primitive, op: str) -> Tensor:
    n = tensor_arg(input, op)._node
    b = n if n.dtype is dt.bool_ else binary_node(P.ne, n, const_like(0, n), dt.bool_)
    # Unlike sum's, an empty dim list here reduces nothing (torch's all/any).
    axes = () if isinstance(dim, (list, tuple)) and not dim else _dims(dim, n, op)
    if numel(n.shape) == 0:
        # all() of nothing is True, any() of nothing is False (the reductions' identities).
        ident = prim is P.reduce_min
        shape = tuple(1 if i in axes else d for i, d in enumerate(n.shape))
        r = make_node(
            P.expand, (const_node(ident, dt.bool_, n.device),), (shape,), shape, dt.bool_, n.device
        )
    elif not axes:
        r = b
    else:
        r = reduce_node(prim, b, axes)
    r = squeeze_unless_keepdim(r, axes, keepdim)
    # torch keeps uint8 for uint8 inputs.
    return wrap(cast(r, dt.uint8) if n.dtype is dt.uint8 else r)


@public(method=True)
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    n = tensor_arg(input, "count_nonzero")._node
    nz = cast(binary_node(P.ne, n, const_like(0, n), dt.bool_), dt.int64)
    return sum(wrap(nz), dim)


@public(method=True, inplace=True)
def cumsum(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:
    """Inclusive prefix sums along `dim` (integers and bools accumulate as int64)."""
    n = tensor_arg(input, "cumsum")._node
    out_dtype = _out_dtype(dtype, out, "cumsum") or _sum_dtype(n.dtype)
    if out_dtype is dt.bool_:
        raise op_error(
            NotImplementedError, "cumsum", "\"cumsum_out_cpu\" not implemented for 'Bool'"
        )
    x = cast(n, out_dtype)
    if not n.shape:
        normalize_dim(dim, 0, "cumsum")
        return _into_out(wrap(x), out, "cumsum")
    axis = normalize_dim(dim, len(n.shape), "cumsum")
    return _into_out(
        wrap(make_node(P.cumsum, (x,), (axis,), x.shape, x.dtype, x.device)), out, "cumsum"
    )
