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

/* the linear algebra ops (ops/linalg_checks.c) */
mt_status mt_front_linalg_inv_ex(const mt_args *a);
mt_status mt_front_linalg_det(const mt_args *a);
mt_status mt_front_linalg_slogdet(const mt_args *a);
mt_status mt_front_linalg_solve(const mt_args *a);
mt_status mt_front_linalg_solve_triangular(const mt_args *a);
mt_status mt_front_linalg_cholesky_ex(const mt_args *a);
mt_status mt_front_linalg_qr(const mt_args *a);
mt_status mt_front__linalg_svd(const mt_args *a);
mt_status mt_front__linalg_eigh(const mt_args *a);
mt_status mt_front_linalg_lstsq(const mt_args *a);

/* the statistics kernels (ops/stats_checks.c) */
mt_status mt_front_histc(const mt_args *a);
mt_status mt_front_histogram_bins(const mt_args *a);
mt_status mt_front_bincount(const mt_args *a);
mt_status mt_front_searchsorted(const mt_args *a);
mt_status mt_front_cummax(const mt_args *a);
mt_status mt_front_unique_dim(const mt_args *a);

#endif
