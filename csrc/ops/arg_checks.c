/* The shared argument checks and dtype rules of ops/arg_checks.h. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/elementwise.h"
#include "ops/arg_checks.h"

/* ---- fills ---- */

/* *v = the 0-dim value, which must fit self's dtype; read with item(), so that it may live on
 * another device than self, as PyTorch allows. */
static mt_status
value_of(const mt_tensor *self, const mt_tensor *value, mt_scalar *v)
{
    mt_status st = mt_tensor_item(value, v);
    return st ? st : mt_check_scalar_fits(*v, self->dtype);
}

mt_status
mt_check_fill_value(const mt_tensor *self, const mt_tensor *value, mt_scalar *v)
{
    if (value->ndim != 0) {
        return mt_fail(MT_ERUNTIME,
                       "fill_ only supports 0-dimension value tensor but got tensor with %d "
                       "dimensions.",
                       value->ndim);
    }
    return value_of(self, value, v);
}

mt_status
mt_check_masked_fill(const mt_tensor *self, const mt_tensor *mask, const mt_tensor *value,
                     mt_scalar *v)
{
    if (mask->dtype != MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                       mt_dtype_c_name(mask->dtype));
    }
    if (value->ndim != 0) {
        return mt_fail(MT_ERUNTIME,
                       "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                       "with %d dimension(s).",
                       value->ndim);
    }
    return value_of(self, value, v);
}

/* ---- reductions ---- */

void
mt_sum_dtypes(const mt_args *a, mt_dtype *in_dt, mt_dtype *out_dt)
{
    mt_dtype self_dt = a->t[0]->dtype;
    *out_dt = a->dtype >= 0                          ? (mt_dtype)a->dtype
              : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                    : self_dt;
    /* An integer sum of floats sums the values converted to that integer type (as PyTorch). */
    *in_dt = mt_dtype_is_float(self_dt) != mt_dtype_is_float(*out_dt) ? *out_dt : self_dt;
}

mt_status
mt_mean_dtype(const mt_args *a, mt_dtype *out_dt)
{
    *out_dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    if (!mt_dtype_is_float(*out_dt)) {
        return mt_fail(MT_ERUNTIME,
                       "mean(): could not infer output dtype. %s dtype must be either a floating "
                       "point or complex dtype. Got: %s",
                       a->dtype >= 0 ? "Optional" : "Input", mt_dtype_scalar_name(*out_dt));
    }
    return MT_OK;
}

mt_status
mt_norm_dtype(const mt_args *a, mt_dtype *out_dt, double *p)
{
    mt_dtype self_dt = a->t[0]->dtype;
    *out_dt = a->dtype >= 0 ? (mt_dtype)a->dtype : self_dt;
    *p = mt_scalar_is_none(a->s[0]) ? 2.0 : mt_scalar_to_double(a->s[0]);
    if (!mt_dtype_is_float(self_dt) || !mt_dtype_is_float(*out_dt)) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                       "Got %s",
                       mt_dtype_scalar_name(mt_dtype_is_float(self_dt) ? *out_dt : self_dt));
    }
    /* A norm with no identity (p < 0 or inf) of no element: PyTorch's errors, its words (the
     * missing space included), the dim as given. */
    const mt_tensor *self = a->t[0];
    const mt_intlist *dims = &a->l[0];
    if (mt_tensor_numel(self) != 0 || !(*p < 0 || *p == INFINITY)) {
        return MT_OK;
    }
    if (dims->none || dims->n == 0) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.vector_norm cannot compute the %g norm on an empty tensor because "
                       "the operation does not have an identity",
                       *p);
    }
    for (int k = 0; k < dims->n; k++) {
        int d;
        if (mt_wrap_dim(dims->v[k], self->ndim, &d) == MT_OK && self->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "linalg.vector_norm cannot compute the %g norm on the dimension %" PRId64
                           "because this dimension is empty and the operation does not have an "
                           "identity",
                           *p, dims->v[k]);
        }
    }
    return MT_OK;
}

mt_status
mt_check_moment(const mt_args *a, double *correction)
{
    if (!mt_dtype_is_float(a->t[0]->dtype)) {
        return mt_fail(MT_ERUNTIME, "std and var only support floating point and complex dtypes");
    }
    *correction = mt_scalar_is_none(a->s[0]) ? (a->b[0] ? 1.0 : 0.0)
                                              : mt_scalar_to_double(a->s[0]);
    return MT_OK;
}

mt_status
mt_check_reduce_elements(const mt_tensor *self, const bool *reduce, const char *name)
{
    int64_t count = 1;
    bool all_dims = true;
    for (int d = 0; d < self->ndim; d++) {
        count *= reduce[d] ? self->sizes[d] : 1;
        all_dims &= reduce[d];
    }
    if (count != 0) {
        return MT_OK;
    }
    /* Like PyTorch: reducing every dim of an empty tensor asks for a dim; reducing an empty
     * dim while others remain names it. */
    if (all_dims) {
        return mt_fail(MT_ERUNTIME,
                       "%s(): Expected reduction dim to be specified for input.numel() == 0. "
                       "Specify the reduction dim with the 'dim' argument.",
                       name);
    }
    for (int d = 0; d < self->ndim; d++) {
        if (reduce[d] && self->sizes[d] == 0) {
            return mt_fail(MT_EINDEX, "%s(): Expected reduction dim %d to have non-zero size.",
                           name, d);
        }
    }
    return MT_OK;
}

mt_status
mt_check_arg_extreme(const mt_tensor *self, const mt_intlist *dims, const bool *reduce,
                     const char *name, bool want_values)
{
    if (!want_values && self->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "%s(): does not support bool input", name);
    }
    if (dims->none && mt_tensor_numel(self) == 0) {
        return mt_fail(MT_EINDEX,
                       "%s(): Expected reduction dim to be specified for input.numel() == 0.",
                       name);
    }
    for (int d = 0; d < self->ndim && !dims->none; d++) {
        if (reduce[d] && self->sizes[d] == 0) {
            return mt_fail(MT_EINDEX, "%s(): Expected reduction dim %d to have non-zero size.",
                           name, d);
        }
    }
    return MT_OK;
}

mt_status
mt_softmax_dtype(const mt_args *a, const char *name, mt_dtype *dt)
{
    *dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    if (!mt_dtype_is_float(*dt)) {
        return mt_fail(MT_ENOTIMPL, "\"%s_lastdim_kernel_impl\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(*dt));
    }
    return MT_OK;
}

mt_dtype
mt_scan_dtype(const mt_args *a)
{
    mt_dtype self_dt = a->t[0]->dtype;
    return a->dtype >= 0                          ? (mt_dtype)a->dtype
           : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                 : self_dt;
}

/* ---- random fills ---- */

static double
scalar_or(mt_scalar s, double dflt)
{
    return mt_scalar_is_none(s) ? dflt : mt_scalar_to_double(s);
}

/* random_'s inclusive upper bound without `to` (PyTorch's): the dtype's largest value, or for
 * the floats the largest integer they hold exactly, 2^24 and 2^53. */
static int64_t
default_to_inc(mt_dtype dt)
{
    switch (dt) {
    case MT_BOOL:
        return 1;
    case MT_INT32:
        return INT32_MAX;
    case MT_INT64:
        return INT64_MAX;
    case MT_FLOAT32:
        return 1LL << 24;
    default:
        return 1LL << 53;
    }
}

/* The name PyTorch's random_ gives dt in its bounds errors (the C type's). */
static const char *
random_dtype_name(mt_dtype dt)
{
    return dt == MT_BOOL ? "bool" : dt == MT_INT32 ? "int" : "long int";
}

/* from and to_inc must be values of an integer (or bool) dt, as PyTorch's
 * check_from_to_in_range: int32.random_(2**62) would wrap to negative values. Floats take any
 * int64 (PyTorch only warns past 2^24 or 2^53). */
static mt_status
check_random_range(int64_t from, int64_t to_inc, mt_dtype dt)
{
    int64_t lo = dt == MT_BOOL ? 0 : dt == MT_INT32 ? INT32_MIN : INT64_MIN;
    int64_t hi = dt == MT_BOOL ? 1 : dt == MT_INT32 ? INT32_MAX : INT64_MAX;
    if (mt_dtype_is_float(dt)) {
        return MT_OK;
    }
    if (from < lo || from > hi) {
        return mt_fail(MT_ERUNTIME, "from is out of bounds for %s", random_dtype_name(dt));
    }
    if (to_inc < lo || to_inc > hi) {
        return mt_fail(MT_ERUNTIME, "to - 1 is out of bounds for %s", random_dtype_name(dt));
    }
    return MT_OK;
}

static const char *const random_names[] = {"uniform", "normal", "bernoulli", "random"};

mt_status
mt_random_spec_of(const mt_args *a, mt_random_kind kind, const char *device, mt_random_spec *out)
{
    mt_dtype dt = a->t[0]->dtype;
    *out = (mt_random_spec){0, 0, 0, 1};
    if (kind != MT_RANDOM_INTS && !mt_dtype_is_float(dt)) {
        return mt_fail(MT_ENOTIMPL, "\"%s_kernel_%s\" not implemented for '%s'", random_names[kind],
                       device, mt_dtype_scalar_name(dt));
    }
    switch (kind) {
    case MT_RANDOM_UNIFORM:
        out->a = scalar_or(a->s[0], 0);
        out->b = scalar_or(a->s[1], 1);
        if (out->a > out->b) {
            return mt_fail(MT_ERUNTIME,
                           "uniform_ expects to return a [from, to) range, but found from=%g > to=%g",
                           out->a, out->b);
        }
        return MT_OK;
    case MT_RANDOM_NORMAL:
        out->a = scalar_or(a->s[0], 0);
        out->b = scalar_or(a->s[1], 1);
        if (out->b < 0) {
            return mt_fail(MT_ERUNTIME, "normal expects std >= 0.0, but found std %g", out->b);
        }
        return MT_OK;
    case MT_RANDOM_BERNOULLI:
        out->a = scalar_or(a->s[0], 0.5);
        if (!(out->a >= 0 && out->a <= 1)) {
            return mt_fail(MT_ERUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g",
                           out->a);
        }
        return MT_OK;
    default:
        break;
    }
    /* PyTorch's overloads random_(from, to), random_(to) and random_(): one value is `to`;
     * without one, the range runs to the dtype's default bound, inclusive. */
    bool one = !mt_scalar_is_none(a->s[0]) && mt_scalar_is_none(a->s[1]);
    int64_t from = one || mt_scalar_is_none(a->s[0]) ? 0 : mt_scalar_to_int(a->s[0]);
    int64_t to_inc = default_to_inc(dt);
    if (one || !mt_scalar_is_none(a->s[1])) {
        int64_t to = mt_scalar_to_int(one ? a->s[0] : a->s[1]);
        if (from >= to) {
            return mt_fail(MT_ERUNTIME,
                           "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                           (long long)from, (long long)to);
        }
        to_inc = to - 1;
    }
    mt_status st = check_random_range(from, to_inc, dt);
    if (st) {
        return st;
    }
    out->from = from;
    out->span = (uint64_t)to_inc - (uint64_t)from + 1; /* 0: all 2^64 values */
    return MT_OK;
}

/* ---- nn layers ---- */

mt_status
mt_check_param_dtype(const mt_tensor *input, const mt_tensor *p, const char *device)
{
    if (p && p->dtype != input->dtype) {
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
mt_layer_norm_spec(const mt_args *a, const char *device, int64_t *n, int64_t *rows, double *eps)
{
    const mt_tensor *input = a->t[0];
    const mt_intlist *shape = &a->l[0];
    char b1[256], b2[256], b3[256];
    *eps = mt_scalar_is_none(a->s[0]) ? 1e-5 : mt_scalar_to_double(a->s[0]);
    if (shape->n < 1) {
        return mt_fail(MT_ERUNTIME,
                       "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                       "at least one element, but got normalized_shape = []");
    }
    mt_status st;
    if ((st = check_norm_param("weight", a->t[1], shape)) ||
        (st = check_norm_param("bias", a->t[2], shape))) {
        return st;
    }
    int lead = input->ndim - shape->n;
    if (lead < 0 || memcmp(input->sizes + lead, shape->v, sizeof(int64_t) * (size_t)shape->n)) {
        return mt_fail(MT_ERUNTIME,
                       "Given normalized_shape=%s, expected input with shape [*, %s, but got "
                       "input of size%s",
                       mt_format_sizes(b1, sizeof(b1), shape->n, shape->v),
                       mt_format_sizes(b2, sizeof(b2), shape->n, shape->v) + 1,
                       mt_format_sizes(b3, sizeof(b3), input->ndim, input->sizes));
    }
    if (!mt_dtype_is_float(input->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"LayerNormKernelImpl\" not implemented for '%s'",
                       mt_dtype_scalar_name(input->dtype));
    }
    if ((st = mt_check_param_dtype(input, a->t[1], device)) ||
        (st = mt_check_param_dtype(input, a->t[2], device))) {
        return st;
    }
    *n = mt_numel(shape->n, shape->v);
    *rows = *n ? mt_tensor_numel(input) / *n : 0;
    return MT_OK;
}

mt_status
mt_check_bce(const mt_tensor *self, const mt_tensor *target)
{
    if (target->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "Found dtype %s but expected %s",
                       mt_dtype_scalar_name(target->dtype), mt_dtype_scalar_name(self->dtype));
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"binary_cross_entropy\" not implemented for '%s'",
                       mt_dtype_scalar_name(self->dtype));
    }
    return MT_OK;
}

mt_status
mt_bce_logits_dtype(mt_tensor *const *ins, mt_dtype *dt)
{
    *dt = mt_result_type(ins, 3);
    if (!mt_dtype_is_float(*dt)) {
        return mt_fail(MT_ENOTIMPL, "\"binary_cross_entropy_with_logits\" not implemented for '%s'",
                       mt_dtype_scalar_name(*dt));
    }
    return MT_OK;
}

mt_status
mt_check_embedding_backward(const mt_tensor *grad, const mt_tensor *indices, int64_t num_weights,
                            int64_t *n, int64_t *dim)
{
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
    if (grad->dtype != MT_FLOAT32 && grad->dtype != MT_FLOAT64) {
        return mt_fail(MT_ENOTIMPL, "\"embedding_dense_backward\" not implemented for '%s'",
                       mt_dtype_scalar_name(grad->dtype));
    }
    return MT_OK;
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
        return mt_fail(MT_EVALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                       (long long)self->sizes[0],
                       (long long)(target->ndim ? target->sizes[0] : 1));
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

mt_status
mt_nll_spec(const mt_tensor *self, const mt_tensor *target, const mt_tensor *weight, int64_t *N,
            int64_t *C, int64_t *K)
{
    mt_status st = check_nll_shapes(self, target, weight);
    if (st) {
        return st;
    }
    if (target->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "expected target dtype to be Long or Byte, but got %s",
                       mt_dtype_scalar_name(target->dtype));
    }
    if (!mt_dtype_is_float(self->dtype)) {
        return mt_fail(MT_ENOTIMPL, "\"nll_loss_out_frame\" not implemented for '%s'",
                       mt_dtype_scalar_name(self->dtype));
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
    return MT_OK;
}

/* ---- matrix products ---- */

mt_status
mt_check_matvec(const mt_tensor *input, const mt_tensor *mat, const mt_tensor *vec)
{
    int64_t n_in = input == NULL ? mat->sizes[0] : input->ndim == 0 ? 1 : input->sizes[0];
    if (mat->ndim != 2 || vec->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "vector + matrix @ vector expected, got %d, %d, %d",
                       input ? input->ndim : 1, mat->ndim, vec->ndim);
    }
    if (mat->sizes[1] != vec->sizes[0] || (input && input->ndim > 1) ||
        (n_in != mat->sizes[0] && n_in != 1)) {
        return mt_fail(MT_ERUNTIME,
                       "size mismatch, got input (%" PRId64 "), mat (%" PRId64 "x%" PRId64
                       "), vec (%" PRId64 ")",
                       n_in, mat->sizes[0], mat->sizes[1], vec->sizes[0]);
    }
    if (input == NULL && mat->dtype != vec->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(mat->dtype), mt_dtype_scalar_name(vec->dtype));
    }
    if (input && (input->dtype != mat->dtype || mat->dtype != vec->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                       mt_dtype_scalar_name(input->dtype), mt_dtype_scalar_name(mat->dtype),
                       mt_dtype_scalar_name(vec->dtype));
    }
    return MT_OK;
}

mt_status
mt_check_batches(const mt_tensor *b1, const mt_tensor *b2)
{
    if (b1->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "batch1 must be a 3D tensor");
    }
    if (b2->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "batch2 must be a 3D tensor");
    }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        return mt_fail(MT_ERUNTIME,
                       "Expected size for first two dimensions of batch2 tensor to be: [%" PRId64
                       ", %" PRId64 "] but got: [%" PRId64 ", %" PRId64 "].",
                       b1->sizes[0], b1->sizes[2], b2->sizes[0], b2->sizes[1]);
    }
    return MT_OK;
}

mt_status
mt_check_dot(const mt_tensor *x, const mt_tensor *y)
{
    if (x->ndim != 1 || y->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "1D tensors expected, but got %dD and %dD tensors", x->ndim,
                       y->ndim);
    }
    if (x->sizes[0] != y->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "inconsistent tensor size, expected tensor [%" PRId64 "] and src [%" PRId64
                       "] to have the same number of elements, but got %" PRId64 " and %" PRId64
                       " elements respectively",
                       x->sizes[0], y->sizes[0], x->sizes[0], y->sizes[0]);
    }
    if (x->dtype != y->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "dot : expected both vectors to have same dtype, but found %s and %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(y->dtype));
    }
    return MT_OK;
}
