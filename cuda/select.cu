// The CUDA kernels of nonzero and masked_select (the scatter after the scan) and the CUB
// inclusive scan between the passes. The host side is ops_select.c.
#include <stdint.h>

#include <cub/device/device_scan.cuh>

#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/select.h"

// incl (n) the inclusive sum of 0/1 flags; out (count, ndim) = coordinates of flagged elements
__global__ void
nonzero_kernel(mt_cuda_nz p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        const int64_t row = i > 0 ? p.incl[i - 1] : 0;
        if (p.incl[i] == row) {
            continue;
        }
        int64_t rest = i, *o = p.out + row * p.ndim;
        for (int d = p.ndim - 1; d >= 0; d--) {
            o[d] = rest % p.sizes[d];
            rest /= p.sizes[d];
        }
    }
}

// incl (n) the inclusive sum of 0/1 flags, src (n); out (count) = src's flagged elements
template <typename T>
__global__ void
select_kernel(const int64_t *incl, const char *src, char *out, int64_t n)
{
    MT_CUDA_GRID_STRIDE(i, n)
    {
        const int64_t row = i > 0 ? incl[i - 1] : 0;
        if (incl[i] != row) {
            ((T *)out)[row] = load_((const T *)src + i);
        }
    }
}

extern "C" const void *
mt_cuda_nonzero_kernel(void)
{
    return MT_KERNEL_PTR(nonzero_kernel);
}

extern "C" const void *
mt_cuda_select_kernel(size_t width)
{
    switch (width) {
    case 1: /* bool, normalised as it is read */
        return MT_KERNEL_PTR(select_kernel<bool>);
    case 4:
        return MT_KERNEL_PTR(select_kernel<uint32_t>);
    case 8:
        return MT_KERNEL_PTR(select_kernel<uint64_t>);
    case 16: /* complex128 */
        return MT_KERNEL_PTR(select_kernel<mt_cuda_b128>);
    default:
        return NULL;
    }
}

extern "C" cudaError_t
mt_cuda_inclusive_sum_bytes(int64_t n, size_t *bytes)
{
    *bytes = 0;
    return cub::DeviceScan::InclusiveSum(nullptr, *bytes, (int64_t *)nullptr, (int64_t *)nullptr,
                                         n);
}

extern "C" cudaError_t
mt_cuda_inclusive_sum(void *temp, size_t bytes, int64_t *x, int64_t n, cudaStream_t stream)
{
    // in place: CUB's DeviceScan allows d_in == d_out
    return cub::DeviceScan::InclusiveSum(temp, bytes, x, x, n, stream);
}
