/* Factories on the CPU: empty (the ones that compute their values are ranges.c's). */
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"

// out (size) uninitialised
mt_status
mt_cpu_empty(mt_args *a)
{
    mt_status st = mt_tensor_empty(a->l[0].n, a->l[0].v, a->plan->range.dt, mt_factory_device(a),
                                   &a->out[0]);
    if (st == MT_OK && (st = mt_tensor_set_requires_grad(a->out[0], a->b[0]))) {
        mt_tensor_clear(&a->out[0]);
    }
    return st;
}
