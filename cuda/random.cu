// The random fills of the CUDA backend: uniform_, normal_, bernoulli_ and random_ from a
// counter-based generator, Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", the generator of PyTorch's CUDA backend and cuRAND). Each element is one counter
// value, so a fill needs no state on the device; ops_random.c picks the seed and the offset.
#include <stdint.h>

#include "cuda/device_math.h"
#include "cuda/kernels_index_fill_nn.h"

struct u32x4 {
    uint32_t v[4];
};

// Ten rounds of Philox4x32 on counter c with key (k0, k1).
static __device__ __forceinline__ u32x4 philox(u32x4 c, uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c.v[0];
        const uint64_t p1 = (uint64_t)0xCD9E8D57u * c.v[2];
        u32x4 n;
        n.v[0] = (uint32_t)(p1 >> 32) ^ c.v[1] ^ k0;
        n.v[1] = (uint32_t)p1;
        n.v[2] = (uint32_t)(p0 >> 32) ^ c.v[3] ^ k1;
        n.v[3] = (uint32_t)p0;
        c = n;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

// Uniform in [0, 1) with 53 random bits from two words.
static __device__ __forceinline__ double unit(uint32_t hi, uint32_t lo)
{
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1.0p-53;
}

// out (n) contiguous; out[i] = a draw of Kind (0 uniform, 1 normal, 2 bernoulli, 3 integers)
template <typename T, int Kind> __global__ void rand_kernel(mt_cuda_rand p)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const u32x4 c = {{(uint32_t)i, (uint32_t)((uint64_t)i >> 32), (uint32_t)p.offset,
                          (uint32_t)(p.offset >> 32)}};
        const u32x4 r = philox(c, (uint32_t)p.seed, (uint32_t)(p.seed >> 32));
        T v;
        if constexpr (Kind == 0) {
            const double x = p.a + (p.b - p.a) * unit(r.v[0], r.v[1]);
            // rounding to float can reach `to`; the interval stays half-open
            v = (T)x < (T)p.b ? (T)x : (T)p.a;
        } else if constexpr (Kind == 1) {
            // 1 - u lies in (0, 1], so the log is finite (Box-Muller)
            const double u1 = 1.0 - unit(r.v[0], r.v[1]), u2 = unit(r.v[2], r.v[3]);
            v = (T)(p.a + p.b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        } else if constexpr (Kind == 2) {
            v = (T)(unit(r.v[0], r.v[1]) < p.a);
        } else {
            const uint64_t bits = ((uint64_t)r.v[0] << 32) | r.v[1];
            v = (T)mt_random_in_range(bits, p.from, p.span);
        }
        ((T *)p.out)[i] = v;
    }
}

#define R(T, K) MT_KERNEL_PTR(rand_kernel<T, K>)
#define FLOATS(K) {nullptr, nullptr, nullptr, R(float, K), R(double, K)}
static const void *const rand_kernels[4][MT_NUM_DTYPES] = {
    FLOATS(0),
    FLOATS(1),
    FLOATS(2),
    {R(bool, 3), R(int32_t, 3), R(int64_t, 3), R(float, 3), R(double, 3)},
};
#undef FLOATS
#undef R

extern "C" const void *
mt_cuda_rand_kernel(int kind, mt_dtype dt)
{
    return rand_kernels[kind][dt];
}
