/* The linear algebra kernels on the CPU that factor a matrix once, LU, Cholesky or QR: inverse,
 * determinant, solve (and BLAS's trsm for triangular systems), cholesky, qr and geqrf. SVD, eigh and
 * least squares are in cpu/linalg_spectral.c, the LAPACK layer in cpu/lapack.h.
 *
 * Inputs are batches of row-major matrices (..., m, n), float32 or float64, checked by the
 * front ends (ops/linalg_fronts.c). Each matrix is copied into a column-major scratch buffer,
 * as LAPACK wants it (so each routine sees the matrix itself, as PyTorch's do, and reports the
 * same info), and the results are copied back into row-major outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/lapack.h"
#include "dispatch/kernels.h"
#include "ops/linalg.h"
#include "ops/ops.h"

/* ---- the _ex ops: a result shaped as A (*, n, n) and LAPACK's info (*) ---- */

/* The start of an _ex op (its results, out[0] A-shaped and out[1] the int32 info, stated by
 * its front end): *b the batch of A = t[0], *work a scratch of `matrices` n x n matrices of A's
 * dtype and, with pivots, n ints. */
static mt_status
ex_begin(mt_args *a, mt_lapack_batch *b, int matrices, bool pivots, mt_tensor **work)
{
    mt_status st = mt_lapack_batch_of(a->t[0], b);
    const int64_t n = b->n;
    return st ? st
              : mt_lapack_scratch(n * n * matrices * (int64_t)b->es + (pivots ? n * 4 : 0), work);
}

/* The end of an _ex op: with check_errors, info as PyTorch's error for api; the scratch
 * released. */
static mt_status
ex_end(mt_args *a, mt_status st, bool check_errors, const char *api, mt_lapack_batch *b,
       mt_tensor **work)
{
    if (st == MT_OK && check_errors) {
        st = mt_linalg_check_info(a->out[1], api, a->t[0]->ndim > 2);
    }
    mt_tensor_clear(work);
    mt_tensor_clear(&b->x);
    return st;
}

// A (*, n, n); inverse (*, n, n), info (*) int32: A = P L U (getrf), then U's solve for I
mt_status
mt_cpu_linalg_inv_ex(mt_args *a)
{
    mt_tensor *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = ex_begin(a, &b, 2, true, &work);
    const int n = (int)b.n;
    const mt_dtype dt = a->t[0]->dtype;
    if (st) {
        goto out_release;
    }
    char *lu = mt_tensor_data(work), *rhs = lu + (size_t)n * n * b.es;
    int *ipiv = (int *)(rhs + (size_t)n * n * b.es), *info = (int *)mt_tensor_data(a->out[1]);
    char *inv = mt_tensor_data(a->out[0]);
    for (int64_t k = 0; k < b.count; k++) {
        mt_lapack_to_cols(mt_lapack_matrix(&b, k), lu, n, n, n, b.es);
        mt_lapack_eye(dt, rhs, n); /* the identity is its own transpose */
        int ld = n > 1 ? n : 1;
        LAPACK(dt, gesv, &n, &n, (void *)lu, &ld, ipiv, (void *)rhs, &ld, &info[k]);
        mt_lapack_from_cols(rhs, inv + k * n * n * (int64_t)b.es, n, n, n, b.es);
    }
out_release:
    return ex_end(a, st, a->b[0], "linalg.inv_ex", &b, &work);
}

/* The LU factorisation of every matrix of A, for det and slogdet: per matrix, the sign of the
 * row permutation times that of U's diagonal (0 if singular) and log |det| (-inf if singular),
 * from U's diagonal. */
static mt_status
lu_dets(mt_tensor *A, double *sign, double *logabs, double *det)
{
    mt_tensor *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int n = (int)b.n;
    if (st || (st = mt_lapack_scratch((int64_t)n * n * (int64_t)b.es + (int64_t)n * 4, &work))) {
        goto out_release;
    }
    char *lu = mt_tensor_data(work);
    int *ipiv = (int *)(lu + (size_t)n * n * b.es);
    for (int64_t k = 0; k < b.count; k++) {
        int info = 0, ld = n > 1 ? n : 1;
        mt_lapack_to_cols(mt_lapack_matrix(&b, k), lu, n, n, n, b.es);
        if (n > 0) {
            LAPACK(A->dtype, getrf, &n, &n, (void *)lu, &ld, ipiv, &info);
        }
        double s = 1, l = 0, d = 1;
        for (int i = 0; i < n; i++) {
            double u = mt_lapack_get(A->dtype, lu, (int64_t)i * n + i);
            s *= (ipiv[i] != i + 1 ? -1 : 1) * (u < 0 ? -1 : u > 0 ? 1 : u);
            l += log(fabs(u));
            d *= ipiv[i] != i + 1 ? -u : u;
        }
        if (sign) {
            sign[k] = s;
            logabs[k] = l;
        } else {
            det[k] = d;
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

// A (*, n, n); out (*) = det(A)
mt_status
mt_cpu_linalg_det(mt_args *a)
{
    mt_tensor *A = a->t[0];
    int64_t count = mt_numel(A->ndim - 2, A->sizes);
    double *det = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    mt_status st = det ? MT_OK : mt_fail(MT_ENOMEM, "linalg.det: out of memory");
    if (st == MT_OK && (st = lu_dets(A, NULL, NULL, det)) == MT_OK) {
        for (int64_t k = 0; k < count; k++) {
            mt_lapack_set(A->dtype, mt_tensor_data(a->out[0]), k, det[k]);
        }
    }
    free(det);
    return st;
}

// A (*, n, n); sign (*), logabsdet (*): det(A) = sign * exp(logabsdet)
mt_status
mt_cpu_linalg_slogdet(mt_args *a)
{
    mt_tensor *A = a->t[0];
    int64_t count = mt_numel(A->ndim - 2, A->sizes);
    double *v = malloc(sizeof(double) * 2 * (size_t)(count > 0 ? count : 1));
    mt_status st = v ? MT_OK : mt_fail(MT_ENOMEM, "linalg.slogdet: out of memory");
    if (st || (st = lu_dets(A, v, v + count, NULL))) {
        free(v);
        return st;
    }
    for (int64_t k = 0; k < count; k++) {
        mt_lapack_set(A->dtype, mt_tensor_data(a->out[0]), k, v[k]);
        mt_lapack_set(A->dtype, mt_tensor_data(a->out[1]), k, v[count + k]);
    }
    free(v);
    return MT_OK;
}

// A (*, n, n), B (*, n, k) or (*, n); out X: A X = B (left), X A = B (not left), batches broadcast
mt_status
mt_cpu_linalg_solve(mt_args *a)
{
    mt_tensor *A = a->t[0], *B = a->t[1], *Ad = NULL, *Bd = NULL, *work = NULL;
    mt_linalg_system sys;
    const bool left = a->b[0];
    const mt_dtype dt = A->dtype;
    const size_t es = mt_dtype_size(dt);
    mt_status st = mt_linalg_solve_spec(A, B, left, &sys); /* the front end's shapes again */
    if (st || (st = mt_cpu_dense(A, dt, &Ad)) || (st = mt_cpu_dense(B, dt, &Bd))) {
        goto out_release;
    }
    const int64_t n = A->sizes[A->ndim - 1];
    /* X is (r, c): r = n, c the right-hand sides when left; r rows of X A = B otherwise */
    const int64_t r = sys.vector ? n : sys.out[sys.nout - 2];
    const int64_t c = sys.vector ? 1 : sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = mt_lapack_check_fits(n, r * c)) ||
        (st = mt_lapack_scratch((n * n + r * c) * (int64_t)es + n * 4, &work))) {
        goto out_release;
    }
    char *lu = mt_tensor_data(work), *rhs = lu + (size_t)(n * n) * es;
    int *ipiv = (int *)(rhs + (size_t)(r * c) * es);
    const int in = (int)n, ld = n > 1 ? (int)n : 1, nrhs = (int)(left || sys.vector ? c : r);
    for (int64_t k = 0; k < count && st == MT_OK; k++) {
        const char *ak = mt_tensor_data(Ad) + mt_linalg_batch_offset(&sys, A, 2, k) * (int64_t)es;
        const char *bk = mt_tensor_data(Bd) +
                         mt_linalg_batch_offset(&sys, B, sys.vector ? 1 : 2, k) * (int64_t)es;
        char *xk = mt_tensor_data(a->out[0]) + k * r * c * (int64_t)es;
        int info = 0;
        if (left || sys.vector) { /* A X = B: A and B in columns */
            mt_lapack_to_cols(ak, lu, n, n, n, es);
            mt_lapack_to_cols(bk, rhs, n, c, n, es);
        } else { /* A^T X^T = B^T: row-major A and B read as columns are A^T and B^T */
            memcpy(lu, ak, (size_t)(n * n) * es);
            memcpy(rhs, bk, (size_t)(r * c) * es);
        }
        if (n > 0 && nrhs > 0) {
            LAPACK(dt, gesv, &in, &nrhs, (void *)lu, &ld, ipiv, (void *)rhs, &ld, &info);
        }
        if (info > 0) {
            st = mt_linalg_fail_info("torch.linalg.solve", info, k, sys.nb > 0);
        } else if (left || sys.vector) {
            mt_lapack_from_cols(rhs, xk, n, c, n, es);
        } else {
            memcpy(xk, rhs, (size_t)(r * c) * es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&Ad);
    mt_tensor_clear(&Bd);
    return st;
}

// A (*, n, n) triangular, B (*, n, k) (left) or (*, k, n); out X: A X = B or X A = B (trsm)
mt_status
mt_cpu_linalg_solve_triangular(mt_args *a)
{
    mt_tensor *A = a->t[0], *B = a->t[1], *Ad = NULL, *Bd = NULL;
    mt_linalg_system sys;
    const bool upper = a->b[0], left = a->b[1], unit = a->b[2];
    const mt_dtype dt = A->dtype;
    const size_t es = mt_dtype_size(dt);
    mt_status st = mt_linalg_triangular_spec(A, B, left, &sys); /* the front end's shapes again */
    if (st || (st = mt_cpu_dense(A, dt, &Ad)) || (st = mt_cpu_dense(B, dt, &Bd))) {
        goto out_release;
    }
    const int64_t n = A->sizes[A->ndim - 1], r = sys.out[sys.nout - 2], c = sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = mt_lapack_check_fits(r, c))) {
        goto out_release;
    }
    const enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
    const enum CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
    const enum CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
    const int ld = n > 1 ? (int)n : 1, ldb = c > 1 ? (int)c : 1;
    for (int64_t k = 0; k < count; k++) {
        const char *ak = mt_tensor_data(Ad) + mt_linalg_batch_offset(&sys, A, 2, k) * (int64_t)es;
        const char *bk = mt_tensor_data(Bd) + mt_linalg_batch_offset(&sys, B, 2, k) * (int64_t)es;
        char *xk = mt_tensor_data(a->out[0]) + k * r * c * (int64_t)es;
        memcpy(xk, bk, (size_t)(r * c) * es);
        if (r == 0 || c == 0) {
            continue;
        }
        mt_cpu_lib_enter(dt == MT_FLOAT32 ? "cblas_strsm" : "cblas_dtrsm");
        if (dt == MT_FLOAT32) {
            scipy_cblas_strsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, (int)r, (int)c, 1.0f,
                              (const float *)ak, ld, (float *)xk, ldb);
        } else {
            scipy_cblas_dtrsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, (int)r, (int)c, 1.0,
                              (const double *)ak, ld, (double *)xk, ldb);
        }
        mt_cpu_lib_exit();
    }
out_release:
    mt_tensor_clear(&Ad);
    mt_tensor_clear(&Bd);
    return st;
}

/* ---- Cholesky, QR ---- */

// A (*, n, n) symmetric positive-definite (its lower triangle read); L (*, n, n) lower, A = L L^T
// (or U = L^T when upper); info (*) int32: the order of the first leading minor not positive
mt_status
mt_cpu_linalg_cholesky_ex(mt_args *a)
{
    mt_tensor *work = NULL;
    const bool upper = a->b[0];
    mt_lapack_batch b = {0};
    mt_status st = ex_begin(a, &b, 1, false, &work);
    const int n = (int)b.n;
    const mt_dtype dt = a->t[0]->dtype;
    if (st) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *out = mt_tensor_data(a->out[0]);
    int *info = (int *)mt_tensor_data(a->out[1]);
    const char lower = 'L';
    for (int64_t k = 0; k < b.count; k++) {
        int ld = n > 1 ? n : 1;
        mt_lapack_to_cols(mt_lapack_matrix(&b, k), buf, n, n, n, b.es);
        info[k] = 0;
        if (n > 0) {
            LAPACK_STR(dt, potrf, &lower, &n, (void *)buf, &ld, &info[k]);
        }
        /* L[i][j] = buf[i + j n] on and below the diagonal: L is buf read by rows, U = L^T buf
         * as it lies; the other triangle zeroed */
        char *ok = out + k * n * n * (int64_t)b.es;
        if (upper) {
            memcpy(ok, buf, (size_t)n * (size_t)n * b.es);
        } else {
            mt_lapack_from_cols(buf, ok, n, n, n, b.es);
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t first = upper ? 0 : i + 1, count = upper ? i : n - i - 1;
            memset(ok + (i * n + first) * (int64_t)b.es, 0, (size_t)count * b.es);
        }
    }
out_release:
    return ex_end(a, st, a->b[1], "linalg.cholesky_ex", &b, &work);
}

/* Matrix i of b, column-major in buf (leading dim m), overwritten by geqrf: R on and above the
 * diagonal, the Householder vectors below it, their scales in tau (min(m, n) of them). */
static mt_status
householder_qr(mt_dtype dt, const mt_lapack_batch *b, int64_t i, char *buf, char *tau)
{
    const int m = (int)b->m, n = (int)b->n, ld = m > 1 ? m : 1;
    mt_status st = MT_OK;
    mt_lapack_to_cols(mt_lapack_matrix(b, i), buf, m, n, m, b->es);
    if (m > 0 && n > 0) {
        int info = 0;
        WITH_WORK(LAPACK, dt, st, &info, geqrf, &m, &n, (void *)buf, &ld, (void *)tau);
    }
    return st;
}

// A (*, m, n), k = min(m, n); a (*, m, n): R on and above the diagonal, below it the reflectors'
// vectors v_i (v_i[i] = 1 implied); tau (*, k): H_i = I - tau_i v_i v_i^T, A = H_1 ... H_k R
mt_status
mt_cpu_geqrf(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n;
    const mt_dtype dt = A->dtype;
    if (st || (st = mt_lapack_scratch((int64_t)m * n * (int64_t)b.es + 1, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work);
    for (int64_t i = 0; i < b.count && st == MT_OK; i++) {
        st = householder_qr(dt, &b, i, buf, mt_tensor_data(a->out[1]) + i * k * (int64_t)b.es);
        mt_lapack_from_cols(buf, mt_tensor_data(a->out[0]) + i * m * n * (int64_t)b.es, m, n, m,
                            b.es);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

// A (*, m, n), k = min(m, n); mode 'reduced': Q (*, m, k), R (*, k, n); 'complete': Q (*, m, m),
// R (*, m, n); 'r': Q empty, R (*, k, n). A = Q R, Q orthonormal columns, R upper triangular:
// geqrf leaves R and the reflectors in the matrix, orgqr makes Q of the reflectors.
mt_status
mt_cpu_linalg_qr(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n, ld = m > 1 ? m : 1;
    const bool complete = strcmp(a->str[0], "complete") == 0, want_q = strcmp(a->str[0], "r") != 0;
    const int qcols = complete ? m : k, rrows = complete ? m : k, width = n > qcols ? n : qcols;
    const mt_dtype dt = A->dtype;
    if (st || (st = mt_lapack_scratch(((int64_t)m * width + k + 1) * (int64_t)b.es, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *tau = buf + (size_t)m * width * b.es;
    for (int64_t i = 0; i < b.count && st == MT_OK; i++) {
        st = householder_qr(dt, &b, i, buf, tau);
        char *r = mt_tensor_data(a->out[1]) + i * rrows * n * (int64_t)b.es;
        for (int64_t p = 0; p < rrows; p++) {
            for (int64_t q = 0; q < n; q++) {
                mt_lapack_set(dt, r, p * n + q, p <= q ? mt_lapack_get(dt, buf, p + q * m) : 0.0);
            }
        }
        if (!want_q || st) {
            continue;
        }
        if (k > 0) { /* the columns past the k reflectors are only written */
            int info = 0;
            WITH_WORK(LAPACK, dt, st, &info, orgqr, &m, &qcols, &k, (void *)buf, &ld, (void *)tau);
        } else { /* no reflectors: Q is the identity */
            memset(buf, 0, (size_t)m * qcols * b.es);
            for (int64_t d = 0; d < m && d < qcols; d++) {
                mt_lapack_set(dt, buf, d + d * m, 1.0);
            }
        }
        mt_lapack_from_cols(buf, mt_tensor_data(a->out[0]) + i * m * qcols * (int64_t)b.es, m,
                            qcols, m, b.es);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

/* ---- LU: factor, unpack, solve ---- */

// A (*, m, n), k = min(m, n); LU (*, m, n): L's multipliers below the diagonal (its unit diagonal
// implied), U on and above it; pivots (*, k) int32, LAPACK's 1-based rows (row i was swapped with
// row pivots[i]); info (*) int32: i where U[i][i] (1-based) is the first exact zero, else 0 (getrf)
mt_status
mt_cpu_linalg_lu_factor_ex(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n, ld = m > 1 ? m : 1;
    const mt_dtype dt = A->dtype;
    if (st || (st = mt_lapack_scratch((int64_t)m * n * (int64_t)b.es + 1, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *lu = mt_tensor_data(a->out[0]);
    int *piv = (int *)mt_tensor_data(a->out[1]), *info = (int *)mt_tensor_data(a->out[2]);
    for (int64_t i = 0; i < b.count; i++) {
        info[i] = 0;
        if (k == 0) {
            continue;
        }
        mt_lapack_to_cols(mt_lapack_matrix(&b, i), buf, m, n, m, b.es);
        LAPACK(dt, getrf, &m, &n, (void *)buf, &ld, piv + i * k, &info[i]);
        mt_lapack_from_cols(buf, lu + i * m * n * (int64_t)b.es, m, n, m, b.es);
    }
    if (a->b[1]) {
        st = mt_linalg_check_info(a->out[2], "torch.linalg.lu_factor_ex", A->ndim > 2);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

/* The row permutation of getrf's pivots piv (k of them, checked to lie in 1..m) as perm: row i of
 * P^T A is row perm[i] of A, the swaps applied in order to 0..m-1. */
static mt_status
lu_permutation(const int32_t *piv, int64_t k, int64_t m, int64_t *perm, const char *api)
{
    for (int64_t i = 0; i < m; i++) {
        perm[i] = i;
    }
    for (int64_t i = 0; i < k; i++) {
        if (piv[i] < 1 || piv[i] > m) {
            return mt_fail(MT_ERUNTIME,
                           "pivots passed to %s must be between 1 and LU.size(-2) inclusive.Did "
                           "you properly pass the result of lu_factor?",
                           api);
        }
        int64_t j = piv[i] - 1, t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    return MT_OK;
}

// LU (*, m, n), pivots int32 broadcastable to (*, k), k = min(m, n): A = P L U with P (*, m, m)
// (unpack_pivots, else empty), L (*, m, k) unit lower and U (*, k, n) upper (unpack_data, else
// empty), all in LU's dtype
mt_status
mt_cpu_lu_unpack(mt_args *a)
{
    mt_tensor *LU = a->t[0], *piv = NULL, *pe = NULL, *perm_t = NULL;
    const bool data = a->b[0], pivots = a->b[1];
    const mt_dtype dt = LU->dtype;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(LU, &b);
    const int64_t m = b.m, n = b.n, k = m < n ? m : n;
    if (st) {
        goto out_release;
    }
    if (data) {
        char *L = mt_tensor_data(a->out[1]), *U = mt_tensor_data(a->out[2]);
        for (int64_t c = 0; c < b.count; c++) {
            const char *src = mt_lapack_matrix(&b, c);
            char *lc = L + c * m * k * (int64_t)b.es, *uc = U + c * k * n * (int64_t)b.es;
            for (int64_t i = 0; i < m; i++) {
                for (int64_t j = 0; j < k; j++) {
                    double v = i > j ? mt_lapack_get(dt, src, i * n + j) : i == j ? 1.0 : 0.0;
                    mt_lapack_set(dt, lc, i * k + j, v);
                }
            }
            for (int64_t i = 0; i < k; i++) {
                for (int64_t j = 0; j < n; j++) {
                    mt_lapack_set(dt, uc, i * n + j,
                                  i <= j ? mt_lapack_get(dt, src, i * n + j) : 0.0);
                }
            }
        }
    }
    if (!pivots) {
        goto out_release;
    }
    /* the pivots as (*, k), PyTorch's broadcast of them to LU's batch */
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, LU->sizes, sizeof(int64_t) * (size_t)(LU->ndim - 2));
    shape[LU->ndim - 2] = k;
    if ((st = mt_op_expand(a->t[1], LU->ndim - 1, shape, &pe)) ||
        (st = mt_cpu_dense(pe, MT_INT32, &piv)) || (st = mt_lapack_scratch(m * 8 + 1, &perm_t))) {
        goto out_release;
    }
    int64_t *perm = (int64_t *)mt_tensor_data(perm_t);
    char *P = mt_tensor_data(a->out[0]);
    memset(P, 0, (size_t)(b.count * m * m) * b.es);
    for (int64_t c = 0; c < b.count && st == MT_OK; c++) {
        st = lu_permutation((const int32_t *)mt_tensor_data(piv) + c * k, k, m, perm, "lu_unpack");
        for (int64_t i = 0; i < m && st == MT_OK;
             i++) { /* (P^T A)[i] = A[perm[i]]: P[perm[i]][i] */
            mt_lapack_set(dt, P + c * m * m * (int64_t)b.es, perm[i] * m + i, 1.0);
        }
    }
out_release:
    mt_tensor_clear(&perm_t);
    mt_tensor_clear(&piv);
    mt_tensor_clear(&pe);
    mt_tensor_clear(&b.x);
    return st;
}

// LU (*, n, n) and pivots (*, n) of lu_factor, B (*, n, c) (left) or (*, r, n), batches broadcast;
// out X: A X = B, A^T X = B (adjoint), X A = B (!left) or X A^T = B (!left, adjoint) (getrs)
mt_status
mt_cpu_linalg_lu_solve(mt_args *a)
{
    mt_tensor *LU = a->t[0], *B = a->t[2], *LUd = NULL, *Bd = NULL, *Pd = NULL, *work = NULL;
    mt_linalg_system sys;
    const bool left = a->b[0], adjoint = a->b[1];
    const mt_dtype dt = LU->dtype;
    const size_t es = mt_dtype_size(dt);
    mt_status st = mt_linalg_lu_solve_spec(LU, a->t[1], B, left, &sys);
    if (st || (st = mt_cpu_dense(LU, dt, &LUd)) || (st = mt_cpu_dense(B, dt, &Bd)) ||
        (st = mt_cpu_dense(a->t[1], MT_INT32, &Pd))) {
        goto out_release;
    }
    const int64_t n = LU->sizes[LU->ndim - 1];
    const int64_t r = sys.out[sys.nout - 2], c = sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = mt_lapack_check_fits(n, r * c)) ||
        (st = mt_lapack_scratch((n * n + r * c) * (int64_t)es + n * 8 + 1, &work))) {
        goto out_release;
    }
    /* the permutation first: at the scratch's start it is 8-byte aligned whatever n, r and c are */
    int64_t *perm = (int64_t *)mt_tensor_data(work);
    char *lu = (char *)(perm + n), *rhs = lu + (size_t)(n * n) * es;
    /* A X = B: B in columns; X A = B is A^T X^T = B^T: row-major B read as columns is B^T */
    const char trans = (left ? adjoint : !adjoint) ? 'T' : 'N';
    const int in = (int)n, ld = n > 1 ? (int)n : 1, nrhs = (int)(left ? c : r);
    for (int64_t k = 0; k < count && st == MT_OK; k++) {
        const int64_t aoff = mt_linalg_batch_offset(&sys, LU, 2, k);
        const char *ak = mt_tensor_data(LUd) + aoff * (int64_t)es;
        const int32_t *pk = (const int32_t *)mt_tensor_data(Pd) + (n > 0 ? aoff / n : 0);
        const char *bk = mt_tensor_data(Bd) + mt_linalg_batch_offset(&sys, B, 2, k) * (int64_t)es;
        char *xk = mt_tensor_data(a->out[0]) + k * r * c * (int64_t)es;
        /* getrs reads the pivots unchecked: out-of-range ones are refused here */
        if ((st = lu_permutation(pk, n, n, perm, "lu_solve"))) {
            break;
        }
        if (left) {
            mt_lapack_to_cols(bk, rhs, n, c, n, es);
        } else {
            memcpy(rhs, bk, (size_t)(r * c) * es);
        }
        if (n > 0 && nrhs > 0) {
            int info = 0;
            mt_lapack_to_cols(ak, lu, n, n, n, es);
            LAPACK_STR(dt, getrs, &trans, &in, &nrhs, (void *)lu, &ld, (const int *)pk, (void *)rhs,
                       &ld, &info);
        }
        if (left) {
            mt_lapack_from_cols(rhs, xk, n, c, n, es);
        } else {
            memcpy(xk, rhs, (size_t)(r * c) * es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&LUd);
    mt_tensor_clear(&Bd);
    mt_tensor_clear(&Pd);
    return st;
}
