// The sort family's kernels and CUB launchers (see sort.h): sort keys, the gathers after the
// sort, unique's groups. ops_sort.c checks, allocates and launches.
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"
#include "cuda/sort.h"

template <typename T> struct key_of;
template <> struct key_of<bool> {
    typedef uint32_t U;
    static __device__ U map(bool v)
    {
        return v ? 1u : 0u;
    }
};
template <> struct key_of<int32_t> {
    typedef uint32_t U;
    static __device__ U map(int32_t v)
    {
        return (uint32_t)v ^ 0x80000000u;
    }
};
template <> struct key_of<int64_t> {
    typedef uint64_t U;
    static __device__ U map(int64_t v)
    {
        return (uint64_t)v ^ 0x8000000000000000ull;
    }
};
// A float's bits ordered as unsigned: negatives flipped whole, positives their sign bit set.
// NaN (any payload, either sign) maps to the top, -0.0 to +0.0's key.
template <> struct key_of<float> {
    typedef uint32_t U;
    static __device__ U map(float v)
    {
        if (v != v) {
            return 0xFFFFFFFFu;
        }
        const uint32_t b = v == 0.0f ? 0u : __float_as_uint(v);
        return (b & 0x80000000u) ? ~b : b | 0x80000000u;
    }
};
template <> struct key_of<double> {
    typedef uint64_t U;
    static __device__ U map(double v)
    {
        if (v != v) {
            return 0xFFFFFFFFFFFFFFFFull;
        }
        const uint64_t b = v == 0.0 ? 0ull : (uint64_t)__double_as_longlong(v);
        return (b & 0x8000000000000000ull) ? ~b : b | 0x8000000000000000ull;
    }
};

// x (outer, n, inner); keys, pos (outer * inner, n)
template <typename T>
__global__ void
keys_kernel(const char *x, char *keys, int32_t *pos, int64_t outer, int64_t n, int64_t inner,
            int desc)
{
    typedef typename key_of<T>::U U;
    MT_CUDA_GRID_STRIDE(e, outer * n * inner)
    {
        const int64_t i = e % inner, j = (e / inner) % n, o = e / (inner * n);
        const int64_t at = (o * inner + i) * n + j;
        const U k = key_of<T>::map(load_((const T *)x + e));
        ((U *)keys)[at] = desc ? ~k : k;
        pos[at] = (int32_t)j;
    }
}

__global__ void
steps_kernel(int32_t *out, int64_t count, int64_t step)
{
    MT_CUDA_GRID_STRIDE(r, count)
    {
        out[r] = (int32_t)(r * step);
    }
}

// x (outer, n, inner), pos (outer * inner, n); values, indices (outer, k, inner)
template <typename T>
__global__ void
gather_kernel(const char *x, const int32_t *pos, char *values, int64_t *indices, int64_t outer,
              int64_t n, int64_t inner, int64_t k)
{
    MT_CUDA_GRID_STRIDE(e, outer * k * inner)
    {
        const int64_t i = e % inner, j = (e / inner) % k, o = e / (inner * k);
        const int64_t p = pos[(o * inner + i) * n + j];
        indices[e] = p;
        if (values) {
            ((T *)values)[e] = load_((const T *)x + (o * n + p) * inner + i);
        }
    }
}

// s (n) sorted; flags (n)
template <typename T>
__global__ void
flags_kernel(const char *s, int32_t *flags, int64_t n)
{
    const T *v = (const T *)s;
    MT_CUDA_GRID_STRIDE(j, n)
    {
        flags[j] = j == 0 || !(load_(v + j) == load_(v + j - 1));
    }
}

// s, perm, flags, group, inverse (n); u, starts (groups)
template <typename T>
__global__ void
scatter_kernel(const char *s, const int64_t *perm, const int32_t *flags, const int32_t *group,
               char *u, int64_t *inverse, int64_t *starts, int64_t n)
{
    MT_CUDA_GRID_STRIDE(j, n)
    {
        const int64_t g = group[j] - 1;
        inverse[perm[j]] = g;
        if (flags[j]) {
            ((T *)u)[g] = load_((const T *)s + j);
            starts[g] = j;
        }
    }
}

// starts, counts (groups)
__global__ void
counts_kernel(const int64_t *starts, int64_t *counts, int64_t groups, int64_t n)
{
    MT_CUDA_GRID_STRIDE(g, groups)
    {
        counts[g] = (g + 1 < groups ? starts[g + 1] : n) - starts[g];
    }
}

#define BY_DTYPE(kernel)                                                                          \
    {MT_KERNEL_PTR(kernel<bool>), MT_KERNEL_PTR(kernel<int32_t>), MT_KERNEL_PTR(kernel<int64_t>), \
     MT_KERNEL_PTR(kernel<float>), MT_KERNEL_PTR(kernel<double>)}

extern "C" int
mt_cuda_sort_key_bytes(mt_dtype dt)
{
    return dt == MT_INT64 || dt == MT_FLOAT64 ? 8 : 4;
}

extern "C" const void *
mt_cuda_sort_keys_kernel(mt_dtype dt)
{
    static const void *const k[MT_NUM_DTYPES] = BY_DTYPE(keys_kernel);
    return k[dt];
}

extern "C" const void *
mt_cuda_sort_steps_kernel(void)
{
    return MT_KERNEL_PTR(steps_kernel);
}

extern "C" const void *
mt_cuda_sort_gather_kernel(mt_dtype dt)
{
    static const void *const k[MT_NUM_DTYPES] = BY_DTYPE(gather_kernel);
    return k[dt];
}

extern "C" const void *
mt_cuda_unique_flags_kernel(mt_dtype dt)
{
    static const void *const k[MT_NUM_DTYPES] = BY_DTYPE(flags_kernel);
    return k[dt];
}

extern "C" const void *
mt_cuda_unique_scatter_kernel(mt_dtype dt)
{
    static const void *const k[MT_NUM_DTYPES] = BY_DTYPE(scatter_kernel);
    return k[dt];
}

extern "C" const void *
mt_cuda_unique_counts_kernel(void)
{
    return MT_KERNEL_PTR(counts_kernel);
}

// One row: a device-wide radix sort; several: the segmented sort (small rows by warps, large
// ones by blocks). Both are stable.
template <typename U>
static cudaError_t
sort_pairs(void *temp, size_t *temp_bytes, int bits, const void *keys_in, void *keys_out,
           const int32_t *pos_in, int32_t *pos_out, const int32_t *offsets, int64_t rows, int64_t n,
           cudaStream_t stream)
{
    const U *ki = (const U *)keys_in;
    U *ko = (U *)keys_out;
    if (rows == 1) {
        return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, ki, ko, pos_in, pos_out, (int)n,
                                               0, bits, stream);
    }
    return cub::DeviceSegmentedSort::StableSortPairs(temp, *temp_bytes, ki, ko, pos_in, pos_out,
                                                     rows * n, rows, offsets, offsets + 1, stream);
}

extern "C" cudaError_t
mt_cuda_sort_pairs(void *temp, size_t *temp_bytes, int key_bytes, int bits, const void *keys_in,
                   void *keys_out, const int32_t *pos_in, int32_t *pos_out, const int32_t *offsets,
                   int64_t rows, int64_t n, cudaStream_t stream)
{
    return key_bytes == 8 ? sort_pairs<uint64_t>(temp, temp_bytes, bits, keys_in, keys_out, pos_in,
                                                 pos_out, offsets, rows, n, stream)
                          : sort_pairs<uint32_t>(temp, temp_bytes, bits, keys_in, keys_out, pos_in,
                                                 pos_out, offsets, rows, n, stream);
}

extern "C" cudaError_t
mt_cuda_inclusive_sum32(void *temp, size_t *temp_bytes, const int32_t *in, int32_t *out, int64_t n,
                        cudaStream_t stream)
{
    return cub::DeviceScan::InclusiveSum(temp, *temp_bytes, in, out, (int)n, stream);
}
