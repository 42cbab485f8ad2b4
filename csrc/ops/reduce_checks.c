/* The front ends of the reductions (sum, mean, prod, amax, amin, max, min, all, any, norm, var,
 * std, logsumexp, max_dim, min_dim, argmax, argmin) and of the ops along one dim (cumsum,
 * cumprod, softmax, log_softmax), for every device: PyTorch's checks and dtype rules, and the
 * plan (mt_reduce_plan: the dims reduced, the dtypes) that the kernels of csrc/cpu/reduce*.c
 * and cuda/ops_reduce.c compute from. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/fails.h"
#include "ops/front.h"
#include "ops/linalg.h"
#include "ops/reduce_dims.h"

/* sum and prod: the result dtype, and the dtype the input is summed in. */
static void
sum_dtypes(const mt_args *a, mt_reduce_plan *r)
{
    mt_dtype self_dt = a->t[0]->dtype;
    r->out_dt = a->dtype >= 0                         ? (mt_dtype)a->dtype
                : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                      : self_dt;
    /* An integer sum of floats sums the values converted to that integer type (as PyTorch). */
    r->in_dt = mt_dtype_is_float(self_dt) != mt_dtype_is_float(r->out_dt) ? r->out_dt : self_dt;
}

/* States the result of a reduction of self over the plan's dims, of dtype dt (and, with
 * indices, its int64 positions after it): self's shape without the reduced dims, or with them
 * as size 1 when keepdim. */
static mt_status
reduced_outputs(mt_plan *p, const mt_tensor *self, bool keepdim, mt_dtype dt, bool indices)
{
    int64_t sizes[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (keepdim || !p->reduce.reduce[d]) {
            sizes[n++] = p->reduce.reduce[d] ? 1 : self->sizes[d];
        }
    }
    mt_status st = mt_front_output(p, dt, n, sizes);
    return st == MT_OK && indices ? mt_front_output(p, MT_INT64, n, sizes) : st;
}

/* The result of a reduction whose plan is made (st MT_OK), in the plan's dtype. */
static mt_status
reduced_output(mt_status st, mt_plan *p, const mt_tensor *self, bool keepdim)
{
    return st ? st : reduced_outputs(p, self, keepdim, p->reduce.out_dt, false);
}

/* An extremum of nothing: PyTorch's errors when the dims marked in reduce[] hold no element.
 * Without dims (none, or an empty list) it asks for one; with dims it names the first empty one
 * as given (amax(-1), not 0). */
static mt_status
check_elements(const mt_tensor *self, const mt_intlist *dims, const bool *reduce, const char *name)
{
    int64_t count = 1;
    for (int d = 0; d < self->ndim; d++) {
        count *= reduce[d] ? self->sizes[d] : 1;
    }
    if (count != 0) {
        return MT_OK;
    }
    if (dims->none || dims->n == 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s(): Expected reduction dim to be specified for input.numel() == 0. "
                       "Specify the reduction dim with the 'dim' argument.",
                       name);
    }
    for (int k = 0; k < dims->n; k++) {
        int d;
        if (mt_wrap_dim(dims->v[k], self->ndim, &d) == MT_OK && self->sizes[d] == 0) {
            return mt_fail(MT_EINDEX,
                           "%s(): Expected reduction dim %" PRId64 " to have non-zero size.", name,
                           dims->v[k]);
        }
    }
    return MT_OK;
}

mt_status
mt_front_sum(const mt_args *a, mt_plan *p)
{
    sum_dtypes(a, &p->reduce);
    mt_status st = mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
    return reduced_output(st, p, a->t[0], a->b[0]);
}

mt_status
mt_front_prod(const mt_args *a, mt_plan *p)
{
    mt_intlist dims = mt_dim_list(a, 0);
    sum_dtypes(a, &p->reduce);
    mt_status st = mt_reduced_dims(a->t[0], &dims, p->reduce.reduce);
    return reduced_output(st, p, a->t[0], a->b[0]);
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
    mt_status st = mt_reduced_dims(a->t[0], &a->l[0], r->reduce);
    return reduced_output(st, p, a->t[0], a->b[0]);
}

static const mt_intlist all_dims = {.n = 0, .none = true};

/* amax and amin over dims, max and min over all of them, in self's dtype: not of nothing. */
mt_status
mt_front_extremum(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    bool all = p->op == MT_OP_max || p->op == MT_OP_min;
    r->in_dt = r->out_dt = a->t[0]->dtype;
    mt_status st = mt_reduced_dims(a->t[0], all ? &all_dims : &a->l[0], r->reduce);
    if (st == MT_OK) {
        st = check_elements(a->t[0], all ? &all_dims : &a->l[0], r->reduce, mt_op_names[p->op]);
    }
    return reduced_output(st, p, a->t[0], !all && a->b[0]);
}

/* all and any: bools. */
mt_status
mt_front_logical(const mt_args *a, mt_plan *p)
{
    p->reduce.in_dt = p->reduce.out_dt = MT_BOOL;
    mt_status st = mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
    return reduced_output(st, p, a->t[0], a->b[0]);
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
    mt_status st = mt_linalg_check_float(self, "linalg.vector_norm");
    if (st || (st = mt_linalg_check_norm_dtype(self_dt, a->dtype))) {
        return st;
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
    st = mt_reduced_dims(self, dims, r->reduce);
    int64_t per_out = 1;
    for (int d = 0; d < self->ndim; d++) {
        per_out *= r->reduce[d] ? self->sizes[d] : 1;
    }
    if (st == MT_OK && per_out == 1 && r->p != 0) {
        r->p = 1; /* PyTorch's norm of one element is |x| at any order: no |x|^p to underflow */
    }
    if (st == MT_OK && isinf(r->p) && r->p < 0) {
        st = check_elements(self, dims, r->reduce, "norm"); /* the min of |x|: of nothing */
    }
    return reduced_output(st, p, self, a->b[0]);
}

/* var and std: a float input; p the correction. */
mt_status
mt_front_moment(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    if (!mt_dtype_is_float(a->t[0]->dtype)) {
        return mt_fail(MT_ERUNTIME, "std and var only support floating point and complex dtypes");
    }
    r->in_dt = r->out_dt = a->t[0]->dtype;
    r->p = mt_scalar_is_none(a->s[0]) ? (a->b[0] ? 1.0 : 0.0) : mt_scalar_to_double(a->s[0]);
    mt_status st = mt_reduced_dims(a->t[0], &a->l[0], r->reduce);
    return reduced_output(st, p, a->t[0], a->b[1]);
}

/* logsumexp: computed in self's float dtype, or the default one. */
mt_status
mt_front_logsumexp(const mt_args *a, mt_plan *p)
{
    mt_dtype dt = a->t[0]->dtype;
    p->reduce.in_dt = p->reduce.out_dt = mt_dtype_is_float(dt) ? dt : MT_DEFAULT_FLOAT;
    mt_status st = mt_reduced_dims(a->t[0], &a->l[0], p->reduce.reduce);
    return reduced_output(st, p, a->t[0], a->b[0]);
}

/* max_dim and min_dim (values and indices) along a dim, argmax and argmin (indices, no bool)
 * along a dim or None (the flattened tensor): PyTorch's errors for an empty reduction; dim the
 * one dim, wrapped (0 for None). */
mt_status
mt_front_arg_extreme(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0];
    mt_reduce_plan *r = &p->reduce;
    bool want_values = p->op == MT_OP_max_dim || p->op == MT_OP_min_dim;
    const char *name = p->op == MT_OP_max_dim   ? "max"
                       : p->op == MT_OP_min_dim ? "min"
                                                : mt_op_names[p->op];
    /* max_dim's and min_dim's dim is an int, argmax's and argmin's an int or None */
    const mt_intlist dim_arg = want_values ? (mt_intlist){.n = 1, .none = false, .v = {a->i[0]}}
                                           : mt_dim_list(a, 0);
    const mt_intlist *dims = &dim_arg;
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
    if (!want_values) {
        return reduced_outputs(p, self, a->b[0], MT_INT64, false);
    }
    return reduced_outputs(p, self, a->b[0], self->dtype, true);
}

/* The result of an op along one dim whose plan is made (st MT_OK): self's shape, contiguous,
 * in the plan's dtype. */
static mt_status
along_output(mt_status st, mt_plan *p, const mt_tensor *self)
{
    return st ? st : mt_front_output(p, p->reduce.out_dt, self->ndim, self->sizes);
}

/* cumsum and cumprod: computed in int64 for integers and bools (or the dtype asked for). */
mt_status
mt_front_scan(const mt_args *a, mt_plan *p)
{
    mt_dtype self_dt = a->t[0]->dtype;
    p->reduce.in_dt = p->reduce.out_dt = a->dtype >= 0                         ? (mt_dtype)a->dtype
                                         : mt_dtype_is_integral(self_dt, true) ? MT_INT64
                                                                               : self_dt;
    return along_output(mt_wrap_dim(a->i[0], a->t[0]->ndim, &p->reduce.dim), p, a->t[0]);
}

/* everyday pointwise: logcumsumexp, floats only, in self's dtype. */
mt_status
mt_front_logcumsumexp(const mt_args *a, mt_plan *p)
{
    mt_dtype dt = a->t[0]->dtype;
    if (!mt_dtype_is_float(dt)) {
        return mt_fail_not_implemented("logcumsumexp_out",
                                       mt_front_on_cuda(a->t[0]) ? "_cuda" : "_cpu", dt);
    }
    p->reduce.in_dt = p->reduce.out_dt = dt;
    return along_output(mt_wrap_dim(a->i[0], a->t[0]->ndim, &p->reduce.dim), p, a->t[0]);
}

/* _log_softmax_backward_data and _softmax_backward_data: grad_output and output of one float
 * dtype and shape. */
mt_status
mt_front_log_softmax_backward(const mt_args *a, mt_plan *p)
{
    const mt_tensor *g = a->t[0], *y = a->t[1];
    if (!mt_dtype_is_float(g->dtype) || g->dtype != y->dtype || g->ndim != y->ndim ||
        memcmp(g->sizes, y->sizes, sizeof(int64_t) * (size_t)g->ndim) != 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected grad_output and output of one float dtype and "
                       "shape",
                       mt_op_names[p->op]);
    }
    p->reduce.in_dt = p->reduce.out_dt = g->dtype;
    return along_output(mt_wrap_dim(a->i[0], g->ndim, &p->reduce.dim), p, g);
}

/* softmax and log_softmax: a float dtype they compute in. */
mt_status
mt_front_softmax(const mt_args *a, mt_plan *p)
{
    mt_reduce_plan *r = &p->reduce;
    const char *name = mt_op_names[p->op];
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    if (!mt_dtype_is_float(dt)) {
        return mt_fail(MT_ENOTIMPL, "\"%s_lastdim_kernel_impl\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(dt));
    }
    r->in_dt = r->out_dt = dt;
    return along_output(mt_wrap_dim(a->i[0], a->t[0]->ndim, &r->dim), p, a->t[0]);
}
