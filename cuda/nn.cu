// The CUDA kernels of the nn layers and losses: binary_cross_entropy (with logits), and
// layer_norm, a block per row, its statistics in double as
// the CPU kernel's (csrc/cpu/nn.c). The checks are ops/arg_checks.c's, the launches ops_nn.c's.
#include <stdint.h>

#include "cuda/block_sum.h"
#include "cuda/device_assert.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels_index_fill_nn.h"

// x, y (rows, n); y = (x - mean) / sqrt(var + eps) * w + b, mean and biased var per row
template <typename T>
__global__ void
layer_norm_kernel(const char *xv, char *yv, int64_t rows, int64_t n, double eps, const double *w,
                  const double *b)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = (const T *)xv + r * n;
        T *y = (T *)yv + r * n;
        double mean, var;
        channel_stats(x, 1, 1, n, 0, buf, &mean, &var);
        const double rstd = 1.0 / sqrt(var + eps);
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            y[j] = (T)(((double)x[j] - mean) * rstd * (w ? w[j] : 1.0) + (b ? b[j] : 0.0));
        }
    }
}

// out = -(t log x + (1 - t) log(1 - x)), each log clamped at -100 (Logits 0); or
// (1 - t) x - log_sigmoid(x) (1 + (pw - 1) t), log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
template <typename T, int Logits>
__global__ void
bce_kernel(const char *xv, const char *tv, const char *pwv, char *outv, int64_t n,
           mt_cuda_assert_record *rec)
{
    const T *x = (const T *)xv, *t = (const T *)tv, *pw = (const T *)pwv;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        const T xi = x[i], ti = t[i];
        T v;
        if constexpr (Logits == 0) {
            const int bad = (xi >= (T)0 && xi <= (T)1 ? 0 : 1) | (ti >= (T)0 && ti <= (T)1 ? 0 : 2);
            if (bad) {
                mt_cuda_assert_fail(rec, MT_CUDA_ASSERT_BCE_INPUT, bad & 1 ? 1 : 2, 1);
            }
            const T lx = fmax(log_(xi), (T)-100), l1x = fmax(log1p_(-xi), (T)-100);
            v = (ti - (T)1) * l1x - ti * lx;
        } else {
            const T p = pw ? pw[i] : (T)1;
            const T log_sig = fmin(xi, (T)0) - log1p_(exp_(-fabs(xi)));
            v = ((T)1 - ti) * xi - log_sig * ((T)1 + (p - (T)1) * ti);
        }
        ((T *)outv)[i] = v;
    }
}

// out (num_weights, dim) += the rows of g at ix (kernels_index_fill_nn.h); an element per thread
template <typename T>
__global__ void
embedding_backward_kernel(const char *gv, const int64_t *ix, const char *countsv, char *outv,
                          int64_t n, int64_t dim, int64_t padding_idx)
{
    const T *g = (const T *)gv, *counts = (const T *)countsv;
    MT_CUDA_GRID_STRIDE(e, n * dim)
    {
        const int64_t i = e / dim, j = e % dim, v = ix[i];
        if (v == padding_idx || v == MT_CUDA_BAD_POSITION) {
            continue;
        }
        const T k = counts ? (T)1 / counts[v] : (T)1;
        atomicAdd((T *)outv + v * dim + j, k * g[e]);
    }
}

// counts[ix[i]] += 1
template <typename T>
__global__ void
count_kernel(const int64_t *ix, char *counts, int64_t n)
{
    MT_CUDA_GRID_STRIDE(i, n)
    {
        if (ix[i] != MT_CUDA_BAD_POSITION) {
            atomicAdd((T *)counts + ix[i], (T)1);
        }
    }
}

extern "C" const void *
mt_cuda_embedding_backward_kernel(mt_dtype dt)
{
    return dt == MT_FLOAT32   ? MT_KERNEL_PTR(embedding_backward_kernel<float>)
           : dt == MT_FLOAT64 ? MT_KERNEL_PTR(embedding_backward_kernel<double>)
                              : nullptr;
}

extern "C" const void *
mt_cuda_count_kernel(mt_dtype dt)
{
    return dt == MT_FLOAT32   ? MT_KERNEL_PTR(count_kernel<float>)
           : dt == MT_FLOAT64 ? MT_KERNEL_PTR(count_kernel<double>)
                              : nullptr;
}

// loss[n, k] = -w[t] x[n, t, k], wt[n, k] = w[t]; 0 for an ignored target (kernels_index_fill_nn.h)
template <typename T>
__global__ void
nll_kernel(const char *xv, const int64_t *t, const double *w, char *lossv, double *wt, int64_t N,
           int64_t C, int64_t K, int64_t ignore, mt_cuda_assert_record *rec)
{
    const T *x = (const T *)xv;
    T *loss = (T *)lossv;
    MT_CUDA_GRID_STRIDE(e, N * K)
    {
        const int64_t n = e / K, k = e % K, ti = t[e];
        loss[e] = (T)0;
        wt[e] = 0;
        if (ti == ignore) {
            continue;
        }
        if (ti < 0 || ti >= C) {
            mt_cuda_assert_fail(rec, MT_CUDA_ASSERT_NLL_TARGET, (long long)ti, (long long)C);
            continue;
        }
        const double wv = w ? w[ti] : 1.0;
        loss[e] = (T)(-wv * (double)x[(n * C + ti) * K + k]);
        wt[e] = wv;
    }
}

extern "C" const void *
mt_cuda_nll_kernel(mt_dtype dt)
{
    return dt == MT_FLOAT32   ? MT_KERNEL_PTR(nll_kernel<float>)
           : dt == MT_FLOAT64 ? MT_KERNEL_PTR(nll_kernel<double>)
                              : nullptr;
}

extern "C" const void *
mt_cuda_bce_kernel(int logits, mt_dtype dt)
{
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
        return nullptr;
    }
    if (logits) {
        return dt == MT_FLOAT32 ? MT_KERNEL_PTR(bce_kernel<float, 1>)
                                : MT_KERNEL_PTR(bce_kernel<double, 1>);
    }
    return dt == MT_FLOAT32 ? MT_KERNEL_PTR(bce_kernel<float, 0>)
                            : MT_KERNEL_PTR(bce_kernel<double, 0>);
}

extern "C" const void *
mt_cuda_layer_norm_kernel(mt_dtype dt)
{
    return dt == MT_FLOAT32   ? MT_KERNEL_PTR(layer_norm_kernel<float>)
           : dt == MT_FLOAT64 ? MT_KERNEL_PTR(layer_norm_kernel<double>)
                              : nullptr;
}
