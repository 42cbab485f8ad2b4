/* The linear algebra ops' front ends (front.h), run once before any backend: each op's checks
 * (ops/linalg_checks.c, shared with the kernels and the composites) in PyTorch's order, then the
 * shapes and dtypes of its results. No computation here. */
#include <string.h>

#include "ops/fails.h"
#include "ops/front.h"
#include "ops/linalg.h"
#include "ops/ops.h"

/* A result of A's batch dims (*) in dtype dt: alone (a value per matrix), or followed by A's
 * matrix dims (a matrix per matrix). */
static mt_status
batch_output(mt_plan *plan, const mt_tensor *A, mt_dtype dt, bool matrices)
{
    return mt_front_output(plan, dt, matrices ? A->ndim : A->ndim - 2, A->sizes);
}

/* The _ex ops' results: A-shaped, and LAPACK's int32 info per matrix. */
static mt_status
ex_outputs(mt_status st, mt_plan *plan, const mt_tensor *A)
{
    if (st == MT_OK) {
        st = batch_output(plan, A, A->dtype, true);
    }
    return st ? st : batch_output(plan, A, MT_INT32, false);
}

// A (*, n, n) float: linalg.inv_ex (the inverse and info), det (det) and slogdet (sign and
// logabsdet), named as PyTorch's checks name them
mt_status
mt_front_linalg_square(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *A = a->t[0];
    const char *api = plan->op == MT_OP_linalg_det       ? "linalg.det"
                      : plan->op == MT_OP_linalg_slogdet ? "linalg.slogdet"
                                                         : "linalg.inv";
    mt_status st = mt_linalg_check_matrix(A, api, "A", true);
    if (st || plan->op == MT_OP_linalg_inv_ex) {
        return ex_outputs(st, plan, A);
    }
    st = batch_output(plan, A, A->dtype, false);
    if (st == MT_OK && plan->op == MT_OP_linalg_slogdet) {
        st = batch_output(plan, A, A->dtype, false);
    }
    return st;
}

/* A solve's result X, of A's dtype, the system's shape (once its checks passed). */
static mt_status
solution_output(mt_status st, mt_plan *plan, const mt_tensor *A, const mt_linalg_system *sys)
{
    return st ? st : mt_front_output(plan, A->dtype, sys->nout, sys->out);
}

/* A result of A's batch dims (*) followed by more (0 to 2) dims d0, d1, in dtype dt. */
static mt_status
batch_shaped(mt_status st, mt_plan *plan, const mt_tensor *A, mt_dtype dt, int more, int64_t d0,
             int64_t d1)
{
    if (st) {
        return st;
    }
    int64_t shape[MT_MAX_DIMS + 2];
    const int nb = A->ndim - 2;
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = d0;
    shape[nb + 1] = d1;
    return mt_front_output(plan, dt, nb + more, shape);
}

/* The result a mode leaves out (no Q of qr's 'r', no U and Vh without compute_uv): PyTorch's
 * empty tensor of dtype dt. */
static mt_status
empty_output(mt_status st, mt_plan *plan, mt_dtype dt)
{
    const int64_t zero = 0;
    return st ? st : mt_front_output(plan, dt, 1, &zero);
}

/* A factorisation's results (lu_factor_ex, ldl_factor_ex): A-shaped, the int32 pivots (*, k)
 * and LAPACK's int32 info per matrix. */
static mt_status
factor_outputs(mt_status st, mt_plan *plan, const mt_tensor *A)
{
    if (st) {
        return st;
    }
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    st = batch_shaped(st, plan, A, A->dtype, 2, m, n);
    st = batch_shaped(st, plan, A, MT_INT32, 1, m < n ? m : n, 0);
    return batch_shaped(st, plan, A, MT_INT32, 0, 0, 0);
}

mt_status
mt_front_linalg_solve(const mt_args *a, mt_plan *plan)
{
    mt_linalg_system sys;
    mt_status st = mt_linalg_solve_spec(a->t[0], a->t[1], a->b[0], &sys);
    return solution_output(st, plan, a->t[0], &sys);
}

mt_status
mt_front_linalg_solve_triangular(const mt_args *a, mt_plan *plan)
{
    mt_linalg_system sys;
    mt_status st = mt_linalg_triangular_spec(a->t[0], a->t[1], a->b[1], &sys);
    return solution_output(st, plan, a->t[0], &sys);
}

mt_status
mt_front_linalg_cholesky_ex(const mt_args *a, mt_plan *plan)
{
    mt_status st = mt_linalg_check_matrix(a->t[0], "linalg.cholesky", "A", true);
    return ex_outputs(st, plan, a->t[0]);
}

/* A (*, m, n) for the LU factorisation: PyTorch's checks of linalg_lu_factor_ex and linalg_lu
 * (partial pivoting only on the CPU, as PyTorch's CPU) */
static mt_status
lu_input(const mt_tensor *A, bool pivot, const char *api)
{
    if (A->ndim < 2) {
        char shape[256];
        mt_format_sizes(shape, sizeof(shape), A->ndim, A->sizes);
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected tensor with 2 or more dimensions. Got size: %s instead", api,
                       shape);
    }
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype)) {
        return mt_fail_not_implemented("lu_cpu", "", A->dtype);
    }
    if (!pivot) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
    }
    return MT_OK;
}

mt_status
mt_front_linalg_lu_factor_ex(const mt_args *a, mt_plan *plan)
{
    return factor_outputs(lu_input(a->t[0], a->b[0], "torch.lu_factor"), plan, a->t[0]);
}

mt_status
mt_front_lu_unpack(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *LU = a->t[0], *pivots = a->t[1];
    if (LU->ndim < 2) {
        char shape[256];
        mt_format_sizes(shape, sizeof(shape), LU->ndim, LU->sizes);
        return mt_fail(MT_ERUNTIME,
                       "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: %s "
                       "instead",
                       shape);
    }
    if (a->b[1] && pivots->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME,
                       "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                       "torch.int32 dtype.\nNote: this function is intended to be used with the "
                       "output produced by torch.linalg.lu_factor");
    }
    /* P (*, m, m) with unpack_pivots, L (*, m, k) and U (*, k, n) with unpack_data; else
     * empty */
    mt_status st = mt_linalg_check_float(LU, "torch.lu_unpack");
    const bool data = a->b[0], pivoted = a->b[1];
    const int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = m < n ? m : n;
    const mt_dtype dt = LU->dtype;
    st = pivoted ? batch_shaped(st, plan, LU, dt, 2, m, m) : empty_output(st, plan, dt);
    st = data ? batch_shaped(st, plan, LU, dt, 2, m, k) : empty_output(st, plan, dt);
    return data ? batch_shaped(st, plan, LU, dt, 2, k, n) : empty_output(st, plan, dt);
}

mt_status
mt_front_linalg_lu_solve(const mt_args *a, mt_plan *plan)
{
    mt_linalg_system sys;
    mt_status st = mt_linalg_lu_solve_spec(a->t[0], a->t[1], a->t[2], a->b[0], &sys);
    return solution_output(st, plan, a->t[0], &sys);
}

mt_status
mt_front_geqrf(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *A = a->t[0];
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "torch.geqrf: input must have at least 2 dimensions.");
    }
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype)) {
        return mt_fail_not_implemented("geqrf_cpu", "", A->dtype);
    }
    /* a (*, m, n): R and the reflectors; tau (*, min(m, n)) */
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    mt_status st = batch_shaped(MT_OK, plan, A, A->dtype, 2, m, n);
    return batch_shaped(st, plan, A, A->dtype, 1, m < n ? m : n, 0);
}

mt_status
mt_front_linalg_ldl_factor_ex(const mt_args *a, mt_plan *plan)
{
    mt_status st = mt_linalg_check_matrix(a->t[0], "torch.linalg.ldl_factor_ex", "A", true);
    return factor_outputs(st, plan, a->t[0]);
}

mt_status
mt_front_linalg_ldl_solve(const mt_args *a, mt_plan *plan)
{
    mt_linalg_system sys;
    mt_status st = mt_linalg_ldl_solve_spec(a->t[0], a->t[1], a->t[2], &sys);
    return solution_output(st, plan, a->t[0], &sys);
}

mt_status
mt_front_linalg_qr(const mt_args *a, mt_plan *plan)
{
    const char *mode = a->str[0];
    if (strcmp(mode, "reduced") != 0 && strcmp(mode, "complete") != 0 && strcmp(mode, "r") != 0) {
        return mt_fail(MT_ERUNTIME,
                       "qr received unrecognized mode '%s' but expected one of 'reduced' "
                       "(default), 'r', or 'complete'",
                       mode);
    }
    /* 'reduced': Q (*, m, k), R (*, k, n); 'complete': Q (*, m, m), R (*, m, n); 'r': Q empty,
     * R (*, k, n); k = min(m, n) */
    const mt_tensor *A = a->t[0];
    mt_status st = mt_linalg_check_matrix(A, "linalg.qr", "A", false);
    const int64_t m = st ? 0 : A->sizes[A->ndim - 2], n = st ? 0 : A->sizes[A->ndim - 1];
    const int64_t k = m < n ? m : n, rows = strcmp(mode, "complete") == 0 ? m : k;
    st = strcmp(mode, "r") != 0 ? batch_shaped(st, plan, A, A->dtype, 2, m, rows)
                                : empty_output(st, plan, A->dtype);
    return batch_shaped(st, plan, A, A->dtype, 2, rows, n);
}

mt_status
mt_front__linalg_svd(const mt_args *a, mt_plan *plan)
{
    if (a->str[0] != NULL) {
        return mt_fail(MT_ERUNTIME,
                       "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA "
                       "inputs with cuSOLVER backend.");
    }
    /* U (*, m, k), S (*, k), Vh (*, k, n), k = min(m, n); U (*, m, m) and Vh (*, n, n) with
     * full_matrices; U and Vh empty without compute_uv */
    const mt_tensor *A = a->t[0];
    mt_status st = mt_linalg_check_matrix(A, "linalg.svd", "A", false);
    const bool full = a->b[0], uv = a->b[1];
    const int64_t m = st ? 0 : A->sizes[A->ndim - 2], n = st ? 0 : A->sizes[A->ndim - 1];
    const int64_t k = m < n ? m : n;
    const mt_dtype dt = A->dtype;
    st = uv ? batch_shaped(st, plan, A, dt, 2, m, full ? m : k) : empty_output(st, plan, dt);
    st = batch_shaped(st, plan, A, dt, 1, k, 0);
    return uv ? batch_shaped(st, plan, A, dt, 2, full ? n : k, n) : empty_output(st, plan, dt);
}

/* An eigendecomposition's results, in dtype dt: the eigenvalues (*, n) and, with compute_v, the
 * eigenvectors A-shaped (else empty). */
static mt_status
eigen_outputs(mt_status st, mt_plan *plan, const mt_tensor *A, mt_dtype dt, bool compute_v)
{
    if (st) {
        return st;
    }
    const int64_t n = A->sizes[A->ndim - 1];
    st = batch_shaped(st, plan, A, dt, 1, n, 0);
    return compute_v ? batch_shaped(st, plan, A, dt, 2, n, n) : empty_output(st, plan, dt);
}

mt_status
mt_front__linalg_eigh(const mt_args *a, mt_plan *plan)
{
    const char *uplo = a->str[0];
    if (strcmp(uplo, "L") != 0 && strcmp(uplo, "U") != 0) {
        return mt_fail(MT_ERUNTIME, "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
    }
    mt_status st = mt_linalg_check_matrix(a->t[0], "linalg.eigh", "A", true);
    return eigen_outputs(st, plan, a->t[0], a->t[0]->dtype, a->b[0]);
}

static bool
same_sizes(int nx, const int64_t *x, int ny, const int64_t *y)
{
    return nx == ny && memcmp(x, y, sizeof(int64_t) * (size_t)nx) == 0;
}

mt_status
mt_front__linalg_eig(const mt_args *a, mt_plan *plan)
{
    mt_status st = mt_linalg_check_eig(a->t[0], MT_OP_linalg_eig, "linalg.eig");
    const mt_dtype dt = st ? MT_COMPLEX64 : mt_dtype_to_complex(a->t[0]->dtype);
    return eigen_outputs(st, plan, a->t[0], dt, a->b[0]);
}

/* _linalg_eig_backward(gL, gV, L, V): L (*, n) and V (*, n, n) complex, as _linalg_eig gave
 * them; gL and gV (either may be None) shaped as they are. */
mt_status
mt_front__linalg_eig_backward(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *gL = a->t[0], *gV = a->t[1], *L = a->t[2], *V = a->t[3];
    bool ok = L->ndim >= 1 && V->ndim == L->ndim + 1 && mt_dtype_is_complex(L->dtype) &&
              V->dtype == L->dtype && V->sizes[V->ndim - 1] == L->sizes[L->ndim - 1] &&
              same_sizes(L->ndim, L->sizes, V->ndim - 1, V->sizes);
    ok = ok && (gL == NULL || same_sizes(gL->ndim, gL->sizes, L->ndim, L->sizes));
    ok = ok && (gV == NULL || same_sizes(gV->ndim, gV->sizes, V->ndim, V->sizes));
    if (!ok) {
        return mt_fail(MT_ERUNTIME,
                       "_linalg_eig_backward: expected the eigenvalues (*, n) and eigenvectors "
                       "(*, n, n) of linalg.eig, and gradients of their shapes");
    }
    /* gA, V's shape: complex, or its real part when A was real */
    return mt_front_output(plan, a->b[0] ? mt_dtype_to_real(L->dtype) : L->dtype, V->ndim,
                           V->sizes);
}

mt_status
mt_front_linalg_lstsq(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *A = a->t[0];
    mt_linalg_system sys;
    const char *driver;
    mt_status st = mt_linalg_lstsq_spec(A, a->t[1], a->str[0], &sys, &driver);
    if (st) {
        return st;
    }
    /* solution (*, n, k); residuals (*, k) only where every matrix has full rank (its kernel
     * makes it); rank (*) int64 (not for gels); singular_values (*, min(m, n)) for gelsd and
     * gelss; each else empty */
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    int64_t shape[MT_MAX_DIMS + 1];
    memcpy(shape, sys.batch, sizeof(int64_t) * (size_t)sys.nb);
    shape[sys.nb] = m < n ? m : n;
    const bool has_sv = strcmp(driver, "gelsd") == 0 || strcmp(driver, "gelss") == 0;
    if ((st = solution_output(st, plan, A, &sys)) ||
        (st = mt_front_output_by_kernel(plan, A->dtype))) {
        return st;
    }
    st = strcmp(driver, "gels") != 0 ? mt_front_output(plan, MT_INT64, sys.nb, sys.batch)
                                     : empty_output(st, plan, MT_INT64);
    return has_sv ? (st ? st : mt_front_output(plan, A->dtype, sys.nb + 1, shape))
                  : empty_output(st, plan, A->dtype);
}
