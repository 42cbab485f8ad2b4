/* The two-pass reductions on the CPU: var and std about the mean, logsumexp about the max. The
 * first pass is one of reduce.c's accumulators (mt_cpu_mean_acc, mt_cpu_amax_acc); the second
 * sums a term of each element about its centre (about(), below) on reduce.c's threads
 * (mt_cpu_run_sum). Only computes: the front end checked the arguments. */
#include <math.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/reduce.h"
#include "cpu/vmath.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

// acc (stride 0 on reduced dims), x, c (a float64 centre, broadcast like acc); acc += (x - c)^2
#define DEVIATION_LOOP(name, T)                                                                \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                          \
        (void)ctx;                                                                             \
        if (strides[0] == 0 && strides[1] == sizeof(T) && strides[2] == 0) {                   \
            /* a contiguous run about one centre: a vectorised sum */                          \
            const T *xs = (const T *)data[1];                                                  \
            const double c = *(const double *)data[2];                                         \
            double s = 0;                                                                      \
            _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++)               \
            {                                                                                  \
                const double d = (double)xs[i] - c;                                            \
                s += d * d;                                                                    \
            }                                                                                  \
            *(double *)data[0] += s;                                                           \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            const double d = (double)MT_AT(T, 1, i) - MT_AT(double, 2, i);                     \
            MT_AT(double, 0, i) += d * d;                                                      \
        }                                                                                      \
    }
// acc, x, c as above; acc += exp(x - c)
#define EXP_SUM_LOOP(name, T)                                                         \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)       \
    {                                                                                 \
        (void)ctx;                                                                    \
        for (int64_t i = 0; i < n; i++) {                                             \
            MT_AT(double, 0, i) += exp((double)MT_AT(T, 1, i) - MT_AT(double, 2, i)); \
        }                                                                             \
    }
DEVIATION_LOOP(deviation_f32, float)
DEVIATION_LOOP(deviation_f64, double)
EXP_SUM_LOOP(exp_sum_f32_strided, float)
EXP_SUM_LOOP(exp_sum_f64, double)

// acc, x, c as above; acc += exp(x - c): a contiguous float run about one centre (a row of
// logsumexp along the last dim) takes vmath.h's vectorised exp in float (libm's exp in double,
// a call per element, took 3.3-3.8x PyTorch's time on rows of 512), summed in double; so does
// a contiguous run across the kept dims, each element with its own sum and centre (a row of
// x over the first dim of a row-major matrix: the sums of its columns; libm's exp took 2.7x
// PyTorch's time for (1024, 1024) over dim 0)
MT_SIMD_CLONES static void
exp_sum_f32(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    const float *xs = (const float *)data[1];
    if (strides[0] == 0 && strides[1] == sizeof(float) && strides[2] == 0) {
        const float c = (float)*(const double *)data[2]; /* a float's max, or 0: exact */
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < n; i++) {
            s += mt_vexp_f32(xs[i] - c);
        }
        *(double *)data[0] += s;
        return;
    }
    if (strides[0] == sizeof(double) && strides[1] == sizeof(float) &&
        strides[2] == sizeof(double)) {
        double *restrict acc = (double *)data[0];
        const double *cs = (const double *)data[2];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) {
            acc[i] += mt_vexp_f32(xs[i] - (float)cs[i]);
        }
        return;
    }
    exp_sum_f32_strided(data, strides, n, ctx);
}

/* *acc = sum over reduce[] of loop(x, centre), float64 of centre's shape (an accumulator). */
static mt_status
about(mt_tensor *x, mt_tensor *centre, mt_loop_fn loop, mt_tensor **acc)
{
    mt_status st = mt_tensor_empty(centre->ndim, centre->sizes, MT_FLOAT64, mt_tensor_device(x),
                                   acc);
    if (st) {
        return st;
    }
    mt_cpu_fill(*acc, mt_scalar_int(0));
    mt_iter it;
    mt_tensor *ops[3] = {*acc, x, centre};
    st = mt_iter_build(&it, x->ndim, x->sizes, ops, 3);
    if (st) {
        mt_tensor_clear(acc);
        return st;
    }
    st = mt_cpu_run_sum(&it, *acc, loop);
    if (st) {
        mt_tensor_clear(acc);
    }
    return st;
}

static double
square_root(double x, double unused)
{
    (void)unused;
    return sqrt(x);
}

// self (float), dims; out = sum (x - mean)^2 / max(0, N - correction) for var, its root for
// std (a->plan->op tells them apart)
mt_status
mt_cpu_moment(mt_args *a)
{
    const bool root_it = a->plan->op == MT_OP_std;
    mt_tensor *self = a->t[0], *mean = NULL, *acc = NULL;
    const double correction = a->plan->reduce.p;
    const bool *reduce = a->plan->reduce.reduce;
    int64_t count;
    mt_status st = mt_cpu_mean_acc(self, reduce, &mean, &count);
    if (st) {
        return st;
    }
    st = about(self, mean, self->dtype == MT_FLOAT32 ? deviation_f32 : deviation_f64, &acc);
    if (st) {
        goto out_release;
    }
    double dof = (double)count - correction;
    mt_cpu_divide_double(acc, dof > 0 ? dof : 0.0);
    if (root_it) {
        mt_cpu_map_double(acc, square_root, 0);
    }
    st = mt_reduce_store(acc, a->out[0], mt_cpu_copy_into);
out_release:
    mt_tensor_clear(&acc);
    mt_tensor_clear(&mean);
    return st;
}

static double
finite_or_zero(double x, double unused)
{
    (void)unused;
    return isinf(x) ? 0.0 : x;
}

static double
log_plus(double x, double unused)
{
    (void)unused;
    return log(x);
}

// self, dims; out = log(sum exp(self)) over dims, computed as m + log(sum exp(self - m))
mt_status
mt_cpu_logsumexp(mt_args *a)
{
    mt_tensor *self = a->t[0], *in = self, *cast = NULL, *m = NULL, *centre = NULL, *acc = NULL;
    mt_dtype dt = a->plan->reduce.out_dt;
    const bool *reduce = a->plan->reduce.reduce;
    mt_status st = MT_OK;
    if (dt != self->dtype) {
        st = mt_cpu_cast(self, dt, &cast);
        if (st) {
            return st;
        }
        in = cast;
    }
    st = mt_cpu_amax_acc(in, reduce, dt, &m);
    if (st) {
        goto out_release;
    }
    /* An infinite max (a row of -inf, or one holding +inf) centres at 0, so that exp sees
     * -inf - 0 and inf - 0 rather than inf - inf. */
    st = mt_cpu_cast(m, MT_FLOAT64, &centre);
    if (st) {
        goto out_release;
    }
    mt_cpu_map_double(centre, finite_or_zero, 0);
    st = about(in, centre, dt == MT_FLOAT32 ? exp_sum_f32 : exp_sum_f64, &acc);
    if (st) {
        goto out_release;
    }
    mt_cpu_map_double(acc, log_plus, 0);
    double *v = (double *)mt_tensor_data(acc);
    const double *c = (const double *)mt_tensor_data(centre);
    for (int64_t i = 0, n = mt_tensor_numel(acc); i < n; i++) {
        v[i] += c[i];
    }
    st = mt_reduce_store(acc, a->out[0], mt_cpu_copy_into);
out_release:
    mt_tensor_clear(&acc);
    mt_tensor_clear(&centre);
    mt_tensor_clear(&m);
    mt_tensor_clear(&cast);
    return st;
}
