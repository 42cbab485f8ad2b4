// The random fills of the CUDA backend and its per-element draws (poisson, gamma, bernoulli_ of
// a tensor p): one kernel, instantiated per row of ops/random.def and output dtype, transforms
// element i's variates with the row's core/random_math.h function. The variates come from a
// counter-based generator, Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1,
// 2, 3", the generator of PyTorch's CUDA backend and cuRAND): each element is one counter value
// (poisson's and gamma's a few), so a fill needs no state on the device; ops_random.c picks the
// seed and the offset.
#include <stdint.h>

extern "C" {
#include "core/random_math.h"
}
#include "cuda/device_assert.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels_index_fill_nn.h"
#include "ops/elementwise_forms.h"

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

// A Poisson draw of lambda from the stream (core/random_math.h's methods, PyTorch's CPU
// sample_poisson); on the stream's last round the candidate of the trial is the draw
template <typename T>
static __device__ T
poisson_of(double lambda, stream s)
{
    const mt_poisson_rate p = mt_poisson_rate_of(lambda);
    if (p.rejection) {
        for (;;) {
            const double u = next_uniform(s);
            const double v = next_uniform(s);
            bool accepted;
            const double k = mt_sample_poisson(&p, u, v, &accepted);
            if (accepted || s.round == MT_CUDA_POISSON_ROUNDS - 1) {
                return (T)k;
            }
        }
    }
    double prod = 1.0;
    for (double x = 0;; x++) {
        prod *= next_uniform(s);
        if (!(prod > p.enlam) || s.round == MT_CUDA_POISSON_ROUNDS - 1) {
            return (T)x;
        }
    }
}

// A standard gamma draw of alpha: PyTorch's sample_gamma (Marsaglia and Tsang's rejection, alpha
// < 1 boosted), its normals by Box-Muller on the stream's uniforms; at least T's smallest normal
template <typename T>
static __device__ T
gamma_of(double alpha, stream s)
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
            x = mt_box_muller(log1p(-u2), u1, NULL);
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

// Element i of a fill: its parameters and the four words of its Philox block, counter (i,
// offset).
struct element {
    const mt_cuda_rand &p;
    int64_t i;
    u32x4 r;
};

// The stream of uniforms of element i (the samplers of form S).
static __device__ __forceinline__ stream
stream_of(const element &e)
{
    return {e.i, e.p.seed, e.p.offset, 0, 0, {{0, 0, 0, 0}}};
}

// The variates of each form of ops/random.def, from e's block: u uniform in [0, 1) from words 0
// and 1 (so 1 - u lies in (0, 1] and its log is finite), a second uniform from words 2 and 3.
#define U_OF(e) unit(e.r.v[0], e.r.v[1])
#define SAMPLE_U1(fn, e) mt_sample_##fn(U_OF(e), e.p.a)
#define SAMPLE_U2(fn, e) mt_sample_##fn(U_OF(e), e.p.a, e.p.b)
#define SAMPLE_UT(fn, e) mt_sample_##fn(U_OF(e), e.p.a, e.p.b, sizeof(T) == 4)
#define SAMPLE_L1(fn, e) mt_sample_##fn(log(1.0 - U_OF(e)), e.p.a)
#define SAMPLE_Z2(fn, e) \
    mt_sample_##fn(mt_box_muller(log(1.0 - U_OF(e)), unit(e.r.v[2], e.r.v[3]), NULL), e.p.a, e.p.b)
#define SAMPLE_BITS(fn, e) mt_sample_##fn(((uint64_t)e.r.v[0] << 32) | e.r.v[1], e.p.from, e.p.span)
#define SAMPLE_UX(fn, e) mt_sample_##fn(U_OF(e), e.p.in[e.i])
#define SAMPLE_S(fn, e) fn##_of<T>(e.p.in[e.i], stream_of(e))

// One sampler per row: draw<T>(e) is element e's draw as a T.
#define SAMPLER(kind, op, sample, form, dtypes)                                          \
    struct sampler_##kind {                                                              \
        template <typename T> static __device__ __forceinline__ T draw(const element &e) \
        {                                                                                \
            return (T)SAMPLE_##form(sample, e);                                          \
        }                                                                                \
    };
#define MT_RANDOM SAMPLER
#define MT_RANDOM_EACH SAMPLER
#include "ops/random.def"
#undef SAMPLER

// out (n) contiguous; out[i] = a draw of Sampler's distribution from element i's block
template <typename T, typename Sampler>
__global__ void
rand_kernel(mt_cuda_rand p)
{
    MT_CUDA_GRID_STRIDE(i, p.n)
    {
        const u32x4 c = {{(uint32_t)i, (uint32_t)((uint64_t)i >> 32), (uint32_t)p.offset,
                          (uint32_t)(p.offset >> 32)}};
        const element e = {p, i, philox(c, (uint32_t)p.seed, (uint32_t)(p.seed >> 32))};
        ((T *)p.out)[i] = Sampler::template draw<T>(e);
    }
}

// p (n) float64: each probability in [0, 1], else (NaN too) a device-side assertion, as PyTorch's
// bernoulli_ kernel asserts 0 <= p && p <= 1 (the draw then compares with it as it is)
__global__ void
unit_interval_check_kernel(const double *p, int64_t n, mt_cuda_assert_record *rec)
{
    MT_CUDA_GRID_STRIDE(i, n)
    {
        if (!(p[i] >= 0 && p[i] <= 1)) {
            mt_cuda_assert_fail(rec, MT_CUDA_ASSERT_BERNOULLI_P, 0, 1);
        }
    }
}

extern "C" const void *
mt_cuda_unit_interval_check_kernel(void)
{
    return MT_KERNEL_PTR(unit_interval_check_kernel);
}

// The kernels by row (ops/random.def's order, mt_random_kind's) and dtype; positional
#define KERNEL(sampler, form, T, S) MT_KERNEL_PTR(rand_kernel<T, sampler>),
#define NO_KERNEL(sampler, form, T, S) nullptr,
#define ROW(kind, op, sample, form, dtypes) \
    {MT_EW_DTYPES_##dtypes(KERNEL, NO_KERNEL, sampler_##kind, form)},
static const void *const rand_kernels[][MT_NUM_DTYPES] = {
#define MT_RANDOM ROW
#define MT_RANDOM_EACH ROW
#include "ops/random.def"
};
#undef ROW
#undef NO_KERNEL
#undef KERNEL

extern "C" const void *
mt_cuda_rand_kernel(int kind, mt_dtype dt)
{
    return rand_kernels[kind][dt];
}
