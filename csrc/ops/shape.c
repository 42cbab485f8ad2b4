/* Shape ops made of other ops, for every device: concat, split, chunk, unbind, narrow,
 * movedim, expand_as, view_as, reshape_as, repeat (stack is with the other stacks, stacks.c).
 *
 * As in PyTorch, the pieces of split and chunk are narrow views (narrow -> slice -> as_strided),
 * unbind's are selects and repeat is one copy_ between two as_strided views. Nothing here reads
 * or writes elements itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/reduce_dims.h"

mt_status
mt_composite_concat(mt_args *a)
{
    return mt_op_cat(a->ntl, a->tl, a->i[0], &a->out[0]);
}

// self (..., size, ...) -> out (..., length, ...): elements start .. start + length of dim
mt_status
mt_composite_narrow(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t start = a->i[1], length = a->i[2];
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "narrow() cannot be applied to a 0-dim tensor.");
    }
    if (length < 0) {
        return mt_fail(MT_ERUNTIME, "narrow(): length must be non-negative.");
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t size = self->sizes[d];
    if (start < -size || start > size) {
        return mt_fail(MT_EINDEX,
                       "start out of range (expected to be in range of [%" PRId64 ", %" PRId64
                       "], but got %" PRId64 ")",
                       -size, size, start);
    }
    if (start < 0) {
        start += size;
    }
    if (start > size - length) {
        return mt_fail(MT_ERUNTIME,
                       "start (%" PRId64 ") + length (%" PRId64 ") exceeds dimension size (%" PRId64
                       ").",
                       start, length, size);
    }
    return mt_op_slice(self, d, start, start + length, 1, &a->out[0]);
}

/* n narrow views of self along dim into a->outl, one after the other: piece k is sizes[k]
 * long, or, without sizes, `size` long except the last, which takes what is left. PyTorch
 * names their node SplitWithSizesBackward0 with sizes, else SplitBackward0. */
static mt_status
narrow_pieces(mt_args *a, mt_tensor *self, int dim, int64_t n, int64_t size, const int64_t *sizes)
{
    mt_status st = mt_args_alloc_outl(a, n);
    int64_t start = 0;
    for (int64_t k = 0; k < n && st == MT_OK; k++) {
        int64_t len = sizes ? sizes[k] : k < n - 1 ? size : self->sizes[dim] - start;
        st = mt_op_narrow(self, dim, start, len, &a->outl[k]);
        start += len;
    }
    if (st) {
        mt_args_clear_outl(a);
        return st;
    }
    mt_autograd_multi_output_views(a->outl, n,
                                   sizes ? "SplitWithSizesBackward0" : "SplitBackward0");
    return MT_OK;
}

/* The number of pieces of split_size that cover dim_size: at least one. */
static int64_t
pieces_of(int64_t dim_size, int64_t split_size)
{
    return dim_size == 0 ? 1 : (dim_size - 1) / split_size + 1;
}

// self (..., size, ...) -> pieces (..., split_size, ...), the last one shorter
mt_status
mt_composite_split(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t split_size = a->i[0];
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "split expects at least a 1-dimensional tensor");
    }
    if (split_size < 0) {
        return mt_fail(MT_ERUNTIME,
                       "split expects split_size be non-negative, but got split_size=%" PRId64,
                       split_size);
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[1], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t dim_size = self->sizes[d];
    if (split_size == 0 && dim_size != 0) {
        return mt_fail(MT_ERUNTIME,
                       "split_size can only be 0 if dimension size is 0, but got dimension size "
                       "of %" PRId64,
                       dim_size);
    }
    return narrow_pieces(a, self, d, pieces_of(dim_size, split_size), split_size, NULL);
}

// self (..., size, ...) -> pieces (..., split_sizes[k], ...), the sizes adding up to size
mt_status
mt_composite_split_with_sizes(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *sizes = &a->l[0];
    const int64_t *sv = mt_intlist_values(sizes); /* int[*]: any length */
    char buf[1024];
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "split expects at least a 1-dimensional tensor");
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t total = 0;
    for (int k = 0; k < sizes->n; k++) {
        if (sv[k] < 0) {
            return mt_fail(MT_ERUNTIME,
                           "split_with_sizes expects split_sizes have only non-negative entries, "
                           "but got split_sizes=%s",
                           mt_format_sizes(buf, sizeof(buf), sizes->n, sv));
        }
    }
    for (int k = 0; k < sizes->n && total <= self->sizes[d]; k++) {
        total += sv[k]; /* stops once past the dim's size, so it cannot overflow */
    }
    if (total != self->sizes[d]) {
        return mt_fail(MT_ERUNTIME,
                       "split_with_sizes expects split_sizes to sum exactly to %" PRId64
                       " (input tensor's size at dimension %" PRId64 "), but got split_sizes=%s",
                       self->sizes[d], a->i[0], mt_format_sizes(buf, sizeof(buf), sizes->n, sv));
    }
    return narrow_pieces(a, self, d, sizes->n, 0, sv);
}

// self (..., size, ...) -> `chunks` pieces at most, of ceil(size / chunks) along dim
mt_status
mt_composite_chunk(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t chunks = a->i[0];
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "chunk expects at least a 1-dimensional tensor");
    }
    if (chunks <= 0) {
        return mt_fail(MT_ERUNTIME, "chunk expects `chunks` to be greater than 0, got: %" PRId64,
                       chunks);
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[1], self->ndim, &d);
    if (st) {
        return st;
    }
    int64_t dim_size = self->sizes[d];
    if (dim_size == 0) {
        /* An empty dim still gives `chunks` (empty) pieces, as PyTorch. */
        return narrow_pieces(a, self, d, chunks, 0, NULL);
    }
    /* PyTorch's chunk is a split (so that __torch_dispatch__ sees aten.split.Tensor) */
    mt_tensor **pieces = NULL;
    int n = 0;
    if ((st = mt_op_split(self, (dim_size - 1) / chunks + 1, d, &pieces, &n)) == MT_OK) {
        a->outl = pieces;
        a->noutl = n;
    }
    return st;
}

// self (..., n, ...) -> n tensors (..., ...): the selects along dim
mt_status
mt_composite_unbind(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as %" PRId64 " but tensor has no dimensions",
                       a->i[0]);
    }
    int d;
    mt_status st = mt_wrap_dim(a->i[0], self->ndim, &d);
    if (st || (st = mt_args_alloc_outl(a, self->sizes[d]))) {
        return st;
    }
    for (int64_t k = 0; k < self->sizes[d] && st == MT_OK; k++) {
        st = mt_op_select(self, d, k, &a->outl[k]);
    }
    if (st) {
        mt_args_clear_outl(a);
        return st;
    }
    mt_autograd_multi_output_views(a->outl, self->sizes[d], "UnbindBackward0");
    return MT_OK;
}

// self (any shape); out: a permutation of self in which dim source[k] is dim destination[k]
mt_status
mt_composite_movedim(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_intlist *src = &a->l[0], *dst = &a->l[1];
    char b1[256], b2[256];
    if (src->n != dst->n) {
        return mt_fail(MT_ERUNTIME,
                       "movedim: Invalid source or destination dims: source (%s dims) should "
                       "contain the same number of dims as destination (%s dims)",
                       mt_format_sizes(b1, sizeof(b1), src->n, src->v),
                       mt_format_sizes(b2, sizeof(b2), dst->n, dst->v));
    }
    int s[MT_MAX_DIMS], t[MT_MAX_DIMS];
    int64_t order[MT_MAX_DIMS];
    /* both lists in range first, then each without repeats, in PyTorch's order of checks */
    char repeated[2][300];
    snprintf(repeated[0], sizeof(repeated[0]), "movedim: repeated dim in `source` (%s)",
             mt_format_sizes(b1, sizeof(b1), src->n, src->v));
    snprintf(repeated[1], sizeof(repeated[1]), "movedim: repeated dim in `destination` (%s)",
             mt_format_sizes(b2, sizeof(b2), dst->n, dst->v));
    mt_status st;
    if ((st = mt_wrap_dims(src, self->ndim, NULL, s, NULL)) ||
        (st = mt_wrap_dims(dst, self->ndim, NULL, t, NULL)) ||
        (st = mt_wrap_dims(src, self->ndim, repeated[0], NULL, NULL)) ||
        (st = mt_wrap_dims(dst, self->ndim, repeated[1], NULL, NULL))) {
        return st;
    }
    /* The moved dims take their places; the others fill the free places in their order. */
    bool placed[MT_MAX_DIMS] = {false}, moved[MT_MAX_DIMS] = {false};
    for (int k = 0; k < src->n && self->ndim > 0; k++) {
        order[t[k]] = s[k];
        placed[t[k]] = moved[s[k]] = true;
    }
    for (int d = 0, from = 0; d < self->ndim; d++) {
        if (!placed[d]) {
            while (moved[from]) {
                from++;
            }
            order[d] = from++;
        }
    }
    return mt_op_permute(self, self->ndim, order, &a->out[0]);
}

mt_status
mt_composite_expand_as(mt_args *a)
{
    return mt_op_expand(a->t[0], a->t[1]->ndim, a->t[1]->sizes, &a->out[0]);
}

mt_status
mt_composite_view_as(mt_args *a)
{
    return mt_op_view(a->t[0], a->t[1]->ndim, a->t[1]->sizes, &a->out[0]);
}

mt_status
mt_composite_reshape_as(mt_args *a)
{
    return mt_op_reshape(a->t[0], a->t[1]->ndim, a->t[1]->sizes, &a->out[0]);
}

// self (S), repeats (R), len(R) >= dim(S); out (R * S, S padded with leading 1s): self tiled
mt_status
mt_composite_repeat(mt_args *a)
{
    mt_tensor *self = a->t[0], *res = NULL, *dst = NULL, *src = NULL;
    const mt_intlist *r = &a->l[0];
    if (r->n < self->ndim) {
        return mt_fail(MT_ERUNTIME, "Number of dimensions of repeat dims can not be smaller than "
                                    "number of dimensions of tensor");
    }
    int lead = r->n - self->ndim;
    int64_t target[MT_MAX_DIMS], cstrides[MT_MAX_DIMS];
    for (int d = 0; d < r->n; d++) {
        if (__builtin_mul_overflow(r->v[d], d < lead ? 1 : self->sizes[d - lead], &target[d])) {
            return mt_fail(MT_ERUNTIME, "repeat: the result's size overflows int64");
        }
    }
    mt_status st = mt_op_empty(r->n, target, self->dtype, mt_tensor_device(self), false, &res);
    if (st || mt_tensor_numel(res) == 0) {
        goto out_release;
    }
    /* The result seen as (r0, s0, r1, s1, ...) and self broadcast to that, with stride 0 on
     * the r dims; dims of size 1 are left out, which keeps the count within MT_MAX_DIMS in
     * all but extreme cases. */
    mt_contiguous_strides(r->n, target, cstrides);
    int64_t sizes[2 * MT_MAX_DIMS], dst_strides[2 * MT_MAX_DIMS], src_strides[2 * MT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < r->n; d++) {
        int64_t s = d < lead ? 1 : self->sizes[d - lead];
        if (r->v[d] != 1) {
            sizes[nd] = r->v[d];
            dst_strides[nd] = s * cstrides[d];
            src_strides[nd++] = 0;
        }
        if (s != 1) {
            sizes[nd] = s;
            dst_strides[nd] = cstrides[d];
            src_strides[nd++] = self->strides[d - lead];
        }
    }
    if (nd > MT_MAX_DIMS) {
        st = mt_fail(MT_ERUNTIME, "repeat: only tensors with up to %d dims are supported",
                     MT_MAX_DIMS);
        goto out_release;
    }
    if ((st = mt_op_as_strided(res, nd, sizes, nd, dst_strides, 0, &dst)) ||
        (st = mt_op_as_strided(self, nd, sizes, nd, src_strides, self->offset, &src))) {
        goto out_release;
    }
    st = mt_op_copy_(dst, src, NULL);
out_release:
    mt_tensor_clear(&dst);
    mt_tensor_clear(&src);
    if (st == MT_OK) {
        a->out[0] = res;
    } else {
        mt_tensor_clear(&res);
    }
    return st;
}
