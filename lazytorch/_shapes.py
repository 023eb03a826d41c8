"""``mark_dynamic`` and ``mark_static``: saying up front which input sizes vary.

Without marks, lazytorch makes a size dynamic when it sees a second value for it at the same
cut (see `lazytorch.runtime.dynamic`). A mark says so before the first compile, or forbids
it, for the tensor it is put on: the mark belongs to that tensor's value, so mark each new
input (each batch) as it is made, as with ``torch._dynamo.mark_dynamic``. The marks are kept
by the runtime (`lazytorch.runtime.dynamic.marks`), which reads them when it compiles.
"""

from __future__ import annotations

from typing import Any

from lazytorch.runtime.dynamic import marks
from lazytorch.tensor import Tensor

__all__ = ["mark_dynamic", "mark_static"]


def _dim(t: Any, dim: int, fn: str) -> int:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}() takes a lazytorch Tensor, got {type(t).__name__}")
    nd = len(t.shape)
    if not -nd <= dim < nd:
        raise IndexError(f"{fn}(): dim {dim} out of range for a tensor of {nd} dims")
    return dim % nd


def mark_dynamic(t: Any, dim: int, min: int | None = None, max: int | None = None) -> None:
    """Compile programs that read `t` over a symbolic size for its dim `dim`.

    The first program compiled with `t` as an input already serves every size of that dim
    in ``[min, max]`` (``min`` defaults to 2: sizes 0 and 1 stay specialized, as in
    PyTorch); a size outside the range compiles another program, and
    ``LAZYTORCH_LOG=recompiles`` names the bound that failed.

    Raises ValueError for ``min < 2`` or ``max < min``, IndexError for a bad `dim`.

    >>> import numpy as np, lazytorch as lt
    >>> x = lt.from_numpy(np.ones((5, 3), np.float32))
    >>> lt.mark_dynamic(x, 0, max=64)
    >>> float((x * 2).sum())
    30.0
    """
    d = _dim(t, dim, "mark_dynamic")
    lo = 2 if min is None else int(min)
    if lo < 2:
        raise ValueError("mark_dynamic(): min must be at least 2 (sizes 0 and 1 stay specialized)")
    if max is not None and int(max) < lo:
        raise ValueError(f"mark_dynamic(): max {max} is below min {lo}")
    # A size outside the range is no error (a serving loop marks every batch): the program
    # for it is compiled for its own sizes, and the failed bound is logged as the reason.
    marks.setdefault(t._node, {})[d] = ("dynamic", lo, None if max is None else int(max))


def mark_static(t: Any, dim: int) -> None:
    """Never make `t`'s dim `dim` symbolic: a new size compiles a new program.

    >>> import numpy as np, lazytorch as lt
    >>> x = lt.from_numpy(np.ones((5, 3), np.float32))
    >>> lt.mark_static(x, 0)
    """
    d = _dim(t, dim, "mark_static")
    marks.setdefault(t._node, {})[d] = ("static",)
