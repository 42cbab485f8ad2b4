/* quantile and nanquantile as composites (PyTorch's quantile_impl): the rows sorted (NaN last),
 * ranks from q, the values at the ranks rounded down and up gathered and mixed as the
 * interpolation says. In ops through the dispatcher, for every device, differentiable through
 * sort, gather and the arithmetic. */
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/temps.h"

typedef enum interp { LINEAR, LOWER, HIGHER, MIDPOINT, NEAREST } interp;

static mt_status
interpolation(const char *fname, const char *s, interp *out)
{
    static const char *const names[] = {"linear", "lower", "higher", "midpoint", "nearest"};
    for (int k = 0; k < 5; k++) {
        if (strcmp(s, names[k]) == 0) {
            *out = (interp)k;
            return MT_OK;
        }
    }
    return mt_fail(MT_ERUNTIME,
                   "%s() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                   "but got %s",
                   fname, s);
}

/* PyTorch's quantile_checks, and q in [0, 1]: a Python number q (a wrapped one) is checked
 * and cast to self's dtype here, a tensor q's values with ops. */
static mt_status
quantile_checks(mt_temps *p, const char *fname, mt_tensor *self, mt_tensor *q, mt_tensor **qt)
{
    if (q->is_wrapped_number) {
        mt_scalar v;
        mt_status st = mt_tensor_item(q, &v);
        double x = mt_scalar_to_double(v);
        if (st == MT_OK && !(x >= 0 && x <= 1)) {
            return mt_fail(MT_ERUNTIME, "%s() q must be in the range [0, 1] but got %g", fname, x);
        }
    }
    if (mt_tensor_numel(self) == 0) {
        return mt_fail(MT_ERUNTIME, "%s() input tensor must be non-empty", fname);
    }
    if (q->ndim > 1) {
        return mt_fail(MT_ERUNTIME, "%s() q must be a scalar or 1D tensor", fname);
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s() input tensor must be either float or double dtype",
                       fname);
    }
    if (q->is_wrapped_number) {
        mt_tensor **cast = mt_temp(p);
        mt_status st = mt_op__to_copy(q, self->dtype, mt_tensor_device(self), cast);
        *qt = *cast;
        return st;
    }
    if (q->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "%s() q tensor must be same dtype as the input tensor", fname);
    }
    *qt = q;
    if (mt_tensor_numel(q) == 0) {
        return MT_OK;
    }
    mt_tensor **lo = mt_temp(p), **hi = mt_temp(p);
    mt_scalar a, b;
    mt_status st = mt_op_amin(q, 0, NULL, false, lo);
    if (st || (st = mt_op_amax(q, 0, NULL, false, hi)) || (st = mt_tensor_item(*lo, &a)) ||
        (st = mt_tensor_item(*hi, &b))) {
        return st;
    }
    if (!(mt_scalar_to_double(a) >= 0 && mt_scalar_to_double(b) <= 1)) {
        return mt_fail(MT_ERUNTIME, "%s() q values must be in the range [0, 1]", fname);
    }
    return MT_OK;
}

typedef enum rounding { FLOOR, CEIL, ROUND } rounding;

/* *idx (int64) = ranks rounded down, up, or to the nearest with ties to even (as torch.round).
 * ranks >= 0, so truncation rounds down. */
static mt_status
rank_index(mt_temps *p, mt_tensor *ranks, rounding how, mt_tensor **idx)
{
    mt_tensor **below = mt_temp(p), **frac = mt_temp(p), **step = mt_temp(p), **out = mt_temp(p);
    mt_tensor *half = NULL;
    mt_status st = mt_op__to_copy(ranks, MT_INT64, mt_tensor_device(ranks), below);
    if (st || how == FLOOR) {
        *idx = *below;
        return st;
    }
    if ((st = mt_op_sub(ranks, *below, mt_scalar_int(1), frac)) ||
        (st = mt_temp_number(p, how == CEIL ? 0.0 : 0.5, &half))) {
        return st;
    }
    if (how == CEIL) { /* one more where ranks has a fraction */
        st = mt_op_gt(*frac, half, step);
    } else { /* one more above .5, and at .5 when below is odd */
        mt_tensor **more = mt_temp(p), **tie = mt_temp(p), **rem = mt_temp(p), **odd = mt_temp(p);
        mt_tensor **tie_odd = mt_temp(p), *two = NULL, *one = NULL;
        if ((st = mt_op_gt(*frac, half, more)) || (st = mt_op_eq(*frac, half, tie)) ||
            (st = mt_temp_int(p, 2, &two)) || (st = mt_temp_int(p, 1, &one)) ||
            (st = mt_op_remainder(*below, two, rem)) || (st = mt_op_eq(*rem, one, odd)) ||
            (st = mt_op_logical_and(*tie, *odd, tie_odd))) {
            return st;
        }
        st = mt_op_logical_or(*more, *tie_odd, step);
    }
    if (st == MT_OK) {
        st = mt_op_add(*below, *step, mt_scalar_int(1), out);
    }
    *idx = *out;
    return st;
}

/* quantile (ignore_nan: nanquantile) of self along dim (all of self when none) at q (a scalar
 * or 1-D). The rows are sorted (NaN last) as (*rest, n); ranks q * (n - 1) (q * (valid - 1)
 * ignoring NaNs; n - 1 for a row with a NaN otherwise, so it gives NaN) pick the two values
 * around each, which are mixed by the interpolation. Result (Q, *rest), keepdim as PyTorch. */
static mt_status
quantile(mt_args *a, bool ignore_nan)
{
    const char *fname = "quantile"; /* nanquantile's messages say quantile too, as PyTorch's */
    mt_tensor *self = a->t[0], *q = a->t[1], *qt = NULL;
    const bool has_dim = !(a->i_none & 1u), keepdim = a->b[0];
    interp how = LINEAR;
    mt_temps p = {0};
    mt_status st = interpolation(fname, a->str[0], &how);
    if (st || (st = quantile_checks(&p, fname, self, q, &qt))) {
        goto out_clear;
    }
    int d = 0;
    if (has_dim && (st = mt_wrap_dim(a->i[0], self->ndim, &d))) {
        goto out_clear;
    }
    /* rows: (*rest, n) */
    mt_tensor **rows = mt_temp(&p), **sorted = mt_temp(&p), **order = mt_temp(&p);
    int64_t all = -1, src = d, dst = -1;
    if (!has_dim || self->ndim == 0) {
        st = mt_op_reshape(self, 1, &all, rows);
    } else {
        st = mt_op_movedim(self, 1, &src, 1, &dst, rows);
    }
    if (st || (st = mt_op_sort(*rows, -1, false, true, sorted, order))) {
        goto out_clear;
    }
    const int nr = (*rows)->ndim - 1;
    const int64_t n = (*rows)->sizes[nr], nq = qt->ndim ? qt->sizes[0] : 1;
    /* q as (Q, 1, ..., 1) against the rows' (*rest, 1) */
    int64_t qshape[MT_MAX_DIMS + 1], eshape[MT_MAX_DIMS + 1];
    qshape[0] = nq;
    eshape[0] = nq;
    for (int k = 0; k < nr; k++) {
        qshape[k + 1] = 1;
        eshape[k + 1] = (*rows)->sizes[k];
    }
    qshape[nr + 1] = 1;
    eshape[nr + 1] = n;
    mt_tensor **qcol = mt_temp(&p), **ranks = mt_temp(&p), **ranks_b = mt_temp(&p);
    mt_tensor **isnan = mt_temp(&p), **flag = mt_temp(&p);
    mt_tensor **sorted_q = mt_temp(&p), **sorted_e = mt_temp(&p), **below_v = mt_temp(&p);
    mt_tensor *span = NULL, *below = NULL;
    int64_t lastdim = -1;
    if ((st = mt_op_reshape(qt, nr + 2, qshape, qcol))) {
        goto out_clear;
    }
    if (ignore_nan) { /* ranks = max(q * (valid - 1), 0), valid the numbers of a row */
        mt_tensor **numbers = mt_temp(&p), **valid = mt_temp(&p), **vm1 = mt_temp(&p);
        mt_tensor **scaled = mt_temp(&p);
        if ((st = mt_op_isnan(*sorted, isnan)) || (st = mt_op_logical_not(*isnan, numbers)) ||
            (st = mt_op_sum(*numbers, 1, &lastdim, true, MT_INT64, valid)) ||
            (st = mt_temp_int(&p, 1, &span)) ||
            (st = mt_op_sub(*valid, span, mt_scalar_int(1), vm1)) ||
            (st = mt_op_mul(*qcol, *vm1, scaled)) ||
            (st = mt_op_clamp_min(*scaled, mt_scalar_int(0), ranks_b))) {
            goto out_clear;
        }
    } else { /* ranks = q * (n - 1), n - 1 in rows with a NaN */
        if ((st = mt_temp_number(&p, (double)(n - 1), &span)) ||
            (st = mt_op_mul(*qcol, span, ranks)) || (st = mt_op_isnan(*sorted, isnan)) ||
            (st = mt_op_any(*isnan, 1, &lastdim, true, flag)) ||
            (st = mt_op_where(*flag, span, *ranks, ranks_b))) {
            goto out_clear;
        }
    }
    /* the sorted rows, repeated for each q: (Q, *rest, n) */
    if ((st = mt_op_unsqueeze(*sorted, 0, sorted_q)) ||
        (st = mt_op_expand(*sorted_q, nr + 2, eshape, sorted_e)) ||
        (st = rank_index(&p, *ranks_b,
                         how == HIGHER    ? CEIL
                         : how == NEAREST ? ROUND
                                          : FLOOR,
                         &below)) ||
        (st = mt_op_gather(*sorted_e, nr + 1, below, below_v))) {
        goto out_clear;
    }
    mt_tensor *result = *below_v;
    if (how == LINEAR || how == MIDPOINT) { /* below + w (above - below) */
        mt_tensor **above_v = mt_temp(&p), **gap = mt_temp(&p), **frac = mt_temp(&p);
        mt_tensor **part = mt_temp(&p), **mixed = mt_temp(&p), **below_f = mt_temp(&p);
        mt_tensor *above = NULL, *w = NULL;
        if ((st = rank_index(&p, *ranks_b, CEIL, &above)) ||
            (st = mt_op_gather(*sorted_e, nr + 1, above, above_v)) ||
            (st = mt_op_sub(*above_v, *below_v, mt_scalar_int(1), gap))) {
            goto out_clear;
        }
        if (how == MIDPOINT) {
            st = mt_temp_number(&p, 0.5, &w);
        } else if ((st = mt_op__to_copy(below, (*ranks_b)->dtype, mt_tensor_device(below),
                                        below_f)) == MT_OK &&
                   (st = mt_op_sub(*ranks_b, *below_f, mt_scalar_int(1), frac)) == MT_OK) {
            w = *frac;
        }
        if (st || (st = mt_op_mul(w, *gap, part)) ||
            (st = mt_op_add(*below_v, *part, mt_scalar_int(1), mixed))) {
            goto out_clear;
        }
        result = *mixed;
    }
    /* (Q, *rest, 1) to the result's shape */
    int64_t oshape[MT_MAX_DIMS + 1];
    int no = 0;
    if (qt->ndim) {
        oshape[no++] = nq;
    }
    if (!has_dim) {
        for (int k = 0; keepdim && k < self->ndim; k++) {
            oshape[no++] = 1;
        }
    } else {
        for (int k = 0; k < self->ndim; k++) {
            if (k != d || keepdim) {
                oshape[no++] = k == d ? 1 : self->sizes[k];
            }
        }
    }
    st = mt_op_reshape(result, no, oshape, &a->out[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}

// self (any shape), q (a number, or (Q)); out: self's q-quantiles along dim (or of all of self)
mt_status
mt_composite_quantile(mt_args *a)
{
    return quantile(a, false);
}

mt_status
mt_composite_nanquantile(mt_args *a)
{
    return quantile(a, true);
}
