/* Factories of evenly spaced values and of the identity on the CPU: arange, linspace, logspace,
 * eye, from their front end's plan (ops/factory_args.c).
 *
 * linspace and logspace follow PyTorch's RangeFactoriesKernel: the first half of the points
 * counts up from start and the second half down from end, so both ends are exact. */
#include <math.h>

#include "cpu/copy.h"
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"
#include "ops/range_point.h"

typedef enum { ARANGE, LINSPACE, LOGSPACE } range_kind;

/* Value i of the range r of kind k. */
static mt_scalar
range_value(const mt_range_spec *r, range_kind k, int64_t i)
{
    if (k == ARANGE) {
        /* unsigned: i * step may pass INT64_MAX on the way to a value in range */
        return r->ints ? mt_scalar_int((int64_t)((uint64_t)r->si + (uint64_t)i * (uint64_t)r->di))
                       : mt_scalar_float(r->s + (double)i * r->d);
    }
    double v = mt_range_point(r->dt == MT_FLOAT32, r->s, r->e, i, r->n);
    if (k == LOGSPACE) {
        v = pow(r->base, v);
    }
    return mt_dtype_is_float(r->dt) ? mt_scalar_float(v) : mt_scalar_int((int64_t)v);
}

// out (n) = the range's values: arange's start + i * step (n = ceil((end - start) / step)),
// linspace(start, end, steps), or base ** linspace(...) for logspace. One kernel for the three
// (ops.def's CPU_AS(range_factory) rows; the plan's op tells them apart).
mt_status
mt_cpu_range_factory(mt_args *a)
{
    const mt_op op = a->plan->op;
    const range_kind k = op == MT_OP_arange ? ARANGE : op == MT_OP_linspace ? LINSPACE : LOGSPACE;
    const mt_range_spec r = a->plan->range;
    char *p = mt_tensor_data(a->out[0]);
    size_t item = mt_dtype_size(r.dt);
    for (int64_t i = 0; i < r.n; i++) {
        mt_store_scalar(p + i * (int64_t)item, r.dt, range_value(&r, k, i));
    }
    return mt_factory_finish(a);
}

// out (n, m) = 1 on the diagonal, else 0
mt_status
mt_cpu_eye(mt_args *a)
{
    const mt_dtype dt = a->plan->range.dt;
    const int64_t n = a->plan->range.n, m = a->plan->range.m;
    mt_cpu_fill(a->out[0], mt_scalar_int(0));
    char *p = mt_tensor_data(a->out[0]);
    size_t item = mt_dtype_size(dt);
    for (int64_t i = 0; i < n && i < m; i++) {
        mt_store_scalar(p + (i * m + i) * (int64_t)item, dt, mt_scalar_int(1));
    }
    return mt_factory_finish(a);
}
