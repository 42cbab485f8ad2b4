/* quantile and nanquantile as composites (PyTorch's quantile_impl): the rows sorted (NaN last),
 * ranks from q, the values at the ranks rounded down and up gathered and mixed as the
 * interpolation says. In ops through the dispatcher, for every device, differentiable through
 * sort, gather and the arithmetic. */
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/op_chain.h"

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
 * and cast to self's dtype here, a tensor q's values with ops. *qt: q as used, a step of the
 * chain s (or q itself). */
static mt_status
quantile_checks(tmp *s, const char *fname, mt_tensor *self, mt_tensor *q, mt_tensor **qt)
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
    mt_tensor *r = NULL;
    if (q->is_wrapped_number) {
        *qt = own(s, mt_op__to_copy(q, self->dtype, mt_tensor_device(self), &r), &r);
        return s->st;
    }
    if (q->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "%s() q tensor must be same dtype as the input tensor", fname);
    }
    *qt = q;
    if (mt_tensor_numel(q) == 0) {
        return MT_OK;
    }
    mt_scalar lo, hi;
    mt_tensor *mn = own(s, mt_op_amin(q, 0, NULL, false, &r), &r);
    mt_tensor *mx = s->st ? NULL : own(s, mt_op_amax(q, 0, NULL, false, &r), &r);
    if (s->st || (s->st = mt_tensor_item(mn, &lo)) || (s->st = mt_tensor_item(mx, &hi))) {
        return s->st;
    }
    if (!(mt_scalar_to_double(lo) >= 0 && mt_scalar_to_double(hi) <= 1)) {
        return mt_fail(MT_ERUNTIME, "%s() q values must be in the range [0, 1]", fname);
    }
    return MT_OK;
}

typedef enum rounding { FLOOR, CEIL, ROUND } rounding;

/* an int64 0-dim number, a step of the chain s: int64 operands stay int64 */
static mt_tensor *
int_number(tmp *s, int64_t v)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_tensor_scalar(mt_scalar_int(v), MT_INT64, &r), &r);
}

/* x copied into dtype dt, a step of the chain s */
static mt_tensor *
copied_as(tmp *s, mt_tensor *x, mt_dtype dt)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op__to_copy(x, dt, mt_tensor_device(x), &r), &r);
}

/* (int64) ranks rounded down, up, or to the nearest with ties to even (as torch.round), a
 * step of the chain s. ranks >= 0, so truncation rounds down. */
static mt_tensor *
rank_index(tmp *s, mt_tensor *ranks, rounding how)
{
    mt_tensor *below = copied_as(s, ranks, MT_INT64);
    if (how == FLOOR) {
        return below;
    }
    mt_tensor *frac = bin(s, MT_OP_sub, ranks, below), *step;
    mt_tensor *half = num(s, how == CEIL ? 0.0 : 0.5);
    if (how == CEIL) { /* one more where ranks has a fraction */
        step = bin(s, MT_OP_gt, frac, half);
    } else { /* one more above .5, and at .5 when below is odd */
        mt_tensor *odd = bin(s, MT_OP_eq, bin(s, MT_OP_remainder, below, int_number(s, 2)),
                             int_number(s, 1));
        mt_tensor *tie_odd = bin(s, MT_OP_logical_and, bin(s, MT_OP_eq, frac, half), odd);
        step = bin(s, MT_OP_logical_or, bin(s, MT_OP_gt, frac, half), tie_odd);
    }
    return bin(s, MT_OP_add, below, step);
}

/* x reshaped to (ndim, shape), a step of the chain s */
static mt_tensor *
reshaped(tmp *s, mt_tensor *x, int ndim, const int64_t *shape)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_reshape(x, ndim, shape, &r), &r);
}

/* x's values along dim d at index (int64), a step of the chain s */
static mt_tensor *
gathered(tmp *s, mt_tensor *x, int d, mt_tensor *index)
{
    mt_tensor *r = NULL;
    return failed(s, x, index) ? NULL : own(s, mt_op_gather(x, d, index, &r), &r);
}

/* quantile (ignore_nan: nanquantile) of self along dim (all of self when none) at q (a scalar
 * or 1-D). The rows are sorted (NaN last) as (*rest, n); ranks q * (n - 1) (q * (valid - 1)
 * ignoring NaNs; n - 1 for a row with a NaN otherwise, so it gives NaN) pick the two values
 * around each, which are mixed by the interpolation. Result (Q, *rest), keepdim as PyTorch. */
static mt_status
quantile(mt_args *a, bool ignore_nan)
{
    const char *fname = "quantile"; /* nanquantile's messages say quantile too, as PyTorch's */
    mt_tensor *self = a->t[0], *q = a->t[1], *qt = NULL, *r = NULL;
    const bool has_dim = !(a->i_none & 1u), keepdim = a->b[0];
    interp how = LINEAR;
    tmp s = {0};
    int d = 0;
    if ((s.st = interpolation(fname, a->str[0], &how)) ||
        (s.st = quantile_checks(&s, fname, self, q, &qt)) ||
        (has_dim && (s.st = mt_wrap_dim(a->i[0], self->ndim, &d)))) {
        return finish(&s);
    }
    /* rows: (*rest, n) */
    int64_t all = -1, src = d, dst = -1;
    mt_tensor *rows = own(&s,
                          !has_dim || self->ndim == 0 ? mt_op_reshape(self, 1, &all, &r)
                                                      : mt_op_movedim(self, 1, &src, 1, &dst, &r),
                          &r);
    mt_tensor *sorted = NULL, *order = NULL;
    if (rows) { /* each result adopted, whatever became of the other */
        mt_status st = mt_op_sort(rows, -1, false, true, &sorted, &order);
        sorted = own(&s, st, &sorted);
        own(&s, st, &order);
    }
    if (s.st) {
        return finish(&s);
    }
    const int nr = rows->ndim - 1;
    const int64_t n = rows->sizes[nr], nq = qt->ndim ? qt->sizes[0] : 1;
    /* q as (Q, 1, ..., 1) against the rows' (*rest, 1) */
    int64_t qshape[MT_MAX_DIMS + 1], eshape[MT_MAX_DIMS + 1];
    qshape[0] = nq;
    eshape[0] = nq;
    for (int k = 0; k < nr; k++) {
        qshape[k + 1] = 1;
        eshape[k + 1] = rows->sizes[k];
    }
    qshape[nr + 1] = 1;
    eshape[nr + 1] = n;
    int64_t lastdim = -1;
    mt_tensor *qcol = reshaped(&s, qt, nr + 2, qshape), *ranks;
    mt_tensor *isnan = un(&s, MT_OP_isnan, sorted);
    if (ignore_nan) { /* ranks = max(q * (valid - 1), 0), valid the numbers of a row */
        mt_tensor *numbers = un(&s, MT_OP_logical_not, isnan);
        mt_tensor *valid = failed(&s, numbers, numbers)
                               ? NULL
                               : own(&s, mt_op_sum(numbers, 1, &lastdim, true, MT_INT64, &r), &r);
        mt_tensor *scaled = bin(&s, MT_OP_mul, qcol, bin(&s, MT_OP_sub, valid, int_number(&s, 1)));
        ranks = failed(&s, scaled, scaled)
                    ? NULL
                    : own(&s, mt_op_clamp_min(scaled, mt_scalar_int(0), &r), &r);
    } else { /* ranks = q * (n - 1), n - 1 in rows with a NaN */
        mt_tensor *span = num(&s, (double)(n - 1));
        mt_tensor *flag = failed(&s, isnan, isnan)
                              ? NULL
                              : own(&s, mt_op_any(isnan, 1, &lastdim, true, &r), &r);
        ranks = sel(&s, flag, span, bin(&s, MT_OP_mul, qcol, span));
    }
    /* the sorted rows, repeated for each q: (Q, *rest, n) */
    mt_tensor *sorted_q = s.st ? NULL : own(&s, mt_op_unsqueeze(sorted, 0, &r), &r);
    mt_tensor *sorted_e = failed(&s, sorted_q, sorted_q)
                              ? NULL
                              : own(&s, mt_op_expand(sorted_q, nr + 2, eshape, &r), &r);
    const rounding down = how == HIGHER ? CEIL : how == NEAREST ? ROUND : FLOOR;
    mt_tensor *below = rank_index(&s, ranks, down);
    mt_tensor *result = gathered(&s, sorted_e, nr + 1, below);
    if (how == LINEAR || how == MIDPOINT) { /* below + w (above - below) */
        mt_tensor *above_v = gathered(&s, sorted_e, nr + 1, rank_index(&s, ranks, CEIL));
        mt_tensor *w = how == MIDPOINT
                           ? num(&s, 0.5)
                           : bin(&s, MT_OP_sub, ranks,
                                 copied_as(&s, below, ranks ? ranks->dtype : MT_FLOAT64));
        mt_tensor *gap = bin(&s, MT_OP_sub, above_v, result);
        result = bin(&s, MT_OP_add, result, bin(&s, MT_OP_mul, w, gap));
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
    give(&s, reshaped(&s, result, no, oshape), &a->out[0]);
    return finish(&s);
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
