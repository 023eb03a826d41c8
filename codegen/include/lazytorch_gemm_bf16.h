// lazytorch_gemm_bf16.h: a native bfloat16 GEMM, C = op(A) @ op(B) with float32 accumulation,
// on AMX tiles or AVX512-BF16 dot products. lazytorch_blas.h's `gemm16` calls it for
// bfloat16 operands when the CPU (and, for AMX, the OS) allows one of them.
//
// Paths, chosen once per program at its first bfloat16 product (`path()`):
//   kAmx        Sapphire Rapids and later: `tdpbf16ps` on 16x16 float32 C tiles. Linux hands
//               out the tile state only to a process that asks for it (arch_prctl
//               ARCH_REQ_XCOMP_PERM); without it the first tile instruction is SIGILL.
//   kAvx512Bf16 `vdpbf16ps`: 16 float32 lanes, each adding two bfloat16 products.
//   kWidened    neither: lazytorch_blas.h widens A and B to float32 and calls sgemm.
// LAZYTORCH_BF16_GEMM=amx|avx512|widened (read once per program) asks for a path; one the
// CPU cannot run gives the best below it, and the program's `lt_gemm16_calls` says which ran.
//
// Layout. op(A) (m x k) is packed in panels of 32 rows, op(B) (k x n) in panels of 32
// columns, each over all of k padded to kp = 32·⌈k/32⌉ (see pack_a, pack_b); B in the VNNI
// pair layout both instructions read: pair row q holds, for each column j, the pair
// (op(B)[2q][j], op(B)[2q+1][j]). Padding is zeros, so every micro-kernel runs on a whole
// 32x32 block of C and only the store looks at m and n. A block is 2x2 AMX tiles (A: two
// 16x32 tiles, B: two 16-pair x 16-column tiles), or 4 x (8 rows x 32 columns) of AVX-512
// accumulators. The blocks are cut among the program's OpenMP threads, after all of them
// have packed their share of A and B. Packing memory is kept between calls, per thread.
//
// Numbers. bfloat16 products are exact in float32; each C element is a float32 sum of them
// over k in increasing order (two products per hardware step), the same whatever block or
// thread computes it: results do not depend on the thread count, so deterministic mode
// needs nothing more. Both instructions treat subnormal bfloat16 inputs as zero and flush
// subnormal float32 results, as oneDNN's (torch's) bfloat16 GEMM on the same hardware does.
// C is written once: float32, or bfloat16 rounded to nearest even (lt::bf16).
//
// The code is compiled with function-level target attributes, so a program built for any
// x86-64 (an AVX2-only CPU included) contains it and reaches it only through the CPU check.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#define LT_GEMM_BF16_NATIVE 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace lt {
namespace bf16gemm {

// Indices into lt_gemm16_calls: which path a 16-bit product took.
enum Path : int { kWidened = 0, kSbgemm = 1, kAvx512Bf16 = 2, kAmx = 3 };

constexpr int64_t kBlock = 32;  // C is computed in kBlock x kBlock blocks

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

#ifdef LT_GEMM_BF16_NATIVE

namespace detail {

inline uint64_t xcr0() {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t(hi) << 32) | lo;
}

// AVX-512F/BW and AVX512-BF16, with the OS saving the zmm registers.
inline bool has_avx512bf16() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool f_bw = (b & (1u << 16)) && (b & (1u << 30));
    __get_cpuid_count(7, 1, &a, &b, &c, &d);
    const bool bf16 = a & (1u << 5);
    return f_bw && bf16 && (xcr0() & 0xE6) == 0xE6;  // SSE, AVX, opmask, zmm state
}

// AMX-TILE and AMX-BF16 on the CPU, and the tile data state granted to this process.
inline bool has_amx() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!(d & (1u << 22)) || !(d & (1u << 24))) return false;  // AMX-BF16, AMX-TILE
    if ((xcr0() & (3u << 17)) != (3u << 17)) return false;     // XTILECFG, XTILEDATA
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace detail

// Whether this CPU (and OS) can run `path`; asked once per path, and AMX's answer asks the
// OS for the tile state, so this comes before any tile instruction.
static inline bool available(int path) {
    static const bool amx = detail::has_amx(), avx512 = detail::has_avx512bf16();
    return path == kAmx ? amx : path == kAvx512Bf16 ? avx512 : path == kWidened;
}

// The path of this program's bfloat16 products (see the top of the file): the best this
// CPU can run, no better than LAZYTORCH_BF16_GEMM asks for (lazytorch._settings checks the
// value when the cpp backend starts; blanks around it are ignored, as there).
static inline int path() {
    static const int chosen = [] {
        const char* env = std::getenv("LAZYTORCH_BF16_GEMM");
        std::string want = env ? env : "";
        const auto blank = [](char ch) { return std::isspace((unsigned char)ch) != 0; };
        while (!want.empty() && blank(want.back())) want.pop_back();
        want.erase(0, std::find_if_not(want.begin(), want.end(), blank) - want.begin());
        const bool up_to_amx = want.empty() || want == "auto" || want == "amx";
        if (up_to_amx && available(kAmx)) return int(kAmx);
        if ((up_to_amx || want == "avx512") && available(kAvx512Bf16)) return int(kAvx512Bf16);
        return int(kWidened);
    }();
    return chosen;
}

// -- packing ---------------------------------------------------------------------------------
// Both operands are packed in chunks of 32 x 32 bfloat16 (2 KiB), one chunk at a time: a
// chunk's 32 source rows of 64 bytes are read into vectors (masked past m, n or k, so a
// chunk holds zeros there and nothing past the operand is read), rearranged in registers,
// and written as whole 64-byte rows. Both paths that pack (AMX, AVX512-BF16) run on
// AVX-512BW CPUs. (Element by element, with a call to memmove per 64-byte row, packing was a
// sixth of a bfloat16 MLP training step.)

#define LT_PACK_TARGET __attribute__((target("avx512f,avx512bw")))

// The first `count` (0..32) of 32 16-bit lanes.
LT_PACK_TARGET inline __mmask32 lanes(int64_t count) {
    return count >= 32 ? __mmask32(~0u) : __mmask32((1u << count) - 1);
}

// 32 16-bit values at src, the first `count` read and the rest zero.
LT_PACK_TARGET inline __m512i load_row(const uint16_t* src, int64_t count) {
    return count >= 32 ? _mm512_loadu_si512(src) : _mm512_maskz_loadu_epi16(lanes(count), src);
}

// Pairs (a[j], b[j]) as 32-bit lanes: `lo` for j = 0..15, `hi` for j = 16..31.
LT_PACK_TARGET inline void interleave(__m512i a, __m512i b, __m512i& lo, __m512i& hi) {
    const __m512i lo_idx = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9,
                                            40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33,
                                            1, 32, 0);
    const __m512i hi_idx = _mm512_add_epi16(lo_idx, _mm512_set1_epi16(16));
    lo = _mm512_permutex2var_epi16(a, lo_idx, b);
    hi = _mm512_permutex2var_epi16(a, hi_idx, b);
}

// Transposes 16 rows of 16 32-bit lanes in place: r[i] lane j becomes r[j] lane i.
LT_PACK_TARGET __attribute__((always_inline)) inline void transpose16(__m512i* r) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {  // 2x2 blocks of 32-bit lanes
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {  // 4x4 blocks, within each 128-bit lane
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 16; i += 8) {  // 128-bit lanes: 8x8 blocks
        for (int j = 0; j < 4; ++j) {
            t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0xdd);
        }
    }
    for (int j = 0; j < 8; ++j) {  // 16x16
        r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
    }
}

// Chunks lo..hi of packed op(A), numbered row panel by row panel (kp/32 chunks each).
// Row panels of 32 rows are runs of chunks of 32 rows x 32 consecutive k: rows of 64 bytes,
// so one AMX tile load of 16 rows reads 1 KiB in a row. reads and writes 32x32 per chunk
LT_PACK_TARGET inline void pack_a(bool trans, int64_t m, int64_t k, const uint16_t* A,
                                  int64_t lda, uint16_t* ap, int64_t kp, int64_t lo, int64_t hi) {
    const int64_t per_panel = kp / 32;
    for (int64_t u = lo; u < hi; ++u) {
        const int64_t i0 = u / per_panel * kBlock, p0 = u % per_panel * 32;
        uint16_t* dst = ap + i0 * kp + p0 * kBlock;
        const int64_t rows = m - i0 < kBlock ? m - i0 : kBlock, cols = k - p0 < 32 ? k - p0 : 32;
        if (!trans) {  // A is m x k: row r of the chunk is 64 bytes of row i0 + r
            for (int64_t r = 0; r < kBlock; ++r) {
                const __m512i v = r < rows ? load_row(A + (i0 + r) * lda + p0, cols)
                                           : _mm512_setzero_si512();
                _mm512_storeu_si512(dst + r * 32, v);
            }
        } else {  // A is k x m: row p of A holds column p of the chunk
            // Rows p = 2s, 2s + 1 interleaved are 32-bit pairs over r; transposed, pairs
            // over s along row r, which is the chunk's row r.
            __m512i lo_pairs[16], hi_pairs[16];
            for (int64_t s = 0; s < 16; ++s) {
                const int64_t p = 2 * s;
                const __m512i even = p < cols ? load_row(A + (p0 + p) * lda + i0, rows)
                                              : _mm512_setzero_si512();
                const __m512i odd = p + 1 < cols ? load_row(A + (p0 + p + 1) * lda + i0, rows)
                                                 : _mm512_setzero_si512();
                interleave(even, odd, lo_pairs[s], hi_pairs[s]);
            }
            transpose16(lo_pairs);
            transpose16(hi_pairs);
            for (int64_t r = 0; r < 16; ++r) {
                _mm512_storeu_si512(dst + r * 32, lo_pairs[r]);
                _mm512_storeu_si512(dst + (16 + r) * 32, hi_pairs[r]);
            }
        }
    }
}

// Chunks lo..hi of packed op(B), numbered column panel by column panel (kp/32 chunks each).
// Column panels of 32 columns are kp/2 rows of 32 pairs: pair q of column j is
// (op(B)[2q][j], op(B)[2q+1][j]) (the VNNI layout); a row is 128 bytes, so a tile or a
// vector load of B reads memory in a row. A chunk is 16 such rows. reads and writes 32x32
LT_PACK_TARGET inline void pack_b(bool trans, int64_t n, int64_t k, const uint16_t* B,
                                  int64_t ldb, uint16_t* bp, int64_t kp, int64_t lo, int64_t hi) {
    const int64_t per_panel = kp / 32;
    for (int64_t u = lo; u < hi; ++u) {
        const int64_t j0 = u / per_panel * kBlock, p0 = u % per_panel * 32;
        uint16_t* dst = bp + j0 * kp + p0 * kBlock;  // (p/2)·64 + 2j + p%2 for k p0 + p
        const int64_t cols = n - j0 < kBlock ? n - j0 : kBlock, ks = k - p0 < 32 ? k - p0 : 32;
        if (!trans) {  // B is k x n: rows p0 + p and p0 + p + 1, interleaved, are row p/2
            for (int64_t p = 0; p < 32; p += 2) {
                const __m512i even = p < ks ? load_row(B + (p0 + p) * ldb + j0, cols)
                                            : _mm512_setzero_si512();
                const __m512i odd = p + 1 < ks ? load_row(B + (p0 + p + 1) * ldb + j0, cols)
                                               : _mm512_setzero_si512();
                __m512i lo_pairs, hi_pairs;
                interleave(even, odd, lo_pairs, hi_pairs);
                _mm512_storeu_si512(dst + p * kBlock, lo_pairs);
                _mm512_storeu_si512(dst + p * kBlock + 32, hi_pairs);
            }
        } else {  // B is n x k: row j0 + j holds column j's 16 pairs; transposed, row q
            __m512i left[16], right[16];  // columns 0..15 and 16..31
            for (int64_t j = 0; j < 16; ++j) {
                left[j] = j < cols ? load_row(B + (j0 + j) * ldb + p0, ks) : _mm512_setzero_si512();
                right[j] = 16 + j < cols ? load_row(B + (j0 + 16 + j) * ldb + p0, ks)
                                         : _mm512_setzero_si512();
            }
            transpose16(left);
            transpose16(right);
            for (int64_t q = 0; q < 16; ++q) {
                _mm512_storeu_si512(dst + 2 * q * kBlock, left[q]);
                _mm512_storeu_si512(dst + 2 * q * kBlock + 32, right[q]);
            }
        }
    }
}

// -- micro-kernels: one 32x32 block of C, over the whole of k, into c (row stride 32) -----

struct TileConfig {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// Tiles 0-3: C (16 rows x 16 floats); 4-5: A (16 rows x 32 bfloat16); 6-7: B (16 pair rows x
// 16 columns). Tile state is per thread: each thread configures before its blocks and
// releases after.
__attribute__((target("amx-tile,amx-bf16"))) inline void amx_begin() {
    TileConfig cfg;
    std::memset(&cfg, 0, sizeof(cfg));
    cfg.palette_id = 1;
    for (int t = 0; t < 8; ++t) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    // Not _tile_loadconfig: g++ 12 declares its operand as 8 bytes and drops the stores
    // to rows and colsb as dead.
    __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}
__attribute__((target("amx-tile"))) inline void amx_end() { _tile_release(); }

// One 32x32 block: ap is its row panel, bp its column panel. reads 32·kp bfloat16 of each
// (L2-resident across blocks), writes 32x32 floats
__attribute__((target("amx-tile,amx-bf16"))) inline void amx_block(const uint16_t* ap,
                                                                   const uint16_t* bp,
                                                                   int64_t kp, float* c) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t p = 0; p < kp; p += 32) {
        const uint16_t* a = ap + p * kBlock;  // 32 rows x 32 k, rows of 64 bytes
        const uint16_t* b = bp + p * kBlock;  // 16 pair rows x 32 columns, rows of 128 bytes
        // Each load just before its first use: tiles are not renamed, so a load waits for
        // the products still reading its tile; this way the later loads overlap them.
        _tile_loadd(4, a, 64);
        _tile_loadd(6, b, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_loadd(7, b + 32, 128);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, a + 16 * 32, 64);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, 128);
    _tile_stored(1, c + 16, 128);
    _tile_stored(2, c + 16 * 32, 128);
    _tile_stored(3, c + 16 * 32 + 16, 128);
}

// 8 rows x 32 columns at a time: 16 accumulators, B's two vectors of 16 pairs loaded once
// per pair row and each A pair broadcast to 16 lanes. reads as amx_block
// The loops over r are unrolled by pragma: the 16 accumulators must live in registers, and
// -O2 (programs' level, compiler.OPT_FLAGS) does not unroll them itself: kept in an array on
// the stack they halved the product's speed (1024^3: 146-172 against 329-380 GFLOP/s).
__attribute__((target("avx512f,avx512bw,avx512bf16"))) inline void avx512_block(
    const uint16_t* ap, const uint16_t* bp, int64_t pairs, float* c) {
    for (int r0 = 0; r0 < 32; r0 += 8) {
        __m512 acc[8][2];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        for (int64_t q = 0; q < pairs; ++q) {
            const uint16_t* b = bp + q * 2 * kBlock;
            const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
            const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 32);
            // pair q of row r0 + r: chunk q/16 of the panel, row r0 + r, k 2(q%16)
            const uint16_t* a = ap + (q / 16) * 32 * kBlock + r0 * 32 + 2 * (q % 16);
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) {
                int32_t pair;
                std::memcpy(&pair, a + r * 32, sizeof(pair));
                const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
                acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
            }
        }
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
            _mm512_storeu_ps(c + (r0 + r) * 32, acc[r][0]);
            _mm512_storeu_ps(c + (r0 + r) * 32 + 16, acc[r][1]);
        }
    }
}

// The rows x cols corner of block c into C, converted (bfloat16: rounded once, to nearest
// even).
template <class TC>
inline void store_block(const float* c, int64_t rows, int64_t cols, TC* C, int64_t ldc) {
    for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
        for (int64_t s = 0; s < cols; ++s) C[r * ldc + s] = c[r * 32 + s];
    }
}

// Columns of C per group of blocks: the group's panels of packed B (kp x group) take
// 512 KiB of the 2 MiB L2 and are read from there for every row panel of A. (Sweeping all
// of B for each row panel instead reads it from L3 every time: 1.6x slower at 1024^3.)
inline int64_t group_columns(int64_t kp, int64_t np) {
    int64_t cols = (int64_t(1) << 19) / (2 * (kp > 0 ? kp : 1)) / kBlock * kBlock;
    cols = cols < kBlock ? kBlock : cols;
    return cols < np ? cols : np;
}

// Blocks lo..hi of C, numbered by group of columns, then row panel, then column panel.
template <class TC>
inline void run_blocks(int path, int64_t lo, int64_t hi, int64_t m, int64_t n, int64_t k,
                       const uint16_t* ap, const uint16_t* bp, int64_t kp, int64_t np, TC* C,
                       int64_t ldc) {
    if (lo >= hi) return;
    alignas(64) float c[kBlock * kBlock];
    const int64_t nbi = round_up(m, kBlock) / kBlock, nbj = np / kBlock;
    const int64_t per_group = group_columns(kp, np) / kBlock;  // column panels
    if (path == kAmx) amx_begin();
    for (int64_t blk = lo; blk < hi; ++blk) {
        const int64_t g = blk / (nbi * per_group), rest = blk % (nbi * per_group);
        const int64_t width = nbj - g * per_group < per_group ? nbj - g * per_group : per_group;
        const int64_t i0 = rest / width * kBlock, j0 = (g * per_group + rest % width) * kBlock;
        if (path == kAmx) {
            amx_block(ap + i0 * kp, bp + j0 * kp, kp, c);
        } else {
            avx512_block(ap + i0 * kp, bp + j0 * kp, (k + 1) / 2, c);
        }
        const int64_t rows = m - i0 < kBlock ? m - i0 : kBlock;
        const int64_t cols = n - j0 < kBlock ? n - j0 : kBlock;
        store_block(c, rows, cols, C + i0 * ldc + j0, ldc);
    }
    if (path == kAmx) amx_end();
}

// Packing memory kept by each calling thread between products (allocated afresh, its page
// faults would cost as much as packing). Products needing more than kScratchMax bytes
// allocate their own.
struct Scratch {
    static constexpr int64_t kScratchMax = int64_t(1) << 26;  // 64 MiB
    std::unique_ptr<uint16_t[]> data;
    int64_t size = 0;  // uint16_t elements
};
inline uint16_t* scratch(int64_t elems, std::unique_ptr<uint16_t[]>& own) {
    static thread_local Scratch kept;
    if (elems * 2 > Scratch::kScratchMax) {
        own.reset(new uint16_t[elems]);
        return own.get();
    }
    if (elems > kept.size) {
        kept.data.reset(new uint16_t[elems]);
        kept.size = elems;
    }
    return kept.data.get();
}

// C (m x n, leading dimension ldc, float or lt::bf16) = op(A) @ op(B) on `path` (kAmx or
// kAvx512Bf16), with the operands as lt::gemm takes them. `parallel`: split the blocks of
// C over the OpenMP threads (the caller decides: not inside a parallel region, and a large
// enough product); the result is the same either way.
template <class TC>
inline void gemm(int path, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* A,
                 int64_t lda, const uint16_t* B, int64_t ldb, TC* C, int64_t ldc, bool parallel) {
    if (m == 0 || n == 0) return;
    const int64_t kp = round_up(k, 32), mp = round_up(m, kBlock), np = round_up(n, kBlock);
    std::unique_ptr<uint16_t[]> own;
    uint16_t* ap = scratch(mp * kp + kp * np, own);
    uint16_t* bp = ap + mp * kp;
    const int64_t nblocks = (mp / kBlock) * (np / kBlock);
#pragma omp parallel if(parallel)
    {
        const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t na = mp / kBlock * (kp / 32), nb = np / kBlock * (kp / 32);  // chunks
        pack_a(ta, m, k, A, lda, ap, kp, na * t / nt, na * (t + 1) / nt);
        pack_b(tb, n, k, B, ldb, bp, kp, nb * t / nt, nb * (t + 1) / nt);
#pragma omp barrier
        run_blocks(path, nblocks * t / nt, nblocks * (t + 1) / nt, m, n, k, ap, bp, kp, np, C,
                   ldc);
    }
}

#else  // not x86-64: only the widened path exists

static inline bool available(int path) { return path == kWidened; }
static inline int path() { return int(kWidened); }
template <class TC>
inline void gemm(int, bool, bool, int64_t, int64_t, int64_t, const uint16_t*, int64_t,
                 const uint16_t*, int64_t, TC*, int64_t, bool) {}

#endif

}  // namespace bf16gemm
}  // namespace lt
