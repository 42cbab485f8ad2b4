/* Fast division of 32-bit indices by a divisor fixed for a launch (PyTorch's IntDivider, after
 * Granlund and Montgomery / Hacker's Delight): the host computes a magic multiplier and shift
 * once per launch, and a kernel divides with a multiply-high, an add and a shift instead of a
 * hardware-less 64-bit division (tens of instructions on a GPU). Plain C for the host code,
 * __host__ __device__ for nvcc and the emulated build.
 *
 * For 1 <= d <= 2^31 and 0 <= n < 2^31: shift = ceil(log2(d)), m = floor(2^32 (2^shift - d) / d)
 * + 1 (it fits in 32 bits), and n / d = (umulhi(n, m) + n) >> shift (the sum stays below 2^32
 * since both terms are below 2^31). */
#ifndef MT_CUDA_INT_DIVIDER_H
#define MT_CUDA_INT_DIVIDER_H

#include <stdint.h>

#if defined(__CUDACC__)
#define MT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MT_HOST_DEVICE static inline
#endif

typedef struct mt_cuda_divider {
    uint32_t divisor, magic, shift;
} mt_cuda_divider;

#define MT_CUDA_DIVIDER_MAX ((uint32_t)1 << 31) /* divisors and numerators below 2^31 */

/* The divider of d (1 <= d <= 2^31). */
MT_HOST_DEVICE mt_cuda_divider
mt_cuda_divider_of(uint32_t d)
{
    uint32_t shift = 0;
    while (shift < 32 && ((uint64_t)1 << shift) < d) {
        shift++;
    }
    const uint64_t magic = (((uint64_t)1 << 32) * (((uint64_t)1 << shift) - d)) / d + 1;
    mt_cuda_divider v = {d, (uint32_t)magic, shift};
    return v;
}

/* n / div.divisor, for n < 2^31. */
MT_HOST_DEVICE uint32_t
mt_cuda_div(mt_cuda_divider div, uint32_t n)
{
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, div.magic);
#else
    const uint32_t hi = (uint32_t)(((uint64_t)n * div.magic) >> 32);
#endif
    return (hi + n) >> div.shift;
}

#undef MT_HOST_DEVICE

#endif
