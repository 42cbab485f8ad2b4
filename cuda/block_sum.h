// The block-wide double sums of the row and channel kernels (nn.cu, norm.cu): block_sum, and the
// mean and variance of a row or channel; for the .cu files only (nvcc).
#ifndef MT_CUDA_BLOCK_SUM_H
#define MT_CUDA_BLOCK_SUM_H

#include "cuda/kernels_index_fill_nn.h"

// The sum of v over the block (MT_CUDA_ROW_THREADS threads), in every thread; buf is reusable
// when it returns.
static __device__ double
block_sum(double v, double *buf)
{
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int half = MT_CUDA_ROW_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            buf[threadIdx.x] += buf[threadIdx.x + half];
        }
        __syncthreads();
    }
    const double total = buf[0];
    __syncthreads();
    return total;
}

// The offset in (outer, C, inner) of element j of channel c; a row (outer 1) spares the divisions
static __device__ __forceinline__ int64_t
channel_at(int64_t j, int64_t outer, int64_t C, int64_t inner, int64_t c)
{
    return outer == 1 ? c * inner + j : (j / inner * C + c) * inner + j % inner;
}

// x (outer, C, inner); *mean and *var (biased) of channel c, in every thread of the block, two
// passes in double; a row of n is channel 0 of (1, 1, n)
template <typename T>
static __device__ void
channel_stats(const T *x, int64_t outer, int64_t C, int64_t inner, int64_t c, double *buf,
              double *mean, double *var)
{
    const int64_t m = outer * inner;
    double s = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
        s += (double)x[channel_at(j, outer, C, inner, c)];
    }
    const double mu = block_sum(s, buf) / (double)m;
    double q = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
        const double d = (double)x[channel_at(j, outer, C, inner, c)] - mu;
        q += d * d;
    }
    *var = block_sum(q, buf) / (double)m;
    *mean = mu;
}

#endif
