/* The composite activations, in terms of other ops through the dispatcher: selu and
 * celu are elu with fixed or derived constants, relu6 is hardtanh(0, 6), glu is the first half
 * of its input times the sigmoid of the second, prelu reshapes its weight along the channel
 * dim for _prelu_kernel. PyTorch's checks and messages; the elementwise activations are rows
 * of ops/elementwise.def. */
#include "dispatch/kernels.h"
#include "ops/ops.h"

/* SELU's constants (Klambauer et al., as PyTorch's) */
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946

// self (any shape); out = scale * elu(self, alpha) with SELU's constants
mt_status
mt_composite_selu(mt_args *a)
{
    return mt_op_elu(a->t[0], mt_scalar_float(SELU_ALPHA), mt_scalar_float(SELU_SCALE),
                     mt_scalar_int(1), &a->out[0]);
}

mt_status
mt_composite_selu_(mt_args *a)
{
    return mt_op_elu_(a->t[0], mt_scalar_float(SELU_ALPHA), mt_scalar_float(SELU_SCALE),
                      mt_scalar_int(1), &a->out[0]);
}

/* celu(x, alpha) = elu(x, alpha, 1, 1 / alpha) */
static mt_status
celu(mt_args *a, bool inplace)
{
    double alpha = mt_scalar_to_double(a->s[0]);
    if (alpha == 0) {
        return mt_fail(MT_ERUNTIME, "ZeroDivisionError: alpha cannot be 0 for CELU");
    }
    mt_scalar one = mt_scalar_float(1.0), inv = mt_scalar_float(1.0 / alpha);
    return inplace ? mt_op_elu_(a->t[0], a->s[0], one, inv, &a->out[0])
                   : mt_op_elu(a->t[0], a->s[0], one, inv, &a->out[0]);
}

mt_status
mt_composite_celu(mt_args *a)
{
    return celu(a, false);
}

mt_status
mt_composite_celu_(mt_args *a)
{
    return celu(a, true);
}

mt_status
mt_composite_relu6(mt_args *a)
{
    return mt_op_hardtanh(a->t[0], mt_scalar_int(0), mt_scalar_int(6), &a->out[0]);
}

mt_status
mt_composite_relu6_(mt_args *a)
{
    return mt_op_hardtanh_(a->t[0], mt_scalar_int(0), mt_scalar_int(6), &a->out[0]);
}

// self (..., 2n at dim, ...); out (..., n at dim, ...) = first half * sigmoid(second half)
mt_status
mt_composite_glu(mt_args *a)
{
    mt_tensor *x = a->t[0], *first = NULL, *second = NULL, *gate = NULL;
    int dim;
    if (x->ndim == 0) {
        return mt_fail(MT_ERUNTIME,
                       "glu does not support scalars because halving size must be even");
    }
    if (!mt_dtype_is_float(x->dtype)) { /* PyTorch's glu kernel has float loops only */
        return mt_fail(MT_ENOTIMPL, "\"glu_%s\" not implemented for '%s'",
                       mt_tensor_device(x).type == MT_CPU ? "cpu" : "cuda",
                       mt_dtype_scalar_name(x->dtype));
    }
    mt_status st = mt_wrap_dim(a->i[0], x->ndim, &dim);
    if (st) {
        return st;
    }
    int64_t n = x->sizes[dim];
    if (n % 2 != 0) {
        return mt_fail(MT_ERUNTIME, "Halving dimension must be even, but dimension %d is size %lld",
                       dim, (long long)n);
    }
    if ((st = mt_op_narrow(x, dim, 0, n / 2, &first)) == MT_OK &&
        (st = mt_op_narrow(x, dim, n / 2, n / 2, &second)) == MT_OK &&
        (st = mt_op_sigmoid(second, &gate)) == MT_OK) {
        st = mt_op_mul(first, gate, &a->out[0]);
    }
    mt_tensor_clear(&first);
    mt_tensor_clear(&second);
    mt_tensor_clear(&gate);
    return st;
}

// self (N, C, ...) or fewer dims, weight (C) or one value; out = _prelu_kernel(self, weight
// seen as (1, C, 1, ...))
mt_status
mt_composite_prelu(mt_args *a)
{
    mt_tensor *x = a->t[0], *w = a->t[1], *wv = NULL;
    if (x->dtype != w->dtype) {
        return mt_fail(MT_ERUNTIME, "prelu: Type promoting not supported. Got %s and %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(w->dtype));
    }
    int64_t wn = mt_tensor_numel(w);
    if (wn != 1) {
        if (x->ndim == 0) {
            return mt_fail(MT_ERUNTIME, "Not allow zero-dim input tensor.");
        }
        int64_t channels = x->ndim > 1 ? x->sizes[1] : 1;
        if (channels != wn) {
            return mt_fail(MT_ERUNTIME,
                           "Mismatch of parameter numbers and input channel size. Found parameter "
                           "numbers = %lld and channel size = %lld.",
                           (long long)wn, (long long)channels);
        }
    }
    if (w->ndim > 1) {
        return mt_fail(MT_ERUNTIME,
                       "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %d",
                       w->ndim);
    }
    if (x->ndim == w->ndim) {
        return mt_op__prelu_kernel(x, w, &a->out[0]);
    }
    int64_t shape[MT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = d == 1 ? wn : 1;
    }
    mt_status st = mt_op_reshape(w, x->ndim, shape, &wv);
    if (st == MT_OK) {
        st = mt_op__prelu_kernel(x, wv, &a->out[0]);
    }
    mt_tensor_clear(&wv);
    return st;
}
