/* What the optimizer steps' host code (ops_optim.c) and kernels (optim.cu) share: the parameter
 * block of one parameter's update and the kernel getters. */
#ifndef MT_CUDA_OPTIM_H
#define MT_CUDA_OPTIM_H

#include <stdint.h>

#include "core/optim_math.h"
#include "cuda/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One parameter's update: n elements in each operand (contiguous, of the parameter's dtype), in
 * the order of core/optim_math.h's updates, NULL where the options keep no such state. */
typedef struct mt_cuda_optim {
    char *ops[5]; /* param, grad, then the state */
    int64_t n;
    char *step;   /* the step count (one element; Adam reads it after the step kernel), or NULL */
    int step_f64; /* its dtype: float64, else float32 */
    mt_sgd_hyper sgd;
    mt_adam_hyper adam;
    mt_rmsprop_hyper rmsprop;
} mt_cuda_optim;

/* (mt_cuda_optim): the update of kind (ops/optim.h's mt_optim_kind: 0 SGD, 1 Adam/AdamW,
 * 2 RMSprop) for a float32 (f64 = 0) or float64 parameter; any grid of MT_CUDA_THREADS threads */
const void *mt_cuda_optim_kernel(int kind, int f64);
/* (mt_cuda_optim): *step += 1, on one thread */
const void *mt_cuda_optim_step_kernel(void);

#ifdef __cplusplus
}
#endif

#endif
