"""lazytorch.sparse: torch.sparse's products and sums for sparse COO tensors.

The sparse tensor itself, and what each op does with one, is described in
`lazytorch.ops.sparse`.

>>> import lazytorch
>>> s = lazytorch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> lazytorch.sparse.mm(s, lazytorch.ones(2, 1)).tolist()
[[2.0], [3.0]]
>>> lazytorch.sparse.sum(s).item()
5.0
"""

from __future__ import annotations

from typing import Any

from lazytorch._legacy_types import SPARSE_LEGACY_TYPES
from lazytorch.ops import linalg as _linalg
from lazytorch.ops.sparse import SparseCOOTensor, _from_dense
from lazytorch.tensor import Tensor

__all__ = ["mm", "sum", *SPARSE_LEGACY_TYPES]

# torch.sparse.FloatTensor(indices, values, size) & co (lazytorch._legacy_types)
globals().update(SPARSE_LEGACY_TYPES)


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``mat1 @ mat2`` with a sparse `mat1` (torch.sparse.mm; ``reduce='sum'`` only)."""
    if reduce != "sum":
        raise NotImplementedError(
            f"lazytorch.sparse.mm(): reduce={reduce!r} is not supported, only 'sum'"
        )
    return _linalg.mm(mat1, mat2)


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """The sum of a sparse tensor's values over `dim` (all when None): a strided 0-d
    tensor for a full sum, else a sparse tensor (the nonzero sums), as torch's."""
    dense = input.to_dense() if isinstance(input, SparseCOOTensor) else input
    if dim is None:
        return dense.sum(dtype=dtype)
    out = dense.sum(dim, dtype=dtype)
    return _from_dense(out) if out.ndim else out


# A name torch has and lazytorch lacks: an AttributeError naming it and the nearest names.
from lazytorch._as_torch import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
