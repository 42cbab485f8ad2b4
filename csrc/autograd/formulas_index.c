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
    mt_tensor *index = n->saved[1], *r = NULL;
    tmp s = {0};
    mt_tensor *z = own(&s, mt_op_zeros(1, &numel, m->dtype, m->device, false, &r), &r);
    if (z && (s.st = mt_op_index_put_(z, 1, &index, g[0], true, NULL)) == MT_OK) {
        s.st = mt_op_reshape(z, m->ndim, m->sizes, &gi[0]);
    }
    return finish(&s);
}

/* g's slices at index along dim, shaped as the source they came from (edge e's input). */
static mt_tensor *
picked(tmp *s, mt_node *n, mt_tensor *g, int e)
{
    const mt_meta *m = &n->in_meta[e];
    mt_tensor *r = NULL;
    mt_tensor *sel = s->st ? NULL
                           : own(s, mt_op_index_select(g, n->args.i[0], n->saved[1], &r), &r);
    return s->st ? NULL : own(s, mt_op_reshape(sel, m->ndim, m->sizes, &r), &r);
}

/* g with zeros at index along dim: the places an index_copy or index_fill overwrote. */
static mt_tensor *
cleared(tmp *s, mt_node *n, mt_tensor *g)
{
    mt_tensor *zero = number_of(s, 0), *r = NULL;
    return s->st ? NULL : own(s, mt_op_index_fill(g, n->args.i[0], n->saved[1], zero, &r), &r);
}

// self += alpha * source at index: self gets g, source alpha * g at index
mt_status
mt_grad_index_add(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (wants(n, 0)) {
        give(&s, g[0], &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, scaled(&s, picked(&s, n, g[0], 1), mt_scalar_to_double(n->args.s[0])), &gi[1]);
    }
    return finish(&s);
}

// self[index] = source: self gets g but at index, source g at index
mt_status
mt_grad_index_copy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (wants(n, 0)) {
        give(&s, cleared(&s, n, g[0]), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, picked(&s, n, g[0], 1), &gi[1]);
    }
    return finish(&s);
}

// self[index] = value: self gets g but at index; a tensor value the sum of g at the distinct
// indices
mt_status
mt_grad_index_fill(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    if (wants(n, 0)) {
        give(&s, cleared(&s, n, g[0]), &gi[0]);
    }
    if (s.st == MT_OK && wants(n, 1)) {
        mt_tensor *u = NULL, *inv = NULL, *cnt = NULL, *r = NULL;
        mt_status st = mt_op__unique2(n->saved[1], true, false, false, &u, &inv, &cnt);
        own(&s, st, &u);
        own(&s, st, &inv);
        own(&s, st, &cnt);
        mt_tensor *sel = s.st ? NULL : own(&s, mt_op_index_select(g[0], n->args.i[0], u, &r), &r);
        if (sel) {
            s.st = mt_op_sum(sel, 0, NULL, false, -1, &gi[1]);
        }
    }
    return finish(&s);
}

// self where mask holds gets source's first elements: self g but there, source (its numel)
// the elements of g there, then zeros, in source's shape
mt_status
mt_grad_masked_scatter(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *mask = n->saved[1], *r = NULL;
    tmp s = {0};
    if (wants(n, 0)) {
        mt_tensor *zero = number_of(&s, 0);
        if (zero) {
            s.st = mt_op_masked_fill(g[0], mask, zero, &gi[0]);
        }
    }
    if (s.st || !wants(n, 1)) {
        return finish(&s);
    }
    const mt_meta *m = &n->in_meta[1];
    int64_t numel = mt_numel(m->ndim, m->sizes);
    mt_tensor *parts[2] = {own(&s, mt_op_masked_select(g[0], mask, &r), &r), NULL};
    int64_t rest = s.st ? 0 : numel - parts[0]->sizes[0];
    parts[1] = s.st ? NULL : own(&s, mt_op_zeros(1, &rest, g[0]->dtype, m->device, false, &r), &r);
    mt_tensor *flat = s.st ? NULL : own(&s, mt_op_cat(2, parts, 0, &r), &r);
    if (flat) {
        s.st = mt_op_reshape(flat, m->ndim, m->sizes, &gi[1]);
    }
    return finish(&s);
}

/* ---- scatter_reduce ---- */

/* The saved tensors and arguments of a scatter_reduce node. */
typedef struct reduce_ctx {
    mt_tensor *self, *index, *src, *result;
    int64_t dim;
    bool include_self;
} reduce_ctx;

/* x with 1 where mask holds */
static mt_tensor *
ones_where(tmp *s, mt_tensor *x, mt_tensor *mask)
{
    mt_tensor *one = number_of(s, 1), *r = NULL;
    return s->st ? NULL : own(s, mt_op_masked_fill(x, mask, one, &r), &r);
}

/* how many of the values reduced into each element of self were t (t of self's shape, u of
 * src's: 1 where they count), t's own counting: t.scatter_add(dim, index, u) */
static mt_tensor *
count_into(tmp *s, const reduce_ctx *c, mt_tensor *t, mt_tensor *u)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_op_scatter_add(t, c->dim, c->index, u, &r), &r);
}

/* x's values at index along dim (src's shape) */
static mt_tensor *
gathered(tmp *s, const reduce_ctx *c, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_op_gather(x, c->dim, c->index, &r), &r);
}

/* x as a tensor of dtype dt */
static mt_tensor *
cast(tmp *s, mt_tensor *x, mt_dtype dt)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_op__to_copy(x, dt, MT_DEVICE_NONE, &r), &r);
}

/* scatter_reduce(x, dim, index, u, "prod", include_self) */
static mt_tensor *
prod_into(tmp *s, const reduce_ctx *c, mt_tensor *x, mt_tensor *u)
{
    mt_tensor *r = NULL;
    return s->st ? NULL
                 : own(s, mt_op_scatter_reduce(x, c->dim, c->index, u, "prod", c->include_self, &r),
                       &r);
}

// mean: each value's share 1 / N, N the values averaged into its element
static void
grad_mean(tmp *s, const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    mt_device dev = mt_tensor_device(g);
    mt_tensor *r = NULL;
    mt_status st = c->include_self ? mt_op_ones(g->ndim, g->sizes, g->dtype, dev, false, &r)
                                   : mt_op_zeros(g->ndim, g->sizes, g->dtype, dev, false, &r);
    mt_tensor *base = own(s, st, &r);
    mt_tensor *ones = s->st ? NULL
                            : own(s,
                                  mt_op_ones(c->src->ndim, c->src->sizes, g->dtype, dev, false, &r),
                                  &r);
    mt_tensor *count = count_into(s, c, base, ones);
    mt_tensor *n = ones_where(s, count, with_number(s, MT_OP_eq, count, 0));
    *gs = bin(s, MT_OP_div, g, n);
    *gsrc = bin(s, MT_OP_div, gathered(s, c, g), gathered(s, c, n));
}

// amax, amin: g shared evenly among the values equal to the result
static void
grad_extreme(tmp *s, const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    mt_tensor *value = gathered(s, c, c->result);
    mt_tensor *fself = cast(s, bin(s, MT_OP_eq, c->self, c->result), g->dtype);
    mt_tensor *fsrc = cast(s, bin(s, MT_OP_eq, c->src, value), g->dtype);
    mt_tensor *share = bin(s, MT_OP_div, g, count_into(s, c, fself, fsrc));
    *gs = bin(s, MT_OP_mul, fself, share);
    *gsrc = bin(s, MT_OP_mul, fsrc, gathered(s, c, share));
}

// prod: each value's gradient is g times the product of the others; zeros are left out of the
// quotients, and a value that is the only zero in its product gets the others' product
static void
grad_prod(tmp *s, const reduce_ctx *c, mt_tensor *g, mt_tensor **gs, mt_tensor **gsrc)
{
    mt_device dev = mt_tensor_device(g);
    /* self: g * (the product with self's zeros taken as 1) / self (its zeros as 1) */
    mt_tensor *mself = ones_where(s, c->self, with_number(s, MT_OP_eq, c->self, 0));
    *gs = bin(s, MT_OP_div, bin(s, MT_OP_mul, g, prod_into(s, c, mself, c->src)), mself);
    /* src: the zeros reaching each element of self, seen from each src value */
    mt_tensor *src0 = with_number(s, MT_OP_eq, c->src, 0), *r = NULL;
    mt_tensor *z = s->st ? NULL
                         : own(s,
                               mt_op_zeros(c->self->ndim, c->self->sizes, c->self->dtype, dev,
                                           false, &r),
                               &r);
    mt_tensor *zeros = gathered(s, c, count_into(s, c, z, cast(s, src0, c->self->dtype)));
    mt_tensor *single = bin(s, MT_OP_logical_and, src0, with_number(s, MT_OP_eq, zeros, 1));
    /* the only zero: the product of the others (itself as 1); else result / src (zeros as 1) */
    mt_tensor *msrc_res = prod_into(s, c, c->self, ones_where(s, c->src, single));
    mt_tensor *with_single = gathered(s, c, bin(s, MT_OP_mul, g, msrc_res));
    mt_tensor *others = gathered(s, c, bin(s, MT_OP_mul, g, c->result));
    *gsrc = sel(s, single, with_single, bin(s, MT_OP_div, others, ones_where(s, c->src, src0)));
}

// self (S), index and src (I): the gradients of scatter_reduce's self and src for its reduction
mt_status
mt_grad_scatter_reduce(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    reduce_ctx c = {n->saved[0],     n->saved[1],  n->saved[2],
                    n->saved_out[0], n->args.i[0], n->args.b[0]};
    const char *reduce = n->args.str[0];
    tmp s = {0};
    mt_tensor *gs = NULL, *gsrc = NULL;
    if (strcmp(reduce, "sum") == 0) {
        gs = g[0];
        gsrc = gathered(&s, &c, g[0]);
    } else if (strcmp(reduce, "mean") == 0) {
        grad_mean(&s, &c, g[0], &gs, &gsrc);
    } else if (strcmp(reduce, "prod") == 0) {
        grad_prod(&s, &c, g[0], &gs, &gsrc);
    } else {
        grad_extreme(&s, &c, g[0], &gs, &gsrc);
    }
    if (!c.include_self) { /* self's values at the scattered places were unused */
        mt_tensor *zero = number_of(&s, 0), *r = NULL;
        gs = failed(&s, gs, gs) ? NULL
                                : own(&s, mt_op_scatter(gs, c.dim, c.index, zero, NULL, &r), &r);
    }
    if (wants(n, 0)) {
        give(&s, gs, &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, gsrc, &gi[1]);
    }
    return finish(&s);
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
