/* Small op calls the backward formulas share: each is one dispatcher call (or a few), so a
 * formula reads as its math and runs on whatever device its tensors are on. */
#include <string.h>

#include "autograd/autograd.h"
#include "ops/ops.h"

mt_status
mt_ag_binary(mt_op op, mt_tensor *x, mt_tensor *y, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    a.t[1] = y;
    mt_status st = mt_dispatch(op, &a);
    *out = st ? NULL : a.out[0];
    return st;
}

mt_status
mt_ag_unary(mt_op op, mt_tensor *x, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    mt_status st = mt_dispatch(op, &a);
    *out = st ? NULL : a.out[0];
    return st;
}

mt_status
mt_ag_scale(mt_tensor *x, double s, mt_tensor **out)
{
    mt_tensor *k = NULL;
    mt_status st = mt_tensor_scalar(mt_scalar_float(s), MT_FLOAT64, &k);
    if (st) {
        return st;
    }
    st = mt_ag_binary(MT_OP_mul, x, k, out);
    mt_tensor_release(k);
    return st;
}

mt_status
mt_ag_sum_to(mt_tensor *x, const mt_meta *m, mt_tensor **out)
{
    /* Dims x has in front of m's, and dims where m has size 1 and x does not, are summed. */
    int lead = x->ndim - m->ndim;
    if (lead < 0) {
        return mt_fail(MT_ESHAPE, "sum_to: the gradient has fewer dims than its input");
    }
    mt_args a;
    mt_args_init(&a);
    a.t[0] = x;
    a.l[0].none = false;
    a.l[0].n = 0;
    for (int d = 0; d < x->ndim; d++) {
        bool summed = d < lead || (m->sizes[d - lead] == 1 && x->sizes[d] != 1);
        if (!summed && d >= lead && m->sizes[d - lead] != x->sizes[d]) {
            return mt_fail(MT_ESHAPE, "sum_to: shapes do not broadcast");
        }
        if (summed) {
            a.l[0].v[a.l[0].n++] = d;
        }
    }
    if (a.l[0].n == 0) {
        return mt_op_reshape(x, m->ndim, m->sizes, out);
    }
    a.b[0] = true; /* keepdim: then one reshape drops the leading dims */
    mt_status st = mt_dispatch(MT_OP_sum, &a);
    if (st) {
        return st;
    }
    st = mt_op_reshape(a.out[0], m->ndim, m->sizes, out);
    mt_tensor_release(a.out[0]);
    return st;
}

mt_status
mt_ag_expand_to(mt_tensor *x, const mt_meta *m, mt_tensor **out)
{
    return mt_op_expand(x, m->ndim, m->sizes, out);
}

mt_status
mt_ag_zeros(const mt_meta *m, mt_tensor **out)
{
    mt_args a;
    mt_args_init(&a);
    a.l[0].none = false;
    a.l[0].n = m->ndim;
    memcpy(a.l[0].v, m->sizes, sizeof(int64_t) * (size_t)m->ndim);
    a.dtype = (int)m->dtype;
    a.has_device = true;
    a.device = m->device;
    mt_status st = mt_dispatch(MT_OP_zeros, &a);
    *out = st ? NULL : a.out[0];
    return st;
}
