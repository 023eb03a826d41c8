// lazytorch_runtime.h: what generated kernels call besides plain C++ arithmetic.
//
// Everything here is header-only and inline so g++ can vectorize the loops that use it:
// index helpers, Python-semantics integer/float division, NaN-propagating min/max,
// integer powers with torch's rules, error reporting from inside kernels, and the
// Philox4x32-10 random generator (the same function as lazytorch/ir/philox.py).
// No -ffast-math anywhere: NaN and Inf behave exactly as in the reference interpreter.
#pragma once
#include <omp.h>

#include <cstdint>

#include "lazytorch_math.h"

// The entry point is straight-line calls into the step functions, one per kernel. g++'s
// optimizer is superlinear on a function of thousands of such calls (5 s of a 12 s build
// for a 2000-step program) and has nothing to gain there, so the entry is built unoptimized.
#if defined(__clang__)
#define LT_ENTRY_ATTRS __attribute__((optnone))
#elif defined(__GNUC__)
#define LT_ENTRY_ATTRS __attribute__((optimize("O0")))
#else
#define LT_ENTRY_ATTRS
#endif

namespace lt {

using half = _Float16;

// -- index arithmetic ---------------------------------------------------------------------
// A temporary of a program compiled over symbolic sizes sits at an unrounded offset with 64
// bytes of slack after it (see scheduler/memory.py); its pointer is aligned into the slack.
static inline char* align_up(char* p) {
    return (char*)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static inline int64_t clamp_index(int64_t i, int64_t lo, int64_t hi) {
    return i < lo ? lo : (i > hi ? hi : i);
}
static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t floormod(int64_t a, int64_t b) {
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// -- errors raised by a kernel --------------------------------------------------------------
// err[0] = 1 + the program instruction that failed (the first failure wins), err[1] = kind,
// err[2..4] = details. The runtime turns it into the Python exception, naming the line.
enum ErrorKind : int64_t { kIndexOutOfRange = 1, kZeroDivision = 2 };

static inline void report(int64_t* err, int64_t instr, int64_t kind, int64_t a, int64_t b, int64_t c) {
    int64_t expected = 0;
    if (__atomic_compare_exchange_n(&err[0], &expected, instr + 1, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
        err[1] = kind;
        err[2] = a;
        err[3] = b;
        err[4] = c;
    }
}

// An index read from data: out of [0, size) reports (once) and reads element 0 instead.
static inline int64_t checked_index(int64_t i, int64_t size, int64_t instr, int64_t axis, int64_t* err) {
    if (__builtin_expect(i < 0 || i >= size, 0)) {
        report(err, instr, kIndexOutOfRange, i, size, axis);
        return 0;
    }
    return i;
}

// -- arithmetic with torch/NumPy semantics ---------------------------------------------------
template <class T>
static inline T maximum(T a, T b) {
    if constexpr (sizeof(T) >= 4 && (T)0.5 != 0) {  // floating point: NaN wins
        return (a != a || a > b) ? a : (b != b ? b : (a == b ? a : b));
    } else {
        return a > b ? a : b;
    }
}
template <class T>
static inline T minimum(T a, T b) {
    if constexpr (sizeof(T) >= 4 && (T)0.5 != 0) {
        return (a != a || a < b) ? a : (b != b ? b : (a == b ? a : b));
    } else {
        return a < b ? a : b;
    }
}

// Integer division: floor semantics (Python's //, %), a zero divisor reports an error.
// A divisor of -1 never reaches the hardware: MIN / -1 and MIN % -1 trap on x86 (SIGFPE),
// while torch wraps (MIN // -1 == MIN, MIN % -1 == 0).
template <class T>
static inline bool is_minus_one(T b) {
    if constexpr ((T)-1 < (T)0) {
        return b == (T)-1;
    } else {
        return false;
    }
}
template <class T>
static inline T wrapping_neg(T a) {
    return (T)(0 - (uint64_t)a);  // two's complement: -MIN == MIN
}
template <class T>
static inline T ifloordiv(T a, T b, int64_t instr, int64_t* err) {
    if (__builtin_expect(b == 0, 0)) {
        report(err, instr, kZeroDivision, 0, 0, 0);
        return 0;
    }
    if (__builtin_expect(is_minus_one(b), 0)) return wrapping_neg(a);
    T q = (T)(a / b);
    return (T)((a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);
}
template <class T>
static inline T iremainder(T a, T b, int64_t instr, int64_t* err) {
    if (__builtin_expect(b == 0, 0)) {
        report(err, instr, kZeroDivision, 0, 0, 0);
        return 0;
    }
    if (__builtin_expect(is_minus_one(b), 0)) return 0;
    T r = (T)(a % b);
    return (T)((r != 0 && ((r < 0) != (b < 0))) ? r + b : r);
}
template <class T>
static inline T ifmod(T a, T b, int64_t instr, int64_t* err) {
    if (__builtin_expect(b == 0, 0)) {
        report(err, instr, kZeroDivision, 0, 0, 0);
        return 0;
    }
    if (__builtin_expect(is_minus_one(b), 0)) return 0;
    return (T)(a % b);
}

// Float floor division and remainder, as NumPy computes them (npy_divmod).
template <class T>
static inline T ffloordiv(T a, T b) {
    if (b == 0) return a / b;
    T mod = (T)__builtin_fmod((double)a, (double)b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return __builtin_copysign((T)0, a / b);
    T fl = (T)__builtin_floor((double)div);
    if (div - fl > (T)0.5) fl += 1;
    return fl;
}
template <class T>
static inline T fremainder(T a, T b) {
    if (b == 0) return (T)__builtin_fmod((double)a, (double)b);
    T mod = (T)__builtin_fmod((double)a, (double)b);
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = __builtin_copysign((T)0, b);
    }
    return mod;
}

// Integer power with torch's rules for negative exponents: 1 stays 1, -1 alternates, the
// rest truncates to 0. Computed in unsigned arithmetic so overflow wraps like NumPy's.
template <class T>
static inline T ipow(T a, T b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? (T)-1 : (T)1;
        return 0;
    }
    uint64_t base = (uint64_t)(int64_t)a, e = (uint64_t)(int64_t)b, r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    return (T)(int64_t)r;
}

template <class T>
static inline T iabs(T a) {
    return a < 0 ? (T)-a : a;
}

// -- 16-bit floats -------------------------------------------------------------------------
// float16 and bfloat16 math runs in float and is rounded to the 16-bit type after every
// primitive (as the reference interpreter and torch's CPU kernels do).
static inline float round_half(float x) { return (float)(half)x; }

// bfloat16 is float32's upper half. It is stored as a struct of its bits with explicit
// conversions: g++ 12 has no __bf16 on x86 (g++ 13 and clang do, with differing arithmetic
// support), and this form means the same to every C++ compiler. The conversions are integer
// arithmetic on the float's bits, so loops over them vectorize (vpsrld/vpaddd/vpmovdw).
static inline uint32_t float_bits(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}
// The bits of `x` read as a `To` of the same size (torch's `x.view(dtype)`).
template <class To, class From>
static inline To bit_as(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit_as: sizes differ");
    To t;
    __builtin_memcpy(&t, &x, sizeof t);
    return t;
}
static inline float float_of_bits(uint32_t u) {
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}
// float -> bfloat16 bits, rounded to nearest even (ties to even, subnormals kept, overflow
// to inf), as torch's c10::BFloat16 and ml_dtypes do. NaN becomes the quiet NaN of its sign
// (0x7FC0 / 0xFFC0), as ml_dtypes (the reference interpreter) gives it; torch gives 0x7FC0
// in c10 and 0xFFFF in its vectorized CPU kernels, all of them NaN.
// Not AVX512-BF16's vcvtneps2bf16: it flushes subnormal inputs to zero and keeps NaN
// payloads: it disagrees with torch on 33,226,750 of the 2^32 float inputs (measured).
static inline uint16_t bf16_bits(float f) {
    const uint32_t u = float_bits(f);
    const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    const uint32_t nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}
struct bf16 {
    uint16_t bits;
    bf16() = default;
    bf16(float f) : bits(bf16_bits(f)) {}
    // Stores assign a float (`b[i] = v`): a cast would build a temporary that keeps g++
    // from vectorizing an `omp simd` loop.
    bf16& operator=(float f) {
        bits = bf16_bits(f);
        return *this;
    }
    operator float() const { return float_of_bits((uint32_t)bits << 16); }
};
static inline float round_bf16(float x) { return float_of_bits((uint32_t)bf16_bits(x) << 16); }

// -- Philox4x32-10 (see lazytorch/ir/philox.py) --------------------------------------------
struct Philox4 {
    uint32_t c0, c1, c2, c3;
};
static inline Philox4 philox(uint64_t counter, uint64_t seed) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int i = 0; i < 10; ++i) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return {c0, c1, c2, c3};
}
// Out of line, for kernels of a few elements: inlined and vectorized, each Philox call is
// tens of milliseconds of g++ time, which a program drawing from hundreds of small random
// tensors (a loop of randperm) would pay for nothing.
__attribute__((noinline)) static Philox4 philox_outlined(uint64_t counter, uint64_t seed) {
    return philox(counter, seed);
}
template <bool Outlined>
static inline Philox4 philox_for(uint64_t counter, uint64_t seed) {
    return Outlined ? philox_outlined(counter, seed) : philox(counter, seed);
}
template <bool Outlined = false>
static inline float rand_uniform_f32(uint64_t counter, uint64_t seed) {
    return (float)(philox_for<Outlined>(counter, seed).c0 >> 8) * 0x1p-24f;
}
template <bool Outlined = false>
static inline double rand_uniform_f64(uint64_t counter, uint64_t seed) {
    Philox4 r = philox_for<Outlined>(counter, seed);
    uint64_t bits = ((uint64_t)r.c0 << 21) ^ ((uint64_t)r.c1 >> 11);
    return (double)bits * 0x1p-53;
}
template <bool Outlined = false>
static inline float rand_uniform_f16(uint64_t counter, uint64_t seed) {
    return (float)(philox_for<Outlined>(counter, seed).c0 >> 21) * 0x1p-11f;
}
// bfloat16: the top 8 bits of c0 times 2**-8 (exact in bfloat16's 8-bit significand).
template <bool Outlined = false>
static inline float rand_uniform_bf16(uint64_t counter, uint64_t seed) {
    return (float)(philox_for<Outlined>(counter, seed).c0 >> 24) * 0x1p-8f;
}
template <bool Outlined = false>
static inline double rand_normal(uint64_t counter, uint64_t seed) {
    Philox4 r = philox_for<Outlined>(counter, seed);
    double u1 = ((double)(r.c0 >> 8) + 1.0) * 0x1p-24;
    double u2 = (double)(r.c1 >> 8) * 0x1p-24;
    return __builtin_sqrt(-2.0 * __builtin_log(u1)) * __builtin_cos(2.0 * 3.141592653589793 * u2);
}

// -- argmax / argmin: first index wins ties, the first NaN wins over numbers -------------------
template <class T>
static inline bool better_max(T v, int64_t i, T best, int64_t bi) {
    if (best != best) return v != v && i < bi;
    if (v != v) return true;
    return v > best || (v == best && i < bi);
}
template <class T>
static inline bool better_min(T v, int64_t i, T best, int64_t bi) {
    if (best != best) return v != v && i < bi;
    if (v != v) return true;
    return v < best || (v == best && i < bi);
}

}  // namespace lt
