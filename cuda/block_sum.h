// The block-wide double sums of the row and channel kernels (nn.cu, norm.cu): block_sum, and the
// mean and variance of a row or channel; for the .cu files only (nvcc).
#ifndef MT_CUDA_BLOCK_SUM_H
#define MT_CUDA_BLOCK_SUM_H

#include "cuda/kernels_index_fill_nn.h"

// ---- a value folded over a warp or a block, the result in every thread ----
//
// The simple form: every thread writes v to shared memory and one thread folds them in order.
// The form used: the 32 lanes of a warp fold with register shuffles (a butterfly: lane ^ 16,
// 8, 4, 2, 1, after which every lane holds the warp's total), then lane 0 of each warp leaves
// its warp's total in shared memory and every thread folds the (at most 32) warp totals in
// warp order: one __syncthreads instead of a tree's log2(threads), the same total everywhere.

#define MT_FULL_WARP 0xffffffffu

// op(v) over the 32 lanes of the calling warp, in every lane (all 32 lanes must call it)
template <typename V, typename Op>
static __device__ __forceinline__ V
warp_all(V v, Op op)
{
    for (int m = 16; m > 0; m /= 2) {
        v = op(v, __shfl_xor_sync(MT_FULL_WARP, v, m));
    }
    return v;
}

// op(v) over the block (blockDim.x a multiple of 32, every thread calling), in every thread;
// buf holds 32 V at least and is reusable when it returns
template <typename V, typename Op>
static __device__ V
block_all(V v, Op op, V *buf)
{
    v = warp_all(v, op);
    if (threadIdx.x % 32 == 0) {
        buf[threadIdx.x / 32] = v;
    }
    __syncthreads();
    V total = buf[0];
    for (unsigned w = 1; w < blockDim.x / 32; w++) {
        total = op(total, buf[w]);
    }
    __syncthreads();
    return total;
}

struct AddOp {
    template <typename V> __device__ __forceinline__ V operator()(V a, V b) const
    {
        return a + b;
    }
};

// the larger, a NaN on either side winning (max and softmax's centre)
struct MaxNanOp {
    template <typename V> __device__ __forceinline__ V operator()(V a, V b) const
    {
        return (a > b || a != a) ? a : b;
    }
};

// The sum of v over the block (blockDim.x a multiple of 32), in every thread; buf (32 doubles
// at least) is reusable when it returns.
static __device__ __forceinline__ double
block_sum(double v, double *buf)
{
    return block_all(v, AddOp(), buf);
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
