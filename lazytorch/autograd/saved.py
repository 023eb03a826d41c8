"""Saved values: what a backward pass will read, computed with an early forward cut.

When a gradient-carrying value is materialized before its backward runs (``loss.item()``
before ``loss.backward()``), the nodes that the pending vjp rules read (their ``saves``)
are added to the cut as extra outputs. They become buffers that the histories keep alive,
so the later backward reads them instead of recomputing the forward — torch's saved
tensors. Cheap values are not saved: sources (constants, iota) and views, whose inputs are
saved in their place.
"""

from __future__ import annotations

from lazytorch.ir.node import Node

__all__ = ["saved_values"]


def saved_values(roots: list[Node]) -> list[Node]:
    """The pending nodes below `roots` that backward through them will read."""
    from lazytorch.autograd import rules

    rules.install()
    root_ids = {id(r) for r in roots}
    seen: set[int] = set()
    out: dict[int, Node] = {}
    stack = [r for r in roots if r.ag is True]

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
        vjp = n.op.vjp
        if vjp is not None:
            for k in vjp.saves:
                want(n if k == -1 else n.inputs[k])
        for i in n.inputs:
            if i.ag is True and i.buffer is None and id(i) not in seen:
                stack.append(i)
    return list(out.values())
