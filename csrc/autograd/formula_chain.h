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

/* t's complex conjugate, t itself when real: the gradient of a complex function is g times
 * the conjugate of its derivative (PyTorch's conjugate Wirtinger convention) */
static inline mt_tensor *
conj_of(tmp *s, mt_tensor *t)
{
    return t == NULL || !mt_dtype_is_complex(t->dtype) ? t : un(s, MT_OP_conj_physical, t);
}

/* g times the derivative d (one input), conjugated when complex */
static inline mt_status
chain(tmp *s, mt_tensor *g, mt_tensor *d, mt_tensor **out)
{
    give(s, bin(s, MT_OP_mul, g, conj_of(s, d)), out);
    return finish(s);
}

#endif
