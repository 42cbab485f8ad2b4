/* The front ends of the shape ops that move elements (cat, flip, tril, triu and in place,
 * one_hot, masked_select), for every device: PyTorch's checks and the result's shape, and cat's
 * kernel over a device's copy (ops/factory_args.h). */
#include <inttypes.h>
#include <string.h>

#include "ops/factory_args.h"
#include "ops/front.h"
#include "ops/reduce_dims.h"

/* PyTorch still accepts 1-D empty tensors of any other shape in cat, and skips them. */
static bool
cat_skips(const mt_tensor *t)
{
    return t->ndim == 1 && t->sizes[0] == 0;
}

/* Checks that t matches the reference tensor in every dim but dim; PyTorch's messages. */
static mt_status
check_cat_shape(const mt_tensor *ref, const mt_tensor *t, int dim, int index)
{
    if (ref->ndim != t->ndim) {
        return mt_fail(MT_ERUNTIME, "Tensors must have same number of dimensions: got %d and %d",
                       ref->ndim, t->ndim);
    }
    for (int d = 0; d < t->ndim; d++) {
        if (d != dim && ref->sizes[d] != t->sizes[d]) {
            return mt_fail(MT_ERUNTIME,
                           "Sizes of tensors must match except in dimension %d. Expected size "
                           "%" PRId64 " but got size %" PRId64 " for tensor number %d in the list.",
                           dim, ref->sizes[d], t->sizes[d], index);
        }
    }
    return MT_OK;
}

// tensors: n tensors (A, k_i, B) along dim (1-D empty ones skipped): the promoted dtype, the
// result's rank and sizes, and dim
mt_status
mt_front_cat(const mt_args *a, mt_plan *p)
{
    mt_dtype *dt = &p->shape.dt;
    int *ndim = &p->shape.ndim, *dim = &p->shape.dim;
    int64_t *sizes = p->shape.sizes;
    int n = a->ntl;
    mt_tensor **ts = a->tl;
    if (n == 0) {
        return mt_fail(MT_EVALUE, "torch.cat(): expected a non-empty list of Tensors");
    }
    *dt = ts[0]->dtype;
    int ref = -1;
    for (int k = 0; k < n; k++) {
        if (ts[k]->ndim == 0) {
            return mt_fail(MT_ERUNTIME,
                           "zero-dimensional tensor (at position %d) cannot be concatenated", k);
        }
        *dt = mt_promote_types(*dt, ts[k]->dtype);
        if (ref < 0 && !cat_skips(ts[k])) {
            ref = k;
        }
    }
    *ndim = 1;
    *dim = 0;
    memset(sizes, 0, sizeof(int64_t) * MT_MAX_DIMS);
    if (ref < 0) {
        return mt_front_output(p, *dt, *ndim, sizes);
    }
    mt_status st = mt_wrap_dim(a->i[0], ts[ref]->ndim, dim);
    if (st) {
        return st;
    }
    *ndim = ts[ref]->ndim;
    memcpy(sizes, ts[ref]->sizes, sizeof(int64_t) * (size_t)*ndim);
    sizes[*dim] = 0;
    for (int k = ref; k < n; k++) {
        if (cat_skips(ts[k])) {
            continue;
        }
        if ((st = check_cat_shape(ts[ref], ts[k], *dim, k))) {
            return st;
        }
        sizes[*dim] += ts[k]->sizes[*dim];
    }
    /* PyTorch's result is in the memory format all its inputs suggest (the skipped ones too),
     * else row-major; the kernels copy each input into its slice of it, whatever its strides */
    mt_memory_format fmt = mt_suggest_memory_format(ts[0]);
    for (int k = 1; k < n; k++) {
        fmt = mt_suggest_memory_format(ts[k]) == fmt ? fmt : MT_CONTIGUOUS_FORMAT;
    }
    int64_t strides[MT_MAX_DIMS];
    mt_format_strides(fmt, *ndim, sizes, strides);
    return mt_front_output_strided(p, *dt, *ndim, sizes, strides);
}

// tensors: n tensors (A, k_i, B) along dim (1-D empty ones skipped); out (the result: (A,
// sum k_i, B), of the promoted dtype)
mt_status
mt_cat_with(mt_args *a, mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src))
{
    const mt_shape_plan *p = &a->plan->shape;
    const int ndim = p->ndim, dim = p->dim;
    mt_tensor **ts = a->tl, *out = a->out[0];
    mt_status st = MT_OK;
    int64_t at = 0; /* where the next input starts along dim */
    for (int k = 0; k < a->ntl && st == MT_OK && mt_tensor_numel(out) > 0; k++) {
        if (cat_skips(ts[k]) || ts[k]->sizes[dim] == 0) {
            continue;
        }
        mt_tensor *slot;
        st = mt_tensor_view(out, ndim, ts[k]->sizes, out->strides, at * out->strides[dim], &slot);
        if (st == MT_OK) {
            st = copy_into(slot, ts[k]);
            mt_tensor_release(slot);
        }
        at += ts[k]->sizes[dim];
    }
    return st;
}

// self (*) int64 class indices, num_classes (-1: max + 1): the checks before the values are
// seen; classes the argument
mt_status
mt_front_one_hot(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0];
    int64_t *classes = &p->shape.classes;
    *classes = (a->i_none & 1u) ? -1 : a->i[0];
    if (self->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME,
                       "one_hot is only applicable to index tensor of type LongTensor.");
    }
    if (self->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "one_hot: the input has too many dimensions");
    }
    if (mt_tensor_numel(self) == 0 && *classes == -1) {
        return mt_fail(MT_ERUNTIME, "Can not infer total number of classes from empty tensor.");
    }
    /* (*, num_classes) int64; with num_classes -1 the largest class sizes it: the kernel's */
    if (*classes == -1) {
        return mt_front_output_by_kernel(p, MT_INT64);
    }
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[self->ndim] = *classes;
    mt_status st = mt_check_sizes(self->ndim + 1, shape);
    return st ? st : mt_front_output(p, MT_INT64, self->ndim + 1, shape);
}

// self (..., M, N), diagonal: tril and triu, in place (and then self can be written) or not
mt_status
mt_front_triangle(const mt_args *a, mt_plan *p)
{
    if (a->t[0]->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: input tensor must have at least 2 dimensions",
                       p->op == MT_OP_tril || p->op == MT_OP_tril_ ? "tril" : "triu");
    }
    if (mt_op_flags[p->op] & INPLACE) {
        return mt_check_writable(a->t[0]);
    }
    return mt_front_output(p, a->t[0]->dtype, a->t[0]->ndim, a->t[0]->sizes);
}

// self (any shape), dims: each dim at most once
mt_status
mt_front_flip(const mt_args *a, mt_plan *p)
{
    mt_status st = mt_dim_set(a->t[0], &a->l[0], p->shape.dims);
    return st ? st : mt_front_output(p, a->t[0]->dtype, a->t[0]->ndim, a->t[0]->sizes);
}

// self (*), mask (*) bool, broadcast together: the broadcast shape, and the result
mt_status
mt_front_masked_select(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *mask = a->t[1];
    if (mask->dtype != MT_BOOL) {
        return mt_fail(MT_ERUNTIME, "masked_select: expected BoolTensor for mask");
    }
    mt_status st = mt_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes,
                                       &p->shape.ndim, p->shape.sizes);
    /* (the count of trues) of self's dtype: the kernel counts them, then makes it */
    return st ? st : mt_front_output_by_kernel(p, self->dtype);
}
