/* Backward formulas of the shape and indexing ops: cat, flip, repeat, tril/triu, as_strided,
 * index_select, gather, scatter, scatter_add, masked_select, index and index_put_, plus the
 * small op calls formulas_reduce.c shares (formulas.h).
 *
 * The composite shape ops (narrow, split, chunk, unbind, movedim, expand_as, view_as,
 * reshape, index_put) have no row: their parts record (split's pieces are narrow's slices,
 * unbind's are selects). index and index_put_ keep their index tensors, a Tensor?[] argument
 * that a node's saved slots cannot hold, so they have their own Autograd kernels below, which
 * record through mt_autograd_record_custom with the indices as the node's state. */
#include <stdlib.h>
#include <string.h>

#include "autograd/formula_chain.h"

/* ---- shared op calls ---- */

/* v as an int64 number when it is an integer (int64 operands stay int64), else a float64 one */
static mt_scalar
number(double v)
{
    return v == (double)(int64_t)v ? mt_scalar_int((int64_t)v) : mt_scalar_float(v);
}

mt_status
mt_ags_number(double v, mt_tensor **out)
{
    mt_scalar k = number(v);
    return mt_tensor_scalar(k, k.type, out);
}

mt_status
mt_ags_with_number(mt_op op, mt_tensor *x, double v, mt_tensor **out)
{
    return mt_call_with_number(op, x, number(v), out);
}

mt_status
mt_ags_rerun_indices(const mt_node *n, mt_tensor *self, bool keepdim, mt_tensor **indices)
{
    mt_args a = n->args;
    a.t[0] = self;
    if (keepdim) {
        a.b[0] = true;
    }
    tmp s = {0};
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    mt_status st = mt_dispatch(n->formula->op, &a);
    mt_set_grad_enabled(was);
    if (own(&s, st, &a.out[0])) { /* the values, not wanted */
        *indices = a.out[1];
    }
    return finish(&s);
}

mt_status
mt_ags_where_number(mt_tensor *mask, double v, mt_tensor *x, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    give(&s, sel(&s, mask, own(&s, mt_ags_number(v, &r), &r), x), out);
    return finish(&s);
}

mt_status
mt_ags_nonzero(mt_tensor *x, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    give(&s, bin(&s, MT_OP_add, x, own(&s, mt_ags_with_number(MT_OP_eq, x, 0, &r), &r)), out);
    return finish(&s);
}

mt_status
mt_ags_sum_keep(mt_tensor *x, const bool *red, mt_tensor **out)
{
    int64_t dims[MT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d]) {
            dims[n++] = d;
        }
    }
    if (x->ndim > 0 && n == 0) { /* nothing reduced (an empty dim list means all) */
        *out = mt_tensor_retain(x);
        return MT_OK;
    }
    return mt_op_sum(x, n, x->ndim == 0 ? NULL : dims, true, -1, out);
}

mt_status
mt_ags_keep(mt_tensor *x, const mt_meta *m, const bool *red, mt_tensor **out)
{
    int64_t keep[MT_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) {
        keep[d] = red[d] ? 1 : m->sizes[d];
    }
    return mt_op_reshape(x, m->ndim, keep, out);
}

void
mt_ags_reduced(const mt_meta *m, const mt_intlist *dims, bool *red)
{
    bool all = dims->none || dims->n == 0;
    for (int d = 0; d < MT_MAX_DIMS; d++) {
        red[d] = all;
    }
    for (int k = 0; k < dims->n && !all; k++) {
        int d;
        if (mt_wrap_dim(dims->v[k], m->ndim, &d) == MT_OK) {
            red[d] = true;
        }
    }
}

/* ---- joining, flipping, tiling, triangles ---- */

// tensors (k of them) joined along dim: each gets its slice of g back
mt_status
mt_grad_cat(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    int d;
    mt_status st = mt_wrap_dim(n->args.i[0], n->out_meta[0].ndim, &d);
    int64_t start = 0;
    for (int e = 0; st == MT_OK && e < n->nedges; e++) {
        const mt_meta *m = &n->in_meta[e];
        if (m->ndim == 1 && m->sizes[0] == 0 && n->out_meta[0].ndim != 1) {
            /* a legacy empty (0,) tensor, which cat skips */
            st = n->edges[e].node ? mt_ag_zeros(m, &gi[e]) : MT_OK;
            continue;
        }
        if (n->edges[e].node) {
            st = mt_op_narrow(g[0], d, start, m->sizes[d], &gi[e]);
        }
        start += m->sizes[d];
    }
    return st;
}

mt_status
mt_grad_flip(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_flip(g[0], n->args.l[0].n, n->args.l[0].v, &gi[0]);
}

// self (S) tiled R times, len(R) >= dim(S); g (R_d * S'_d), S' = S with leading 1s: each
// dim d seen as (R_d, S'_d) and summed over the R_d copies
mt_status
mt_grad_repeat(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *m = &n->in_meta[0];
    const mt_intlist *r = &n->args.l[0];
    int lead = r->n - m->ndim;
    tmp s = {0};
    mt_tensor *cur = g[0], *t = NULL;
    for (int d = 0; d < r->n && s.st == MT_OK; d++) {
        if (r->v[d] == 1) {
            continue;
        }
        if (r->n + 1 > MT_MAX_DIMS) {
            s.st = mt_fail(MT_ERUNTIME, "repeat: only tensors with up to %d dims are supported",
                           MT_MAX_DIMS);
            break;
        }
        int64_t sizes[MT_MAX_DIMS];
        memcpy(sizes, cur->sizes, sizeof(int64_t) * (size_t)d);
        sizes[d] = r->v[d];
        sizes[d + 1] = d < lead ? 1 : m->sizes[d - lead];
        memcpy(sizes + d + 2, cur->sizes + d + 1, sizeof(int64_t) * (size_t)(r->n - d - 1));
        mt_tensor *split = own(&s, mt_op_reshape(cur, r->n + 1, sizes, &t), &t);
        cur = s.st ? NULL : own(&s, mt_op_sum(split, 1, (const int64_t[]){d}, false, -1, &t), &t);
    }
    if (s.st == MT_OK) {
        s.st = mt_op_reshape(cur, m->ndim, m->sizes, &gi[0]);
    }
    return finish(&s);
}

mt_status
mt_grad_tril(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_tril(g[0], n->args.i[0], &gi[0]);
}

mt_status
mt_grad_triu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_triu(g[0], n->args.i[0], &gi[0]);
}

/* ---- as_strided ---- */

/* *out = the int64 map of the memory of a tensor of geometry g on dev: element p of its span
 * holds the flat (row-major) index of the element stored there. */
static mt_tensor *
position_map(tmp *s, const mt_geometry *g, mt_device dev, int64_t numel)
{
    mt_tensor *r = NULL;
    mt_tensor *map = s->st ? NULL : own(s, mt_op_empty(1, &numel, MT_INT64, dev, false, &r), &r);
    mt_tensor *flat = s->st ? NULL
                            : own(s,
                                  mt_op_arange(mt_scalar_int(0), mt_scalar_int(numel),
                                               mt_scalar_int(1), MT_INT64, dev, false, &r),
                                  &r);
    mt_tensor *shaped = s->st ? NULL : own(s, mt_op_reshape(flat, g->ndim, g->sizes, &r), &r);
    mt_tensor *view = s->st ? NULL
                            : own(s,
                                  mt_op_as_strided(map, g->ndim, g->sizes, g->ndim, g->strides, 0,
                                                   &r),
                                  &r);
    if (view) {
        s->st = mt_op_copy_(view, shaped, NULL);
    }
    return s->st ? NULL : map;
}

/* Whether a tensor of geometry g fills its span exactly (mt_tensor_is_dense). */
static bool
dense(const mt_geometry *g)
{
    mt_tensor probe = {.ndim = g->ndim};
    memcpy(probe.sizes, g->sizes, sizeof(int64_t) * (size_t)g->ndim);
    memcpy(probe.strides, g->strides, sizeof(int64_t) * (size_t)g->ndim);
    return mt_tensor_is_dense(&probe);
}

// self (S), dense in memory; out (size) with stride, from storage_offset: each element of g is
// added to the element of self it read (several, where out's elements overlap). The geometries
// are the node's (n->user): an as_strided call's, or a view's and its base's (views.c)
mt_status
mt_grad_as_strided(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_view_state *vs = n->user;
    const mt_geometry *in = &vs->base, *out = &vs->view;
    const mt_meta *m = &n->in_meta[0];
    int64_t numel = mt_numel(m->ndim, m->sizes), count = mt_numel(out->ndim, out->sizes);
    int64_t from = out->offset - in->offset, last = from;
    if (count == 0 || numel == 0) {
        return mt_ag_zeros(m, &gi[0]);
    }
    for (int d = 0; d < out->ndim; d++) {
        last += (out->sizes[d] - 1) * out->strides[d];
    }
    if (!dense(in) || from < 0 || last >= numel) {
        return mt_fail(MT_ENOTIMPL,
                       "as_strided: minitorch's backward supports only inputs whose elements are "
                       "dense in memory and results that stay within them");
    }
    tmp s = {0};
    mt_tensor *map = position_map(&s, in, m->device, numel), *r = NULL;
    mt_tensor *idx = s.st ? NULL
                          : own(&s,
                                mt_op_as_strided(map, out->ndim, out->sizes, out->ndim,
                                                 out->strides, from, &r),
                                &r);
    mt_tensor *flat_idx = s.st ? NULL : own(&s, mt_op_reshape(idx, 1, &count, &r), &r);
    mt_tensor *flat_g = s.st ? NULL : own(&s, mt_op_reshape(g[0], 1, &count, &r), &r);
    mt_tensor *z = s.st ? NULL
                        : own(&s, mt_op_zeros(1, &numel, g[0]->dtype, m->device, false, &r), &r);
    if (z && (s.st = mt_op_index_put_(z, 1, &flat_idx, flat_g, true, NULL)) == MT_OK) {
        s.st = mt_op_reshape(z, m->ndim, m->sizes, &gi[0]);
    }
    return finish(&s);
}

/* ---- indexing along a dim ---- */

// self (S), index (k) or 0-dim along dim: g (S with k at dim) added into zeros at index
mt_status
mt_grad_index_select(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *index = n->saved[1];
    const mt_meta *m = &n->in_meta[0];
    int d;
    if (m->ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    mt_status st = mt_wrap_dim(n->args.i[0], m->ndim, &d);
    if (st) {
        return st;
    }
    tmp s = {0};
    int64_t k = mt_tensor_numel(index);
    mt_tensor *idx[MT_MAX_DIMS] = {NULL}, *r = NULL;
    idx[d] = own(&s, mt_op_reshape(index, 1, &k, &r), &r);
    mt_tensor *z = zeros_of(&s, m);
    if (z) {
        s.st = mt_op_index_put_(z, d + 1, idx, g[0], true, NULL);
    }
    give(&s, z, &gi[0]);
    return finish(&s);
}

// self (S), index (I) along dim -> out (I): g added into zeros at index
mt_status
mt_grad_gather(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *index = n->saved[1];
    if (n->in_meta[0].ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    tmp s = {0};
    mt_tensor *z = zeros_of(&s, &n->in_meta[0]);
    if (z) {
        s.st = mt_op_scatter_add(z, n->args.i[0], index, g[0], &gi[0]);
    }
    return finish(&s);
}

/* scatter and scatter_add's src: the elements of g it was written to. As PyTorch, src must be
 * shaped like index (else the engine reports the gradient's shape). */
static mt_status
src_grad(mt_node *n, mt_tensor *g, mt_tensor **out)
{
    mt_tensor *index = n->saved[1];
    return n->edges[1].node ? mt_op_gather(g, n->args.i[0], index, out) : MT_OK;
}

// self (S), index and src (I) along dim: self's gradient is g with the written places zeroed;
// with a reduce, none (PyTorch has no derivative for it)
mt_status
mt_grad_scatter(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *index = n->saved[1];
    if (n->args.str[0]) {
        return mt_fail(MT_ERUNTIME, "derivative for aten::scatter is not implemented");
    }
    tmp s = {0};
    if (wants(n, 0)) {
        mt_tensor *r = NULL;
        mt_tensor *zero = own(&s, mt_ags_number(0, &r), &r);
        if (zero) {
            s.st = mt_op_scatter(g[0], n->args.i[0], index, zero, NULL, &gi[0]);
        }
    }
    if (s.st == MT_OK) {
        s.st = src_grad(n, g[0], &gi[1]);
    }
    return finish(&s);
}

mt_status
mt_grad_scatter_add(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    gi[0] = n->edges[0].node ? mt_tensor_retain(g[0]) : NULL;
    return src_grad(n, g[0], &gi[1]);
}

// self (S), mask broadcast with it -> out (count): g written into zeros where the mask holds
mt_status
mt_grad_masked_select(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *mask = n->saved[1];
    const mt_meta *m = &n->in_meta[0];
    mt_meta shape = *m;
    tmp s = {0};
    s.st = mt_broadcast_shapes(m->ndim, m->sizes, mask->ndim, mask->sizes, &shape.ndim,
                               shape.sizes);
    /* A 0-dim bool index adds a dim to what it indexes, so a 0-dim self and mask are put into
     * as shape (1), the shape of g's values, and the result is viewed back. */
    bool scalar = shape.ndim == 0;
    if (scalar) {
        shape.ndim = 1;
        shape.sizes[0] = 1;
    }
    mt_tensor *r = NULL;
    mt_tensor *wide = s.st ? NULL : own(&s, mt_ag_expand_to(mask, &shape, &r), &r);
    mt_tensor *z = zeros_of(&s, &shape);
    if (z && (s.st = mt_op_index_put_(z, 1, &wide, g[0], false, NULL)) == MT_OK) {
        /* the engine sums a broadcast self's back */
        mt_tensor *v = scalar ? own(&s, mt_op_view(z, 0, NULL, &r), &r) : z;
        give(&s, v, &gi[0]);
    }
    return finish(&s);
}

/* ---- index and index_put_: Autograd kernels that keep the indices ---- */

typedef struct indices {
    int n;
    mt_tensor *idx[MT_MAX_DIMS]; /* owned; NULL entries skip a dim */
    long version[MT_MAX_DIMS];   /* each index's at save time: PyTorch saves them as variables */
    bool accumulate;
} indices;

/* The indices as recorded, or PyTorch's 'modified by an inplace operation' error: a mask or
 * index changed in place since would put the gradient elsewhere. */
static mt_status
indices_check(const indices *ix)
{
    for (int k = 0; k < ix->n; k++) {
        mt_status st = ix->idx[k] ? mt_autograd_check_version(ix->idx[k], ix->version[k]) : MT_OK;
        if (st) {
            return st;
        }
    }
    return MT_OK;
}

static void
indices_free(void *p)
{
    indices *s = p;
    for (int k = 0; s && k < s->n; k++) {
        mt_tensor_clear(&s->idx[k]);
    }
    free(s);
}

// self[indices]: g added into zeros at the same places
mt_status
mt_grad_index(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const indices *ix = n->user;
    tmp s = {0};
    s.st = indices_check(ix);
    mt_tensor *z = zeros_of(&s, &n->in_meta[0]);
    if (z && (s.st = mt_op_index_put_(z, ix->n, ix->idx, g[0], true, NULL)) == MT_OK) {
        give(&s, z, &gi[0]);
    }
    return finish(&s);
}

// self[indices] = values (+= with accumulate): values get g[indices]; self gets g, zeroed at
// the overwritten places unless accumulating
mt_status
mt_grad_index_put(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const indices *ix = n->user;
    tmp s = {0};
    s.st = indices_check(ix);
    if (s.st == MT_OK && wants(n, 0) && ix->accumulate) {
        give(&s, g[0], &gi[0]);
    } else if (s.st == MT_OK && wants(n, 0)) {
        mt_tensor *r = NULL;
        mt_tensor *zero = own(&s, mt_tensor_scalar(mt_scalar_int(0), g[0]->dtype, &r), &r);
        mt_tensor *c = s.st ? NULL : own(&s, mt_op_clone(g[0], &r), &r);
        if (c && (s.st = mt_op_index_put_(c, ix->n, ix->idx, zero, false, NULL)) == MT_OK) {
            give(&s, c, &gi[0]);
        }
    }
    if (s.st == MT_OK && wants(n, 1)) {
        s.st = mt_op_index(g[0], ix->n, ix->idx, &gi[1]);
    }
    return finish(&s);
}

/* The node (holding the indices) if an input needs grad, the op below the Autograd key, then
 * the node's outputs: index's result, or self for index_put_ (in place on self: autograd.c's
 * rules and history, CopySlices on a view). */
static mt_status
record_indexing(mt_op op, mt_args *a)
{
    const mt_formula *f = mt_autograd_formula(op);
    bool inplace = op == MT_OP_index_put_;
    mt_tensor *self = a->t[0], *values = inplace ? a->t[1] : NULL;
    mt_tensor *inputs[2] = {self, values};
    bool needs = (mt_tensor_requires_grad(self) || (values && mt_tensor_requires_grad(values))) &&
                 mt_autograd_dtype(self->dtype);
    mt_node *n = NULL;
    mt_status st = needs && inplace ? mt_autograd_check_inplace(self) : MT_OK;
    if (st == MT_OK && needs && (st = mt_autograd_node(f, values ? 2 : 1, inputs, &n)) == MT_OK) {
        indices *s = calloc(1, sizeof(*s));
        if (s == NULL) {
            st = mt_fail(MT_ENOMEM, "out of memory recording the autograd graph");
        } else {
            s->n = a->ntl;
            s->accumulate = inplace && a->b[0];
            for (int k = 0; k < a->ntl; k++) {
                s->idx[k] = a->tl[k] ? mt_tensor_retain(a->tl[k]) : NULL;
                s->version[k] = a->tl[k] ? mt_tensor_version(a->tl[k]) : 0;
            }
            n->user = s;
            n->user_free = indices_free;
        }
    }
    if (st) {
        goto out_release_node;
    }
    bool was = mt_grad_enabled();
    mt_set_grad_enabled(false);
    st = mt_redispatch(op, a, MT_KEY_AUTOGRAD);
    mt_set_grad_enabled(was);
    if (st || n == NULL) {
        goto out_release_node;
    }
    if (inplace) {
        n->nout = 1;
        mt_meta_of(self, &n->out_meta[0]);
        n->out_diff[0] = true;
        st = mt_autograd_rebase_history(self, n);
    } else {
        mt_autograd_set_outputs(n, 1, &a->out[0]);
    }
out_release_node:
    if (n) {
        mt_node_release(n);
    }
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

static mt_status
index_autograd(mt_args *a)
{
    return record_indexing(MT_OP_index, a);
}

static mt_status
index_put_autograd(mt_args *a)
{
    return record_indexing(MT_OP_index_put_, a);
}

/* unbind and the splits: whole below Autograd, then their pieces' view nodes (views.c) */
static mt_status
unbind_autograd(mt_args *a)
{
    return mt_autograd_pieces(a, MT_OP_unbind);
}

static mt_status
split_autograd(mt_args *a)
{
    return mt_autograd_pieces(a, MT_OP_split);
}

static mt_status
split_with_sizes_autograd(mt_args *a)
{
    return mt_autograd_pieces(a, MT_OP_split_with_sizes);
}

void
mt_autograd_register_own_kernels(void)
{
    mt_register_kernel(MT_OP_index, MT_KEY_AUTOGRAD, index_autograd, "mt_autograd_kernel");
    mt_register_kernel(MT_OP_index_put_, MT_KEY_AUTOGRAD, index_put_autograd, "mt_autograd_kernel");
    mt_register_kernel(MT_OP_max_pool2d, MT_KEY_AUTOGRAD, mt_autograd_max_pool2d,
                       "mt_autograd_kernel");
    mt_register_kernel(MT_OP_max_pool3d, MT_KEY_AUTOGRAD, mt_autograd_max_pool3d,
                       "mt_autograd_kernel");
    mt_register_kernel(MT_OP_layer_norm, MT_KEY_AUTOGRAD, mt_autograd_layer_norm,
                       "mt_autograd_kernel");
    mt_register_kernel(MT_OP_unbind, MT_KEY_AUTOGRAD, unbind_autograd, "mt_autograd_kernel");
    mt_register_kernel(MT_OP_split, MT_KEY_AUTOGRAD, split_autograd, "mt_autograd_kernel");
    mt_register_kernel(MT_OP_split_with_sizes, MT_KEY_AUTOGRAD, split_with_sizes_autograd,
                       "mt_autograd_kernel");
}
