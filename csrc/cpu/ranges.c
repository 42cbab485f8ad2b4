/* Factories of evenly spaced values and of the identity on the CPU: linspace, logspace, eye.
 *
 * linspace and logspace follow PyTorch's RangeFactoriesKernel: the first half of the points
 * counts up from start and the second half down from end, so both ends are exact. */
#include <math.h>

#include "cpu/copy.h"
#include "dispatch/kernels.h"

static mt_device
factory_device(const mt_args *a)
{
    return a->has_device ? a->device : MT_DEVICE_CPU;
}

/* Hands a finished factory result to the caller, with requires_grad set. */
static mt_status
finish(mt_args *a, mt_tensor *out)
{
    mt_status st = mt_tensor_set_requires_grad(out, a->b[0]);
    if (st) {
        mt_tensor_release(out);
        return st;
    }
    a->out[0] = out;
    return MT_OK;
}

/* Point i of steps from start to end: in the dtype's own arithmetic for floats (float32 points
 * are float32 sums, as PyTorch's), in double for integers (then truncated). */
static double
point(mt_dtype dt, double start, double end, int64_t i, int64_t steps)
{
    int64_t halfway = steps / 2;
    if (dt == MT_FLOAT32) {
        float s = (float)start, e = (float)end, step = (e - s) / (float)(steps - 1);
        return i < halfway ? s + step * (float)i : e - step * (float)(steps - i - 1);
    }
    double step = (end - start) / (double)(steps - 1);
    return i < halfway ? start + step * (double)i : end - step * (double)(steps - i - 1);
}

/* Start or end as the output dtype sees it first (an integer dtype truncates 0.5 to 0). */
static double
endpoint(mt_scalar s, mt_dtype dt)
{
    return mt_dtype_is_float(dt) ? mt_scalar_to_double(s) : (double)mt_scalar_to_int(s);
}

// out (steps) = linspace(start, end, steps), or base ** linspace(...) for logspace
static mt_status
spaced(mt_args *a, bool log, const char *kernel)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    int64_t steps = a->i[0];
    if (steps < 0) {
        return mt_fail(MT_ERUNTIME, "number of steps must be non-negative");
    }
    if (dt == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for 'Bool'", kernel);
    }
    double start = endpoint(a->s[0], dt), end = endpoint(a->s[1], dt);
    double base = mt_scalar_is_none(a->s[2]) ? 10.0 : mt_scalar_to_double(a->s[2]);
    mt_tensor *out;
    mt_status st = mt_tensor_empty(1, &steps, dt, factory_device(a), &out);
    if (st) {
        return st;
    }
    char *p = mt_tensor_data(out);
    size_t item = mt_dtype_size(dt);
    for (int64_t i = 0; i < steps; i++) {
        double v = steps == 1 ? start : point(dt, start, end, i, steps);
        if (log) {
            v = pow(base, v);
        }
        mt_scalar s = mt_dtype_is_float(dt) ? mt_scalar_float(v) : mt_scalar_int((int64_t)v);
        mt_store_scalar(p + i * (int64_t)item, dt, s);
    }
    return finish(a, out);
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
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    int64_t n = a->i[0], m = (a->i_none & 2u) ? n : a->i[1];
    if (n < 0) {
        return mt_fail(MT_ERUNTIME, "n must be greater or equal to 0, got %lld", (long long)n);
    }
    if (m < 0) {
        return mt_fail(MT_ERUNTIME, "m must be greater or equal to 0, got %lld", (long long)m);
    }
    int64_t sizes[2] = {n, m};
    mt_tensor *out;
    mt_status st = mt_tensor_empty(2, sizes, dt, factory_device(a), &out);
    if (st) {
        return st;
    }
    mt_cpu_fill(out, mt_scalar_int(0));
    char *p = mt_tensor_data(out);
    size_t item = mt_dtype_size(dt);
    for (int64_t i = 0; i < n && i < m; i++) {
        mt_store_scalar(p + (i * m + i) * (int64_t)item, dt, mt_scalar_int(1));
    }
    return finish(a, out);
}
