"""Linear algebra against torch: matmul (every rank combination), mm, bmm, mv, dot, outer,
addmm, baddbmm, tensordot, einsum, and the norms of ``linalg``.

Every value comparison goes through `check` (lazy and sync mode, IR verified, exception types
matched). Ops are written once as ``fn(t, *tensors)``; ``t.linalg`` is torch.linalg or
lazytorch.linalg.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, FLOATS, INTS, arr, check, check_grad, check_raises, randn

NAN, INF = float("nan"), float("inf")

HYPO = settings(
    max_examples=40,
    derandomize=True,  # the same examples every run: failures reproduce, CI does not flake
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# -- matmul: torch's rank rules ----------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),  # dot
    ((3,), (3, 4)),  # vector @ matrix
    ((2, 3), (3,)),  # matrix @ vector
    ((2, 3), (3, 4)),
    ((1, 3), (3, 1)),
    ((4,), (2, 4, 3)),  # 1-d @ batched
    ((2, 3, 4), (4,)),  # batched @ 1-d
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),  # batched @ matrix broadcasts the matrix
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),  # broadcast batch dims
    ((1, 3, 4), (6, 4, 2)),
    ((2, 1, 2, 3), (1, 3, 3, 2)),
    ((5,), (2, 3, 5, 2)),
    ((2, 3, 2, 5), (5,)),
    ((3, 0), (0, 4)),  # empty contraction: zeros
    ((0, 3), (3, 4)),
    ((2, 3), (3, 0)),
    ((0,), (0,)),
    ((0,), (0, 2)),
    ((2, 0, 3), (3, 4)),
    ((2, 3, 0), (0, 5)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_shapes(sa, sb):
    check(lambda t, a, b: t.matmul(a, b), randn(*sa), randn(*sb))
    check(lambda t, a, b: a @ b, randn(*sa), randn(*sb))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (3,))], ids=str)
def test_matmul_dtypes(dtype, sa, sb):
    # torch decides: ints and float16 multiply on the CPU, bool raises.
    check(lambda t, a, b: t.matmul(a, b), arr(*sa, dtype=dtype), arr(*sb, dtype=dtype))


def test_matmul_float64_and_float16_accuracy():
    check(lambda t, a, b: a @ b, randn(8, 64, dtype="float64"), randn(64, 5, dtype="float64"))
    a, b = randn(4, 256, dtype="float16"), randn(256, 3, dtype="float16")
    check(lambda t, a, b: a @ b, a, b, atol=0.1, rtol=1e-2)  # float16's spacing at ~20 is 0.016


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3,), (4,)),
        ((2, 3), (4, 5)),
        ((2, 3), (4,)),
        ((4,), (3, 5)),
        ((2, 3, 4), (2, 5, 6)),
        ((2, 3, 4), (3, 4, 5)),  # batch dims do not broadcast
        ((2, 3, 4), (5,)),
        ((5,), (2, 4, 3)),
    ],
    ids=str,
)
def test_matmul_shape_mismatch_raises(sa, sb):
    check(lambda t, a, b: a @ b, randn(*sa), randn(*sb))
    assert isinstance(check_raises(lambda t, a, b: a @ b, randn(*sa), randn(*sb)), RuntimeError)


def test_matmul_zero_dim_raises():
    check(lambda t, a, b: t.matmul(a, b), np.array(2.0, "float32"), randn(3))
    check(lambda t, a, b: t.matmul(a, b), randn(3), np.array(2.0, "float32"))


@pytest.mark.parametrize(
    "da,db", [("float32", "float64"), ("int64", "float32"), ("int32", "int64")]
)
def test_matmul_dtype_mismatch_raises(da, db):
    for sa, sb in [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,))]:
        check(lambda t, a, b: t.matmul(a, b), arr(*sa, dtype=da), arr(*sb, dtype=db))
    check(lambda t, a, b: t.mm(a, b), arr(2, 3, dtype=da), arr(3, 4, dtype=db))
    check(lambda t, a, b: t.bmm(a, b), arr(2, 2, 3, dtype=da), arr(2, 3, 4, dtype=db))


def test_matmul_non_contiguous():
    a, b = randn(4, 3), randn(5, 4)
    check(lambda t, a, b: a.T @ b.T, a, b)
    check(lambda t, a, b: a[::2] @ b[:3, 1::2], a, b)
    check(lambda t, a, b: a.expand(2, 4, 3).transpose(1, 2) @ b.T, a, b)
    check(lambda t, a, b: a[:, 0] @ b[:, ::-1].flip(1).T.T.T, a, b)


def test_matmul_nan_inf():
    a = np.array([[1.0, NAN], [INF, 0.0], [1.0, 2.0]], dtype="float32")
    check(lambda t, a, b: a @ b, a, randn(2, 3))


def test_rmatmul_and_method():
    check(lambda t, a, b: a.matmul(b), randn(2, 3), randn(3, 2))
    check(lambda t, a, b: a.__rmatmul__(b), randn(3, 2), randn(2, 3))


# -- mm, bmm, mv, dot, outer -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "float16", "float32", "float64", "bool"])
def test_mm_bmm_mv_dot(dtype):
    check(lambda t, a, b: t.mm(a, b), arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype))
    check(lambda t, a, b: a.mm(b), arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype))
    check(lambda t, a, b: t.bmm(a, b), arr(2, 2, 3, dtype=dtype), arr(2, 3, 4, dtype=dtype))
    check(lambda t, a, b: a.bmm(b), arr(3, 1, 3, dtype=dtype), arr(3, 3, 2, dtype=dtype))
    check(lambda t, a, b: t.mv(a, b), arr(2, 3, dtype=dtype), arr(3, dtype=dtype))
    check(lambda t, a, b: a.mv(b), arr(2, 3, dtype=dtype), arr(3, dtype=dtype))
    check(lambda t, a, b: t.dot(a, b), arr(5, dtype=dtype), arr(5, dtype=dtype))
    check(lambda t, a, b: a.dot(b), arr(5, dtype=dtype), arr(5, dtype=dtype))


def test_mm_bmm_mv_dot_empty():
    check(lambda t, a, b: t.mm(a, b), randn(3, 0), randn(0, 4))
    check(lambda t, a, b: t.bmm(a, b), randn(0, 3, 2), randn(0, 2, 4))
    check(lambda t, a, b: t.bmm(a, b), randn(2, 3, 0), randn(2, 0, 4))
    check(lambda t, a, b: t.mv(a, b), randn(3, 0), randn(0))
    check(lambda t, a, b: t.dot(a, b), randn(0), randn(0))


BAD_PRODUCTS = {
    "mm_1d": (lambda t, a, b: t.mm(a, b), (3,), (3, 4)),
    "mm_3d": (lambda t, a, b: t.mm(a, b), (2, 2, 3), (3, 4)),
    "mm_inner": (lambda t, a, b: t.mm(a, b), (2, 3), (4, 4)),
    "bmm_2d": (lambda t, a, b: t.bmm(a, b), (2, 3), (3, 4)),
    "bmm_batch": (lambda t, a, b: t.bmm(a, b), (2, 2, 3), (3, 3, 4)),
    "bmm_inner": (lambda t, a, b: t.bmm(a, b), (2, 2, 3), (2, 4, 4)),
    "bmm_no_broadcast": (lambda t, a, b: t.bmm(a, b), (1, 2, 3), (2, 3, 4)),
    "mv_vec_mat": (lambda t, a, b: t.mv(a, b), (3,), (3, 2)),
    "mv_inner": (lambda t, a, b: t.mv(a, b), (2, 3), (4,)),
    "mv_2d": (lambda t, a, b: t.mv(a, b), (2, 3), (3, 1)),
    "dot_2d": (lambda t, a, b: t.dot(a, b), (2, 3), (3,)),
    "dot_len": (lambda t, a, b: t.dot(a, b), (3,), (4,)),
    "outer_2d": (lambda t, a, b: t.outer(a, b), (2, 3), (3,)),
    "outer_0d": (lambda t, a, b: t.outer(a, b), (), (3,)),
}


@pytest.mark.parametrize("name", list(BAD_PRODUCTS))
def test_product_shape_errors(name):
    fn, sa, sb = BAD_PRODUCTS[name]
    check(fn, randn(*sa), randn(*sb))
    assert isinstance(check_raises(fn, randn(*sa), randn(*sb)), RuntimeError)


def test_dot_dtype_mismatch():
    check(lambda t, a, b: t.dot(a, b), randn(3), randn(3, dtype="float64"))
    check(lambda t, a, b: t.mv(a, b), randn(2, 3), randn(3, dtype="float64"))


@pytest.mark.parametrize("da,db", [("float32", "float32"), ("int64", "float32"), ("int8", "int64")])
def test_outer(da, db):
    check(lambda t, a, b: t.outer(a, b), arr(3, dtype=da), arr(4, dtype=db))
    check(lambda t, a, b: a.outer(b), arr(3, dtype=da), arr(4, dtype=db))
    check(lambda t, a, b: t.ger(a, b), arr(2, dtype=da), arr(5, dtype=db))
    check(lambda t, a, b: t.outer(a, b), arr(0, dtype=da), arr(4, dtype=db))


# -- addmm / baddbmm ----------------------------------------------------------------------------------
ALPHA_BETA = [(1, 1), (0.5, 2.0), (0, 1), (1, 0), (-1.5, 0.25), (0, 0)]


@pytest.mark.parametrize("beta,alpha", ALPHA_BETA, ids=str)
@pytest.mark.parametrize("bias", [(2, 4), (4,), (1, 4), (2, 1), ()], ids=str)
def test_addmm(bias, beta, alpha):
    inputs = randn(*bias), randn(2, 3), randn(3, 4)
    check(lambda t, c, a, b: t.addmm(c, a, b, beta=beta, alpha=alpha), *inputs)
    check(lambda t, c, a, b: c.addmm(a, b, beta=beta, alpha=alpha), *inputs)


@pytest.mark.parametrize("beta,alpha", ALPHA_BETA, ids=str)
@pytest.mark.parametrize("bias", [(2, 3, 4), (3, 4), (4,), (2, 1, 1)], ids=str)
def test_baddbmm(bias, beta, alpha):
    inputs = randn(*bias), randn(2, 3, 5), randn(2, 5, 4)
    check(lambda t, c, a, b: t.baddbmm(c, a, b, beta=beta, alpha=alpha), *inputs)
    check(lambda t, c, a, b: c.baddbmm(a, b, beta=beta, alpha=alpha), *inputs)


def test_addmm_beta_zero_ignores_nan_input():
    c = np.full((2, 4), NAN, dtype="float32")
    check(lambda t, c, a, b: t.addmm(c, a, b, beta=0), c, randn(2, 3), randn(3, 4))
    c3 = np.full((2, 3, 4), INF, dtype="float32")
    check(lambda t, c, a, b: t.baddbmm(c, a, b, beta=0), c3, randn(2, 3, 5), randn(2, 5, 4))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16", "float64"])
def test_addmm_dtypes(dtype):
    c, a, b = arr(2, 4, dtype=dtype), arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype)
    check(lambda t, c, a, b: t.addmm(c, a, b), c, a, b)
    check(lambda t, c, a, b: t.addmm(c, a, b, beta=2, alpha=3), c, a, b)
    c3, a3, b3 = arr(2, 2, 4, dtype=dtype), arr(2, 2, 3, dtype=dtype), arr(2, 3, 4, dtype=dtype)
    check(lambda t, c, a, b: t.baddbmm(c, a, b, beta=2, alpha=-1), c3, a3, b3)


def test_addmm_errors():
    # A bias that does not broadcast; a mismatched dtype; float alpha for integer tensors.
    check(lambda t, c, a, b: t.addmm(c, a, b), randn(3, 4), randn(2, 3), randn(3, 4))
    check(
        lambda t, c, a, b: t.addmm(c, a, b), randn(2, 4, dtype="float64"), randn(2, 3), randn(3, 4)
    )
    ints = arr(2, 4, dtype="int64"), arr(2, 3, dtype="int64"), arr(3, 4, dtype="int64")
    check(lambda t, c, a, b: t.addmm(c, a, b, alpha=0.5), *ints)
    check(lambda t, c, a, b: t.addmm(c, a, b), randn(2, 4), randn(2, 3), randn(4, 4))
    check(lambda t, c, a, b: t.baddbmm(c, a, b), randn(2, 3, 4), randn(2, 3, 5), randn(3, 5, 4))


# -- tensordot ----------------------------------------------------------------------------------------
TENSORDOT = [
    ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4), (4, 5), 1),
    ((3, 4), (5, 6), 0),
    ((2, 3), (2, 3), 2),
    ((3, 4, 5), (5, 4, 2), ([1, 2], [1, 0])),
    ((3, 4, 5), (5, 3), ([0, 2], [1, 0])),
    ((3, 4), (4, 3), ([0], [1])),
    ((3, 4), (2, 4), ([1], [1])),
    ((2, 3, 4), (4, 3, 2), ((-1, -2), (0, 1))),
    ((3, 0), (0, 2), 1),
]


@pytest.mark.parametrize("sa,sb,dims", TENSORDOT, ids=str)
def test_tensordot(sa, sb, dims):
    check(lambda t, a, b: t.tensordot(a, b, dims), randn(*sa), randn(*sb))
    check(lambda t, a, b: t.tensordot(a, b, dims=dims), randn(*sa), randn(*sb))


def test_tensordot_default_and_dtypes():
    check(lambda t, a, b: t.tensordot(a, b), randn(2, 3, 4), randn(3, 4, 5))
    a, b = arr(2, 3, dtype="int64"), arr(3, 2, dtype="int64")
    check(lambda t, a, b: t.tensordot(a, b, 1), a, b)


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((3, 4), (5, 6), 1),  # sizes differ
        ((3, 4), (4, 3), ([0], [0])),
        ((3, 4), (4, 5), 3),  # more dims than the operands have
        ((3, 4), (4, 5), -1),
        ((3, 4), (4, 5), ([0, 1], [0])),  # lists of different lengths
        ((3, 4), (4, 5), ([2], [0])),  # out of range
        ((3, 4), (4, 5), ([-3], [0])),
        ((3, 4), (2, 4), (1, 1)),  # torch wants lists of ints, not ints
    ],
    ids=str,
)
def test_tensordot_errors(sa, sb, dims):
    check(lambda t, a, b: t.tensordot(a, b, dims), randn(*sa), randn(*sb))


def test_tensordot_dtype_mismatch():
    check(lambda t, a, b: t.tensordot(a, b, 1), randn(2, 3), randn(3, 2, dtype="float64"))


# -- einsum -------------------------------------------------------------------------------------------
EINSUM = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "identity": ("ij->ij", [(2, 3)]),
    "row_sums": ("ij->i", [(2, 3)]),
    "col_sums": ("ij->j", [(2, 3)]),
    "total": ("ij->", [(2, 3)]),
    "dot": ("i,i->", [(5,), (5,)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "outer_transposed": ("i,j->ji", [(3,), (4,)]),
    "hadamard": ("ij,ij->ij", [(2, 3), (2, 3)]),
    "hadamard_sum": ("ij,ij->", [(2, 3), (2, 3)]),
    "mat_vec": ("ij,j->i", [(2, 3), (3,)]),
    "vec_mat": ("i,ij->j", [(2,), (2, 3)]),
    "matmul_transposed_out": ("ij,jk->ki", [(2, 3), (3, 4)]),
    "contract_both": ("ij,kj->ik", [(2, 3), (4, 3)]),
    "contract_first": ("ji,jk->ik", [(3, 2), (3, 4)]),
    "batch_matmul": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "batch_dot": ("bi,bi->b", [(3, 4), (3, 4)]),
    "batch_outer": ("bi,bj->bij", [(2, 3), (2, 4)]),
    "sum_one_operand_index": ("ij,k->i", [(2, 3), (4,)]),
    "implicit_matmul": ("ij,jk", [(2, 3), (3, 4)]),
    "implicit_transpose": ("ba", [(2, 3)]),
    "implicit_outer": ("j,i", [(3,), (4,)]),
    "implicit_dot": ("i,i", [(4,), (4,)]),
    "ellipsis_matmul": ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    "ellipsis_sum": ("...i->...", [(2, 3, 4)]),
    "ellipsis_front": ("i...->...i", [(2, 3, 4)]),
    "ellipsis_implicit": ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    "ellipsis_empty": ("...ij,...jk->...ik", [(3, 4), (4, 5)]),
    "three_operands": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    "three_operands_chain": ("i,ij,j->", [(2,), (2, 3), (3,)]),
    "three_bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    "attention_scores": ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    "attention_values": ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    "heads_merge": ("bqhd->bhqd", [(2, 4, 3, 5)]),
    "spaces": (" ij , jk -> ik ", [(2, 3), (3, 4)]),
    "broadcast_unit": ("ij,ij->ij", [(1, 3), (2, 3)]),
    "empty_contraction": ("ij,jk->ik", [(2, 0), (0, 3)]),
    "empty_free": ("ij,jk->ik", [(0, 3), (3, 2)]),
    "three_batch": ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 3), (2, 3, 5)]),
    "three_shared": ("i,i,i->i", [(4,), (4,), (4,)]),
    "three_shared_sum": ("i,i,i->", [(4,), (4,), (4,)]),
    "three_skip": ("ij,jk,il->kl", [(3, 4), (4, 2), (3, 5)]),
    "outer_4d": ("ij,kl->ijkl", [(2, 3), (3, 2)]),
    "ellipsis_drop": ("...ij->ij", [(2, 3, 4)]),
    "ellipsis_keep_only": ("...ij->...", [(2, 3, 4)]),
    "ellipsis_trailing": ("ij...->", [(2, 3, 4)]),
    "ellipsis_elementwise": ("...,...->...", [(2, 3, 4), (3, 4)]),
    "ellipsis_vec": ("...i,i->...", [(2, 3, 4), (4,)]),
    "scalars": (",->", [(), ()]),
    "scalar_times_vector": ("i,->i", [(3,), ()]),
    "scalar_identity": ("->", [()]),
    "uppercase": ("Ab,bC->AC", [(2, 3), (3, 4)]),
}


@pytest.mark.parametrize("name", list(EINSUM))
def test_einsum(name):
    eq, shapes = EINSUM[name]
    inputs = [randn(*s) for s in shapes]
    check(lambda t, *xs: t.einsum(eq, *xs), *inputs)


def test_einsum_operand_list():
    check(lambda t, a, b: t.einsum("ij,jk->ik", [a, b]), randn(2, 3), randn(3, 4))
    check(lambda t, a, b: t.einsum("ij,jk->ik", (a, b)), randn(2, 3), randn(3, 4))


EINSUM_DTYPE_CASES = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "sum": ("ij->j", [(2, 3)]),  # a sum-out is torch.sum: ints and bools give int64
    "total": ("ij->", [(2, 3)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "hadamard": ("ij,ij->ij", [(2, 3), (2, 3)]),
    "outer": ("i,j->ij", [(2,), (3,)]),
    "row_dot": ("ij,ij->i", [(2, 3), (2, 3)]),
    "sum_then_outer": ("ij,k->i", [(2, 3), (4,)]),
    "sum_then_dot": ("ij,jk->", [(2, 3), (3, 4)]),
    "sum_then_contract": ("ij,jk->i", [(2, 3), (3, 4)]),  # int64 @ int8: torch refuses
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(EINSUM_DTYPE_CASES))
def test_einsum_dtypes(name, dtype):
    eq, shapes = EINSUM_DTYPE_CASES[name]
    check(lambda t, *xs: t.einsum(eq, *xs), *[arr(*s, dtype=dtype) for s in shapes])


def test_einsum_non_contiguous():
    a, b = randn(3, 2), randn(4, 3)
    check(lambda t, a, b: t.einsum("ij,jk->ik", a.T, b.T), a, b)
    check(lambda t, a, b: t.einsum("i,j->ij", a[:, 0], b[::2, 1]), a, b)


EINSUM_ERRORS = {
    "operand_count": ("ij,jk->ik", [(2, 3)]),
    "operand_count_more": ("ij", [(2, 3), (2, 3)]),
    "repeated_output": ("ij,jk->ikk", [(2, 3), (3, 4)]),
    "no_broadcast": ("i,i->i", [(3,), (4,)]),
    "rank_zero": ("ij->ji", [()]),
    "bad_character": ("i1->i", [(2, 3)]),
    "lone_dot": ("i.j->ij", [(2, 3)]),
    "two_arrows": ("ij->j->i", [(2, 3)]),
    "ellipsis_twice": ("...i...->i", [(2, 3)]),
    "no_operands": ("ij->ij", []),
    "too_few_subscripts": ("i,jk->ik", [(2, 3), (3, 4)]),
    "too_many_subscripts": ("ijk,jk->ik", [(2, 3), (3, 4)]),
    "size_mismatch": ("ij,jk->ik", [(2, 3), (4, 5)]),
    "unknown_output": ("ij,jk->il", [(2, 3), (3, 4)]),
    "dtype_mismatch": ("ij,jk->ik", [(2, 3), (3, 4)]),
}


@pytest.mark.parametrize("name", list(EINSUM_ERRORS))
def test_einsum_errors(name):
    eq, shapes = EINSUM_ERRORS[name]
    inputs = [randn(*s) for s in shapes]
    if name == "dtype_mismatch":
        inputs[1] = inputs[1].astype("float64")
    check(lambda t, *xs: t.einsum(eq, *xs), *inputs)


# A subscript repeated within an operand takes its diagonal (einops.einsum passes such
# patterns straight through: ``einsum(x, "i i ->")``)
EINSUM_DIAGONALS = {
    "trace": ("ii->", [(3, 3)]),
    "trace_implicit": ("ii", [(3, 3)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "batched_diagonal": ("bii->bi", [(2, 3, 3)]),
    "diagonal_first": ("bii->ib", [(2, 3, 3)]),
    "apart": ("iji->j", [(3, 2, 3)]),
    "apart_implicit": ("iji", [(3, 2, 3)]),
    "threefold": ("iii->i", [(2, 2, 2)]),
    "two_pairs": ("iijj->ij", [(2, 2, 3, 3)]),
    "then_contract": ("ij,ii->j", [(3, 4), (3, 3)]),
    "both_operands": ("ii,jj->ij", [(2, 2), (3, 3)]),
    "diagonal_times_matrix": ("ii,ij->j", [(3, 3), (3, 4)]),
    "around_ellipsis": ("i...i->...", [(3, 2, 4, 3)]),
}


@pytest.mark.parametrize("name", list(EINSUM_DIAGONALS))
def test_einsum_repeated_subscripts(name):
    eq, shapes = EINSUM_DIAGONALS[name]
    inputs = [randn(*s) for s in shapes]
    check(lambda t, *xs: t.einsum(eq, *xs), *inputs)
    check_grad(lambda t, *xs: t.einsum(eq, *xs), *inputs)


@pytest.mark.parametrize("dtype", ALL)
def test_einsum_repeated_subscripts_dtypes(dtype):
    check(lambda t, x: t.einsum("ii->i", x), arr(3, 3, dtype=dtype))
    check(lambda t, x: t.einsum("ii->", x), arr(3, 3, dtype=dtype))


def test_einsum_repeated_subscripts_need_equal_sizes():
    check(lambda t, x: t.einsum("ii->i", x), randn(2, 3))
    check(lambda t, x, y: t.einsum("ij,jj->i", x, y), randn(2, 3), randn(3, 4))
    with pytest.raises(RuntimeError, match="subscript i is repeated for operand 0"):
        lt.einsum("ii->i", lt.ones(2, 3))


# -- norms ------------------------------------------------------------------------------------------
VECTOR_ORDS = [2, 1, INF, -INF, 0, 3, 0.5, -1, -2]


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), (0, 2)], ids=str)
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norm(ord, dim):
    x = randn(2, 3, 4)
    x[0, 0, 0] = 0.0
    check(lambda t, x: t.linalg.vector_norm(x, ord, dim), x)
    check(lambda t, x: t.linalg.vector_norm(x, ord=ord, dim=dim, keepdim=True), x)


@pytest.mark.parametrize("dtype", ALL)
def test_vector_norm_dtypes(dtype):
    check(lambda t, x: t.linalg.vector_norm(x), arr(3, 4, dtype=dtype))
    check(lambda t, x: t.linalg.vector_norm(x, 1, 0, dtype=t.float64), arr(3, 4, dtype=dtype))


def test_vector_norm_edges():
    check(lambda t, x: t.linalg.vector_norm(x), np.array(-3.0, dtype="float32"))
    check(lambda t, x: t.linalg.vector_norm(x, INF, 0), np.array(-3.0, dtype="float32"))
    check(lambda t, x: t.linalg.vector_norm(x), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.linalg.vector_norm(x, 1, 0), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.linalg.vector_norm(x, INF), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.linalg.vector_norm(x, -INF, 1), np.zeros((0, 3), dtype="float32"))
    x = np.array([[NAN, 1.0], [INF, -INF], [0.0, 0.0]], dtype="float32")
    for ord in (2, 1, INF, -INF, 0, 3, -1):
        check(lambda t, x, o=ord: t.linalg.vector_norm(x, o, 1), x)
    check(lambda t, x: t.linalg.vector_norm(x, 2, 3), randn(2, 3))
    # Large values: squaring overflows float32 unless the norm is scaled (torch does not).
    check(lambda t, x: t.linalg.vector_norm(x), np.array([3e20, 4e20], dtype="float32"))


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norm_empty(ord):
    """Negative and infinite orders have no identity over an empty dim: torch raises."""
    x = np.zeros((0, 3), dtype="float32")
    for dim in (None, 0, 1, (0, 1)):
        check(lambda t, x, d=dim: t.linalg.vector_norm(x, ord, d), x)
        check(lambda t, x, d=dim: t.norm(x, ord, d), x)


@pytest.mark.parametrize("ord", [2, 3, INF, 1, 0.5])
def test_vector_norm_float16_works_in_float32(ord):
    # 300² overflows float16; torch accumulates half norms in float32 and rounds once.
    x = (randn(3, 40) * 300).astype("float16")
    check(lambda t, x: t.linalg.vector_norm(x, ord), x)
    check(lambda t, x: t.linalg.vector_norm(x, ord, 1), x)
    check(lambda t, x: t.norm(x, ord, 1), x)
    check(lambda t, x: t.linalg.matrix_norm(x, "fro"), x)


@pytest.mark.parametrize("ord", ["fro", "nuc", None])
def test_vector_norm_rejects_string_ord(ord):
    check(lambda t, x: t.linalg.vector_norm(x, ord), randn(3, 4))


def test_vector_norm_dtype_kwarg_must_widen():
    check(lambda t, x: t.linalg.vector_norm(x, dtype=t.float16), randn(3))
    check(lambda t, x: t.linalg.vector_norm(x, dtype=t.float32), randn(3, dtype="float64"))
    check(lambda t, x: t.linalg.vector_norm(x, dtype=t.int64), randn(3))
    check(lambda t, x: t.linalg.vector_norm(x, dtype=t.float64), randn(3, dtype="float16"))
    check(lambda t, x: t.linalg.vector_norm(x, dtype=t.float64), arr(3, dtype="int64"))


MATRIX_ORDS = ["fro", 1, -1, INF, -INF]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 1), (1, 0), (2, 0), (-1, 1)], ids=str)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm(ord, dim, keepdim):
    x = randn(3, 4, 5)
    check(lambda t, x: t.linalg.matrix_norm(x, ord, dim, keepdim), x)
    check(lambda t, x: t.linalg.norm(x, ord, dim, keepdim), x)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_2d_and_dtypes(ord):
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(3, 4, dtype="float64"))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(3, 4, dtype="float16"))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), arr(3, 4, dtype="int64"))
    check(lambda t, x: t.linalg.matrix_norm(x, ord, dtype=t.float64), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(4))


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_empty(ord):
    check(lambda t, x: t.linalg.matrix_norm(x, ord), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), np.zeros((2, 3, 0), dtype="float32"))


def test_matrix_norm_bad_dims():
    check(lambda t, x: t.linalg.matrix_norm(x, "fro", (0, 0)), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, 1, (0, 0)), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, 1, (0, 2)), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, 3), randn(3, 4))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 1), (2, 0)], ids=str)
@pytest.mark.parametrize("ord", ["nuc", 2, -2], ids=str)
def test_spectral_norms(ord, dim, keepdim):
    # from the singular values: their sum, largest, smallest
    x = randn(3, 4, 5)
    check(lambda t, x: t.linalg.matrix_norm(x, ord, dim, keepdim), x, atol=1e-5, rtol=1e-5)
    check(lambda t, x: t.linalg.norm(x, ord, dim, keepdim), x, atol=1e-5, rtol=1e-5)
    check_grad(lambda t, x: t.linalg.matrix_norm(x, ord, dim, keepdim), x.astype("float64"))


@pytest.mark.parametrize("ord", ["nuc", 2, -2], ids=str)
def test_spectral_norms_2d_dtypes_and_empty(ord):
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(4, 3, dtype="float64"))
    check(lambda t, x: t.linalg.matrix_norm(x, ord, dtype=t.float64), randn(3, 4))
    check(lambda t, x: t.linalg.matrix_norm(x, ord), arr(3, 4, dtype="int64"))  # refused
    check(lambda t, x: t.linalg.matrix_norm(x, ord), randn(4))  # refused: 1-D
    check(lambda t, x: t.linalg.matrix_norm(x, ord), np.zeros((2, 0, 3), dtype="float32"))


def test_nuclear_norm_of_torch_norm():
    check(lambda t, x: t.norm(x, "nuc"), randn(3, 4), atol=1e-5, rtol=1e-5)
    check(lambda t, x: t.norm(x, "nuc", (0, 2), keepdim=True), randn(3, 4, 5), atol=1e-5)
    check(lambda t, x: t.norm(x, "nuc"), randn(2, 3, 4))  # refused: which two dims?


LINALG_NORM = {
    "default_1d": lambda t, x: t.linalg.norm(x[0, 0]),
    "default_2d": lambda t, x: t.linalg.norm(x[0]),
    "default_3d": lambda t, x: t.linalg.norm(x),
    "ord_1d": lambda t, x: t.linalg.norm(x[0, 0], 3),
    "ord_1d_inf": lambda t, x: t.linalg.norm(x[0, 0], -INF),
    "ord_1d_zero": lambda t, x: t.linalg.norm(x[0, 0], 0),
    "ord_2d_fro": lambda t, x: t.linalg.norm(x[0], "fro"),
    "ord_2d_1": lambda t, x: t.linalg.norm(x[0], 1),
    "ord_2d_inf": lambda t, x: t.linalg.norm(x[0], INF),
    "ord_3d": lambda t, x: t.linalg.norm(x, 1),
    "ord_3d_fro": lambda t, x: t.linalg.norm(x, "fro"),
    "dim_int": lambda t, x: t.linalg.norm(x, dim=1),
    "dim_int_ord": lambda t, x: t.linalg.norm(x, 1, -1),
    "dim_tuple1": lambda t, x: t.linalg.norm(x, 3, (2,)),
    "dim_pair": lambda t, x: t.linalg.norm(x, dim=(0, 2)),
    "dim_pair_ord": lambda t, x: t.linalg.norm(x, -INF, (2, 1), keepdim=True),
    "dim_triple": lambda t, x: t.linalg.norm(x, dim=(0, 1, 2)),
    "fro_vector": lambda t, x: t.linalg.norm(x, "fro", 1),
    "string_ord_1d": lambda t, x: t.linalg.norm(x[0, 0], "fro"),
    "dtype": lambda t, x: t.linalg.norm(x, dtype=t.float64),
    "nuc_1d": lambda t, x: t.linalg.norm(x[0, 0], "nuc"),
    "fro_one_dim": lambda t, x: t.linalg.norm(x, "fro", (1,)),
    "ord_2d_dim_none_keepdim": lambda t, x: t.linalg.norm(x[0], -1, keepdim=True),
    "ord_1d_keepdim": lambda t, x: t.linalg.norm(x[0, 0], 1, keepdim=True),
    "keepdim": lambda t, x: t.linalg.norm(x, keepdim=True),
}


@pytest.mark.parametrize("name", list(LINALG_NORM))
def test_linalg_norm(name):
    check(LINALG_NORM[name], randn(2, 3, 4))


def test_linalg_matmul():
    check(lambda t, a, b: t.linalg.matmul(a, b), randn(2, 3, 4), randn(4, 2))


# -- properties: random batched shapes ------------------------------------------------------------
@st.composite
def matmul_shapes(draw):
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    ba = [draw(st.sampled_from([d, 1])) for d in batch]
    bb = [draw(st.sampled_from([d, 1])) for d in batch]
    bb = bb[draw(st.integers(0, len(bb))) :]  # b may have fewer batch dims
    sa = [*ba, m, k] if draw(st.booleans()) else [k]
    sb = [*bb, k, n] if draw(st.booleans()) else [k]
    return tuple(sa), tuple(sb), draw(st.sampled_from(["float32", "int64", "float64"]))


@HYPO
@given(case=matmul_shapes())
def test_property_matmul(case):
    sa, sb, dtype = case
    check(lambda t, a, b: a @ b, arr(*sa, dtype=dtype), arr(*sb, dtype=dtype))


@HYPO
@given(case=matmul_shapes())
def test_property_einsum_matches_matmul(case):
    sa, sb, _ = case
    if len(sa) < 2 or len(sb) < 2:
        return
    check(lambda t, a, b: t.einsum("...ij,...jk->...ik", a, b), randn(*sa), randn(*sb))


def test_int_matmul_wraps_like_torch():
    # Integer products wrap in the tensor's own dtype, as in torch.
    a, b = np.full((2, 3), 100, dtype="int8"), np.full((3, 2), 3, dtype="int8")
    check(lambda t, a, b: a @ b, a, b)
    a = arr(2, 40, dtype="int16", low=-200, high=200)
    b = arr(40, 3, dtype="int16", low=-200, high=200)
    check(lambda t, a, b: a @ b, a, b)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_batched_matmul_dtypes(dtype):
    check(lambda t, a, b: a @ b, arr(2, 1, 2, 3, dtype=dtype), arr(3, 3, 2, dtype=dtype))
