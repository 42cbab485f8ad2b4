/* A chain of op calls whose intermediates one scratch list owns, for code written as math over
 * ops (autograd formulas, composite ops): each step calls an op through the dispatcher and
 * keeps its result in the list; a failed step makes every later one a no-op returning NULL,
 * and finish() releases them all on every path.
 *
 *     tmp s = {0};
 *     mt_tensor *d = bin(&s, MT_OP_div, g, un(&s, MT_OP_cos, x));
 *     give(&s, d, out);
 *     return finish(&s);
 *
 * This is the one way the backward formulas (csrc/autograd/formulas*.c) manage their
 * temporaries, so that none leaks on an error path and none is released twice:
 *   - a function that makes intermediates declares one `tmp s = {0}` and every return of it is
 *     `return finish(&s);` (or a helper's that finishes s, such as chain());
 *   - the result of an op called directly (one with more than tensor arguments) is adopted
 *     right after the call: `mt_tensor *r = NULL; x = own(&s, mt_op_narrow(y, 0, 0, k, &r), &r);`,
 *     and the call is made only while s has not failed: `s.st ? NULL : own(...)`, or
 *     `failed(&s, y, y) ? NULL : own(...)` when y is itself a step's result;
 *   - a gradient (a result handed to the caller) is written by give(), or by an op called
 *     into it while s has not failed: `if (s.st == MT_OK) { s.st = mt_op_mm(a, b, &gi[0]); }`;
 *   - static helpers take the caller's list (`tmp *s`) and return a step's result or NULL,
 *     or, as chain() does, end the caller's chain: finish it and return its status, called
 *     only as `return helper(&s, ...);`;
 *   - nothing else releases an intermediate: no mt_tensor_clear, no second scratch list.
 * tests/core/test_formula_temporaries.py checks the formula files keep to it.
 *
 * Static inline: each file that includes it uses a few. No formula or op lives here. */
#ifndef MT_OPS_OP_CHAIN_H
#define MT_OPS_OP_CHAIN_H

#include <stdlib.h>

#include "ops/ops.h"

/* Intermediates held in the list itself; a longer chain (one whose length depends on the input,
 * as cumprod's backward) puts the rest on the heap. */
#define TMP_INLINE 32

typedef struct tmp {
    mt_status st;
    int n;   /* intermediates held: t[0 .. TMP_INLINE), then more[] */
    int cap; /* slots of more */
    mt_tensor *t[TMP_INLINE];
    mt_tensor **more;
} tmp;

/* Takes the reference *out (of an op that returned st) into s; NULL once s has failed. A
 * pointer, read after the op's call: C leaves the order of the arguments' evaluation open. */
static inline mt_tensor *
own(tmp *s, mt_status st, mt_tensor **out)
{
    mt_tensor *r = *out;
    if (st == MT_OK && s->n == TMP_INLINE + s->cap) {
        int cap = s->cap ? 2 * s->cap : TMP_INLINE;
        mt_tensor **more = realloc(s->more, sizeof(*more) * (size_t)cap);
        if (more == NULL) { /* released, and *out no longer points at it */
            mt_tensor_clear(out);
            st = mt_fail(MT_ENOMEM, "out of memory holding the intermediates of a chain of ops");
        } else {
            s->more = more;
            s->cap = cap;
        }
    }
    if (st) {
        s->st = st;
        return NULL;
    }
    if (s->n < TMP_INLINE) {
        s->t[s->n] = r;
    } else {
        s->more[s->n - TMP_INLINE] = r;
    }
    s->n++;
    return r;
}

static inline bool
failed(tmp *s, mt_tensor *x, mt_tensor *y)
{
    if (s->st == MT_OK && (x == NULL || y == NULL)) {
        s->st = mt_fail(MT_ERUNTIME, "a chain of ops with a missing operand");
    }
    return s->st != MT_OK;
}

/* op(x, y) for an op of two tensor arguments (the rest at their defaults); un: of one */
static inline mt_tensor *
bin(tmp *s, mt_op op, mt_tensor *x, mt_tensor *y)
{
    if (failed(s, x, y)) {
        return NULL;
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    a.t[1] = y;
    mt_status st = mt_dispatch(op, &a);
    return own(s, st, &a.out[0]);
}

static inline mt_tensor *
un(tmp *s, mt_op op, mt_tensor *x)
{
    if (failed(s, x, x)) {
        return NULL;
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    mt_status st = mt_dispatch(op, &a);
    return own(s, st, &a.out[0]);
}

/* A Python number as the ops see one: weak in type promotion, so g keeps its dtype. */
static inline mt_tensor *
num(tmp *s, double v)
{
    mt_tensor *r = NULL;
    return s->st ? NULL : own(s, mt_tensor_scalar(mt_scalar_float(v), MT_FLOAT64, &r), &r);
}

/* cond ? x : y */
static inline mt_tensor *
sel(tmp *s, mt_tensor *cond, mt_tensor *x, mt_tensor *y)
{
    if (failed(s, cond, x) || failed(s, y, y)) {
        return NULL;
    }
    mt_tensor *r = NULL;
    return own(s, mt_op_where(cond, x, y, &r), &r);
}

/* x with a dim of size 1 inserted at d */
static inline mt_tensor *
unsqueezed(tmp *s, mt_tensor *x, int64_t d)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_unsqueeze(x, d, &r), &r);
}

/* x * v, or x itself when v is 1 */
static inline mt_tensor *
scaled(tmp *s, mt_tensor *x, double v)
{
    return v == 1.0 ? x : bin(s, MT_OP_mul, x, num(s, v));
}

/* *out = x (a new reference), unless s has failed. */
static inline void
give(tmp *s, mt_tensor *x, mt_tensor **out)
{
    if (!failed(s, x, x)) {
        *out = mt_tensor_retain(x);
    }
}

/* Releases the intermediates; the chain's status. */
static inline mt_status
finish(tmp *s)
{
    for (int k = 0; k < s->n; k++) {
        mt_tensor_clear(k < TMP_INLINE ? &s->t[k] : &s->more[k - TMP_INLINE]);
    }
    free(s->more);
    s->more = NULL;
    s->n = s->cap = 0;
    return s->st;
}

#endif
