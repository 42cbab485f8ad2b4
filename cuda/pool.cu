// 2-D pooling on the GPU: max (with its indices), avg and adaptive avg, and their backward.
// One thread per output element of one plane (P, OH, OW); the windows are the CPU loops' own
// (cpu/pool_window.h), so both backends pick the same taps, divisors and argmax. The backward
// kernels scatter each output's gradient into a zeroed gx with atomicAdd (windows overlap).
#include <math.h>

#include "cuda/device_assert.h"
#include "cuda/kernels.h"

namespace
{

__device__ __forceinline__ int64_t
first_tap(int64_t start, int64_t dil)
{
    return start >= 0 ? start : start + (-start + dil - 1) / dil * dil;
}

__device__ __forceinline__ int64_t
lo(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

template <typename T>
__device__ __forceinline__ bool
is_nan(T v)
{
    return v != v;
}

template <typename T>
__device__ __forceinline__ T
lowest()
{
    return -INFINITY;
}
template <>
__device__ __forceinline__ int32_t
lowest<int32_t>()
{
    return INT32_MIN;
}
template <>
__device__ __forceinline__ int64_t
lowest<int64_t>()
{
    return INT64_MIN;
}

// the sum of plane (H, W) over rows [h0, h1) and columns [w0, w1)
template <typename T>
__device__ T
window_sum(const T *plane, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1)
{
    T sum = 0;
    for (int64_t ih = h0; ih < h1; ih++) {
        for (int64_t iw = w0; iw < w1; iw++) {
            sum += plane[ih * w + iw];
        }
    }
    return sum;
}

// plane (H, W) += v over rows [h0, h1) and columns [w0, w1), atomically (windows overlap)
template <typename T>
__device__ void
window_add(T *plane, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1, T v)
{
    for (int64_t ih = h0; ih < h1; ih++) {
        for (int64_t iw = w0; iw < w1; iw++) {
            atomicAdd(plane + ih * w + iw, v);
        }
    }
}

// x (P, H, W), out and idx (P, OH, OW); a NaN wins and a later NaN wins again, as on the CPU
// (ints: is_nan is false)
template <typename T>
__global__ void
max_pool_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)bad;
    const int64_t n = g.planes * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ow = i % g.ow, oh = i / g.ow % g.oh, p = i / (g.ow * g.oh);
        const T *plane = x + p * g.h * g.w;
        int64_t h0 = oh * g.sh - g.ph, h1 = lo(h0 + (g.kh - 1) * g.dh + 1, g.h);
        int64_t w0 = ow * g.sw - g.pw, w1 = lo(w0 + (g.kw - 1) * g.dw + 1, g.w);
        h0 = first_tap(h0, g.dh);
        w0 = first_tap(w0, g.dw);
        T best = lowest<T>();
        int64_t at = h0 * g.w + w0;
        for (int64_t ih = h0; ih < h1; ih += g.dh) {
            for (int64_t iw = w0; iw < w1; iw += g.dw) {
                const T v = plane[ih * g.w + iw];
                if (v > best || is_nan(v)) {
                    best = v;
                    at = ih * g.w + iw;
                }
            }
        }
        out[i] = best;
        if (idx) {
            idx[i] = at;
        }
    }
}

// v over a window of h x w taps: v / divide, or (ADAPTIVE) v / h / w, as the CPU's loops
template <typename T, bool ADAPTIVE>
__device__ T
window_mean(T v, int64_t divide, int64_t h, int64_t w)
{
    return ADAPTIVE ? v / (T)h / (T)w : v / (T)divide;
}

// x (P, H, W), out (P, OH, OW): a window's mean over its taps inside the image (0 for a window of
// padding only)
template <typename T, bool ADAPTIVE>
__global__ void
avg_pool_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ow = i % g.ow, oh = i / g.ow % g.oh, p = i / (g.ow * g.oh);
        const T *plane = x + p * g.h * g.w;
        int64_t h0, h1, w0, w1;
        const int64_t divide = mt_mean_pool_window(&g, ADAPTIVE, oh, ow, &h0, &h1, &w0, &w1);
        const T sum = window_sum(plane, g.w, h0, h1, w0, w1);
        out[i] = h0 < h1 && w0 < w1 ? window_mean<T, ADAPTIVE>(sum, divide, h1 - h0, w1 - w0)
                                    : (T)0;
    }
}

// grad, idx (P, OH, OW), gx (P, H, W) zeroed: gx[idx] += grad; an index outside its plane
// fails a device-side assertion
template <typename T>
__global__ void
max_back_kernel(pool_geom g, const T *grad, T *gx, int64_t *idx, mt_cuda_assert_record *bad)
{
    const int64_t n = g.planes * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t p = i / (g.ow * g.oh), at = idx[i];
        if (at < 0 || at >= g.h * g.w) {
            mt_cuda_assert_fail(bad, MT_CUDA_ASSERT_POOL_INDEX, (long long)at,
                                (long long)(g.h * g.w));
            continue;
        }
        atomicAdd(gx + p * g.h * g.w + at, grad[i]);
    }
}

// grad (P, OH, OW), gx (P, H, W) zeroed: each window's grad / divisor to its pixels inside
// (the windows and divisors of avg_pool_kernel)
template <typename T, bool ADAPTIVE>
__global__ void
avg_back_kernel(pool_geom g, const T *grad, T *gx, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ow = i % g.ow, oh = i / g.ow % g.oh, p = i / (g.ow * g.oh);
        int64_t h0, h1, w0, w1;
        const int64_t divide = mt_mean_pool_window(&g, ADAPTIVE, oh, ow, &h0, &h1, &w0, &w1);
        if (h0 >= h1 || w0 >= w1) {
            continue;
        }
        const T v = window_mean<T, ADAPTIVE>(grad[i], divide, h1 - h0, w1 - w0);
        window_add(gx + p * g.h * g.w, g.w, h0, h1, w0, w1, v);
    }
}

} // namespace

#define POOL_PAIR(k) {MT_KERNEL_PTR(k<float>), MT_KERNEL_PTR(k<double>), NULL, NULL}
#define MEAN_PAIR(k, adaptive) \
    {MT_KERNEL_PTR(k<float, adaptive>), MT_KERNEL_PTR(k<double, adaptive>), NULL, NULL}

extern "C" const void *
mt_cuda_pool_kernel(mt_cuda_pool_op op, mt_dtype dt)
{
    // max_pool2d, as PyTorch's CUDA kernel, takes the integer dtypes too
    static const void *const table[MT_CUDA_NUM_POOL_OPS][4] = {
        {MT_KERNEL_PTR(max_pool_kernel<float>), MT_KERNEL_PTR(max_pool_kernel<double>),
         MT_KERNEL_PTR(max_pool_kernel<int32_t>), MT_KERNEL_PTR(max_pool_kernel<int64_t>)},
        MEAN_PAIR(avg_pool_kernel, false),
        MEAN_PAIR(avg_pool_kernel, true),
        POOL_PAIR(max_back_kernel),
        MEAN_PAIR(avg_back_kernel, false),
        MEAN_PAIR(avg_back_kernel, true),
    };
    const int k = dt == MT_FLOAT32   ? 0
                  : dt == MT_FLOAT64 ? 1
                  : dt == MT_INT32   ? 2
                  : dt == MT_INT64   ? 3
                                     : -1;
    if ((unsigned)op >= MT_CUDA_NUM_POOL_OPS || k < 0) {
        return NULL;
    }
    return table[op][k];
}
