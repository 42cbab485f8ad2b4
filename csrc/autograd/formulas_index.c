/* Backward formulas of the diagonal and rearranging ops (diag_embed, roll, rot90; diagonal,
 * trace and narrow_copy share formulas.c's mt_grad_embed, transpose_/t_ use formulas.c's) and of the index family added beside
 * them: take, index_add, index_copy, index_fill, masked_scatter and scatter_reduce, each as
 * PyTorch's derivatives.yaml writes it; and _euclidean_dist, cdist's matrix-product path.
 *
 * The composites with no row here (diag, tile, repeat_interleave, the stacks, kron, cross,
 * cdist's other paths, take_along_dim ...) record through their parts. */
#include <string.h>

#include "autograd/formula_chain.h"
#include "autograd/formulas.h"

mt_status
mt_grad_diag_embed(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_diagonal(g[0], n->args.i[0], n->args.i[1], n->args.i[2], &gi[0]);
}

// rolled back: the same dims, the shifts negated
mt_status
mt_grad_roll(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *shifts = &n->args.l[0], *dims = &n->args.l[1];
    int64_t back[MT_MAX_DIMS];
    for (int k = 0; k < shifts->n; k++) {
        back[k] = -shifts->v[k];
    }
    return mt_op_roll(g[0], shifts->n, back, dims->none ? 0 : dims->n, dims->none ? NULL : dims->v,
                      &gi[0]);
}

mt_status
mt_grad_rot90(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *dims = &n->args.l[0];
    return mt_op_rot90(g[0], -n->args.i[0], dims->none ? 0 : dims->n, dims->none ? NULL : dims->v,
                       &gi[0]);
}

// self (S), index (I): g (I) added into zeros (numel(S)) at index, seen as S
mt_status
mt_grad_take(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *m = &n->in_meta[0];
    int64_t numel = mt_numel(m->ndim, m->sizes);
    mt_tensor *index = n->saved[1], *z = NULL;
    mt_status st = mt_op_zeros(1, &numel, m->dtype, m->device, false, &z);
    if (st == MT_OK && (st = mt_op_index_put_(z, 1, &index, g[0], true, NULL)) == MT_OK) {
        st = mt_op_reshape(z, m->ndim, m->sizes, &gi[0]);
    }
    mt_tensor_clear(&z);
    return st;
}

/* g's slices at index along dim, shaped as the source they came from (edge e's input). */
static mt_status
picked(mt_node *n, mt_tensor *g, int e, mt_tensor **out)
{
    mt_tensor *sel = NULL;
    const mt_meta *m = &n->in_meta[e];
    mt_status st = mt_op_index_select(g, n->args.i[0], n->saved[1], &sel);
    if (st == MT_OK) {
        st = mt_op_reshape(sel, m->ndim, m->sizes, out);
    }
    mt_tensor_clear(&sel);
    return st;
}

/* g with zeros at index along dim: the places an index_copy or index_fill overwrote. */
static mt_status
cleared(mt_node *n, mt_tensor *g, mt_tensor **out)
{
    mt_tensor *zero = NULL;
    mt_status st = mt_ags_number(0, &zero);
    if (st == MT_OK) {
        st = mt_op_index_fill(g, n->args.i[0], n->saved[1], zero, out);
    }
    mt_tensor_clear(&zero);
    return st;
}

// self += alpha * source at index: self gets g, source alpha * g at index
mt_status
mt_grad_index_add(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    gi[0] = n->edges[0].node ? mt_tensor_retain(g[0]) : NULL;
    if (n->edges[1].node == NULL) {
        return MT_OK;
    }
    mt_tensor *sel = NULL;
    mt_status st = picked(n, g[0], 1, &sel);
    double alpha = mt_scalar_to_double(n->args.s[0]);
    if (st == MT_OK && alpha != 1.0) {
        st = mt_ag_scale(sel, alpha, &gi[1]);
        mt_tensor_clear(&sel);
    } else if (st == MT_OK) {
        gi[1] = sel;
    }
    return st;
}

// self[index] = source: self gets g but at index, source g at index
mt_status
mt_grad_index_copy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = n->edges[0].node ? cleared(n, g[0], &gi[0]) : MT_OK;
    return st || n->edges[1].node == NULL ? st : picked(n, g[0], 1, &gi[1]);
}

// self[index] = value: self gets g but at index; a tensor value the sum of g at the distinct
// indices
mt_status
mt_grad_index_fill(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = n->edges[0].node ? cleared(n, g[0], &gi[0]) : MT_OK;
    if (st || n->edges[1].node == NULL) {
        return st;
    }
    mt_tensor *u = NULL, *inv = NULL, *cnt = NULL, *sel = NULL;
    if ((st = mt_op__unique2(n->saved[1], true, false, false, &u, &inv, &cnt)) == MT_OK &&
        (st = mt_op_index_select(g[0], n->args.i[0], u, &sel)) == MT_OK) {
        st = mt_op_sum(sel, 0, NULL, false, -1, &gi[1]);
    }
    mt_tensor_clear(&u);
    mt_tensor_clear(&inv);
    mt_tensor_clear(&cnt);
    mt_tensor_clear(&sel);
    return st;
}

// self where mask holds gets source's first elements: self g but there, source (its numel)
// the elements of g there, then zeros, in source's shape
mt_status
mt_grad_masked_scatter(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *mask = n->saved[1], *zero = NULL;
    mt_status st = MT_OK;
    if (n->edges[0].node && (st = mt_ags_number(0, &zero)) == MT_OK) {
        st = mt_op_masked_fill(g[0], mask, zero, &gi[0]);
    }
    mt_tensor_clear(&zero);
    if (st || n->edges[1].node == NULL) {
        return st;
    }
    const mt_meta *m = &n->in_meta[1];
    mt_tensor *parts[2] = {NULL, NULL}, *flat = NULL;
    int64_t numel = mt_numel(m->ndim, m->sizes);
    if ((st = mt_op_masked_select(g[0], mask, &parts[0])) == MT_OK) {
        int64_t rest = numel - parts[0]->sizes[0];
        if ((st = mt_op_zeros(1, &rest, g[0]->dtype, m->device, false, &parts[1])) == MT_OK &&
            (st = mt_op_cat(2, parts, 0, &flat)) == MT_OK) {
            st = mt_op_reshape(flat, m->ndim, m->sizes, &gi[1]);
        }
    }
    mt_tensor_clear(&parts[0]);
    mt_tensor_clear(&parts[1]);
    mt_tensor_clear(&flat);
    return st;
}

/* ---- scatter_reduce ---- */

/* The saved tensors and arguments of a scatter_reduce node. */
typedef struct reduce_ctx {
    mt_tensor *self, *index, *src, *result;
    int64_t dim;
    bool include_self;
} reduce_ctx;

/* *out = x with 1 where mask holds. */
static mt_status
ones_where(mt_tensor *x, mt_tensor *mask, mt_tensor **out)
{
    mt_tensor *one = NULL;
    mt_status st = mt_ags_number(1, &one);
    if (st == MT_OK) {
        st = mt_op_masked_fill(x, mask, one, out);
    }
    mt_tensor_clear(&one);
    return st;
}

/* *out = how many of the values reduced into each element of self were t (t of self's shape,
 * s of src's: 1 where they count), t's own counting: t.scatter_add(dim, index, s). */
static mt_status
count_into(const reduce_ctx *c, mt_tensor *t, mt_tensor *s, mt_tensor **out)
{
    return mt_op_scatter_add(t, c->dim, c->index, s, out);
}

// mean: each value's share 1 / N, N the values averaged into its element
static mt_status
grad_mean(const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    mt_tensor *base = NULL, *ones = NULL, *count = NULL, *none = NULL, *n = NULL, *gg = NULL;
    mt_tensor *ng = NULL;
    mt_device dev = mt_tensor_device(g);
    mt_status st = c->include_self ? mt_op_ones(g->ndim, g->sizes, g->dtype, dev, false, &base)
                                   : mt_op_zeros(g->ndim, g->sizes, g->dtype, dev, false, &base);
    if (st || (st = mt_op_ones(c->src->ndim, c->src->sizes, g->dtype, dev, false, &ones)) ||
        (st = count_into(c, base, ones, &count)) ||
        (st = mt_ags_with_number(MT_OP_eq, count, 0, &none)) ||
        (st = ones_where(count, none, &n)) || (st = mt_op_div(g, n, NULL, gs)) ||
        (st = mt_op_gather(g, c->dim, c->index, &gg)) ||
        (st = mt_op_gather(n, c->dim, c->index, &ng))) {
        goto out_release;
    }
    st = mt_op_div(gg, ng, NULL, gsrc);
out_release:
    mt_tensor_clear(&base);
    mt_tensor_clear(&ones);
    mt_tensor_clear(&count);
    mt_tensor_clear(&none);
    mt_tensor_clear(&n);
    mt_tensor_clear(&gg);
    mt_tensor_clear(&ng);
    return st;
}

// amax, amin: g shared evenly among the values equal to the result
static mt_status
grad_extreme(const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    mt_tensor *value = NULL, *self_is = NULL, *src_is = NULL, *fself = NULL, *fsrc = NULL;
    mt_tensor *count = NULL, *share = NULL, *picked_share = NULL;
    mt_status st = mt_op_gather(c->result, c->dim, c->index, &value);
    if (st || (st = mt_op_eq(c->self, c->result, &self_is)) ||
        (st = mt_op_eq(c->src, value, &src_is)) ||
        (st = mt_op__to_copy(self_is, g->dtype, MT_DEVICE_NONE, &fself)) ||
        (st = mt_op__to_copy(src_is, g->dtype, MT_DEVICE_NONE, &fsrc)) ||
        (st = count_into(c, fself, fsrc, &count)) || (st = mt_op_div(g, count, NULL, &share)) ||
        (st = mt_op_mul(fself, share, gs)) ||
        (st = mt_op_gather(share, c->dim, c->index, &picked_share))) {
        goto out_release;
    }
    st = mt_op_mul(fsrc, picked_share, gsrc);
out_release:
    mt_tensor_clear(&value);
    mt_tensor_clear(&self_is);
    mt_tensor_clear(&src_is);
    mt_tensor_clear(&fself);
    mt_tensor_clear(&fsrc);
    mt_tensor_clear(&count);
    mt_tensor_clear(&share);
    mt_tensor_clear(&picked_share);
    return st;
}

// prod: each value's gradient is g times the product of the others; zeros are left out of the
// quotients, and a value that is the only zero in its product gets the others' product
static mt_status
grad_prod(const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    const char *prod = "prod";
    mt_device dev = mt_tensor_device(g);
    mt_tensor *self0 = NULL, *mself = NULL, *mself_res = NULL, *gm = NULL, *src0 = NULL;
    mt_tensor *fsrc0 = NULL, *z = NULL, *zeros_in = NULL, *zeros = NULL, *single = NULL;
    mt_tensor *one_zero = NULL, *msrc = NULL, *msrc_res = NULL, *gms = NULL, *with_single = NULL;
    mt_tensor *gr = NULL, *others = NULL, *msrc0 = NULL, *quot = NULL;
    /* self: g * (the product with self's zeros taken as 1) / self (its zeros as 1) */
    mt_status st = mt_ags_with_number(MT_OP_eq, c->self, 0, &self0);
    if (st || (st = ones_where(c->self, self0, &mself)) ||
        (st = mt_op_scatter_reduce(mself, c->dim, c->index, c->src, prod, c->include_self,
                                   &mself_res)) ||
        (st = mt_op_mul(g, mself_res, &gm)) || (st = mt_op_div(gm, mself, NULL, gs))) {
        goto out_release;
    }
    /* src: the zeros reaching each element of self, seen from each src value */
    if ((st = mt_ags_with_number(MT_OP_eq, c->src, 0, &src0)) ||
        (st = mt_op__to_copy(src0, c->self->dtype, MT_DEVICE_NONE, &fsrc0)) ||
        (st = mt_op_zeros(c->self->ndim, c->self->sizes, c->self->dtype, dev, false, &z)) ||
        (st = count_into(c, z, fsrc0, &zeros_in)) ||
        (st = mt_op_gather(zeros_in, c->dim, c->index, &zeros)) ||
        (st = mt_ags_with_number(MT_OP_eq, zeros, 1, &one_zero)) ||
        (st = mt_op_logical_and(src0, one_zero, &single))) {
        goto out_release;
    }
    /* the only zero: the product of the others (itself as 1); else result / src (zeros as 1) */
    if ((st = ones_where(c->src, single, &msrc)) ||
        (st = mt_op_scatter_reduce(c->self, c->dim, c->index, msrc, prod, c->include_self,
                                   &msrc_res)) ||
        (st = mt_op_mul(g, msrc_res, &gms)) ||
        (st = mt_op_gather(gms, c->dim, c->index, &with_single)) ||
        (st = mt_op_mul(g, c->result, &gr)) || (st = mt_op_gather(gr, c->dim, c->index, &others)) ||
        (st = ones_where(c->src, src0, &msrc0)) || (st = mt_op_div(others, msrc0, NULL, &quot))) {
        goto out_release;
    }
    st = mt_op_where(single, with_single, quot, gsrc);
out_release:
    mt_tensor_clear(&self0);
    mt_tensor_clear(&mself);
    mt_tensor_clear(&mself_res);
    mt_tensor_clear(&gm);
    mt_tensor_clear(&src0);
    mt_tensor_clear(&fsrc0);
    mt_tensor_clear(&z);
    mt_tensor_clear(&zeros_in);
    mt_tensor_clear(&zeros);
    mt_tensor_clear(&one_zero);
    mt_tensor_clear(&single);
    mt_tensor_clear(&msrc);
    mt_tensor_clear(&msrc_res);
    mt_tensor_clear(&gms);
    mt_tensor_clear(&with_single);
    mt_tensor_clear(&gr);
    mt_tensor_clear(&others);
    mt_tensor_clear(&msrc0);
    mt_tensor_clear(&quot);
    return st;
}

// self (S), index and src (I): the gradients of scatter_reduce's self and src for its reduction
mt_status
mt_grad_scatter_reduce(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    reduce_ctx c = {n->saved[0],     n->saved[1],  n->saved[2],
                    n->saved_out[0], n->args.i[0], n->args.b[0]};
    const char *reduce = n->args.str[0];
    mt_tensor *gs = NULL, *gsrc = NULL;
    mt_status st;
    if (strcmp(reduce, "sum") == 0) {
        gs = mt_tensor_retain(g[0]);
        st = mt_op_gather(g[0], c.dim, c.index, &gsrc);
    } else if (strcmp(reduce, "mean") == 0) {
        st = grad_mean(&c, g[0], &gs, &gsrc);
    } else if (strcmp(reduce, "prod") == 0) {
        st = grad_prod(&c, g[0], &gs, &gsrc);
    } else {
        st = grad_extreme(&c, g[0], &gs, &gsrc);
    }
    if (st == MT_OK && !c.include_self) { /* self's values at the scattered places were unused */
        mt_tensor *zero = NULL, *kept = NULL;
        if ((st = mt_ags_number(0, &zero)) == MT_OK &&
            (st = mt_op_scatter(gs, c.dim, c.index, zero, NULL, &kept)) == MT_OK) {
            mt_tensor_release(gs);
            gs = kept;
        }
        mt_tensor_clear(&zero);
    }
    if (st == MT_OK) {
        gi[0] = n->edges[0].node ? mt_tensor_retain(gs) : NULL;
        gi[1] = n->edges[1].node ? mt_tensor_retain(gsrc) : NULL;
    }
    mt_tensor_clear(&gs);
    mt_tensor_clear(&gsrc);
    return st;
}

// x1 (*, P, M), x2 (*, R, M), res (*, P, R) the distances: with ratio = g / res (0 where res is
// 0, the subgradient PyTorch takes), dx1 = x1 * rowsum(ratio) - ratio x2 and
// dx2 = x2 * colsum(ratio) - ratio^T x1
mt_status
mt_grad__euclidean_dist(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x1 = n->saved[0], *x2 = n->saved[1], *res = n->saved_out[0], *r = NULL;
    const int64_t last = -1;
    tmp s = {0};
    mt_tensor *zero = num(&s, 0.0);
    mt_tensor *ratio = sel(&s, bin(&s, MT_OP_eq, res, zero), zero, bin(&s, MT_OP_div, g[0], res));
    mt_tensor *rt = failed(&s, ratio, ratio) ? NULL
                                             : own(&s, mt_op_transpose(ratio, -2, -1, &r), &r);
    if (wants(n, 0)) {
        mt_tensor *rs = failed(&s, ratio, ratio)
                            ? NULL
                            : own(&s, mt_op_sum(ratio, 1, &last, true, -1, &r), &r);
        give(&s, bin(&s, MT_OP_sub, bin(&s, MT_OP_mul, x1, rs), bin(&s, MT_OP_matmul, ratio, x2)),
             &gi[0]);
    }
    if (wants(n, 1)) {
        mt_tensor *cs = failed(&s, rt, rt) ? NULL
                                           : own(&s, mt_op_sum(rt, 1, &last, true, -1, &r), &r);
        give(&s, bin(&s, MT_OP_sub, bin(&s, MT_OP_mul, x2, cs), bin(&s, MT_OP_matmul, rt, x1)),
             &gi[1]);
    }
    return finish(&s);
}
