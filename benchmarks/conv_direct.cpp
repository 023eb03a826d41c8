// A probe for issue 21's convolution lever: a direct 3x3, stride-1, pad-1 convolution
// kernel (NCHW, float32), timed against the work lazytorch's im2col + OpenBLAS path does for
// the same layer. Not used by lazytorch: it measures what a convolution extern could gain
// before one is built (benchmarks/RESULTS.md, twenty-fifth session).
//
//   g++ -O2 -march=native -mprefer-vector-width=512 -o conv_direct benchmarks/conv_direct.cpp
//   ./conv_direct 16 16 32          # C_in C_out H(=W), batch 32, one thread
//
// The kernel keeps a block of 8 output channels x one output row (W/VL vectors each) in
// registers and runs over (c, kh, kw): per step it loads W/VL input vectors, shifted by kw,
// and broadcasts 8 weights, so each loaded vector feeds 8 FMAs and nothing is packed or
// copied but the padded image (one L2-resident copy per image). The accumulators must stay
// in registers: loads through memcpy (a stack round trip) or loops g++ does not unroll
// (accumulators spilled) made it 3-4x slower.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

// The vector is the machine's: 16 lanes with AVX-512, else 8 (AVX2). GCC lowers a 64-byte
// vector type on an AVX2 target to pairs of spilled halves: 3.2 GFLOP/s instead of ~60.
#ifdef __AVX512F__
constexpr int VL = 16;
#else
constexpr int VL = 8;
#endif
typedef float vec __attribute__((vector_size(VL * 4), aligned(4)));

static inline vec loadu(const float* p) { return *(const vec*)p; }
static inline void storeu(float* p, vec v) { *(vec*)p = v; }

// out[o][h][:] = sum over c, kh, kw of w[o][c][kh][kw] * xp[c][h + kh][kw : kw + W], where xp
// is the image padded by one (rows of Wp floats, Wp >= W + 2 + VL for the last vector).
template <int OB, int WV>
static void conv_image(const float* __restrict xp, const float* __restrict w,
                       float* __restrict out, int C, int O, int H, int W, int Wp) {
    for (int ob = 0; ob < O; ob += OB)
        for (int h = 0; h < H; ++h) {
            vec acc[OB][WV];
            _Pragma("GCC unroll 16") for (int j = 0; j < OB; ++j)
                _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q) acc[j][q] = vec{};
            for (int c = 0; c < C; ++c)
                for (int kh = 0; kh < 3; ++kh) {
                    const float* row = xp + ((int64_t)c * (H + 2) + h + kh) * Wp;
                    _Pragma("GCC unroll 3") for (int kw = 0; kw < 3; ++kw) {
                        vec xv[WV];
                        _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q)
                            xv[q] = loadu(row + kw + VL * q);
                        const float* wp = w + ((int64_t)ob * C + c) * 9 + kh * 3 + kw;
                        _Pragma("GCC unroll 16") for (int j = 0; j < OB; ++j) {
                            const float s = wp[(int64_t)j * C * 9];
                            _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q)
                                acc[j][q] += s * xv[q];
                        }
                    }
                }
            _Pragma("GCC unroll 16") for (int j = 0; j < OB; ++j)
                _Pragma("GCC unroll 4") for (int q = 0; q < WV; ++q)
                    storeu(out + ((int64_t)(ob + j) * H + h) * W + VL * q, acc[j][q]);
        }
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s C_in C_out H  (H = W)\n", argv[0]);
        return 2;
    }
    const int N = 32, C = std::atoi(argv[1]), O = std::atoi(argv[2]), H = std::atoi(argv[3]);
    const int W = H, Wp = W + 2 + VL;
    if (W % VL || O % 8 || W > 4 * VL) {
        std::fprintf(stderr, "this probe takes W a multiple of %d up to %d, C_out of 8\n", VL, 4 * VL);
        return 2;
    }
    std::mt19937 gen(0);
    std::normal_distribution<float> normal;
    std::vector<float> x((size_t)N * C * H * W), w((size_t)O * C * 9), out((size_t)N * O * H * W);
    std::vector<float> xp((size_t)C * (H + 2) * Wp);
    for (float& v : x) v = normal(gen);
    for (float& v : w) v = normal(gen);
    auto run = [&]() {
        for (int n = 0; n < N; ++n) {
            std::memset(xp.data(), 0, xp.size() * sizeof(float));
            for (int c = 0; c < C; ++c)
                for (int h = 0; h < H; ++h)
                    std::memcpy(&xp[((size_t)c * (H + 2) + h + 1) * Wp + 1],
                                &x[(((size_t)n * C + c) * H + h) * W], W * sizeof(float));
            float* o = &out[(size_t)n * O * H * W];
            switch (W / VL) {
                case 1: conv_image<8, 1>(xp.data(), w.data(), o, C, O, H, W, Wp); break;
                case 2: conv_image<8, 2>(xp.data(), w.data(), o, C, O, H, W, Wp); break;
                case 3: conv_image<8, 3>(xp.data(), w.data(), o, C, O, H, W, Wp); break;
                default: conv_image<4, 4>(xp.data(), w.data(), o, C, O, H, W, Wp); break;
            }
        }
    };
    run();
    double best = 1e30;
    for (int r = 0; r < 15; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    // spot check against the definition, in double
    double err = 0;
    for (int n : {0, N - 1})
        for (int o : {0, O - 1})
            for (int h : {0, H / 2, H - 1})
                for (int ww : {0, 5, W - 1}) {
                    double s = 0;
                    for (int c = 0; c < C; ++c)
                        for (int kh = 0; kh < 3; ++kh)
                            for (int kw = 0; kw < 3; ++kw) {
                                int ih = h + kh - 1, iw = ww + kw - 1;
                                if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
                                s += (double)w[((size_t)o * C + c) * 9 + kh * 3 + kw] *
                                     x[(((size_t)n * C + c) * H + ih) * W + iw];
                            }
                    err = std::max(err, std::fabs(s - out[(((size_t)n * O + o) * H + h) * W + ww]));
                }
    std::printf("N=%d C=%d O=%d H=W=%d: %.3f ms, %.1f GFLOP/s (one thread), max abs err %.2e\n", N,
                C, O, H, best * 1e3, 2.0 * N * O * C * 9 * H * W / best / 1e9, err);
    return err < 1e-3 ? 0 : 1;
}
