/* grid_sampler_2d and _3d and their backwards on CUDA (kernels: grid_sample.cu), in place of
 * the host round trip. The checks and the call's geometry are the front end's (ops/grid_sample.c,
 * a->plan->grid); the operands are read through their strides, the results are contiguous. */
#include "cuda/elementwise.h"
#include "cuda/grid_sample.h"
#include "cuda/kernels.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"

// input (N, C, [D,] H, W), grid (N, [OD,] OH, OW, 2 or 3); out (N, C, [OD,] OH, OW)
static mt_status
sampler_forward(mt_args *a, const char *name, const void *kernel)
{
    mt_tensor *in = a->t[0], *grid = a->t[1];
    mt_grid_geom g = a->plan->grid;
    if (kernel == NULL) {
        return mt_fail_not_implemented(name, "", in->dtype);
    }
    mt_status st = mt_cuda_use_device(mt_tensor_device(in));
    if (st == MT_OK) {
        void *ip = mt_tensor_data(in), *gp = mt_tensor_data(grid), *op = mt_tensor_data(a->out[0]);
        void *args[] = {&g, &ip, &gp, &op};
        st = mt_cuda_launch_n(kernel, g.N * g.OD * g.OH * g.OW, args);
    }
    return st;
}

// grad_output (N, C, [OD,] OH, OW), input, grid; out: the gradients of input and of grid
static mt_status
sampler_backward(mt_args *a, const char *name, const void *kernel)
{
    mt_tensor *go = a->t[0], *in = a->t[1], *grid = a->t[2], *gin = a->out[0], *ggrid = a->out[1];
    mt_grid_geom g = a->plan->grid;
    if (kernel == NULL) {
        return mt_fail_not_implemented(name, "", in->dtype);
    }
    mt_device dev = mt_tensor_device(in);
    mt_status st;
    if ((st = mt_cuda_fill(gin, mt_scalar_int(0))) ||
        (st = mt_cuda_fill(ggrid, mt_scalar_int(0))) || (st = mt_cuda_use_device(dev))) {
        return st;
    }
    void *gop = mt_tensor_data(go), *ip = mt_tensor_data(in), *gp = mt_tensor_data(grid);
    void *gip = mt_tensor_data(gin), *ggp = mt_tensor_data(ggrid);
    void *args[] = {&g, &gop, &ip, &gp, &gip, &ggp};
    return mt_cuda_launch_n(kernel, g.N * g.OD * g.OH * g.OW, args);
}

// grid_sampler_2d and _3d (a->plan->op tells them apart)
mt_status
mt_cuda_grid_sampler(mt_args *a)
{
    const mt_dtype dt = a->t[0]->dtype;
    if (a->plan->op == MT_OP_grid_sampler_3d) {
        return sampler_forward(a, "grid_sampler_3d_cuda", mt_cuda_grid3d_kernel(dt, 0));
    }
    return sampler_forward(a, "grid_sampler_2d_cuda", mt_cuda_grid_kernel(dt, 0));
}

// grid_sampler_2d_backward and _3d_backward
mt_status
mt_cuda_grid_sampler_backward(mt_args *a)
{
    const mt_dtype dt = a->t[1]->dtype;
    if (a->plan->op == MT_OP_grid_sampler_3d_backward) {
        return sampler_backward(a, "grid_sampler_3d_backward_cuda", mt_cuda_grid3d_kernel(dt, 1));
    }
    return sampler_backward(a, "grid_sampler_2d_backward_cuda", mt_cuda_grid_kernel(dt, 1));
}
