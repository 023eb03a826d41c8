"""Views and in-place writes, functionalized.

A view (``x[1:]``, ``x.T``, ``x.view(2, 3)``) is a tensor computed from a *root* tensor by
a chain of view steps. Each step knows how to replay itself on a new root value and how to
write a new view value back into its input. An in-place op on a view therefore

1. computes the view's new value,
2. scatters it back through the chain into a new value for the root, and
3. rebinds the root and re-derives every other live view of it,

so ``v = x[0]; v.add_(1)`` changes ``x`` and ``x[0] = 5`` changes ``v``, as in torch, while
every node stays immutable. Writing back a step is index arithmetic (pad + where for unit-
stride slices, a scatter of linear indices otherwise), so it stays fusable.

Each step can also tell the *strides* the view would have in torch, taking the root as a
contiguous buffer (computed on first use, then kept). They decide what torch decides from
real strides: whether ``view`` is possible (else ``reshape`` copies), whether a view is
contiguous, and whether a written-to view overlaps itself (an expanded dim). Symbolic sizes
leave the strides unknown (None), and the checks then fall back to permissive defaults.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

from lazytorch import _config
from lazytorch._errors import op_error
from lazytorch.autograd.engine import FREED, TensorMeta, _alias, keep_leaf, stop_gradient
from lazytorch.ir import dtypes as dt
from lazytorch.ir._lazynp import np as _np
from lazytorch.ir.node import Node, grad_mode, stamp, user_loc
from lazytorch.ir.primitives import make_node
from lazytorch.ops import creation as _creation
from lazytorch.ops._core import (
    P,
    binary_node,
    const_like,
    const_node,
    expand_node,
    leaf_node,
    numel,
    reshape_node,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.elementwise import _zero_gradient
from lazytorch.runtime import host_views as _host_views
from lazytorch.runtime import materialize_nodes, register
from lazytorch.tensor import Tensor, version_counter

Strides = tuple[int, ...]

# lazytorch.compile hook: set (by lazytorch._compile) only while a compiled function is being
# traced, which must hear of in-place writes (None otherwise: one global check in assign).
_compile_trace: Any = None


_UNSET = object()

# lazytorch.ops.numpy_bridge: id(tensor) -> its writer, for tensors whose value is an array
# NumPy code holds too (``from_numpy``, ``numpy()``); assign calls it after each write to
# one. Empty unless a script shares memory with NumPy (one dict check per write).
shared_with_numpy: dict[int, Any] = {}


class ViewStep:
    """One link of a view chain."""

    # Set by make_view: the step's input and output shapes and the step before it (None:
    # the input is the root). `_layout` memoizes layout().
    __slots__ = ("_in", "_layout", "_out", "_prev")
    default_contiguous = True  # the guess used when the strides are unknown

    def apply(self, n: Node) -> Node:
        raise NotImplementedError

    def write_back(self, base: Node, value: Node) -> Node:
        """The new value of this step's input when its output becomes `value`."""
        raise NotImplementedError

    def host(self, a: Any) -> Any:
        """This step over NumPy array `a` as a NumPy *view* of it, or None where NumPy has
        none (or the step's sizes are symbolic): a write through the result writes `a`."""
        return None

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        """The strides of the output (of shape `out`) given the input's; None if torch
        could not express this step as a view of that input."""
        raise NotImplementedError

    @property
    def strides(self) -> Strides | None:
        """The view's torch strides after this step (None: unknown)."""
        layout = self.layout()
        return None if layout is None else layout[1]

    @property
    def contiguous(self) -> bool:
        """Whether the view is row-major contiguous after this step (torch's rule)."""
        layout = self.layout()
        return self.default_contiguous if layout is None else _is_contiguous(*layout)

    def layout(self) -> tuple[tuple[int, ...], Strides] | None:
        """(shape, strides) of the view after this step, the root taken as contiguous; None
        where sizes are symbolic or the step was not made by make_view."""
        memo = getattr(self, "_layout", _UNSET)
        if memo is not _UNSET:
            return memo  # type: ignore[no-any-return]
        if not hasattr(self, "_in"):
            return None
        # Walk back to the first step without a memo (iteratively: chains can be long).
        todo: list[ViewStep] = []
        step: ViewStep | None = self
        while step is not None and getattr(step, "_layout", _UNSET) is _UNSET:
            todo.append(step)
            step = step._prev
        if step is not None:
            layout = step._layout
        else:
            shape = todo[-1]._in
            layout = (shape, contiguous_strides(shape)) if _concrete(shape) else None
        for step in reversed(todo):
            if layout is not None:
                out = step._out
                st = step.out_strides(layout[0], layout[1], out) if _concrete(out) else None
                layout = None if st is None else (out, st)
            step._layout = layout
        return layout


class Reshape(ViewStep):
    __slots__ = ("shape",)

    def __init__(self, shape: tuple[Any, ...]) -> None:
        self.shape = shape

    def apply(self, n: Node) -> Node:
        return reshape_node(n, self.shape)

    def write_back(self, base: Node, value: Node) -> Node:
        return reshape_node(value, base.shape)

    def host(self, a: Any) -> Any:
        if not _concrete(self.shape):
            return None
        v = a.reshape(self.shape)
        # (a reshape that needs a copy makes one: then there is no view)
        return v if _np.may_share_memory(v, a) else None

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return view_strides(shape, strides, out)


class Permute(ViewStep):
    __slots__ = ("perm",)
    default_contiguous = False

    def __init__(self, perm: tuple[int, ...]) -> None:
        self.perm = perm

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return tuple(strides[p] for p in self.perm)

    def apply(self, n: Node) -> Node:
        if self.perm == tuple(range(len(self.perm))):
            return n
        shape = tuple(n.shape[p] for p in self.perm)
        return make_node(P.permute, (n,), (self.perm,), shape, n.dtype, n.device)

    def write_back(self, base: Node, value: Node) -> Node:
        inverse = tuple(sorted(range(len(self.perm)), key=lambda i: self.perm[i]))
        return Permute(inverse).apply(value)

    def host(self, a: Any) -> Any:
        return a.transpose(self.perm)


class Expand(ViewStep):
    __slots__ = ("shape",)
    default_contiguous = False

    def __init__(self, shape: tuple[Any, ...]) -> None:
        self.shape = shape

    def apply(self, n: Node) -> Node:
        return expand_node(n, self.shape)

    def write_back(self, base: Node, value: Node) -> Node:
        # Only reached for a chain whose strides are unknown; _write_back scatters through
        # expanded chains it can prove free of self-overlap.
        raise _overlap_error()

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        lead = len(out) - len(shape)
        # New leading dims and broadcast size-1 dims repeat memory: stride 0.
        return (0,) * lead + tuple(
            0 if d == 1 and o != 1 else st for d, st, o in zip(shape, strides, out[lead:])
        )


def _overlap_error() -> Exception:
    return op_error(
        RuntimeError,
        "in-place write",
        "unsupported operation: more than one element of the written-to tensor refers to "
        "a single memory location (an expanded view); clone() the tensor first",
    )


class Bitcast(ViewStep):
    """The same bits read as another dtype of the same size (``x.view(torch.int32)``). Its
    value carries no gradient, as in torch; a write through it writes the root's bits.

    A bitcast of a bitcast reads the first one's input: viewing back is exact even for bit
    patterns that a stored 16-bit float would not keep (a NaN's payload becomes the quiet
    NaN of its sign when a float16 or bfloat16 value is stored; torch keeps the bits).
    """

    __slots__ = ("dtype",)

    def __init__(self, dtype: dt.DType) -> None:
        self.dtype = dtype

    def apply(self, n: Node) -> Node:
        while n.op is P.bitcast and n.buffer is None:
            n = n.inputs[0]
        if n.dtype is self.dtype:
            return n
        n = stop_gradient(n)
        return make_node(P.bitcast, (n,), (self.dtype,), n.shape, self.dtype, n.device)

    def write_back(self, base: Node, value: Node) -> Node:
        return Bitcast(base.dtype).apply(value)

    def host(self, a: Any) -> Any:
        if self.dtype is dt.bool_ and a.dtype != _np.bool_:
            return None  # a byte other than 0 or 1 is not a NumPy bool: computed instead
        return a.view(self.dtype.np)

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return strides


class Slice(ViewStep):
    __slots__ = ("starts", "steps", "stops")

    def __init__(
        self, starts: tuple[Any, ...], stops: tuple[Any, ...], steps: tuple[int, ...]
    ) -> None:
        self.starts = starts
        self.stops = stops
        self.steps = steps

    @property
    def default_contiguous(self) -> bool:  # type: ignore[override]
        return all(s == 1 for s in self.steps)

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return tuple(st * k for st, k in zip(strides, self.steps))

    def out_shape(self, shape: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(
            (hi - lo + st - 1) // st for lo, hi, st in zip(self.starts, self.stops, self.steps)
        )

    def is_identity(self, shape: tuple[Any, ...]) -> bool:
        return all(
            lo == 0 and hi == d and st == 1
            for lo, hi, st, d in zip(self.starts, self.stops, self.steps, shape)
        )

    def apply(self, n: Node) -> Node:
        if self.is_identity(n.shape):
            return n
        attrs = (self.starts, self.stops, self.steps)
        return make_node(P.slice, (n,), attrs, self.out_shape(n.shape), n.dtype, n.device)

    def write_back(self, base: Node, value: Node) -> Node:
        if self.is_identity(base.shape):
            return value
        if all(s == 1 for s in self.steps):
            return _pad_where(base, value, self.starts, self.stops)
        return _scatter_linear(base, self, value)

    def host(self, a: Any) -> Any:
        if not (_concrete(self.starts) and _concrete(self.stops)):
            return None
        # (the recorded bounds are normalized: 0 <= start <= stop <= size, step > 0)
        return a[tuple(map(slice, self.starts, self.stops, self.steps))]


class Select(ViewStep):
    """``x.select(axis, i)``: one index along `axis`, that axis dropped (one view step, so
    ``x[0]`` makes one tensor rather than a slice view and a reshape view)."""

    __slots__ = ("axis", "index")

    def __init__(self, axis: int, index: Any) -> None:
        self.axis = axis
        self.index = index

    def _bounds(self, shape: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """The window's starts and stops: index..index+1 along the axis, all of the rest."""
        a, i = self.axis, self.index
        return (0,) * a + (i,) + (0,) * (len(shape) - a - 1), (*shape[:a], i + 1, *shape[a + 1 :])

    def _window(self, shape: tuple[Any, ...]) -> Slice:
        starts, stops = self._bounds(shape)
        return Slice(starts, stops, (1,) * len(shape))

    def apply(self, n: Node) -> Node:
        # the nodes _window(...).apply and a reshape would record, built directly (x[i]
        # in a loop is on this path)
        shape, a = n.shape, self.axis
        if shape[a] == 1:  # the window is all of n (Slice.apply records nothing)
            window = n
        else:
            attrs = (*self._bounds(shape), (1,) * len(shape))
            out = (*shape[:a], 1, *shape[a + 1 :])
            window = make_node(P.slice, (n,), attrs, out, n.dtype, n.device)
        return reshape_node(window, (*shape[:a], *shape[a + 1 :]))

    def write_back(self, base: Node, value: Node) -> Node:
        window = self._window(base.shape)
        return window.write_back(base, reshape_node(value, window.out_shape(base.shape)))

    def host(self, a: Any) -> Any:
        if type(self.index) is not int:
            return None
        # (the Ellipsis keeps NumPy's result an array: selecting the last element of a 1-d
        # array would give a NumPy scalar, a copy that a write cannot go through)
        return a[(slice(None),) * self.axis + (self.index, Ellipsis)]

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return tuple(st for k, st in enumerate(strides) if k != self.axis)


class Alias(ViewStep):
    """detach() / view_as / .data: same elements, shared storage."""

    __slots__ = ()

    def out_strides(
        self, shape: tuple[int, ...], strides: Strides, out: tuple[int, ...]
    ) -> Strides | None:
        return strides

    def apply(self, n: Node) -> Node:
        return n

    def write_back(self, base: Node, value: Node) -> Node:
        return value

    def host(self, a: Any) -> Any:
        return a


class Detach(Alias):
    """detach(): the same elements without their gradient.

    The alias is a tensor of its own for autograd, as in torch: a write through it of
    values that carry gradient (``v = x.detach(); v[i] = w * 2``, the pre-0.4
    ``Variable(torch.zeros(n))`` filled element by element) makes the alias and its views
    require grad, while `x` only sees the new values. `grad_value` keeps that alias value,
    with the root node it was computed against (valid while the root still has it).
    """

    __slots__ = ("grad_value",)

    def __init__(self) -> None:
        self.grad_value: tuple[Node, Node] | None = None

    def apply(self, n: Node) -> Node:
        return stop_gradient(n)


def _pad_where(base: Node, value: Node, starts: Any, stops: Any) -> Node:
    """base with the window [starts, stops) replaced by value: where(mask, pad(value), base)."""
    lo = tuple(starts)
    hi = tuple(d - s for d, s in zip(base.shape, stops))
    dev = base.device
    padded = make_node(
        P.pad, (value, const_node(0, value.dtype, dev)), (lo, hi), base.shape, value.dtype, dev
    )
    inside = expand_node(const_node(True, dt.bool_, dev), value.shape)
    mask = make_node(
        P.pad, (inside, const_node(False, dt.bool_, dev)), (lo, hi), base.shape, dt.bool_, dev
    )
    return make_node(P.where, (mask, padded, base), (), base.shape, base.dtype, dev)


def _scatter_linear(base: Node, step: ViewStep | tuple[ViewStep, ...], value: Node) -> Node:
    """General write-back: scatter value at the linear positions the step (or chain of
    steps) reads. Positions read twice (a self-overlapping view) must get equal values."""
    n = numel(base.shape)
    dev = base.device
    lin = make_node(P.iota, (), ((n,), 0, dt.int64, dev), (n,), dt.int64, dev)
    steps = step if isinstance(step, tuple) else (step,)
    positions = replay(reshape_node(lin, base.shape), steps)
    m = numel(positions.shape)
    flat_idx = reshape_node(positions, (m,))
    flat_val = reshape_node(value, (m,))
    flat_base = reshape_node(base, (n,))
    out = make_node(P.scatter, (flat_base, flat_idx, flat_val), (0, "none"), (n,), base.dtype, dev)
    return reshape_node(out, base.shape)


# -- strides ----------------------------------------------------------------------------------
def _concrete(shape: tuple[Any, ...]) -> bool:
    return all(type(d) is int for d in shape)


def contiguous_strides(shape: tuple[int, ...]) -> Strides:
    out = []
    acc = 1
    for d in reversed(shape):
        out.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(out))


def _is_contiguous(shape: tuple[int, ...], strides: Strides) -> bool:
    """torch's is_contiguous: row-major strides, ignoring size-1 dims; empty is contiguous."""
    if 0 in shape:
        return True
    expected = 1
    for d, st in zip(reversed(shape), reversed(strides)):
        if d != 1:
            if st != expected:
                return False
            expected *= d
    return True


def view_strides(shape: tuple[int, ...], strides: Strides, new: tuple[int, ...]) -> Strides | None:
    """Strides for viewing (shape, strides) as `new`, or None when the elements cannot be
    addressed with strides (torch's computeStride: a new dim may only span dims of the
    input that are contiguous with one another)."""
    if 0 in shape or not shape:
        return tuple(strides) if tuple(shape) == tuple(new) else contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    chunk_base = strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        # A chunk of input dims ends where the next dim is not contiguous with it.
        if tensor_d == 0 or (
            shape[tensor_d - 1] != 1 and strides[tensor_d - 1] != tensor_numel * chunk_base
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk_base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(out)


def strides_of(t: Tensor) -> Strides | None:
    """t's torch strides, its root taken as contiguous (None where sizes are symbolic)."""
    if t._view is None:
        shape = t._node.shape
        return contiguous_strides(shape) if _concrete(shape) else None
    return t._view[1][-1].strides  # type: ignore[no-any-return]


def can_view(t: Tensor, shape: tuple[Any, ...]) -> bool:
    """Whether torch could ``view`` t as `shape` (else ``reshape`` must copy)."""
    if t._view is None:
        return True  # a root is contiguous: every shape of the same numel is a view
    st = strides_of(t)
    if st is None or not _concrete(shape):
        return True  # symbolic: no stride model, stay permissive
    return view_strides(tuple(t._node.shape), st, tuple(shape)) is not None


def is_contiguous(t: Tensor) -> bool:
    """torch's ``is_contiguous`` for t, from its strides (exact where sizes are concrete)."""
    st = strides_of(t)
    if st is None:
        return t._view is None or all(s.contiguous for s in t._view[1])
    return _is_contiguous(tuple(t._node.shape), st)


def _overlaps(shape: tuple[Any, ...], strides: Strides) -> bool:
    """torch's internal-overlap test: a stride-0 dim with more than one element (an empty
    tensor is contiguous, so never overlapping)."""
    return 0 not in shape and any(st == 0 and d > 1 for d, st in zip(shape, strides))


# -- making views ---------------------------------------------------------------------------
def make_view(src: Tensor, step: ViewStep, node: Node | None = None) -> Tensor:
    """A view of `src` through `step`, linked to src's root for write-through.

    `node` is the view's value where the caller has it already (a row of a computed host
    buffer, `lazytorch.ops.indexing`); by default `step` records it over src's node.
    """
    t = wrap(step.apply(src._node) if node is None else node)
    return _link(src, t, (step,), (t._node.shape,))


def make_view_of_value(
    src: Tensor, steps: tuple[ViewStep, ...], outs: tuple[Any, ...], node: Node
) -> Tensor:
    """A view of `src` through several `steps` at once (`outs`: each step's out shape),
    whose value `node` the caller has already (``x[i, j]`` of a computed host buffer: one
    tensor, not one per step)."""
    return _link(src, wrap(node), steps, outs)


def _link(src: Tensor, t: Tensor, new: tuple[ViewStep, ...], outs: tuple[Any, ...]) -> Tensor:
    """Make `t` the view of `src` through `new` (each step's out shape in `outs`)."""
    if src._view is None:
        root, steps, prev = src, new, None
    else:
        root, before = src._view
        steps, prev = (*before, *new), before[-1]
    # What layout() needs to work out the strides, if ever asked.
    shape = src._node.shape
    for step, out in zip(new, outs):
        step._in, step._out, step._prev = shape, out, prev
        shape, prev = out, step
    t._view = (root, steps)
    views = root._views
    if views is None:
        views = root._views = []
    views.append(weakref.ref(t))
    k = len(views)
    if k >= 64 and not k & (k - 1):
        # Dead views leave only at a write through the root (_refresh); a loop reading
        # x[i] and never writing would grow the list by one per read. At each power of
        # two the dead go: amortized O(1) per view, the list at most twice the live ones.
        views[:] = [r for r in views if r() is not None]
    return t


def replay(root_node: Node, steps: tuple[ViewStep, ...]) -> Node:
    n = root_node
    for s in steps:
        n = s.apply(n)
    return n


def host_view(a: Any, steps: tuple[ViewStep, ...]) -> Any:
    """NumPy array `a` (a root's value) through `steps` as a view of `a` — what `replay`
    would compute, with no node recorded — or None where a step has no NumPy view.

    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> v = host_view(a, (Permute((1, 0)), Select(0, 2)))
    >>> v[1] = -1.0
    >>> a.tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, -1.0]]
    """
    for s in steps:
        a = s.host(a)
        if a is None:
            return None
    return a


def _replay_view(root_node: Node, steps: tuple[ViewStep, ...]) -> Node:
    """A view's value from its root's: from the innermost detached alias that holds a
    value with gradient for this root value (`Detach`), else replayed from the root."""
    for j in range(len(steps) - 1, -1, -1):
        s = steps[j]
        if type(s) is Detach and s.grad_value is not None and s.grad_value[0] is root_node:
            return replay(s.grad_value[1], steps[j + 1 :])
    return replay(root_node, steps)


# non-empty once some write gave a detached alias gradient (`Detach`): until then writes
# skip the search for aliases to carry (one truth test per write)
_grad_aliases: list[bool] = []


def _grad_alias(root: Tensor, steps: tuple[ViewStep, ...], value: Node) -> int:
    """The index in `steps` of the detached alias a write of `value` gives gradient to
    (the innermost Detach), or -1 when the write carries none and the alias holds none."""
    if not grad_mode.enabled:
        return -1
    for j in range(len(steps) - 1, -1, -1):
        s = steps[j]
        if type(s) is Detach:
            held = s.grad_value is not None and s.grad_value[0] is root._node
            return j if value.ag is not None or held else -1
    return -1


def _write_alias(root: Tensor, steps: tuple[ViewStep, ...], k: int, value: Node) -> Node:
    """The new value, with gradient, of the detached alias `steps[k]` when `value` is
    written through `steps[k + 1:]`."""
    d = steps[k]
    assert type(d) is Detach
    held = d.grad_value
    alias = held[1] if held is not None and held[0] is root._node else None
    if alias is None:
        alias = replay(root._node, steps[: k + 1])
    rest = steps[k + 1 :]
    if any(isinstance(s, Expand) for s in rest):
        raise op_error(
            NotImplementedError,
            "copy_",
            "an in-place write of values that require grad into an expanded view of a "
            "detached tensor is not supported; write into a clone() instead",
        )
    new = _write_back(alias, rest, value) if rest else value
    return _still_differentiable(alias, new)


def _write_back(root_node: Node, steps: tuple[ViewStep, ...], value: Node) -> Node:
    if any(isinstance(s, Expand) for s in steps) and steps[-1].strides is not None:
        # An expanded intermediate has no single value to fold back into, so scatter the
        # view's value at its root positions (distinct, or all written the same value:
        # assign checked).
        return _scatter_linear(root_node, steps, value)
    # Inputs of every step, root first, then fold the new value back from the innermost.
    chain = [root_node]
    for s in steps[:-1]:
        chain.append(s.apply(chain[-1]))
    for s, base in zip(reversed(steps), reversed(chain)):
        value = s.write_back(base, value)
    return value


def _still_differentiable(old: Node, new: Node) -> Node:
    """The value an in-place write leaves, still in the graph when the old one was.

    torch keeps a tensor that requires grad in the graph through an in-place write, even one
    that overwrites every element with values carrying no gradient (``y[:] = 3``,
    ``y.fill_(0)``): ``y`` still requires grad, and the gradient to what it held is zero.
    ``where(True, new, old)`` is `new`, recorded as a function of `old` with that gradient
    (so what `old` was computed from gets zeros, not None). A `new` that reads `old`
    directly (``add_``, a partial write's ``where``) already depends on it.
    """
    if not grad_mode.enabled or new is old or new.shape != old.shape:
        return new
    if any(i is old for i in new.inputs):
        return new
    return _zero_gradient(new, old)


def _kept_history(old: Node, new: Node) -> Node:
    """A write autograd does not see — through ``.data`` or a detached alias, or in
    no_grad — to a tensor that is not a leaf: `new`'s values, `old`'s gradient path.

    torch keeps such a tensor's grad_fn: the gradient reaching it later goes on, unchanged,
    to what it was computed from, while the ops after the write read the new values
    (``y = x * 2; y.data.clamp_(0, 4); (y * y).sum().backward()`` gives x.grad = 4 * clamped
    y). Without this the write left `new` alone (no gradient path: backward raised) or a
    zero gradient (``y.data.mul_(10)`` gave x.grad = 0, a silent wrong answer).
    """
    a = old.ag
    if a is None or isinstance(a, TensorMeta) or (new.shape, new.dtype) != (old.shape, old.dtype):
        return new
    # A fresh node of `new`'s value that backward differentiates as `old`'s op applied to
    # `old`'s inputs, with itself as the op's result: a rule that reads the result
    # (softmax, exp, sigmoid) reads the new values, as torch's saved result, which shares
    # the tensor's storage, holds them (RL-Adventure's categorical DQN clamps a softmax
    # output through .data and backpropagates through that softmax). (A graph backward
    # already freed stays freed: the second backward raises, as torch's.)
    n = _alias(stop_gradient(new))
    n.ag = a if a is FREED or type(a) is tuple else (old.op, old.inputs, old.attrs)
    return n


def assign(
    t: Tensor, value: Node, *, allow_overlap: bool | None = None, detached: bool = False
) -> Tensor:
    """Make `value` (already of t's shape and dtype) the new content of `t`, in place.

    A view whose elements alias each other (an expanded dim) takes only writes that cannot
    disagree between aliases: by default (`allow_overlap` None) one value broadcast
    everywhere, as torch's ``fill_``/``zero_`` allow; torch refuses the others. `detached`:
    the write to a root `t` stands for one made through a detached alias of it (``.data``),
    which a grad leaf takes in grad mode too.
    """
    if _compile_trace is not None:  # a lazytorch.compile trace may not replay this write
        _compile_trace.assigned(t)
    loc = user_loc(2)
    if _numpy_arrays:
        _assign_shared(t, value, allow_overlap, loc, detached)
    else:
        _assign(t, value, allow_overlap, loc, detached)
    if _config.sync_possible and _config.sync_enabled():
        # sync mode runs a write as it runs an op: at once (left pending, a loop of writes
        # into one tensor grew one graph that every later cut walked and recomputed)
        root = t if t._view is None else t._view[0]
        if root._node.buffer is None:
            materialize_nodes([root._node], cause="sync mode")
    return t


def _assign_shared(
    t: Tensor,
    value: Node,
    allow_overlap: bool | None,
    loc: tuple[str, int] | None,
    detached: bool = False,
) -> Tensor:
    """`assign` while some tensors share memory with NumPy: a value that is such an array
    is copied first (the assigned tensor must not see later writes to it), and a write to
    such a tensor is passed to its writer (`lazytorch.ops.numpy_bridge`)."""
    value = _unaliased(value)
    root = t if t._view is None else t._view[0]
    written = shared_with_numpy.get(id(root))
    if written is None:
        return _assign(t, value, allow_overlap, loc, detached)
    given = value
    if value.buffer is not None and value.ag is None and t._view is None:
        # a computed value (``p.copy_(saved)``): t gets a node of its own over it, since the
        # writer makes the array t's node's buffer, which must not become `saved`'s too (a
        # number input's value, ``x[...] = 7.0`` on a 0-d tensor, is a Python number)
        b = value.buffer
        if isinstance(b, (bool, int, float)):
            b = _np.asarray(b, dtype=value.dtype.np)
        value = leaf_node(b, value.device)
    # the values read before the write: the root's, and its views' (a view read on the
    # host holds a NumPy view of the array)
    before = [root._node]
    for r in root._views or ():
        v = r()
        if v is not None:
            before.append(v._node)
    _assign(t, value, allow_overlap, loc, detached)
    # another tensor's computed node now t's too (a copy_ of a value with autograd history
    # under no_grad): the writer must not make the array its buffer
    foreign = root._node is given and given.buffer is not None
    written(root, before, foreign)
    return t


def _unaliased(n: Node) -> Node:
    b = n.buffer
    if b is None or type(b) is not _np.ndarray or not external_memory(b):
        return n
    return leaf_node(b.copy(), n.device)


external_memory = _host_views.is_external


# arrays that code other than lazytorch's programs writes (runtime.host_views.external): a
# clone or an assigned copy of one gets its own copy (`_unaliased`)
_numpy_arrays = _host_views.external


def _assign(
    t: Tensor,
    value: Node,
    allow_overlap: bool | None,
    loc: tuple[str, int] | None,
    detached: bool = False,
) -> Tensor:
    version_counter(t)[0] += 1
    if t._view is None:
        if getattr(t, "_meta", None) is not None:
            value = keep_leaf(t, value, detached)
        old_root = t._node
        if getattr(t, "_meta", None) is not None:
            # (a write through a detached alias is outside autograd: the leaf stays a leaf)
            t._node = value if detached else _still_differentiable(t._node, value)
        elif detached or not grad_mode.enabled:
            t._node = _kept_history(old_root, value)
        else:
            t._node = _still_differentiable(old_root, value)
        stamp(value, loc)
        register(t)  # its new value is pending: materialize() must find it
        if t._views:
            if _grad_aliases:
                _carry_aliases(t, old_root, None)
            _refresh(t, skip=None, loc=loc)
        return t
    root, steps = t._view
    st = steps[-1].strides if any(isinstance(s, Expand) for s in steps) else None
    if st is not None and _overlaps(t._node.shape, st):
        uniform = value.op is P.expand and value.inputs[0].shape == ()
        if not (uniform if allow_overlap is None else allow_overlap):
            raise _overlap_error()
    k = _grad_alias(root, steps, value)
    alias = None
    old_root = root._node
    if k >= 0:
        # the detached alias gets the gradient; the root only the values, as in torch
        alias = _write_alias(root, steps, k, value)
    written = value if alias is None else stop_gradient(value)
    if getattr(root, "_meta", None) is not None:
        detached = any(isinstance(s, Detach) for s in steps)
        root._node = keep_leaf(
            root, _write_back(root._node, steps, written), detached, through_view=True
        )
    elif old_root.ag is not None and (
        not grad_mode.enabled or any(isinstance(s, Detach) for s in steps)
    ):
        # outside autograd: the values written back over the old ones taken as data
        new = _write_back(stop_gradient(old_root), steps, written)
        root._node = _kept_history(old_root, new)
    else:
        root._node = _still_differentiable(root._node, _write_back(root._node, steps, written))
    if _grad_aliases:
        _carry_aliases(root, old_root, steps[k] if alias is not None else None)
    if alias is not None:
        steps[k].grad_value = (root._node, alias)  # type: ignore[attr-defined]
        if not _grad_aliases:
            _grad_aliases.append(True)
    t._node = value
    stamp(root._node, loc)
    register(root)
    _refresh(root, skip=t, loc=loc)
    return t


def _carry_gradient(new: Node, old: Node) -> Node:
    """`new`'s values with `old`'s gradient path: the gradient reaching the result goes on
    to `old` unchanged. ``new - (stop_gradient(old) - old)``: the difference is an exact
    +0 where `old` is finite (0 elsewhere), so the value is exactly `new` (-0.0 included)."""
    if old.ag is None or not new.dtype.is_floating_point or new.dtype != old.dtype:
        return new
    fixed = stop_gradient(old)
    finite = binary_node(P.lt, unary_node(P.abs, fixed), const_like(math.inf, fixed), dt.bool_)
    delta = where_node(finite, binary_node(P.sub, fixed, old), const_like(0, old))
    return binary_node(P.sub, new, delta)


def _carry_aliases(root: Tensor, old_root: Node, written: Any) -> None:
    """A write to `root` not made through a detached alias that holds gradient (`Detach`):
    the alias sees the new values and keeps its gradient path, as torch's alias keeps its
    grad_fn."""
    seen: set[int] = set()
    for r in root._views or ():
        v = r()
        if v is None or v._view is None:
            continue
        steps = v._view[1]
        for j, s in enumerate(steps):
            if type(s) is not Detach or s is written or id(s) in seen:
                continue
            held = s.grad_value
            if held is not None and held[0] is old_root:
                seen.add(id(s))
                new = replay(root._node, steps[: j + 1])
                s.grad_value = (root._node, _carry_gradient(new, held[1]))


def _refresh(root: Tensor, skip: Tensor | None, loc: tuple[str, int] | None = None) -> None:
    """Re-derive every live view of `root` (but `skip`) from its new value."""
    alive = []
    assert root._views is not None
    for r in root._views:
        v = r()
        if v is None:
            continue
        alive.append(r)
        if v is not skip:
            assert v._view is not None
            if grad_mode.enabled or v._node.ag is None:
                v._node = _replay_view(root._node, v._view[1])
            else:  # in no_grad, a view with a gradient path keeps it (torch keeps its grad_fn)
                grad_mode.enabled = True
                try:
                    v._node = _replay_view(root._node, v._view[1])
                finally:
                    grad_mode.enabled = False
            stamp(v._node, loc)
    root._views[:] = alive


# creation.into_out writes `out=` through assign; creation sits below this module
_creation._assign = assign
