/* Small op calls the backward formulas share: each is one dispatcher call (or a few), so a
 * formula reads as its math and runs on whatever device its tensors are on. */
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/formula_chain.h"
#include "ops/ops.h"

mt_status
mt_ag_scale(mt_tensor *x, double k, mt_tensor **out)
{
    tmp s = {0};
    give(&s, bin(&s, MT_OP_mul, x, num(&s, k)), out);
    return finish(&s);
}

mt_status
mt_ag_by_conj(mt_op op, mt_tensor *g, mt_tensor *x, mt_tensor **out)
{
    tmp s = {0};
    give(&s, bin(&s, op, g, conj_of(&s, x)), out);
    return finish(&s);
}

mt_status
mt_ag_sum_to(mt_tensor *x, const mt_meta *m, mt_tensor **out)
{
    /* Dims x has in front of m's, and dims where m has size 1 and x does not, are summed. */
    int lead = x->ndim - m->ndim;
    if (lead < 0) {
        return mt_fail(MT_ESHAPE, "sum_to: the gradient has fewer dims than its input");
    }
    int64_t dims[MT_MAX_DIMS];
    int ndims = 0;
    for (int d = 0; d < x->ndim; d++) {
        bool summed = d < lead || (m->sizes[d - lead] == 1 && x->sizes[d] != 1);
        if (!summed && d >= lead && m->sizes[d - lead] != x->sizes[d]) {
            return mt_fail(MT_ESHAPE, "sum_to: shapes do not broadcast");
        }
        if (summed) {
            dims[ndims++] = d;
        }
    }
    if (ndims == 0) {
        return mt_op_reshape(x, m->ndim, m->sizes, out);
    }
    tmp s = {0};
    mt_tensor *r = NULL; /* keepdim: then one reshape drops the leading dims */
    mt_tensor *sum = own(&s, mt_op_sum(x, ndims, dims, true, -1, &r), &r);
    if (sum) {
        s.st = mt_op_reshape(sum, m->ndim, m->sizes, out);
    }
    return finish(&s);
}

mt_status
mt_ag_expand_to(mt_tensor *x, const mt_meta *m, mt_tensor **out)
{
    return mt_op_expand(x, m->ndim, m->sizes, out);
}

mt_status
mt_ag_zeros(const mt_meta *m, mt_tensor **out)
{
    return mt_op_zeros(m->ndim, m->sizes, m->dtype, m->device, false, out);
}
