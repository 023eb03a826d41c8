"""Special functions as decompositions into existing primitives: lgamma, digamma, polygamma,
mvlgamma, erfinv, the modified Bessel functions i0/i0e/i1/i1e, ndtr/ndtri/log_ndtr,
entr, xlog1py and logaddexp2.

Where torch's kernel is a fixed algorithm (ATen/native/Math.h: Cephes' digamma, zeta and
Chebyshev series, Giles-free erfinv with two Newton steps, trigamma's six shifts), the same
algorithm is recorded here with its loops unrolled to a fixed count and masked, so that the
values are torch's to rounding (torch's trigamma, for one, truncates its asymptotic series at
about 1e-9 relative, and so does this one). lgamma, which torch takes from the C library, is
the recurrence to x >= 10, Stirling's series (error below 1e-16 there) and the reflection
formula below 0.5. Each function is an `autograd.Function` whose backward is torch's
formula (lgamma' = digamma, digamma' = polygamma(1), erfinv' = sqrt(pi)/2 exp(erfinv**2),
i0' = i1, ...), not the derivative of the approximation; the backward is itself made of
these ops, so higher derivatives work too.

Precision: torch computes float32 digamma, trigamma and erfinv in float32, and the others
(lgamma from the C library, zeta in double) more precisely; each function here uses the
dtype torch's kernel does (float16 inputs compute in float32 or float64 and round once).
"""

from __future__ import annotations

import math
from typing import Any

from lazytorch import _dtype_info
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.autograd.function import Function
from lazytorch.ir import dtypes as dt
from lazytorch.ir.node import Node
from lazytorch.ops import _cephes as C
from lazytorch.ops import transcendental as T
from lazytorch.ops._core import (
    P,
    binary_node,
    broadcast_nodes,
    cast,
    const_like,
    device_of,
    result_type,
    tensor_arg,
    to_node,
    unary_node,
    where_node,
    wrap,
)
from lazytorch.ops.creation import cast_into_out
from lazytorch.ops.elementwise import _float_dtype, _float_input, _in_opmath
from lazytorch.ops.elementwise import where as _tw
from lazytorch.tensor import Tensor

# -- a small expression layer over nodes, so that the ports read like the C they follow -------


class _V:
    """A node with arithmetic operators; Python numbers become constants of its dtype."""

    __slots__ = ("n",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, n: Node) -> None:
        self.n = n

    def _o(self, x: Any) -> Node:
        return x.n if isinstance(x, _V) else const_like(x, self.n)

    def _b(self, prim: Any, o: Any, rev: bool = False, dtype: Any = None) -> _V:
        a, b = (self._o(o), self.n) if rev else (self.n, self._o(o))
        return _V(binary_node(prim, a, b, dtype))

    def __add__(self, o: Any) -> _V:
        return self._b(P.add, o)

    def __radd__(self, o: Any) -> _V:
        return self._b(P.add, o, True)

    def __sub__(self, o: Any) -> _V:
        return self._b(P.sub, o)

    def __rsub__(self, o: Any) -> _V:
        return self._b(P.sub, o, True)

    def __mul__(self, o: Any) -> _V:
        return self._b(P.mul, o)

    def __rmul__(self, o: Any) -> _V:
        return self._b(P.mul, o, True)

    def __truediv__(self, o: Any) -> _V:
        return self._b(P.div, o)

    def __rtruediv__(self, o: Any) -> _V:
        return self._b(P.div, o, True)

    def __neg__(self) -> _V:
        return _V(unary_node(P.neg, self.n))

    def __lt__(self, o: Any) -> _V:
        return self._b(P.lt, o, dtype=dt.bool_)

    def __le__(self, o: Any) -> _V:
        return self._b(P.le, o, dtype=dt.bool_)

    def __gt__(self, o: Any) -> _V:
        return self._b(P.gt, o, dtype=dt.bool_)

    def __ge__(self, o: Any) -> _V:
        return self._b(P.ge, o, dtype=dt.bool_)

    def __eq__(self, o: Any) -> _V:  # type: ignore[override]
        return self._b(P.eq, o, dtype=dt.bool_)

    def __ne__(self, o: Any) -> _V:  # type: ignore[override]
        return self._b(P.ne, o, dtype=dt.bool_)

    def __and__(self, o: _V) -> _V:
        return _V(binary_node(P.bitwise_and, self.n, o.n))

    def __or__(self, o: _V) -> _V:
        return _V(binary_node(P.bitwise_or, self.n, o.n))

    def __invert__(self) -> _V:
        return _V(unary_node(P.bitwise_not, self.n))


def _u(prim: Any, v: _V) -> _V:
    return _V(unary_node(prim, v.n))


def _where(c: _V, a: Any, b: Any, like: _V) -> _V:
    an = a.n if isinstance(a, _V) else const_like(a, like.n)
    bn = b.n if isinstance(b, _V) else const_like(b, like.n)
    return _V(where_node(c.n, an, bn))


def _log(v: _V) -> _V:
    return _u(P.log, v)


def _exp(v: _V) -> _V:
    return _u(P.exp, v)


def _abs(v: _V) -> _V:
    return _u(P.abs, v)


def _trunc(v: _V) -> _V:
    return _where(v < 0, _u(P.ceil, v), _u(P.floor, v), v)


def _polevl(x: _V, coeffs: tuple[float, ...]) -> _V:
    """Cephes' polevl: coeffs[0] x**N + ... + coeffs[N], by Horner's rule."""
    r: Any = coeffs[0]
    for c in coeffs[1:]:
        r = x * r + c if isinstance(r, _V) else x * float(r) + c
    return r  # type: ignore[no-any-return]


def _chbevl(x: _V, coeffs: tuple[float, ...]) -> _V:
    """Cephes' chbevl: a Chebyshev series by Clenshaw's recurrence."""
    b0: Any = coeffs[0]
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c if isinstance(b1, _V) else x * float(b1) - b2 + c
    return 0.5 * (b0 - b2)  # type: ignore[no-any-return]


_PI = math.pi
_INF = math.inf
_NAN = math.nan


def _in(compute: dt.DType | None, build: Any, n: Node) -> Node:
    """`build` on `n`, computed in `compute` (None: the input's own dtype, float16 in float32)
    and rounded once to the input's dtype."""
    if compute is None:
        return _in_opmath(lambda m: build(_V(m)).n, n)
    if n.dtype is compute:
        return build(_V(n)).n  # type: ignore[no-any-return]
    return cast(build(_V(cast(n, compute))).n, n.dtype)


# -- lgamma -----------------------------------------------------------------------------------
# Stirling's series of lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) in 1/z**2, times 1/z:
# B_2k / (2k (2k - 1)). Seven terms: at z >= 10 the first omitted one is 3e-17.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma_pos(z: _V) -> _V:
    """lgamma(z) for z >= 0.5: shift to z >= 10 (the product of the shifts, at most
    ~1e10, is divided out as one log) and Stirling's series."""
    p: Any = 1.0
    for _ in range(10):
        small = z < 10
        p = _where(small, z, 1.0, z) * p if isinstance(p, _V) else _where(small, z, 1.0, z)
        z = _where(small, z + 1.0, z, z)
    inv = 1.0 / z
    inv2 = inv * inv
    s: Any = _STIRLING[-1]
    for c in reversed(_STIRLING[:-1]):
        s = inv2 * s + c if isinstance(s, _V) else inv2 * float(s) + c
    return (z - 0.5) * _log(z) - z + _HALF_LOG_2PI + inv * s - _log(p)


def _lgamma(x: _V) -> _V:
    refl = x < 0.5
    z = _where(refl, 1.0 - x, x, x)
    lz = _lgamma_pos(z)
    # log|Gamma(x)| = log(pi / |sin(pi x)|) - lgamma(1 - x); x - round(x) is exact, so
    # sin(pi r) keeps its digits at large |x| and near the poles (log(0) = -inf: a pole is inf).
    r = x - _u(P.round, x)
    reflected = math.log(_PI) - _log(_abs(_u(P.sin, r * _PI))) - lz
    v = _where(refl, reflected, lz, x)
    v = _where((x == 1.0) | (x == 2.0), 0.0, v, x)  # exact zeros, as the C library's
    return _where(_abs(x) == _INF, _INF, v, x)


# -- digamma (torch's calc_digamma, Cephes' psi) -------------------------------------------------
_PSI_10 = 2.25175258906672110764
_PSI_A = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)  # fmt: skip


def _digamma(x: _V) -> _V:
    neg = x < 0
    # torch's reflection term pi / tan(pi r), r the fractional part, in double even for float
    r = x - _trunc(x)
    r64 = cast(r.n, dt.float64)
    pr = binary_node(P.mul, r64, const_like(_PI, r64))
    tan = binary_node(P.div, unary_node(P.sin, pr), unary_node(P.cos, pr))
    refl = _V(cast(binary_node(P.div, const_like(_PI, tan), tan), x.n.dtype))
    z = _where(neg, 1.0 - x, x, x)
    res: Any = 0.0
    for _ in range(10):  # torch: while (x < 10) { result -= 1 / x; x += 1; }
        small = z < 10
        step = _where(small, 1.0 / z, 0.0, z)
        res = res - step if isinstance(res, _V) else -step
        z = _where(small, z + 1.0, z, z)
    zz = 1.0 / (z * z)
    y = _where(z < 1e17, zz * _polevl(zz, _PSI_A), 0.0, z)
    v = _where(z == 10, res + _PSI_10, res + _log(z) - 0.5 / z - y, z)
    v = _where(neg, v - refl, v, v)
    v = _where(neg & (x == _trunc(x)), _NAN, v, v)
    # digamma(+-0) = -+inf (copysign(inf, -x)): 1 / x tells the zeros apart
    zero = _where(1.0 / x < 0, _INF, -_INF, x)
    return _where(x == 0, zero, v, x)


# -- trigamma (torch's, for polygamma(1, x)) ---------------------------------------------------------
def _trigamma(x: _V) -> _V:
    refl = x < 0.5
    s = _u(P.sin, x * _PI)
    res = _where(refl, -(_PI * _PI) / (s * s), 0.0, x)
    z = _where(refl, 1.0 - x, x, x)
    for _ in range(6):
        res = res + 1.0 / (z * z)
        z = z + 1.0
    ixx = 1.0 / (z * z)
    res = res + (1.0 + 1.0 / (2.0 * z) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / z
    return _where(refl, -res, res, res)


# -- Hurwitz zeta (torch's zeta, Cephes), for polygamma(n >= 2, x) ---------------------------------
_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)  # fmt: skip
_MACHEP = 1.11022302462515654042e-16
# torch's direct sum runs until q + i > 9: nine terms for q > 0, and one more per unit below.
# Unrolled, it covers q > -_ZETA_NEG; below that polygamma(n >= 2, x) is NaN here (torch's
# loop would go on), a documented limit.
_ZETA_NEG = 24


def _zeta(s: float, q: _V) -> _V:
    """zeta(s, q) = sum_k (q + k)**-s for an integer s >= 3 (a Python number)."""
    done = q != q  # NaN: nothing to sum (the first term is NaN already)
    total = _V(binary_node(P.pow, q.n, const_like(-s, q.n)))
    a, b = q, q
    for i in range(9 + _ZETA_NEG):
        active = ~done if i < 9 else ~done & (a <= 9.0)
        a_new = a + 1.0
        b_new = _V(binary_node(P.pow, a_new.n, const_like(-s, a_new.n)))
        a = _where(active, a_new, a, a)
        b = _where(active, b_new, b, b)
        total = _where(active, total + b_new, total, total)
        small = (-_MACHEP * total < b) & (b < _MACHEP * total)
        done = done | (small & active)
    unfinished = ~done & (a <= 9.0)  # q <= -_ZETA_NEG: the direct sum did not reach 9
    w = a
    total = _where(done, total, total + b * w / (s - 1.0) - 0.5 * b, total)
    ak, k = 1.0, 0.0
    for i in range(12):
        ak *= s + k
        b = b / w
        t = b * (ak / _ZETA_A[i])
        new_total = total + t
        total = _where(done, total, new_total, total)
        done = done | (_abs(t / new_total) < _MACHEP)
        k += 1.0
        ak *= s + k
        b = b / w
        k += 1.0
    total = _where(unfinished, _NAN, total, total)
    integer_pole = (q <= 0) & (q == _u(P.floor, q))
    return _where(integer_pole, _INF, total, total)


def _polygamma_n(n: int) -> Any:
    factorial = math.exp(math.lgamma(n + 1.0))
    sign = 1.0 if n % 2 else -1.0

    def build(x: _V) -> _V:
        return (sign * factorial) * _zeta(n + 1.0, x)

    return build


# -- erfinv (torch's calc_erfinv) -----------------------------------------------------------------
_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)


def _erfinv(y: _V) -> _V:
    a, b, c, d = _ERFINV_A, _ERFINV_B, _ERFINV_C, _ERFINV_D
    ya = _abs(y)
    central = ya <= 0.7
    yc = _where(central, y, 0.0, y)  # each branch sees only arguments it is meant for
    z = yc * yc
    num = ((z * a[3] + a[2]) * z + a[1]) * z + a[0]
    dem = (((z * b[3] + b[2]) * z + b[1]) * z + b[0]) * z + 1.0
    xc = yc * num / dem
    yt = _where(central | (ya >= 1), 0.9, ya, ya)
    zt = _u(P.sqrt, -_log((1.0 - yt) / 2.0))
    num = ((zt * c[3] + c[2]) * zt + c[1]) * zt + c[0]
    dem = (zt * d[1] + d[0]) * zt + 1.0
    xt = _where(y < 0, -_abs(num), _abs(num), num) / dem
    x = _where(central, xc, xt, xc)
    two_over_sqrt_pi = 2.0 * (1 / math.sqrt(_PI))
    # erf(x) - y, in the tails as (1 - |y|) - erfc(|x|) with y's sign: 1 - |y| is exact there,
    # and erf(x) rounded near 1 would leave only the last bits of the residual (torch's own
    # steps are 5e-7 off at y = 1 - 1e-12; these are within 1e-15 of scipy's erfinv)

    for _ in range(2):
        ax = _where(central, 1.0, _abs(x), x)
        tail_r = (1.0 - ya) - _V(T._erfc(ax.n))
        tail_r = _where(y < 0, -tail_r, tail_r, tail_r)
        r = _where(central, _u(P.erf, x) - y, tail_r, x)
        x = x - r / (two_over_sqrt_pi * _exp(-x * x))
    x = _where(ya == 1, _where(y < 0, -_INF, _INF, y), x, x)
    return _where(ya > 1, _NAN, x, x)


# -- modified Bessel functions (torch's calc_i0/i0e/i1/i1e, Cephes) ---------------------------------
def _bessel(x: _V, small_cs: tuple[float, ...], large_cs: tuple[float, ...], kind: str) -> _V:
    ax = _abs(x)
    small = ax <= 8.0
    xs = _where(small, ax, 8.0, ax)
    xl = _where(small, 8.0, ax, ax)
    cs = _chbevl(xs / 2.0 - 2.0, small_cs)
    cl = _chbevl(32.0 / xl - 2.0, large_cs) / _u(P.sqrt, xl)
    if kind in ("i0", "i1"):
        cs, cl = _exp(xs) * cs, _exp(xl) * cl
    if kind in ("i1", "i1e"):
        cs = cs * xs
    v = _where(small, cs, cl, cs)
    if kind in ("i1", "i1e"):
        v = _where(x < 0, -v, v, v)
    return v


# -- ndtri (Cephes) and log_ndtr (via erfcx) ---------------------------------------------------------
_S2PI = 2.50662827463100050242
_EXP_M2 = 0.13533528323661269189


def _ndtri(y0: _V) -> _V:
    flip = y0 > 1.0 - _EXP_M2
    y = _where(flip, 1.0 - y0, y0, y0)
    central = y > _EXP_M2
    yc = _where(central, y - 0.5, 0.0, y)
    y2 = yc * yc
    xc = (yc + yc * (y2 * _polevl(y2, C.NDTRI_P0) / _polevl(y2, C.NDTRI_Q0))) * _S2PI
    yt = _where(central | ~(y > 0), _EXP_M2 / 2, y, y)
    x = _u(P.sqrt, -2.0 * _log(yt))
    x0 = x - _log(x) / x
    zt = 1.0 / x
    x1 = _where(
        x < 8.0,
        zt * _polevl(zt, C.NDTRI_P1) / _polevl(zt, C.NDTRI_Q1),
        zt * _polevl(zt, C.NDTRI_P2) / _polevl(zt, C.NDTRI_Q2),
        zt,
    )
    xt = x0 - x1
    xt = _where(flip, xt, -xt, xt)
    v = _where(central, xc, xt, xc)
    v = _where((y0 < 0) | (y0 > 1), _NAN, v, v)
    v = _where(y0 == 1, _INF, v, v)
    v = _where(y0 == 0, -_INF, v, v)
    return _where(y0 != y0, y0, v, v)


def _erfcx_pos(u: _V) -> _V:
    """exp(u**2) erfc(u) for u >= 0.5 (Cody's rational forms, the erfc ones without the
    exp(-u**2) factor); accurate to any large u."""

    y = _where(u < 0.5, 1.0, u, u)
    num: Any = y * T._ERFC_C[8]
    den: Any = y
    for c, d in zip(T._ERFC_C[:7], T._ERFC_D[:7]):
        num, den = (num + c) * y, (den + d) * y
    mid = (num + T._ERFC_C[7]) / (den + T._ERFC_D[7])
    z = 1.0 / (y * y)
    num, den = z * T._ERFC_P[5], z
    for p, q in zip(T._ERFC_P[:4], T._ERFC_Q[:4]):
        num, den = (num + p) * z, (den + q) * z
    tail = z * (num + T._ERFC_P[4]) / (den + T._ERFC_Q[4])
    big = (1 / math.sqrt(_PI) - tail) / y
    return _where(y > 4.0, big, mid, y)


def _erfc_v(v: _V) -> _V:

    return _V(T._erfc(v.n))


def _log_ndtr(x: _V) -> _V:
    t = x * (1 / math.sqrt(2))
    low = x < -1.0
    tl = _where(low, t, -1.0, t)
    lower = _log(_erfcx_pos(-tl) / 2.0) - tl * tl
    th = _where(low, 0.0, t, t)
    upper = _u(P.log1p, -_erfc_v(th) / 2.0)
    return _where(low, lower, upper, x)


def _ndtr(x: _V) -> _V:
    # torch's formula (its decomposition): 0 below x ~ -8.3, where erf(x) rounds to -1
    return (1.0 + _u(P.erf, x * 0.707106781186547524400844362104849039)) * 0.5


# -- autograd: torch's derivative formulas --------------------------------------------------------
def _unary(name: str, build: Any, compute: dt.DType | None, grad: Any, doc: str) -> Any:
    """The public op `name`: `build` recorded in `compute`, with `grad(x, result)` as
    d result / dx in backward."""

    class _Op(Function):
        @staticmethod
        def forward(ctx: Any, x: Tensor) -> Tensor:
            y = wrap(_in(compute, build, x._node))
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            x, y = ctx.saved_tensors
            return g * grad(x, y)

    _Op.__name__ = _Op.__qualname__ = "".join(w.capitalize() for w in name.split("_"))

    def fn(input: Tensor, *, out: Any = None) -> Tensor:
        return cast_into_out(_Op.apply(wrap(_float_input(input, name))), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn._op = _Op  # type: ignore[attr-defined]
    return fn


_F64 = dt.float64


lgamma = public(method=True, inplace=True)(
    _unary(
        "lgamma",
        _lgamma,
        _F64,
        lambda x, y: digamma(x),
        "log |Gamma(x)|: the recurrence to x >= 10, Stirling's series, reflection below 1/2.",
    )
)
digamma = public(method=True, inplace=True)(
    _unary(
        "digamma",
        _digamma,
        None,
        lambda x, y: polygamma(1, x),
        "The logarithmic derivative of Gamma (torch's algorithm: Cephes' psi).",
    )
)
erfinv = public(method=True, inplace=True)(
    _unary(
        "erfinv",
        _erfinv,
        None,
        lambda x, y: (math.sqrt(math.pi) / 2) * (y * y).exp(),
        "The inverse error function (a rational first guess and two Newton steps, as torch).",
    )
)
i0 = public(method=True, inplace=True)(
    _unary(
        "i0",
        lambda x: _bessel(x, C.I0E_A, C.I0E_B, "i0"),
        _F64,
        lambda x, y: special_i1(x),
        "The modified Bessel function of the first kind, order 0 (Cephes' Chebyshev series).",
    )
)
special_i0e = _unary(
    "special_i0e",
    lambda x: _bessel(x, C.I0E_A, C.I0E_B, "i0e"),
    _F64,
    lambda x, y: special_i1e(x) - x.sgn() * y,
    "exp(-|x|) i0(x).",
)


def _tiny_safe(x: Tensor) -> tuple[Tensor, Tensor]:
    """torch's i1/i1e backward: |x| <= eps (and NaN) take the limit 0.5."""

    eps = _dtype_info.finfo(x.dtype).eps
    not_tiny = x.abs() > eps
    return not_tiny, _tw(not_tiny, x, eps)


def _i1_grad(x: Tensor, y: Tensor) -> Tensor:
    not_tiny, safe = _tiny_safe(x)
    return _tw(not_tiny, i0(safe) - y * safe.reciprocal(), 0.5)


def _i1e_grad(x: Tensor, y: Tensor) -> Tensor:
    not_tiny, safe = _tiny_safe(x)
    return _tw(not_tiny, special_i0e(safe) - y * (safe.sgn() + safe.reciprocal()), 0.5)


special_i1 = _unary(
    "special_i1",
    lambda x: _bessel(x, C.I1E_A, C.I1E_B, "i1"),
    _F64,
    _i1_grad,
    "The modified Bessel function of the first kind, order 1 (Cephes' Chebyshev series).",
)
special_i1e = _unary(
    "special_i1e",
    lambda x: _bessel(x, C.I1E_A, C.I1E_B, "i1e"),
    _F64,
    _i1e_grad,
    "exp(-|x|) i1(x).",
)
special_ndtri = _unary(
    "special_ndtri",
    _ndtri,
    _F64,
    lambda x, y: math.sqrt(2 * math.pi) * (y * y / 2).exp(),
    "The inverse of the standard normal CDF (Cephes' ndtri).",
)
special_ndtr = _unary(
    "special_ndtr",
    _ndtr,
    None,
    lambda x, y: (-x * x / 2).exp() * (1 / math.sqrt(2 * math.pi)),
    "The standard normal CDF.",
)
special_log_ndtr = _unary(
    "special_log_ndtr",
    _log_ndtr,
    None,
    lambda x, y: (-x * x / 2 - y).exp() * (1 / math.sqrt(2 * math.pi)),
    "log of the standard normal CDF, accurate far into both tails.",
)


def _trigamma_op() -> Any:
    return _unary("trigamma", _trigamma, None, lambda x, y: polygamma(2, x), "trigamma")


_TRIGAMMA = _trigamma_op()
_POLYGAMMA: dict[int, Any] = {}


def _polygamma_fn(n: int) -> Any:
    fn = _POLYGAMMA.get(n)
    if fn is None:
        fn = _unary(
            f"polygamma_{n}",
            _polygamma_n(n),
            _F64,
            lambda x, y: polygamma(n + 1, x),
            f"polygamma({n}, x)",
        )
        fn._op.__name__ = "Polygamma"
        _POLYGAMMA[n] = fn
    return fn


def _check_n(n: Any, op: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise op_error(TypeError, op, f"argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


@public()
def polygamma(n: int, input: Tensor, *, out: Any = None) -> Tensor:
    """The n-th derivative of digamma: digamma for n = 0, torch's trigamma for n = 1, and
    (-1)**(n+1) n! zeta(n + 1, x) above (NaN for x <= -24 there, see `_ZETA_NEG`)."""
    n = _check_n(n, "polygamma")
    tensor_arg(input, "polygamma")
    if n == 0:
        return digamma(input, out=out)
    if n == 1:
        return _TRIGAMMA(input, out=out)  # type: ignore[no-any-return]
    return _polygamma_fn(n)(input, out=out)  # type: ignore[no-any-return]


@public(torch=False, method="polygamma", inplace=True)
def _polygamma_method(input: Tensor, n: int) -> Tensor:
    return polygamma(n, input)


@public(method=True, inplace=True)
def mvlgamma(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    """The multivariate log-gamma: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)."""
    tensor_arg(input, "mvlgamma")
    if not isinstance(p, int) or isinstance(p, bool):
        raise op_error(TypeError, "mvlgamma", f"argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        raise RuntimeError("mvlgamma is not implemented for integral types")
    x = input
    if not bool((x > (p - 1) / 2).all()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    return cast_into_out(total + p * (p - 1) * math.log(math.pi) / 4, out, "mvlgamma")


@public(method=True)
def logaddexp2(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """log2(2**a + 2**b) without overflow."""
    d = _float_dtype(result_type(input, other))
    dev = device_of(input, other, op="logaddexp2")
    _, (x, y) = broadcast_nodes([to_node(input, d, dev), to_node(other, d, dev)], "logaddexp2")

    def build(x: Node, y: Node) -> Node:
        xv, yv = _V(x), _V(y)
        first = xv >= yv
        m = _where(first, xv, yv, xv)
        e = _V(binary_node(P.pow, const_like(2, x), _where(first, yv - xv, xv - yv, xv).n))
        v = m + _u(P.log1p, e) * (1 / math.log(2))
        same_inf = (_abs(xv) == _INF) & (xv == yv)
        return _where(same_inf, xv, v, xv).n

    return cast_into_out(wrap(_in_opmath(build, x, y)), out, "logaddexp2")


def _entr(v: _V) -> _V:
    pos = v > 0
    safe = _where(pos, v, 1.0, v)
    val = _where(pos, -(safe * _log(safe)), _where(v == 0, 0.0, -_INF, v), v)
    return _where(v != v, v, val, v)


entr = _unary("entr", _entr, None, lambda x, y: -(1 + x.log()), "-x log(x): 0 at 0, -inf below 0.")


def xlog1py(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """x * log1p(y), 0 where x = 0 (unless y is NaN) (torch.special.xlog1py)."""
    d = _float_dtype(result_type(input, other))
    dev = device_of(input, other, op="xlog1py")
    _, (x, y) = broadcast_nodes([to_node(input, d, dev), to_node(other, d, dev)], "xlog1py")
    xv, yv = _V(x), _V(y)
    # as xlogy: where x = 0 and log1p(y) is not finite, the product's branch sees y = 0
    finite = (yv > -1.0) & (yv < _INF)
    zero_x = (xv == 0) & ~finite
    prod = xv * _u(P.log1p, _where(zero_x, 0.0, yv, yv))
    value = _where(zero_x, 0.0, prod, xv)
    return cast_into_out(wrap(_where(yv != yv, yv, value, yv).n), out, "xlog1py")
