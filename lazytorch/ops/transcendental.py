"""Transcendental functions that are decompositions, not primitives: reciprocal/rsqrt,
tan, log2/log10/exp2, erfc, hyperbolic and inverse trig functions, atan2.

Each is written to stay accurate where the naive formula is not: erfc by Cody's rational
approximations (erfc(x) is not 1 - erf(x) for large x), sinh/asinh near 0 returning x, the
log(2x) forms before x**2 overflows, and float16 computed in float32 ("opmath").
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch._public import public
from lazytorch.ir.node import Node
from lazytorch.ops._core import (
    P,
    binary_node,
    const_like,
    device_of,
    result_type,
    to_node,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import cast_into_out
from lazytorch.ops.elementwise import (
    _add,
    _div,
    _float_dtype,
    _float_input,
    _in_opmath,
    _lt,
    _mul,
    _sub,
)
from lazytorch.tensor import Tensor


def _decomposed_unary(name: str, build: Any, doc: str) -> Any:
    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        return cast_into_out(wrap(_in_opmath(build, _float_input(input, name))), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# Below TINY an odd function f with f'(0) = 1 (sinh, asinh) equals x to the last bit (the
# cubic term is x**2 / 6 relative); returning x there also keeps -0.0. Above HUGE, x**2 + 1
# rounds to x**2 in every float dtype, so asinh/acosh switch to log(2x) before x**2 overflows.
_TINY = 2.0**-28
_HUGE = 2.0**28
_LN2 = math.log(2)


def _odd(n: Node, v: Node) -> Node:
    """The odd extension of `v` = f(|n|): -v for negative n, and n itself where |n| is tiny."""
    signed = where_node(_lt(n, const_like(0, n)), unary_node(P.neg, v), v)
    return where_node(_lt(unary_node(P.abs, n), const_like(_TINY, n)), n, signed)


def _sinh(n: Node) -> Node:
    a = unary_node(P.abs, n)
    below1 = _lt(a, const_like(1, n))
    # Each branch sees only its own arguments (0 or 1 elsewhere): t / (t + 1) at t = inf
    # is NaN, and so would be the gradient through that branch where it is not taken.
    a_small = where_node(below1, a, const_like(0, n))
    a_large = where_node(below1, const_like(1, n), a)
    # Small |x|: expm1 avoids the cancellation of e**x - e**-x (fdlibm's formula).
    t = unary_node(P.expm1, a_small)
    small = _mul(const_like(0.5, n), _add(t, _div(t, _add(t, const_like(1, n)))))
    # Otherwise e**(x/2) squared: no overflow before the result itself overflows.
    h = unary_node(P.exp, _mul(a_large, const_like(0.5, n)))
    large = _sub(_mul(_mul(const_like(0.5, n), h), h), _div(_div(const_like(0.5, n), h), h))
    return _odd(n, where_node(below1, small, large))


def _cosh(n: Node) -> Node:
    # |x| with the kink's slope taken as 1, not abs's 0: cosh is even, and the second
    # derivative at 0 is then cosh(0) = 1 rather than 0
    a = where_node(_lt(n, const_like(0, n)), unary_node(P.neg, n), n)
    h = unary_node(P.exp, _mul(a, const_like(0.5, n)))
    return _add(_mul(_mul(const_like(0.5, n), h), h), _div(_div(const_like(0.5, n), h), h))


def _sqrt_1m_x2(n: Node) -> Node:
    # sqrt(1 - x) * sqrt(1 + x) rather than sqrt(1 - x*x): no cancellation near |x| = 1,
    # and the gradient at |x| = 1 is torch's infinity, not the inf * 0 = NaN of
    # differentiating the product (1 - x)(1 + x) under a root.
    return _mul(
        unary_node(P.sqrt, _sub(const_like(1, n), n)), unary_node(P.sqrt, _add(const_like(1, n), n))
    )


def _asinh(n: Node) -> Node:
    a = unary_node(P.abs, n)
    huge = _lt(const_like(_HUGE, n), a)
    # Each branch sees only arguments it is meant for (1 elsewhere), so the branch not
    # taken has a finite gradient: log's at 0 and a**2's at inf would make 0 * inf = NaN.
    am = where_node(huge, const_like(1, n), a)
    ab = where_node(huge, a, const_like(1, n))
    # log1p(a + a**2 / (1 + sqrt(1 + a**2))) = log(a + sqrt(a**2 + 1)), accurate near 0.
    a2 = _mul(am, am)
    mid = unary_node(
        P.log1p,
        _add(am, _div(a2, _add(const_like(1, n), unary_node(P.sqrt, _add(a2, const_like(1, n)))))),
    )
    big = _add(unary_node(P.log, ab), const_like(_LN2, n))
    return _odd(n, where_node(huge, big, mid))


def _acosh(n: Node) -> Node:
    huge = _lt(const_like(_HUGE, n), n)
    # As in asinh, each branch sees only its own arguments (2 or 1 elsewhere), so the
    # branch not taken has a finite gradient.
    nm = where_node(huge, const_like(2, n), n)
    nb = where_node(huge, n, const_like(1, n))
    # log1p(t + sqrt(2t + t**2)) with t = x - 1: log(x + sqrt(x**2 - 1)), accurate near 1;
    # sqrt(t) * sqrt(t + 2), so that the gradient at x = 1 is torch's inf (not inf * 0).
    t = _sub(nm, const_like(1, n))
    mid = unary_node(
        P.log1p, _add(t, _mul(unary_node(P.sqrt, t), unary_node(P.sqrt, _add(t, const_like(2, n)))))
    )
    big = _add(unary_node(P.log, nb), const_like(_LN2, n))
    v = where_node(huge, big, mid)
    # The formula's rounding can land on log1p(-1) = -inf for large negative x; acosh is NaN.
    return where_node(_lt(n, const_like(1, n)), const_like(math.nan, n), v)


def _atanh(n: Node) -> Node:
    # 0.5 * (log1p(x) - log1p(-x)) = 0.5 * log((1 + x) / (1 - x)): accurate near 0 (the two
    # terms have opposite signs), and at x = +-1 the gradient is torch's inf, where
    # differentiating 2x / (1 - x) would give 0 * inf = NaN.
    return _mul(
        const_like(0.5, n), _sub(unary_node(P.log1p, n), unary_node(P.log1p, unary_node(P.neg, n)))
    )


# W. J. Cody's rational approximations for erfc (Math. Comp. 23, 1969; netlib specfun
# CALERF): relative error near float64 rounding, where 1 - erf(x) loses every digit for
# large x (erfc(10) = 2e-45 but 1 - erf(10) = 0).
_ERFC_C = (
    5.64188496988670089e-1, 8.88314979438837594, 6.61191906371416295e1, 2.98635138197400131e2,
    8.81952221241769090e2, 1.71204761263407058e3, 2.05107837782607147e3, 1.23033935479799725e3,
    2.15311535474403846e-8,
)  # fmt: skip
_ERFC_D = (
    1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2, 1.62138957456669019e3,
    3.29079923573345963e3, 4.36261909014324716e3, 3.43936767414372164e3, 1.23033935480374942e3,
)  # fmt: skip
_ERFC_P = (
    3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
    1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2,
)  # fmt: skip
_ERFC_Q = (
    2.56852019228982242, 1.87295284992346725, 5.27905102951428412e-1, 6.05183413124413191e-2,
    2.33520497626869185e-3,
)  # fmt: skip
_ERFC_SMALL = 0.46875  # below it 1 - erf(x) is accurate (erfc(x) > 0.5)
_ERFC_ZERO = 27.0  # erfc underflows to 0 beyond it in float64 (and earlier in narrower dtypes)


def _erfc(n: Node) -> Node:
    a = unary_node(P.abs, n)
    # The rational forms divide by y; feed them 1 where the series near 0 is used, and 27 past
    # the underflow, so the branches not taken have finite gradients (0 * inf is NaN).
    y = where_node(_lt(a, const_like(_ERFC_SMALL, n)), const_like(1, n), a)
    y = where_node(_lt(const_like(_ERFC_ZERO, n), a), const_like(_ERFC_ZERO, n), y)
    # 0.46875 <= y <= 4: erfc(y) = exp(-y**2) * C(y) / D(y).
    num, den = _mul(const_like(_ERFC_C[8], n), y), y
    for c, d in zip(_ERFC_C[:7], _ERFC_D[:7]):
        num, den = _mul(_add(num, const_like(c, n)), y), _mul(_add(den, const_like(d, n)), y)
    mid = _div(_add(num, const_like(_ERFC_C[7], n)), _add(den, const_like(_ERFC_D[7], n)))
    # y > 4: erfc(y) = exp(-y**2) / y * (1/sqrt(pi) - P(1/y**2) / Q(1/y**2) / y**2).
    z = _div(const_like(1, n), _mul(y, y))
    num, den = _mul(const_like(_ERFC_P[5], n), z), z
    for p, q in zip(_ERFC_P[:4], _ERFC_Q[:4]):
        num, den = _mul(_add(num, const_like(p, n)), z), _mul(_add(den, const_like(q, n)), z)
    tail = _div(_mul(z, _add(num, const_like(_ERFC_P[4], n))), _add(den, const_like(_ERFC_Q[4], n)))
    big = _div(_sub(const_like(1 / math.sqrt(math.pi), n), tail), y)
    r = where_node(_lt(const_like(4, n), y), big, mid)
    # exp(-y**2) as exp(-s**2) * exp(-(y - s)(y + s)) with s = y rounded down to 1/16: s**2
    # is exact, so the large exponent carries no rounding error.
    s = _mul(unary_node(P.floor, _mul(y, const_like(16, n))), const_like(1 / 16, n))
    e = _mul(
        unary_node(P.exp, unary_node(P.neg, _mul(s, s))),
        unary_node(P.exp, unary_node(P.neg, _mul(_sub(y, s), _add(y, s)))),
    )
    pos = where_node(_lt(const_like(_ERFC_ZERO, n), a), const_like(0, n), _mul(e, r))
    # erfc(-y) = 2 - erfc(y); NaN falls through every comparison into `pos`, which is NaN.
    full = where_node(_lt(n, const_like(0, n)), _sub(const_like(2, n), pos), pos)
    near0 = _sub(const_like(1, n), unary_node(P.erf, n))
    return where_node(_lt(a, const_like(_ERFC_SMALL, n)), near0, full)


rsqrt = public(method=True, inplace=True)(
    _decomposed_unary(
        "rsqrt", lambda n: _div(const_like(1, n), unary_node(P.sqrt, n)), "1 / sqrt(x)"
    )
)
reciprocal = public(method=True, inplace=True)(
    _decomposed_unary("reciprocal", lambda n: _div(const_like(1, n), n), "1 / x")
)
tan = public(method=True, inplace=True)(
    _decomposed_unary(
        "tan", lambda n: _div(unary_node(P.sin, n), unary_node(P.cos, n)), "sin(x) / cos(x)"
    )
)
log2 = public(method=True, inplace=True)(
    _decomposed_unary(
        "log2", lambda n: _mul(unary_node(P.log, n), const_like(1 / math.log(2), n)), "log base 2"
    )
)
log10 = public(method=True, inplace=True)(
    _decomposed_unary(
        "log10",
        lambda n: _mul(unary_node(P.log, n), const_like(1 / math.log(10), n)),
        "log base 10",
    )
)
exp2 = public(method=True, inplace=True)(
    _decomposed_unary("exp2", lambda n: binary_node(P.pow, const_like(2, n), n), "2 ** x")
)
erfc = public(method=True, inplace=True)(
    _decomposed_unary("erfc", _erfc, "1 - erf(x), accurate where it is tiny")
)
sinh = public(method=True, inplace=True)(_decomposed_unary("sinh", _sinh, "(e**x - e**-x) / 2"))
cosh = public(method=True, inplace=True)(_decomposed_unary("cosh", _cosh, "(e**x + e**-x) / 2"))
asin = public(torch=("asin", "arcsin"), method=True, inplace=True)(
    _decomposed_unary("asin", lambda n: binary_node(P.atan2, n, _sqrt_1m_x2(n)), "inverse sine")
)
acos = public(torch=("acos", "arccos"), method=True, inplace=True)(
    _decomposed_unary("acos", lambda n: binary_node(P.atan2, _sqrt_1m_x2(n), n), "inverse cosine")
)
arcsin, arccos = asin, acos
asinh = public(torch=("asinh", "arcsinh"), method=True, inplace=True)(
    _decomposed_unary("asinh", _asinh, "inverse hyperbolic sine")
)
acosh = public(torch=("acosh", "arccosh"), method=True, inplace=True)(
    _decomposed_unary("acosh", _acosh, "inverse hyperbolic cosine")
)
atanh = public(torch=("atanh", "arctanh"), method=True, inplace=True)(
    _decomposed_unary("atanh", _atanh, "inverse hyperbolic tangent")
)


@public(torch=("atan2", "arctan2"), method=True, inplace=True)
def atan2(input: Tensor, other: Any, *, out: Any = None) -> Tensor:
    d = _float_dtype(result_type(input, other))
    dev = device_of(input, other, op="atan2")
    return cast_into_out(
        wrap(binary_node(P.atan2, to_node(input, d, dev), to_node(other, d, dev))), out, "atan2"
    )
