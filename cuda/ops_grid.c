/* grid_sampler_2d and grid_sampler_2d_backward on CUDA (kernels: grid_sample.cu), in place of
 * the host round trip. The checks are the front end's (ops/grid_sample.c); the operands are read
 * through their strides, the results are contiguous. */
#include "cuda/elementwise.h"
#include "cuda/grid_sample.h"
#include "cuda/kernels.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"

/* The call's sizes, strides and modes (input t[k], grid t[k + 1]). */
static mt_cuda_grid
grid_of(const mt_args *a, int k)
{
    const mt_tensor *in = a->t[k], *grid = a->t[k + 1];
    mt_cuda_grid g = {.N = in->sizes[0],
                      .C = in->sizes[1],
                      .H = in->sizes[2],
                      .W = in->sizes[3],
                      .OH = grid->sizes[1],
                      .OW = grid->sizes[2],
                      .mode = (int)a->i[0],
                      .padding = (int)a->i[1],
                      .align = a->b[0]};
    for (int d = 0; d < 4; d++) {
        g.is[d] = in->strides[d];
        g.gs[d] = grid->strides[d];
    }
    return g;
}

// input (N, C, H, W), grid (N, OH, OW, 2); out (N, C, OH, OW)
mt_status
mt_cuda_grid_sampler_2d(mt_args *a)
{
    mt_tensor *in = a->t[0], *grid = a->t[1], *out = NULL;
    mt_cuda_grid g = grid_of(a, 0);
    const void *kernel = mt_cuda_grid_kernel(in->dtype, 0);
    if (kernel == NULL) {
        return mt_fail_not_implemented("grid_sampler_2d_cuda", "", in->dtype);
    }
    int64_t sizes[4] = {g.N, g.C, g.OH, g.OW};
    mt_status st = mt_tensor_empty(4, sizes, in->dtype, mt_tensor_device(in), &out);
    if (st == MT_OK && (st = mt_cuda_use_device(mt_tensor_device(in))) == MT_OK) {
        void *ip = mt_tensor_data(in), *gp = mt_tensor_data(grid), *op = mt_tensor_data(out);
        void *args[] = {&g, &ip, &gp, &op};
        st = mt_cuda_launch_n(kernel, g.N * g.OH * g.OW, args);
    }
    if (st) {
        mt_tensor_clear(&out);
    }
    a->out[0] = out;
    return st;
}

// grad_output (N, C, OH, OW), input (N, C, H, W), grid (N, OH, OW, 2); out: the gradients of
// input and of grid
mt_status
mt_cuda_grid_sampler_2d_backward(mt_args *a)
{
    mt_tensor *go = a->t[0], *in = a->t[1], *grid = a->t[2], *gin = NULL, *ggrid = NULL;
    mt_cuda_grid g = grid_of(a, 1);
    const void *kernel = mt_cuda_grid_kernel(in->dtype, 1);
    if (kernel == NULL) {
        return mt_fail_not_implemented("grid_sampler_2d_backward_cuda", "", in->dtype);
    }
    for (int d = 0; d < 4; d++) {
        g.os[d] = go->strides[d];
    }
    mt_device dev = mt_tensor_device(in);
    mt_status st;
    if ((st = mt_tensor_empty(4, in->sizes, in->dtype, dev, &gin)) ||
        (st = mt_tensor_empty(4, grid->sizes, in->dtype, dev, &ggrid)) ||
        (st = mt_cuda_fill(gin, mt_scalar_int(0))) ||
        (st = mt_cuda_fill(ggrid, mt_scalar_int(0))) || (st = mt_cuda_use_device(dev))) {
        goto out_release;
    }
    void *gop = mt_tensor_data(go), *ip = mt_tensor_data(in), *gp = mt_tensor_data(grid);
    void *gip = mt_tensor_data(gin), *ggp = mt_tensor_data(ggrid);
    void *args[] = {&g, &gop, &ip, &gp, &gip, &ggp};
    st = mt_cuda_launch_n(kernel, g.N * g.OH * g.OW, args);
out_release:
    if (st) {
        mt_tensor_clear(&gin);
        mt_tensor_clear(&ggrid);
    }
    a->out[0] = gin;
    a->out[1] = ggrid;
    return st;
}
