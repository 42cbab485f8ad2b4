/* The front ends of batch_norm and of the backward ops of layer_norm, batch_norm and nll_loss,
 * for every device: PyTorch's checks, and the plan (mt_norm_plan, mt_loss_plan) the kernels of
 * csrc/cpu/nn.c, nn_backward.c and cuda/ops_norm.c compute with; and what those kernels share
 * while computing (the running statistics' update, the backward ops' inputs). */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ops/arg_checks.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"

static bool
same_shape(const mt_tensor *a, const mt_tensor *b)
{
    if (a->ndim != b->ndim) {
        return false;
    }
    for (int d = 0; d < a->ndim; d++) {
        if (a->sizes[d] != b->sizes[d]) {
            return false;
        }
    }
    return true;
}

static mt_status
float_only(const char *op, const mt_tensor *t)
{
    return mt_dtype_is_float(t->dtype) ? MT_OK : mt_fail_not_implemented(op, "", t->dtype);
}

/* p (or NULL) holds n elements, else the backward ops' message */
static mt_status
features(const char *op, const mt_tensor *p, int64_t n)
{
    if (p && mt_tensor_numel(p) != n) {
        return mt_fail(MT_ERUNTIME, "%s: expected a parameter of %lld elements, got %lld", op,
                       (long long)n, (long long)mt_tensor_numel(p));
    }
    return MT_OK;
}

static mt_status
check_channels(const char *what, const mt_tensor *t, int64_t C)
{
    if (t && mt_tensor_numel(t) != C) {
        return mt_fail(MT_ERUNTIME, "%s should contain %lld elements not %lld", what, (long long)C,
                       (long long)mt_tensor_numel(t));
    }
    return MT_OK;
}

/* outer, C, inner of an (N, C, *) input */
static void
channels(const mt_tensor *input, int64_t *outer, int64_t *C, int64_t *inner)
{
    *outer = input->sizes[0];
    *C = input->sizes[1];
    *inner = 1;
    for (int d = 2; d < input->ndim; d++) {
        *inner *= input->sizes[d];
    }
}

static mt_status
running_defined(const mt_tensor *rm, const mt_tensor *rv)
{
    if (rm == NULL || rv == NULL) {
        return mt_fail(MT_ERUNTIME, "running_%s must be defined in evaluation mode",
                       rm == NULL ? "mean" : "var");
    }
    return MT_OK;
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or NULL
mt_status
mt_front_batch_norm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *input = a->t[0], *rm = a->t[3], *rv = a->t[4];
    const char *device = mt_front_on_cuda(input) ? "CUDA" : "CPU";
    int64_t *outer = &p->norm.outer, *C = &p->norm.C, *inner = &p->norm.inner;
    p->norm.eps = mt_scalar_to_double(a->s[1]);
    if (input->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "batch_norm: expected 2D or more input (got %dD input)",
                       input->ndim);
    }
    channels(input, outer, C, inner);
    mt_status st;
    if ((st = check_channels("weight", a->t[1], *C)) ||
        (st = check_channels("bias", a->t[2], *C)) ||
        (st = check_channels("running_mean", rm, *C)) ||
        (st = check_channels("running_var", rv, *C)) ||
        (!a->b[0] && (st = running_defined(rm, rv))) ||
        (st = float_only(mt_front_on_cuda(input) ? "batch_norm_cuda" : "batch_norm_cpu", input))) {
        return st;
    }
    for (int k = 1; k < 5; k++) {
        if ((st = mt_check_param_dtype(input, a->t[k], device))) {
            return st;
        }
    }
    /* a channels-last input gives a channels-last result, as in PyTorch */
    return mt_front_output_format(p, input->dtype, input->ndim, input->sizes,
                                  mt_suggest_memory_format(input));
}

/* A normalisation's backward results, in grad_out's dtype dt: the gradients of input (its
 * shape, in memory format fmt) and of weight and bias (each of the given shape). */
static mt_status
norm_backward_outputs(mt_plan *p, mt_dtype dt, const mt_tensor *input, mt_memory_format fmt,
                      int ndim, const int64_t *sizes)
{
    mt_status st = mt_front_output_format(p, dt, input->ndim, input->sizes, fmt);
    for (int k = 0; k < 2 && st == MT_OK; k++) {
        st = mt_front_output(p, dt, ndim, sizes);
    }
    return st;
}

// grad_out, input (N, C, *), weight, running_mean, running_var (C) or NULL (the running
// statistics are read when not training)
mt_status
mt_front_batch_norm_backward(const mt_args *a, mt_plan *p)
{
    int64_t *outer = &p->norm.outer, *C = &p->norm.C, *inner = &p->norm.inner;
    double *eps = &p->norm.eps;
    const mt_tensor *input = a->t[1];
    const char *op = "batch_norm_backward";
    bool training = a->b[0];
    if (input->ndim < 2 || !same_shape(a->t[0], input)) {
        return mt_fail(MT_ERUNTIME, "batch_norm_backward: grad_out and input must have one shape "
                                    "(N, C, *)");
    }
    mt_status st;
    if ((!training && (st = running_defined(a->t[3], a->t[4]))) || (st = float_only(op, a->t[0]))) {
        return st;
    }
    channels(input, outer, C, inner);
    *eps = mt_scalar_to_double(a->s[0]);
    if ((st = features(op, a->t[2], *C)) || (!training && (st = features(op, a->t[3], *C))) ||
        (!training && (st = features(op, a->t[4], *C)))) {
        return st;
    }
    return norm_backward_outputs(p, a->t[0]->dtype, input, mt_suggest_memory_format(input), 1, C);
}

// grad_out, input (*, normalized_shape), weight (normalized_shape) or NULL; mean, rstd (one
// value per row) both or neither
mt_status
mt_front_layer_norm_backward(const mt_args *a, mt_plan *p)
{
    int64_t *n = &p->norm.n, *rows = &p->norm.rows;
    double *eps = &p->norm.eps;
    const mt_tensor *input = a->t[1];
    const mt_intlist *shape = &a->l[0];
    int lead = input->ndim - shape->n;
    bool fits = shape->n >= 1 && lead >= 0 && same_shape(a->t[0], input);
    for (int d = 0; fits && d < shape->n; d++) {
        fits = input->sizes[lead + d] == shape->v[d];
    }
    if (!fits) {
        return mt_fail(MT_ERUNTIME, "layer_norm_backward: grad_out and input must have one shape "
                                    "ending in normalized_shape");
    }
    *eps = mt_scalar_is_none(a->s[0]) ? 1e-5 : mt_scalar_to_double(a->s[0]);
    *n = mt_numel(shape->n, shape->v);
    *rows = *n ? mt_tensor_numel(input) / *n : 0;
    mt_status st = float_only("layer_norm_backward", a->t[0]);
    if (st || (st = features("layer_norm_backward", a->t[2], *n))) {
        return st;
    }
    if ((a->t[3] == NULL) != (a->t[4] == NULL)) {
        return mt_fail(MT_ERUNTIME, "layer_norm_backward: mean and rstd go together");
    }
    for (int k = 3; k < 5 && a->t[k]; k++) {
        if (mt_tensor_numel(a->t[k]) != *rows || !mt_dtype_is_float(a->t[k]->dtype)) {
            return mt_fail(MT_ERUNTIME,
                           "layer_norm_backward: mean and rstd must hold one float "
                           "per row (%lld)",
                           (long long)*rows);
        }
    }
    return norm_backward_outputs(p, a->t[0]->dtype, input, MT_CONTIGUOUS_FORMAT, shape->n,
                                 shape->v);
}

// grad_output (scalar, or target's shape for reduction none), self (C) or (N, C, d1, ...),
// target (N, d1, ...), weight (C) or NULL, total_weight (one element, self's dtype) or NULL
mt_status
mt_front_nll_loss_backward(const mt_args *a, mt_plan *p)
{
    int64_t *N = &p->loss.N, *C = &p->loss.C, *K = &p->loss.K;
    const mt_tensor *grad = a->t[0], *self = a->t[1], *target = a->t[2];
    if (self->ndim < 1 || target->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "nll_loss_backward: expected an input of 1 or more dims and "
                                    "int64 targets");
    }
    *N = 1;
    *C = self->sizes[0];
    *K = 1;
    if (self->ndim >= 2) {
        *N = self->sizes[0];
        *C = self->sizes[1];
        *K = self->ndim > 2 ? mt_numel(self->ndim - 2, self->sizes + 2) : 1;
    }
    bool none = a->i[0] == MT_REDUCTION_NONE;
    if (mt_tensor_numel(target) != *N * *K || mt_tensor_numel(grad) != (none ? *N * *K : 1)) {
        return mt_fail(MT_ERUNTIME, "nll_loss_backward: grad_output and target do not fit the "
                                    "input");
    }
    mt_status st = float_only("nll_loss_backward", grad);
    if (st == MT_OK) {
        st = features("nll_loss_backward", a->t[3], *C);
    }
    const mt_tensor *total = a->t[4];
    if (st == MT_OK && total && mt_tensor_numel(total) != 1) {
        char shape[256];
        return mt_fail(MT_ERUNTIME,
                       "expected total_weight to be a  single element tensor, got: %s (%" PRId64
                       " elements)",
                       mt_format_sizes(shape, sizeof shape, total->ndim, total->sizes),
                       mt_tensor_numel(total));
    }
    if (st == MT_OK && total && total->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(total->dtype));
    }
    return st ? st : mt_front_output(p, grad->dtype, self->ndim, self->sizes);
}
