/* CPU kernels of the nn layers: embedding, one_hot, layer_norm and batch_norm (dropout's noise
 * is bernoulli_, in random.c). Statistics accumulate in double whatever the input's dtype; inputs are made
 * contiguous first, so the loops index plain arrays. */
#include <math.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/factory_args.h"
#include "ops/fails.h"
#include "ops/front.h"

/* t itself when contiguous and of dtype dt, else a contiguous copy in dt. */
static mt_status
dense(mt_tensor *t, mt_dtype dt, mt_tensor **out)
{
    if (t->dtype == dt && mt_tensor_is_contiguous(t)) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    return mt_cpu_cast(t, dt, out);
}

/* ---- one_hot (embedding is an index kernel, index.c) ---- */

// self (*) int64 class indices, num_classes (-1: max + 1); out (*, num_classes) int64 of 0/1
mt_status
mt_cpu_one_hot(mt_args *a)
{
    mt_tensor *self = a->t[0], *idx = NULL;
    int64_t classes = a->plan->shape.classes, n = mt_tensor_numel(self);
    mt_status st = dense(self, MT_INT64, &idx);
    if (st) {
        return st;
    }
    const int64_t *ix = (const int64_t *)mt_tensor_data(idx);
    int64_t lo = 0, hi = -1;
    for (int64_t i = 0; i < n; i++) {
        lo = ix[i] < lo ? ix[i] : lo;
        hi = ix[i] > hi ? ix[i] : hi;
    }
    if (lo < 0) {
        st = mt_fail_one_hot_class(true);
        goto out_release;
    }
    if (classes == -1) {
        classes = hi + 1;
    } else if (hi >= classes) {
        st = mt_fail_one_hot_class(false);
        goto out_release;
    }
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[self->ndim] = classes;
    if ((st = mt_check_sizes(self->ndim + 1, shape)) ||
        (st = mt_tensor_empty(self->ndim + 1, shape, MT_INT64, mt_tensor_device(self),
                              &a->out[0]))) {
        goto out_release;
    }
    int64_t *out = (int64_t *)mt_tensor_data(a->out[0]);
    memset(out, 0, sizeof(int64_t) * (size_t)(n * classes));
    for (int64_t i = 0; i < n; i++) {
        out[i * classes + ix[i]] = 1;
    }
out_release:
    mt_tensor_clear(&idx);
    return st;
}

/* ---- normalisation ---- */

/* Per-feature scale and shift, as double arrays of length n: weight and bias, or 1 and 0. */
typedef struct affine {
    mt_tensor *w, *b; /* contiguous float64 copies, owned, or NULL */
} affine;

static mt_status
affine_of(mt_tensor *weight, mt_tensor *bias, affine *af)
{
    af->w = af->b = NULL;
    mt_status st = weight ? mt_cpu_cast(weight, MT_FLOAT64, &af->w) : MT_OK;
    if (st == MT_OK && bias) {
        st = mt_cpu_cast(bias, MT_FLOAT64, &af->b);
    }
    return st;
}

static void
affine_release(affine *af)
{
    mt_tensor_clear(&af->w);
    mt_tensor_clear(&af->b);
}

static inline double
scale_at(const affine *af, int64_t j)
{
    return af->w ? ((const double *)mt_tensor_data(af->w))[j] : 1.0;
}

static inline double
shift_at(const affine *af, int64_t j)
{
    return af->b ? ((const double *)mt_tensor_data(af->b))[j] : 0.0;
}

// x, y (rows, n); y = (x - mean) / sqrt(var + eps) * w + b, mean and biased var per row
#define LAYER_NORM_LOOP(name, T)                                                              \
    static void name(const void *xv, void *yv, int64_t rows, int64_t n, double eps,           \
                     const affine *af)                                                        \
    {                                                                                         \
        for (int64_t r = 0; r < rows; r++) {                                                  \
            const T *x = (const T *)xv + r * n;                                               \
            T *y = (T *)yv + r * n;                                                           \
            double mean = 0, var = 0;                                                         \
            for (int64_t j = 0; j < n; j++) {                                                 \
                mean += x[j];                                                                 \
            }                                                                                 \
            mean /= (double)n;                                                                \
            for (int64_t j = 0; j < n; j++) {                                                 \
                var += ((double)x[j] - mean) * ((double)x[j] - mean);                         \
            }                                                                                 \
            const double rstd = 1.0 / sqrt(var / (double)n + eps);                            \
            for (int64_t j = 0; j < n; j++) {                                                 \
                y[j] = (T)(((double)x[j] - mean) * rstd * scale_at(af, j) + shift_at(af, j)); \
            }                                                                                 \
        }                                                                                     \
    }
LAYER_NORM_LOOP(layer_norm_f32, float)
LAYER_NORM_LOOP(layer_norm_f64, double)

// input (*, normalized_shape), weight and bias (normalized_shape) or NULL; out like input
mt_status
mt_cpu_layer_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *x = NULL;
    const int64_t n = a->plan->norm.n, rows = a->plan->norm.rows;
    const double eps = a->plan->norm.eps;
    mt_status st;
    affine af;
    if ((st = affine_of(a->t[1], a->t[2], &af)) || (st = dense(input, input->dtype, &x)) ||
        (st = mt_tensor_empty(input->ndim, input->sizes, input->dtype, mt_tensor_device(input),
                              &a->out[0]))) {
        goto out_release;
    }
    (input->dtype == MT_FLOAT32 ? layer_norm_f32 : layer_norm_f64)(mt_tensor_data(x),
                                                                   mt_tensor_data(a->out[0]), rows,
                                                                   n, eps, &af);
out_release:
    affine_release(&af);
    mt_tensor_clear(&x);
    return st;
}

/* x, y (outer, C, inner); y = (x - mean[c]) * rstd[c] * w[c] + b[c]. With stats NULL the
 * mean and biased variance of each channel are computed into mean/var first. */
#define BATCH_NORM_LOOP(name, T)                                                            \
    static void name(const void *xv, void *yv, int64_t outer, int64_t C, int64_t inner,     \
                     double *mean, double *var, bool compute, double eps, const affine *af) \
    {                                                                                       \
        const T *x = (const T *)xv;                                                         \
        T *y = (T *)yv;                                                                     \
        const double count = (double)(outer * inner);                                       \
        for (int64_t c = 0; c < C; c++) {                                                   \
            if (compute) {                                                                  \
                double s = 0, ss = 0;                                                       \
                for (int64_t o = 0; o < outer; o++) {                                       \
                    const T *r = x + (o * C + c) * inner;                                   \
                    for (int64_t i = 0; i < inner; i++) {                                   \
                        s += r[i];                                                          \
                    }                                                                       \
                }                                                                           \
                mean[c] = s / count;                                                        \
                for (int64_t o = 0; o < outer; o++) {                                       \
                    const T *r = x + (o * C + c) * inner;                                   \
                    for (int64_t i = 0; i < inner; i++) {                                   \
                        ss += ((double)r[i] - mean[c]) * ((double)r[i] - mean[c]);          \
                    }                                                                       \
                }                                                                           \
                var[c] = ss / count;                                                        \
            }                                                                               \
            const double k = scale_at(af, c) / sqrt(var[c] + eps), m = mean[c];             \
            const double b = shift_at(af, c);                                               \
            for (int64_t o = 0; o < outer; o++) {                                           \
                const T *r = x + (o * C + c) * inner;                                       \
                T *q = y + (o * C + c) * inner;                                             \
                for (int64_t i = 0; i < inner; i++) {                                       \
                    q[i] = (T)(((double)r[i] - m) * k + b);                                 \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
BATCH_NORM_LOOP(batch_norm_f32, float)
BATCH_NORM_LOOP(batch_norm_f64, double)

/* running = (1 - momentum) * running + momentum * stat, written back into running's dtype. */
static mt_status
update_running(mt_tensor *running, const double *stat, double momentum, double correction)
{
    mt_tensor *r = NULL;
    mt_status st = mt_cpu_cast(running, MT_FLOAT64, &r);
    if (st) {
        return st;
    }
    double *v = (double *)mt_tensor_data(r);
    for (int64_t c = 0; c < mt_tensor_numel(r); c++) {
        v[c] = (1 - momentum) * v[c] + momentum * stat[c] * correction;
    }
    st = mt_cpu_copy_into(running, r);
    mt_tensor_bump_version(running);
    mt_tensor_release(r);
    return st;
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or NULL; out like input.
// Training normalises by the batch's statistics and moves the running ones towards them (the
// variance unbiased, as PyTorch); evaluation uses the running statistics.
mt_status
mt_cpu_batch_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *rm = a->t[3], *rv = a->t[4], *x = NULL, *stats = NULL;
    bool training = a->b[0];
    const mt_norm_plan *p = &a->plan->norm;
    const double eps = p->eps;
    const int64_t outer = p->outer, C = p->C, inner = p->inner;
    mt_status st;
    affine af;
    int64_t two[2] = {2, C};
    if ((st = affine_of(a->t[1], a->t[2], &af)) || (st = dense(input, input->dtype, &x)) ||
        (st = mt_tensor_empty(2, two, MT_FLOAT64, MT_DEVICE_CPU, &stats))) {
        goto out_release;
    }
    double *mean = (double *)mt_tensor_data(stats), *var = mean + C;
    if (!training) {
        mt_tensor *m64 = NULL, *v64 = NULL;
        if ((st = mt_cpu_cast(rm, MT_FLOAT64, &m64)) == MT_OK &&
            (st = mt_cpu_cast(rv, MT_FLOAT64, &v64)) == MT_OK) {
            memcpy(mean, mt_tensor_data(m64), sizeof(double) * (size_t)C);
            memcpy(var, mt_tensor_data(v64), sizeof(double) * (size_t)C);
        }
        mt_tensor_clear(&m64);
        mt_tensor_clear(&v64);
        if (st) {
            goto out_release;
        }
    }
    if ((st = mt_tensor_empty(input->ndim, input->sizes, input->dtype, mt_tensor_device(input),
                              &a->out[0]))) {
        goto out_release;
    }
    (input->dtype == MT_FLOAT32 ? batch_norm_f32
                                : batch_norm_f64)(mt_tensor_data(x), mt_tensor_data(a->out[0]),
                                                  outer, C, inner, mean, var, training, eps, &af);
    if (training &&
        (st = mt_batch_norm_update_running(a, mean, var, outer * inner, update_running))) {
        mt_tensor_clear(&a->out[0]);
    }
out_release:
    affine_release(&af);
    mt_tensor_clear(&x);
    mt_tensor_clear(&stats);
    return st;
}
