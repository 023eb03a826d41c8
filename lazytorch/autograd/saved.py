"""Saved values: what a backward pass will read, computed with an early forward cut.

When a gradient-carrying value is materialized before its backward runs (``loss.item()``
before ``loss.backward()``), the nodes that the pending vjp rules read (their ``saves``)
are added to the cut as extra outputs. They become buffers that the histories keep alive,
so the later backward reads them instead of recomputing the forward — torch's saved
tensors. Cheap values are not saved: sources (constants, iota) and views, whose inputs are
saved in their place.
"""

from __future__ import annotations

from typing import Any

from lazytorch import runtime
from lazytorch.autograd import rules
from lazytorch.autograd.engine import is_backward_node
from lazytorch.ir.node import Node

__all__ = ["saved_for_backward", "saved_report", "saved_values"]


def saved_for_backward(roots: list[Node]) -> list[Node]:
    """The runtime's hook before each cut: when a gradient-carrying value is computed before
    its backward ran, what the backward will read is computed along with it, so backward
    does not redo the forward."""
    for n in roots:
        if n.ag is True or type(n.ag) is tuple:
            return saved_values(roots)
    return []


runtime.before_cut.append(saved_for_backward)


def saved_values(roots: list[Node]) -> list[Node]:
    """The pending nodes below `roots` that backward through them will read."""
    rules.install()
    root_ids = {id(r) for r in roots}
    seen: set[int] = set()
    out: dict[int, Node] = {}
    stack = [r for r in roots if _pending_history(r) is not None]

    def want(n: Node) -> None:
        # A view is recomputed from its input for free: save what it views instead.
        while n.buffer is None and n.op.category == "movement":
            for i in n.inputs[1:]:
                want(i)
            n = n.inputs[0]
        if n.buffer is None and n.op.category not in ("leaf", "source") and id(n) not in root_ids:
            out[id(n)] = n

    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        op, inputs = _pending_history(n)  # type: ignore[misc]
        vjp = op.vjp
        if vjp is not None:
            for k in vjp.saves:
                want(n if k == -1 else inputs[k])
        for i in inputs:
            if id(i) not in seen and _pending_history(i) is not None:
                stack.append(i)
    return list(out.values())


def _pending_history(n: Node) -> tuple[Any, tuple[Node, ...]] | None:
    """What backward will differentiate at a value not computed yet: its own op, or the
    history an op gave it (`lazytorch.ir.node.differentiate_as`); None for the rest."""
    if n.buffer is not None:
        return None
    a = n.ag
    if a is True:
        return n.op, n.inputs
    if type(a) is tuple:
        return a[0], a[1]
    return None


def saved_report(program: Any, capture: Any, sched: Any) -> str | None:
    """The schedule printout's line on what backward keeps from forward, or None.

    A step (kernel or extern call) belongs to backward when it computes a value a backward
    pass recorded. *Saved* buffers are those a forward step writes and a backward step
    reads: what the joint program keeps alive from forward for backward. Pointwise values
    are never among them — the scheduler recomputes them inside the backward kernels that
    read them — so what is saved is reductions, GEMM results and the like.
    """
    nparams = len(program.params)
    backward_values = set()
    for i, ins in enumerate(program.instrs):
        if 0 <= ins.origin < len(capture.order) and is_backward_node(capture.order[ins.origin]):
            backward_values.add(nparams + i)
    if not backward_values:
        return None
    bufs = sched.buffers
    is_bw = [any(bufs[w].value in backward_values for w in st.writes) for st in sched.steps]
    forward_written = {w for st, bw in zip(sched.steps, is_bw) if not bw for w in st.writes}
    saved = {r for st, bw in zip(sched.steps, is_bw) if bw for r in st.reads} & forward_written
    total = sum(bufs[b].nbytes for b in saved)
    nbw = sum(is_bw)
    return (
        f"autograd: {len(is_bw) - nbw} forward and {nbw} backward steps; saved for backward: "
        f"{len(saved)} buffers, {total / 1e6:.2f} MB "
        f"({', '.join(str(bufs[b]) for b in sorted(saved)[:12])}{', ...' if len(saved) > 12 else ''})"
    )
