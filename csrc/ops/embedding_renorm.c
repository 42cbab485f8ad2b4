/* embedding_renorm_ as a composite: each distinct row of self (num_embeddings, dim) that
 * indices names, whose norm_type-norm exceeds max_norm, is multiplied by
 * max_norm / (norm + 1e-7); the other rows are left as they are. F.embedding(max_norm=) runs it
 * under no_grad before the lookup, as PyTorch's. The norms are those of self's dtype, and the
 * factor is worked out in double, then rounded to self's dtype, as PyTorch's loop does it. It
 * writes self once (one index_copy_), so self's version moves by one. */
#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/temps.h"

#define RENORM_EPS 1e-7 /* PyTorch's: keeps the factor finite and just under max_norm / norm */

static mt_status
renorm_checks(const mt_tensor *self, const mt_tensor *indices)
{
    if (self->ndim != 2) {
        return mt_fail(MT_ERUNTIME,
                       "Expected 2-dimensional tensor, but got %d-dimensional tensor for argument "
                       "#1 'self' (while checking arguments for embedding_renorm_)",
                       self->ndim);
    }
    if (indices->dtype != MT_INT64 && indices->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME,
                       "Expected tensor for argument #2 'indices' to have one of the following "
                       "scalar types: Long, Int; but got torch.%s%sTensor instead (while checking "
                       "arguments for embedding_renorm_)",
                       mt_tensor_device(indices).type == MT_CUDA ? "cuda." : "",
                       mt_dtype_scalar_name(indices->dtype));
    }
    return MT_OK;
}

mt_status
mt_composite_embedding_renorm_(mt_args *a)
{
    mt_tensor *self = a->t[0], *indices = a->t[1];
    double max_norm = a->f[0], norm_type = a->f[1];
    mt_status st = renorm_checks(self, indices);
    if (st) {
        return st;
    }
    // idx (k): the distinct indices, as int64 (index_copy_ takes no other); rows (k, dim);
    // norm, factor, over (k, 1)
    mt_temps p = {0};
    mt_tensor **flat = mt_temp(&p), **flat64 = mt_temp(&p), **idx = mt_temp(&p),
              **inverse = mt_temp(&p);
    mt_tensor **counts = mt_temp(&p), **rows = mt_temp(&p), **norm = mt_temp(&p);
    mt_tensor **norm64 = mt_temp(&p), **shifted = mt_temp(&p), **factor64 = mt_temp(&p);
    mt_tensor **factor = mt_temp(&p), **scaled = mt_temp(&p), **over = mt_temp(&p);
    mt_tensor **kept = mt_temp(&p);
    mt_tensor *limit = NULL, *eps = NULL;
    const int64_t row_dim = 1;
    mt_device dev = mt_tensor_device(self);
    if ((st = mt_op_reshape(indices, 1, (const int64_t[]){-1}, flat)) == MT_OK &&
        (st = mt_op_to(*flat, MT_INT64, mt_tensor_device(indices), false, flat64)) == MT_OK &&
        (st = mt_op__unique2(*flat64, true, false, false, idx, inverse, counts)) == MT_OK &&
        (st = mt_op_index_select(self, 0, *idx, rows)) == MT_OK &&
        (st = mt_op_linalg_vector_norm(*rows, mt_scalar_float(norm_type), 1, &row_dim, true,
                                       self->dtype, norm)) == MT_OK &&
        (st = mt_op_to(*norm, MT_FLOAT64, dev, false, norm64)) == MT_OK &&
        (st = mt_temp_number(&p, max_norm, &limit)) == MT_OK &&
        (st = mt_temp_number(&p, RENORM_EPS, &eps)) == MT_OK &&
        (st = mt_op_add(*norm64, eps, mt_scalar_int(1), shifted)) == MT_OK &&
        (st = mt_op_div(limit, *shifted, NULL, factor64)) == MT_OK &&
        (st = mt_op_to(*factor64, self->dtype, dev, false, factor)) == MT_OK &&
        (st = mt_op_mul(*rows, *factor, scaled)) == MT_OK &&
        (st = mt_op_gt(*norm64, limit, over)) == MT_OK &&
        (st = mt_op_where(*over, *scaled, *rows, kept)) == MT_OK &&
        (st = mt_op_index_copy_(self, 0, *idx, *kept, NULL)) == MT_OK) {
        a->out[0] = mt_tensor_retain(self);
    }
    mt_temps_clear(&p);
    return st;
}
