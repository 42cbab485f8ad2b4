/* The front ends of layer_norm, the losses nll_loss and binary_cross_entropy (with logits) and
 * embedding_dense_backward, for every device: PyTorch's checks and dtype rules, and the plan
 * the kernels of csrc/cpu/nn.c, loss.c, nn_backward.c and cuda/ops_nn.c compute with. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "ops/arg_checks.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"

/* A float16 or bfloat16 input may have float32 parameters, as PyTorch's mixed-type norms (what
 * autocast gives a layer_norm after a bfloat16 linear): the result keeps the input's dtype. */
mt_status
mt_check_param_dtype(const mt_tensor *input, const mt_tensor *p, const char *device)
{
    bool mixed = p && (input->dtype == MT_FLOAT16 || input->dtype == MT_BFLOAT16) &&
                 p->dtype == MT_FLOAT32;
    if (p && p->dtype != input->dtype && !mixed) {
        return mt_fail(MT_ERUNTIME, "mixed dtype (%s): expect parameter to have scalar type of %s",
                       device, mt_dtype_scalar_name(input->dtype));
    }
    return MT_OK;
}

/* Whether p (weight or bias) has the shape normalized_shape. */
static mt_status
check_norm_param(const char *what, const mt_tensor *p, const mt_intlist *shape)
{
    if (p == NULL || (p->ndim == shape->n &&
                      memcmp(p->sizes, shape->v, sizeof(int64_t) * (size_t)shape->n) == 0)) {
        return MT_OK;
    }
    char b1[256], b2[256];
    return mt_fail(MT_ERUNTIME,
                   "Expected %s to be of same shape as normalized_shape, but got %s of shape %s "
                   "and normalized_shape = %s",
                   what, what, mt_format_sizes(b1, sizeof(b1), p->ndim, p->sizes),
                   mt_format_sizes(b2, sizeof(b2), shape->n, shape->v));
}

mt_status
mt_check_norm_shapes(const mt_tensor *input, const mt_intlist *shape, const mt_tensor *weight,
                     const mt_tensor *bias, bool rms)
{
    char b1[256], b2[256], b3[256];
    if (shape->n < 1) {
        return mt_fail(MT_ERUNTIME,
                       "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                       "at least one element, but got normalized_shape = []");
    }
    mt_status st;
    if ((st = check_norm_param("weight", weight, shape)) ||
        (st = check_norm_param("bias", bias, shape))) {
        return st;
    }
    int lead = input->ndim - shape->n;
    if (rms && lead < 0) {
        return mt_fail(MT_EVALUE, "Input tensor must have at least %d dimensions, but got %d",
                       shape->n, input->ndim);
    }
    if (lead < 0 || memcmp(input->sizes + lead, shape->v, sizeof(int64_t) * (size_t)shape->n)) {
        /* rms_norm's message has no ", " after the "*" */
        return mt_fail(MT_ERUNTIME,
                       "Given normalized_shape=%s, expected input with shape [*%s%s, but got "
                       "input of size%s",
                       mt_format_sizes(b1, sizeof(b1), shape->n, shape->v), rms ? "" : ", ",
                       mt_format_sizes(b2, sizeof(b2), shape->n, shape->v) + 1,
                       mt_format_sizes(b3, sizeof(b3), input->ndim, input->sizes));
    }
    return MT_OK;
}

// input (*, normalized_shape), weight and bias (normalized_shape) or NULL; eps: layer_norm's
// Scalar (default 1e-5), native_layer_norm's float (one front end: MT_FRONTS maps both here)
mt_status
mt_front_layer_norm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *input = a->t[0];
    const mt_intlist *shape = &a->l[0];
    const char *device = mt_front_on_cuda(input) ? "CUDA" : "CPU";
    mt_norm_plan *r = &p->norm;
    r->eps = p->op == MT_OP_native_layer_norm ? a->f[0]
             : mt_scalar_is_none(a->s[0])     ? 1e-5
                                              : mt_scalar_to_double(a->s[0]);
    mt_status st = mt_check_norm_shapes(input, shape, a->t[1], a->t[2], false);
    if (st) {
        return st;
    }
    if (!mt_dtype_is_float(input->dtype)) {
        return mt_fail_not_implemented("LayerNormKernelImpl", "", input->dtype);
    }
    if ((st = mt_check_param_dtype(input, a->t[1], device)) ||
        (st = mt_check_param_dtype(input, a->t[2], device))) {
        return st;
    }
    r->n = mt_numel(shape->n, shape->v);
    r->rows = r->n ? mt_tensor_numel(input) / r->n : 0;
    /* the result like input; native_layer_norm's also each row's mean and rstd (input's
     * leading dims, then a 1 per normalized dim) */
    st = mt_front_output(p, input->dtype, input->ndim, input->sizes);
    int64_t stat_sizes[MT_MAX_DIMS];
    for (int d = 0; d < input->ndim; d++) {
        stat_sizes[d] = d < input->ndim - shape->n ? input->sizes[d] : 1;
    }
    for (int k = 1; k < 3 && st == MT_OK && p->op == MT_OP_native_layer_norm; k++) {
        st = mt_front_output(p, input->dtype, input->ndim, stat_sizes);
    }
    return st;
}

/* A binary cross entropy's per-element loss, in p->loss.dt, of the shape of ins (input, target,
 * pos_weight or NULL) broadcast together (mt_bce_with prepares the inputs and the loss in it);
 * its result, that loss without a reduction, else one number. */
static mt_status
bce_output(const mt_args *a, mt_plan *p, const mt_tensor *const *ins)
{
    mt_loss_plan *r = &p->loss;
    mt_status st = MT_OK;
    r->ndim = 0;
    for (int k = 0; k < 3 && st == MT_OK; k++) {
        if (ins[k]) {
            st = mt_broadcast_shapes(r->ndim, r->sizes, ins[k]->ndim, ins[k]->sizes, &r->ndim,
                                     r->sizes);
        }
    }
    if (st) {
        return st;
    }
    return a->i[0] == MT_REDUCTION_NONE ? mt_front_output(p, r->dt, r->ndim, r->sizes)
                                        : mt_front_output(p, r->dt, 0, NULL);
}

// self, target (one shape) probabilities, weight (broadcasts to it) or NULL: one float dtype
mt_status
mt_front_binary_cross_entropy(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *target = a->t[1];
    if (target->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "Found dtype %s but expected %s",
                       mt_dtype_scalar_name(target->dtype), mt_dtype_scalar_name(self->dtype));
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail_not_implemented("binary_cross_entropy", "", self->dtype);
    }
    p->loss.dt = self->dtype;
    const mt_tensor *ins[3] = {self, target, NULL};
    return bce_output(a, p, ins);
}

// self, target (one shape) logits and probabilities, weight and pos_weight (broadcast to them)
// or NULL: self, target and pos_weight (1 where absent) promote to a float dtype
mt_status
mt_front_binary_cross_entropy_with_logits(const mt_args *a, mt_plan *p)
{
    const mt_tensor *ins[3] = {a->t[0], a->t[1], a->t[3]};
    mt_promotion pr;
    mt_promotion_init(&pr);
    for (int k = 0; k < 3; k++) {
        if (ins[k]) {
            mt_promotion_add(&pr, ins[k]->dtype, ins[k]->ndim, ins[k]->is_wrapped_number);
        }
    }
    if (a->t[3] == NULL) {
        mt_promotion_add(&pr, MT_INT64, 0, false); /* pos_weight's 1, a 0-dim int64 tensor */
    }
    p->loss.dt = mt_promotion_result(&pr);
    if (!mt_dtype_is_float(p->loss.dt)) {
        return mt_fail_not_implemented("binary_cross_entropy_with_logits", "", p->loss.dt);
    }
    return bce_output(a, p, ins);
}

// grad_output (*indices.shape, D), indices (*) int64 or int32
mt_status
mt_front_embedding_dense_backward(const mt_args *a, mt_plan *p)
{
    const mt_tensor *grad = a->t[0], *indices = a->t[1];
    const int64_t num_weights = a->i[0];
    int64_t *n = &p->loss.n, *dim = &p->loss.dim;
    if (indices->dtype != MT_INT64 && indices->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME, "embedding_dense_backward: expected int64 or int32 indices");
    }
    *n = mt_tensor_numel(indices);
    *dim = grad->ndim == indices->ndim + 1 ? grad->sizes[grad->ndim - 1] : -1;
    if (*dim < 0 || memcmp(grad->sizes, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim) ||
        num_weights < 0) {
        return mt_fail(MT_ERUNTIME, "embedding_dense_backward: grad_output must be shaped "
                                    "(*indices.shape, embedding_dim)");
    }
    if (!mt_dtype_is_float(grad->dtype)) {
        return mt_fail_not_implemented("embedding_dense_backward", "", grad->dtype);
    }
    const int64_t sizes[2] = {num_weights, *dim};
    return mt_front_output(p, grad->dtype, 2, sizes);
}

/* PyTorch's shape checks of nll_loss_nd; C is the class count. */
static mt_status
check_nll_shapes(const mt_tensor *self, const mt_tensor *target, const mt_tensor *weight)
{
    char b1[256], b2[256];
    if (self->ndim < 1) {
        return mt_fail(MT_EVALUE, "Expected 1 or more dimensions (got %d)", self->ndim);
    }
    if (self->ndim != 1 && (target->ndim < 1 || self->sizes[0] != target->sizes[0])) {
        return mt_fail(MT_EVALUE,
                       "Expected input batch_size (%lld) to match target batch_size (%lld).",
                       (long long)self->sizes[0], (long long)(target->ndim ? target->sizes[0] : 1));
    }
    if (self->ndim == 1 && target->ndim == 1 && target->sizes[0] != 1) {
        return mt_fail(MT_EVALUE,
                       "For 1D input, 1D target must have size 1, but got target size: %lld",
                       (long long)target->sizes[0]);
    }
    if (self->ndim == 1 && target->ndim > 1) {
        return mt_fail(MT_ERUNTIME, "0D or 1D target tensor expected, multi-target not supported");
    }
    if (self->ndim >= 3 &&
        (target->ndim != self->ndim - 1 ||
         memcmp(target->sizes + 1, self->sizes + 2, sizeof(int64_t) * (size_t)(self->ndim - 2)))) {
        int64_t want[MT_MAX_DIMS];
        want[0] = self->sizes[0];
        memcpy(want + 1, self->sizes + 2, sizeof(int64_t) * (size_t)(self->ndim - 2));
        return mt_fail(MT_ERUNTIME, "Expected target size %s, got %s",
                       mt_format_sizes(b1, sizeof(b1), self->ndim - 1, want),
                       mt_format_sizes(b2, sizeof(b2), target->ndim, target->sizes));
    }
    if (self->ndim == 2 && target->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "0D or 1D target tensor expected, multi-target not supported");
    }
    int64_t C = self->ndim == 1 ? self->sizes[0] : self->sizes[1];
    if (weight && (weight->ndim != 1 || weight->sizes[0] != C)) {
        return mt_fail(MT_ERUNTIME,
                       "weight tensor should be defined either for all %lld classes or no classes "
                       "but got weight tensor of shape: %s",
                       (long long)C, mt_format_sizes(b1, sizeof(b1), weight->ndim, weight->sizes));
    }
    return MT_OK;
}

// self (C) or (N, C, d1, ...) log-probabilities, target (N, d1, ...) int64 class indices,
// weight (C) or NULL
mt_status
mt_front_nll_loss(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *target = a->t[1], *weight = a->t[2];
    int64_t *N = &p->loss.N, *C = &p->loss.C, *K = &p->loss.K;
    mt_status st = check_nll_shapes(self, target, weight);
    if (st) {
        return st;
    }
    if (target->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "expected target dtype to be Long or Byte, but got %s",
                       mt_dtype_scalar_name(target->dtype));
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail_not_implemented("nll_loss_out_frame", "", self->dtype);
    }
    if (weight && weight->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(weight->dtype));
    }
    *N = 1;
    *C = self->sizes[0];
    *K = 1;
    if (self->ndim >= 2) {
        *N = self->sizes[0];
        *C = self->sizes[1];
        *K = self->ndim > 2 ? mt_numel(self->ndim - 2, self->sizes + 2) : 1;
    }
    /* target's shape without a reduction (0-dim without a batch dim, whatever target's
     * rank), else one number */
    const bool none = a->i[0] == MT_REDUCTION_NONE;
    return mt_front_output(p, self->dtype, none && self->ndim > 1 ? target->ndim : 0,
                           target->sizes);
}
