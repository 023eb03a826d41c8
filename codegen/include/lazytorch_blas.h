// lazytorch_blas.h: GEMM for generated programs, on OpenBLAS (scipy-openblas32).
//
// Threads. Generated kernels run on OpenMP threads, and OpenBLAS by default runs on its own
// pthreads. The two pools fight: after a kernel, OpenMP's workers spin for a while waiting
// for the next parallel region, and after a GEMM OpenBLAS's workers do the same, so on a
// machine with few cores each pool steals the cores the other needs (measured on 2 cores:
// an MLP of three GEMMs with fused epilogues took 17 ms; 7 ms with either pool made passive).
// So OpenBLAS is told to use one thread, and lazytorch parallelizes a GEMM itself: C is cut
// into row (or column) blocks and each OpenMP thread calls the single-threaded GEMM on its
// blocks. One pool of threads runs everything.
//
// Which dimension is cut: each block repacks the operand it shares with the other blocks
// (row blocks all read the whole of B, column blocks all of A), so the cut goes along the
// dimension whose shared operand is smaller.
//
// Determinism: a block's result depends only on its shape and data, never on the thread
// that computes it. With `fixed_blocks` (deterministic mode) the blocks depend only on the
// problem's shape, so results are bitwise identical across thread counts; otherwise there
// is one block per thread.
#pragma once
#include <omp.h>

#include <cstdint>

extern "C" void scipy_cblas_sgemm(int, int, int, int, int, int, float, const float*, int,
                                  const float*, int, float, float*, int);
extern "C" void scipy_cblas_dgemm(int, int, int, int, int, int, double, const double*, int,
                                  const double*, int, double, double*, int);
extern "C" void scipy_openblas_set_num_threads(int);

namespace lt {

static const int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

namespace detail {

// Runs when the program's shared object is loaded: OpenBLAS computes on the caller's thread.
struct SingleThreadedBlas {
    SingleThreadedBlas() { scipy_openblas_set_num_threads(1); }
};
static SingleThreadedBlas single_threaded_blas;

inline void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc) {
    scipy_cblas_sgemm(kRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, A, int(lda), B, int(ldb),
                      0.0f, C, int(ldc));
}
inline void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double* C, int64_t ldc) {
    scipy_cblas_dgemm(kRowMajor, ta, tb, int(m), int(n), int(k), 1.0, A, int(lda), B, int(ldb),
                      0.0, C, int(ldc));
}

// Below this many multiply-adds a GEMM is not worth waking a second thread for.
constexpr int64_t kParallelMinWork = int64_t(1) << 21;  // 128^3
// Blocks in deterministic mode: at most this many, of at least kMinBlock rows or columns.
constexpr int64_t kFixedBlocks = 8;
constexpr int64_t kMinBlock = 32;

inline int64_t block_count(int64_t dim, int64_t work, bool fixed_blocks) {
    if (work < kParallelMinWork || dim < 2 * kMinBlock) return 1;
    int64_t most = (dim + kMinBlock - 1) / kMinBlock;
    int64_t want = fixed_blocks ? kFixedBlocks : int64_t(omp_get_max_threads());
    return want < most ? want : most;
}

}  // namespace detail

// C (m x n, row-major, leading dimension ldc) = op(A) @ op(B), op given by ta/tb (kNoTrans or
// kTrans) with the usual row-major BLAS leading dimensions.
template <class T>
inline void gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T* C, int64_t ldc, bool fixed_blocks) {
    const int64_t work = m * n * k;
    // row blocks share B (k x n), column blocks share A (m x k): share the smaller one
    const bool by_rows = m >= n;
    const int64_t dim = by_rows ? m : n;
    const int64_t nb = detail::block_count(dim, work, fixed_blocks);
    if (nb <= 1 || (omp_in_parallel() && !fixed_blocks)) {
        detail::gemm1(ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
        return;
    }
    // Inside a parallel region (one product per thread of a batch) fixed blocks still run,
    // one after another, so a product is cut the same way whatever the thread count.
#pragma omp parallel for schedule(static) if(!omp_in_parallel())
    for (int64_t b = 0; b < nb; ++b) {
        const int64_t lo = dim * b / nb, hi = dim * (b + 1) / nb;
        if (by_rows) {  // rows lo..hi of op(A) and of C
            const T* Ab = ta == kNoTrans ? A + lo * lda : A + lo;
            detail::gemm1(ta, tb, hi - lo, n, k, Ab, lda, B, ldb, C + lo * ldc, ldc);
        } else {  // columns lo..hi of op(B) and of C
            const T* Bb = tb == kNoTrans ? B + lo : B + lo * ldb;
            detail::gemm1(ta, tb, m, hi - lo, k, A, lda, Bb, ldb, C + lo, ldc);
        }
    }
}

}  // namespace lt
