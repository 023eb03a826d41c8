"""histogram, histogramdd, unique_consecutive, nanmedian and nanquantile
(lazytorch.ops.statistics) against torch: values, edge cases, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazytorch as lt
from helpers import arr, check, check_grad, check_raises

NAN = float("nan")

# Compositions of ops the cpp backend is tested on elsewhere: each case here would compile
# its own programs (minutes in all), so the matrix runs them on the interpreter; one case
# per op runs on cpp too (test_on_cpp).
pytestmark = pytest.mark.backends("interpreter")


def with_nans(*shape: int, dtype: str = "float64", frac: float = 0.3, seed: int = 0) -> np.ndarray:
    a = arr(*shape, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed + 1)
    a[rng.random(shape) < frac] = np.nan
    return a


# -- histogram ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram(dtype: str) -> None:
    a = arr(4, 5, dtype=dtype)
    check(lambda t, x: t.histogram(x), a)
    check(lambda t, x: t.histogram(x, 7), a)
    check(lambda t, x: x.histogram(bins=3, range=(-1.0, 1.0)), a)
    check(lambda t, x: t.histogram(x, 5, density=True), a)
    w = arr(4, 5, dtype=dtype, low=0, high=2)
    check(lambda t, x, w: t.histogram(x, 4, weight=w), a, w)
    check(lambda t, x, w: t.histogram(x, 4, weight=w, density=True, range=(-1.5, 1.0)), a, w)
    edges = np.array([-2.0, -0.5, 0.0, 0.3, 2.0], dtype=dtype)
    check(lambda t, x, e: t.histogram(x, e), a, edges)
    check(lambda t, x, e: t.histogram(x, bins=e, density=True), a, edges)
    check(lambda t, x, e, w: t.histogram(x, e, weight=w), a, edges, w)


def test_histogram_edge_cases() -> None:
    # values on the edges, the right edge, NaN, outside the range, one value, empty input
    a = np.array([0.0, 0.25, 0.5, 1.0, 1.0, NAN, -3.0, 7.0], dtype=np.float32)
    check(lambda t, x: t.histogram(x, 4, range=(0.0, 1.0)), a)
    check(lambda t, x: t.histogram(x, np.array([0.0, 0.5, 1.0], dtype=np.float32)), a[:5])
    check(lambda t, x: t.histogram(x, 3), np.full(4, 2.5, dtype=np.float32))
    check(lambda t, x: t.histogram(x, 3), np.zeros(0, dtype=np.float32))
    check(lambda t, x: t.histogram(x, 3), np.float64(1.5).reshape(()))
    check(lambda t, x: t.histogram(x, 10), np.array([0.1, 0.2, 0.3, 0.7], dtype=np.float32))


def test_histogram_out_and_errors() -> None:
    a = arr(6)

    def with_out(t, x):
        h, e = t.zeros(3), t.zeros(4)
        r = t.histogram(x, 3, out=(h, e))
        return r, h, e

    check(with_out, a)
    check_raises(lambda t, x: t.histogram(x.long(), 3), a)
    check_raises(lambda t, x: t.histogram(x.half(), 3), a)
    check_raises(lambda t, x: t.histogram(x.bfloat16(), 3), a)
    check_raises(lambda t, x: t.histogram(x, 0), a)
    check_raises(lambda t, x: t.histogram(x, 3, range=(1.0, 0.0)), a)
    check_raises(lambda t, x: t.histogram(x, t.tensor([0.0, 1.0], dtype=t.float64)), a)
    check_raises(lambda t, x: t.histogram(x, 3, weight=t.ones(5)), a)
    check_raises(lambda t, x: t.histogram(x, 3, range=(0.0, float("inf"))), a)


def test_histogram_result_type() -> None:
    r = lt.histogram(lt.tensor([1.0, 2.0]), 2)
    assert type(r).__name__ == "histogram" and r.hist is r[0] and r.bin_edges is r[1]


# -- histogramdd --------------------------------------------------------------------------------
def test_histogramdd() -> None:
    p = arr(20, 3, dtype="float64")
    check(lambda t, x: t.histogramdd(x), p)
    check(lambda t, x: t.histogramdd(x, bins=4), p)
    check(lambda t, x: t.histogramdd(x, bins=[2, 3, 4], density=True), p)
    check(lambda t, x: t.histogramdd(x, [2, 3, 2], range=[-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]), p)
    w = arr(20, dtype="float64", low=0, high=1)
    check(lambda t, x, w: t.histogramdd(x, 3, weight=w), p, w)
    e = [np.array([-2.0, 0.0, 2.0]), np.array([-1.0, 0.5, 1.0, 1.5]), np.array([-2.0, 2.0])]
    check(lambda t, x, a, b, c: t.histogramdd(x, [a, b, c]), p, *e)
    check(lambda t, x, a, b, c: t.histogramdd(x, bins=[a, b, c], density=True), p, *e)
    check(lambda t, x: t.histogramdd(x.reshape(4, 5, 3), bins=2), p)
    check(lambda t, x: t.histogramdd(x[:, :1], bins=5), p.astype(np.float32))
    check_raises(lambda t, x: t.histogramdd(x, bins=[2, 3]), p)
    check_raises(lambda t, x: t.histogramdd(x[:, 0], bins=3), p)
    check_raises(lambda t, x: t.histogramdd(x.long(), bins=3), p)
    r = lt.histogramdd(lt.zeros(3, 2), bins=2)
    assert type(r).__name__ == "histogramdd" and isinstance(r.bin_edges, tuple)


# -- unique_consecutive -------------------------------------------------------------------------
@pytest.mark.parametrize("ri", [False, True])
@pytest.mark.parametrize("rc", [False, True])
def test_unique_consecutive(ri: bool, rc: bool) -> None:
    a = np.array([[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 1, 1], [3, 3, 1, 1], [1, 1, 2, 2]])
    kw = {"return_inverse": ri, "return_counts": rc}
    check(lambda t, x: t.unique_consecutive(x, **kw), a)
    check(lambda t, x: x.unique_consecutive(**kw), a.astype(np.float32))
    check(lambda t, x: t.unique_consecutive(x, dim=0, **kw), a)
    check(lambda t, x: t.unique_consecutive(x, dim=1, **kw), a)
    check(lambda t, x: t.unique_consecutive(x, dim=-1, **kw), a)
    check(lambda t, x: t.unique_consecutive(x, **kw), np.zeros(0, dtype=np.int64))
    check(lambda t, x: t.unique_consecutive(x, **kw), np.array([True, True, False, True]))
    check(lambda t, x: t.unique_consecutive(x, **kw), np.int64(3).reshape(()))
    check_raises(lambda t, x: t.unique_consecutive(x, dim=0), np.int64(3).reshape(()))


# -- nanmedian ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nanmedian(dtype: str) -> None:
    a = with_nans(4, 5, 6, dtype=dtype)
    check(lambda t, x: t.nanmedian(x), a)
    for d in (0, 1, -1):
        check(lambda t, x, d=d: t.nanmedian(x, d), a)
        check(lambda t, x, d=d: x.nanmedian(dim=d, keepdim=True), a)
    # a row of NaN: the value is NaN (torch's index there is whatever its selection leaves)
    a[1, 2, :] = np.nan
    check(lambda t, x: t.nanmedian(x, -1).values, a)
    check(lambda t, x: t.nanmedian(x, 0, keepdim=True), np.full((2, 3), np.nan, dtype=dtype))
    check(lambda t, x: t.nanmedian(x), np.full(3, np.nan, dtype=dtype))
    check(lambda t, x: t.nanmedian(x), np.zeros(0, dtype=dtype))
    check(lambda t, x: t.nanmedian(x, 0), np.float64(2.0).reshape(()))
    check(lambda t, x: t.nanmedian(x, 0, True), np.float64(2.0).reshape(()))
    check(lambda t, x: t.nanmedian(x), np.float64(np.nan).reshape(()))
    check(lambda t, x: t.nanmedian(x, 1), arr(3, 7, dtype="int64", low=-5, high=5))
    check(lambda t, x: t.nanmedian(x), arr(3, 7, dtype="int32", low=-50, high=50))
    check_raises(lambda t, x: t.nanmedian(x, 1), np.zeros((2, 0), dtype=dtype))
    check_raises(lambda t, x: t.nanmedian(x, 3), a)
    check_raises(lambda t, x: t.nanmedian(x > 0), a)
    check_raises(lambda t, x: t.nanmedian(x > 0, 0), a)


def test_nanmedian_out() -> None:
    def with_out(t, x):
        v, i = t.zeros(3, dtype=t.float64), t.zeros(3, dtype=t.int64)
        r = t.nanmedian(x, 1, out=(v, i))
        return r, v, i

    check(with_out, with_nans(3, 4))
    check(lambda t, x: t.nanmedian(x, out=t.zeros((), dtype=t.float64)), with_nans(3, 4))


def test_nanmedian_ties_and_grad() -> None:
    # ties: torch picks among equal values by its selection; the stable order agrees here
    check(lambda t, x: t.nanmedian(x, 0), np.array([NAN, 1.0, NAN, 1.0, 1.0]))
    check(lambda t, x: t.nanmedian(x, 1), np.array([[3.0, 1, 2, NAN], [5, 6, 7, 8]]))
    a = with_nans(3, 8, seed=3)
    check_grad(lambda t, x: t.nanmedian(x, 1).values, a)
    check_grad(lambda t, x: t.nanmedian(x), a)


# -- nanquantile ----------------------------------------------------------------------------------
INTERP = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("interpolation", INTERP)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nanquantile(interpolation: str, dtype: str) -> None:
    a = with_nans(4, 6, 5, dtype=dtype)
    a[0, 1, :] = np.nan
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0], dtype=dtype)
    kw = {"interpolation": interpolation}
    check(lambda t, x: t.nanquantile(x, 0.3, **kw), a)
    check(lambda t, x, q: t.nanquantile(x, q, **kw), a, q)
    for d in (0, 2, -2):
        check(lambda t, x, d=d: t.nanquantile(x, 0.4, dim=d, **kw), a)
        check(lambda t, x, q, d=d: x.nanquantile(q, d, True, **kw), a, q)
    check(lambda t, x, q: t.nanquantile(x, q, keepdim=True, **kw), a, q)
    check(lambda t, x: t.nanquantile(x, 0.5, **kw), np.float64(2.0).reshape(()).astype(dtype))
    check(
        lambda t, x: t.nanquantile(x, 0.5, 0, True, **kw), np.float64(2.0).reshape(()).astype(dtype)
    )
    # without NaN it is quantile
    b = arr(5, 7, dtype=dtype)
    check(lambda t, x, q: t.nanquantile(x, q, 1, **kw), b, q)
    if interpolation in ("linear", "midpoint"):
        check_grad(lambda t, x: t.nanquantile(x, 0.3, 1, **kw), a)


def test_nanquantile_errors() -> None:
    a = with_nans(3, 4)
    check_raises(lambda t, x: t.nanquantile(x, 1.5), a)
    check_raises(lambda t, x: t.nanquantile(x, t.tensor([0.5, 2.0], dtype=t.float64)), a)
    check_raises(lambda t, x: t.nanquantile(x, t.tensor([0.5])), a)  # dtype differs
    check_raises(lambda t, x: t.nanquantile(x, t.ones(2, 2, dtype=t.float64)), a)
    check_raises(lambda t, x: t.nanquantile(x.long(), 0.5), a)
    check_raises(lambda t, x: t.nanquantile(x, 0.5, interpolation="cubic"), a)
    check_raises(lambda t, x: t.nanquantile(x, 0.5, dim=2), a)
    check_raises(lambda t, x: t.nanquantile(x, 0.5), np.zeros(0))
    check_raises(lambda t, x: t.nanquantile(x, 0.5, dim=1), np.zeros((2, 0)))


def test_nanquantile_out() -> None:
    def with_out(t, x):
        o = t.zeros(4, dtype=t.float64)
        r = t.nanquantile(x, 0.5, dim=0, out=o)
        return r, o

    check(with_out, with_nans(3, 4))


@pytest.mark.backends("interpreter", "cpp")
def test_on_cpp() -> None:
    a = with_nans(3, 5)
    check(lambda t, x: t.histogram(x, 4, range=(-1.0, 1.0)), a)
    check(lambda t, x: t.nanmedian(x, 1), a)
    check(lambda t, x: t.nanquantile(x, 0.3, dim=1), a)
