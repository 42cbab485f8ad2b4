// The statistics kernels (the host side is ops_stats.c): histc and bincount add into their
// bins with atomics, searchsorted is a binary search a thread a value, cummax/cummin a scan a
// thread a row. Each computes what the CPU kernel of csrc/cpu/stats.c does, element for element.
#include <stdint.h>

#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/stats.h"

// x (n); out (bins) += 1 at (x - lo) * bins / (hi - lo) for x in [lo, hi], in T
template <typename T>
__global__ void
histc_kernel(mt_cuda_histc p)
{
    const T l = (T)p.lo, h = (T)p.hi;
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        const T v = ((const T *)p.x)[i];
        if (!(v >= l && v <= h)) {
            continue;
        }
        int64_t pos = (int64_t)((v - l) * (T)p.bins / (h - l));
        pos = pos >= p.bins ? p.bins - 1 : pos < 0 ? 0 : pos;
        atomicAdd((T *)p.out + pos, (T)1);
    }
}

// x (n) int64; out (int64)[x[i]] += 1
__global__ void
bincount_kernel(mt_cuda_bincount p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        atomicAdd((unsigned long long *)p.out + p.x[i], 1ULL);
    }
}

// x (n) int64, weights (n); out[x[i]] += weights[i], in T
template <typename T>
__global__ void
bincount_weighted_kernel(mt_cuda_bincount p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        atomicAdd((T *)p.out + p.x[i], ((const T *)p.weights)[i]);
    }
}

// x (n), k a row; out[i] = the bound of x[i] in its row of seq (PyTorch's cus_lower_bound /
// cus_upper_bound: NaN sorts last)
template <typename T>
__global__ void
searchsorted_kernel(mt_cuda_search p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        const int64_t row = p.one_row || p.k == 0 ? 0 : i / p.k;
        const T *r = (const T *)p.seq + row * p.len;
        const int64_t *s = p.sorter ? p.sorter + row * p.len : nullptr;
        const T v = ((const T *)p.x)[i];
        int64_t lo = 0, hi = p.len;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const T m = r[s ? s[mid] : mid];
            if (p.right ? !(m > v) : !(m >= v)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (p.out32) {
            ((int32_t *)p.out)[i] = (int32_t)lo;
        } else {
            ((int64_t *)p.out)[i] = lo;
        }
    }
}

// x (outer, n, inner); a thread a row (o, i): the running max (min) along n, ties and NaNs to
// the later element (PyTorch's cummax_cummin_helper)
template <typename T>
__global__ void
cumext_kernel(mt_cuda_cumext p)
{
    MT_CUDA_GRID_STRIDE(r, p.outer * p.inner)
    {
        const int64_t o = r / p.inner, i = r % p.inner;
        int64_t best = 0;
        for (int64_t j = 0; j < p.n; j++) {
            const int64_t at = (o * p.n + j) * p.inner + i;
            const T v = load_((const T *)p.x + at),
                    b = load_((const T *)p.x + (o * p.n + best) * p.inner + i);
            const bool take = j == 0 || isnan_(v) || (!isnan_(b) && (p.max ? v >= b : v <= b));
            best = take ? j : best;
            ((T *)p.values)[at] = take ? v : b;
            p.indices[at] = best;
        }
    }
}

extern "C" const void *
mt_cuda_histc_kernel(int f64)
{
    return f64 ? MT_KERNEL_PTR(histc_kernel<double>) : MT_KERNEL_PTR(histc_kernel<float>);
}

extern "C" const void *
mt_cuda_bincount_kernel(mt_dtype dt)
{
    switch (dt) {
    case MT_INT64:
        return MT_KERNEL_PTR(bincount_kernel);
    case MT_FLOAT32:
        return MT_KERNEL_PTR(bincount_weighted_kernel<float>);
    case MT_FLOAT64:
        return MT_KERNEL_PTR(bincount_weighted_kernel<double>);
    default:
        return nullptr;
    }
}

extern "C" const void *
mt_cuda_searchsorted_kernel(int ints)
{
    return ints ? MT_KERNEL_PTR(searchsorted_kernel<int64_t>)
                : MT_KERNEL_PTR(searchsorted_kernel<double>);
}

extern "C" const void *
mt_cuda_cumext_kernel(mt_dtype dt)
{
    static const void *const kernels[MT_NUM_DTYPES] = {MT_KERNEL_PTR(cumext_kernel<bool>),
                                                       MT_KERNEL_PTR(cumext_kernel<int32_t>),
                                                       MT_KERNEL_PTR(cumext_kernel<int64_t>),
                                                       MT_KERNEL_PTR(cumext_kernel<float>),
                                                       MT_KERNEL_PTR(cumext_kernel<double>)};
    return kernels[dt];
}
