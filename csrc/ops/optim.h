/* The optimizer steps' arguments (ops.def's _fused_sgd_, _fused_adam_, _fused_adamw_,
 * _fused_rmsprop_) as their kernels read them: the lists by position and the hyperparameters as
 * core/optim_math.h's structs. Header-only, so the CUDA backend's host code reads them alike. */
#ifndef MT_OPS_OPTIM_H
#define MT_OPS_OPTIM_H

#include "core/optim_math.h"
#include "dispatch/dispatch.h"

/* The lists of each op, in schema order. */
enum { MT_SGD_PARAMS, MT_SGD_GRADS, MT_SGD_BUFS };
enum { MT_ADAM_PARAMS, MT_ADAM_GRADS, MT_ADAM_AVGS, MT_ADAM_SQS, MT_ADAM_MAX_SQS, MT_ADAM_STEPS };
enum {
    MT_RMSPROP_PARAMS,
    MT_RMSPROP_GRADS,
    MT_RMSPROP_SQS,
    MT_RMSPROP_GRAD_AVGS,
    MT_RMSPROP_BUFS,
    MT_RMSPROP_STEPS
};

/* _fused_sgd_(..., *, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step) */
static inline mt_sgd_hyper
mt_sgd_hyper_of(const mt_args *a)
{
    mt_sgd_hyper h = {a->f[2], a->f[1], a->f[3], a->f[0], a->b[0], a->b[1], a->b[2]};
    return h;
}

/* _fused_adam(w)_(..., *, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize) */
static inline mt_adam_hyper
mt_adam_hyper_of(const mt_args *a, bool decoupled)
{
    mt_adam_hyper h = {a->f[0], a->f[1], a->f[2], a->f[4], a->f[3], a->b[0], a->b[1], decoupled};
    return h;
}

/* _fused_rmsprop_(..., *, lr, alpha, eps, weight_decay, momentum, centered, maximize) */
static inline mt_rmsprop_hyper
mt_rmsprop_hyper_of(const mt_args *a)
{
    mt_rmsprop_hyper h = {a->f[0], a->f[1], a->f[2], a->f[3], a->f[4], a->b[0], a->b[1]};
    return h;
}

#endif
