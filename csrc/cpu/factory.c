/* Factories on the CPU: empty and arange. */
#include "dispatch/kernels.h"
#include "ops/factory_args.h"

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
    mt_range_spec r;
    mt_tensor *out;
    mt_status st = mt_arange_spec(a, "cpu", &r);
    if (st || (st = mt_tensor_empty(1, &r.n, r.dt, factory_device(a), &out))) {
        return st;
    }
    char *p = mt_tensor_data(out);
    size_t item = mt_dtype_size(r.dt);
    for (int64_t i = 0; i < r.n; i++) {
        /* unsigned: i * step may pass INT64_MAX on the way to a value in range */
        mt_scalar v = r.ints ? mt_scalar_int((int64_t)((uint64_t)r.si + (uint64_t)i * (uint64_t)r.di))
                             : mt_scalar_float(r.s + (double)i * r.d);
        mt_store_scalar(p + i * (int64_t)item, r.dt, v);
    }
    return mt_factory_finish(a, out);
}
