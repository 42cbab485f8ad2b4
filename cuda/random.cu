// The random fills of the CUDA backend (uniform_, normal_, bernoulli_, random_, exponential_,
// geometric_, log_normal_, cauchy_) and poisson, from a counter-based generator, Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", the generator of PyTorch's
// CUDA backend and cuRAND). Each element is one counter value (poisson's a few), so a fill
// needs no state on the device; ops_random.c picks the seed and the offset.
#include <stdint.h>

#include "cuda/device_math.h"
#include "cuda/kernels_index_fill_nn.h"

struct u32x4 {
    uint32_t v[4];
};

// Ten rounds of Philox4x32 on counter c with key (k0, k1).
static __device__ __forceinline__ u32x4
philox(u32x4 c, uint32_t k0, uint32_t k1)
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
static __device__ __forceinline__ double
unit(uint32_t hi, uint32_t lo)
{
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1.0p-53;
}

// The uniforms of element i for a kernel that needs more than one Philox call (poisson): the
// words of counters (i, offset), (i, offset + 1), ... two doubles each.
struct stream {
    int64_t i;
    uint64_t seed, offset;
    int round, used;
    u32x4 words;
};

static __device__ __forceinline__ double
next_uniform(stream &s)
{
    if (s.used == 0 || s.used == 4) {
        const uint64_t o = s.offset +
                           (uint64_t)(s.round < MT_CUDA_POISSON_ROUNDS - 1 ? s.round++ : s.round);
        const u32x4 c = {
            {(uint32_t)s.i, (uint32_t)((uint64_t)s.i >> 32), (uint32_t)o, (uint32_t)(o >> 32)}};
        s.words = philox(c, (uint32_t)s.seed, (uint32_t)(s.seed >> 32));
        s.used = 0;
    }
    const double u = unit(s.words.v[s.used], s.words.v[s.used + 1]);
    s.used += 2;
    return u;
}

// PyTorch's CPU sample_poisson (NumPy's): transformed rejection from 10 on, else Knuth's product
static __device__ double
poisson(double lambda, stream &s)
{
    if (lambda >= 10) {
        const double slam = sqrt(lambda), loglam = log(lambda);
        const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
        const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
        for (;;) {
            const double U = next_uniform(s) - 0.5, V = next_uniform(s);
            const double us = 0.5 - fabs(U);
            const double k = floor((2 * a / us + b) * U + lambda + 0.43);
            if ((us >= 0.07 && V <= vr) || s.round == MT_CUDA_POISSON_ROUNDS - 1) {
                return k;
            }
            if (k < 0 || (us < 0.013 && V > us)) {
                continue;
            }
            if (log(V) + log(invalpha) - log(a / (us * us) + b) <=
                -lambda + k * loglam - lgamma(k + 1)) {
                return k;
            }
        }
    }
    const double enlam = exp(-lambda);
    double prod = 1.0;
    for (double x = 0;; x++) {
        prod *= next_uniform(s);
        if (!(prod > enlam) || s.round == MT_CUDA_POISSON_ROUNDS - 1) {
            return x;
        }
    }
}

// A standard gamma draw of alpha: PyTorch's sample_gamma (Marsaglia and Tsang's rejection, alpha
// < 1 boosted), its normals by Box-Muller on the stream's uniforms; at least T's smallest normal
template <typename T>
static __device__ T
gamma(double alpha, stream &s)
{
    double scale = 1.0;
    if (alpha < 1.0) {
        if (alpha == 0.0) {
            return (T)0;
        }
        scale = pow(1.0 - next_uniform(s), 1.0 / alpha);
        alpha += 1.0;
    }
    const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, y;
        do {
            const double u1 = next_uniform(s), u2 = next_uniform(s);
            x = sqrt(-2.0 * log1p(-u2)) * cos(6.283185307179586 * u1);
            y = 1.0 + c * x;
        } while (y <= 0 && s.round < MT_CUDA_POISSON_ROUNDS - 1);
        const double v = y * y * y, u = 1.0 - next_uniform(s), xx = x * x;
        if (u < 1.0 - 0.0331 * xx * xx || log(u) < 0.5 * xx + d * (1.0 - v + log(v)) ||
            s.round == MT_CUDA_POISSON_ROUNDS - 1) {
            const T r = (T)(scale * d * v);
            const T tiny = sizeof(T) == 4 ? (T)1.17549435e-38f : (T)2.2250738585072014e-308;
            return r > tiny ? r : tiny; // NaN gives the smallest, as std::max
        }
    }
}

// out (n) contiguous; out[i] = a draw of Kind (mt_random_kind's order: 0 uniform, 1 normal,
// 2 bernoulli, 3 integers, 4 exponential, 5 geometric, 6 log-normal, 7 Cauchy; then 8
// bernoulli of in[i], 9 poisson of rate in[i], 10 standard gamma of concentration in[i])
template <typename T, int Kind>
__global__ void
rand_kernel(mt_cuda_rand p)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const u32x4 c = {{(uint32_t)i, (uint32_t)((uint64_t)i >> 32), (uint32_t)p.offset,
                          (uint32_t)(p.offset >> 32)}};
        const u32x4 r = philox(c, (uint32_t)p.seed, (uint32_t)(p.seed >> 32));
        // 1 - u lies in (0, 1], so its log is finite
        const double u = unit(r.v[0], r.v[1]), u1 = 1.0 - u;
        T v;
        if constexpr (Kind == 0) {
            const double x = p.a + (p.b - p.a) * u;
            // rounding to float can reach `to`; the interval stays half-open
            v = (T)x < (T)p.b ? (T)x : (T)p.a;
        } else if constexpr (Kind == 1 || Kind == 6) { // Box-Muller
            const double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * unit(r.v[2], r.v[3]));
            v = Kind == 1 ? (T)(p.a + p.b * z) : (T)exp(p.a + p.b * z);
        } else if constexpr (Kind == 2) {
            v = (T)(u < p.a);
        } else if constexpr (Kind == 3) {
            const uint64_t bits = ((uint64_t)r.v[0] << 32) | r.v[1];
            v = (T)mt_random_in_range(bits, p.from, p.span);
        } else if constexpr (Kind == 4) {
            v = (T)(-1.0 / p.a * log(u1));
        } else if constexpr (Kind == 5) { // at least one trial
            v = (T)fmax(1.0, ceil(log(u1) / log1p(-p.a)));
        } else if constexpr (Kind == 7) {
            v = (T)(p.a + p.b * tan(3.141592653589793 * (u - 0.5)));
        } else if constexpr (Kind == 8) {
            v = (T)(u < p.in[i]);
        } else if constexpr (Kind == 9) {
            stream s = {i, p.seed, p.offset, 0, 0, {{0, 0, 0, 0}}};
            v = (T)poisson(p.in[i], s);
        } else {
            stream s = {i, p.seed, p.offset, 0, 0, {{0, 0, 0, 0}}};
            v = gamma<T>(p.in[i], s);
        }
        ((T *)p.out)[i] = v;
    }
}

#define R(T, K) MT_KERNEL_PTR(rand_kernel<T, K>)
#define FLOATS(K) {nullptr, nullptr, nullptr, R(float, K), R(double, K)}
#define ALL(K) {R(bool, K), R(int32_t, K), R(int64_t, K), R(float, K), R(double, K)}
static const void *const rand_kernels[MT_CUDA_RAND_KINDS][MT_NUM_DTYPES] = {
    FLOATS(0), FLOATS(1),  ALL(2),
    ALL(3),    FLOATS(4),  {nullptr, R(int32_t, 5), R(int64_t, 5), R(float, 5), R(double, 5)},
    FLOATS(6), FLOATS(7),  ALL(8),
    FLOATS(9), FLOATS(10),
};
#undef ALL
#undef FLOATS
#undef R

extern "C" const void *
mt_cuda_rand_kernel(int kind, mt_dtype dt)
{
    return rand_kernels[kind][dt];
}
