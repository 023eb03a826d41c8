"""Looking at what a materialization would run, without running it.

>>> import lazytorch
>>> x = lazytorch.tensor([1.0, 2.0, 3.0])
>>> print(lazytorch.debug.program(x * 2 + 1))       # doctest: +ELLIPSIS
program (3 inputs, 2 nodes, 1 outputs)
  %0 : f32[3] = input 0 (buffer)
  %1 : f32[]  = input 1 (scalar)
  %2 : f32[]  = input 2 (scalar)
  %3 : f32[3] = mul %0, %1  # ...
  %4 : f32[3] = add %3, %2  # ...
  return %4
"""

from __future__ import annotations

from typing import Any

from lazytorch._config import are_deterministic_algorithms_enabled
from lazytorch.autograd.saved import saved_report
from lazytorch.ir.program import Program, canonicalize, capture
from lazytorch.ir.verify import verify_graph
from lazytorch.tensor import Tensor

__all__ = ["program", "schedule", "source", "verify"]


def program(*tensors: Tensor) -> Program:
    """The canonical program ``materialize(*tensors)`` would run now (printable)."""
    from lazytorch.runtime.executor import build_program  # lazy: import time (first materialize)

    roots = [t._node for t in tensors if t._node.buffer is None]
    return build_program(roots)


def schedule(*tensors: Tensor) -> Any:
    """The CPU schedule (kernels, extern calls, memory plan) for ``materialize(*tensors)``.

    >>> import lazytorch
    >>> x = lazytorch.ones(4, 8)
    >>> print(lazytorch.debug.schedule((x * 2).exp().sum(1)).kernels[0].describe())
    k0 [reduction 4 | 8]: fused[mul, exp, reduce_sum]
    """
    from lazytorch.scheduler import schedule as _schedule  # lazy: import time (compiling only)

    cap = capture([t._node for t in tensors if t._node.buffer is None])
    prog = canonicalize(Program.from_capture(cap))
    sched = _schedule(prog)
    note = saved_report(prog, cap, sched)
    if note:
        sched.notes.append(note)
    return sched


def source(*tensors: Tensor, deterministic: bool | None = None) -> str:
    """The C++ the ``cpp`` backend would compile for ``materialize(*tensors)``.

    >>> import lazytorch
    >>> print(lazytorch.debug.source(lazytorch.ones(3) + 1).splitlines()[0])
    // lazytorch program
    """
    from lazytorch.codegen.cpp import generate  # lazy: import time (compiling only)

    if deterministic is None:
        deterministic = are_deterministic_algorithms_enabled()
    return generate(schedule(*tensors), deterministic=deterministic)


def verify(*tensors: Tensor) -> int:
    """Check the pending graph below the tensors against the primitive rules; returns the
    number of nodes checked (raises IRVerificationError on a broken invariant)."""
    return verify_graph(t._node for t in tensors)
