/* CPU kernels of the nn layers: embedding, one_hot, layer_norm (and native_layer_norm, which
 * also returns the statistics) and batch_norm (dropout's noise
 * is bernoulli_, in random.c). Statistics accumulate in double whatever the input's dtype, the
 * normalised values are computed in it (as PyTorch's); inputs are made contiguous first (a
 * channels-last batch_norm's, channels-last), so the loops index plain arrays, and rows
 * (channels) are split among the threads. */
#include <math.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "cpu/norm_rows.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"
#include "ops/factory_args.h"
#include "ops/fails.h"
#include "ops/front.h"

/* ---- one_hot (embedding is an index kernel, index.c) ---- */

// self (*) int64 class indices, num_classes (-1: max + 1); out (*, num_classes) int64 of 0/1
mt_status
mt_cpu_one_hot(mt_args *a)
{
    mt_tensor *self = a->t[0], *idx = NULL;
    int64_t classes = a->plan->shape.classes, n = mt_tensor_numel(self);
    mt_status st = mt_cpu_dense(self, MT_INT64, &idx);
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
    if (a->out[0] == NULL && (st = mt_one_hot_result(a, classes))) {
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

/* The weight and bias of a normalisation in the input's dtype, contiguous (owned), or NULL. */
typedef struct affine {
    mt_tensor *w, *b;
} affine;

static mt_status
affine_of(mt_tensor *weight, mt_tensor *bias, mt_dtype dt, affine *af)
{
    af->w = af->b = NULL;
    mt_status st = weight ? mt_cpu_dense(weight, dt, &af->w) : MT_OK;
    if (st == MT_OK && bias) {
        st = mt_cpu_dense(bias, dt, &af->b);
    }
    return st;
}

static void
affine_release(affine *af)
{
    mt_tensor_clear(&af->w);
    mt_tensor_clear(&af->b);
}

/* Sums of a segment x[0..n), in double whatever T (a float row of 1e30s squares without
 * overflow): the values, and the squares of their distances to m. SUM_LANES partial sums, so
 * that the adds do not wait on one another: with one accumulator a row's sum was bound by the
 * add's latency, half of layer_norm's time. */
#define SUM_LANES 32
#define SEGMENT_SUMS(T, S)                                                   \
    static inline double sum_##S(const T *restrict x, int64_t n)             \
    {                                                                        \
        double acc[SUM_LANES] = {0}, s = 0;                                  \
        int64_t j = 0;                                                       \
        for (; j + SUM_LANES <= n; j += SUM_LANES) {                         \
            _Pragma("omp simd") for (int l = 0; l < SUM_LANES; l++)          \
            {                                                                \
                acc[l] += (double)x[j + l];                                  \
            }                                                                \
        }                                                                    \
        for (; j < n; j++) {                                                 \
            s += (double)x[j];                                               \
        }                                                                    \
        for (int l = 0; l < SUM_LANES; l++) {                                \
            s += acc[l];                                                     \
        }                                                                    \
        return s;                                                            \
    }                                                                        \
    static inline double sumsq_##S(const T *restrict x, int64_t n, double m) \
    {                                                                        \
        double acc[SUM_LANES] = {0}, s = 0;                                  \
        int64_t j = 0;                                                       \
        for (; j + SUM_LANES <= n; j += SUM_LANES) {                         \
            _Pragma("omp simd") for (int l = 0; l < SUM_LANES; l++)          \
            {                                                                \
                const double d = (double)x[j + l] - m;                       \
                acc[l] += d * d;                                             \
            }                                                                \
        }                                                                    \
        for (; j < n; j++) {                                                 \
            const double d = (double)x[j] - m;                               \
            s += d * d;                                                      \
        }                                                                    \
        for (int l = 0; l < SUM_LANES; l++) {                                \
            s += acc[l];                                                     \
        }                                                                    \
        return s;                                                            \
    }
SEGMENT_SUMS(float, f32)
SEGMENT_SUMS(double, f64)

/* sumsq_f32 summed in float, around m rounded to float (what layer_norm's output subtracts):
 * a float row's centred squares need no more, and take half the instructions of double's.
 * Where they overflow float (values beyond 1e19) or hold a NaN, sumsq_f32 again. */
static inline double
sumsq_f32_fast(const float *restrict x, int64_t n, double mean)
{
    float acc[SUM_LANES] = {0}, s = 0;
    const float m = (float)mean;
    int64_t j = 0;
    for (; j + SUM_LANES <= n; j += SUM_LANES) {
#pragma omp simd
        for (int l = 0; l < SUM_LANES; l++) {
            const float d = x[j + l] - m;
            acc[l] += d * d;
        }
    }
    for (; j < n; j++) {
        s += (x[j] - m) * (x[j] - m);
    }
    double total = s;
    for (int l = 0; l < SUM_LANES; l++) {
        total += acc[l];
    }
    return isfinite(total) ? total : sumsq_f32(x, n, mean);
}
static inline double
sumsq_f64_fast(const double *restrict x, int64_t n, double mean)
{
    return sumsq_f64(x, n, mean);
}

// x, y (n): one row, w, b (n) or NULL; y = (x - mean) * rstd * w + b, with mean and
// rstd = 1 / sqrt(biased var + eps) in double (two passes over the row, which is in cache),
// y in T; *mo, *ro (or NULL) get mean and rstd. (x - mean) before the scaling, so that a row
// of one element (or of equal values) gives exactly b. The loop is written once per presence
// of w and b, so that each vectorises without a test per element.
#define LAYER_NORM_ROW(name, T, S)                                                             \
    MT_SIMD_CLONES static void name(const T *restrict x, T *restrict y, int64_t n, double eps, \
                                    const T *restrict w, const T *restrict b, T *mo, T *ro)    \
    {                                                                                          \
        const double mean = sum_##S(x, n) / (double)n;                                         \
        const double rstd = 1.0 / sqrt(sumsq_##S##_fast(x, n, mean) / (double)n + eps);        \
        const T k = (T)rstd, m = (T)mean;                                                      \
        if (mo) {                                                                              \
            *mo = m;                                                                           \
            *ro = k;                                                                           \
        }                                                                                      \
        if (w && b) {                                                                          \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                \
            {                                                                                  \
                y[j] = (x[j] - m) * k * w[j] + b[j];                                           \
            }                                                                                  \
        } else if (w) {                                                                        \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                \
            {                                                                                  \
                y[j] = (x[j] - m) * k * w[j];                                                  \
            }                                                                                  \
        } else {                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                \
            {                                                                                  \
                y[j] = (x[j] - m) * k + (b ? b[j] : (T)0);                                     \
            }                                                                                  \
        }                                                                                      \
    }
LAYER_NORM_ROW(layer_norm_row_f32, float, f32)
LAYER_NORM_ROW(layer_norm_row_f64, double, f64)

/* data of an optional tensor */
static inline void *
data_or_null(const mt_tensor *t)
{
    return t ? mt_tensor_data(t) : NULL;
}

// layer_norm: input (*, normalized_shape), weight and bias (normalized_shape) or NULL; out like
// input. native_layer_norm (ops.def's CPU_AS(layer_norm) row) also: out[1], out[2] each row's
// mean and rstd (input's leading dims, then a 1 per normalized dim), in the input's dtype
mt_status
mt_cpu_layer_norm(mt_args *a)
{
    const bool stats = a->plan->op == MT_OP_native_layer_norm;
    mt_tensor *input = a->t[0], *x = NULL;
    const int64_t n = a->plan->norm.n, rows = a->plan->norm.rows;
    const double eps = a->plan->norm.eps;
    mt_status st;
    affine af;
    if ((st = affine_of(a->t[1], a->t[2], input->dtype, &af)) ||
        (st = mt_cpu_dense(input, input->dtype, &x))) {
        goto out_release;
    }
    const void *xd = mt_tensor_data(x), *w = data_or_null(af.w), *b = data_or_null(af.b);
    void *yd = mt_tensor_data(a->out[0]);
    void *md = stats ? mt_tensor_data(a->out[1]) : NULL,
         *rd = stats ? mt_tensor_data(a->out[2]) : NULL;
    const bool f32 = input->dtype == MT_FLOAT32;
    /* rows (*, n) split among the threads */
    const int parts = mt_parallel_parts(rows * n, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        if (f32) {
            layer_norm_row_f32((const float *)xd + r * n, (float *)yd + r * n, n, eps, w, b,
                               md ? (float *)md + r : NULL, md ? (float *)rd + r : NULL);
        } else {
            layer_norm_row_f64((const double *)xd + r * n, (double *)yd + r * n, n, eps, w, b,
                               md ? (double *)md + r : NULL, md ? (double *)rd + r : NULL);
        }
    }
out_release:
    affine_release(&af);
    mt_tensor_clear(&x);
    return st;
}

// x, y (outer, C, inner), channel c: y = (x - mean[c]) * k + b[c] in T, k = rstd[c] * w[c]
// (w, b (C) or NULL). With compute, the channel's mean and biased variance go into mean[c] and
// var[c] first (in double, two passes).
#define BATCH_NORM_CHANNEL(name, T, S)                                                         \
    MT_SIMD_CLONES static void name(const T *x, T *y, int64_t outer, int64_t C, int64_t inner, \
                                    int64_t c, double *mean, double *var, bool compute,        \
                                    double eps, const T *w, const T *b)                        \
    {                                                                                          \
        if (compute) {                                                                         \
            const double count = (double)(outer * inner);                                      \
            double s = 0, ss = 0;                                                              \
            for (int64_t o = 0; o < outer; o++) {                                              \
                s += sum_##S(x + (o * C + c) * inner, inner);                                  \
            }                                                                                  \
            mean[c] = s / count;                                                               \
            for (int64_t o = 0; o < outer; o++) {                                              \
                ss += sumsq_##S(x + (o * C + c) * inner, inner, mean[c]);                      \
            }                                                                                  \
            var[c] = ss / count;                                                               \
        }                                                                                      \
        const T k = (T)((w ? (double)w[c] : 1.0) / sqrt(var[c] + eps)), m = (T)mean[c];        \
        const T shift = b ? b[c] : (T)0;                                                       \
        for (int64_t o = 0; o < outer; o++) {                                                  \
            const T *r = x + (o * C + c) * inner;                                              \
            T *q = y + (o * C + c) * inner;                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < inner; i++)                            \
            {                                                                                  \
                q[i] = (r[i] - m) * k + shift;                                                 \
            }                                                                                  \
        }                                                                                      \
    }
BATCH_NORM_CHANNEL(batch_norm_channel_f32, float, f32)
BATCH_NORM_CHANNEL(batch_norm_channel_f64, double, f64)

/* The doubles batch_norm_cl needs beside the statistics for M rows of C channels: the blocks'
 * sums, K (C), the totals (4, C), then the coefficients (4, C) and their rounded copy. */
static int64_t
batch_norm_cl_scratch(int64_t M, int64_t C)
{
    return mt_bn_blocks(M) * 4 * C + 13 * C;
}

// x, y (M, C) the rows of a channels-last input and result (f32: float, else double); with
// compute, each channel's mean and biased variance into mean and var first, from the sums of
// its values shifted by its first one, K (mean = K + s / M, var = ss / M - (s / M)^2, which lose
// nothing to cancellation as BATCH_NORM_BACK's, nn_backward.c); sums: batch_norm_cl_scratch's
static void
batch_norm_cl(const void *x, void *y, int64_t M, int64_t C, bool f32, double *mean, double *var,
              bool compute, double eps, const void *w, const void *b, double *sums)
{
    double *K = sums + mt_bn_blocks(M) * 4 * C, *total = K + C, *apply = total + 4 * C;
    for (int64_t c = 0; compute && c < C; c++) { /* (an empty batch: sums of nothing, 0/0) */
        K[c] = M == 0 ? 0.0 : f32 ? (double)((const float *)x)[c] : ((const double *)x)[c];
    }
    if (compute) {
        mt_cpu_batch_norm_cl_sums(NULL, x, f32, M, C, K, sums, total);
    }
    for (int64_t c = 0; compute && c < C; c++) {
        const double shift = total[c] / (double)M, v = total[C + c] / (double)M - shift * shift;
        mean[c] = K[c] + shift;
        var[c] = v < 0 ? 0.0 : v; /* a hair below 0 from rounding (NaN stays NaN) */
    }
    /* y = (x - mean) * k + shift, k = w * rstd, as BATCH_NORM_CHANNEL's: coef {a, b, m, e} */
    double *coef = apply, *t = coef + 4 * C;
    for (int64_t c = 0; c < C; c++) {
        const double wc = w == NULL ? 1.0 : f32 ? ((const float *)w)[c] : ((const double *)w)[c];
        const double bc = b == NULL ? 0.0 : f32 ? ((const float *)b)[c] : ((const double *)b)[c];
        coef[c] = 0;
        coef[C + c] = wc / sqrt(var[c] + eps);
        coef[2 * C + c] = mean[c];
        coef[3 * C + c] = bc;
    }
    mt_cpu_batch_norm_cl_apply(NULL, x, y, f32, M, C, coef, t);
}


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
// variance unbiased, as PyTorch); evaluation uses the running statistics. A channels-last
// result (of a channels-last input) is computed over the rows (N*H*W, C) of both.
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
    const bool cl = mt_front_take_format(a->plan, a, 0);
    /* mean (C) and var (C), then a channels-last input's scratch: a workspace */
    const int64_t nstats = 2 * C + (cl ? batch_norm_cl_scratch(outer * inner, C) : 0);
    const mt_memory_format fmt = input->ndim == 5 ? MT_CHANNELS_LAST_3D : MT_CHANNELS_LAST;
    if ((st = affine_of(a->t[1], a->t[2], input->dtype, &af)) ||
        (st = cl ? mt_cpu_dense_format(input, fmt, &x) : mt_cpu_dense(input, input->dtype, &x)) ||
        (st = mt_tensor_empty(1, &nstats, MT_FLOAT64, MT_DEVICE_CPU, &stats))) {
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
    const void *xd = mt_tensor_data(x), *w = data_or_null(af.w), *b = data_or_null(af.b);
    void *yd = mt_tensor_data(a->out[0]);
    const bool f32 = input->dtype == MT_FLOAT32;
    if (cl) {
        batch_norm_cl(xd, yd, outer * inner, C, f32, mean, var, training, eps, w, b, var + C);
    } else {
        /* channels split among the threads */
        const int parts = mt_parallel_parts(outer * C * inner, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t c = 0; c < C; c++) {
            if (f32) {
                batch_norm_channel_f32(xd, yd, outer, C, inner, c, mean, var, training, eps, w, b);
            } else {
                batch_norm_channel_f64(xd, yd, outer, C, inner, c, mean, var, training, eps, w, b);
            }
        }
    }
    if (training) {
        st = mt_batch_norm_update_running(a, mean, var, outer * inner, update_running);
    }
out_release:
    affine_release(&af);
    mt_tensor_clear(&x);
    mt_tensor_clear(&stats);
    return st;
}
