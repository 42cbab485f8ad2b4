/* View ops: new geometry over the same storage, for every device.
 *
 * As in PyTorch, each computes its sizes and strides and then calls as_strided through the
 * dispatcher (so the journey shows transpose -> as_strided), except view, which makes its
 * view directly, and reshape, which is view or a copy. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/reduce_dims.h"

/* *out = a view of self with the given geometry, which knows self's base (autograd's view
 * tracking, as every view op's result). */
static mt_status
view_of(mt_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
        mt_tensor **out)
{
    mt_status st = mt_tensor_view(self, ndim, sizes, strides, offset, out);
    if (st == MT_OK) {
        mt_autograd_as_view(self, *out);
    }
    return st;
}

static mt_status
restride(mt_tensor *self, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
         mt_tensor **out)
{
    return mt_op_as_strided(self, ndim, sizes, ndim, strides, offset, out);
}

mt_status
mt_composite_as_strided(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (a->l[0].n != a->l[1].n) {
        return mt_fail(MT_ERUNTIME, "mismatch in length of strides and shape");
    }
    int64_t offset = (a->i_none & 1u) ? self->offset : a->i[0];
    return view_of(self, a->l[0].n, a->l[0].v, a->l[1].v, offset, &a->out[0]);
}

mt_status
mt_composite_alias(mt_args *a)
{
    mt_tensor *self = a->t[0];
    return view_of(self, self->ndim, self->sizes, self->strides, self->offset, &a->out[0]);
}

/* detach() shares self's memory and version counter but is no view (PyTorch's _base is None):
 * an in-place change through it is not one autograd follows. */
mt_status
mt_composite_detach(mt_args *a)
{
    mt_tensor *self = a->t[0];
    return mt_tensor_view(self, self->ndim, self->sizes, self->strides, self->offset, &a->out[0]);
}

/* Replaces a -1 in sizes by what makes numel elements; PyTorch's infer_size. */
static mt_status
infer_size(int ndim, int64_t *sizes, int64_t numel)
{
    char buf[256];
    int infer = -1;
    int64_t known = 1;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == -1) {
            if (infer >= 0) {
                return mt_fail(MT_ERUNTIME, "only one dimension can be inferred");
            }
            infer = d;
        } else if (sizes[d] < 0) {
            return mt_fail(MT_ERUNTIME, "invalid shape dimension %" PRId64, sizes[d]);
        } else {
            known *= sizes[d];
        }
    }
    if (infer >= 0 && known != 0 && numel % known == 0) {
        sizes[infer] = numel / known;
        return MT_OK;
    }
    if (infer < 0 && known == numel) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME, "shape '%s' is invalid for input of size %" PRId64,
                   mt_format_sizes(buf, sizeof(buf), ndim, sizes), numel);
}

/* Strides that let the new sizes view the old geometry, if any exist (PyTorch's computeStride):
 * old dims are grouped into runs that are contiguous with each other, and each run must be
 * covered exactly by a run of new dims. */
static bool
compute_stride(const mt_tensor *t, int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t numel = mt_tensor_numel(t);
    /* An empty tensor or a single element (a 0-dim tensor) fits any shape of its numel. */
    if (numel == 0 || t->ndim == 0) {
        mt_contiguous_strides(ndim, sizes, strides);
        return true;
    }
    int view_d = ndim - 1;
    int64_t chunk_base_stride = t->ndim ? t->strides[t->ndim - 1] : 1;
    int64_t tensor_numel = 1, view_numel = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        tensor_numel *= t->sizes[d];
        /* End of a contiguous run of old dims: fill new dims until they cover it. */
        if (d == 0 ||
            (t->sizes[d - 1] != 1 && t->strides[d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
                strides[view_d] = view_numel * chunk_base_stride;
                view_numel *= sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) {
                return false;
            }
            if (d > 0) {
                chunk_base_stride = t->strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* The size list of view/reshape with its -1 filled in, and whether self can take it as a view
 * (*viewable; strides then its strides). */
static mt_status
requested_geometry(const mt_args *a, int64_t *sizes, int64_t *strides, bool *viewable)
{
    memcpy(sizes, a->l[0].v, sizeof(int64_t) * (size_t)a->l[0].n);
    mt_status st = infer_size(a->l[0].n, sizes, mt_tensor_numel(a->t[0]));
    *viewable = st == MT_OK && compute_stride(a->t[0], a->l[0].n, sizes, strides);
    return st;
}

mt_status
mt_composite_view(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    bool viewable;
    mt_status st = requested_geometry(a, sizes, strides, &viewable);
    if (st) {
        return st;
    }
    if (!viewable) {
        return mt_fail(MT_ERUNTIME,
                       "view size is not compatible with input tensor's size and stride (at least "
                       "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                       "instead.");
    }
    return view_of(self, a->l[0].n, sizes, strides, self->offset, &a->out[0]);
}

mt_status
mt_composite_reshape(mt_args *a)
{
    mt_tensor *self = a->t[0], *copy;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    bool viewable;
    mt_status st = requested_geometry(a, sizes, strides, &viewable);
    if (st || viewable) {
        return st ? st : mt_op_view(self, a->l[0].n, sizes, &a->out[0]);
    }
    if ((st = mt_copy_contiguous(self, &copy))) {
        return st;
    }
    st = mt_op_view(copy, a->l[0].n, sizes, &a->out[0]);
    mt_tensor_release(copy);
    return st;
}

mt_status
mt_composite_transpose(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int d0, d1;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d0);
    if (st || (st = mt_wrap_dim(a->i[1], self->ndim, &d1))) {
        return st;
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim > 0) {
        sizes[d0] = self->sizes[d1];
        sizes[d1] = self->sizes[d0];
        strides[d0] = self->strides[d1];
        strides[d1] = self->strides[d0];
    }
    return restride(self, self->ndim, sizes, strides, self->offset, &a->out[0]);
}

mt_status
mt_composite_t(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->ndim > 2) {
        return mt_fail(MT_ERUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                       self->ndim);
    }
    return mt_op_transpose(self, 0, self->ndim < 2 ? 0 : 1, &a->out[0]);
}

mt_status
mt_composite_permute(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *dims = &a->l[0];
    if (dims->n != self->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "permute(): number of dimensions in the tensor input does not match the "
                       "length of the desired ordering of dimensions i.e. input.dim() = %d is not "
                       "equal to len(dims) = %d",
                       self->ndim, dims->n);
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int order[MT_MAX_DIMS];
    mt_status st = mt_wrap_dims(dims, self->ndim, "permute(): duplicate dims are not allowed.",
                                order, NULL);
    if (st) {
        return st;
    }
    for (int k = 0; k < dims->n; k++) {
        sizes[k] = self->sizes[order[k]];
        strides[k] = self->strides[order[k]];
    }
    return restride(self, self->ndim, sizes, strides, self->offset, &a->out[0]);
}

mt_status
mt_composite_expand(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *want = &a->l[0];
    char b1[256], b2[256];
    if (want->n < self->ndim) {
        /* PyTorch names the tensor's legacy type: torch.IntTensor, torch.cuda.FloatTensor */
        return mt_fail(MT_ERUNTIME,
                       "expand(torch.%s%sTensor{%s}, size=%s): the number of sizes provided (%d) "
                       "must be greater or equal to the number of dimensions in the tensor (%d)",
                       mt_tensor_device(self).type == MT_CUDA ? "cuda." : "",
                       mt_dtype_scalar_name(self->dtype),
                       mt_format_sizes(b1, sizeof(b1), self->ndim, self->sizes),
                       mt_format_sizes(b2, sizeof(b2), want->n, want->v), want->n, self->ndim);
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int lead = want->n - self->ndim;
    for (int d = want->n - 1; d >= 0; d--) {
        int od = d - lead;
        int64_t w = want->v[d];
        if (od < 0) {
            if (w < 0) {
                return mt_fail(MT_ERUNTIME,
                               "The expanded size of the tensor (%" PRId64 ") isn't allowed in a "
                               "leading, non-existing dimension %d",
                               w, d);
            }
            sizes[d] = w;
            strides[d] = 0;
            continue;
        }
        int64_t have = self->sizes[od];
        if (w == -1) {
            w = have;
        }
        if (have == w) {
            sizes[d] = have;
            strides[d] = self->strides[od];
        } else if (have == 1 && w >= 0) {
            sizes[d] = w;
            strides[d] = 0;
        } else {
            return mt_fail(MT_ERUNTIME,
                           "The expanded size of the tensor (%" PRId64 ") must match the existing "
                           "size (%" PRId64 ") at non-singleton dimension %d.  Target sizes: %s.  "
                           "Tensor sizes: %s",
                           w, have, d, mt_format_sizes(b1, sizeof(b1), want->n, want->v),
                           mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes));
        }
    }
    return restride(self, want->n, sizes, strides, self->offset, &a->out[0]);
}

mt_status
mt_composite_squeeze(mt_args *a)
{
    mt_tensor *self = a->t[0];
    bool drop[MT_MAX_DIMS] = {false};
    if (a->l[0].none) {
        for (int d = 0; d < self->ndim; d++) {
            drop[d] = true;
        }
    } else {
        mt_status st = mt_dim_set(self, &a->l[0], drop); /* squeeze((0, 0)) is an error */
        if (st) {
            return st;
        }
    }
    for (int d = 0; d < self->ndim; d++) {
        drop[d] = drop[d] && self->sizes[d] == 1;
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (!drop[d]) {
            sizes[n] = self->sizes[d];
            strides[n++] = self->strides[d];
        }
    }
    return restride(self, n, sizes, strides, self->offset, &a->out[0]);
}

mt_status
mt_composite_unsqueeze(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim + 1, &d);
    if (st) {
        return st;
    }
    if (self->ndim >= MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported", MT_MAX_DIMS);
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int k = 0, j = 0; k <= self->ndim; k++) {
        if (k == d) {
            sizes[k] = 1;
            strides[k] = d < self->ndim ? self->sizes[d] * self->strides[d] : 1;
        } else {
            sizes[k] = self->sizes[j];
            strides[k] = self->strides[j++];
        }
    }
    return restride(self, self->ndim + 1, sizes, strides, self->offset, &a->out[0]);
}

/* The in-place view ops squeeze_/unsqueeze_: self takes the geometry of the view its
 * out-of-place form made (a->out[0]); its data and offset stay, its version moves on. */
static mt_status
adopt_view(mt_args *a, mt_status st)
{
    if (st) {
        return st;
    }
    mt_tensor *self = a->t[0], *view = a->out[0];
    self->ndim = view->ndim;
    memcpy(self->sizes, view->sizes, sizeof(int64_t) * (size_t)view->ndim);
    memcpy(self->strides, view->strides, sizeof(int64_t) * (size_t)view->ndim);
    mt_tensor_release(view);
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
    return MT_OK;
}

mt_status
mt_composite_squeeze_(mt_args *a)
{
    return adopt_view(a, mt_composite_squeeze(a));
}

mt_status
mt_composite_unsqueeze_(mt_args *a)
{
    return adopt_view(a, mt_composite_unsqueeze(a));
}

mt_status
mt_composite_flatten(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int start, end;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &start);
    if (st || (st = mt_wrap_dim(a->i[1], self->ndim, &end))) {
        return st;
    }
    if (start > end) {
        return mt_fail(MT_ERUNTIME,
                       "flatten() has invalid args: start_dim cannot come after end_dim");
    }
    if (self->ndim == 0) {
        int64_t one = 1;
        return mt_op_reshape(self, 1, &one, &a->out[0]);
    }
    if (start == end) {
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    int64_t sizes[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d <= start || d > end) {
            sizes[n++] = self->sizes[d];
        } else {
            sizes[n - 1] *= self->sizes[d];
        }
    }
    return mt_op_reshape(self, n, sizes, &a->out[0]);
}

mt_status
mt_composite_select(mt_args *a)
{
    mt_tensor *self = a->t[0];
    char buf[256];
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX, "select() cannot be applied to a 0-dim tensor.");
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t size = self->sizes[d], index = a->i[1];
    if (index < -size || index >= size) {
        return mt_fail(MT_EINDEX,
                       "select(): index %" PRId64 " out of range for tensor of size %s at "
                       "dimension %d",
                       index, mt_format_sizes(buf, sizeof(buf), self->ndim, self->sizes), d);
    }
    if (index < 0) {
        index += size;
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    for (int k = 0, j = 0; k < self->ndim; k++) {
        if (k != d) {
            sizes[j] = self->sizes[k];
            strides[j++] = self->strides[k];
        }
    }
    return restride(self, self->ndim - 1, sizes, strides, self->offset + index * self->strides[d],
                    &a->out[0]);
}

static int64_t
clamp_index(int64_t v, int64_t size)
{
    if (v < 0) {
        v += size;
    }
    return v < 0 ? 0 : v > size ? size : v;
}

mt_status
mt_composite_slice(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX, "slice() cannot be applied to a 0-dim tensor.");
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t step = a->i[3];
    if (step <= 0) {
        return mt_fail(MT_EVALUE, "step must be greater than zero");
    }
    int64_t size = self->sizes[d];
    int64_t start = (a->i_none & 2u) ? 0 : clamp_index(a->i[1], size);
    int64_t end = (a->i_none & 4u) ? size : clamp_index(a->i[2], size);
    int64_t len = end > start ? (end - start + step - 1) / step : 0;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    sizes[d] = len;
    strides[d] = self->strides[d] * step;
    /* An empty slice keeps a valid offset inside the storage. */
    int64_t offset = self->offset + (len ? start * self->strides[d] : 0);
    return restride(self, self->ndim, sizes, strides, offset, &a->out[0]);
}
