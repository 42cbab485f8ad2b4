/* The generator of random.h and the CPU kernels uniform_, normal_, bernoulli_, random_ (the
 * kernel of randint) and randperm. */
#include <math.h>
#include <pthread.h>

#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/random.h"
#include "dispatch/kernels.h"

static uint64_t state[4];
static uint64_t seed_used;
static int seeded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void
mt_random_lock(void)
{
    pthread_mutex_lock(&lock);
}

void
mt_random_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

static void
seed_locked(uint64_t seed)
{
    uint64_t x = seed;
    for (int k = 0; k < 4; k++) {
        state[k] = splitmix64(&x);
    }
    seed_used = seed;
    seeded = 1;
}

void
mt_manual_seed(uint64_t seed)
{
    pthread_mutex_lock(&lock);
    seed_locked(seed);
    pthread_mutex_unlock(&lock);
}

uint64_t
mt_initial_seed(void)
{
    pthread_mutex_lock(&lock);
    uint64_t s = seeded ? seed_used : MT_DEFAULT_SEED;
    pthread_mutex_unlock(&lock);
    return s;
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
        seed_locked(MT_DEFAULT_SEED);
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

/* Runs loop over self in place (the in-place kernels' shared tail): out = self. */
static mt_status
fill_with(mt_args *a, mt_loop_fn loop, void *ctx)
{
    mt_tensor *self = a->t[0];
    mt_iter it;
    mt_status st = mt_check_writable(self);
    if (st == MT_OK) {
        st = mt_iter_build(&it, self->ndim, self->sizes, &self, 1);
    }
    if (st) {
        return st;
    }
    mt_random_lock();
    mt_iter_run(&it, loop, ctx);
    mt_random_unlock();
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
    return MT_OK;
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
    return fill_with(a, self->dtype == MT_FLOAT32 ? f32 : f64, &d);
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

/* [from, from + span) with span >= 1; the modulo's bias (span / 2^64) is far below sampling
 * noise for any span a tensor can use. */
typedef struct int_range {
    int64_t from;
    uint64_t span;
} int_range;

// out (any shape); out = a uniform integer of the range, as T
#define RANDOM_LOOP(E, T, S)                                                                \
    static void random_##S(char **data, const int64_t *strides, int64_t n, void *ctx)      \
    {                                                                                       \
        const int_range *r = ctx;                                                           \
        for (int64_t i = 0; i < n; i++) {                                                   \
            MT_AT(T, 0, i) = (T)(r->from + (int64_t)(mt_random_u64() % r->span));           \
        }                                                                                   \
    }
MT_DTYPES(RANDOM_LOOP)
static const mt_loop_fn random_loops[MT_NUM_DTYPES] = {random_b8, random_i32, random_i64,
                                                       random_f32, random_f64};

/* random_'s upper bound without `to`: the largest integer the dtype holds exactly, plus one
 * for the floats (PyTorch's 2^24 and 2^53, inclusive). */
static int64_t
default_to(mt_dtype dt)
{
    switch (dt) {
    case MT_BOOL:
        return 2;
    case MT_INT32:
        return INT32_MAX;
    case MT_INT64:
        return INT64_MAX;
    case MT_FLOAT32:
        return (1LL << 24) + 1;
    default:
        return (1LL << 53) + 1;
    }
}

// self (any shape); self = uniform integers in [from, to)
mt_status
mt_cpu_random_(mt_args *a)
{
    mt_tensor *self = a->t[0];
    /* PyTorch's overloads random_(from, to), random_(to) and random_(): one value is `to`. */
    bool one = !mt_scalar_is_none(a->s[0]) && mt_scalar_is_none(a->s[1]);
    int64_t from = one || mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_int(a->s[0]);
    int64_t to = one ? mt_scalar_to_int(a->s[0])
                     : mt_scalar_is_none(a->s[1]) ? default_to(self->dtype)
                                                  : mt_scalar_to_int(a->s[1]);
    if (from >= to) {
        return mt_fail(MT_ERUNTIME,
                       "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                       (long long)from, (long long)to);
    }
    int_range r = {from, (uint64_t)to - (uint64_t)from};
    return fill_with(a, random_loops[self->dtype], &r);
}

// out (n) = a random permutation of 0 .. n-1 (Fisher-Yates)
mt_status
mt_cpu_randperm(mt_args *a)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_INT64;
    int64_t n = a->i[0];
    if (dt == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"randperm\" not implemented for 'Bool'");
    }
    mt_tensor *out;
    mt_status st = mt_tensor_empty(1, &n, dt, a->has_device ? a->device : MT_DEVICE_CPU, &out);
    if (st) {
        return st;
    }
    char *p = mt_tensor_data(out);
    int64_t item = (int64_t)mt_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        mt_store_scalar(p + i * item, dt, mt_scalar_int(i));
    }
    mt_random_lock();
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(mt_random_u64() % (uint64_t)(i + 1));
        mt_scalar vi = mt_load_scalar(p + i * item, dt), vj = mt_load_scalar(p + j * item, dt);
        mt_store_scalar(p + i * item, dt, vj);
        mt_store_scalar(p + j * item, dt, vi);
    }
    mt_random_unlock();
    if ((st = mt_tensor_set_requires_grad(out, a->b[0]))) {
        mt_tensor_release(out);
        return st;
    }
    a->out[0] = out;
    return MT_OK;
}
