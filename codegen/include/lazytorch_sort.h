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

// torch's order for an unstable sort (`stable=False`, the default) on the CPU. torch sorts
// each row's (value, index) pairs with libstdc++'s std::sort (an introsort) and a
// NaN-largest comparator, so among equal keys the order is whatever that algorithm leaves,
// and a row of more than 16 elements is not in stable order. To give the same indices this
// is that algorithm written out (not std::sort itself: another C++ library, libc++ say, has
// another one), step for step: median-of-three pivot moved to the front, unguarded Hoare
// partition, the right part recursed and the left looped, heapsort past 2 * floor(log2 n)
// levels, and one insertion sort over the whole row at the end (runs of at most 16 left
// unsorted). The reference interpreter runs the same code (lazytorch._C.argsort_order).
template <class T, bool Desc>
struct IntroSort {
    const T* base;
    int64_t post;
    int64_t* a;  // the indices being sorted
    // comp(i, j): the element at index value i goes before the one at j
    bool before(int64_t i, int64_t j) const {
        const T x = base[i * post], y = base[j * post];
        return Desc ? key_less(y, x) : key_less(x, y);
    }
    void push_heap(int64_t first, int64_t hole, int64_t top, int64_t value) {
        int64_t parent = (hole - 1) / 2;
        while (hole > top && before(a[first + parent], value)) {
            a[first + hole] = a[first + parent];
            hole = parent;
            parent = (hole - 1) / 2;
        }
        a[first + hole] = value;
    }
    void adjust_heap(int64_t first, int64_t hole, int64_t len, int64_t value) {
        const int64_t top = hole;
        int64_t child = hole;
        while (child < (len - 1) / 2) {
            child = 2 * (child + 1);
            if (before(a[first + child], a[first + child - 1])) --child;
            a[first + hole] = a[first + child];
            hole = child;
        }
        if ((len & 1) == 0 && child == (len - 2) / 2) {
            child = 2 * (child + 1);
            a[first + hole] = a[first + child - 1];
            hole = child - 1;
        }
        push_heap(first, hole, top, value);
    }
    void heap_sort(int64_t first, int64_t last) {
        const int64_t len = last - first;
        if (len >= 2) {
            for (int64_t parent = (len - 2) / 2;; --parent) {
                adjust_heap(first, parent, len, a[first + parent]);
                if (parent == 0) break;
            }
        }
        while (last - first > 1) {
            --last;
            const int64_t value = a[last];
            a[last] = a[first];
            adjust_heap(first, 0, last - first, value);
        }
    }
    void swap(int64_t i, int64_t j) {
        const int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    void median_to_first(int64_t result, int64_t x, int64_t y, int64_t z) {
        if (before(a[x], a[y])) {
            if (before(a[y], a[z])) swap(result, y);
            else if (before(a[x], a[z])) swap(result, z);
            else swap(result, x);
        } else if (before(a[x], a[z])) {
            swap(result, x);
        } else if (before(a[y], a[z])) {
            swap(result, z);
        } else {
            swap(result, y);
        }
    }
    int64_t partition(int64_t first, int64_t last, int64_t pivot) {
        for (;;) {
            while (before(a[first], a[pivot])) ++first;
            --last;
            while (before(a[pivot], a[last])) --last;
            if (!(first < last)) return first;
            swap(first, last);
            ++first;
        }
    }
    void loop(int64_t first, int64_t last, int64_t depth) {
        while (last - first > 16) {
            if (depth == 0) {
                heap_sort(first, last);
                return;
            }
            --depth;
            median_to_first(first, first + 1, first + (last - first) / 2, last - 1);
            const int64_t cut = partition(first + 1, last, first);
            loop(cut, last, depth);
            last = cut;
        }
    }
    void linear_insert(int64_t i) {  // unguarded: something before i stops the walk
        const int64_t v = a[i];
        int64_t j = i - 1;
        while (before(v, a[j])) {
            a[i] = a[j];
            i = j;
            --j;
        }
        a[i] = v;
    }
    void insertion_sort(int64_t first, int64_t last) {
        if (first == last) return;
        for (int64_t i = first + 1; i < last; ++i) {
            if (before(a[i], a[first])) {
                const int64_t v = a[i];
                for (int64_t j = i; j > first; --j) a[j] = a[j - 1];
                a[first] = v;
            } else {
                linear_insert(i);
            }
        }
    }
    void sort(int64_t n) {
        if (n <= 1) return;
        loop(0, n, 2 * floor_log2(n));
        if (n > 16) {
            insertion_sort(0, 16);
            for (int64_t i = 16; i < n; ++i) linear_insert(i);
        } else {
            insertion_sort(0, n);
        }
    }
    static int64_t floor_log2(int64_t n) {
        int64_t lg = 0;
        while ((int64_t(1) << (lg + 1)) <= n) ++lg;
        return lg;
    }
    // -- torch's topk (std::partial_sort, or std::nth_element then std::sort) -------------
    void make_heap(int64_t first, int64_t last) {
        const int64_t len = last - first;
        if (len < 2) return;
        for (int64_t parent = (len - 2) / 2;; --parent) {
            adjust_heap(first, parent, len, a[first + parent]);
            if (parent == 0) return;
        }
    }
    // the heap's top moves to `result`, whose element sinks into the heap [first, last)
    void pop_heap_to(int64_t first, int64_t last, int64_t result) {
        const int64_t value = a[result];
        a[result] = a[first];
        adjust_heap(first, 0, last - first, value);
    }
    void heap_select(int64_t first, int64_t middle, int64_t last) {
        make_heap(first, middle);
        for (int64_t i = middle; i < last; ++i)
            if (before(a[i], a[first])) pop_heap_to(first, middle, i);
    }
    void sort_heap(int64_t first, int64_t last) {
        while (last - first > 1) {
            --last;
            pop_heap_to(first, last, last);
        }
    }
    // std::nth_element's introselect: a[nth] ends where a full sort would put it
    void nth_element(int64_t n, int64_t nth) {
        if (n == 0 || nth == n) return;
        int64_t first = 0, last = n, depth = 2 * floor_log2(n);
        while (last - first > 3) {
            if (depth == 0) {
                heap_select(first, nth + 1, last);
                swap(first, nth);
                return;
            }
            --depth;
            median_to_first(first, first + 1, first + (last - first) / 2, last - 1);
            const int64_t cut = partition(first + 1, last, first);
            if (cut <= nth) first = cut;
            else last = cut;
        }
        insertion_sort(first, last);
    }
    // torch's topk_impl_loop: a partial sort when k * 64 <= n, else nth_element on the k-th
    // and (when sorted) a sort of the k - 1 before it
    void topk(int64_t n, int64_t k, bool sorted) {
        if (k == 0) return;
        if (k * 64 <= n) {
            heap_select(0, k, n);
            sort_heap(0, k);
        } else {
            nth_element(n, k - 1);
            if (sorted) sort(k - 1);
        }
    }
    // torch's kthvalue: its own quickselect (Sedgewick's), not the standard library's, so
    // ties come out in yet another order; a[k] ends as the k-th smallest (0-based)
    void quickselect(int64_t n, int64_t k) {
        int64_t lo = 0, hi = n - 1;
        for (;;) {
            if (hi <= lo) return;
            if (hi == lo + 1) {
                if (before(a[hi], a[lo])) swap(lo, hi);
                return;
            }
            swap((lo + hi) >> 1, lo + 1);  // median of three
            if (before(a[hi], a[lo + 1])) swap(lo + 1, hi);
            if (before(a[hi], a[lo])) swap(lo, hi);
            if (before(a[lo], a[lo + 1])) swap(lo + 1, lo);
            int64_t i = lo + 1, j = hi;
            const int64_t piv = a[lo];
            for (;;) {
                do ++i; while (before(a[i], piv));
                do --j; while (before(piv, a[j]));
                if (j < i) break;
                swap(i, j);
            }
            swap(lo, j);
            if (j <= k) lo = i;
            if (j >= k) hi = j - 1;
        }
    }
};

// The indices idx[0..n) (initially 0..n-1) in torch's unstable order (see IntroSort).
template <class T>
static void introsort_indices(const T* base, int64_t post, int64_t* idx, int64_t n, bool descending) {
    if (descending) {
        IntroSort<T, true>{base, post, idx}.sort(n);
    } else {
        IntroSort<T, false>{base, post, idx}.sort(n);
    }
}

// What an argsort's order among equal keys is: the argsort primitive's `order` attr.
enum Order : int { kStable = 0, kSortOrder = 1, kTopk = 2, kKth = 3 };

// The indices idx[0..n) (initially 0..n-1) permuted as torch's topk (kTopk: the first k are
// its result) or kthvalue (kKth: idx[k - 1] is its index) leaves them.
template <class T>
static void select_indices(const T* base, int64_t post, int64_t* idx, int64_t n, bool descending,
                           int order, int64_t k, bool sorted) {
    if (order == kKth) {
        IntroSort<T, false>{base, post, idx}.quickselect(n, k - 1);
    } else if (descending) {
        IntroSort<T, true>{base, post, idx}.topk(n, k, sorted);
    } else {
        IntroSort<T, false>{base, post, idx}.topk(n, k, sorted);
    }
}

template <class T>
static void argsort_rows(const T* x, int64_t* out, int64_t pre, int64_t n, int64_t post, bool descending,
                         int order = kStable, int64_t k = 0, bool sorted = true) {
    #pragma omp parallel for schedule(static) if (pre * post * n >= 32768)
    for (int64_t row = 0; row < pre * post; ++row) {
        const int64_t p = row / post, q = row % post;
        const T* base = x + p * n * post + q;
        int64_t* idx = new int64_t[n > 0 ? 2 * n : 1];
        for (int64_t i = 0; i < n; ++i) idx[i] = i;
        if (order == kTopk || order == kKth) {
            select_indices<T>(base, post, idx, n, descending, order, k, sorted);
        } else if (order == kSortOrder) {
            introsort_indices<T>(base, post, idx, n, descending);
        } else if (descending) {
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
