/* Typed entry points to the dispatcher, for C callers (composites, the binding layer).
 *
 * Each boxes its arguments and calls mt_dispatch, so every call shows up as Op::<name> in the
 * journey. Results are new references in *out; in-place ops return nothing. */
#ifndef MT_OPS_H
#define MT_OPS_H

#include "dispatch/dispatch.h"

mt_status mt_op_add(mt_tensor *self, mt_tensor *other, mt_tensor **out);
mt_status mt_op_add_(mt_tensor *self, mt_tensor *other, mt_scalar alpha);
mt_status mt_op_clamp_min(mt_tensor *self, mt_scalar min, mt_tensor **out);
mt_status mt_op_clamp_min_(mt_tensor *self, mt_scalar min);
mt_status mt_op_mul(mt_tensor *self, mt_tensor *other, mt_tensor **out);
mt_status mt_op_pow(mt_tensor *self, mt_tensor *exponent, mt_tensor **out);
mt_status mt_op_pow_(mt_tensor *self, mt_tensor *exponent);

mt_status mt_op_addmm(mt_tensor *self, mt_tensor *mat1, mt_tensor *mat2, mt_scalar beta,
                      mt_scalar alpha, mt_tensor **out);
mt_status mt_op_mm(mt_tensor *self, mt_tensor *mat2, mt_tensor **out);
mt_status mt_op_bmm(mt_tensor *self, mt_tensor *mat2, mt_tensor **out);
mt_status mt_op_mv(mt_tensor *self, mt_tensor *vec, mt_tensor **out);
mt_status mt_op_dot(mt_tensor *self, mt_tensor *other, mt_tensor **out);
mt_status mt_op_matmul(mt_tensor *self, mt_tensor *other, mt_tensor **out);

mt_status mt_op_as_strided(mt_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset, mt_tensor **out);
mt_status mt_op_view(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_op_reshape(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_op_t(mt_tensor *self, mt_tensor **out);
mt_status mt_op_transpose(mt_tensor *self, int64_t dim0, int64_t dim1, mt_tensor **out);
mt_status mt_op_expand(mt_tensor *self, int ndim, const int64_t *sizes, mt_tensor **out);
mt_status mt_op_unsqueeze(mt_tensor *self, int64_t dim, mt_tensor **out);
mt_status mt_op_squeeze_dim(mt_tensor *self, int64_t dim, mt_tensor **out);
mt_status mt_op_select(mt_tensor *self, int64_t dim, int64_t index, mt_tensor **out);
/* start/end may be INT64_MIN/INT64_MAX for "None" */
mt_status mt_op_slice(mt_tensor *self, int64_t dim, int64_t start, int64_t end, int64_t step,
                      mt_tensor **out);

mt_status mt_op_empty(int ndim, const int64_t *sizes, mt_dtype dtype, mt_device dev,
                      mt_tensor **out);
mt_status mt_op_fill_(mt_tensor *self, mt_scalar value);
mt_status mt_op_copy_(mt_tensor *self, mt_tensor *src);
/* clone keeps self's layout (a transposed matrix stays transposed), as PyTorch's
 * preserve_format; mt_copy_contiguous is clone(memory_format=contiguous_format): empty + copy_,
 * for callers that need a row-major result (contiguous(), reshape's copy). */
mt_status mt_op_clone(mt_tensor *self, mt_tensor **out);
/* out = condition ? x : y, elementwise and broadcast */
mt_status mt_op_where(mt_tensor *condition, mt_tensor *x, mt_tensor *y, mt_tensor **out);
/* a new view of all of self (AliasBackward0 under autograd) */
mt_status mt_op_alias(mt_tensor *self, mt_tensor **out);
mt_status mt_copy_contiguous(mt_tensor *self, mt_tensor **out);
/* self[indices] and self[indices] = values with index tensors (NULL entries skip a dim) */
mt_status mt_op_index(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **out);
mt_status mt_op_index_put_(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor *values,
                           bool accumulate);
mt_status mt_op_to_copy(mt_tensor *self, mt_dtype dtype, mt_device dev, mt_tensor **out);

/* shape ops (csrc/ops/shape.c, csrc/cpu/shape.c) */
mt_status mt_op_cat(int n, mt_tensor **tensors, int64_t dim, mt_tensor **out);
mt_status mt_op_narrow(mt_tensor *self, int64_t dim, int64_t start, int64_t length,
                       mt_tensor **out);
mt_status mt_op_permute(mt_tensor *self, int ndim, const int64_t *dims, mt_tensor **out);

#endif
