"""Running collectives: the cut at a collective node, and the engines that compute them.

The contract (see `lazytorch.ir.prims.collective` for the nodes):

* **Recorded in order, run in order.** Every collective node recorded is appended to
  `pending`. Any cut (``materialize``, ``.item()``, an
  optimizer step's reads...) first runs every pending collective, oldest first, before it
  captures its own program. So each rank issues its collectives to the engine in the order
  its script recorded them, whether or not it reads their results, and ranks that record
  the same collectives can never deadlock on an order that depends on which values each
  reads first.
* **A batch is one program, then the engine.** The longest prefix of pending collectives
  none of which reads another's result is a batch: the inputs of the whole batch are
  computed by *one* cut (for data-parallel training: forward, backward and the bucket
  flattening, one program), then the engine runs each collective of the batch in order,
  and each node becomes a buffer leaf. The program that reads the results (the optimizer
  step) is captured afterwards, so it takes them as ordinary inputs: no program ever
  contains a collective, and no cache key a rank, group or sequence number.
* **Engines own the exchange, the runtime owns the order.** An engine (MPI, NCCL, the
  one-process engine) is registered per group id in `ENGINES`; it receives the node and
  its input's buffer and returns a new buffer (never the input's, which other nodes may
  read), and records nothing itself.

A later scheduler can overlap communication with computation inside this contract: split
the batch's one program so each bucket's inputs are outputs of an earlier part, issue the
bucket's collective non-blocking (``Iallreduce``, NCCL on a side stream) as soon as that
part has run, and wait only where a result is read (docs/distributed.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from lazytorch import metrics
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import get

_BUFFER = get("buffer")


class Engine(Protocol):
    """What a communication engine does for one collective node."""

    def run(self, node: Node, value: Any) -> Any:
        """The result buffer of collective `node` whose input's buffer is `value`."""
        ...


# Engines by group id (the ``group`` attr of collective nodes); lazytorch.distributed fills it.
ENGINES: dict[int, Engine] = {}
# Collective nodes recorded and not yet run, oldest first (every cut runs them first).
pending: list[Node] = []
# How a batch's inputs are computed (`lazytorch.runtime.materialize_nodes`) and which live
# values share their work (`lazytorch.runtime.held_with`): set by the runtime package when
# it loads (this module sits below it and does not import it).
materialize: Any = None
held_with: Any = None
_resolving = False


def resolve(wanted: Sequence[Node] = ()) -> None:
    """Run every pending collective, oldest first, each batch after one cut (module doc).

    The first batch's program also computes what its cut shares work with and can compute
    without a collective's result: `wanted` (the roots of the cut that called this) and
    the live values that share the batch's pending work (``held_with``: the loss of a
    training step, whose forward the gradients just computed). Otherwise the program after
    the exchange would compute that forward a second time.
    """
    global _resolving
    if _resolving or not pending:
        return
    _resolving = True
    try:
        first = True
        while pending:
            batch = _batch(pending)
            try:
                inputs = [c.inputs[0] for c in batch if c.buffer is None]
                todo = [n for n in inputs if n.buffer is None]
                extra = _alongside(todo, wanted, pending[0].id) if todo and first else []
                first = False
                if todo:
                    try:
                        materialize(todo + extra, cause="collective")
                    except Exception:
                        if not extra:
                            raise
                        # A held value's own error (an index out of range it recorded) must
                        # not fail the exchange: the inputs are computed alone, and raise
                        # only their own (as an implicit read does, runtime.implicit_point).
                        materialize(todo, cause="collective")
                for c in batch:
                    if c.buffer is None:
                        _run_one(c)
            finally:
                del pending[: len(batch)]
    finally:
        _resolving = False


def _alongside(todo: list[Node], wanted: Sequence[Node], oldest: int) -> list[Node]:
    """The values in `wanted` and held with `todo[0]` that read no pending collective."""
    seen = {id(n) for n in todo}
    out = []
    for n in [*wanted, *held_with(todo[0])]:
        if n.buffer is None and id(n) not in seen and not _reads_a_collective(n, oldest):
            seen.add(id(n))
            out.append(n)
    return out


def _reads_a_collective(n: Node, oldest: int) -> bool:
    """Whether `n`'s pending graph holds a pending collective (all have ids >= `oldest`)."""
    stack = [n]
    seen: set[int] = set()
    while stack:
        m = stack.pop()
        if m.buffer is not None or m.id < oldest or id(m) in seen:
            continue
        if m.op.category == "collective":
            return True
        seen.add(id(m))
        stack.extend(m.inputs)
    return False


def _batch(pending: list[Node]) -> list[Node]:
    """The longest prefix of `pending` none of whose members reads another's result."""
    first = pending[0]
    batch = [first]
    members = {id(first)}
    for c in pending[1:]:
        if _reads(c, members, first.id):
            break
        batch.append(c)
        members.add(id(c))
    return batch


def _reads(c: Node, members: set[int], oldest: int) -> bool:
    """Whether collective `c`'s pending input graph reaches a node in `members`.

    Node ids grow in recording order, so a node older than the batch's first collective
    cannot read it: the walk stops there (gradients recorded before the bucket collectives
    end it at once).
    """
    stack = list(c.inputs)
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if n.buffer is not None or n.id < oldest or id(n) in seen:
            continue
        if id(n) in members:
            return True
        seen.add(id(n))
        stack.extend(n.inputs)
    return False


def _run_one(c: Node) -> None:
    group = c.attrs[0]
    engine = ENGINES.get(group)
    if engine is None:
        raise RuntimeError(
            f"{c.op.name} #{c.attrs[1]} was recorded on process group {group}, which has been "
            "destroyed; record collectives only on a live group"
        )
    value = c.inputs[0].buffer
    t0 = time.perf_counter()
    out = engine.run(c, value)
    metrics.timed("collective", time.perf_counter() - t0)
    metrics.increment("collectives")
    metrics.increment("collective_bytes", int(getattr(value, "nbytes", 0)))
    c.realize(out, _BUFFER)
