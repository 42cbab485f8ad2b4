/* Which dims a reduction covers, and the shape of its result: device-independent, used by the
 * CPU reductions (cpu/reduce*.c) and the CUDA ones (exported through capi/capi.h). */
#ifndef MT_OPS_REDUCE_DIMS_H
#define MT_OPS_REDUCE_DIMS_H

#include <stdbool.h>

#include "dispatch/dispatch.h"

/* The one reading of a list of dims for a tensor of ndim dims: each wrapped (mt_wrap_dim's
 * IndexError for one out of range), into order[k] in the list's order (unless order is NULL)
 * and as a set, in[d] for each dim named (unless in is NULL; MT_MAX_DIMS entries; a 0-d
 * tensor's dim 0 or -1 names nothing). A dim named twice fails with RuntimeError `repeated`,
 * the caller's PyTorch message, which may print the wrapped dim with one %d; with repeated
 * NULL the list may repeat dims. */
mt_status mt_wrap_dims(const mt_intlist *dims, int ndim, const char *repeated, int *order,
                       bool *in);

/* in[d] is set for each dim of self that dims names (a 0-d tensor's dim 0 or -1 names nothing);
 * a dim out of range or named twice is PyTorch's error (the reductions' wording). */
mt_status mt_dim_set(const mt_tensor *self, const mt_intlist *dims, bool *in);

/* reduce[d] is set for each dim of self that dims names; none given (or an empty list) means
 * all. A repeated dim is an error. */
mt_status mt_reduced_dims(const mt_tensor *self, const mt_intlist *dims, bool *reduce);

/* out = res (self's rank, size 1 on the reduced dims, contiguous): res stored into the result
 * the front end stated (the reduced dims dropped or kept, the same elements in the same order),
 * converting its dtype with the device's copy. Inline: each device's kernels compile their own. */
static inline mt_status
mt_reduce_store(mt_tensor *res, mt_tensor *out, mt_status (*copy_into)(mt_tensor *, mt_tensor *))
{
    mt_tensor *view = NULL;
    mt_status st = mt_tensor_view(res, out->ndim, out->sizes, out->strides, res->offset, &view);
    if (st == MT_OK) {
        st = copy_into(out, view);
    }
    mt_tensor_clear(&view);
    return st;
}

/* The one-int-dim-or-all form (prod, argmax): dim as an int list, none if absent. */
mt_intlist mt_dim_list(const mt_args *a, int slot);

#endif
