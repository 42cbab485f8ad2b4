/* Joining, splitting and gridding, for every device: atleast_1d/2d/3d, stack, hstack, vstack,
 * row_stack, dstack, column_stack, tensor_split (sections or indices), meshgrid,
 * cartesian_prod, combinations and block_diag.
 *
 * As in PyTorch: the stacks are unsqueezed or atleast_*d views joined by cat, tensor_split's
 * pieces are slice views, meshgrid's grids are expanded views, cartesian_prod stacks the
 * flattened grids and combinations selects the increasing ones. Nothing here reads or writes
 * elements itself. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"

/* ---- atleast_*d ---- */

/* out = self with at least n dims: a 0-dim self reshaped to ones, a 1-dim (k) one to (1, k) or
 * (1, k, 1), a 2-dim one (m, k) to (m, k, 1); self itself when it has n dims or more. */
static mt_status
at_least(mt_tensor *self, int n, mt_tensor **out)
{
    mt_tensor *u = NULL;
    mt_status st = MT_OK;
    if (self->ndim >= n) {
        *out = mt_tensor_retain(self);
    } else if (self->ndim == 0) {
        st = mt_op_reshape(self, n, (const int64_t[]){1, 1, 1}, out);
    } else if (self->ndim == 1) {
        if ((st = mt_op_unsqueeze(self, 0, n == 2 ? out : &u)) == MT_OK && n == 3) {
            st = mt_op_unsqueeze(u, -1, out);
        }
    } else {
        st = mt_op_unsqueeze(self, -1, out);
    }
    mt_tensor_clear(&u);
    return st;
}

mt_status
mt_composite_atleast_1d(mt_args *a)
{
    return at_least(a->t[0], 1, &a->out[0]);
}

mt_status
mt_composite_atleast_2d(mt_args *a)
{
    return at_least(a->t[0], 2, &a->out[0]);
}

mt_status
mt_composite_atleast_3d(mt_args *a)
{
    return at_least(a->t[0], 3, &a->out[0]);
}

/* ---- stack, hstack, vstack, row_stack, dstack, column_stack ---- */

/* How a stack shapes each tensor before joining them with cat. */
typedef enum stack_kind {
    STACK_NEW,    /* unsqueezed at the given dim, along it (stack) */
    STACK_H,      /* atleast_1d, along dim 1 (dim 0 when they are 1-D) */
    STACK_V,      /* atleast_2d, along dim 0 */
    STACK_D,      /* atleast_3d, along dim 2 */
    STACK_COLUMN, /* 0- and 1-dim ones as columns (k, 1), along dim 1 (dim 0 when 1-D) */
} stack_kind;

/* out = the n > 0 tensors of a->tl shaped as kind says, joined by cat; dim is STACK_NEW's. */
static mt_status
join(mt_args *a, stack_kind kind, int dim, const char *name)
{
    int n = a->ntl;
    mt_tensor **parts = calloc((size_t)n, sizeof(*parts));
    if (parts == NULL) {
        return mt_fail(MT_ENOMEM, "%s: out of memory for %d tensors", name, n);
    }
    mt_status st = MT_OK;
    for (int k = 0; k < n && st == MT_OK; k++) {
        mt_tensor *t = a->tl[k];
        if (kind == STACK_NEW) {
            st = mt_op_unsqueeze(t, dim, &parts[k]);
        } else if (kind == STACK_COLUMN && t->ndim <= 1) {
            int64_t col[2] = {mt_tensor_numel(t), 1};
            st = mt_op_reshape(t, 2, col, &parts[k]);
        } else {
            st = at_least(t, kind == STACK_V ? 2 : kind == STACK_D ? 3 : 1, &parts[k]);
        }
    }
    if (st == MT_OK) {
        if (kind != STACK_NEW) {
            dim = kind == STACK_V ? 0 : kind == STACK_D ? 2 : parts[0]->ndim == 1 ? 0 : 1;
        }
        st = mt_op_cat(n, parts, dim, &a->out[0]);
    }
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&parts[k]);
    }
    free(parts);
    return st;
}

static mt_status
stack_as(mt_args *a, stack_kind kind, const char *name)
{
    if (a->ntl == 0) {
        return mt_fail(MT_ERUNTIME, "%s expects a non-empty TensorList", name);
    }
    return join(a, kind, 0, name);
}

// tensors: n tensors of one shape S; out (S with a dim of size n inserted at dim)
mt_status
mt_composite_stack(mt_args *a)
{
    char b1[256], b2[256];
    int n = a->ntl;
    if (n == 0) {
        return mt_fail(MT_ERUNTIME, "stack expects a non-empty TensorList");
    }
    const mt_tensor *first = a->tl[0];
    int dim;
    mt_status st = mt_wrap_dim(a->i[0], first->ndim + 1, &dim);
    if (st) {
        return st;
    }
    for (int k = 1; k < n; k++) {
        const mt_tensor *t = a->tl[k];
        if (t->ndim != first->ndim ||
            memcmp(t->sizes, first->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0) {
            return mt_fail(MT_ERUNTIME,
                           "stack expects each tensor to be equal size, but got %s at entry 0 and "
                           "%s at entry %d",
                           mt_format_sizes(b1, sizeof(b1), first->ndim, first->sizes),
                           mt_format_sizes(b2, sizeof(b2), t->ndim, t->sizes), k);
        }
    }
    return join(a, STACK_NEW, dim, "stack");
}

mt_status
mt_composite_hstack(mt_args *a)
{
    return stack_as(a, STACK_H, "hstack");
}

mt_status
mt_composite_vstack(mt_args *a)
{
    return stack_as(a, STACK_V, "vstack");
}

mt_status
mt_composite_dstack(mt_args *a)
{
    return stack_as(a, STACK_D, "dstack");
}

mt_status
mt_composite_column_stack(mt_args *a)
{
    return stack_as(a, STACK_COLUMN, "column_stack");
}

/* ---- tensor_split ---- */

/* dim of self wrapped, after PyTorch's check that self has a dim to split. */
static mt_status
split_dim(const mt_tensor *self, int64_t dim, int *d)
{
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME,
                       "tensor_split expected at least a 1-dimensional tensor, but got "
                       "a tensor with 0 dims");
    }
    return mt_wrap_dim(dim, self->ndim, d);
}

// self (..., n, ...) -> `sections` slices along dim, the first n % sections one longer
mt_status
mt_composite_tensor_split(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t sections = a->i[0];
    int d;
    mt_status st = split_dim(self, a->i[1], &d);
    if (st) {
        return st;
    }
    if (sections <= 0) {
        return mt_fail(MT_ERUNTIME, "number of sections must be larger than 0, got %" PRId64,
                       sections);
    }
    if ((st = mt_args_alloc_outl(a, sections))) {
        return st;
    }
    int64_t size = self->sizes[d], start = 0;
    for (int64_t k = 0; k < sections && st == MT_OK; k++) {
        int64_t len = size / sections + (k < size % sections);
        st = mt_op_slice(self, d, start, start + len, 1, &a->outl[k]);
        start += len;
    }
    if (st) {
        mt_args_clear_outl(a);
    }
    return st;
}

// self (..., n, ...) -> slices [0, i0), [i0, i1), ..., [ik, n) along dim (as Python slices)
mt_status
mt_composite_tensor_split_indices(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *idx = &a->l[0];
    const int64_t *iv = mt_intlist_values(idx); /* int[*]: any length */
    int d;
    mt_status st = split_dim(self, a->i[0], &d);
    if (st || (st = mt_args_alloc_outl(a, idx->n + 1))) {
        return st;
    }
    int64_t start = 0;
    for (int k = 0; k <= idx->n && st == MT_OK; k++) {
        int64_t end = k < idx->n ? iv[k] : self->sizes[d];
        st = mt_op_slice(self, d, start, end, 1, &a->outl[k]);
        start = end;
    }
    if (st) {
        mt_args_clear_outl(a);
    }
    return st;
}

/* ---- meshgrid, cartesian_prod, combinations ---- */

/* The grids of n 0- or 1-dim tensors t (xy: the first two swapped, as NumPy's Cartesian
 * indexing): grid k is t[k] viewed along dim k and expanded to all their lengths. */
static mt_status
grids_of(int n, mt_tensor *const *t, bool xy, mt_tensor **grids)
{
    if (n == 0) {
        return mt_fail(MT_ERUNTIME, "meshgrid expects a non-empty TensorList");
    }
    if (n > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "meshgrid: only tensors with up to %d dims are supported",
                       MT_MAX_DIMS);
    }
    for (int k = 0; k + 1 < n; k++) {
        if (t[k]->dtype != t[k + 1]->dtype) {
            return mt_fail(MT_ERUNTIME, "meshgrid expects all tensors to have the same dtype");
        }
        if (!mt_device_eq(mt_tensor_device(t[k]), mt_tensor_device(t[k + 1]))) {
            return mt_fail(MT_ERUNTIME, "meshgrid expects all tensors to have the same device");
        }
    }
    int order[MT_MAX_DIMS];
    int64_t shape[MT_MAX_DIMS], view[MT_MAX_DIMS];
    for (int k = 0; k < n; k++) {
        order[k] = xy && n >= 2 && k < 2 ? 1 - k : k;
    }
    for (int k = 0; k < n; k++) {
        const mt_tensor *x = t[order[k]];
        if (x->ndim > 1) {
            return mt_fail(MT_ERUNTIME,
                           "torch.meshgrid: Expected 0D or 1D tensor in the tensor "
                           "list but got: a %dD tensor",
                           x->ndim);
        }
        shape[k] = mt_tensor_numel(x);
        view[k] = 1;
    }
    mt_status st = MT_OK;
    for (int k = 0; k < n && st == MT_OK; k++) {
        mt_tensor *v = NULL;
        view[k] = -1;
        if ((st = mt_op_view(t[order[k]], n, view, &v)) == MT_OK) {
            st = mt_op_expand(v, n, shape, &grids[order[k]]);
        }
        view[k] = 1;
        mt_tensor_clear(&v);
    }
    if (st) {
        for (int k = 0; k < n; k++) {
            mt_tensor_clear(&grids[k]);
        }
    }
    return st;
}

// tensors (n1), ..., (nk) -> k grids (n1, ..., nk) ("ij"; "xy" swaps the first two dims)
mt_status
mt_composite_meshgrid(mt_args *a)
{
    const char *indexing = a->str[0] ? a->str[0] : "ij";
    bool xy = strcmp(indexing, "xy") == 0;
    if (!xy && strcmp(indexing, "ij") != 0) {
        if (a->ntl == 0) {
            return mt_fail(MT_ERUNTIME, "meshgrid expects a non-empty TensorList");
        }
        return mt_fail(MT_ERUNTIME,
                       "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                       "received: %s",
                       indexing);
    }
    mt_tensor *grids[MT_MAX_DIMS] = {NULL};
    mt_status st = grids_of(a->ntl, a->tl, xy, grids);
    if (st || (st = mt_args_alloc_outl(a, a->ntl))) {
        for (int k = 0; k < MT_MAX_DIMS; k++) {
            mt_tensor_clear(&grids[k]);
        }
        return st;
    }
    for (int k = 0; k < a->ntl; k++) {
        a->outl[k] = grids[k];
    }
    return MT_OK;
}

/* out (N, k) = the k grids of t, each flattened, stacked as columns. */
static mt_status
stack_grids(int k, mt_tensor **grids, mt_tensor **out)
{
    mt_tensor *flat[MT_MAX_DIMS] = {NULL};
    mt_status st = MT_OK;
    for (int j = 0; j < k && st == MT_OK; j++) {
        st = mt_op_flatten(grids[j], 0, -1, &flat[j]);
    }
    if (st == MT_OK) {
        st = mt_op_stack(k, flat, 1, out);
    }
    for (int j = 0; j < k; j++) {
        mt_tensor_clear(&flat[j]);
    }
    return st;
}

// tensors (n1), ..., (nk) -> out (n1 * ... * nk, k): every combination of one element of each,
// in row-major order; one tensor comes back as it is
mt_status
mt_composite_cartesian_prod(mt_args *a)
{
    char buf[256];
    for (int k = 0; k < a->ntl; k++) {
        const mt_tensor *t = a->tl[k];
        if (t->ndim != 1) {
            return mt_fail(MT_ERUNTIME, "Expect a 1D vector, but got shape %s",
                           mt_format_sizes(buf, sizeof(buf), t->ndim, t->sizes));
        }
    }
    if (a->ntl == 1) {
        a->out[0] = mt_tensor_retain(a->tl[0]);
        return MT_OK;
    }
    mt_tensor *grids[MT_MAX_DIMS] = {NULL};
    mt_status st = grids_of(a->ntl, a->tl, false, grids);
    if (st == MT_OK) {
        st = stack_grids(a->ntl, grids, &a->out[0]);
    }
    for (int k = 0; k < MT_MAX_DIMS; k++) {
        mt_tensor_clear(&grids[k]);
    }
    return st;
}

// self (n) -> out (C, r): the r-element combinations of self's elements, in lexicographic order
// of their positions i1 < i2 < ... (<= with replacement): r grids of self, masked by the
// increasing positions
mt_status
mt_composite_combinations(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t r = a->i[0];
    char buf[256];
    if (self->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "Expect a 1D vector, but got shape %s",
                       mt_format_sizes(buf, sizeof(buf), self->ndim, self->sizes));
    }
    if (r < 0) {
        return mt_fail(MT_ERUNTIME, "Expect a non-negative number, but got %" PRId64, r);
    }
    int64_t zero = 0, n = self->sizes[0];
    if (r == 0) {
        return mt_op_empty(1, &zero, self->dtype, mt_tensor_device(self), false, &a->out[0]);
    }
    if (r > MT_MAX_DIMS) {
        return mt_fail(MT_EVALUE, "combinations: minitorch supports r up to %d", MT_MAX_DIMS);
    }
    mt_tensor *copies[MT_MAX_DIMS], *grids[MT_MAX_DIMS] = {NULL}, *pos[MT_MAX_DIMS] = {NULL};
    mt_tensor *range = NULL, *mask = NULL, *picked[MT_MAX_DIMS] = {NULL};
    mt_status st = mt_op_arange(mt_scalar_int(0), mt_scalar_int(n), mt_scalar_int(1), MT_INT64,
                                mt_tensor_device(self), false, &range);
    if (st) {
        return st;
    }
    for (int k = 0; k < r; k++) {
        copies[k] = self;
    }
    if ((st = grids_of((int)r, copies, false, grids))) {
        goto out_release;
    }
    for (int k = 0; k < r; k++) {
        copies[k] = range;
    }
    if ((st = grids_of((int)r, copies, false, pos)) ||
        (st = mt_op_ones(pos[0]->ndim, pos[0]->sizes, MT_BOOL, mt_tensor_device(self), false,
                         &mask))) {
        goto out_release;
    }
    for (int k = 0; k + 1 < r && st == MT_OK; k++) {
        mt_tensor *inc = NULL;
        st = a->b[0] ? mt_op_le(pos[k], pos[k + 1], &inc) : mt_op_lt(pos[k], pos[k + 1], &inc);
        if (st == MT_OK) {
            st = mt_op_logical_and_(mask, inc, NULL);
        }
        mt_tensor_clear(&inc);
    }
    for (int k = 0; k < r && st == MT_OK; k++) {
        st = mt_op_masked_select(grids[k], mask, &picked[k]);
    }
    if (st == MT_OK) {
        st = mt_op_stack((int)r, picked, 1, &a->out[0]);
    }
out_release:
    for (int k = 0; k < MT_MAX_DIMS; k++) {
        mt_tensor_clear(&grids[k]);
        mt_tensor_clear(&pos[k]);
        mt_tensor_clear(&picked[k]);
    }
    mt_tensor_clear(&range);
    mt_tensor_clear(&mask);
    return st;
}

/* ---- block_diag ---- */

// tensors (each 0-, 1- or 2-dim, seen as (1, 1), (1, n) or (m, n)) -> out (sum m, sum n): each
// one a block on the diagonal, zeros elsewhere, in their promoted dtype; each row of blocks is
// zeros, a block and zeros joined by cat, and the rows are joined
mt_status
mt_composite_block_diag(mt_args *a)
{
    int n = a->ntl;
    mt_device dev = n ? mt_tensor_device(a->tl[0]) : MT_DEVICE_CPU;
    mt_dtype dt = n ? a->tl[0]->dtype : MT_DEFAULT_FLOAT;
    int64_t cols = 0;
    for (int k = 0; k < n; k++) {
        const mt_tensor *t = a->tl[k];
        if (t->ndim > 2) {
            return mt_fail(MT_ERUNTIME,
                           "torch.block_diag: Input tensors must have 2 or fewer "
                           "dimensions. Input %d has %d dimensions",
                           k, t->ndim);
        }
        if (!mt_device_eq(mt_tensor_device(t), dev)) {
            return mt_fail(MT_ERUNTIME, "torch.block_diag: input tensors must all be on the same "
                                        "device.");
        }
        dt = mt_promote_types(dt, t->dtype);
        cols += t->ndim == 0 ? 1 : t->sizes[t->ndim - 1];
    }
    if (n <= 0) {
        return mt_op_empty(2, (const int64_t[]){1, 0}, dt, dev, false, &a->out[0]);
    }
    mt_tensor **row = calloc((size_t)n, sizeof(*row));
    if (row == NULL) {
        return mt_fail(MT_ENOMEM, "block_diag: out of memory for %d tensors", n);
    }
    mt_status st = MT_OK;
    int64_t left = 0;
    for (int k = 0; k < n && st == MT_OK; k++) {
        const mt_tensor *t = a->tl[k];
        int64_t m = t->ndim == 2 ? t->sizes[0] : 1, w = t->ndim == 0 ? 1 : t->sizes[t->ndim - 1];
        int64_t shape[2] = {m, w}, before[2] = {m, left}, after[2] = {m, cols - left - w};
        mt_tensor *parts[3] = {NULL, NULL, NULL}, *block = NULL;
        if ((st = mt_op_reshape(a->tl[k], 2, shape, &block)) == MT_OK &&
            (st = mt_op__to_copy(block, dt, dev, &parts[1])) == MT_OK &&
            (st = mt_op_zeros(2, before, dt, dev, false, &parts[0])) == MT_OK &&
            (st = mt_op_zeros(2, after, dt, dev, false, &parts[2])) == MT_OK) {
            st = mt_op_cat(3, parts, 1, &row[k]);
        }
        mt_tensor_clear(&block);
        for (int j = 0; j < 3; j++) {
            mt_tensor_clear(&parts[j]);
        }
        left += w;
    }
    if (st == MT_OK) {
        st = mt_op_cat(n, row, 0, &a->out[0]);
    }
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&row[k]);
    }
    free(row);
    return st;
}
