/* The device-independent half of the index ops (ops/index_plan.h): their front ends (PyTorch's
 * argument checks) and the kernels over a device's backend. The plan of advanced indexing is
 * ops/index_advanced.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/front.h"
#include "ops/index_plan.h"
#include "ops/ops.h"

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

/* gather(self, dim, index): *wdim wrapped, an int index of self's rank, no larger than self but
 * along dim. */
static mt_status
check_gather(const mt_tensor *self, int64_t dim, const mt_tensor *index, int *wdim)
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

/* scatter and scatter_add(self, dim, index, src): src a tensor of self's dtype or a Python number
 * that fits it, PyTorch's shape rule (scatter_shape_check). */
static mt_status
check_scatter(const mt_tensor *self, int64_t dim, const mt_tensor *index, const mt_tensor *src,
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
    if (value &&
        (st = mt_check_scalar_fits(mt_load_scalar(mt_tensor_data(src), src->dtype), self->dtype))) {
        return st;
    }
    return check_scatter_shapes(self, index, value ? NULL : src, *wdim);
}

/* index_select(self, dim, index): a vector (or 0-dim) int index; *n its length. */
static mt_status
check_index_select(const mt_tensor *self, int64_t dim, const mt_tensor *index, int *wdim,
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

/* ---- the kernels, over a device's backend ---- */

/* be->positions with the gather and scatter message for an index outside [0, size). */
static mt_status
positions(const mt_index_backend *be, mt_tensor *index, int dim, int64_t size,
          const mt_tensor *written, mt_tensor **out)
{
    bool bad = false;
    int64_t v = 0;
    mt_status st = be->positions(index, size, written, out, &bad, &v);
    return st ? st : bad ? mt_fail_index_bounds(v, dim, size, MT_ERUNTIME) : MT_OK;
}

/* A view of t with the given sizes and strides (in elements) at t's own offset. */
static mt_status
restride(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, mt_tensor **out)
{
    return mt_tensor_view(t, ndim, sizes, strides, t->offset, out);
}

// self (*), index (*) int32/int64 of self's rank, no larger than self but along dim;
// out (the result: index's shape)[..., i, ...] = self[..., index[..., i, ...], ...] with i at dim
mt_status
mt_index_gather(mt_args *a, const mt_index_backend *be)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *pos = NULL, *src = NULL;
    const int dim = a->plan->along.dim;
    mt_status st;
    int64_t ss[MT_MAX_DIMS], sst[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, sst);
    mt_index_geometry1(index, is, ist);
    if ((st = positions(be, index, dim, ss[dim], NULL, &pos))) {
        return st;
    }
    int64_t step = sst[dim] * (int64_t)mt_dtype_size(self->dtype);
    sst[dim] = 0;
    st = restride(self, n, is, sst, &src);
    if (st == MT_OK) {
        st = be->run(n, is, a->out[0], src, pos, MT_INDEX_TAKE, step, true);
    }
    mt_tensor_clear(&src);
    mt_tensor_clear(&pos);
    return st;
}

/* *out = the Python number v (a wrapped number, on the CPU) in self's dtype on self's device: a
 * 0-dim tensor made there and filled by the device's fill_, whose kernel takes the value as an
 * argument. (Copying v's CPU tensor over was a host-to-device copy on every call, from pageable
 * memory: on a GPU, one that waits for the host.) */
static mt_status
number_like(mt_tensor *v, const mt_tensor *self, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(0, NULL, self->dtype, mt_tensor_device(self), out);
    if (st == MT_OK && (st = mt_op_fill_(*out, v, NULL))) {
        mt_tensor_clear(out);
    }
    return st;
}

// self (*), index (*) int of self's rank, src (*) no smaller than index, or a Python number;
// self[..., index[..., i, ...], ...] = src[..., i, ...] (or +=, *=, max, min: mode), i at dim
static mt_status
scatter_into(const mt_index_backend *be, mt_tensor *self, int dim, mt_tensor *index, mt_tensor *src,
             mt_index_mode mode)
{
    mt_tensor *pos = NULL, *dst = NULL, *from = NULL;
    int64_t ss[MT_MAX_DIMS], sst[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int64_t cs[MT_MAX_DIMS], cst[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, sst);
    mt_index_geometry1(index, is, ist);
    mt_status st = positions(be, index, dim, ss[dim], self, &pos);
    if (st) {
        return st;
    }
    if (src->is_wrapped_number || src->storage == self->storage) {
        /* A number takes self's dtype and device; a source sharing self's memory is read before
         * writing. */
        st = src->is_wrapped_number ? number_like(src, self, &from)
                                    : be->cast(src, self->dtype, &from);
    } else {
        from = mt_tensor_retain(src);
    }
    if (st == MT_OK && from->ndim > 0) {
        mt_index_geometry1(from, cs, cst);
        mt_tensor *v = NULL;
        st = restride(from, n, is, cst, &v);
        mt_tensor_release(from);
        from = v;
    }
    int64_t step = sst[dim] * (int64_t)mt_dtype_size(self->dtype);
    sst[dim] = 0;
    if (st == MT_OK) {
        st = restride(self, n, is, sst, &dst);
    }
    if (st == MT_OK) {
        st = be->run(n, is, dst, from, pos, mode, step, mt_tensor_is_dense(self));
        mt_tensor_bump_version(self);
    }
    mt_tensor_clear(&dst);
    mt_tensor_clear(&from);
    mt_tensor_clear(&pos);
    return st;
}

/* What scatter writes into: self (in place; the front end checked it can be written) or a new
 * copy of it. */
static mt_status
scatter_target(const mt_index_backend *be, mt_tensor *self, bool inplace, mt_tensor **out)
{
    if (inplace) {
        *out = mt_tensor_retain(self);
        return MT_OK;
    }
    return be->cast(self, self->dtype, out);
}

/* scatter's reduce (its str slot: "add", "multiply" or absent); scatter_add always adds. */
static mt_status
scatter_mode(const mt_args *a, bool add, int *mode)
{
    const char *reduce = add ? NULL : a->str[0];
    *mode = add ? MT_INDEX_ADD : MT_INDEX_PUT;
    if (reduce && strcmp(reduce, "add") == 0) {
        *mode = MT_INDEX_ADD;
    } else if (reduce && strcmp(reduce, "multiply") == 0) {
        *mode = MT_INDEX_MUL;
    } else if (reduce) {
        return mt_fail(MT_ERUNTIME, "reduce argument must be either add or multiply.");
    }
    return MT_OK;
}

mt_status
mt_index_scatter(mt_args *a, const mt_index_backend *be, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *src = a->t[2], *target = NULL;
    mt_status st = scatter_target(be, self, inplace, &target);
    if (st) {
        return st;
    }
    st = scatter_into(be, target, a->plan->along.dim, index, src,
                      (mt_index_mode)a->plan->along.mode);
    if (st) {
        mt_tensor_release(target);
        return st;
    }
    a->out[0] = target;
    return MT_OK;
}

/* ---- scatter_reduce ---- */

typedef enum reduction { R_SUM, R_PROD, R_MEAN, R_AMAX, R_AMIN, R_NONE } reduction;

static reduction
reduction_of(const char *name)
{
    static const char *const names[] = {"sum", "prod", "mean", "amax", "amin"};
    for (int r = 0; r < R_NONE; r++) {
        if (strcmp(name, names[r]) == 0) {
            return (reduction)r;
        }
    }
    /* PyTorch also takes max and min (undocumented) */
    return strcmp(name, "max") == 0 ? R_AMAX : strcmp(name, "min") == 0 ? R_AMIN : R_NONE;
}

/* The value a reduction leaves any other unchanged with, in dtype dt, as a wrapped number. */
static mt_status
reduction_identity(reduction r, mt_dtype dt, mt_tensor **out)
{
    mt_scalar v = mt_scalar_int(r == R_PROD);
    bool lowest = r == R_AMAX;
    if (r == R_AMAX || r == R_AMIN) {
        switch (dt) {
        case MT_BOOL:
            v = mt_scalar_bool(!lowest);
            break;
        case MT_INT32:
            v = mt_scalar_int(lowest ? INT32_MIN : INT32_MAX);
            break;
        case MT_INT64:
            v = mt_scalar_int(lowest ? INT64_MIN : INT64_MAX);
            break;
        default:
            v = mt_scalar_float(lowest ? -HUGE_VAL : HUGE_VAL);
        }
    }
    return mt_tensor_scalar(v, dt, out);
}

/* The mean's divisor: how many values reached each element of self (self's own counting one
 * when included), at least 1, in self's dtype. */
static mt_status
mean_counts(mt_tensor *self, int dim, mt_tensor *index, mt_tensor *src, bool include_self,
            mt_tensor **out)
{
    mt_device dev = mt_tensor_device(self);
    mt_tensor *count = NULL, *ones = NULL, *zero = NULL, *one = NULL;
    mt_status st = include_self
                       ? mt_op_ones(self->ndim, self->sizes, self->dtype, dev, false, &count)
                       : mt_op_zeros(self->ndim, self->sizes, self->dtype, dev, false, &count);
    if (st == MT_OK &&
        (st = mt_op_ones(src->ndim, src->sizes, self->dtype, dev, false, &ones)) == MT_OK &&
        (st = mt_op_scatter_add_(count, dim, index, ones, NULL)) == MT_OK &&
        (st = mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &zero)) == MT_OK &&
        (st = mt_tensor_scalar(mt_scalar_int(1), MT_INT64, &one)) == MT_OK) {
        mt_tensor *none = NULL;
        if ((st = mt_op_eq(count, zero, &none)) == MT_OK) {
            st = mt_op_masked_fill_(count, none, one, NULL);
        }
        mt_tensor_clear(&none);
    }
    if (st == MT_OK) {
        *out = mt_tensor_retain(count);
    }
    mt_tensor_clear(&count);
    mt_tensor_clear(&ones);
    mt_tensor_clear(&zero);
    mt_tensor_clear(&one);
    return st;
}

// self (*), index (*) int of self's rank, src (*) of self's dtype, no smaller than index:
// each self[..., index[..., i, ...], ...] reduced (sum, prod, mean, amax, amin) with the
// src[..., i, ...] that reach it, and with itself unless include_self is false
mt_status
mt_index_scatter_reduce(mt_args *a, const mt_index_backend *be, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *src = a->t[2], *target = NULL;
    mt_tensor *identity = NULL, *count = NULL;
    bool include_self = a->b[0];
    const int dim = a->plan->along.dim;
    const reduction r = (reduction)a->plan->along.mode;
    static const mt_index_mode modes[] = {MT_INDEX_ADD, MT_INDEX_MUL, MT_INDEX_ADD, MT_INDEX_MAX,
                                          MT_INDEX_MIN};
    mt_status st = scatter_target(be, self, inplace, &target);
    if (st) {
        return st;
    }
    if (!include_self && ((st = reduction_identity(r, self->dtype, &identity)) ||
                          (st = scatter_into(be, target, dim, index, identity, MT_INDEX_PUT)))) {
        goto out_release;
    }
    if ((st = scatter_into(be, target, dim, index, src, modes[r])) || r != R_MEAN) {
        goto out_release;
    }
    if ((st = mean_counts(target, dim, index, src, include_self, &count)) == MT_OK) {
        st = mt_op_div_(target, count, mt_dtype_is_float(self->dtype) ? NULL : "floor", NULL);
    }
out_release:
    mt_tensor_clear(&identity);
    mt_tensor_clear(&count);
    if (st) {
        mt_tensor_release(target);
        return st;
    }
    a->out[0] = target;
    return MT_OK;
}

/* out = self[indices]: a new tensor, or written into *out when given (a contiguous result of
 * as many elements, seen with the plan's shape) */
static mt_status
take(const mt_index_backend *be, mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **out)
{
    mt_index_plan p;
    mt_tensor *dst = NULL;
    const bool make = *out == NULL;
    mt_status st = mt_index_plan_make(self, n, indices, be->offsets, NULL, &p);
    if (st) {
        return st;
    }
    if (make) {
        st = mt_tensor_empty(p.ndim, p.shape, self->dtype, mt_tensor_device(self), out);
        dst = st == MT_OK ? mt_tensor_retain(*out) : NULL;
    } else {
        int64_t strides[MT_MAX_DIMS];
        mt_contiguous_strides(p.ndim, p.shape, strides);
        st = mt_tensor_view(*out, p.ndim, p.shape, strides, (*out)->offset, &dst);
    }
    if (st == MT_OK) {
        st = be->run(p.ndim, p.shape, dst, p.src, p.pos, MT_INDEX_TAKE, 1, true);
    }
    if (st && make) {
        mt_tensor_clear(out);
    }
    mt_tensor_clear(&dst);
    mt_index_plan_release(&p);
    return st;
}

// self (*), indices (tensors or NULL, one per leading dim); out = self[indices]
mt_status
mt_index_index(mt_args *a, const mt_index_backend *be)
{
    return take(be, a->t[0], a->ntl, a->tl, &a->out[0]);
}

// self (*), indices as for index, values broadcast to self[indices]'s shape, of self's dtype;
// self[indices] = values (or += values when accumulate)
/* PyTorch's canDispatchToMaskedFill: self[mask] = v with one bool mask (the other entries None)
 * and a one-element v on the CPU is masked_fill_(mask, v.item()), so v may have any dtype. *mask
 * is the mask with a size-1 dim for each dim after it, or NULL where the rule does not apply. */
static mt_status
put_mask(const mt_tensor *self, int n, mt_tensor *const *indices, const mt_tensor *values,
         mt_tensor **mask)
{
    int found = -1, before = 0;
    *mask = NULL;
    if (mt_tensor_numel(values) != 1 || mt_tensor_device(values).type != MT_CPU) {
        return MT_OK;
    }
    for (int k = 0; k < n; k++) {
        if (indices[k] == NULL) {
            before += found < 0;
            continue;
        }
        if (found >= 0 || indices[k]->dtype != MT_BOOL ||
            !mt_device_eq(mt_tensor_device(indices[k]), mt_tensor_device(self))) {
            return MT_OK;
        }
        found = k;
    }
    const mt_tensor *m = found >= 0 ? indices[found] : NULL;
    if (m == NULL || before + m->ndim > self->ndim) {
        return MT_OK; /* (the plan raises PyTorch's error) */
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    int ndim = self->ndim - before;
    for (int d = 0; d < ndim; d++) {
        if (d < m->ndim && m->sizes[d] != self->sizes[before + d]) {
            return MT_OK;
        }
        sizes[d] = d < m->ndim ? m->sizes[d] : 1;
        strides[d] = d < m->ndim ? m->strides[d] : 0;
    }
    return mt_tensor_view((mt_tensor *)m, ndim, sizes, strides, m->offset, mask);
}

mt_status
mt_index_put(mt_args *a, const mt_index_backend *be)
{
    mt_tensor *self = a->t[0], *values = a->t[1], *from = NULL, *mask = NULL;
    mt_status st = a->b[0] ? MT_OK : put_mask(self, a->ntl, a->tl, values, &mask);
    if (st || mask) {
        mt_scalar v;
        if (st == MT_OK && (st = mt_tensor_item(values, &v)) == MT_OK &&
            (st = mt_tensor_scalar(v, v.is_complex ? MT_COMPLEX128 : v.type, &from)) == MT_OK &&
            (st = mt_op_masked_fill_(self, mask, from, NULL)) == MT_OK) {
            a->out[0] = mt_tensor_retain(self);
        }
        mt_tensor_clear(&from);
        mt_tensor_clear(&mask);
        return st;
    }
    mt_index_plan p;
    if ((st = mt_index_plan_make(self, a->ntl, a->tl, be->offsets, values, &p))) {
        return st;
    }
    /* values that share self's memory are read in full before anything is written; a Python
     * number is made on self's device */
    if (values->is_wrapped_number) {
        st = number_like(values, self, &from);
    } else {
        st = values->storage == self->storage ? be->cast(values, values->dtype, &from)
                                              : (from = mt_tensor_retain(values), MT_OK);
    }
    if (st == MT_OK) {
        st = be->run(p.ndim, p.shape, p.src, from, p.pos, a->b[0] ? MT_INDEX_ADD : MT_INDEX_PUT, 1,
                     mt_tensor_is_dense(self));
        mt_tensor_bump_version(self);
    }
    if (st == MT_OK) {
        a->out[0] = mt_tensor_retain(self);
    }
    mt_tensor_clear(&from);
    mt_index_plan_release(&p);
    return st;
}

/* *out = index as int64 positions in [0, size), else PyTorch's "index out of range in self". */
static mt_status
rows(const mt_index_backend *be, mt_tensor *index, int64_t size, mt_tensor **out)
{
    bool bad = false;
    int64_t v = 0;
    mt_status st = be->positions(index, size, NULL, out, &bad, &v);
    return st ? st : bad ? mt_fail_embedding_index() : MT_OK;
}

/* out (the result, contiguous: self's shape with n along dim, 0-dim for a 0-dim self, or of as
 * many elements) = self's entries flat[k] along dim, flat (n) int64 positions already checked
 * (rows() above). As gather: self viewed with the result's shape and a stride of 0 along dim,
 * flat's positions stepping along dim, each times dim's byte stride. (Through take(), the
 * positions were checked again and turned into a tensor of byte offsets, of 32 KB for 4096
 * indices: index_select of 4096 from a vector took 1.2x PyTorch's time.) */
static mt_status
select_rows(const mt_index_backend *be, mt_tensor *self, int dim, mt_tensor *flat, int64_t n,
            mt_tensor *out)
{
    /* a 0-dim self is one element of a 1-dim one */
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS], pos_strides[MT_MAX_DIMS] = {0};
    const int ndim = mt_index_geometry1(self, sizes, strides);
    const int64_t step = strides[dim] * (int64_t)mt_dtype_size(self->dtype);
    sizes[dim] = n;
    strides[dim] = 0;
    pos_strides[dim] = 1; /* flat is contiguous (of an index of any shape: embedding's) */
    mt_tensor *src = NULL, *pos = NULL, *dst = NULL;
    mt_status st = restride(self, ndim, sizes, strides, &src);
    if (st == MT_OK) {
        st = restride(flat, ndim, sizes, pos_strides, &pos);
    }
    if (st == MT_OK) {
        int64_t contiguous[MT_MAX_DIMS];
        mt_contiguous_strides(ndim, sizes, contiguous);
        st = restride(out, ndim, sizes, contiguous, &dst);
    }
    if (st == MT_OK) {
        st = be->run(ndim, sizes, dst, src, pos, MT_INDEX_TAKE, step, true);
    }
    mt_tensor_clear(&dst);
    mt_tensor_clear(&pos);
    mt_tensor_clear(&src);
    return st;
}

// self (*), index (n) or 0-dim, int32/int64; out = self with dim's entries self[..., index, ...]
mt_status
mt_index_select(mt_args *a, const mt_index_backend *be)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *flat = NULL;
    const int dim = a->plan->along.dim;
    const int64_t n = a->plan->along.n;
    mt_status st = rows(be, index, self->ndim ? self->sizes[dim] : 1, &flat);
    if (st) {
        return st;
    }
    st = select_rows(be, self, dim, flat, n, a->out[0]);
    mt_tensor_clear(&flat);
    return st;
}

// weight (V, D), indices (*) int64 or int32; out (the result: (*, D), contiguous, so (n, D)
// in memory) = the rows of weight named by indices
mt_status
mt_index_embedding(mt_args *a, const mt_index_backend *be)
{
    mt_tensor *weight = a->t[0], *indices = a->t[1], *flat = NULL;
    mt_status st = rows(be, indices, weight->sizes[0], &flat);
    if (st == MT_OK) {
        st = select_rows(be, weight, 0, flat, mt_tensor_numel(indices), a->out[0]);
    }
    mt_tensor_clear(&flat);
    return st;
}

/* ---- the front ends ---- */

// self (*), dim, index (*) int32/int64 of self's rank
mt_status
mt_front_gather(const mt_args *a, mt_plan *p)
{
    const mt_tensor *index = a->t[1];
    mt_status st = check_gather(a->t[0], a->i[0], index, &p->along.dim);
    return st ? st : mt_front_output(p, a->t[0]->dtype, index->ndim, index->sizes);
}

// self (*), dim, index (*), src (*) or a Python number; scatter and scatter_add, in place (and
// then self can be written) or not
mt_status
mt_front_scatter(const mt_args *a, mt_plan *p)
{
    bool add = p->op == MT_OP_scatter_add || p->op == MT_OP_scatter_add_;
    mt_status st = check_scatter(a->t[0], a->i[0], a->t[1], a->t[2], &p->along.dim);
    if (st || (st = scatter_mode(a, add, &p->along.mode))) {
        return st;
    }
    return mt_op_flags[p->op] & INPLACE ? mt_check_writable(a->t[0]) : MT_OK;
}

// scatter_reduce(self, dim, index, src, reduce, include_self) and in place: scatter's arguments,
// and the reduction (the plan's mode) one of PyTorch's names
mt_status
mt_front_scatter_reduce(const mt_args *a, mt_plan *p)
{
    mt_tensor *self = a->t[0];
    mt_status st = check_scatter(self, a->i[0], a->t[1], a->t[2], &p->along.dim);
    if (st) {
        return st;
    }
    reduction r = reduction_of(a->str[0]);
    if (r == R_NONE) {
        return mt_fail(MT_ERUNTIME,
                       "reduce argument must be either sum, prod, mean, amax or amin, got %s",
                       a->str[0]);
    }
    if (r == R_MEAN && self->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL,
                       "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
    }
    p->along.mode = (int)r;
    return mt_op_flags[p->op] & INPLACE ? mt_check_writable(self) : MT_OK;
}

// self (*), dim, index (n) or 0-dim, int32/int64
mt_status
mt_front_index_select(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0];
    mt_status st = check_index_select(self, a->i[0], a->t[1], &p->along.dim, &p->along.n);
    if (st) {
        return st;
    }
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        sizes[d] = d == p->along.dim ? p->along.n : self->sizes[d];
    }
    return mt_front_output(p, self->dtype, self->ndim, sizes); /* 0-dim for a 0-dim self */
}

// self (*), indices (tensors or NULL, one per leading dim)
mt_status
mt_front_index(const mt_args *a, mt_plan *p)
{
    (void)p;
    return mt_index_check_indices(a->t[0], a->ntl, a->tl);
}

// self (*), indices as for index, values of self's dtype
mt_status
mt_front_index_put_(const mt_args *a, mt_plan *p)
{
    (void)p;
    mt_tensor *self = a->t[0], *values = a->t[1], *mask = NULL;
    /* t[mask] = a one-element value is masked_fill_ (as PyTorch's index_put_): any dtype */
    mt_status st = a->b[0] ? MT_OK : put_mask(self, a->ntl, a->tl, values, &mask);
    const bool masked = mask != NULL;
    mt_tensor_clear(&mask);
    if (st == MT_OK && !masked && values->dtype != self->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "Index put requires the source and destination dtypes match, got %s for "
                       "the destination and %s for the source.",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(values->dtype));
    }
    if (st || (st = mt_check_writable(self)) || masked) {
        return st;
    }
    return mt_index_check_indices(self, a->ntl, a->tl);
}

// weight (V, D), indices (*) int64 or int32
mt_status
mt_front_embedding(const mt_args *a, mt_plan *p)
{
    const mt_tensor *weight = a->t[0], *indices = a->t[1];
    if (indices->dtype != MT_INT64 && indices->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME,
                       "Expected tensor for argument #1 'indices' to have one of the following "
                       "scalar types: Long, Int; but got minitorch.%sTensor instead (while "
                       "checking arguments for embedding)",
                       mt_dtype_scalar_name(indices->dtype));
    }
    if (weight->ndim != 2) {
        return mt_fail(MT_ERUNTIME, "'weight' must be 2-D");
    }
    if (indices->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "embedding: indices have too many dimensions");
    }
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
    shape[indices->ndim] = weight->sizes[1];
    return mt_front_output(p, weight->dtype, indices->ndim + 1, shape);
}
