// lazytorch_conv.h: a direct 2-d convolution (included only by programs that convolve).
//
// out[n][o][y][x] = sum over c, i, j of w[o][c][i][j] * xpad[n][c][sh*y + dh*i][sw*x + dw*j],
// xpad the input with zeros around it. NCHW input and output, OIHW weight, all contiguous.
//
// How it runs (benchmarks/conv_direct.cpp measured the scheme before it was built: about
// three times the GEMM of lazytorch's im2col path on a 16-channel 3x3 layer):
//
// * The padded input is copied once, each image's rows split by column phase: with stride
//   sw, plane r of a row holds padded columns r, r + sw, r + 2 sw, ... so the columns one
//   kernel tap reads for consecutive outputs are consecutive in one plane (tap j reads
//   plane (dw*j) % sw from (dw*j) / sw on). Each plane row has room for whole vectors.
// * The weight is packed as [o-block][c][i][j][OB]: the OB weights one step broadcasts lie
//   together. A block past O is padded with zero weights; only real channels are stored.
// * A task is (image, block of OB output channels, output row). Its OB x WV accumulator
//   vectors stay in registers while it runs over (c, i, j): each loaded input vector feeds
//   OB fused multiply-adds and nothing else is packed. (The probe: accumulators spilled by
//   loops g++ did not unroll, or loads through memcpy, ran 3-4x slower.)
// * Every output is one thread's sum in the fixed order (c, i, j), with fused
//   multiply-adds: results do not depend on the thread count. The FMAs are intrinsics, so
//   the programs' -ffp-contract=off (which keeps fused kernels rounding like sync mode) does
//   not split them; sync mode calls this same function.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <omp.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lt {
namespace conv {

// The machine's vector and how many accumulators its registers hold (32 zmm, or 16).
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
constexpr int kOB = 8;
constexpr int kWVMax = 3;  // 8 x 3 accumulators + 3 inputs + 1 broadcast of 32 registers
constexpr int kOBW = 8;    // the weight gradient: 8 x 3 accumulators + 3 inputs + 1
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
constexpr int kOB = 4;
constexpr int kWVMax = 2;  // 4 x 2 + 2 + 1 of 16
constexpr int kOBW = 4;    // 4 x 3 + 3, the gradient read by the FMAs from memory
#else
constexpr int kVecBytes = 16;
constexpr int kOB = 4;
constexpr int kWVMax = 2;
constexpr int kOBW = 4;
#endif

typedef float vf __attribute__((vector_size(kVecBytes), aligned(4), __may_alias__));
typedef double vd __attribute__((vector_size(kVecBytes), aligned(8), __may_alias__));

static inline vf fmadd(vf a, vf b, vf c) {
#if defined(__AVX512F__)
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__AVX__) && defined(__FMA__)
    return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

static inline vd fmadd(vd a, vd b, vd c) {
#if defined(__AVX512F__)
    return (vd)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
#elif defined(__AVX__) && defined(__FMA__)
    return (vd)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
#else
    return a * b + c;
#endif
}

// A scalar from memory in every lane: one broadcast load (g++ made `V{} + s` an addition,
// then a broadcast on the shuffle port that the FMAs need).
static inline vf splat(const float* p) {
#if defined(__AVX512F__)
    return (vf)_mm512_set1_ps(*p);
#elif defined(__AVX__)
    return (vf)_mm256_broadcast_ss(p);
#else
    vf r;
    for (int i = 0; i < int(sizeof(vf) / sizeof(float)); ++i) r[i] = *p;
    return r;
#endif
}

static inline vd splat(const double* p) {
#if defined(__AVX512F__)
    return (vd)_mm512_set1_pd(*p);
#elif defined(__AVX__)
    return (vd)_mm256_broadcast_sd(p);
#else
    vd r;
    for (int i = 0; i < int(sizeof(vd) / sizeof(double)); ++i) r[i] = *p;
    return r;
#endif
}

// Channels whose taps one register block sums before adding them to its running totals.
constexpr int kCB = 4;

template <class T> struct VecOf;
template <> struct VecOf<float> { typedef vf type; };
template <> struct VecOf<double> { typedef vd type; };
template <class T> using V_of = typename VecOf<T>::type;

// A buffer of the calling thread, grown as needed and kept: a fresh allocation per call
// would be fresh pages, and their faults cost more than a small layer's arithmetic.
template <class T, int Slot>
static T* scratch(int64_t n) {
    struct Kept {
        std::unique_ptr<T[]> p;
        int64_t n = 0;
    };
    static thread_local Kept kept;
    if (kept.n < n) {
        kept.p.reset(new T[n]);
        kept.n = n;
    }
    return kept.p.get();
}

struct Geometry {
    int64_t N, C, H, W, O, KH, KW, sh, sw, pt, pl, dh, dw, Ho, Wo;
    int64_t Hp, Q;  // padded rows; elements per plane row
};

// One task: OB output channels x one output row of one image, WV vectors at a time. KW > 0
// fixes the kernel width at compile time (3: the common case, its taps unrolled).
template <class T, int OB, int WV, int KW>
static void conv_row(const T* __restrict xn, const T* __restrict wb, T* __restrict out,
                     const Geometry& g, const int64_t* __restrict tap_off, int64_t y,
                     int64_t nout) {
    typedef typename VecOf<T>::type V;
    constexpr int L = kVecBytes / sizeof(T);
    const int64_t plane = g.Hp * g.Q;
    for (int64_t x0 = 0; x0 < g.Wo; x0 += WV * L) {
        // Two-level sums: the registers sum the taps of kCB channels at a time, and each
        // block's sums are added to running totals (one chain of FMAs over all C*kH*kW
        // taps was 5x torch's error on 2304-tap rows, and a VAE's Adam steps amplified it)
        V tot[OB][WV];
        V acc[OB][WV];
        _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k)
            _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) acc[k][q] = tot[k][q] = V{};
        const T* wp = wb;
        for (int64_t c = 0; c < g.C; ++c) {
            if (c % kCB == 0 && c) {
                _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k)
                    _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) {
                        tot[k][q] += acc[k][q];
                        acc[k][q] = V{};
                    }
            }
            const T* xc = xn + c * g.sw * plane + g.sh * y * g.Q + x0;
            for (int64_t i = 0; i < g.KH; ++i) {
                const T* xr = xc + g.dh * i * g.Q;
                const int64_t kw = KW > 0 ? KW : g.KW;
                _Pragma("GCC unroll 3") for (int64_t j = 0; j < kw; ++j, wp += OB) {
                    const T* p = xr + tap_off[j];
                    V xv[WV];
                    _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) xv[q] =
                        *(const V*)(p + q * L);
                    _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k) {
                        const V s = splat(wp + k);
                        _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) acc[k][q] =
                            fmadd(s, xv[q], acc[k][q]);
                    }
                }
            }
        }
        _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k)
            _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) acc[k][q] = tot[k][q] + acc[k][q];
        for (int k = 0; k < OB && k < nout; ++k) {
            T* o = out + (k * g.Ho + y) * g.Wo + x0;
            for (int q = 0; q < WV; ++q) {
                const int64_t left = g.Wo - x0 - q * L;
                if (left >= L) {
                    *(V*)(o + q * L) = acc[k][q];
                } else if (left > 0) {
                    T tmp[L];
                    std::memcpy(tmp, &acc[k][q], sizeof(tmp));
                    std::memcpy(o + q * L, tmp, left * sizeof(T));
                }
            }
        }
    }
}

template <class T, int OB, int WV, int KW>
static void conv_all(const T* xq, const T* wq, T* out, const Geometry& g, const int64_t* tap_off) {
    const int64_t nob = (g.O + OB - 1) / OB;
    const int64_t tasks = g.N * nob * g.Ho;
    const double work = double(g.N) * g.O * g.Ho * g.Wo * g.C * g.KH * g.KW;
    const int64_t image = g.C * g.sw * g.Hp * g.Q;
#pragma omp parallel for schedule(static) if (work > 2e5 && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
        const int64_t y = t % g.Ho, ob = (t / g.Ho) % nob, n = t / (g.Ho * nob);
        conv_row<T, OB, WV, KW>(xq + n * image, wq + ob * g.C * g.KH * g.KW * OB,
                            out + (n * g.O + ob * OB) * g.Ho * g.Wo, g, tap_off, y,
                            g.O - ob * OB);
    }
}

// The geometry of a call; false if the output is empty.
static inline bool geometry(Geometry& g, int64_t N, int64_t C, int64_t H, int64_t W, int64_t O,
                            int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pb,
                            int64_t pl, int64_t pr, int64_t dh, int64_t dw) {
    g.N = N, g.C = C, g.H = H, g.W = W, g.O = O, g.KH = KH, g.KW = KW, g.sh = sh, g.sw = sw;
    g.pt = pt, g.pl = pl, g.dh = dh, g.dw = dw;
    g.Ho = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1;
    g.Wo = (W + pl + pr - dw * (KW - 1) - 1) / sw + 1;
    g.Hp = H + pt + pb;
    return N > 0 && O > 0 && g.Ho > 0 && g.Wo > 0;
}

// Room per plane row for `vectors` whole vectors from any tap; each tap's offset from the
// row's start (plane and shift) into taps[0..KW), and taps[KW..KW+2] repeating the last
// (a block of three taps past the kernel reads valid memory; its sums are dropped).
template <class T>
static int64_t* plane_rows(Geometry& g, int64_t vectors) {
    constexpr int L = kVecBytes / sizeof(T);
    g.Q = vectors * L + g.dw * (g.KW - 1) / g.sw;
    int64_t* taps = scratch<int64_t, 2>(g.KW + 2);
    for (int64_t j = 0; j < g.KW + 2; ++j) {
        const int64_t jj = std::min(j, g.KW - 1);
        taps[j] = (g.dw * jj) % g.sw * g.Hp * g.Q + g.dw * jj / g.sw;
    }
    return taps;
}

// The padded input, split by column phase: [n][c][r][row][Q] (the top of this file).
template <class T>
static T* pad_planes(const T* __restrict x, const Geometry& g) {
    const int64_t H = g.H, W = g.W, sw = g.sw, pt = g.pt, pl = g.pl;
    T* xq = scratch<T, 0>(g.N * g.C * sw * g.Hp * g.Q);
    const int64_t rows = g.N * g.C * sw * g.Hp;
#pragma omp parallel for schedule(static) if (rows * g.Q > 50000)
    for (int64_t t = 0; t < rows; ++t) {
        const int64_t hp = t % g.Hp, r = (t / g.Hp) % sw, nc = t / (g.Hp * sw);
        T* dst = xq + t * g.Q;
        const int64_t h = hp - pt;
        if (h < 0 || h >= H) {
            std::fill(dst, dst + g.Q, T(0));
            continue;
        }
        const T* src = x + (nc * H + h) * W;
        // dst[q] = src[sw*q + r - pl] where that column exists: q in [lo, hi)
        const int64_t lo = std::min<int64_t>(g.Q, std::max<int64_t>(0, (pl - r + sw - 1) / sw));
        const int64_t hi =
            std::max<int64_t>(lo, std::min<int64_t>(g.Q, (W + pl - r + sw - 1) / sw));
        std::fill(dst, dst + lo, T(0));
        if (sw == 1) {
            std::memcpy(dst + lo, src + lo + r - pl, (hi - lo) * sizeof(T));
        } else {
            for (int64_t q = lo; q < hi; ++q) dst[q] = src[sw * q + r - pl];
        }
        std::fill(dst + hi, dst + g.Q, T(0));
    }
    return xq;
}

// -- the weight's gradient ------------------------------------------------------------------
// dw[o][c][i][j] = sum over n, y, x of dy[n][o][y][x] * xpad[n][c][sh*y + dh*i][sw*x + dw*j].
// A task is (block of OB output channels, input channel c). For each tap row i and block of
// three taps j, its OB x 3 accumulator vectors run along output rows (lanes over x), a row
// of WV vectors unrolled (WV = 0: a loop over any number): each loaded input vector feeds
// OB FMAs, each gradient vector 3. Lanes past the output row are zeroed in both operands
// (MASK; an inf in an input column no output reads must not become 0 * inf = NaN). Each
// image's sums are added to running totals (two-level summation: a lane otherwise adds
// N*Ho*Wo/L terms in a row), and the lanes are added in order at the end: every result is
// one thread's, the same at any thread count.
template <class T, int OB, int WV, bool MASK>
static void wgrad_task(const T* __restrict xq, const T* __restrict dy, T* __restrict dwt,
                       const Geometry& g, const int64_t* __restrict taps, int64_t Qy,
                       int64_t o0, int64_t c0, int64_t cn, V_of<T>* __restrict tot) {
    typedef typename VecOf<T>::type V;
    constexpr int L = kVecBytes / sizeof(T);
    const int64_t nout = std::min<int64_t>(OB, g.O - o0);
    const int64_t nvec = WV > 0 ? WV : (g.Wo + L - 1) / L;
    V keep{};  // 1 in the lanes of the last vector that hold outputs
    for (int q = 0; q < L; ++q) keep[q] = q < g.Wo - (nvec - 1) * L ? T(1) : T(0);
    const int64_t image = g.C * g.sw * g.Hp * g.Q;
    const int64_t jblocks = (g.KW + 2) / 3;
    // channel k's gradient rows (channels past O read the last real one; dropped at the end)
    int64_t dyk[OB];
    for (int k = 0; k < OB; ++k) dyk[k] = (o0 + std::min<int64_t>(k, nout - 1)) * g.Ho * Qy;
    // the running totals: [c][i][j-block][k][3]
    const int64_t slots = cn * g.KH * jblocks;
    for (int64_t e = 0; e < slots * OB * 3; ++e) tot[e] = V{};
    // image by image (its gradient rows, read once per tap, stay in cache), then each
    // channel of the task's group, tap row and block of three taps
    for (int64_t n = 0; n < g.N; ++n) {
        const T* dn = dy + n * g.O * g.Ho * Qy;
        for (int64_t cc = 0; cc < cn; ++cc)
            for (int64_t i = 0; i < g.KH; ++i)
                for (int64_t jb = 0; jb < jblocks; ++jb) {
                    const int64_t t0 = taps[3 * jb], t1 = taps[3 * jb + 1], t2 = taps[3 * jb + 2];
                    V acc[OB][3];
                    _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k) {
                        acc[k][0] = V{};
                        acc[k][1] = V{};
                        acc[k][2] = V{};
                    }
                    const T* xn =
                        xq + n * image + (c0 + cc) * g.sw * g.Hp * g.Q + g.dh * i * g.Q;
                    for (int64_t y = 0; y < g.Ho; ++y) {
                        const T* xr = xn + g.sh * y * g.Q;
                        const T* dr = dn + y * Qy;
                        _Pragma("GCC unroll 4") for (int64_t v = 0; v < nvec; ++v) {
                            const int64_t x0 = v * L;
                            V x0v = *(const V*)(xr + t0 + x0), x1v = *(const V*)(xr + t1 + x0),
                              x2v = *(const V*)(xr + t2 + x0);
                            const bool last = MASK && v == nvec - 1;
                            if (last) {
                                x0v = keep != T(0) ? x0v : V{};
                                x1v = keep != T(0) ? x1v : V{};
                                x2v = keep != T(0) ? x2v : V{};
                            }
                            _Pragma("GCC unroll 8") for (int k = 0; k < OB; ++k) {
                                V d = *(const V*)(dr + dyk[k] + x0);
                                if (last) d = keep != T(0) ? d : V{};
                                acc[k][0] = fmadd(d, x0v, acc[k][0]);
                                acc[k][1] = fmadd(d, x1v, acc[k][1]);
                                acc[k][2] = fmadd(d, x2v, acc[k][2]);
                            }
                        }
                    }
                    V* t = tot + ((cc * g.KH + i) * jblocks + jb) * OB * 3;
                    for (int k = 0; k < OB; ++k)
                        for (int jj = 0; jj < 3; ++jj) t[k * 3 + jj] += acc[k][jj];
                }
    }
    for (int64_t cc = 0; cc < cn; ++cc)
        for (int64_t i = 0; i < g.KH; ++i)
            for (int64_t jb = 0; jb < jblocks; ++jb) {
                const V* t = tot + ((cc * g.KH + i) * jblocks + jb) * OB * 3;
                for (int64_t k = 0; k < nout; ++k)
                    for (int64_t jj = 0; jj < 3 && 3 * jb + jj < g.KW; ++jj) {
                        T s = 0;
                        for (int q = 0; q < L; ++q) s += t[k * 3 + jj][q];
                        dwt[(((o0 + k) * g.C + c0 + cc) * g.KH + i) * g.KW + 3 * jb + jj] = s;
                    }
            }
}

template <class T, int WV, bool MASK>
static void wgrad_all(const T* xq, const T* dy, T* dwt, const Geometry& g, const int64_t* taps,
                      int64_t Qy) {
    constexpr int OB = kOBW;
    const int64_t nob = (g.O + OB - 1) / OB;
    // groups of up to 4 input channels per task, while that leaves two tasks per thread:
    // a task reads its images' gradient rows once per channel of its group
    int64_t cb = 4;
    while (cb > 1 && nob * ((g.C + cb - 1) / cb) < 2 * omp_get_max_threads()) cb /= 2;
    const int64_t ncb = (g.C + cb - 1) / cb;
    const int64_t tasks = nob * ncb;
    const int64_t per_task = cb * g.KH * ((g.KW + 2) / 3) * OB * 3;
    const double work = double(g.N) * g.O * g.Ho * g.Wo * g.C * g.KH * g.KW;
    const bool parallel = work > 2e5 && tasks > 1;
    V_of<T>* tots = scratch<V_of<T>, 4>(per_task * (parallel ? omp_get_max_threads() : 1));
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < tasks; ++t) {
        const int64_t c0 = t % ncb * cb;
        V_of<T>* tot = tots + (parallel ? omp_get_thread_num() : 0) * per_task;
        wgrad_task<T, OB, WV, MASK>(xq, dy, dwt, g, taps, Qy, t / ncb * OB, c0,
                                    std::min(cb, g.C - c0), tot);
    }
}

}  // namespace conv

// The convolution (see the top of this file). pads: top, bottom, left, right.
template <class T>
static void conv2d(const T* __restrict x, const T* __restrict w, T* __restrict out, int64_t N,
                   int64_t C, int64_t H, int64_t W, int64_t O, int64_t KH, int64_t KW, int64_t sh,
                   int64_t sw, int64_t pt, int64_t pb, int64_t pl, int64_t pr, int64_t dh,
                   int64_t dw) {
    using namespace conv;
    constexpr int L = kVecBytes / sizeof(T);
    Geometry g;
    if (!geometry(g, N, C, H, W, O, KH, KW, sh, sw, pt, pb, pl, pr, dh, dw)) return;
    if (C == 0 || KH == 0 || KW == 0) {
        std::fill(out, out + N * O * g.Ho * g.Wo, T(0));
        return;
    }
    const int64_t nvec = (g.Wo + L - 1) / L;
    const int wv = int(std::min<int64_t>(nvec, kWVMax));
    const int64_t* taps = plane_rows<T>(g, (nvec + wv - 1) / wv * wv);
    const T* xq = pad_planes(x, g);

    // The weight as [o-block][c][i][j][OB], zeros past O.
    const int OB = kOB;
    const int64_t nob = (O + OB - 1) / OB;
    const int64_t taps_per_o = C * KH * KW;
    T* wq = scratch<T, 1>(nob * taps_per_o * OB);
    for (int64_t ob = 0; ob < nob; ++ob)
        for (int64_t e = 0; e < taps_per_o; ++e)
            for (int k = 0; k < OB; ++k) {
                const int64_t o = ob * OB + k;
                wq[(ob * taps_per_o + e) * OB + k] = o < O ? w[o * taps_per_o + e] : T(0);
            }

    if (KW == 3) {
        switch (wv) {
            case 1: conv_all<T, kOB, 1, 3>(xq, wq, out, g, taps); break;
            case 2: conv_all<T, kOB, 2, 3>(xq, wq, out, g, taps); break;
            default: conv_all<T, kOB, kWVMax, 3>(xq, wq, out, g, taps); break;  // 2 or 3
        }
        return;
    }
    switch (wv) {
        case 1: conv_all<T, kOB, 1, 0>(xq, wq, out, g, taps); break;
        case 2: conv_all<T, kOB, 2, 0>(xq, wq, out, g, taps); break;
        default: conv_all<T, kOB, kWVMax, 0>(xq, wq, out, g, taps); break;
    }
}

// The weight's gradient of that convolution, from its input x and output gradient dy
// (N, O, Ho, Wo), into dwt (O, C, KH, KW). Same geometry arguments as conv2d.
template <class T>
static void conv2d_wgrad(const T* __restrict x, const T* __restrict dy, T* __restrict dwt,
                         int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t KH,
                         int64_t KW, int64_t sh, int64_t sw, int64_t pt, int64_t pb, int64_t pl,
                         int64_t pr, int64_t dh, int64_t dw) {
    using namespace conv;
    constexpr int L = kVecBytes / sizeof(T);
    Geometry g;
    const int64_t size = O * C * KH * KW;
    if (!geometry(g, N, C, H, W, O, KH, KW, sh, sw, pt, pb, pl, pr, dh, dw) || C == 0) {
        std::fill(dwt, dwt + size, T(0));
        return;
    }
    const int64_t nvec = (g.Wo + L - 1) / L;
    const int64_t* taps = plane_rows<T>(g, nvec);
    const T* xq = pad_planes(x, g);
    // dy's rows padded to whole vectors, unless they are whole already
    int64_t Qy = g.Wo;
    const T* dyq = dy;
    if (g.Wo % L) {
        Qy = nvec * L;
        T* p = scratch<T, 3>(N * O * g.Ho * Qy);
        for (int64_t r = 0; r < N * O * g.Ho; ++r) {
            std::memcpy(p + r * Qy, dy + r * g.Wo, g.Wo * sizeof(T));
            std::fill(p + r * Qy + g.Wo, p + (r + 1) * Qy, T(0));
        }
        dyq = p;
    }
    const bool mask = g.Wo % L != 0;
    switch (nvec * 2 + mask) {
        case 2: wgrad_all<T, 1, false>(xq, dyq, dwt, g, taps, Qy); break;
        case 3: wgrad_all<T, 1, true>(xq, dyq, dwt, g, taps, Qy); break;
        case 4: wgrad_all<T, 2, false>(xq, dyq, dwt, g, taps, Qy); break;
        case 5: wgrad_all<T, 2, true>(xq, dyq, dwt, g, taps, Qy); break;
        default:
            if (mask) wgrad_all<T, 0, true>(xq, dyq, dwt, g, taps, Qy);
            else wgrad_all<T, 0, false>(xq, dyq, dwt, g, taps, Qy);
    }
}

}  // namespace lt
