"""The helper functions generated Triton modules call, as real ``@triton.jit`` source.

This module is linted like any other, and imports where Triton is installed; the library
never imports it (it must import without Triton). `lazytorch.codegen.triton_ops.helpers`
reads this file as text instead and parses it: each top-level
function is copied verbatim, decorator to last line, into the modules that call it (only
the ones they use, each after the helpers it calls), so a generated module stays
self-contained: it is written to disk and imported on its own.

Keep every function self-contained too: it may call ``tl``, ``triton`` and other ``_lt_``
helpers of this file, nothing else of it (no module constants). The formatter leaves the
function bodies alone (``fmt: off``) because their text is part of the generated code,
which stays byte-identical to what it was when these were strings.
"""

import triton
import triton.language as tl

# fmt: off


@triton.jit
def _lt_floordiv(a, k):
    """Floor division of an index that may be negative by a positive constant."""
    q = a // k  # truncates toward zero, like C
    return tl.where((a % k != 0) & (a < 0), q - 1, q)


@triton.jit
def _lt_floormod(a, k):
    """Python's a % k (in [0, k)) of an index that may be negative."""
    r = a % k  # has the sign of a, like C
    return tl.where(r < 0, r + k, r)


@triton.jit
def _lt_report(err, bad, instr, kind, a, size, axis):
    """Record the first failure of the program in err, as lt::report (a block of lanes,
    of any rank; `a` may be one value for every lane)."""
    if tl.max(bad.to(tl.int32)) > 0:
        lanes = tl.where(bad, a, a)  # `a` in the block's shape
        # any failing lane's value will do: the largest one
        worst = tl.max(tl.where(bad, lanes, tl.min(lanes)))
        _lt_report1(err, instr, kind, worst, size, axis)


@triton.jit
def _lt_report1(err, instr, kind, a, size, axis):
    """err[0] = instr + 1 unless an earlier failure claimed it; then the details."""
    # the compare and the new value in err's int64 (the interpreter would take any ints)
    claim = tl.full([], instr + 1, tl.int64)  # instr: a literal of the caller
    if tl.atomic_cas(err, tl.zeros([], tl.int64), claim) == 0:
        tl.store(err + 1, kind)
        tl.store(err + 2, a)
        tl.store(err + 3, size)
        tl.store(err + 4, axis)


@triton.jit
def _lt_div(a, b):
    """Correctly rounded division (plain / is approximate for float32 on NVIDIA)."""
    if a.dtype == tl.float32:
        q = tl.div_rn(a, b)
    else:
        q = a / b
    return q


@triton.jit
def _lt_signbit(x):
    """The sign bit of a float (true for -0.0 and negative NaNs)."""
    if x.dtype == tl.float64:
        s = x.to(tl.int64, bitcast=True) < 0
    else:
        s = x.to(tl.int32, bitcast=True) < 0
    return s


@triton.jit
def _lt_maximum(a, b):
    """lt::maximum: NaN wins; of two equal values (+0, -0) the first."""
    a, b = tl.broadcast(a, b)  # either may be one value (see _lt_pow)
    return tl.where((a != a) | (a > b), a, tl.where(b != b, b, tl.where(a == b, a, b)))


@triton.jit
def _lt_minimum(a, b):
    """lt::minimum: NaN wins; of two equal values (+0, -0) the first."""
    a, b = tl.broadcast(a, b)  # either may be one value (see _lt_pow)
    return tl.where((a != a) | (a < b), a, tl.where(b != b, b, tl.where(a == b, a, b)))


@triton.jit
def _lt_max_combine(a, b):
    """max reduction step: NaN wins (the C++ combine_expr)."""
    return tl.where((a != a) | (a > b), a, b)


@triton.jit
def _lt_min_combine(a, b):
    """min reduction step: NaN wins (the C++ combine_expr)."""
    return tl.where((a != a) | (a < b), a, b)


@triton.jit
def _lt_mul_combine(a, b):
    return a * b


@triton.jit
def _lt_argmax_combine(v1, i1, v2, i2):
    """lt::better_max: the larger value, the first NaN over numbers, the lower index on ties."""
    nan1 = v1 != v1
    nan2 = v2 != v2
    take2 = tl.where(nan1, nan2 & (i2 < i1), nan2 | (v2 > v1) | ((v2 == v1) & (i2 < i1)))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@triton.jit
def _lt_argmin_combine(v1, i1, v2, i2):
    """lt::better_min: the smaller value, the first NaN over numbers, the lower index on ties."""
    nan1 = v1 != v1
    nan2 = v2 != v2
    take2 = tl.where(nan1, nan2 & (i2 < i1), nan2 | (v2 < v1) | ((v2 == v1) & (i2 < i1)))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@triton.jit
def _lt_sigmoid(x):
    """1 / (1 + exp(-x)), as the reference computes it."""
    return _lt_div(tl.full([], 1, x.dtype), 1.0 + tl.exp(-x))


@triton.jit
def _lt_expm1(x):
    """exp(x) - 1, accurate near 0 (Kahan: the rounding error of u = exp(x) cancels)."""
    u = tl.exp(x)
    um1 = u - 1.0
    r = tl.where(um1 == 0.0, x, um1 * _lt_div(x, tl.log(u)))  # x / log(u) ~ 1: no overflow
    r = tl.where(um1 == -1.0, um1, r)
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _lt_log1p(x):
    """log(1 + x), accurate near 0 (Kahan: the rounding error of u = 1 + x cancels)."""
    u = 1.0 + x
    r = tl.where(u == 1.0, x, tl.log(u) * _lt_div(x, u - 1.0))
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _lt_tanh(x):
    """tanh from expm1(-2|x|) (no cancellation near 0, saturates to +-1)."""
    e = _lt_expm1(-2.0 * tl.abs(x))
    t = _lt_div(-e, e + 2.0)
    return tl.where(x < 0, -t, tl.where(x == 0, x, t))


@triton.jit
def _lt_atan(x):
    """Cephes atan in float64 (rounded once for float32): |x| is reduced by tan(3pi/8) and
    tan(pi/8)-ish (0.66) to a rational fit on [0, 0.66]."""
    x64 = x.to(tl.float64)
    ax = tl.abs(x64)
    zero = tl.zeros_like(ax)
    big = ax > 2.414213562373095
    mid = ax > 0.66
    z = tl.where(big, -1.0 / ax, tl.where(mid, (ax - 1.0) / (ax + 1.0), ax))
    y = tl.where(big, zero + 1.5707963267948966, tl.where(mid, zero + 0.7853981633974483, zero))
    more = tl.where(big, zero + 6.123233995736766e-17, tl.where(mid, zero + 3.061616997868383e-17, zero))
    zz = z * z
    p = (((-0.8750608600031904 * zz - 16.157537187333652) * zz - 75.00855792314705) * zz
         - 122.88666844901361) * zz - 64.85021904942025
    q = ((((zz + 24.858464901423062) * zz + 165.02700983169885) * zz + 432.88106049129027) * zz
         + 485.3903996359137) * zz + 194.5506571482614
    r = y + (z * zz * p / q + z + more)
    r = tl.where(x64 < 0, -r, tl.where(x64 == 0, x64, r))
    return r.to(x.dtype)


@triton.jit
def _lt_atan2(y, x):
    """atan2 by octant from atan(min(|x|,|y|) / max(|x|,|y|)) in float64, C's signed zeros."""
    y64 = y.to(tl.float64)
    x64 = x.to(tl.float64)
    ay = tl.abs(y64)
    ax = tl.abs(x64)
    swap = ay > ax
    num = tl.where(swap, ax, ay)
    den = tl.where(swap, ay, ax)
    t = num / den
    t = tl.where((num == 0) & (den == 0), num, t)  # 0/0: both zero
    t = tl.where((num == float("inf")) & (den == float("inf")), tl.zeros_like(t) + 1.0, t)
    r = _lt_atan(t)
    r = tl.where(swap, 1.5707963267948966 - r, r)
    r = tl.where(_lt_signbit(x64), 3.141592653589793 - r, r)
    r = tl.where(_lt_signbit(y64), -r, r)
    return r.to(y.dtype)


@triton.jit
def _lt_pow(a, b):
    """C's pow: exp(b*log|a|) in float64 (rounded once for float32) with C99's special cases.

    Either operand may be one value (a Python number, a 0-d tensor): both are broadcast to
    the block first, so that no 0-d truth value meets a block's in & or | (Triton's
    interpreter stores a 0-d comparison's result as its operands' dtype, and broadcasting
    it then gives floats that & refuses)."""
    a64, b64 = tl.broadcast(a.to(tl.float64), b.to(tl.float64))
    one = tl.zeros_like(a64) + 1.0
    mag = tl.exp(b64 * tl.log(tl.abs(a64)))
    integral = tl.floor(b64) == b64
    odd = integral & ((b64 - 2.0 * tl.floor(b64 * 0.5)) == 1.0)
    r = tl.where(_lt_signbit(a64) & odd, -mag, mag)
    # a finite negative base to a non-integral power has no real value
    r = tl.where((a64 < 0) & (a64 > -float("inf")) & (integral == 0), mag * 0.0 + float("nan"), r)
    r = tl.where(b64 == 0.0, one, r)
    r = tl.where(a64 == 1.0, one, r)
    r = tl.where((a64 == -1.0) & (tl.abs(b64) == float("inf")), one, r)
    return r.to(a.dtype)


@triton.jit
def _lt_ipow(a, b):
    """lt::ipow: square-and-multiply in int64 (wraps like NumPy); a negative exponent gives
    1 for a = 1, +-1 for a = -1 by parity, else 0 (torch's rule)."""
    # both broadcast to the block first: a loop-carried value must keep one type, and
    # either operand may be one value (Triton's compiler refuses r turning into a block)
    base, e = tl.broadcast(a.to(tl.int64), tl.maximum(b.to(tl.int64), 0))
    r = tl.zeros_like(base) + 1
    for _ in range(63):
        r = tl.where((e & 1) == 1, r * base, r)
        base = base * base
        e = e >> 1
    odd = (b.to(tl.int64) & 1) == 1
    special = tl.where(a == 1, 1, tl.where(a == -1, tl.where(odd, -1, 1), 0))
    return tl.where(b < 0, special, r).to(a.dtype)


@triton.jit
def _lt_rint(x):
    """Round half to even (rint); -0.0 stays -0.0, as do negatives rounding to zero."""
    f = tl.floor(x)
    d = x - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) != 0.0
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    return tl.where(r == 0.0, x * 0.0, r)


@triton.jit
def _lt_fremainder(a, b):
    """NumPy's float remainder: fmod moved to b's sign; an exact zero takes b's sign."""
    mod = a % b  # fmod: the sign of a
    z = tl.zeros_like(mod)
    out = tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    out = tl.where(mod == 0, tl.where(_lt_signbit(b), -z, z), out)
    return tl.where(b == 0, mod, out)


@triton.jit
def _lt_ffloordiv(a, b):
    """NumPy's float floor division (npy_divmod), exact where floor(a / b) is not."""
    mod = a % b
    div = _lt_div(a - mod, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
    fl = tl.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
    q = _lt_div(a, b)
    z = tl.zeros_like(q)
    fl = tl.where(div == 0, tl.where(_lt_signbit(q), -z, z), fl)
    return tl.where(b == 0, q, fl)


@triton.jit
def _lt_ifloordiv(a, b):
    """Python's a // b on integers; 0 where b == 0 (the caller reports it). A divisor of -1
    negates instead (MIN // -1 wraps to MIN, as in torch; the division may trap)."""
    zero = b == 0
    minus_one = (b < 0) & (b + 1 == 0)  # no negative literal: b may be unsigned
    d = tl.where(zero | minus_one, 1, b)
    q = a // d  # truncates toward zero
    q = tl.where(((a % d) != 0) & ((a < 0) != (d < 0)), q - 1, q)
    q = tl.where(minus_one, -q, q)
    return tl.where(zero, 0, q)


@triton.jit
def _lt_iremainder(a, b):
    """Python's a % b on integers (the sign of b); 0 where b == 0 (the caller reports it)
    and where b == -1 (MIN % -1 may trap)."""
    zero = b == 0
    minus_one = (b < 0) & (b + 1 == 0)
    d = tl.where(zero | minus_one, 1, b)
    r = a % d  # the sign of a
    r = tl.where((r != 0) & ((r < 0) != (d < 0)), r + d, r)
    return tl.where(zero, 0, r)


@triton.jit
def _lt_ifmod(a, b):
    """C's a % b on integers; 0 where b == 0 (the caller reports it) and where b == -1."""
    zero = (b == 0) | ((b < 0) & (b + 1 == 0))  # MIN % -1 may trap
    return tl.where(zero, 0, a % tl.where(zero, 1, b))


@triton.jit
def _lt_philox(counter, seed):
    """Philox4x32-10 of a uint64 counter (lo, hi, 0, 0) under a uint64 seed (lo, hi): the
    words c0, c1 of lazytorch/ir/philox.py (lt::philox), in uint32 arithmetic."""
    c0 = (counter & 0xFFFFFFFF).to(tl.uint32)
    c1 = (counter >> 32).to(tl.uint32)
    c2 = tl.full([], 0, tl.uint32)
    c3 = tl.full([], 0, tl.uint32)
    k0 = (seed & 0xFFFFFFFF).to(tl.uint32)
    k1 = (seed >> 32).to(tl.uint32)
    m0 = tl.full([], 0xD2511F53, tl.uint32)
    m1 = tl.full([], 0xCD9E8D57, tl.uint32)
    w0 = tl.full([], 0x9E3779B9, tl.uint32)
    w1 = tl.full([], 0xBB67AE85, tl.uint32)
    for _ in tl.static_range(10):
        n0 = tl.umulhi(m1, c2) ^ c1 ^ k0
        n2 = tl.umulhi(m0, c0) ^ c3 ^ k1
        c1 = m1 * c2  # the low words: uint32 products wrap
        c3 = m0 * c0
        c0 = n0
        c2 = n2
        k0 = k0 + w0
        k1 = k1 + w1
    return c0, c1


@triton.jit
def _lt_rand_uniform_f32(counter, seed):
    """lt::rand_uniform_f32: the top 24 bits of c0 times 2**-24 (exact)."""
    r0, _r1 = _lt_philox(counter, seed)
    return (r0 >> 8).to(tl.float32) * tl.full([], 2.0**-24, tl.float32)


@triton.jit
def _lt_rand_uniform_f16(counter, seed):
    """lt::rand_uniform_f16: the top 11 bits of c0 times 2**-11, in float32 (exact in half)."""
    r0, _r1 = _lt_philox(counter, seed)
    return (r0 >> 21).to(tl.float32) * tl.full([], 2.0**-11, tl.float32)


@triton.jit
def _lt_round_bf16(x):
    """float32 `x` rounded to bfloat16 (nearest, ties to even; NaN to the quiet NaN), as a
    float32 again: torch's round_to_nearest_even in integer ops, exact on every target
    (Triton's interpreter truncates where ``.to(tl.bfloat16)`` rounds on a GPU)."""
    u = x.to(tl.uint32, bitcast=True)
    r = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    r = tl.where(x != x, 0x7FC00000, r)
    return r.to(tl.float32, bitcast=True)


@triton.jit
def _lt_rand_uniform_bf16(counter, seed):
    """lt::rand_uniform_bf16: the top 8 bits of c0 times 2**-8, in float32 (exact in bfloat16)."""
    r0, _r1 = _lt_philox(counter, seed)
    return (r0 >> 24).to(tl.float32) * tl.full([], 2.0**-8, tl.float32)


@triton.jit
def _lt_rand_uniform_f64(counter, seed):
    """lt::rand_uniform_f64: 53 bits (c0 << 21) ^ (c1 >> 11) times 2**-53 (exact)."""
    r0, r1 = _lt_philox(counter, seed)
    bits = (r0.to(tl.uint64) << 21) ^ (r1.to(tl.uint64) >> 11)
    return bits.to(tl.float64) * tl.full([], 2.0**-53, tl.float64)


@triton.jit
def _lt_rand_normal(counter, seed):
    """lt::rand_normal: Box-Muller over two 24-bit uniforms, in float64."""
    r0, r1 = _lt_philox(counter, seed)
    scale = tl.full([], 2.0**-24, tl.float64)
    u1 = ((r0 >> 8).to(tl.float64) + tl.full([], 1.0, tl.float64)) * scale  # (0, 1]
    u2 = (r1 >> 8).to(tl.float64) * scale
    two_pi = tl.full([], 6.283185307179586, tl.float64)  # 2.0 * 3.141592653589793, exact
    return tl.sqrt(tl.full([], -2.0, tl.float64) * tl.log(u1)) * tl.cos(two_pi * u2)


# fmt: on
