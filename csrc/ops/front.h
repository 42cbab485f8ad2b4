/* Front ends: an op's device-independent argument checks, run once by the dispatcher (run() in
 * dispatch/dispatch.c) right before the op's backend kernel, CPU or CUDA, which then only
 * computes. An op without one (NULL) checks in its kernels. */
#ifndef MT_OPS_FRONT_H
#define MT_OPS_FRONT_H

#include "dispatch/dispatch.h"

typedef mt_status (*mt_front_fn)(const mt_args *a);

extern const mt_front_fn mt_op_fronts[MT_NUM_OPS];

/* the optimizer steps (ops/optim.c) */
mt_status mt_front_fused_sgd(const mt_args *a);
mt_status mt_front_fused_adam(const mt_args *a);
mt_status mt_front_fused_adamw(const mt_args *a);
mt_status mt_front_fused_rmsprop(const mt_args *a);

/* the random ops (ops/distributions.c) */
mt_status mt_front_exponential_(const mt_args *a);
mt_status mt_front_geometric_(const mt_args *a);
mt_status mt_front_log_normal_(const mt_args *a);
mt_status mt_front_cauchy_(const mt_args *a);
mt_status mt_front_bernoulli_(const mt_args *a);
mt_status mt_front_poisson(const mt_args *a);
mt_status mt_front_multinomial(const mt_args *a);

#endif
