/* Factories of evenly spaced values and of the identity on the CPU: linspace, logspace, eye.
 *
 * linspace and logspace follow PyTorch's RangeFactoriesKernel: the first half of the points
 * counts up from start and the second half down from end, so both ends are exact. */
#include <math.h>

#include "cpu/copy.h"
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/range_point.h"

static mt_device
factory_device(const mt_args *a)
{
    return a->has_device ? a->device : MT_DEVICE_CPU;
}

// out (steps) = linspace(start, end, steps), or base ** linspace(...) for logspace
static mt_status
spaced(mt_args *a, bool log, const char *kernel)
{
    mt_range_spec r;
    mt_tensor *out;
    mt_status st = mt_spaced_spec(a, kernel, &r);
    if (st || (st = mt_tensor_empty(1, &r.n, r.dt, factory_device(a), &out))) {
        return st;
    }
    char *p = mt_tensor_data(out);
    size_t item = mt_dtype_size(r.dt);
    for (int64_t i = 0; i < r.n; i++) {
        double v = mt_range_point(r.dt == MT_FLOAT32, r.s, r.e, i, r.n);
        if (log) {
            v = pow(r.base, v);
        }
        mt_scalar s = mt_dtype_is_float(r.dt) ? mt_scalar_float(v) : mt_scalar_int((int64_t)v);
        mt_store_scalar(p + i * (int64_t)item, r.dt, s);
    }
    return mt_factory_finish(a, out);
}

mt_status
mt_cpu_linspace(mt_args *a)
{
    return spaced(a, false, "linspace_cpu");
}

mt_status
mt_cpu_logspace(mt_args *a)
{
    return spaced(a, true, "logspace_cpu");
}

// out (n, m) = 1 on the diagonal, else 0
mt_status
mt_cpu_eye(mt_args *a)
{
    mt_dtype dt;
    int64_t n, m;
    mt_status st = mt_eye_spec(a, &dt, &n, &m);
    if (st) {
        return st;
    }
    int64_t sizes[2] = {n, m};
    mt_tensor *out;
    if ((st = mt_tensor_empty(2, sizes, dt, factory_device(a), &out))) {
        return st;
    }
    mt_cpu_fill(out, mt_scalar_int(0));
    char *p = mt_tensor_data(out);
    size_t item = mt_dtype_size(dt);
    for (int64_t i = 0; i < n && i < m; i++) {
        mt_store_scalar(p + (i * m + i) * (int64_t)item, dt, mt_scalar_int(1));
    }
    return mt_factory_finish(a, out);
}
