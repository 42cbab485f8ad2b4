/* The intermediate tensors of a composite op, released together at its end: a composite that
 * chains a dozen ops (quantile, pinv) keeps each result in a slot of one mt_temps and clears
 * them all once, instead of a labelled exit per tensor. */
#ifndef MT_OPS_TEMPS_H
#define MT_OPS_TEMPS_H

#include "core/tensor.h"

#define MT_TEMPS_MAX 64 /* well above the most any composite holds (quantile: some 30) */

typedef struct mt_temps {
    mt_tensor *t[MT_TEMPS_MAX];
    int n;
} mt_temps;

/* A new empty slot for an op's result (valid until mt_temps_clear). How many a composite takes
 * is fixed by its code, far below MT_TEMPS_MAX (were it not, the last slot would be reused and
 * its tensor leak, never freed early). */
static inline mt_tensor **
mt_temp(mt_temps *p)
{
    mt_tensor **slot = &p->t[p->n < MT_TEMPS_MAX ? p->n++ : MT_TEMPS_MAX - 1];
    *slot = NULL;
    return slot;
}

static inline void
mt_temps_clear(mt_temps *p)
{
    for (int k = 0; k < p->n; k++) {
        mt_tensor_clear(&p->t[k]);
    }
    p->n = 0;
}

/* *out = a wrapped 0-dim number (weak in type promotion: it takes the other operand's dtype) */
static inline mt_status
mt_temp_number(mt_temps *p, double v, mt_tensor **out)
{
    mt_tensor **slot = mt_temp(p);
    mt_status st = mt_tensor_scalar(mt_scalar_float(v), MT_FLOAT64, slot);
    *out = *slot;
    return st;
}

/* the same for an integer: int64 operands stay int64 */
static inline mt_status
mt_temp_int(mt_temps *p, int64_t v, mt_tensor **out)
{
    mt_tensor **slot = mt_temp(p);
    mt_status st = mt_tensor_scalar(mt_scalar_int(v), MT_INT64, slot);
    *out = *slot;
    return st;
}

#endif
