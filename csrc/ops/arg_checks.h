/* Checks and helpers that several front ends, or a front end and the kernels of every device,
 * share (the front ends themselves are listed in ops/front.h). */
#ifndef MT_OPS_ARG_CHECKS_H
#define MT_OPS_ARG_CHECKS_H

#include "dispatch/dispatch.h"
#include "ops/plans.h"

/* ---- one_hot ---- */

/* one_hot's result (*, classes) int64 where the largest class sized it (num_classes -1, which
 * its front end stated as made by the kernel): made once the kernel knows it, through the
 * dispatcher, on self's device. Inline: each device's kernels compile their own. */
static inline mt_status
mt_one_hot_result(mt_args *a, int64_t classes)
{
    const mt_tensor *self = a->t[0];
    int64_t shape[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        shape[d] = self->sizes[d];
    }
    shape[self->ndim] = classes; /* the allocation checks the sizes */
    return mt_dispatch_result(a, 0, MT_INT64, self->ndim + 1, shape, mt_tensor_device(self));
}

/* ---- fills (ops/arg_checks.c) ---- */

/* fill_(self, value) with value a tensor (not a number) on self's CUDA device: PyTorch copies
 * it on the device (fill_ is copy_ there), so no wait reads it back; its front end then checks
 * only its dim and its kernel copies it. Inline: each device's kernels compile their own. */
static inline bool
mt_fill_value_on_device(const mt_tensor *self, const mt_tensor *value)
{
    mt_device s = mt_tensor_device(self);
    return !value->is_wrapped_number && s.type == MT_CUDA &&
           mt_device_eq(s, mt_tensor_device(value));
}

/* masked_fill(self, mask, value): a 0-dim value and a bool mask (PyTorch's order), and the value
 * fits self's dtype (*v). The first two checks alone: mt_check_masked_fill_args. */
mt_status mt_check_masked_fill(const mt_tensor *self, const mt_tensor *mask, const mt_tensor *value,
                               mt_scalar *v);
mt_status mt_check_masked_fill_args(const mt_tensor *mask, const mt_tensor *value);

/* ---- nn layers (ops/nn_checks.c, norm_checks.c) ---- */

/* PyTorch's check that weight and the other parameters p (or NULL) have the input's dtype;
 * device ("CPU", "CUDA") as in its message. */
mt_status mt_check_param_dtype(const mt_tensor *input, const mt_tensor *p, const char *device);
/* layer_norm's (rms false) and rms_norm's checks, PyTorch's messages: normalized_shape has a
 * dim, weight and bias (or NULL) have its shape, and input ends with it. */
mt_status mt_check_norm_shapes(const mt_tensor *input, const mt_intlist *shape,
                               const mt_tensor *weight, const mt_tensor *bias, bool rms);
/* A backend's running = (1 - momentum) * running + momentum * stat * correction, in place. */
typedef mt_status (*mt_running_fn)(mt_tensor *running, const double *stat, double momentum,
                                   double correction);
/* batch_norm in training: its running_mean and running_var (a->t[3], a->t[4], where given) moved
 * by momentum (a->s[0]) towards the batch's mean and var (C each, on the backend's device) over
 * count values each. Inline, as mt_norm_backward_inputs: each device's kernels compile their
 * own (a plug-in calls no C API entry for them). */
static inline mt_status
mt_batch_norm_update_running(const mt_args *a, const double *mean, const double *var, int64_t count,
                             mt_running_fn update)
{
    double momentum = mt_scalar_to_double(a->s[0]), n = (double)count;
    mt_status st = MT_OK;
    if (count == 0) {
        /* An empty batch has no statistics (0/0): PyTorch leaves the running ones untouched. */
        return MT_OK;
    }
    if (a->t[3] && (st = update(a->t[3], mean, momentum, 1.0))) {
        return st;
    }
    /* running_var moves towards the unbiased variance, as PyTorch's */
    return a->t[4] ? update(a->t[4], var, momentum, n / (n - 1)) : MT_OK;
}
/* A backend's contiguous src in dt: src itself (retained) or a new copy. */
typedef mt_status (*mt_dense_fn)(mt_tensor *src, mt_dtype dt, mt_tensor **out);
/* What the backward of layer_norm and batch_norm reads, made by dense: t[0], t[1] = grad_out
 * and input (a->t[0], a->t[1]) in grad_out's dtype, t[2 + k] = the per-feature a->t[2 + k] in
 * float64 (NULL where absent) for k < nparams. The caller releases t[] whatever the status. */
static inline mt_status
mt_norm_backward_inputs(const mt_args *a, int nparams, mt_dense_fn dense, mt_tensor **t)
{
    mt_dtype dt = a->t[0]->dtype;
    mt_status st;
    if ((st = dense(a->t[0], dt, &t[0])) || (st = dense(a->t[1], dt, &t[1]))) {
        return st;
    }
    for (int k = 0; k < nparams; k++) {
        t[2 + k] = NULL;
        if (a->t[2 + k] && (st = dense(a->t[2 + k], MT_FLOAT64, &t[2 + k]))) {
            return st;
        }
    }
    return MT_OK;
}

/* ---- sorting (ops/sort_checks.c) ---- */

/* A backend's sort: the first k of each row of self along dim, sorted (descending if desc):
 * values (unless NULL) and int64 indices, shaped like self with k along dim, contiguous. A
 * tensor already in *values or *indices (the op's result) is written and stays the caller's;
 * a NULL one is made, and left only on success. */
typedef mt_status (*mt_sort_along_fn)(mt_tensor *self, int dim, int64_t k, bool desc,
                                      mt_tensor **values, mt_tensor **indices);
/* sort and topk (values and indices) or argsort (indices), told apart by the plan's op, of
 * a->t[0] into a->out (the results their front end stated) through along, with the dim and
 * count of their front end's plan (descending or largest in b[0]). */
mt_status mt_sort_with(mt_args *a, mt_sort_along_fn along);
/* self seen as (outer, n, inner) around dim; shape (self->ndim) the result's: self's with k
 * along dim. Inline, as mt_unique_results: each device's kernels compile their own (a plug-in
 * calls no C API entry for them). */
static inline void
mt_sort_geom(const mt_tensor *self, int dim, int64_t k, int64_t *outer, int64_t *n, int64_t *inner,
             int64_t *shape)
{
    *outer = 1;
    *inner = 1;
    *n = self->ndim ? self->sizes[dim] : 1;
    for (int d = 0; d < self->ndim; d++) {
        *outer *= d < dim ? self->sizes[d] : 1;
        *inner *= d > dim ? self->sizes[d] : 1;
        shape[d] = d == dim ? k : self->sizes[d];
    }
}
/* _unique2's results sized by its data, once the kernel has counted groups distinct values
 * (its front end, ops/sort_checks.c, stated the others): out[0] (groups) of dt and, where
 * return_counts (b[2]) asks for them, the counts out[2] (groups) int64, on dev. */
static inline mt_status
mt_unique_results(mt_args *a, int64_t groups, mt_dtype dt, mt_device dev)
{
    mt_status st = mt_dispatch_result(a, 0, dt, 1, &groups, dev);
    return st || !a->b[2] ? st : mt_dispatch_result(a, 2, MT_INT64, 1, &groups, dev);
}

/* ---- random fills (ops/random_checks.c) ---- */

/* The fill's parameters from a (self in t[0], its Scalars in s[]) with PyTorch's defaults and
 * errors (the kinds and mt_random_spec: ops/plans.h). */
mt_status mt_random_spec_of(const mt_args *a, mt_random_kind kind, mt_random_spec *out);

/* bernoulli_ with a tensor p (t[1], not a wrapped number): p's dtype is a float one, its values
 * lie in [0, 1] (a read back on a device), and *p_out (a new reference) is p expanded to self's
 * shape. */
mt_status mt_bernoulli_tensor_p(const mt_args *a, const char *device, mt_tensor **p_out);
/* poisson(rates): a float dtype ("poisson_<device>" otherwise) and no negative or NaN rate. */
mt_status mt_check_poisson(const mt_args *a, const char *device);
/* multinomial(self, num_samples, replacement): PyTorch's checks of the arguments, and *shape (1
 * or 2 dims) the result's. */
mt_status mt_multinomial_shape(const mt_args *a, int *ndim, int64_t *shape);

#endif
