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

/* *out = res (self's rank, size 1 on reduced dims) as the reduction's result: res itself when
 * keepdim, else a view without the reduced dims. Takes over the reference to res. Inline: each
 * device's kernels compile their own. */
static inline mt_status
mt_reduce_result(const mt_tensor *self, const bool *reduce, bool keepdim, mt_tensor *res,
                 mt_tensor **out)
{
    if (keepdim) {
        *out = res;
        return MT_OK;
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (!reduce[d]) {
            sizes[n] = self->sizes[d];
            strides[n++] = res->strides[d];
        }
    }
    mt_status st = mt_tensor_view(res, n, sizes, strides, res->offset, out);
    mt_tensor_release(res);
    return st;
}

/* The one-int-dim-or-all form (prod, argmax): dim as an int list, none if absent. */
mt_intlist mt_dim_list(const mt_args *a, int slot);

/* out[0], out[1] = *values, *indices of an arg reduction (max, min, mode, ... over dims), each as
 * mt_reduce_result makes it; values NULL: out[0] = *indices alone. Takes over each reference it
 * gets to (setting it NULL); on failure no output is left. */
static inline mt_status
mt_reduce_arg_results(const mt_tensor *self, const bool *reduce, bool keepdim, mt_tensor **values,
                      mt_tensor **indices, mt_tensor **out)
{
    mt_status st = MT_OK;
    if (values) {
        st = mt_reduce_result(self, reduce, keepdim, *values, &out[0]);
        *values = NULL;
    }
    if (st == MT_OK) {
        st = mt_reduce_result(self, reduce, keepdim, *indices, &out[values ? 1 : 0]);
        *indices = NULL;
        if (st && values) {
            mt_tensor_clear(&out[0]);
        }
    }
    return st;
}

#endif
