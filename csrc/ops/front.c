/* The table of front ends (front.h), by op. */
#include "ops/front.h"

const mt_front_fn mt_op_fronts[MT_NUM_OPS] = {
    [MT_OP__fused_sgd_] = mt_front_fused_sgd,
    [MT_OP__fused_adam_] = mt_front_fused_adam,
    [MT_OP__fused_adamw_] = mt_front_fused_adamw,
    [MT_OP__fused_rmsprop_] = mt_front_fused_rmsprop,
};
