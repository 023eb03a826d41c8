"""mode, histc, cov, corrcoef, trapezoid/trapz/cumulative_trapezoid, combinations and
vander against torch: values, dtypes, gradients, edge cases and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_grad, check_raises, randn

# -- mode ---------------------------------------------------------------------------------------


def _small_ints(*shape: int, dtype: str = "int64") -> np.ndarray:
    return np.random.default_rng(sum(shape) + 7).integers(0, 4, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64", "uint8"])
def test_mode_values_and_indices(dtype: str) -> None:
    x = _small_ints(3, 7, dtype=dtype)
    check(lambda t, x: t.mode(x), x)
    check(lambda t, x: x.mode(0), x)
    check(lambda t, x: t.mode(x, dim=0, keepdim=True), x)
    check(lambda t, x: t.mode(x, -1, True), _small_ints(2, 3, 5, dtype=dtype))
    check(lambda t, x: t.mode(x, 1), _small_ints(2, 3, 5, dtype=dtype))


def test_mode_ties_take_the_smallest_value_and_its_last_index() -> None:
    check(lambda t, x: t.mode(x), np.array([2, 1, 3, 1, 2, 2, 1]))
    check(lambda t, x: t.mode(x), np.array([[5.0, 5.0, 4.0, 4.0, 1.0], [1.0, 2.0, 3.0, 4.0, 0.0]]))
    check(lambda t, x: t.mode(x), np.array([True, False, True]))


def test_mode_edge_cases() -> None:
    check(lambda t, x: t.mode(x), np.array(4.0, dtype=np.float32))  # 0-d
    check(lambda t, x: t.mode(x, 0), np.array(4.0, dtype=np.float32))
    check(lambda t, x: t.mode(x), np.array([3.5], dtype=np.float32))
    check_raises(lambda t, x: t.mode(x, 1), np.zeros((2, 0), dtype=np.float32))
    check_raises(lambda t, x: t.mode(x, 2), randn(2, 3))


def test_mode_long_rows_index_points_at_the_value() -> None:
    x = _small_ints(4, 50).astype(np.float32)
    want = torch.mode(torch.from_numpy(x))
    got = lt.mode(lt.from_numpy(x))
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    picked = np.take_along_axis(x, got.indices.numpy()[:, None], 1)[:, 0]
    np.testing.assert_array_equal(picked, want.values.numpy())


def test_mode_gradient_and_out() -> None:
    check_grad(lambda t, x: t.mode(x, 0).values, np.round(randn(6, 4)))
    check_grad(lambda t, x: t.mode(x, 1, keepdim=True).values, np.round(randn(3, 5)))

    def with_out(t: Any, x: Any) -> Any:
        v, i = t.empty(0), t.empty(0, dtype=t.long)
        r = t.mode(x, 1, out=(v, i))
        return r.values, r.indices, v, i

    check(with_out, _small_ints(3, 4).astype(np.float32))


# -- histc --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_values(dtype: str) -> None:
    check(lambda t, x: t.histc(x), randn(50, dtype=dtype))
    check(lambda t, x: t.histc(x, bins=7), randn(4, 30, dtype=dtype))
    check(lambda t, x: x.histc(5, min=-1, max=1), randn(100, dtype=dtype))
    check(lambda t, x: t.histc(x, 4, -0.5, 3), np.array([-1, 0, 0.5, 1, 2.999, 3, 3.5], dtype))


def test_histc_edges() -> None:
    check(lambda t, x: t.histc(x, 3), np.array([2.0, 2.0], dtype=np.float32))  # one value
    check(lambda t, x: t.histc(x, 3), np.zeros(0, dtype=np.float32))  # empty
    check(lambda t, x: t.histc(x, 3), np.array(1.5, dtype=np.float32))  # 0-d
    nan_inf = np.array([1.0, np.nan, 2.0, np.inf, -np.inf], dtype=np.float32)
    check(lambda t, x: t.histc(x, 3, min=0, max=3), nan_inf)
    check(lambda t, x: t.histc(x, 10, min=0, max=1), np.linspace(0, 1, 101, dtype=np.float32))
    check(lambda t, x: t.histc(x, 10, min=0, max=1), np.linspace(0, 1, 1001))

    def with_out(t: Any, x: Any) -> Any:
        o = t.empty(0)
        return t.histc(x, 4, out=o), o

    check(with_out, randn(20))


def test_histc_errors() -> None:
    check_raises(lambda t, x: t.histc(x, 3), np.array([1, 2, 3]))  # integer input
    check_raises(lambda t, x: t.histc(x, 3, min=3, max=1), randn(4))
    check_raises(lambda t, x: t.histc(x, 0), randn(4))
    check_raises(lambda t, x: t.histc(x, 3), np.array([1.0, np.nan], dtype=np.float32))
    check_raises(lambda t, x: t.histc(x, 3), np.array([1.0, np.inf], dtype=np.float32))


# -- cov / corrcoef -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cov_and_corrcoef(dtype: str) -> None:
    x = randn(3, 8, dtype=dtype)
    check(lambda t, x: t.cov(x), x)
    check(lambda t, x: x.cov(correction=0), x)
    check(lambda t, x: t.cov(x, correction=2), x)
    check(lambda t, x: t.cov(x), randn(8, dtype=dtype))  # 1-d: one variable, 0-d result
    check(lambda t, x: t.corrcoef(x), x)
    check(lambda t, x: x.corrcoef(), randn(8, dtype=dtype))
    check(lambda t, x: t.cov(x), arr(2, 5, dtype="int64"))
    check(lambda t, x: t.corrcoef(x), arr(3, 6, dtype="int32", low=-5, high=5))


def test_cov_weights() -> None:
    x = randn(3, 6)
    fw = np.array([1, 2, 0, 3, 1, 1])
    aw = arr(6, low=0.1, high=2.0)
    check(lambda t, x, f: t.cov(x, fweights=f), x, fw)
    check(lambda t, x, a: t.cov(x, aweights=a), x, aw)
    check(lambda t, x, f, a: t.cov(x, fweights=f, aweights=a), x, fw, aw)
    check(lambda t, x, f, a: t.cov(x, correction=0, fweights=f, aweights=a), x, fw, aw)
    check(lambda t, x, a: t.cov(x, correction=3, aweights=a), x, aw)
    check_grad(lambda t, x, a: t.cov(x, fweights=t.tensor([1, 2, 0, 3, 1, 1]), aweights=a), x, aw)


def test_cov_edges_and_errors() -> None:
    with pytest.warns(UserWarning):
        check(lambda t, x: t.cov(x), randn(2, 1))  # no degrees of freedom: inf/nan
    check(lambda t, x: t.corrcoef(x), np.ones((2, 4), dtype=np.float32))  # zero variance
    check(lambda t, x: t.corrcoef(x), np.ones(4, dtype=np.float32))
    check_raises(lambda t, x: t.cov(x), randn(2, 2, 2))
    check_raises(lambda t, x: t.cov(x), np.array([[True, False]]))
    check_raises(lambda t, x: t.corrcoef(x), randn(2, 2, 2))
    x = randn(2, 3)
    check_raises(lambda t, x, f: t.cov(x, fweights=f), x, np.array([1.0, 2.0, 3.0]))
    check_raises(lambda t, x, f: t.cov(x, fweights=f), x, np.array([1, -2, 3]))
    check_raises(lambda t, x, f: t.cov(x, fweights=f), x, np.array([1, 2]))
    check_raises(lambda t, x, f: t.cov(x, fweights=f), x, np.array([0, 0, 0]))
    check_raises(lambda t, x, a: t.cov(x, aweights=a), x, np.array([1, 2, 3]))
    check_raises(lambda t, x, a: t.cov(x, aweights=a), x, np.array([1.0, -2.0, 3.0]))


def test_cov_corrcoef_gradients() -> None:
    check_grad(lambda t, x: t.cov(x), randn(3, 7))
    check_grad(lambda t, x: t.corrcoef(x), randn(3, 7))


# -- trapezoid ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["trapezoid", "trapz"])
def test_trapezoid(name: str) -> None:
    check(lambda t, y: getattr(t, name)(y), randn(7))
    check(lambda t, y: getattr(t, name)(y, dx=0.25), randn(3, 7))
    check(lambda t, y: getattr(t, name)(y, dim=0), randn(3, 7, dtype="float64"))
    check(lambda t, y, x: getattr(t, name)(y, x), randn(2, 5), np.sort(randn(5)))
    check(lambda t, y, x: getattr(t, name)(y, x, dim=0), randn(5, 2), np.sort(randn(5)))
    check(lambda t, y, x: getattr(t, name)(y, x), randn(2, 5), np.sort(randn(2, 5), 1))
    check(lambda t, y, x: getattr(t, name)(y, x), randn(3, 2, 5), np.sort(randn(2, 5), 1))
    check(lambda t, y: getattr(t, name)(y), np.array([1, 2, 3]))  # integers -> float
    check(lambda t, y: getattr(t, name)(y), np.zeros((2, 0), dtype=np.float32))
    check(lambda t, y: getattr(t, name)(y), np.array([2.0], dtype=np.float32))


def test_trapezoid_errors_and_grads() -> None:
    check_raises(lambda t, y, x: t.trapezoid(y, x), randn(5), randn(4))
    check_raises(lambda t, y: t.trapezoid(y), np.array([True, False]))
    check_raises(lambda t, y: t.trapezoid(y, dim=2), randn(5))
    check_raises(lambda t, y, x: t.trapezoid(y, x), randn(3, 5), randn(2, 5))
    check_grad(lambda t, y: t.trapezoid(y, dx=0.5), randn(3, 6))
    check_grad(lambda t, y, x: t.trapezoid(y, x), randn(3, 6), randn(6))
    check_grad(lambda t, y, x: t.cumulative_trapezoid(y, x), randn(3, 6), randn(3, 6))


def test_cumulative_trapezoid() -> None:
    check(lambda t, y: t.cumulative_trapezoid(y), randn(7))
    check(lambda t, y: t.cumulative_trapezoid(y, dx=2.5, dim=0), randn(4, 3))
    check(lambda t, y, x: t.cumulative_trapezoid(y, x), randn(2, 5), np.sort(randn(5)))
    check(lambda t, y: t.cumulative_trapezoid(y), np.array([1, 2, 3]))
    check(lambda t, y: t.cumulative_trapezoid(y), np.zeros((2, 0), dtype=np.float32))
    check(lambda t, y: t.cumulative_trapezoid(y), np.array([2.0], dtype=np.float32))


# -- combinations / vander ------------------------------------------------------------------------


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(r: int, with_replacement: bool) -> None:
    check(lambda t, x: t.combinations(x, r, with_replacement), arr(4, dtype="int64", high=9))
    check(lambda t, x: t.combinations(x, r=r, with_replacement=with_replacement), randn(3))


def test_combinations_edges() -> None:
    check(lambda t, x: t.combinations(x), np.zeros(0, dtype=np.float32))
    check(lambda t, x: t.combinations(x), np.array([1.0], dtype=np.float32))
    check_raises(lambda t, x: t.combinations(x), randn(2, 3))
    check_raises(lambda t, x: t.combinations(x, -1), randn(3))
    check_grad(lambda t, x: t.combinations(x, 3), randn(5))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_vander(dtype: str) -> None:
    x = arr(4, dtype=dtype, low=-3, high=4)
    check(lambda t, x: t.vander(x), x)
    check(lambda t, x: t.vander(x, N=6), x)
    check(lambda t, x: t.vander(x, 3, increasing=True), x)
    check(lambda t, x: t.vander(x, N=0), x)
    check(lambda t, x: t.vander(x, N=1), x)


def test_vander_edges() -> None:
    check(lambda t, x: t.vander(x), np.zeros(0, dtype=np.float32))
    check_raises(lambda t, x: t.vander(x), np.array(2.0, dtype=np.float32))
    check_raises(lambda t, x: t.vander(x, N=-1), randn(3))
    # torch cannot differentiate vander (its cumprod writes in place): d x^k/dx = k x^(k-1)
    x = lt.tensor([0.5, -1.5, 2.0], requires_grad=True)
    lt.vander(x, 4).sum().backward()
    v = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), 3 * v**2 + 2 * v + 1, rtol=1e-6)


# -- scatter_reduce -------------------------------------------------------------------------------

IDX0 = np.array([[0, 1, 0], [2, 0, 2], [0, 1, 1], [2, 2, 0]])  # (4, 3) into a (3, 3) input


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce: str, include_self: bool) -> None:
    def fn(t: Any, x: Any, s: Any, i: Any) -> Any:
        return t.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)

    check(fn, randn(3, 3), randn(4, 3), IDX0)
    check(fn, randn(3, 3, dtype="float64"), randn(4, 3, dtype="float64"), IDX0)
    check(
        fn, arr(3, 3, dtype="int64", low=-9, high=9), arr(4, 3, dtype="int64", low=-9, high=9), IDX0
    )
    check(
        lambda t, x, s, i: x.scatter_reduce(1, i, s, reduce, include_self=include_self),
        randn(3, 4),
        randn(3, 2),
        np.array([[3, 3], [0, 1], [1, 1]]),
    )


def test_scatter_reduce_in_place_grads_and_errors() -> None:
    def in_place(t: Any, x: Any, s: Any, i: Any) -> Any:
        y = x.clone()
        y.scatter_reduce_(0, i, s, "sum")
        return y

    check(in_place, randn(3, 3), randn(4, 3), IDX0)
    check(lambda t, x, s, i: t.scatter_reduce(x, 0, i, s, "max"), randn(3, 3), randn(4, 3), IDX0)
    check(lambda t, x, s, i: t.scatter_reduce(x, 0, i, s, "min"), randn(3, 3), randn(4, 3), IDX0)
    for reduce in ("sum", "mean", "amax"):
        check_grad(
            lambda t, x, s, i, r=reduce: t.scatter_reduce(x, 0, i, s, r),
            randn(3, 3),
            randn(4, 3),
            IDX0,
        )
    check_grad(
        lambda t, x, s, i: t.scatter_reduce(x, 0, i, s, "mean", include_self=False),
        randn(3, 3),
        randn(4, 3),
        IDX0,
    )
    check_raises(
        lambda t, x, s, i: t.scatter_reduce(x, 0, i, s, "bogus"), randn(3, 3), randn(4, 3), IDX0
    )
    check_raises(
        lambda t, x, s, i: t.scatter_reduce(x, 0, i, s.double(), "sum"),
        randn(3, 3),
        randn(4, 3),
        IDX0,
    )


# -- renorm, narrow_copy and the view writers -------------------------------------------------


def test_renorm() -> None:
    check(lambda t, x: x.renorm(2, 0, 1.0), randn(3, 4))
    check(lambda t, x: t.renorm(x, 1, 1, 0.5), randn(3, 4, dtype="float64"))
    check(lambda t, x: x.renorm(float("inf"), 2, 0.7), randn(2, 3, 4))
    check(lambda t, x: x.clone().renorm_(2, 1, 0.3), randn(3, 4))
    check_grad(lambda t, x: x.renorm(2, 0, 1.0), randn(3, 4))
    check_raises(lambda t, x: x.renorm(2, 0, -1.0), randn(3, 4))


def test_narrow_copy_and_masked_scatter() -> None:
    check(lambda t, x: x.narrow_copy(1, 1, 2), randn(3, 4))
    check(lambda t, x: t.narrow_copy(x, 0, 0, 0), randn(3, 4))
    mask = np.array([True, False, True, True])
    check(lambda t, x, m, s: x.masked_scatter(m, s), randn(3, 4), mask, randn(3, 4))
    check(lambda t, x, m, s: t.masked_scatter(x, m, s), randn(3, 4), randn(3, 4) > 0, randn(20))
    check(lambda t, x, m, s: x.masked_scatter(m, s), randn(2), np.array([False, False]), randn(0))
    check_grad(
        lambda t, x, m, s: x.masked_scatter(m, s), randn(3, 4), mask, randn(3, 4), diff=[0, 2]
    )
    check_raises(lambda t, x, m, s: x.masked_scatter(m, s), randn(3, 4), mask, randn(2))
    check_raises(lambda t, x, m, s: x.masked_scatter(m.int(), s), randn(3, 4), mask, randn(12))


def test_select_slice_diagonal_scatter() -> None:
    check(lambda t, x, s: t.select_scatter(x, s, 0, 1), randn(3, 4), randn(4))
    check(lambda t, x, s: x.select_scatter(s, -1, -1), randn(3, 4), randn(3))
    check(lambda t, x, s: t.slice_scatter(x, s, 1, 1, None, 2), randn(3, 4), randn(3, 2))
    check(lambda t, x, s: t.slice_scatter(x, s), randn(3, 4), randn(3, 4))
    check(lambda t, x, s: t.slice_scatter(x, s, dim=0, start=-2), randn(3, 4), randn(2, 4))
    check(lambda t, x, s: t.diagonal_scatter(x, s), randn(3, 4), randn(3))
    check(lambda t, x, s: t.diagonal_scatter(x, s, 1), randn(3, 4), randn(3))
    check(lambda t, x, s: t.diagonal_scatter(x, s, -1, 1, 2), randn(2, 3, 3), randn(2, 2))
    check_grad(lambda t, x, s: t.diagonal_scatter(x, s, 1), randn(3, 4), randn(3))
    check_grad(lambda t, x, s: t.slice_scatter(x, s, 1, 0, 4, 2), randn(3, 4), randn(3, 2))
    check_raises(lambda t, x, s: t.select_scatter(x, s, 0, 1), randn(3, 4), randn(3))
    check_raises(lambda t, x, s: t.diagonal_scatter(x, s), randn(3, 4), randn(4))
