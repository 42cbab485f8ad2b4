/* The generator of random.h and the CPU kernels uniform_, normal_, bernoulli_, random_ (the
 * kernel of randint) and randperm. */
#include <math.h>
#include <pthread.h>

#include "core/math.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/random.h"
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"

static uint64_t state[4];
static uint64_t seed_used;
static int seeded;
static uint64_t epoch;
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
    epoch++;
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

uint64_t
mt_seed_epoch(uint64_t *seed)
{
    pthread_mutex_lock(&lock);
    uint64_t e = epoch;
    *seed = seeded ? seed_used : MT_DEFAULT_SEED;
    pthread_mutex_unlock(&lock);
    return e;
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
    mt_status st = mt_iter_build(&it, self->ndim, self->sizes, &self, 1);
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

/* [from, from + span), span 0 for all 2^64 values; the modulo's bias (span / 2^64) is far below
 * sampling noise for any span a tensor can use. */
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
            MT_AT(T, 0, i) = (T)mt_random_in_range(mt_random_u64(), r->from, r->span);        \
        }                                                                                   \
    }
MT_DTYPES(RANDOM_LOOP)

/* The loops of each fill (mt_random_kind order) by dtype; NULL: not for that dtype. */
#define FLOATS(f) {NULL, NULL, NULL, f##_f32, f##_f64}
static const mt_loop_fn fill_loops[4][MT_NUM_DTYPES] = {
    FLOATS(uniform),
    FLOATS(normal),
    FLOATS(bernoulli),
    {random_b8, random_i32, random_i64, random_f32, random_f64},
};
#undef FLOATS

static mt_status
fill_random(mt_args *a, mt_random_kind kind)
{
    const mt_random_spec r = a->plan->random;
    dist d = {r.a, r.b};
    int_range ir = {r.from, r.span};
    void *ctx = kind == MT_RANDOM_INTS ? (void *)&ir : (void *)&d;
    return fill_with(a, fill_loops[kind][a->t[0]->dtype], ctx);
}

// self (any shape); self = draws of the kind (random_: uniform integers in [from, to))
#define FILL(op, kind)                  \
    mt_status mt_cpu_##op(mt_args *a)   \
    {                                   \
        return fill_random(a, kind);    \
    }
FILL(uniform_, MT_RANDOM_UNIFORM)
FILL(normal_, MT_RANDOM_NORMAL)
FILL(bernoulli_, MT_RANDOM_BERNOULLI)
FILL(random_, MT_RANDOM_INTS)

// out (n) = a random permutation of 0 .. n-1 (Fisher-Yates)
mt_status
mt_cpu_randperm(mt_args *a)
{
    const mt_dtype dt = a->plan->range.dt;
    const int64_t n = a->plan->range.n;
    mt_tensor *out;
    mt_status st = mt_tensor_empty(1, &n, dt, mt_factory_device(a), &out);
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
