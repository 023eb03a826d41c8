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

from lazytorch.ir.program import Program
from lazytorch.ir.verify import verify_graph
from lazytorch.tensor import Tensor

__all__ = ["program", "verify"]


def program(*tensors: Tensor) -> Program:
    """The canonical program ``materialize(*tensors)`` would run now (printable)."""
    from lazytorch.runtime.executor import build_program

    roots = [t._node for t in tensors if t._node.buffer is None]
    return build_program(roots)


def verify(*tensors: Tensor) -> int:
    """Check the pending graph below the tensors against the primitive rules; returns the
    number of nodes checked (raises IRVerificationError on a broken invariant)."""
    return verify_graph(t._node for t in tensors)
