"""Reductions against torch: sum, nansum, mean, nanmean, prod, max/min, amax/amin, aminmax,
argmax/argmin, var/std (+ _mean), logsumexp, norm, all/any, count_nonzero, cumsum.

Every value comparison goes through `check`, so each case runs in lazy and in sync mode, the
recorded IR is verified, and when torch raises lazytorch must raise the same exception type.
Ops are written once as ``fn(t, x)`` so the same code runs on both libraries.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, FLOATS, INTS, arr, check, check_raises, positive, randn

NAN, INF = float("nan"), float("inf")

HYPO = settings(
    max_examples=40,
    derandomize=True,  # the same examples every run: failures reproduce, CI does not flake
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def distinct(*shape: int, dtype: str = "float32", seed: int = 0) -> np.ndarray:
    """A random permutation of 0..n-1 (shifted to be signed), so there are no ties."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n) - n // 2
    if dtype == "uint8":
        vals = vals + n // 2
    return vals.reshape(shape).astype(dtype)


# -- the ops, written once: (t, x, dim, keepdim) -> result ---------------------------------------
# Each takes a `dim` (None: the op's own default) and a `keepdim`.
def _call(name: str, t, x, dim, keepdim):
    fn = getattr(t, name)
    if dim is None:
        # Spelled out: torch's parser rejects sum(x, keepdim=True) without a dim.
        return fn(x, dim=None, keepdim=True) if keepdim else fn(x)
    return fn(x, dim, keepdim=keepdim)


DIM_OPS = {
    "sum": lambda t, x, d, k: _call("sum", t, x, d, k),
    "nansum": lambda t, x, d, k: _call("nansum", t, x, d, k),
    "mean": lambda t, x, d, k: _call("mean", t, x, d, k),
    "nanmean": lambda t, x, d, k: _call("nanmean", t, x, d, k),
    "amax": lambda t, x, d, k: _call("amax", t, x, () if d is None else d, k),
    "amin": lambda t, x, d, k: _call("amin", t, x, () if d is None else d, k),
    "var": lambda t, x, d, k: _call("var", t, x, d, k),
    "std": lambda t, x, d, k: _call("std", t, x, d, k),
    "var_mean": lambda t, x, d, k: _call("var_mean", t, x, d, k),
    "std_mean": lambda t, x, d, k: _call("std_mean", t, x, d, k),
    "logsumexp": lambda t, x, d, k: t.logsumexp(x, tuple(range(x.ndim)) if d is None else d, k),
    "norm": lambda t, x, d, k: t.norm(x, 2, d, k),
    "all": lambda t, x, d, k: _call("all", t, x, d, k),
    "any": lambda t, x, d, k: _call("any", t, x, d, k),
    "count_nonzero": lambda t, x, d, k: t.count_nonzero(x) if d is None else t.count_nonzero(x, d),
    "aminmax": lambda t, x, d, k: t.aminmax(x, dim=d, keepdim=k),
}
# Ops that take exactly one int dim (or none).
ONE_DIM_OPS = {
    "prod": lambda t, x, d, k: t.prod(x) if d is None else t.prod(x, d, keepdim=k),
    "max": lambda t, x, d, k: t.max(x) if d is None else t.max(x, d, keepdim=k),
    "min": lambda t, x, d, k: t.min(x) if d is None else t.min(x, d, keepdim=k),
    "argmax": lambda t, x, d, k: t.argmax(x, d, keepdim=k),
    "argmin": lambda t, x, d, k: t.argmin(x, d, keepdim=k),
    "cumsum": lambda t, x, d, k: t.cumsum(x, 0 if d is None else d),
}
ALL_OPS = {**DIM_OPS, **ONE_DIM_OPS}
# The ops whose result is a dim-wise (values, indices) or that pick elements, so ties matter.
INDEX_OPS = {"max", "min", "argmax", "argmin"}


# -- every op, every dtype: torch decides what is supported and lazytorch must agree -------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(ALL_OPS))
def test_dtypes_full_reduction(name, dtype):
    x = (
        distinct(3, 4, dtype=dtype)
        if name in INDEX_OPS and dtype != "bool"
        else arr(3, 4, dtype=dtype)
    )
    check(lambda t, x: ALL_OPS[name](t, x, None, False), x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", list(ALL_OPS))
def test_dtypes_dim_reduction(name, dtype):
    x = (
        distinct(3, 4, dtype=dtype)
        if name in INDEX_OPS and dtype != "bool"
        else arr(3, 4, dtype=dtype)
    )
    check(lambda t, x: ALL_OPS[name](t, x, 1, False), x)
    check(lambda t, x: ALL_OPS[name](t, x, -2, True), x)


# -- dims: int, negative, tuple, list, all dims, keepdim ------------------------------------------
DIMS = [None, 0, 1, 2, -1, -3, (0, 2), [2, 0], (-1, 1), (0, 1, 2), [1]]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", list(DIM_OPS))
def test_dims(name, dim, keepdim):
    x = randn(2, 3, 4) if name not in ("all", "any") else arr(2, 3, 4, dtype="int32", low=0)
    if name == "nansum" or name == "nanmean":
        x = x.copy()
        x[0, 1, ::2] = NAN
    check(lambda t, x: DIM_OPS[name](t, x, dim, keepdim), x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("name", list(ONE_DIM_OPS))
def test_one_dim(name, dim, keepdim):
    check(lambda t, x: ONE_DIM_OPS[name](t, x, dim, keepdim), randn(2, 3, 4))


@pytest.mark.parametrize("dim", [3, -4, 10, (0, 3), [1, -4]], ids=str)
@pytest.mark.parametrize("name", list(ALL_OPS))
def test_dim_out_of_range(name, dim):
    if (name in ONE_DIM_OPS or name == "aminmax") and not isinstance(dim, int):
        dim = dim[-1]
    check(lambda t, x: ALL_OPS[name](t, x, dim, False), randn(2, 3, 4))
    err = check_raises(lambda t, x: ALL_OPS[name](t, x, dim, False), randn(2, 3, 4))
    assert isinstance(err, IndexError)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "var", "std", "logsumexp", "any"])
def test_duplicate_dims_raise(name):
    check(lambda t, x: DIM_OPS[name](t, x, (0, -3), False), randn(3, 4))
    check_raises(lambda t, x: DIM_OPS[name](t, x, (1, 1), False), randn(3, 4))


# -- 0-d, size-0 and size-1 inputs ----------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, -1, (0,), 1, -2], ids=str)
@pytest.mark.parametrize("name", list(ALL_OPS))
def test_zero_dim_input(name, dim):
    if name in ONE_DIM_OPS and isinstance(dim, tuple):
        dim = dim[0]
    x = np.array(-1.5, dtype="float32")
    check(lambda t, x: ALL_OPS[name](t, x, dim, False), x)
    check(lambda t, x: ALL_OPS[name](t, x, dim, True), x)


EMPTY_CASES = [
    ((0,), None),
    ((0,), 0),
    ((3, 0), None),
    ((3, 0), 1),
    ((3, 0), 0),
    ((3, 0), -1),
    ((0, 4), 0),
    ((0, 4), 1),
    ((2, 0, 3), (0, 2)),
    ((2, 0, 3), (1, 2)),
]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", EMPTY_CASES, ids=str)
@pytest.mark.parametrize("name", list(ALL_OPS))
def test_empty(name, shape, dim, keepdim):
    """Sums of nothing are 0, products 1, means NaN; max/min/argmax over an empty dim raise."""
    if name in ONE_DIM_OPS and isinstance(dim, tuple):
        dim = dim[0]
    check(lambda t, x: ALL_OPS[name](t, x, dim, keepdim), np.zeros(shape, dtype="float32"))


@pytest.mark.parametrize("name", ["sum", "prod", "all", "any", "count_nonzero", "cumsum"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64"])
def test_empty_integer_dtypes(name, dtype):
    check(lambda t, x: ALL_OPS[name](t, x, None, False), np.zeros((3, 0), dtype=dtype))
    check(lambda t, x: ALL_OPS[name](t, x, 1, True), np.zeros((3, 0), dtype=dtype))


@pytest.mark.parametrize("name", list(ALL_OPS))
def test_size_one_dims(name):
    check(lambda t, x: ALL_OPS[name](t, x, 1, False), randn(3, 1, 2))
    check(lambda t, x: ALL_OPS[name](t, x, None, True), randn(1, 1))
    check(lambda t, x: ALL_OPS[name](t, x, 0, True), randn(1))


def test_empty_max_raises():
    e = check_raises(lambda t, x: t.max(x, 0), np.zeros((0, 3), dtype="float32"))
    assert isinstance(e, IndexError)
    e = check_raises(lambda t, x: t.max(x), np.zeros((0, 3), dtype="float32"))
    assert isinstance(e, RuntimeError)
    check_raises(lambda t, x: t.amin(x, 0), np.zeros((0, 3), dtype="float32"))
    check_raises(lambda t, x: t.argmin(x), np.zeros((2, 0), dtype="float32"))
    check_raises(lambda t, x: t.aminmax(x), np.zeros((2, 0), dtype="float32"))


# -- non-contiguous inputs ------------------------------------------------------------------------
NONCONTIG = {
    "T.sum0": lambda t, x: x.T.sum(0),
    "strided.mean1": lambda t, x: x[:, ::2].mean(1),
    "permute.amax": lambda t, x: x.reshape(2, 2, 6).permute(2, 0, 1).amax((0, 1)),
    "T.max1": lambda t, x: tuple(x.T.max(1)),
    "T.argmin0": lambda t, x: x.T.argmin(0),
    "strided.var": lambda t, x: x[::2].var(0),
    "flip.cumsum": lambda t, x: x.flip(-1).cumsum(-1),
    "expand.sum": lambda t, x: x[:1].expand(5, x.shape[1]).sum(0),
    "T.logsumexp": lambda t, x: x.T.logsumexp(1),
    "T.prod": lambda t, x: x.T.prod(1),
    "strided.norm": lambda t, x: x[:, 1::2].norm(dim=0),
    "T.std_mean": lambda t, x: t.std_mean(x.T, 1),
}


@pytest.mark.parametrize("name", list(NONCONTIG))
def test_non_contiguous(name):
    check(NONCONTIG[name], distinct(4, 6).astype("float32") / 7)


# -- sum ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
def test_sum_promotes_integers_to_int64(dtype):
    big = arr(50, 3, dtype=dtype, low=0, high=120)  # int8 overflow if accumulated in int8
    check(lambda t, x: t.sum(x), big)
    check(lambda t, x: x.sum(0), big)
    check(lambda t, x: x.sum(dim=(0, 1), keepdim=True), big)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("src", ["bool", "int8", "int64", "float16", "float32"])
def test_sum_dtype_kwarg(src, dtype):
    check(lambda t, x: t.sum(x, dtype=getattr(t, dtype)), arr(3, 4, dtype=src))
    check(lambda t, x: x.sum(1, dtype=getattr(t, dtype)), arr(3, 4, dtype=src))


@pytest.mark.parametrize("src", ["bool", "int32", "float32"])
@pytest.mark.parametrize("op", ["sum", "prod", "nansum", "cumsum", "mean"])
def test_bool_result_dtype(op, src):
    """dtype=bool: sum is any, prod is all (torch); cumsum and mean refuse it."""
    x = arr(4, 3, dtype=src, low=0, high=2)
    x[0] = 0
    check(lambda t, x: getattr(t, op)(x, 1, dtype=t.bool), x)
    check(lambda t, x: getattr(t, op)(x, 0, dtype=t.bool), x)


def test_sum_float16_accumulates_in_float32():
    # Partial sums beyond float16's range (65504) must not overflow: torch accumulates in
    # float32 and rounds once.
    x = np.array([[6e4, 6e4, -6e4, -6e4, 1.0], [3e4, 3e4, 3e4, -6e4, -3e4]], dtype="float16")
    for op in ("sum", "mean", "nansum", "nanmean", "var", "std"):
        check(lambda t, x, op=op: getattr(t, op)(x, 1), x)
        check(lambda t, x, op=op: getattr(t, op)(x), x)
    check(lambda t, x: t.cumsum(x, 1), x)
    check(lambda t, x: t.mean(x), np.full((100, 7), 1000.0, dtype="float16"))
    check(lambda t, x: t.sum(x), np.ones(4096, dtype="float16"))


def test_sum_empty_dim_list_reduces_everything():
    check(lambda t, x: t.sum(x, dim=[]), randn(2, 3))
    check(lambda t, x: x.sum(()), randn(2, 3))
    check(lambda t, x: x.sum(dim=(), keepdim=True), randn(2, 3))


def test_nansum_nanmean():
    x = randn(4, 5)
    x[0, 0] = x[1, :] = x[2, 3] = NAN
    for op in ("nansum", "nanmean"):
        check(lambda t, x, op=op: getattr(t, op)(x), x)
        check(lambda t, x, op=op: getattr(x, op)(1), x)
        check(lambda t, x, op=op: getattr(x, op)(0, keepdim=True), x)
        check(lambda t, x, op=op: getattr(t, op)(x, (0, 1)), x)
    check(lambda t, x: t.nansum(x, dtype=t.float64), x)
    check(lambda t, x: t.nanmean(x, 1, dtype=t.float64), x)
    check(lambda t, x: t.nansum(x), np.array([NAN, INF, 1.0], dtype="float32"))
    check(lambda t, x: t.nansum(x), np.array([-INF, INF], dtype="float32"))


# -- mean / prod ------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", ["int64", "bool", "float16", "float32"])
def test_mean_dtype_kwarg(src):
    check(lambda t, x: t.mean(x, dtype=t.float64), arr(3, 4, dtype=src))
    check(lambda t, x: x.mean(0, dtype=t.float32), arr(3, 4, dtype=src))
    check(lambda t, x: x.mean(0, dtype=t.int64), arr(3, 4, dtype=src))


def test_mean_nan_inf():
    check(lambda t, x: x.mean(1), np.array([[1, NAN], [INF, 1], [INF, -INF]], dtype="float32"))


@pytest.mark.parametrize("dtype", ALL)
def test_prod(dtype):
    x = arr(3, 4, dtype=dtype, low=-3, high=4)
    check(lambda t, x: t.prod(x), x)
    check(lambda t, x: x.prod(1), x)
    check(lambda t, x: x.prod(-2, keepdim=True), x)
    check(lambda t, x: x.prod(0, dtype=t.float64), x)
    check(lambda t, x: x.prod(dtype=t.int64), x)


def test_prod_rejects_dim_tuple_like_torch():
    check(lambda t, x: t.prod(x, (0, 1)), randn(2, 3))


def test_prod_nan_inf_zero():
    x = np.array([[0, INF], [NAN, 2], [-INF, -INF], [3, 4]], dtype="float32")
    check(lambda t, x: x.prod(1), x)


# -- max / min / amax / amin / aminmax ----------------------------------------------------------
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_forms(op):
    x = distinct(3, 4).astype("float32")
    check(lambda t, x: getattr(t, op)(x), x)
    check(lambda t, x: getattr(x, op)(), x)
    r = check(lambda t, x: getattr(t, op)(x, 1), x)
    assert type(r).__name__ == op
    check(lambda t, x: getattr(t, op)(x, dim=0, keepdim=True), x)
    check(lambda t, x: getattr(x, op)(-1, True), x)
    # Fields by name and by position.
    check(lambda t, x: (getattr(x, op)(dim=1).values, getattr(x, op)(dim=1).indices), x)
    check(lambda t, x: (getattr(x, op)(0)[0], getattr(x, op)(0)[1]), x)
    # With a tensor: elementwise, broadcasting.
    check(lambda t, x, y: getattr(t, op)(x, y), x, randn(4))
    check(lambda t, x, y: getattr(x, op)(y), x, randn(3, 1))


def test_max_min_namedtuple_fields():
    x = lt.tensor([[1.0, 5.0], [7.0, 2.0]])
    r = lt.max(x, 1)
    assert type(r).__name__ == "max" and r._fields == ("values", "indices")
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    r = lt.min(x, 0, keepdim=True)
    assert type(r).__name__ == "min" and r.indices.tolist() == [[0, 1]]
    r = lt.aminmax(x)
    assert r._fields == ("min", "max") and (r.min.item(), r.max.item()) == (1.0, 7.0)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_with_other_tensor(op, dtype):
    check(lambda t, x, y: getattr(t, op)(x, y), arr(3, 4, dtype=dtype), arr(3, 4, dtype=dtype))


NAN_ROWS = np.array(
    [[1.0, NAN, 3.0, NAN], [NAN, 1.0, -INF, 2.0], [INF, 0.0, NAN, 1.0], [4.0, 2.0, INF, -1.0]],
    dtype="float32",
)


@pytest.mark.parametrize(
    "name", ["max", "min", "argmax", "argmin", "amax", "amin", "aminmax", "cumsum"]
)
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_nan_propagates(name, dim):
    """torch treats NaN as larger than everything in max and smaller in min: both propagate it,
    and the index is the first NaN's."""
    check(lambda t, x: ALL_OPS[name](t, x, dim, False), NAN_ROWS)
    check(lambda t, x: ALL_OPS[name](t, x, dim, False), NAN_ROWS.astype("float16"))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("name", ["argmax", "argmin", "max", "min"])
def test_ties_pick_the_first_index(name, dtype):
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, 0, 1, 1], [1, 0, 0, 1]], dtype=dtype)
    for dim in (None, 0, 1, -1):
        check(lambda t, x, d=dim: ALL_OPS[name](t, x, d, False), x)
        check(lambda t, x, d=dim: ALL_OPS[name](t, x, d, True), x)


def test_argmax_keepdim_without_dim():
    check(lambda t, x: t.argmax(x, keepdim=True), randn(3, 4))
    check(lambda t, x: x.argmin(dim=None, keepdim=True), randn(2, 3, 4))
    check(lambda t, x: x.argmax(), randn(2, 3, 4))


@pytest.mark.parametrize("dim", [(), 0, -1, (0, 1), [1, 0]], ids=str)
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_dims(op, dim):
    check(lambda t, x: getattr(t, op)(x, dim), randn(3, 4))
    check(lambda t, x: getattr(x, op)(dim, keepdim=True), randn(3, 4))
    check(lambda t, x: getattr(t, op)(x), randn(3, 4))


@pytest.mark.parametrize("dtype", ALL)
def test_aminmax(dtype):
    x = arr(3, 4, dtype=dtype)
    check(lambda t, x: t.aminmax(x), x)
    check(lambda t, x: t.aminmax(x, dim=1), x)
    check(lambda t, x: x.aminmax(dim=-2, keepdim=True), x)
    check(lambda t, x: t.aminmax(x, keepdim=True), x)


# -- var / std --------------------------------------------------------------------------------------
VAR_OPS = ["var", "std", "var_mean", "std_mean"]


@pytest.mark.parametrize("correction", [0, 1, 2, 0.5])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1), [1]], ids=str)
@pytest.mark.parametrize("op", VAR_OPS)
def test_var_correction(op, dim, correction):
    check(lambda t, x: getattr(t, op)(x, dim, correction=correction), randn(3, 4))
    check(lambda t, x: getattr(t, op)(x, dim, correction=correction, keepdim=True), randn(3, 4))


@pytest.mark.parametrize("op", VAR_OPS)
def test_var_legacy_unbiased_forms(op):
    x = randn(3, 4)
    check(lambda t, x: getattr(t, op)(x, 0, False), x)
    check(lambda t, x: getattr(t, op)(x, 1, True, True), x)
    check(lambda t, x: getattr(t, op)(x, False), x)
    check(lambda t, x: getattr(t, op)(x, True), x)
    check(lambda t, x: getattr(t, op)(x, unbiased=False), x)
    check(lambda t, x: getattr(t, op)(x, dim=1, unbiased=False, keepdim=True), x)
    if op in ("var", "std"):
        check(lambda t, x: getattr(x, op)(0, False), x)
        check(lambda t, x: getattr(x, op)(False), x)
        check(lambda t, x: getattr(x, op)(unbiased=True), x)


@pytest.mark.parametrize("correction", [0, 1, 2, 3])
@pytest.mark.parametrize("shape", [(1,), (2,), (3, 1), (0,), (2, 0), ()], ids=str)
@pytest.mark.parametrize("op", VAR_OPS)
def test_var_too_few_samples(op, shape, correction):
    """N <= correction divides by zero: inf for nonzero sums of squares, NaN for zero ones."""
    x = randn(*shape)
    check(lambda t, x: getattr(t, op)(x, correction=correction), x)
    if len(shape) >= 1:
        check(lambda t, x: getattr(t, op)(x, -1, correction=correction), x)
    check(lambda t, x: getattr(t, op)(x, correction=correction), np.zeros(shape, "float32"))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", VAR_OPS)
def test_var_dtypes(op, dtype):
    check(lambda t, x: getattr(t, op)(x), arr(3, 4, dtype=dtype))
    check(lambda t, x: getattr(t, op)(x, 1), arr(3, 4, dtype=dtype))


def test_var_large_offset_is_accurate():
    # A large common offset: a one-pass E[x²]-E[x]² formula would lose all the digits.
    x = (randn(4, 50) + 1000.0).astype("float32")
    check(lambda t, x: t.var(x, 1), x, rtol=1e-3)
    check(lambda t, x: t.std(x), x, rtol=1e-3)


def test_var_nan_inf():
    x = np.array([[1, NAN, 2], [INF, 1, 2], [1, 2, 3]], dtype="float32")
    for op in VAR_OPS:
        check(lambda t, x, op=op: getattr(t, op)(x, 1), x[[0, 2]])
        check(lambda t, x, op=op: getattr(t, op)(x, 1, keepdim=True)[0], x)
    # torch's one-pass (Welford) var_mean also turns the mean of a row holding inf into NaN;
    # lazytorch's mean there is torch.mean's: inf (see test_var_mean_of_inf_is_torch_mean).


def test_var_mean_of_inf_is_torch_mean():
    x = np.array([[INF, 1, 2], [-INF, 1, 2]], dtype="float32")
    for op in ("var_mean", "std_mean"):
        _, mean = getattr(lt, op)(lt.from_numpy(x), 1)
        np.testing.assert_array_equal(mean.numpy(), torch.from_numpy(x).mean(1).numpy())


def test_var_both_unbiased_and_correction_raises():
    check_raises(lambda t, x: t.var(x, 0, True, correction=1), randn(3))


# -- logsumexp ----------------------------------------------------------------------------------------
LSE_ROWS = np.array(
    [
        [-INF, -INF, -INF],
        [INF, 1.0, 2.0],
        [INF, INF, 0.0],
        [-INF, 0.0, 1.0],
        [NAN, 0.0, 1.0],
        [100.0, 100.0, -100.0],
        [1e30, 0.0, 0.0],
        [INF, -INF, 0.0],
    ],
    dtype="float32",
)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp_special_rows(dtype):
    x = LSE_ROWS.astype(dtype)
    check(lambda t, x: t.logsumexp(x, 1), x)
    check(lambda t, x: x.logsumexp(-1, keepdim=True), x)
    check(lambda t, x: t.logsumexp(x, (0, 1)), x)


@pytest.mark.parametrize("dtype", ALL)
def test_logsumexp_dtypes(dtype):
    check(lambda t, x: t.logsumexp(x, 0), arr(3, 4, dtype=dtype))


def test_logsumexp_large_values_do_not_overflow():
    check(lambda t, x: t.logsumexp(x, 1), randn(3, 5) * 1e4)
    check(lambda t, x: t.logsumexp(x, 0), randn(3, 5).astype("float16") * 3e3)


def test_logsumexp_empty_dim_is_minus_inf():
    check(lambda t, x: t.logsumexp(x, 1), np.zeros((3, 0), dtype="float32"))
    check(lambda t, x: t.logsumexp(x, (0, 1), keepdim=True), np.zeros((3, 0), dtype="float32"))


# -- norm ---------------------------------------------------------------------------------------------
NORM_PS = ["fro", 1, 2, INF, -INF, 0, 3, 0.5, -1, -2, 1.5]


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("p", NORM_PS, ids=str)
def test_norm(p, dim):
    x = randn(3, 4)
    x[0, 0] = 0.0  # p=0 counts nonzeros; negative p sees an infinite term
    check(lambda t, x: t.norm(x, p, dim), x)
    check(lambda t, x: x.norm(p, dim, keepdim=True), x)


@pytest.mark.parametrize("dtype", ALL)
def test_norm_dtypes(dtype):
    check(lambda t, x: t.norm(x), arr(3, 4, dtype=dtype))
    check(lambda t, x: t.norm(x, 1, 0), arr(3, 4, dtype=dtype))


def test_norm_defaults_and_dtype():
    check(lambda t, x: x.norm(), randn(2, 3, 4))
    check(lambda t, x: x.norm(dim=1), randn(2, 3, 4))
    check(lambda t, x: t.norm(x, p=2, dim=(0, 2), keepdim=True), randn(2, 3, 4))
    check(lambda t, x: t.norm(x, dtype=t.float64), randn(3, 4))
    check(lambda t, x: t.norm(x), np.array(-2.5, dtype="float32"))
    check(lambda t, x: t.norm(x, 1), np.zeros((0, 3), dtype="float32"))
    check(lambda t, x: t.norm(x, INF), np.zeros((0, 3), dtype="float32"))


# -- all / any / count_nonzero --------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["all", "any"])
def test_all_any(op, dtype, dim):
    x = arr(4, 3, dtype=dtype, low=0, high=2)
    x[0] = 1
    x[1] = 0
    check(lambda t, x: DIM_OPS[op](t, x, dim, False), x)
    check(lambda t, x: DIM_OPS[op](t, x, dim, True), x)


@pytest.mark.parametrize("dim", [(), []], ids=str)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "float32"])
@pytest.mark.parametrize("op", ["all", "any"])
def test_all_any_empty_dim_list_reduces_nothing(op, dtype, dim):
    """Unlike sum's, all/any's empty dim list is no dims: an elementwise truth test."""
    x = arr(3, 4, dtype=dtype, low=0, high=2)
    check(lambda t, x: getattr(t, op)(x, dim), x)
    check(lambda t, x: getattr(x, op)(dim, keepdim=True), x)
    check(lambda t, x: getattr(t, op)(x, dim), np.zeros((2, 0), dtype=dtype))


def test_all_any_nan_counts_as_true():
    x = np.array([[NAN, 1.0], [0.0, NAN], [0.0, -0.0]], dtype="float32")
    check(lambda t, x: (x.all(1), x.any(1), x.all(), x.any()), x)


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), [1]], ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_count_nonzero(dtype, dim):
    x = arr(4, 3, dtype=dtype, low=-1, high=2)
    check(lambda t, x: t.count_nonzero(x, dim), x)
    check(lambda t, x: x.count_nonzero(dim=dim), x)


def test_count_nonzero_nan_and_negative_zero():
    x = np.array([[NAN, -0.0, 0.0, 1e-30]], dtype="float32")
    check(lambda t, x: t.count_nonzero(x, 1), x)


# -- cumsum -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_cumsum_dims(dim):
    check(lambda t, x: t.cumsum(x, dim), randn(2, 3, 4))
    check(lambda t, x: x.cumsum(dim=dim), randn(2, 3, 4))


@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_dtypes(dtype):
    x = arr(3, 40, dtype=dtype, low=0, high=100)  # int8 would overflow without int64 promotion
    check(lambda t, x: t.cumsum(x, 1), x)
    check(lambda t, x: t.cumsum(x, 0, dtype=t.float64), x)
    check(lambda t, x: x.cumsum(-1, dtype=t.int32), x)


def test_cumsum_float16_accumulation():
    check(lambda t, x: t.cumsum(x, 0), np.ones(3000, dtype="float16"))


def test_cumsum_edge_shapes():
    check(lambda t, x: t.cumsum(x, 0), np.array(2.5, dtype="float32"))
    check(lambda t, x: t.cumsum(x, -1), np.array(3, dtype="int8"))
    check(lambda t, x: t.cumsum(x, 1), np.array(3, dtype="int8"))
    check(lambda t, x: t.cumsum(x, 1), np.zeros((3, 0), dtype="int32"))
    check(lambda t, x: t.cumsum(x, 0), np.zeros((3, 0), dtype="float32"))
    check(lambda t, x: t.cumsum(x, 3), randn(2, 3))
    check(lambda t, x: t.cumsum(x, 1), np.array([[1, NAN, 2], [INF, -INF, 1]], dtype="float32"))


# -- assorted corners --------------------------------------------------------------------------------
CORNERS = {
    "argmax_all_nan": lambda t, x: t.argmax(x * NAN),
    "argmin_all_nan_dim": lambda t, x: t.argmin(x * NAN, 1),
    "amax_inf": lambda t, x: t.amax(x.clamp(min=0) * INF, 1),
    "max_0d_keepdim": lambda t, x: t.max(x[0, 0], 0, keepdim=True),
    "argmax_0d_keepdim": lambda t, x: t.argmax(x[0, 0], None, True),
    "aminmax_0d_dim": lambda t, x: t.aminmax(x[0, 0], dim=-1, keepdim=True),
    "aminmax_nan": lambda t, x: t.aminmax(x * t.tensor([1.0, NAN, 1.0, 1.0]), dim=1),
    "logsumexp_0d": lambda t, x: t.logsumexp(x[0, 0], 0),
    "logsumexp_int_0d": lambda t, x: t.logsumexp(x.long()[0, 0], -1, True),
    "prod_int8_wraps_in_dtype": lambda t, x: (x * 20).to(t.int8).prod(1, dtype=t.int8),
    "sum_int8_wraps_in_dtype": lambda t, x: (x * 60).to(t.int8).sum(1, dtype=t.int8),
    "prod_int8_promotes": lambda t, x: (x * 20).to(t.int8).prod(1),
    "cumsum_int_to_float16": lambda t, x: t.cumsum(x.long(), 0, dtype=t.float16),
    "var_one_element": lambda t, x: t.var(x[:1, :1]),
    "std_mean_0d": lambda t, x: t.std_mean(x[0, 0], correction=0),
    "nansum_bool": lambda t, x: t.nansum(x > 0),
    "mean_neg_dims_keepdim": lambda t, x: x.mean((-1, -2), True),
    "std_tuple_legacy_unbiased": lambda t, x: t.std(x, (0, 1), False),
}


@pytest.mark.parametrize("name", list(CORNERS))
def test_corners(name):
    x = randn(3, 4)
    x[0, 0] = 0.0
    check(CORNERS[name], x)


# -- Tensor methods mirror the functions ----------------------------------------------------------------
METHOD_CALLS = {
    "sum": lambda t, x: x.sum(-1, keepdim=True),
    "mean": lambda t, x: x.mean((0, 1)),
    "prod": lambda t, x: x.prod(0),
    "amax": lambda t, x: x.amax(1),
    "amin": lambda t, x: x.amin(dim=0),
    "argmax": lambda t, x: x.argmax(1),
    "argmin": lambda t, x: x.argmin(),
    "var": lambda t, x: x.var(1, correction=0),
    "std": lambda t, x: x.std(),
    "logsumexp": lambda t, x: x.logsumexp(1),
    "norm": lambda t, x: x.norm(1, 1),
    "all": lambda t, x: x.all(),
    "any": lambda t, x: x.any(0),
    "nansum": lambda t, x: x.nansum(),
    "nanmean": lambda t, x: x.nanmean(0),
    "count_nonzero": lambda t, x: x.count_nonzero(),
    "cumsum": lambda t, x: x.cumsum(0),
    "aminmax": lambda t, x: x.aminmax(),
}


@pytest.mark.parametrize("name", list(METHOD_CALLS))
def test_methods(name):
    check(METHOD_CALLS[name], randn(3, 4))


# -- properties over random shapes and dims -------------------------------------------------------------
@st.composite
def shape_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    nd = len(shape)
    if nd == 0:
        dims = draw(st.sampled_from([None, 0, -1]))
    else:
        picked = draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique=True))
        # Two spellings of one axis (1 and -nd+1) is an error in torch too; keep it valid here.
        if len({d % nd for d in picked}) != len(picked):
            picked = picked[:1]
        dims = draw(st.sampled_from([None, picked[0], tuple(picked), list(picked)]))
    seed = draw(st.integers(0, 2**16))
    keepdim = draw(st.booleans())
    return shape, dims, keepdim, seed


@HYPO
@given(case=shape_and_dims(), name=st.sampled_from(["sum", "mean", "amax", "var", "logsumexp"]))
def test_property_random_shapes(case, name):
    shape, dims, keepdim, seed = case
    check(lambda t, x: DIM_OPS[name](t, x, dims, keepdim), arr(*shape, seed=seed))


@HYPO
@given(case=shape_and_dims(), name=st.sampled_from(["max", "argmin", "prod", "cumsum"]))
def test_property_random_shapes_one_dim(case, name):
    shape, dims, keepdim, seed = case
    if isinstance(dims, (tuple, list)):
        dims = dims[0]
    x = np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) / 5
    check(lambda t, x: ONE_DIM_OPS[name](t, x, dims, keepdim), x.astype("float32"))


@HYPO
@given(dtype=st.sampled_from((*INTS, "bool")), case=shape_and_dims())
def test_property_integer_sums(dtype, case):
    shape, dims, keepdim, seed = case
    x = arr(*shape, dtype=dtype, low=-100, high=100, seed=seed)
    check(lambda t, x: t.sum(x, dims, keepdim), x)


def test_prod_of_many_positive_values():
    check(lambda t, x: x.prod(1), positive(3, 20))
    check(lambda t, x: x.prod(0), positive(30, 2, dtype="float64"))
