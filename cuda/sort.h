/* What ops_sort.c shares with sort.cu, for the sort family (sort, argsort, topk, _unique2,
 * randperm). A row is sorted as pairs (key, position) by CUB's stable radix sorts; the key is
 * the value mapped to an unsigned integer of the same order (NaN the largest and all NaNs equal,
 * -0.0 equal to 0.0, the bits flipped for descending), so the order and the ties are exactly
 * the CPU merge sort's. The kernels are launched by ops_sort.c through mt_cuda_launch_n (any
 * grid of MT_CUDA_THREADS: they loop over it); the CUB calls are the launchers below, which
 * return CUDA's status. */
#ifndef MT_CUDA_SORT_H
#define MT_CUDA_SORT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "core/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one sort key of dtype dt: 4 (bool, int32, float32) or 8 (int64, float64). */
int mt_cuda_sort_key_bytes(mt_dtype dt);

/* (const char *x, char *keys, int32_t *pos, int64_t outer, int64_t n, int64_t inner, int desc):
 * x (outer, n, inner) contiguous of dtype dt; keys, pos (outer * inner, n): row o * inner + i
 * holds the keys of x[o, :, i] and the positions 0..n-1. One thread per element of x. */
const void *mt_cuda_sort_keys_kernel(mt_dtype dt);

/* (int32_t *out, int64_t count, int64_t step): out[r] = r * step for r < count (the rows'
 * offsets, or the positions 0..count-1). */
const void *mt_cuda_sort_steps_kernel(void);

/* (const char *x, const int32_t *pos, char *values, int64_t *indices, int64_t outer, int64_t n,
 * int64_t inner, int64_t k): x as above, pos (outer * inner, n) the sorted positions; values
 * (unless NULL; x is then unused) and indices (outer, k, inner) = the first k of each sorted
 * row and their positions. One thread per element of indices. */
const void *mt_cuda_sort_gather_kernel(mt_dtype dt);

/* (const char *s, int32_t *flags, int64_t n): s (n) sorted ascending of dtype dt; flags[j] = 1
 * where s[j] starts a group of equal values (NaNs are never equal), else 0. */
const void *mt_cuda_unique_flags_kernel(mt_dtype dt);

/* (const char *s, const int64_t *perm, const int32_t *flags, const int32_t *group, char *u,
 * int64_t *inverse, int64_t *starts, int64_t n): perm (n) the flat positions s came from, group
 * (n) the inclusive sum of flags; u[g] = the value of group g, starts[g] = where it starts in s,
 * inverse[perm[j]] = the group of s[j]. */
const void *mt_cuda_unique_scatter_kernel(mt_dtype dt);

/* (const int64_t *starts, int64_t *counts, int64_t groups, int64_t n): counts[g] = the size of
 * group g. */
const void *mt_cuda_unique_counts_kernel(void);

/* Sorts each of the rows rows of n pairs (keys_in, pos_in), keys key_bytes wide of which the
 * low bits matter, into (keys_out, pos_out), stably (ties keep their order). offsets (rows + 1)
 * the rows' starts (unused when rows is 1). With temp NULL, only sets *temp_bytes to the
 * scratch the sort needs; rows * n < 2^31. */
cudaError_t mt_cuda_sort_pairs(void *temp, size_t *temp_bytes, int key_bytes, int bits,
                               const void *keys_in, void *keys_out, const int32_t *pos_in,
                               int32_t *pos_out, const int32_t *offsets, int64_t rows, int64_t n,
                               cudaStream_t stream);

/* out (n) = the inclusive sum of in (n); with temp NULL, only sets *temp_bytes. */
cudaError_t mt_cuda_inclusive_sum32(void *temp, size_t *temp_bytes, const int32_t *in, int32_t *out,
                                    int64_t n, cudaStream_t stream);

#ifndef __CUDACC__
#include "cuda/cuda.h"
/* keys (int64, contiguous, CUDA) = random draws from [0, 2^63) by gen, or the default Philox
 * generator of its device (ops_random.c), a fresh offset of it for each call. */
mt_status mt_cuda_random_keys(mt_tensor *keys, mt_generator *gen);
#endif

#ifdef __cplusplus
}
#endif

#endif
