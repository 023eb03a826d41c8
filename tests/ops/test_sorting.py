"""Sorting against torch: sort, argsort, topk, msort, kthvalue.

Every value comparison goes through `check` (lazy and sync mode, IR verified, exception types
matched). Indices are compared only where they are well defined: when the values along the
sorted dim are distinct, or when the sort is stable (ties keep their original order).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, FLOATS, arr, check, check_raises, randn

NAN, INF = float("nan"), float("inf")

HYPO = settings(
    max_examples=40,
    derandomize=True,  # the same examples every run: failures reproduce, CI does not flake
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def distinct(*shape: int, dtype: str = "float32", seed: int = 0) -> np.ndarray:
    """A random permutation of distinct values (no ties, so every index is well defined)."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n)
    if dtype not in ("uint8", "bool"):
        vals = vals - n // 2
    if dtype in FLOATS:
        vals = vals / 4
    return vals.reshape(shape).astype(dtype)


def ties(*shape: int, dtype: str = "float32", seed: int = 0) -> np.ndarray:
    """Only the values 0, 1 and 2 (in any dtype), so nearly every element ties with another."""
    return arr(*shape, dtype="int64", low=0, high=3, seed=seed).astype(dtype)


# -- sort ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_sort_dims(dim, descending):
    x = distinct(3, 4, 5)
    check(lambda t, x: t.sort(x, dim, descending), x)
    check(lambda t, x: x.sort(dim=dim, descending=descending), x)
    check(lambda t, x: t.sort(x, dim=dim, descending=descending, stable=True), x)


def test_sort_default_dim_and_fields():
    x = distinct(4, 6)
    r = check(lambda t, x: t.sort(x), x)
    assert type(r).__name__ == "sort"
    check(lambda t, x: (x.sort().values, x.sort().indices), x)
    check(lambda t, x: (x.sort(0)[0], x.sort(0)[1]), x)
    r = lt.sort(lt.tensor([3.0, 1.0, 2.0]))
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
    assert r.values.tolist() == [1.0, 2.0, 3.0] and r.indices.tolist() == [1, 2, 0]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ALL)
def test_sort_dtypes(dtype, descending):
    if dtype == "bool":
        x = arr(3, 8, dtype=dtype)
        # Only two values: indices are defined for the stable sort.
        check(lambda t, x: t.sort(x, dim=1, descending=descending, stable=True), x)
        check(lambda t, x: t.sort(x, 0, descending=descending).values, x)
        return
    x = distinct(3, 8, dtype=dtype)
    check(lambda t, x: t.sort(x, 1, descending), x)
    check(lambda t, x: t.sort(x, 0, descending), x)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ALL)
def test_sort_stable_ties(dtype, descending):
    x = ties(4, 9, dtype=dtype)
    check(lambda t, x: t.sort(x, dim=-1, descending=descending, stable=True), x)
    check(lambda t, x: t.sort(x, dim=0, descending=descending, stable=True), x)
    check(lambda t, x: t.argsort(x, dim=1, descending=descending, stable=True), x)
    # Unstable, 9 and 4 elements: an introsort's final insertion sort, stable (see below).
    check(lambda t, x: t.sort(x, -1, descending), x)


def _patterns(n: int, seed: int) -> list[np.ndarray]:
    """Rows that take an introsort down its different paths: heavy ties, runs already in
    order or reversed, an organ pipe, all equal, distinct values."""
    rng = np.random.default_rng(seed)
    up = np.arange(n)
    return [
        rng.integers(0, 3, n),
        rng.integers(0, n // 4 + 1, n),
        up,
        up[::-1].copy(),
        np.minimum(up, n - 1 - up),
        np.zeros(n, np.int64),
        up % 5,
        rng.permutation(n),
    ]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [17, 33, 300])
def test_unstable_sort_orders_ties_as_torch(n, dtype, descending):
    """torch's default (unstable) sort leaves equal keys in its introsort's order, which is
    not the stable one beyond 16 elements; lazytorch runs the same algorithm
    (lazytorch_sort.h), so the indices equal torch's, along either axis."""
    x = np.stack(_patterns(n, seed=n)).astype(dtype)
    check(lambda t, x: t.sort(x, -1, descending), x)
    check(lambda t, x: t.argsort(x, 0, descending), np.ascontiguousarray(x.T))


@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_with_nan_and_long_rows_orders_as_torch(descending):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (2, 5000)).astype("float32")
    x[0, rng.integers(0, 5000, 40)] = NAN
    check(lambda t, x: t.sort(x, 1, descending), x)
    # bfloat16 logits tie often: top-p sampling sorts them descending
    check(lambda t, x: t.sort(x.to(t.bfloat16), 1, descending), x)


NAN_DATA = np.array(
    [
        [3.0, NAN, -1.0, INF, NAN, -INF, 0.0],
        [NAN, NAN, NAN, 1.0, 1.0, -0.0, 0.0],
        [-INF, INF, 2.0, -2.0, 5.0, NAN, -INF],
    ],
    dtype="float32",
)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_placement(descending, dtype):
    """NaN sorts as the largest value: last ascending, first descending, in original order."""
    x = NAN_DATA.astype(dtype)
    check(lambda t, x: t.sort(x, dim=1, descending=descending, stable=True), x)
    check(lambda t, x: t.sort(x, dim=0, descending=descending, stable=True), x)
    check(lambda t, x: t.sort(x, 1, descending).values, x)
    check(lambda t, x: t.argsort(x, dim=1, descending=descending, stable=True), x)


def test_sort_negative_zero_ties_with_zero():
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0], dtype="float32")
    check(lambda t, x: t.sort(x, stable=True), x)
    check(lambda t, x: t.sort(x, descending=True, stable=True), x)


@pytest.mark.parametrize("op", ["sort", "argsort"])
@pytest.mark.parametrize("dim", [0, -1, 1, -2])
def test_sort_zero_dim(op, dim):
    check(lambda t, x: getattr(t, op)(x, dim), np.array(2.5, dtype="float32"))
    check(lambda t, x: getattr(t, op)(x, dim, True), np.array(-1, dtype="int64"))


@pytest.mark.parametrize("op", ["sort", "argsort"])
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((3, 0), 1), ((3, 0), 0), ((0, 4), -1)])
def test_sort_empty(op, shape, dim):
    check(lambda t, x: getattr(t, op)(x, dim), np.zeros(shape, dtype="float32"))
    check(lambda t, x: getattr(t, op)(x, dim, descending=True), np.zeros(shape, dtype="int32"))


@pytest.mark.parametrize("op", ["sort", "argsort", "msort"])
def test_sort_size_one(op):
    fn = (lambda t, x: t.msort(x)) if op == "msort" else (lambda t, x: getattr(t, op)(x, 1))
    check(fn, randn(3, 1))
    check(fn, randn(1, 3))
    check(lambda t, x: getattr(t, "sort" if op == "msort" else op)(x, 0), randn(1))


@pytest.mark.parametrize("dim", [2, -3, 5])
@pytest.mark.parametrize("op", ["sort", "argsort", "topk", "kthvalue"])
def test_sort_dim_out_of_range(op, dim):
    fns = {
        "sort": lambda t, x: t.sort(x, dim),
        "argsort": lambda t, x: t.argsort(x, dim),
        "topk": lambda t, x: t.topk(x, 1, dim),
        "kthvalue": lambda t, x: t.kthvalue(x, 1, dim),
    }
    check(fns[op], randn(3, 4))
    assert isinstance(check_raises(fns[op], randn(3, 4)), IndexError)


NONCONTIG = {
    "T.sort": lambda t, x: x.T.sort(1),
    "strided.sort": lambda t, x: x[:, ::2].sort(0, descending=True),
    "T.argsort": lambda t, x: x.T.argsort(0),
    "flip.topk": lambda t, x: x.flip(1).topk(2, 1),
    "T.kthvalue": lambda t, x: x.T.kthvalue(2, 1),
    "T.msort": lambda t, x: t.msort(x.T),
    "expand.sort": lambda t, x: t.sort(x[:1].expand(3, x.shape[1]), 1),
}


@pytest.mark.parametrize("name", list(NONCONTIG))
def test_non_contiguous(name):
    check(NONCONTIG[name], distinct(4, 6))


# -- argsort / msort ----------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "float64"])
def test_argsort(dtype, dim, descending):
    x = distinct(4, 5, dtype=dtype)
    check(lambda t, x: t.argsort(x, dim, descending), x)
    check(lambda t, x: x.argsort(dim=dim, descending=descending), x)
    check(lambda t, x: t.argsort(x, dim=dim, descending=descending, stable=True), x)


def test_argsort_default_dim():
    check(lambda t, x: t.argsort(x), distinct(3, 4, 5))


@pytest.mark.parametrize("dtype", ALL)
def test_msort(dtype):
    x = arr(5, 3, dtype=dtype)
    check(lambda t, x: t.msort(x), x)
    check(lambda t, x: x.msort(), x)
    check(lambda t, x: t.msort(x), arr(6, dtype=dtype))


def test_msort_edge_shapes():
    check(lambda t, x: t.msort(x), NAN_DATA)
    check(lambda t, x: t.msort(x), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.msort(x), np.array(1.5, dtype="float32"))


# -- topk ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [0, 1, 3, 5])
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_topk(k, dim, largest):
    x = distinct(5, 5, 6)
    check(lambda t, x: t.topk(x, k, dim, largest), x)
    check(lambda t, x: x.topk(k, dim=dim, largest=largest, sorted=True), x)


def test_topk_default_and_fields():
    x = distinct(3, 7)
    r = check(lambda t, x: t.topk(x, 3), x)
    assert type(r).__name__ == "topk"
    check(lambda t, x: (x.topk(2).values, x.topk(2).indices), x)
    r = lt.topk(lt.tensor([1.0, 5.0, 3.0]), 2)
    assert r._fields == ("values", "indices") and r.indices.tolist() == [1, 2]


@pytest.mark.parametrize("largest", [True, False])
def test_topk_unsorted_selects_the_same_set(largest):
    """sorted=False leaves the order unspecified: compare the selected set, sorted."""
    x = distinct(4, 9)

    def fn(t, x):
        v, i = t.topk(x, 4, 1, largest, sorted=False)
        order = t.argsort(v, 1)
        return t.gather(v, 1, order), t.gather(i, 1, order)

    check(fn, x)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != "bool"])  # bool: see below
def test_topk_dtypes(dtype):
    x = distinct(3, 6, dtype=dtype)
    check(lambda t, x: t.topk(x, 3), x)
    check(lambda t, x: t.topk(x, 2, 0, largest=False), x)


@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "uint8"])
def test_topk_indices_among_ties_are_torchs(dtype, largest, sorted_):
    """Among equal values topk gives the indices torch's CPU selection gives: a partial sort
    (heap select) when k * 64 <= n, else nth_element and a sort of the first k - 1, which
    the primitive's "topk" order runs on every backend (lazytorch_sort.h). Unsorted results
    come in the algorithms' own order, as torch's. (Every k in one program: one compile.)"""
    rows = ties(6, 300, dtype=dtype, seed=5)
    ks = (1, 4, 5, 37, 299, 300)  # 4 * 64 <= 300 < 5 * 64: both algorithms

    def fn(t, x):
        return tuple(t.topk(x, k, 1, largest, sorted_) for k in ks)

    check(fn, rows, modes=("lazy",))  # (sync mode runs the same algorithm, one op at a time)
    check(lambda t, x: t.topk(x, 7, 0, largest, sorted_), np.ascontiguousarray(rows[:, :40].T))


def test_topk_and_kthvalue_ties_with_nan_are_torchs():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, (4, 700)).astype("float32")
    x[rng.random(x.shape) < 0.05] = NAN
    ks = (1, 3, 10, 11, 200)

    def fn(t, x):
        out = [t.topk(x, k) for k in ks] + [t.topk(x, k, largest=False) for k in ks]
        return tuple(out + [t.kthvalue(x, k) for k in ks])

    check(fn, x, modes=("lazy",))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_kthvalue_index_among_ties_is_torchs(dtype):
    """kthvalue runs torch's own quickselect (not the standard library's nth_element), so
    among equal values it reports the index torch does."""
    rows = ties(5, 97, dtype=dtype, seed=2)
    check(
        lambda t, x: tuple(t.kthvalue(x, k) for k in (1, 2, 33, 49, 96, 97)), rows, modes=("lazy",)
    )
    check(lambda t, x: t.kthvalue(x, 3, 0, keepdim=True), np.ascontiguousarray(rows[:, :20].T))


def test_topk_ties_values():
    x = ties(4, 10)
    check(lambda t, x: t.topk(x, 4).values, x)
    check(lambda t, x: t.topk(x, 4, largest=False).values, x)


def test_topk_k_equal_size_and_edges():
    check(lambda t, x: t.topk(x, 6), distinct(3, 6))
    check(lambda t, x: t.topk(x, 3, 0), distinct(3, 6))
    check(lambda t, x: t.topk(x, 0, 1), np.zeros((3, 0), dtype="float32"))
    check(lambda t, x: t.topk(x, 0, 0), np.zeros((3, 0), dtype="float32"))
    check(lambda t, x: t.topk(x, 1), np.array(2.0, dtype="float32"))
    check(lambda t, x: t.topk(x, 0), np.array(2.0, dtype="float32"))


@pytest.mark.parametrize("k", [7, -1, 100])
def test_topk_k_out_of_range(k):
    check(lambda t, x: t.topk(x, k), randn(3, 6))
    check_raises(lambda t, x: t.topk(x, k), randn(3, 6))
    check(lambda t, x: t.topk(x, k), np.array(2.0, dtype="float32"))


def test_topk_nan_is_largest():
    x = np.array([[1.0, NAN, 3.0, -1.0], [NAN, 0.0, INF, -INF]], dtype="float32")
    check(lambda t, x: t.topk(x, 2), x)
    check(lambda t, x: t.topk(x, 1, largest=False), x)
    check(lambda t, x: t.topk(x, 4, largest=False), x)


def _via_uint8(op, *args):
    """`op` on a bool tensor, with torch (whose CPU kernels refuse bool) run on uint8."""

    def fn(t, x):
        if t is lt:
            return getattr(t, op)(x, *args).values
        return getattr(t, op)(x.to(t.uint8), *args).values.bool()

    return fn


@pytest.mark.parametrize("op,args", [("topk", (3,)), ("topk", (2, 0, False)), ("kthvalue", (2,))])
def test_bool_topk_kthvalue_values(op, args):
    """lazytorch sorts bools as 0/1 in topk and kthvalue too; torch's CPU kernels do not."""
    check(_via_uint8(op, *args), arr(3, 6, dtype="bool"))


# -- kthvalue -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1, -3])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_kthvalue(k, dim, keepdim):
    x = distinct(3, 4, 5)
    check(lambda t, x: t.kthvalue(x, k, dim, keepdim), x)
    check(lambda t, x: x.kthvalue(k, dim=dim, keepdim=keepdim), x)


def test_kthvalue_default_dim_and_fields():
    x = distinct(3, 7)
    r = check(lambda t, x: t.kthvalue(x, 4), x)
    assert type(r).__name__ == "kthvalue"
    check(lambda t, x: (x.kthvalue(1).values, x.kthvalue(7).indices), x)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != "bool"])  # bool: test_bool_topk_...
def test_kthvalue_dtypes(dtype):
    x = distinct(3, 5, dtype=dtype)
    check(lambda t, x: t.kthvalue(x, 2), x)
    check(lambda t, x: t.kthvalue(x, 3, 0, True), x)


@pytest.mark.parametrize("k", [0, -1, 6])
def test_kthvalue_k_out_of_range(k):
    check(lambda t, x: t.kthvalue(x, k), randn(3, 5))
    check_raises(lambda t, x: t.kthvalue(x, k), randn(3, 5))


def test_kthvalue_edge_shapes():
    check(lambda t, x: t.kthvalue(x, 1), np.array(2.0, dtype="float32"))
    check(lambda t, x: t.kthvalue(x, 1, 0, True), np.array(2.0, dtype="float32"))
    check(lambda t, x: t.kthvalue(x, 2), np.array(2.0, dtype="float32"))
    check(lambda t, x: t.kthvalue(x, 1, 0), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.kthvalue(x, 1, 1), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.kthvalue(x, 1), randn(3, 1))


def test_kthvalue_nan_and_ties():
    x = np.array([[1.0, NAN, 3.0, -1.0], [2.0, 0.0, INF, -INF]], dtype="float32")
    for k in (1, 2, 3, 4):
        check(lambda t, x, k=k: t.kthvalue(x, k), x)
    check(lambda t, x: t.kthvalue(x, 3).values, ties(4, 7))


# -- properties over random shapes ----------------------------------------------------------------
@st.composite
def shape_dim(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return shape, dim, draw(st.booleans()), draw(st.integers(0, 2**16))


@HYPO
@given(case=shape_dim(), dtype=st.sampled_from(["float32", "int32", "float16"]))
def test_property_stable_sort(case, dtype):
    shape, dim, descending, seed = case
    x = ties(*shape, dtype=dtype, seed=seed)
    check(lambda t, x: t.sort(x, dim=dim, descending=descending, stable=True), x)


@HYPO
@given(case=shape_dim(), data=st.data())
def test_property_topk_kthvalue(case, data):
    shape, dim, largest, seed = case
    size = shape[dim]
    k = data.draw(st.integers(0, size))
    x = distinct(*shape, seed=seed)
    check(lambda t, x: t.topk(x, k, dim, largest), x)
    if k >= 1:
        check(lambda t, x: t.kthvalue(x, k, dim, largest), x)
