"""Small cuts computed node by node with the primitives' NumPy references, no program built.

The DataLoader computes batches op by op (sync mode on the interpreter: a dataset's
per-sample code must not become part of the training step's program). Each op there is its
own cut, and a cut that goes through the executor captures the graph, builds a Program
(CSE, folding, DCE), keys it and looks it up: ~1 ms for a one-node cut. A collate that pads
each sample into a batch row (``padded[i, :len(t)] = t``) gives a cut per sample whose key
names the row and the length, so nearly every one missed the cache and built a program:
an epoch of a text dataset took 35x torch's time. Here such a cut is evaluated directly:
the same reference of each primitive the interpreter runs, in the same post-order, on the
same inputs (the executor's passes only remove duplicate and dead work and fold constants,
none of which changes a value), each result checked against the shape and dtype the IR
recorded, the roots then holding their values.

It applies while `enabled` (the DataLoader's batches), on the CPU, to cuts of at most
`MAX_NODES` nodes; a larger cut, or one on another device, goes through the executor.

>>> import lazytorch
>>> from lazytorch.runtime import eager
>>> with eager.host_eager():
...     y = lazytorch.arange(3) * 2
>>> y._node.buffer is not None, y.tolist()
(True, [0, 2, 4])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lazytorch._config import backend, sync_mode
from lazytorch.ir._lazynp import np
from lazytorch.ir.device import CPU
from lazytorch.ir.node import Node
from lazytorch.ir.primitives import get, reference
from lazytorch.ir.program import capture
from lazytorch.runtime.interpreter import _concrete

__all__ = ["MAX_NODES", "enabled", "host_eager", "run"]

MAX_NODES = 64
enabled = False
_BUFFER = get("buffer")


@contextlib.contextmanager
def host_eager() -> Iterator[None]:
    """Inside: sync mode on the interpreter, its small cuts computed node by node."""
    global enabled
    prev = enabled
    enabled = True
    try:
        with sync_mode(), backend("interpreter"):
            yield
    finally:
        enabled = prev


def run(roots: list[Node]) -> bool:
    """Compute `roots` now, node by node; False (nothing done) when the cut is not one for
    this path (another device, or more than `MAX_NODES` nodes)."""
    if any(r.device is not CPU for r in roots):
        return False
    cap = capture(roots)
    if len(cap.order) > MAX_NODES or any(p.device is not CPU for p in cap.params):
        return False
    values: dict[int, Any] = {}
    try:
        with np.errstate(all="ignore"):  # inf/NaN as in torch, silently (as the interpreter)
            for p in cap.params:
                values[id(p)] = np.asarray(p.buffer, dtype=p.dtype.np)
            for n in cap.order:
                ref = reference(n.op, [i.dtype for i in n.inputs], n.dtype)
                args = [values[id(i)] for i in n.inputs]
                kwargs = {k: _concrete(v) for k, v in zip(n.op.attr_names, n.attrs)}
                out = np.asarray(ref(*args, **kwargs) if kwargs else ref(*args))
                if out.dtype != n.dtype.np or out.shape != _concrete(tuple(n.shape)):
                    return False  # the executor's interpreter reports it, with the line
                values[id(n)] = out
    except Exception:  # an op that fails (an index out of range): reported by the executor
        return False
    for r in roots:
        r.realize(values[id(r)], _BUFFER)
    return True
