/* What the backward formulas share besides the chain of ops (ops/op_chain.h, which says how a
 * formula manages its temporaries): zeros of an input's geometry, a number, whether an edge
 * wants a gradient, and g times a derivative. Every formula file includes this header. */
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

/* v as a Python number, an int64 one when v is an integer (int64 operands stay int64), else a
 * float64 one (mt_ags_number) */
static inline mt_tensor *
number_of(tmp *s, double v)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_ags_number(v, &r), &r);
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

/* x * conj(v), v a product's alpha or beta (1 when None): the gradient of v * x is conj(v) * g;
 * x itself when v is 1 */
static inline mt_tensor *
times_conj(tmp *s, mt_tensor *x, mt_scalar v)
{
    if (!v.is_complex || v.imag == 0) {
        return scaled(s, x, mt_scalar_is_none(v) ? 1.0 : mt_scalar_to_double(v));
    }
    mt_tensor *r = NULL;
    mt_scalar c = v;
    c.imag = -v.imag;
    mt_tensor *k = s->st ? NULL : own(s, mt_tensor_scalar(c, MT_COMPLEX128, &r), &r);
    return bin(s, MT_OP_mul, x, k);
}

/* g times the derivative d (one input), conjugated when complex */
static inline mt_status
chain(tmp *s, mt_tensor *g, mt_tensor *d, mt_tensor **out)
{
    give(s, bin(s, MT_OP_mul, g, conj_of(s, d)), out);
    return finish(s);
}

/* ---- formulas.h's shared op calls as steps of a chain ---- */

/* x with size 1 at the reduced dims, lined up with m (mt_ags_keep) */
static inline mt_tensor *
kept(tmp *s, mt_tensor *x, const mt_meta *m, const bool *red)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_ags_keep(x, m, red, &r), &r);
}

/* x summed over the dims red[d], kept as size 1 (mt_ags_sum_keep) */
static inline mt_tensor *
sum_kept(tmp *s, mt_tensor *x, const bool *red)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_ags_sum_keep(x, red, &r), &r);
}

/* op(x, v), v a number (mt_ags_with_number) */
static inline mt_tensor *
with_number(tmp *s, mt_op op, mt_tensor *x, double v)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_ags_with_number(op, x, v, &r), &r);
}

/* where(mask, v, x) (mt_ags_where_number) */
static inline mt_tensor *
where_number(tmp *s, mt_tensor *mask, double v, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return failed(s, mask, x) ? NULL : own(s, mt_ags_where_number(mask, v, x, &r), &r);
}

/* x with 1 where x is 0 (mt_ags_nonzero) */
static inline mt_tensor *
nonzero_of(tmp *s, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_ags_nonzero(x, &r), &r);
}

/* x.narrow(d, start, length) */
static inline mt_tensor *
narrowed(tmp *s, mt_tensor *x, int64_t d, int64_t start, int64_t length)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_narrow(x, d, start, length, &r), &r);
}

/* cat((x, y), d) */
static inline mt_tensor *
cat2(tmp *s, mt_tensor *x, mt_tensor *y, int64_t d)
{
    mt_tensor *r = NULL;
    return failed(s, x, y) ? NULL : own(s, mt_op_cat(2, (mt_tensor *[]){x, y}, d, &r), &r);
}

/* (x == y) | (isnan(x) & isnan(y)): where x is the value y that a NaN-propagating max picked, a
 * NaN counting as equal to a NaN result. */
static inline mt_tensor *
eq_or_nan(tmp *s, mt_tensor *x, mt_tensor *y)
{
    mt_tensor *eq = bin(s, MT_OP_eq, x, y);
    mt_tensor *both = bin(s, MT_OP_logical_and, un(s, MT_OP_isnan, x), un(s, MT_OP_isnan, y));
    return bin(s, MT_OP_logical_or, eq, both);
}

#endif
