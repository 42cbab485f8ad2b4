// The CUDA kernels of the nn layers: layer_norm, a block per row, its statistics in double as
// the CPU kernel's (csrc/cpu/nn.c). The checks are ops/arg_checks.c's, the launches ops_nn.c's.
#include <stdint.h>

#include "cuda/kernels_more.h"

// The sum of v over the block (MT_CUDA_ROW_THREADS threads), in every thread; buf is reusable
// when it returns.
static __device__ double block_sum(double v, double *buf)
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

// x, y (rows, n); y = (x - mean) / sqrt(var + eps) * w + b, mean and biased var per row
template <typename T>
__global__ void layer_norm_kernel(const char *xv, char *yv, int64_t rows, int64_t n, double eps,
                                  const double *w, const double *b)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = (const T *)xv + r * n;
        T *y = (T *)yv + r * n;
        double s = 0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            s += (double)x[j];
        }
        const double mean = block_sum(s, buf) / (double)n;
        double q = 0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            q += ((double)x[j] - mean) * ((double)x[j] - mean);
        }
        const double rstd = 1.0 / sqrt(block_sum(q, buf) / (double)n + eps);
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            y[j] = (T)(((double)x[j] - mean) * rstd * (w ? w[j] : 1.0) + (b ? b[j] : 0.0));
        }
    }
}

extern "C" const void *
mt_cuda_layer_norm_kernel(mt_dtype dt)
{
    return dt == MT_FLOAT32   ? (const void *)layer_norm_kernel<float>
           : dt == MT_FLOAT64 ? (const void *)layer_norm_kernel<double>
                              : nullptr;
}
