// The CUDA kernels of batch_norm and of the backward ops of layer_norm, batch_norm and
// nll_loss (norm.h), with the CPU kernels' formulas and order of operations (csrc/cpu/nn.c,
// nn_backward.c): statistics and sums in double, two passes for the variance. The checks and
// launches are ops_norm.c's.
#include <stdint.h>

#include "cuda/block_sum.h"
#include "cuda/device_assert.h"
#include "cuda/grid_stride.h"
#include "cuda/norm.h"

// x (outer, C, inner); mean, var (C)
template <typename T>
__global__ void
bn_stats_kernel(const char *xv, int64_t outer, int64_t C, int64_t inner, double *mean, double *var)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double mu, v;
        channel_stats((const T *)xv, outer, C, inner, c, buf, &mu, &v);
        if (threadIdx.x == 0) {
            mean[c] = mu;
            var[c] = v;
        }
    }
}

// x, y (n elements, (outer, C, inner)); mean, var, w, b (C)
template <typename T>
__global__ void
bn_apply_kernel(const char *xv, char *yv, int64_t n, int64_t C, int64_t inner, const double *mean,
                const double *var, double eps, const double *w, const double *b)
{
    const T *x = (const T *)xv;
    MT_CUDA_GRID_STRIDE(e, n)
    {
        const int64_t c = e / inner % C;
        const double k = (w ? w[c] : 1.0) / sqrt(var[c] + eps);
        ((T *)yv)[e] = (T)(((double)x[e] - mean[c]) * k + (b ? b[c] : 0.0));
    }
}

// running, stat (C)
__global__ void
bn_update_kernel(double *running, const double *stat, int64_t C, double momentum, double correction)
{
    MT_CUDA_GRID_STRIDE(c, C)
    {
        running[c] = (1 - momentum) * running[c] + momentum * stat[c] * correction;
    }
}

// g, x, gx (outer, C, inner); w, mean, var, gw, gb (C). With xh = (x - mean) * rstd and
// M = outer * inner: in training gx = w * rstd * (g - sum(g) / M - xh * sum(g * xh) / M), else
// gx = g * w * rstd
template <typename T>
__global__ void
bn_backward_kernel(const char *gv, const char *xv, char *gxv, int64_t outer, int64_t C,
                   int64_t inner, double eps, const double *w, const double *rm, const double *rv,
                   char *gwv, char *gbv)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    const T *g = (const T *)gv, *x = (const T *)xv;
    T *gx = (T *)gxv;
    const int64_t m = outer * inner;
    const double count = (double)m;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        double mean, var;
        if (rm == nullptr) {
            channel_stats(x, outer, C, inner, c, buf, &mean, &var);
        } else {
            mean = rm[c];
            var = rv[c];
        }
        const double rstd = 1.0 / sqrt(var + eps), k = (w ? w[c] : 1.0) * rstd;
        double sg = 0, sgx = 0;
        for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
            const int64_t e = channel_at(j, outer, C, inner, c);
            const double gj = (double)g[e];
            sg += gj;
            sgx += gj * ((double)x[e] - mean) * rstd;
        }
        sg = block_sum(sg, buf);
        sgx = block_sum(sgx, buf);
        if (threadIdx.x == 0) {
            ((T *)gwv)[c] = (T)sgx;
            ((T *)gbv)[c] = (T)sg;
        }
        for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
            const int64_t e = channel_at(j, outer, C, inner, c);
            double gj = (double)g[e];
            if (rm == nullptr) {
                const double xh = ((double)x[e] - mean) * rstd;
                gj -= sg / count + xh * sgx / count;
            }
            gx[e] = (T)(k * gj);
        }
    }
}

// g, x, gx (rows, n), w (n), stats (rows, 2). With xh = (x - mean) * rstd per row:
// gx = rstd * (dy - mean(dy) - xh * mean(dy * xh)), dy = g * w
template <typename T>
__global__ void
ln_backward_rows_kernel(const char *gv, const char *xv, char *gxv, int64_t rows, int64_t n,
                        double eps, const double *w, double *stats)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *g = (const T *)gv + r * n, *x = (const T *)xv + r * n;
        T *gx = (T *)gxv + r * n;
        double mean, var;
        channel_stats(x, 1, 1, n, 0, buf, &mean, &var);
        const double rstd = 1.0 / sqrt(var + eps);
        double sdy = 0, sdyx = 0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const double dy = (double)g[j] * (w ? w[j] : 1.0);
            sdy += dy;
            sdyx += dy * (((double)x[j] - mean) * rstd);
        }
        sdy = block_sum(sdy, buf) / (double)n;
        sdyx = block_sum(sdyx, buf) / (double)n;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const double xh = ((double)x[j] - mean) * rstd;
            const double dy = (double)g[j] * (w ? w[j] : 1.0);
            gx[j] = (T)(rstd * (dy - sdy - xh * sdyx));
        }
        if (threadIdx.x == 0) {
            stats[2 * r] = mean;
            stats[2 * r + 1] = rstd;
        }
    }
}

// g, x (rows, n), stats (rows, 2); gw = sum over rows of g * xh, gb = sum of g (n)
template <typename T>
__global__ void
ln_backward_cols_kernel(const char *gv, const char *xv, int64_t rows, int64_t n,
                        const double *stats, char *gwv, char *gbv)
{
    const T *g = (const T *)gv, *x = (const T *)xv;
    MT_CUDA_GRID_STRIDE(j, n)
    {
        double gw = 0, gb = 0;
        for (int64_t r = 0; r < rows; r++) {
            const double gj = (double)g[r * n + j];
            gw += gj * (((double)x[r * n + j] - stats[2 * r]) * stats[2 * r + 1]);
            gb += gj;
        }
        ((T *)gwv)[j] = (T)gw;
        ((T *)gbv)[j] = (T)gb;
    }
}

// t (n) targets, w (C); *total, a bad target asserted (one block)
__global__ void
nll_back_total_kernel(const int64_t *t, const double *w, int64_t n, int64_t C, int64_t ignore,
                      double *total, mt_cuda_assert_record *rec)
{
    __shared__ double buf[MT_CUDA_ROW_THREADS];
    double s = 0;
    for (int64_t e = threadIdx.x; e < n; e += blockDim.x) {
        const int64_t ti = t[e];
        if (ti == ignore) {
            continue;
        }
        if (ti < 0 || ti >= C) {
            mt_cuda_assert_fail(rec, MT_CUDA_ASSERT_NLL_TARGET, (long long)ti, (long long)C);
            continue;
        }
        s += w ? w[ti] : 1.0;
    }
    s = block_sum(s, buf);
    if (threadIdx.x == 0) {
        *total = s;
    }
}

// g (N, K) or (1), t (N, K), w (C), gx (N, C, K) zeroed
template <typename T>
__global__ void
nll_back_kernel(const double *g, const int64_t *t, const double *w, char *gxv, int64_t N, int64_t C,
                int64_t K, int64_t ignore, int none, const double *total)
{
    const double scale = total ? 1.0 / *total : 1.0;
    MT_CUDA_GRID_STRIDE(e, N * K)
    {
        const int64_t ti = t[e];
        if (ti == ignore || ti < 0 || ti >= C) {
            continue;
        }
        const int64_t n = e / K, k = e % K;
        const double v = -(w ? w[ti] : 1.0) * (none ? g[e] : g[0] * scale);
        ((T *)gxv)[(n * C + ti) * K + k] = (T)v;
    }
}

#define BY_DTYPE(getter, kernel)                                  \
    extern "C" const void *getter(mt_dtype dt)                    \
    {                                                             \
        return dt == MT_FLOAT32   ? MT_KERNEL_PTR(kernel<float>)  \
               : dt == MT_FLOAT64 ? MT_KERNEL_PTR(kernel<double>) \
                                  : nullptr;                      \
    }
BY_DTYPE(mt_cuda_bn_stats_kernel, bn_stats_kernel)
BY_DTYPE(mt_cuda_bn_apply_kernel, bn_apply_kernel)
BY_DTYPE(mt_cuda_bn_backward_kernel, bn_backward_kernel)
BY_DTYPE(mt_cuda_ln_backward_rows_kernel, ln_backward_rows_kernel)
BY_DTYPE(mt_cuda_ln_backward_cols_kernel, ln_backward_cols_kernel)
BY_DTYPE(mt_cuda_nll_back_kernel, nll_back_kernel)

extern "C" const void *
mt_cuda_bn_update_kernel(void)
{
    return MT_KERNEL_PTR(bn_update_kernel);
}

extern "C" const void *
mt_cuda_nll_back_total_kernel(void)
{
    return MT_KERNEL_PTR(nll_back_total_kernel);
}
