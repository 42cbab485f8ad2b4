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
#include "ops/temps.h"

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

/* out[k] = x[k] with dim d (kept as size 1) removed unless keepdim */
static mt_status
finish(mt_tensor *x, int d, bool keepdim, mt_tensor **out)
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

/* values, indices = sorted and its positions at pos (int64, keepdim shape) along d */
static mt_status
pick_sorted(mt_temps *p, mt_tensor *sorted, mt_tensor *order, mt_tensor *pos, int d, bool keepdim,
            mt_tensor **values, mt_tensor **indices)
{
    mt_tensor **v = mt_temp(p), **i = mt_temp(p);
    mt_status st = mt_op_gather(sorted, d, pos, v);
    if (st == MT_OK && (st = mt_op_gather(order, d, pos, i)) == MT_OK &&
        (st = finish(*v, d, keepdim, values)) == MT_OK) {
        st = finish(*i, d, keepdim, indices);
    }
    return st;
}

/* *out (dtype dt, self's shape with 1 at d) filled with v */
static mt_status
row_constant(mt_temps *p, const mt_tensor *self, int d, int64_t v, mt_dtype dt, mt_tensor **out)
{
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[d] = 1;
    mt_tensor **t = mt_temp(p);
    mt_status st = mt_op_full(self->ndim, shape, mt_scalar_int(v), dt, mt_tensor_device(self),
                              false, t);
    *out = *t;
    return st;
}

/* ---- kthvalue, median, nanmedian, mode ---- */

typedef enum order_stat { KTH, MEDIAN, NANMEDIAN } order_stat;

/* *pos (int64, self's shape with 1 at d): where in its sorted row (NaNs last) each row's median
 * is: MEDIAN takes the first NaN of a row that has one (n - nans), NANMEDIAN the median of the
 * n - nans numbers, (n - nans - 1) / 2, or the first NaN of a row of NaNs only. */
static mt_status
median_position(mt_temps *p, mt_tensor *self, int d, order_stat what, mt_tensor *middle,
                mt_tensor **pos)
{
    const int64_t n = self->sizes[d], dim = d;
    mt_tensor **isnan = mt_temp(p), **nans = mt_temp(p), **has_nan = mt_temp(p);
    mt_tensor **left = mt_temp(p), **half = mt_temp(p), **at = mt_temp(p);
    mt_tensor *zero = NULL, *two = NULL, *count = NULL;
    mt_status st;
    if ((st = mt_op_isnan(self, isnan)) ||
        (st = mt_op_sum(*isnan, 1, &dim, true, MT_INT64, nans)) ||
        (st = mt_temp_int(p, 0, &zero)) || (st = mt_temp_int(p, 2, &two)) ||
        (st = mt_temp_int(p, what == MEDIAN ? n : n - 1, &count)) ||
        (st = mt_op_sub(count, *nans, mt_scalar_int(1), left))) {
        return st;
    }
    if (what == MEDIAN) {
        st = mt_op_gt(*nans, zero, has_nan);
        st = st ? st : mt_op_where(*has_nan, *left, middle, at);
    } else {
        st = mt_op_floor_divide(*left, two, half);
        st = st ? st : mt_op_clamp_min(*half, mt_scalar_int(0), at);
    }
    *pos = *at;
    return st;
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
    mt_temps p = {0};
    mt_tensor **sorted = mt_temp(&p), **order = mt_temp(&p), *pos = NULL;
    const int64_t n = self->sizes[d];
    mt_status st = mt_op_sort(self, d, false, true, sorted, order);
    if (st == MT_OK) {
        st = row_constant(&p, self, d, what == KTH ? k : (n - 1) / 2, MT_INT64, &pos);
    }
    if (st == MT_OK && what != KTH && mt_dtype_is_float(self->dtype)) {
        st = median_position(&p, self, d, what, pos, &pos);
    }
    if (st == MT_OK) {
        st = pick_sorted(&p, *sorted, *order, pos, d, keepdim, values, indices);
    }
    mt_temps_clear(&p);
    return st;
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
    mt_temps p = {0};
    mt_tensor **sorted = mt_temp(&p), **order = mt_temp(&p), **ar = mt_temp(&p);
    mt_tensor **rest = mt_temp(&p), **prev = mt_temp(&p), **differs = mt_temp(&p);
    mt_tensor **starts_at = mt_temp(&p), **zero_or = mt_temp(&p), *first = NULL;
    mt_tensor **start = mt_temp(&p), **start_i = mt_temp(&p), **len = mt_temp(&p);
    mt_tensor **pos = mt_temp(&p), *zero = NULL;
    int64_t shape[MT_MAX_DIMS];
    for (int k = 0; k < self->ndim; k++) {
        shape[k] = k == d ? n : 1;
    }
    if ((st = mt_op_sort(self, d, false, true, sorted, order)) ||
        (st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(n), mt_scalar_int(1), MT_INT64,
                           mt_tensor_device(self), false, mt_temp(&p))) ||
        (st = mt_op_reshape(p.t[p.n - 1], self->ndim, shape, ar)) ||
        (st = mt_op_narrow(*sorted, d, 1, n - 1, rest)) ||
        (st = mt_op_narrow(*sorted, d, 0, n - 1, prev)) || (st = mt_op_ne(*rest, *prev, differs)) ||
        (st = row_constant(&p, self, d, 1, MT_BOOL, &first)) ||
        (st = mt_op_cat(2, (mt_tensor *[]){first, *differs}, d, starts_at)) ||
        (st = mt_temp_int(&p, 0, &zero)) || (st = mt_op_where(*starts_at, *ar, zero, zero_or)) ||
        (st = mt_op_cummax(*zero_or, d, start, start_i)) ||
        (st = mt_op_sub(*ar, *start, mt_scalar_int(1), len)) ||
        (st = mt_op_argmax(*len, d, true, pos))) {
        goto out_clear;
    }
    st = pick_sorted(&p, *sorted, *order, *pos, d, a->b[0], &a->out[0], &a->out[1]);
out_clear:
    mt_temps_clear(&p);
    return st;
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
    mt_temps t = {0};
    mt_tensor **norm = mt_temp(&t), **over = mt_temp(&t), **den = mt_temp(&t);
    mt_tensor **scale = mt_temp(&t), **factor = mt_temp(&t), *top = NULL, *one = NULL, *eps = NULL;
    if ((st = mt_op_norm(self, a->s[0], nd, dims, true, -1, norm)) ||
        (st = mt_temp_number(&t, maxnorm, &top)) || (st = mt_temp_number(&t, 1.0, &one)) ||
        (st = mt_temp_number(&t, 1e-7, &eps)) || (st = mt_op_gt(*norm, top, over)) ||
        (st = mt_op_add(*norm, eps, mt_scalar_int(1), den)) ||
        (st = mt_op_div(top, *den, NULL, scale)) ||
        (st = mt_op_where(*over, *scale, one, factor))) {
        goto out_clear;
    }
    st = mt_op_mul(self, *factor, &a->out[0]);
out_clear:
    mt_temps_clear(&t);
    return st;
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
    mt_temps t = {0};
    mt_tensor **x = mt_temp(&t), **hi = mt_temp(&t), **lo = mt_temp(&t), **ne = mt_temp(&t);
    mt_tensor **differs = mt_temp(&t), **starts = mt_temp(&t), **run = mt_temp(&t);
    mt_tensor **at = mt_temp(&t), **at1 = mt_temp(&t), **ends = mt_temp(&t);
    mt_tensor **first = mt_temp(&t), **total = mt_temp(&t), *one = NULL;
    mt_status st = MT_OK;
    if (has_dim && self->ndim == 0) {
        st = mt_fail(MT_EINDEX, "Dimension specified as %lld but tensor has no dimensions",
                     (long long)a->i[0]);
        goto out_clear;
    }
    if ((st = has_dim ? mt_wrap_dim(a->i[0], self->ndim, &d) : MT_OK)) {
        goto out_clear;
    }
    int64_t all = -1;
    if ((st = has_dim ? mt_op_alias(self, x) : mt_op_reshape(self, 1, &all, x))) {
        goto out_clear;
    }
    const int64_t n = (*x)->sizes[d], one_i = 1;
    /* differs (n - 1): slice j + 1 is not slice j, somewhere */
    int64_t other[MT_MAX_DIMS], lead = n > 0 ? 1 : 0;
    int no = 0;
    for (int k = 0; k < (*x)->ndim; k++) {
        if (k != d) {
            other[no++] = k;
        }
    }
    if ((st = mt_op_narrow(*x, d, n > 0 ? 1 : 0, n > 0 ? n - 1 : 0, hi)) ||
        (st = mt_op_narrow(*x, d, 0, n > 0 ? n - 1 : 0, lo)) || (st = mt_op_ne(*hi, *lo, ne)) ||
        (st = no ? mt_op_any(*ne, no, other, false, differs) : mt_op_alias(*ne, differs)) ||
        (st = mt_op_full(1, &lead, mt_scalar_bool(true), MT_BOOL, mt_tensor_device(self), false,
                         first))) {
        goto out_clear;
    }
    /* starts (n): where a run begins (the first slice, and each that differs from the one
     * before); run (n): its number, cumsum - 1 */
    if ((st = mt_op_cat(2, (mt_tensor *[]){*first, *differs}, 0, starts)) ||
        (st = mt_op_cumsum(*starts, 0, MT_INT64, run)) || (st = mt_temp_int(&t, 1, &one)) ||
        (st = mt_op_sub(*run, one, mt_scalar_int(1), &a->out[1])) ||
        (st = mt_op_nonzero(*starts, at)) || (st = mt_op_reshape(*at, 1, &all, at1))) {
        goto out_clear;
    }
    /* values: the first slice of each run; counts: the distance to the next run's start */
    if ((st = mt_op_index_select(*x, d, *at1, &a->out[0])) ||
        (st = mt_op_full(1, &one_i, mt_scalar_int(n), MT_INT64, mt_tensor_device(self), false,
                         total)) ||
        (st = mt_op_cat(2, (mt_tensor *[]){*at1, *total}, 0, ends))) {
        goto out_clear;
    }
    {
        mt_tensor **nxt = mt_temp(&t), **cur = mt_temp(&t);
        const int64_t u = (*at1)->sizes[0];
        if ((st = mt_op_narrow(*ends, 0, 1, u, nxt)) || (st = mt_op_narrow(*ends, 0, 0, u, cur))) {
            goto out_clear;
        }
        st = mt_op_sub(*nxt, *cur, mt_scalar_int(1), &a->out[2]);
    }
    if (st == MT_OK && !has_dim) { /* inverse in self's shape */
        mt_tensor *flat = a->out[1];
        st = mt_op_reshape(flat, self->ndim, self->sizes, &a->out[1]);
        mt_tensor_release(flat);
    }
out_clear:
    mt_temps_clear(&t);
    if (st) {
        for (int k = 0; k < 3; k++) {
            mt_tensor_clear(&a->out[k]);
        }
    }
    return st;
}
