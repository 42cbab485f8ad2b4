/* What the formulas written as chains of ops (ops/op_chain.h) share besides the chain itself:
 * zeros of an input's geometry, whether an edge wants a gradient, and g times a derivative. */
#ifndef MT_AUTOGRAD_FORMULA_CHAIN_H
#define MT_AUTOGRAD_FORMULA_CHAIN_H

#include "autograd/formulas.h"
#include "ops/op_chain.h"

static inline mt_tensor *
zeros_of(tmp *s, const mt_meta *m)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_ag_zeros(m, &r), &r);
}

static inline bool
wants(const mt_node *n, int edge)
{
    return n->edges[edge].node != NULL;
}

/* g times the derivative d (one input) */
static inline mt_status
chain(tmp *s, mt_tensor *g, mt_tensor *d, mt_tensor **out)
{
    give(s, bin(s, MT_OP_mul, g, d), out);
    return finish(s);
}

#endif
