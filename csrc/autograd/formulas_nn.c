/* Backward formulas of the nn ops: conv2d, the poolings, layer_norm, batch_norm, embedding and
 * the losses with kernels of their own (nll_loss, binary_cross_entropy with and without logits).
 *
 * Convolution, pooling, the normalisations, embedding and nll_loss call their backward ops
 * (ops.def's last section) through the dispatcher; the binary cross entropies are written with
 * elementwise ops. The composite nn ops (dropout, mse_loss, l1_loss, cross_entropy_loss) need
 * no row: their pieces record. Node names are PyTorch's. */
#include <string.h>

#include "autograd/formulas.h"
#include "ops/nn.h"
#define SCRATCH 8 /* the most intermediates one formula here holds */

static void
release_all(mt_tensor **t, int k)
{
    for (int i = 0; i < k; i++) {
        mt_tensor_clear(&t[i]);
    }
}

/* Runs op on a and hands its first result to *out. */
static mt_status
run1(mt_op op, mt_args *a, mt_tensor **out)
{
    mt_status st = mt_dispatch(op, a);
    *out = st ? NULL : a->out[0];
    return st;
}

/* *out = op(x, v), v a Python number (it does not change x's dtype). */
static mt_status
num(mt_op op, mt_tensor *x, double v, mt_tensor **out)
{
    mt_tensor *w = NULL;
    mt_status st = mt_tensor_scalar(mt_scalar_float(v), MT_FLOAT64, &w);
    if (st == MT_OK) {
        st = mt_ag_binary(op, x, w, out);
        mt_tensor_release(w);
    }
    return st;
}

/* *out = op(x, v) for the ops whose number is a Scalar argument (clamp_min, clamp_max). */
static mt_status
scalar_op(mt_op op, mt_tensor *x, double v, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    a.s[0] = mt_scalar_float(v);
    return run1(op, &a, out);
}

static void
set_list(mt_intlist *l, int k, const int64_t *v)
{
    l->none = false;
    l->n = k;
    memcpy(l->v, v, sizeof(int64_t) * (size_t)k);
}

/* *out = op(g, saved input `slot`, the rest of a): a backward op of the usual form. */
static mt_status
with_saved(mt_node *n, int slot, mt_op op, mt_tensor *g, mt_args *a, mt_tensor **out)
{
    a->t[0] = g;
    a->t[1] = n->saved[slot];
    return run1(op, a, out);
}

/* ---- convolution ---- */

/* The arguments of a conv2d backward op: grad, a tensor, a size, and the forward's stride,
 * padding, dilation and groups. */
static void
conv_args(mt_node *n, mt_tensor *g, mt_tensor *x, const mt_meta *size, mt_args *a)
{
    mt_args_init(a);
    a->t[0] = g;
    a->t[1] = x;
    set_list(&a->l[0], size->ndim, size->sizes);
    for (int k = 0; k < 3; k++) {
        a->l[k + 1] = n->args.l[k];
    }
    a->i[0] = n->args.i[0];
    a->i_none = 0;
}

// input (N, C, H, W) or (C, H, W), weight (OC, C/G, KH, KW), bias (OC) or None
mt_status
mt_grad_conv2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *w = n->saved[1];
    mt_args a;
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        conv_args(n, g[0], w, &n->in_meta[0], &a);
        st = run1(MT_OP_convolution_backward_input, &a, &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        conv_args(n, g[0], x, &n->in_meta[1], &a);
        st = run1(MT_OP_convolution_backward_weight, &a, &gi[1]);
    }
    if (st == MT_OK && n->edges[2].node) {
        static const int64_t batched[3] = {0, 2, 3}, unbatched[2] = {1, 2};
        mt_args_init(&a);
        a.t[0] = g[0];
        if (n->in_meta[0].ndim == 4) {
            set_list(&a.l[0], 3, batched);
        } else {
            set_list(&a.l[0], 2, unbatched);
        }
        st = run1(MT_OP_sum, &a, &gi[2]);
    }
    return st;
}

/* ---- pooling ---- */

// input (N, C, H, W) or (C, H, W); the indices of the maxima are found again
mt_status
mt_grad_max_pool2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *idx = NULL;
    mt_args a = n->args;
    a.t[0] = x;
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        a.out[k] = NULL;
    }
    mt_status st = mt_dispatch(MT_OP_max_pool2d_with_indices, &a);
    if (st) {
        return st;
    }
    mt_tensor_release(a.out[0]);
    idx = a.out[1];
    a = n->args;
    a.t[0] = g[0];
    a.t[1] = x;
    a.t[2] = idx;
    st = run1(MT_OP_max_pool2d_with_indices_backward, &a, &gi[0]);
    mt_tensor_release(idx);
    return st;
}

// input (N, C, H, W) or (C, H, W); the backward op takes the forward's arguments as they are
mt_status
mt_grad_avg_pool2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_args a = n->args;
    return with_saved(n, 0, MT_OP_avg_pool2d_backward, g[0], &a, &gi[0]);
}

mt_status
mt_grad_adaptive_avg_pool2d(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_args a;
    mt_args_init(&a);
    return with_saved(n, 0, MT_OP__adaptive_avg_pool2d_backward, g[0], &a, &gi[0]);
}

/* ---- normalisation ---- */

/* gi[e] = the backward op's result e where edge e needs it; the others are dropped. */
static void
take3(mt_node *n, mt_args *a, mt_tensor **gi)
{
    for (int e = 0; e < 3; e++) {
        if (n->edges[e].node) {
            gi[e] = a->out[e];
        } else {
            mt_tensor_clear(&a->out[e]);
        }
    }
}

// input (*, normalized_shape), weight and bias (normalized_shape) or None
mt_status
mt_grad_layer_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *w = n->saved[1];
    mt_args a;
    mt_args_init(&a);
    a.t[0] = g[0];
    a.t[1] = x;
    a.t[2] = w;
    a.l[0] = n->args.l[0];
    a.s[0] = n->args.s[0];
    mt_status st = mt_dispatch(MT_OP_layer_norm_backward, &a);
    if (st == MT_OK) {
        take3(n, &a, gi);
    }
    return st;
}

void
mt_saves_batch_norm(const mt_args *a, unsigned *save_inputs, bool *save_outputs)
{
    (void)save_outputs;
    if (a->b[0]) { /* training */
        *save_inputs &= ~(1u << 3 | 1u << 4);
    }
}

// input (N, C, *), weight, bias, running_mean, running_var (C) or None; the running
// statistics are constants, read only when not training
mt_status
mt_grad_batch_norm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    /* rm, rv: NULL when training (mt_saves_batch_norm) */
    mt_tensor *x = n->saved[0], *w = n->saved[1], *rm = n->saved[3], *rv = n->saved[4];
    mt_args a;
    mt_args_init(&a);
    a.t[0] = g[0];
    a.t[1] = x;
    a.t[2] = w;
    a.t[3] = rm;
    a.t[4] = rv;
    a.b[0] = n->args.b[0]; /* training */
    a.s[0] = n->args.s[1];
    mt_status st = mt_dispatch(MT_OP_batch_norm_backward, &a);
    if (st == MT_OK) {
        take3(n, &a, gi);
    }
    return st;
}

/* ---- embedding ---- */

// weight (V, D), indices (*)
mt_status
mt_grad_embedding(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_args a;
    mt_args_init(&a);
    a.i[0] = n->in_meta[0].sizes[0];
    a.i[1] = n->args.i[0];
    a.i_none = 0;
    a.b[0] = n->args.b[0];
    return with_saved(n, 1, MT_OP_embedding_dense_backward, g[0], &a, &gi[0]);
}

/* ---- losses ---- */

// self (C) or (N, C, d1, ...), target, weight (C) or None
mt_status
mt_grad_nll_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *target = n->saved[1], *w = n->saved[2];
    mt_args a;
    mt_args_init(&a);
    a.t[0] = g[0];
    a.t[1] = x;
    a.t[2] = target;
    a.t[3] = w;
    a.i[0] = n->args.i[0];
    a.i[1] = n->args.i[1];
    a.i_none = 0;
    return run1(MT_OP_nll_loss_backward, &a, &gi[0]);
}

/* *out = d * g, times weight when given, divided by the input's numel for the mean: the common
 * tail of the binary cross entropies' gradients (takes the reference to d). */
static mt_status
loss_tail(mt_node *n, mt_tensor *d, mt_tensor *g, mt_tensor *weight, mt_tensor **out)
{
    mt_tensor *t[3] = {d, NULL, NULL}, *cur = d;
    mt_status st = mt_ag_binary(MT_OP_mul, cur, g, &t[1]);
    cur = t[1];
    if (st == MT_OK && weight) {
        st = mt_ag_binary(MT_OP_mul, cur, weight, &t[2]);
        cur = t[2];
    }
    if (st == MT_OK && n->args.i[0] == MT_REDUCTION_MEAN) {
        int64_t numel = mt_numel(n->in_meta[0].ndim, n->in_meta[0].sizes);
        st = mt_ag_scale(cur, 1.0 / (double)numel, out);
    } else if (st == MT_OK) {
        *out = mt_tensor_retain(cur);
    }
    release_all(t, 3);
    return st;
}

// self, target (one shape) probabilities, weight or None. PyTorch's: d self =
// g (x - t) / max(x (1 - x), 1e-12), d target = -g logit(x), each times weight (/ numel)
mt_status
mt_grad_binary_cross_entropy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *t = n->saved[1], *w = n->saved[2], *s[SCRATCH] = {NULL};
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        if ((st = mt_ag_binary(MT_OP_mul, x, x, &s[0])) ||
            (st = mt_ag_binary(MT_OP_sub, x, s[0], &s[1])) ||
            (st = scalar_op(MT_OP_clamp_min, s[1], 1e-12, &s[2])) ||
            (st = mt_ag_binary(MT_OP_sub, x, t, &s[3])) ||
            (st = mt_ag_binary(MT_OP_div, s[3], s[2], &s[4]))) {
            goto out_release;
        }
        st = loss_tail(n, s[4], g[0], w, &gi[0]);
        s[4] = NULL;
        if (st) {
            goto out_release;
        }
    }
    if (n->edges[1].node) {
        /* -logit(x) = log1p(-x) - log(x) */
        if ((st = mt_ag_unary(MT_OP_neg, x, &s[5])) ||
            (st = mt_ag_unary(MT_OP_log1p, s[5], &s[6])) ||
            (st = mt_ag_unary(MT_OP_log, x, &s[7]))) {
            goto out_release;
        }
        mt_tensor *d = NULL;
        if ((st = mt_ag_binary(MT_OP_sub, s[6], s[7], &d)) == MT_OK) {
            st = loss_tail(n, d, g[0], w, &gi[1]);
        }
    }
out_release:
    release_all(s, SCRATCH);
    return st;
}

/* *out = log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), which never overflows. */
static mt_status
log_sigmoid(mt_tensor *x, mt_tensor **out)
{
    mt_tensor *s[4] = {NULL};
    mt_status st;
    if ((st = mt_ag_unary(MT_OP_abs, x, &s[0])) == MT_OK &&
        (st = mt_ag_unary(MT_OP_neg, s[0], &s[1])) == MT_OK &&
        (st = mt_ag_unary(MT_OP_exp, s[1], &s[2])) == MT_OK &&
        (st = mt_ag_unary(MT_OP_log1p, s[2], &s[3])) == MT_OK) {
        mt_tensor_clear(&s[0]);
        if ((st = scalar_op(MT_OP_clamp_max, x, 0.0, &s[0])) == MT_OK) {
            st = mt_ag_binary(MT_OP_sub, s[0], s[3], out);
        }
    }
    release_all(s, 4);
    return st;
}

// self (logits), target (one shape), weight, pos_weight or None. PyTorch's: with pw,
// d self = g ((pw t + 1 - t) sigmoid(x) - pw t), d target = g ((1 - pw) log_sigmoid(x) - x);
// without, d self = g (sigmoid(x) - t), d target = -g x; each times weight (/ numel)
mt_status
mt_grad_binary_cross_entropy_with_logits(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *x = n->saved[0], *t = n->saved[1], *w = n->saved[2], *pw = n->saved[3];
    mt_tensor *s[SCRATCH] = {NULL};
    mt_status st = MT_OK;
    mt_tensor *d = NULL;
    if (n->edges[0].node) {
        if ((st = mt_ag_unary(MT_OP_sigmoid, x, &s[0]))) {
            goto out_release;
        }
        if (pw == NULL) {
            st = mt_ag_binary(MT_OP_sub, s[0], t, &d);
        } else if ((st = mt_ag_binary(MT_OP_mul, pw, t, &s[1])) == MT_OK &&
                   (st = mt_ag_binary(MT_OP_sub, s[1], t, &s[2])) == MT_OK &&
                   (st = num(MT_OP_add, s[2], 1.0, &s[3])) == MT_OK &&
                   (st = mt_ag_binary(MT_OP_mul, s[3], s[0], &s[4])) == MT_OK) {
            st = mt_ag_binary(MT_OP_sub, s[4], s[1], &d);
        }
        if (st || (st = loss_tail(n, d, g[0], w, &gi[0]))) {
            goto out_release;
        }
    }
    if (n->edges[1].node) {
        d = NULL;
        if (pw == NULL) {
            st = mt_ag_unary(MT_OP_neg, x, &d);
        } else if ((st = log_sigmoid(x, &s[5])) == MT_OK &&
                   (st = num(MT_OP_mul, pw, -1.0, &s[6])) == MT_OK &&
                   (st = num(MT_OP_add, s[6], 1.0, &s[7])) == MT_OK) {
            mt_tensor *p = NULL;
            if ((st = mt_ag_binary(MT_OP_mul, s[7], s[5], &p)) == MT_OK) {
                st = mt_ag_binary(MT_OP_sub, p, x, &d);
                mt_tensor_release(p);
            }
        }
        if (st == MT_OK) {
            st = loss_tail(n, d, g[0], w, &gi[1]);
        }
    }
out_release:
    release_all(s, SCRATCH);
    return st;
}
