/* The front ends of the sort family (sort, argsort, topk, _unique2), for every device, and the
 * result shapes that the CPU kernels (cpu/sort.c) and the CUDA ones (cuda/ops_sort.c, through the
 * C API) share, so that both wrap dim, refuse the same calls and shape their results alike; each
 * backend only brings its sort_along. */
#include "ops/arg_checks.h"
#include "ops/fails.h"
#include "ops/front.h"

/* *dim wrapped, *k how many of each row along it the result keeps (all of them for sort) */
static mt_status
sort_spec(const mt_args *a, bool topk, int *dim, int64_t *k)
{
    const mt_tensor *self = a->t[0];
    mt_status st = mt_wrap_dim(a->i[topk ? 1 : 0], self->ndim, dim);
    if (st) {
        return st;
    }
    int64_t n = self->ndim ? self->sizes[*dim] : 1;
    if (!topk) {
        *k = n;
        return MT_OK;
    }
    if (self->dtype == MT_BOOL) {
        return mt_front_on_cuda(self)
                   ? mt_fail_not_implemented("topk_out_cuda", "", self->dtype)
                   : mt_fail(MT_ERUNTIME, "topk does not support bool dtypes on CPU");
    }
    if (a->i[0] < 0 || a->i[0] > n) {
        return mt_fail(MT_ERUNTIME, "selected index k out of range");
    }
    /* a 0-dim self gives its one element whatever k is, as PyTorch */
    *k = self->ndim ? a->i[0] : 1;
    return MT_OK;
}

/* The results once the plan is made (st MT_OK): self's shape with the plan's count along its
 * dim, the values in self's dtype (not argsort's) and their int64 positions. */
static mt_status
sort_outputs(mt_status st, mt_plan *p, const mt_tensor *self)
{
    int64_t outer, n, inner, shape[MT_MAX_DIMS];
    if (st) {
        return st;
    }
    mt_sort_geom(self, p->along.dim, p->along.n, &outer, &n, &inner, shape);
    if (p->op != MT_OP_argsort) {
        st = mt_front_output(p, self->dtype, self->ndim, shape);
    }
    return st ? st : mt_front_output(p, MT_INT64, self->ndim, shape);
}

// self (*), dim (i[0]), descending (b[0]): sort and argsort
mt_status
mt_front_sort(const mt_args *a, mt_plan *p)
{
    return sort_outputs(sort_spec(a, false, &p->along.dim, &p->along.n), p, a->t[0]);
}

// self (*), k (i[0]), dim (i[1]), largest (b[0])
mt_status
mt_front_topk(const mt_args *a, mt_plan *p)
{
    return sort_outputs(sort_spec(a, true, &p->along.dim, &p->along.n), p, a->t[0]);
}

// self (*), sorted (b[0]), return_inverse (b[1]), return_counts (b[2]): the distinct values
// (u) and, where asked, each one's count (u) are sized by the data, so the kernel makes them
// once it has counted (mt_unique_results, ops/arg_checks.h), as PyTorch allocates them; the
// inverse has self's shape where asked; a result not asked for is empty (0,) int64
mt_status
mt_front_unique(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0];
    int64_t zero = 0;
    mt_status st = mt_front_output_by_kernel(p, self->dtype);
    if (st == MT_OK) {
        st = a->b[1] ? mt_front_output(p, MT_INT64, self->ndim, self->sizes)
                     : mt_front_output(p, MT_INT64, 1, &zero);
    }
    if (st == MT_OK) {
        st = a->b[2] ? mt_front_output_by_kernel(p, MT_INT64)
                     : mt_front_output(p, MT_INT64, 1, &zero);
    }
    return st;
}

mt_status
mt_sort_with(mt_args *a, mt_sort_along_fn along)
{
    const mt_along_plan *p = &a->plan->along;
    mt_tensor *values = a->out[0], *indices = a->out[1];
    if (a->plan->op == MT_OP_argsort) {
        indices = a->out[0];
        return along(a->t[0], p->dim, p->n, a->b[0], NULL, &indices);
    }
    return along(a->t[0], p->dim, p->n, a->b[0], &values, &indices);
}
