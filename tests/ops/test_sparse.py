"""Sparse COO tensors against torch's: construction, structure, products and gradients.

The contract is in `lazytorch.ops.sparse`'s docstring: every op is right (computed on the
dense value where there is no sparse rule), products read the COO structure, and
structure-preserving ops return sparse tensors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from lazytorch.ops.sparse import SparseCOOTensor

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

# (indices, values, size): duplicates, an empty row, an unsorted order
COO = ([[1, 0, 1, 2, 1], [2, 1, 0, 2, 2]], [1.5, -2.0, 3.0, 4.0, 0.5], (4, 3))


def both(indices, values, size, dtype=("float32",)):
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size)
    s = lt.sparse_coo_tensor(lt.tensor(indices), lt.tensor(values), size)
    return t, s


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(
        np.asarray(b.detach().numpy()), a.detach().numpy(), rtol=tol, atol=tol
    )


def test_construction_structure_and_dense_value():
    t, s = both(*COO)
    assert isinstance(s, lt.Tensor) and isinstance(s, SparseCOOTensor)
    assert s.layout == lt.sparse_coo and repr(s.layout) == "torch.sparse_coo"
    assert s.is_sparse and not lt.ones(1).is_sparse
    assert tuple(s.shape) == tuple(t.shape) and s.dtype == lt.float32
    assert (s._nnz(), s.sparse_dim(), s.dense_dim()) == (t._nnz(), t.sparse_dim(), t.dense_dim())
    assert s.is_coalesced() == t.is_coalesced() is False
    close(t.to_dense(), s.to_dense())  # duplicates add
    close(t._values(), s._values())
    assert s._indices().tolist() == t._indices().tolist()


def test_coalesce_matches_torch():
    t, s = both(*COO)
    tc, sc = t.coalesce(), s.coalesce()
    assert sc.is_coalesced()
    assert sc.indices().tolist() == tc.indices().tolist()
    close(tc.values(), sc.values())
    assert sc.coalesce() is sc


def test_indices_of_an_uncoalesced_tensor_is_torchs_error():
    _, s = both(*COO)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.values()


def test_size_inferred_and_dtype_given():
    t = torch.sparse_coo_tensor(torch.tensor([[0, 3]]), torch.tensor([1, 2]), dtype=torch.float64)
    s = lt.sparse_coo_tensor(lt.tensor([[0, 3]]), lt.tensor([1, 2]), dtype=lt.float64)
    assert tuple(s.shape) == tuple(t.shape) == (4,)
    assert s.dtype == lt.float64
    close(t.to_dense(), s.to_dense())


def test_numpy_int32_indices_and_int64_dtype_as_the_gcn_script():
    edges = np.array([[0, 1], [1, 2], [2, 0], [1, 2]], dtype=np.int32)
    t = torch.sparse_coo_tensor(edges.T, torch.ones(4), (3, 3), dtype=torch.int64)
    s = lt.sparse_coo_tensor(edges.T, lt.ones(4), (3, 3), dtype=lt.int64)
    assert s.dtype == lt.int64
    assert s.to_dense().tolist() == t.to_dense().tolist()
    assert (lt.eye(3) + s).tolist() == (torch.eye(3) + t).tolist()  # dense + sparse: dense


@pytest.mark.parametrize(
    "indices, values, size, message",
    [
        ([[0, 1]], [1.0], (2,), "same nnz"),
        ([[0, 5]], [1.0, 2.0], (2,), "size is inconsistent"),
        ([[0, -1]], [1.0, 2.0], (2,), "negative"),
        ([[0, 1]], [1.0, 2.0], (2, 2), "number of dimensions"),
    ],
)
def test_bad_construction_raises_like_torch(indices, values, size, message):
    # (lazytorch always checks the indices; torch does when asked to)
    with pytest.raises(RuntimeError):
        torch.sparse_coo_tensor(
            torch.tensor(indices), torch.tensor(values), size, check_invariants=True
        )
    with pytest.raises(RuntimeError, match=message):
        lt.sparse_coo_tensor(lt.tensor(indices), lt.tensor(values), size)


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_of_a_dense_tensor(sparse_dim):
    x = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, -3.0]], np.float32)
    args = () if sparse_dim is None else (sparse_dim,)
    t, s = torch.tensor(x).to_sparse(*args), lt.tensor(x).to_sparse(*args)
    assert s.sparse_dim() == t.sparse_dim()
    assert s._indices().tolist() == t._indices().tolist()
    close(t._values(), s._values())
    close(t.to_dense(), s.to_dense())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_times_dense_and_its_gradients(dtype):
    tdt, ldt = getattr(torch, dtype), getattr(lt, dtype)
    rng = np.random.default_rng(1)
    d = rng.normal(size=(3, 5))
    vals = np.array(COO[1])
    tv = torch.tensor(vals, dtype=tdt, requires_grad=True)
    lv = lt.tensor(vals, dtype=ldt, requires_grad=True)
    td = torch.tensor(d, dtype=tdt, requires_grad=True)
    ld = lt.tensor(d, dtype=ldt, requires_grad=True)
    t = torch.sparse_coo_tensor(torch.tensor(COO[0]), tv, COO[2])
    s = lt.sparse_coo_tensor(lt.tensor(COO[0]), lv, COO[2])
    w = rng.normal(size=(4, 5))
    (torch.sparse.mm(t, td) * torch.tensor(w, dtype=tdt)).sum().backward()
    out = lt.sparse.mm(s, ld)
    (out * lt.tensor(w, dtype=ldt)).sum().backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    close(torch.sparse.mm(t, td), out, tol)
    close(td.grad, ld.grad, tol)
    close(tv.grad, lv.grad, tol)


def test_product_spellings_agree():
    t, s = both(*COO)
    d = np.arange(15, dtype=np.float32).reshape(3, 5)
    td, ld = torch.tensor(d), lt.tensor(d)
    for fn in (
        lambda lib, a, b: a @ b,
        lambda lib, a, b: lib.mm(a, b),
        lambda lib, a, b: lib.matmul(a, b),
        lambda lib, a, b: lib.spmm(a, b),
        lambda lib, a, b: a.mm(b),
    ):
        close(fn(torch, t, td), fn(lt, s, ld))
    v = np.array([1.0, -2.0, 0.5], np.float32)
    close(t @ torch.tensor(v), s @ lt.tensor(v))  # sparse @ vector
    e = np.arange(8, dtype=np.float32).reshape(2, 4)
    close(torch.tensor(e) @ t, lt.tensor(e) @ s)  # dense @ sparse
    close(torch.tensor(e[0]) @ t, lt.tensor(e[0]) @ s)


def test_a_product_reads_the_structure_not_the_dense_matrix():
    """sparse @ dense gathers and adds: the dense value (a scatter into a zeros matrix of
    the sparse shape) is never part of the product's program."""
    n = 1000
    idx = np.stack([np.arange(n), (np.arange(n) * 7) % n])
    s = lt.sparse_coo_tensor(idx, lt.ones(n), (n, n))
    out = s @ lt.ones(n, 2)
    text = str(lt.debug.program(out))
    assert f"[{n}, {n}]" not in text, text
    assert out.sum().item() == 2 * n


def test_mismatched_product_raises_like_torch():
    t, s = both(*COO)
    with pytest.raises(RuntimeError):
        torch.sparse.mm(t, torch.ones(4, 2))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        lt.sparse.mm(s, lt.ones(4, 2))
    with pytest.raises(RuntimeError):
        torch.sparse.mm(t, torch.ones(3, 2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        lt.sparse.mm(s, lt.ones(3, 2, dtype=lt.float64))


def test_structure_preserving_ops_return_sparse_tensors():
    t, s = both(*COO)
    for fn in (
        lambda x: x.t(),
        lambda x: x.transpose(0, 1),
        lambda x: x * 2,
        lambda x: 2 * x,
        lambda x: x / 4,
        lambda x: -x,
        lambda x: x.double(),
        lambda x: x.to(dtype=x.dtype),
        lambda x: x.detach(),
        lambda x: x.clone(),
        lambda x: x.coalesce(),
    ):
        a, b = fn(t), fn(s)
        assert b.layout == lt.sparse_coo, fn
        assert a.layout == torch.sparse_coo
        close(a.to_dense(), b.to_dense())


def test_ops_without_a_sparse_rule_compute_on_the_dense_value():
    t, s = both(*COO)
    td = t.to_dense()
    close(td.exp(), s.exp())
    close(td.sum(1), s.sum(1))
    close(td + 1, s + 1)
    close(td[1], s[1])
    close(torch.sparse.sum(t, 1).to_dense(), lt.sparse.sum(s, 1).to_dense())
    close(torch.sparse.sum(t), lt.sparse.sum(s))


def test_an_in_place_op_rebuilds_the_structure():
    t, s = both(*COO)
    t = t.coalesce()
    s = s.coalesce()
    t.mul_(3)
    s.mul_(3)
    assert s.is_sparse
    close(t.to_dense(), s.to_dense())
    t, s = t.coalesce(), s.coalesce()  # (torch's mul_ leaves it marked uncoalesced)
    close(t.values(), s.values())
    assert s.indices().tolist() == t.indices().tolist()


def test_repr_names_the_structure():
    _, s = both([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    text = repr(s)
    assert text.startswith("tensor(indices=tensor([[0, 1],")
    assert "values=tensor([1., 2.])" in text
    assert text.endswith("size=(2, 2), nnz=2, layout=torch.sparse_coo)")
    assert str(s) == text


def test_strided_layout_and_to_dense_of_a_dense_tensor():
    x = lt.ones(2)
    assert x.layout == lt.strided and repr(lt.strided) == "torch.strided"
    assert x.to_dense() is x
    assert x.to_dense(lt.float64).dtype == lt.float64


@settings(max_examples=30, deadline=None)
@given(
    m=st.integers(1, 6),
    k=st.integers(1, 6),
    n=st.integers(1, 4),
    nnz=st.integers(0, 12),
    seed=st.integers(0, 2**16),
)
def test_random_sparse_products_match_torch(m, k, n, nnz, seed):
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)])
    vals = rng.normal(size=nnz)
    d = rng.normal(size=(k, n))
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (m, k))
    s = lt.sparse_coo_tensor(lt.tensor(idx), lt.tensor(vals), (m, k))
    close(torch.sparse.mm(t, torch.tensor(d)), s @ lt.tensor(d), 1e-12)
    close(t.coalesce().values(), s.coalesce().values(), 1e-12)
    assert s.coalesce().indices().tolist() == t.coalesce().indices().tolist()


# -- torch.sparse's legacy types ---------------------------------------------------------------
def test_legacy_sparse_types_construct_and_check_as_torch():
    # pygcn's sparse_mx_to_torch_sparse_tensor: torch.sparse.FloatTensor(indices, values, shape)
    idx = [[0, 1, 1], [2, 0, 2]]
    vals = np.array([3.0, 4.0, 5.0], np.float32)
    for args in ((), (2, 3), ("Size", [2, 3])):
        s = lt.sparse.FloatTensor(*(lt.Size(args[1]),) if args[:1] == ("Size",) else args)
        r = torch.sparse.FloatTensor(*(torch.Size(args[1]),) if args[:1] == ("Size",) else args)
        assert tuple(s.shape) == tuple(r.shape) and s.is_sparse and s._nnz() == 0
    with pytest.raises(TypeError, match="only accepts sizes"):
        torch.sparse.FloatTensor((2, 3))
    with pytest.raises(TypeError, match="only accepts sizes"):
        lt.sparse.FloatTensor((2, 3))
    t_idx, l_idx = torch.tensor(idx), lt.tensor(idx)
    for name, values in (
        ("FloatTensor", vals),
        ("FloatTensor", vals.astype(np.float64)),
        ("LongTensor", vals.astype(np.int64)),
        ("DoubleTensor", vals),
    ):
        ours = getattr(lt.sparse, name)(l_idx, lt.tensor(values), lt.Size([2, 3]))
        theirs = getattr(torch.sparse, name)(t_idx, torch.tensor(values), torch.Size([2, 3]))
        assert isinstance(ours, SparseCOOTensor) and ours.dtype.name == str(theirs.dtype)[6:]
        assert ours.to_dense().tolist() == theirs.to_dense().tolist()
        assert isinstance(ours, getattr(lt.sparse, name)) == isinstance(
            theirs, getattr(torch.sparse, name)
        )
        inferred = getattr(lt.sparse, name)(l_idx, lt.tensor(values))  # size from indices
        assert tuple(inferred.shape) == tuple(
            getattr(torch.sparse, name)(t_idx, torch.tensor(values)).shape
        )
    s = lt.sparse.FloatTensor(l_idx, lt.tensor(vals), lt.Size([2, 3]))
    r = torch.sparse.FloatTensor(t_idx, torch.tensor(vals), torch.Size([2, 3]))
    assert isinstance(s, lt.sparse.FloatTensor) and not isinstance(s, lt.FloatTensor)
    assert isinstance(r, torch.sparse.FloatTensor) and not isinstance(r, torch.FloatTensor)
    assert not isinstance(lt.zeros(2), lt.sparse.FloatTensor)
    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert lt.spmm(s, lt.tensor(w)).tolist() == torch.spmm(r, torch.tensor(w)).tolist()
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        torch.sparse.FloatTensor(t_idx.int(), torch.tensor(vals))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        lt.sparse.FloatTensor(l_idx.int(), lt.tensor(vals))
    assert repr(lt.sparse.FloatTensor) == repr(torch.sparse.FloatTensor)
