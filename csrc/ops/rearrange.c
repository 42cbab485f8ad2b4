/* Rearranging ops, for every device: roll, rot90, fliplr, flipud, tile, repeat_interleave,
 * unflatten, swapaxes/swapdims and the in-place transposes (transpose_, t_, swapaxes_,
 * swapdims_), narrow_copy.
 *
 * Each is written with other ops, as PyTorch writes them: roll is two narrows joined by cat
 * along each dim, rot90 a flip and a transpose, tile a repeat, repeat_interleave an expand (a
 * number of repeats) or an index_select (a tensor of them). The in-place transposes change only
 * self's geometry. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"

/* out = self rolled by shift along dim (wrapped): element i moves to (i + shift) mod size. */
static mt_status
roll_dim(mt_tensor *self, int64_t shift, int64_t dim, mt_tensor **out)
{
    int d;
    mt_status st = mt_wrap_dim(dim, self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t size = self->ndim ? self->sizes[d] : 1;
    if (mt_tensor_numel(self) == 0 || self->ndim == 0) {
        return mt_op_clone(self, out);
    }
    int64_t s = shift % size;
    s = s < 0 ? s + size : s;
    int64_t start = (size - s) % size;
    mt_tensor *parts[2] = {NULL, NULL};
    if ((st = mt_op_narrow(self, d, start, size - start, &parts[0])) == MT_OK &&
        (st = mt_op_narrow(self, d, 0, start, &parts[1])) == MT_OK) {
        st = mt_op_cat(2, parts, d, out);
    }
    mt_tensor_clear(&parts[0]);
    mt_tensor_clear(&parts[1]);
    return st;
}

// self (any shape); out: self rolled by shifts[k] along dims[k], or flattened and rolled by
// shifts[0] without dims
mt_status
mt_composite_roll(mt_args *a)
{
    mt_tensor *self = a->t[0], *cur = NULL;
    const mt_intlist *shifts = &a->l[0], *dims = &a->l[1];
    int ndims = dims->none ? 0 : dims->n;
    if (shifts->n == 0) {
        return mt_fail(MT_ERUNTIME, "`shifts` required");
    }
    mt_status st;
    if (ndims == 0 && shifts->n == 1) {
        mt_tensor *flat = NULL, *rolled = NULL;
        int64_t numel = mt_tensor_numel(self);
        if ((st = mt_op_reshape(self, 1, &numel, &flat)) == MT_OK &&
            (st = roll_dim(flat, shifts->v[0], 0, &rolled)) == MT_OK) {
            st = mt_op_view(rolled, self->ndim, self->sizes, &a->out[0]);
        }
        mt_tensor_clear(&flat);
        mt_tensor_clear(&rolled);
        return st;
    }
    if (shifts->n != ndims) {
        return mt_fail(MT_ERUNTIME, "shifts and dimensions must align. shifts: %d, dims:%d",
                       shifts->n, ndims);
    }
    cur = mt_tensor_retain(self);
    for (int k = 0; k < ndims; k++) {
        mt_tensor *next = NULL;
        st = roll_dim(cur, shifts->v[k], dims->v[k], &next);
        mt_tensor_release(cur);
        if (st) {
            return st;
        }
        cur = next;
    }
    a->out[0] = cur;
    return MT_OK;
}

// self (..., a, ..., b, ...) -> out: rotated k quarter turns in the plane of dims (default
// [0, 1]), from the first towards the second
mt_status
mt_composite_rot90(mt_args *a)
{
    mt_tensor *self = a->t[0], *flipped = NULL;
    const mt_intlist *l = &a->l[0];
    int64_t dims[2] = {0, 1};
    int n = l->none ? 2 : l->n;
    if (n != 2) {
        return mt_fail(MT_ERUNTIME, "expected total rotation dims == 2, but got dims = %d", n);
    }
    if (!l->none) {
        dims[0] = l->v[0];
        dims[1] = l->v[1];
    }
    if (self->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "expected total dims >= 2, but got total dims = %d",
                       self->ndim);
    }
    int d0, d1;
    mt_status st = mt_wrap_dim(dims[0], self->ndim, &d0);
    if (st || (st = mt_wrap_dim(dims[1], self->ndim, &d1))) {
        return st;
    }
    if (d0 == d1) {
        return mt_fail(MT_ERUNTIME,
                       "expected rotation dims to be different, but got dim0 = %" PRId64
                       " and dim1 = %" PRId64,
                       dims[0], dims[1]);
    }
    int64_t k = ((a->i[0] % 4) + 4) % 4;
    int64_t both[2] = {d0, d1};
    if (k == 0) {
        return mt_copy_contiguous(self, &a->out[0]);
    }
    if (k == 2) {
        return mt_op_flip(self, 2, both, &a->out[0]);
    }
    st = mt_op_flip(self, 1, k == 1 ? &both[1] : &both[0], &flipped);
    if (st == MT_OK) {
        st = mt_op_transpose(flipped, d0, d1, &a->out[0]);
    }
    mt_tensor_clear(&flipped);
    return st;
}

mt_status
mt_composite_fliplr(mt_args *a)
{
    if (a->t[0]->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "Input must be >= 2-d.");
    }
    return mt_op_flip(a->t[0], 1, (const int64_t[]){1}, &a->out[0]);
}

mt_status
mt_composite_flipud(mt_args *a)
{
    if (a->t[0]->ndim < 1) {
        return mt_fail(MT_ERUNTIME, "Input must be >= 1-d.");
    }
    return mt_op_flip(a->t[0], 1, (const int64_t[]){0}, &a->out[0]);
}

// self (S), dims (R): repeat with R padded by leading 1s to S's length
mt_status
mt_composite_tile(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *r = &a->l[0];
    int lead = self->ndim - r->n;
    if (lead <= 0) {
        return mt_op_repeat(self, r->n, r->v, &a->out[0]);
    }
    int64_t reps[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        reps[d] = d < lead ? 1 : r->v[d - lead];
    }
    return mt_op_repeat(self, self->ndim, reps, &a->out[0]);
}

/* The indices of repeat_interleave(repeats): out (total) in repeats' dtype, each k repeats[k]
 * times. A mark at the start of each run but the first, summed up: marks = zeros(total + 1),
 * marks[starts[1:]] += 1 (runs of length 0 add to the next start), out = cumsum(marks[:total]). */
static mt_status
repeat_indices(mt_tensor *repeats, bool has_size, int64_t output_size, mt_tensor **out)
{
    if (repeats->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "repeat_interleave only accept 1D vector as repeat");
    }
    if (repeats->dtype != MT_INT64 && repeats->dtype != MT_INT32) {
        return mt_fail(MT_ENOTIMPL, "\"repeat_interleave_cpu\" not implemented for '%s'",
                       mt_dtype_scalar_name(repeats->dtype));
    }
    mt_device dev = mt_tensor_device(repeats);
    int64_t n = repeats->sizes[0];
    if (n == 0) {
        return mt_op_empty(1, &n, repeats->dtype, dev, false, out);
    }
    mt_tensor *cs = NULL, *least = NULL, *starts = NULL, *tail = NULL, *marks = NULL;
    mt_tensor *ones = NULL, *head = NULL, *idx = NULL, *last = NULL;
    mt_scalar total, low;
    mt_status st = mt_op_cumsum(repeats, 0, MT_INT64, &cs);
    if (st || (st = mt_op_amin(repeats, 0, NULL, false, &least)) ||
        (st = mt_tensor_item(least, &low)) || (st = mt_op_select(cs, 0, n - 1, &last)) ||
        (st = mt_tensor_item(last, &total))) {
        goto out_release;
    }
    if (mt_scalar_to_int(low) < 0) {
        st = mt_fail(MT_ERUNTIME, "repeats can not be negative");
        goto out_release;
    }
    int64_t count = mt_scalar_to_int(total), m, rest = n - 1;
    if (__builtin_add_overflow(count, 1, &m)) {
        st = mt_fail(MT_ERUNTIME, "repeat_interleave: the result's size overflows int64");
        goto out_release;
    }
    if (has_size && output_size != count) {
        st = mt_fail(MT_ERUNTIME, "allocated size does not match required size");
        goto out_release;
    }
    if ((st = mt_op_sub(cs, repeats, mt_scalar_int(1), &starts)) ||
        (st = mt_op_narrow(starts, 0, 1, rest, &tail)) ||
        (st = mt_op_zeros(1, &m, MT_INT64, dev, false, &marks)) ||
        (st = mt_op_ones(1, &rest, MT_INT64, dev, false, &ones)) ||
        (st = mt_op_index_put_(marks, 1, &tail, ones, true, NULL)) ||
        (st = mt_op_narrow(marks, 0, 0, count, &head)) ||
        (st = mt_op_cumsum(head, 0, MT_INT64, &idx))) {
        goto out_release;
    }
    st = repeats->dtype == MT_INT64 ? (*out = mt_tensor_retain(idx), MT_OK)
                                    : mt_op__to_copy(idx, repeats->dtype, dev, out);
out_release:
    mt_tensor_clear(&cs);
    mt_tensor_clear(&least);
    mt_tensor_clear(&starts);
    mt_tensor_clear(&tail);
    mt_tensor_clear(&marks);
    mt_tensor_clear(&ones);
    mt_tensor_clear(&head);
    mt_tensor_clear(&idx);
    mt_tensor_clear(&last);
    return st;
}

/* self (..., n, ...) with each element along dim repeated r times: (..., n * r, ...), a view
 * of self broadcast along a new dim after dim, flattened with it (a copy). */
static mt_status
repeat_each(mt_tensor *self, int dim, int64_t r, bool has_size, int64_t output_size,
            mt_tensor **out)
{
    if (r < 0) {
        return mt_fail(MT_ERUNTIME, "Repeats must be non-negative");
    }
    int64_t expected;
    if (__builtin_mul_overflow(self->sizes[dim], r, &expected)) {
        return mt_fail(MT_ERUNTIME, "repeat_interleave: the result's size overflows int64");
    }
    if (has_size && output_size != expected) {
        return mt_fail(MT_ERUNTIME,
                       "repeat_interleave: Invalid output_size, expected %" PRId64
                       " but got %" PRId64,
                       expected, output_size);
    }
    if (self->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported", MT_MAX_DIMS);
    }
    int64_t sizes[MT_MAX_DIMS];
    for (int d = 0, k = 0; d <= self->ndim; d++) {
        sizes[d] = d == dim + 1 ? r : self->sizes[k++];
    }
    mt_tensor *u = NULL, *e = NULL;
    mt_status st = mt_op_unsqueeze(self, dim + 1, &u);
    if (st == MT_OK && (st = mt_op_expand(u, self->ndim + 1, sizes, &e)) == MT_OK) {
        st = mt_op_flatten(e, dim, dim + 1, &out[0]);
    }
    mt_tensor_clear(&u);
    mt_tensor_clear(&e);
    return st;
}

// self (..., n, ...), repeats (a number, 0-dim, (1) or (n)): each element of self along dim
// (of self flattened without dim) repeated repeats[k] times; repeat_interleave(repeats) alone
// is the indices, each k repeats[k] times
mt_status
mt_composite_repeat_interleave(mt_args *a)
{
    mt_tensor *self = a->t[0], *repeats = a->t[1], *input = NULL, *idx = NULL, *r1 = NULL;
    mt_tensor *wide = NULL;
    bool has_dim = !(a->i_none & 1u), has_size = !(a->i_none & 2u);
    int64_t output_size = a->i[1];
    if (repeats == NULL) {
        return repeat_indices(self, has_size, output_size, &a->out[0]);
    }
    mt_status st = MT_OK;
    if (has_dim) {
        input = mt_tensor_retain(self);
    } else {
        int64_t numel = mt_tensor_numel(self);
        st = mt_op_reshape(self, 1, &numel, &input);
    }
    int dim = 0;
    if (st || (st = mt_wrap_dim(has_dim ? a->i[0] : 0, self->ndim, &dim))) {
        goto out_release;
    }
    if (input->ndim == 0) { /* a 0-dim self with a dim: one element along it */
        mt_tensor *one = NULL;
        st = mt_op_reshape(input, 1, (const int64_t[]){1}, &one);
        mt_tensor_release(input);
        input = one;
        if (st) {
            goto out_release;
        }
    }
    if (repeats->is_wrapped_number) {
        mt_scalar r;
        if ((st = mt_tensor_item(repeats, &r)) == MT_OK) {
            st = repeat_each(input, dim, mt_scalar_to_int(r), has_size, output_size, &a->out[0]);
        }
        goto out_release;
    }
    int64_t n = input->sizes[dim];
    if (repeats->ndim == 0 || (repeats->ndim == 1 && repeats->sizes[0] == 1)) {
        if ((st = mt_op_reshape(repeats, 1, (const int64_t[]){1}, &r1)) ||
            (st = mt_op_expand(r1, 1, &n, &wide))) {
            goto out_release;
        }
    } else if (repeats->ndim == 1) {
        if (repeats->sizes[0] != n) {
            st = mt_fail(MT_ERUNTIME,
                         "repeats must have the same size as input along dim, but got "
                         "repeats.size(0) = %" PRId64 " and input.size(%d) = %" PRId64,
                         repeats->sizes[0], dim, n);
            goto out_release;
        }
        wide = mt_tensor_retain(repeats);
    } else {
        st = mt_fail(MT_ERUNTIME, "repeats must be 0-dim or 1-dim tensor");
        goto out_release;
    }
    if ((st = repeat_indices(wide, has_size, output_size, &idx)) == MT_OK) {
        st = mt_op_index_select(input, dim, idx, &a->out[0]);
    }
out_release:
    mt_tensor_clear(&input);
    mt_tensor_clear(&idx);
    mt_tensor_clear(&r1);
    mt_tensor_clear(&wide);
    return st;
}

// self (..., n, ...) -> out (..., sizes..., ...), a view; one size may be -1 (inferred)
mt_status
mt_composite_unflatten(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *sizes = &a->l[0];
    char buf[256];
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    if (sizes->n == 0) {
        return mt_fail(MT_ERUNTIME, "unflatten: sizes must be non-empty");
    }
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX,
                       "unflatten got an unexpected error:\nDimension specified as %" PRId64
                       " but tensor has no dimensions",
                       a->i[0]);
    }
    if (self->ndim - 1 + sizes->n > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "only tensors with up to %d dims are supported", MT_MAX_DIMS);
    }
    int64_t size = self->sizes[d], known = 1, shape[MT_MAX_DIMS];
    bool fits_known = true;
    int infer = -1;
    for (int k = 0; k < sizes->n; k++) {
        if (sizes->v[k] < -1) {
            return mt_fail(MT_ERUNTIME,
                           "unflatten got an unexpected error:\ninvalid shape dimension %" PRId64
                           " at index %d of shape %s",
                           sizes->v[k], k, mt_format_sizes(buf, sizeof(buf), sizes->n, sizes->v));
        }
        if (sizes->v[k] == -1) {
            if (infer >= 0) {
                return mt_fail(MT_ERUNTIME,
                               "unflatten got an unexpected error:\nonly one dimension can be "
                               "inferred");
            }
            infer = k;
        } else {
            fits_known &= !__builtin_mul_overflow(known, sizes->v[k], &known);
        }
    }
    bool fits = fits_known && (infer >= 0 ? known != 0 && size % known == 0 : known == size);
    if (!fits) {
        return mt_fail(MT_ERUNTIME,
                       "unflatten: Provided sizes %s don't multiply up to the size of dim %d "
                       "(%" PRId64 ") in the input tensor",
                       mt_format_sizes(buf, sizeof(buf), sizes->n, sizes->v), d, size);
    }
    int n = 0;
    for (int k = 0; k < self->ndim; k++) {
        if (k != d) {
            shape[n++] = self->sizes[k];
            continue;
        }
        for (int j = 0; j < sizes->n; j++) {
            shape[n++] = j == infer ? size / known : sizes->v[j];
        }
    }
    return mt_op_view(self, n, shape, &a->out[0]);
}

mt_status
mt_composite_swapaxes(mt_args *a)
{
    return mt_op_transpose(a->t[0], a->i[0], a->i[1], &a->out[0]);
}

mt_status
mt_composite_swapaxes_(mt_args *a)
{
    return mt_op_transpose_(a->t[0], a->i[0], a->i[1], &a->out[0]);
}

// self: its dims dim0 and dim1 swapped in place (its geometry only; the version moves on)
mt_status
mt_composite_transpose_(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int d0, d1;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d0);
    if (st || (st = mt_wrap_dim(a->i[1], self->ndim, &d1))) {
        return st;
    }
    if (self->ndim > 0) {
        int64_t s = self->sizes[d0], t = self->strides[d0];
        self->sizes[d0] = self->sizes[d1];
        self->strides[d0] = self->strides[d1];
        self->sizes[d1] = s;
        self->strides[d1] = t;
    }
    mt_tensor_bump_version(self);
    a->out[0] = mt_tensor_retain(self);
    return MT_OK;
}

mt_status
mt_composite_t_(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->ndim > 2) {
        return mt_fail(MT_ERUNTIME, "t_() expects a tensor with <= 2 dimensions, but self is %dD",
                       self->ndim);
    }
    return mt_op_transpose_(self, 0, self->ndim < 2 ? 0 : 1, &a->out[0]);
}

// self (..., size, ...) -> out (..., length, ...): a contiguous copy of narrow(dim, start, length)
mt_status
mt_composite_narrow_copy(mt_args *a)
{
    mt_tensor *view = NULL;
    mt_status st = mt_op_narrow(a->t[0], a->i[0], a->i[1], a->i[2], &view);
    if (st == MT_OK) {
        st = mt_copy_contiguous(view, &a->out[0]);
    }
    mt_tensor_clear(&view);
    return st;
}
