/* Composite nn ops, in terms of other ops through the dispatcher: dropout (bernoulli_ noise),
 * mse_loss, l1_loss and cross_entropy_loss (log_softmax + nll_loss, plus label smoothing and
 * class-probability targets), nll_loss_forward (nll_loss and its total weight), the loss reduction the loss kernels share, and the binary cross
 * entropy's inputs and loss prepared for each device's loop (mt_bce_with).
 *
 * Each function keeps its intermediate tensors in a scratch array released on one exit, so
 * an error at any step leaks nothing. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/front.h"
#include "ops/nn.h"
#include "ops/ops.h"

#define SCRATCH 12 /* the most intermediates one composite here holds */

/* out = where(cond, 0, x): PyTorch's x.masked_fill(cond, 0) */
static mt_status
zero_where(mt_tensor *cond, mt_tensor *x, mt_tensor **out)
{
    mt_tensor *zero = NULL;
    mt_status st = mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &zero);
    if (st == MT_OK) {
        st = mt_op_where(cond, zero, x, out);
        mt_tensor_release(zero);
    }
    return st;
}

/* out = sum of x over dim, or over everything when dim < 0. */
static mt_status
sum_dim(mt_tensor *x, int dim, mt_tensor **out)
{
    int64_t d = dim;
    return mt_op_sum(x, 1, dim >= 0 ? &d : NULL, false, -1, out);
}

static void
release_all(mt_tensor **t, int n)
{
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&t[k]);
    }
}

mt_status
mt_loss_finish(mt_tensor *loss, mt_tensor *weight, int64_t reduction, mt_tensor **out)
{
    mt_status st = MT_OK;
    if (weight) {
        if ((st = mt_op_mul_(loss, weight, NULL))) {
            goto out_release;
        }
    }
    if (reduction == MT_REDUCTION_NONE) {
        *out = loss;
        return MT_OK;
    }
    st = reduction == MT_REDUCTION_SUM ? mt_op_sum(loss, 0, NULL, false, -1, out)
                                       : mt_op_mean(loss, 0, NULL, false, -1, out);
out_release:
    mt_tensor_release(loss);
    return st;
}

mt_status
mt_loss_store(mt_tensor *loss, mt_tensor *weight, int64_t reduction, mt_tensor *out)
{
    mt_tensor *r = NULL;
    mt_status st = mt_loss_finish(loss, weight, reduction, &r);
    if (st == MT_OK) {
        st = mt_front_write_result(out, r);
    }
    mt_tensor_clear(&r);
    return st;
}

/* ---- binary cross entropy: its inputs and its loss, for a device's loop ---- */

/* *out = t broadcast to (ndim, sizes) and contiguous in dtype dt: t itself when it is so */
static mt_status
dense_as(mt_tensor *t, int ndim, const int64_t *sizes, mt_dtype dt, mt_tensor **out)
{
    if (t->dtype == dt && t->ndim == ndim && mt_tensor_is_contiguous(t) &&
        memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    mt_status st = mt_tensor_empty(ndim, sizes, dt, mt_tensor_device(t), out);
    if (st == MT_OK && mt_numel(ndim, sizes) > 0 && (st = mt_op_copy_(*out, t, NULL))) {
        mt_tensor_clear(out);
    }
    return st;
}

mt_status
mt_bce_with(mt_args *a, bool logits, mt_bce_fn loop)
{
    const mt_loss_plan *p = &a->plan->loss;
    mt_tensor *ins[3] = {a->t[0], a->t[1], logits ? a->t[3] : NULL}, *weight = a->t[2];
    mt_tensor *dense[3] = {NULL, NULL, NULL}, *loss = NULL, *out = a->out[0];
    const bool none = a->i[0] == MT_REDUCTION_NONE;
    mt_status st = MT_OK;
    for (int k = 0; k < 3 && st == MT_OK; k++) {
        if (ins[k]) {
            st = dense_as(ins[k], p->ndim, p->sizes, p->dt, &dense[k]);
        }
    }
    /* without a reduction the loss is the result, stated by the front end in this shape and
     * dtype, contiguous; else a workspace the reduction reads */
    if (st == MT_OK && none) {
        loss = mt_tensor_retain(out);
    } else if (st == MT_OK) {
        st = mt_tensor_empty(p->ndim, p->sizes, p->dt, mt_tensor_device(out), &loss);
    }
    if (st || (st = loop(dense, logits, loss))) {
        goto out_release;
    }
    if (!none) {
        st = mt_loss_store(loss, weight, a->i[0], out);
        loss = NULL; /* taken over */
    } else if (weight && (st = mt_op_mul_(out, weight, NULL)) == MT_OK) {
        atomic_store(&out->version->value, 0); /* weighed in place, still a new result */
    }
out_release:
    mt_tensor_clear(&loss);
    for (int k = 0; k < 3; k++) {
        mt_tensor_clear(&dense[k]);
    }
    return st;
}

/* ---- dropout ---- */

/* PyTorch's _dropout_impl: x times noise, noise a bernoulli_(1 - p) draw laid out as x (as
 * empty_like) or, for feature dropout, one per (N, C) channel; then 0 or 1 / (1 - p), or alpha
 * dropout's affine a * noise + b that keeps SELU's mean and variance. Not training, p == 0 or an
 * empty x give x itself. */
static mt_status
dropout_impl(mt_args *a, bool feature, bool alpha, bool inplace)
{
    mt_tensor *x = a->t[0], *t[SCRATCH] = {NULL};
    double p = mt_scalar_to_double(a->s[0]);
    mt_op mul = inplace ? MT_OP_mul_ : MT_OP_mul;
    mt_status st;
    if (!(p >= 0 && p <= 1)) {
        return mt_fail(MT_ERUNTIME, "dropout probability has to be between 0 and 1, but got %g", p);
    }
    if (p == 0 || !a->b[0] || mt_tensor_numel(x) == 0) {
        a->out[0] = mt_tensor_retain(x);
        return MT_OK;
    }
    if (feature && x->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "Feature dropout requires at least 2 dimensions in the input");
    }
    if (p == 1) {
        return mt_call_with_number(mul, x, mt_scalar_int(0), &a->out[0]);
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        sizes[d] = feature && d >= 2 ? 1 : x->sizes[d];
    }
    if (feature) {
        st = mt_op_empty(x->ndim, sizes, x->dtype, mt_tensor_device(x), false, &t[0]);
    } else {
        mt_preserve_strides(x, strides);
        st = mt_tensor_empty_strided(x->ndim, sizes, strides, x->dtype, mt_tensor_device(x), &t[0]);
    }
    if (st || (st = mt_call_with_number(MT_OP_bernoulli_, t[0], mt_scalar_float(1 - p), &t[1]))) {
        goto out_release;
    }
    if (!alpha) {
        if ((st = mt_call_with_number(MT_OP_div_, t[0], mt_scalar_float(1 - p), &t[2]))) {
            goto out_release;
        }
        st = inplace ? mt_op_mul_(x, t[0], &a->out[0]) : mt_op_mul(x, t[0], &a->out[0]);
        goto out_release;
    }
    /* b = (noise - 1) * alpha * a + alpha * a * p; noise *= a; out = x * noise + b */
    const double alpha_selu = 1.7580993408473766;
    double k = 1. / sqrt((alpha_selu * alpha_selu * p + 1) * (1 - p));
    if ((st = mt_call_with_number(MT_OP_add, t[0], mt_scalar_int(-1), &t[3])) ||
        (st = mt_call_with_number(MT_OP_mul_, t[3], mt_scalar_float(alpha_selu * k), &t[4])) ||
        (st = mt_call_with_number(MT_OP_add_, t[3], mt_scalar_float(alpha_selu * k * p), &t[5])) ||
        (st = mt_call_with_number(MT_OP_mul_, t[0], mt_scalar_float(k), &t[6])) ||
        (st = inplace ? mt_op_mul_(x, t[0], &t[7]) : mt_op_mul(x, t[0], &t[7]))) {
        goto out_release;
    }
    st = mt_op_add_(t[7], t[3], mt_scalar_int(1), &a->out[0]);
out_release:
    release_all(t, SCRATCH);
    return st;
}

// input (any shape; feature forms at least 2 dims), p, train; out = input * noise (noise in
// {0, 1/(1-p)} per element or per (N, C) channel; alpha forms an affine of it)
#define DROPOUT(name, feature, alpha)                  \
    mt_status mt_composite_##name(mt_args *a)          \
    {                                                  \
        return dropout_impl(a, feature, alpha, false); \
    }                                                  \
    mt_status mt_composite_##name##_(mt_args *a)       \
    {                                                  \
        return dropout_impl(a, feature, alpha, true);  \
    }
DROPOUT(dropout, false, false)
DROPOUT(feature_dropout, true, false)
DROPOUT(alpha_dropout, false, true)
DROPOUT(feature_alpha_dropout, true, true)

/* ---- regression losses ---- */

// self, target (broadcast together); out = (self - target)^2, reduced
mt_status
mt_composite_mse_loss(mt_args *a)
{
    mt_tensor *d = NULL;
    mt_status st = mt_op_sub(a->t[0], a->t[1], mt_scalar_int(1), &d);
    if (st) {
        return st;
    }
    /* squared in place: the difference is this call's own (the node is MseLossBackward0) */
    if ((st = mt_op_mul_(d, d, NULL))) {
        mt_tensor_release(d);
        return st;
    }
    return mt_loss_finish(d, NULL, a->i[0], &a->out[0]);
}

// self, target (broadcast together); out = |self - target|, reduced
mt_status
mt_composite_l1_loss(mt_args *a)
{
    mt_tensor *d = NULL, *ad = NULL;
    mt_status st = mt_op_sub(a->t[0], a->t[1], mt_scalar_int(1), &d);
    if (st == MT_OK && (st = mt_op_abs(d, &ad)) == MT_OK) {
        st = mt_loss_finish(ad, NULL, a->i[0], &a->out[0]);
    }
    mt_tensor_clear(&d);
    return st;
}

/* ---- cross entropy ---- */

/* weight (C) seen as (1, C, 1, ...) to broadcast against logp along class_dim. */
static mt_status
weight_along(mt_tensor *weight, const mt_tensor *logp, int class_dim, mt_tensor **out)
{
    int64_t shape[MT_MAX_DIMS];
    for (int d = 0; d < logp->ndim; d++) {
        shape[d] = d == class_dim ? -1 : 1;
    }
    return mt_op_view(weight, logp->ndim, shape, out);
}

/* Class-probability targets (target shaped as self): out = -sum_c w_c p_c logp_c, with
 * p = p (1 - eps) + eps / C; the mean divides by the number of rows, numel / C. */
static mt_status
cross_entropy_probs(mt_args *a, mt_tensor *logp, int class_dim, double eps, mt_tensor **out)
{
    mt_tensor *target = a->t[1], *weight = a->t[2], *t[SCRATCH] = {NULL};
    int64_t reduction = a->i[0], n_classes = logp->ndim ? logp->sizes[class_dim] : 1;
    mt_status st = MT_OK;
    if (!(a->i_none & 2u) && a->i[1] != -100) {
        return mt_fail(MT_ERUNTIME, "ignore_index is not supported for floating point target");
    }
    mt_tensor *p = target, *prod;
    if (eps > 0) {
        if ((st = mt_call_with_number(MT_OP_mul, target, mt_scalar_float(1 - eps), &t[0])) ||
            (st = mt_call_with_number(MT_OP_add, t[0], mt_scalar_float(eps / (double)n_classes),
                                      &t[1]))) {
            goto out_release;
        }
        p = t[1];
    }
    if ((st = mt_op_mul(logp, p, &t[2]))) {
        goto out_release;
    }
    prod = t[2];
    if (weight) {
        if ((st = weight_along(weight, logp, class_dim, &t[3])) ||
            (st = mt_op_mul(prod, t[3], &t[4]))) {
            goto out_release;
        }
        prod = t[4];
    }
    if ((st = sum_dim(prod, reduction == MT_REDUCTION_NONE ? class_dim : -1, &t[5]))) {
        goto out_release;
    }
    if (reduction != MT_REDUCTION_MEAN) {
        st = mt_op_neg(t[5], out);
        goto out_release;
    }
    double rows = n_classes ? (double)(mt_tensor_numel(logp) / n_classes) : 0;
    if ((st = mt_op_neg(t[5], &t[6]))) {
        goto out_release;
    }
    st = mt_call_with_number(MT_OP_div, t[6], mt_scalar_float(rows), out);
out_release:
    release_all(t, SCRATCH);
    return st;
}

/* The label-smoothing term of class-index targets: -sum_c w_c logp_c per element, zero where
 * target is ignore_index, reduced (the mean divides by the weights of the targets kept). */
static mt_status
smoothing_term(mt_args *a, mt_tensor *logp, int class_dim, mt_tensor **out)
{
    mt_tensor *target = a->t[1], *weight = a->t[2], *t[SCRATCH] = {NULL};
    int64_t reduction = a->i[0];
    mt_tensor *prod = logp;
    mt_status st = mt_call_with_number(MT_OP_eq, target, mt_scalar_int(a->i[1]), &t[0]);
    if (st) {
        goto out_release;
    }
    if (weight) {
        if ((st = weight_along(weight, logp, class_dim, &t[1])) ||
            (st = mt_op_mul(logp, t[1], &t[2]))) {
            goto out_release;
        }
        prod = t[2];
    }
    if ((st = sum_dim(prod, class_dim, &t[3])) || (st = mt_op_neg(t[3], &t[4])) ||
        (st = zero_where(t[0], t[4], &t[5]))) {
        goto out_release;
    }
    if (reduction == MT_REDUCTION_NONE) {
        *out = mt_tensor_retain(t[5]);
        goto out_release;
    }
    if ((st = sum_dim(t[5], -1, &t[6]))) {
        goto out_release;
    }
    if (reduction == MT_REDUCTION_SUM) {
        *out = mt_tensor_retain(t[6]);
        goto out_release;
    }
    if (weight) {
        /* the weights of the kept targets: weight gathered by target (ignored ones as 0) */
        int64_t col[2] = {-1, 1};
        if ((st = zero_where(t[0], target, &t[7])) || (st = mt_op_view(weight, 2, col, &t[8]))) {
            goto out_release;
        }
        if ((st = mt_op_embedding(t[8], t[7], -1, false, false, &t[9])) ||
            (st = mt_op_view(t[9], target->ndim, target->sizes, &t[10])) ||
            (st = zero_where(t[0], t[10], &t[11]))) {
            goto out_release;
        }
    } else if ((st = mt_op_logical_not(t[0], &t[11]))) {
        goto out_release;
    }
    mt_tensor *kept = t[11];
    t[11] = NULL;
    st = sum_dim(kept, -1, &t[11]);
    mt_tensor_release(kept);
    if (st == MT_OK) {
        st = mt_op_div(t[6], t[11], NULL, out);
    }
out_release:
    release_all(t, SCRATCH);
    return st;
}

// self (C) or (N, C, d1, ...), target (N, d1, ...) class indices or shaped as self
// (probabilities), weight (C) or NULL; out = the cross entropy, reduced
mt_status
mt_composite_cross_entropy_loss(mt_args *a)
{
    mt_tensor *self = a->t[0], *target = a->t[1], *t[SCRATCH] = {NULL};
    double eps = mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_double(a->s[0]);
    int class_dim = self->ndim == 1 ? 0 : 1;
    mt_status st;
    if (!(eps >= 0 && eps <= 1)) {
        return mt_fail(MT_ERUNTIME, "label_smoothing must be between 0.0 and 1.0. Got: %g", eps);
    }
    if ((st = mt_op_log_softmax(self, class_dim, -1, &t[0]))) {
        return st;
    }
    if (mt_dtype_is_float(target->dtype)) {
        st = cross_entropy_probs(a, t[0], class_dim, eps, &a->out[0]);
        goto out_release;
    }
    mt_tensor *weight = a->t[2];
    int64_t reduction = a->i[0], ignore_index = a->i[1];
    if (eps == 0) {
        st = mt_op_nll_loss(t[0], target, weight, reduction, ignore_index, &a->out[0]);
        goto out_release;
    }
    int64_t n_classes = self->sizes[class_dim];
    if ((st = mt_op_nll_loss(t[0], target, weight, reduction, ignore_index, &t[1])) ||
        (st = smoothing_term(a, t[0], class_dim, &t[2])) ||
        (st = mt_call_with_number(MT_OP_mul, t[1], mt_scalar_float(1 - eps), &t[3])) ||
        (st = mt_call_with_number(MT_OP_mul, t[2], mt_scalar_float(eps / (double)n_classes),
                                  &t[4]))) {
        goto out_release;
    }
    st = mt_op_add(t[3], t[4], mt_scalar_int(1), &a->out[0]);
out_release:
    release_all(t, SCRATCH);
    return st;
}

// grad_output, output (any shape), dim: grad_output - exp(output) * sum(grad_output) along dim,
// log_softmax's backward as a chain of ops (the CPU has a kernel of one pass, reduce_dim.c)
// self (C) or (N, C), target, weight (C) or None: (nll_loss, total_weight), the kept targets'
// weight sum (their count without weight; 0 for an (N, C) input's reduction none), which no
// gradient reaches. Like PyTorch's, more dims are nll_loss2d's, not this function's.
mt_status
mt_composite_nll_loss_forward(mt_args *a)
{
    mt_tensor *self = a->t[0], *minus_ones = NULL;
    int64_t reduction = a->i[0], ignore_index = a->i[1];
    if (self->ndim < 1 || self->ndim > 2) {
        return mt_fail(MT_ERUNTIME, "input tensor should be 1D or 2D");
    }
    mt_status st = mt_op_nll_loss(self, a->t[1], a->t[2], reduction, ignore_index, &a->out[0]);
    if (st) {
        return st;
    }
    bool grad_mode = mt_grad_enabled();
    mt_set_grad_enabled(false);
    if (reduction == MT_REDUCTION_NONE && self->ndim == 2) {
        st = mt_op_zeros(0, NULL, self->dtype, mt_tensor_device(self), false, &a->out[1]);
    } else if ((st = mt_op_full(self->ndim, self->sizes, mt_scalar_int(-1), self->dtype,
                                mt_tensor_device(self), false, &minus_ones)) == MT_OK) {
        /* the summed loss of -1 at every class is the sum of the kept targets' weights */
        st = mt_op_nll_loss(minus_ones, a->t[1], a->t[2], MT_REDUCTION_SUM, ignore_index,
                            &a->out[1]);
    }
    mt_set_grad_enabled(grad_mode);
    mt_tensor_clear(&minus_ones);
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

mt_status
mt_composite__log_softmax_backward_data(mt_args *a)
{
    mt_tensor *s = NULL, *e = NULL, *p = NULL;
    const int64_t dim = a->plan->reduce.dim;
    mt_status st;
    if ((st = mt_op_sum(a->t[0], 1, &dim, true, -1, &s)) == MT_OK &&
        (st = mt_op_exp(a->t[1], &e)) == MT_OK && (st = mt_op_mul(e, s, &p)) == MT_OK) {
        st = mt_op_sub(a->t[0], p, mt_scalar_int(1), &a->out[0]);
    }
    mt_tensor_clear(&s);
    mt_tensor_clear(&e);
    mt_tensor_clear(&p);
    return st;
}

// grad_output, output (any shape), dim: output * (grad_output - sum(grad_output * output)) along
// dim, softmax's backward as a chain of ops (the CPU and CUDA have kernels of one pass)
mt_status
mt_composite__softmax_backward_data(mt_args *a)
{
    mt_tensor *gy = NULL, *s = NULL, *d = NULL;
    const int64_t dim = a->plan->reduce.dim;
    mt_status st;
    if ((st = mt_op_mul(a->t[0], a->t[1], &gy)) == MT_OK &&
        (st = mt_op_sum(gy, 1, &dim, true, -1, &s)) == MT_OK &&
        (st = mt_op_sub(a->t[0], s, mt_scalar_int(1), &d)) == MT_OK) {
        st = mt_op_mul(a->t[1], d, &a->out[0]);
    }
    mt_tensor_clear(&gy);
    mt_tensor_clear(&s);
    mt_tensor_clear(&d);
    return st;
}
