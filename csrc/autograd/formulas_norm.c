/* Backward formulas of the normalisations: layer_norm (and native_layer_norm, with its Autograd
 * kernel), batch_norm and group_norm; the other nn ops' rows are in formulas_nn.c.
 *
 * Each calls its backward op through the dispatcher, or, where the backward records
 * (create_graph), writes the gradients with differentiable ops (norm_backward_ops). Node names
 * are PyTorch's. */
#include "autograd/formula_chain.h"
#include "ops/nn.h"

/* ---- normalisation ---- */

/* &gi[e] where edge e wants a gradient, else NULL: the backward op's result is dropped */
static mt_tensor **
wanted(mt_node *n, mt_tensor **gi, int e)
{
    return n->edges[e].node ? &gi[e] : NULL;
}

/* ---- the normalisations' backward as ops, where it records (create_graph: a double backward
 * through them; the backward kernels have no derivative) ---- */

/* One normalisation's operands: x; w viewed to broadcast against x, or NULL; the dims its
 * statistics reduce (red) and the others (keep: where w's and b's gradients sum). */
typedef struct norm_ops {
    mt_tensor *x, *w;
    int nred, nkeep;
    int64_t red[MT_MAX_DIMS], keep[MT_MAX_DIMS];
} norm_ops;

/* x summed over the dims that keep w's shape (x itself where there are none) */
static mt_tensor *
sum_keep(tmp *s, const norm_ops *p, mt_tensor *x)
{
    mt_tensor *r = NULL;
    if (p->nkeep == 0 || failed(s, x, x)) {
        return x;
    }
    return own(s, mt_op_sum(x, p->nkeep, p->keep, false, -1, &r), &r);
}

static mt_tensor *
mean_red(tmp *s, const norm_ops *p, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_mean(x, p->nred, p->red, true, -1, &r), &r);
}

/* The gradients of normalising x with statistics (mean, rstd): xhat = (x - mean) rstd, y = xhat
 * w + b. When the statistics are the batch's (train), x's gradient is rstd (gxhat -
 * mean(gxhat) - xhat mean(gxhat xhat)) with gxhat = g w; else (fixed running statistics)
 * gxhat rstd. w's gradient sums g xhat, b's g, over the keep dims. */
static mt_status
norm_backward_ops(mt_node *n, const norm_ops *p, mt_tensor *g, mt_tensor *mean, mt_tensor *rstd,
                  bool train, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *xhat = bin(&s, MT_OP_mul, bin(&s, MT_OP_sub, p->x, mean), rstd);
    if (n->edges[0].node) {
        mt_tensor *gxhat = p->w ? bin(&s, MT_OP_mul, g, p->w) : g;
        mt_tensor *gx = gxhat;
        if (train) {
            mt_tensor *proj = bin(&s, MT_OP_mul, xhat,
                                  mean_red(&s, p, bin(&s, MT_OP_mul, gxhat, xhat)));
            gx = bin(&s, MT_OP_sub, bin(&s, MT_OP_sub, gxhat, mean_red(&s, p, gxhat)), proj);
        }
        give(&s, bin(&s, MT_OP_mul, gx, rstd), &gi[0]);
    }
    if (n->edges[1].node) {
        give(&s, sum_keep(&s, p, bin(&s, MT_OP_mul, g, xhat)), &gi[1]);
    }
    if (n->edges[2].node) {
        give(&s, sum_keep(&s, p, g), &gi[2]);
    }
    return finish(&s);
}

/* The batch's statistics over p's red dims: mean and 1 / sqrt(biased variance + eps) */
static void
batch_stats(tmp *s, const norm_ops *p, double eps, mt_tensor **mean, mt_tensor **rstd)
{
    *mean = mean_red(s, p, p->x);
    mt_tensor *d = bin(s, MT_OP_sub, p->x, *mean);
    mt_tensor *var = mean_red(s, p, bin(s, MT_OP_mul, d, d));
    *rstd = un(s, MT_OP_rsqrt, bin(s, MT_OP_add, var, num(s, eps)));
}

// layer_norm's backward as ops: the statistics over the last dims
static mt_status
layer_norm_ops(mt_node *n, mt_tensor *g, double eps, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0];
    const int k = n->args.l[0].n;
    norm_ops p = {.x = x, .w = n->saved[1], .nred = k, .nkeep = x->ndim - k};
    for (int d = 0; d < x->ndim; d++) {
        if (d < p.nkeep) {
            p.keep[d] = d;
        } else {
            p.red[d - p.nkeep] = d;
        }
    }
    tmp s = {0};
    mt_tensor *mean = NULL, *rstd = NULL;
    batch_stats(&s, &p, eps, &mean, &rstd);
    if (s.st == MT_OK) {
        s.st = norm_backward_ops(n, &p, g, mean, rstd, true, gi);
    }
    return finish(&s);
}

// input (*, normalized_shape), weight and bias (normalized_shape) or None; the backward op
// recomputes each row's statistics
mt_status
mt_grad_layer_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *shape = &n->args.l[0];
    if (mt_grad_enabled()) {
        double eps = mt_scalar_is_none(n->args.s[0]) ? 1e-5 : mt_scalar_to_double(n->args.s[0]);
        return layer_norm_ops(n, g[0], eps, gi);
    }
    return mt_op_layer_norm_backward(g[0], n->saved[0], shape->n, shape->v, n->saved[1],
                                     n->args.s[0], NULL, NULL, wanted(n, gi, 0), wanted(n, gi, 1),
                                     wanted(n, gi, 2));
}

// as layer_norm, eps a float; the rows' mean and rstd are the node's outputs 1 and 2
mt_status
mt_grad_native_layer_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *shape = &n->args.l[0];
    if (mt_grad_enabled()) {
        return layer_norm_ops(n, g[0], n->args.f[0], gi);
    }
    return mt_op_layer_norm_backward(g[0], n->saved[0], shape->n, shape->v, n->saved[1],
                                     mt_scalar_float(n->args.f[0]), n->saved_out[1],
                                     n->saved_out[2], wanted(n, gi, 0), wanted(n, gi, 1),
                                     wanted(n, gi, 2));
}

/* layer_norm's Autograd kernel: on the CPU, for float32 and float64 inputs, it is
 * native_layer_norm's output 0, so that the node keeps the statistics (ATen's layer_norm does
 * the same); elsewhere it records itself, and the backward recomputes them. */
mt_status
mt_autograd_layer_norm(mt_args *a)
{
    mt_tensor *x = a->t[0];
    if (mt_tensor_device(x).type != MT_CPU || (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)) {
        return mt_autograd_record_call(MT_OP_layer_norm, a);
    }
    const mt_intlist *shape = &a->l[0];
    double eps = mt_scalar_is_none(a->s[0]) ? 1e-5 : mt_scalar_to_double(a->s[0]);
    tmp s = {0};
    mt_tensor *mean = NULL, *rstd = NULL; /* the node the op records keeps them */
    mt_status st = mt_op_native_layer_norm(x, shape->n, shape->v, a->t[1], a->t[2], eps, &a->out[0],
                                           &mean, &rstd);
    own(&s, st, &mean);
    own(&s, st, &rstd);
    return finish(&s);
}

void
mt_saves_batch_norm(const mt_args *a, unsigned *save_inputs, bool *save_outputs)
{
    (void)save_outputs;
    if (a->b[0]) { /* training */
        *save_inputs &= ~(1u << 3 | 1u << 4);
    }
}

// batch_norm's backward as ops: the statistics per channel (dim 1), the batch's when training
// (or without running statistics), else the running ones, constants
static mt_status
batch_norm_ops(mt_node *n, mt_tensor *g, bool training, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *rm = n->saved[3], *rv = n->saved[4];
    const double eps = mt_scalar_to_double(n->args.s[1]);
    const bool batch = training || rm == NULL || rv == NULL;
    norm_ops p = {.x = x, .nred = x->ndim - 1, .nkeep = x->ndim - 1};
    int64_t column[MT_MAX_DIMS]; /* (C, 1, ..., 1): a channel's value against (N, C, *) */
    for (int d = 0, k = 0; d < x->ndim; d++) {
        if (d != 1) {
            p.red[k] = d;
            p.keep[k++] = d;
        }
        column[d] = d == 1 ? x->sizes[1] : 1;
    }
    tmp s = {0};
    mt_tensor *r = NULL, *mean = NULL, *rstd = NULL;
    if (n->saved[1]) {
        p.w = own(&s, mt_op_view(n->saved[1], x->ndim, column, &r), &r);
    }
    if (batch) {
        batch_stats(&s, &p, eps, &mean, &rstd);
    } else {
        mean = s.st ? NULL : own(&s, mt_op_view(rm, x->ndim, column, &r), &r);
        mt_tensor *var = s.st ? NULL : own(&s, mt_op_view(rv, x->ndim, column, &r), &r);
        rstd = un(&s, MT_OP_rsqrt, bin(&s, MT_OP_add, var, num(&s, eps)));
    }
    if (s.st == MT_OK) {
        s.st = norm_backward_ops(n, &p, g, mean, rstd, batch, gi);
    }
    return finish(&s);
}

// group_norm: input (N, C, *), weight and bias (C) or None, as one node (PyTorch's
// NativeGroupNormBackward0), written as ops so that it records for a double backward: the
// statistics per (sample, group) over a (N, G, C / G * inner) view, the affine per channel
mt_status
mt_grad_group_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *w = n->saved[1], *r = NULL;
    const int nd = x->ndim;
    int64_t rows[3] = {x->sizes[0], n->args.i[0], x->sizes[1] / n->args.i[0]};
    norm_ops grp = {.nred = 1, .red = {2}}, chan = {.nkeep = nd - 1};
    int64_t column[MT_MAX_DIMS]; /* (C, 1, ..., 1) */
    for (int d = 0, k = 0; d < nd; d++) {
        rows[2] *= d >= 2 ? x->sizes[d] : 1;
        column[d] = d == 1 ? x->sizes[1] : 1;
        if (d != 1) {
            chan.keep[k++] = d;
        }
    }
    tmp s = {0};
    mt_tensor *mean = NULL, *rstd = NULL;
    grp.x = own(&s, mt_op_reshape(x, 3, rows, &r), &r);
    batch_stats(&s, &grp, n->args.f[0], &mean, &rstd);
    mt_tensor *xhat3 = bin(&s, MT_OP_mul, bin(&s, MT_OP_sub, grp.x, mean), rstd);
    if (n->edges[0].node) {
        mt_tensor *wc = w && !s.st ? own(&s, mt_op_view(w, nd, column, &r), &r) : NULL;
        mt_tensor *gxhat = w ? bin(&s, MT_OP_mul, g[0], wc) : g[0];
        mt_tensor *g3 = failed(&s, gxhat, gxhat) ? NULL
                                                 : own(&s, mt_op_reshape(gxhat, 3, rows, &r), &r);
        mt_tensor *proj = bin(&s, MT_OP_mul, xhat3,
                              mean_red(&s, &grp, bin(&s, MT_OP_mul, g3, xhat3)));
        mt_tensor *gx3 = bin(&s, MT_OP_sub, bin(&s, MT_OP_sub, g3, mean_red(&s, &grp, g3)), proj);
        gx3 = bin(&s, MT_OP_mul, gx3, rstd);
        mt_tensor *gx = failed(&s, gx3, gx3) ? NULL
                                             : own(&s, mt_op_reshape(gx3, nd, x->sizes, &r), &r);
        /* in the memory format input suggests, as ATen's native_group_norm_backward */
        give(&s,
             failed(&s, gx, gx) ? NULL
                                : own(&s, mt_in_format(gx, mt_suggest_memory_format(x), &r), &r),
             &gi[0]);
    }
    if (n->edges[1].node) {
        mt_tensor *xhat = failed(&s, xhat3, xhat3)
                              ? NULL
                              : own(&s, mt_op_view(xhat3, nd, x->sizes, &r), &r);
        give(&s, sum_keep(&s, &chan, bin(&s, MT_OP_mul, g[0], xhat)), &gi[1]);
    }
    if (n->edges[2].node) {
        give(&s, sum_keep(&s, &chan, g[0]), &gi[2]);
    }
    return finish(&s);
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or None; the running
// statistics are constants, read only when not training
mt_status
mt_grad_batch_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    /* rm, rv: NULL when training (mt_saves_batch_norm) */
    mt_tensor *x = n->saved[0], *w = n->saved[1], *rm = n->saved[3], *rv = n->saved[4];
    bool training = n->args.b[0];
    if (mt_grad_enabled()) {
        return batch_norm_ops(n, g[0], training, gi);
    }
    return mt_op_batch_norm_backward(g[0], x, w, rm, rv, training, n->args.s[1], wanted(n, gi, 0),
                                     wanted(n, gi, 1), wanted(n, gi, 2));
}
