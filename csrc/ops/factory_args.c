/* The front ends of the factories that compute their values (arange, linspace, logspace, eye),
 * of empty and randperm, for every device: PyTorch's checks and the plan (mt_range_spec) of the
 * kernels in csrc/cpu/factory.c, ranges.c, random.c and cuda/ops_shape.c, ops_sort.c. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops/factory_args.h"
#include "ops/fails.h"
#include "ops/front.h"

/* Whether the factory makes its result on a CUDA device: PyTorch's kernel names differ. */
static bool
on_cuda(const mt_args *a)
{
    return mt_factory_device(a).type == MT_CUDA;
}

/* The number of values start + i * step before end (exclusive), for a step of end's side of
 * start: ceil((end - start) / step) in unsigned arithmetic, which no int64 range overflows. */
static uint64_t
range_count(int64_t start, int64_t end, int64_t step)
{
    uint64_t dist = step > 0 ? (uint64_t)end - (uint64_t)start : (uint64_t)start - (uint64_t)end;
    uint64_t by = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    return dist / by + (dist % by != 0);
}

// start, end, step (end None: start is the end, from 0)
mt_status
mt_front_arange(const mt_args *a, mt_plan *p)
{
    mt_range_spec *r = &p->range;
    mt_scalar start = a->s[0], end = a->s[1], step = a->s[2];
    if (mt_scalar_is_none(end)) {
        end = start;
        start = mt_scalar_int(0);
    }
    if (mt_scalar_is_none(step)) {
        step = mt_scalar_int(1);
    }
    bool any_float = start.type == MT_FLOAT64 || end.type == MT_FLOAT64 || step.type == MT_FLOAT64;
    *r = (mt_range_spec){0};
    r->dt = a->dtype >= 0 ? (mt_dtype)a->dtype : any_float ? MT_DEFAULT_FLOAT : MT_INT64;
    double s = mt_scalar_to_double(start), e = mt_scalar_to_double(end),
           d = mt_scalar_to_double(step);
    if (!(d > 0 || d < 0)) { /* NaN too */
        return mt_fail(MT_ERUNTIME, "step must be nonzero");
    }
    if (!isfinite(s) || !isfinite(e)) {
        return mt_fail(MT_ERUNTIME, "unsupported range: %g -> %g", s, e);
    }
    if ((d > 0 && e < s) || (d < 0 && e > s)) {
        return mt_fail(MT_ERUNTIME, "upper bound and lower bound inconsistent with step sign");
    }
    if (r->dt == MT_BOOL) {
        return mt_fail_not_implemented("arange", on_cuda(a) ? "_cuda" : "_cpu", r->dt);
    }
    double count = ceil((e - s) / d);
    r->s = s;
    r->d = d;
    r->ints = mt_dtype_is_integral(r->dt, false);
    if (r->ints) {
        /* An integer arange computes in int64 from start and step taken as int64 first (PyTorch's
         * accumulate type): arange(0, 5, 1.5, dtype=int64) counts 0, 1, 2, 3, 4. */
        mt_status st;
        if ((st = mt_check_scalar_fits(start, MT_INT64)) ||
            (st = mt_check_scalar_fits(step, MT_INT64)) ||
            (r->dt == MT_INT64 && (st = mt_check_scalar_fits(end, MT_INT64)))) {
            return st;
        }
        r->si = mt_scalar_to_int(start);
        r->di = mt_scalar_to_int(step);
        if (r->dt == MT_INT64) {
            /* PyTorch sizes an int64 range in int64, exact past 2**53; other dtypes by the
             * doubles above (int32's arange(0, 5, 1.5) has 4 elements 0, 1, 2, 3). */
            if (r->di == 0) {
                return mt_fail(MT_EVALUE, "step must be nonzero");
            }
            count = (double)range_count(r->si, mt_scalar_to_int(end), r->di);
        }
    }
    if (count > 9.0e18) {
        return mt_fail(MT_ERUNTIME, "invalid size, possible overflow?");
    }
    r->n = (int64_t)count;
    return mt_front_output(p, r->dt, 1, &r->n);
}

/* Start or end as the output dtype sees it first (an integer dtype truncates 0.5 to 0). */
static double
endpoint(mt_scalar s, mt_dtype dt)
{
    return mt_dtype_is_float(dt) ? mt_scalar_to_double(s) : (double)mt_scalar_to_int(s);
}

// start, end, steps (and logspace's base): linspace and logspace
mt_status
mt_front_spaced(const mt_args *a, mt_plan *p)
{
    mt_range_spec *r = &p->range;
    *r = (mt_range_spec){0};
    r->dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    r->n = a->i[0];
    if (r->n < 0) {
        return mt_fail(MT_ERUNTIME, "number of steps must be non-negative");
    }
    if (r->dt == MT_BOOL) {
        return mt_fail_not_implemented(mt_op_names[p->op], on_cuda(a) ? "_cuda" : "_cpu", r->dt);
    }
    r->s = endpoint(a->s[0], r->dt);
    r->e = endpoint(a->s[1], r->dt);
    r->base = mt_scalar_is_none(a->s[2]) ? 10.0 : mt_scalar_to_double(a->s[2]);
    return mt_front_output(p, r->dt, 1, &r->n);
}

// n, m (None: n)
mt_status
mt_front_eye(const mt_args *a, mt_plan *p)
{
    mt_dtype *dt = &p->range.dt;
    int64_t *n = &p->range.n, *m = &p->range.m;
    *dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    *n = a->i[0];
    *m = (a->i_none & 2u) ? *n : a->i[1];
    if (*n < 0) {
        return mt_fail(MT_ERUNTIME, "n must be greater or equal to 0, got %lld", (long long)*n);
    }
    if (*m < 0) {
        return mt_fail(MT_ERUNTIME, "m must be greater or equal to 0, got %lld", (long long)*m);
    }
    const int64_t sizes[2] = {*n, *m};
    return mt_front_output(p, *dt, 2, sizes);
}

// size: the dtype (the sizes are the allocator's to check)
mt_status
mt_front_empty(const mt_args *a, mt_plan *p)
{
    p->range.dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    return mt_front_output(p, p->range.dt, a->l[0].n, a->l[0].v);
}

// n: int64 by default, no bool
mt_status
mt_front_randperm(const mt_args *a, mt_plan *p)
{
    p->range.dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_INT64;
    p->range.n = a->i[0];
    if (p->range.dt == MT_BOOL) {
        return mt_fail_not_implemented("randperm", "", p->range.dt);
    }
    return mt_front_output(p, p->range.dt, 1, &p->range.n);
}
