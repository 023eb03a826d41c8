// lazytorch_sort.h: argsort along one axis (included only by programs that sort).
#pragma once
#include <algorithm>
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

template <class T>
static void argsort_rows(const T* x, int64_t* out, int64_t pre, int64_t n, int64_t post, bool descending) {
    #pragma omp parallel for schedule(static) if (pre * post * n >= 32768)
    for (int64_t row = 0; row < pre * post; ++row) {
        const int64_t p = row / post, q = row % post;
        const T* base = x + p * n * post + q;
        int64_t* idx = new int64_t[n > 0 ? n : 1];
        for (int64_t i = 0; i < n; ++i) idx[i] = i;
        if (descending) {
            std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) { return key_less(base[b * post], base[a * post]); });
        } else {
            std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) { return key_less(base[a * post], base[b * post]); });
        }
        int64_t* dst = out + p * n * post + q;
        for (int64_t i = 0; i < n; ++i) dst[i * post] = idx[i];
        delete[] idx;
    }
}

}  // namespace lt
