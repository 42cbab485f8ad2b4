/* The argument checks of the fills (ops/arg_checks.h), for every device. The other concerns
 * have their own files: reduce_checks.c, random_checks.c, nn_checks.c, matmul_checks.c (and
 * norm_checks.c, sort_checks.c); the elementwise family's are ops/elementwise.c's. */
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
