/* Backward formulas of the nn ops: conv2d, the poolings, embedding, the pads and
 * the losses with kernels of their own (nll_loss, binary_cross_entropy with and without logits).
 *
 * Convolution, pooling, embedding and nll_loss call their backward ops (ops.def's last section)
 * through the dispatcher; the binary cross entropies are written with elementwise ops. The
 * normalisations' rows are in formulas_norm.c. The composite nn ops (dropout, mse_loss, l1_loss,
 * cross_entropy_loss) need no row: their pieces record. Node names are PyTorch's. */
#include <string.h>

#include "autograd/formula_chain.h"
#include "autograd/sparse_grad.h"
#include "ops/conv_nd.h"
#include "ops/front.h" /* mt_pool_nd */
#include "ops/nn.h"

/* ---- convolution ---- */

// input (N, C, H, W) or (C, H, W), weight (OC, C/G, KH, KW), bias (OC) or None
mt_status
mt_grad_conv2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *w = n->saved[1];
    const mt_intlist *stride = &n->args.l[0], *padding = &n->args.l[1], *dilation = &n->args.l[2];
    int64_t groups = n->args.i[0];
    const mt_meta *in = &n->in_meta[0], *wm = &n->in_meta[1];
    tmp s = {0};
    /* g[0] in the forward's memory format, which the backward ops give their results in; of an
     * empty batch, zero gradients laid out as input and weight each (PyTorch's Empty backend's),
     * not in the convolution's format */
    const bool empty = mt_tensor_numel(x) == 0;
    const bool need[2] = {wants(n, 0), wants(n, 1)};
    mt_tensor *r = NULL;
    mt_tensor *go = empty ? NULL : own(&s, mt_conv_grad_output_in_format(x, w, g[0], &r), &r);
    if (s.st == MT_OK && empty) {
        s.st = mt_conv_empty_grads(x, w, need, gi);
    }
    if (s.st == MT_OK && need[0] && !empty) {
        s.st = mt_op_convolution_backward_input(go, w, in->ndim, in->sizes, stride->n, stride->v,
                                                padding->n, padding->v, dilation->n, dilation->v,
                                                groups, &gi[0]);
    }
    if (s.st == MT_OK && need[1] && !empty) {
        s.st = mt_op_convolution_backward_weight(go, x, wm->ndim, wm->sizes, stride->n, stride->v,
                                                 padding->n, padding->v, dilation->n, dilation->v,
                                                 groups, &gi[1]);
    }
    if (s.st == MT_OK && !empty) {
        s.st = mt_conv2d_grads_in_layout(&n->args, x, w, need, gi);
    }
    if (s.st == MT_OK && wants(n, 2) && in->sizes[in->ndim - 3] == 0) {
        /* zero input channels made no output channels: a zero gradient for each bias */
        s.st = mt_op_zeros(1, &wm->sizes[0], g[0]->dtype, mt_tensor_device(g[0]), false, &gi[2]);
    } else if (s.st == MT_OK && wants(n, 2)) {
        static const int64_t batched[3] = {0, 2, 3}, unbatched[2] = {1, 2};
        s.st = in->ndim == 4 ? mt_op_sum(g[0], 3, batched, false, -1, &gi[2])
                             : mt_op_sum(g[0], 2, unbatched, false, -1, &gi[2]);
    }
    return finish(&s);
}

/* conv1d, conv3d and the transposed convolutions: PyTorch's one node, whose gradients are the
 * 2-D convolution ops (ops/composite_conv.c) */
static mt_status
grad_conv_nd(mt_node *n, mt_tensor *const *g, mt_tensor **gi, int dims, bool transposed)
{
    bool need[3] = {n->edges[0].node != NULL, n->edges[1].node != NULL, n->edges[2].node != NULL};
    return mt_conv_nd_backward(&n->args, dims, transposed, n->saved[0], n->saved[1], g[0], need,
                               gi);
}

mt_status
mt_grad_conv1d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_conv_nd(n, g, gi, 1, false);
}

mt_status
mt_grad_conv_transpose1d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_conv_nd(n, g, gi, 1, true);
}

mt_status
mt_grad_conv3d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_conv_nd(n, g, gi, 3, false);
}

mt_status
mt_grad_conv_transpose3d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_conv_nd(n, g, gi, 3, true);
}

mt_status
mt_grad_conv_transpose2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_conv_nd(n, g, gi, 2, true);
}

/* The two backward ops are linear in each of their tensors, so their own gradients are the
 * other convolution passes (PyTorch's convolution_backward derivative): what makes conv2d's
 * gradient differentiable again (double backward, gradient penalties). */

/* convolution_backward_weight(grad_output, input) of conv3d (a 5-D weight_size): the gradient
 * gg's conv3d of the input, and conv3d's input gradient of grad_output with gg as its weight */
static mt_status
grad_convolution_backward_weight3d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *go = n->saved[0], *x = n->saved[1];
    const mt_intlist *s = &n->args.l[1], *p = &n->args.l[2], *d = &n->args.l[3];
    mt_conv_params c = {.dims = 3, .groups = n->args.i[0]};
    for (int k = 0; k < 3; k++) { /* one value or three (the front end's check) */
        c.stride[k] = s->v[s->n == 1 ? 0 : k];
        c.pad[k] = p->v[p->n == 1 ? 0 : k];
        c.dil[k] = d->v[d->n == 1 ? 0 : k];
    }
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        st = mt_op_conv3d(x, g[0], NULL, 3, c.stride, 3, c.pad, 3, c.dil, c.groups, &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        const bool need[2] = {true, false};
        mt_tensor *both[2] = {NULL, NULL};
        st = mt_conv3d_backward(&c, x, g[0], go, need, both);
        gi[1] = both[0];
    }
    return st;
}

/* convolution_backward_input(grad_output, weight) or _weight(grad_output, input), the other
 * tensor t[1]; the output has the size l[0] of the input (or the weight) */
static mt_status
grad_convolution_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi, bool of_input)
{
    mt_tensor *go = n->saved[0], *other = n->saved[1];
    const mt_intlist *s = &n->args.l[1], *p = &n->args.l[2], *d = &n->args.l[3];
    int64_t groups = n->args.i[0];
    const mt_meta *m = &n->in_meta[1];
    mt_status st = MT_OK;
    if (!of_input && n->args.l[0].n == 5) {
        return grad_convolution_backward_weight3d(n, g, gi);
    }
    if (n->edges[0].node) { /* conv2d of the input with the weight, whichever g[0] is */
        st = mt_op_conv2d(of_input ? g[0] : other, of_input ? other : g[0], NULL, s->n, s->v, p->n,
                          p->v, d->n, d->v, groups, &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        st = of_input ? mt_op_convolution_backward_weight(go, g[0], m->ndim, m->sizes, s->n, s->v,
                                                          p->n, p->v, d->n, d->v, groups, &gi[1])
                      : mt_op_convolution_backward_input(go, g[0], m->ndim, m->sizes, s->n, s->v,
                                                         p->n, p->v, d->n, d->v, groups, &gi[1]);
    }
    return st;
}

mt_status
mt_grad_convolution_backward_input(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_convolution_backward(n, g, gi, true);
}

mt_status
mt_grad_convolution_backward_weight(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return grad_convolution_backward(n, g, gi, false);
}

/* ---- pooling: one function per family serves the 2-D and the 3-D rows ---- */

/* The spatial dims of the pooling op that n differentiates. */
static int
pool_nd(const mt_node *n)
{
    return mt_pool_nd(n->formula->op);
}

// input (N, C, [D,] H, W) or (C, [D,] H, W); the forward's indices are its node's output 1
mt_status
mt_grad_max_pool(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *k = &n->args.l[0], *stride = &n->args.l[1], *padding = &n->args.l[2],
                     *dilation = &n->args.l[3];
    return (pool_nd(n) == 3
                ? mt_op_max_pool3d_with_indices_backward
                : mt_op_max_pool2d_with_indices_backward)(g[0], n->saved[0], k->n, k->v, stride->n,
                                                          mt_op_ints(stride), padding->n,
                                                          padding->v, dilation->n, dilation->v,
                                                          n->args.b[0], n->saved_out[1], &gi[0]);
}

// adaptive_max_pool2d/3d: input (N, C, [D,] H, W) or (C, [D,] H, W); the gradient goes to
// each window's argmax, the forward's indices (its output 1)
mt_status
mt_grad_adaptive_max_pool(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return (pool_nd(n) == 3
                ? mt_op_adaptive_max_pool3d_backward
                : mt_op_adaptive_max_pool2d_backward)(g[0], n->saved[0], n->saved_out[1], &gi[0]);
}

/* max_pool2d's and max_pool3d's Autograd kernel (`op`, recording `with_indices`): with an input
 * that requires grad it is the with_indices op's output 0, so that the node keeps the indices
 * (ATen's max_pool2d does the same); else the kernel without indices. */
static mt_status
autograd_max_pool(mt_args *a, mt_op op, mt_op with_indices)
{
    mt_tensor *x = a->t[0];
    if (!mt_tensor_requires_grad(x) || !mt_dtype_is_float(x->dtype)) {
        return mt_redispatch(op, a, MT_KEY_AUTOGRAD);
    }
    const mt_intlist *k = &a->l[0], *stride = &a->l[1], *padding = &a->l[2], *dilation = &a->l[3];
    mt_status (*record)(mt_tensor *, int, const int64_t *, int, const int64_t *, int,
                        const int64_t *, int, const int64_t *, bool, mt_tensor **,
                        mt_tensor **) = with_indices == MT_OP_max_pool3d_with_indices
                                            ? mt_op_max_pool3d_with_indices
                                            : mt_op_max_pool2d_with_indices;
    tmp s = {0};
    mt_tensor *idx = NULL; /* the node the op records keeps them */
    mt_status st = record(x, k->n, k->v, stride->n, mt_op_ints(stride), padding->n, padding->v,
                          dilation->n, dilation->v, a->b[0], &a->out[0], &idx);
    own(&s, st, &idx);
    return finish(&s);
}

mt_status
mt_autograd_max_pool2d(mt_args *a)
{
    return autograd_max_pool(a, MT_OP_max_pool2d, MT_OP_max_pool2d_with_indices);
}

mt_status
mt_autograd_max_pool3d(mt_args *a)
{
    return autograd_max_pool(a, MT_OP_max_pool3d, MT_OP_max_pool3d_with_indices);
}

// max_pool2d/3d_with_indices_backward: grad_output (N, C, [OD,] OH, OW) or (C, [OD,] OH, OW),
// self, indices (grad_output's shape): the backward scatters grad_output to the indices, so its
// gradient gathers gg there; self's is zeros.
mt_status
mt_grad_max_pool_with_indices_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *idx = n->saved[2], *r = NULL;
    const int nd = pool_nd(n);
    tmp s = {0};
    if (wants(n, 0)) {
        mt_tensor *flat_g = own(&s, mt_op_flatten(g[0], -nd, -1, &r), &r);
        mt_tensor *flat_i = s.st ? NULL : own(&s, mt_op_flatten(idx, -nd, -1, &r), &r);
        mt_tensor *picked = s.st ? NULL : own(&s, mt_op_gather(flat_g, -1, flat_i, &r), &r);
        if (picked) {
            s.st = mt_op_view_as(picked, idx, &gi[0]);
        }
    }
    if (s.st == MT_OK && wants(n, 1)) {
        s.st = mt_ag_zeros(&n->in_meta[1], &gi[1]);
    }
    return finish(&s);
}

// avg_pool2d/3d: input (N, C, [D,] H, W) or (C, [D,] H, W); the backward op takes the forward's
// arguments as they are
mt_status
mt_grad_avg_pool(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *k = &n->args.l[0], *stride = &n->args.l[1], *padding = &n->args.l[2];
    int64_t divisor = n->args.i_none & 1u ? MT_INT_NONE : n->args.i[0];
    return (pool_nd(n) == 3 ? mt_op_avg_pool3d_backward
                            : mt_op_avg_pool2d_backward)(g[0], n->saved[0], k->n, k->v, stride->n,
                                                         mt_op_ints(stride), padding->n, padding->v,
                                                         n->args.b[0], n->args.b[1], divisor,
                                                         &gi[0]);
}

/* avg_pool2d/3d_backward (grad_output, self, the forward's arguments) is linear in grad_output:
 * its gradient is the forward pool of gg; self's is zeros. */
mt_status
mt_grad_avg_pool_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *k = &n->args.l[0], *stride = &n->args.l[1], *padding = &n->args.l[2];
    int64_t divisor = n->args.i_none & 1u ? MT_INT_NONE : n->args.i[0];
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        st = (pool_nd(n) == 3 ? mt_op_avg_pool3d : mt_op_avg_pool2d)(g[0], k->n, k->v, stride->n,
                                                                     mt_op_ints(stride), padding->n,
                                                                     padding->v, n->args.b[0],
                                                                     n->args.b[1], divisor, &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        st = mt_ag_zeros(&n->in_meta[1], &gi[1]);
    }
    return st;
}

// input (N, C, H, W), grid (N, OH, OW, 2): the backward op gives both gradients; the ones no
// edge takes are dropped
mt_status
mt_grad_grid_sampler_2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_grid_sampler_2d_backward(g[0], n->saved[0], n->saved[1], n->args.i[0],
                                          n->args.i[1], n->args.b[0],
                                          n->edges[0].node ? &gi[0] : NULL,
                                          n->edges[1].node ? &gi[1] : NULL);
}

// input (N, C, D, H, W), grid (N, OD, OH, OW, 3): as grid_sampler_2d's
mt_status
mt_grad_grid_sampler_3d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_grid_sampler_3d_backward(g[0], n->saved[0], n->saved[1], n->args.i[0],
                                          n->args.i[1], n->args.b[0],
                                          n->edges[0].node ? &gi[0] : NULL,
                                          n->edges[1].node ? &gi[1] : NULL);
}

// adaptive_avg_pool2d/3d: input (N, C, [D,] H, W) or (C, [D,] H, W)
mt_status
mt_grad_adaptive_avg_pool(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return (pool_nd(n) == 3 ? mt_op__adaptive_avg_pool3d_backward
                            : mt_op__adaptive_avg_pool2d_backward)(g[0], n->saved[0], &gi[0]);
}

/* _adaptive_avg_pool2d/3d_backward (grad_output, self) is linear in grad_output: its gradient
 * is the adaptive pool of gg to grad_output's last nd sizes; self's is zeros. */
mt_status
mt_grad_adaptive_avg_pool_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const int nd = pool_nd(n);
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        const mt_meta *m = &n->in_meta[0];
        const int64_t *size = m->sizes + m->ndim - nd;
        st = (nd == 3 ? mt_op_adaptive_avg_pool3d : mt_op_adaptive_avg_pool2d)(g[0], nd, size,
                                                                               &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        st = mt_ag_zeros(&n->in_meta[1], &gi[1]);
    }
    return st;
}

/* ---- embedding ---- */

/* sparse=True: weight's gradient sparse COO (PyTorch's embedding_sparse_backward): an entry per
 * looked-up index, repeats kept (uncoalesced), g's row for it as its values; padding_idx's rows
 * left out. g (*, D), indices (*) -> indices (1, nnz), values (nnz, D). */
static mt_status
embedding_sparse_grad(mt_node *n, mt_tensor *g, mt_tensor **out)
{
    if (n->args.b[0]) {
        return mt_fail(MT_ERUNTIME, "embedding_backward: scale_grad_by_freq not supported with "
                                    "sparse gradients");
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *idx = own(&s, mt_op_reshape(n->saved[1], 1, (int64_t[]){-1}, &r), &r);
    mt_tensor *rows = s.st ? NULL
                           : own(&s,
                                 mt_op_reshape(g, 2, (int64_t[]){-1, n->in_meta[0].sizes[1]}, &r),
                                 &r);
    if (n->args.i[0] != -1) {
        mt_tensor *keep = un(&s, MT_OP_nonzero, bin(&s, MT_OP_ne, idx, num(&s, n->args.i[0])));
        keep = failed(&s, keep, keep) ? NULL : own(&s, mt_op_select(keep, 1, 0, &r), &r);
        idx = failed(&s, idx, keep) ? NULL : own(&s, mt_op_index_select(idx, 0, keep, &r), &r);
        rows = failed(&s, rows, keep) ? NULL : own(&s, mt_op_index_select(rows, 0, keep, &r), &r);
    }
    if (!failed(&s, idx, rows) && idx->dtype != MT_INT64) {
        idx = own(&s, mt_op__to_copy(idx, MT_INT64, mt_tensor_device(idx), &r), &r);
    }
    idx = unsqueezed(&s, idx, 0);
    if (!failed(&s, idx, rows)) {
        s.st = mt_sparse_grad_new(rows, idx, idx->sizes[1] <= 1, out);
    }
    return finish(&s);
}

// weight (V, D), indices (*); a sparse gradient only outside grad mode (not for create_graph)
mt_status
mt_grad_embedding(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (n->args.b[1] && !mt_grad_enabled()) {
        return embedding_sparse_grad(n, g[0], &gi[0]);
    }
    return mt_op_embedding_dense_backward(g[0], n->saved[1], n->in_meta[0].sizes[0], n->args.i[0],
                                          n->args.b[0], &gi[0]);
}

/* embedding_dense_backward (grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq) is linear in grad_output: its gradient is gg's rows at the indices, 0
 * where an index is padding_idx (that row of the result is always 0) */
mt_status
mt_grad_embedding_dense_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (n->args.b[0]) {
        return mt_fail(MT_ENOTIMPL, "the derivative for 'embedding_dense_backward' with "
                                    "scale_grad_by_freq=True is not implemented.");
    }
    tmp s = {0};
    mt_tensor *r = NULL, *idx = n->saved[1];
    mt_tensor *rows = own(&s, mt_op_embedding(g[0], idx, -1, false, false, &r), &r);
    mt_tensor *pad = bin(&s, MT_OP_eq, idx, num(&s, (double)n->args.i[1]));
    mt_tensor *col = failed(&s, pad, pad) ? NULL : own(&s, mt_op_unsqueeze(pad, -1, &r), &r);
    give(&s, sel(&s, col, num(&s, 0.0), rows), &gi[0]);
    return finish(&s);
}

/* ---- losses ---- */

// self (C) or (N, C, d1, ...), target, weight (C) or None
mt_status
mt_grad_nll_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    int64_t reduction = n->args.i[0], ignore_index = n->args.i[1];
    return mt_op_nll_loss_backward(g[0], n->saved[0], n->saved[1], n->saved[2], reduction,
                                   ignore_index, NULL, &gi[0]);
}

/* nll_loss_backward (grad_output, self, target, weight) is linear in grad_output and does not
 * read self's values: grad_output's gradient is the loss of gg, self's is zeros (PyTorch's
 * derivatives.yaml: the loss's own mean, whatever total_weight the call gave) */
mt_status
mt_grad_nll_loss_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        st = mt_op_nll_loss(g[0], n->saved[2], n->saved[3], n->args.i[0], n->args.i[1], &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        st = mt_ag_zeros(&n->in_meta[1], &gi[1]);
    }
    return st;
}

/* d * g, times weight when given, divided by the input's numel for the mean: the common tail of
 * the binary cross entropies' gradients */
static mt_tensor *
loss_tail(tmp *s, const mt_node *n, mt_tensor *d, mt_tensor *g, mt_tensor *weight)
{
    mt_tensor *cur = bin(s, MT_OP_mul, d, g);
    if (weight) {
        cur = bin(s, MT_OP_mul, cur, weight);
    }
    if (n->args.i[0] == MT_REDUCTION_MEAN) {
        int64_t numel = mt_numel(n->in_meta[0].ndim, n->in_meta[0].sizes);
        cur = bin(s, MT_OP_mul, cur, num(s, 1.0 / (double)numel));
    }
    return cur;
}

// self, target (one shape) probabilities, weight or None. PyTorch's: d self =
// g (x - t) / max(x (1 - x), 1e-12), d target = -g logit(x), each times weight (/ numel)
mt_status
mt_grad_binary_cross_entropy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *t = n->saved[1], *w = n->saved[2], *r = NULL;
    tmp s = {0};
    if (wants(n, 0)) {
        mt_tensor *var = bin(&s, MT_OP_sub, x, bin(&s, MT_OP_mul, x, x));
        mt_tensor *den = failed(&s, var, var)
                             ? NULL
                             : own(&s, mt_op_clamp_min(var, mt_scalar_float(1e-12), &r), &r);
        mt_tensor *d = bin(&s, MT_OP_div, bin(&s, MT_OP_sub, x, t), den);
        give(&s, loss_tail(&s, n, d, g[0], w), &gi[0]);
    }
    if (wants(n, 1)) {
        /* -logit(x) = log1p(-x) - log(x) */
        mt_tensor *l1p = un(&s, MT_OP_log1p, un(&s, MT_OP_neg, x));
        mt_tensor *d = bin(&s, MT_OP_sub, l1p, un(&s, MT_OP_log, x));
        give(&s, loss_tail(&s, n, d, g[0], w), &gi[1]);
    }
    return finish(&s);
}

/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), which never overflows */
static mt_tensor *
log_sigmoid(tmp *s, mt_tensor *x)
{
    mt_tensor *l1p = un(s, MT_OP_log1p, un(s, MT_OP_exp, un(s, MT_OP_neg, un(s, MT_OP_abs, x))));
    mt_tensor *r = NULL;
    mt_tensor *lo = failed(s, l1p, x) ? NULL
                                      : own(s, mt_op_clamp_max(x, mt_scalar_float(0.0), &r), &r);
    return bin(s, MT_OP_sub, lo, l1p);
}

// self (logits), target (one shape), weight, pos_weight or None. PyTorch's: with pw,
// d self = g ((pw t + 1 - t) sigmoid(x) - pw t), d target = g (log_sigmoid(-x) - pw log_sigmoid(x));
// without, d self = g (sigmoid(x) - t), d target = -g x; each times weight (/ numel)
mt_status
mt_grad_binary_cross_entropy_with_logits(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *t = n->saved[1], *w = n->saved[2], *pw = n->saved[3];
    tmp s = {0};
    mt_tensor *one = pw ? number_of(&s, 1.0) : NULL;
    if (wants(n, 0)) {
        mt_tensor *sig = un(&s, MT_OP_sigmoid, x), *d;
        if (pw == NULL) {
            d = bin(&s, MT_OP_sub, sig, t);
        } else {
            mt_tensor *pt = bin(&s, MT_OP_mul, pw, t);
            mt_tensor *k = bin(&s, MT_OP_add, bin(&s, MT_OP_sub, pt, t), one);
            d = bin(&s, MT_OP_sub, bin(&s, MT_OP_mul, k, sig), pt);
        }
        give(&s, loss_tail(&s, n, d, g[0], w), &gi[0]);
    }
    if (wants(n, 1)) {
        mt_tensor *d;
        if (pw == NULL) {
            d = un(&s, MT_OP_neg, x);
        } else {
            /* PyTorch's form, log_sigmoid(-x) - pos_weight log_sigmoid(x): at x = -inf it is
             * +inf, where (1 - pos_weight) log_sigmoid(x) - x, equal elsewhere, is inf - inf */
            mt_tensor *ls = log_sigmoid(&s, x);
            mt_tensor *ls_neg = log_sigmoid(&s, un(&s, MT_OP_neg, x));
            d = bin(&s, MT_OP_sub, ls_neg, bin(&s, MT_OP_mul, pw, ls));
        }
        give(&s, loss_tail(&s, n, d, g[0], w), &gi[1]);
    }
    return finish(&s);
}

/* ---- padding and the losses ---- */

// constant_pad_nd(self, pad, value): g with the pads taken off again (negated pads narrow)
mt_status
mt_grad_constant_pad_nd(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *pad = &n->args.l[0];
    int64_t neg[MT_MAX_DIMS];
    for (int k = 0; k < pad->n; k++) {
        neg[k] = -pad->v[k];
    }
    return mt_op_constant_pad_nd(g[0], pad->n, neg, mt_scalar_int(0), &gi[0]);
}

/* The gathering pads: g (the output's shape) scattered back, dim by dim, through the index
 * vectors the forward gathered through (ops/pad.c), summing where positions repeat. */
static mt_status
pad_index_backward(mt_node *n, mt_tensor *g, mt_pad_mode mode, mt_tensor **out)
{
    const mt_intlist *pad = &n->args.l[0];
    const mt_meta *in = &n->in_meta[0];
    tmp s = {0};
    mt_tensor *cur = g, *r = NULL;
    for (int k = pad->n / 2 - 1; k >= 0 && s.st == MT_OK; k--) {
        int dim = in->ndim - 1 - k;
        int64_t view[MT_MAX_DIMS], shape[MT_MAX_DIMS];
        for (int d = 0; d < cur->ndim; d++) {
            view[d] = d == dim ? cur->sizes[d] : 1;
            shape[d] = d == dim ? in->sizes[d] : cur->sizes[d];
        }
        mt_tensor *idx = own(&s,
                             mt_pad_index(mode, in->sizes[dim], pad->v[2 * k], pad->v[2 * k + 1],
                                          in->device, &r),
                             &r);
        mt_tensor *col = s.st ? NULL : own(&s, mt_op_reshape(idx, cur->ndim, view, &r), &r);
        mt_tensor *wide = s.st ? NULL : own(&s, mt_op_expand(col, cur->ndim, cur->sizes, &r), &r);
        mt_tensor *z = s.st ? NULL
                            : own(&s,
                                  mt_op_zeros(cur->ndim, shape, cur->dtype, in->device, false, &r),
                                  &r);
        cur = s.st ? NULL : own(&s, mt_op_scatter_add(z, dim, wide, cur, &r), &r);
    }
    give(&s, cur, out);
    return finish(&s);
}

// reflection_pad{1,2,3}d(self, padding)
mt_status
mt_grad_reflection_pad(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return pad_index_backward(n, g[0], MT_PAD_REFLECT, &gi[0]);
}

// replication_pad{1,2,3}d(self, padding)
mt_status
mt_grad_replication_pad(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return pad_index_backward(n, g[0], MT_PAD_REPLICATE, &gi[0]);
}

/* g as the losses' backward scales it: divided by the element count for a mean */
static mt_tensor *
loss_grad(tmp *s, const mt_node *n, mt_tensor *g, mt_tensor *like)
{
    if (n->args.i[0] != MT_REDUCTION_MEAN || failed(s, like, like)) {
        return g;
    }
    return scaled(s, g, 1.0 / (double)mt_tensor_numel(like));
}

/* d/dself = g * inner (broadcast), d/dtarget = its negation, for the losses of self - target */
static mt_status
difference_loss_grads(tmp *s, mt_node *n, mt_tensor *g, mt_tensor *d, mt_tensor *inner,
                      mt_tensor **gi)
{
    mt_tensor *gs = bin(s, MT_OP_mul, loss_grad(s, n, g, d), inner);
    if (wants(n, 0)) {
        give(s, gs, &gi[0]);
    }
    if (wants(n, 1)) {
        give(s, un(s, MT_OP_neg, gs), &gi[1]);
    }
    return finish(s);
}

/* lo where d < -bound, hi where d > bound, else mid: PyTorch's branches in their order, so a
 * NaN d takes mid */
static mt_tensor *
three_way(tmp *s, mt_tensor *d, double bound, mt_tensor *lo, mt_tensor *hi, mt_tensor *mid)
{
    mt_tensor *above = sel(s, bin(s, MT_OP_gt, d, num(s, bound)), hi, mid);
    return sel(s, bin(s, MT_OP_lt, d, num(s, -bound)), lo, above);
}

// smooth_l1_loss(self, target, reduction, beta): -1 below -beta, 1 above beta, else d / beta
mt_status
mt_grad_smooth_l1_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    double beta = n->args.f[0];
    mt_tensor *d = bin(&s, MT_OP_sub, n->saved[0], n->saved[1]);
    mt_tensor *inner = three_way(&s, d, beta, num(&s, -1.0), num(&s, 1.0),
                                 bin(&s, MT_OP_div, d, num(&s, beta)));
    return difference_loss_grads(&s, n, g[0], d, inner, gi);
}

// huber_loss(self, target, reduction, delta): -delta below -delta, delta above delta, else d
mt_status
mt_grad_huber_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    double delta = n->args.f[0];
    mt_tensor *d = bin(&s, MT_OP_sub, n->saved[0], n->saved[1]);
    mt_tensor *inner = three_way(&s, d, delta, num(&s, -delta), num(&s, delta), d);
    return difference_loss_grads(&s, n, g[0], d, inner, gi);
}

// soft_margin_loss(self, target, reduction): -target * z / (1 + z), z = exp(-target * self)
mt_status
mt_grad_soft_margin_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *x = n->saved[0], *t = n->saved[1];
    mt_tensor *z = un(&s, MT_OP_exp, bin(&s, MT_OP_mul, un(&s, MT_OP_neg, t), x));
    mt_tensor *frac = bin(&s, MT_OP_div, z, bin(&s, MT_OP_add, z, num(&s, 1.0)));
    mt_tensor *inner = un(&s, MT_OP_neg, bin(&s, MT_OP_mul, t, frac));
    give(&s, bin(&s, MT_OP_mul, loss_grad(&s, n, g[0], x), inner), &gi[0]);
    return finish(&s);
}
