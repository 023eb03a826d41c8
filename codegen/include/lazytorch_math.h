// lazytorch_math.h: vectorizable float32 math for lazytorch's generated CPU kernels.
//
// Why this exists. Kernels are compiled with
//     g++ -O2 -fvect-cost-model=dynamic -march=native -fopenmp -fno-math-errno -fno-trapping-math
// and never with -ffast-math, because NaN, Inf, signed zeros and subnormals must behave
// exactly as in torch. Without -ffast-math, GCC cannot vectorize a loop that calls libm's
// expf/logf/erff/...: they are opaque scalar calls. Every float function below is written as
// straight-line, branch-free arithmetic (selects, not early returns; no data-dependent loops;
// no table lookups, so no gathers), so that a plain loop
//     #pragma omp simd
//     for (int64_t i = 0; i < n; ++i) out[i] = lt::exp(in[i]);
// is vectorized by GCC with or without the pragma. tests/test_math_header.py checks that
// every function vectorizes (via -fopt-info-vec-optimized) and measures its accuracy.
//
// Contents (namespace lt; float32 versions are the point, float64 overloads forward to libm):
//     exp log tanh sigmoid erf pow(x, y)
//     expm1 log1p atan atan2(y, x)
// (the functions the C++ lowering, codegen/cpp_ops.py, emits; sin and cos are libm's there)
//
// Accuracy (max error measured against float64 references rounded to float32; the test
// file asserts the documented bounds, and an exhaustive scan of all 2^32 inputs of each unary
// function is available as a slow test): every function is <= 2 ulp over its whole domain
// (most are <= 1 ulp); see each function for its number.
// Special values follow C99 Annex F (and torch): +-0 keep their sign where the function is odd,
// +-inf and NaN propagate, subnormal inputs are handled exactly (no flush to zero) and
// subnormal outputs are rounded once, overflow gives +-inf exactly at the float32 thresholds.
// Requires round-to-nearest (the default floating-point environment) and no FTZ/DAZ (which is
// what -ffast-math would set).
//
// Provenance. The algorithms are the classical public ones (Cody & Waite range reduction,
// Cephes / fdlibm style argument reduction and special-case handling, Tang's and Muller's
// "Elementary Functions" treatment of exp/log). All polynomial coefficients were computed for
// this file: minimax (Remez exchange, mpmath at 40 digits) fits of the stated function on the
// stated interval, with the coefficients rounded to float one at a time (lowest order first)
// and the remaining ones refitted after each rounding. "Fit error" below is that polynomial's
// maximum relative (or stated weighted) error before evaluation rounding.
//
// Implementation constraints: C++17, header-only, <cstdint> only; bit casts use
// __builtin_memcpy; floor/sqrt/fabs/copysign use GCC builtins (which vectorize). Explicit fused
// multiply-adds are used only where the target has fast FMA (__FP_FAST_FMAF); every algorithm
// below is accurate with or without FMA (the error analysis assumes neither, except for
// sigmoid's float quotient, which has a double fallback without FMA).

#ifndef LAZYTORCH_MATH_H
#define LAZYTORCH_MATH_H

#include <cstdint>

#define LT_MATH_INLINE static inline __attribute__((always_inline))

namespace lt {
namespace detail {

// ---------------------------------------------------------------------------------------------
// Bit casts, fused multiply-add, polynomial evaluation
// ---------------------------------------------------------------------------------------------

LT_MATH_INLINE uint32_t bits(float x) {
    uint32_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}
LT_MATH_INLINE float as_float(uint32_t u) {
    float x;
    __builtin_memcpy(&x, &u, sizeof x);
    return x;
}
LT_MATH_INLINE uint64_t bits(double x) {
    uint64_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}
LT_MATH_INLINE double as_double(uint64_t u) {
    double x;
    __builtin_memcpy(&x, &u, sizeof x);
    return x;
}

// a * b + c: one rounding where the hardware has FMA, two otherwise.
#ifdef __FP_FAST_FMAF
LT_MATH_INLINE float mad(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
#else
LT_MATH_INLINE float mad(float a, float b, float c) { return a * b + c; }
#endif
#ifdef __FP_FAST_FMA
LT_MATH_INLINE double mad(double a, double b, double c) { return __builtin_fma(a, b, c); }
#else
LT_MATH_INLINE double mad(double a, double b, double c) { return a * b + c; }
#endif

// Horner: poly(x, c0, c1, ..., cn) = c0 + x*(c1 + x*(... + x*cn)).
template <class T>
LT_MATH_INLINE T poly(T, T c0) { return c0; }
template <class T, class... Cs>
LT_MATH_INLINE T poly(T x, T c0, Cs... cs) { return mad(poly(x, T(cs)...), x, c0); }

LT_MATH_INLINE float inf_f() { return __builtin_inff(); }
LT_MATH_INLINE float nan_f() { return __builtin_nanf(""); }

// 2^k for integer k in [-126, 127], built directly in the exponent field.
LT_MATH_INLINE float pow2i(int32_t k) { return as_float(uint32_t(k + 127) << 23); }

// Rounding to the nearest integer without rint or a float->int conversion: adding
// 1.5 * 2^23 pushes the fraction bits out of a float (round-to-nearest-even), and the integer
// then sits in the low mantissa bits. Valid for |v| < 2^22. The same for double with 1.5 * 2^52.
constexpr float kShift = 0x1.8p23f;
constexpr double kShiftD = 0x1.8p52;

// Cody–Waite split of ln 2: kLn2Hi has 15 significant bits, so n * kLn2Hi is exact for
// |n| < 2^9 and x - n * kLn2Hi is exact (Sterbenz) near the reduction; kLn2Lo = ln2 - kLn2Hi
// rounded to float (the residual, 5.5e-14, is far below float resolution).
constexpr float kLn2Hi = 0x1.62e4p-1f;       // 0.693145751953125
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;    // 1.4286068e-06
constexpr float kLog2e = 0x1.715476p+0f;     // 1/ln 2 rounded to float
constexpr float kLn2 = 0x1.62e43p-1f;        // ln 2 rounded to float (one-constant reduction)

// 2^k straight from the shifter, with no integer arithmetic: for k = v + (kShift + b) (v rounded
// to the integer n by the addition, b an integer constant), the low 9 bits of bits(k) hold
// n + b (bits(kShift) has its low 22 bits clear), so shifting them into the exponent field
// gives the float 2^(n + b - 127); the higher bits fall off the top. Valid for n + b in
// [1, 254] (a normal power of two).
LT_MATH_INLINE float shifter_pow2(float k) { return as_float(bits(k) << 23); }

// exp(r) - 1 - r = r^2 * P(r) on [-0.3467, 0.3467] (|r| <= ln2/2 plus rounding slack).
// Fit error (relative, of exp(r)): 3.2e-9 = 0.05 ulp.
LT_MATH_INLINE float exp_p(float r) {
    return poly(r, 0x1.fffffcp-2f, 0x1.55548cp-3f, 0x1.555858p-5f, 0x1.123dcap-7f,
                0x1.6ac502p-10f);
}

// Cody–Waite reduction x = n ln2 + rh + c: n = round(x / ln2) (returned as float and int),
// rh = x - n*kLn2Hi is exact, c = -n*kLn2Lo is a small correction (|c| < 2.2e-4) kept apart so
// that the leading terms of exp(r) are summed exactly. Requires |x| < 2^21 (callers clamp);
// NaN gives NaN rh and an unspecified n.
LT_MATH_INLINE float exp_reduce(float x, float& nf, int32_t& ni, float& c) {
    float k = mad(x, kLog2e, kShift);
    nf = k - kShift;
    ni = int32_t(bits(k) - bits(kShift));
    c = nf * -kLn2Lo;
    return mad(nf, -kLn2Hi, x);
}

// exp(x) = p * 2^n for x clamped to [-104, 89] (NaN passes): the reduction of exp_reduce, but
// with the shifter kShift + b (b an integer constant, see shifter_pow2; `shift` is that sum):
// s = 2^(n + b - 127) is returned for the caller to scale with. p = exp(r), r = rh + c, is
// 1 + rh + (c + r^2 P(r)) with 1 + rh summed exactly (Fast2Sum, |rh| < 1), so that only the
// last addition rounds noticeably; p is in [0.70, 1.42].
LT_MATH_INLINE float exp_core(float x, float shift, float& s) {
    float k = mad(x, kLog2e, shift);
    float nf = k - shift;
    float c = nf * -kLn2Lo;
    float rh = mad(nf, -kLn2Hi, x);
    float r = rh + c;
    float hi = 1.0f + rh;
    float lo = (1.0f - hi) + rh;
    s = shifter_pow2(k);
    return hi + (lo + mad(r * r, exp_p(r), c));
}

// 2^r = 1 + r P(r) on [-1/2, 1/2], P a degree-5 minimax fit (fit error 1.2e-8 relative =
// 0.2 ulp). Used by erf.
LT_MATH_INLINE float exp2_p(float r) {
    return mad(r,
               poly(r, 0x1.62e432p-1f, 0x1.ebfc18p-3f, 0x1.c6ad6p-5f, 0x1.3afb7p-7f,
                    0x1.5fe614p-10f, 0x1.66b3cp-13f),
               1.0f);
}

// log(1+f) - f = f^2 * Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1], degree 9.
// Fit error (relative, of log(1+f)): 9.4e-10 = 0.016 ulp.
LT_MATH_INLINE float log_q(float f) {
    return poly(f, -0x1p-1f, 0x1.555544p-2f, -0x1.ffffep-3f, 0x1.99a626p-3f, -0x1.55664cp-3f,
                0x1.2327c2p-3f, -0x1.fadcd2p-4f, 0x1.e6725ep-4f, -0x1.e4a35p-4f, 0x1.1cb6f4p-4f);
}

// Splits x > 0 (finite, normal) as x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)).
// f is exact. The subtraction of the bits of sqrt(1/2) moves the binade boundary there, so a
// single integer shift gives e (as a float, exact).
LT_MATH_INLINE float log_reduce(float x, float& e) {
    uint32_t u = bits(x) - 0x3f3504f3u;  // 0x3f3504f3 = bits of sqrt(1/2)
    e = float(int32_t(u) >> 23);
    return as_float((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
}

// atan(t) = t + t^3 * A(t^2) on [0, 1]. Fit error (relative): 3.0e-9 = 0.05 ulp.
LT_MATH_INLINE float atan_01(float t) {
    float z = t * t;
    float a = poly(z, -0x1.555548p-2f, 0x1.9993dep-3f, -0x1.243328p-3f, 0x1.c13e86p-4f,
                   -0x1.59eedap-4f, 0x1.e04ff4p-5f, -0x1.049aeep-5f, 0x1.70463ep-7f,
                   -0x1.e8665p-10f);
    return mad(t, z * a, t);
}

// 2^t in double for t in [-200, 200] (t is clamped; NaN passes): t = n + r with n = round(t)
// (1.5*2^52 shifter), 2^r = 1 + r B(r) with B a degree-7 minimax fit on [-1/2, 1/2] (relative
// error 8e-13), times 2^n built in the exponent field. Used by pow, whose float results
// are this value rounded once (so float overflow, underflow and subnormals come out right).
LT_MATH_INLINE double exp2_d(double t) {
    t = t > 200.0 ? 200.0 : t;
    t = t < -200.0 ? -200.0 : t;
    double k = t + kShiftD;
    double r = t - (k - kShiftD);
    double p = mad(r,
                   poly(r, 0x1.62e42fef89d2bp-1, 0x1.ebfbdffb69424p-3, 0x1.c6b08dd30ff44p-5,
                        0x1.3b2ab2043b586p-7, 0x1.5d874661da8c2p-10, 0x1.43119ad4be962p-13,
                        0x1.00dd0bcaa4706p-16, 0x1.5a5f12e9c5f4ep-20),
                   1.0);
    return p * as_double((bits(k) - bits(kShiftD) + 1023ull) << 52);
}

// pi/2 and pi as float hi + lo pairs (hi = the float nearest, lo = float(rest)).
constexpr float kPio2Hi = 0x1.921fb6p+0f;
constexpr float kPio2Lo = -0x1.777a5cp-25f;
constexpr float kPiHi = 0x1.921fb6p+1f;
constexpr float kPiLo = -0x1.777a5cp-24f;

}  // namespace detail

// =============================================================================================
// exp, expm1
// =============================================================================================

// exp(x). Cody–Waite reduction x = n ln2 + r (|r| <= ln2/2, n = round(x / ln2) via the
// 1.5*2^23 shifter), exp(r) = 1 + r + r^2 P(r) with a degree-4 minimax P (the leading 1 + r
// summed exactly, so only one rounding is large; see detail::exp_core), then * 2^n applied in
// two steps of which only the second rounds: for x < 0 (n in [-150, 0]) p * 2^(n+64) is exact
// and * 2^-64 rounds once (so subnormal results are rounded once), for x >= 0 (n in [0, 128])
// p * 2^(n-1) is exact and * 2 rounds or overflows to inf. Both powers of two come from the
// shifter's bits (detail::shifter_pow2) with a bias chosen by the sign of x: no integer
// arithmetic. x above 89 is clamped to 89 (exp(89) overflows, so the clamp changes no
// result); below -104 (exp(-104) < 2^-150 rounds to 0), -inf included, the result is selected
// as 0 while those lanes compute exp(0): a multiply whose result underflows takes a microcode
// assist on x86 (exp of a tensor of -inf, every masked entry of a causal softmax, took 11 ms
// against 1 ms for -1 on a Xeon), so only lanes whose result is a real subnormal pay one.
// NaN passes through the selects (comparisons with NaN are false). Max error 1 ulp
// (measured: 0.51 ulp normal range, 0.77 subnormal).
LT_MATH_INLINE float exp(float x) {
    // Both conditions are taken on x itself: chained selects (clamp, then clamp the result)
    // make GCC emit a longer mask sequence.
    bool under = x < -104.0f;
    bool over = x > 89.0f;
    float xc = under ? 0.0f : x;
    xc = over ? 89.0f : xc;
    bool neg = xc < 0.0f;
    float s;
    float p = detail::exp_core(xc, neg ? detail::kShift + 191.0f : detail::kShift + 126.0f, s);
    float e = (p * s) * (neg ? 0x1p-64f : 2.0f);
    return under ? 0.0f : e;
}

// expm1(x) = exp(x) - 1, accurate near 0. Same reduction as exp (x = n ln2 + rh + c), except
// that n = 0 whenever |x| < 0.52 (so no cancellation for n = +-1); expm1(r) = r + r^2 P(r)
// with a degree-5 minimax P on [-0.52, 0.52] (fit error 4.8e-9 = 0.08 ulp). Reconstruction:
//     expm1(x) = (2^n - 1) + 2^n rh + 2^n (c + r^2 P(r)),
// where 2^n - 1 is exact for n <= 24 (for 24 < n the -1 moves into the small tail), and the
// first two terms are summed exactly (Fast2Sum: |2^n - 1| >= |2^n rh| for n != 0). For n > 60
// the -1 is negligible and the rest is scaled by 2^(n-60) (overflow -> inf). x < -30 is
// clamped (expm1 = -1 there). expm1(-0) = -0.
LT_MATH_INLINE float expm1(float x) {
    float xc = x > 89.0f ? 89.0f : x;
    xc = xc < -30.0f ? -30.0f : xc;
    float nf, c;
    int32_t n;
    detail::exp_reduce(xc, nf, n, c);
    bool small = __builtin_fabsf(x) < 0.52f;
    nf = small ? 0.0f : nf;
    n = small ? 0 : n;
    c = small ? 0.0f : c;
    float rh = detail::mad(nf, -detail::kLn2Hi, xc);
    float r = rh + c;
    float p = detail::poly(r, 0x1.000002p-1f, 0x1.555556p-3f, 0x1.5551b8p-5f, 0x1.110eb2p-7f,
                           0x1.6f4decp-10f, 0x1.a4033ep-13f);
    float tail = detail::mad(r * r, p, c);
    int32_t m = n > 60 ? 60 : n;
    float s = detail::pow2i(m);
    float a = m <= 24 ? s - 1.0f : s;
    float extra = m <= 24 ? 0.0f : -1.0f;
    float b = s * rh;
    float hi = a + b;
    float lo = (a - hi) + b;
    float v = hi + (lo + detail::mad(s, tail, extra));
    float res = v * detail::pow2i(n - m);
    return x == 0.0f ? x : res;
}

// =============================================================================================
// log, log1p
// =============================================================================================

// log(x). x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)) (subnormal x is first scaled by
// 2^23), log(1+f) = f + f^2 Q(f) with a degree-9 minimax Q; e ln2 uses the Cody–Waite pair
// (e * kLn2Hi exact) and e*kLn2Hi + f is summed exactly (Fast2Sum), so only the small tail is
// rounded. Max error 1 ulp. log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf.
LT_MATH_INLINE float log(float x) {
    bool sub = x < 0x1p-126f;
    float xs = sub ? x * 0x1p23f : x;
    float e;
    float f = detail::log_reduce(xs, e);
    e = sub ? e - 23.0f : e;
    float a = e * detail::kLn2Hi;  // exact
    float hi = a + f;
    float lo = (a - hi) + f;       // exact error of hi (|a| >= |f| unless e == 0, then a == 0)
    float tail = detail::mad(f * f, detail::log_q(f), detail::mad(e, detail::kLn2Lo, lo));
    float res = hi + tail;
    res = x == detail::inf_f() ? x : res;
    res = x == 0.0f ? -detail::inf_f() : res;
    res = x < 0.0f ? detail::nan_f() : res;
    return x != x ? x : res;
}

// log1p(x) = log(1 + x), accurate near 0. u = 1 + x is rounded; its rounding error c is
// recovered exactly (fdlibm's trick: c = 1 - (u - x) when x >= 1, else x - (u - 1)) and added
// back as c / u (first-order correction, second-order term < 2^-48). log(u) as in lt::log.
// Max error 1 ulp. log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(-0) = -0.
LT_MATH_INLINE float log1p(float x) {
    float u = 1.0f + x;
    float c = x >= 1.0f ? 1.0f - (u - x) : x - (u - 1.0f);
    float e;
    float f = detail::log_reduce(u, e);
    float a = e * detail::kLn2Hi;
    float hi = a + f;
    float lo = (a - hi) + f;
    float tail = detail::mad(f * f, detail::log_q(f),
                             detail::mad(e, detail::kLn2Lo, lo + c / u));
    float res = hi + tail;
    res = x == detail::inf_f() ? x : res;
    res = x == -1.0f ? -detail::inf_f() : res;
    res = x < -1.0f ? detail::nan_f() : res;
    res = x == 0.0f ? x : res;
    return x != x ? x : res;
}

// =============================================================================================
// tanh, sigmoid
// =============================================================================================

// tanh(x), computed on |x|, then the sign of x.
//   |x| < 0.875: odd minimax polynomial x + x^3 T(x^2), T of degree 6 (fit error 7.5e-10
//   relative).
//   0.875 <= |x|: 1 - 2 / (E + 1) with E = exp(2|x|), |x| clamped to 10 (tanh rounds to 1
//   from 9.01 on). 2|x| is in [1.75, 20], so E needs none of exp's range handling: n =
//   round(2|x| / ln2) is in [3, 29] (2^n comes straight from the shifter, see
//   detail::shifter_pow2), r = 2|x| - n ln2 uses a single float ln2 (its error, n * 1.9e-9,
//   is relative to E, and 2 / (E + 1) scales it down by 2/E), exp(r) = 1 + r + r^2 P(r) with
//   exp's polynomial, and E + 1 = fma(exp(r), 2^n, 1) is rounded once. 2 / (E + 1) <= 0.24,
//   so its errors count at most a quarter in the result's ulps.
// Max error 2 ulp (measured 1.0). tanh(-0) = -0, tanh(+-inf) = +-1.
LT_MATH_INLINE float tanh(float x) {
    float a = __builtin_fabsf(x);
    float z = a * a;
    float t = detail::poly(z, -0x1.55555p-2f, 0x1.110fa8p-3f, -0x1.b9da54p-5f, 0x1.63770ap-6f,
                           -0x1.1102cp-7f, 0x1.5b6fdep-9f, -0x1.f9c018p-12f);
    float small = detail::mad(a, z * t, a);
    float ac = a > 10.0f ? 10.0f : a;
    float k = detail::mad(ac, 2.0f * detail::kLog2e, detail::kShift + 127.0f);
    float nf = k - (detail::kShift + 127.0f);
    float r = detail::mad(nf, -detail::kLn2, ac + ac);
    float er = detail::mad(r, detail::mad(r, detail::exp_p(r), 1.0f), 1.0f);  // exp(r)
    float e1 = detail::mad(er, detail::shifter_pow2(k), 1.0f);                // E + 1
    float large = 1.0f - 2.0f / e1;
    return __builtin_copysignf(a < 0.875f ? small : large, x);
}

// sigmoid(x) = 1 / (1 + exp(-x)), computed without overflow: with e = exp(-|x|) in (0, 1],
// sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 (subnormal for x < -87.3).
// 0 from x <= -88.72283935546875 on, where torch's 1 / (1 + exp(-x)) is 0 because exp(-x)
// overflows (the correctly rounded value would stay subnormal down to -103.98: a saturated
// sigmoid fed to binary_cross_entropy, whose log is clamped at -100, then gives a loss of 100
// in torch and of -x in lazytorch).
//   e: exp's algorithm (detail::exp_core) for the argument -|x| <= 0 only (0 below -104),
//   so the scaling is always p * 2^(n+64) (exact) * 2^-64 (one rounding, which makes e a
//   correctly scaled subnormal where it is one).
//   The quotient num / (1 + e), rounded once, in float: 1 + e = hi + lo exactly (Fast2Sum,
//   e <= 1); q = num / hi; the remainder num - q (hi + lo) takes two FMAs (num - q hi is
//   exact, q lo is tiny) and is divided by 1 + e using max(q, 1 - q), which is 1 / (1 + e)
//   to within 2^-22 relative (the correction itself is about 1 ulp of q). Where e < 2^-24,
//   hi = 1 and lo = e, so the result is e - e^2 rounded once (e itself where e is
//   subnormal). Without fast FMA the remainder would not be exact, so there the sum and
//   quotient are formed in double instead (same accuracy, slower).
// So the only errors are e's (<= 0.8 ulp of e, which counts up to twice in the result's ulps
// when e / (1 + e) falls into the binade below e) and one final rounding. Max error 2 ulp
// (measured 1.48). sigmoid(+inf) = 1, sigmoid(-inf) = 0, sigmoid(NaN) = NaN.
LT_MATH_INLINE float sigmoid(float x) {
    float t = detail::as_float(detail::bits(x) | 0x80000000u);  // -|x|, one bitwise op
    // Below -104 e is 0, selected while those lanes compute exp(0), as in exp (an
    // underflowing multiply costs a microcode assist).
    bool under = t < -104.0f;
    t = under ? 0.0f : t;
    float s;
    float p = detail::exp_core(t, detail::kShift + 191.0f, s);  // s = 2^(n+64)
    float e = under ? 0.0f : (p * s) * 0x1p-64f;
    // NaN selects e, which is NaN; exp(-x) overflows float from -x = 0x1.62e43p+6 on
    float num = x >= 0.0f ? 1.0f : (x <= -0x1.62e43p+6f ? 0.0f : e);
    // x >= 0: torch's roundings, 1 / (1 + exp(-x)) with the sum rounded to float first. Near
    // 1 a last-bit difference is all 1 - sigmoid has left, and binary_cross_entropy's
    // log(1 - sigmoid) turns it into a different loss: from x = 16.64 torch's 1 + exp(-x) is
    // exactly 1 and its loss against a target 0 is log 0, clamped to 100, where the correctly
    // rounded 1 - 2^-24 gave 16.6 (pytorch/examples siamese_network, saturated outputs).
    float pos = 1.0f / (1.0f + e);
#ifndef __FP_FAST_FMAF
    float r = float(double(num) / (1.0 + double(e)));
    return x >= 0.0f ? pos : r;
#else
    float hi = 1.0f + e;
    float lo = (1.0f - hi) + e;
    float q = num / hi;
    float rem = detail::mad(-q, hi, num);
    rem = detail::mad(-q, lo, rem);
    // 1 / (1 + e) is q (x >= 0) or 1 - q (x < 0), whichever is >= 1/2. (Not a select on x:
    // GCC would thread it with the one above and duplicate the division.)
    float q1 = 1.0f - q;
    float rcp = q > q1 ? q : q1;
    float r = detail::mad(rem, rcp, q);
    return x >= 0.0f ? pos : r;
#endif
}

// =============================================================================================
// erf
// =============================================================================================

// erf(x), computed on a = |x| and given the sign of x. Both branches are evaluated (then
// selected), so each is kept short:
//   a < 0.75: erf = a + a (c0 + z E(z)), z = a^2 (c0 = 2/sqrt(pi) - 1 keeps the leading term
//   exact), E a degree-4 minimax fit (fit error 1.6e-9 relative = 0.03 ulp).
//   0.75 <= a: erf = 1 - 2^M(a - 0.75), M a degree-6 minimax fit of log2(erfc(a)) on
//   [0.75, 4] weighted by erfc(a) ln 2, i.e. measured in erf's absolute units (3.2e-9 =
//   0.05 ulp of erf); the variable a - 0.75 makes M(0) a single rounded coefficient where
//   erfc is largest. a is clamped to 4 (erf rounds to 1 from 3.92 on). M is in [-26, -1.79],
//   so 2^M needs no range handling: n = round(M) via the shifter, r = M - n exact, 2^r by
//   exp2's polynomial (detail::exp2_p) and 2^n straight from the shifter's bits; 2^M <= 0.29,
//   so relative errors of 2^M count at most 0.29 times in erf's ulps. 1 - 2^r 2^n is one
//   fused rounding.
// Max error 2 ulp (measured 1.03). erf(-0) = -0, erf(+-inf) = +-1.
LT_MATH_INLINE float erf(float x) {
    float a = __builtin_fabsf(x);
    float z = a * a;
    float p = detail::poly(z, 0x1.06eba8p-3f, -0x1.81273ap-2f, 0x1.ce2acep-4f, -0x1.b7a75cp-6f,
                           0x1.4f188ap-8f, -0x1.613e5p-11f);
    float small = detail::mad(a, p, a);
    float u = (a > 4.0f ? 4.0f : a) - 0.75f;
    float m = detail::poly(u, -0x1.caa8a4p+0f, -0x1.9b0a6cp+1f, -0x1.2a5e54p+0f, -0x1.3843bp-4f,
                           0x1.2a0402p-6f, -0x1.a66d8ep-9f, 0x1.3d9074p-12f);
    float k = m + (detail::kShift + 127.0f);  // round(M) + 127 in the low bits
    float r = m - (k - (detail::kShift + 127.0f));
    float large = detail::mad(-detail::exp2_p(r), detail::shifter_pow2(k), 1.0f);
    return __builtin_copysignf(a < 0.75f ? small : large, x);
}

// =============================================================================================
// atan, atan2
// =============================================================================================

// atan(x). |x| > 1 uses atan(|x|) = pi/2 - atan(1/|x|); atan on [0, 1] is a degree-8 (in x^2)
// odd minimax polynomial; pi/2 is applied as a hi + lo pair. Max error 1 ulp.
// atan(+-0) = +-0, atan(+-inf) = +-pi/2 (rounded).
LT_MATH_INLINE float atan(float x) {
    float a = __builtin_fabsf(x);
    bool inv = a > 1.0f;
    float t = inv ? 1.0f / a : a;
    float p = detail::atan_01(t);
    float r = inv ? detail::kPio2Hi + (detail::kPio2Lo - p) : p;
    return __builtin_copysignf(r, x);
}

// atan2(y, x): angle of (x, y) in [-pi, pi]. With q = min(|x|,|y|) / max(|x|,|y|) in [0, 1]
// and p = atan(q): |y| <= |x|: p (x >= +0) or pi - p (x <= -0); |y| > |x|: pi/2 - p (x > 0)
// or pi/2 + p (x < 0); then the sign of y. pi and pi/2 are hi + lo pairs. Special cases per
// C99 Annex F: atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi, atan2(+-inf, +-inf) =
// +-pi/4 or +-3pi/4 (correctly rounded), NaN in either argument gives NaN. Max error 2 ulp.
LT_MATH_INLINE float atan2(float y, float x) {
    float ax = __builtin_fabsf(x), ay = __builtin_fabsf(y);
    bool swap = ay > ax;
    float num = swap ? ax : ay, den = swap ? ay : ax;
    float q = num / den;
    q = (num == 0.0f) ? 0.0f : q;                         // 0/0 (and 0/x)
    q = (num == detail::inf_f()) ? 1.0f : q;              // inf/inf
    q = (ax != ax || ay != ay) ? ax + ay : q;             // NaN in, NaN out
    float p = detail::atan_01(q);
    bool xneg = __builtin_signbitf(x) != 0;
    // offset (hi, lo) and the sign applied to p
    float base_hi = swap ? detail::kPio2Hi : (xneg ? detail::kPiHi : 0.0f);
    float base_lo = swap ? detail::kPio2Lo : (xneg ? detail::kPiLo : 0.0f);
    bool minus = swap != xneg;  // pi/2 - p (swap, x >= 0) or pi - p (no swap, x < 0)
    float sp = minus ? -p : p;
    float r = base_hi + (base_lo + sp);
    // both infinite: pi/4 or 3pi/4 exactly rounded (the polynomial at 1 is 1 ulp low)
    bool both_inf = ax == detail::inf_f() && ay == detail::inf_f();
    r = both_inf ? (xneg ? 0x1.2d97c8p+1f : 0x1.921fb6p-1f) : r;
    return __builtin_copysignf(r, y);
}

// =============================================================================================
// pow
// =============================================================================================

// pow(x, y) for float, computed in double: pow = 2^(y log2|x|).
//   log2|x|: |x| = 2^e m with m in [sqrt(1/2), sqrt(2)) (exact in double, subnormal floats are
//   normal doubles); with s = (m-1)/(m+1), log2(m) = s A(s^2), A a degree-5 minimax fit of
//   2 atanh(s) / (s ln2) on s^2 <= 0.0295 (relative error 2.7e-14).
//   2^t: detail::exp2_d (|t| is clamped to 200, which decides only overflow to inf /
//   underflow to 0 after the final conversion to float).
// The double result is within ~2^-30 relative of pow, so the single rounding to float gives
// <= 1 ulp (measured ~0.5), including subnormal results and the overflow threshold.
// Special cases (C99 Annex F): pow(x, +-0) = 1 for any x (even NaN); pow(1, y) = 1 for any y
// (even NaN); pow(-1, +-inf) = 1; pow(x < 0 finite, y finite non-integer) = NaN; sign from an
// odd integer y (pow(-0, -3) = -inf, pow(-inf, 3) = -inf, pow(-2, 3) = -8);
// pow(+-0, y < 0) = +inf (even or non-integer y); |x| < 1: pow(x, +inf) = +0, pow(x, -inf) =
// +inf; |x| > 1 the reverse; pow(+inf, y) = +inf (y > 0) or +0 (y < 0).
LT_MATH_INLINE float pow(float x, float y) {
    using detail::as_double;
    using detail::bits;
    using detail::mad;
    using detail::poly;
    double ax = __builtin_fabs(double(x));
    // log2|x| = e + log2(m). Offsetting the exponent field by 1024 keeps every shift logical.
    uint64_t u = bits(ax) - 0x3fe6a09e667f3bcdull + (1024ull << 52);  // bits of sqrt(1/2)
    double e = as_double((u >> 52) | 0x4330000000000000ull) - (0x1p52 + 1024.0);
    double m = as_double((u & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull);
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double l2 = mad(s,
                    poly(z, 0x1.71547652b825p+1, 0x1.ec709dc53e2fbp-1, 0x1.2776c2914a707p-1,
                         0x1.a61a3048e0a56p-2, 0x1.47951a5e3691ap-2, 0x1.21b42f4a3cb7ap-2),
                    e);
    l2 = ax == __builtin_inf() ? ax : l2;
    l2 = ax == 0.0 ? -__builtin_inf() : l2;
    l2 = ax != ax ? ax : l2;
    float res = float(detail::exp2_d(double(y) * l2));
    // Annex F cases that the formula above does not produce by itself.
    float yh = y * 0.5f;
    bool y_int = __builtin_rintf(y) == y;             // +-inf count as (even) integers
    bool y_odd = y_int && __builtin_rintf(yh) != yh;  // |y| >= 2^24 is always even
    res = (y_odd && __builtin_signbitf(x)) ? -res : res;
    res = (x < 0.0f && x > -detail::inf_f() && !y_int) ? detail::nan_f() : res;
    res = (__builtin_fabsf(x) == 1.0f && __builtin_fabsf(y) == detail::inf_f()) ? 1.0f : res;
    res = (x == 1.0f || y == 0.0f) ? 1.0f : res;
    return res;
}

// =============================================================================================
// float64 overloads: forward to libm (correctness over speed for float64).
// =============================================================================================

LT_MATH_INLINE double exp(double x) { return __builtin_exp(x); }
LT_MATH_INLINE double expm1(double x) { return __builtin_expm1(x); }
LT_MATH_INLINE double log(double x) { return __builtin_log(x); }
LT_MATH_INLINE double log1p(double x) { return __builtin_log1p(x); }
LT_MATH_INLINE double tanh(double x) { return __builtin_tanh(x); }
LT_MATH_INLINE double erf(double x) { return __builtin_erf(x); }
LT_MATH_INLINE double atan(double x) { return __builtin_atan(x); }
LT_MATH_INLINE double atan2(double y, double x) { return __builtin_atan2(y, x); }
LT_MATH_INLINE double pow(double x, double y) { return __builtin_pow(x, y); }
// sigmoid without overflow: exp of a non-positive argument only; 0 where torch's
// 1 / (1 + exp(-x)) is, from exp(-x) overflowing (-x > log(DBL_MAX), 0x1.62e42fefa39efp+9).
LT_MATH_INLINE double sigmoid(double x) {
    double e = __builtin_exp(-__builtin_fabs(x));
    return (x >= 0.0 ? 1.0 : (x < -0x1.62e42fefa39efp+9 ? 0.0 : e)) / (1.0 + e);
}

}  // namespace lt

#undef LT_MATH_INLINE

#endif  // LAZYTORCH_MATH_H
