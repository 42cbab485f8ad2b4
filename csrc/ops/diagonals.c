/* Diagonals, for every device: diagonal (a view), diag_embed, diag, diagflat, trace and the
 * triangle indices.
 *
 * As in PyTorch, diagonal computes its geometry and calls as_strided; diag_embed writes its
 * input into the diagonal view of zeros; trace sums the diagonal. Nothing here reads or writes
 * elements itself. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"

/* The two dims of a diagonal, wrapped against ndim; PyTorch names them as they were given. */
static mt_status
diagonal_dims(int64_t dim1, int64_t dim2, int ndim, int *d1, int *d2)
{
    mt_status st = mt_wrap_dim(dim1, ndim, d1);
    if (st || (st = mt_wrap_dim(dim2, ndim, d2))) {
        return st;
    }
    if (*d1 == *d2) {
        return mt_fail(MT_ERUNTIME, "diagonal dimensions cannot be identical %" PRId64 ", %" PRId64,
                       dim1, dim2);
    }
    return MT_OK;
}

// self (..., n1, ..., n2, ...); out (..., k): the elements [i, i + offset] of dims dim1, dim2
// (offset < 0: [i - offset, i]), a view whose last dim steps along both
mt_status
mt_composite_diagonal(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t offset = a->i[0];
    int d1, d2;
    mt_status st = diagonal_dims(a->i[1], a->i[2], self->ndim, &d1, &d2);
    if (st) {
        return st;
    }
    int64_t n1 = self->sizes[d1], n2 = self->sizes[d2], len, start = self->offset;
    /* (compared before subtracting: offset may be any int64) */
    if (offset >= 0) {
        len = offset >= n2 ? 0 : n2 - offset < n1 ? n2 - offset : n1;
    } else {
        len = offset <= -n1 ? 0 : n1 + offset < n2 ? n1 + offset : n2;
    }
    if (len > 0) { /* an empty diagonal keeps self's offset, inside its storage */
        start += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d != d1 && d != d2) {
            sizes[n] = self->sizes[d];
            strides[n++] = self->strides[d];
        }
    }
    sizes[n] = len;
    strides[n++] = self->strides[d1] + self->strides[d2];
    return mt_op_as_strided(self, n, sizes, n, strides, start, &a->out[0]);
}

// self (..., n); out (..., n + |offset|, ..., n + |offset|, ...) with the new dims at dim1, dim2:
// zeros, and self on its diagonal `offset`
mt_status
mt_composite_diag_embed(mt_args *a)
{
    mt_tensor *self = a->t[0], *res = NULL, *diag = NULL;
    int64_t offset = a->i[0];
    int d1, d2;
    mt_status st = diagonal_dims(a->i[1], a->i[2], self->ndim + 1, &d1, &d2);
    if (st) {
        return st;
    }
    if (self->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported", MT_MAX_DIMS);
    }
    int lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1;
    int64_t len;
    if (offset == INT64_MIN ||
        __builtin_add_overflow(offset < 0 ? -offset : offset, self->sizes[self->ndim - 1], &len)) {
        return mt_fail(MT_ERUNTIME, "diag_embed: the result's size overflows int64");
    }
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0, k = 0; d <= self->ndim; d++) {
        sizes[d] = d == lo || d == hi ? len : self->sizes[k++];
    }
    if ((st = mt_op_zeros(self->ndim + 1, sizes, self->dtype, mt_tensor_device(self), false,
                          &res)) == MT_OK &&
        (st = mt_op_diagonal(res, offset, d1, d2, &diag)) == MT_OK &&
        (st = mt_op_copy_(diag, self, NULL)) == MT_OK) {
        a->out[0] = mt_tensor_retain(res);
    }
    mt_tensor_clear(&diag);
    mt_tensor_clear(&res);
    return st;
}

// self (n) -> out (n + |k|, n + |k|) with self on diagonal k; self (m, n) -> out: its diagonal k
mt_status
mt_composite_diag(mt_args *a)
{
    mt_tensor *self = a->t[0], *view = NULL;
    if (self->ndim != 1 && self->ndim != 2) {
        return mt_fail(MT_ERUNTIME, "diag(): Supports 1D or 2D tensors. Got %dD", self->ndim);
    }
    if (self->ndim == 1) {
        return mt_op_diag_embed(self, a->i[0], 0, 1, &a->out[0]);
    }
    mt_status st = mt_op_diagonal(self, a->i[0], 0, 1, &view);
    if (st == MT_OK) {
        st = mt_op_clone(view, &a->out[0]);
    }
    mt_tensor_clear(&view);
    return st;
}

// self (any shape) -> out (numel + |offset|, numel + |offset|): its elements on a diagonal
mt_status
mt_composite_diagflat(mt_args *a)
{
    mt_tensor *flat = NULL;
    int64_t numel = mt_tensor_numel(a->t[0]);
    mt_status st = mt_op_reshape(a->t[0], 1, &numel, &flat);
    if (st == MT_OK) {
        st = mt_op_diag(flat, a->i[0], &a->out[0]);
    }
    mt_tensor_clear(&flat);
    return st;
}

// self (m, n) -> out (): the sum of its diagonal (int64 for an integer self)
mt_status
mt_composite_trace(mt_args *a)
{
    mt_tensor *self = a->t[0], *diag = NULL;
    if (self->ndim != 2) {
        return mt_fail(MT_ERUNTIME, "trace: expected a matrix, but got tensor with dim %d",
                       self->ndim);
    }
    if (self->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"trace\" not implemented for 'Bool'");
    }
    mt_status st = mt_op_diagonal(self, 0, 0, 1, &diag);
    if (st == MT_OK) {
        st = mt_op_sum(diag, 0, NULL, false, -1, &a->out[0]);
    }
    mt_tensor_clear(&diag);
    return st;
}

/* out (2, k): the rows and columns of the elements of a (row, col) matrix on or above diagonal
 * offset (upper) or on or below it, in row-major order: nonzero() of the mask j - i >= offset
 * (<=), over the rows (upper) or columns (lower) that hold any, so no larger than needed. */
static mt_status
triangle_indices(mt_args *a, bool upper, const char *name)
{
    int64_t row = a->i[0], col = a->i[1], offset = a->i[2];
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_INT64;
    mt_device dev = a->has_device ? a->device : MT_DEVICE_CPU;
    if (row < 0) {
        return mt_fail(MT_ERUNTIME, "row must be non-negative, got%" PRId64, row);
    }
    if (col < 0) {
        return mt_fail(MT_ERUNTIME, "col must be non-negative, got%" PRId64, col);
    }
    if (dt != MT_INT64 && dt != MT_INT32) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", name,
                       mt_dtype_scalar_name(dt));
    }
    /* upper: no element in rows i > col - 1 - offset; lower: none in columns j > row - 1 + offset */
    int64_t reach = upper ? col - (offset > col    ? col
                                   : offset < -row ? -row
                                                   : offset)
                          : row + (offset > col    ? col
                                   : offset < -row ? -row
                                                   : offset);
    reach = reach < 0 ? 0 : reach;
    if (upper && reach < row) {
        row = reach;
    } else if (!upper && reach < col) {
        col = reach;
    }
    mt_tensor *r = NULL, *c = NULL, *rc = NULL, *diff = NULL, *mask = NULL, *nz = NULL;
    mt_tensor *nzt = NULL, *dense = NULL;
    int64_t rshape[2] = {row, 1};
    mt_status st;
    if ((st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(row), mt_scalar_int(1), MT_INT64, dev,
                           false, &r)) ||
        (st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(col), mt_scalar_int(1), MT_INT64, dev,
                           false, &c)) ||
        (st = mt_op_view(r, 2, rshape, &rc)) || (st = mt_op_sub(c, rc, mt_scalar_int(1), &diff))) {
        goto out_release;
    }
    mt_tensor *k = NULL;
    if ((st = mt_tensor_scalar(mt_scalar_int(offset), MT_INT64, &k)) == MT_OK) {
        st = upper ? mt_op_ge(diff, k, &mask) : mt_op_le(diff, k, &mask);
        mt_tensor_release(k);
    }
    if (st || (st = mt_op_nonzero(mask, &nz)) || (st = mt_op_t(nz, &nzt)) ||
        (st = mt_copy_contiguous(nzt, &dense))) {
        goto out_release;
    }
    st = dt == MT_INT64 ? (a->out[0] = mt_tensor_retain(dense), MT_OK)
                        : mt_op__to_copy(dense, dt, dev, &a->out[0]);
out_release:
    mt_tensor_clear(&r);
    mt_tensor_clear(&c);
    mt_tensor_clear(&rc);
    mt_tensor_clear(&diff);
    mt_tensor_clear(&mask);
    mt_tensor_clear(&nz);
    mt_tensor_clear(&nzt);
    mt_tensor_clear(&dense);
    return st;
}

mt_status
mt_composite_triu_indices(mt_args *a)
{
    return triangle_indices(a, true, "triu_indices");
}

mt_status
mt_composite_tril_indices(mt_args *a)
{
    return triangle_indices(a, false, "tril_indices");
}
