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
"""

from __future__ import annotations

import weakref
from typing import Any

from lazytorch._errors import op_error
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import make_node
from lazytorch.ops._core import P, const_node, expand_node, numel, reshape_node, wrap
from lazytorch.tensor import Tensor


class ViewStep:
    """One link of a view chain."""

    __slots__ = ()
    contiguous = True  # whether the view keeps row-major element order

    def apply(self, n: Node) -> Node:
        raise NotImplementedError

    def write_back(self, base: Node, value: Node) -> Node:
        """The new value of this step's input when its output becomes `value`."""
        raise NotImplementedError


class Reshape(ViewStep):
    __slots__ = ("shape",)

    def __init__(self, shape: tuple[Any, ...]) -> None:
        self.shape = shape

    def apply(self, n: Node) -> Node:
        return reshape_node(n, self.shape)

    def write_back(self, base: Node, value: Node) -> Node:
        return reshape_node(value, base.shape)


class Permute(ViewStep):
    __slots__ = ("perm",)
    contiguous = False

    def __init__(self, perm: tuple[int, ...]) -> None:
        self.perm = perm

    def apply(self, n: Node) -> Node:
        if self.perm == tuple(range(len(self.perm))):
            return n
        shape = tuple(n.shape[p] for p in self.perm)
        return make_node(P.permute, (n,), (self.perm,), shape, n.dtype, n.device)

    def write_back(self, base: Node, value: Node) -> Node:
        inverse = tuple(sorted(range(len(self.perm)), key=lambda i: self.perm[i]))
        return Permute(inverse).apply(value)


class Expand(ViewStep):
    __slots__ = ("shape",)
    contiguous = False

    def __init__(self, shape: tuple[Any, ...]) -> None:
        self.shape = shape

    def apply(self, n: Node) -> Node:
        return expand_node(n, self.shape)

    def write_back(self, base: Node, value: Node) -> Node:
        raise op_error(
            RuntimeError,
            "in-place write",
            "unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location (an expanded view); clone() the tensor first",
        )


class Slice(ViewStep):
    __slots__ = ("starts", "steps", "stops")

    def __init__(
        self, starts: tuple[Any, ...], stops: tuple[Any, ...], steps: tuple[int, ...]
    ) -> None:
        self.starts = starts
        self.stops = stops
        self.steps = steps

    @property
    def contiguous(self) -> bool:  # type: ignore[override]
        return all(s == 1 for s in self.steps)

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


class Alias(ViewStep):
    """detach() / view_as / .data: same elements, shared storage."""

    __slots__ = ()

    def apply(self, n: Node) -> Node:
        return n

    def write_back(self, base: Node, value: Node) -> Node:
        return value


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


def _scatter_linear(base: Node, step: ViewStep, value: Node) -> Node:
    """General write-back: scatter value at the linear positions the step reads."""
    n = numel(base.shape)
    dev = base.device
    lin = make_node(P.iota, (), ((n,), 0, dt.int64, dev), (n,), dt.int64, dev)
    positions = step.apply(reshape_node(lin, base.shape))
    m = numel(positions.shape)
    flat_idx = reshape_node(positions, (m,))
    flat_val = reshape_node(value, (m,))
    flat_base = reshape_node(base, (n,))
    out = make_node(P.scatter, (flat_base, flat_idx, flat_val), (0, "none"), (n,), base.dtype, dev)
    return reshape_node(out, base.shape)


# -- making views ---------------------------------------------------------------------------
def make_view(src: Tensor, step: ViewStep) -> Tensor:
    """A view of `src` through `step`, linked to src's root for write-through."""
    t = wrap(step.apply(src._node))
    if src._view is None:
        root, steps = src, (step,)
    else:
        root, prev = src._view
        steps = (*prev, step)
    t._view = (root, steps)
    if root._views is None:
        root._views = []
    root._views.append(weakref.ref(t))
    return t


def replay(root_node: Node, steps: tuple[ViewStep, ...]) -> Node:
    n = root_node
    for s in steps:
        n = s.apply(n)
    return n


def _write_back(root_node: Node, steps: tuple[ViewStep, ...], value: Node) -> Node:
    # Inputs of every step, root first, then fold the new value back from the innermost.
    chain = [root_node]
    for s in steps[:-1]:
        chain.append(s.apply(chain[-1]))
    for s, base in zip(reversed(steps), reversed(chain)):
        value = s.write_back(base, value)
    return value


def assign(t: Tensor, value: Node) -> Tensor:
    """Make `value` (already of t's shape and dtype) the new content of `t`, in place."""
    if t._view is None:
        t._node = value
        if t._views:
            _refresh(t, skip=None)
        return t
    root, steps = t._view
    root._node = _write_back(root._node, steps, value)
    t._node = value
    _refresh(root, skip=t)
    return t


def _refresh(root: Tensor, skip: Tensor | None) -> None:
    alive = []
    assert root._views is not None
    for r in root._views:
        v = r()
        if v is None:
            continue
        alive.append(r)
        if v is not skip:
            assert v._view is not None
            v._node = replay(root._node, v._view[1])
    root._views[:] = alive
