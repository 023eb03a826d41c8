"""Indexing: ``x[...]`` and ``x[...] = v``, gather/scatter, index_select, masks, nonzero.

Basic indexing (ints, slices with any step, None, Ellipsis) returns a view. Tensor and list
indices ("advanced" indexing, numpy/torch rules for where the indexed dims land) become one
gather over linear positions, and assignment through them one scatter. A boolean mask's
result size depends on the data, so ``x[mask]`` and ``nonzero`` are implicit
materialization points (counted with their cause); ``x[mask] = scalar`` is not — it is a
``where`` and stays lazy.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ir.symbolic import SymInt
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    P,
    broadcast_nodes,
    cast,
    const_node,
    device_of,
    expand_node,
    normalize_dim,
    numel,
    reshape_node,
    to_node,
    wrap,
)
from lazytorch.ops.elementwise import _tensor_arg, lit, node2, where_node
from lazytorch.tensor import Tensor


# -- parsing an index -----------------------------------------------------------------------
def _as_index_tensor(item: Any, device: Any) -> Tensor:
    import numpy as np

    from lazytorch.ops.creation import tensor

    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    if arr.dtype.kind not in "biu":
        raise op_error(
            IndexError,
            "index",
            "tensors used as indices must be long, int, byte or bool tensors",
        )
    return tensor(arr if arr.dtype.kind == "b" else arr.astype(np.int64), device=device)


def _normalize_items(x: Tensor, idx: Any) -> list[Any]:
    items = list(idx) if isinstance(idx, tuple) else [idx]
    out: list[Any] = []
    for it in items:
        if isinstance(it, (list,)) or type(it).__module__ == "numpy":
            if isinstance(it, list) or getattr(it, "ndim", 0) > 0:
                it = _as_index_tensor(it, x.device)
            else:
                it = it.item()
        if isinstance(it, Tensor):
            if it.dtype.is_floating_point:
                raise op_error(
                    IndexError,
                    "index",
                    "tensors used as indices must be long, int, byte or bool tensors",
                )
            if it.dtype is dt.uint8:
                it = it.to(dt.bool_)  # type: ignore[attr-defined]
        elif not (it is None or it is Ellipsis or isinstance(it, (slice, int, SymInt))):
            raise op_error(
                IndexError,
                "index",
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(it).__name__})",
            )
        out.append(it)
    # Expand the ellipsis into full slices.
    consumed = builtins.sum(
        (it.ndim if isinstance(it, Tensor) and it.dtype is dt.bool_ else 1)
        for it in out
        if it is not None and it is not Ellipsis and not isinstance(it, bool)
    )
    if builtins.sum(1 for it in out if it is Ellipsis) > 1:
        raise op_error(IndexError, "index", "an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise op_error(IndexError, "index", f"too many indices for tensor of dimension {x.ndim}")
    if Ellipsis in [it for it in out if not isinstance(it, Tensor)]:
        k = next(i for i, it in enumerate(out) if it is Ellipsis)
        out[k : k + 1] = [slice(None)] * (x.ndim - consumed)
    return out


def _mask_to_indices(mask: Tensor, cause: str) -> list[Tensor]:
    """Boolean mask -> one int64 index tensor per mask dim (an implicit materialization)."""
    import numpy as np

    from lazytorch.ops.creation import tensor
    from lazytorch.runtime import implicit_point

    implicit_point(mask, cause)
    arr = np.asarray(mask._node.buffer, dtype=bool)
    return [
        tensor(np.ascontiguousarray(ix, dtype=np.int64), device=mask.device)
        for ix in np.nonzero(arr)
    ]


class _Parsed:
    """The basic-indexed view and the advanced indices applying to its dims."""

    __slots__ = ("advanced", "view")

    def __init__(self, view: Tensor, advanced: list[tuple[int, Tensor]]) -> None:
        self.view = view
        self.advanced = advanced


def _parse(x: Tensor, idx: Any, for_write: bool) -> _Parsed:
    from lazytorch.ops.shape import select, slice_view, unsqueeze

    items = _normalize_items(x, idx)
    v = x
    d = 0  # position in the current view
    advanced: list[tuple[int, Tensor]] = []
    for it in items:
        if it is None or it is True:
            v = unsqueeze(v, d)
            d += 1
        elif it is False:
            v = unsqueeze(v, d)
            v = slice_view(v, d, 0, 0, 1)
            d += 1
        elif isinstance(it, (int, SymInt)):
            size = v._node.shape[d]
            i = it if isinstance(it, SymInt) else operator.index(it)
            if not -size <= i < size:
                raise op_error(
                    IndexError,
                    "index",
                    f"index {i} is out of bounds for dimension {d} with size {size}",
                )
            v = select(v, d, i)
        elif isinstance(it, slice):
            size = v._node.shape[d]
            start, stop, step = _slice_bounds(it, size)
            v = slice_view(v, d, start, stop, step)
            d += 1
        elif isinstance(it, Tensor) and it.dtype is dt.bool_:
            for k, s in enumerate(it.shape):
                if s != v._node.shape[d + k]:
                    raise op_error(
                        IndexError,
                        "index",
                        f"The shape of the mask {list(it.shape)} at index {k} does not match the "
                        f"shape of the indexed tensor {list(v.shape)} at index {d + k}",
                    )
            if it.ndim == 0:
                v = unsqueeze(v, d)
                advanced.append((d, _mask_to_indices(it.reshape(1), "boolean mask index")[0]))  # type: ignore[attr-defined]
                d += 1
                continue
            for k, ix in enumerate(_mask_to_indices(it, "boolean mask index")):
                advanced.append((d + k, ix))
            d += it.ndim
        else:
            assert isinstance(it, Tensor)
            advanced.append((d, it))
            d += 1
    return _Parsed(v, advanced)


def _slice_bounds(s: slice, size: Any) -> tuple[Any, Any, int]:
    step = 1 if s.step is None else operator.index(s.step)
    if step <= 0:
        raise op_error(ValueError, "index", "step must be greater than zero")
    if isinstance(size, SymInt):
        start = 0 if s.start is None else s.start
        stop = size if s.stop is None else s.stop
        return start, stop, step
    start, stop, _ = slice(s.start, s.stop, step).indices(size)
    stop = builtins.max(stop, start)
    return start, stop, step


# -- advanced indexing ----------------------------------------------------------------------
def _linear_index(
    v: Tensor, advanced: list[tuple[int, Tensor]]
) -> tuple[Node, list[int], tuple[Any, ...]]:
    """Broadcast the index tensors and fold them into one linear index over their dims."""
    dims = [a for a, _ in advanced]
    nodes = []
    for a, t in advanced:
        n = t._node
        if n.dtype is not dt.int64:
            n = cast(n, dt.int64)
        size = v._node.shape[a]
        # Negative indices count from the end.
        neg = node2(P.lt, n, lit(0, n), dt.bool_)
        n = where_node(neg, node2(P.add, n, const_node(size, dt.int64, n.device)), n)
        nodes.append(n)
    bshape, nodes = broadcast_nodes(nodes, "index")
    bshape = tuple(bshape)
    lin = None
    for a, n in zip(dims, nodes):
        size = v._node.shape[a]
        lin = (
            n
            if lin is None
            else node2(P.add, node2(P.mul, lin, const_node(size, dt.int64, n.device)), n)
        )
    assert lin is not None
    if lin.shape != bshape:
        lin = expand_node(lin, bshape)
    return lin, dims, bshape


def _adjacent(dims: list[int]) -> bool:
    return dims == list(range(dims[0], dims[0] + len(dims)))


def _front_perm(ndim: int, dims: list[int]) -> tuple[int, ...]:
    return tuple(dims + [d for d in range(ndim) if d not in dims])


def _gather_advanced(v: Tensor, advanced: list[tuple[int, Tensor]]) -> Node:
    n = v._node
    lin, dims, bshape = _linear_index(v, advanced)
    perm = _front_perm(len(n.shape), dims)
    moved = V.Permute(perm).apply(n)
    rest = tuple(n.shape[d] for d in range(len(n.shape)) if d not in dims)
    total = numel([n.shape[d] for d in dims])
    flat = reshape_node(moved, (total, *rest))
    m = numel(bshape)
    idx = reshape_node(lin, (m,) + (1,) * len(rest))
    idx = expand_node(idx, (m, *rest))
    g = make_node(P.gather, (flat, idx), (0,), (m, *rest), n.dtype, n.device)
    out = reshape_node(g, (*bshape, *rest))
    if _adjacent(dims) and dims[0] != 0:
        # numpy rule: adjacent advanced indices keep their place in the result.
        p, k = dims[0], len(bshape)
        order = list(range(k, k + p)) + list(range(k)) + list(range(k + p, k + len(rest)))
        out = V.Permute(tuple(order)).apply(out)
    return out


def getitem(x: Tensor, idx: Any) -> Tensor:
    """``x[idx]``: a view for basic indices, a gathered copy for tensor indices."""
    parsed = _parse(x, idx, for_write=False)
    if not parsed.advanced:
        return parsed.view
    return wrap(_gather_advanced(parsed.view, parsed.advanced))


def _value_node(value: Any, like: Node, op: str) -> Node:
    if isinstance(value, Tensor):
        return cast(value._node, like.dtype)
    if isinstance(value, (int, float, bool, SymInt)):
        from lazytorch.ops._core import scalar_node

        return scalar_node(value, like.dtype, like.device)
    import numpy as np

    if isinstance(value, (list, tuple, np.ndarray)):
        from lazytorch.ops.creation import tensor

        return cast(tensor(value, device=like.device)._node, like.dtype)
    raise op_error(TypeError, op, f"can't assign a {type(value).__name__} to a tensor")


def _broadcast_value(value: Node, shape: tuple[Any, ...], op: str) -> Node:
    if value.shape == shape:
        return value
    # torch allows leading size-1 dims in the value to be dropped.
    vs = tuple(value.shape)
    while len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    if vs != tuple(value.shape):
        value = reshape_node(value, vs)
    from lazytorch.ops._core import broadcast_shapes

    try:
        out = broadcast_shapes(vs, shape, op)
    except RuntimeError:
        out = None
    if out != tuple(shape):
        raise op_error(
            RuntimeError,
            op,
            f"shape mismatch: value tensor of shape {list(vs)} cannot be broadcast to indexing result of shape {list(shape)}",
        )
    return expand_node(value, tuple(shape))


def setitem(x: Tensor, idx: Any, value: Any) -> None:
    """``x[idx] = value``: writes through views; a boolean-mask fill stays lazy."""
    # Fast, lazy path: x[mask] = scalar (or 0-d tensor) with a full-shape mask.
    if isinstance(idx, Tensor) and idx.dtype is dt.bool_ and idx.shape == x.shape:
        v = _value_node(value, x._node, "index_put")
        if not v.shape:
            V.assign(x, where_node(idx._node, v, x._node))
            return
    parsed = _parse(x, idx, for_write=True)
    target = parsed.view
    if not parsed.advanced:
        v = _value_node(value, target._node, "setitem")
        V.assign(target, _broadcast_value(v, tuple(target._node.shape), "setitem"))
        return
    index_put_(
        target, tuple(t for _, t in parsed.advanced), value, _dims=[a for a, _ in parsed.advanced]
    )


def index_put_(
    input: Tensor,
    indices: tuple[Tensor, ...],
    values: Any,
    accumulate: bool = False,
    *,
    _dims: Any = None,
) -> Tensor:
    """Write `values` at the positions `indices` select (scatter; += with accumulate)."""
    x = _tensor_arg(input, "index_put_")
    dims = _dims if _dims is not None else list(range(len(indices)))
    adv = [
        (d, t if isinstance(t, Tensor) else _as_index_tensor(t, x.device))
        for d, t in zip(dims, indices)
    ]
    expanded: list[tuple[int, Tensor]] = []
    for d, t in adv:
        if t.dtype is dt.bool_:
            for k, ix in enumerate(_mask_to_indices(t, "boolean mask index_put")):
                expanded.append((d + k, ix))
        else:
            expanded.append((d, t))
    n = x._node
    lin, dims2, bshape = _linear_index(x, expanded)
    perm = _front_perm(len(n.shape), dims2)
    moved = V.Permute(perm).apply(n)
    rest = tuple(n.shape[d] for d in range(len(n.shape)) if d not in dims2)
    total = numel([n.shape[d] for d in dims2])
    flat = reshape_node(moved, (total, *rest))
    m = numel(bshape)
    # The value is laid out like the gather result (advanced dims placed as in getitem).
    res_shape: tuple[Any, ...] = (*bshape, *rest)
    if _adjacent(dims2) and dims2[0] != 0:
        p = dims2[0]
        res_shape = (*rest[:p], *bshape, *rest[p:])
    val = _broadcast_value(_value_node(values, n, "index_put_"), res_shape, "index_put_")
    if _adjacent(dims2) and dims2[0] != 0:
        p, k = dims2[0], len(bshape)
        order = list(range(p, p + k)) + list(range(p)) + list(range(p + k, len(res_shape)))
        val = V.Permute(tuple(order)).apply(val)
    src = reshape_node(val, (m, *rest))
    idx = expand_node(reshape_node(lin, (m,) + (1,) * len(rest)), (m, *rest))
    red = "add" if accumulate else "none"
    scattered = make_node(P.scatter, (flat, idx, src), (0, red), flat.shape, n.dtype, n.device)
    back = reshape_node(scattered, tuple(moved.shape))
    inverse = tuple(sorted(range(len(perm)), key=lambda i: perm[i]))
    V.assign(x, V.Permute(inverse).apply(back))
    return x


def index_put(
    input: Tensor, indices: tuple[Tensor, ...], values: Any, accumulate: bool = False
) -> Tensor:
    from lazytorch.ops.shape import clone

    return index_put_(clone(input), indices, values, accumulate)


# -- gather / scatter family ------------------------------------------------------------------
def _check_index_tensor(index: Any, op: str) -> Node:
    if not isinstance(index, Tensor):
        raise op_error(TypeError, op, f"index must be a Tensor, got {type(index).__name__}")
    if index.dtype is not dt.int64:
        raise op_error(RuntimeError, op, f"{op}(): Expected dtype int64 for index")
    return index._node


def _fit_to_index(n: Node, idx: Node, axis: int, op: str, what: str) -> Node:
    """Slice `n` down to idx's sizes off `axis` (torch lets index be smaller there)."""
    if len(n.shape) != len(idx.shape):
        raise op_error(
            RuntimeError,
            op,
            f"Index tensor must have the same number of dimensions as {what} tensor",
        )
    stops = []
    for d, (a, b) in enumerate(zip(idx.shape, n.shape)):
        if d != axis and a > b:
            raise op_error(
                RuntimeError,
                op,
                f"Size does not match at dimension {d} expected index {list(idx.shape)} to be smaller "
                f"than self {list(n.shape)} apart from dimension {axis}",
            )
        stops.append(b if d == axis else a)
    return V.Slice((0,) * len(n.shape), tuple(stops), (1,) * len(n.shape)).apply(n)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """out[i][j] = input[index[i][j]][j] (for dim=0), and so on for other dims."""
    x = _tensor_arg(input, "gather")
    idx = _check_index_tensor(index, "gather")
    if x.ndim == 0 and idx.shape == ():
        axis = normalize_dim(dim, 0, "gather")
        one = reshape_node(x._node, (1,))
        g = make_node(P.gather, (one, reshape_node(idx, (1,))), (0,), (1,), one.dtype, one.device)
        return wrap(reshape_node(g, ()))
    axis = normalize_dim(dim, x.ndim, "gather")
    src = _fit_to_index(x._node, idx, axis, "gather", "input")
    return wrap(make_node(P.gather, (src, idx), (axis,), idx.shape, src.dtype, src.device))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        return take(input, indices)
    from lazytorch.ops.shape import broadcast_shapes

    x = _tensor_arg(input, "take_along_dim")
    axis = normalize_dim(dim, x.ndim, "take_along_dim")
    xs, ixs = list(x.shape), list(indices.shape)
    xs[axis] = 1
    ixs[axis] = 1
    b = list(broadcast_shapes(xs, ixs))
    bx, bi = list(b), list(b)
    bx[axis] = x.shape[axis]
    bi[axis] = indices.shape[axis]
    return gather(x.expand(bx), axis, indices.expand(bi))  # type: ignore[attr-defined]


def _scatter(input: Tensor, dim: int, index: Tensor, src: Any, reduce: str, op: str) -> Node:
    x = _tensor_arg(input, op)
    idx = _check_index_tensor(index, op)
    axis = normalize_dim(dim, x.ndim, op)
    n = x._node
    if isinstance(src, Tensor):
        s = _fit_to_index(cast(src._node, n.dtype), idx, -1, op, "src")
    else:
        from lazytorch.ops._core import scalar_node

        s = expand_node(scalar_node(src, n.dtype, n.device), tuple(idx.shape))
    for d, (a, b) in enumerate(zip(idx.shape, n.shape)):
        if d != axis and a > b:
            raise op_error(
                RuntimeError,
                op,
                f"Expected index {list(idx.shape)} to be smaller than self {list(n.shape)} apart from dimension {axis}",
            )
    if any(a != b for d, (a, b) in enumerate(zip(idx.shape, n.shape)) if d != axis):
        # Scatter into the leading block idx covers, then stitch it back into the rest.
        window = V.Slice(
            (0,) * len(n.shape),
            tuple(b if d == axis else a for d, (a, b) in enumerate(zip(idx.shape, n.shape))),
            (1,) * len(n.shape),
        )
        part = window.apply(n)
        updated = make_node(
            P.scatter, (part, idx, s), (axis, reduce), part.shape, n.dtype, n.device
        )
        return window.write_back(n, updated)
    return make_node(P.scatter, (n, idx, s), (axis, reduce), n.shape, n.dtype, n.device)


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """input with input[index[i][j]][j] = src[i][j] (dim=0); duplicates: one write wins."""
    if src is None:
        src = value
    if reduce not in (None, "add"):
        raise op_error(
            NotImplementedError,
            "scatter",
            f"reduce={reduce!r} is not supported (use 'add' or scatter_add)",
        )
    return wrap(_scatter(input, dim, index, src, "add" if reduce == "add" else "none", "scatter"))


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """input with src added at the positions index selects (duplicates accumulate)."""
    return wrap(_scatter(input, dim, index, src, "add", "scatter_add"))


def scatter_(
    self: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    return V.assign(self, scatter(self, dim, index, src, value=value, reduce=reduce)._node)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return V.assign(self, scatter_add(self, dim, index, src)._node)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Entries of `input` along `dim` at the positions in 1-d `index`."""
    x = _tensor_arg(input, "index_select")
    if not isinstance(index, Tensor) or index.dtype not in (dt.int64, dt.int32):
        raise op_error(
            RuntimeError, "index_select", "index_select(): Expected dtype int32/int64 for index"
        )
    if index.ndim > 1:
        raise op_error(
            IndexError, "index_select", "index_select(): Index is supposed to be a vector"
        )
    if x.ndim == 0:
        return gather(x, 0, cast_index(index).reshape(()))  # type: ignore[attr-defined]
    axis = normalize_dim(dim, x.ndim, "index_select")
    idx = cast(index._node, dt.int64)
    k = numel(idx.shape)
    n = x._node
    shape = tuple(k if d == axis else s for d, s in enumerate(n.shape))
    line = reshape_node(idx, tuple(k if d == axis else 1 for d in range(len(n.shape))))
    full = expand_node(line, shape)
    return wrap(make_node(P.gather, (n, full), (axis,), shape, n.dtype, n.device))


def cast_index(t: Tensor) -> Tensor:
    return t if t.dtype is dt.int64 else wrap(cast(t._node, dt.int64))


def take(input: Tensor, index: Tensor) -> Tensor:
    """Entries of the flattened input at `index` (result has index's shape)."""
    x = _tensor_arg(input, "take")
    idx = cast_index(index)
    flat = reshape_node(x._node, (numel(x._node.shape),))
    lin = reshape_node(idx._node, (numel(idx._node.shape),))
    size = flat.shape[0]
    neg = node2(P.lt, lin, lit(0, lin), dt.bool_)
    lin = where_node(neg, node2(P.add, lin, const_node(size, dt.int64, lin.device)), lin)
    g = make_node(P.gather, (flat, lin), (0,), lin.shape, flat.dtype, flat.device)
    return wrap(reshape_node(g, idx._node.shape))


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """`value` where `mask` is True, else input (mask broadcasts to input)."""
    x = _tensor_arg(input, "masked_fill")
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        raise op_error(RuntimeError, "masked_fill", "masked_fill_ only supports boolean masks")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise op_error(
            RuntimeError,
            "masked_fill",
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s).",
        )
    n = x._node
    from lazytorch.ops._core import broadcast_shapes

    shape = broadcast_shapes(mask._node.shape, n.shape, "masked_fill")
    if tuple(shape) != tuple(n.shape):
        raise op_error(
            RuntimeError,
            "masked_fill",
            f"The size of the mask {list(mask.shape)} must be broadcastable to the input {list(x.shape)}",
        )
    v = to_node(value, n.dtype, n.device)
    device_of(x, mask, op="masked_fill")
    return wrap(where_node(expand_node(mask._node, n.shape), v, n))


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The 1-d tensor of input's entries where mask is True (a data-dependent size)."""
    from lazytorch.ops.shape import broadcast_tensors

    x, m = broadcast_tensors(input, mask)
    return getitem(x, m)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of nonzero entries: an (n, ndim) int64 tensor, or a tuple of 1-d tensors.

    The result's size depends on the data, so this is an implicit materialization.
    """
    import numpy as np

    from lazytorch.ops.creation import tensor
    from lazytorch.runtime import implicit_point

    x = _tensor_arg(input, "nonzero")
    implicit_point(x, "nonzero()")
    arr = np.asarray(x._node.buffer, dtype=x.dtype.np)
    if x.ndim == 0:
        arr = arr.reshape(1)
    found = np.nonzero(arr)
    if as_tuple:
        return tuple(
            tensor(np.ascontiguousarray(f, dtype=np.int64), device=x.device) for f in found
        )
    stacked = np.stack(found, axis=1) if found else np.zeros((0, 0), dtype=np.int64)
    if x.ndim == 0:
        stacked = stacked[:, :0]
    return tensor(np.ascontiguousarray(stacked, dtype=np.int64), device=x.device)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)
