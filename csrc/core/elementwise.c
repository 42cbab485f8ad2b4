/* The shared elementwise front end of core/elementwise.h. */
#include <string.h>

#include "core/elementwise.h"

mt_dtype
mt_result_type(mt_tensor *const *ops, int n)
{
    mt_promotion p;
    mt_promotion_init(&p);
    for (int k = 0; k < n; k++) {
        mt_promotion_add(&p, ops[k]->dtype, ops[k]->ndim, ops[k]->is_wrapped_number);
    }
    return mt_promotion_result(&p);
}

mt_status
mt_check_inplace(const mt_tensor *self, int ndim, const int64_t *shape, mt_dtype result)
{
    char b1[256], b2[256];
    if (ndim != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)ndim) != 0) {
        return mt_fail(MT_ERUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                       mt_format_sizes(b1, sizeof(b1), self->ndim, self->sizes),
                       mt_format_sizes(b2, sizeof(b2), ndim, shape));
    }
    if (!mt_can_cast(result, self->dtype)) {
        return mt_fail(MT_ERUNTIME, "result type %s can't be cast to the desired output type %s",
                       mt_dtype_scalar_name(result), mt_dtype_scalar_name(self->dtype));
    }
    return MT_OK;
}

static bool
is_number(const mt_tensor *t)
{
    return t->is_wrapped_number && mt_tensor_device(t).type == MT_CPU;
}

static bool
same_sizes(const mt_tensor *t, int ndim, const int64_t *shape)
{
    return t->ndim == ndim && memcmp(t->sizes, shape, sizeof(int64_t) * (size_t)ndim) == 0;
}

/* Whether a 4-d t is laid out N, H, W, C (PyTorch's is_contiguous(memory_format=channels_last);
 * size-1 dims may have any stride). */
static bool
is_channels_last(const mt_tensor *t)
{
    static const int order[4] = {1, 3, 2, 0};
    int64_t expected = 1;
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    return true;
}

/* The result's strides as PyTorch's TensorIterator lays it out: contiguous when the inputs are,
 * channels-last when they all are, theirs when they all share one dense layout, else dense in
 * the order the inputs' strides give (so x.permute(2, 0, 1) * 2 is permuted like x, and a
 * reshape of it is a copy, as in PyTorch). */
static void
result_strides(mt_tensor *const *ins, int nin, int ndim, const int64_t *shape, int64_t *strides)
{
    bool same_shape = true, contiguous = true, same_dense = true;
    for (int k = 0; k < nin; k++) {
        same_shape &= same_sizes(ins[k], ndim, shape);
        if (!same_shape) {
            break;
        }
        contiguous &= mt_tensor_is_contiguous(ins[k]);
        same_dense &= mt_tensor_is_dense(ins[k]) &&
                      memcmp(ins[k]->strides, ins[0]->strides, sizeof(int64_t) * (size_t)ndim) == 0;
    }
    if (mt_numel(ndim, shape) == 0 || (same_shape && contiguous)) {
        mt_contiguous_strides(ndim, shape, strides);
        return;
    }
    bool channels_last = same_shape && ndim == 4;
    for (int k = 0; channels_last && k < nin; k++) {
        channels_last = is_channels_last(ins[k]);
    }
    if (channels_last) { /* N, C, H, W stored as N, H, W, C */
        strides[1] = 1;
        strides[3] = shape[1];
        strides[2] = strides[3] * shape[3];
        strides[0] = strides[2] * shape[2];
        return;
    }
    if (same_shape && same_dense) {
        memcpy(strides, ins[0]->strides, sizeof(int64_t) * (size_t)ndim);
        return;
    }
    int64_t bstr[MT_EW_MAX_OPS][MT_MAX_DIMS];
    for (int k = 0; k < nin; k++) {
        int lead = ndim - ins[k]->ndim;
        for (int d = 0; d < ndim; d++) {
            int j = d - lead;
            bool broadcast = j < 0 || (ins[k]->sizes[j] == 1 && shape[d] != 1);
            bstr[k][d] = broadcast ? 0 : ins[k]->strides[j];
        }
    }
    mt_dense_strides_like(ndim, shape, nin, (const int64_t (*)[MT_MAX_DIMS])bstr, strides);
}

mt_status
mt_ew_begin(mt_ew_plan *p, const mt_ew_backend *be, mt_tensor *const *ins, int nin,
            const mt_dtype *in_dtypes, mt_dtype result, bool inplace, mt_tensor *dest)
{
    mt_status st = MT_OK;
    /* every member but the shape, of which the broadcast below writes the first ndim */
    p->ndim = 0;
    p->nin = nin;
    memset(p->ops, 0, sizeof(p->ops));
    memset(p->cast, 0, sizeof(p->cast));
    p->self = NULL;
    p->need_tmp = false;
    p->out_is_input = false;
    p->be = be;
    if (nin < 1 || nin >= MT_EW_MAX_OPS) {
        return mt_fail(MT_ERUNTIME, "elementwise op with %d inputs", nin);
    }
    for (int k = 0; k < nin; k++) {
        st = mt_broadcast_shapes(p->ndim, p->shape, ins[k]->ndim, ins[k]->sizes, &p->ndim,
                                 p->shape);
        if (st) {
            return st;
        }
    }
    if (inplace) {
        if ((st = mt_check_inplace(ins[0], p->ndim, p->shape, result)) ||
            (st = mt_check_writable(ins[0]))) {
            return st;
        }
        /* Write through a temporary when the result needs a cast, or when another input
         * shares memory with self in a different layout. */
        p->need_tmp = ins[0]->dtype != result;
        for (int k = 1; k < nin; k++) {
            p->need_tmp |= ins[k]->storage == ins[0]->storage &&
                           !mt_tensor_same_view(ins[k], ins[0]);
        }
        p->self = ins[0];
    }
    for (int k = 0; k < nin; k++) {
        p->ops[k + 1] = ins[k];
        if (ins[k]->dtype == in_dtypes[k] || (be->keep_numbers && is_number(ins[k]))) {
            continue;
        }
        if ((st = be->cast(ins[k], in_dtypes[k], &p->cast[k]))) {
            goto out_release;
        }
        p->ops[k + 1] = p->cast[k];
    }
    if (inplace && !p->need_tmp) {
        p->ops[0] = mt_tensor_retain(ins[0]);
        p->out_is_input = true;
        return MT_OK;
    }
    if (dest) { /* out=: written there; the caller bumps its version */
        p->ops[0] = mt_tensor_retain(dest);
        for (int k = 0; k < nin; k++) {
            p->out_is_input |= ins[k]->storage == dest->storage;
        }
        return MT_OK;
    }
    /* The device: the first input's that is not a Python number (a number's is the CPU). */
    mt_device dev = mt_tensor_device(ins[0]);
    for (int k = nin - 1; k >= 0; k--) {
        dev = is_number(ins[k]) ? dev : mt_tensor_device(ins[k]);
    }
    int64_t strides[MT_MAX_DIMS];
    result_strides(ins, nin, p->ndim, p->shape, strides);
    if ((st = mt_tensor_empty_strided(p->ndim, p->shape, strides, result, dev, &p->ops[0]))) {
        goto out_release;
    }
    return MT_OK;
out_release:
    for (int k = 0; k < nin; k++) {
        mt_tensor_clear(&p->cast[k]);
    }
    return st;
}

mt_status
mt_ew_end(mt_ew_plan *p, mt_status st, mt_tensor **out)
{
    mt_tensor *res = p->ops[0];
    p->ops[0] = NULL;
    if (st == MT_OK && p->self) {
        if (p->need_tmp) {
            st = p->be->copy_into(p->self, res);
            mt_tensor_release(res);
            res = st ? NULL : mt_tensor_retain(p->self);
        }
        if (res) {
            mt_tensor_bump_version(p->self);
        }
    }
    if (st == MT_OK) {
        *out = res;
        res = NULL;
    }
    mt_tensor_clear(&res);
    for (int k = 0; k < p->nin; k++) {
        mt_tensor_clear(&p->cast[k]);
    }
    return st;
}
