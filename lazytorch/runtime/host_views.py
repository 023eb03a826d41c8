"""Reading through views of computed values, on the host, without a program.

A value that is only a chain of movement primitives (reshape, permute, expand, slice,
flip) over a computed CPU buffer — ``x[i]``, ``x.T[2:5]``, ``x.view(-1)[k]`` once ``x``
holds a value — is computed with NumPy at the cut, instead of being captured, looked up
and compiled as a program. Those primitives move elements without computing anything, so
the result is bit for bit what a compiled program would produce. Without this, reading
``x[i].item()`` for each ``i`` of a loop compiled one program per index (the index is an
attribute of the slice, part of the program's key): 140-185 ms for each new ``i``.

Rules: the chain is at most `MAX_CHAIN` nodes deep, of one-input movement primitives (the
primitive table's category; pad and cat are not among them); the bottom
is a NumPy buffer (a cuda tensor's values stay on its device and go through its backend);
the result is stored contiguous (programs read their inputs as dense arrays) and counted as
``host_view_reads`` in `lazytorch.metrics`.

>>> import lazytorch
>>> x = lazytorch.arange(12.0).reshape(3, 4)
>>> lazytorch.materialize(x)
>>> lazytorch.metrics.reset()
>>> [x[i, 2].item() for i in range(3)]
[2.0, 6.0, 10.0]
>>> lazytorch.metrics.counters()["compiles"], lazytorch.metrics.counters()["host_view_reads"]
(0, 3)
"""

from __future__ import annotations

from typing import Any

from lazytorch import metrics
from lazytorch.ir._lazynp import np
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import get

__all__ = ["MAX_CHAIN", "chain_value", "external", "is_external", "read_on_host", "realize_on_host"]

MAX_CHAIN = 16
_BUFFER = get("buffer")

# id(array) -> id(tensor) for arrays that code other than lazytorch's programs writes: NumPy
# code sharing a tensor's memory (lazytorch.ops.numpy_bridge) and other processes
# (lazytorch.ops.shared_memory). A value read on the host over one is a copy, not a view:
# a value computed before such a write must keep what it read (a pending gradient, a clone).
external: dict[int, int] = {}


def is_external(b: Any) -> bool:
    """Whether NumPy array `b` is (a view of) an array that code other than lazytorch's
    programs writes (`external`)."""
    if not external or type(b) is not np.ndarray:
        return False
    return id(b) in external or (b.base is not None and id(b.base) in external)


def read_on_host(n: Node) -> bool:
    """Compute `n` now with NumPy if it is a short chain of movements over a computed CPU
    buffer; returns whether it did (`n` then holds its value)."""
    value = chain_value(n)
    if value is None:
        return False
    realize_on_host(n, value)
    return True


def chain_value(n: Node) -> Any:
    """`n`'s value computed with NumPy (a view where the movements allow one) if `n` is a
    short chain of one-input movements over a computed CPU buffer, else None."""
    chain = []
    m = n
    while m.buffer is None:
        if m.op.category != "movement" or m.op.nin != 1 or len(chain) >= MAX_CHAIN:
            return None
        chain.append(m)
        m = m.inputs[0]
    value = m.buffer
    if type(value) is not np.ndarray:
        return None  # a device buffer, or a scalar input
    for node in reversed(chain):
        # recorded attrs are concrete ints (sizes become symbols only in compiled programs)
        value = node.op.ref(value, *node.attrs)
    return value


def realize_on_host(n: Node, value: Any) -> None:
    """Attach `value` (from `chain_value`) to `n`, contiguous (programs read their inputs as
    dense arrays)."""
    if not value.flags.c_contiguous or is_external(value):
        value = value.copy()  # (not ascontiguousarray: it turns a 0-d value into 1-d)
    if value.shape != n.shape or value.dtype != n.dtype.np:
        raise AssertionError(
            f"lazytorch: reading {n} on the host gave {value.dtype}{list(value.shape)}; "
            "this is a lazytorch bug"
        )
    n.realize(value, _BUFFER)
    metrics.increment("host_view_reads")
