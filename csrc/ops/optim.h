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

typedef enum mt_optim_kind { MT_OPTIM_SGD, MT_OPTIM_ADAM, MT_OPTIM_RMSPROP } mt_optim_kind;

#define MT_OPTIM_OPERANDS 5 /* Adam: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq */

/* Parameter i's operands in the order of core/optim_math.h's updates: ops[0] the parameter,
 * ops[1] its gradient (read only), ops[2..4] its state (written; NULL where these options keep
 * none), and *step its step count (NULL for SGD). */
static inline void
mt_optim_operands(const mt_args *a, mt_optim_kind kind, int i, mt_tensor **ops, mt_tensor **step)
{
    int lists[3] = {MT_SGD_BUFS, -1, -1}; /* the state lists, -1: unused */
    if (kind == MT_OPTIM_SGD) {
        lists[0] = mt_sgd_hyper_of(a).momentum != 0 ? MT_SGD_BUFS : -1;
    } else if (kind == MT_OPTIM_ADAM) {
        lists[0] = MT_ADAM_AVGS;
        lists[1] = MT_ADAM_SQS;
        lists[2] = mt_adam_hyper_of(a, false).amsgrad ? MT_ADAM_MAX_SQS : -1;
    } else {
        const mt_rmsprop_hyper h = mt_rmsprop_hyper_of(a);
        lists[0] = MT_RMSPROP_SQS;
        lists[1] = h.centered ? MT_RMSPROP_GRAD_AVGS : -1;
        lists[2] = h.momentum > 0 ? MT_RMSPROP_BUFS : -1;
    }
    ops[0] = a->tl[i];
    ops[1] = mt_args_tensorlist(a, 1).t[i];
    for (int k = 0; k < 3; k++) {
        ops[2 + k] = lists[k] < 0 ? NULL : mt_args_tensorlist(a, lists[k]).t[i];
    }
    /* Adam's and RMSprop's step counts are their last list */
    *step = kind == MT_OPTIM_SGD ? NULL : mt_args_tensorlist(a, MT_ADAM_STEPS).t[i];
}

/* Kernels loop over contiguous memory: a strided operand is updated through a dense copy. dense
 * makes one on the operand's device, copy_into writes one back. */
typedef mt_status (*mt_optim_dense_fn)(mt_tensor *t, mt_tensor **out);
typedef mt_status (*mt_optim_copy_fn)(mt_tensor *dst, mt_tensor *src);

/* staged[k] (all NULL on entry): ops[k] itself (a new reference) when it is contiguous, else a
 * dense copy; NULL where ops[k] is. */
static inline mt_status
mt_optim_stage(mt_tensor *const *ops, mt_optim_dense_fn dense, mt_tensor **staged)
{
    mt_status st = MT_OK;
    for (int k = 0; k < MT_OPTIM_OPERANDS && st == MT_OK; k++) {
        if (ops[k] != NULL && mt_tensor_is_contiguous(ops[k])) {
            staged[k] = mt_tensor_retain(ops[k]);
        } else if (ops[k] != NULL) {
            st = dense(ops[k], &staged[k]);
        }
    }
    return st;
}

/* After an update that ended with st: if it succeeded, each written operand (all but the
 * gradient) gets its dense copy back and a new version. Releases the staged tensors. */
static inline mt_status
mt_optim_unstage(mt_tensor *const *ops, mt_tensor **staged, mt_optim_copy_fn copy_into,
                 mt_status st)
{
    for (int k = 0; k < MT_OPTIM_OPERANDS && st == MT_OK; k++) {
        if (ops[k] == NULL || k == 1) {
            continue; /* the gradient is read only */
        }
        if (staged[k] != ops[k] && (st = copy_into(ops[k], staged[k]))) {
            break;
        }
        mt_tensor_bump_version(ops[k]);
    }
    for (int k = 0; k < MT_OPTIM_OPERANDS; k++) {
        mt_tensor_clear(&staged[k]);
    }
    return st;
}

#endif
