"""Small torch APIs (lazytorch.ops.extras and the in-place/alias names added beside the ops):
linear-algebra helpers, splits, gcd/lcm/ldexp/frexp/unravel_index, creation, windows,
predicates, the complex helpers on real tensors and the *_copy functions, against torch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_grad, check_raises, positive, randn


# -- linear algebra helpers ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_addmv_addr_addbmm(dtype: str) -> None:
    a, m, v = randn(3, dtype=dtype), randn(3, 4, dtype=dtype), randn(4, dtype=dtype)
    check(lambda t, a, m, v: t.addmv(a, m, v), a, m, v)
    check(lambda t, a, m, v: t.addmv(a, m, v, beta=0.5, alpha=-2), a, m, v)
    check(lambda t, a, m, v: a.addmv(m, v, alpha=3), a, m, v)
    check(lambda t, a, m, v: (a.addmv_(m, v, beta=2), a), a, m, v)
    check(lambda t, a, m, v: (t.addmv_(a, m, v), a), a, m, v)
    check(lambda t, a, m, v: t.addmv(a[:1], m, v), a, m, v)  # broadcast bias
    check_grad(lambda t, a, m, v: t.addmv(a, m, v, beta=0.5, alpha=2), a, m, v)
    check_raises(lambda t, a, m, v: t.addmv(a, m, v[:3]), a, m, v)
    b, v1, v2 = randn(3, 4, dtype=dtype), randn(3, dtype=dtype), randn(4, dtype=dtype)
    check(lambda t, b, x, y: t.addr(b, x, y, beta=2, alpha=0.5), b, v1, v2)
    check(lambda t, b, x, y: (b.addr_(x, y), b), b, v1, v2)
    check_grad(lambda t, b, x, y: t.addr(b, x, y, alpha=3), b, v1, v2)
    check_raises(lambda t, b, x, y: t.addr(b, x[None], y), b, v1, v2)
    i, b1, b2 = randn(3, 5, dtype=dtype), randn(2, 3, 4, dtype=dtype), randn(2, 4, 5, dtype=dtype)
    check(lambda t, i, x, y: t.addbmm(i, x, y, beta=0.5, alpha=2), i, b1, b2)
    check(lambda t, i, x, y: (i.addbmm_(x, y), i), i, b1, b2)
    check_grad(lambda t, i, x, y: t.addbmm(i, x, y), i, b1, b2)
    check(
        lambda t, a, m, v: t.addmv(a, m, v), *(arr(*s, dtype="int64") for s in ((3,), (3, 4), (4,)))
    )


def test_inner_vdot_diagflat_adjoint_ger() -> None:
    check(lambda t, a, b: t.inner(a, b), randn(2, 3), randn(4, 3))
    check(lambda t, a, b: a.inner(b), randn(3), randn(3))
    check(lambda t, a, b: t.inner(a, b), randn(), randn(2, 3))
    check(lambda t, a, b: t.inner(a, b), arr(2, 3, dtype="int64"), arr(3, dtype="int64"))
    check_grad(lambda t, a, b: t.inner(a, b), randn(2, 3), randn(2, 4, 3))
    check_raises(lambda t, a, b: t.inner(a, b), randn(2, 3), randn(2))
    check(lambda t, a, b: t.vdot(a, b), randn(4), randn(4))
    check(lambda t, a, b: a.vdot(b), arr(4, dtype="int64"), arr(4, dtype="int64"))
    check_grad(lambda t, a, b: t.vdot(a, b), randn(4), randn(4))
    check_raises(lambda t, a, b: t.vdot(a, b), randn(2, 2), randn(4))
    for off in (0, 1, -2):
        check(lambda t, x, o=off: t.diagflat(x, o), randn(2, 2))
        check(lambda t, x, o=off: x.diagflat(offset=o), arr(3, dtype="int32"))
    check_grad(lambda t, x: t.diagflat(x, 1), randn(3))
    check(lambda t, x: t.adjoint(x), randn(2, 3, 4))
    check(lambda t, x: x.adjoint(), randn(3, 4))
    check_raises(lambda t, x: t.adjoint(x), randn(3))
    check(lambda t, a, b: a.ger(b), randn(3), randn(2))
    x = lt.zeros(2, 3)
    x.adjoint()[0, 1] = 5.0  # a view, as torch
    assert x[1, 0].item() == 5.0


# -- splits ----------------------------------------------------------------------------------------
def test_splits() -> None:
    x = randn(4, 6, 8)
    for name in ("hsplit", "vsplit", "dsplit"):
        check(lambda t, x, n=name: getattr(t, n)(x, 2), x)
        check(lambda t, x, n=name: getattr(x, n)([1, 3]), x)
        check(lambda t, x, n=name: getattr(t, n)(x, (1, 10)), x)
        check_raises(lambda t, x, n=name: getattr(t, n)(x, 3), randn(5, 5, 5))
    check(lambda t, x: t.hsplit(x, 3), randn(6))
    check_raises(lambda t, x: t.vsplit(x, 2), randn(4))
    check_raises(lambda t, x: t.dsplit(x, 2), randn(4, 4))
    check_raises(lambda t, x: t.hsplit(x, 1), randn())
    check(lambda t, x: t.unsafe_chunk(x, 3, 1), x)
    check(lambda t, x: x.unsafe_chunk(3), x)
    check(lambda t, x: t.unsafe_split(x, 3, -1), x)
    check(lambda t, x: x.unsafe_split(3), x)
    check(lambda t, x: t.unsafe_split_with_sizes(x, [1, 5], 1), x)
    check(lambda t, x: x.unsafe_split_with_sizes([3, 1]), x)
    check_grad(lambda t, x: t.hsplit(x, 2), x)


# -- integer helpers, ldexp, frexp, unravel_index ----------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_gcd_lcm(dtype: str) -> None:
    lo, hi = (0, 60) if dtype == "uint8" else (-60, 60)
    a, b = arr(50, dtype=dtype, low=lo, high=hi), arr(50, dtype=dtype, low=lo, high=hi)
    a[:3] = 0
    b[:2] = 0
    check(lambda t, a, b: t.gcd(a, b), a, b)
    check(lambda t, a, b: a.lcm(b), a, b)
    check(lambda t, a, b: (a.gcd_(b), a), a, b)
    check(lambda t, a, b: (t.lcm_(a, b) if hasattr(t, "lcm_") else a.lcm_(b), a), a, b)
    check(lambda t, a, b: t.gcd(a[:, None], b[:5]), a, b)


def test_gcd_big_and_errors() -> None:
    fib = [1, 1]
    while fib[-1] < 2**62:
        fib.append(fib[-1] + fib[-2])
    a = np.array([*fib[-2:], 2**62, 2**40 * 3], dtype=np.int64)
    b = np.array([*fib[-3:-1], 2**61, 2**41], dtype=np.int64)
    check(lambda t, a, b: t.gcd(a, b), a, b)
    check(lambda t, a, b: t.gcd(a, b), arr(4, dtype="int32"), arr(4, dtype="int64"))
    check_raises(lambda t, a, b: t.gcd(a, b), randn(3), randn(3))
    check_raises(lambda t, a, b: t.lcm(a, b), arr(3, dtype="bool"), arr(3, dtype="bool"))


_NEXT_SPECIALS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    3.0,
    -4.0,
    1e-45,
    -1e-45,
    1.1754944e-38,
    1e-40,
    3.4028235e38,
    65504.0,
    6.1e-5,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    float("inf"),
    float("-inf"),
    float("nan"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nextafter_bit_for_bit(dtype: str) -> None:
    # Every special against every direction (zeros of both signs, the binade edges where the
    # step halves, subnormals, the largest finite, infinities, NaN), plus random magnitudes:
    # equal bits, so the signs of zeros are compared too.
    targets = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan")]
    xs = [a for a in _NEXT_SPECIALS for _ in range(len(targets) + 2)]
    ys = [b for a in _NEXT_SPECIALS for b in [*targets, a, -a]]
    rng = np.random.default_rng(7)
    xs += list(rng.standard_normal(64) * 10.0 ** rng.integers(-30, 30, 64))
    ys += list(rng.standard_normal(64))
    tdt = getattr(torch, dtype)
    x = torch.tensor(xs, dtype=torch.float64).to(tdt)
    y = torch.tensor(ys, dtype=torch.float64).to(tdt)
    want = torch.nextafter(x, y).double()
    for backend in ("interpreter", "cpp"):
        with lt.backend(backend):
            got = lt.nextafter(
                lt.tensor(x.double().tolist(), dtype=lt.float64).to(getattr(lt, dtype)),
                lt.tensor(y.double().tolist(), dtype=lt.float64).to(getattr(lt, dtype)),
            )
            assert got.dtype is getattr(lt, dtype)
            g = torch.tensor(got.double().tolist(), dtype=torch.float64)
        same = (g == want) & (torch.signbit(g) == torch.signbit(want))
        same |= g.isnan() & want.isnan()
        bad = (~same).nonzero().flatten().tolist()
        assert not bad, [(xs[i], ys[i], g[i].item(), want[i].item()) for i in bad[:5]]


def test_nextafter_forms_gradient_and_errors() -> None:
    a, b = randn(4), randn(4)
    check(lambda t, x, y: t.nextafter(x, y), a, b)
    check(lambda t, x, y: x.nextafter(y[:1]), a, b)  # broadcast
    check(lambda t, x, y: (x.nextafter_(y), x), a, b)
    check(lambda t, x, y: t.nextafter(x, y), a, randn(4, dtype="float64"))  # promotes
    check_grad(lambda t, x, y: t.nextafter(x, y) * 3, a, b, diff=(0,))
    check_raises(lambda t, x, y: t.nextafter(x, y), arr(3, dtype="int64"), arr(3, dtype="int64"))
    check_raises(lambda t, x: t.nextafter(x, 2.0), a)


def _coords(n: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).uniform(0, 10, n)).astype(np.float32)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order: int) -> None:
    f = randn(5, 6, 4)
    c0, c1, c2 = _coords(5, 1), _coords(6, 2), _coords(4, 3)

    def grad(**kw: Any) -> Any:
        return lambda t, f, *c: t.gradient(f, edge_order=edge_order, **kw)

    check(grad(), f)
    check(grad(spacing=2.5), f)
    check(grad(spacing=[1.0, 2.0, 0.5]), f)
    check(lambda t, f, *c: t.gradient(f, spacing=list(c), edge_order=edge_order), f, c0, c1, c2)
    check(lambda t, f, c: t.gradient(f, spacing=[c], dim=1, edge_order=edge_order), f, c1)
    check(
        lambda t, f, a, b: t.gradient(f, spacing=(a, b), dim=[0, -1], edge_order=edge_order),
        f,
        c0,
        c2,
    )
    check(lambda t, f: t.gradient(f[:, ::2].transpose(0, 2), dim=0, edge_order=edge_order), f)
    check(grad(), arr(6, dtype="int64"))  # integers: a float result
    check(
        lambda t, f, c: t.gradient(f, spacing=(c,), edge_order=edge_order),
        arr(4, dtype="int64"),
        np.array([0, 1, 3, 4]),
    )
    check(grad(spacing=2), randn(5, 3, dtype="float64"))
    check_grad(
        lambda t, f, *c: t.gradient(f, spacing=list(c), edge_order=edge_order),
        f,
        c0,
        c1,
        c2,
        diff=(0,),
    )


@pytest.mark.parametrize("seed", [205, 216, 235])
@pytest.mark.parametrize("backend", ["interpreter", "cpp"])
def test_gradient_over_coordinates_is_torchs_arithmetic(seed: int, backend: str) -> None:
    """Coordinates close together make the differences ill-conditioned: samples where
    numpy's arrangement of the formula differed from torch's by 1.5e-5 (1e-4 relative, over
    the float32 tolerance). lazytorch uses torch's terms in torch's order: the same bits."""
    f = np.random.default_rng(seed).uniform(-2, 2, (5, 6, 4)).astype(np.float32)
    coords = [_coords(5, 1), _coords(6, 2), _coords(4, 3)]
    for edge_order in (1, 2):
        want = torch.gradient(
            torch.tensor(f), spacing=[torch.tensor(c) for c in coords], edge_order=edge_order
        )
        with lt.backend(backend):
            got = lt.gradient(
                lt.tensor(f), spacing=[lt.tensor(c) for c in coords], edge_order=edge_order
            )
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_gradient_edges_and_errors() -> None:
    assert lt.gradient(lt.tensor(3.0)) == () == torch.gradient(torch.tensor(3.0))
    check(lambda t, f: t.gradient(f), randn(2))
    f = randn(5, 6)
    check_raises(lambda t, f: t.gradient(f, edge_order=3), f)
    check_raises(lambda t, f: t.gradient(f, edge_order=2), randn(2))
    check_raises(lambda t, f: t.gradient(f, spacing=[1.0, 2.0, 3.0]), f, match="a list of length 3")
    check_raises(lambda t, f: t.gradient(f, spacing=[1.0, 2.0], dim=1), f, match="same length")
    check_raises(lambda t, f: t.gradient(f, dim=4), f)
    check_raises(lambda t, f: t.gradient(f, spacing=[t.tensor([1.0, 2.0])], dim=1), f)


def test_ldexp_frexp() -> None:
    check(lambda t, x, e: t.ldexp(x, e), randn(5), arr(5, dtype="int64", low=-4, high=4))
    check(
        lambda t, x, e: t.ldexp(x, e), arr(5, dtype="int64"), arr(5, dtype="int64", low=-4, high=4)
    )
    check(
        lambda t, x, e: (x.ldexp_(e), x),
        randn(5, dtype="float64"),
        arr(5, dtype="int64", low=-4, high=4),
    )
    check_grad(lambda t, x, e: t.ldexp(x, e), randn(5), randn(5))
    special = np.array(
        [0.0, -0.0, 1.0, 8.0, 0.3, -3.5, np.inf, -np.inf, np.nan, 1e-40, 3e38, 0.5],
        dtype=np.float32,
    )
    for dtype in ("float16", "float32", "float64"):
        x = special.astype(dtype)
        check(lambda t, x: t.frexp(x), x)
        check(lambda t, x: x.frexp(), randn(50, dtype=dtype) * np.array(1000, dtype=dtype))
    check(
        lambda t, x: t.frexp(x), np.array([5e-324, 1e308, 2.0**-1022, 2.0**1023], dtype=np.float64)
    )
    check_raises(lambda t, x: t.frexp(x), arr(3, dtype="int64"))


def test_unravel_index() -> None:
    check(lambda t, i: t.unravel_index(i, (2, 3)), np.array([7, 6, -7, -1, 0, 5], dtype=np.int64))
    check(lambda t, i: t.unravel_index(i, (4, 1, 3)), np.array([[11, 2], [3, 4]], dtype=np.int32))
    check(lambda t, i: t.unravel_index(i, t.Size([6])), np.array([4], dtype=np.int64))
    check(lambda t, i: t.unravel_index(i, 6), np.array(4, dtype=np.int64))
    check_raises(lambda t, i: t.unravel_index(i, (2, 3)), np.array([1.0], dtype=np.float32))


# -- in-place methods and alias functions --------------------------------------------------------
def test_new_in_place_methods() -> None:
    x, y = randn(3, 4, dtype="float64"), randn(3, 4, dtype="float64")
    p = arr(3, 4, dtype="float64", low=0.05, high=0.95)
    check(lambda t, x, y: (x.copysign_(y), x), x, y)
    check(lambda t, x, y: (x.copysign_(-1.0), x), x, y)
    check_raises(lambda t, x, y: x.copysign_(y), arr(3, dtype="int64"), randn(3))
    check(
        lambda t, x, y: (x.heaviside_(y), x), np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.25, 3.0])
    )
    check(lambda t, x: (x.float_power_(2), x), positive(3, dtype="float64"))
    check(
        lambda t, x, y: (x.float_power_(y), x),
        positive(3, dtype="float64"),
        randn(3, dtype="float64"),
    )
    check_raises(lambda t, x: x.float_power_(2), positive(3))
    check(lambda t, x: (x.cumprod_(1), x), x)
    check(lambda t, x: (x.cumprod_(0), x), arr(3, 2, dtype="int32"))
    check(lambda t, x: (x.logit_(), x), p)
    check(lambda t, x: (x.logit_(0.2), x), p)
    check(lambda t, x: (x.sinc_(), x), x)
    check(lambda t, x: (x.deg2rad_(), x), x)
    check(lambda t, x: (x.rad2deg_(), x), x)
    check_raises(lambda t, x: x.deg2rad_(), arr(3, dtype="int64"))
    big = positive(3, 4, dtype="float64") + 1
    unit = arr(3, 4, dtype="float64", low=-0.9, high=0.9)
    for name, data in (("arccosh", big), ("arcsinh", x), ("arctanh", unit)):
        check(lambda t, x, n=name: getattr(t, n)(x), data)
        check(lambda t, x, n=name: getattr(x, n)(), data)
        check(lambda t, x, n=name: (getattr(x, n + "_")(), x), data)
        check(lambda t, x, n=name: (getattr(t, n + "_")(x), x), data)
        check_grad(lambda t, x, n=name: getattr(t, n)(x), data)
    check(lambda t, x: (t.i0_(x), x), x)


# -- creation ----------------------------------------------------------------------------------
def test_range() -> None:
    for args, kw in (
        ((1, 4), {}),
        ((0, 1, 0.3), {}),
        ((1, 4), {"dtype": "int64"}),
        ((5, 1, -1.5), {}),
        ((0.5, 2.5, 0.5), {"dtype": "float64"}),
        ((3, 3), {}),
    ):

        def fn(t: Any, args: Any = args, kw: Any = kw) -> Any:
            d = {k: getattr(t, v) for k, v in kw.items()}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return t.range(*args, **d)

        check(fn)
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        lt.range(0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(lambda t: t.range(0, 1, 0))
        check_raises(lambda t: t.range(2, 1))
        assert lt.range(0, 2, requires_grad=True).requires_grad


def test_fill_and_empty_strided() -> None:
    check(lambda t, x: t.fill(x, 2.5), randn(2, 3))
    check(lambda t, x: t.fill(x, 7), arr(2, 3, dtype="int32"))
    check(lambda t, x: t.fill(x, t.tensor(3.0)), arr(2, dtype="int64"))
    check_raises(lambda t, x: t.fill(x, t.ones(2)), randn(2))
    x = lt.randn(2)
    assert lt.fill(x, 1.0) is not x
    e = lt.empty_strided((2, 3), (1, 2), dtype=lt.float64)
    assert tuple(e.shape) == (2, 3) and e.dtype is lt.float64
    check_raises(lambda t: t.empty_strided((2, 3), (1,)))


@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name: str, n: int, periodic: bool) -> None:
    check(lambda t: getattr(t, name)(n, periodic), atol=1e-6)
    check(lambda t: getattr(t, name)(n, periodic=periodic, dtype=t.float64))
    if name == "kaiser_window":
        check(lambda t: t.kaiser_window(n, periodic, 5.0, dtype=t.float64))
    if name == "hamming_window":
        check(lambda t: t.hamming_window(n, periodic, 0.5, 0.4, dtype=t.float64))


def test_window_errors() -> None:
    check_raises(lambda t: t.hann_window(4, dtype=t.int64))
    check_raises(lambda t: t.hann_window(-1))
    check(lambda t: t.hann_window(4))


# -- predicates ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype", ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
)
def test_predicates(dtype: str) -> None:
    check(
        lambda t, x: (t.is_signed(x), x.is_signed(), t.is_complex(x), x.is_complex()),
        arr(2, dtype=dtype),
    )
    check(lambda t, x: (t.is_conj(x), x.is_neg(), t.is_neg(x), x.is_conj()), arr(2, dtype=dtype))
    check(lambda t, x: (t.is_nonzero(x), x.is_nonzero()), arr(1, dtype=dtype))
    check(lambda t, x: t.is_nonzero(x), np.zeros((1, 1), dtype=dtype))
    check_raises(lambda t, x: t.is_nonzero(x), arr(2, dtype=dtype))
    check_raises(lambda t, x: x.is_nonzero(), arr(0, dtype=dtype))
    check(
        lambda t, x, y: (t.is_same_size(x, y), x.is_same_size(x)),
        arr(2, 3, dtype=dtype),
        arr(3, 2, dtype=dtype),
    )


# -- complex helpers on real tensors -----------------------------------------------------------
def test_complex_helpers_on_real() -> None:
    x = lt.randn(3)
    for name in ("conj", "resolve_conj", "resolve_neg", "conj_physical", "real"):
        assert getattr(lt, name)(x) is x and getattr(x, name)() is x  # as torch
        check(lambda t, x, n=name: getattr(t, n)(x) * 2, randn(3))
        check_grad(lambda t, x, n=name: getattr(t, n)(x) * 2, randn(3))
    assert x.conj_physical_() is x and lt.conj_physical_(x) is x
    check_raises(lambda t, x: t.imag(x), randn(3))
    check_raises(lambda t, x: x.imag(), randn(3)) if callable(torch.Tensor.imag) else None
    special = np.array([1.0, -1.0, 0.0, -0.0, np.nan, -np.inf, np.inf], dtype=np.float32)
    check(lambda t, x: t.angle(x), special)
    check(lambda t, x: x.angle(), special.astype(np.float64))
    check(lambda t, x: t.angle(x), arr(5, dtype="int64"))
    check(lambda t, x: t.angle(x), arr(5, dtype="bool"))
    check_grad(lambda t, x: t.angle(x), randn(4))


# -- *_copy ------------------------------------------------------------------------------------
COPIES = {
    "view_copy": (lambda t, x: t.view_copy(x, (6, 4)), lambda x: x.view(6, 4)),
    "permute_copy": (lambda t, x: t.permute_copy(x, (2, 0, 1)), lambda x: x.permute(2, 0, 1)),
    "transpose_copy": (lambda t, x: t.transpose_copy(x, 0, -1), lambda x: x.transpose(0, -1)),
    "t_copy": (lambda t, x: t.t_copy(x[0]), lambda x: x[0].t()),
    "expand_copy": (
        lambda t, x: t.expand_copy(x[:, :1], (2, 5, 4)),
        lambda x: x[:, :1].expand(2, 5, 4),
    ),
    "squeeze_copy": (lambda t, x: t.squeeze_copy(x[:, :1]), lambda x: x[:, :1].squeeze()),
    "squeeze_copy_dim": (lambda t, x: t.squeeze_copy(x[:, :1], 1), lambda x: x[:, :1].squeeze(1)),
    "unsqueeze_copy": (lambda t, x: t.unsqueeze_copy(x, -1), lambda x: x.unsqueeze(-1)),
    "select_copy": (lambda t, x: t.select_copy(x, 1, -1), lambda x: x.select(1, -1)),
    "slice_copy": (lambda t, x: t.slice_copy(x, 1, 0, 3, 2), lambda x: x[:, 0:3:2]),
    "slice_copy_default": (lambda t, x: t.slice_copy(x), lambda x: x[:]),
    "diagonal_copy": (lambda t, x: t.diagonal_copy(x, 1, 1, 2), lambda x: x.diagonal(1, 1, 2)),
    "detach_copy": (lambda t, x: t.detach_copy(x), lambda x: x.detach()),
    "alias_copy": (lambda t, x: t.alias_copy(x), lambda x: x),
    "unfold_copy": (lambda t, x: t.unfold_copy(x, 1, 2, 1), lambda x: x.unfold(1, 2, 1)),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_copies(name: str) -> None:
    fn, view = COPIES[name]
    x = randn(2, 3, 4)
    check(fn, x)
    if name not in ("detach_copy",):
        check_grad(fn, x)
    # the copy aliases nothing: writing to it leaves the input unchanged
    a = lt.from_numpy(x.copy())
    c = fn(lt, a)
    c.fill_(100.0)
    np.testing.assert_array_equal(a.numpy(), x)
    np.testing.assert_array_equal(view(a).numpy(), view(torch.from_numpy(x)).numpy())


def test_copies_of_several() -> None:
    x = randn(4, 6)
    check(lambda t, x: t.unbind_copy(x, 1), x)
    check(lambda t, x: t.split_copy(x, 4, 1), x)
    check(lambda t, x: t.split_with_sizes_copy(x, [1, 3]), x)
    check_grad(lambda t, x: t.split_copy(x, 2), x)
    a = lt.from_numpy(x.copy())
    for piece in (*lt.unbind_copy(a), *lt.split_copy(a, 2), *lt.split_with_sizes_copy(a, [3, 1])):
        piece.fill_(7.0)
    np.testing.assert_array_equal(a.numpy(), x)

    def out_fn(t: Any, x: Any) -> Any:
        o = t.empty(0)
        r = t.permute_copy(x, (1, 0), out=o)
        return r is o, o

    check(out_fn, x)
