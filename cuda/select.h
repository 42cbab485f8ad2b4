/* What ops_select.c (nonzero, masked_select) shares with its kernels (select.cu): both ops flag
 * the selected elements as int64 0/1, turn the flags into their inclusive prefix sum (CUB), read
 * its last entry back (the result's size) and scatter each flagged element i to row
 * incl[i] - 1 of the result. */
#ifndef MT_CUDA_SELECT_H
#define MT_CUDA_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cuda/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nonzero's scatter: element i (flagged where incl[i] > incl[i - 1], incl[-1] read as 0) of a
 * contiguous tensor of shape sizes (ndim >= 1) writes its coordinates to row incl[i] - 1 of
 * out (count, ndim) int64. */
typedef struct mt_cuda_nz {
    int ndim;
    int64_t n;
    int64_t sizes[MT_CUDA_MAX_DIMS];
    const int64_t *incl;
    int64_t *out;
} mt_cuda_nz;

/* (mt_cuda_nz) */
const void *mt_cuda_nonzero_kernel(void);
/* (const int64_t *incl, const char *src, char *out, int64_t n): src (n) contiguous, out
 * (count); out[incl[i] - 1] = src[i] for each flagged i, elements of width bytes (1, 4, 8 or 16);
 * NULL for another width. */
const void *mt_cuda_select_kernel(size_t width);

/* *bytes = the scratch memory mt_cuda_inclusive_sum needs for n elements (CUB's query). */
cudaError_t mt_cuda_inclusive_sum_bytes(int64_t n, size_t *bytes);
/* x (n) int64 = its inclusive prefix sum, in place, on stream; temp holds bytes from the query. */
cudaError_t mt_cuda_inclusive_sum(void *temp, size_t bytes, int64_t *x, int64_t n,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
