/* The argument checks and dtype rules of the reductions (ops/arg_checks.h), for every device. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "ops/arg_checks.h"

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
