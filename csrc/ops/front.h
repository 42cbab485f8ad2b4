/* Front ends: the device-independent part of an op, written once for every device (PyTorch's
 * structured kernels' meta function): the argument checks with PyTorch's messages, in its
 * order; the result's dtype and shape; and what else the kernels need, as a plan (ops/plans.h).
 *
 * One mechanism, run once per call, before the device's loop:
 * - an op registered in mt_op_fronts has its front end run by the dispatcher (run() in
 *   dispatch/dispatch.c) right before its backend kernel, CPU or CUDA, which reads the plan
 *   through a->plan;
 * - the elementwise family's front end (mt_ew_call, ops/elementwise.h) runs inside the kernels
 *   generated from its table, which go on to the device's loop.
 * A backend kernel then only computes. It has no check and no message of its own, but for a
 * dtype it has no loop for (mt_fail_not_implemented) and what only the data shows while it
 * computes (an index out of range): one mt_fail_* function each, in csrc/, that every backend
 * calls, so each message exists once. */
#ifndef MT_OPS_FRONT_H
#define MT_OPS_FRONT_H

#include "dispatch/dispatch.h"
#include "ops/plans.h"

typedef mt_status (*mt_front_fn)(const mt_args *a, mt_plan *p);

/* An int[1] or int[2] argument's values as (first, second), one value standing for both; false
 * for another count. */
static inline bool
mt_front_pair(const mt_intlist *l, int64_t *first, int64_t *second)
{
    if (l->n != 1 && l->n != 2) {
        return false;
    }
    *first = l->v[0];
    *second = l->v[l->n - 1];
    return true;
}

/* Whether t is on a CUDA device: for the messages that PyTorch words per device. */
static inline bool
mt_front_on_cuda(const mt_tensor *t)
{
    return mt_tensor_device(t).type == MT_CUDA;
}

/* The ops with a front end, mt_front_<op>, by family and the file that defines them. A new op's
 * front end is its function and one entry here. */
#define MT_FRONTS(X)                                                                             \
    /* reductions and the ops along one dim: reduce_checks.c */                                 \
    X(sum) X(mean) X(prod) X(amax) X(amin) X(max) X(min) X(all) X(any) X(norm) X(var) X(std)     \
    X(logsumexp) X(max_dim) X(min_dim) X(argmax) X(argmin) X(cumsum) X(cumprod) X(softmax)      \
    X(log_softmax)                                                                               \
    /* matrix products: matmul_checks.c */                                                      \
    X(mm) X(addmm) X(bmm) X(baddbmm) X(mv) X(addmv) X(dot)                                       \
    /* convolution: conv_checks.c */                                                            \
    X(conv2d) X(convolution_backward_input) X(convolution_backward_weight)                      \
    /* pooling: pool_checks.c */                                                                \
    X(max_pool2d) X(max_pool2d_with_indices) X(avg_pool2d) X(adaptive_avg_pool2d)               \
    X(max_pool2d_with_indices_backward) X(avg_pool2d_backward) X(_adaptive_avg_pool2d_backward) \
    /* layers and losses: nn_checks.c, norm_checks.c */                                          \
    X(layer_norm) X(batch_norm) X(layer_norm_backward) X(batch_norm_backward)                   \
    X(nll_loss) X(nll_loss_backward) X(binary_cross_entropy) X(binary_cross_entropy_with_logits) \
    X(embedding_dense_backward)                                                                  \
    /* optimizer steps: optim.c */                                                              \
    X(_fused_sgd_) X(_fused_adam_) X(_fused_adamw_) X(_fused_rmsprop_)                           \
    /* random fills and draws: distributions.c */                                                \
    X(exponential_) X(geometric_) X(log_normal_) X(cauchy_) X(bernoulli_) X(poisson)             \
    X(multinomial)                                                                               \
    /* linear algebra: linalg_checks.c */                                                        \
    X(linalg_inv_ex) X(linalg_det) X(linalg_slogdet) X(linalg_solve) X(linalg_solve_triangular)  \
    X(linalg_cholesky_ex) X(linalg_qr) X(_linalg_svd) X(_linalg_eigh) X(linalg_lstsq)            \
    /* statistics: stats_checks.c */                                                            \
    X(histc) X(histogram_bins) X(bincount) X(searchsorted) X(cummax) X(cummin) X(unique_dim)

#define MT_FRONT_DECLARE(op) mt_status mt_front_##op(const mt_args *a, mt_plan *p);
MT_FRONTS(MT_FRONT_DECLARE)
#undef MT_FRONT_DECLARE

/* The front end of each op that the dispatcher runs (NULL: none, or the elementwise family's). */
extern const mt_front_fn mt_op_fronts[MT_NUM_OPS];
/* Whether op is one of the elementwise family's (ops/elementwise.def's MT_EW_OP lines). */
extern const bool mt_op_is_elementwise[MT_NUM_OPS];

#endif
