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
#include "cpu/pool_window.h" /* pool_geom, plain C for the CUDA kernels too */

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

/* conv2d and its backward ops: the convolution's geometry. */
typedef struct conv_geom {
    int64_t n, c, h, w; /* input (N, C, H, W) */
    int64_t oc, kh, kw; /* weight (OC, C / groups, KH, KW) */
    int64_t oh, ow;     /* out (N, OC, OH, OW) */
    int64_t sh, sw, ph, pw, dh, dw, groups;
} conv_geom;

/* layer_norm, batch_norm and their backward ops: the input seen as (rows, n), n the elements of
 * a normalized row (layer_norm), or as (outer, C, inner) (batch_norm); eps the argument. */
typedef struct mt_norm_plan {
    int64_t rows, n;
    int64_t outer, C, inner;
    double eps;
} mt_norm_plan;

/* The losses and embedding_dense_backward. */
typedef struct mt_loss_plan {
    int64_t N, C, K; /* nll_loss (and backward): self seen as (N, C, K), target (N, K) */
    mt_dtype dt;     /* binary_cross_entropy (with logits): the dtype it computes in */
    int64_t n, dim;  /* embedding_dense_backward: the number of indices, the embedding dim */
} mt_loss_plan;

typedef union mt_plan {
    mt_reduce_plan reduce;
    mt_product_plan product;
    conv_geom conv;
    pool_geom pool; /* 2-D pooling and its backward ops: the windows */
    mt_norm_plan norm;
    mt_loss_plan loss;
} mt_plan;

#endif
