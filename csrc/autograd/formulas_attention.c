/* The backward formula of the fused CPU attention kernel (_scaled_dot_product_flash_attention_for_cpu):
 * it recomputes the probabilities through ops (ops/attention.c, the composite's own) rather
 * than keep them, and is written in ops itself, so a double backward records through it. */
#include "autograd/formula_chain.h"
#include "ops/nn.h"

// q (.., L, E), k (.., S, E), v (.., S, Ev), mask (.., L, S) or None, 3-D or 4-D; P = softmax(q k^T * scale +
// mask): dv = P^T g, dP = g v^T, dS = P (dP - rowsum(dP P)), dq = dS k * scale,
// dk = dS^T q * scale (the mask gets none, as PyTorch's: one that needs a gradient takes the
// math path)
mt_status
mt_grad__scaled_dot_product_flash_attention_for_cpu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *q = n->saved[0], *k = n->saved[1], *v = n->saved[2], *r = NULL;
    const double scale = mt_attention_scale(n->args.s[0], q);
    const int64_t last = -1;
    tmp s = {0};
    mt_tensor *p = own(&s, mt_attention_probs(q, k, n->saved[3], n->args.b[0], scale, &r), &r);
    mt_tensor *pt = failed(&s, p, p) ? NULL : own(&s, mt_op_transpose(p, -2, -1, &r), &r);
    mt_tensor *vt = s.st ? NULL : own(&s, mt_op_transpose(v, -2, -1, &r), &r);
    mt_tensor *dp = bin(&s, MT_OP_matmul, g[0], vt);
    mt_tensor *dpp = bin(&s, MT_OP_mul, dp, p);
    mt_tensor *rows = failed(&s, dpp, dpp) ? NULL
                                           : own(&s, mt_op_sum(dpp, 1, &last, true, -1, &r), &r);
    mt_tensor *ds = bin(&s, MT_OP_mul, p, bin(&s, MT_OP_sub, dp, rows));
    mt_tensor *dst = failed(&s, ds, ds) ? NULL : own(&s, mt_op_transpose(ds, -2, -1, &r), &r);
    give(&s, scaled(&s, bin(&s, MT_OP_matmul, ds, k), scale), &gi[0]);
    give(&s, scaled(&s, bin(&s, MT_OP_matmul, dst, q), scale), &gi[1]);
    give(&s, bin(&s, MT_OP_matmul, pt, g[0]), &gi[2]);
    return finish(&s);
}
