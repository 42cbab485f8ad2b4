/* The CPU elementwise driver of elementwise.h: core/elementwise.c's front end around one
 * iterator run of a loop. */
#include "cpu/copy.h"
#include "cpu/elementwise.h"

static const mt_ew_backend cpu_backend = {mt_cpu_cast, mt_cpu_copy_into, false};

mt_status
mt_cpu_elementwise(mt_tensor *const *ins, int nin, mt_dtype compute, mt_loop_fn loop, void *ctx,
                   bool inplace, mt_tensor **out)
{
    mt_dtype in_dtypes[MT_ITER_MAX_OPS];
    for (int k = 0; k < nin && k < MT_ITER_MAX_OPS; k++) {
        in_dtypes[k] = compute;
    }
    return mt_cpu_elementwise_typed(ins, nin, in_dtypes, compute, loop, ctx, inplace, out);
}

mt_status
mt_cpu_elementwise_typed(mt_tensor *const *ins, int nin, const mt_dtype *in_dtypes,
                         mt_dtype result, mt_loop_fn loop, void *ctx, bool inplace,
                         mt_tensor **out)
{
    mt_ew_plan p;
    mt_status st = mt_ew_begin(&p, &cpu_backend, ins, nin, in_dtypes, result, inplace);
    if (st) {
        return st;
    }
    mt_iter it;
    st = mt_iter_build(&it, p.ndim, p.shape, p.ops, nin + 1);
    if (st == MT_OK) {
        mt_iter_run_parallel(&it, loop, ctx);
    }
    return mt_ew_end(&p, st, out);
}
