/* bilinear, PyTorch's composite (ATen's Linear.cpp, there over _trilinear), here over matmul:
 * the one weight's product with input1 is a matrix product, then input2 weights it and a sum
 * closes it. PyTorch's checks and messages, in its order; every device; no backward of its own
 * (autograd records the ops it calls). */
#include "dispatch/kernels.h"
#include "ops/op_chain.h"
#include "ops/ops.h"

/* PyTorch's IndexError for size(dim) of a tensor with fewer dims (a 0-dim one has none) */
static mt_status
has_dim(const mt_tensor *t, int64_t dim)
{
    int d;
    if (t->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as %lld but tensor has no dimensions",
                       (long long)dim);
    }
    return mt_wrap_dim(dim, t->ndim, &d);
}

static mt_status
bilinear_checks(const mt_tensor *x1, const mt_tensor *x2, const mt_tensor *w, const mt_tensor *b)
{
    if (x1->dtype != x2->dtype || x1->dtype != w->dtype || (b && b->dtype != x1->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "All tensors must have the same dtype, got input1: %s, input2: %s, weight: "
                       "%s%s%s",
                       mt_dtype_c_name(x1->dtype), mt_dtype_c_name(x2->dtype),
                       mt_dtype_c_name(w->dtype), b ? ", bias: " : "",
                       b ? mt_dtype_c_name(b->dtype) : "");
    }
    if (x1->ndim != x2->ndim) {
        return mt_fail(MT_ERUNTIME, "bilinear(): input dimensions do not match: got %d and %d",
                       x1->ndim, x2->ndim);
    }
    for (int i = 0; i + 1 < x1->ndim; i++) {
        if (x1->sizes[i] != x2->sizes[i]) {
            return mt_fail(MT_ERUNTIME,
                           "bilinear(): input batch dimensions do not match at dim %d: got %lld "
                           "and %lld",
                           i, (long long)x1->sizes[i], (long long)x2->sizes[i]);
        }
    }
    mt_status st;
    if ((st = has_dim(x1, -1)) || (st = has_dim(w, 1))) {
        return st;
    }
    if (x1->sizes[x1->ndim - 1] != w->sizes[1]) {
        return mt_fail(MT_ERUNTIME,
                       "bilinear(): input1 size does not match weight size: got %lld but "
                       "expected %lld",
                       (long long)x1->sizes[x1->ndim - 1], (long long)w->sizes[1]);
    }
    if ((st = has_dim(w, 2))) {
        return st;
    }
    if (x2->sizes[x2->ndim - 1] != w->sizes[2]) {
        return mt_fail(MT_ERUNTIME,
                       "bilinear(): input2 size does not match weight size: got %lld but "
                       "expected %lld",
                       (long long)x2->sizes[x2->ndim - 1], (long long)w->sizes[2]);
    }
    if (b && (st = has_dim(b, 0))) {
        return st;
    }
    if (b && b->sizes[0] != w->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "bilinear(): bias size does not match weight size: got %lld but expected "
                       "%lld",
                       (long long)b->sizes[0], (long long)w->sizes[0]);
    }
    if (w->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "number of dimensions must match");
    }
    return MT_OK;
}

// input1 (*, I), input2 (*, J), weight (O, I, J), bias (O) or NULL:
// out[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o], as
// (input1 @ weight viewed (I, O * J)) viewed (*, O, J), times input2 (*, 1, J), summed over J
mt_status
mt_composite_bilinear(mt_args *a)
{
    mt_tensor *x1 = a->t[0], *x2 = a->t[1], *w = a->t[2], *b = a->t[3];
    mt_status st = bilinear_checks(x1, x2, w, b);
    if (st) {
        return st;
    }
    int64_t O = w->sizes[0], I = w->sizes[1], J = w->sizes[2];
    int n = x1->ndim;
    int64_t perm[3] = {1, 0, 2}, flat[2] = {I, O * J}, shape[MT_MAX_DIMS + 1], last = -1;
    for (int i = 0; i + 1 < n; i++) {
        shape[i] = x1->sizes[i];
    }
    shape[n - 1] = O;
    shape[n] = J;
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *wp = own(&s, mt_op_permute(w, 3, perm, &r), &r);
    mt_tensor *wf = failed(&s, wp, wp) ? NULL : own(&s, mt_op_reshape(wp, 2, flat, &r), &r);
    mt_tensor *t = bin(&s, MT_OP_matmul, x1, wf);
    mt_tensor *t3 = failed(&s, t, t) ? NULL : own(&s, mt_op_reshape(t, n + 1, shape, &r), &r);
    mt_tensor *x2u = own(&s, mt_op_unsqueeze(x2, -2, &r), &r);
    mt_tensor *p = bin(&s, MT_OP_mul, t3, x2u);
    mt_tensor *y = failed(&s, p, p) ? NULL : own(&s, mt_op_sum(p, 1, &last, false, -1, &r), &r);
    if (b) {
        y = bin(&s, MT_OP_add, y, b);
    }
    give(&s, y, &a->out[0]);
    return finish(&s);
}
