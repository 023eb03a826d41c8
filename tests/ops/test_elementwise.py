"""Elementwise ops against torch: unary math, arithmetic, comparisons, logic, where, clamp.

Each op is exercised as a function (``t.add(x, y)``), as a method (``x.add(y)``), as an
operator (``x + y``) and in place (``x.add_(y)``, ``x += y``) where torch has those forms,
over every dtype. Where torch refuses a dtype, `check` demands the same exception type.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import lazytorch as lt
from helpers import ALL, FLOATS, INTS, arr, check, check_grad, check_raises, positive, randn

NAN, INF = math.nan, math.inf

# Values where floating math usually goes wrong: NaN, infinities, signed zeros, large and
# tiny magnitudes, halves (rounding ties) and exact integers.
FLOAT_EDGES = [
    NAN, INF, -INF, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0,
    3.0, 1e-8, -1e-8, 1e4, -1e4, 60000.0, -60000.0,
]  # fmt: skip
# float32/float64 get magnitudes that overflow float16 and square past float32's range.
WIDE_EDGES = [*FLOAT_EDGES, 1e20, -1e20, 3e38, -3e38]


def edges(dtype: str) -> np.ndarray:
    """The edge values representable in `dtype` (integers: the range ends and small values)."""
    if dtype == "bool":
        return np.array([True, False, True, False])
    if dtype in INTS:
        info = np.iinfo(dtype)
        vals = [info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 7, info.max - 1, info.max]
        return np.unique(np.array([v for v in vals if info.min <= v <= info.max])).astype(dtype)
    vals = FLOAT_EDGES if dtype == "float16" else WIDE_EDGES
    return np.array(vals, dtype=dtype)


def sample(dtype: str, seed: int = 0) -> np.ndarray:
    """Random values and the edge values of `dtype`, as a (3, n) array."""
    e = edges(dtype)
    r = arr(2 * len(e), dtype=dtype, low=-5, high=6, seed=seed)
    return np.concatenate([e, r]).reshape(3, -1)


def nonzero(*shape: int, dtype: str, seed: int = 0) -> np.ndarray:
    """Random non-zero divisors, both signs where the dtype has them."""
    if dtype == "bool":
        return np.ones(shape, dtype=bool)
    rng = np.random.default_rng(seed)
    mag = rng.integers(1, 5, size=shape)
    sign = np.where(rng.random(shape) < 0.5, -1, 1) if dtype != "uint8" else 1
    out = (mag * sign).astype(dtype)
    if dtype in FLOATS:
        out = out + rng.uniform(-0.4, 0.4, size=shape).astype(dtype)
    return out


# -- unary math -------------------------------------------------------------------------------
FLOAT_UNARY = [
    "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "erf", "atan", "log1p", "expm1",
    "rsqrt", "reciprocal", "tan", "log2", "log10", "exp2", "erfc", "sinh", "cosh", "asin",
    "acos", "asinh", "acosh", "atanh", "arctan", "arcsin", "arccos",
]  # fmt: skip
OTHER_UNARY = [
    "abs", "absolute", "neg", "negative", "sign", "sgn", "floor", "ceil", "round", "trunc",
    "fix", "frac", "positive", "square", "relu", "bitwise_not", "logical_not", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "isreal", "nan_to_num",
]  # fmt: skip
UNARY = FLOAT_UNARY + OTHER_UNARY

# Methods torch has for these ops (torch.Tensor has no `positive_`, `isnan_`, ...).
UNARY_METHODS = [n for n in UNARY if hasattr(torch.Tensor, n)]
UNARY_INPLACE = [n for n in UNARY if hasattr(torch.Tensor, n + "_")]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY)
def test_unary_function(name, dtype):
    check(lambda t, x: getattr(t, name)(x), sample(dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY_METHODS)
def test_unary_method(name, dtype):
    check(lambda t, x: getattr(x, name)(), sample(dtype, seed=1))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_inplace(name, dtype):
    def fn(t, x):
        y = getattr(x, name + "_")()
        assert y is x  # in-place methods return self
        return x

    check(fn, sample(dtype, seed=2))


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "abs", "neg", "floor", "sign", "isnan"])
@pytest.mark.parametrize(
    "view",
    [
        lambda x: x.T,
        lambda x: x[:, ::2],
        lambda x: x[1],
        lambda x: x.flip(0),
        lambda x: x.unsqueeze(1).expand(3, 2, 4),
    ],
    ids=["T", "step", "row", "flip", "expand"],
)
def test_unary_on_views(name, view):
    check(lambda t, x: getattr(t, name)(view(x)), positive(3, 4))


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,), (1, 1), (2, 1, 3)])
@pytest.mark.parametrize("name", ["exp", "abs", "isnan", "round", "sigmoid", "logical_not"])
def test_unary_odd_shapes(name, shape):
    check(lambda t, x: getattr(t, name)(x), arr(*shape, seed=3))


@pytest.mark.backends("interpreter", "cpp")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_saturates_to_zero_as_torch(dtype):
    # torch's sigmoid is 1 / (1 + exp(-x)): 0 once exp(-x) overflows (float32 from -88.72),
    # though the value would be subnormal; binary_cross_entropy clamps its log at -100, so a
    # saturated logit costs 100 there (siamese_network of pytorch/examples)
    x = np.array([4.37, -72.96, -88.5, -88.72284, -97.6, -98.4, -120.0, -709.0, -710.0, 0.5])

    def fn(t, z):
        s = t.sigmoid(z * 1.0)
        return s, t.nn.functional.binary_cross_entropy(s, t.ones_like(s), reduction="none")

    check(fn, x.astype(dtype), atol=0, rtol=1e-5)  # atol=0: a subnormal is not 0


@pytest.mark.backends("interpreter", "cpp")
def test_sigmoid_saturates_to_one_as_torch():
    # torch's float 1 + exp(-x) is exactly 1 from x = 16.64 on, so its sigmoid is 1.0 there
    # (the correctly rounded value is 1 - 2^-24 up to 17.33); against a target 0,
    # binary_cross_entropy's log(1 - 1) is clamped to a loss of 100, not 16.6
    # (pytorch/examples siamese_network: a step's loss 28.97 against torch's 34.14)
    x = np.concatenate([np.linspace(15.5, 18.5, 61), [16.6355, 16.636, 17.33, 17.34, 30.0]])

    def fn(t, z):
        s = t.sigmoid(z * 1.0)
        return s, t.nn.functional.binary_cross_entropy(s, t.zeros_like(s), reduction="none")

    check(fn, x.astype("float32"), atol=0, rtol=0)


def test_unary_rejects_non_tensor():
    check_raises(lambda t: t.exp(2.0))
    check_raises(lambda t: t.abs([1.0]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["sinh", "cosh", "asinh", "acosh", "atanh", "tan", "erfc"])
def test_decomposed_unary_accuracy(name, dtype):
    # Decompositions must stay accurate away from their textbook formula's comfort zone:
    # tiny arguments (cancellation) and large ones (intermediate overflow).
    x = np.array([1e-6, -1e-6, 1e-3, 0.3, 0.99, -0.99, 1.01, 2.0, 10.0, 100.0, 3000.0], dtype)
    if dtype != "float16":
        x = np.concatenate([x, np.array([1e10, -1e10, 1e30], dtype)])
    rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    # Relative accuracy is meaningless for subnormal results (erfc(10) in float32): absolute
    # slack of the smallest normal number only.
    atol = float(np.finfo(dtype).tiny)
    check(lambda t, x: getattr(t, name)(x), x, atol=atol, rtol=rtol)


# -- rounding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -2])
def test_round_decimals(decimals, dtype):
    x = sample(dtype) if dtype != "float16" else sample(dtype) / 10
    check(lambda t, x: t.round(x, decimals=decimals), x)
    check(lambda t, x: x.round(decimals=decimals), x)


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.125, 0.375, 1.005, 2.675], dtype="float64")
    check(lambda t, x: t.round(x), x)
    check(lambda t, x: t.round(x, decimals=2), x)
    check(lambda t, x: t.round(x.float(), decimals=2), x)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "frac"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_rounding_keeps_signed_zero(name, dtype):
    # -0.4 rounds (or truncates) to -0.0 in torch. Values compare equal either way, so the
    # sign bits are compared separately.
    x = np.array([-0.4, -0.0, 0.0, 0.4, -1.0, -3.7, 3.7], dtype=dtype)
    check(lambda t, x: getattr(t, name)(x), x)
    assert_same_sign_bits(name, x)


def assert_same_sign_bits(name: str, x: np.ndarray) -> None:
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    got = getattr(lt, name)(lt.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=name)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "name",
    ["sin", "tan", "atan", "asin", "sinh", "tanh", "asinh", "atanh", "expm1", "log1p", "erf"],
)
def test_odd_functions_keep_negative_zero(name, dtype):
    # f(-0.0) is -0.0 for these odd functions (and sqrt), in torch as in C.
    assert_same_sign_bits(name, np.array([-0.0, 0.0, -1e-30, 1e-30], dtype=dtype))


# -- binary ops ---------------------------------------------------------------------------------
ARITH = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2",
    "hypot", "logaddexp", "xlogy", "rsub",
]  # fmt: skip
COMPARE = [
    "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
    "greater_equal",
]  # fmt: skip
LOGIC = ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor"]
BINARY = ARITH + COMPARE + LOGIC
DIVIDING = {"div", "divide", "true_divide", "floor_divide", "remainder", "fmod"}

BINARY_METHODS = [n for n in BINARY if hasattr(torch.Tensor, n)]
BINARY_INPLACE = [n for n in BINARY if hasattr(torch.Tensor, n + "_")]


def binary_inputs(name: str, dtype: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    x = arr(3, 4, dtype=dtype, low=-6, high=7, seed=seed)
    if name in DIVIDING:
        return x, nonzero(4, dtype=dtype, seed=seed + 1)
    if name == "pow" and dtype in INTS:
        return x, arr(4, dtype=dtype, low=0, high=4, seed=seed + 1)
    return x, arr(4, dtype=dtype, low=-6, high=7, seed=seed + 1)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary_function(name, dtype):
    check(lambda t, x, y: getattr(t, name)(x, y), *binary_inputs(name, dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY_METHODS)
def test_binary_method(name, dtype):
    check(lambda t, x, y: getattr(x, name)(y), *binary_inputs(name, dtype, seed=5))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY_INPLACE)
def test_binary_inplace(name, dtype):
    def fn(t, x, y):
        out = getattr(x, name + "_")(y)
        assert out is x
        return x

    check(fn, *binary_inputs(name, dtype, seed=7))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", BINARY)
def test_binary_edge_values(name, dtype):
    # Every pair of edge values: (n, 1) against (n,) covers NaN/inf/signed-zero combinations.
    e = edges(dtype)
    if name in ("remainder", "fmod") and dtype == "float32":
        # torch's float32 kernels compute x - trunc(x / y) * y, which is NaN once x / y
        # overflows (3e38 % 0.5); the exact answer (NumPy's, ours) is finite. Not matched.
        e = e[~(np.abs(e) > 1e30) | np.isinf(e)]
    check(lambda t, x, y: getattr(t, name)(x, y), e[:, None], e[None, :])


@pytest.mark.parametrize("dtype", (*INTS, "bool"))
@pytest.mark.parametrize("name", sorted(set(BINARY) - DIVIDING - {"pow"}))
def test_binary_integer_edge_values(name, dtype):
    # Range ends: wrapping add/sub/mul and comparisons at the extremes.
    e = edges(dtype)
    check(lambda t, x, y: getattr(t, name)(x, y), e[:, None], e[None, :])


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", ["div", "floor_divide", "remainder", "fmod", "trunc_div"])
def test_integer_division_signs(name, dtype):
    # Dividends of both signs against divisors of both signs (the minimum is left out: min // -1
    # overflows, which is undefined behaviour in torch's C++ kernels).
    info = np.iinfo(dtype)
    x = np.array(
        [v for v in [info.min + 1, -7, -6, -1, 0, 1, 6, 7, info.max] if v >= info.min], dtype
    )
    y = np.array([v for v in [-7, -3, -2, -1, 1, 2, 3, 7] if v >= info.min], dtype)
    if name == "trunc_div":
        fn = lambda t, x, y: t.div(x, y, rounding_mode="trunc")  # noqa: E731
    else:
        fn = lambda t, x, y: getattr(t, name)(x, y)  # noqa: E731
    check(fn, x[:, None], y[None, :])


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x, y: x // y,
        lambda t, x, y: x % y,
        lambda t, x, y: t.fmod(x, y),
        lambda t, x, y: t.div(x, y, rounding_mode="trunc"),
        lambda t, x, y: t.div(x, y, rounding_mode="floor"),
        lambda t, x, y: x // 0,
        lambda t, x, y: x % 0,
        lambda t, x, y: t.remainder(5, y),
    ],
    ids=["floordiv", "mod", "fmod", "trunc", "floor", "floordiv0", "mod0", "rremainder"],
)
def test_integer_division_by_zero_raises(fn, dtype):
    # torch raises RuntimeError("ZeroDivisionError") for integer division by zero.
    x = np.array([3, 4, 5], dtype=dtype)
    y = np.array([1, 0, 2], dtype=dtype)
    check(fn, x, y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_division_by_zero(dtype):
    x = np.array([1.0, -1.0, 0.0, NAN, INF], dtype=dtype)[:, None]
    y = np.array([0.0, -0.0], dtype=dtype)[None, :]
    for mode in [None, "trunc", "floor"]:
        check(lambda t, x, y, mode=mode: t.div(x, y, rounding_mode=mode), x, y)
    check(lambda t, x, y: t.remainder(x, y), x, y)
    check(lambda t, x, y: t.fmod(x, y), x, y)
    check(lambda t, x, y: x // y, x, y)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_mode(mode, dtype):
    x = sample(dtype) if dtype not in INTS else arr(3, 6, dtype=dtype, low=-20, high=20)
    y = nonzero(6, dtype=dtype, seed=3)
    check(lambda t, x, y: t.div(x, y, rounding_mode=mode), x, y)
    check(lambda t, x, y: x.div(y, rounding_mode=mode), x, y)
    check(lambda t, x, y: t.div(x, 3, rounding_mode=mode), x, y)
    check(lambda t, x, y: t.div(x, -2.5, rounding_mode=mode), x, y)


def test_div_rejects_unknown_rounding_mode():
    check_raises(lambda t, x: t.div(x, 2, rounding_mode="ceil"), randn(3))


def test_div_inplace_float_into_int_raises():
    # int / int is float: torch refuses to write it back into the int tensor.
    check(lambda t, x: x.div_(2), arr(3, dtype="int64"))
    check(lambda t, x: x.div_(2, rounding_mode="floor"), arr(3, dtype="int64", low=-9, high=9))


# -- pow ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, 0.0, 1.0, 2.0, True])
def test_pow_scalar_exponent(exponent, dtype):
    x = sample(dtype) if dtype in FLOATS else arr(3, 5, dtype=dtype, low=-4, high=5)
    check(lambda t, x: t.pow(x, exponent), x)
    check(lambda t, x: x**exponent, x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("base", [2, 0, 1, -1, 2.5, 0.0, -2.0, True])
def test_pow_scalar_base(base, dtype):
    x = sample(dtype) if dtype in FLOATS else arr(3, 5, dtype=dtype, low=0, high=5)
    check(lambda t, x: base**x, x)
    check(lambda t, x: t.pow(base, x), x)


@pytest.mark.parametrize("dtype", INTS)
def test_pow_integer_negative_tensor_exponent(dtype):
    # A *tensor* of negative exponents is allowed for integers (only 1 and -1 survive).
    info = np.iinfo(dtype)
    x = np.array([v for v in [-3, -2, -1, 0, 1, 2, 3] if v >= info.min], dtype)
    y = np.array([v for v in [-3, -2, -1, 0, 1, 2, 5] if v >= info.min], dtype)
    check(lambda t, x, y: t.pow(x, y), x[:, None], y[None, :])


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("exponent", [3, 3.0, -1])
def test_pow_cube_and_reciprocal_are_bitwise_torchs(exponent, dtype):
    # torch computes x ** 3 as x * x * x and x ** -1 as 1 / x; C's pow differs from the
    # cube by an ulp in about a quarter of float32 values (and NumPy's float32 pow from 1/x).
    x = np.random.default_rng(0).standard_normal(20_000).astype(np.float32) * 3
    ours = lt.tensor(x).to(getattr(lt, dtype)).pow(exponent).double().numpy()
    theirs = torch.tensor(x).to(getattr(torch, dtype)).pow(exponent).double().numpy()
    np.testing.assert_array_equal(ours, theirs)


# Exponents whose gradient torch computes with correctly rounded steps only (pow_backward's
# grad * (c * x ** (c - 1)), x ** (c - 1) by its kernel's special cases: 1 / (x * x) for
# -2, x for 1, x * x * x for 3, 1 / sqrt(x) for -0.5), so ours must equal it bit for bit.
# (Where x ** (c - 1) is a general pow, torch's vectorized pow is SLEEF's, within an ulp of
# C's; c = 1.5 takes torch's float32 sqrt, itself an ulp off at times: not compared here.)
POW_GRAD_EXACT = [-1, 0, 0.5, 1, 2, 3, 4, 2.0]


@pytest.mark.backends("interpreter", "cpp")
@pytest.mark.parametrize("mode", ["lazy", "sync"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "form",
    [
        lambda t, x, c: x**c,
        lambda t, x, c: t.pow(x, c),
        lambda t, x, c: x.pow(c),
    ],
    ids=["operator", "torch.pow", "method"],
)
def test_pow_number_exponent_gradient_is_bitwise_torchs(backend, mode, dtype, form):
    rng = np.random.default_rng(0)
    for c in POW_GRAD_EXACT:
        x = (rng.standard_normal(4096) * 3).astype(dtype)  # negative bases included
        if c != int(c):
            x = np.abs(x)
        x[:4] = [0.0, -0.0, 1.0, 1e-30] if c == int(c) else [0.0, 0.0, 1.0, 1e-30]
        g = rng.standard_normal(4096).astype(dtype)
        tx = torch.tensor(x, requires_grad=True)
        form(torch, tx, c).backward(torch.tensor(g))
        want = tx.grad.numpy()
        with lt.backend(backend), lt.sync_mode(mode == "sync"):
            lx = lt.tensor(x, requires_grad=True)
            y = form(lt, lx, c)
            if c != 1:  # (x ** 1 is x's own value here, not a new node as torch's copy)
                assert y.grad_fn.name() == "PowBackward0", c
            y.backward(lt.tensor(g))
            got = lx.grad.numpy()
        bits = np.int64 if dtype == "float64" else np.int32
        nan = np.isnan(want)
        assert (np.isnan(got) == nan).all(), c
        np.testing.assert_array_equal(got.view(bits)[~nan], want.view(bits)[~nan], err_msg=f"{c}")


def test_pow_number_exponent_second_derivative_matches_torch():
    # The gradient's own x ** (c - 1) is differentiated as pow too, as torch's is.
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], np.float32)
    for c in (-1, 0, 2, 3, 4):
        check_grad(lambda t, x, c=c: x**c, x, second_order=True, modes=("lazy", "sync"))
    xp = np.array([0.25, 0.5, 1.0, 3.0], np.float32)
    for c in (0.5, 1.5, -0.5, 2.5):
        check_grad(lambda t, x, c=c: x**c, xp, second_order=True, modes=("lazy", "sync"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_edge_values(dtype):
    e = edges(dtype)
    for exponent in [0, 1, 2, 3, -1, 0.5, -0.5, INF, -INF, NAN]:
        check(lambda t, x, p=exponent: x**p, e)
        check(lambda t, x, p=exponent: p**x, e)


def test_pow_inplace_dtype_rules():
    check(lambda t, x: x.pow_(2), arr(4, dtype="int32"))
    check(lambda t, x: x.pow_(0.5), arr(4, dtype="int32", low=0, high=9))
    check(lambda t, x: x.pow_(-1), arr(4, dtype="int32", low=1, high=9))
    check(lambda t, x: x.pow_(2.0), arr(4, dtype="float16"))


# -- operators ----------------------------------------------------------------------------------
OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
INPLACE_OPERATORS = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
}


def operator_inputs(sym: str, dtype: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    name = {"/": "div", "//": "floor_divide", "%": "remainder", "**": "pow"}.get(
        sym[:2].rstrip("="), "add"
    )
    return binary_inputs(name, dtype, seed)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("sym", list(OPERATORS))
def test_operator(sym, dtype):
    op = OPERATORS[sym]
    check(lambda t, x, y: op(x, y), *operator_inputs(sym, dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("sym", list(INPLACE_OPERATORS))
def test_inplace_operator(sym, dtype):
    op = INPLACE_OPERATORS[sym]

    def fn(t, x, y):
        before = x
        x = op(x, y)
        assert x is before  # += on a tensor mutates it, it does not rebind to a new one
        return x

    check(fn, *operator_inputs(sym, dtype, seed=11))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("sym", list(OPERATORS))
def test_operator_with_python_scalar(sym, dtype):
    # Both orders: `x - 2` and `2 - x` (the reflected dunder). Python scalars are weak: they
    # raise the category (int tensor * 2.5 is float) but never the width.
    op = OPERATORS[sym]
    x = arr(2, 3, dtype=dtype, low=1, high=5, seed=13)
    for scalar in [2, 1, -3, 2.5, -0.5, True, False, 0.0]:
        check(lambda t, x, s=scalar: op(x, s), x)
        check(lambda t, x, s=scalar: op(s, x), x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("sym", list(INPLACE_OPERATORS))
def test_inplace_operator_with_python_scalar(sym, dtype):
    # e.g. int tensor += 2.5 must raise RuntimeError (result Float can't be cast to Long).
    op = INPLACE_OPERATORS[sym]
    x = arr(2, 3, dtype=dtype, low=1, high=5, seed=17)
    for scalar in [2, 2.5, True]:
        check(lambda t, x, s=scalar: op(x, s), x)


def test_inplace_int_add_float_raises():
    e = check_raises(lambda t, x: x.add_(1.5), arr(3, dtype="int64"))
    assert "can't be cast" in str(e)
    check_raises(lambda t, x: x.mul_(t.ones(3)), arr(3, dtype="int32"))
    check_raises(lambda t, x: x.add_(1), arr(3, dtype="bool"))
    check_raises(lambda t, x: x.sqrt_(), arr(3, dtype="int64"))


def test_inplace_broadcast_into_smaller_tensor_raises():
    # The result of x += y must fit x's shape; broadcasting x up is an error.
    check(lambda t, x, y: x.add_(y), randn(3, 1), randn(4))
    check(lambda t, x, y: x.add_(y), randn(3, 4), randn(4))  # y broadcasts: fine


def test_inplace_on_a_view_writes_through():
    def fn(t, x):
        v = x[:, ::2]
        v.mul_(10)
        v += 1
        return x, v

    check(fn, randn(3, 4))


def test_unary_operators():
    for dtype in ALL:
        x = sample(dtype)
        check(lambda t, x: -x, x)
        check(lambda t, x: +x, x)
        check(lambda t, x: abs(x), x)
        check(lambda t, x: ~x, x)


# -- type promotion -------------------------------------------------------------------------------
PROMOTION_OPS = {
    "add": lambda t, x, y: x + y,
    "mul": lambda t, x, y: t.mul(x, y),
    "div": lambda t, x, y: x / y,
    "floordiv": lambda t, x, y: t.floor_divide(x, y),
    "eq": lambda t, x, y: x == y,
    "maximum": lambda t, x, y: t.maximum(x, y),
    "where": lambda t, x, y: t.where(x > 1, x, y),
}


@pytest.mark.parametrize("b", ALL)
@pytest.mark.parametrize("a", ALL)
def test_promotion_between_dim_tensors(a, b):
    x = arr(2, 3, dtype=a, low=1, high=4, seed=19)
    y = arr(3, dtype=b, low=1, high=4, seed=20) if b != "bool" else np.ones(3, dtype=bool)
    for fn in PROMOTION_OPS.values():
        check(fn, x, y)


@pytest.mark.parametrize("b", ALL)
@pytest.mark.parametrize("a", ALL)
def test_promotion_with_zero_dim_tensor(a, b):
    # A 0-d tensor only raises the category, never the width: int8 + int64 0-d is int8.
    x = arr(2, 3, dtype=a, low=1, high=4, seed=21)
    z = np.array(3 if b != "bool" else True, dtype=b)
    check(lambda t, x, z: x + z, x, z)
    check(lambda t, x, z: z * x, x, z)
    check(lambda t, x, z: x / z, x, z)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x, y: x.int() + 2.5,
        lambda t, x, y: x.to(t.int8) + t.tensor(300),
        lambda t, x, y: x.to(t.uint8) + x.to(t.int8),
        lambda t, x, y: x.half() + t.tensor(1e-3, dtype=t.float64),
        lambda t, x, y: x.half() * t.tensor(70000.0, dtype=t.float64),
        lambda t, x, y: x.to(t.uint8) - 300,
        lambda t, x, y: x.to(t.int16) * y.int(),
        lambda t, x, y: x.bool() + 1,
        lambda t, x, y: x.bool() + True,
        lambda t, x, y: x.bool() * 2.5,
        lambda t, x, y: t.tensor(2) + t.tensor(3.5),
        lambda t, x, y: t.tensor(2, dtype=t.int8) + t.tensor(3, dtype=t.int64),
        lambda t, x, y: x.float() + y.double(),
        lambda t, x, y: x.half() + 1e10,
    ],
)
def test_promotion_cases(fn):
    check(fn, arr(2, 3, low=1, high=9, seed=23), arr(3, low=1, high=9, seed=24))


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_promotion_follows_default_dtype(default):
    d = getattr(lt, default)
    with lt.default_dtype(d):
        x = lt.tensor([1, 2, 3])
        assert (x + 0.5).dtype is d
        assert (x / 2).dtype is d
        assert lt.exp(x).dtype is d
        assert lt.sqrt(lt.tensor([1.0])).dtype is d
        assert (lt.ones(2, dtype=lt.float32) + 0.5).dtype is lt.float32


# -- broadcasting and shapes ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sa, sb",
    [
        ((3, 1), (4,)),
        ((2, 1, 3), (5, 1)),
        ((), (2, 3)),
        ((2, 3), ()),
        ((1,), (0,)),
        ((0, 3), (3,)),
        ((0, 3), (1, 1)),
        ((1, 1, 1), (2, 3)),
        ((4, 1), (1, 5)),
    ],
)
@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "eq", "where", "atan2"])
def test_broadcasting(name, sa, sb):
    x, y = arr(*sa, seed=25), positive(*sb)
    if name == "where":
        check(lambda t, x, y: t.where(x > 0, x, y), x, y)
    else:
        check(lambda t, x, y: getattr(t, name)(x, y), x, y)


@pytest.mark.parametrize("sa, sb", [((3, 2), (4,)), ((2, 3), (3, 2)), ((0,), (2,))])
def test_broadcasting_mismatch_raises(sa, sb):
    check(lambda t, x, y: x + y, randn(*sa), randn(*sb))
    check(lambda t, x, y: t.where(x > 0, x, y), randn(*sa), randn(*sb))


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=4),
    drop=st.integers(0, 4),
    ones=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_broadcasting_random_shapes(shape, drop, ones):
    # `other` is `shape` with leading dims dropped and some dims set to 1: always compatible.
    other = [1 if ones[i] else d for i, d in enumerate(shape)][min(drop, len(shape)) :]
    x, y = arr(*shape, seed=27), arr(*other, seed=28)
    check(lambda t, x, y: x * y - t.maximum(x, y), x, y)
    check(lambda t, x, y: y / (x.abs() + 1) >= x, x, y)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x, y: t.add(x.T, y),
        lambda t, x, y: x[:, ::2] * y[::2, :2],
        lambda t, x, y: t.sub(x.T[1:], y.T[1:]),
        lambda t, x, y: x.flip(1) / y,
        lambda t, x, y: t.where(x.T > 0, x.T, y.T),
        lambda t, x, y: t.pow(x.abs().T, y.T),
        lambda t, x, y: x[..., None] + y[:, None, :],
    ],
)
def test_non_contiguous_inputs(fn):
    check(fn, randn(4, 4), randn(4, 4))


def test_zero_dim_results():
    check(lambda t, x, y: x + y, np.array(2.5, "float32"), np.array(3, "int64"))
    check(lambda t, x, y: t.maximum(x, y), np.array(2.5, "float32"), np.array(3.5, "float32"))
    check(lambda t, x, y: x < y, np.array(2.5, "float64"), np.array(3, "int8"))


def test_binary_rejects_bad_operands():
    check_raises(lambda t, x: t.add(x, "a"), randn(3))
    check_raises(lambda t, x: t.maximum(x, 2.0), randn(3))
    check_raises(lambda t, x: t.minimum(2.0, x), randn(3))
    check_raises(lambda t, x: x - x.bool(), randn(3).astype(bool))


# -- comparisons and logic -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_with_scalar(name, dtype):
    # Fractional scalars promote integer tensors to float; out-of-range ints wrap into the
    # tensor's dtype as in torch (uint8 == -1 compares with 255).
    x = edges(dtype)
    for other in [0, 1, -1, 0.5, 300, -300, True, NAN, INF]:
        check(lambda t, x, o=other: getattr(t, name)(x, o), x)
        check(lambda t, x, o=other: getattr(operator, name)(o, x), x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", LOGIC)
def test_logic_with_scalar(name, dtype):
    # bitwise ops take Python scalars (not floats); logical_* take tensors only.
    x = edges(dtype)
    for other in [0, 3, 2.5, True, False]:
        check(lambda t, x, o=other: getattr(t, name)(x, o), x)


# -- where, clamp, lerp, addcmul/addcdiv -------------------------------------------------------------
@pytest.mark.parametrize("b", ALL)
@pytest.mark.parametrize("a", ALL)
def test_where_dtypes(a, b):
    c = arr(2, 3, dtype="bool", seed=29)
    check(lambda t, c, x, y: t.where(c, x, y), c, arr(2, 3, dtype=a), arr(3, dtype=b))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, c, x: t.where(c, x, 0.0),
        lambda t, c, x: t.where(c, 1, x),
        lambda t, c, x: t.where(c, 1, 0),
        lambda t, c, x: t.where(c, 1.5, 0),
        lambda t, c, x: t.where(c, True, False),
        lambda t, c, x: t.where(c, x.int(), 2.5),
        lambda t, c, x: t.where(c, x.half(), t.tensor(2.0, dtype=t.float64)),
        lambda t, c, x: t.where(c[0], x, x.T[:1].T),
        lambda t, c, x: x.where(c, -x),
        lambda t, c, x: x.where(c, 7),
        lambda t, c, x: t.where(c.int(), x, 0.0),
        lambda t, c, x: t.where(c.float(), x, 0.0),
        lambda t, c, x: t.where(c.T, x.T, 2),
        lambda t, c, x: t.where(c),
        lambda t, c, x: t.where(x > 0),
    ],
)
def test_where_forms(fn):
    check(fn, arr(3, 4, dtype="bool", seed=31), randn(3, 4))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "bounds",
    [(0, None), (None, 1), (-1, 1), (1, -1), (-0.5, 0.5), (0.5, None), (True, None), (2, 2)],
)
def test_clamp_scalar_bounds(bounds, dtype):
    lo, hi = bounds
    x = sample(dtype)
    check(lambda t, x: t.clamp(x, lo, hi), x)
    check(lambda t, x: t.clip(x, min=lo, max=hi), x)
    check(lambda t, x: x.clamp(lo, hi), x)
    check(lambda t, x: x.clamp_(lo, hi), x)
    if lo is not None:
        check(lambda t, x: t.clamp_min(x, lo), x)
        check(lambda t, x: x.clamp_min_(lo), x)
    if hi is not None:
        check(lambda t, x: t.clamp_max(x, hi), x)
        check(lambda t, x: x.clamp_max_(hi), x)


@pytest.mark.parametrize("dtype", ["int32", "float16", "float32", "float64"])
def test_clamp_tensor_bounds(dtype):
    x = sample(dtype)
    lo = arr(x.shape[1], dtype=dtype, low=-2, high=0, seed=33)
    hi = arr(3, 1, dtype=dtype, low=0, high=3, seed=34)
    check(lambda t, x, lo, hi: t.clamp(x, lo, hi), x, lo, hi)
    check(lambda t, x, lo, hi: t.clamp(x, min=lo), x, lo, hi)
    check(lambda t, x, lo, hi: t.clamp(x, max=hi), x, lo, hi)
    check(lambda t, x, lo, hi: t.clamp(x, hi, lo), x, lo, hi)  # min > max: everything is max
    check(lambda t, x, lo, hi: x.clamp_(lo, hi), x, lo, hi)
    check(lambda t, x, lo, hi: t.clamp(x, lo.double(), 1), x, lo, hi)


@pytest.mark.parametrize("dtype", ["int64", "float16", "float32"])
def test_clamp_mixes_a_number_with_a_0d_tensor(dtype):
    # torch reads a 0-d tensor without gradient beside a number as a number (PyTorch-VAE's
    # beta_vae: torch.clamp(c, 0, self.C_max.data[0])), with a number's promotion; a
    # tensor bound of another shape, or one that requires grad, is refused (TypeError)
    x = sample(dtype)
    check(lambda t, x: t.clamp(x, 0, t.tensor(2.5)), x)
    check(lambda t, x: t.clamp(x, t.tensor(-1), 3), x)
    check(lambda t, x: x.clamp(0, t.tensor([25.0])[0]), x)
    check(lambda t, x: x.clamp_(t.tensor(-1.0, dtype=t.float64), 2), x)
    check(lambda t, x: t.clamp(x, 0, t.tensor([2.0])), x)
    check(lambda t, x: t.clamp(x, t.tensor(0.5, requires_grad=True), 2), x)
    if dtype != "int64":
        check_grad(lambda t, x: t.clamp(x, 0, t.tensor(0.5)), x)


@pytest.mark.parametrize(
    "dtype, bounds",
    [
        ("uint8", (300, None)),
        ("uint8", (-255, None)),  # wraps to 1, as in torch
        ("uint8", (-256, None)),
        ("int8", (None, -200)),
        ("float16", (None, 1e10)),
        ("float16", (-1e10, None)),
        ("float16", (-INF, INF)),
    ],
)
def test_clamp_bound_must_fit_the_dtype(dtype, bounds):
    check(lambda t, x: t.clamp(x, *bounds), arr(4, dtype=dtype, low=0, high=9, seed=32))


def test_clamp_nan_bounds_and_errors():
    x = np.array([NAN, -1.0, 0.0, 2.0], "float32")
    check(lambda t, x: t.clamp(x, NAN, 1.0), x)
    check(lambda t, x: t.clamp(x, 0.0, NAN), x)
    check(lambda t, x: t.clamp(x, t.tensor([NAN, 0.0, NAN, 1.0]), None), x)
    check(lambda t, x: t.clamp(x), x)
    check(lambda t, x: t.clamp(x.bool(), 0, 1), x)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("weight", [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, -0.5, "tensor"])
def test_lerp(weight, dtype):
    x, y = arr(3, 4, dtype=dtype, seed=35), arr(4, dtype=dtype, seed=36)
    if weight == "tensor":
        w = arr(3, 1, dtype=dtype, low=-1, high=2, seed=37)
        check(lambda t, x, y, w: t.lerp(x, y, w), x, y, w)
        check(lambda t, x, y, w: x.lerp_(y, w), x, y, w)
    else:
        check(lambda t, x, y: t.lerp(x, y, weight), x, y)
        check(lambda t, x, y: x.lerp(y, weight), x, y)
        check(lambda t, x, y: x.lerp_(y, weight), x, y)


def test_lerp_edge_values():
    e = edges("float32")
    check(lambda t, x, y: t.lerp(x, y, 0.3), e[:, None], e[None, :])
    check(lambda t, x, y: t.lerp(x, y, 0.7), e[:, None], e[None, :])
    check(lambda t, x, y: t.lerp(x, y, x.double()), randn(3), randn(3))  # dtype mismatch


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("value", [1, 2, 0.5, -1.5])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(name, value, dtype):
    x = arr(3, 4, dtype=dtype, seed=39)
    a = arr(3, 1, dtype=dtype, seed=40)
    b = nonzero(4, dtype=dtype, seed=41)
    check(lambda t, x, a, b: getattr(t, name)(x, a, b, value=value), x, a, b)
    check(lambda t, x, a, b: getattr(x, name)(a, b, value=value), x, a, b)
    check(lambda t, x, a, b: getattr(x, name + "_")(a, b, value=value), x, a, b)


def test_add_sub_alpha():
    for dtype in ALL:
        x, y = arr(3, dtype=dtype, seed=43), arr(3, dtype=dtype, seed=44)
        for alpha in [2, -1, 0.5, True, 0]:
            check(lambda t, x, y, a=alpha: t.add(x, y, alpha=a), x, y)
            check(lambda t, x, y, a=alpha: t.sub(x, y, alpha=a), x, y)
            check(lambda t, x, y, a=alpha: x.add_(y, alpha=a), x, y)
            check(lambda t, x, y, a=alpha: t.add(x, 3, alpha=a), x, y)


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch warns on the deprecated forms
def test_deprecated_scalar_first_overloads():
    # ``p.data.add_(-lr, p.grad.data)`` (char-RNN generation tutorial) and old hand-written
    # Adam's ``addcmul_(1 - beta2, grad, grad)`` / ``addcdiv_(-step, m, denom)``: torch 2.13
    # still accepts scalar-first add/sub/addcmul/addcdiv
    x, a, b = (
        arr(3, 4, dtype="float64", seed=45),
        arr(3, 4, dtype="float64", seed=46),
        nonzero(4, dtype="float64", seed=47),
    )
    check(lambda t, x, a: t.add(x, -0.5, a), x, a)
    check(lambda t, x, a: x.add(2, a), x, a)
    check(lambda t, x, a: x.add(2, 3), x, a)
    check(lambda t, x, a: x.add_(-0.1, a), x, a)
    check(lambda t, x, a: t.sub(x, 3, a), x, a)
    check(lambda t, x, a: x.sub_(0.25, a), x, a)
    for name in ("addcmul", "addcdiv"):
        check(lambda t, x, a, b, n=name: getattr(t, n)(x, 0.5, a, b), x, a, b)
        check(lambda t, x, a, b, n=name: getattr(x, n)(-2, a, b), x, a, b)
        check(lambda t, x, a, b, n=name: getattr(x, n + "_")(0.1, a, b), x, a, b)
    check_grad(lambda t, x, a, b: x.add(3, a) * x.addcmul(0.5, a, b), x, a, b)
    # the scalar comes first, and not with the keyword too
    check_raises(lambda t, x, a: x.add(a, 2), x, a)
    check_raises(lambda t, x, a: x.add(2, a, alpha=2), x, a)
    check_raises(lambda t, x, a: x.addcmul(0.5, a, a, value=2), x, a)


# -- nan_to_num, isnan & co, sign --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"nan": 1.5},
        {"posinf": 9.0},
        {"neginf": -9.0},
        {"nan": 0.0, "posinf": 1.0, "neginf": -1.0},
    ],
)
def test_nan_to_num(kwargs, dtype):
    x = sample(dtype)
    check(lambda t, x: t.nan_to_num(x, **kwargs), x)
    check(lambda t, x: x.nan_to_num(**kwargs), x)
    check(lambda t, x: x.nan_to_num_(**kwargs), x)


@pytest.mark.parametrize("dtype", ALL)
def test_classification_and_sign(dtype):
    x = sample(dtype)
    for name in ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "sign", "sgn"]:
        check(lambda t, x, name=name: getattr(t, name)(x), x)


def test_sign_of_zero_and_nan():
    x = np.array([NAN, -0.0, 0.0, -INF, INF, -1e-30, 1e-30], "float64")
    check(lambda t, x: t.sign(x), x)
    got = lt.sign(lt.from_numpy(x)).numpy()
    want = torch.sign(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(np.signbit(got[1:]), np.signbit(want[1:]))


# -- hypothesis: random values through a chain of ops ------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(ALL),
    vals=st.lists(st.floats(-100, 100, allow_nan=False, width=16), min_size=1, max_size=8),
)
def test_random_values_through_arithmetic(dtype, vals):
    x = np.array(vals).astype(dtype)
    check(lambda t, x: (x * 3 - 1) * x, x)
    check(lambda t, x: t.maximum(x, x.flip(0)) == x, x)


# -- out= -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("out_dtype", ["bool", "int64", "float16", "float64"])
@pytest.mark.parametrize(
    "fn",
    [
        lambda t, x, o: t.add(x, x, out=o),
        lambda t, x, o: t.add(x.long(), 1, out=o),
        lambda t, x, o: t.mul(x > 0, x < 1, out=o),
        lambda t, x, o: t.sin(x, out=o),
        lambda t, x, o: t.sqrt(x.abs().long(), out=o),
        lambda t, x, o: t.eq(x, 0.5, out=o),
        lambda t, x, o: t.div(x, 2, rounding_mode="floor", out=o),
        lambda t, x, o: t.abs(x.to(o.dtype)[:2], out=o),  # out is resized
    ],
)
def test_out_argument(fn, out_dtype):
    # The result goes into out in out's dtype, and out is returned; float results refuse an
    # integer out, non-bool results a bool one (RuntimeError, as in torch). (Which ops accept
    # an out of another float dtype varies op by op in torch; not tested.)
    def run(t, x):
        o = t.zeros(3, dtype=dt_of(t, out_dtype))
        r = fn(t, x, o)
        assert r is o
        return o

    # Results are computed in float32 whatever out's dtype: float32 tolerances.
    check(run, arr(3, seed=51), atol=1e-5, rtol=1e-5)


def dt_of(lib, name):
    return getattr(lib, name)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "sign", "abs", "neg"])
def test_out_argument_integer_input(name):
    # Integer inputs of rounding ops are returned unchanged; with out= they land in out.
    def run(t, x):
        o = t.full((4,), 7)
        assert getattr(t, name)(x, out=o) is o
        return o

    check(run, np.array([-3, 0, 2, 9]))


@pytest.mark.parametrize(
    "name", ["sin_", "exp_", "relu_", "sigmoid_", "tanh_", "abs_", "neg_", "sqrt_", "zero_"]
)
def test_torch_function_forms_of_inplace_methods(name):
    # torch.sin_(b) (the introyt tensors tutorial): the function form of b.sin_(), in place
    def fn(t, x):
        y = x.clone()
        r = getattr(t, name)(y)
        return y, r is y

    check(fn, positive(2, 3, dtype="float32"))
    check(lambda t, x: (t.clamp_(x, -0.5, 0.5), t.fill_(x.clone(), 2.5)), arr(4, seed=48))
    check_raises(lambda t: getattr(t, name)(1.0))
