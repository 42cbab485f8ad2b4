/* The table of front ends (front.h), by op. */
#include "ops/front.h"

const mt_front_fn mt_op_fronts[MT_NUM_OPS] = {
    [MT_OP__fused_sgd_] = mt_front_fused_sgd,
    [MT_OP__fused_adam_] = mt_front_fused_adam,
    [MT_OP__fused_adamw_] = mt_front_fused_adamw,
    [MT_OP__fused_rmsprop_] = mt_front_fused_rmsprop,
    [MT_OP_exponential_] = mt_front_exponential_,
    [MT_OP_geometric_] = mt_front_geometric_,
    [MT_OP_log_normal_] = mt_front_log_normal_,
    [MT_OP_cauchy_] = mt_front_cauchy_,
    [MT_OP_bernoulli_] = mt_front_bernoulli_,
    [MT_OP_poisson] = mt_front_poisson,
    [MT_OP_multinomial] = mt_front_multinomial,
};
