/* The elementwise driver of elementwise.h. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/elementwise.h"

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

mt_status
mt_cpu_elementwise(mt_tensor *const *ins, int nin, mt_dtype compute, mt_loop_fn loop, void *ctx,
                   bool inplace, mt_tensor **out)
{
    mt_dtype in_dtypes[MT_ITER_MAX_OPS];
    for (int k = 0; k < nin && k < MT_ITER_MAX_OPS; k++) {
        in_dtypes[k] = compute;
    }
    return mt_cpu_elementwise_typed(ins, nin, in_dtypes, compute, loop, ctx, inplace, out);
}

mt_status
mt_cpu_elementwise_typed(mt_tensor *const *ins, int nin, const mt_dtype *in_dtypes,
                         mt_dtype result, mt_loop_fn loop, void *ctx, bool inplace,
                         mt_tensor **out)
{
    mt_status st;
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS] = {0};
    mt_tensor *cast[MT_ITER_MAX_OPS] = {NULL};
    mt_tensor *ops[MT_ITER_MAX_OPS];
    mt_tensor *res = NULL;
    bool need_tmp = false;

    for (int k = 0; k < nin; k++) {
        st = mt_broadcast_shapes(ndim, shape, ins[k]->ndim, ins[k]->sizes, &ndim, shape);
        if (st) {
            return st;
        }
    }
    if (inplace) {
        st = mt_check_inplace(ins[0], ndim, shape, result);
        if (st == MT_OK) {
            st = mt_check_writable(ins[0]);
        }
        if (st) {
            return st;
        }
        /* Write through a temporary when the result needs a cast, or when another input
         * shares memory with self in a different layout. */
        need_tmp = ins[0]->dtype != result;
        for (int k = 1; k < nin; k++) {
            need_tmp |= ins[k]->storage == ins[0]->storage && !mt_tensor_same_view(ins[k], ins[0]);
        }
    }
    for (int k = 0; k < nin; k++) {
        ops[k + 1] = ins[k];
        if (ins[k]->dtype != in_dtypes[k]) {
            st = mt_cpu_cast(ins[k], in_dtypes[k], &cast[k]);
            if (st) {
                goto out_release;
            }
            ops[k + 1] = cast[k];
        }
    }
    if (inplace && !need_tmp) {
        res = mt_tensor_retain(ins[0]);
    } else {
        st = mt_tensor_empty(ndim, shape, result, mt_tensor_device(ins[0]), &res);
        if (st) {
            goto out_release;
        }
    }
    ops[0] = res;
    mt_iter it;
    st = mt_iter_build(&it, ndim, shape, ops, nin + 1);
    if (st) {
        goto out_release;
    }
    mt_iter_run_parallel(&it, loop, ctx);
    if (inplace) {
        if (need_tmp) {
            st = mt_cpu_copy_into(ins[0], res);
            mt_tensor_release(res);
            res = st ? NULL : mt_tensor_retain(ins[0]);
        }
        if (res) {
            mt_tensor_bump_version(ins[0]);
        }
    }
    *out = res;
    res = NULL;
out_release:
    mt_tensor_clear(&res);
    for (int k = 0; k < nin; k++) {
        mt_tensor_clear(&cast[k]);
    }
    return st;
}
