/* Composite arithmetic and products: rsub -> sub, square -> pow, outer (and its alias ger) -> reshape + mul.
 * Written in terms of other ops through the dispatcher, for every device. */
#include "dispatch/kernels.h"
#include "ops/ops.h"

/* The exponent 2 as PyTorch's square passes it: a Python number, so bool squares to int64. */
static mt_status
two(mt_tensor **out)
{
    return mt_tensor_scalar(mt_scalar_int(2), MT_INT64, out);
}

// self, other (broadcast; other may be a number); out = other - alpha * self
mt_status
mt_composite_rsub(mt_args *a)
{
    return mt_op_sub(a->t[1], a->t[0], a->s[0], &a->out[0]);
}

// self (any shape); out = self ** 2
mt_status
mt_composite_square(mt_args *a)
{
    mt_tensor *e;
    mt_status st = two(&e);
    if (st == MT_OK) {
        st = mt_op_pow(a->t[0], e, &a->out[0]);
        mt_tensor_release(e);
    }
    return st;
}

mt_status
mt_composite_square_(mt_args *a)
{
    mt_tensor *e;
    mt_status st = two(&e);
    if (st == MT_OK) {
        st = mt_op_pow_(a->t[0], e, NULL);
        mt_tensor_release(e);
    }
    if (st == MT_OK) {
        a->out[0] = mt_tensor_retain(a->t[0]);
    }
    return st;
}

// self (n), vec2 (m); out (n, m) = self[i] * vec2[j], in their promoted dtype
mt_status
mt_composite_outer(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1], *col = NULL;
    if (x->ndim != 1 || y->ndim != 1) {
        bool bad_self = x->ndim != 1;
        return mt_fail(MT_ERUNTIME, "outer: Expected 1-D argument %s, but got %d-D",
                       bad_self ? "self" : "vec2", bad_self ? x->ndim : y->ndim);
    }
    int64_t shape[2] = {-1, 1};
    mt_status st = mt_op_reshape(x, 2, shape, &col);
    if (st == MT_OK) {
        st = mt_op_mul(col, y, &a->out[0]);
        mt_tensor_release(col);
    }
    return st;
}
