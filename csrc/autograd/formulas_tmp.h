/* What the formula files (formulas_math.c, formulas_activation.c) add to ops/chain.h's
 * scratch list: zeros shaped as an input, whether an edge wants a gradient, g times a
 * derivative. Only formula files include this. */
#ifndef MT_AUTOGRAD_FORMULAS_TMP_H
#define MT_AUTOGRAD_FORMULAS_TMP_H

#include "autograd/formulas.h"
#include "ops/chain.h"

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
