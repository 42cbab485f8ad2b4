/* Fused optimizer updates on the CPU: one call updates every parameter of an optimizer step.
 *
 * Each function takes n parameters and, for each, its gradient and its state tensors (all of the
 * parameter's shape and dtype, float32 or float64, on the CPU), and updates the parameters and
 * the state in place with PyTorch's formulas (the single-tensor versions in torch/optim/).
 * Everything is checked before anything is written, so a bad call changes nothing. The state
 * tensors are made by the caller (minitorch/optim/); these functions only update them. */
#ifndef MT_CPU_OPTIM_H
#define MT_CPU_OPTIM_H

#include <stdbool.h>

#include "core/tensor.h"

typedef struct mt_sgd_opts {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
} mt_sgd_opts;

/* bufs (n momentum buffers) is read only when momentum != 0; first[i] says that bufs[i] holds
 * nothing yet and starts as the gradient, as PyTorch's buffer starts as a clone of it. */
mt_status mt_cpu_fused_sgd(int n, mt_tensor *const *params, mt_tensor *const *grads,
                           mt_tensor *const *bufs, const bool *first, const mt_sgd_opts *o);

typedef struct mt_adam_opts {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
    bool decoupled_weight_decay; /* AdamW */
} mt_adam_opts;

/* max_exp_avg_sqs is read only with amsgrad; steps are one-element tensors, incremented here. */
mt_status mt_cpu_fused_adam(int n, mt_tensor *const *params, mt_tensor *const *grads,
                            mt_tensor *const *exp_avgs, mt_tensor *const *exp_avg_sqs,
                            mt_tensor *const *max_exp_avg_sqs, mt_tensor *const *steps,
                            const mt_adam_opts *o);

typedef struct mt_rmsprop_opts {
    double lr, alpha, eps, weight_decay, momentum;
    bool centered, maximize;
} mt_rmsprop_opts;

/* grad_avgs is read only when centered, bufs only when momentum > 0. */
mt_status mt_cpu_fused_rmsprop(int n, mt_tensor *const *params, mt_tensor *const *grads,
                               mt_tensor *const *square_avgs, mt_tensor *const *grad_avgs,
                               mt_tensor *const *bufs, mt_tensor *const *steps,
                               const mt_rmsprop_opts *o);

#endif
