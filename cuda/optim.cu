// The optimizer steps' kernels: one launch updates one parameter and its state, element by
// element, with core/optim_math.h's formulas (the CPU loops' own). Adam's bias corrections are
// computed on the device from the step count, which stays on the device as PyTorch's fused
// optimizers keep it, so a step never waits for the host.
#include "cuda/grid_stride.h"
#include "cuda/optim.h"

// operand k's element i, or NULL where the options keep no such state
#define AT(k, T) (p.ops[k] ? (T *)p.ops[k] + i : nullptr)

// step (one element) += 1, in its dtype
__global__ void
optim_step_kernel(mt_cuda_optim p)
{
    if (p.step_f64) {
        *(double *)p.step += 1;
    } else {
        *(float *)p.step += 1;
    }
}

// For T (float, suffix f32; double, f64): sgd_<sfx>_kernel over param, grad, buf (n);
// adam_<sfx>_kernel (Adam and AdamW) over param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (n);
// rmsprop_<sfx>_kernel over param, grad, square_avg, grad_avg, momentum_buffer (n)
#define OPTIM_KERNELS(T, sfx)                                                               \
    __global__ void sgd_##sfx##_kernel(mt_cuda_optim p)                                     \
    {                                                                                       \
        const mt_sgd_coef_##sfx c = mt_sgd_coef_##sfx##_of(p.sgd);                          \
        MT_CUDA_GRID_STRIDE(i, p.n)                                                         \
        {                                                                                   \
            mt_sgd_update_##sfx(AT(0, T), *AT(1, T), AT(2, T), &c);                         \
        }                                                                                   \
    }                                                                                       \
    __global__ void adam_##sfx##_kernel(mt_cuda_optim p)                                    \
    {                                                                                       \
        const double step = p.step_f64 ? *(const double *)p.step : *(const float *)p.step;  \
        const mt_adam_coef_##sfx c = mt_adam_coef_##sfx##_of(p.adam, step);                 \
        MT_CUDA_GRID_STRIDE(i, p.n)                                                         \
        {                                                                                   \
            mt_adam_update_##sfx(AT(0, T), *AT(1, T), AT(2, T), AT(3, T), AT(4, T), &c);    \
        }                                                                                   \
    }                                                                                       \
    __global__ void rmsprop_##sfx##_kernel(mt_cuda_optim p)                                 \
    {                                                                                       \
        const mt_rmsprop_coef_##sfx c = mt_rmsprop_coef_##sfx##_of(p.rmsprop);              \
        MT_CUDA_GRID_STRIDE(i, p.n)                                                         \
        {                                                                                   \
            mt_rmsprop_update_##sfx(AT(0, T), *AT(1, T), AT(2, T), AT(3, T), AT(4, T), &c); \
        }                                                                                   \
    }
OPTIM_KERNELS(float, f32)
OPTIM_KERNELS(double, f64)

static const void *const optim_kernels[3][2] = {
    {MT_KERNEL_PTR(sgd_f32_kernel), MT_KERNEL_PTR(sgd_f64_kernel)},
    {MT_KERNEL_PTR(adam_f32_kernel), MT_KERNEL_PTR(adam_f64_kernel)},
    {MT_KERNEL_PTR(rmsprop_f32_kernel), MT_KERNEL_PTR(rmsprop_f64_kernel)},
};

extern "C" const void *
mt_cuda_optim_kernel(int kind, int f64)
{
    return optim_kernels[kind][f64 != 0];
}

extern "C" const void *
mt_cuda_optim_step_kernel(void)
{
    return MT_KERNEL_PTR(optim_step_kernel);
}
