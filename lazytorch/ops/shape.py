"""Shape and view ops: view/reshape, permute/transpose, (un)squeeze, flatten, expand,
repeat, flip, roll, tril/triu, cat/stack, split/chunk/unbind/narrow/select, pad.

Ops that torch documents as returning views (view, reshape, permute, transpose, expand,
squeeze, unsqueeze, flatten, narrow, select, split, chunk, unbind, detach) return lazytorch
views: writes through them reach the base tensor. Everything else returns a new tensor.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from lazytorch._dtype_info import contiguous_format
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.engine import name_grad_fn
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ir.symbolic import SymInt
from lazytorch.ops import views as V
from lazytorch.ops._core import (
    INT64_MAX,
    ComplexBase,
    P,
    binary_node,
    cast,
    check_int64_arg,
    check_new_tensor,
    check_numel,
    const_like,
    const_node,
    device_of,
    expand_node,
    int_like,
    normalize_dim,
    numel,
    reshape_node,
    result_type,
    shape_arg,
    tensor_arg,
    where_node,
    wrap,
)
from lazytorch.ops._core import broadcast_shapes as bs
from lazytorch.ops.creation import arange, cast_into_out, zeros
from lazytorch.ops.reduction import _into_out
from lazytorch.tensor import Size, Tensor


def _infer_shape(shape: tuple[Any, ...], total: Any, op: str) -> tuple[Any, ...]:
    if type(total) is int and all([type(d) is int for d in shape]):
        # plain ints (almost every call): one pass; anything unusual takes the checks below
        known, neg = 1, -1
        for i, d in enumerate(shape):
            if d >= 0:
                known *= d
            elif d == -1 and neg < 0:
                neg = i
            else:
                known = -1
                break
        if known > 0 and known <= INT64_MAX:
            if neg < 0 and known == total:
                return shape
            if neg >= 0 and total % known == 0 and total // known * known <= INT64_MAX:
                return (*shape[:neg], total // known, *shape[neg + 1 :])
    neg = [i for i, d in enumerate(shape) if isinstance(d, int) and d == -1]
    if len(neg) > 1:
        raise op_error(RuntimeError, op, "only one dimension can be inferred")
    for d in shape:
        if isinstance(d, int) and d < -1:
            raise op_error(RuntimeError, op, f"invalid shape dimension {d}")
    if neg:
        given = [d for d in shape if not (isinstance(d, int) and d == -1)]
        check_numel(given, op)  # torch multiplies in int64: 2**64 would wrap to 0
        known = numel(given)
        if known == 0 or total % known != 0:
            raise op_error(
                RuntimeError, op, f"shape '{list(shape)}' is invalid for input of size {total}"
            )
        shape = tuple(total // known if i == neg[0] else d for i, d in enumerate(shape))
    elif numel(shape) != total:
        raise op_error(
            RuntimeError, op, f"shape '{list(shape)}' is invalid for input of size {total}"
        )
    check_numel(shape, op)  # an empty tensor takes any shape with a 0, up to int64 sizes
    return shape


def _require_args(args: tuple[Any, ...], op: str, what: str) -> None:
    """torch's argument parser: ``x.view()`` is a TypeError, ``x.view(())`` a 0-d shape."""
    if not args:
        raise op_error(TypeError, op, f'{op}() missing 1 required positional arguments: "{what}"')


def _view_as_dtype(x: Tensor, dtype: dt.DType) -> Tensor:
    """``x.view(dtype)``: x's bits read as `dtype` (same size: a view writes go through)."""
    if dtype is x.dtype:
        return V.make_view(x, V.Reshape(x._node.shape))
    if x.dtype.is_complex or dtype.is_complex:
        raise op_error(
            NotImplementedError,
            "view",
            f"viewing {x.dtype.legacy_name} as {dtype.legacy_name} is not supported "
            "(complex tensors are pairs of real ones here): use torch.view_as_real",
        )
    if dtype.itemsize != x.dtype.itemsize:
        raise op_error(
            NotImplementedError,
            "view",
            f"viewing {x.dtype.legacy_name} ({x.dtype.itemsize} bytes) as "
            f"{dtype.legacy_name} ({dtype.itemsize} bytes) is not supported: only dtypes "
            "of the same size can be viewed as each other here",
        )
    return V.make_view(x, V.Bitcast(dtype))


@public(torch=False, method=True)
def view(input: Tensor, *size: Any, **kwargs: Any) -> Tensor:
    """A view with a new shape (one dim may be -1). Writes reach the base tensor."""
    x = tensor_arg(input, "view")
    if kwargs:
        size = _shape_keyword(size, kwargs, "view", "size")
    _require_args(size, "view", "size")
    if len(size) == 1 and isinstance(size[0], dt.DType):
        return _view_as_dtype(x, size[0])
    new = _infer_shape(shape_arg_allow_neg(size, "view"), numel(x._node.shape), "view")
    if not V.can_view(x, new):
        raise op_error(
            RuntimeError,
            "view",
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
        )
    return name_grad_fn(_view_to(x, new), "ViewBackward0", x)


@public(method=True)
def reshape(input: Tensor, *shape: Any, **kwargs: Any) -> Tensor:
    """A new shape: a view when torch's strides allow one, else a copy (as in torch, writes
    to the copy do not reach the input)."""
    x = tensor_arg(input, "reshape")
    if kwargs:
        shape = _shape_keyword(shape, kwargs, "reshape", "shape")
    _require_args(shape, "reshape", "shape")
    sizes = shape_arg_allow_neg(shape, "reshape", "shape")
    new = _infer_shape(sizes, numel(x._node.shape), "reshape")
    y = _reshape_to(x, new)
    # torch: a view where strides allow one, else a copy then `_unsafe_view`
    return name_grad_fn(y, "ViewBackward0" if y._view is not None else "UnsafeViewBackward0", x)


def _shape_keyword(args: tuple[Any, ...], kw: dict[str, Any], op: str, name: str) -> Any:
    """The shape given as a keyword (``x.reshape(shape=(2, 3))``, as torch takes it)."""
    if args or set(kw) != {name}:
        bad = sorted(set(kw) - {name}) or [name]
        raise op_error(TypeError, op, f"got an unexpected keyword argument {bad[0]!r}")
    return (kw[name],)


def _reshape_to(x: Tensor, new: tuple[Any, ...]) -> Tensor:
    if V.can_view(x, new):
        return _view_to(x, new)
    return wrap(reshape_node(x._node, new))


def _view_to(x: Tensor, new: tuple[Any, ...]) -> Tensor:
    """x viewed as shape `new`. A view of x's own shape is still a view with a gradient
    node of its own where x carries gradient (torch: not a leaf, grad_fn ViewBackward0),
    though the reshape step records nothing for it: a no-op reshape node (the scheduler
    folds it into index arithmetic)."""
    step = V.Reshape(new)
    n = x._node
    if n.shape == new and x.requires_grad:
        return V.make_view(
            x, step, make_node(P.reshape, (n,), (n.shape,), n.shape, n.dtype, n.device)
        )
    return V.make_view(x, step)


@public(torch=False, method=True)
def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, other.shape)


@public(torch=False, method=True)
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other.shape)


@public(method=True)
def permute(input: Tensor, *dims: Any) -> Tensor:
    """A view with dims reordered: ``x.permute(2, 0, 1)``."""
    x = tensor_arg(input, "permute")
    _require_args(dims, "permute", "dims")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    nd = x.ndim
    if len(dims) != nd:
        raise op_error(
            RuntimeError,
            "permute",
            f"number of dims don't match in permute (input has {nd}, permutation has {len(dims)})",
        )
    perm = tuple(normalize_dim(d, nd, "permute") for d in dims) if nd else ()
    if len(set(perm)) != len(perm):
        raise op_error(RuntimeError, "permute", "repeated dim in permute")
    return V.make_view(x, V.Permute(perm))


@public(torch=("transpose", "swapdims"), method=True)
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with two dims swapped."""
    x = tensor_arg(input, "transpose")
    nd = x.ndim
    a, b = normalize_dim(dim0, nd, "transpose"), normalize_dim(dim1, nd, "transpose")
    perm = list(range(nd))
    if nd:
        perm[a], perm[b] = perm[b], perm[a]
    return name_grad_fn(V.make_view(x, V.Permute(tuple(perm))), "TransposeBackward0", x)


@public(method=True)
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """NumPy's name for `transpose`, with NumPy's parameter names as torch has them.

    >>> import lazytorch
    >>> lazytorch.swapaxes(lazytorch.zeros(2, 3), axis0=0, axis1=1).shape
    lazytorch.Size([3, 2])
    """
    return transpose(input, axis0, axis1)


@public(method=True)
def t(input: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims."""
    x = tensor_arg(input, "t")
    if x.ndim > 2:
        raise op_error(
            RuntimeError, "t", f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D"
        )
    y = transpose(x, 0, 1) if x.ndim == 2 else V.make_view(x, V.Alias())
    return name_grad_fn(y, "TBackward0", x)


def T(input: Tensor) -> Tensor:
    """All dims reversed (the ``.T`` property)."""
    x = tensor_arg(input, "T")
    return V.make_view(x, V.Permute(tuple(reversed(range(x.ndim)))))


def mT(input: Tensor) -> Tensor:
    """The last two dims swapped (the ``.mT`` property)."""
    x = tensor_arg(input, "mT")
    if x.ndim == 0:
        return V.make_view(x, V.Alias())  # torch: the identity on 0-d (deprecated there)
    if x.ndim == 1:
        raise op_error(
            RuntimeError,
            "mT",
            "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.",
        )
    return transpose(x, -2, -1)


@public(torch=("movedim", "moveaxis"), method=True)
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    x = tensor_arg(input, "movedim")
    source, destination = int_like(source), int_like(destination)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise op_error(
            RuntimeError,
            "movedim",
            "Invalid source or destination dims: source and destination must have the same number of dims",
        )
    nd = x.ndim
    src = [normalize_dim(s, nd, "movedim") for s in src]
    dst = [normalize_dim(d, nd, "movedim") for d in dst]
    for what, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise op_error(RuntimeError, "movedim", f"repeated dim in `{what}` ({dims})")
    # Remaining dims keep their order; moved dims are inserted at their destinations.
    order = [d for d in range(nd) if d not in src]
    for s, d in sorted(zip(src, dst), key=lambda p: p[1]):
        order.insert(d, s)
    return V.make_view(x, V.Permute(tuple(order)))


@public(method=True)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a size-1 dim inserted at `dim`."""
    x = tensor_arg(input, "unsqueeze")
    d = normalize_dim(dim, x.ndim + 1, "unsqueeze")
    shape = list(x._node.shape)
    shape.insert(d, 1)
    return name_grad_fn(V.make_view(x, V.Reshape(tuple(shape))), "UnsqueezeBackward0", x)


def _dims_arg(dims: Any, ndim: int, op: str) -> tuple[int, ...]:
    """Sorted axes of an int-or-sequence `dims`, checked like torch: in range (0 and -1 on
    a 0-d tensor, which has no axes to return) and not repeated."""
    seq = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    axes = [normalize_dim(d, ndim, op) for d in seq]
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise op_error(RuntimeError, op, f"dim {a} appears multiple times in the list of dims")
    return tuple(sorted(axes)) if ndim else ()


@public(method=True)
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """A view without size-1 dims (all of them, or those in `dim`)."""
    x = tensor_arg(input, "squeeze")
    shape = x._node.shape
    if dim is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {a for a in _dims_arg(dim, x.ndim, "squeeze") if shape[a] == 1}
    y = V.make_view(x, V.Reshape(tuple(d for i, d in enumerate(shape) if i not in axes)))
    # torch's overloads: squeeze(), squeeze(dim), squeeze(dims)
    which = 0 if dim is None else 2 if isinstance(dim, (list, tuple)) else 1
    return name_grad_fn(y, f"SqueezeBackward{which}", x)


@public(method=True)
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """A view with dims start_dim..end_dim merged into one."""
    x = tensor_arg(input, "flatten")
    shape = x._node.shape
    if not shape:
        # 0-d accepts dims 0 and -1 only, and flattens to one element.
        normalize_dim(start_dim, 0, "flatten")
        normalize_dim(end_dim, 0, "flatten")
        return V.make_view(x, V.Reshape((1,)))
    a = normalize_dim(start_dim, len(shape), "flatten")
    b = normalize_dim(end_dim, len(shape), "flatten")
    if a > b:
        raise op_error(
            RuntimeError,
            "flatten",
            "flatten() has invalid args: start_dim cannot come after end_dim",
        )
    if a == b:
        return x  # torch returns the input itself
    new = (*shape[:a], numel(shape[a : b + 1]), *shape[b + 1 :])
    y = _reshape_to(x, tuple(new))  # reshape semantics: a copy when no view is possible
    return name_grad_fn(y, "ViewBackward0" if y._view is not None else "UnsafeViewBackward0", x)


@public(method=True)
def ravel(input: Tensor) -> Tensor:
    """The flattened tensor: a view of a contiguous input, else a copy."""
    return flatten(contiguous(input))


@public(method=True)
def unflatten(input: Tensor, dim: int, sizes: Sequence[Any]) -> Tensor:
    """A view with one dim split into `sizes` (one may be -1)."""
    x = tensor_arg(input, "unflatten")
    shape = x._node.shape
    d = normalize_dim(dim, len(shape), "unflatten")
    inner = _infer_shape(tuple(int_like(s) for s in sizes), shape[d], "unflatten")
    return V.make_view(x, V.Reshape((*shape[:d], *inner, *shape[d + 1 :])))


@public(torch=False, method=True)
def expand(input: Tensor, *size: Any) -> Tensor:
    """A broadcast view (size-1 dims repeated without copying; -1 keeps a dim)."""
    x = tensor_arg(input, "expand")
    _require_args(size, "expand", "size")
    sizes = shape_arg_allow_neg(size, "expand")
    src = x._node.shape
    if len(sizes) < len(src):
        raise op_error(
            RuntimeError,
            "expand",
            f"the number of sizes provided ({len(sizes)}) must be greater or equal to the number "
            f"of dimensions in the tensor ({len(src)})",
        )
    lead = len(sizes) - len(src)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if isinstance(s, int) and s < 0:
                raise op_error(
                    RuntimeError,
                    "expand",
                    f"the expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}",
                )
            out.append(s)
            continue
        cur = src[i - lead]
        if isinstance(s, int) and s == -1:
            out.append(cur)
        elif isinstance(s, int) and s < 0:
            raise op_error(
                RuntimeError, "expand", f"invalid size {s} at dimension {i}: {list(sizes)}"
            )
        elif cur == s or cur == 1:
            out.append(s)
        else:
            raise op_error(
                RuntimeError,
                "expand",
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(src)}",
            )
    check_numel(out, "expand")
    return V.make_view(x, V.Expand(tuple(out)))


def shape_arg_allow_neg(size: Any, op: str, arg: str = "size") -> tuple[Any, ...]:
    """Sizes as ints (each an int64, as torch's parser requires); -1 and other negatives
    are left to the op."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, SymInt):
            out.append(s)
            continue
        try:
            v = operator.index(s)
        except TypeError:
            raise op_error(TypeError, op, f"sizes must be ints, got {type(s).__name__}") from None
        check_int64_arg(v, op, arg, pos)
        out.append(v)
    return tuple(out)


@public(torch=False, method=True)
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other.shape)


@public(method=True)
def broadcast_to(input: Tensor, size: Any) -> Tensor:
    return expand(input, size)


@public()
def broadcast_shapes(*shapes: Any) -> Any:
    out: tuple[Any, ...] = ()
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(s)
        out = bs(out, s, "broadcast_shapes")
    return Size(out)


@public()
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


@public(torch=False, method=True)
def repeat(input: Tensor, *repeats: Any) -> Tensor:
    """Tile the tensor: ``x.repeat(2, 3)`` (a copy, not a view)."""
    x = tensor_arg(input, "repeat")
    _require_args(repeats, "repeat", "repeats")
    reps = shape_arg(repeats, "repeat", "repeats")
    if len(reps) < x.ndim:
        raise op_error(
            RuntimeError,
            "repeat",
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        )
    n = x._node
    shape = (1,) * (len(reps) - len(n.shape)) + tuple(n.shape)
    n = reshape_node(n, shape)
    # Interleave: (r0, s0, r1, s1, ...) then merge each pair.
    inter = []
    for s in shape:
        inter.extend([1, s])
    n = reshape_node(n, tuple(inter))
    big = []
    for r, s in zip(reps, shape):
        big.extend([r, s])
    out = tuple(r * s for r, s in zip(reps, shape))
    check_new_tensor(out, x.dtype, "repeat")
    n = expand_node(n, tuple(big))
    return wrap(reshape_node(n, out))


@public(method=True)
def tile(input: Tensor, *dims: Any) -> Tensor:
    """repeat() with `dims` padded by leading 1s: ``x.tile((2,))``, ``x.tile(2, 2)``."""
    _require_args(dims, "tile", "dims")
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) else dims
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


@public(torch=False, method=True)
def contiguous(input: Tensor, memory_format: Any = contiguous_format) -> Tensor:
    """The tensor itself if it is contiguous, else a copy that is."""
    x = tensor_arg(input, "contiguous")
    return x if V.is_contiguous(x) else wrap(x._node)


@public(method=True)
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A new tensor with the same values that does not alias `input`."""
    x = tensor_arg(input, "clone")
    n = x._node
    if V._numpy_arrays and n.buffer is not None and V._unaliased(n) is not n:
        # the value is an array NumPy code may write: a real copy (differentiable)
        return x * 1 if n.ag is not None else wrap(V._unaliased(n))  # type: ignore[operator]
    return wrap(n)  # values are immutable: the clone shares the node


@public(method=True)
def detach(input: Tensor) -> Tensor:
    """A tensor sharing `input`'s values (and its writes), cut from autograd."""
    return V.make_view(tensor_arg(input, "detach"), V.Detach())


@public(method=True)
def flip(input: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    """Reverse the order of elements along `dims` (a copy): ``flip(x, (0, 1))``,
    ``x.flip(0, 1)``, ``flip(x, dims=(1,))``."""
    x = tensor_arg(input, "flip")
    if kwargs:
        if set(kwargs) != {"dims"} or dims:
            raise op_error(TypeError, "flip", f"flip() got unexpected arguments {sorted(kwargs)}")
        dims = (kwargs["dims"],)
    _require_args(dims, "flip", "dims")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    axes = _dims_arg(list(dims), x.ndim, "flip")
    if not axes:
        return wrap(x._node)
    n = x._node
    return wrap(make_node(P.flip, (n,), (axes,), n.shape, n.dtype, n.device))


@public(method=True)
def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise op_error(RuntimeError, "fliplr", "Input must be >= 2-d.")
    return flip(input, 1)


@public(method=True)
def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise op_error(RuntimeError, "flipud", "Input must be >= 1-d.")
    return flip(input, 0)


def slice_node(n: Node, axis: int, start: Any, stop: Any, step: int = 1) -> Node:
    starts = tuple(start if i == axis else 0 for i in range(len(n.shape)))
    stops = tuple(stop if i == axis else d for i, d in enumerate(n.shape))
    steps = tuple(step if i == axis else 1 for i in range(len(n.shape)))
    return V.Slice(starts, stops, steps).apply(n)


@public(method=True)
def roll(input: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    """Rotate elements along dims (flattened when dims is empty or None)."""
    x = tensor_arg(input, "roll")
    shifts = (
        int_like(shifts) if not isinstance(shifts, (list, tuple)) else [int_like(s) for s in shifts]
    )
    if dims is not None:
        dims = (
            int_like(dims) if not isinstance(dims, (list, tuple)) else [int_like(d) for d in dims]
        )
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        flat = reshape_node(x._node, (numel(x._node.shape),))
        if not isinstance(shifts, int) and len(shifts) != 1:
            raise op_error(
                RuntimeError,
                "roll",
                f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0",
            )
        s = shifts if isinstance(shifts, int) else shifts[0]
        return wrap(reshape_node(_roll_node(flat, s, 0), x._node.shape))
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise op_error(
            RuntimeError,
            "roll",
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}",
        )
    n = x._node
    for s, d in zip(shifts, dims):
        n = _roll_node(n, s, normalize_dim(d, x.ndim, "roll"))
    return wrap(n)


def _roll_node(n: Node, shift: int, axis: int) -> Node:
    size = n.shape[axis]
    if size == 0:
        return n
    s = shift % size
    if s == 0:
        return n
    tail = slice_node(n, axis, size - s, size)
    head = slice_node(n, axis, 0, size - s)
    return make_node(P.cat, (tail, head), (axis,), n.shape, n.dtype, n.device)


def _triangle(input: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    x = tensor_arg(input, op)
    if x.ndim < 2:
        raise op_error(RuntimeError, op, f"{op}: input tensor must have at least 2 dimensions")
    n = x._node
    rows_cols = n.shape[-2:]
    dev = n.device
    r = make_node(P.iota, (), (tuple(rows_cols), 0, dt.int64, dev), tuple(rows_cols), dt.int64, dev)
    c = make_node(P.iota, (), (tuple(rows_cols), 1, dt.int64, dev), tuple(rows_cols), dt.int64, dev)
    off = binary_node(P.sub, c, r)  # column - row: 0 on the main diagonal
    k = const_node(diagonal, dt.int64, dev)
    keep = binary_node(P.le if lower else P.ge, off, k, dt.bool_)
    return wrap(where_node(keep, n, const_like(0, n)))


@public(method=True, inplace=True)
def tril(input: Tensor, diagonal: int = 0, *, out: Any = None) -> Tensor:
    """Lower triangle (elements with column - row <= diagonal); the rest zero."""
    return _into_out(_triangle(input, diagonal, True, "tril"), out, "tril")


@public(method=True, inplace=True)
def triu(input: Tensor, diagonal: int = 0, *, out: Any = None) -> Tensor:
    """Upper triangle (elements with column - row >= diagonal); the rest zero."""
    return _into_out(_triangle(input, diagonal, False, "triu"), out, "triu")


@public(torch=("cat", "concat", "concatenate"))
def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Concatenate along an existing dim, with type promotion.

    >>> import lazytorch
    >>> lazytorch.cat([lazytorch.zeros(1, 2), lazytorch.ones(2, 2)]).shape
    lazytorch.Size([3, 2])
    """
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise op_error(TypeError, "cat", "expected a sequence of Tensors")
    if not tensors:
        raise op_error(ValueError, "cat", "torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            if any(isinstance(c, ComplexBase) for c in tensors):
                return next(c for c in tensors if isinstance(c, ComplexBase))._cat(tensors, dim)
            raise op_error(
                TypeError,
                "cat",
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}",
            )
    # Legacy torch rule: 1-d empty tensors are skipped whatever the others' shape.
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    d = result_type(*tensors)
    if not parts:
        return wrap(cast(tensors[0]._node, d))
    ref = parts[0]
    if ref.ndim == 0:
        raise op_error(
            RuntimeError, "cat", "zero-dimensional tensor (at position 0) cannot be concatenated"
        )
    axis = normalize_dim(dim, ref.ndim, "cat")
    device_of(*parts, op="cat")
    nodes = []
    for i, t in enumerate(parts):
        if t.ndim != ref.ndim:
            raise op_error(
                RuntimeError,
                "cat",
                f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}",
            )
        for k in range(ref.ndim):
            if k != axis and t._node.shape[k] != ref._node.shape[k]:
                raise op_error(
                    RuntimeError,
                    "cat",
                    f"Sizes of tensors must match except in dimension {axis}. Expected size "
                    f"{ref._node.shape[k]} but got size {t._node.shape[k]} for tensor number {i} in the list.",
                )
        nodes.append(cast(t._node, d))
    if len(nodes) == 1:
        return _write_out(wrap(nodes[0]), out, "cat")
    total = sum(n.shape[axis] for n in nodes)
    shape = (*ref._node.shape[:axis], total, *ref._node.shape[axis + 1 :])
    result = wrap(make_node(P.cat, tuple(nodes), (axis,), shape, d, nodes[0].device))
    return _write_out(result, out, "cat")


def _write_out(result: Tensor, out: Any, op: str) -> Tensor:
    """Honour ``out=``: write the result into `out` (converting its dtype) and return it."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise op_error(TypeError, op, "out= must be a Tensor")
    src, dst = result.dtype, out.dtype
    if (src.is_floating_point and not dst.is_floating_point) or (
        src is not dt.bool_ and dst is dt.bool_
    ):
        raise op_error(
            TypeError,
            op,
            f"torch.{op}(): input types can't be cast to the desired output type {dst.name}",
        )
    if tuple(out.shape) != tuple(result.shape) and out._view is None and not out._views:
        # torch resizes a mismatched `out` (warning when it had elements); a tensor no
        # other tensor aliases can simply take the result's shape.
        out._node = cast(result._node, dst)
        return out
    return cast_into_out(result, out, op)


@public()
def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Join tensors of the same shape along a new dim."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise op_error(RuntimeError, "stack", "stack expects a non-empty TensorList")
    shape0 = tensors[0].shape
    for i, t in enumerate(tensors):
        if type(t) is not Tensor and isinstance(t, ComplexBase):
            return t._stack(tensors, dim)
        if t.shape != shape0:
            raise op_error(
                RuntimeError,
                "stack",
                f"stack expects each tensor to be equal size, but got {list(shape0)} at entry 0 and "
                f"{list(t.shape)} at entry {i}",
            )
    d = normalize_dim(dim, len(shape0) + 1, "stack")
    return cat([unsqueeze(t, d) for t in tensors], d, out=out)


@public()
def hstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    ts = [atleast_1d(t) for t in tensors]
    return cat(ts, 0 if ts[0].ndim == 1 else 1, out=out)


@public()
def vstack(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    return cat([atleast_2d(t) for t in tensors], 0, out=out)


@public()
def atleast_1d(t: Tensor) -> Tensor:
    return reshape(t, (1,)) if t.ndim == 0 else t


@public()
def atleast_2d(t: Tensor) -> Tensor:
    return reshape(t, (1, -1)) if t.ndim < 2 else t


@public(method=True)
def narrow(input: Tensor, dim: int, start: Any, length: Any) -> Tensor:
    """A view of `length` elements from `start` along `dim`."""
    if isinstance(input, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return input.narrow(dim, start, length)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "narrow")
    if x.ndim == 0:
        raise op_error(RuntimeError, "narrow", "narrow() cannot be applied to a 0-dim tensor.")
    axis = normalize_dim(dim, x.ndim, "narrow")
    size = x._node.shape[axis]
    if isinstance(start, Tensor):
        start = int(start.item())
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise op_error(
            IndexError if not 0 <= start <= size else RuntimeError,
            "narrow",
            f"start ({start}) + length ({length}) exceeds dimension size ({size}).",
        )
    return slice_view(x, axis, start, start + length, 1)


def slice_view(x: Tensor, axis: int, start: Any, stop: Any, step: int) -> Tensor:
    n = x._node
    starts = tuple(start if i == axis else 0 for i in range(len(n.shape)))
    stops = tuple(stop if i == axis else d for i, d in enumerate(n.shape))
    steps = tuple(step if i == axis else 1 for i in range(len(n.shape)))
    return V.make_view(x, V.Slice(starts, stops, steps))


@public(method=True)
def select(input: Tensor, dim: int, index: Any) -> Tensor:
    """A view of one index along `dim` (that dim removed)."""
    if isinstance(input, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return input.select(dim, index)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "select")
    if x.ndim == 0:
        raise op_error(IndexError, "select", "select() cannot be applied to a 0-dim tensor.")
    axis = normalize_dim(dim, x.ndim, "select")
    size = x._node.shape[axis]
    i = operator.index(index)
    if not -size <= i < size:
        raise op_error(
            IndexError,
            "select",
            f"index {i} is out of bounds for dimension {axis} with size {size}",
        )
    return V.make_view(x, V.Select(axis, i % size))


@public()
def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of consecutive pieces: equal `split_size` chunks or explicit section sizes."""
    if isinstance(tensor, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return tensor.split(split_size_or_sections, dim)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(tensor, "split")
    split_size_or_sections = int_like(split_size_or_sections)
    axis = normalize_dim(dim, x.ndim, "split")
    size = x._node.shape[axis]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size > 0:
            raise op_error(
                RuntimeError,
                "split",
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}",
            )
        bounds = [(s, min(s + step, size)) for s in range(0, size, step)] if step > 0 else [(0, 0)]
        if not bounds:
            bounds = [(0, 0)]
    else:
        sections = list(split_size_or_sections)
        if any(k < 0 for k in sections):
            raise op_error(
                RuntimeError,
                "split",
                f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={sections}",
            )
        if sum(sections) != size:
            raise op_error(
                RuntimeError,
                "split",
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {axis}), but got split_sizes={sections}",
            )
        bounds, s = [], 0
        for k in sections:
            bounds.append((s, s + k))
            s += k
    return tuple(slice_view(x, axis, a, b, 1) for a, b in bounds)


@public(method=True)
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    return split(input, list(split_sizes), dim)


@public(method=True)
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into `chunks` pieces of ceil(size / chunks) (the last may be smaller)."""
    if isinstance(input, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return input.chunk(chunks, dim)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "chunk")
    chunks = int_like(chunks)
    if chunks <= 0:
        raise op_error(
            RuntimeError,
            "chunk",
            "chunk expects `chunks` to be greater than 0, got: " + str(chunks),
        )
    axis = normalize_dim(dim, x.ndim, "chunk")
    size = x._node.shape[axis]
    if size == 0:
        # torch returns `chunks` empty pieces here (split would give one).
        return tuple(slice_view(x, axis, 0, 0, 1) for _ in range(chunks))
    return split(x, -(-size // chunks), axis)


@public(method=True)
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of every index along `dim`."""
    if isinstance(input, ComplexBase):  # lazytorch.ops.complex: the same op on its pair
        return input.unbind(dim)  # type: ignore[attr-defined, no-any-return]
    x = tensor_arg(input, "unbind")
    axis = normalize_dim(dim, x.ndim, "unbind")
    return tuple(select(x, axis, i) for i in range(x._node.shape[axis]))


# -- sliding windows and diagonals: index arithmetic over the public ops --------------------
@public(torch=False, method=True)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of `size` entries along `dimension`, `step` apart: that dim becomes the
    window count and the window is a new last dim (``Tensor.unfold``).

    >>> import lazytorch
    >>> lazytorch.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    x = tensor_arg(input, "unfold")
    axis = normalize_dim(dimension, max(x.ndim, 1), "unfold")
    length = x.shape[axis] if x.ndim else 1
    if size > length:
        raise op_error(
            RuntimeError,
            "unfold",
            f"maximum size for tensor at dimension {axis} is {length} but size is {size}",
        )
    if step <= 0:
        raise op_error(RuntimeError, "unfold", f"step is {step} but must be > 0")
    if x.ndim == 0:
        return x.reshape(size)
    return V.make_view(x, _Unfold(axis, size, step))


class _Unfold(V.ViewStep):
    """``x.unfold(axis, size, step)``: a view, as in torch (strides ``step * st`` and
    ``st`` for the window count and the window). Written back by scattering at the
    positions it reads; where windows overlap, only a value equal everywhere (``fill_``)
    can be written, as for an expanded view."""

    __slots__ = ("axis", "size", "step")
    default_contiguous = False

    def __init__(self, axis: int, size: int, step: int) -> None:
        self.axis, self.size, self.step = axis, size, step

    def apply(self, n: Node) -> Node:
        x = wrap(n)
        axis, size, step = self.axis, self.size, self.step
        count = (x.shape[axis] - size) // step + 1
        starts = arange(count, device=x.device) * step
        idx = (starts.unsqueeze(1) + arange(size, device=x.device)).reshape(-1)
        windows = x.index_select(axis, idx)
        shape = (*x.shape[:axis], count, size, *x.shape[axis + 1 :])
        return windows.reshape(shape).movedim(axis + 1, -1)._node  # type: ignore[no-any-return]

    def write_back(self, base: Node, value: Node) -> Node:
        count = (base.shape[self.axis] - self.size) // self.step + 1
        overlapping = self.step < self.size and count > 1
        uniform = value.op is P.expand and value.inputs[0].shape == ()
        if overlapping and not uniform:
            raise V._overlap_error()
        return V._scatter_linear(base, self, value)

    def out_strides(
        self, shape: tuple[int, ...], strides: V.Strides, out: tuple[int, ...]
    ) -> V.Strides | None:
        a = self.axis
        return (*strides[:a], strides[a] * self.step, *strides[a + 1 :], strides[a])


def _diagonal_positions(rows: int, cols: int, k: int, device: Any) -> tuple[Tensor, Tensor]:
    n = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    line = arange(n, device=device)
    return line + max(-k, 0), line + max(k, 0)


@public(method=True)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d input as the `diagonal`-th diagonal of a square matrix, or a 2-d input's
    `diagonal`-th diagonal as a vector.

    >>> import lazytorch
    >>> lazytorch.diag(lazytorch.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    >>> lazytorch.diag(lazytorch.arange(6).reshape(2, 3), 1)
    tensor([1, 5])
    """
    x = tensor_arg(input, "diag")
    if x.ndim == 1:
        n = x.shape[0] + abs(diagonal)
        rows, cols = _diagonal_positions(n, n, diagonal, x.device)
        # (the method, bound from lazytorch.ops.indexing, which imports this module)
        return zeros(n, n, dtype=x.dtype, device=x.device).index_put((rows, cols), x)
    if x.ndim == 2:
        rows, cols = _diagonal_positions(x.shape[0], x.shape[1], diagonal, x.device)
        return x[rows, cols]
    raise op_error(RuntimeError, "diag", "diag(): Supports 1D or 2D tensors. Got " + f"{x.ndim}D")


class _Diagonal(V.ViewStep):
    """``x.diagonal(offset, a, b)``: the diagonal over dims a, b as a new last dim. Written
    back by scattering at the positions it reads, so ``x.diagonal().fill_(0)`` changes
    ``x`` as in torch."""

    __slots__ = ("a", "b", "offset")
    default_contiguous = False

    def __init__(self, a: int, b: int, offset: int) -> None:
        self.a, self.b, self.offset = a, b, offset

    def apply(self, n: Node) -> Node:
        x = wrap(n)
        rows, cols = _diagonal_positions(x.shape[self.a], x.shape[self.b], self.offset, x.device)
        return x.movedim((self.a, self.b), (-2, -1))[..., rows, cols]._node  # type: ignore[no-any-return]

    def write_back(self, base: Node, value: Node) -> Node:
        return V._scatter_linear(base, self, value)

    def out_strides(
        self, shape: tuple[int, ...], strides: V.Strides, out: tuple[int, ...]
    ) -> V.Strides | None:
        keep = tuple(st for d, st in enumerate(strides) if d not in (self.a, self.b))
        return (*keep, strides[self.a] + strides[self.b])


@public(method=True)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The `offset`-th diagonal over dims `dim1`, `dim2`, as a last dim: a view, as in
    torch (an in-place write to it writes into `input`).

    >>> import lazytorch
    >>> lazytorch.arange(4).reshape(2, 2).diagonal()
    tensor([0, 3])
    """
    x = tensor_arg(input, "diagonal")
    a = normalize_dim(dim1, x.ndim, "diagonal")
    b = normalize_dim(dim2, x.ndim, "diagonal")
    if a == b:
        raise op_error(
            RuntimeError, "diagonal", f"diagonal dimensions cannot be identical {dim1}, {dim2}"
        )
    return V.make_view(x, _Diagonal(a, b, offset))


@public(method=True)
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal.

    >>> import lazytorch
    >>> lazytorch.trace(lazytorch.arange(9).reshape(3, 3))
    tensor(12)
    """
    x = tensor_arg(input, "trace")
    if x.ndim != 2:
        raise op_error(RuntimeError, "trace", "trace: expected a matrix")
    return diag(x).sum()
