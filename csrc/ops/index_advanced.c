/* Advanced indexing's plan (ops/index_plan.h): self[indices] and index_put_ as PyTorch's index
 * sees them, each index checked (mt_index_check_indices, which the front ends run first), bool
 * masks replaced by their nonzero() columns, the indices broadcast together and turned into the
 * byte offsets a device's kernel gathers or scatters through. The front ends and the kernels of
 * the index ops are index_plan.c's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/index_plan.h"
#include "ops/ops.h"

void
mt_index_plan_release(mt_index_plan *p)
{
    mt_tensor_clear(&p->src);
    mt_tensor_clear(&p->pos);
}

/* PyTorch takes CPU indices for a tensor on any device (and copies them there); an index on
 * another accelerator is refused. */
static mt_status
check_index_device(const mt_tensor *self, const mt_tensor *t)
{
    mt_device dev = mt_tensor_device(self), at = mt_tensor_device(t);
    if (mt_device_eq(at, dev) || at.type == MT_CPU) {
        return MT_OK;
    }
    return dev.type == MT_CPU ? mt_fail(MT_EINDEX, "indices should be either on cpu or on the "
                                                   "same device as the indexed tensor (cpu)")
                              : mt_fail(MT_EINDEX,
                                        "indices should be either on cpu or on the "
                                        "same device as the indexed tensor (cuda:%d)",
                                        dev.index);
}

/* self[indices]'s checks, before any index is read: indices[k] applies to the next dim of self
 * (a bool mask of m dims to the next m), an integer or bool tensor on self's device or the CPU. */
mt_status
mt_index_check_indices(const mt_tensor *self, int n, mt_tensor *const *indices)
{
    char b1[256], b2[256];
    mt_status st = MT_OK;
    int d = 0;
    for (int k = 0; k < n && st == MT_OK; k++) {
        const mt_tensor *t = indices[k];
        int need = t && t->dtype == MT_BOOL ? t->ndim : 1;
        if (d + need > self->ndim) {
            return mt_fail(MT_EINDEX, "too many indices for tensor of dimension %d (got %d)",
                           self->ndim, d + need);
        }
        if (t == NULL) {
            d++;
        } else if (t->dtype == MT_INT64 || t->dtype == MT_INT32) {
            st = check_index_device(self, t);
            d++;
        } else if (t->dtype != MT_BOOL) {
            return mt_fail(MT_EINDEX,
                           "tensors used as indices must be long, int, byte or bool tensors");
        } else {
            for (int j = 0; j < t->ndim; j++, d++) {
                if (t->sizes[j] != self->sizes[d]) {
                    return mt_fail(MT_EINDEX,
                                   "The shape of the mask %s at index %d does not match the shape "
                                   "of the indexed tensor %s at index %d",
                                   mt_format_sizes(b1, sizeof(b1), t->ndim, t->sizes), j,
                                   mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes), d);
                }
            }
            st = check_index_device(self, t);
        }
    }
    return st;
}

/* An index on self's device (owned), copied there from the CPU where it is not. */
static mt_status
index_on_device(const mt_tensor *self, mt_tensor *t, mt_tensor **out)
{
    mt_device dev = mt_tensor_device(self);
    if (mt_device_eq(mt_tensor_device(t), dev)) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    return mt_op__to_copy(t, t->dtype, dev, out);
}

/* idx[d] for each dim d of self (owned, on self's device; NULL where not indexed), masks
 * replaced by their nonzero() columns; the indices passed check_indices. */
static mt_status
expand_indices(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **idx)
{
    mt_status st = MT_OK;
    int d = 0;
    for (int k = 0; k < n && st == MT_OK; k++) {
        mt_tensor *t = indices[k];
        if (t == NULL) {
            d++;
        } else if (t->dtype != MT_BOOL) {
            st = index_on_device(self, t, &idx[d++]);
        } else {
            mt_tensor *mask = NULL;
            if ((st = index_on_device(self, t, &mask))) {
                return st;
            }
            mt_tensor *nz = NULL; /* (count, t->ndim) */
            st = mt_op_nonzero(mask, &nz);
            mt_tensor_release(mask);
            if (st) {
                return st;
            }
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

/* PyTorch's check before the kernels: no index is valid in a dim of size 0, so a non-empty
 * index into one fails here, on every device (a CUDA kernel's check comes only at the next
 * synchronisation, after the result's view of no memory was made). */
static mt_status
check_empty_dims(const mt_tensor *self, mt_tensor *const *idx, int nb, const int64_t *b)
{
    for (int d = 0; d < self->ndim && mt_numel(nb, b) > 0; d++) {
        if (idx[d] && self->sizes[d] == 0) {
            return mt_fail(MT_EINDEX, "index is out of bounds for dimension with size 0");
        }
    }
    return MT_OK;
}

/* index_put_'s values broadcast to self[indices]'s shape, which only the plan knows (a mask's
 * count of trues is data). */
static mt_status
check_index_put(const mt_tensor *values, const mt_index_plan *p)
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

mt_status
mt_index_plan_make(mt_tensor *self, int n, mt_tensor *const *indices, mt_index_offsets_fn offsets,
                   const mt_tensor *values, mt_index_plan *p)
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
        st = check_empty_dims(self, idx, nb, b);
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
                st = mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported",
                             MT_MAX_DIMS);
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
    if ((values && (st = check_index_put(values, p))) || (st = offsets(self, idx, nb, b, &pos))) {
        goto out_release;
    }
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
