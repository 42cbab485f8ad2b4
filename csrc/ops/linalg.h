/* The linear algebra ops' shapes and checks (ops/linalg_checks.c), shared by their front ends,
 * the LAPACK kernels (cpu/linalg.c) and the composites (ops/composite_linalg.c): PyTorch's
 * messages once, each op's result shapes once. No computation here. */
#ifndef MT_OPS_LINALG_H
#define MT_OPS_LINALG_H

#include "dispatch/dispatch.h"

/* A is a batch of matrices (..., m, n) of a float dtype; square: m == n. api is PyTorch's name
 * in its messages ("linalg.inv"), name the argument's ("A"). */
mt_status mt_linalg_check_matrix(const mt_tensor *A, const char *api, const char *name,
                                 bool square);

/* A is of a float or complex dtype (PyTorch's checkFloatingOrComplex). */
mt_status mt_linalg_check_float(const mt_tensor *A, const char *api);
/* linalg.vector_norm's (and norm's) dtype= for an input of dtype self_dt (none when dtype < 0):
 * a float or complex dtype, complex exactly when self_dt is, that self_dt converts to without
 * narrowing; PyTorch's RuntimeErrors. */
mt_status mt_linalg_check_norm_dtype(mt_dtype self_dt, int dtype);

/* The linear system A X = B (or X A = B when !left) of linalg_solve, solve_triangular and
 * lstsq: B is a vector when `vector` (B (..., n) for A (..., n, n)), its batch dims broadcast
 * with A's into batch (nb dims); X's shape is out (nout dims). */
typedef struct mt_linalg_system {
    bool vector;
    int nb;
    int64_t batch[MT_MAX_DIMS];
    int nout;
    int64_t out[MT_MAX_DIMS];
} mt_linalg_system;

/* linalg_solve(A, B, left): the checks and the system's shapes. */
mt_status mt_linalg_solve_spec(const mt_tensor *A, const mt_tensor *B, bool left,
                               mt_linalg_system *sys);
/* linalg_solve_triangular(A, B, upper, left, unitriangular) */
mt_status mt_linalg_triangular_spec(const mt_tensor *A, const mt_tensor *B, bool left,
                                    mt_linalg_system *sys);
/* linalg_lstsq(A, B, rcond, driver): *driver one of gels, gelsy (the default), gelsd, gelss. */
mt_status mt_linalg_lstsq_spec(const mt_tensor *A, const mt_tensor *B, const char *driver_arg,
                               mt_linalg_system *sys, const char **driver);

/* linalg_lu_solve(LU, pivots, B, left, adjoint): the checks (pivots int32 (*, n) with LU's
 * batch) and the system's shapes, B's batch broadcast with LU's. */
mt_status mt_linalg_lu_solve_spec(const mt_tensor *LU, const mt_tensor *pivots, const mt_tensor *B,
                                  bool left, mt_linalg_system *sys);

/* linalg_ldl_solve(LD, pivots, B): the checks (pivots int32 (*, n) with LD's batch) and the
 * system's shapes, B's batch broadcast with LD's. */
mt_status mt_linalg_ldl_solve_spec(const mt_tensor *LD, const mt_tensor *pivots, const mt_tensor *B,
                                   mt_linalg_system *sys);

/* The offset (in elements) of matrix `index` of the broadcast batch sys among t's own batch
 * dims (t dense, its last `mdims` dims the matrix or vector). */
int64_t mt_linalg_batch_offset(const mt_linalg_system *sys, const mt_tensor *t, int mdims,
                               int64_t index);

/* linalg.eig's and linalg.eigvals' checks of A (*, n, n), in PyTorch's order, the op named api
 * (and op, in the refusal of a CUDA tensor: the complex results cannot live there). */
mt_status mt_linalg_check_eig(const mt_tensor *A, mt_op op, const char *api);

/* linalg.eig's kernel: a matrix with a NaN or an infinity has no eigenvectors (PyTorch's error). */
mt_status mt_linalg_fail_eig_nonfinite(void);
/* linalg.eig's backward: the loss depends on the eigenvectors' phases, which eig does not fix. */
mt_status mt_linalg_fail_eig_phase(void);

/* A failure LAPACK reported for matrix `index` of a batch (info > 0): PyTorch's LinAlgError
 * for the op api names ("linalg.inv", "torch.linalg.lu_factor" (a RuntimeError), "linalg.cholesky", "torch.linalg.solve", "linalg.svd",
 * "linalg.eigh", "torch.linalg.lstsq"), with the batch element when the input is batched. */
mt_status mt_linalg_fail_info(const char *api, int64_t info, int64_t index, bool batched);

/* PyTorch's check_errors of the _ex ops: the first nonzero entry of an int32 info tensor (of
 * the batch dims, on any device) raises mt_linalg_fail_info's error. */
mt_status mt_linalg_check_info(mt_tensor *info, const char *api, bool batched);

#endif
