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
//
// 16-bit floats (bfloat16, float16) multiply as torch's CPU kernels do: float32 products
// accumulated in float32, C rounded once at the end. OpenBLAS's bfloat16 GEMM (sbgemm) is
// used where the loaded library exports it and the CPU has bfloat16 dot products (without
// them OpenBLAS runs a generic C kernel, slower than the alternative); otherwise, and for
// float16, A and B are widened to float32 and multiplied by sgemm (`gemm16`). Before both,
// bfloat16 products run natively on AMX tiles or AVX512-BF16 where the CPU has them
// (lazytorch_gemm_bf16.h). Each program counts which path its products took in
// `lt_gemm16_calls` (tests read it).
#pragma once
#include <omp.h>

#include <atomic>
#include <cstdint>

#include "lazytorch_runtime.h"
// The 16-bit products (below, and lazytorch_gemm_bf16.h, whose intrinsics headers cost
// about 0.7 s of g++ parsing) only in programs that multiply 16-bit floats: the code
// generator defines LT_GEMM16 for those.
#ifdef LT_GEMM16
#include "lazytorch_gemm_bf16.h"
#endif

extern "C" void scipy_cblas_sgemm(int, int, int, int, int, int, float, const float*, int,
                                  const float*, int, float, float*, int);
extern "C" void scipy_cblas_dgemm(int, int, int, int, int, int, double, const double*, int,
                                  const double*, int, double, double*, int);
extern "C" void scipy_openblas_set_num_threads(int);
#ifdef LT_BLAS_MKL
// Intel MKL's CBLAS (libmkl_rt, LP64 interface: 32-bit ints), LAZYTORCH_BLAS=mkl
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
extern "C" void cblas_dgemm(int, int, int, int, int, int, double, const double*, int,
                            const double*, int, double, double*, int);
extern "C" int MKL_Set_Threading_Layer(int);
extern "C" int MKL_CBWR_Set(int);
// MKL_CBWR_AUTO | MKL_CBWR_STRICT: the CPU's own code path, with results that do not depend
// on the buffers' alignment (mkl_cbwr.h)
constexpr int kMklCbwr = 2 | 0x10000;
#endif
#ifdef LT_GEMM16
// Only in OpenBLAS builds with BUILD_BFLOAT16 (scipy-openblas32 0.3.x has none): a weak
// reference, null when the loaded library lacks it, so the same program takes the native
// path wherever the library has it.
extern "C" void scipy_cblas_sbgemm(int, int, int, int, int, int, float, const uint16_t*, int,
                                   const uint16_t*, int, float, float*, int)
    __attribute__((weak));

// The products of 16-bit float operands this program ran, by path (lt::bf16gemm::Path):
// [0] widened to float32 (sgemm), [1] through OpenBLAS's sbgemm, [2] AVX512-BF16, [3] AMX.
// Weak: one copy however many units the program is split in.
extern "C" {
__attribute__((weak)) int64_t lt_gemm16_calls[4] = {0, 0, 0, 0};
}
#endif  // LT_GEMM16

namespace lt {

static const int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

namespace detail {

// Runs when the program's shared object is loaded: OpenBLAS (and MKL, with LT_BLAS_MKL) computes
// on the caller's thread. MKL's threading layer is process-wide and fixed by its first call, so
// the first program loaded picks it; MKL's strict conditional numerical reproducibility is
// set too, so that a GEMM's bits depend on its inputs only, never on how its buffers happen
// to be aligned, as the blocks' determinism requires.
struct SingleThreadedBlas {
    SingleThreadedBlas() {
        scipy_openblas_set_num_threads(1);
#ifdef LT_BLAS_MKL
        MKL_Set_Threading_Layer(1);  // MKL_THREADING_SEQUENTIAL
        MKL_CBWR_Set(kMklCbwr);
#endif
    }
};
static SingleThreadedBlas single_threaded_blas;

#ifdef LT_BLAS_MKL
inline void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc) {
    cblas_sgemm(kRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, A, int(lda), B, int(ldb), 0.0f,
                C, int(ldc));
}
inline void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                  const double* B, int64_t ldb, double* C, int64_t ldc) {
    cblas_dgemm(kRowMajor, ta, tb, int(m), int(n), int(k), 1.0, A, int(lda), B, int(ldb), 0.0, C,
                int(ldc));
}
#else
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
#endif
#ifdef LT_GEMM16
// bfloat16 operands, float32 C (OpenBLAS's sbgemm; called only where it exists)
inline void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const bf16* A, int64_t lda,
                  const bf16* B, int64_t ldb, float* C, int64_t ldc) {
    scipy_cblas_sbgemm(kRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, (const uint16_t*)A,
                       int(lda), (const uint16_t*)B, int(ldb), 0.0f, C, int(ldc));
}
#endif

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

// Block b of nb of C = op(A) @ op(B): rows lo..hi of op(A) and C (by_rows), else columns
// lo..hi of op(B) and C.
template <class T, class TC>
inline void gemm_block(int64_t b, int64_t nb, bool by_rows, int ta, int tb, int64_t m,
                       int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb,
                       TC* C, int64_t ldc) {
    const int64_t dim = by_rows ? m : n;
    const int64_t lo = dim * b / nb, hi = dim * (b + 1) / nb;
    if (by_rows) {
        const T* Ab = ta == kNoTrans ? A + lo * lda : A + lo;
        gemm1(ta, tb, hi - lo, n, k, Ab, lda, B, ldb, C + lo * ldc, ldc);
    } else {
        const T* Bb = tb == kNoTrans ? B + lo : B + lo * ldb;
        gemm1(ta, tb, m, hi - lo, k, A, lda, Bb, ldb, C + lo, ldc);
    }
}

}  // namespace detail

// -- epilogues ---------------------------------------------------------------------------
// A product may carry an epilogue (scheduler/epilogue.py: `relu(x @ w.T + b)`), a function
// of a block of C: ep(i0, i1, j0, j1) computes the pointwise kernel on rows i0..i1 and
// columns j0..j1 of C (codegen/cpp.py `_matmul_epilogue`). Each block's thread calls it
// right after it has multiplied the block, while the block is in its cache. The blocks are
// exactly those of the product without an epilogue, so the numbers do not change (sync
// mode, which runs the product alone, gives the same bits).
struct NoEpilogue {
    void operator()(int64_t, int64_t, int64_t, int64_t) const {}
};
template <class Ep>
constexpr bool kHasEpilogue = true;
template <>
constexpr bool kHasEpilogue<NoEpilogue> = false;

// The block of C (rows, else columns, lo..hi) as the epilogue's ranges.
template <class Ep>
inline void epilogue_block(Ep& ep, bool by_rows, int64_t lo, int64_t hi, int64_t m,
                           int64_t n) {
    if (by_rows) {
        ep(lo, hi, 0, n);
    } else {
        ep(0, m, lo, hi);
    }
}

// Where a product the program does not keep goes: a buffer of the calling thread, kept for
// its next products up to kTileKeep elements (as the arena is kept), larger ones allocated
// for the call.
constexpr int64_t kTileKeep = int64_t(1) << 22;
template <class T>
class Tile {
   public:
    explicit Tile(int64_t count) {
        if (count > kTileKeep) {
            owned_ = new T[count];
            data = owned_;
            return;
        }
        static thread_local Kept kept;
        if (count > kept.size) {
            delete[] kept.data;
            kept.data = new T[count];
            kept.size = count;
        }
        data = kept.data;
    }
    ~Tile() { delete[] owned_; }
    Tile(const Tile&) = delete;
    Tile& operator=(const Tile&) = delete;
    T* data;

   private:
    struct Kept {
        T* data = nullptr;
        int64_t size = 0;
        ~Kept() { delete[] data; }
    };
    T* owned_ = nullptr;
};

// C (m x n, row-major, leading dimension ldc) = op(A) @ op(B), op given by ta/tb (kNoTrans or
// kTrans) with the usual row-major BLAS leading dimensions; then `ep` on each block of C.
template <class T, class Ep = NoEpilogue>
inline void gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
                 const T* B, int64_t ldb, T* C, int64_t ldc, bool fixed_blocks, Ep ep = Ep()) {
    // row blocks share B (k x n), column blocks share A (m x k): share the smaller one
    const bool by_rows = m >= n;
    const int64_t nb = detail::block_count(by_rows ? m : n, m * n * k, fixed_blocks);
    if (nb <= 1 || (omp_in_parallel() && !fixed_blocks)) {
        detail::gemm1(ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
        ep(0, m, 0, n);
        return;
    }
    // Inside a parallel region (one product per thread of a batch) fixed blocks still run,
    // one after another, so a product is cut the same way whatever the thread count.
#pragma omp parallel for schedule(static) if(!omp_in_parallel())
    for (int64_t b = 0; b < nb; ++b) {
        detail::gemm_block(b, nb, by_rows, ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
        const int64_t dim = by_rows ? m : n;
        epilogue_block(ep, by_rows, dim * b / nb, dim * (b + 1) / nb, m, n);
    }
}

#ifdef LT_GEMM16
namespace detail {

// Whether products of these operands go to OpenBLAS's sbgemm (see the top of this file).
inline bool use_sbgemm(const bf16*) {
#if defined(__AVX512BF16__) || defined(__AMX_BF16__)
    return scipy_cblas_sbgemm != nullptr;
#else
    return false;
#endif
}
inline bool use_sbgemm(const half*) { return false; }
inline constexpr bool is_bf16(const bf16*) { return true; }
inline constexpr bool is_bf16(const half*) { return false; }
// block b of C = op(A) @ op(B) by sbgemm (unreachable for float16: no use_sbgemm)
template <class... Rest>
inline void sbgemm_block(int64_t b, int64_t nb, bool by_rows, int ta, int tb, int64_t m,
                         int64_t n, int64_t k, const bf16* A, Rest... rest) {
    gemm_block(b, nb, by_rows, ta, tb, m, n, k, A, rest...);
}
template <class... Rest>
inline void sbgemm_block(int64_t, int64_t, bool, int, int, int64_t, int64_t, int64_t,
                         const half*, Rest...) {}

// The float32 operands and C of 16-bit products live in memory the program keeps between
// calls, as it keeps its arena: allocated afresh, their page faults cost a third of a
// 1024^3 bfloat16 product on 2 cores. Products needing more than kScratchMax floats, and a
// call while another holds it (a batch of products on several threads, or another Python
// thread in the same program), allocate their own.
class Scratch {
   public:
    static constexpr int64_t kScratchMax = int64_t(1) << 24;  // floats: 64 MiB
    ~Scratch() { delete[] data_; }
    float* acquire(int64_t n) {  // nullptr: allocate your own
        if (n > kScratchMax || busy_.test_and_set(std::memory_order_acquire)) return nullptr;
        if (n > size_) {
            delete[] data_;
            data_ = new float[n];
            size_ = n;
        }
        return data_;
    }
    void release() { busy_.clear(std::memory_order_release); }

   private:
    std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
    float* data_ = nullptr;
    int64_t size_ = 0;
};
static Scratch gemm16_scratch;

// rows x cols of src (leading dimension lds) into dst (leading dimension ldd), converted;
// the rows are shared among the threads of the enclosing parallel region.
template <class S, class D>
inline void convert_rows(const S* src, int64_t lds, int64_t rows, int64_t cols, D* dst,
                         int64_t ldd) {
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < rows; ++i) {
#pragma omp simd
        for (int64_t j = 0; j < cols; ++j) dst[i * ldd + j] = (float)src[i * lds + j];
    }
}

}  // namespace detail

// The same product of 16-bit floats (lt::bf16, lt::half): float32 products accumulated in
// float32 into a float32 C, rounded once into C. One parallel region: the threads widen A
// and B to float32 (kept in their layouts, contiguous), then each multiplies its blocks of
// C (as `gemm` cuts them) and rounds them while they are in its cache.
// bfloat16 products take a native path first (lazytorch_gemm_bf16.h), whose results do not
// depend on how C is cut. C may also be float32 (TC = float): the sum, not rounded.
template <class T, class TC, class Ep = NoEpilogue>
inline void gemm16(int ta, int tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda,
                   const T* B, int64_t ldb, TC* C, int64_t ldc, bool fixed_blocks,
                   Ep ep = Ep()) {
    if (detail::is_bf16(A) && bf16gemm::path() != bf16gemm::kWidened) {
        const int path = bf16gemm::path();
        __atomic_fetch_add(&lt_gemm16_calls[path], 1, __ATOMIC_RELAXED);
        const bool parallel = !omp_in_parallel() && m * n * k >= detail::kParallelMinWork;
        bf16gemm::gemm(path, ta == kTrans, tb == kTrans, m, n, k, (const uint16_t*)A, lda,
                       (const uint16_t*)B, ldb, C, ldc, parallel);
        // (its blocks are its own: the epilogue runs after it, cut by rows among the same
        // threads; a pointwise epilogue's elements do not depend on the cut)
        if (kHasEpilogue<Ep>) {
            const int64_t nb = parallel ? int64_t(omp_get_max_threads()) : 1;
#pragma omp parallel for schedule(static) if(nb > 1)
            for (int64_t b = 0; b < nb; ++b) {
                epilogue_block(ep, true, m * b / nb, m * (b + 1) / nb, m, n);
            }
        }
        return;
    }
    const bool native = detail::use_sbgemm(A);
    __atomic_fetch_add(&lt_gemm16_calls[native ? bf16gemm::kSbgemm : bf16gemm::kWidened], 1,
                       __ATOMIC_RELAXED);
    // op(A) as stored: m x k (kNoTrans) or k x m; op(B): k x n or n x k
    const int64_t ra = ta == kNoTrans ? m : k, ca = ta == kNoTrans ? k : m;
    const int64_t rb = tb == kNoTrans ? k : n, cb = tb == kNoTrans ? n : k;
    const int64_t widened = native ? 0 : ra * ca + rb * cb;
    float* held = detail::gemm16_scratch.acquire(widened + m * n);
    float* mem = held ? held : new float[widened + m * n];
    float* a = mem;
    float* b = mem + (native ? 0 : ra * ca);
    float* c = mem + widened;
    const bool by_rows = m >= n;
    int64_t nb = detail::block_count(by_rows ? m : n, m * n * k, fixed_blocks);
    if (omp_in_parallel() && !fixed_blocks) nb = 1;
#pragma omp parallel if(!omp_in_parallel() && nb > 1)
    {
        if (!native) {
            detail::convert_rows(A, lda, ra, ca, a, ca);
            detail::convert_rows(B, ldb, rb, cb, b, cb);
#pragma omp barrier
        }
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < nb; ++blk) {
            if (native) {
                detail::sbgemm_block(blk, nb, by_rows, ta, tb, m, n, k, A, lda, B, ldb, c, n);
            } else {
                detail::gemm_block(blk, nb, by_rows, ta, tb, m, n, k, (const float*)a, ca,
                                   (const float*)b, cb, c, n);
            }
            const int64_t dim = by_rows ? m : n;
            const int64_t lo = dim * blk / nb, hi = dim * (blk + 1) / nb;
            for (int64_t i = by_rows ? lo : 0; i < (by_rows ? hi : m); ++i) {
                const int64_t j0 = by_rows ? 0 : lo, j1 = by_rows ? n : hi;
#pragma omp simd
                for (int64_t j = j0; j < j1; ++j) C[i * ldc + j] = c[i * n + j];
            }
            epilogue_block(ep, by_rows, lo, hi, m, n);
        }
    }
    if (held) {
        detail::gemm16_scratch.release();
    } else {
        delete[] mem;
    }
}
#endif  // LT_GEMM16

}  // namespace lt
