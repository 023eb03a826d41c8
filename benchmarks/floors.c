/* Bandwidth floors: hand-written kernels that move the same bytes as a benchmark case and
 * do (almost) no arithmetic, parallelized like lazytorch's kernels (OpenMP, all cores).
 * No case can run faster than its floor on this machine; a ratio to the floor says how
 * much of the memory bandwidth a framework leaves on the table.
 *
 * Built by benchmarks/__main__.py:  cc -O3 -march=native -fopenmp -shared -fPIC
 */
#include <stdint.h>

/* out = a + b + c: three streams in, one out (the elementwise chain's traffic). */
void floor_triad3(const float* a, const float* b, const float* c, float* out, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i] + c[i];
}

/* out = 2 * a: one stream in, one out (softmax, layer_norm: each reads and writes once). */
void floor_scale(const float* a, float* out, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = 2.0f * a[i];
}

/* sum of a: one stream in (omp simd lets the float accumulation be reordered/vectorized). */
double floor_sum(const float* a, int64_t n) {
    float total = 0.0f;
#pragma omp parallel for simd schedule(static) reduction(+ : total)
    for (int64_t i = 0; i < n; ++i) total += a[i];
    return total;
}
