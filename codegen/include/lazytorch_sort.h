// lazytorch_sort.h: argsort along one axis (included only by programs that sort).
#pragma once
#include <cstdint>

namespace lt {

// NaN sorts as the largest value; the sort is stable, so equal keys keep their order
// (for descending order too), as the reference interpreter does.
template <class T>
static inline bool key_less(T a, T b) {
    if (a != a) return false;
    if (b != b) return true;
    return a < b;
}

// Stable merge sort of the indices idx[0..n) by key (bottom-up, through tmp[0..n)): a loop
// of our own rather than std::stable_sort, whose templates cost each program that sorts
// about 0.3 s of g++ time (measured), for the same order.
template <class T, bool Desc>
static void merge_sort_indices(const T* base, int64_t post, int64_t* idx, int64_t* tmp, int64_t n) {
    // runs of 16 by insertion sort (stable: an element moves left past strictly greater ones)
    constexpr int64_t kRun = 16;
    for (int64_t lo = 0; lo < n; lo += kRun) {
        const int64_t hi = lo + kRun < n ? lo + kRun : n;
        for (int64_t i = lo + 1; i < hi; ++i) {
            const int64_t v = idx[i];
            const T key = base[v * post];
            int64_t j = i;
            while (j > lo && (Desc ? key_less(base[idx[j - 1] * post], key) : key_less(key, base[idx[j - 1] * post]))) {
                idx[j] = idx[j - 1];
                --j;
            }
            idx[j] = v;
        }
    }
    int64_t* src = idx;
    int64_t* dst = tmp;
    for (int64_t width = kRun; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            const int64_t mid = lo + width < n ? lo + width : n;
            const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                const T a = base[src[i] * post], b = base[src[j] * post];
                // take from the right run only when strictly before: equal keys keep order
                const bool right = Desc ? key_less(a, b) : key_less(b, a);
                dst[k++] = right ? src[j++] : src[i++];
            }
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int64_t* t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        for (int64_t i = 0; i < n; ++i) idx[i] = src[i];
}

template <class T>
static void argsort_rows(const T* x, int64_t* out, int64_t pre, int64_t n, int64_t post, bool descending) {
    #pragma omp parallel for schedule(static) if (pre * post * n >= 32768)
    for (int64_t row = 0; row < pre * post; ++row) {
        const int64_t p = row / post, q = row % post;
        const T* base = x + p * n * post + q;
        int64_t* idx = new int64_t[n > 0 ? 2 * n : 1];
        for (int64_t i = 0; i < n; ++i) idx[i] = i;
        if (descending) {
            merge_sort_indices<T, true>(base, post, idx, idx + n, n);
        } else {
            merge_sort_indices<T, false>(base, post, idx, idx + n, n);
        }
        int64_t* dst = out + p * n * post + q;
        for (int64_t i = 0; i < n; ++i) dst[i * post] = idx[i];
        delete[] idx;
    }
}

}  // namespace lt
