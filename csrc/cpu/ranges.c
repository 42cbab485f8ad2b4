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

/* Value i of a floating arange as PyTorch's CPU kernel (RangeFactoriesKernel) writes it: a
 * vector at a time, lane k of the vector that starts at i0 being base + k * step with base = start
 * + i0 * step rounded to the dtype first; the last values (fewer than two vectors) one by one,
 * start + i * step. All in double, each a * b + c fused (PyTorch's AVX2 and AVX-512 kernels are
 * built with FMA contraction). So arange(0, 1, 0.02)[9] is 0.16f + 0.02 = 0.17999999f, not the
 * float nearest 0.18. (float16 and bfloat16 compute as float32, dispatch/widen.c.) */
static double
arange_float(const mt_range_spec *r, int64_t i)
{
    /* lanes of PyTorch's 256-bit Vectorized<T>; its loop takes two vectors at a time */
    const int64_t lanes = 32 / (int64_t)mt_dtype_size(r->dt);
    if (i >= r->n - r->n % (2 * lanes)) {
        return fma(r->d, (double)i, r->s);
    }
    const int64_t i0 = i - i % lanes;
    double base = fma(r->d, (double)i0, r->s);
    if (r->dt == MT_FLOAT32) {
        base = (float)base;
    }
    return fma((double)(i - i0), r->d, base);
}

/* Value i of the range r of kind k. */
static mt_scalar
range_value(const mt_range_spec *r, range_kind k, int64_t i)
{
    if (k == ARANGE) {
        /* unsigned: i * step may pass INT64_MAX on the way to a value in range */
        return r->ints ? mt_scalar_int((int64_t)((uint64_t)r->si + (uint64_t)i * (uint64_t)r->di))
                       : mt_scalar_float(arange_float(r, i));
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
