"""Sparse COO tensors: torch's ``sparse_coo`` layout, for the graph scripts that use it.

A sparse tensor here is a `Tensor` whose node is its *dense* value (a scatter of the values
into zeros, recorded lazily and computed only if something reads it), and which also keeps
its COO structure: the indices as host data (a ``(sparse_dim, nnz)`` int64 array; indices
are data the user gave or ``to_sparse`` found, so they are known when the tensor is made, as
torch computes them eagerly) and the values as a lazy tensor.

The contract:

* **Every op is right.** An op lazytorch has no sparse rule for computes on the dense value,
  so it returns what torch returns, as a strided tensor (torch often returns a sparse one,
  or refuses: ``view`` of a sparse tensor). Nothing reads the COO structure except the
  rules below.
* **Products use the structure.** ``sparse @ dense`` (``mm``, ``matmul``, ``spmm``,
  ``sparse.mm``) gathers the rows of the dense operand that each stored value multiplies
  and adds them into the output rows (``index_add``): O(nnz * n), never the dense matrix.
  ``dense @ sparse`` is its transpose. Gradients flow to the dense operand and the values.
* **Structure-preserving ops return sparse tensors**, as torch's do: ``t``/``transpose``,
  ``coalesce``, ``to``/``float``/``double``/... conversions, ``detach``, ``clone``,
  ``requires_grad_``, negation and products or quotients with a Python number.
* **An in-place op** on a sparse tensor (``s.mul_(2)``) updates its dense value; the COO
  structure, now out of date, is rebuilt from the dense value when next read (its
  nonzeros: torch would keep explicit zeros).

>>> import lazytorch
>>> s = lazytorch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
>>> s.layout, s.is_sparse, s._nnz()
(torch.sparse_coo, True, 3)
>>> (s @ lazytorch.ones(3, 2)).tolist()
[[3.0, 3.0], [9.0, 9.0]]
>>> s.to_dense().tolist()
[[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]
"""

from __future__ import annotations

from typing import Any

from lazytorch._dtype_info import layout, sparse_coo
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir._lazynp import np
from lazytorch.ops import _core
from lazytorch.ops import linalg as L
from lazytorch.ops.creation import tensor as _tensor
from lazytorch.ops.creation import zeros
from lazytorch.tensor import Tensor


class SparseCOOTensor(Tensor):
    """A sparse COO tensor (see the module docstring); made by `sparse_coo_tensor` and
    ``Tensor.to_sparse``."""

    __slots__ = ("_sp_coalesced", "_sp_dense", "_sp_indices", "_sp_values")

    _sp_dense: Any  # the node the structure describes; another node: an in-place op ran
    _sp_indices: Any  # np.ndarray (sparse_dim, nnz) int64
    _sp_values: Tensor  # (nnz, *dense dims)
    _sp_coalesced: bool

    is_sparse = property(lambda self: True)  # type: ignore[assignment]

    @property
    def layout(self) -> layout:  # type: ignore[override]
        return sparse_coo

    # -- the structure ----------------------------------------------------------------------
    def _structure(self) -> tuple[Any, Tensor]:
        """(indices, values), rebuilt from the dense value if an in-place op changed it."""
        if self._node is not self._sp_dense:
            fresh = _from_dense(_core.wrap(self._node), self.sparse_dim())
            self._sp_indices, self._sp_values = fresh._sp_indices, fresh._sp_values
            self._sp_coalesced, self._sp_dense = True, self._node
        return self._sp_indices, self._sp_values

    def _coalesced_only(self, what: str) -> None:
        if not self.is_coalesced():
            raise op_error(
                RuntimeError,
                what,
                f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first",
            )

    def indices(self) -> Tensor:
        """The ``(sparse_dim, nnz)`` int64 indices (torch asks for a coalesced tensor)."""
        self._coalesced_only("indices")
        return self._indices()

    def values(self) -> Tensor:
        """The ``(nnz, *dense dims)`` values (torch asks for a coalesced tensor)."""
        self._coalesced_only("values")
        return self._values()

    def _indices(self) -> Tensor:
        return _tensor(self._structure()[0])

    def _values(self) -> Tensor:
        return self._structure()[1]

    def _nnz(self) -> int:
        return int(self._structure()[0].shape[1])

    def sparse_dim(self) -> int:
        return int(self._sp_indices.shape[0])

    def dense_dim(self) -> int:
        return self.ndim - self.sparse_dim()

    def is_coalesced(self) -> bool:
        self._structure()
        return self._sp_coalesced

    def coalesce(self) -> SparseCOOTensor:
        """Indices sorted and unique, the values of equal indices summed."""
        idx, vals = self._structure()
        if self._sp_coalesced:
            return self
        return _coalesced(idx, vals, tuple(self.shape))

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        out = _core.wrap(self._node)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseCOOTensor:
        return self

    # -- structure-preserving ops -----------------------------------------------------------
    def _with_values(self, values: Tensor) -> SparseCOOTensor:
        idx, _ = self._structure()
        return _make(idx, values, tuple(self.shape), self._sp_coalesced)

    def to(self, *args: Any, **kwargs: Any) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].to(*args, **kwargs))

    def float(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].float())

    def double(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].double())

    def long(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].long())

    def int(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].int())

    def cpu(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].cpu())

    def detach(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].detach())

    def clone(self, *, memory_format: Any = None) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(self._structure()[1].clone())

    def requires_grad_(self, requires_grad: bool = True) -> SparseCOOTensor:  # type: ignore[override]
        idx, vals = self._structure()
        vals.requires_grad_(requires_grad)
        self._node = self._sp_dense = _dense_node(idx, vals, tuple(self.shape))
        return self

    def t(self) -> Any:  # type: ignore[override]
        if self.ndim < 2:
            return self
        return self.transpose(0, 1)

    @property
    def T(self) -> Any:  # type: ignore[override]
        return self.t()

    def transpose(self, dim0: int, dim1: int) -> Any:  # type: ignore[override]
        idx, vals = self._structure()
        sd, nd = self.sparse_dim(), self.ndim
        d0, d1 = dim0 % nd if nd else 0, dim1 % nd if nd else 0
        if d0 >= sd or d1 >= sd:
            return _core.wrap(self._node).transpose(dim0, dim1)  # a dense dim: densely
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        shape = list(self.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return _make(idx[order], vals, tuple(shape), False)

    def __neg__(self) -> SparseCOOTensor:  # type: ignore[override]
        return self._with_values(-self._structure()[1])

    def __mul__(self, other: Any) -> Any:  # type: ignore[override]
        if isinstance(other, (int, float, bool)):
            return self._with_values(self._structure()[1] * other)
        return _core.wrap(self._node) * other

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:  # type: ignore[override]
        if isinstance(other, (int, float, bool)):
            return self._with_values(self._structure()[1] / other)
        return _core.wrap(self._node) / other

    def __repr__(self) -> str:
        idx, vals = self._structure()
        pad = " " * len("tensor(indices=")
        ind = repr(_tensor(idx)).replace("\n", "\n" + pad)
        val = repr(vals).replace("\n", "\n" + " " * len("       values="))
        return (
            f"tensor(indices={ind},\n       values={val},\n       size={tuple(self.shape)}, "
            f"nnz={idx.shape[1]}, layout=torch.sparse_coo)"
        )

    __str__ = __repr__


# -- construction -------------------------------------------------------------------------------
def _dense_node(idx: Any, values: Tensor, shape: tuple[int, ...]) -> Any:
    """The dense value of (idx, values): zeros with the values added at their indices
    (duplicates add, as torch's uncoalesced tensors mean)."""
    base = zeros(shape, dtype=values.dtype, device=values.device)
    if idx.shape[1] == 0:
        return base._node
    index = tuple(_tensor(row) for row in idx)
    return base.index_put(index, values, accumulate=True)._node


def _make(idx: Any, values: Tensor, shape: tuple[int, ...], coalesced: bool) -> SparseCOOTensor:
    node = _dense_node(idx, values, shape)
    s = _core._new_tensor(SparseCOOTensor)
    s._node = s._sp_dense = node
    s._view = s._views = None
    s._sp_indices, s._sp_values, s._sp_coalesced = idx, values, coalesced
    _core._live.append(_core._weakref(s))
    return s


def _coalesced(idx: Any, values: Tensor, shape: tuple[int, ...]) -> SparseCOOTensor:
    """The coalesced form: unique sorted indices, the values of each summed (index_add)."""
    sd = idx.shape[0]
    if idx.shape[1] == 0:
        return _make(idx, values, shape, True)
    linear = np.ravel_multi_index(tuple(idx), shape[:sd])
    uniq, inverse = np.unique(linear, return_inverse=True)
    new_idx = np.stack(np.unravel_index(uniq, shape[:sd])).astype(np.int64).reshape(sd, -1)
    summed = zeros((len(uniq), *values.shape[1:]), dtype=values.dtype, device=values.device)
    summed = summed.index_add(0, _tensor(inverse.astype(np.int64)), values)
    return _make(new_idx, summed, shape, True)


def _from_dense(x: Tensor, sparse_dim: int | None = None) -> SparseCOOTensor:
    """The nonzero entries of `x` (materializes it: which entries are nonzero is data)."""
    sd = x.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= x.ndim:
        raise op_error(RuntimeError, "to_sparse", f"sparse_dim must be in [0, {x.ndim}], got {sd}")
    host = np.asarray(x._values())
    if x.ndim == 0:
        return _make(np.zeros((0, 1), np.int64), x.reshape(1), (), True)
    flat = host.reshape((*host.shape[:sd], -1)) if sd < x.ndim else host
    mask = flat != 0 if sd == x.ndim else (flat != 0).any(axis=-1)
    idx = np.stack(np.nonzero(mask)).astype(np.int64).reshape(sd, -1)
    values = x[tuple(_tensor(row) for row in idx)] if idx.shape[1] else x.reshape(-1)[:0]
    s = _make(idx, values, tuple(x.shape), True)
    s._node = s._sp_dense = x._node  # the dense value is x itself (keeps its autograd)
    return s


@public(torch=False, method=True)
def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None, blocksize: Any = None, dense_dim: Any = None) -> SparseCOOTensor:  # fmt: skip
    """This tensor in the sparse COO layout: its nonzero entries (materializes it).

    >>> import lazytorch
    >>> s = lazytorch.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
    >>> s._indices().tolist(), s._values().tolist()
    ([[0], [1]], [2.0])
    """
    if layout not in (None, sparse_coo) or blocksize is not None or dense_dim is not None:
        raise op_error(
            NotImplementedError,
            "to_sparse",
            f"lazytorch has only the sparse_coo layout, not {layout!r}",
        )
    return _from_dense(self, sparse_dim)


@public(torch=False, method=True)
def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """The strided tensor itself (a sparse tensor overrides this).

    >>> import lazytorch
    >>> x = lazytorch.ones(2)
    >>> x.to_dense() is x
    True
    """
    return self if dtype is None else self.to(dtype)


@public()
def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    check_invariants: Any = None,
    is_coalesced: Any = None,
) -> SparseCOOTensor:
    """A sparse COO tensor of `values` at `indices` (duplicates add), as torch's.

    >>> import lazytorch
    >>> s = lazytorch.sparse_coo_tensor([[0, 0], [1, 1]], [1.0, 2.0], (2, 2))
    >>> s.is_coalesced(), s.to_dense().tolist()
    (False, [[0.0, 3.0], [0.0, 0.0]])
    >>> s.coalesce()._values().tolist()
    [3.0]
    """
    op = "sparse_coo_tensor"
    idx = indices._values() if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu" and idx.size:
        raise op_error(RuntimeError, op, f"indices must be an int64 tensor, not {idx.dtype}")
    idx = idx.astype(np.int64)
    if idx.ndim == 1 and idx.size == 0:
        idx = idx.reshape(1, 0)
    if idx.ndim != 2:
        raise op_error(
            RuntimeError, op, f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}"
        )
    vals = values if isinstance(values, Tensor) else _tensor(values, dtype=dtype)
    if dtype is not None or device is not None:
        vals = vals.to(device=device, dtype=dtype)
    sd, nnz = idx.shape
    if vals.ndim == 0 or vals.shape[0] != nnz:
        raise op_error(
            RuntimeError,
            op,
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
            f"nnz from values: {vals.shape[0] if vals.ndim else 0}",
        )
    if nnz and (idx < 0).any():
        raise op_error(RuntimeError, op, f"found negative index {int(idx.min())}")
    if size is None:
        lead = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sd
        shape = lead + tuple(vals.shape[1:])
    else:
        shape = tuple(int(d) for d in size)
        if len(shape) != sd + vals.ndim - 1:
            raise op_error(
                RuntimeError,
                op,
                f"number of dimensions must be sparse_dim ({sd}) + dense_dim "
                f"({vals.ndim - 1}), but got {len(shape)}",
            )
        for d in range(sd):
            if nnz and idx[d].max() >= shape[d]:
                raise op_error(
                    RuntimeError,
                    op,
                    f"size is inconsistent with indices: for dim {d}, size is {shape[d]} "
                    f"but found index {int(idx[d].max())}",
                )
        if tuple(vals.shape[1:]) != shape[sd:]:
            raise op_error(
                RuntimeError,
                op,
                f"values has incorrect size, expected {[nnz, *shape[sd:]]}, got {list(vals.shape)}",
            )
    if requires_grad:
        vals = vals.detach().requires_grad_(True)
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    return _make(idx, vals, shape, coalesced)


# -- products ---------------------------------------------------------------------------------
def sparse_dense_mm(a: SparseCOOTensor, b: Tensor, op: str) -> Tensor:
    """``a @ b`` for a 2-d sparse `a` (sparse_dim 2) and a 1-d or 2-d dense `b`: each stored
    value times the row of `b` it meets, added into its output row."""
    if a.ndim != 2 or a.sparse_dim() != 2:
        raise op_error(
            NotImplementedError,
            op,
            f"lazytorch multiplies 2-d sparse matrices only, got a {a.ndim}-d sparse tensor "
            f"with {a.sparse_dim()} sparse dims",
        )
    if isinstance(b, SparseCOOTensor):
        return _from_dense(sparse_dense_mm(a, b.to_dense(), op))
    vector = b.ndim == 1
    bm = b.unsqueeze(1) if vector else b
    if bm.ndim != 2:
        return L.matmul(a.to_dense(), b)  # batched: torch broadcasts; densely
    if a.shape[1] != bm.shape[0]:
        raise op_error(
            RuntimeError,
            op,
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{bm.shape[0]}x{bm.shape[1]})",
        )
    if a.dtype != b.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"expected mat1 and mat2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}",
        )
    idx, vals = a._structure()
    out = zeros((a.shape[0], bm.shape[1]), dtype=b.dtype, device=b.device)
    if idx.shape[1]:
        rows, cols = _tensor(idx[0]), _tensor(idx[1])
        out = out.index_add(0, rows, vals.unsqueeze(1) * bm.index_select(0, cols))
    return out.squeeze(1) if vector else out


def matmul_sparse(a: Any, b: Any, op: str) -> Any:
    """`L.matmul`'s route for a sparse operand (see `lazytorch.ops.linalg.SPARSE`)."""
    if isinstance(a, SparseCOOTensor):
        return sparse_dense_mm(a, b, op)
    if b.ndim == 2 and a.ndim in (1, 2):  # dense @ sparse = (sparse.T @ dense.T).T
        at = a.unsqueeze(0) if a.ndim == 1 else a
        out = sparse_dense_mm(b.t(), at.t(), op).t()
        return out.squeeze(0) if a.ndim == 1 else out
    return L.matmul(a, b.to_dense())


L.SPARSE.update(type=SparseCOOTensor, matmul=matmul_sparse)


@public()
def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` for a sparse (or strided) `input` and a strided `mat2`.

    >>> import lazytorch
    >>> s = lazytorch.eye(2).to_sparse()
    >>> lazytorch.spmm(s, lazytorch.ones(2, 3)).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    return L.mm(input, mat2)
