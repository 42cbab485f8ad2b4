/* embedding_renorm_ as a composite: each distinct row of self (num_embeddings, dim) that
 * indices names, whose norm_type-norm exceeds max_norm, is multiplied by
 * max_norm / (norm + 1e-7); the other rows are left as they are. F.embedding(max_norm=) runs it
 * under no_grad before the lookup, as PyTorch's. The norms are those of self's dtype, and the
 * factor is worked out in double, then rounded to self's dtype, as PyTorch's loop does it. It
 * writes self once (one index_copy_), so self's version moves by one. */
#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/op_chain.h"

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
    tmp s = {0};
    mt_tensor *r = NULL, *idx = NULL, *inverse = NULL, *counts = NULL;
    const int64_t row_dim = 1;
    mt_device dev = mt_tensor_device(self);
    mt_tensor *flat = own(&s, mt_op_reshape(indices, 1, (const int64_t[]){-1}, &r), &r);
    mt_tensor *flat64 = failed(&s, flat, flat)
                            ? NULL
                            : own(&s,
                                  mt_op_to(flat, MT_INT64, mt_tensor_device(indices), false, &r),
                                  &r);
    if (!failed(&s, flat64, flat64)) { /* each result adopted, whatever became of the others */
        mt_status st = mt_op__unique2(flat64, true, false, false, &idx, &inverse, &counts);
        idx = own(&s, st, &idx);
        own(&s, st, &inverse);
        own(&s, st, &counts);
    }
    mt_tensor *rows = failed(&s, idx, idx) ? NULL
                                           : own(&s, mt_op_index_select(self, 0, idx, &r), &r);
    mt_tensor *norm = failed(&s, rows, rows)
                          ? NULL
                          : own(&s,
                                mt_op_linalg_vector_norm(rows, mt_scalar_float(norm_type), 1,
                                                         &row_dim, true, self->dtype, &r),
                                &r);
    mt_tensor *norm64 = failed(&s, norm, norm)
                            ? NULL
                            : own(&s, mt_op_to(norm, MT_FLOAT64, dev, false, &r), &r);
    mt_tensor *limit = num(&s, max_norm);
    mt_tensor *factor64 = bin(&s, MT_OP_div, limit,
                              bin(&s, MT_OP_add, norm64, num(&s, RENORM_EPS)));
    mt_tensor *factor = failed(&s, factor64, factor64)
                            ? NULL
                            : own(&s, mt_op_to(factor64, self->dtype, dev, false, &r), &r);
    mt_tensor *kept = sel(&s, bin(&s, MT_OP_gt, norm64, limit), bin(&s, MT_OP_mul, rows, factor),
                          rows);
    if (!failed(&s, kept, kept)) {
        s.st = mt_op_index_copy_(self, 0, idx, kept, NULL);
    }
    give(&s, self, &a->out[0]);
    return finish(&s);
}
