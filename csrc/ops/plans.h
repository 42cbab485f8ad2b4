/* What a front end (ops/front.h) hands the backend kernels of its op: the plan it computed while
 * checking the arguments, so that no backend computes it again. One struct per family; the
 * dispatcher keeps one mt_plan for the call and the kernel reads its family's member through
 * a->plan. Plain values only (no tensor references): nothing to release. */
#ifndef MT_OPS_PLANS_H
#define MT_OPS_PLANS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/scalar.h"
#include "core/tensor.h"

/* The reductions and the ops along one dim (cumsum, cumprod, softmax, log_softmax). */
typedef struct mt_reduce_plan {
    bool reduce[MT_MAX_DIMS]; /* the dims of self reduced */
    mt_dtype in_dt;           /* the dtype self is reduced in */
    mt_dtype out_dt;          /* the result's */
    double p;                 /* norm: the order p; var and std: the correction */
    int dim;                  /* the one dim (wrapped) of argmax, cumsum, softmax, ... */
} mt_reduce_plan;

/* The matrix products: beta and alpha (1 where not given) in the product's dtype's kind, as
 * PyTorch's integer products take them (0.5 becomes 0). */
typedef struct mt_product_plan {
    mt_scalar beta, alpha;
} mt_product_plan;

typedef union mt_plan {
    mt_reduce_plan reduce;
    mt_product_plan product;
} mt_plan;

#endif
