/* Which dims a reduction covers and the shape of its result (ops/reduce_dims.h): shared by the
 * CPU reductions and, through the C API, the CUDA ones. */
#include <string.h>

#include "ops/reduce_dims.h"

mt_status
mt_dim_set(const mt_tensor *self, const mt_intlist *dims, bool *in)
{
    bool seen[MT_MAX_DIMS] = {false};
    memset(in, 0, sizeof(bool) * MT_MAX_DIMS);
    for (int k = 0; k < dims->n; k++) {
        int d;
        mt_status st = mt_wrap_dim(dims->v[k], self->ndim, &d);
        if (st) {
            return st;
        }
        if (seen[d]) {
            return mt_fail(MT_ERUNTIME, "dim %d appears multiple times in the list of dims", d);
        }
        seen[d] = true;
        in[d] = self->ndim > 0; /* a 0-d tensor's dim 0 (or -1) names nothing */
    }
    return MT_OK;
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
