/* The linear algebra kernels on the CPU: LAPACK (and BLAS's trsm) from the OpenBLAS the build
 * links (scipy-openblas32: 32-bit LAPACK integers, every symbol prefixed "scipy_").
 *
 * Inputs are batches of row-major matrices (..., m, n), float32 or float64, checked by the
 * front ends (ops/linalg_checks.c). Each matrix is copied into a column-major scratch buffer,
 * as LAPACK wants it (so each routine sees the matrix itself, as PyTorch's do, and reports the
 * same info), and the results are copied back into row-major outputs. Each call is traced as
 * Library::<routine>. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#define LAPACK_GLOBAL(lcname, UCNAME) scipy_##lcname##_
#include <lapack.h>

#include "cpu/blas.h"
#include "cpu/copy.h"
#include "dispatch/kernels.h"
#include "ops/linalg.h"

/* ---- helpers: scratch, layouts, element access ---- */

/* A CPU scratch tensor of at least `bytes` bytes (so it shows in the allocator's stats). */
static mt_status
scratch(int64_t bytes, mt_tensor **out)
{
    int64_t words = bytes > 0 ? (bytes + 7) / 8 : 1;
    return mt_tensor_empty(1, &words, MT_INT64, MT_DEVICE_CPU, out);
}

/* dst (col-major, leading dim ld) = src (row-major m x n) */
static void
to_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es)
{
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            memcpy(dst + (i + j * ld) * es, src + (i * n + j) * es, es);
        }
    }
}

/* dst (row-major m x n) = src (col-major, leading dim ld) */
static void
from_cols(const char *src, char *dst, int64_t m, int64_t n, int64_t ld, size_t es)
{
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            memcpy(dst + (i * n + j) * es, src + (i + j * ld) * es, es);
        }
    }
}

static double
get(mt_dtype dt, const char *p, int64_t i)
{
    return dt == MT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void
set(mt_dtype dt, char *p, int64_t i, double v)
{
    if (dt == MT_FLOAT32) {
        ((float *)p)[i] = (float)v;
    } else {
        ((double *)p)[i] = v;
    }
}

/* dst (row-major n x n) = the identity */
static void
eye(mt_dtype dt, char *dst, int64_t n)
{
    memset(dst, 0, (size_t)(n * n) * mt_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        set(dt, dst, i * n + i, 1.0);
    }
}

/* A LAPACK routine of either precision, traced: s<name> for float32, d<name> for float64. The
 * buffers are passed as void * so that one call serves both. LAPACK_STR is for the routines
 * with character arguments, whose lengths lapack.h's scipy_LAPACK_* macros append. */
#define LAPACK_IN(dt, prefix, name, ...)                                       \
    do {                                                                       \
        mt_cpu_lib_enter((dt) == MT_FLOAT32 ? "s" #name : "d" #name);                 \
        if ((dt) == MT_FLOAT32) {                                              \
            prefix##s##name(__VA_ARGS__);                                      \
        } else {                                                               \
            prefix##d##name(__VA_ARGS__);                                      \
        }                                                                      \
        mt_cpu_lib_exit();                                                            \
    } while (0)
#define LAPACK(dt, name, ...) LAPACK_IN(dt, LAPACK_, name, __VA_ARGS__)
#define LAPACK_STR(dt, name, ...) LAPACK_IN(dt, scipy_LAPACK_, name, __VA_ARGS__)

/* The optimal workspace a LAPACK query (lwork = -1) wrote in its first element. */
static int
lwork_of(mt_dtype dt, const char *query)
{
    double w = get(dt, query, 0);
    return w > 1 ? (int)w : 1;
}

/* LAPACK takes int sizes: every dim of the calls here must fit. */
static mt_status
check_fits(int64_t m, int64_t n)
{
    if (m > INT_MAX / 2 || n > INT_MAX / 2) {
        return mt_fail(MT_ERUNTIME, "LAPACK: matrices with more than %d rows or columns are "
                                    "not supported", INT_MAX / 2);
    }
    return MT_OK;
}

/* A batch of matrices, made dense: count matrices of m x n. */
typedef struct batch {
    mt_tensor *x;
    const char *data;
    int64_t count, m, n;
    size_t es;
} batch;

static mt_status
batch_of(mt_tensor *A, batch *b)
{
    b->m = A->sizes[A->ndim - 2];
    b->n = A->sizes[A->ndim - 1];
    b->count = mt_numel(A->ndim - 2, A->sizes);
    b->es = mt_dtype_size(A->dtype);
    mt_status st = check_fits(b->m, b->n);
    if (st == MT_OK) {
        st = mt_cpu_dense(A, A->dtype, &b->x);
    }
    b->data = st ? NULL : mt_tensor_data(b->x);
    return st;
}

static const char *
matrix(const batch *b, int64_t k)
{
    return b->data + k * b->m * b->n * (int64_t)b->es;
}

/* A new CPU tensor shaped like A's batch dims followed by `more` dims (sizes d0, d1). */
static mt_status
batch_shaped(const mt_tensor *A, int more, int64_t d0, int64_t d1, mt_dtype dt, mt_tensor **out)
{
    int64_t shape[MT_MAX_DIMS];
    int nb = A->ndim - 2;
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = d0;
    shape[nb + 1] = d1;
    return mt_tensor_empty(nb + more, shape, dt, MT_DEVICE_CPU, out);
}

static mt_status
empty_1d(mt_dtype dt, mt_tensor **out)
{
    int64_t zero = 0;
    return mt_tensor_empty(1, &zero, dt, MT_DEVICE_CPU, out);
}

/* Releases outputs 0..n-1 of a after a failure. */
static mt_status
drop_outputs(mt_args *a, int n, mt_status st)
{
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&a->out[k]);
    }
    return st;
}

/* ---- LU: inverse, determinant, solve ---- */

// A (*, n, n); inverse (*, n, n), info (*) int32: A = P L U (getrf), then U's solve for I
mt_status
mt_cpu_linalg_inv_ex(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int n = (int)b.n;
    const mt_dtype dt = A->dtype;
    if (st || (st = mt_tensor_empty(A->ndim, A->sizes, dt, MT_DEVICE_CPU, &a->out[0])) ||
        (st = batch_shaped(A, 0, 0, 0, MT_INT32, &a->out[1])) ||
        (st = scratch((int64_t)n * n * 2 * (int64_t)b.es + (int64_t)n * 4, &work))) {
        goto out_release;
    }
    char *lu = mt_tensor_data(work), *rhs = lu + (size_t)n * n * b.es;
    int *ipiv = (int *)(rhs + (size_t)n * n * b.es), *info = (int *)mt_tensor_data(a->out[1]);
    char *inv = mt_tensor_data(a->out[0]);
    for (int64_t k = 0; k < b.count; k++) {
        to_cols(matrix(&b, k), lu, n, n, n, b.es);
        eye(dt, rhs, n); /* the identity is its own transpose */
        int ld = n > 1 ? n : 1;
        LAPACK(dt, gesv, &n, &n, (void *)lu, &ld, ipiv, (void *)rhs, &ld, &info[k]);
        from_cols(rhs, inv + k * n * n * (int64_t)b.es, n, n, n, b.es);
    }
    if (a->b[0]) {
        st = mt_linalg_check_info(a->out[1], "linalg.inv_ex", A->ndim > 2);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st ? drop_outputs(a, 2, st) : MT_OK;
}

/* The LU factorisation of every matrix of A, for det and slogdet: per matrix, the sign of the
 * row permutation times that of U's diagonal (0 if singular) and log |det| (-inf if singular),
 * from U's diagonal. */
static mt_status
lu_dets(mt_tensor *A, double *sign, double *logabs, double *det)
{
    mt_tensor *work = NULL;
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int n = (int)b.n;
    if (st || (st = scratch((int64_t)n * n * (int64_t)b.es + (int64_t)n * 4, &work))) {
        goto out_release;
    }
    char *lu = mt_tensor_data(work);
    int *ipiv = (int *)(lu + (size_t)n * n * b.es);
    for (int64_t k = 0; k < b.count; k++) {
        int info = 0, ld = n > 1 ? n : 1;
        to_cols(matrix(&b, k), lu, n, n, n, b.es);
        if (n > 0) {
            LAPACK(A->dtype, getrf, &n, &n, (void *)lu, &ld, ipiv, &info);
        }
        double s = 1, l = 0, d = 1;
        for (int i = 0; i < n; i++) {
            double u = get(A->dtype, lu, (int64_t)i * n + i);
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
    mt_status st = batch_shaped(A, 0, 0, 0, A->dtype, &a->out[0]);
    int64_t count = mt_numel(A->ndim - 2, A->sizes);
    double *det = st ? NULL : malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    if (st == MT_OK && det == NULL) {
        st = mt_fail(MT_ENOMEM, "linalg.det: out of memory");
    }
    if (st == MT_OK && (st = lu_dets(A, NULL, NULL, det)) == MT_OK) {
        for (int64_t k = 0; k < count; k++) {
            set(A->dtype, mt_tensor_data(a->out[0]), k, det[k]);
        }
    }
    free(det);
    return st ? drop_outputs(a, 1, st) : MT_OK;
}

// A (*, n, n); sign (*), logabsdet (*): det(A) = sign * exp(logabsdet)
mt_status
mt_cpu_linalg_slogdet(mt_args *a)
{
    mt_tensor *A = a->t[0];
    int64_t count = mt_numel(A->ndim - 2, A->sizes);
    double *v = malloc(sizeof(double) * 2 * (size_t)(count > 0 ? count : 1));
    mt_status st = v ? MT_OK : mt_fail(MT_ENOMEM, "linalg.slogdet: out of memory");
    if (st || (st = batch_shaped(A, 0, 0, 0, A->dtype, &a->out[0])) ||
        (st = batch_shaped(A, 0, 0, 0, A->dtype, &a->out[1])) ||
        (st = lu_dets(A, v, v + count, NULL))) {
        free(v);
        return drop_outputs(a, 2, st);
    }
    for (int64_t k = 0; k < count; k++) {
        set(A->dtype, mt_tensor_data(a->out[0]), k, v[k]);
        set(A->dtype, mt_tensor_data(a->out[1]), k, v[count + k]);
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
    mt_status st = mt_linalg_solve_spec(A, B, left, &sys);
    if (st || (st = mt_tensor_empty(sys.nout, sys.out, dt, MT_DEVICE_CPU, &a->out[0])) ||
        (st = mt_cpu_dense(A, dt, &Ad)) || (st = mt_cpu_dense(B, dt, &Bd))) {
        goto out_release;
    }
    const int64_t n = A->sizes[A->ndim - 1];
    /* X is (r, c): r = n, c the right-hand sides when left; r rows of X A = B otherwise */
    const int64_t r = sys.vector ? n : sys.out[sys.nout - 2];
    const int64_t c = sys.vector ? 1 : sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = check_fits(n, r * c)) ||
        (st = scratch((n * n + r * c) * (int64_t)es + n * 4, &work))) {
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
            to_cols(ak, lu, n, n, n, es);
            to_cols(bk, rhs, n, c, n, es);
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
            from_cols(rhs, xk, n, c, n, es);
        } else {
            memcpy(xk, rhs, (size_t)(r * c) * es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&Ad);
    mt_tensor_clear(&Bd);
    return st ? drop_outputs(a, 1, st) : MT_OK;
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
    mt_status st = mt_linalg_triangular_spec(A, B, left, &sys);
    if (st || (st = mt_tensor_empty(sys.nout, sys.out, dt, MT_DEVICE_CPU, &a->out[0])) ||
        (st = mt_cpu_dense(A, dt, &Ad)) || (st = mt_cpu_dense(B, dt, &Bd))) {
        goto out_release;
    }
    const int64_t n = A->sizes[A->ndim - 1], r = sys.out[sys.nout - 2], c = sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = check_fits(r, c))) {
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
    return st ? drop_outputs(a, 1, st) : MT_OK;
}

/* ---- Cholesky, QR ---- */

// A (*, n, n) symmetric positive-definite (its lower triangle read); L (*, n, n) lower, A = L L^T
// (or U = L^T when upper); info (*) int32: the order of the first leading minor not positive
mt_status
mt_cpu_linalg_cholesky_ex(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    const bool upper = a->b[0];
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int n = (int)b.n;
    const mt_dtype dt = A->dtype;
    if (st || (st = mt_tensor_empty(A->ndim, A->sizes, dt, MT_DEVICE_CPU, &a->out[0])) ||
        (st = batch_shaped(A, 0, 0, 0, MT_INT32, &a->out[1])) ||
        (st = scratch((int64_t)n * n * (int64_t)b.es, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *out = mt_tensor_data(a->out[0]);
    int *info = (int *)mt_tensor_data(a->out[1]);
    const char lower = 'L';
    for (int64_t k = 0; k < b.count; k++) {
        int ld = n > 1 ? n : 1;
        to_cols(matrix(&b, k), buf, n, n, n, b.es);
        info[k] = 0;
        if (n > 0) {
            LAPACK_STR(dt, potrf, &lower, &n, (void *)buf, &ld, &info[k]);
        }
        char *ok = out + k * n * n * (int64_t)b.es;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) { /* L[i][j] = buf[i + j n] below the diagonal */
                int64_t from = upper ? j + (int64_t)i * n : i + (int64_t)j * n;
                bool keep = upper ? i <= j : i >= j;
                set(dt, ok, (int64_t)i * n + j, keep ? get(dt, buf, from) : 0.0);
            }
        }
    }
    if (a->b[1]) {
        st = mt_linalg_check_info(a->out[1], "linalg.cholesky_ex", A->ndim > 2);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st ? drop_outputs(a, 2, st) : MT_OK;
}

/* A LAPACK routine whose last arguments are (work, lwork, info), called through CALL (LAPACK
 * or LAPACK_STR): a workspace query (lwork -1) first, then the call with the workspace it asked
 * for; *info is the call's. */
#define WITH_WORK(CALL, dt, st, info, name, ...)                                       \
    do {                                                                               \
        char query_[16];                                                               \
        int lwork_ = -1;                                                               \
        mt_tensor *work_ = NULL;                                                       \
        CALL(dt, name, __VA_ARGS__, (void *)query_, &lwork_, (info));                  \
        lwork_ = lwork_of(dt, query_);                                                 \
        (st) = scratch((int64_t)lwork_ * (int64_t)mt_dtype_size(dt), &work_);          \
        if ((st) == MT_OK) {                                                           \
            CALL(dt, name, __VA_ARGS__, (void *)mt_tensor_data(work_), &lwork_, (info)); \
            mt_tensor_release(work_);                                                  \
        }                                                                              \
    } while (0)

// A (*, m, n), k = min(m, n); mode 'reduced': Q (*, m, k), R (*, k, n); 'complete': Q (*, m, m),
// R (*, m, n); 'r': Q empty, R (*, k, n). A = Q R, Q orthonormal columns, R upper triangular:
// geqrf leaves R and the reflectors in the matrix, orgqr makes Q of the reflectors.
mt_status
mt_cpu_linalg_qr(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n, ld = m > 1 ? m : 1;
    const bool complete = strcmp(a->str[0], "complete") == 0, want_q = strcmp(a->str[0], "r") != 0;
    const int qcols = complete ? m : k, rrows = complete ? m : k, width = n > qcols ? n : qcols;
    const mt_dtype dt = A->dtype;
    if (st ||
        (st = want_q ? batch_shaped(A, 2, m, qcols, dt, &a->out[0]) : empty_1d(dt, &a->out[0])) ||
        (st = batch_shaped(A, 2, rrows, n, dt, &a->out[1])) ||
        (st = scratch(((int64_t)m * width + k + 1) * (int64_t)b.es, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *tau = buf + (size_t)m * width * b.es;
    for (int64_t i = 0; i < b.count && st == MT_OK; i++) {
        to_cols(matrix(&b, i), buf, m, n, m, b.es);
        if (k > 0) {
            int info = 0;
            WITH_WORK(LAPACK, dt, st, &info, geqrf, &m, &n, (void *)buf, &ld, (void *)tau);
        }
        char *r = mt_tensor_data(a->out[1]) + i * rrows * n * (int64_t)b.es;
        for (int64_t p = 0; p < rrows; p++) {
            for (int64_t q = 0; q < n; q++) {
                set(dt, r, p * n + q, p <= q ? get(dt, buf, p + q * m) : 0.0);
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
                set(dt, buf, d + d * m, 1.0);
            }
        }
        from_cols(buf, mt_tensor_data(a->out[0]) + i * m * qcols * (int64_t)b.es, m, qcols, m,
                  b.es);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st ? drop_outputs(a, 2, st) : MT_OK;
}

/* ---- SVD, symmetric eigenvalues ---- */

/* Whether the matrix (count elements) holds a NaN (had), or else an infinity (*inf). */
static bool
has_nan(mt_dtype dt, const char *p, int64_t count, bool *inf)
{
    *inf = false;
    for (int64_t i = 0; i < count; i++) {
        double v = get(dt, p, i);
        if (isnan(v)) {
            return true;
        }
        *inf = *inf || isinf(v);
    }
    return false;
}

/* dst (count elements) = NaN */
static void
fill_nan(mt_dtype dt, char *dst, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        set(dt, dst, i, NAN);
    }
}

/* dst (row-major rows x cols) = the identity's first rows and columns */
static void
eye_part(mt_dtype dt, char *dst, int64_t rows, int64_t cols)
{
    memset(dst, 0, (size_t)(rows * cols) * mt_dtype_size(dt));
    for (int64_t i = 0; i < rows && i < cols; i++) {
        set(dt, dst, i * cols + i, 1.0);
    }
}

// A (*, m, n), k = min(m, n); A = U diag(S) Vh (gesdd): U (*, m, k), S (*, k), Vh (*, k, n), or
// U (*, m, m) and Vh (*, n, n) with full_matrices; U and Vh empty without compute_uv
mt_status
mt_cpu__linalg_svd(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL, *lwork_t = NULL;
    const bool full = a->b[0], uv = a->b[1];
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n;
    const int ucols = full ? m : k, vrows = full ? n : k;
    const mt_dtype dt = A->dtype;
    const char jobz = !uv ? 'N' : full ? 'A' : 'S';
    if (st || (st = uv ? batch_shaped(A, 2, m, ucols, dt, &a->out[0]) : empty_1d(dt, &a->out[0])) ||
        (st = batch_shaped(A, 1, k, 0, dt, &a->out[1])) ||
        (st = uv ? batch_shaped(A, 2, vrows, n, dt, &a->out[2]) : empty_1d(dt, &a->out[2]))) {
        goto out_release;
    }
    /* buffers in columns: a (m x n), u (m x ucols), vt (vrows x n), then iwork (8k ints) */
    const int64_t elems = (int64_t)m * n + (int64_t)m * ucols + (int64_t)vrows * n;
    if ((st = scratch(elems * (int64_t)b.es + 8 * (int64_t)k * 4 + 8, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work), *u = buf + (size_t)m * n * b.es;
    char *vt = u + (size_t)m * ucols * b.es;
    int *iwork = (int *)(vt + (size_t)vrows * n * b.es);
    const int lda = m > 1 ? m : 1, ldu = lda, ldvt = vrows > 1 ? vrows : 1;
    for (int64_t i = 0; i < b.count && st == MT_OK; i++) {
        char *uo = uv ? mt_tensor_data(a->out[0]) + i * m * ucols * (int64_t)b.es : NULL;
        char *so = mt_tensor_data(a->out[1]) + i * k * (int64_t)b.es;
        char *vo = uv ? mt_tensor_data(a->out[2]) + i * vrows * n * (int64_t)b.es : NULL;
        bool inf;
        if (has_nan(dt, matrix(&b, i), (int64_t)m * n, &inf)) { /* LAPACK's info -4 */
            char where[64] = "";
            if (A->ndim > 2) {
                snprintf(where, sizeof(where), ": (Batch element %lld)", (long long)i);
            }
            st = mt_fail(MT_ELINALG,
                         "linalg.svd%s: The algorithm failed to converge because the input "
                         "matrix contained non-finite values.",
                         where);
            break;
        }
        if (k == 0) {
            if (uv) {
                eye_part(dt, uo, m, ucols);
                eye_part(dt, vo, vrows, n);
            }
            continue;
        }
        if (inf) { /* no decomposition: NaNs, as PyTorch gives */
            fill_nan(dt, so, k);
            if (uv) {
                fill_nan(dt, uo, (int64_t)m * ucols);
                fill_nan(dt, vo, (int64_t)vrows * n);
            }
            continue;
        }
        to_cols(matrix(&b, i), buf, m, n, m, b.es);
        char query[16];
        int lwork = -1, info = 0;
        LAPACK_STR(dt, gesdd, &jobz, &m, &n, (void *)buf, &lda, (void *)so, (void *)u, &ldu,
                   (void *)vt, &ldvt, (void *)query, &lwork, iwork, &info);
        lwork = lwork_of(dt, query);
        if ((st = scratch((int64_t)lwork * (int64_t)b.es, &lwork_t))) {
            break;
        }
        LAPACK_STR(dt, gesdd, &jobz, &m, &n, (void *)buf, &lda, (void *)so, (void *)u, &ldu,
                   (void *)vt, &ldvt, (void *)mt_tensor_data(lwork_t), &lwork, iwork, &info);
        mt_tensor_clear(&lwork_t);
        if (info > 0) {
            st = mt_linalg_fail_info("linalg.svd", info, i, A->ndim > 2);
        } else if (uv) {
            from_cols(u, uo, m, ucols, m, b.es);
            from_cols(vt, vo, vrows, n, vrows, b.es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st ? drop_outputs(a, 3, st) : MT_OK;
}

// A (*, n, n) symmetric (its UPLO triangle read); A = V diag(L) V^T (syevd): eigenvalues L
// (*, n) ascending, eigenvectors V (*, n, n) in columns (empty without compute_v)
mt_status
mt_cpu__linalg_eigh(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL, *lwork_t = NULL;
    const bool want_v = a->b[0];
    batch b = {0};
    mt_status st = batch_of(A, &b);
    const int n = (int)b.n, ld = n > 1 ? n : 1;
    const mt_dtype dt = A->dtype;
    const char jobz = want_v ? 'V' : 'N', uplo = a->str[0][0];
    if (st || (st = batch_shaped(A, 1, n, 0, dt, &a->out[0])) ||
        (st = want_v ? mt_tensor_empty(A->ndim, A->sizes, dt, MT_DEVICE_CPU, &a->out[1])
                     : empty_1d(dt, &a->out[1])) ||
        (st = scratch((int64_t)n * n * (int64_t)b.es, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work);
    for (int64_t i = 0; i < b.count && st == MT_OK && n > 0; i++) {
        char *w = mt_tensor_data(a->out[0]) + i * n * (int64_t)b.es;
        to_cols(matrix(&b, i), buf, n, n, n, b.es);
        char query[16];
        int lwork = -1, liwork = -1, iquery = 0, info = 0;
        LAPACK_STR(dt, syevd, &jobz, &uplo, &n, (void *)buf, &ld, (void *)w, (void *)query, &lwork,
                   &iquery, &liwork, &info);
        lwork = lwork_of(dt, query);
        liwork = iquery > 1 ? iquery : 1;
        if ((st = scratch((int64_t)lwork * (int64_t)b.es + (int64_t)liwork * 4, &lwork_t))) {
            break;
        }
        char *wk = mt_tensor_data(lwork_t);
        int *iwork = (int *)(wk + (size_t)lwork * b.es);
        LAPACK_STR(dt, syevd, &jobz, &uplo, &n, (void *)buf, &ld, (void *)w, (void *)wk, &lwork,
                   iwork, &liwork, &info);
        mt_tensor_clear(&lwork_t);
        if (info > 0) {
            st = mt_linalg_fail_info("linalg.eigh", info, i, A->ndim > 2);
        } else if (want_v) {
            from_cols(buf, mt_tensor_data(a->out[1]) + i * n * n * (int64_t)b.es, n, n, n, b.es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st ? drop_outputs(a, 2, st) : MT_OK;
}

/* ---- least squares ---- */

/* One least-squares problem in columns: a (m x n, ld lda), b (max(m, n) x nrhs, ld ldb); the
 * driver's rank (gelsy, gelsd, gelss) and singular values (gelsd, gelss; s holds min(m, n)). */
static mt_status
lstsq_one(mt_dtype dt, const char *driver, int m, int n, int nrhs, char *a, int lda, char *b,
          int ldb, double rcond, char *s, int *rank, int *info)
{
    float rc32 = (float)rcond;
    double rc64 = rcond;
    void *rc = dt == MT_FLOAT32 ? (void *)&rc32 : (void *)&rc64;
    mt_status st = MT_OK;
    if (strcmp(driver, "gels") == 0) {
        const char trans = 'N';
        WITH_WORK(LAPACK_STR, dt, st, info, gels, &trans, &m, &n, &nrhs, (void *)a, &lda,
                  (void *)b, &ldb);
        return st;
    }
    if (strcmp(driver, "gelss") == 0) {
        WITH_WORK(LAPACK, dt, st, info, gelss, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb,
                  (void *)s, rc, rank);
        return st;
    }
    if (strcmp(driver, "gelsy") == 0) {
        mt_tensor *jpvt = NULL;
        if ((st = scratch((int64_t)(n > 0 ? n : 1) * 4, &jpvt))) {
            return st;
        }
        memset(mt_tensor_data(jpvt), 0, (size_t)(n > 0 ? n : 1) * 4); /* every column free */
        WITH_WORK(LAPACK, dt, st, info, gelsy, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb,
                  (int *)mt_tensor_data(jpvt), rc, rank);
        mt_tensor_release(jpvt);
        return st;
    }
    /* gelsd: (work, lwork, iwork, info); the query gives the int workspace's size too */
    char query[16];
    int lwork = -1, iquery = 0;
    mt_tensor *work = NULL;
    LAPACK(dt, gelsd, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb, (void *)s, rc, rank,
           (void *)query, &lwork, &iquery, info);
    lwork = lwork_of(dt, query);
    const int liwork = iquery > 1 ? iquery : 1;
    if ((st = scratch((int64_t)lwork * (int64_t)mt_dtype_size(dt) + (int64_t)liwork * 4, &work))) {
        return st;
    }
    char *wk = mt_tensor_data(work);
    LAPACK(dt, gelsd, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb, (void *)s, rc, rank,
           (void *)wk, &lwork,
           (int *)(wk + (size_t)lwork * mt_dtype_size(dt)), info);
    mt_tensor_release(work);
    return st;
}

// A (*, m, n), B (*, m, k) or (*, m), batches broadcast; the X minimising |A X - B| (its
// minimum-norm one where A lacks rank): solution (*, n, k); residuals (*, k) |A X - B|^2 per
// column for m > n, full rank, driver not gelsy (else empty); rank (*) int64 (not for gels);
// singular_values (*, min(m, n)) for gelsd and gelss (else empty)
mt_status
mt_cpu_linalg_lstsq(mt_args *a)
{
    mt_tensor *A = a->t[0], *B = a->t[1], *Ad = NULL, *Bd = NULL, *work = NULL;
    mt_linalg_system sys;
    const char *driver;
    const mt_dtype dt = A->dtype;
    const size_t es = mt_dtype_size(dt);
    mt_status st = mt_linalg_lstsq_spec(A, B, a->str[0], &sys, &driver);
    if (st || (st = mt_cpu_dense(A, dt, &Ad)) || (st = mt_cpu_dense(B, dt, &Bd))) {
        goto out_release;
    }
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    const int64_t nrhs = sys.vector ? 1 : B->sizes[B->ndim - 1], rows = m > n ? m : n;
    const int64_t count = mt_numel(sys.nb, sys.batch);
    const bool has_rank = strcmp(driver, "gels") != 0;
    const bool has_sv = strcmp(driver, "gelsd") == 0 || strcmp(driver, "gelss") == 0;
    const double rcond = a->s[0].type != MT_NUM_DTYPES
                             ? mt_scalar_to_double(a->s[0])
                             : (dt == MT_FLOAT32 ? FLT_EPSILON : DBL_EPSILON) * (double)rows;
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, sys.batch, sizeof(int64_t) * (size_t)sys.nb);
    shape[sys.nb] = k;
    if ((st = check_fits(rows, nrhs)) ||
        (st = mt_tensor_empty(sys.nout, sys.out, dt, MT_DEVICE_CPU, &a->out[0])) ||
        (st = has_rank ? mt_tensor_empty(sys.nb, sys.batch, MT_INT64, MT_DEVICE_CPU, &a->out[2])
                       : empty_1d(MT_INT64, &a->out[2])) ||
        (st = has_sv ? mt_tensor_empty(sys.nb + 1, shape, dt, MT_DEVICE_CPU, &a->out[3])
                     : empty_1d(dt, &a->out[3])) ||
        (st = scratch((m * n + rows * nrhs + k + 1) * (int64_t)es, &work))) {
        goto out_release;
    }
    char *abuf = mt_tensor_data(work), *bbuf = abuf + (size_t)(m * n) * es;
    char *sv = bbuf + (size_t)(rows * nrhs) * es;
    bool full_rank = true;
    double *res = NULL;
    if (m > n && strcmp(driver, "gelsy") != 0) {
        res = calloc((size_t)(count * nrhs > 0 ? count * nrhs : 1), sizeof(double));
        if (res == NULL) {
            st = mt_fail(MT_ENOMEM, "torch.linalg.lstsq: out of memory");
            goto out_release;
        }
    }
    for (int64_t i = 0; i < count && st == MT_OK; i++) {
        const char *ai = mt_tensor_data(Ad) + mt_linalg_batch_offset(&sys, A, 2, i) * (int64_t)es;
        const char *bi = mt_tensor_data(Bd) +
                         mt_linalg_batch_offset(&sys, B, sys.vector ? 1 : 2, i) * (int64_t)es;
        to_cols(ai, abuf, m, n, m, es);
        memset(bbuf, 0, (size_t)(rows * nrhs) * es);
        to_cols(bi, bbuf, m, nrhs, rows, es);
        int rank = (int)k, info = 0;
        if (m > 0 && n > 0 && nrhs > 0) {
            st = lstsq_one(dt, driver, (int)m, (int)n, (int)nrhs, abuf, m > 1 ? (int)m : 1, bbuf,
                           rows > 1 ? (int)rows : 1, rcond, sv, &rank, &info);
        } else if (n > 0) {
            rank = 0;
            memset(sv, 0, (size_t)k * es);
        }
        if (st == MT_OK && info > 0) {
            st = mt_linalg_fail_info("torch.linalg.lstsq", info, i, sys.nb > 0);
        }
        if (st) {
            break;
        }
        if (m == 0) { /* no equations: X = 0 */
            memset(bbuf, 0, (size_t)(rows * nrhs) * es);
        }
        from_cols(bbuf, mt_tensor_data(a->out[0]) + i * n * nrhs * (int64_t)es, n, nrhs, rows, es);
        full_rank = full_rank && rank == n;
        if (has_rank) {
            ((int64_t *)mt_tensor_data(a->out[2]))[i] = rank;
        }
        if (has_sv) {
            memcpy(mt_tensor_data(a->out[3]) + i * k * (int64_t)es, sv, (size_t)k * es);
        }
        for (int64_t c = 0; res && c < nrhs; c++) { /* LAPACK leaves the residuals in rows n.. */
            for (int64_t r = n; r < m; r++) {
                double v = get(dt, bbuf, r + c * rows);
                res[i * nrhs + c] += v * v;
            }
        }
    }
    if (st == MT_OK) {
        /* PyTorch's rule: residuals for m > n and drivers other than gelsy, and with gelsd and
         * gelss only when every matrix has full rank */
        bool residuals = res != NULL && (!has_sv || full_rank);
        shape[sys.nb] = nrhs;
        st = residuals ? mt_tensor_empty(sys.nb + 1, shape, dt, MT_DEVICE_CPU, &a->out[1])
                       : empty_1d(dt, &a->out[1]);
        for (int64_t i = 0; residuals && st == MT_OK && i < count * nrhs; i++) {
            set(dt, mt_tensor_data(a->out[1]), i, res[i]);
        }
    }
    free(res);
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&Ad);
    mt_tensor_clear(&Bd);
    return st ? drop_outputs(a, 4, st) : MT_OK;
}
