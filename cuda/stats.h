/* What the statistics kernels' host code (ops_stats.c) and kernels (stats.cu) share: the
 * parameter blocks of histc, bincount, searchsorted and cummax/cummin, and the kernel getters.
 * Every operand is contiguous; the host code casts the inputs to the kernel's dtypes. */
#ifndef MT_CUDA_STATS_H
#define MT_CUDA_STATS_H

#include <stdint.h>

#include "cuda/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* histc: x (n) float32 or float64; out (bins) of x's dtype, zeroed, += 1 for each x in
 * [lo, hi] at its bin (x - lo) * bins / (hi - lo), computed in x's dtype as the CPU's */
typedef struct mt_cuda_histc {
    const char *x;
    char *out;
    int64_t n, bins;
    double lo, hi;
} mt_cuda_histc;

/* bincount: x (n) int64 >= 0, weights (n) of out's dtype or NULL; out zeroed, += 1 (int64) or the
 * weight at x[i] */
typedef struct mt_cuda_bincount {
    const int64_t *x;
    const char *weights;
    char *out;
    int64_t n;
} mt_cuda_bincount;

/* searchsorted: seq (rows, len) (one row when one_row), x (n) with k values a row, both int64
 * (ints) or float64; sorter (rows, len) int64 or NULL; out (n) int64 or int32 (out32): each
 * value's position in its row, the first not below it (above it when right) */
typedef struct mt_cuda_search {
    const char *seq, *x;
    const int64_t *sorter;
    char *out;
    int64_t n, len, k;
    int one_row, right, out32;
} mt_cuda_search;

/* cummax (max) or cummin: x (outer, n, inner); values (x's dtype), indices (int64) alike: the
 * running extremum along n and where it was last reached (a NaN takes over), a thread a row */
typedef struct mt_cuda_cumext {
    const char *x;
    char *values;
    int64_t *indices;
    int64_t outer, n, inner;
    int max;
} mt_cuda_cumext;

/* (mt_cuda_histc) for float64 (f64) or float32 x */
const void *mt_cuda_histc_kernel(int f64);
/* (mt_cuda_bincount) for out of dtype dt (int64, float32, float64), else NULL */
const void *mt_cuda_bincount_kernel(mt_dtype dt);
/* (mt_cuda_search) for int64 (ints) or float64 operands */
const void *mt_cuda_searchsorted_kernel(int ints);
/* (mt_cuda_cumext) for x of dtype dt */
const void *mt_cuda_cumext_kernel(mt_dtype dt);

#ifdef __cplusplus
}
#endif

#endif
