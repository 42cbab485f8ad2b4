/* The backward kernels of nn.c's layers and of nll_loss (loss.c): layer_norm and batch_norm
 * (gradients of the input, weight and bias in one pass, the statistics recomputed from the
 * saved input), embedding (rows of the gradient added into the weight's), nll_loss.
 *
 * As the forwards, they make their inputs contiguous, accumulate in double and split rows
 * (channels) among the threads. These ops are
 * callable from Python (_C): their front ends (ops/norm_checks.c, nn_checks.c) check shapes and
 * dtypes; an index or a target out of range is seen here (ops/fails.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"

static void
release_all(mt_tensor **t, int n)
{
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&t[k]);
    }
}

/* The float64 array of an optional per-feature tensor (NULL when absent; its size checked by
 * the op's spec). */
static mt_status
features(mt_tensor *p, mt_tensor **out)
{
    *out = NULL;
    return p ? mt_cpu_cast(p, MT_FLOAT64, out) : MT_OK;
}

/* Writes the double values v[0..n) into the new tensor *out of the given shape and dtype. */
static mt_status
from_doubles(const double *v, int ndim, const int64_t *sizes, mt_dtype dt, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(ndim, sizes, dt, MT_DEVICE_CPU, out);
    int64_t n = st ? 0 : mt_tensor_numel(*out);
    for (int64_t i = 0; i < n; i++) {
        if (dt == MT_FLOAT32) {
            ((float *)mt_tensor_data(*out))[i] = (float)v[i];
        } else {
            ((double *)mt_tensor_data(*out))[i] = v[i];
        }
    }
    return st;
}

/* The results of a normalisation's backward: *gx, and the gradients of weight and bias from
 * acc (each shaped `sizes`, one after the other), in gx's dtype. Takes *gx on success. */
static mt_status
three_grads(mt_args *a, mt_tensor **gx, const double *acc, int ndim, const int64_t *sizes)
{
    int64_t n = mt_numel(ndim, sizes);
    mt_status st;
    if ((st = from_doubles(acc, ndim, sizes, (*gx)->dtype, &a->out[1])) ||
        (st = from_doubles(acc + n, ndim, sizes, (*gx)->dtype, &a->out[2]))) {
        mt_tensor_clear(&a->out[1]);
        return st;
    }
    a->out[0] = *gx;
    *gx = NULL;
    return MT_OK;
}

/* element i of a float32 or float64 array */
static inline double
at(const void *p, mt_dtype dt, int64_t i)
{
    return dt == MT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static inline void
put(void *p, mt_dtype dt, int64_t i, double v)
{
    if (dt == MT_FLOAT32) {
        ((float *)p)[i] = (float)v;
    } else {
        ((double *)p)[i] = v;
    }
}

/* ---- layer_norm ---- */

// grad_out g, x, gx (rows, n) of T, w (n) or NULL; gw, gb (n) accumulated. With the row's mean
// and rstd (recomputed, in double), xh = (x - mean) * rstd and dy = g * w:
//   gx = rstd * (dy - mean(dy) - xh * mean(dy * xh)),  gw += g * xh,  gb += g
#define LAYER_NORM_BACK_ROW(name, T)                                                          \
    MT_SIMD_CLONES static void name(const T *restrict g, const T *restrict x, T *restrict gx, \
                                    int64_t n, double eps, const double *w, double *gw,       \
                                    double *gb)                                               \
    {                                                                                         \
        double mean = 0, var = 0, sdy = 0, sdyx = 0;                                          \
        _Pragma("omp simd reduction(+ : mean)") for (int64_t j = 0; j < n; j++)               \
        {                                                                                     \
            mean += (double)x[j];                                                             \
        }                                                                                     \
        mean /= (double)n;                                                                    \
        _Pragma("omp simd reduction(+ : var)") for (int64_t j = 0; j < n; j++)                \
        {                                                                                     \
            const double d = (double)x[j] - mean;                                             \
            var += d * d;                                                                     \
        }                                                                                     \
        const double rstd = 1.0 / sqrt(var / (double)n + eps);                                \
        _Pragma("omp simd reduction(+ : sdy, sdyx)") for (int64_t j = 0; j < n; j++)          \
        {                                                                                     \
            const double xh = ((double)x[j] - mean) * rstd, dy = g[j] * (w ? w[j] : 1.0);     \
            sdy += dy;                                                                        \
            sdyx += dy * xh;                                                                  \
            gw[j] += g[j] * xh;                                                               \
            gb[j] += g[j];                                                                    \
        }                                                                                     \
        sdy /= (double)n;                                                                     \
        sdyx /= (double)n;                                                                    \
        _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                   \
        {                                                                                     \
            const double xh = ((double)x[j] - mean) * rstd, dy = g[j] * (w ? w[j] : 1.0);     \
            gx[j] = (T)(rstd * (dy - sdy - xh * sdyx));                                       \
        }                                                                                     \
    }
LAYER_NORM_BACK_ROW(layer_norm_back_f32, float)
LAYER_NORM_BACK_ROW(layer_norm_back_f64, double)

// grad_out, x, gx (rows, n) of dtype dt, w (n) or NULL; gw, gb (n) the sums over the rows. The
// rows are split among `parts` threads, each summing gw and gb into its own slice of acc
// (parts * 2n doubles, zeroed), added up at the end.
static void
layer_norm_back(const void *gov, const void *xv, void *gxv, mt_dtype dt, int64_t rows, int64_t n,
                double eps, const double *w, double *gw, double *gb, double *acc, int parts)
{
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        double *pw = acc + 2 * n * p, *pb = pw + n;
        for (int64_t r = rows * p / parts; r < rows * (p + 1) / parts; r++) {
            if (dt == MT_FLOAT32) {
                layer_norm_back_f32((const float *)gov + r * n, (const float *)xv + r * n,
                                    (float *)gxv + r * n, n, eps, w, pw, pb);
            } else {
                layer_norm_back_f64((const double *)gov + r * n, (const double *)xv + r * n,
                                    (double *)gxv + r * n, n, eps, w, pw, pb);
            }
        }
    }
    for (int p = 0; p < parts; p++) {
        for (int64_t j = 0; j < n; j++) {
            gw[j] += acc[2 * n * p + j];
            gb[j] += acc[2 * n * p + n + j];
        }
    }
}

// grad_out, input (*, normalized_shape), weight (normalized_shape) or NULL; out: the gradients
// of input, weight and bias (the last two shaped normalized_shape)
mt_status
mt_cpu_layer_norm_backward(mt_args *a)
{
    mt_tensor *t[4] = {NULL}; /* grad_out, input, weight as float64, the gradient of input */
    mt_tensor *input = a->t[1];
    const mt_intlist *shape = &a->l[0];
    const double eps = a->plan->norm.eps;
    const int64_t n = a->plan->norm.n, rows = a->plan->norm.rows;
    const int parts = mt_parallel_parts(rows * n, 32768);
    mt_status st;
    mt_dtype dt = a->t[0]->dtype;
    /* gw, gb, then each thread's partial sums of them */
    double *acc = calloc((size_t)(2 * n * (parts + 1) + 1), sizeof(double));
    if (acc == NULL) {
        return mt_fail(MT_ENOMEM, "layer_norm_backward: out of memory");
    }
    if ((st = mt_norm_backward_inputs(a, 1, mt_cpu_dense, t)) ||
        (st = mt_tensor_empty(input->ndim, input->sizes, dt, MT_DEVICE_CPU, &t[3]))) {
        goto out_release;
    }
    layer_norm_back(mt_tensor_data(t[0]), mt_tensor_data(t[1]), mt_tensor_data(t[3]), dt, rows, n,
                    eps, t[2] ? (const double *)mt_tensor_data(t[2]) : NULL, acc, acc + n,
                    acc + 2 * n, parts);
    st = three_grads(a, &t[3], acc, shape->n, shape->v);
out_release:
    free(acc);
    release_all(t, 4);
    return st;
}

/* ---- batch_norm ---- */

// grad_out g, x, gx (outer, C, inner) of T, channel c; w, mean, var (C) (mean, var: NULL in
// training: the batch's); gw, gb (C). With xh = (x - mean) * rstd and M = outer * inner: in
// training gx = w * rstd * (g - sum(g) / M - xh * sum(g * xh) / M), else gx = g * w * rstd.
// Sums in double.
#define BATCH_NORM_BACK(name, T)                                                                  \
    MT_SIMD_CLONES static void name(const T *g, const T *x, T *gx, int64_t outer, int64_t C,      \
                                    int64_t inner, int64_t c, double eps, const double *w,        \
                                    const double *rm, const double *rv, double *gw, double *gb)   \
    {                                                                                             \
        const double count = (double)(outer * inner);                                             \
        double mean = 0, var = 0, sg = 0, sgx = 0;                                                \
        for (int64_t o = 0; rm == NULL && o < outer; o++) {                                       \
            const T *r = x + (o * C + c) * inner;                                                 \
            _Pragma("omp simd reduction(+ : mean)") for (int64_t i = 0; i < inner; i++)           \
            {                                                                                     \
                mean += (double)r[i];                                                             \
            }                                                                                     \
        }                                                                                         \
        mean = rm ? rm[c] : mean / count;                                                         \
        for (int64_t o = 0; rm == NULL && o < outer; o++) {                                       \
            const T *r = x + (o * C + c) * inner;                                                 \
            _Pragma("omp simd reduction(+ : var)") for (int64_t i = 0; i < inner; i++)            \
            {                                                                                     \
                const double d = (double)r[i] - mean;                                             \
                var += d * d;                                                                     \
            }                                                                                     \
        }                                                                                         \
        var = rm ? rv[c] : var / count;                                                           \
        const double rstd = 1.0 / sqrt(var + eps), k = (w ? w[c] : 1.0) * rstd;                   \
        for (int64_t o = 0; o < outer; o++) {                                                     \
            const T *r = x + (o * C + c) * inner, *q = g + (o * C + c) * inner;                   \
            _Pragma("omp simd reduction(+ : sg, sgx)") for (int64_t i = 0; i < inner; i++)        \
            {                                                                                     \
                sg += (double)q[i];                                                               \
                sgx += (double)q[i] * ((double)r[i] - mean) * rstd;                               \
            }                                                                                     \
        }                                                                                         \
        gw[c] = sgx;                                                                              \
        gb[c] = sg;                                                                               \
        /* training: gx = k * (g - sa - xh * sb) = k * g - k * rstd * sb * (x - mean) - k * sa, \
         * sa and sb the means of g and g * xh (0 when evaluating) */ \
        const double sa = rm ? 0.0 : sg / count, sb = rm ? 0.0 : sgx / count;                     \
        const T kg = (T)k, kx = (T)(k * rstd * sb), k0 = (T)(k * sa), m = (T)mean;                \
        for (int64_t o = 0; o < outer; o++) {                                                     \
            const T *r = x + (o * C + c) * inner, *q = g + (o * C + c) * inner;                   \
            T *d = gx + (o * C + c) * inner;                                                      \
            _Pragma("omp simd") for (int64_t i = 0; i < inner; i++)                               \
            {                                                                                     \
                d[i] = kg * q[i] - kx * (r[i] - m) - k0;                                          \
            }                                                                                     \
        }                                                                                         \
    }
BATCH_NORM_BACK(batch_norm_back_f32, float)
BATCH_NORM_BACK(batch_norm_back_f64, double)

// grad_out, input (N, C, *), weight, running_mean, running_var (C) or NULL (the running
// statistics are read when not training); out: the gradients of input, weight and bias (C)
mt_status
mt_cpu_batch_norm_backward(mt_args *a)
{
    mt_tensor *t[6] = {NULL}; /* grad_out, input, weight, mean, var, the gradient of input */
    mt_tensor *input = a->t[1];
    const mt_norm_plan *p = &a->plan->norm;
    const double eps = p->eps;
    int64_t outer = p->outer, C = p->C, inner = p->inner;
    mt_status st;
    mt_dtype dt = a->t[0]->dtype;
    double *acc = calloc((size_t)(2 * C + 1), sizeof(double));
    if (acc == NULL) {
        return mt_fail(MT_ENOMEM, "batch_norm_backward: out of memory");
    }
    if ((st = mt_norm_backward_inputs(a, a->b[0] ? 1 : 3, mt_cpu_dense, t)) ||
        (st = mt_tensor_empty(input->ndim, input->sizes, dt, MT_DEVICE_CPU, &t[5]))) {
        goto out_release;
    }
    const double *d[3];
    for (int k = 0; k < 3; k++) {
        d[k] = t[k + 2] ? (const double *)mt_tensor_data(t[k + 2]) : NULL;
    }
    const void *g = mt_tensor_data(t[0]), *x = mt_tensor_data(t[1]);
    void *gx = mt_tensor_data(t[5]);
    /* channels split among the threads (each writes its own gw[c], gb[c]) */
    const int parts = mt_parallel_parts(outer * C * inner, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        if (dt == MT_FLOAT32) {
            batch_norm_back_f32(g, x, gx, outer, C, inner, c, eps, d[0], d[1], d[2], acc, acc + C);
        } else {
            batch_norm_back_f64(g, x, gx, outer, C, inner, c, eps, d[0], d[1], d[2], acc, acc + C);
        }
    }
    st = three_grads(a, &t[5], acc, 1, &C);
out_release:
    free(acc);
    release_all(t, 6);
    return st;
}

/* ---- embedding ---- */

// grad_output (*, D), indices (*) int64 or int32; out (num_weights, D): row v is the sum of
// the gradient rows whose index is v (divided by v's count with scale_grad_by_freq), 0 for
// padding_idx
mt_status
mt_cpu_embedding_dense_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *indices = a->t[1], *g = NULL, *ix = NULL, *out = NULL;
    int64_t num_weights = a->i[0], padding_idx = a->i[1];
    bool scale = a->b[0];
    int64_t *counts = NULL;
    mt_status st;
    const int64_t n = a->plan->loss.n, dim = a->plan->loss.dim;
    mt_dtype dt = grad->dtype;
    int64_t sizes[2] = {num_weights, dim};
    if ((st = mt_cpu_dense(grad, dt, &g)) || (st = mt_cpu_dense(indices, MT_INT64, &ix)) ||
        (st = mt_tensor_empty(2, sizes, dt, MT_DEVICE_CPU, &out))) {
        goto out_release;
    }
    memset(mt_tensor_data(out), 0, (size_t)(num_weights * dim) * mt_dtype_size(dt));
    const int64_t *v = (const int64_t *)mt_tensor_data(ix);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= num_weights) {
            st = mt_fail_embedding_index();
            goto out_release;
        }
    }
    if (scale && (counts = calloc((size_t)num_weights + 1, sizeof(int64_t))) == NULL) {
        st = mt_fail(MT_ENOMEM, "embedding_dense_backward: out of memory");
        goto out_release;
    }
    for (int64_t i = 0; scale && i < n; i++) {
        counts[v[i]]++;
    }
    void *o = mt_tensor_data(out);
    const void *src = mt_tensor_data(g);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == padding_idx) {
            continue;
        }
        double k = scale ? 1.0 / (double)counts[v[i]] : 1.0;
        for (int64_t j = 0; j < dim; j++) {
            put(o, dt, v[i] * dim + j, at(o, dt, v[i] * dim + j) + k * at(src, dt, i * dim + j));
        }
    }
    a->out[0] = out;
    out = NULL;
out_release:
    free(counts);
    mt_tensor_clear(&g);
    mt_tensor_clear(&ix);
    mt_tensor_clear(&out);
    return st;
}

/* ---- nll_loss ---- */

// grad_output (scalar, or target's shape for reduction none), self (C) or (N, C, d1, ...),
// target (N, d1, ...), weight (C) or NULL; out (self's shape): -w[t] * grad at each target
// class (divided by the kept targets' total weight for the mean), 0 elsewhere
mt_status
mt_cpu_nll_loss_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *self = a->t[1], *target = a->t[2];
    mt_tensor *t[4] = {NULL}; /* grad_output, target, weight as float64, the gradient */
    int64_t reduction = a->i[0], ignore = a->i[1];
    const int64_t N = a->plan->loss.N, C = a->plan->loss.C, K = a->plan->loss.K;
    mt_status st;
    bool none = reduction == MT_REDUCTION_NONE;
    mt_dtype dt = grad->dtype;
    if ((st = mt_cpu_dense(grad, MT_FLOAT64, &t[0])) ||
        (st = mt_cpu_dense(target, MT_INT64, &t[1])) || (st = features(a->t[3], &t[2])) ||
        (st = mt_tensor_empty(self->ndim, self->sizes, dt, MT_DEVICE_CPU, &t[3]))) {
        goto out_release;
    }
    memset(mt_tensor_data(t[3]), 0, (size_t)mt_tensor_numel(t[3]) * mt_dtype_size(dt));
    const double *g = (const double *)mt_tensor_data(t[0]);
    const double *w = t[2] ? (const double *)mt_tensor_data(t[2]) : NULL;
    const int64_t *tg = (const int64_t *)mt_tensor_data(t[1]);
    double total = 0;
    for (int64_t e = 0; e < N * K; e++) {
        if (tg[e] == ignore) {
            continue;
        }
        if (tg[e] < 0 || tg[e] >= C) {
            st = mt_fail_nll_target(tg[e]);
            goto out_release;
        }
        total += w ? w[tg[e]] : 1.0;
    }
    double scale = reduction == MT_REDUCTION_MEAN ? 1.0 / total : 1.0;
    for (int64_t e = 0; e < N * K; e++) {
        if (tg[e] == ignore) {
            continue;
        }
        int64_t n = e / K, k = e % K;
        double v = -(w ? w[tg[e]] : 1.0) * (none ? g[e] : g[0] * scale);
        put(mt_tensor_data(t[3]), dt, (n * C + tg[e]) * K + k, v);
    }
    a->out[0] = t[3];
    t[3] = NULL;
out_release:
    release_all(t, 4);
    return st;
}
