/* The front ends of the copies and fills (copy_, fill_; masked_fill's check, for the elementwise
 * family's front end), for every device. The other families have their own files (front.h). */
#include "ops/arg_checks.h"
#include "ops/front.h"

/* ---- fills ---- */

/* *v = the 0-dim value, read with item(), so that it may live on another device than self, as
 * PyTorch allows. A number must convert into self's dtype (fill_(Scalar) converts checked; a
 * tensor's value is cast, as fill_(Tensor) casts it: int8 fill_(tensor(300)) holds 44), but
 * for one element on the CPU of float16, bfloat16 or float8, which PyTorch's scalar_fill stores
 * unchecked (full((1,), 70000., dtype=float16) is inf, full((2,), ...) an error); masked_fill's
 * value is checked by mt_ew_check_scalars, in the dtype given. */
static mt_status
value_of(const mt_tensor *self, const mt_tensor *value, mt_scalar *v)
{
    mt_status st = mt_tensor_item(value, v);
    bool scalar_fill = mt_tensor_numel(self) == 1 && mt_tensor_device(self).type == MT_CPU &&
                       mt_dtype_is_float(self->dtype) && mt_dtype_is_small(self->dtype);
    return st || !value->is_wrapped_number || scalar_fill ? st
                                                          : mt_check_scalar_fits(*v, self->dtype);
}

/* fill_(self, value): a 0-dim value (a tensor, or a wrapped number) that fits self's dtype (*v). */
static mt_status
check_fill_value(const mt_tensor *self, const mt_tensor *value, mt_scalar *v)
{
    if (value->ndim != 0) {
        return mt_fail(MT_ERUNTIME,
                       "fill_ only supports 0-dimension value tensor but got tensor with %d "
                       "dimensions.",
                       value->ndim);
    }
    if (mt_fill_value_on_device(self, value)) {
        *v = mt_scalar_int(0); /* unread: the kernel copies the value on the device */
        return MT_OK;
    }
    return value_of(self, value, v);
}

mt_status
mt_check_masked_fill_args(const mt_tensor *mask, const mt_tensor *value)
{
    if (value->ndim != 0) {
        return mt_fail(MT_ERUNTIME,
                       "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                       "with %d dimension(s).",
                       value->ndim);
    }
    if (mask->dtype != MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                       mt_dtype_c_name(mask->dtype));
    }
    return MT_OK;
}

mt_status
mt_check_masked_fill(const mt_tensor *self, const mt_tensor *mask, const mt_tensor *value,
                     mt_scalar *v)
{
    mt_status st = mt_check_masked_fill_args(mask, value);
    return st ? st : value_of(self, value, v);
}

// self (any shape), value (0-dim): the value, read once (it may live on another device)
mt_status
mt_front_fill_(const mt_args *a, mt_plan *p)
{
    return check_fill_value(a->t[0], a->t[1], &p->value);
}

// self (any shape) = src broadcast to it: self can be written
mt_status
mt_front_copy_(const mt_args *a, mt_plan *p)
{
    (void)p;
    return mt_check_writable(a->t[0]);
}
