/* The statistics kernels on the CPU: histc, histogram (with bin edges), bincount,
 * searchsorted, cummax/cummin and unique along a dim. The checks are the front ends'
 * (ops/stats_checks.c); these only compute, on dense copies of their inputs.
 *
 * Values are compared as PyTorch compares them: floats as doubles (exact for both float
 * dtypes), integers and bools as int64. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/copy.h"
#include "dispatch/kernels.h"
#include "ops/plans.h"
#include "ops/stats.h"

/* element i of a dense buffer of dtype dt, as a double or as an int64 */
static double
load_f(mt_dtype dt, const char *p, int64_t i)
{
    switch (dt) {
    case MT_FLOAT32:
        return ((const float *)p)[i];
    case MT_FLOAT64:
        return ((const double *)p)[i];
    case MT_INT32:
        return ((const int32_t *)p)[i];
    case MT_INT64:
        return (double)((const int64_t *)p)[i];
    default:
        return ((const uint8_t *)p)[i] != 0;
    }
}

static int64_t
load_i(mt_dtype dt, const char *p, int64_t i)
{
    switch (dt) {
    case MT_INT32:
        return ((const int32_t *)p)[i];
    case MT_INT64:
        return ((const int64_t *)p)[i];
    case MT_BOOL:
        return ((const uint8_t *)p)[i] != 0;
    default:
        return (int64_t)load_f(dt, p, i);
    }
}

/* a dense view of t: (outer, n, inner) around dim */
static void
around(const mt_tensor *t, int dim, int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = *inner = 1;
    *n = t->ndim ? t->sizes[dim] : 1;
    for (int d = 0; d < t->ndim; d++) {
        *outer *= d < dim ? t->sizes[d] : 1;
        *inner *= d > dim ? t->sizes[d] : 1;
    }
}

/* ---- histc, histogram ---- */

/* x (n) in [lo, hi], out (bins) += 1 for each x's bin: (x - lo) * bins / (hi - lo), in T as
 * PyTorch computes it, the last bin closed on the right */
#define HISTC(T, S)                                                                      \
    static void histc_##S(const void *xv, int64_t n, double lo, double hi, int64_t bins, \
                          void *outv)                                                    \
    {                                                                                    \
        const T *x = (const T *)xv, l = (T)lo, h = (T)hi;                                \
        T *out = (T *)outv;                                                              \
        for (int64_t i = 0; i < n; i++) {                                                \
            if (!(x[i] >= l && x[i] <= h)) {                                             \
                continue;                                                                \
            }                                                                            \
            int64_t pos = (int64_t)((x[i] - l) * (T)bins / (h - l));                     \
            pos = pos >= bins ? bins - 1 : pos < 0 ? 0 : pos;                            \
            out[pos] += 1;                                                               \
        }                                                                                \
    }
HISTC(float, f32)
HISTC(double, f64)

// self (any shape); out (bins): how many of self's elements fall in each of bins equal
// intervals of [min, max] (self's range when min == max); elements outside are left out
mt_status
mt_cpu_histc(mt_args *a)
{
    mt_tensor *self = a->t[0], *x = NULL;
    const int64_t bins = a->i[0];
    double lo, hi;
    mt_status st = mt_histc_range(self, a->s[0], a->s[1], &lo, &hi);
    if (st || (st = mt_cpu_dense(self, self->dtype, &x))) {
        return st;
    }
    memset(mt_tensor_data(a->out[0]), 0, (size_t)bins * mt_dtype_size(self->dtype));
    (self->dtype == MT_FLOAT32 ? histc_f32 : histc_f64)(mt_tensor_data(x), mt_tensor_numel(x), lo,
                                                        hi, bins, mt_tensor_data(a->out[0]));
    mt_tensor_release(x);
    return st;
}

/* x (n), weights (n) or NULL, edges (ne); hist (ne - 1) += the weight of each x in [edges[0],
 * edges[ne - 1]], in the bin whose edges enclose it (the last closed on the right); with density
 * hist / (sum(hist) * the bin's width) */
#define HISTOGRAM(T, S)                                                                  \
    static void histogram_##S(const void *xv, const void *wv, int64_t n, const void *ev, \
                              int64_t ne, bool density, void *hv)                        \
    {                                                                                    \
        const T *x = (const T *)xv, *w = (const T *)wv, *e = (const T *)ev;              \
        T *hist = (T *)hv;                                                               \
        for (int64_t i = 0; i < n; i++) {                                                \
            if (!(x[i] >= e[0] && x[i] <= e[ne - 1])) {                                  \
                continue;                                                                \
            }                                                                            \
            int64_t lo = 0, hi = ne; /* upper bound: the first edge above x[i] */        \
            while (lo < hi) {                                                            \
                int64_t mid = lo + (hi - lo) / 2;                                        \
                if (e[mid] > x[i]) {                                                     \
                    hi = mid;                                                            \
                } else {                                                                 \
                    lo = mid + 1;                                                        \
                }                                                                        \
            }                                                                            \
            int64_t pos = lo - 1 == ne - 1 ? ne - 2 : lo - 1;                            \
            hist[pos < 0 ? 0 : pos] += w ? w[i] : (T)1;                                  \
        }                                                                                \
        if (density) {                                                                   \
            T sum = 0;                                                                   \
            for (int64_t b = 0; b < ne - 1; b++) {                                       \
                sum += hist[b];                                                          \
            }                                                                            \
            for (int64_t b = 0; b < ne - 1; b++) {                                       \
                hist[b] = hist[b] / sum / (e[b + 1] - e[b]);                             \
            }                                                                            \
        }                                                                                \
    }
HISTOGRAM(float, f32)
HISTOGRAM(double, f64)

// self (any shape), bins (nb) edges, weight (self's numel) or NULL; hist (nb - 1), bin_edges (nb)
mt_status
mt_cpu_histogram_bins(mt_args *a)
{
    mt_tensor *self = a->t[0], *bins = a->t[1], *weight = a->t[2], *x = NULL, *w = NULL;
    const mt_dtype dt = self->dtype;
    const int64_t ne = bins->sizes[0], nbins = ne - 1;
    mt_status st;
    if ((st = mt_cpu_copy_into(a->out[1], bins)) || (st = mt_cpu_dense(self, dt, &x)) ||
        (weight && (st = mt_cpu_dense(weight, dt, &w)))) {
        goto out_release;
    }
    memset(mt_tensor_data(a->out[0]), 0, (size_t)nbins * mt_dtype_size(dt));
    (dt == MT_FLOAT32 ? histogram_f32
                      : histogram_f64)(mt_tensor_data(x), w ? mt_tensor_data(w) : NULL,
                                       mt_tensor_numel(x), mt_tensor_data(a->out[1]), ne, a->b[0],
                                       mt_tensor_data(a->out[0]));
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    return st;
}

// self (n) non-negative ints, weights (n) or NULL; out (max(self) + 1, or minlength): how often
// each value occurs, or the sum of its weights
mt_status
mt_cpu_bincount(mt_args *a)
{
    mt_tensor *self = a->t[0], *weights = a->t[1], *x = NULL, *w = NULL;
    const mt_dtype dt = a->out[0]->dtype;
    const int64_t len = a->out[0]->sizes[0];
    mt_status st;
    if ((st = mt_cpu_dense(self, MT_INT64, &x)) ||
        (weights && (st = mt_cpu_dense(weights, dt, &w)))) {
        goto out_release;
    }
    char *out = mt_tensor_data(a->out[0]);
    memset(out, 0, (size_t)len * mt_dtype_size(dt));
    const int64_t *v = (const int64_t *)mt_tensor_data(x), n = mt_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        if (dt == MT_INT64) {
            ((int64_t *)out)[v[i]] += 1;
        } else if (dt == MT_FLOAT32) { /* summed in float, as PyTorch */
            ((float *)out)[v[i]] += ((const float *)mt_tensor_data(w))[i];
        } else {
            ((double *)out)[v[i]] += ((const double *)mt_tensor_data(w))[i];
        }
    }
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    return st;
}

/* ---- searchsorted ---- */

/* The position in row (len values, in sorter's order when given) where v goes: the first not
 * below it, or with right the first above it (PyTorch's cus_lower_bound / cus_upper_bound:
 * NaN sorts last). As doubles, or as int64 when both are integers. */
#define BOUND(NAME, T, LOAD)                                                                   \
    static int64_t NAME(mt_dtype dt, const char *row, const int64_t *sorter, int64_t len, T v, \
                        bool right)                                                            \
    {                                                                                          \
        int64_t lo = 0, hi = len;                                                              \
        while (lo < hi) {                                                                      \
            const int64_t mid = lo + (hi - lo) / 2;                                            \
            const T m = LOAD(dt, row, sorter ? sorter[mid] : mid);                             \
            const bool go_right = right ? !(m > v) : !(m >= v);                                \
            if (go_right) {                                                                    \
                lo = mid + 1;                                                                  \
            } else {                                                                           \
                hi = mid;                                                                      \
            }                                                                                  \
        }                                                                                      \
        return lo;                                                                             \
    }
BOUND(bound_f, double, load_f)
BOUND(bound_i, int64_t, load_i)

// sorted_sequence (*, len) rows (or one row, len), self (*, k) values (any shape with one row);
// out (*, k) int64 (int32 with out_int32): where each value goes in its row to keep it sorted
mt_status
mt_cpu_searchsorted(mt_args *a)
{
    mt_tensor *seq = a->t[0], *self = a->t[1], *sorter = a->t[2], *s = NULL, *x = NULL, *o = NULL;
    const bool right = a->b[1] || (a->str[0] && strcmp(a->str[0], "right") == 0);
    const mt_dtype odt = a->out[0]->dtype; /* int32 with out_int32 */
    mt_status st;
    if ((st = mt_cpu_dense(seq, seq->dtype, &s)) || (st = mt_cpu_dense(self, self->dtype, &x)) ||
        (sorter && (st = mt_cpu_dense(sorter, MT_INT64, &o)))) {
        goto out_release;
    }
    const bool ints = mt_dtype_is_integral(seq->dtype, true) &&
                      mt_dtype_is_integral(self->dtype, true);
    const int64_t len = seq->sizes[seq->ndim - 1], n = mt_tensor_numel(x);
    const int64_t k = self->ndim ? self->sizes[self->ndim - 1] : 1;
    const size_t es = mt_dtype_size(seq->dtype);
    for (int64_t i = 0; i < n; i++) {
        const int64_t row = seq->ndim == 1 || k == 0 ? 0 : i / k;
        const char *r = mt_tensor_data(s) + row * len * (int64_t)es;
        const int64_t *srt = o ? (const int64_t *)mt_tensor_data(o) + row * len : NULL;
        int64_t pos = ints ? bound_i(seq->dtype, r, srt, len,
                                     load_i(self->dtype, mt_tensor_data(x), i), right)
                           : bound_f(seq->dtype, r, srt, len,
                                     load_f(self->dtype, mt_tensor_data(x), i), right);
        if (odt == MT_INT32) {
            ((int32_t *)mt_tensor_data(a->out[0]))[i] = (int32_t)pos;
        } else {
            ((int64_t *)mt_tensor_data(a->out[0]))[i] = pos;
        }
    }
out_release:
    mt_tensor_clear(&s);
    mt_tensor_clear(&x);
    mt_tensor_clear(&o);
    return st;
}

/* ---- cummax, cummin ---- */

// self (any shape); values, indices (self's shape): the running max (cummax) or min (cummin)
// along dim and its position. One kernel for both (ops.def's CPU_AS(cumulative_extreme) rows).
/* x (outer, n, inner); values, indices alike: the running extreme along n and where it was
 * last reached: a NaN takes over and stays (PyTorch's cummax_cummin_helper, ties to the later) */
mt_status
mt_cpu_cumulative_extreme(mt_args *a)
{
    const bool max = a->plan->op == MT_OP_cummax;
    mt_tensor *self = a->t[0], *x = NULL;
    const int dim = a->plan->reduce.dim; /* wrapped by the front end */
    mt_status st;
    if ((st = mt_cpu_dense(self, self->dtype, &x))) {
        return st;
    }
    int64_t outer, n, inner;
    around(self, dim, &outer, &n, &inner);
    const mt_dtype dt = self->dtype;
    const size_t es = mt_dtype_size(dt);
    const bool fl = mt_dtype_is_float(dt);
    const char *xd = mt_tensor_data(x);
    char *vd = mt_tensor_data(a->out[0]);
    int64_t *id = (int64_t *)mt_tensor_data(a->out[1]);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = 0;
            for (int64_t j = 0; j < n; j++) {
                const int64_t at = (o * n + j) * inner + i, bat = (o * n + best) * inner + i;
                bool take = j == 0;
                if (!take && fl) {
                    double v = load_f(dt, xd, at), b = load_f(dt, xd, bat);
                    take = isnan(v) || (!isnan(b) && (max ? v >= b : v <= b));
                } else if (!take) {
                    int64_t v = load_i(dt, xd, at), b = load_i(dt, xd, bat);
                    take = max ? v >= b : v <= b;
                }
                best = take ? j : best;
                memcpy(vd + at * (int64_t)es, xd + ((o * n + best) * inner + i) * (int64_t)es, es);
                id[at] = best;
            }
        }
    }
    mt_tensor_release(x);
    return MT_OK;
}

/* ---- unique along a dim ---- */

/* The slices j of x (outer, n, inner) along n, compared element by element in (outer, inner)
 * order: the first that differs decides (a NaN is neither below nor above anything). */
typedef struct slices {
    const char *x;
    mt_dtype dt;
    int64_t outer, n, inner;
} slices;

static int
compare_slices(const slices *s, int64_t j, int64_t k)
{
    for (int64_t o = 0; o < s->outer; o++) {
        for (int64_t i = 0; i < s->inner; i++) {
            int64_t p = (o * s->n + j) * s->inner + i, q = (o * s->n + k) * s->inner + i;
            double u = load_f(s->dt, s->x, p), v = load_f(s->dt, s->x, q);
            if (!mt_dtype_is_float(s->dt)) {
                int64_t iu = load_i(s->dt, s->x, p), iv = load_i(s->dt, s->x, q);
                if (iu != iv) {
                    return iu < iv ? -1 : 1;
                }
            } else if (u < v || v < u) {
                return u < v ? -1 : 1;
            }
        }
    }
    return 0;
}

/* Whether slices j and k are equal, element by element (a NaN equals nothing). */
static bool
equal_slices(const slices *s, int64_t j, int64_t k)
{
    for (int64_t o = 0; o < s->outer; o++) {
        for (int64_t i = 0; i < s->inner; i++) {
            int64_t p = (o * s->n + j) * s->inner + i, q = (o * s->n + k) * s->inner + i;
            if (mt_dtype_is_float(s->dt) ? load_f(s->dt, s->x, p) != load_f(s->dt, s->x, q)
                                         : load_i(s->dt, s->x, p) != load_i(s->dt, s->x, q)) {
                return false;
            }
        }
    }
    return true;
}

/* perm (n) sorted by its slices, stably (bottom-up merge sort, tmp n scratch) */
static void
sort_slices(const slices *s, int64_t *perm, int64_t *tmp)
{
    for (int64_t w = 1; w < s->n; w *= 2) {
        for (int64_t lo = 0; lo < s->n; lo += 2 * w) {
            int64_t mid = lo + w < s->n ? lo + w : s->n, hi = lo + 2 * w < s->n ? lo + 2 * w : s->n;
            int64_t p = lo, q = mid, t = lo;
            while (p < mid && q < hi) {
                tmp[t++] = compare_slices(s, perm[q], perm[p]) < 0 ? perm[q++] : perm[p++];
            }
            while (p < mid) {
                tmp[t++] = perm[p++];
            }
            while (q < hi) {
                tmp[t++] = perm[q++];
            }
        }
        memcpy(perm, tmp, sizeof(int64_t) * (size_t)s->n);
    }
}

// self (..., n, ...) with n at dim; values (..., u, ...): the distinct slices along dim, sorted;
// inverse (n, stated by the front end): each slice's position among them; counts (u): how often
// each occurs. values and counts are made once u is known.
mt_status
mt_cpu_unique_dim(mt_args *a)
{
    mt_tensor *self = a->t[0], *x = NULL, *work = NULL;
    const int dim = a->plan->reduce.dim;
    mt_status st = mt_cpu_dense(self, self->dtype, &x);
    if (st) {
        return st;
    }
    slices s = {mt_tensor_data(x), self->dtype, 0, 0, 0};
    around(self, dim, &s.outer, &s.n, &s.inner);
    int64_t scratch_n = 2 * s.n + 1, shape[MT_MAX_DIMS];
    if ((st = mt_tensor_empty(1, &scratch_n, MT_INT64, MT_DEVICE_CPU, &work))) {
        goto out_release;
    }
    int64_t *perm = (int64_t *)mt_tensor_data(work), *tmp = perm + s.n;
    int64_t *inverse = (int64_t *)mt_tensor_data(a->out[1]);
    for (int64_t j = 0; j < s.n; j++) {
        perm[j] = j;
    }
    sort_slices(&s, perm, tmp);
    int64_t u = 0; /* tmp[g]: the slice of group g, inverse[slice]: its group */
    for (int64_t p = 0; p < s.n; p++) {
        if (p == 0 || !equal_slices(&s, perm[p], tmp[u - 1])) {
            tmp[u++] = perm[p];
        }
        inverse[perm[p]] = u - 1;
    }
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[dim] = u;
    if ((st = mt_dispatch_result(a, 0, self->dtype, self->ndim, shape, MT_DEVICE_CPU)) ||
        (st = mt_dispatch_result(a, 2, MT_INT64, 1, &u, MT_DEVICE_CPU))) {
        goto out_release;
    }
    const size_t es = mt_dtype_size(self->dtype);
    int64_t *counts = (int64_t *)mt_tensor_data(a->out[2]);
    memset(counts, 0, sizeof(int64_t) * (size_t)u);
    for (int64_t j = 0; j < s.n; j++) {
        counts[inverse[j]]++;
    }
    for (int64_t o = 0; o < s.outer; o++) {
        for (int64_t g = 0; g < u; g++) {
            memcpy(mt_tensor_data(a->out[0]) + ((o * u + g) * s.inner) * (int64_t)es,
                   s.x + ((o * s.n + tmp[g]) * s.inner) * (int64_t)es, (size_t)s.inner * es);
        }
    }
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&work);
    return st;
}
