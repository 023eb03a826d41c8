"""lgamma, digamma, polygamma, erfinv, the modified Bessel functions, ndtr/ndtri/log_ndtr,
entr, xlog1py, logaddexp2, mvlgamma and torch.special, against torch: values on dense grids
with the edge values (0, -0, poles, tiny, huge, +-inf, NaN) in float32 and float64, and
gradients (first and second) in float64.

Tolerances are |ours - torch| <= rtol * |torch| + atol with NaN and inf where torch has them.
float64: rtol 1e-13 where the algorithm is torch's own (digamma, trigamma, zeta, erfinv, the
Chebyshev series, ndtri), measured max 2.3e-15; lgamma (torch takes it from the C library,
ours is Stirling's series) measured 1.1e-14 relative away from its zeros and 3e-15
absolute near them (x = 1, 2, -2.46...), so atol 1e-14 there. float32: rtol 4 ulp, with an
atol for the functions that cross zero (digamma's cancellation at -27.76 is 1.9e-6 in
torch's own float arithmetic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import lazytorch as lt

EDGES = [
    0.0, -0.0, -1.0, -2.0, -3.0, -2.5, -0.5, 0.5, 1.0, 2.0, 3.0, 1e-30, -1e-30, 1e6, 1e20,
    -1e20, -7.3, -20.25, -23.7, math.inf, -math.inf, math.nan,
]  # fmt: skip


def grid(dtype: str) -> np.ndarray:
    v = EDGES + list(np.linspace(-30, 30, 1201)) + list(np.geomspace(1e-8, 1e8, 200))
    if dtype == "float64":
        v += [1e-300, -1e-300, 1e300]
    return np.array(v, dtype=dtype)


def assert_matches(ours: np.ndarray, theirs: np.ndarray, x: np.ndarray, rtol: float, atol: float):
    assert ours.dtype == theirs.dtype
    nan_t, nan_o = np.isnan(theirs), np.isnan(ours)
    assert (nan_t == nan_o).all(), f"NaN differs at {x[nan_t != nan_o][:8]}"
    inf = np.isinf(theirs) | np.isinf(ours)
    assert (ours[inf] == theirs[inf]).all(), f"inf differs at {x[inf][ours[inf] != theirs[inf]]}"
    fin = ~(inf | nan_t)
    err = np.abs(ours[fin].astype(np.float64) - theirs[fin])
    bound = rtol * np.abs(theirs[fin].astype(np.float64)) + atol
    bad = err > bound
    assert not bad.any(), (
        f"max excess at x={x[fin][bad][:5]}: ours {ours[fin][bad][:5]} torch {theirs[fin][bad][:5]}"
    )


F32 = 4 * 2.0**-23
# name: (torch fn, lazytorch fn, {dtype: (rtol, atol)}, domain filter or None)
UNARY = {
    "lgamma": (torch.lgamma, lt.lgamma, {"float64": (1e-13, 1e-14), "float32": (F32, 4e-6)}),
    "digamma": (torch.digamma, lt.digamma, {"float64": (1e-13, 1e-14), "float32": (F32, 2e-6)}),
    "erfinv": (torch.erfinv, lt.erfinv, {"float64": (1e-13, 0), "float32": (F32, 0)}),
    "i0": (torch.i0, lt.i0, {"float64": (1e-14, 0), "float32": (F32, 0)}),
    "i0e": (torch.special.i0e, lt.special.i0e, {"float64": (1e-14, 0), "float32": (F32, 0)}),
    # float32: torch evaluates shorter float Chebyshev series in float arithmetic, 1.0e-6
    # relative from scipy's i1/i1e (measured); ours are 5.6e-8 from scipy (double, rounded once)
    "i1": (torch.special.i1, lt.special.i1, {"float64": (1e-14, 0), "float32": (1.2e-6, 0)}),
    "i1e": (torch.special.i1e, lt.special.i1e, {"float64": (1e-14, 0), "float32": (1.2e-6, 0)}),
    "ndtr": (torch.special.ndtr, lt.special.ndtr, {"float64": (1e-13, 2e-16), "float32": (F32, 6e-8)}),
    "ndtri": (torch.special.ndtri, lt.special.ndtri, {"float64": (1e-14, 0), "float32": (F32, 0)}),
    "log_ndtr": (
        # float32 atol: the results below float32's smallest normal (1.2e-38) are subnormal
        torch.special.log_ndtr, lt.special.log_ndtr, {"float64": (1e-12, 0), "float32": (F32, 1.2e-38)}
    ),
    "entr": (torch.special.entr, lt.special.entr, {"float64": (1e-15, 0), "float32": (F32, 0)}),
}  # fmt: skip
PROB_INPUTS = {"erfinv", "ndtri"}


def inputs_for(name: str, dtype: str) -> np.ndarray:
    if name == "erfinv":
        # |y| -> 1 is ill-conditioned (dx/dy ~ 1e15 at 1 - 1e-16): a last-bit difference in erf
        # moves torch's own Newton step, so the grid stops at 1 - 1e-12 there
        v = [*list(np.linspace(-1.2, 1.2, 2401)), 1 - 1e-12, -1 + 1e-12, 0.7, -0.7, 1e-30, -0.0]
        return np.array([*v, math.nan, math.inf, -math.inf, 1.0, -1.0], dtype=dtype)
    if name == "ndtri":
        v = list(np.linspace(-0.1, 1.1, 1201)) + list(np.geomspace(1e-300, 0.1, 200))
        return np.array([*v, 0.0, 1.0, math.nan], dtype=dtype)
    return grid(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values(name: str, dtype: str) -> None:
    tf, lf, tols = UNARY[name]
    x = inputs_for(name, dtype)
    with np.errstate(all="ignore"):
        theirs = tf(torch.from_numpy(x)).numpy()
    ours = lf(lt.tensor(x)).numpy()
    assert_matches(ours, theirs, x, *tols[dtype])


# polygamma(n >= 2, x) is computed for x > -24 (see lazytorch.ops.special_math._ZETA_NEG)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_values(n: int, dtype: str) -> None:
    x = grid(dtype)
    if n >= 2:
        x = x[~(x <= -24)]
    if n == 1 and dtype == "float32":
        # at the poles torch's float sin(pi x) is not 0 but ~1e-7: both give huge finite values
        # that the last bits of sin decide (measured: within 1e-6 relative of each other)
        pole = (x < 0) & (x == np.trunc(x)) & (x > -1e6)
        t = torch.polygamma(1, torch.from_numpy(x[pole])).numpy()
        o = lt.polygamma(1, lt.tensor(x[pole])).numpy()
        np.testing.assert_allclose(o, t, rtol=2e-6)
        x = x[~pole]
    rtol = 1e-13 if dtype == "float64" else F32
    atol = 1e-14 if dtype == "float64" else 2e-6
    with np.errstate(all="ignore"):
        theirs = torch.polygamma(n, torch.from_numpy(x)).numpy()
    ours = lt.polygamma(n, lt.tensor(x)).numpy()
    assert_matches(ours, theirs, x, rtol, atol)


def _grad(lib, fn, x: np.ndarray, create: bool = False):
    t = lib.tensor(x, requires_grad=True)
    (g,) = lib.autograd.grad(fn(lib, t).sum(), t, create_graph=create)
    if not create:
        return g.detach().numpy()
    (gg,) = lib.autograd.grad(g.sum(), t)
    return g.detach().numpy(), gg.numpy()


GRAD_X = np.concatenate([np.linspace(-9.75, 9.75, 79), [0.0, 1e-300, 30.0, 1e5, math.nan]])
GRADS = {
    "lgamma": (lambda m, t: m.lgamma(t), GRAD_X),
    "digamma": (lambda m, t: m.digamma(t), GRAD_X),
    "polygamma1": (lambda m, t: m.polygamma(1, t), GRAD_X),
    "polygamma2": (lambda m, t: m.polygamma(2, t), GRAD_X),
    "erfinv": (lambda m, t: m.erfinv(t), np.linspace(-0.999, 0.999, 101)),
    "i0": (lambda m, t: m.i0(t), GRAD_X),
    "i0e": (lambda m, t: m.special.i0e(t), GRAD_X),
    "i1": (lambda m, t: m.special.i1(t), GRAD_X),
    "i1e": (lambda m, t: m.special.i1e(t), GRAD_X),
    "ndtr": (lambda m, t: m.special.ndtr(t), GRAD_X),
    "ndtri": (lambda m, t: m.special.ndtri(t), np.linspace(1e-6, 1 - 1e-6, 101)),
    "log_ndtr": (lambda m, t: m.special.log_ndtr(t), GRAD_X),
    "entr": (lambda m, t: m.special.entr(t), np.abs(GRAD_X)),
    "xlog1py": (lambda m, t: m.special.xlog1py(t, t * 0.5), GRAD_X),
    "logaddexp2": (lambda m, t: m.logaddexp2(t, 1.5 - t), GRAD_X),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name: str) -> None:
    fn, x = GRADS[name]
    with np.errstate(all="ignore"):
        theirs = _grad(torch, fn, x)
    assert_matches(_grad(lt, fn, x), theirs, x, 1e-12, 1e-15)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "i1", "i0e"])
def test_second_derivatives(name: str) -> None:
    fn, x = GRADS[name]
    x = x[np.isfinite(x) & (np.abs(x) < 1e3) & (x != 0)]
    g_t, gg_t = _grad(torch, fn, x, create=True)
    g_o, gg_o = _grad(lt, fn, x, create=True)
    assert_matches(g_o, g_t, x, 1e-12, 1e-15)
    assert_matches(gg_o, gg_t, x, 1e-11, 1e-14)


def test_i1_gradient_limit_at_zero_and_nan() -> None:
    x = np.array([0.0, -0.0, 1e-300, math.nan])
    for name in ("i1", "i1e"):
        fn = GRADS[name][0]
        assert_matches(_grad(lt, fn, x), _grad(torch, fn, x), x, 0, 0)


def test_grad_fn_and_methods() -> None:
    x = lt.tensor([0.5, 2.5], requires_grad=True)
    assert lt.lgamma(x).grad_fn is not None
    a = torch.tensor([0.5, 2.5, 4.0])
    b = lt.tensor([0.5, 2.5, 4.0])
    for m in ("lgamma", "digamma", "erfinv", "i0"):
        np.testing.assert_allclose(getattr(b, m)().numpy(), getattr(a, m)().numpy(), rtol=1e-6)
        bc, ac = b.clone() / 5, a.clone() / 5
        getattr(bc, m + "_")()
        getattr(ac, m + "_")()
        np.testing.assert_allclose(bc.numpy(), ac.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.polygamma(2).numpy(), a.polygamma(2).numpy(), rtol=1e-6)
    bc, ac = b.clone(), a.clone()
    bc.polygamma_(1)
    ac.polygamma_(1)
    np.testing.assert_allclose(bc.numpy(), ac.numpy(), rtol=1e-6)
    np.testing.assert_allclose((b + 1).mvlgamma(2).numpy(), (a + 1).mvlgamma(2).numpy(), rtol=1e-6)


def test_dtypes_shapes_and_out() -> None:
    # integers compute in the default float dtype; 0-d, size-0 and broadcasting keep shapes
    assert lt.lgamma(lt.tensor([1, 2, 3])).dtype == lt.float32
    assert lt.lgamma(lt.tensor(3.0)).shape == ()
    assert lt.digamma(lt.zeros(0, 3)).shape == (0, 3)
    assert lt.polygamma(2, lt.zeros(2, 0)).shape == (2, 0)
    a, b = np.linspace(-3, 3, 6).reshape(2, 3), np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(
        lt.logaddexp2(lt.tensor(a), lt.tensor(b)).numpy(),
        torch.logaddexp2(torch.tensor(a), torch.tensor(b)).numpy(),
        rtol=1e-15,
    )
    np.testing.assert_allclose(
        lt.special.xlog1py(lt.tensor(a), lt.tensor(b)).numpy(),
        torch.special.xlog1py(torch.tensor(a), torch.tensor(b)).numpy(),
        rtol=1e-15,
    )
    out = lt.empty(3, dtype=lt.float64)
    lt.lgamma(lt.tensor([0.5, 1.5, 2.5], dtype=lt.float64), out=out)
    np.testing.assert_allclose(
        out.numpy(), torch.lgamma(torch.tensor([0.5, 1.5, 2.5])).numpy(), rtol=1e-7
    )
    h = lt.tensor([0.5, 3.0], dtype=lt.float16)
    assert lt.lgamma(h).dtype == lt.float16 and lt.digamma(h).dtype == lt.float16


def test_logaddexp2_edges() -> None:
    v = [0.0, 1.0, -5.0, 1e30, -1e30, math.inf, -math.inf, math.nan]
    a, b = np.meshgrid(v, v)
    theirs = torch.logaddexp2(torch.tensor(a), torch.tensor(b)).numpy()
    ours = lt.logaddexp2(lt.tensor(a), lt.tensor(b)).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_entr_xlog1py_edges() -> None:
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, math.nan, 0.0])
    y = np.array([-1.0, math.inf, math.nan, -1.0, 3.0, 1.0, -2.0])
    np.testing.assert_array_equal(
        lt.special.xlog1py(lt.tensor(x), lt.tensor(y)).numpy(),
        torch.special.xlog1py(torch.tensor(x), torch.tensor(y)).numpy(),
    )


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="does not support negative n"):
        lt.polygamma(-1, lt.ones(2))
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        lt.mvlgamma(lt.tensor([0.3]), 2)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        lt.mvlgamma(lt.tensor([3.0]), 0)


SPECIAL_ALIASES = [
    ("erf", (0.3,)), ("erfc", (0.3,)), ("erfinv", (0.3,)), ("expit", (0.3,)), ("exp2", (0.3,)),
    ("expm1", (0.3,)), ("log1p", (0.3,)), ("logit", (0.3,)), ("gammaln", (2.5,)),
    ("digamma", (2.5,)), ("psi", (2.5,)), ("sinc", (0.3,)), ("round", (2.5,)), ("i0", (0.3,)),
]  # fmt: skip


@pytest.mark.parametrize("name,args", SPECIAL_ALIASES, ids=[a[0] for a in SPECIAL_ALIASES])
def test_special_aliases(name: str, args: tuple[float, ...]) -> None:
    x = np.array([args[0], -args[0] / 3, 1.7])
    theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
    ours = getattr(lt.special, name)(lt.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_special_reductions_and_more() -> None:
    x = np.linspace(-2, 3, 12).reshape(3, 4)
    for name, call in [
        ("softmax", lambda m, t: m.special.softmax(t, 1)),
        ("log_softmax", lambda m, t: m.special.log_softmax(t, 0)),
        ("logsumexp", lambda m, t: m.special.logsumexp(t, 1, keepdim=True)),
        ("multigammaln", lambda m, t: m.special.multigammaln(t.abs() + 2, 3)),
        ("polygamma", lambda m, t: m.special.polygamma(3, t.abs() + 0.1)),
        ("xlogy", lambda m, t: m.special.xlogy(t, t.abs())),
    ]:
        theirs = call(torch, torch.tensor(x)).numpy()
        np.testing.assert_allclose(call(lt, lt.tensor(x)).numpy(), theirs, rtol=1e-13, err_msg=name)


def test_special_is_torch_special_under_the_import_hook() -> None:
    import importlib

    assert importlib.import_module("lazytorch.special") is lt.special


def test_the_references_erf_is_libms_bit_for_bit():
    # The reference's erf runs libm's erf in one native loop (native/special.cpp) instead
    # of math.erf per element: the values must be math.erf's exactly, specials included.
    from lazytorch.ir.prims import elementwise as prims

    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.standard_normal(20_000) * 3,
            np.linspace(-7, 7, 10_001),
            [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-310, -5e-324, 1e-8, 6.0, 27.0],
        ]
    )
    got = prims._erf(x)
    assert prims._NATIVE_ERF not in (None, ...), "lazytorch._C has no erf_f64: pip install -e ."
    want = np.array([math.erf(v) for v in x])
    assert np.array_equal(got.view(np.int64), want.view(np.int64)) or (
        np.array_equal(np.isnan(got), np.isnan(want))
        and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
        and np.array_equal(np.signbit(got), np.signbit(want))
    )
    f32 = x.astype(np.float32)
    assert np.array_equal(
        prims._erf(f32),
        np.array([math.erf(v) for v in f32.astype(np.float64)], np.float32),
        equal_nan=True,
    )
    assert prims._erf(np.float32(0.5)).dtype == np.float32
