/* The front ends of the reductions (sum, mean, prod, amax, amin, max, min, all, any, norm, var,
 * std, logsumexp, max_dim, min_dim, argmax, argmin) and of the ops along one dim (cumsum,
 * cumprod, softmax, log_softmax), for every device: PyTorch's checks and dtype rules, and the
 * plan (mt_reduce_plan: the dims reduced, the dtypes) that the kernels of csrc/cpu/reduce*.c
 * and cuda/ops_reduce.c compute from. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "ops/front.h"
#include "ops/reduce_dims.h"

/* sum and prod: the result dtype, and the dtype the input is summed in. */
static void
sum_dtypes(const mt_args *a, mt_reduce_plan *r)
{
    mt_dtype self_dt = a->t[0]->dtype;
    r->out_dt = a->dtype >= 0                          ? (mt_dtype)a->dtype
                : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                      : self_dt;
    /* An integer sum of floats sums the values converted to that integer type (as PyTorch). */
    r->in_dt = mt_dtype_is_float(self_dt) != mt_dtype_is_float(r->out_dt) ? r->out_dt : self_dt;
}

/* An extremum of nothing: PyTorch's errors when the dims marked in reduce[] hold no element. */
static mt_status
check_elements(const mt_tensor *self, const bool *reduce, const char *name)
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
mt_front_sum(const mt_args *a, mt_plan *p)
{
    sum_dtypes(a, &p->reduce);
    return mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
}

mt_status
mt_front_prod(const mt_args *a, mt_plan *p)
{
    mt_intlist dims = mt_dim_list(a, 0);
    sum_dtypes(a, &p->reduce);
    return mt_reduced_dims(a->t[0], &dims, p->reduce.reduce);
}

mt_status
mt_front_mean(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    r->out_dt = r->in_dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    if (!mt_dtype_is_float(r->out_dt)) {
        return mt_fail(MT_ERUNTIME,
                       "mean(): could not infer output dtype. %s dtype must be either a floating "
                       "point or complex dtype. Got: %s",
                       a->dtype >= 0 ? "Optional" : "Input", mt_dtype_scalar_name(r->out_dt));
    }
    return mt_reduced_dims(a->t[0], &a->l[0], r->reduce);
}

/* max or min (name) over dims, in self's dtype. */
static mt_status
extremum(const mt_args *a, const mt_intlist *dims, const char *name, mt_reduce_plan *r)
{
    r->in_dt = r->out_dt = a->t[0]->dtype;
    mt_status st = mt_reduced_dims(a->t[0], dims, r->reduce);
    return st ? st : check_elements(a->t[0], r->reduce, name);
}

static const mt_intlist all_dims = {.n = 0, .none = true};

mt_status
mt_front_amax(const mt_args *a, mt_plan *p)
{
    return extremum(a, &a->l[0], "amax", &p->reduce);
}

mt_status
mt_front_amin(const mt_args *a, mt_plan *p)
{
    return extremum(a, &a->l[0], "amin", &p->reduce);
}

mt_status
mt_front_max(const mt_args *a, mt_plan *p)
{
    return extremum(a, &all_dims, "max", &p->reduce);
}

mt_status
mt_front_min(const mt_args *a, mt_plan *p)
{
    return extremum(a, &all_dims, "min", &p->reduce);
}

/* all and any: bools. */
mt_status
mt_front_all(const mt_args *a, mt_plan *p)
{
    p->reduce.in_dt = p->reduce.out_dt = MT_BOOL;
    return mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
}

mt_status
mt_front_any(const mt_args *a, mt_plan *p)
{
    return mt_front_all(a, p);
}

/* norm: a float result, and PyTorch's errors for a norm with no identity (p < 0 or inf) of
 * no element, in its words (the missing space included), the dim as given. */
mt_status
mt_front_norm(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    const mt_tensor *self = a->t[0];
    const mt_intlist *dims = &a->l[0];
    mt_dtype self_dt = self->dtype;
    r->in_dt = r->out_dt = a->dtype >= 0 ? (mt_dtype)a->dtype : self_dt;
    r->p = mt_scalar_is_none(a->s[0]) ? 2.0 : mt_scalar_to_double(a->s[0]);
    if (!mt_dtype_is_float(self_dt) || !mt_dtype_is_float(r->out_dt)) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                       "Got %s",
                       mt_dtype_scalar_name(mt_dtype_is_float(self_dt) ? r->out_dt : self_dt));
    }
    if (mt_tensor_numel(self) == 0 && (r->p < 0 || r->p == INFINITY)) {
        if (dims->none || dims->n == 0) {
            return mt_fail(MT_ERUNTIME,
                           "linalg.vector_norm cannot compute the %g norm on an empty tensor "
                           "because the operation does not have an identity",
                           r->p);
        }
        for (int k = 0; k < dims->n; k++) {
            int d;
            if (mt_wrap_dim(dims->v[k], self->ndim, &d) == MT_OK && self->sizes[d] == 0) {
                return mt_fail(MT_ERUNTIME,
                               "linalg.vector_norm cannot compute the %g norm on the dimension "
                               "%" PRId64 "because this dimension is empty and the operation "
                               "does not have an identity",
                               r->p, dims->v[k]);
            }
        }
    }
    mt_status st = mt_reduced_dims(self, dims, r->reduce);
    if (st == MT_OK && isinf(r->p) && r->p < 0) {
        st = check_elements(self, r->reduce, "norm"); /* the min of |x|: of nothing */
    }
    return st;
}

/* var and std: a float input; p the correction. */
mt_status
mt_front_var(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    if (!mt_dtype_is_float(a->t[0]->dtype)) {
        return mt_fail(MT_ERUNTIME, "std and var only support floating point and complex dtypes");
    }
    r->in_dt = r->out_dt = a->t[0]->dtype;
    r->p = mt_scalar_is_none(a->s[0]) ? (a->b[0] ? 1.0 : 0.0) : mt_scalar_to_double(a->s[0]);
    return mt_reduced_dims(a->t[0], &a->l[0], r->reduce);
}

mt_status
mt_front_std(const mt_args *a, mt_plan *p)
{
    return mt_front_var(a, p);
}

/* logsumexp: computed in self's float dtype, or the default one. */
mt_status
mt_front_logsumexp(const mt_args *a, mt_plan *p)
{
    mt_dtype dt = a->t[0]->dtype;
    p->reduce.in_dt = p->reduce.out_dt = mt_dtype_is_float(dt) ? dt : MT_DEFAULT_FLOAT;
    return mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
}

/* max_dim, min_dim, argmax, argmin (name) over dims (an int, or None for argmax and argmin:
 * the flattened tensor): bool refused when !want_values, PyTorch's errors for an empty
 * reduction; dim the one dim, wrapped (0 for None). */
static mt_status
arg_extreme(const mt_args *a, const mt_intlist *dims, const char *name, bool want_values,
            mt_reduce_plan *r)
{
    const mt_tensor *self = a->t[0];
    r->in_dt = r->out_dt = self->dtype;
    r->dim = 0;
    mt_status st = mt_reduced_dims(self, dims, r->reduce);
    if (st) {
        return st;
    }
    if (!want_values && self->dtype == MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "%s(): does not support bool input", name);
    }
    if (dims->none && mt_tensor_numel(self) == 0) {
        return mt_fail(MT_EINDEX,
                       "%s(): Expected reduction dim to be specified for input.numel() == 0.",
                       name);
    }
    for (int d = 0; d < self->ndim && !dims->none; d++) {
        if (r->reduce[d] && self->sizes[d] == 0) {
            return mt_fail(MT_EINDEX, "%s(): Expected reduction dim %d to have non-zero size.",
                           name, d);
        }
    }
    if (!dims->none && self->ndim > 0) {
        r->dim = (int)(dims->v[0] < 0 ? dims->v[0] + self->ndim : dims->v[0]);
    }
    return MT_OK;
}

mt_status
mt_front_max_dim(const mt_args *a, mt_plan *p)
{
    mt_intlist dim = {.n = 1, .none = false, .v = {a->i[0]}};
    return arg_extreme(a, &dim, "max", true, &p->reduce);
}

mt_status
mt_front_min_dim(const mt_args *a, mt_plan *p)
{
    mt_intlist dim = {.n = 1, .none = false, .v = {a->i[0]}};
    return arg_extreme(a, &dim, "min", true, &p->reduce);
}

mt_status
mt_front_argmax(const mt_args *a, mt_plan *p)
{
    mt_intlist dim = mt_dim_list(a, 0);
    return arg_extreme(a, &dim, "argmax", false, &p->reduce);
}

mt_status
mt_front_argmin(const mt_args *a, mt_plan *p)
{
    mt_intlist dim = mt_dim_list(a, 0);
    return arg_extreme(a, &dim, "argmin", false, &p->reduce);
}

/* cumsum and cumprod: computed in int64 for integers and bools (or the dtype asked for). */
mt_status
mt_front_cumsum(const mt_args *a, mt_plan *p)
{
    mt_dtype self_dt = a->t[0]->dtype;
    p->reduce.in_dt = p->reduce.out_dt = a->dtype >= 0                          ? (mt_dtype)a->dtype
                                         : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                                               : self_dt;
    return mt_wrap_dim(a->i[0], a->t[0]->ndim, &p->reduce.dim);
}

mt_status
mt_front_cumprod(const mt_args *a, mt_plan *p)
{
    return mt_front_cumsum(a, p);
}

/* softmax and log_softmax (name): a float dtype they compute in. */
static mt_status
softmax(const mt_args *a, const char *name, mt_reduce_plan *r)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    if (!mt_dtype_is_float(dt)) {
        return mt_fail(MT_ENOTIMPL, "\"%s_lastdim_kernel_impl\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(dt));
    }
    r->in_dt = r->out_dt = dt;
    return mt_wrap_dim(a->i[0], a->t[0]->ndim, &r->dim);
}

mt_status
mt_front_softmax(const mt_args *a, mt_plan *p)
{
    return softmax(a, "softmax", &p->reduce);
}

mt_status
mt_front_log_softmax(const mt_args *a, mt_plan *p)
{
    return softmax(a, "log_softmax", &p->reduce);
}
