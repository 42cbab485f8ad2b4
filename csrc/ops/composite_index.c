/* Indexing ops made of index, index_put_ and gather, for every device: take, take_along_dim,
 * index_add, index_copy, index_fill, masked_scatter and their in-place forms.
 *
 * PyTorch has kernels for most of these; here each is PyTorch's checks (its words) and one
 * indexing op: index_add_ is index_put_ along one dim with accumulate, index_copy_ and
 * index_fill_ without, masked_scatter_ index_put_ with the mask. An index on the CPU has its
 * range read first, for PyTorch's errors (and where PyTorch refuses a value that index_put_
 * would take, a negative one for index_add_). On a device nothing is read back, as PyTorch's CUDA
 * kernels read nothing: the indexing kernel checks the range there (a device-side assertion,
 * reported at the next synchronisation), and index_add_/index_copy_, which take only [0, size),
 * scatter along dim instead, whose kernel checks that range; masked_scatter_ picks source's
 * elements by a running count of the mask with index_select, whose kernel checks the count. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"

/* ---- shared ---- */

/* Whether the values of index are read on the host to check them: on the CPU, where that costs
 * no wait; a device's kernels check them on the device instead (see the top). */
static bool
read_here(const mt_tensor *index)
{
    return mt_tensor_device(index).type == MT_CPU;
}

/* Whether a value of a CPU index lies outside [low, size): *bad, and *value the smallest one if
 * it is too small, else the largest. Never for a device's index (read_here). */
static mt_status
outside(mt_tensor *index, int64_t low, int64_t size, bool *bad, int64_t *value)
{
    mt_tensor *mn = NULL, *mx = NULL;
    mt_scalar a, b;
    *bad = false;
    if (mt_tensor_numel(index) == 0 || !read_here(index)) {
        return MT_OK;
    }
    mt_status st = mt_op_amin(index, 0, NULL, false, &mn);
    if (st == MT_OK && (st = mt_op_amax(index, 0, NULL, false, &mx)) == MT_OK &&
        (st = mt_tensor_item(mn, &a)) == MT_OK && (st = mt_tensor_item(mx, &b)) == MT_OK) {
        int64_t lo = mt_scalar_to_int(a), hi = mt_scalar_to_int(b);
        *bad = lo < low || hi >= size;
        *value = lo < low ? lo : hi;
    }
    mt_tensor_clear(&mn);
    mt_tensor_clear(&mx);
    return st;
}

/* The target of an op along dim: self (in place) or a contiguous copy, seen with at least one
 * dim (a 0-dim self is one element of a 1-dim one); *out is what the op returns. */
static mt_status
target_of(mt_tensor *self, bool inplace, mt_tensor **view, mt_tensor **out)
{
    mt_status st = inplace ? (*out = mt_tensor_retain(self), MT_OK) : mt_copy_contiguous(self, out);
    if (st == MT_OK && (*out)->ndim == 0) {
        st = mt_op_view(*out, 1, (const int64_t[]){1}, view);
    } else if (st == MT_OK) {
        *view = mt_tensor_retain(*out);
    }
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

// target (..., n, ...), index (k) int32/int64, values (..., k, ...) of target's rank:
// target[..., index[j], ...] = values[..., j, ...] (+= with accumulate), by scatter_(_add_)
// with index expanded to values' shape, whose kernel checks index within [0, n)
static mt_status
scatter_along(mt_tensor *target, int dim, mt_tensor *index, mt_tensor *values, bool accumulate)
{
    mt_tensor *wide = NULL, *shaped = NULL, *full = NULL;
    int64_t shape[MT_MAX_DIMS];
    for (int d = 0; d < values->ndim; d++) {
        shape[d] = d == dim ? mt_tensor_numel(index) : 1;
    }
    mt_status st = index->dtype == MT_INT64
                       ? (wide = mt_tensor_retain(index), MT_OK)
                       : mt_op__to_copy(index, MT_INT64, mt_tensor_device(index), &wide);
    if (st == MT_OK && (st = mt_op_reshape(wide, values->ndim, shape, &shaped)) == MT_OK &&
        (st = mt_op_expand(shaped, values->ndim, values->sizes, &full)) == MT_OK) {
        st = accumulate ? mt_op_scatter_add_(target, dim, full, values, NULL)
                        : mt_op_scatter_(target, dim, full, values, NULL, NULL);
    }
    mt_tensor_clear(&full);
    mt_tensor_clear(&shaped);
    mt_tensor_clear(&wide);
    return st;
}

/* target[..., index, ...] = values (+= with accumulate), index (k) or 0-dim along dim; with
 * nonnegative (index_add_, index_copy_: only [0, n) is valid), a device's index scatters
 * (scatter_along), whose kernel checks that range, where index_put_'s takes [-n, n). */
static mt_status
put_along(mt_tensor *target, int dim, mt_tensor *index, mt_tensor *values, bool accumulate,
          bool nonnegative)
{
    if (nonnegative && !read_here(index)) {
        return scatter_along(target, dim, index, values, accumulate);
    }
    mt_tensor *idx[MT_MAX_DIMS] = {NULL};
    int64_t k = mt_tensor_numel(index);
    mt_status st = mt_op_reshape(index, 1, &k, &idx[dim]);
    if (st == MT_OK) {
        st = mt_op_index_put_(target, dim + 1, idx, values, accumulate, NULL);
    }
    mt_tensor_clear(&idx[dim]);
    return st;
}

/* mt_composite_<op> and mt_composite_<op>_: impl(a, inplace) */
#define COMPOSITE_PAIR(op)                     \
    mt_status mt_composite_##op(mt_args *a)    \
    {                                          \
        return op(a, false);                   \
    }                                          \
    mt_status mt_composite_##op##_(mt_args *a) \
    {                                          \
        return op(a, true);                    \
    }

/* Returns the op's result (target) in a->out[0] when st is MT_OK, else drops it. */
static mt_status
finish(mt_args *a, mt_status st, mt_tensor *target, mt_tensor *view)
{
    mt_tensor_release(view);
    if (st) {
        mt_tensor_release(target);
        return st;
    }
    a->out[0] = target;
    return MT_OK;
}

/* ---- take, take_along_dim ---- */

// self (any shape), index (I) int64 -> out (I): the elements of self flattened at index
// (negative ones count from the end)
mt_status
mt_composite_take(mt_args *a)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *flat = NULL;
    int64_t n = mt_tensor_numel(self), k = mt_tensor_numel(index), v = 0;
    bool bad;
    if (index->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "take(): Expected a long tensor for index, but got %s",
                       mt_dtype_scalar_name(index->dtype));
    }
    if (n == 0 && k != 0) {
        return mt_fail(MT_EINDEX, "take(): tried to take from an empty tensor");
    }
    mt_status st = outside(index, -n, n, &bad, &v);
    if (st) {
        return st;
    }
    if (bad) {
        return mt_fail(MT_EINDEX,
                       "out of range: tried to access index %" PRId64 " on a tensor of %" PRId64
                       " elements.",
                       v, n);
    }
    if ((st = mt_op_reshape(self, 1, &n, &flat)) == MT_OK) {
        st = mt_op_index(flat, 1, &index, &a->out[0]);
    }
    mt_tensor_clear(&flat);
    return st;
}

// self (S), indices (I) int64 of self's rank, broadcast with S but along dim -> out:
// gather(self, dim, indices); without a dim, both flattened
mt_status
mt_composite_take_along_dim(mt_args *a)
{
    mt_tensor *self = a->t[0], *indices = a->t[1], *x = NULL, *i = NULL;
    mt_status st;
    if (a->i_none & 1u) {
        int64_t n = mt_tensor_numel(self), k = mt_tensor_numel(indices);
        if ((st = mt_op_view(self, 1, &n, &x)) == MT_OK &&
            (st = mt_op_view(indices, 1, &k, &i)) == MT_OK) {
            st = mt_op_gather(x, 0, i, &a->out[0]);
        }
        goto out_release;
    }
    if (self->ndim != indices->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "torch.take_along_dim(): input and indices should have the same number of "
                       "dimensions, but got %d dimensions for input, and %d dimensions for indices",
                       self->ndim, indices->ndim);
    }
    if (indices->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME,
                       "torch.take_along_dim(): dtype of indices should be Long but got %s",
                       mt_dtype_scalar_name(indices->dtype));
    }
    int d, nb;
    if ((st = mt_wrap_dim(a->i[0], self->ndim, &d))) {
        return st;
    }
    int64_t want[MT_MAX_DIMS], b[MT_MAX_DIMS];
    int n = self->ndim;
    /* indices take self's shape but along dim, self takes indices' but along dim */
    memcpy(want, self->sizes, sizeof(int64_t) * (size_t)n);
    if (n > 0) {
        want[d] = indices->sizes[d];
    }
    if ((st = mt_broadcast_shapes(n, want, n, indices->sizes, &nb, b)) ||
        (st = mt_op_expand(indices, nb, b, &i))) {
        goto out_release;
    }
    memcpy(want, indices->sizes, sizeof(int64_t) * (size_t)n);
    if (n > 0) {
        want[d] = self->sizes[d];
    }
    if ((st = mt_broadcast_shapes(n, want, n, self->sizes, &nb, b)) ||
        (st = mt_op_expand(self, nb, b, &x))) {
        goto out_release;
    }
    st = mt_op_gather(x, d, i, &a->out[0]);
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&i);
    return st;
}

/* ---- index_add ---- */

/* PyTorch's checks of index_add (index_func_meta_impl), dim wrapped. */
static mt_status
check_index_add(const mt_tensor *self, int dim, const mt_tensor *index, const mt_tensor *source)
{
    char b1[256], b2[256];
    int64_t k = mt_tensor_numel(index);
    if (index->ndim > 1) {
        return mt_fail(MT_EINDEX,
                       "index_add_(): Index is supposed to be a vector, but got dim: %d with type: "
                       "%s and size: %s",
                       index->ndim, mt_dtype_scalar_name(index->dtype),
                       mt_format_sizes(b1, sizeof(b1), index->ndim, index->sizes));
    }
    if (index->dtype != MT_INT64 && index->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME,
                       "index_add_(): Expected dtype int32/int64 for index but got: %s",
                       mt_dtype_scalar_name(index->dtype));
    }
    if (self->dtype != source->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "index_add_(): self (%s) and source (%s) must have the same scalar type",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(source->dtype));
    }
    if (dim != 0 && dim >= source->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "index_add_(): Indexing dim %d is out of bounds of the source tensor with "
                       "dim %d",
                       dim, source->ndim);
    }
    int64_t along = source->ndim ? source->sizes[dim] : 1;
    if (k != along) {
        return mt_fail(MT_ERUNTIME,
                       "index_add_(): Number of indices (%" PRId64 ") should be equal to "
                       "source.size(dim): (%" PRId64 "), for dim: %d",
                       k, along, dim);
    }
    bool same = self->ndim == 0 || source->ndim == 0 || self->ndim == source->ndim;
    for (int d = 0; same && d < self->ndim && source->ndim; d++) {
        same = d == dim || self->sizes[d] == source->sizes[d];
    }
    if (!same || (self->ndim != 0) != (source->ndim != 0)) {
        return mt_fail(MT_ERUNTIME,
                       "source tensor shape must match self tensor shape, excluding the specified "
                       "dimension. Got self.shape = %s source.shape = %s",
                       mt_format_sizes(b1, sizeof(b1), self->ndim, self->sizes),
                       mt_format_sizes(b2, sizeof(b2), source->ndim, source->sizes));
    }
    return MT_OK;
}

// self (..., n, ...), index (k), source (..., k, ...) of self's dtype:
// self[..., index[j], ...] += alpha * source[..., j, ...]
static mt_status
index_add(mt_args *a, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *source = a->t[2];
    mt_tensor *target = NULL, *view = NULL, *scaled = NULL, *shaped = NULL;
    int d;
    int64_t v = 0;
    bool bad;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st || (st = check_index_add(self, d, index, source))) {
        return st;
    }
    int64_t size = self->ndim ? self->sizes[d] : 1;
    if ((st = outside(index, 0, size, &bad, &v))) {
        return st;
    }
    if (bad && self->ndim <= 1) {
        return mt_fail(MT_EINDEX, "index out of range in self");
    }
    if (bad) { /* PyTorch's words differ for slices of more than one element */
        return mt_fail(MT_ERUNTIME,
                       "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, v,
                       d, size);
    }
    if ((st = target_of(self, inplace, &view, &target))) {
        return st;
    }
    mt_scalar alpha = a->s[0];
    bool one = alpha.type == MT_BOOL ? alpha.v.b : mt_scalar_to_double(alpha) == 1.0;
    if (one) {
        scaled = mt_tensor_retain(source);
    } else {
        mt_tensor *k = NULL;
        /* alpha in self's dtype, as PyTorch's kernel casts it (2.5 adds 2 to an int tensor) */
        if ((st = mt_tensor_scalar(alpha, self->dtype, &k)) == MT_OK) {
            st = mt_op_mul(source, k, &scaled);
        }
        mt_tensor_clear(&k);
    }
    if (st == MT_OK && source->ndim == 0) {
        st = mt_op_reshape(scaled, 1, (const int64_t[]){1}, &shaped);
    } else if (st == MT_OK) {
        shaped = mt_tensor_retain(scaled);
    }
    if (st == MT_OK) {
        st = put_along(view, d, index, shaped, true, true);
    }
    mt_tensor_clear(&scaled);
    mt_tensor_clear(&shaped);
    return finish(a, st, target, view);
}

COMPOSITE_PAIR(index_add)

/* ---- index_copy ---- */

/* PyTorch's checks of index_copy (its meta function), dim wrapped. */
static mt_status
check_index_copy(const mt_tensor *self, int dim, const mt_tensor *index, const mt_tensor *source)
{
    int64_t k = mt_tensor_numel(index);
    if (index->ndim >= 2) {
        return mt_fail(MT_EINDEX, "index_copy_(): Index should have dimension 1 or 0 (got %d)",
                       index->ndim);
    }
    if (source->ndim == 0 && k != 1) {
        return mt_fail(MT_EINDEX,
                       "index_copy_(): When source is scalar, index should have one element (got "
                       "%" PRId64 ")",
                       k);
    }
    if (source->ndim != self->ndim && source->ndim != 0 && self->ndim != 0) {
        return mt_fail(MT_EINDEX,
                       "index_copy_(): When source and destination are not scalars, their "
                       "dimensionality must match. Source dimensionality (%d), destination "
                       "dimensionality (%d)",
                       source->ndim, self->ndim);
    }
    if (index->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "index_copy_(): Expected a long tensor for index, but got %s",
                       mt_dtype_scalar_name(index->dtype));
    }
    if (self->dtype != source->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "index_copy_(): self and source expected to have the same dtype, but got "
                       "(self) %s and (source) %s",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(source->dtype));
    }
    /* the slices: each one's sizes without dim */
    int64_t ss[MT_MAX_DIMS], cs[MT_MAX_DIMS];
    int ns = 0, nc = 0;
    for (int d = 0; d < self->ndim; d++) {
        if (d != dim) {
            ss[ns++] = self->sizes[d];
        }
    }
    for (int d = 0; d < source->ndim; d++) {
        if (d != dim) {
            cs[nc++] = source->sizes[d];
        }
    }
    if (ns != nc || memcmp(ss, cs, sizeof(int64_t) * (size_t)ns) != 0) {
        char b1[256] = "", b2[256] = "";
        for (int j = 0, used = 0; j < ns; j++) {
            used += snprintf(b1 + used, sizeof(b1) - (size_t)used, j ? " %" PRId64 : "%" PRId64,
                             ss[j]);
        }
        for (int j = 0, used = 0; j < nc; j++) {
            used += snprintf(b2 + used, sizeof(b2) - (size_t)used, j ? " %" PRId64 : "%" PRId64,
                             cs[j]);
        }
        return mt_fail(MT_ERUNTIME,
                       "index_copy_(): Source/destination tensor must have same slice shapes. "
                       "Destination slice shape: %s at dimension %d and source slice shape: %s at "
                       "dimension 0.",
                       b1, dim, b2);
    }
    if (source->ndim != 0 && k != source->sizes[dim]) {
        return mt_fail(MT_EINDEX,
                       "index_copy_(): Number of indices (%" PRId64 ") should be equal to "
                       "source.size(dim) (%" PRId64 ")",
                       k, source->sizes[dim]);
    }
    return MT_OK;
}

// self (..., n, ...), index (k) int64, source (..., k, ...) of self's dtype:
// self[..., index[j], ...] = source[..., j, ...]
static mt_status
index_copy(mt_args *a, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *source = a->t[2];
    mt_tensor *target = NULL, *view = NULL, *shaped = NULL;
    int d;
    int64_t v = 0;
    bool bad;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st || (st = check_index_copy(self, d, index, source))) {
        return st;
    }
    int64_t size = self->ndim ? self->sizes[d] : 1;
    if ((st = outside(index, 0, size, &bad, &v))) {
        return st;
    }
    if (bad) {
        return mt_fail(MT_EINDEX,
                       "index_copy_(): index %" PRId64 " is out of bounds for dimension %d with "
                       "size %" PRId64,
                       v, d, size);
    }
    if ((st = target_of(self, inplace, &view, &target))) {
        return st;
    }
    st = source->ndim == 0 ? mt_op_reshape(source, 1, (const int64_t[]){1}, &shaped)
                           : (shaped = mt_tensor_retain(source), MT_OK);
    if (st == MT_OK) {
        st = put_along(view, d, index, shaped, false, true);
    }
    mt_tensor_clear(&shaped);
    return finish(a, st, target, view);
}

COMPOSITE_PAIR(index_copy)

/* ---- index_fill ---- */

// self (..., n, ...), index (k) int64 (negative ones count from the end), value a number or a
// 0-dim tensor: self[..., index[j], ...] = value
static mt_status
index_fill(mt_args *a, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *value = a->t[2];
    mt_tensor *target = NULL, *view = NULL, *fill = NULL;
    if (index->dtype != MT_INT64) {
        return mt_fail(MT_EINDEX, "index_fill_(): Expected dtype int64 for index.");
    }
    if (!value->is_wrapped_number && value->ndim != 0) {
        return mt_fail(MT_ERUNTIME,
                       "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                       "with %d dimension(s).",
                       value->ndim);
    }
    int d;
    int64_t v = 0;
    bool bad;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    if (index->ndim > 1) {
        return mt_fail(MT_ERUNTIME, "Index has to be a vector/scalar");
    }
    /* a 0-dim tensor's value converts checked into self's dtype, as a number does (which the
     * binding layer checked); one on a device is read by the copy below */
    mt_scalar value_item;
    if (!value->is_wrapped_number && mt_tensor_device(value).type == MT_CPU &&
        ((st = mt_tensor_item(value, &value_item)) ||
         (st = mt_check_scalar_fits(value_item, self->dtype)))) {
        return st;
    }
    int64_t size = self->ndim ? self->sizes[d] : 1;
    if ((st = outside(index, -size, size, &bad, &v))) {
        return st;
    }
    if (bad) {
        return mt_fail(MT_EINDEX,
                       "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, v,
                       d, size);
    }
    if ((st = target_of(self, inplace, &view, &target))) {
        return st;
    }
    /* the value in self's dtype, on self's device (PyTorch takes it as a number): a number, or
     * a CPU value whose gradient autograd does not record, goes to index_put_ as a number,
     * which the device's fill_ kernel writes there (no host-to-device copy); any other value is
     * copied over */
    if (value->is_wrapped_number || (mt_tensor_device(value).type == MT_CPU &&
                                     !(mt_grad_enabled() && mt_tensor_requires_grad(value)))) {
        mt_scalar item;
        if ((st = mt_tensor_item(value, &item)) == MT_OK) {
            st = mt_tensor_scalar(item, self->dtype, &fill);
        }
    } else {
        st = mt_op__to_copy(value, self->dtype, mt_tensor_device(self), &fill);
    }
    if (st == MT_OK) {
        st = put_along(view, d, index, fill, false, false);
    }
    mt_tensor_clear(&fill);
    return finish(a, st, target, view);
}

COMPOSITE_PAIR(index_fill)

/* ---- masked_scatter ---- */

// self (S) on a device, m (S) bool, flat (n > 0) of self's dtype: the same as scatter_masked
// without a read back, as PyTorch's CUDA kernel. The k-th element of self where m holds (row-
// major) takes flat[k]: k is the count of m's ones before it (an int64 cumsum less m itself),
// and index_select's kernel checks k < n on the device (more ones in m than elements in source
// fail there, reported at the next synchronisation). The elements m leaves read flat[0].
static mt_status
scatter_masked_on_device(mt_tensor *self, mt_tensor *m, mt_tensor *flat)
{
    mt_tensor *line = NULL, *ones = NULL, *count = NULL, *before = NULL, *pos = NULL;
    mt_tensor *picked = NULL, *values = NULL, *merged = NULL;
    int64_t numel = mt_tensor_numel(m);
    mt_status st = mt_op_reshape(m, 1, &numel, &line);
    if (st == MT_OK && (st = mt_op__to_copy(line, MT_INT64, mt_tensor_device(m), &ones)) == MT_OK &&
        (st = mt_op_cumsum(ones, 0, MT_INT64, &count)) == MT_OK &&
        (st = mt_op_sub(count, ones, mt_scalar_int(1), &before)) == MT_OK &&
        (st = mt_op_mul(before, ones, &pos)) == MT_OK &&
        (st = mt_op_index_select(flat, 0, pos, &picked)) == MT_OK &&
        (st = mt_op_view(picked, self->ndim, self->sizes, &values)) == MT_OK &&
        (st = mt_op_where(m, values, self, &merged)) == MT_OK) {
        st = mt_op_copy_(self, merged, NULL);
    }
    mt_tensor_clear(&line);
    mt_tensor_clear(&ones);
    mt_tensor_clear(&count);
    mt_tensor_clear(&before);
    mt_tensor_clear(&pos);
    mt_tensor_clear(&picked);
    mt_tensor_clear(&values);
    mt_tensor_clear(&merged);
    return st;
}

// self (S), mask bool broadcast to S, source (any shape, of self's dtype): the elements of self
// where mask holds, in row-major order, get source's first elements. On the CPU (and for an empty
// source) the ones of mask are counted first, for PyTorch's error.
static mt_status
scatter_masked(mt_tensor *self, mt_tensor *mask, mt_tensor *source)
{
    mt_tensor *m = NULL, *count = NULL, *flat = NULL, *values = NULL;
    mt_scalar c;
    int64_t n = mt_tensor_numel(source);
    mt_status st = mt_op_expand(mask, self->ndim, self->sizes, &m);
    if (st == MT_OK && !read_here(self) && n > 0) {
        if ((st = mt_op_reshape(source, 1, &n, &flat)) == MT_OK) {
            st = scatter_masked_on_device(self, m, flat);
        }
        goto out_release;
    }
    if (st || (st = mt_op_sum(m, 0, NULL, false, -1, &count)) || (st = mt_tensor_item(count, &c))) {
        goto out_release;
    }
    if (n < mt_scalar_to_int(c)) {
        st = mt_fail(MT_ERUNTIME, "Number of elements of source < number of ones in mask");
        goto out_release;
    }
    if ((st = mt_op_reshape(source, 1, &n, &flat)) == MT_OK &&
        (st = mt_op_narrow(flat, 0, 0, mt_scalar_to_int(c), &values)) == MT_OK) {
        st = mt_op_index_put_(self, 1, &m, values, false, NULL);
    }
out_release:
    mt_tensor_clear(&m);
    mt_tensor_clear(&count);
    mt_tensor_clear(&flat);
    mt_tensor_clear(&values);
    return st;
}

static mt_status
check_masked_scatter(const mt_tensor *self, const mt_tensor *mask, const mt_tensor *source)
{
    if (mask->dtype != MT_BOOL) {
        return mt_fail(MT_ERUNTIME,
                       "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                       mt_dtype_scalar_name(mask->dtype));
    }
    if (self->dtype != source->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "masked_scatter: expected self and source to have same dtypes but got%s "
                       "and %s",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(source->dtype));
    }
    return MT_OK;
}

mt_status
mt_composite_masked_scatter_(mt_args *a)
{
    mt_status st = check_masked_scatter(a->t[0], a->t[1], a->t[2]);
    if (st || (st = mt_check_writable(a->t[0])) ||
        (st = scatter_masked(a->t[0], a->t[1], a->t[2]))) {
        return st;
    }
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

// out = a copy of self and mask broadcast together, masked_scatter_ed
mt_status
mt_composite_masked_scatter(mt_args *a)
{
    mt_tensor *self = a->t[0], *mask = a->t[1], *wide = NULL, *target = NULL;
    mt_status st = check_masked_scatter(self, mask, a->t[2]);
    int nb;
    int64_t b[MT_MAX_DIMS];
    if (st ||
        (st = mt_broadcast_shapes(mask->ndim, mask->sizes, self->ndim, self->sizes, &nb, b)) ||
        (st = mt_op_expand(self, nb, b, &wide)) || (st = mt_copy_contiguous(wide, &target))) {
        mt_tensor_clear(&wide);
        return st;
    }
    mt_tensor_clear(&wide);
    st = scatter_masked(target, mask, a->t[2]);
    return finish(a, st, target, mt_tensor_retain(target));
}
