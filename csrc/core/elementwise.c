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

mt_status
mt_ew_begin(mt_ew_plan *p, const mt_ew_backend *be, mt_tensor *const *ins, int nin,
            const mt_dtype *in_dtypes, mt_dtype result, bool inplace)
{
    mt_status st = MT_OK;
    memset(p, 0, sizeof(*p));
    p->be = be;
    p->nin = nin;
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
        return MT_OK;
    }
    /* The device: the first input's that is not a Python number (a number's is the CPU). */
    mt_device dev = mt_tensor_device(ins[0]);
    for (int k = nin - 1; k >= 0; k--) {
        dev = is_number(ins[k]) ? dev : mt_tensor_device(ins[k]);
    }
    if ((st = mt_tensor_empty(p->ndim, p->shape, result, dev, &p->ops[0]))) {
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
