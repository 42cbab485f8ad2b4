/* Which dims a reduction covers and the shape of its result (ops/reduce_dims.h): shared by the
 * CPU reductions and, through the C API, the CUDA ones. */
#include <string.h>

#include "ops/reduce_dims.h"

mt_status
mt_wrap_dims(const mt_intlist *dims, int ndim, const char *repeated, int *order, bool *in)
{
    bool seen[MT_MAX_DIMS] = {false};
    if (in) {
        memset(in, 0, sizeof(bool) * MT_MAX_DIMS);
    }
    for (int k = 0; k < dims->n; k++) {
        int d;
        mt_status st = mt_wrap_dim(dims->v[k], ndim, &d);
        if (st) {
            return st;
        }
        if (seen[d] && repeated) {
            return mt_fail(MT_ERUNTIME, repeated, d);
        }
        seen[d] = true;
        if (order) {
            order[k] = d;
        }
        if (in) {
            in[d] = ndim > 0;
        }
    }
    return MT_OK;
}

mt_status
mt_dim_set(const mt_tensor *self, const mt_intlist *dims, bool *in)
{
    return mt_wrap_dims(dims, self->ndim, "dim %d appears multiple times in the list of dims", NULL,
                        in);
}

mt_status
mt_reduced_dims(const mt_tensor *self, const mt_intlist *dims, bool *reduce)
{
    if (dims->none || dims->n == 0) {
        memset(reduce, 0, sizeof(bool) * MT_MAX_DIMS);
        for (int d = 0; d < self->ndim; d++) {
            reduce[d] = true;
        }
        return MT_OK;
    }
    return mt_dim_set(self, dims, reduce);
}

mt_intlist
mt_dim_list(const mt_args *a, int slot)
{
    mt_intlist l = {.n = 1, .none = (a->i_none >> slot & 1u) != 0, .v = {a->i[slot]}};
    return l;
}
