// 2-D and 3-D pooling on the GPU: max (with its indices), avg and adaptive avg, and their
// backward. One thread per output element of one plane (P, OD, OH, OW), OD = 1 in 2-D; the windows are the CPU loops' own
// (core/pool_window.h), so both backends pick the same taps, divisors and argmax. The backward
// kernels scatter each output's gradient into a zeroed gx with atomicAdd (windows overlap).
#include <math.h>

#include "cuda/device_assert.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"

namespace
{

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

// output element i of (P, OD, OH, OW) as its plane p and position (od, oh, ow)
__device__ __forceinline__ void
position(const pool_geom &g, int64_t i, int64_t *p, int64_t *od, int64_t *oh, int64_t *ow)
{
    *ow = i % g.ow;
    *oh = i / g.ow % g.oh;
    *od = i / (g.ow * g.oh) % g.od;
    *p = i / (g.ow * g.oh * g.od);
}

// the sum of plane (D, H, W) over depths [b[0], b[1]), rows [b[2], b[3]), columns [b[4], b[5])
template <typename T>
__device__ T
window_sum(const T *plane, const pool_geom &g, const int64_t *b)
{
    T sum = 0;
    for (int64_t id = b[0]; id < b[1]; id++) {
        for (int64_t ih = b[2]; ih < b[3]; ih++) {
            for (int64_t iw = b[4]; iw < b[5]; iw++) {
                sum += plane[(id * g.h + ih) * g.w + iw];
            }
        }
    }
    return sum;
}

// plane (D, H, W) += v over window b (as window_sum's), atomically (windows overlap)
template <typename T>
__device__ void
window_add(T *plane, const pool_geom &g, const int64_t *b, T v)
{
    for (int64_t id = b[0]; id < b[1]; id++) {
        for (int64_t ih = b[2]; ih < b[3]; ih++) {
            for (int64_t iw = b[4]; iw < b[5]; iw++) {
                atomicAdd(plane + (id * g.h + ih) * g.w + iw, v);
            }
        }
    }
}

// the maximum of plane (D, H, W) over window b (as window_sum's) every step[0], step[1] and
// step[2] taps, and in *at its index (the first tap's if none beats the lowest); a NaN wins and
// a later NaN wins again, as on the CPU (ints: is_nan is false)
template <typename T>
__device__ T
window_max(const T *plane, const pool_geom &g, const int64_t *b, const int64_t *step, int64_t *at)
{
    T best = lowest<T>();
    *at = (b[0] * g.h + b[2]) * g.w + b[4];
    for (int64_t id = b[0]; id < b[1]; id += step[0]) {
        for (int64_t ih = b[2]; ih < b[3]; ih += step[1]) {
            for (int64_t iw = b[4]; iw < b[5]; iw += step[2]) {
                const int64_t here = (id * g.h + ih) * g.w + iw;
                const T v = plane[here];
                if (v > best || is_nan(v)) {
                    best = v;
                    *at = here;
                }
            }
        }
    }
    return best;
}

// x (P, D, H, W), out and idx (P, OD, OH, OW): each window's maximum and its index (idx NULL:
// none wanted)
template <typename T>
__global__ void
max_pool_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow, step[3] = {g.dd, g.dh, g.dw};
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6], at;
        position(g, i, &p, &od, &oh, &ow);
        mt_max_pool_window(&g, od, oh, ow, b);
        out[i] = window_max(x + p * g.d * g.h * g.w, g, b, step, &at);
        if (idx) {
            idx[i] = at;
        }
    }
}

// x (P, D, H, W), out and idx (P, OD, OH, OW): each adaptive window's maximum and its index
template <typename T>
__global__ void
adaptive_max_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow, step[3] = {1, 1, 1};
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6];
        position(g, i, &p, &od, &oh, &ow);
        mt_adaptive_pool_window(&g, od, oh, ow, b);
        out[i] = window_max(x + p * g.d * g.h * g.w, g, b, step, &idx[i]);
    }
}

// x (P, D, H, W), out (P, OD, OH, OW): a window's mean over its taps inside the input
template <typename T>
__global__ void
avg_pool_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6];
        position(g, i, &p, &od, &oh, &ow);
        const int64_t divide = mt_avg_pool_window(&g, od, oh, ow, b);
        const T sum = window_sum(x + p * g.d * g.h * g.w, g, b);
        out[i] = mt_pool_window_inside(b) ? sum / (T)divide : (T)0;
    }
}

// x (P, D, H, W), out (P, OD, OH, OW): adaptive windows [floor(o*H/OH), ceil((o+1)*H/OH))
template <typename T>
__global__ void
adaptive_pool_kernel(pool_geom g, const T *x, T *out, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6];
        position(g, i, &p, &od, &oh, &ow);
        mt_adaptive_pool_window(&g, od, oh, ow, b);
        const T sum = window_sum(x + p * g.d * g.h * g.w, g, b);
        out[i] = sum / (T)(b[1] - b[0]) / (T)(b[3] - b[2]) / (T)(b[5] - b[4]);
    }
}

// grad, idx (P, OD, OH, OW), gx (P, D, H, W) zeroed: gx[idx] += grad; an index outside its
// plane fails a device-side assertion
template <typename T>
__global__ void
max_back_kernel(pool_geom g, const T *grad, T *gx, int64_t *idx, mt_cuda_assert_record *bad)
{
    const int64_t n = g.planes * g.od * g.oh * g.ow, volume = g.d * g.h * g.w;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        const int64_t p = i / (g.od * g.ow * g.oh), at = idx[i];
        if (at < 0 || at >= volume) {
            mt_cuda_assert_fail(bad,
                                g.nd == 3 ? MT_CUDA_ASSERT_POOL3D_INDEX : MT_CUDA_ASSERT_POOL_INDEX,
                                (long long)at, (long long)volume);
            continue;
        }
        atomicAdd(gx + p * volume + at, grad[i]);
    }
}

// grad (P, OD, OH, OW), gx (P, D, H, W) zeroed: each window's grad / divisor to its taps inside
template <typename T>
__global__ void
avg_back_kernel(pool_geom g, const T *grad, T *gx, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6];
        position(g, i, &p, &od, &oh, &ow);
        const int64_t divide = mt_avg_pool_window(&g, od, oh, ow, b);
        if (mt_pool_window_inside(b)) {
            window_add(gx + p * g.d * g.h * g.w, g, b, grad[i] / (T)divide);
        }
    }
}

// grad (P, OD, OH, OW), gx (P, D, H, W) zeroed: each adaptive window's grad / its size to its
// taps
template <typename T>
__global__ void
adaptive_back_kernel(pool_geom g, const T *grad, T *gx, int64_t *idx, mt_cuda_assert_record *bad)
{
    (void)idx;
    (void)bad;
    const int64_t n = g.planes * g.od * g.oh * g.ow;
    MT_CUDA_GRID_STRIDE(i, n)
    {
        int64_t p, od, oh, ow, b[6];
        position(g, i, &p, &od, &oh, &ow);
        mt_adaptive_pool_window(&g, od, oh, ow, b);
        const T v = grad[i] / (T)(b[1] - b[0]) / (T)(b[3] - b[2]) / (T)(b[5] - b[4]);
        window_add(gx + p * g.d * g.h * g.w, g, b, v);
    }
}

} // namespace

#define POOL_PAIR(k) {MT_KERNEL_PTR(k<float>), MT_KERNEL_PTR(k<double>), NULL, NULL}

extern "C" const void *
mt_cuda_pool_kernel(mt_cuda_pool_op op, mt_dtype dt)
{
    // max_pool2d, as PyTorch's CUDA kernel, takes the integer dtypes too
    static const void *const table[MT_CUDA_NUM_POOL_OPS][4] = {
        {MT_KERNEL_PTR(max_pool_kernel<float>), MT_KERNEL_PTR(max_pool_kernel<double>),
         MT_KERNEL_PTR(max_pool_kernel<int32_t>), MT_KERNEL_PTR(max_pool_kernel<int64_t>)},
        POOL_PAIR(avg_pool_kernel),
        POOL_PAIR(adaptive_pool_kernel),
        POOL_PAIR(max_back_kernel),
        POOL_PAIR(avg_back_kernel),
        POOL_PAIR(adaptive_back_kernel),
        POOL_PAIR(adaptive_max_kernel),
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
