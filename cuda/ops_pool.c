/* 2-D and 3-D pooling on CUDA: max_pool2d/3d (+ with_indices and its backward), avg_pool2d/3d
 * (+ backward), adaptive_avg_pool2d/3d (+ backward), adaptive_max_pool2d/3d (+ backward, max's
 * kernel). The window geometry is the front end's plan
 * (ops/pool_checks.c), the kernels pool.cu's; cuDNN pooling is not used since it returns no
 * indices and cannot express ceil_mode's clipped windows or divisor_override. */
#include "cuda/device_assert.h"
#include "cuda/elementwise.h"
#include "cuda/ops.h"

/* Runs pool kernel op over in into out (both contiguous, on one device); idx and bad as
 * kernels.h says. */
static mt_status
launch(mt_cuda_pool_op op, const pool_geom *g, mt_tensor *in, mt_tensor *out, mt_tensor *idx,
       mt_cuda_assert_record *bad)
{
    int64_t n = g->planes * g->od * g->oh * g->ow;
    if (n == 0) {
        return MT_OK;
    }
    const void *kernel = mt_cuda_pool_kernel(op, in->dtype);
    pool_geom geom = *g;
    const void *src = mt_tensor_data(in);
    void *dst = mt_tensor_data(out);
    int64_t *ip = idx ? (int64_t *)mt_tensor_data(idx) : NULL;
    void *args[] = {&geom, &src, &dst, &ip, &bad};
    int64_t blocks = (n + MT_CUDA_THREADS - 1) / MT_CUDA_THREADS;
    blocks = blocks < (1 << 20) ? blocks : (1 << 20);
    mt_status st = mt_cuda_use_device(mt_tensor_device(out));
    return st ? st : mt_cuda_launch(kernel, (unsigned)blocks, MT_CUDA_THREADS, args);
}

/* The forward ops: max_pool2d/3d (and with_indices, also int64 indices: out's shape, each
 * maximum's position within its plane, (d * H + h) * W + w), avg_pool2d/3d,
 * adaptive_avg_pool2d/3d, adaptive_max_pool2d/3d (with indices, as max's). self (N, C, [D,] H, W) or (C, [D,] H, W); out (N, C, [OD,] OH, OW)
 * or (C, [OD,] OH, OW), the plan's geometry. */
mt_status
mt_cuda_pool(mt_args *a)
{
    const mt_op which = a->plan->op;
    const bool adaptive_max = which == MT_OP_adaptive_max_pool2d ||
                              which == MT_OP_adaptive_max_pool3d;
    const mt_cuda_pool_op op = which == MT_OP_avg_pool2d || which == MT_OP_avg_pool3d
                                   ? MT_CUDA_POOL_AVG
                               : which == MT_OP_adaptive_avg_pool2d ||
                                       which == MT_OP_adaptive_avg_pool3d
                                   ? MT_CUDA_POOL_ADAPTIVE
                               : adaptive_max ? MT_CUDA_POOL_ADAPTIVE_MAX
                                              : MT_CUDA_POOL_MAX;
    const bool want_idx = which == MT_OP_max_pool2d_with_indices ||
                          which == MT_OP_max_pool3d_with_indices || adaptive_max;
    mt_tensor *self = a->t[0], *x = NULL;
    const pool_geom *g = &a->plan->pool;
    if (mt_cuda_pool_kernel(op, self->dtype) == NULL) {
        /* PyTorch's kernel names; max_pool's for both of its forms */
        static const char *const kernels[2][4] = {
            {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d_cuda"},
            {"max_pool3d_with_indices_out_frame", "avg_pool3d_out_cuda_frame",
             "adaptive_avg_pool3d_cuda", "adaptive_max_pool3d_cuda"}};
        return mt_fail_not_implemented(kernels[g->nd == 3][adaptive_max ? 3 : op], "", self->dtype);
    }
    mt_status st = mt_cuda_dense_as(self, self->dtype, &x);
    if (st == MT_OK) {
        st = launch(op, g, x, a->out[0], want_idx ? a->out[1] : NULL, NULL);
    }
    mt_tensor_clear(&x);
    return st;
}

/* The backward ops: max_pool2d/3d_with_indices_backward (the forward's indices in t[2],
 * checked to lie in their planes), avg_pool2d/3d_backward, _adaptive_avg_pool2d/3d_backward.
 * grad_output (N, C, [OD,] OH, OW) or (C, [OD,] OH, OW), self (N, C, [D,] H, W) or
 * (C, [D,] H, W); out = zeros
 * shaped as self with the gradient of grad_output scattered in, the plan's geometry. */
mt_status
mt_cuda_pool_backward(mt_args *a)
{
    const mt_op which = a->plan->op;
    const mt_cuda_pool_op op = which == MT_OP_avg_pool2d_backward ||
                                       which == MT_OP_avg_pool3d_backward
                                   ? MT_CUDA_POOL_AVG_BACK
                               : which == MT_OP__adaptive_avg_pool2d_backward ||
                                       which == MT_OP__adaptive_avg_pool3d_backward
                                   ? MT_CUDA_POOL_ADAPTIVE_BACK
                                   : MT_CUDA_POOL_MAX_BACK;
    mt_tensor *idx = op == MT_CUDA_POOL_MAX_BACK ? a->t[2] : NULL;
    const pool_geom *g = &a->plan->pool;
    mt_tensor *grad = NULL, *ix = NULL, *gx = a->out[0];
    mt_cuda_assert_record *bad = NULL;
    mt_status st;
    if ((st = mt_cuda_fill(gx, mt_scalar_int(0))) ||
        (st = mt_cuda_dense_as(a->t[0], a->t[0]->dtype, &grad))) {
        goto out_release;
    }
    /* an index outside its plane fails a device-side assertion: nothing waits for the kernel */
    if (idx &&
        ((st = mt_cuda_dense_as(idx, idx->dtype, &ix)) || (st = mt_cuda_assert_record_get(&bad)))) {
        goto out_release;
    }
    st = launch(op, g, grad, gx, ix, bad);
out_release:
    mt_tensor_clear(&grad);
    mt_tensor_clear(&ix);
    return st;
}
