/* The losses and distances that PyTorch writes as compositions (ATen's Loss.cpp,
 * Distance.cpp), in terms of other ops through the dispatcher: smooth_l1_loss, huber_loss and
 * soft_margin_loss (which also have backward formulas of their own, formulas_nn.c, as PyTorch
 * names their nodes), kl_div, margin_ranking_loss, hinge_embedding_loss,
 * cosine_embedding_loss, poisson_nll_loss, triplet_margin_loss, pairwise_distance and
 * cosine_similarity. Each is written as a chain of ops (ops/op_chain.h); PyTorch's checks and
 * messages; every device. */
#include <math.h>

#include "core/elementwise.h"
#include "dispatch/kernels.h"
#include "ops/op_chain.h"
#include "ops/nn.h"

#define TWO_PI 6.28318530717958647693 /* Stirling's term's 2 pi */

/* The per-element loss of the chain s reduced into *out (PyTorch's apply_loss_reduction);
 * finishes s. */
static mt_status
reduce_loss(tmp *s, mt_tensor *loss, int64_t reduction, mt_tensor **out)
{
    mt_tensor *l = NULL;
    give(s, loss, &l);
    mt_status st = finish(s);
    return st ? st : mt_loss_finish(l, NULL, reduction, out);
}

/* sum of x over dim (not kept) */
static mt_tensor *
sum_over(tmp *s, mt_tensor *x, int64_t dim)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_sum(x, 1, &dim, false, -1, &r), &r);
}

// self, target (broadcast); |d| = |self - target|: 0.5 d^2 / beta below beta, else |d| - beta / 2
mt_status
mt_composite_smooth_l1_loss(mt_args *a)
{
    double beta = a->f[0];
    if (beta < 0) {
        return mt_fail(MT_ERUNTIME, "smooth_l1_loss does not support negative values for beta.");
    }
    tmp s = {0};
    mt_tensor *z = un(&s, MT_OP_abs, bin(&s, MT_OP_sub, a->t[0], a->t[1]));
    mt_tensor *quad = bin(&s, MT_OP_div, bin(&s, MT_OP_mul, scaled(&s, z, 0.5), z), num(&s, beta));
    mt_tensor *lin = bin(&s, MT_OP_sub, z, num(&s, 0.5 * beta));
    return reduce_loss(&s, sel(&s, bin(&s, MT_OP_lt, z, num(&s, beta)), quad, lin), a->i[0],
                       &a->out[0]);
}

// self, target (broadcast); |d|: 0.5 d^2 below delta, else delta (|d| - delta / 2)
mt_status
mt_composite_huber_loss(mt_args *a)
{
    double delta = a->f[0];
    if (!(delta > 0)) {
        return mt_fail(MT_ERUNTIME, "huber_loss does not support non-positive values for delta.");
    }
    tmp s = {0};
    mt_tensor *z = un(&s, MT_OP_abs, bin(&s, MT_OP_sub, a->t[0], a->t[1]));
    mt_tensor *quad = bin(&s, MT_OP_mul, scaled(&s, z, 0.5), z);
    mt_tensor *lin = scaled(&s, bin(&s, MT_OP_sub, z, num(&s, 0.5 * delta)), delta);
    return reduce_loss(&s, sel(&s, bin(&s, MT_OP_lt, z, num(&s, delta)), quad, lin), a->i[0],
                       &a->out[0]);
}

// self, target (+-1): log(1 + exp(-target * self))
mt_status
mt_composite_soft_margin_loss(mt_args *a)
{
    tmp s = {0};
    mt_tensor *e = un(&s, MT_OP_exp, bin(&s, MT_OP_mul, un(&s, MT_OP_neg, a->t[0]), a->t[1]));
    return reduce_loss(&s, un(&s, MT_OP_log1p, e), a->i[0], &a->out[0]);
}

// self (log-probabilities), target (probabilities, or log-probabilities with log_target):
// target * (log(target) - self), 0 where target is 0 (PyTorch's xlogy)
mt_status
mt_composite_kl_div(mt_args *a)
{
    tmp s = {0};
    mt_tensor *x = a->t[0], *t = a->t[1], *loss;
    if (a->b[0]) {
        loss = bin(&s, MT_OP_mul, un(&s, MT_OP_exp, t), bin(&s, MT_OP_sub, t, x));
    } else {
        mt_tensor *tlogt = bin(&s, MT_OP_mul, t, un(&s, MT_OP_log, t));
        mt_tensor *xlogy = sel(&s, bin(&s, MT_OP_eq, t, num(&s, 0.0)), num(&s, 0.0), tlogt);
        loss = bin(&s, MT_OP_sub, xlogy, bin(&s, MT_OP_mul, t, x));
    }
    return reduce_loss(&s, loss, a->i[0], &a->out[0]);
}

// input1, input2, target (+-1): max(0, -target * (input1 - input2) + margin)
mt_status
mt_composite_margin_ranking_loss(mt_args *a)
{
    tmp s = {0};
    mt_tensor *d = bin(&s, MT_OP_sub, a->t[0], a->t[1]);
    mt_tensor *m = bin(&s, MT_OP_add, bin(&s, MT_OP_mul, un(&s, MT_OP_neg, a->t[2]), d),
                       num(&s, a->f[0]));
    mt_tensor *r = NULL;
    mt_tensor *loss = failed(&s, m, m) ? NULL
                                       : own(&s, mt_op_clamp_min(m, mt_scalar_int(0), &r), &r);
    return reduce_loss(&s, loss, a->i[0], &a->out[0]);
}

// self, target (+-1): self where target is 1, max(0, margin - self) where it is -1
mt_status
mt_composite_hinge_embedding_loss(mt_args *a)
{
    tmp s = {0};
    mt_tensor *x = a->t[0], *t = a->t[1], *r = NULL;
    mt_tensor *m = bin(&s, MT_OP_sub, num(&s, a->f[0]), x);
    mt_tensor *clamped = failed(&s, m, m) ? NULL
                                          : own(&s, mt_op_clamp_min(m, mt_scalar_int(0), &r), &r);
    mt_tensor *zero = num(&s, 0.0);
    mt_tensor *out_margin = sel(&s, bin(&s, MT_OP_ne, t, num(&s, 1.0)), clamped, zero);
    mt_tensor *out_self = sel(&s, bin(&s, MT_OP_ne, t, num(&s, -1.0)), x, zero);
    return reduce_loss(&s, bin(&s, MT_OP_add, out_margin, out_self), a->i[0], &a->out[0]);
}

// input1, input2 (N, D) with target (N), or (D) with a 0-dim target: 1 - cos where target is
// 1, max(0, cos - margin) where it is -1
mt_status
mt_composite_cosine_embedding_loss(mt_args *a)
{
    mt_tensor *x1 = a->t[0], *x2 = a->t[1], *t = a->t[2];
    char s1[128], s2[128];
    if (t->ndim > 1) {
        return mt_fail(MT_ERUNTIME, "0D or 1D target tensor expected, multi-target not supported");
    }
    if (x1->ndim != t->ndim + 1 || x2->ndim != t->ndim + 1) {
        mt_format_sizes(s1, sizeof(s1), x1->ndim, x1->sizes);
        mt_format_sizes(s2, sizeof(s2), x2->ndim, x2->sizes);
        return mt_fail(MT_ERUNTIME,
                       "%dD target tensor expects %dD input tensors, but found inputs with sizes "
                       "%s "
                       "and %s.",
                       t->ndim, t->ndim + 1, s1, s2);
    }
    tmp s = {0};
    int64_t dim = t->ndim;
    mt_tensor *eps = num(&s, 1e-12); /* PyTorch's EPSILON */
    mt_tensor *prod = sum_over(&s, bin(&s, MT_OP_mul, x1, x2), dim);
    mt_tensor *mag1 = bin(&s, MT_OP_add, sum_over(&s, bin(&s, MT_OP_mul, x1, x1), dim), eps);
    mt_tensor *mag2 = bin(&s, MT_OP_add, sum_over(&s, bin(&s, MT_OP_mul, x2, x2), dim), eps);
    mt_tensor *cos = bin(&s, MT_OP_div, prod, un(&s, MT_OP_sqrt, bin(&s, MT_OP_mul, mag1, mag2)));
    mt_tensor *pos = bin(&s, MT_OP_sub, num(&s, 1.0), cos), *r = NULL;
    mt_tensor *shifted = bin(&s, MT_OP_sub, cos, num(&s, a->f[0]));
    mt_tensor *neg = failed(&s, shifted, shifted)
                         ? NULL
                         : own(&s, mt_op_clamp_min(shifted, mt_scalar_int(0), &r), &r);
    mt_tensor *zero = num(&s, 0.0);
    mt_tensor *out_pos = sel(&s, bin(&s, MT_OP_eq, t, num(&s, 1.0)), pos, zero);
    mt_tensor *out_neg = sel(&s, bin(&s, MT_OP_eq, t, num(&s, -1.0)), neg, zero);
    return reduce_loss(&s, bin(&s, MT_OP_add, out_pos, out_neg), a->i[0], &a->out[0]);
}

// input (a log-rate with log_input, else a rate), target (counts): exp(input) - target * input,
// or input - target * log(input + eps); with full, Stirling's term where target > 1
mt_status
mt_composite_poisson_nll_loss(mt_args *a)
{
    tmp s = {0};
    mt_tensor *x = a->t[0], *t = a->t[1], *loss;
    if (a->b[0]) {
        loss = bin(&s, MT_OP_sub, un(&s, MT_OP_exp, x), bin(&s, MT_OP_mul, t, x));
    } else {
        mt_tensor *logx = un(&s, MT_OP_log, bin(&s, MT_OP_add, x, num(&s, a->f[0])));
        loss = bin(&s, MT_OP_sub, x, bin(&s, MT_OP_mul, t, logx));
    }
    if (a->b[1]) {
        mt_tensor *tlogt = bin(&s, MT_OP_mul, t, un(&s, MT_OP_log, t));
        mt_tensor *half_log = scaled(&s, un(&s, MT_OP_log, scaled(&s, t, TWO_PI)), 0.5);
        mt_tensor *stirling = bin(&s, MT_OP_add, bin(&s, MT_OP_sub, tlogt, t), half_log);
        mt_tensor *small = bin(&s, MT_OP_le, t, num(&s, 1.0));
        loss = bin(&s, MT_OP_add, loss, sel(&s, small, num(&s, 0.0), stirling));
    }
    return reduce_loss(&s, loss, a->i[0], &a->out[0]);
}

// x1, x2 (broadcast): the p-norm of x1 - x2 + eps over the last dim
mt_status
mt_composite_pairwise_distance(mt_args *a)
{
    mt_tensor *x1 = a->t[0], *x2 = a->t[1];
    int64_t last = (x1->ndim > x2->ndim ? x1->ndim : x2->ndim) - 1;
    tmp s = {0};
    mt_tensor *d = bin(&s, MT_OP_add, bin(&s, MT_OP_sub, x1, x2), num(&s, a->f[1]));
    if (!failed(&s, d, d)) {
        s.st = mt_op_norm(d, mt_scalar_float(a->f[0]), 1, &last, a->b[0], -1, &a->out[0]);
    }
    return finish(&s);
}

// anchor, positive, negative (same dims): max(0, margin + d(a, p) - d(a, n)), d the
// pairwise_distance; with swap, d(a, n) is the smaller of it and d(p, n)
mt_status
mt_composite_triplet_margin_loss(mt_args *a)
{
    mt_tensor *an = a->t[0], *po = a->t[1], *ne = a->t[2];
    if (an->ndim != po->ndim || po->ndim != ne->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "The anchor, positive, and negative tensors are expected to have the same "
                       "number of dimensions, but got: anchor %dD, positive %dD, and negative %dD "
                       "inputs",
                       an->ndim, po->ndim, ne->ndim);
    }
    double p = a->f[1], eps = a->f[2];
    tmp s = {0};
    mt_tensor *r = NULL, *dpos, *dneg, *dswap;
    dpos = own(&s, mt_op_pairwise_distance(an, po, p, eps, false, &r), &r);
    dneg = s.st ? NULL : own(&s, mt_op_pairwise_distance(an, ne, p, eps, false, &r), &r);
    if (a->b[0]) {
        dswap = s.st ? NULL : own(&s, mt_op_pairwise_distance(po, ne, p, eps, false, &r), &r);
        dneg = bin(&s, MT_OP_minimum, dneg, dswap);
    }
    mt_tensor *m = bin(&s, MT_OP_sub, bin(&s, MT_OP_add, num(&s, a->f[0]), dpos), dneg);
    mt_tensor *loss = failed(&s, m, m) ? NULL
                                       : own(&s, mt_op_clamp_min(m, mt_scalar_int(0), &r), &r);
    return reduce_loss(&s, loss, a->i[0], &a->out[0]);
}

/* x expanded to shape, in dtype dt */
static mt_tensor *
as_common(tmp *s, mt_tensor *x, mt_dtype dt, int ndim, const int64_t *shape)
{
    mt_tensor *c = NULL, *e = NULL;
    mt_tensor *cast = x->dtype == dt ? x
                                     : own(s, mt_op__to_copy(x, dt, mt_tensor_device(x), &c), &c);
    return failed(s, cast, cast) ? NULL : own(s, mt_op_expand(cast, ndim, shape, &e), &e);
}

/* x's 2-norm over dim (kept), its value clamped to at least eps but its gradient that of the
 * norm itself, as PyTorch's clamp_min_ in no-grad mode */
static mt_tensor *
clamped_norm(tmp *s, mt_tensor *x, int64_t dim, double eps)
{
    mt_tensor *r = NULL;
    mt_tensor *n = failed(s, x, x)
                       ? NULL
                       : own(s, mt_op_norm(x, mt_scalar_int(2), 1, &dim, true, -1, &r), &r);
    mt_tensor *d = failed(s, n, n) ? NULL : own(s, mt_op_detach(n, &r), &r);
    mt_tensor *c = failed(s, d, d) ? NULL
                                   : own(s, mt_op_clamp_min(d, mt_scalar_float(eps), &r), &r);
    return bin(s, MT_OP_add, n, bin(s, MT_OP_sub, c, d));
}

// x1, x2 (broadcast, a float dtype in common): sum over dim of (x1 / |x1|) * (x2 / |x2|), the
// norms at least eps
mt_status
mt_composite_cosine_similarity(mt_args *a)
{
    mt_tensor *pair[2] = {a->t[0], a->t[1]};
    mt_dtype dt = mt_result_type(pair, 2);
    if (!mt_dtype_is_float(dt)) {
        return mt_fail(MT_ERUNTIME,
                       "expected common dtype to be floating point, yet common dtype is %s",
                       mt_dtype_scalar_name(dt));
    }
    int ndim;
    int64_t shape[MT_MAX_DIMS];
    mt_status st = mt_broadcast_shapes(pair[0]->ndim, pair[0]->sizes, pair[1]->ndim, pair[1]->sizes,
                                       &ndim, shape);
    if (st) {
        return st;
    }
    tmp s = {0};
    mt_tensor *x1 = as_common(&s, pair[0], dt, ndim, shape);
    mt_tensor *x2 = as_common(&s, pair[1], dt, ndim, shape);
    mt_tensor *u1 = bin(&s, MT_OP_div, x1, clamped_norm(&s, x1, a->i[0], a->f[0]));
    mt_tensor *u2 = bin(&s, MT_OP_div, x2, clamped_norm(&s, x2, a->i[0], a->f[0]));
    mt_tensor *prod = bin(&s, MT_OP_mul, u1, u2);
    give(&s, sum_over(&s, prod, a->i[0]), &a->out[0]);
    return finish(&s);
}
