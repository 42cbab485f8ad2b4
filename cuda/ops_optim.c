/* The CUDA key's optimizer steps (_fused_sgd_, _fused_adam_, _fused_adamw_, _fused_rmsprop_):
 * one launch per parameter of optim.cu's update kernel, after the step kernel for Adam and
 * RMSprop. The front end (ops/optim.c) has checked the lists and the dispatcher the devices;
 * strided operands are updated through dense copies. */
#include "cuda/elementwise.h"
#include "cuda/kernels_index_fill_nn.h" /* mt_cuda_launch_n */
#include "cuda/ops.h"
#include "cuda/optim.h"
#include "ops/optim.h"

/* *out = a dense copy of a strided operand: a workspace, copied back once updated */
static mt_status
dense_copy(mt_tensor *t, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(t->ndim, t->sizes, t->dtype, mt_tensor_device(t), out);
    if (st == MT_OK && (st = mt_cuda_copy_into(*out, t))) {
        mt_tensor_clear(out);
    }
    return st;
}

/* One parameter's update (ops and step as mt_optim_operands gives them) of kind, with p's
 * hyperparameters. */
static mt_status
apply(mt_tensor *const *ops, mt_tensor *step, mt_optim_kind kind, mt_cuda_optim *p)
{
    mt_tensor *staged[MT_OPTIM_OPERANDS] = {NULL};
    mt_status st = mt_cuda_use_device(mt_tensor_device(ops[0]));
    if (st || (st = mt_optim_stage(ops, dense_copy, staged))) {
        return mt_optim_unstage(ops, staged, mt_cuda_copy_into, st);
    }
    for (int k = 0; k < MT_OPTIM_OPERANDS; k++) {
        p->ops[k] = staged[k] ? mt_tensor_data(staged[k]) : NULL;
    }
    p->n = mt_tensor_numel(ops[0]);
    p->step = step ? mt_tensor_data(step) : NULL;
    p->step_f64 = step && step->dtype == MT_FLOAT64;
    void *args[] = {p};
    if (step && (st = mt_cuda_launch(mt_cuda_optim_step_kernel(), 1, 1, args)) == MT_OK) {
        mt_tensor_bump_version(step);
    }
    if (st == MT_OK) {
        const void *kernel = mt_cuda_optim_kernel((int)kind, ops[0]->dtype == MT_FLOAT64);
        st = mt_cuda_launch_n(kernel, p->n, args);
    }
    return mt_optim_unstage(ops, staged, mt_cuda_copy_into, st);
}

static mt_status
run_steps(mt_args *a, mt_optim_kind kind, mt_cuda_optim *p)
{
    mt_status st = MT_OK;
    for (int i = 0; st == MT_OK && i < a->ntl; i++) {
        mt_tensor *ops[MT_OPTIM_OPERANDS], *step;
        mt_optim_operands(a, kind, i, ops, &step);
        st = apply(ops, step, kind, p);
    }
    return st;
}

mt_status
mt_cuda__fused_sgd_(mt_args *a)
{
    mt_cuda_optim p = {.sgd = mt_sgd_hyper_of(a)};
    return run_steps(a, MT_OPTIM_SGD, &p);
}

mt_status
mt_cuda__fused_adam_(mt_args *a)
{
    mt_cuda_optim p = {.adam = mt_adam_hyper_of(a, false)};
    return run_steps(a, MT_OPTIM_ADAM, &p);
}

mt_status
mt_cuda__fused_adamw_(mt_args *a)
{
    mt_cuda_optim p = {.adam = mt_adam_hyper_of(a, true)};
    return run_steps(a, MT_OPTIM_ADAM, &p);
}

mt_status
mt_cuda__fused_rmsprop_(mt_args *a)
{
    mt_cuda_optim p = {.rmsprop = mt_rmsprop_hyper_of(a)};
    return run_steps(a, MT_OPTIM_RMSPROP, &p);
}
