/* The upsample ops and their backwards on CUDA (kernels: upsample.cu). The checks and the plan
 * are the front end's (ops/upsample.c); the operand is made contiguous, the result is. */
#include "cuda/elementwise.h"
#include "cuda/kernels.h"
#include "cuda/kernels_index_fill_nn.h" /* mt_cuda_launch_n */
#include "cuda/ops.h"
#include "cuda/upsample.h"

/* The plan's forward (back 0: a->t[0] the input) or backward (back 1: a->t[0] grad_output) into
 * the result, a->out[0]. */
static mt_status
run(mt_args *a, int back)
{
    mt_tensor *src = NULL, *dst = a->out[0];
    const mt_dtype dt = a->t[0]->dtype;
    const void *kernel = mt_cuda_upsample_kernel(dt, back);
    if (kernel == NULL) {
        return mt_fail_not_implemented(back ? "upsample_backward_cuda" : "upsample_cuda", "", dt);
    }
    mt_resample_plan r = a->plan->resample;
    const mt_device dev = mt_tensor_device(a->t[0]);
    mt_status st;
    if ((back && (st = mt_cuda_fill(dst, mt_scalar_int(0)))) ||
        (st = mt_cuda_dense_as(a->t[0], dt, &src)) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    const int64_t points = r.planes * r.out[0] * r.out[1] * r.out[2];
    if (points > 0) {
        void *sp = mt_tensor_data(src), *dp = mt_tensor_data(dst);
        void *args[] = {&r, &sp, &dp};
        st = mt_cuda_launch_n(kernel, points, args);
    }
out_release:
    mt_tensor_clear(&src);
    return st;
}

// self (N, C, *in); out (N, C, *output_size): the upsample_* ops
mt_status
mt_cuda_upsample(mt_args *a)
{
    return run(a, 0);
}

// grad_output (N, C, *output_size), input_size (N, C, *in); out (N, C, *in): their backwards
mt_status
mt_cuda_upsample_backward(mt_args *a)
{
    return run(a, 1);
}
