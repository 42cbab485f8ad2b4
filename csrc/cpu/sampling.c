/* The CPU sampling kernels of a tensor of parameters: bernoulli_ with a tensor p, multinomial
 * (its draws with replacement; the rest is ops/distributions.c's, for every device) and
 * poisson. PyTorch's CPU algorithms on PyTorch's stream (cpu/random.h); the checks are the
 * front ends' (ops/distributions.c). */
#include <math.h>

#include "core/random_math.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/random.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/distributions.h"

/* ---- bernoulli_(p tensor) ---- */

// out (any shape), p (out's shape); out = 1 with probability p, drawn as PyTorch's
// bernoulli_distribution of p's dtype: a float p compares with a 24-bit uniform, a double p
// with a 53-bit one
#define BERNOULLI_TENSOR(E, T, S)                                                            \
    static void bernoulli_f32_##S(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                        \
        mt_generator *g = ctx;                                                               \
        for (int64_t i = 0; i < n; i++) {                                                    \
            MT_AT(T, 0, i) = (T)(mt_draw_uniform_f32(g) < MT_GET(float, 1, i));              \
        }                                                                                    \
    }                                                                                        \
    static void bernoulli_f64_##S(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                        \
        mt_generator *g = ctx;                                                               \
        for (int64_t i = 0; i < n; i++) {                                                    \
            double u = mt_draw_uniform_f64(g);                                               \
            MT_AT(T, 0, i) = (T)mt_sample_bernoulli(u, MT_GET(double, 1, i));                \
        }                                                                                    \
    }
MT_DTYPES(BERNOULLI_TENSOR)

#define BY_SELF(f) {f##_b8, f##_i32, f##_i64, f##_f32, f##_f64}
static const mt_loop_fn bernoulli_loops[2][MT_NUM_DTYPES] = {
    BY_SELF(bernoulli_f32),
    BY_SELF(bernoulli_f64),
};
#undef BY_SELF

/* Runs loop(out, in) in out's memory order under g's lock. */
static mt_status
run_pair(mt_tensor *out, mt_tensor *in, mt_loop_fn loop, mt_generator *g)
{
    mt_tensor *ops[2] = {NULL, NULL};
    mt_iter it;
    mt_status st = mt_cpu_memory_order(out, in, &ops[0], &ops[1]);
    if (st == MT_OK && (st = mt_iter_build(&it, ops[0]->ndim, ops[0]->sizes, ops, 2)) == MT_OK) {
        mt_generator_lock(g);
        mt_iter_run(&it, loop, g);
        mt_generator_unlock(g);
    }
    mt_tensor_clear(&ops[0]);
    mt_tensor_clear(&ops[1]);
    return st;
}

mt_status
mt_cpu_bernoulli_tensor(mt_tensor *self, mt_tensor *p, mt_generator *g)
{
    return run_pair(self, p, bernoulli_loops[p->dtype == MT_FLOAT64][self->dtype], g);
}

/* ---- multinomial ---- */

/* PyTorch's multinomial_with_replacement: per row, the cumulative distribution in self's
 * dtype, normalised, its last entry set to 1; each sample the first bucket whose cumulative
 * value is not below a uniform double. The search halves the range without a branch (a
 * conditional move per step): the uniform draws make its branches unpredictable, and
 * mispredicted ones cost most of a draw. */
#define MULTINOMIAL(T, S)                                                                        \
    static void multinomial_##S(const T *p, int64_t rows, int64_t n, int64_t row_stride,         \
                                int64_t stride, int64_t n_sample, mt_generator *g, int64_t *out, \
                                T *cum)                                                          \
    {                                                                                            \
        for (int64_t i = 0; i < rows; i++) {                                                     \
            const T *row = p + i * row_stride;                                                   \
            T sum = 0;                                                                           \
            for (int64_t j = 0; j < n; j++) {                                                    \
                sum += row[j * stride];                                                          \
                cum[j] = sum;                                                                    \
            }                                                                                    \
            for (int64_t j = 0; j < n; j++) {                                                    \
                cum[j] /= sum;                                                                   \
            }                                                                                    \
            cum[n - 1] = 1;                                                                      \
            for (int64_t s = 0; s < n_sample; s++) {                                             \
                double u = mt_draw_uniform_f64(g);                                               \
                const T *base = cum; /* the answer is in [base, base + len): cum[n-1] = 1 > u */ \
                for (int64_t len = n; len > 1; len -= len / 2) {                                 \
                    base = base[len / 2 - 1] < u ? base + len / 2 : base;                        \
                }                                                                                \
                out[i * n_sample + s] = base - cum;                                              \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    /* v = the lowest of p (NaN where one is), the highest (0 at least), the smallest row sum */ \
    static void summary_##S(const T *p, int64_t rows, int64_t n, int64_t row_stride,             \
                            int64_t stride, double *v)                                           \
    {                                                                                            \
        double lo = INFINITY, hi = 0, low_sum = INFINITY; /* no category: a zero sum */          \
        bool nan = false;                                                                        \
        for (int64_t i = 0; i < rows; i++) {                                                     \
            double sum = 0;                                                                      \
            for (int64_t j = 0; j < n; j++) {                                                    \
                double x = p[i * row_stride + j * stride];                                       \
                nan |= x != x;                                                                   \
                lo = x < lo ? x : lo;                                                            \
                hi = x > hi ? x : hi;                                                            \
                sum += x;                                                                        \
            }                                                                                    \
            low_sum = sum < low_sum ? sum : low_sum;                                             \
        }                                                                                        \
        v[0] = nan ? NAN : lo;                                                                   \
        v[1] = nan ? NAN : hi;                                                                   \
        v[2] = low_sum;                                                                          \
    }
MULTINOMIAL(float, f32)
MULTINOMIAL(double, f64)

// self (n) or (rows, n) of checked probabilities, result (n_sample) or (rows, n_sample) int64
// contiguous; result = n_sample draws per row, with replacement
static mt_status
draws_with_replacement(mt_tensor *self, int64_t n_sample, mt_generator *g, mt_tensor *result)
{
    int64_t n = self->sizes[self->ndim - 1], rows = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t stride = self->strides[self->ndim - 1],
            row_stride = self->ndim == 2 ? self->strides[0] : 0;
    mt_tensor *cum; /* a row's cumulative distribution: a workspace */
    mt_status st = mt_tensor_empty(1, &n, self->dtype, MT_DEVICE_CPU, &cum);
    if (st) {
        return st;
    }
    const void *p = mt_tensor_data(self);
    int64_t *out = (int64_t *)mt_tensor_data(result);
    mt_generator_lock(g);
    if (self->dtype == MT_FLOAT32) {
        multinomial_f32(p, rows, n, row_stride, stride, n_sample, g, out,
                        (float *)mt_tensor_data(cum));
    } else {
        multinomial_f64(p, rows, n, row_stride, stride, n_sample, g, out,
                        (double *)mt_tensor_data(cum));
    }
    mt_generator_unlock(g);
    mt_tensor_release(cum);
    return MT_OK;
}

// self (n) or (rows, n) probabilities (not empty); v as summary_f32's
static void
summary(const mt_tensor *self, double v[3])
{
    int64_t n = self->sizes[self->ndim - 1], rows = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t stride = self->strides[self->ndim - 1],
            row_stride = self->ndim == 2 ? self->strides[0] : 0;
    const void *p = mt_tensor_data(self);
    if (self->dtype == MT_FLOAT32) {
        summary_f32(p, rows, n, row_stride, stride, v);
    } else {
        summary_f64(p, rows, n, row_stride, stride, v);
    }
}

static const mt_multinomial_device cpu_multinomial = {"cpu", draws_with_replacement, summary};

// self (n) or (rows, n) probabilities; out (num_samples) or (rows, num_samples) indices
mt_status
mt_cpu_multinomial(mt_args *a)
{
    return mt_multinomial_with(a, &cpu_multinomial);
}

/* ---- poisson ---- */

/* A Poisson draw of lambda on g's stream (core/random_math.h's methods); a rate of 0 draws
 * nothing, as PyTorch's. The count is an int64 as PyTorch's, which a rate from 2^63 on (or inf)
 * leaves undefined (INT64_MIN on x86-64, as PyTorch gives). */
static int64_t
sample_poisson(double lambda, mt_generator *g)
{
    const mt_poisson_rate p = mt_poisson_rate_of(lambda);
    if (p.rejection) {
        for (;;) {
            const double u = mt_draw_uniform_f64(g);
            const double v = mt_draw_uniform_f64(g);
            bool accepted;
            const double k = mt_sample_poisson(&p, u, v, &accepted);
            if (accepted) {
                return (int64_t)k;
            }
        }
    }
    if (lambda == 0) {
        return 0;
    }
    double prod = 1.0;
    for (int64_t x = 0;; x++) {
        prod *= mt_draw_uniform_f64(g);
        if (!(prod > p.enlam)) {
            return x;
        }
    }
}

// out (any shape), rates (out's shape); out = a Poisson draw of each rate
#define POISSON(T, S)                                                                  \
    static void poisson_##S(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                  \
        for (int64_t i = 0; i < n; i++) {                                              \
            MT_AT(T, 0, i) = (T)sample_poisson((double)MT_GET(T, 1, i), ctx);          \
        }                                                                              \
    }
POISSON(float, f32)
POISSON(double, f64)

// self (any shape) rates; out (self's shape, contiguous) = a Poisson draw of each
mt_status
mt_cpu_poisson(mt_args *a)
{
    mt_tensor *self = a->t[0];
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st == MT_OK) {
        st = run_pair(a->out[0], self, self->dtype == MT_FLOAT32 ? poisson_f32 : poisson_f64, g);
    }
    return st;
}
