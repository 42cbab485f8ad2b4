/* The generator of random.h and the CPU kernels uniform_, normal_ and bernoulli_. */
#include <math.h>

#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/random.h"
#include "dispatch/kernels.h"

static uint64_t state[4];
static uint64_t seed_used;
static int seeded;

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void
mt_manual_seed(uint64_t seed)
{
    uint64_t x = seed;
    for (int k = 0; k < 4; k++) {
        state[k] = splitmix64(&x);
    }
    seed_used = seed;
    seeded = 1;
}

uint64_t
mt_initial_seed(void)
{
    return seeded ? seed_used : MT_DEFAULT_SEED;
}

static uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
mt_random_u64(void)
{
    if (!seeded) {
        mt_manual_seed(MT_DEFAULT_SEED);
    }
    uint64_t result = rotl(state[1] * 5, 7) * 9;
    uint64_t t = state[1] << 17;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = rotl(state[3], 45);
    return result;
}

float
mt_random_float(void)
{
    return (float)(mt_random_u64() >> 40) * 0x1.0p-24f;
}

double
mt_random_double(void)
{
    return (double)(mt_random_u64() >> 11) * 0x1.0p-53;
}

double
mt_random_normal(void)
{
    /* 1 - u lies in (0, 1], so the log is finite. */
    double u1 = 1.0 - mt_random_double(), u2 = mt_random_double();
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

typedef struct dist {
    double a, b; /* uniform: from, to; normal: mean, std */
} dist;

// out (any shape); out = a + (b - a) * U[0, 1)
static void
uniform_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(d->a + (d->b - d->a) * (double)mt_random_float());
        /* Rounding to float can reach `to`; the interval stays half-open. */
        MT_AT(float, 0, i) = v < (float)d->b ? v : (float)d->a;
    }
}

static void
uniform_f64(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        MT_AT(double, 0, i) = d->a + (d->b - d->a) * mt_random_double();
    }
}

// out (any shape); out = mean + std * N(0, 1)
static void
normal_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        MT_AT(float, 0, i) = (float)(d->a + d->b * mt_random_normal());
    }
}

static void
normal_f64(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        MT_AT(double, 0, i) = d->a + d->b * mt_random_normal();
    }
}

// out (any shape); out = 1 with probability p (dist.a), else 0
static void
bernoulli_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        MT_AT(float, 0, i) = (float)(mt_random_double() < d->a);
    }
}

static void
bernoulli_f64(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const dist *d = ctx;
    for (int64_t i = 0; i < n; i++) {
        MT_AT(double, 0, i) = (double)(mt_random_double() < d->a);
    }
}

static mt_status
fill_random(mt_args *a, const char *name, mt_loop_fn f32, mt_loop_fn f64, double x, double y)
{
    mt_tensor *self = a->t[0];
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"%s_kernel_cpu\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(self->dtype));
    }
    dist d = {x, y};
    mt_iter it;
    mt_status st = mt_check_writable(self);
    if (st == MT_OK) {
        st = mt_iter_build(&it, self->ndim, self->sizes, &self, 1);
    }
    if (st) {
        return st;
    }
    mt_iter_run(&it, self->dtype == MT_FLOAT32 ? f32 : f64, &d);
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
    return MT_OK;
}

mt_status
mt_cpu_uniform_(mt_args *a)
{
    double from = mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_double(a->s[0]);
    double to = mt_scalar_is_none(a->s[1]) ? 1 : mt_scalar_to_double(a->s[1]);
    if (from > to) {
        return mt_fail(MT_ERUNTIME,
                       "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                       from, to);
    }
    return fill_random(a, "uniform", uniform_f32, uniform_f64, from, to);
}

mt_status
mt_cpu_normal_(mt_args *a)
{
    double mean = mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_double(a->s[0]);
    double std = mt_scalar_is_none(a->s[1]) ? 1 : mt_scalar_to_double(a->s[1]);
    if (std < 0) {
        return mt_fail(MT_ERUNTIME, "normal expects std >= 0.0, but found std %g", std);
    }
    return fill_random(a, "normal", normal_f32, normal_f64, mean, std);
}

mt_status
mt_cpu_bernoulli_(mt_args *a)
{
    double p = mt_scalar_is_none(a->s[0]) ? 0.5 : mt_scalar_to_double(a->s[0]);
    if (!(p >= 0 && p <= 1)) {
        return mt_fail(MT_ERUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
    }
    return fill_random(a, "bernoulli", bernoulli_f32, bernoulli_f64, p, 0);
}
