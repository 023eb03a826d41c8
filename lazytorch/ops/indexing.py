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
import math
import operator
from typing import Any

from lazytorch import metrics
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ir.symbolic import SymInt
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    INT64_MAX,
    INT64_MIN,
    ComplexBase,
    P,
    _rt,
    binary_node,
    broadcast_nodes,
    broadcast_shapes,
    cast,
    const_like,
    const_node,
    device_of,
    expand_node,
    leaf_node,
    normalize_dim,
    numel,
    reshape_node,
    scalar_node,
    tensor_arg,
    to_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import arange, checked_scalar, ones, tensor, zeros
from lazytorch.ops.reduction import _into_out
from lazytorch.ops.shape import broadcast_tensors, clone, select, slice_view, unsqueeze
from lazytorch.runtime import implicit_point
from lazytorch.runtime.host_views import is_external
from lazytorch.tensor import Tensor, _host_value

_BUFFER = P.buffer
_counts = metrics._counts


# -- parsing an index -----------------------------------------------------------------------
def _as_index_tensor(item: Any, device: Any) -> Tensor:
    """A list or NumPy array index as the tensor torch makes of it: bools and uint8 keep
    their dtype (masks), other numbers become int64 (floats truncated, as torch's
    ``indexing_tensor_from_data`` does)."""
    import numpy as np

    arr = np.asarray(item)
    if isinstance(item, list) and arr.dtype.kind != "b" and _holds_numpy_bool(item):
        # torch reads a list of numbers as int64, and a NumPy bool is no integer to it
        raise op_error(
            TypeError, "index", "'numpy.bool' object cannot be interpreted as an integer"
        )
    if arr.dtype.kind in "iuf" and arr.dtype != np.uint8:
        arr = arr.astype(np.int64)
    elif arr.dtype.kind != "b" and arr.dtype != np.uint8:
        raise op_error(
            IndexError,
            "index",
            "tensors used as indices must be long, int, byte or bool tensors",
        )
    return tensor(arr, device=device)


def _holds_numpy_bool(seq: list[Any]) -> bool:
    return builtins.any(
        isinstance(it, np.bool_) or (isinstance(it, list) and _holds_numpy_bool(it)) for it in seq
    )


def _sequence_as_tuple(idx: Any) -> bool:
    """torch's legacy rule (numpy's before 1.23): a short list that holds a tensor, a
    sequence, a slice, None or Ellipsis is a tuple of indices, so ``x[[0, [1, 2]]]`` is
    ``x[0, [1, 2]]`` while ``x[[0, 1]]`` is one index list."""
    if not isinstance(idx, list) or len(idx) >= 32:
        return False
    import numpy as np

    return builtins.any(
        it is None or it is Ellipsis or isinstance(it, (Tensor, list, tuple, slice, np.ndarray))
        for it in idx
    )


def _check_zero_dim_index(idx: Any) -> None:
    """torch's own messages for a bare integer or slice on a 0-dim tensor: the pre-0.4
    ``loss.data[0]`` of old scripts gets torch's hint to use ``item()``."""
    if isinstance(idx, (int, SymInt, np.integer)) and not isinstance(idx, (bool, np.bool_)):
        raise op_error(
            IndexError,
            "index",
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python to convert a "
            "0-dim tensor to a number",
        )
    if isinstance(idx, slice):
        _slice_bounds(idx, 0)  # a bad step is the error first, as torch reads the slice
        raise op_error(IndexError, "index", "slice() cannot be applied to a 0-dim tensor.")


def _invalid_index(it: Any) -> Exception:
    return op_error(
        IndexError,
        "index",
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
        f"are valid indices (got {type(it).__module__}.{type(it).__name__})",
    )


def _is_mask(t: Tensor) -> bool:
    """A bool or uint8 index tensor selects by mask (uint8 is torch's deprecated mask)."""
    return t.dtype is dt.bool_ or t.dtype is dt.uint8


class _Refused:
    """An index torch refuses, with the error to raise when the walk reaches it (`late`:
    once every index is read, as torch checks index tensors' dtypes)."""

    __slots__ = ("error", "late")

    def __init__(self, error: Exception, late: bool) -> None:
        self.error = error
        self.late = late


def _index_item(it: Any, device: Any) -> tuple[Any, int]:
    """One index (not None, Ellipsis or a bool) as an int, slice or checked index tensor,
    and how many dims torch counts it as naming."""
    if isinstance(it, (slice, int, SymInt)):  # the common case first (bools came before)
        return it, 1
    if isinstance(it, str):
        # torch tries to build an index tensor from any sequence, and a str cannot be one
        raise op_error(TypeError, "index", "new(): invalid data type 'str'")
    if isinstance(it, range):  # torch reads a range as the list of its values
        it = list(it)
    if isinstance(it, Tensor):
        return _checked_index(it), (it.ndim if _is_mask(it) else 1)
    if isinstance(it, (list, np.ndarray)):
        return _as_index_tensor(it, device), 1
    if isinstance(it, np.generic):
        if not isinstance(it, np.integer):  # np.bool_ and floats: torch refuses them
            raise _invalid_index(it)
        return int(it), 1
    if hasattr(type(it), "__index__"):  # torch takes any integer-like object
        return operator.index(it), 1
    raise _invalid_index(it)


def _normalize_items(x: Tensor, idx: Any) -> tuple[list[Any], int]:
    """The index as a list of None, Ellipsis, Python bools, ints, slices and checked index
    tensors, and the number of dims torch counts it as naming.

    The count is torch's (``count_specified_dimensions``), which is not always the number
    of dims consumed: a bool or uint8 tensor counts its ndim, None, Ellipsis and the Python
    bools count nothing, and everything else counts one, a NumPy array or a list too (even
    a 2-d mask) and a NumPy bool scalar (which torch then refuses), so ``x[np.True_]`` on a
    0-d tensor is "too many indices" where ``x[True]`` is not.
    """
    if x.ndim == 0:
        _check_zero_dim_index(idx)
    if _sequence_as_tuple(idx):
        idx = tuple(idx)
    items = list(idx) if isinstance(idx, tuple) else [idx]
    out: list[Any] = []
    specified = 0
    for it in items:
        if it is None or it is Ellipsis or it is True or it is False:
            out.append(it)
            continue
        try:
            it, counted = _index_item(it, x.device)
        except (IndexError, TypeError) as e:
            # raised where torch reaches it: after the count's check and the indices
            # before it (an index tensor's dtype: after all of them)
            it, counted = _Refused(e, late=isinstance(it, Tensor)), 1
        specified += counted
        out.append(it)
    if specified > x.ndim:
        raise op_error(IndexError, "index", f"too many indices for tensor of dimension {x.ndim}")
    return out, specified


def _mask_to_indices(mask: Tensor, cause: str) -> list[Tensor]:
    """Boolean mask -> one int64 index tensor per mask dim (an implicit materialization)."""
    import numpy as np

    implicit_point(mask, cause)
    arr = np.asarray(_host_value(mask._node), dtype=bool)
    return [
        tensor(np.ascontiguousarray(ix, dtype=np.int64), device=mask.device)
        for ix in np.nonzero(arr)
    ]


def _bool_index(flag: bool, device: Any) -> Tensor:
    """torch's index for a Python bool on its new size-1 dim: [0] for True, [] for False."""
    return wrap(expand_node(const_node(0, dt.int64, device), (1 if flag else 0,)))


class _Parsed:
    """The basic-indexed view and the advanced indices applying to its dims.

    `advanced` holds (dim of the view, index tensor): an integer tensor (a 0-d one is
    torch's select, kept lazy as a one-entry gather), or a bool/uint8 mask of one or more
    dims starting there (expanded to integer indices by `_expand_masks` where needed).
    """

    __slots__ = ("advanced", "view")

    def __init__(self, view: Tensor, advanced: list[tuple[int, Tensor]]) -> None:
        self.view = view
        self.advanced = advanced


def _past_the_end(x: Tensor) -> Exception:
    # After two Ellipses each skipping the dims no index names, what follows names a dim
    # past the last: torch's check reads past its sizes there (IndexError, or none).
    return op_error(
        IndexError,
        "index",
        f"too many indices for tensor of dimension {x.ndim}: an index after the Ellipses "
        "names a dim past the last",
    )


def _parse(x: Tensor, idx: Any) -> _Parsed:
    """Apply the basic indices (views) and collect the advanced ones, walking the dims as
    torch's ``applySlicing`` does: each Ellipsis moves the position past the dims no index
    names, so ``x[..., ...]`` (two of them) is x where both cover nothing or nothing
    follows them."""
    items, specified = _normalize_items(x, idx)
    v = x
    d = 0  # position in the current view
    advanced: list[tuple[int, Tensor]] = []
    selected = 0  # integer indices so far (each drops a dimension)
    masks: list[tuple[int, Tensor]] = []
    late: list[Exception] = []
    for it in items:
        if it is Ellipsis:
            d += x.ndim - specified
            continue
        if isinstance(it, _Refused):
            if not it.late:
                raise it.error
            late.append(it.error)
            d += 1
            continue
        nd = len(v._node.shape)
        if it is None or it is True or it is False:
            if d > nd:
                raise _past_the_end(x)
            v = unsqueeze(v, d)
            if it is not None:  # a Python bool indexes its new dim with [0] or []
                advanced.append((d, _bool_index(it, x.device)))
            d += 1
            continue
        if isinstance(it, Tensor) and it.ndim == 0 and _is_mask(it):
            # a 0-d mask: a new dim, indexed with [0] or [] by the mask's value (a cut)
            if d > nd:
                raise _past_the_end(x)
            v = unsqueeze(v, d)
            advanced.append((d, _mask_to_indices(it.reshape(1), "boolean mask index")[0]))  # type: ignore[attr-defined]
            d += 1
            continue
        span = it.ndim if isinstance(it, Tensor) and _is_mask(it) else 1
        if d + span > nd:
            raise _past_the_end(x)
        if isinstance(it, (int, SymInt)):
            size = v._node.shape[d]
            i = it if isinstance(it, SymInt) else operator.index(it)
            if not -size <= i < size:
                # torch counts the dimension in the index (each integer before it too)
                raise op_error(
                    IndexError,
                    "index",
                    f"index {i} is out of bounds for dimension {d + selected} with size {size}",
                )
            v = select(v, d, i)
            selected += 1
        elif isinstance(it, slice):
            size = v._node.shape[d]
            start, stop, step = _slice_bounds(it, size)
            # a whole dim (``:``) makes no view of its own: the index's result is still a
            # view (getitem makes an alias when no index made one)
            whole = stop is size or (type(stop) is int and type(size) is int and stop == size)
            if not (type(start) is int and start == 0 and step == 1 and whole):
                v = slice_view(v, d, start, stop, step)
            d += 1
        else:
            assert isinstance(it, Tensor)
            if _is_mask(it):
                masks.append((d, it))
            elif it.ndim == 0:
                _check_select_index(v, d, it, d + selected)
            advanced.append((d, it))
            d += span
    # torch checks index tensors when it indexes, after every index is read (a bad slice
    # step after a mask is the error): dtypes first, then masks' shapes (no later index
    # changed the dims a mask covers)
    if late:
        raise late[0]
    for d, mask in masks:
        _check_mask_shape(v, d, mask)
    return _Parsed(v, advanced)


def _check_mask_shape(v: Tensor, d: int, mask: Tensor) -> None:
    """A mask must have the sizes of the dims it covers (from `d`), as torch checks."""
    for k, s in enumerate(mask.shape):
        if s != v._node.shape[d + k]:
            raise op_error(
                IndexError,
                "index",
                f"The shape of the mask {list(mask.shape)} at index {k} does not match the "
                f"shape of the indexed tensor {list(v.shape)} at index {d + k}",
            )


def _check_select_index(v: Tensor, d: int, index: Tensor, real_dim: int) -> None:
    """A 0-d index is torch's select, whose range check is eager: made here where the
    index's value is on the host already (an index still to compute is checked by the
    gather at the cut, which does not check an empty result)."""
    b = index._node.buffer
    if b.__class__ is not np.ndarray:
        return
    i, size = int(b), v._node.shape[d]
    if not -size <= i < size:
        raise op_error(
            IndexError,
            "index",
            f"index {i} is out of bounds for dimension {real_dim} with size {size}",
        )


def _expand_masks(advanced: list[tuple[int, Tensor]], cause: str) -> list[tuple[int, Tensor]]:
    """The advanced indices with each mask replaced by the integer indices of its True
    entries, one per mask dim (an implicit materialization of the mask)."""
    out: list[tuple[int, Tensor]] = []
    for d, t in advanced:
        if _is_mask(t):
            out.extend((d + k, ix) for k, ix in enumerate(_mask_to_indices(t, cause)))
        else:
            out.append((d, t))
    return out


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
    sizes = [v._node.shape[a] for a in dims]
    nodes = []
    for (_, t), size in zip(advanced, sizes):
        n = t._node
        if n.dtype is not dt.int64:
            n = cast(n, dt.int64)
        # Negative indices count from the end.
        neg = binary_node(P.lt, n, const_like(0, n), dt.bool_)
        n = where_node(neg, binary_node(P.add, n, const_node(size, dt.int64, n.device)), n)
        nodes.append(n)
    try:
        bshape, nodes = broadcast_nodes(nodes, "index")
    except RuntimeError:
        shapes = ", ".join(str(list(t.shape)) for _, t in advanced)
        raise op_error(
            IndexError,
            "index",
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}",
        ) from None
    bshape = tuple(bshape)
    if numel(bshape) and builtins.any(s == 0 for s in sizes):
        # torch checks this one eagerly (there is no position to point at)
        raise op_error(IndexError, "index", "index is out of bounds for dimension with size 0")
    lin = None
    bad = None
    for size, n in zip(sizes, nodes):
        dev = n.device
        if len(nodes) > 1:
            # An out-of-range index in one dim can fold into an in-range linear position
            # (x[[0], [3]] on 3 columns would read x[1, 0]): flag it for the bounds check.
            out = binary_node(
                P.bitwise_or,
                binary_node(P.lt, n, const_like(0, n), dt.bool_),
                binary_node(P.ge, n, const_node(size, dt.int64, dev), dt.bool_),
            )
            bad = out if bad is None else binary_node(P.bitwise_or, bad, out)
        lin = (
            n
            if lin is None
            else binary_node(P.add, binary_node(P.mul, lin, const_node(size, dt.int64, dev)), n)
        )
    assert lin is not None
    if bad is not None:
        # numel(sizes) is the first invalid linear position: the gather/scatter's bounds
        # check raises there, at materialization, like any other out-of-range index.
        lin = where_node(bad, const_node(numel(sizes), dt.int64, lin.device), lin)
    if lin.shape != bshape:
        lin = expand_node(lin, bshape)
    return lin, dims, bshape


def _block_position(advanced: list[tuple[int, Tensor]]) -> int:
    """Where the result's broadcast index dims go among the dims no index takes (numpy's
    rule, torch's): in the indexed dims' place when those are adjacent, else first.

    A 0-d integer index is torch's select, not an advanced index: it takes its dim away
    and places nothing, so ``x[t0, :, [0, 1]]`` (t0 a 0-d tensor) is ``x[0][:, [0, 1]]``.
    """
    zero_d = [d for d, t in advanced if t.ndim == 0]
    dims = [d - builtins.sum(1 for z in zero_d if z < d) for d, t in advanced if t.ndim]
    if dims and dims == list(range(dims[0], dims[0] + len(dims))):
        return dims[0]
    return 0


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
    p = _block_position(advanced)
    if p and bshape:
        k = len(bshape)
        order = list(range(k, k + p)) + list(range(k)) + list(range(k + p, k + len(rest)))
        out = V.Permute(tuple(order)).apply(out)
    return out


def getitem(x: Tensor, idx: Any) -> Tensor:
    """``x[idx]``: a view for basic indices, a gathered copy for tensor indices."""
    # Fast paths for the most common forms, x[i] and x[a:b:c] (same checks, no parsing).
    if x._node.shape:
        if type(idx) is int:
            size = x._node.shape[0]
            if not -size <= idx < size:
                raise op_error(
                    IndexError,
                    "index",
                    f"index {idx} is out of bounds for dimension 0 with size {size}",
                )
            i = idx % size
            n = x._node
            b = _host_buffer(n)
            if b is not None:  # buffer[i, ...]: a 0-d view for a vector, not a NumPy scalar
                return V.make_view(x, V.Select(0, i), _view_leaf(n, n.shape[1:], b[i, ...]))
            return V.make_view(x, V.Select(0, i))
        if type(idx) is slice:
            return slice_view(x, 0, *_slice_bounds(idx, x._node.shape[0]))
        if (
            type(idx) is tuple
            and 0 < len(idx) <= len(x._node.shape)
            and all([type(k) is int for k in idx])
        ):
            # x[i, j]: x[i][j], as _parse would select dim 0 once per integer
            b = _host_buffer(x._node)
            if b is not None:
                return _element_now(x, b, idx)
    parsed = _parse(x, idx)
    if not parsed.advanced:
        # (x[...] is an alias, as torch's: a view, not x itself)
        return parsed.view if parsed.view is not x else V.make_view(x, V.Reshape(x._node.shape))
    adv = _expand_masks(parsed.advanced, "boolean mask index")
    return wrap(_gather_advanced(parsed.view, adv))


def _host_buffer(n: Node) -> Any:
    """`n`'s computed, contiguous host buffer, if an integer index may read it now: a row
    or element is then a NumPy view of it, no copy and no program, so that ``x[i].item()``
    in a loop costs a few microseconds (the read `lazytorch.runtime.host_views` would do at
    the cut, done early because here it is free). None where the view must stay a movement
    of its input (recorded nodes): inside a ``lazytorch.compile`` trace, and where autograd
    differentiates through it (``n.ag``: the window's nodes are what backward reads)."""
    b = n.buffer
    if b.__class__ is not np.ndarray or n.ag or _rt._compile_trace is not None:
        return None
    return b if b.flags.c_contiguous and b.shape == n.shape else None


def _view_leaf(n: Node, shape: tuple[Any, ...], value: Any) -> Node:
    """A buffer leaf of `shape` holding `value`, a view into `n`'s host buffer (counted as
    ``host_view_reads``). Its provenance is `n`'s line: the value is n's memory (and no stack
    walk per read)."""
    dtype, device = n.dtype, n.device
    _counts["host_view_reads"] += 1  # metrics.increment, inlined
    if is_external(value):  # memory NumPy code or another process writes: read a copy
        value = value.copy()
    h = hash((_BUFFER, dtype, shape, device))
    return Node(_BUFFER, (), (), shape, dtype, device, h, n.loc, value)


def _element_now(x: Tensor, buffer: Any, idx: tuple[int, ...]) -> Tensor:
    """``x[i, j, ...]`` (integers) of `x`'s host `buffer` (`_host_buffer`): one leaf viewing
    the element (or sub-array), linked to `x` through one Select step per integer, as
    x[i][j] would be."""
    shape = x._node.shape
    at = []
    steps = []
    outs = []
    d = 0
    for i in idx:
        size = shape[d]
        if not -size <= i < size:
            raise op_error(
                IndexError,
                "index",
                f"index {i} is out of bounds for dimension {d} with size {size}",
            )
        if i < 0:
            i += size
        at.append(i)
        steps.append(V.Select(0, i))
        d += 1
        outs.append(shape[d:])
    at.append(...)
    leaf = _view_leaf(x._node, shape[d:], buffer[tuple(at)])
    return V.make_view_of_value(x, tuple(steps), tuple(outs), leaf)


def _value_node(value: Any, like: Node, op: str) -> Node:
    """An assigned value (a Tensor or a number, as torch takes) in `like`'s dtype."""
    import numpy as np

    if isinstance(value, Tensor):
        return cast(value._node, like.dtype)
    if isinstance(value, np.integer):
        # torch takes NumPy integers (and float64, a float subclass) but refuses other
        # NumPy scalars, as it does arrays and lists.
        value = int(value)
    if isinstance(value, (int, float, bool)):  # torch's overflow check, as its fills
        # (float16 and bfloat16 take any number: too large is inf, as in torch)
        d = like.dtype
        return scalar_node(
            checked_scalar(value, d, op, check_float=not d.is_low_float), d, like.device
        )
    if isinstance(value, SymInt):
        return scalar_node(value, like.dtype, like.device)
    raise op_error(
        TypeError, op, f"can't assign a {type(value).__name__} to a {like.dtype.name} tensor"
    )


# What `_value_node` takes, with NumPy integers (float64 is a float subclass).
_VALUES = (Tensor, int, float, SymInt)


def _broadcast_value(
    value: Node, shape: tuple[Any, ...], op: str, drop_leading_ones: bool = True
) -> Node:
    if value.shape == shape:
        return value
    # torch allows leading size-1 dims in the value to be dropped.
    vs = tuple(value.shape)
    while drop_leading_ones and len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    if vs != tuple(value.shape):
        value = reshape_node(value, vs)

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
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        # torch unpacks an assigned Python int as an int64, whatever the tensor's dtype
        raise op_error(ValueError, "setitem", "Overflow when unpacking long long")
    if not isinstance(value, _VALUES) and not isinstance(value, np.integer):
        _value_node(value, x._node, "setitem")  # torch converts it before it reads the index
    # Fast, lazy path: x[mask] = scalar (or 0-d tensor) with a full-shape mask.
    if isinstance(idx, Tensor) and idx.dtype is dt.bool_ and idx.shape == x.shape:
        v = _value_node(value, x._node, "index_put")
        if not v.shape:
            _check_fill_value(value, x.dtype)
            V.assign(x, where_node(idx._node, v, x._node))
            return
    # A number through a basic index: written on the host where the rules allow (a bad
    # index is left to the recorded path below, which raises torch's error). Refused, the
    # same rules refuse the view the index makes, so they are not asked twice.
    host_tried = type(value) in _NUMBERS and _basic_index(idx)
    if host_tried and _host_write(x, value, idx):
        return
    if idx is False:  # torch converts the value, then writes nothing
        _value_node(value, x._node, "setitem")
        return
    if idx is True:  # torch writes x.unsqueeze(0), as for None
        idx = None
    parsed = _parse(x, idx)
    target = parsed.view
    if not parsed.advanced and not host_tried and _host_write(target, value):
        return
    if not parsed.advanced:
        v = _value_node(value, target._node, "setitem")
        # torch copies into the target, and refuses a target whose elements alias each
        # other (an expanded view) even for one broadcast value.
        V.assign(
            target, _broadcast_value(v, tuple(target._node.shape), "setitem"), allow_overlap=False
        )
        return
    _put(target, parsed.advanced, value, False)


def _check_fill_value(value: Any, dtype: dt.DType) -> None:
    """torch fills through a mask with the value's item, converted with its overflow check
    (``x[m] = tensor(300)`` on int8 is an error, not 44): checked here where a tensor
    value is on the host already (a number was checked when it became a node)."""
    b = value._node.buffer if isinstance(value, Tensor) else None
    if b.__class__ is np.ndarray:
        checked_scalar(b.reshape(()).item(), dtype, "index_put_")


def _put(
    x: Tensor,
    adv: list[tuple[int, Tensor]],
    value: Any,
    accumulate: bool,
    drop_leading_ones: bool = True,
    zero_d_selects: bool = True,
) -> None:
    """x[adv] = value (or += with accumulate) as torch's index_put_ does it.

    Through one mask (and no other index tensor) with a one-element value, torch fills
    (masked_fill_): the value is converted, and a uint8 mask is refused. Through 0-d
    integer indices only, it selects and copies: converted too (`zero_d_selects`: as
    ``x[t0] = v`` does; ``index_put_`` takes a 0-d index as an index). Otherwise it puts,
    and a tensor value must have x's dtype.
    """
    indices = [t for _, t in adv if t.ndim or not zero_d_selects]
    one = not isinstance(value, Tensor) or numel(value._node.shape) == 1
    if not accumulate and one and len(indices) == 1 and _is_mask(indices[0]):
        if indices[0].dtype is dt.uint8:
            raise op_error(
                RuntimeError,
                "index_put_",
                "masked_fill_ only supports boolean masks, but got mask with dtype uint8",
            )
        _check_fill_value(value, x.dtype)
        v = reshape_node(_value_node(value, x._node, "index_put_"), ())
        if len(adv) == 1:  # stays lazy: a where over the mask's dims
            d, mask = adv[0]
            n = x._node
            m = reshape_node(mask._node, (1,) * d + mask._node.shape)
            m = reshape_node(m, m.shape + (1,) * (len(n.shape) - len(m.shape)))
            V.assign(x, where_node(expand_node(m, n.shape), v, n))
            return
        _index_put(x, _expand_masks(adv, "boolean mask index_put"), v, False)
        return
    v = _value_node(value, x._node, "index_put_")
    adv = _expand_masks(adv, "boolean mask index_put")
    same = value.dtype if isinstance(value, Tensor) and indices else None
    _index_put(x, adv, v, accumulate, drop_leading_ones, same)


# The most elements `_host_write` copies for one write (the char-RNN tutorials' one-hot
# tensors: up to a few hundred).
HOST_WRITE_MAX = 4096


def _host_write(target: Tensor, value: Any, idx: Any = Ellipsis) -> bool:
    """Write a Python number into a small tensor now, with NumPy, where that is the same as
    recording the write; returns whether it did.

    ``t = zeros(len(line), 1, n_letters)`` then ``t[i][0][letter] = 1`` per letter (the
    char-RNN tutorials' one-hot lines, each step): recorded, each write is a pad and a where
    over the whole tensor in the next program, with its position in the program's key, so
    every step misses the cache and the host folds compute it back. Written now, ``t`` is a
    buffer leaf and the step's program reads it as an input.

    Only where nothing can tell the difference: the root's value is on the host already (a
    CPU buffer, or ``zeros``/``ones``/``full`` not yet computed), has at most
    `HOST_WRITE_MAX` elements and no autograd, but for a grad leaf written through a
    detached alias (``w.data[i][j] = 0``: the leaf takes a new value autograd does not see);
    nor memory shared with NumPy or another process, a compile trace recording, a meta
    device; the value is an int or float (not
    a bool), converted with torch's overflow check; the view is a NumPy view of the root
    (no expanded dim). The root's value is copied, written and assigned: readers of the
    value before keep it.

    `idx` is a basic index (`_basic_index`) applied to `target` by NumPy, with no view
    tensor made for it; one NumPy refuses (out of range) returns False before anything is
    written, and the recorded path then raises torch's error.
    """
    if type(value) not in _NUMBERS or target.dtype is dt.bool_:
        return False
    root, steps = (target, ()) if target._view is None else target._view
    rn = root._node
    meta = getattr(root, "_meta", None)
    # a grad leaf written through ``.data`` (a detached alias): a new value for the same
    # leaf, which autograd does not see, as the recorded write makes it
    through_data = meta is not None and rn.ag is meta and V.Detach in map(type, steps)
    if (
        ((rn.ag is not None or meta is not None) and not through_data)
        or rn.device is not CPU
        or V._compile_trace is not None
        or _rt._compile_trace is not None
        or (V._grad_aliases and V.Detach in map(type, steps))
    ):
        return False  # (a detached alias may hold a value with gradient: views._grad_alias)
    base = _host_base(rn)
    if base is None or base.size > HOST_WRITE_MAX or V.external_memory(base):
        return False  # (memory NumPy code or another process shares: its own write rules)
    new = np.array(base, copy=True, order="C")
    view = V.host_view(new, steps)  # (None through an expanded dim: torch's rules apply)
    if view is None:
        return False
    try:
        view[idx]  # (a bad index: IndexError, torch's own error is the recorded path's)
    except IndexError:
        return False
    # torch's overflow check; the value rounded as c10 converts it (NumPy's float16 cast of
    # a double rounds once, c10's twice, by way of float32)
    d = target.dtype
    view[idx] = d.to_python(checked_scalar(value, d, "setitem", check_float=not d.is_low_float))
    V.assign(root, leaf_node(new, CPU), detached=through_data)
    return True


_NUMBERS = (int, float)


def _basic_index(idx: Any) -> bool:
    """Whether `idx` is an index NumPy reads as torch does: ints (not bools), slices of
    int bounds and positive steps, None and Ellipsis, alone or in a tuple."""
    for it in idx if type(idx) is tuple else (idx,):
        t = type(it)
        if t is int or it is None or it is Ellipsis:
            continue
        if t is not slice:
            return False
        for b in (it.start, it.stop):
            if b is not None and type(b) is not int:
                return False
        if it.step is not None and (type(it.step) is not int or it.step <= 0):
            return False
    return True


def _host_base(n: Node) -> Any:
    """`n`'s value as a NumPy array if it is a CPU buffer or a filled constant of at most
    `HOST_WRITE_MAX` elements not yet computed (a larger one is not filled just to be
    refused), else None."""
    b = n.buffer
    if b is not None:
        return b if type(b) is np.ndarray else None
    if n.op is not P.expand or not all(type(d) is int for d in n.shape):
        return None
    if math.prod(n.shape) > HOST_WRITE_MAX:
        return None
    src = n.inputs[0]
    if src.shape != ():
        return None
    if src.op is P.const:
        fill = src.attrs[0]
    elif src.buffer is not None and src.op.name == "scalar":
        fill = src.buffer
    else:
        return None
    return np.full(n.shape, fill, dtype=n.dtype.np)


@public(torch=False, method=True)
def index_put_(
    input: Tensor, indices: tuple[Tensor, ...], values: Tensor, accumulate: bool = False
) -> Tensor:
    """Write `values` at the positions `indices` (one index tensor per leading dim) select
    (a scatter; += with accumulate, where duplicate positions add up)."""
    x = tensor_arg(input, "index_put_")
    if not isinstance(values, Tensor):
        raise op_error(
            TypeError,
            "index_put_",
            f"index_put_(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}",
        )
    adv = []
    d = 0  # a mask takes as many dims as it has
    for k, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise op_error(
                TypeError,
                "index_put_",
                f"expected Tensor as element {k} in argument 0, but got {type(t).__name__}",
            )
        t = _checked_index(t)
        adv.append((d, t))
        d += t.ndim if _is_mask(t) else 1
    if d > x.ndim:
        raise op_error(
            IndexError, "index_put_", f"too many indices for tensor of dimension {x.ndim}"
        )
    for d, t in adv:
        if _is_mask(t):
            _check_mask_shape(x, d, t)
    # (unlike x[i] = v, index_put_ does not drop the value's leading size-1 dims)
    _put(x, adv, values, accumulate, drop_leading_ones=False, zero_d_selects=False)
    return x


def _checked_index(t: Tensor) -> Tensor:
    """An index tensor of a dtype torch takes (long, int, byte = mask, bool)."""
    if t.dtype not in (dt.int64, dt.int32, dt.uint8, dt.bool_):
        raise op_error(
            IndexError, "index", "tensors used as indices must be long, int, byte or bool tensors"
        )
    return t


def _index_put(
    x: Tensor,
    adv: list[tuple[int, Tensor]],
    value: Node,
    accumulate: bool,
    drop_leading_ones: bool = True,
    value_dtype: dt.DType | None = None,
) -> Tensor:
    """Scatter `value` (x's dtype) into x at the integer indices `adv` (dim, index); a
    `value_dtype` given must be x's (checked after the indices, in torch's order)."""
    n = x._node
    lin, dims2, bshape = _linear_index(x, adv)
    if value_dtype is not None and value_dtype is not n.dtype:
        raise op_error(
            RuntimeError,
            "index_put_",
            f"Index put requires the source and destination dtypes match, got {n.dtype.name} "
            f"for the destination and {value_dtype.name} for the source.",
        )
    perm = _front_perm(len(n.shape), dims2)
    moved = V.Permute(perm).apply(n)
    rest = tuple(n.shape[d] for d in range(len(n.shape)) if d not in dims2)
    total = numel([n.shape[d] for d in dims2])
    flat = reshape_node(moved, (total, *rest))
    m = numel(bshape)
    # The value is laid out like the gather result (advanced dims placed as in getitem).
    p, k = _block_position(adv), len(bshape)
    res_shape: tuple[Any, ...] = (*rest[:p], *bshape, *rest[p:])
    val = _broadcast_value(value, res_shape, "index_put_", drop_leading_ones)
    if p and k:
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


@public(method=True)
def index_put(
    input: Tensor, indices: tuple[Tensor, ...], values: Any, accumulate: bool = False
) -> Tensor:
    return index_put_(clone(input), indices, values, accumulate)


# -- gather / scatter family ------------------------------------------------------------------
def _check_index_tensor(index: Any, op: str) -> Node:
    """The int64 node of a gather/scatter index (torch accepts int32 too)."""
    if not isinstance(index, Tensor):
        raise op_error(TypeError, op, f"index must be a Tensor, got {type(index).__name__}")
    if index.dtype not in (dt.int64, dt.int32):
        raise op_error(RuntimeError, op, f"{op}(): Expected dtype int32/int64 for index")
    return cast(index._node, dt.int64)


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


@public(method=True)
def gather(
    input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False, out: Any = None
) -> Tensor:
    """out[i][j] = input[index[i][j]][j] (for dim=0), and so on for other dims."""
    x = tensor_arg(input, "gather")
    idx0 = _check_index_tensor(index, "gather")
    axis = normalize_dim(dim, x.ndim, "gather")
    n, idx = _as_1d(x._node), _as_1d(idx0)
    src = _fit_to_index(n, idx, axis, "gather", "input")
    g = make_node(P.gather, (src, idx), (axis,), idx.shape, src.dtype, src.device)
    return _into_out(wrap(reshape_node(g, idx0.shape)), out, "gather")


def _as_1d(n: Node) -> Node:
    # gather/scatter treat a 0-d input, index or src as 1-d of one element, as torch does.
    return reshape_node(n, (1,)) if not n.shape else n


@public(method=True)
def take_along_dim(
    input: Tensor, indices: Tensor, dim: int | None = None, *, out: Any = None
) -> Tensor:
    x = tensor_arg(input, "take_along_dim")
    if not isinstance(indices, Tensor) or indices.dtype is not dt.int64:
        got = indices.dtype.name if isinstance(indices, Tensor) else type(indices).__name__
        raise op_error(
            RuntimeError,
            "take_along_dim",
            f"torch.take_along_dim(): dtype of indices should be Long but got {got}",
        )
    if dim is None:
        # Both are flattened (a 1-d result whatever the index's shape), then gathered.
        return _into_out(gather(x.reshape(-1), 0, indices.reshape(-1)), out, "take_along_dim")  # type: ignore[attr-defined]
    if x.ndim != indices.ndim:
        raise op_error(
            RuntimeError,
            "take_along_dim",
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {x.ndim} dimensions for input, and {indices.ndim} dimensions "
            "for indices",
        )
    axis = normalize_dim(dim, x.ndim, "take_along_dim")
    xs, ixs = list(x.shape), list(indices.shape)
    xs[axis] = 1
    ixs[axis] = 1
    b = list(broadcast_shapes(tuple(xs), tuple(ixs), "broadcast_shapes"))
    bx, bi = list(b), list(b)
    bx[axis] = x.shape[axis]
    bi[axis] = indices.shape[axis]
    idx = indices.expand(bi)  # type: ignore[attr-defined]
    size = x.shape[axis]
    if size == 0 and idx.numel():
        raise op_error(RuntimeError, "take_along_dim", "ZeroDivisionError")
    if size:
        # torch 2.13 takes every index modulo the dim's size (Python's sign rule), so -1 is
        # the last element and nothing is out of range.
        n = idx._node
        idx = wrap(binary_node(P.remainder, n, const_node(size, dt.int64, n.device)))
    return _into_out(gather(x.expand(bx), axis, idx), out, "take_along_dim")  # type: ignore[attr-defined]


def _scatter(input: Tensor, dim: int, index: Tensor, src: Any, reduce: str, op: str) -> Node:
    x = tensor_arg(input, op)
    idx = _as_1d(_check_index_tensor(index, op))
    axis = normalize_dim(dim, x.ndim, op)
    n0 = x._node
    n = _as_1d(n0)
    if len(idx.shape) != len(n.shape):
        raise op_error(
            RuntimeError,
            op,
            "Index tensor must have the same number of dimensions as self tensor",
        )
    if isinstance(src, Tensor):
        if src.dtype is not n.dtype:
            raise op_error(
                RuntimeError, op, f"{op}(): Expected self.dtype to be equal to src.dtype"
            )
        s = _fit_to_index(_as_1d(src._node), idx, -1, op, "src")
    else:
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
        return reshape_node(window.write_back(n, updated), n0.shape)
    out = make_node(P.scatter, (n, idx, s), (axis, reduce), n.shape, n.dtype, n.device)
    return reshape_node(out, n0.shape)


@public(method=True)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
    out: Any = None,
) -> Tensor:
    """input with input[index[i][j]][j] = src[i][j] (dim=0); duplicates: one write wins
    (or all of them combine, with reduce='add' / 'multiply')."""
    if src is None:
        src = value
    if reduce not in (None, "add", "multiply"):
        raise op_error(RuntimeError, "scatter", "reduce argument must be either add or multiply.")
    return _into_out(
        wrap(_scatter(input, dim, index, src, reduce or "none", "scatter")), out, "scatter"
    )


@public(method=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *, out: Any = None) -> Tensor:
    """input with src added at the positions index selects (duplicates accumulate)."""
    return _into_out(
        wrap(_scatter(input, dim, index, src, "add", "scatter_add")), out, "scatter_add"
    )


@public(torch=False, method=True)
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


@public(torch=False, method=True)
def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return V.assign(self, scatter_add(self, dim, index, src)._node)


@public(method=True)
def index_select(input: Tensor, dim: int, index: Tensor, *, out: Any = None) -> Tensor:
    """Entries of `input` along `dim` at the positions in 1-d `index`."""
    if isinstance(input, ComplexBase) and out is None:  # lazytorch.ops.complex
        return input.index_select(dim, index)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "index_select")
    if not isinstance(index, Tensor) or index.dtype not in (dt.int64, dt.int32):
        raise op_error(
            RuntimeError, "index_select", "index_select(): Expected dtype int32/int64 for index"
        )
    if index.ndim > 1:
        raise op_error(
            IndexError, "index_select", "index_select(): Index is supposed to be a vector"
        )
    if x.ndim == 0:
        return _into_out(gather(x, 0, cast_index(index).reshape(())), out, "index_select")  # type: ignore[attr-defined]
    axis = normalize_dim(dim, x.ndim, "index_select")
    idx = cast(index._node, dt.int64)
    k = numel(idx.shape)
    n = x._node
    shape = tuple(k if d == axis else s for d, s in enumerate(n.shape))
    line = reshape_node(idx, tuple(k if d == axis else 1 for d in range(len(n.shape))))
    full = expand_node(line, shape)
    return _into_out(
        wrap(make_node(P.gather, (n, full), (axis,), shape, n.dtype, n.device)), out, "index_select"
    )


def cast_index(t: Tensor) -> Tensor:
    return t if t.dtype is dt.int64 else wrap(cast(t._node, dt.int64))


@public(method=True)
def take(input: Tensor, index: Tensor, *, out: Any = None) -> Tensor:
    """Entries of the flattened input at `index` (result has index's shape)."""
    x = tensor_arg(input, "take")
    if not isinstance(index, Tensor) or index.dtype is not dt.int64:
        got = index.dtype.name if isinstance(index, Tensor) else type(index).__name__
        raise op_error(
            RuntimeError, "take", f"take(): Expected a long tensor for index, but got {got}"
        )
    idx = index
    flat = reshape_node(x._node, (numel(x._node.shape),))
    lin = reshape_node(idx._node, (numel(idx._node.shape),))
    size = flat.shape[0]
    neg = binary_node(P.lt, lin, const_like(0, lin), dt.bool_)
    lin = where_node(neg, binary_node(P.add, lin, const_node(size, dt.int64, lin.device)), lin)
    g = make_node(P.gather, (flat, lin), (0,), lin.shape, flat.dtype, flat.device)
    return _into_out(wrap(reshape_node(g, idx._node.shape)), out, "take")


@public(method=True, inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """`value` where `mask` is True, else input (mask broadcasts to input)."""
    x = tensor_arg(input, "masked_fill")
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        raise op_error(RuntimeError, "masked_fill", "masked_fill_ only supports boolean masks")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise op_error(
            RuntimeError,
            "masked_fill",
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s).",
        )
    n = x._node

    # Out of place, torch broadcasts input and mask both (masked_fill_ then rejects a
    # result larger than the tensor when it assigns).
    shape = tuple(broadcast_shapes(mask._node.shape, n.shape, "masked_fill"))
    if not isinstance(value, Tensor):  # converted with torch's check (int8 takes no 300)
        value = checked_scalar(value, n.dtype, "masked_fill")
    v = to_node(value, n.dtype, n.device)
    device_of(x, mask, op="masked_fill")
    return wrap(where_node(expand_node(mask._node, shape), v, expand_node(n, shape)))


@public(method=True)
def masked_select(input: Tensor, mask: Tensor, *, out: Any = None) -> Tensor:
    """The 1-d tensor of input's entries where mask is True (a data-dependent size)."""
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        raise op_error(RuntimeError, "masked_select", "masked_select: expected BoolTensor for mask")
    x, m = broadcast_tensors(input, mask)
    return _into_out(getitem(x, m), out, "masked_select")


@public(method=True)
def nonzero(input: Tensor, *, out: Any = None, as_tuple: bool = False) -> Any:
    """Indices of nonzero entries: an (n, ndim) int64 tensor, or a tuple of 1-d tensors.

    The result's size depends on the data, so this is an implicit materialization.
    """
    import numpy as np

    x = tensor_arg(input, "nonzero")
    implicit_point(x, "nonzero()")
    arr = np.asarray(_host_value(x._node), dtype=x.dtype.np)
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
    result = tensor(np.ascontiguousarray(stacked, dtype=np.int64), device=x.device)
    return _into_out(result, out, "nonzero")


@public(method=True)
def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


# -- index_add / index_copy / index_fill: one 1-d index along a dim, as a scatter -------------
def _index_vector(index: Any, op: str) -> Node:
    """A 1-d int64 index (a 0-d index counts as one entry), checked as torch does."""
    if not isinstance(index, Tensor) or index.dtype not in (dt.int64, dt.int32):
        got = index.dtype.legacy_name if isinstance(index, Tensor) else type(index).__name__
        raise op_error(
            RuntimeError, op, f"{op}(): Expected dtype int32/int64 for index but got: {got}"
        )
    if index.ndim > 1:
        raise op_error(
            IndexError,
            op,
            f"{op}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{index.dtype.legacy_name} and size: {list(index.shape)}",
        )
    return _as_1d(cast(index._node, dt.int64))


def _index_scatter(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, op: str
) -> Node:
    """input with source's slices written (or added) at input's positions `index` along dim."""
    x = tensor_arg(input, op)
    if not isinstance(source, Tensor):
        raise op_error(TypeError, op, f"source must be a Tensor, not {type(source).__name__}")
    idx = _index_vector(index, op)
    n0 = x._node
    n, s = _as_1d(n0), _as_1d(source._node)
    axis = normalize_dim(dim, len(n.shape), op)
    if s.dtype is not n.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"{op}(): self ({n.dtype.legacy_name}) and source ({s.dtype.legacy_name}) must have "
            "the same scalar type",
        )
    if len(s.shape) != len(n.shape) or any(
        a != b for d, (a, b) in enumerate(zip(n.shape, s.shape)) if d != axis
    ):
        raise op_error(
            RuntimeError,
            op,
            f"{op}(): Source/destination tensor must have same slice shapes. Destination shape "
            f"{list(n0.shape)}, source shape {list(source.shape)}, dim {axis}.",
        )
    if idx.shape[0] != s.shape[axis]:
        raise op_error(
            RuntimeError,
            op,
            f"{op}(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim): "
            f"({s.shape[axis]}), for dim: {axis}",
        )
    line = reshape_node(idx, tuple(idx.shape[0] if d == axis else 1 for d in range(len(s.shape))))
    full = expand_node(line, s.shape)
    out = make_node(P.scatter, (n, full, s), (axis, reduce), n.shape, n.dtype, n.device)
    return reshape_node(out, n0.shape)


@public(method=True)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """input with ``alpha * source`` added at the positions `index` selects along `dim`
    (repeated indices accumulate).

    >>> import lazytorch
    >>> x = lazytorch.zeros(3, 2)
    >>> x.index_add(0, lazytorch.tensor([0, 2, 0]), lazytorch.ones(3, 2), alpha=2)
    tensor([[4., 4.],
            [0., 0.],
            [2., 2.]])
    """
    if alpha != 1 and isinstance(source, Tensor):
        source = source * alpha
    return wrap(_index_scatter(input, dim, index, source, "add", "index_add"))


@public(method=True)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """input with its slices at `index` along `dim` replaced by source's, in order.

    >>> import lazytorch
    >>> lazytorch.zeros(3).index_copy(0, lazytorch.tensor([2, 0]), lazytorch.tensor([5.0, 7.0]))
    tensor([7., 0., 5.])
    """
    if isinstance(source, Tensor) and isinstance(input, Tensor) and source.dtype is not input.dtype:
        raise op_error(
            RuntimeError,
            "index_copy",
            "index_copy_(): self and source expected to have the same dtype, but got "
            f"(self) {input.dtype.legacy_name} and (source) {source.dtype.legacy_name}",
        )
    return wrap(_index_scatter(input, dim, index, source, "none", "index_copy"))


@public(method=True)
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """input with every slice at `index` along `dim` set to `value` (a number or a 0-d
    tensor; negative indices count from the end).

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3).index_fill(1, lazytorch.tensor([-1]), 5.0)
    tensor([[0., 0., 5.],
            [0., 0., 5.]])
    """
    x = tensor_arg(input, "index_fill")
    idx = _index_vector(index, "index_fill")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise op_error(
            RuntimeError,
            "index_fill",
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s).",
        )
    n = x._node
    axis = normalize_dim(dim, max(len(n.shape), 1), "index_fill")
    size = n.shape[axis] if n.shape else 1
    dev = n.device
    # which positions along dim are filled: scatter True into a mask (its bounds check
    # reports an index out of range, after negative ones wrap once)
    wrapped = where_node(
        binary_node(P.lt, idx, const_node(0, dt.int64, dev), dt.bool_),
        binary_node(P.add, idx, const_node(size, dt.int64, dev), dt.int64),
        idx,
    )
    empty = expand_node(const_node(False, dt.bool_, dev), (size,))
    trues = expand_node(const_node(True, dt.bool_, dev), wrapped.shape)
    hit = make_node(P.scatter, (empty, wrapped, trues), (0, "none"), (size,), dt.bool_, dev)
    line = reshape_node(hit, tuple(size if d == axis else 1 for d in range(len(n.shape))))
    if not isinstance(value, Tensor):
        value = checked_scalar(value, n.dtype, "index_fill")
    v = to_node(value, n.dtype, dev)
    return wrap(where_node(expand_node(line, n.shape), v, n))


@public(torch=False, method=True)
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    return V.assign(self, index_add(self, dim, index, source, alpha=alpha)._node)


@public(torch=False, method=True)
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return V.assign(self, index_copy(self, dim, index, source)._node)


@public(torch=False, method=True)
def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return V.assign(self, index_fill(self, dim, index, value)._node)


@public(torch=False, method=True)
def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Set the main diagonal (all indices equal) to `fill_value`, in place; a tall matrix's
    diagonal restarts below the square part with ``wrap=True`` (numpy's rule).

    >>> import lazytorch
    >>> lazytorch.zeros(2, 3).fill_diagonal_(5.0)
    tensor([[5., 0., 0.],
            [0., 5., 0.]])
    """
    x = tensor_arg(self, "fill_diagonal_")
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise op_error(RuntimeError, "fill_diagonal_", "dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise op_error(
            RuntimeError, "fill_diagonal_", "all dimensions of input must be of equal length"
        )
    step, stride = 1, 1
    for s in reversed(shape[1:]):
        stride *= s
        step += stride
    total = numel(shape)
    end = total if wrap and len(shape) == 2 else min(shape) * (step - 1) + 1
    positions = arange(0, min(end, total), step, device=x.device)
    filled = index_fill(x.reshape(-1), 0, positions, fill_value).reshape(shape)
    return V.assign(self, filled._node)


@public(method=True)
def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct values (sorted), and optionally where each entry's value sits among them
    and how often each occurs. The result's size depends on the data: an implicit
    materialization.

    >>> import lazytorch
    >>> lazytorch.unique(lazytorch.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    import numpy as np

    x = tensor_arg(input, "unique")
    implicit_point(x, "unique()")
    arr = np.asarray(_host_value(x._node), dtype=x.dtype.np)
    axis = None if dim is None else normalize_dim(dim, x.ndim, "unique")
    values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=axis)
    if axis is None:
        inverse = inverse.reshape(arr.shape)
    out = [tensor(np.ascontiguousarray(values), dtype=x.dtype, device=x.device)]
    if return_inverse:
        out.append(tensor(np.ascontiguousarray(inverse, dtype=np.int64), device=x.device))
    if return_counts:
        out.append(tensor(np.ascontiguousarray(counts, dtype=np.int64), device=x.device))
    return out[0] if len(out) == 1 else tuple(out)


@public(method=True)
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0..max occurs in a 1-d non-negative integer tensor (or the sum
    of `weights` at each); the length depends on the data: an implicit materialization of
    the largest value.

    >>> import lazytorch
    >>> lazytorch.bincount(lazytorch.tensor([0, 2, 2]), minlength=4)
    tensor([1, 0, 2, 0])
    """
    x = tensor_arg(input, "bincount")
    if x.ndim != 1 or x.dtype.is_floating_point or x.dtype is dt.bool_:
        raise op_error(
            RuntimeError, "bincount", "bincount only supports 1-d non-negative integral inputs."
        )
    if weights is not None and tuple(weights.shape) != tuple(x.shape):
        raise op_error(
            RuntimeError, "bincount", "weights should be 1-d and have the same length as input"
        )
    if minlength < 0:
        raise op_error(RuntimeError, "bincount", "minlength should be >= 0")
    lo_hi = (x.min().item(), x.max().item()) if x.shape[0] else (0, -1)
    if lo_hi[0] < 0:
        raise op_error(
            RuntimeError, "bincount", "bincount only supports 1-d non-negative integral inputs."
        )
    size = max(int(lo_hi[1]) + 1, minlength)
    if weights is None:
        src, d = ones(x.shape[0], dtype=dt.int64, device=x.device), dt.int64
    else:
        d = weights.dtype if weights.dtype.is_floating_point else dt.float64
        src = weights.to(d)
    return scatter_add(zeros(size, dtype=d, device=x.device), 0, x.long(), src)
