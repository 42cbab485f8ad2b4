/* The CPU random fills (uniform_, normal_, bernoulli_ with a number p, random_, exponential_,
 * geometric_, log_normal_, cauchy_) and randperm: each PyTorch's CPU algorithm on PyTorch's
 * stream (cpu/random.h), so that torch.manual_seed(s) and the same call give the same values,
 * bit for bit. A kernel holds its generator's lock for all its draws and visits self in memory
 * order, as TensorIterator visits a nullary op's output. The checks are the front ends'
 * (ops/random_checks.c); PyTorch's float transforms are FMA-contracted where its AVX2/AVX-512
 * kernels are, so fma() is written out here. */
#include <math.h>
#include <string.h>

#include "core/random_math.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/random.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/factory_args.h"
#include "ops/elementwise_table.h"
#include "ops/front.h"

double
mt_draw_normal_f64(mt_generator *g)
{
    if (g->has_normal_f64) {
        g->has_normal_f64 = false;
        return g->normal_f64;
    }
    double u1 = mt_draw_uniform_f64(g), u2 = mt_draw_uniform_f64(g);
    g->has_normal_f64 = true;
    return mt_box_muller(log1p(-u2), u1, &g->normal_f64);
}

/* ---- normal_fill: PyTorch's path for a contiguous self of 16 elements or more ---- */

/* Julien Pommier's avx_mathfun log and sincos (Cephes polynomials), one lane at a time: the
 * AVX2 kernel of PyTorch's float normal_ computes with these, not libm's, and its compiler fuses
 * each multiply into the add or subtract that alone uses it, as the fmaf calls here do. */
static inline float
bits_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint32_t
float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline float
log_ps(float x)
{
    static const float p[] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                              -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                              2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    const float smallest = bits_float(0x00800000u); /* no denormals (as _mm256_max_ps) */
    x = x > smallest ? x : smallest;
    int32_t exponent = (int32_t)(float_bits(x) >> 23) - 0x7f;
    x = bits_float((float_bits(x) & ~0x7f800000u) | float_bits(0.5f)); /* mantissa in [0.5, 1) */
    float e = (float)exponent + 1.0f;
    bool small = x < 0.707106781186547524f;
    float tmp = small ? x : 0.0f;
    x = x - 1.0f;
    e = e - (small ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x, y = p[0];
#pragma GCC unroll 8 /* unrolled, the loop of fill16_f32 that calls this vectorises */
    for (int k = 1; k < 9; k++) {
        y = fmaf(y, x, p[k]);
    }
    y = fmaf(y * x, z, e * -2.12194440e-4f);
    y = fmaf(-z, 0.5f, y);
    return fmaf(e, 0.693359375f, x + y);
}

static inline void
sincos_ps(float x, float *s, float *c)
{
    uint32_t sign_sin = float_bits(x) & 0x80000000u;
    x = fabsf(x);
    int32_t j = (int32_t)(x * 1.27323954473516f); /* 4 / pi, truncated */
    j = (j + 1) & ~1;
    float y = (float)j;
    uint32_t swap_sin = (uint32_t)(j & 4) << 29;
    bool poly = (j & 2) == 0;
    sign_sin ^= swap_sin;
    /* extended precision modular arithmetic: x - y * pi / 4 */
    x = fmaf(y, -0.78515625f, x);
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    float z = x * x;
    float yc = fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f); /* cos, [0, pi/4] */
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = fmaf(yc * z, z, -(z * 0.5f));
    yc = yc + 1.0f;
    float ys = fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f); /* sin, [0, pi/4] */
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = fmaf(ys * z, x, x);
    float sin_part = poly ? ys : yc, cos_part = poly ? yc : ys;
    *s = bits_float(float_bits(sin_part) ^ sign_sin);
    *c = bits_float(float_bits(cos_part) ^ sign_cos);
}

// d (16), uniforms in [0, 1) -> normals: d[j] and d[j + 8] from the pair (d[j], d[j + 8])
static inline void
fill16_f32(float *d, float mean, float std)
{
    const float two_pi = (float)(2.0 * MT_PI);
    float radius[8];
    /* three loops: sqrtf's errno test is a branch, which would keep the other two scalar */
    for (int j = 0; j < 8; j++) {
        radius[j] = -2.0f * log_ps(1.0f - d[j]);
    }
    for (int j = 0; j < 8; j++) {
        radius[j] = sqrtf(radius[j]);
    }
    for (int j = 0; j < 8; j++) {
        float s, c;
        sincos_ps(two_pi * d[j + 8], &s, &c);
        d[j] = fmaf(radius[j] * c, std, mean);
        d[j + 8] = fmaf(radius[j] * s, std, mean);
    }
}

static inline void
fill16_f64(double *d, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double radius = sqrt(-2 * log(1 - d[j])), theta = 2.0 * MT_PI * d[j + 8];
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* d (n, whole blocks of 16) uniforms -> normals; compiled per SIMD level so that fmaf is one
 * instruction (correctly rounded, as libm's) and the 8 lanes of a block vectorise */
#define BLOCKS(T, S)                                                      \
    MT_SIMD_CLONES static void blocks_##S(T *d, int64_t n, T mean, T std) \
    {                                                                     \
        for (int64_t i = 0; i + 16 <= n; i += 16) {                       \
            fill16_##S(d + i, mean, std);                                 \
        }                                                                 \
    }
BLOCKS(float, f32)
BLOCKS(double, f64)

/* PyTorch's normal_fill: n uniforms, Box-Muller on each block of 16, and the last n % 16
 * values from a block of 16 new uniforms ending at the end. */
#define NORMAL_FILL(T, S)                                                        \
    static void normal_fill_##S(T *d, int64_t n, T mean, T std, mt_generator *g) \
    {                                                                            \
        for (int64_t i = 0; i < n; i++) {                                        \
            d[i] = mt_draw_uniform_##S(g);                                       \
        }                                                                        \
        blocks_##S(d, n, mean, std);                                             \
        if (n % 16 != 0) {                                                       \
            for (int j = 0; j < 16; j++) {                                       \
                d[n - 16 + j] = mt_draw_uniform_##S(g);                          \
            }                                                                    \
            fill16_##S(d + n - 16, mean, std);                                   \
        }                                                                        \
    }
NORMAL_FILL(float, f32)
NORMAL_FILL(double, f64)

/* ---- the element-at-a-time fills ---- */

typedef struct draw {
    mt_generator *g;
    double a, b;    /* the kind's parameters (mt_random_spec) */
    int64_t from;   /* random_: [from, from + span) */
    uint64_t span;  /* 0: all 2^64 values */
    bool wide;      /* random_ draws 64 bits (spans of 2^28 and more) */
    /* uniform_ into a float32 buffer for float16 or bfloat16: each value rounded to the stored
     * dtype before the half-open interval's check, as PyTorch's kernel checks after its cast
     * (else a value rounded up to `to`: 1.0 from rand about once in 4000 float16 draws) */
    float (*round)(float);
    float stored_from, stored_to; /* from and to rounded so */
} draw;

static float
round_half(float v)
{
    return mt_half_to_float(mt_float_to_half(v));
}

static float
round_bf16(float v)
{
    return mt_bf16_to_float(mt_float_to_bf16(v));
}

#define FMA_f32 fmaf
#define FMA_f64 fma

/* Each distribution's loop for out of T (suffix S), one draw per element in order: uniform_ in
 * T's precision, from a float32 uniform for float32 (rounding reached `to`: the interval stays
 * half-open); the others from float64 uniforms and normals, through core/random_math.h where
 * PyTorch's CPU transform is the kernel's. */
#define LOOP_uniform(T, S)                                                 \
    const T from = (T)d->a, to = (T)d->b;                                  \
    for (int64_t i = 0; i < n; i++) {                                      \
        T v = FMA_##S(mt_draw_uniform_##S(d->g), to - from, from);         \
        if (d->round) {                                                    \
            v = (T)d->round((float)v);                                     \
            MT_AT(T, 0, i) = v == (T)d->stored_to ? (T)d->stored_from : v; \
        } else {                                                           \
            MT_AT(T, 0, i) = v == to ? from : v;                           \
        }                                                                  \
    }
#define LOOP_normal(T, S)                                              \
    for (int64_t i = 0; i < n; i++) {                                  \
        MT_AT(T, 0, i) = (T)fma(mt_draw_normal_f64(d->g), d->b, d->a); \
    }
#define LOOP_log_normal(T, S)                                               \
    for (int64_t i = 0; i < n; i++) {                                       \
        MT_AT(T, 0, i) = (T)exp(fma(mt_draw_normal_f64(d->g), d->b, d->a)); \
    }
#define LOOP_cauchy(T, S)                                            \
    for (int64_t i = 0; i < n; i++) {                                \
        double u = mt_draw_uniform_f64(d->g);                        \
        MT_AT(T, 0, i) = (T)fma(d->b, tan(MT_PI * (u - 0.5)), d->a); \
    }
#define LOOP_exponential(T, S)                                  \
    for (int64_t i = 0; i < n; i++) {                           \
        double log_v = log1p(-mt_draw_uniform_f64(d->g));       \
        MT_AT(T, 0, i) = (T)mt_sample_exponential(log_v, d->a); \
    }
#define LOOP_geometric(T, S)                                  \
    for (int64_t i = 0; i < n; i++) {                         \
        double log_v = log(mt_draw_uniform_f64(d->g));        \
        MT_AT(T, 0, i) = (T)mt_sample_geometric(log_v, d->a); \
    }
#define LOOP_bernoulli(T, S)                                                      \
    for (int64_t i = 0; i < n; i++) {                                             \
        MT_AT(T, 0, i) = (T)mt_sample_bernoulli(mt_draw_uniform_f64(d->g), d->a); \
    }
#define LOOP_random(T, S)                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                      \
        uint64_t bits = d->wide ? mt_generator_random64(d->g) : mt_generator_random(d->g); \
        MT_AT(T, 0, i) = (T)mt_sample_random(bits, d->from, d->span);                      \
    }

/* The loops of ops/random.def's fills, <sample>_<suffix> for each dtype of a row; compiled per
 * SIMD level so that fma and fmaf are one instruction, not a libm call per element (the same
 * correctly rounded results). */
#define LOOP(sample, form, T, S)                                                            \
    MT_SIMD_CLONES static void sample##_##S(char **data, const int64_t *strides, int64_t n, \
                                            void *ctx)                                      \
    {                                                                                       \
        const draw *d = ctx;                                                                \
        LOOP_##sample(T, S)                                                                 \
    }
#define NO_LOOP(sample, form, T, S)
#define MT_RANDOM(kind, op, sample, form, dtypes) MT_EW_DTYPES_##dtypes(LOOP, NO_LOOP, sample, form)
#include "ops/random.def"
#undef LOOP
#undef NO_LOOP

/* The loops by kind and dtype; NULL: not for that dtype (the front end refused it). */
#define LOOP(sample, form, T, S) sample##_##S,
#define NO_LOOP(sample, form, T, S) NULL,
static const mt_loop_fn fill_loops[MT_RANDOM_NUM_KINDS][MT_NUM_DTYPES] = {
#define MT_RANDOM(kind, op, sample, form, dtypes) \
    {MT_EW_DTYPES_##dtypes(LOOP, NO_LOOP, sample, form)},
#include "ops/random.def"
};
#undef LOOP
#undef NO_LOOP

mt_status
mt_cpu_memory_order(mt_tensor *self, mt_tensor *other, mt_tensor **self_out, mt_tensor **other_out)
{
    int perm[MT_MAX_DIMS], n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (self->sizes[d] != 1) { /* insertion by stride, largest first; stable */
            int k = n++;
            for (; k > 0 && self->strides[perm[k - 1]] < self->strides[d]; k--) {
                perm[k] = perm[k - 1];
            }
            perm[k] = d;
        }
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS], other_strides[MT_MAX_DIMS];
    for (int k = 0; k < n; k++) {
        sizes[k] = self->sizes[perm[k]];
        strides[k] = self->strides[perm[k]];
        other_strides[k] = other ? other->strides[perm[k]] : 0;
    }
    mt_status st = mt_tensor_view(self, n, sizes, strides, self->offset, self_out);
    if (st == MT_OK && other &&
        (st = mt_tensor_view(other, n, sizes, other_strides, other->offset, other_out))) {
        mt_tensor_clear(self_out);
    }
    return st;
}

/* self filled by loop under g's lock, in memory order; the in-place kernels' shared tail. */
static mt_status
fill_with(mt_args *a, mt_loop_fn loop, draw *d)
{
    mt_tensor *self = a->t[0], *ordered = NULL;
    mt_iter it;
    mt_status st = mt_cpu_memory_order(self, NULL, &ordered, NULL);
    if (st || (st = mt_iter_build(&it, ordered->ndim, ordered->sizes, &ordered, 1))) {
        goto out_release;
    }
    mt_generator_lock(d->g);
    mt_iter_run(&it, loop, d);
    mt_generator_unlock(d->g);
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
out_release:
    mt_tensor_clear(&ordered);
    return st;
}

static mt_status
fill_random(mt_args *a, mt_random_kind kind)
{
    mt_tensor *self = a->t[0];
    const mt_random_spec r = a->plan->random;
    draw d = {0};
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &d.g);
    if (st) {
        return st;
    }
    d.a = r.a;
    d.b = r.b;
    d.from = r.from;
    d.span = r.span;
    if (r.dt == MT_FLOAT16 || r.dt == MT_BFLOAT16) {
        d.round = r.dt == MT_FLOAT16 ? round_half : round_bf16;
        d.stored_from = d.round((float)d.a);
        d.stored_to = d.round((float)d.b);
    }
    /* PyTorch's random_ draws 64 bits for spans from 2^28 on, except int32's random_() */
    bool int32_default = self->dtype == MT_INT32 && mt_scalar_is_none(a->s[0]);
    d.wide = (r.span == 0 || r.span >= (UINT64_C(1) << 28)) && !int32_default;
    if (kind == MT_RANDOM_NORMAL && mt_tensor_numel(self) >= 16 && mt_tensor_is_contiguous(self)) {
        mt_generator_lock(d.g);
        if (self->dtype == MT_FLOAT32) {
            normal_fill_f32((float *)mt_tensor_data(self), mt_tensor_numel(self), (float)d.a,
                            (float)d.b, d.g);
        } else {
            normal_fill_f64((double *)mt_tensor_data(self), mt_tensor_numel(self), d.a, d.b, d.g);
        }
        mt_generator_unlock(d.g);
        mt_tensor_bump_version(self);
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    return fill_with(a, fill_loops[kind][self->dtype], &d);
}

// self (any shape); self = draws of the kind (random_: uniform integers in [from, to))
#define MT_RANDOM_FILL(op, kind)                 \
    mt_status mt_cpu_##op(mt_args *a)            \
    {                                            \
        return fill_random(a, MT_RANDOM_##kind); \
    }
#include "ops/random.def"

// self (any shape), p (a number, or a tensor that expands to self's shape); self = 0 or 1
mt_status
mt_cpu_bernoulli_(mt_args *a)
{
    if (a->t[1] == NULL || a->t[1]->is_wrapped_number) {
        return fill_random(a, MT_RANDOM_BERNOULLI);
    }
    mt_tensor *p = NULL;
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st || (st = mt_bernoulli_tensor_p(a, "cpu", &p)) ||
        (st = mt_cpu_bernoulli_tensor(a->t[0], p, g))) {
        mt_tensor_clear(&p);
        return st;
    }
    mt_tensor_release(p);
    mt_tensor_bump_version(a->t[0]);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

/* PyTorch's randperm_cpu: a Fisher-Yates shuffle of 0 .. n-1 drawing 32 bits per swap, or past
 * 2^32 / 20 elements the "inside-out" variant drawing 64. */
#define SHUFFLE(E, T, S)                                                           \
    static void shuffle_##S(T *p, int64_t n, mt_generator *g)                      \
    {                                                                              \
        if (n < (int64_t)(UINT32_MAX / 20)) {                                      \
            for (int64_t i = 0; i < n; i++) {                                      \
                p[i] = (T)i;                                                       \
            }                                                                      \
            for (int64_t i = 0; i < n - 1; i++) {                                  \
                int64_t z = (int64_t)(mt_generator_random(g) % (uint64_t)(n - i)); \
                T v = p[i];                                                        \
                p[i] = p[z + i];                                                   \
                p[z + i] = v;                                                      \
            }                                                                      \
            return;                                                                \
        }                                                                          \
        for (int64_t i = 0; i < n; i++) {                                          \
            int64_t z = (int64_t)(mt_generator_random64(g) % (uint64_t)(i + 1));   \
            p[i] = p[z];                                                           \
            p[z] = (T)i;                                                           \
        }                                                                          \
    }
SHUFFLE(MT_INT32, int32_t, i32)
SHUFFLE(MT_INT64, int64_t, i64)
SHUFFLE(MT_FLOAT32, float, f32)
SHUFFLE(MT_FLOAT64, double, f64)

// out (n) = a random permutation of 0 .. n-1
mt_status
mt_cpu_randperm(mt_args *a)
{
    const mt_dtype dt = a->plan->range.dt;
    const int64_t n = a->plan->range.n;
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st) {
        return st;
    }
    void *p = mt_tensor_data(a->out[0]);
    mt_generator_lock(g);
    if (dt == MT_INT32) {
        shuffle_i32(p, n, g);
    } else if (dt == MT_INT64) {
        shuffle_i64(p, n, g);
    } else if (dt == MT_FLOAT32) {
        shuffle_f32(p, n, g);
    } else {
        shuffle_f64(p, n, g);
    }
    mt_generator_unlock(g);
    return mt_factory_finish(a);
}
