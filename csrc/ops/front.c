/* The table of front ends (front.h), by op. */
#include "ops/front.h"

const mt_front_fn mt_op_fronts[MT_NUM_OPS] = {
    [MT_OP__fused_sgd_] = mt_front_fused_sgd,
    [MT_OP__fused_adam_] = mt_front_fused_adam,
    [MT_OP__fused_adamw_] = mt_front_fused_adamw,
    [MT_OP__fused_rmsprop_] = mt_front_fused_rmsprop,
    /* linear algebra (issue 19) */
    [MT_OP_linalg_inv_ex] = mt_front_linalg_inv_ex,
    [MT_OP_linalg_det] = mt_front_linalg_det,
    [MT_OP_linalg_slogdet] = mt_front_linalg_slogdet,
    [MT_OP_linalg_solve] = mt_front_linalg_solve,
    [MT_OP_linalg_solve_triangular] = mt_front_linalg_solve_triangular,
    [MT_OP_linalg_cholesky_ex] = mt_front_linalg_cholesky_ex,
    [MT_OP_linalg_qr] = mt_front_linalg_qr,
    [MT_OP__linalg_svd] = mt_front__linalg_svd,
    [MT_OP__linalg_eigh] = mt_front__linalg_eigh,
    [MT_OP_linalg_lstsq] = mt_front_linalg_lstsq,
    /* statistics (issue 19) */
    [MT_OP_histc] = mt_front_histc,
    [MT_OP_histogram_bins] = mt_front_histogram_bins,
    [MT_OP_bincount] = mt_front_bincount,
    [MT_OP_searchsorted] = mt_front_searchsorted,
    [MT_OP_cummax] = mt_front_cummax,
    [MT_OP_cummin] = mt_front_cummax,
    [MT_OP_unique_dim] = mt_front_unique_dim,
};
