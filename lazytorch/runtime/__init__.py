"""Materialization: cutting the pending graph and running it.

The registry of live tensors and the cut logic live here and stay light (they are on the
per-op path); executing a cut — program cache, backend compile, run — is in
`lazytorch.runtime.executor`, imported on the first materialization.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from lazytorch import _config, _native, metrics
from lazytorch._errors import ImplicitMaterializationError
from lazytorch.ir import philox as _philox
from lazytorch.ir.node import Node, format_loc, user_loc
from lazytorch.ir.prims import elementwise as _elementwise_prims
from lazytorch.ir.prims import reduce as _reduce_prims
from lazytorch.runtime import collectives as _collectives
from lazytorch.runtime.host_views import read_on_host

if TYPE_CHECKING:
    from lazytorch.tensor import Tensor

__all__ = [
    "clear_cache",
    "empty_pool",
    "implicit_point",
    "materialize",
    "materialize_as_read",
    "materialize_nodes",
    "register",
]

_log_syncs = logging.getLogger("lazytorch.syncs")

_live: list[weakref.ref[Any]] = []
_prune_at = 1024
# Node id at the most recent cut: the auto-cut threshold counts nodes recorded since.
last_cut_id = 0
# Layers above the runtime extend a cut without the runtime importing them: each hook is
# called with the roots of every cut that runs a program, before it runs, and returns more
# roots to compute in the same program (autograd registers `saved_for_backward` here).
before_cut: list[Callable[[list[Node]], list[Node]]] = []

# The reference's random draws take their Philox words from the native extension where it
# is built (the same words: tests/ops/test_random.py), loaded at the first draw.
_philox.native_loader = lambda: getattr(_native.load(warn=False), "philox_words", None)
# ...and its erf, libm's in one loop (the same values: tests/ops/test_special.py).
_elementwise_prims.native_erf_loader = lambda: getattr(_native.load(warn=False), "erf_f64", None)
# ...and torch's orders among ties (sort, topk, kthvalue), the compiled backend's algorithms
# (tests/ops/test_sorting.py).
_reduce_prims.native_order_loader = lambda: getattr(_native.load(warn=False), "argsort_order", None)
# ...and each of these after every cut that ran a program (shared-memory tensors write their
# new values back into their segment here: lazytorch.ops.shared_memory).
after_cut: list[Callable[[], None]] = []
# Collective nodes recorded and not yet run, oldest first: every cut runs them first.
pending_collectives = _collectives.pending
# lazytorch.compile hook: set (by lazytorch._compile) only while a compiled function is being
# traced, which must hear of every value read or computed inside it. None: one global check.
_compile_trace: Any = None


def register(t: Tensor) -> None:
    """Track a new tensor so ``materialize()`` can find every live pending value.

    (`lazytorch.ops._core.wrap` inlines this on the per-op path.)
    """
    _live.append(weakref.ref(t))
    if len(_live) > _prune_at:
        prune()


def prune() -> None:
    """Drop dead and materialized tensors; the next prune happens at twice the survivors."""
    global _prune_at
    _prune()
    _prune_at = max(1024, 2 * len(_live))


def _prune() -> None:
    # A tensor updated in place is registered again for its new pending value; weakref.ref
    # hands back the same ref object for the same tensor, so one entry per tensor is kept
    # (without this, a training loop's registry grew by every in-place update, forever).
    alive = []
    seen: set[int] = set()
    for r in _live:
        t = r()
        if t is not None and t._node.buffer is None and id(r) not in seen:
            seen.add(id(r))
            alive.append(r)
    _live[:] = alive


def live_pending() -> list[Node]:
    """Pending nodes of every live tensor, oldest first, without duplicates."""
    _prune()
    seen: set[int] = set()
    out = []
    for r in _live:
        t = r()
        if t is None:
            continue
        n = t._node
        if n.buffer is None and id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    # In recording order, not registration order: a loop that records the same step again
    # then gives the same roots in the same order, so its program is found in the cache.
    out.sort(key=_node_id)
    return out


def _node_id(n: Node) -> int:
    return n.id


def materialize(*tensors: Tensor) -> None:
    """Compute the given tensors now; with no arguments, every live pending tensor.

    This is the explicit graph cut: everything recorded since the last cut that the
    tensors depend on becomes one program, is looked up in the program cache (or compiled),
    and runs. Afterwards the tensors hold values, and later graphs that use them read those
    values instead of recomputing them.

    >>> import lazytorch
    >>> x = lazytorch.arange(4.0)
    >>> y = (x * 2).sum()
    >>> lazytorch.materialize(y)       # one program computes y
    >>> y.item()                       # already materialized: no new cut
    12.0
    """
    if tensors:
        nodes = []
        seen: set[int] = set()
        for t in tensors:
            if isinstance(t, (list, tuple)):
                raise TypeError(
                    "materialize() takes tensors as separate arguments: materialize(*ts)"
                )
            n = t._node
            if n.buffer is None and id(n) not in seen:
                seen.add(id(n))
                nodes.append(n)
    else:
        nodes = live_pending()
    materialize_nodes(nodes, cause="materialize()")


def materialize_as_read(*tensors: Tensor) -> None:
    """Compute `tensors` as reading their values would (``.numpy()``, ``.item()``): each
    with the live tensors that share its pending work (`held_with`), in one program.
    What `lazytorch warmup` runs, so a warmed program is the one a caller's read cuts."""
    roots: dict[int, Node] = {}
    for t in tensors:
        if t._node.buffer is None:
            roots.setdefault(id(t._node), t._node)
    for n in list(roots.values()):
        for h in held_with(n):
            roots.setdefault(id(h), h)
    materialize_nodes(list(roots.values()), cause="read")


def materialize_nodes(nodes: Iterable[Node], cause: str = "", loc: Any = None) -> None:
    global last_cut_id, _executor
    if pending_collectives:  # collectives first, in recording order (see collectives.py)
        if _compile_trace is not None:
            _compile_trace.collective()
        nodes = list(nodes)
        _collectives.resolve(nodes)
    # a meta tensor has a shape and no values: never computed (reading one raises before)
    roots = [n for n in nodes if n.buffer is None and n.device.type != "meta"]
    if not roots:
        return
    if _compile_trace is not None:  # a lazytorch.compile trace cannot replay a cut
        _compile_trace.materialized(cause)
    else:  # views of computed values are read on the host, with no program to compile
        roots = [n for n in roots if not read_on_host(n)]
        if not roots:
            return
    for hook in before_cut:
        roots += hook(roots)
    ex = _executor
    if ex is None:  # imported at the first cut, then kept (this is every cut's path)
        from lazytorch.runtime import executor as ex  # lazy: import time

        _executor = ex
    metrics.increment("materializations")
    last_cut_id = roots[0].id if len(roots) == 1 else max(n.id for n in roots)
    ex.run(roots, cause=cause, loc=loc)  # (looked up at each cut: tests and profilers wrap it)
    for after in after_cut:
        after()


_collectives.materialize = materialize_nodes
_executor: Any = None  # lazytorch.runtime.executor, once a cut imported it


def implicit_point(t: Tensor, cause: str) -> None:
    """An implicit materialization (``.item()``, ``repr``...): counted, logged, maybe refused."""
    if _compile_trace is not None:  # a lazytorch.compile trace must not bake this value in
        _compile_trace.value_read(t, cause)
    n = t._node
    if n.buffer is not None:
        return
    loc = user_loc()
    if _config.strict_enabled():
        raise ImplicitMaterializationError(
            f"implicit materialization by {cause} at {format_loc(loc)} in strict mode; "
            "materialize explicitly with lazytorch.materialize(...) before this line, "
            "or leave strict mode"
        )
    metrics.implicit(cause)
    if _log_syncs.isEnabledFor(logging.INFO):
        _log_syncs.info("implicit materialization: %s at %s", cause, format_loc(loc))
    if _compile_trace is None and read_on_host(n):  # a view of a computed value: no cut
        return
    held = held_with(n)
    if held:
        try:
            materialize_nodes([n, *held], cause=cause, loc=loc)
        except Exception:
            if n.buffer is not None:
                raise
            # A held tensor's own error (an index out of range it recorded) must not fail
            # this read: the value asked for is computed alone, and raises only its own.
            materialize_nodes([n], cause=cause, loc=loc)
        else:
            metrics.increment("held_materialized", len(held))
        return
    materialize_nodes([n], cause=cause, loc=loc)


def held_with(root: Node) -> list[Node]:
    """The pending values of live tensors that share pending work with `root`'s graph.

    An implicit cut (``.item()``, ``.numpy()``, ``print``) computes them along with `root`,
    as MLX keeps every evaluated array that is still referenced: a tensor the user still
    holds whose graph overlaps the cut would otherwise recompute the shared part at its own
    cut (``h = relu(x @ w)``, then ``h.sum().item()`` and ``h.max().item()``: one GEMM,
    not two), and a value updated from one computed here (``a -= lr * grad_a`` while the
    loss is printed) would drag an ever longer chain of pending updates into each later
    program. "Shares work" means: is inside the cut's pending graph, or reads a pending
    node that is. A tensor whose pending graph is disjoint from the cut stays pending.

    A read of a *part* of a live tensor (the cut is a chain of movements — an element, a
    row, a slice — over it) computes the whole of it, however cheap it is: its other parts
    are read next (``for i in ix: data[i:i + 8]`` reads every element of ``ix``), and each
    would otherwise be a program of its own recomputing ``ix``, with its offsets in the key
    (a new program per element).
    """
    inside = {id(root)}
    oldest = root.id  # the oldest node of the cut that is costly (not in _CHEAP)
    part = _part_read(root)  # what `root` reads a part of
    if part:
        oldest = min(oldest, min(n.id for n in part.values()))
    stack = [root]
    cheap = _CHEAP
    while stack:  # (the per-cut cost of this walk matters: loops written plainly)
        n = stack.pop()
        reads_data = False
        for i in n.inputs:
            if i.buffer is None:
                k = id(i)
                if k not in inside:
                    inside.add(k)
                    stack.append(i)
            elif i.shape:
                reads_data = True
        if n.id < oldest:
            cat = n.op.category
            if cat not in cheap or (cat == "source" and _big_draw(n)) or (reads_data and _small(n)):
                oldest = n.id
    # Newest registrations first; the registry is in order of registration (a tensor
    # updated in place registers again). A value worth holding holds a costly node; if that
    # node is inside the cut, the value is no older than the cut's oldest costly node, so
    # the scan stops at the first live tensor older than that. (Missed, on purpose: an old
    # pending reduction whose only shared part is a cheap pending value, like the sum of a
    # never-computed constant: it is recomputed at its own read, which costs little.)
    # Without the bound, a constant pending since the script began made every cut scan the
    # whole registry.
    apart: set[int] = set()  # pending nodes known not to reach the cut
    seen: set[int] = set()
    held = []
    spent = 0  # entries passed over that no later cut needs: dead or computed tensors
    for r in reversed(_live):
        t = r()
        if t is None:
            spent += 1
            continue
        m = t._node
        if m.id < oldest:
            break
        if m.buffer is not None:
            spent += 1
            continue
        if m is root or id(m) in seen:
            continue
        seen.add(id(m))
        if id(m) in part or ((id(m) in inside or _reaches(m, inside, apart)) and _worth_holding(m)):
            held.append(m)
    held.sort(key=_node_id)  # recording order: a repeated loop cuts the same program
    if spent > _SPENT_PRUNE:
        # The registry is pruned when it doubles, so between prunes a small step's cuts
        # each walked hundreds of dead or computed entries (about 40 us of a 210 us step
        # of the regression tutorial's kind): drop them now, and the next cut's walk is short.
        prune()
    return held


_collectives.held_with = held_with


def _part_read(root: Node) -> dict[int, Node]:
    """The pending nodes `root` reads a part of (by id), or none: below the first movement
    of a chain of one-input movements (an element, a row, a slice) and elementwise ops whose
    other inputs are computed or constants (``w[i][j] <= 5``, ``x[i] * 2``) down from
    `root`."""
    n, part, moved = root, {}, False
    while True:
        cat = n.op.category
        if cat == "movement" and len(n.inputs) == 1:
            i = n.inputs[0]
        elif cat == "elementwise":  # one pending input besides constants
            pending = [
                i
                for i in n.inputs
                if i.buffer is None and not (i.op.category == "source" and not i.inputs)
            ]
            if len(pending) != 1:
                break
            i = pending[0]
        else:
            break
        if i.buffer is not None:
            break
        moved = moved or cat == "movement"
        if moved and i.op.category != "movement":  # (a pending view is never held apart
            part[id(i)] = i  # from its base: it would stop seeing the base's writes)
        n = i
    if moved:
        part[id(n)] = n  # the end of the chain, a view's base: a view of a computed value
    return part


# A cut that walks past more spent registry entries than this prunes the registry.
_SPENT_PRUNE = 32

# Ops a program recomputes for next to nothing (fused into whatever reads them)...
_CHEAP = frozenset(("source", "leaf", "movement", "elementwise"))
_CHEAP_NODES = 8
# ...except a random draw of this many elements or more. Philox costs ~40 ns an element
# on the interpreter tier (and ~5 compiled): a model's initial weights, drawn again by
# every program that reads them while they are pending, made each token of a sampling
# loop over a 7M-parameter model that was never trained redraw 7M numbers (0.3 s a token).
_BIG_DRAW = 4096


def _count(n: Node) -> int | None:
    """How many elements `n` has; None where a size is symbolic."""
    count = 1
    for d in n.shape:
        if not isinstance(d, int):
            return None
        count *= d
    return count


def _big_draw(n: Node) -> bool:
    """Whether `n` draws at least `_BIG_DRAW` random numbers (a symbolic size counts as
    big: it stands for every size)."""
    if n.op.name != "rand":
        return False
    count = _count(n)
    return count is None or count >= _BIG_DRAW


# ...and a small value computed from data (computed tensors, not constants): held, the next
# program reads it; recomputed, the next program inlines how it was made, and a value
# built from the last one (`idx = torch.cat([idx, nxt], 1)`, sampling token by token)
# would make each program one step longer than the last: a new program per token.
_SMALL_HOLD = 1 << 16


def _small(n: Node) -> bool:
    """Whether `n` has at most `_SMALL_HOLD` elements (known sizes only)."""
    count = _count(n)
    return count is not None and count <= _SMALL_HOLD


def _worth_holding(m: Node) -> bool:
    """Whether computing `m` now saves later work: its pending graph holds a reduction, a
    GEMM, a gather, a large random draw... or more than a few nodes. A constant, a small
    ``randn`` or a reshaped ``arange`` costs nothing to recompute inside each program that
    reads it; holding it would only make the next program differ from this one (a warmed
    program would not match the caller's). A small value computed from data is held too
    (see `_SMALL_HOLD`)."""
    small = _small(m)
    seen = {id(m)}
    stack = [m]
    while stack:
        n = stack.pop()
        if n.op.category not in _CHEAP or _big_draw(n):
            return True
        for i in n.inputs:
            if i.buffer is not None:
                if small and i.shape:
                    return True
            elif id(i) not in seen:
                if len(seen) == _CHEAP_NODES:
                    return True
                seen.add(id(i))
                stack.append(i)
    return False


def _reaches(start: Node, inside: set[int], apart: set[int]) -> bool:
    seen = {id(start)}
    stack = [start]
    while stack:
        n = stack.pop()
        for i in n.inputs:
            if i.buffer is not None or id(i) in apart or id(i) in seen:
                continue
            if id(i) in inside:
                return True
            seen.add(id(i))
            stack.append(i)
    apart |= seen  # every node visited here reaches nothing inside
    return False


def forget_live() -> None:
    """Stop tracking every tensor recorded so far: ``materialize()`` with no arguments and
    the auto-cut will not compute them (they still compute when read). For test isolation
    and for dropping abandoned work."""
    _live.clear()


def clear_cache() -> None:
    """Forget every compiled program held in memory (the next cut of each compiles again)."""
    import sys

    executor = sys.modules.get("lazytorch.runtime.executor")
    if executor is not None:
        executor.clear_cache()


def empty_pool() -> int:
    """Return the memory the compiled backend keeps for reuse to the system.

    Outputs of compiled programs are allocated from a pool of blocks freed by earlier
    outputs (fresh memory costs page faults that are slower than most kernels). The pool
    keeps at most ``LAZYTORCH_POOL_MB`` (default 1024) MiB of freed blocks. Programs' temporaries
    live in arenas shared by all programs (one per thread running programs at the same time,
    the size of the largest program run). This releases both now, like
    ``torch.cuda.empty_cache()``. Returns the bytes released.

    >>> import lazytorch
    >>> lazytorch.runtime.empty_pool() >= 0
    True
    """
    from lazytorch import _native  # lazy: import time (import lazytorch)

    mod = _native.load(warn=False)
    return int(mod.empty_pool()) if mod is not None else 0


def auto_cut(newest_id: int) -> None:
    """Materialize every live pending tensor because the graph grew past the threshold."""
    global last_cut_id
    # Reset first: even if nothing live is pending (the graph was garbage), the next
    # threshold is counted from here.
    last_cut_id = newest_id
    metrics.increment("auto_cuts")
    _log_syncs.info(
        "auto cut: more than %d nodes recorded since the last cut (at %s)",
        _config.DEFAULTS.max_pending_nodes,
        format_loc(user_loc()),
    )
    materialize_nodes(live_pending(), cause="auto cut (graph size)", loc=user_loc())


def _resolve_backend(name: str) -> str:
    """What backend name `name` means here (``auto`` resolved): `_config.get_backend`'s hook."""
    from lazytorch.runtime.backends import resolve  # lazy: import time (import lazytorch)

    return resolve(name)


_config.resolve_backend = _resolve_backend
