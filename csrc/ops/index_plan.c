/* The device-independent half of the index kernels (ops/index_plan.h): PyTorch's argument checks
 * and the plan of advanced indexing. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/index_plan.h"

int
mt_index_geometry1(const mt_tensor *t, int64_t *sizes, int64_t *strides)
{
    if (t->ndim == 0) {
        sizes[0] = 1;
        strides[0] = 0;
        return 1;
    }
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    return t->ndim;
}

static mt_status
check_index_dtype(const mt_tensor *index, const char *op)
{
    if (index->dtype != MT_INT64 && index->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME, "%s(): Expected dtype int32/int64 for index", op);
    }
    return MT_OK;
}

mt_status
mt_fail_index_bounds(int64_t index, int dim, int64_t size, mt_status code)
{
    return mt_fail(code, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64,
                   index, dim, size);
}

mt_status
mt_check_gather(const mt_tensor *self, int64_t dim, const mt_tensor *index, int *wdim)
{
    char b1[256], b2[256];
    mt_status st = mt_wrap_dim(dim, self->ndim, wdim);
    if (st || (st = check_index_dtype(index, "gather"))) {
        return st;
    }
    int64_t ss[MT_MAX_DIMS], sst[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, sst);
    if (mt_index_geometry1(index, is, ist) != n) {
        return mt_fail(MT_ERUNTIME,
                       "Index tensor must have the same number of dimensions as input tensor");
    }
    for (int d = 0; d < n; d++) {
        if (d != *wdim && is[d] > ss[d]) {
            return mt_fail(MT_ERUNTIME,
                           "Size does not match at dimension %d expected index %s to be no larger "
                           "than self %s apart from dimension %d",
                           d, mt_format_sizes(b1, sizeof(b1), index->ndim, index->sizes),
                           mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes), *wdim);
        }
    }
    return MT_OK;
}

/* PyTorch's scatter_shape_check: index no larger than src, nor than self apart from dim. */
static mt_status
check_scatter_shapes(const mt_tensor *self, const mt_tensor *index, const mt_tensor *src, int dim)
{
    char b1[256], b2[256], b3[256];
    int64_t ss[MT_MAX_DIMS], st_[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int64_t cs[MT_MAX_DIMS], cst[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, st_);
    if (mt_index_geometry1(index, is, ist) != n) {
        return mt_fail(MT_ERUNTIME,
                       "Index tensor must have the same number of dimensions as self tensor");
    }
    if (src && mt_index_geometry1(src, cs, cst) != n) {
        return mt_fail(MT_ERUNTIME,
                       "Index tensor must have the same number of dimensions as src tensor");
    }
    for (int d = 0; d < n; d++) {
        if ((d != dim && is[d] > ss[d]) || (src && is[d] > cs[d])) {
            mt_format_sizes(b1, sizeof(b1), index->ndim, index->sizes);
            mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes);
            if (src == NULL) {
                return mt_fail(MT_ERUNTIME,
                               "Expected index %s to be no larger than self %s apart from "
                               "dimension %d",
                               b1, b2, dim);
            }
            return mt_fail(MT_ERUNTIME,
                           "Expected index %s to be no larger than self %s apart from dimension "
                           "%d and to be no larger size than src %s",
                           b1, b2, dim, mt_format_sizes(b3, sizeof(b3), src->ndim, src->sizes));
        }
    }
    return MT_OK;
}

mt_status
mt_check_scatter(const mt_tensor *self, int64_t dim, const mt_tensor *index, const mt_tensor *src,
                 int *wdim)
{
    bool value = src->is_wrapped_number;
    mt_status st = mt_wrap_dim(dim, self->ndim, wdim);
    if (st || (st = check_index_dtype(index, "scatter"))) {
        return st;
    }
    if (!value && src->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME, "scatter(): Expected self.dtype to be equal to src.dtype");
    }
    if (value && (st = mt_check_scalar_fits(mt_load_scalar(mt_tensor_data(src), src->dtype),
                                            self->dtype))) {
        return st;
    }
    return check_scatter_shapes(self, index, value ? NULL : src, *wdim);
}

mt_status
mt_check_index_select(const mt_tensor *self, int64_t dim, const mt_tensor *index, int *wdim,
                      int64_t *n)
{
    mt_status st = mt_wrap_dim(dim, self->ndim, wdim);
    if (st) {
        return st;
    }
    if (index->ndim > 1) {
        return mt_fail(MT_EINDEX, "index_select(): Index is supposed to be a vector");
    }
    if (index->dtype != MT_INT64 && index->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    }
    *n = mt_tensor_numel(index);
    if (self->ndim == 0 && *n != 1) {
        return mt_fail(MT_ERUNTIME,
                       "index_select(): Index to scalar can have only 1 value, got %" PRId64
                       " value(s)",
                       *n);
    }
    return MT_OK;
}

/* ---- advanced indexing ---- */

void
mt_index_plan_release(mt_index_plan *p)
{
    mt_tensor_clear(&p->src);
    mt_tensor_clear(&p->pos);
}

/* idx[d] for each dim d of self (owned; NULL where not indexed), masks replaced by their
 * nonzero() columns. */
static mt_status
expand_indices(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **idx)
{
    char b1[256], b2[256];
    mt_status st = MT_OK;
    int d = 0;
    for (int k = 0; k < n && st == MT_OK; k++) {
        mt_tensor *t = indices[k];
        int need = t && t->dtype == MT_BOOL ? t->ndim : 1;
        if (d + need > self->ndim) {
            return mt_fail(MT_EINDEX, "too many indices for tensor of dimension %d (got %d)",
                           self->ndim, d + need);
        }
        if (t == NULL) {
            d++;
        } else if (t->dtype == MT_INT64 || t->dtype == MT_INT32) {
            idx[d++] = mt_tensor_retain(t);
        } else if (t->dtype != MT_BOOL) {
            return mt_fail(MT_EINDEX,
                           "tensors used as indices must be long, int, byte or bool tensors");
        } else {
            for (int j = 0; j < t->ndim; j++) {
                if (t->sizes[j] != self->sizes[d + j]) {
                    return mt_fail(MT_EINDEX,
                                   "The shape of the mask %s at index %d does not match the shape "
                                   "of the indexed tensor %s at index %d",
                                   mt_format_sizes(b1, sizeof(b1), t->ndim, t->sizes), j,
                                   mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes), d + j);
                }
            }
            mt_args na;
            mt_args_init(&na);
            na.t[0] = t;
            if ((st = mt_dispatch(MT_OP_nonzero, &na))) {
                return st;
            }
            mt_tensor *nz = na.out[0]; /* (count, t->ndim) */
            for (int j = 0; j < t->ndim && st == MT_OK; j++, d++) {
                int64_t stride = t->ndim;
                st = mt_tensor_view(nz, 1, nz->sizes, &stride, j, &idx[d]);
            }
            mt_tensor_release(nz);
        }
    }
    return st;
}

/* The broadcast shape of the index tensors, with PyTorch's IndexError if there is none. */
static mt_status
broadcast_indices(int ndim, mt_tensor *const *idx, int *nb, int64_t *b)
{
    *nb = 0;
    for (int d = 0; d < ndim; d++) {
        if (idx[d] && mt_broadcast_shapes(*nb, b, idx[d]->ndim, idx[d]->sizes, nb, b)) {
            char msg[1024] = "", buf[256];
            size_t len = 0;
            for (int e = 0; e < ndim; e++) {
                if (idx[e]) {
                    len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s", len ? ", " : "",
                                            mt_format_sizes(buf, sizeof(buf), idx[e]->ndim,
                                                            idx[e]->sizes));
                    len = len < sizeof(msg) ? len : sizeof(msg) - 1;
                }
            }
            return mt_fail(MT_EINDEX,
                           "shape mismatch: indexing tensors could not be broadcast together "
                           "with shapes %s",
                           msg);
        }
    }
    return MT_OK;
}

mt_status
mt_index_plan_make(mt_tensor *self, int n, mt_tensor *const *indices,
                   mt_index_offsets_fn offsets, mt_index_plan *p)
{
    mt_tensor *idx[MT_MAX_DIMS] = {NULL}, *pos = NULL;
    int64_t b[MT_MAX_DIMS], src_strides[MT_MAX_DIMS], pos_strides[MT_MAX_DIMS];
    int nb = 0, first = -1, last = -1;
    *p = (mt_index_plan){0};
    mt_status st = expand_indices(self, n, indices, idx);
    if (st == MT_OK) {
        st = broadcast_indices(self->ndim, idx, &nb, b);
    }
    if (st == MT_OK) {
        st = offsets(self, idx, nb, b, &pos);
    }
    if (st) {
        goto out_release;
    }
    bool adjacent = true;
    for (int d = 0; d < self->ndim; d++) {
        if (idx[d]) {
            adjacent &= last < 0 || last == d - 1;
            first = first < 0 ? d : first;
            last = d;
        }
    }
    /* the result: unindexed dims before `at`, then B, then the other unindexed dims */
    int at = adjacent && first >= 0 ? first : 0, m = 0;
    int64_t bstrides[MT_MAX_DIMS];
    mt_contiguous_strides(nb, b, bstrides);
    for (int d = 0; d <= self->ndim; d++) {
        if (d == at) {
            if (m + nb > MT_MAX_DIMS) {
                st = mt_fail(MT_ERUNTIME, "minitorch supports at most %d dimensions", MT_MAX_DIMS);
                goto out_release;
            }
            for (int j = 0; j < nb; j++, m++) {
                p->shape[m] = b[j];
                src_strides[m] = 0;
                pos_strides[m] = bstrides[j];
            }
        }
        if (d < self->ndim && idx[d] == NULL) {
            p->shape[m] = self->sizes[d];
            src_strides[m] = self->strides[d];
            pos_strides[m++] = 0;
        }
    }
    p->ndim = m;
    st = mt_tensor_view(self, m, p->shape, src_strides, self->offset, &p->src);
    if (st == MT_OK) {
        st = mt_tensor_view(pos, m, p->shape, pos_strides, 0, &p->pos);
    }
out_release:
    if (st) {
        mt_index_plan_release(p);
    }
    for (int d = 0; d < MT_MAX_DIMS; d++) {
        mt_tensor_clear(&idx[d]);
    }
    mt_tensor_clear(&pos);
    return st;
}

mt_status
mt_check_index_put_dtype(const mt_tensor *self, const mt_tensor *values)
{
    if (values->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "Index put requires the source and destination dtypes match, got %s for "
                       "the destination and %s for the source.",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(values->dtype));
    }
    return MT_OK;
}

mt_status
mt_check_index_put(const mt_tensor *values, const mt_index_plan *p)
{
    char b1[256], b2[256];
    bool fits = values->ndim <= p->ndim;
    for (int d = 0; fits && d < values->ndim; d++) {
        int64_t s = values->sizes[d];
        fits = s == 1 || s == p->shape[p->ndim - values->ndim + d];
    }
    if (!fits) {
        return mt_fail(MT_ERUNTIME,
                       "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                       "result of shape %s",
                       mt_format_sizes(b1, sizeof(b1), values->ndim, values->sizes),
                       mt_format_sizes(b2, sizeof(b2), p->ndim, p->shape));
    }
    return MT_OK;
}
