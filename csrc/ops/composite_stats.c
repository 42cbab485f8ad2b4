/* Composite statistics: order statistics over a stable sort (kthvalue, median, nanmedian, mode;
 * quantile is composite_quantile.c's), the int-bins histogram over the bin-edges one, bucketize
 * over searchsorted, moments (std_mean, var_mean, aminmax), differences, renorm and
 * unique_consecutive. Written in ops through the dispatcher, so they run on every device the
 * pieces do and record autograd through them. */
#include <math.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/linalg.h"
#include "ops/ops.h"
#include "ops/op_chain.h"

/* ---- helpers ---- */

/* dim wrapped, and n the size along it (1 for a 0-dim self) */
static mt_status
reduce_dim(const mt_tensor *self, int64_t dim, int *d, int64_t *n)
{
    mt_status st = mt_wrap_dim(dim, self->ndim, d);
    *n = self->ndim ? self->sizes[*d] : 1;
    return st;
}

/* PyTorch's IndexError for an order statistic along an empty dim */
static mt_status
check_nonempty(const char *name, const mt_tensor *self, int d)
{
    if (self->ndim && self->sizes[d] == 0) {
        return mt_fail(MT_EINDEX, "%s(): Expected reduction dim %d to have non-zero size.", name,
                       d);
    }
    return MT_OK;
}

/* *out = x with dim d (kept as size 1) removed unless keepdim */
static mt_status
drop_dim(mt_tensor *x, int d, bool keepdim, mt_tensor **out)
{
    if (keepdim || x->ndim == 0) {
        *out = mt_tensor_retain(x);
        return MT_OK;
    }
    int64_t dim = d;
    return mt_op_squeeze(x, 1, &dim, out);
}

/* A 0-dim self along its "dim": itself (a copy) at index 0. */
static mt_status
scalar_pick(mt_tensor *self, mt_tensor **values, mt_tensor **indices)
{
    mt_status st = mt_op_clone(self, values);
    if (st == MT_OK) {
        st = mt_op_zeros(0, NULL, MT_INT64, mt_tensor_device(self), false, indices);
    }
    return st;
}

/* an int64 0-dim number, a step of the chain s: int64 operands stay int64 */
static mt_tensor *
int_number(tmp *s, int64_t v)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_tensor_scalar(mt_scalar_int(v), MT_INT64, &r), &r);
}

/* x narrowed to length n from start along d, a step of the chain s */
static mt_tensor *
narrowed(tmp *s, mt_tensor *x, int d, int64_t start, int64_t n)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_narrow(x, d, start, n, &r), &r);
}

/* (n) of dt on like's device, filled with v: a step of the chain s */
static mt_tensor *
filled_1d(tmp *s, int64_t n, mt_scalar v, mt_dtype dt, const mt_tensor *like)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_op_full(1, &n, v, dt, mt_tensor_device(like), false, &r), &r);
}

/* sorted and its stable sort's positions along d (NaN last), steps of the chain s */
static void
sort_stable(tmp *s, mt_tensor *self, int d, mt_tensor **sorted, mt_tensor **order)
{
    *sorted = *order = NULL;
    if (s->st == MT_OK) { /* each result adopted, whatever became of the other */
        mt_status st = mt_op_sort(self, d, false, true, sorted, order);
        *sorted = own(s, st, sorted);
        *order = own(s, st, order);
    }
}

/* values, indices = sorted and its positions at pos (int64, keepdim shape) along d; the
 * chain's last step (returns its status, s finished) */
static mt_status
pick_sorted(tmp *s, mt_tensor *sorted, mt_tensor *order, mt_tensor *pos, int d, bool keepdim,
            mt_tensor **values, mt_tensor **indices)
{
    mt_tensor *r = NULL;
    mt_tensor *v = failed(s, sorted, pos) ? NULL : own(s, mt_op_gather(sorted, d, pos, &r), &r);
    mt_tensor *i = failed(s, order, v) ? NULL : own(s, mt_op_gather(order, d, pos, &r), &r);
    if (!failed(s, i, i) && (s->st = drop_dim(v, d, keepdim, values)) == MT_OK) {
        s->st = drop_dim(i, d, keepdim, indices);
    }
    return finish(s);
}

/* (dtype dt, self's shape with 1 at d) filled with v, a step of the chain s */
static mt_tensor *
row_constant(tmp *s, const mt_tensor *self, int d, int64_t v, mt_dtype dt)
{
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[d] = 1;
    mt_tensor *r = NULL;
    return s->st ? NULL
                 : own(s,
                       mt_op_full(self->ndim, shape, mt_scalar_int(v), dt, mt_tensor_device(self),
                                  false, &r),
                       &r);
}

/* ---- kthvalue, median, nanmedian, mode ---- */

typedef enum order_stat { KTH, MEDIAN, NANMEDIAN } order_stat;

/* (int64, self's shape with 1 at d): where in its sorted row (NaNs last) each row's median is:
 * MEDIAN takes the first NaN of a row that has one (n - nans), NANMEDIAN the median of the
 * n - nans numbers, (n - nans - 1) / 2, or the first NaN of a row of NaNs only. A step of the
 * chain s. */
static mt_tensor *
median_position(tmp *s, mt_tensor *self, int d, order_stat what, mt_tensor *middle)
{
    const int64_t n = self->sizes[d], dim = d;
    mt_tensor *r = NULL, *isnan = un(s, MT_OP_isnan, self);
    mt_tensor *nans = failed(s, isnan, isnan)
                          ? NULL
                          : own(s, mt_op_sum(isnan, 1, &dim, true, MT_INT64, &r), &r);
    mt_tensor *left = bin(s, MT_OP_sub, int_number(s, what == MEDIAN ? n : n - 1), nans);
    if (what == MEDIAN) {
        return sel(s, bin(s, MT_OP_gt, nans, int_number(s, 0)), left, middle);
    }
    mt_tensor *half = bin(s, MT_OP_floor_divide, left, int_number(s, 2));
    return failed(s, half, half) ? NULL : own(s, mt_op_clamp_min(half, mt_scalar_int(0), &r), &r);
}

/* The k-th smallest (0-based k, for KTH) or the median of each row of self along d: values
 * and indices from a stable sort (NaN last), so of equal values the k-th in the sorted row is
 * the k-th of them in the row's order. */
static mt_status
order_statistic(mt_tensor *self, int d, int64_t k, order_stat what, bool keepdim,
                mt_tensor **values, mt_tensor **indices)
{
    if (self->ndim == 0) {
        return scalar_pick(self, values, indices);
    }
    tmp s = {0};
    mt_tensor *sorted, *order;
    const int64_t n = self->sizes[d];
    sort_stable(&s, self, d, &sorted, &order);
    mt_tensor *pos = row_constant(&s, self, d, what == KTH ? k : (n - 1) / 2, MT_INT64);
    if (what != KTH && mt_dtype_is_float(self->dtype)) {
        pos = median_position(&s, self, d, what, pos);
    }
    return pick_sorted(&s, sorted, order, pos, d, keepdim, values, indices);
}

// self (any shape); values, indices: the k-th smallest of each row along dim (k from 1)
mt_status
mt_composite_kthvalue(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int d;
    int64_t n;
    mt_status st = reduce_dim(self, a->i[1], &d, &n);
    if (st || (st = check_nonempty("kthvalue", self, d))) {
        return st;
    }
    if (self->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"kthvalue_cpu\" not implemented for 'Bool'");
    }
    if (a->i[0] < 1 || a->i[0] > n) {
        return mt_fail(MT_ERUNTIME, "kthvalue(): selected number k out of range for dimension %d",
                       d);
    }
    return order_statistic(self, d, a->i[0] - 1, KTH, a->b[0], &a->out[0], &a->out[1]);
}

static mt_status
median_along(mt_args *a, order_stat what, const char *name)
{
    mt_tensor *self = a->t[0];
    int d;
    int64_t n;
    mt_status st = reduce_dim(self, a->i[0], &d, &n);
    if (st || (st = check_nonempty(name, self, d))) {
        return st;
    }
    if (self->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"%s_cpu\" not implemented for 'Bool'", name);
    }
    return order_statistic(self, d, 0, what, a->b[0], &a->out[0], &a->out[1]);
}

// self (any shape); values, indices: the median of each row along dim (the lower of the two
// middle values of an even row); a row with a NaN gives its first NaN
mt_status
mt_composite_median_dim(mt_args *a)
{
    return median_along(a, MEDIAN, "median");
}

// as median_dim, the NaNs left out (a row of NaNs only gives its first)
mt_status
mt_composite_nanmedian_dim(mt_args *a)
{
    return median_along(a, NANMEDIAN, "nanmedian");
}

/* the median of all of self: NaN for an empty self */
static mt_status
median_all(mt_args *a, order_stat what, const char *name)
{
    mt_tensor *self = a->t[0], *flat = NULL, *idx = NULL;
    if (self->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"%s_cpu\" not implemented for 'Bool'", name);
    }
    if (mt_tensor_numel(self) == 0) {
        return mt_op_full(0, NULL, mt_scalar_float(NAN), self->dtype, mt_tensor_device(self), false,
                          &a->out[0]);
    }
    int64_t all = -1;
    mt_status st = mt_op_reshape(self, 1, &all, &flat);
    if (st == MT_OK) {
        st = order_statistic(flat, 0, 0, what, false, &a->out[0], &idx);
    }
    mt_tensor_clear(&idx);
    mt_tensor_clear(&flat);
    return st;
}

mt_status
mt_composite_median(mt_args *a)
{
    return median_all(a, MEDIAN, "median");
}

mt_status
mt_composite_nanmedian(mt_args *a)
{
    return median_all(a, NANMEDIAN, "nanmedian");
}

// self (any shape); values, indices: the most frequent value of each row along dim (the
// smallest of those equally frequent) and its last position. Over the sorted row: each run of
// equal values has its length at its last element (position - the run's start + 1, the start
// carried by cummax), and argmax finds the first longest.
mt_status
mt_composite_mode(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int d;
    int64_t n;
    mt_status st = reduce_dim(self, a->i[0], &d, &n);
    if (st || (st = check_nonempty("mode", self, d))) {
        return st;
    }
    if (self->ndim == 0) {
        return scalar_pick(self, &a->out[0], &a->out[1]);
    }
    tmp s = {0};
    mt_tensor *r = NULL, *sorted, *order;
    int64_t shape[MT_MAX_DIMS];
    for (int k = 0; k < self->ndim; k++) {
        shape[k] = k == d ? n : 1;
    }
    sort_stable(&s, self, d, &sorted, &order);
    mt_tensor *ar_n = s.st ? NULL
                           : own(&s,
                                 mt_op_arange(mt_scalar_int(0), mt_scalar_int(n), mt_scalar_int(1),
                                              MT_INT64, mt_tensor_device(self), false, &r),
                                 &r);
    mt_tensor *ar = failed(&s, ar_n, ar_n)
                        ? NULL
                        : own(&s, mt_op_reshape(ar_n, self->ndim, shape, &r), &r);
    mt_tensor *differs = bin(&s, MT_OP_ne, narrowed(&s, sorted, d, 1, n - 1),
                             narrowed(&s, sorted, d, 0, n - 1));
    mt_tensor *first = row_constant(&s, self, d, 1, MT_BOOL);
    mt_tensor *starts_at = failed(&s, first, differs)
                               ? NULL
                               : own(&s, mt_op_cat(2, (mt_tensor *[]){first, differs}, d, &r), &r);
    mt_tensor *zero_or = sel(&s, starts_at, ar, int_number(&s, 0));
    mt_tensor *start = NULL, *start_i = NULL;
    if (!failed(&s, zero_or, zero_or)) { /* each result adopted, whatever became of the other */
        mt_status st = mt_op_cummax(zero_or, d, &start, &start_i);
        start = own(&s, st, &start);
        own(&s, st, &start_i);
    }
    mt_tensor *len = bin(&s, MT_OP_sub, ar, start);
    mt_tensor *pos = failed(&s, len, len) ? NULL : own(&s, mt_op_argmax(len, d, true, &r), &r);
    return pick_sorted(&s, sorted, order, pos, d, a->b[0], &a->out[0], &a->out[1]);
}

/* ---- histogram with a bin count, bucketize ---- */

// self (any shape), bins a count, min/max (both or neither): histogram over bins + 1 edges
// spaced evenly over [min, max] (self's range without them; [0, 1] for an empty self)
mt_status
mt_composite_histogram(mt_args *a)
{
    mt_tensor *self = a->t[0], *edges = NULL;
    const int64_t bins = a->i[0];
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"histogramdd\" not implemented for '%s'",
                       mt_dtype_scalar_name(self->dtype));
    }
    if (bins <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                       (long long)bins);
    }
    double lo = 0, hi = 1;
    mt_status st = MT_OK;
    if (a->s[0].type != MT_NUM_DTYPES) {
        lo = mt_scalar_to_double(a->s[0]);
        hi = mt_scalar_to_double(a->s[1]);
    } else if (mt_tensor_numel(self) > 0) {
        mt_tensor *mn = NULL, *mx = NULL;
        mt_scalar v;
        if ((st = mt_op_amin(self, 0, NULL, false, &mn)) == MT_OK &&
            (st = mt_tensor_item(mn, &v)) == MT_OK) {
            lo = mt_scalar_to_double(v);
            if ((st = mt_op_amax(self, 0, NULL, false, &mx)) == MT_OK &&
                (st = mt_tensor_item(mx, &v)) == MT_OK) {
                hi = mt_scalar_to_double(v);
            }
        }
        mt_tensor_clear(&mn);
        mt_tensor_clear(&mx);
        if (st) {
            return st;
        }
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        return mt_fail(MT_ERUNTIME, "torch.histogramdd: dimension 0's range [%g, %g] is not finite",
                       lo, hi);
    }
    if (lo > hi) {
        return mt_fail(MT_ERUNTIME,
                       "torch.histogramdd: min should not exceed max, but got min %g max %g for "
                       "dimension 0",
                       lo, hi);
    }
    if (lo == hi) { /* NumPy's widening of an empty range */
        lo -= 0.5;
        hi += 0.5;
    }
    st = mt_op_linspace(mt_scalar_float(lo), mt_scalar_float(hi), bins + 1, self->dtype,
                        mt_tensor_device(self), false, &edges);
    if (st == MT_OK) {
        st = mt_op_histogram_bins(self, edges, a->t[1], a->b[0], &a->out[0], &a->out[1]);
        mt_tensor_release(edges);
    }
    return st;
}

// self (any shape, or a number), boundaries (n) ascending; out (self's shape): the bucket of
// each value, searchsorted(boundaries, self)
mt_status
mt_composite_bucketize(mt_args *a)
{
    if (a->t[1]->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "boundaries tensor must be 1 dimension, but got dim(%d)",
                       a->t[1]->ndim);
    }
    return mt_op_searchsorted(a->t[1], a->t[0], a->b[0], a->b[1], NULL, NULL, &a->out[0]);
}

/* ---- moments, extrema, differences, renorm ---- */

static mt_status
moment_mean(mt_args *a, bool std, const char *name)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *dim = &a->l[0];
    if (!mt_dtype_is_float(self->dtype) && !mt_dtype_is_complex(self->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s only support floating point and complex dtypes", name);
    }
    mt_status st = (std ? mt_op_std : mt_op_var)(self, dim->n, mt_op_ints(dim), a->b[0], a->b[1],
                                                 a->s[0], &a->out[0]);
    if (st == MT_OK) {
        st = mt_op_mean(self, dim->n, mt_op_ints(dim), a->b[1], -1, &a->out[1]);
    }
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

// self (any shape); (std, mean) of self over dim (all of it by default)
mt_status
mt_composite_std_mean(mt_args *a)
{
    return moment_mean(a, true, "std_mean");
}

mt_status
mt_composite_var_mean(mt_args *a)
{
    return moment_mean(a, false, "var_mean");
}

// self (any shape); (min, max) of self, or along dim
mt_status
mt_composite_aminmax(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const bool has_dim = !(a->i_none & 1u);
    int d = 0;
    int64_t dim = a->i[0];
    mt_status st = has_dim ? mt_wrap_dim(dim, self->ndim, &d) : MT_OK;
    if (st) {
        return st;
    }
    if (!has_dim && mt_tensor_numel(self) == 0) {
        return mt_fail(MT_ERUNTIME, "aminmax(): cannot compute aminmax over an empty dimension as "
                                    "the operation has no identity.");
    }
    if (has_dim && self->ndim && self->sizes[d] == 0) {
        return mt_fail(MT_EINDEX, "aminmax: Expected reduction dim %d to have non-zero size.", d);
    }
    int n = has_dim && self->ndim ? 1 : 0;
    st = mt_op_amin(self, n, n ? &dim : NULL, a->b[0], &a->out[0]);
    if (st == MT_OK && (st = mt_op_amax(self, n, n ? &dim : NULL, a->b[0], &a->out[1]))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

/* prepend or append t fits self along d: as many dims, the same sizes but at d */
static mt_status
check_diff_part(const mt_tensor *self, const mt_tensor *t, int d)
{
    if (t->ndim != self->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "diff expects prepend or append to be the same dimension as input");
    }
    for (int k = 0; k < self->ndim; k++) {
        if (k != d && t->sizes[k] != self->sizes[k]) {
            return mt_fail(MT_ERUNTIME,
                           "diff expects the shape of tensor to prepend or append to match that "
                           "of input except along the differencing dimension; input.size(%d) = "
                           "%lld, but got tensor.size(%d) = %lld",
                           k, (long long)self->sizes[k], k, (long long)t->sizes[k]);
        }
    }
    return MT_OK;
}

// self (..., n, ...), prepend/append joined at dim first; out: the n-th forward difference
// along dim (x[i + 1] - x[i], n times; for bools x[i + 1] != x[i])
mt_status
mt_composite_diff(mt_args *a)
{
    mt_tensor *self = a->t[0], *prepend = a->t[1], *append = a->t[2];
    const int64_t order = a->i[0];
    int d;
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "diff expects input to be at least one-dimensional");
    }
    if (order < 0) {
        return mt_fail(MT_ERUNTIME, "order must be non-negative but got %lld", (long long)order);
    }
    mt_status st = mt_wrap_dim(a->i[1], self->ndim, &d);
    if (st || (prepend && (st = check_diff_part(self, prepend, d))) ||
        (append && (st = check_diff_part(self, append, d)))) {
        return st;
    }
    mt_tensor *parts[3], *x = NULL;
    int np = 0;
    if (prepend) {
        parts[np++] = prepend;
    }
    parts[np++] = self;
    if (append) {
        parts[np++] = append;
    }
    st = np > 1 ? mt_op_cat(np, parts, d, &x) : mt_op_alias(self, &x);
    for (int64_t k = 0; k < order && st == MT_OK && x->sizes[d] > 0; k++) {
        mt_tensor *hi = NULL, *lo = NULL, *next = NULL;
        const int64_t len = x->sizes[d] - 1;
        if ((st = mt_op_narrow(x, d, 1, len, &hi)) == MT_OK &&
            (st = mt_op_narrow(x, d, 0, len, &lo)) == MT_OK) {
            st = x->dtype == MT_BOOL ? mt_op_ne(hi, lo, &next)
                                     : mt_op_sub(hi, lo, mt_scalar_int(1), &next);
        }
        mt_tensor_clear(&hi);
        mt_tensor_clear(&lo);
        mt_tensor_release(x);
        x = next;
    }
    if (st == MT_OK && order == 0 && np == 1) { /* nothing differenced: a copy, as PyTorch */
        st = mt_op_clone(self, &a->out[0]);
        mt_tensor_clear(&x);
        return st;
    }
    a->out[0] = st ? NULL : x;
    if (st) {
        mt_tensor_clear(&x);
    }
    return st;
}

// self (..., n, ...) at dim; out: each of the n slices along dim scaled to p-norm at most maxnorm
// (by maxnorm / (norm + 1e-7) where its norm exceeds maxnorm)
mt_status
mt_composite_renorm(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const double p = mt_scalar_to_double(a->s[0]), maxnorm = mt_scalar_to_double(a->s[1]);
    int d;
    if (self->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "renorm: input needs at least 2 dimensions, got %d dimensions",
                       self->ndim);
    }
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    if (!(p > 0)) {
        return mt_fail(MT_ERUNTIME, "renorm: non-positive-norm not supported");
    }
    if (maxnorm < 0) {
        return mt_fail(MT_ERUNTIME, "renorm: expected maxnorm to be >= 0 but got %g", maxnorm);
    }
    if ((st = mt_linalg_check_float(self, "linalg.vector_norm"))) { /* renorm's norm's check */
        return st;
    }
    int64_t dims[MT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < self->ndim; k++) {
        if (k != d) {
            dims[nd++] = k;
        }
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *norm = own(&s, mt_op_norm(self, a->s[0], nd, dims, true, -1, &r), &r);
    mt_tensor *top = num(&s, maxnorm);
    mt_tensor *scale = bin(&s, MT_OP_div, top, bin(&s, MT_OP_add, norm, num(&s, 1e-7)));
    mt_tensor *factor = sel(&s, bin(&s, MT_OP_gt, norm, top), scale, num(&s, 1.0));
    if (!failed(&s, factor, factor)) {
        s.st = mt_op_mul(self, factor, &a->out[0]);
    }
    return finish(&s);
}

/* ---- unique_consecutive ---- */

// self (any shape); values: self (flattened, or along dim) without the repeats of a run of equal
// elements (slices); inverse: each element's (slice's) run; counts: each run's length
mt_status
mt_composite_unique_consecutive(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const bool has_dim = !(a->i_none & 1u);
    int d = 0;
    if (has_dim && self->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as %lld but tensor has no dimensions",
                       (long long)a->i[0]);
    }
    mt_status st = has_dim ? mt_wrap_dim(a->i[0], self->ndim, &d) : MT_OK;
    if (st) {
        return st;
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    int64_t all = -1;
    mt_tensor *x = own(&s, has_dim ? mt_op_alias(self, &r) : mt_op_reshape(self, 1, &all, &r), &r);
    if (x == NULL) {
        return finish(&s);
    }
    const int64_t n = x->sizes[d];
    /* differs (n - 1): slice j + 1 is not slice j, somewhere */
    int64_t other[MT_MAX_DIMS], lead = n > 0 ? 1 : 0;
    int no = 0;
    for (int k = 0; k < x->ndim; k++) {
        if (k != d) {
            other[no++] = k;
        }
    }
    mt_tensor *ne = bin(&s, MT_OP_ne, narrowed(&s, x, d, n > 0 ? 1 : 0, n > 0 ? n - 1 : 0),
                        narrowed(&s, x, d, 0, n > 0 ? n - 1 : 0));
    mt_tensor *differs = failed(&s, ne, ne) ? NULL
                         : no               ? own(&s, mt_op_any(ne, no, other, false, &r), &r)
                                            : ne;
    mt_tensor *first = filled_1d(&s, lead, mt_scalar_bool(true), MT_BOOL, self);
    /* starts (n): where a run begins (the first slice, and each that differs from the one
     * before); run (n): its number, cumsum - 1, the inverse */
    mt_tensor *starts = failed(&s, first, differs)
                            ? NULL
                            : own(&s, mt_op_cat(2, (mt_tensor *[]){first, differs}, 0, &r), &r);
    mt_tensor *run = failed(&s, starts, starts)
                         ? NULL
                         : own(&s, mt_op_cumsum(starts, 0, MT_INT64, &r), &r);
    mt_tensor *inverse = bin(&s, MT_OP_sub, run, int_number(&s, 1));
    mt_tensor *at = un(&s, MT_OP_nonzero, starts);
    mt_tensor *at1 = failed(&s, at, at) ? NULL : own(&s, mt_op_reshape(at, 1, &all, &r), &r);
    /* values: the first slice of each run; counts: the distance to the next run's start */
    mt_tensor *total = filled_1d(&s, 1, mt_scalar_int(n), MT_INT64, self);
    mt_tensor *ends = failed(&s, at1, total)
                          ? NULL
                          : own(&s, mt_op_cat(2, (mt_tensor *[]){at1, total}, 0, &r), &r);
    const int64_t u = at1 ? at1->sizes[0] : 0;
    mt_tensor *counts = bin(&s, MT_OP_sub, narrowed(&s, ends, 0, 1, u),
                            narrowed(&s, ends, 0, 0, u));
    if (!failed(&s, counts, inverse)) {
        s.st = mt_op_index_select(x, d, at1, &a->out[0]);
    }
    if (s.st == MT_OK) { /* inverse in self's shape without a dim */
        s.st = has_dim ? (a->out[1] = mt_tensor_retain(inverse), MT_OK)
                       : mt_op_reshape(inverse, self->ndim, self->sizes, &a->out[1]);
    }
    give(&s, counts, &a->out[2]);
    return finish(&s);
}
