/* Factories on the CPU: empty and arange. */
#include <math.h>

#include "dispatch/kernels.h"

static mt_device
factory_device(const mt_args *a)
{
    return a->has_device ? a->device : MT_DEVICE_CPU;
}

// out (size) uninitialised
mt_status
mt_cpu_empty(mt_args *a)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    mt_status st = mt_tensor_empty(a->l[0].n, a->l[0].v, dt, factory_device(a), &a->out[0]);
    if (st == MT_OK && (st = mt_tensor_set_requires_grad(a->out[0], a->b[0]))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}

// out (ceil((end - start) / step)) = start + i * step
mt_status
mt_cpu_arange(mt_args *a)
{
    mt_scalar start = a->s[0], end = a->s[1], step = a->s[2];
    if (mt_scalar_is_none(end)) {
        end = start;
        start = mt_scalar_int(0);
    }
    if (mt_scalar_is_none(step)) {
        step = mt_scalar_int(1);
    }
    bool any_float = start.type == MT_FLOAT64 || end.type == MT_FLOAT64 || step.type == MT_FLOAT64;
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : any_float ? MT_DEFAULT_FLOAT : MT_INT64;
    double s = mt_scalar_to_double(start), e = mt_scalar_to_double(end),
           d = mt_scalar_to_double(step);
    if (d == 0) {
        return mt_fail(MT_ERUNTIME, "step must be nonzero");
    }
    if (!isfinite(s) || !isfinite(e)) {
        return mt_fail(MT_ERUNTIME, "unsupported range: %g -> %g", s, e);
    }
    if ((d > 0 && e < s) || (d < 0 && e > s)) {
        return mt_fail(MT_ERUNTIME, "upper bound and lower bound inconsistent with step sign");
    }
    if (dt == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"arange_cpu\" not implemented for 'Bool'");
    }
    double count = ceil((e - s) / d);
    if (count > 9.0e18) {
        return mt_fail(MT_ERUNTIME, "invalid size, possible overflow?");
    }
    int64_t n = (int64_t)count;
    mt_status st = mt_tensor_empty(1, &n, dt, factory_device(a), &a->out[0]);
    if (st) {
        return st;
    }
    char *p = mt_tensor_data(a->out[0]);
    size_t item = mt_dtype_size(dt);
    bool ints = !any_float;
    int64_t si = mt_scalar_to_int(start), di = mt_scalar_to_int(step);
    for (int64_t i = 0; i < n; i++) {
        mt_scalar v = ints ? mt_scalar_int(si + i * di) : mt_scalar_float(s + (double)i * d);
        mt_store_scalar(p + i * (int64_t)item, dt, v);
    }
    if ((st = mt_tensor_set_requires_grad(a->out[0], a->b[0]))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}
