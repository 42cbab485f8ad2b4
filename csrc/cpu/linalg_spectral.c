/* The linear algebra kernels on the CPU built on iterative LAPACK routines: the SVD (gesdd),
 * symmetric eigenvalues (syevd, or its steps two at once at two threads) and least squares
 * (gels, gelsy, gelsd, gelss). A matrix with a NaN or an infinity never reaches them (they may
 * not return on one): it gets NaNs, or the SVD's LinAlgError for a NaN, as PyTorch. Layout and
 * conventions as cpu/linalg.c's. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/lapack.h"
#include "dispatch/kernels.h"
#include "ops/linalg.h"

// A (*, m, n), k = min(m, n); A = U diag(S) Vh (gesdd): U (*, m, k), S (*, k), Vh (*, k, n), or
// U (*, m, m) and Vh (*, n, n) with full_matrices; U and Vh empty without compute_uv
mt_status
mt_cpu__linalg_svd(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL, *lwork_t = NULL;
    const bool full = a->b[0], uv = a->b[1];
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int m = (int)b.m, n = (int)b.n, k = m < n ? m : n;
    const int ucols = full ? m : k, vrows = full ? n : k;
    const mt_dtype dt = A->dtype;
    const char jobz = !uv ? 'N' : full ? 'A' : 'S';
    if (st) {
        goto out_release;
    }
    /* buffers in columns: a (m x n), u (m x ucols), vt (vrows x n), then iwork (8k ints) */
    const int64_t elems = (int64_t)m * n + (int64_t)m * ucols + (int64_t)vrows * n;
    if ((st = mt_lapack_scratch(elems * (int64_t)b.es + 8 * (int64_t)k * 4 + 8, &work))) {
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
        if (mt_lapack_has_nan(dt, mt_lapack_matrix(&b, i), (int64_t)m * n,
                              &inf)) { /* LAPACK's info -4 */
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
                mt_lapack_eye_part(dt, uo, m, ucols);
                mt_lapack_eye_part(dt, vo, vrows, n);
            }
            continue;
        }
        if (inf) { /* no decomposition: NaNs, as PyTorch gives */
            mt_lapack_fill_nan(dt, so, k);
            if (uv) {
                mt_lapack_fill_nan(dt, uo, (int64_t)m * ucols);
                mt_lapack_fill_nan(dt, vo, (int64_t)vrows * n);
            }
            continue;
        }
        mt_lapack_to_cols(mt_lapack_matrix(&b, i), buf, m, n, m, b.es);
        char query[16];
        int lwork = -1, info = 0;
        LAPACK_STR(dt, gesdd, &jobz, &m, &n, (void *)buf, &lda, (void *)so, (void *)u, &ldu,
                   (void *)vt, &ldvt, (void *)query, &lwork, iwork, &info);
        lwork = mt_lapack_lwork(dt, query);
        if ((st = mt_lapack_scratch((int64_t)lwork * (int64_t)b.es, &lwork_t))) {
            break;
        }
        LAPACK_STR(dt, gesdd, &jobz, &m, &n, (void *)buf, &lda, (void *)so, (void *)u, &ldu,
                   (void *)vt, &ldvt, (void *)mt_tensor_data(lwork_t), &lwork, iwork, &info);
        mt_tensor_clear(&lwork_t);
        if (info > 0) {
            st = mt_linalg_fail_info("linalg.svd", info, i, A->ndim > 2);
        } else if (uv) {
            mt_lapack_from_cols(u, uo, m, ucols, m, b.es);
            mt_lapack_from_cols(vt, vo, vrows, n, vrows, b.es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

/* Whether the upper (else lower) triangle of the n x n matrix in columns is finite. */
static bool
triangle_finite(mt_dtype dt, const char *cols, int n, bool upper)
{
    for (int j = 0; j < n; j++) {
        for (int i = upper ? 0 : j; i < (upper ? j + 1 : n); i++) {
            if (!isfinite(mt_lapack_get(dt, cols, i + (int64_t)j * n))) {
                return false;
            }
        }
    }
    return true;
}

/* Fewest rows of a matrix whose eigenvectors eigh_overlapped finds at two threads or more */
#define EIGH_OVERLAP_MIN 32

/* Whether the largest magnitude of the buf's UPLO triangle (columns, n x n) lies where syevd
 * would not scale the matrix (its rmin and rmax, sqrt(safmin/eps) and its inverse, with room to
 * spare): eigh_overlapped does not scale. */
static bool
unscaled(mt_dtype dt, const char *cols, int n, bool upper)
{
    const double lo = dt == MT_FLOAT32 ? 1e-14 : 1e-140, hi = 1.0 / lo;
    double amax = 0.0;
    for (int j = 0; j < n; j++) {
        for (int i = upper ? 0 : j; i < (upper ? j + 1 : n); i++) {
            const double v = fabs(mt_lapack_get(dt, cols, i + (int64_t)j * n));
            amax = v > amax ? v : amax;
        }
    }
    return amax == 0.0 || (amax > lo && amax < hi);
}

/* syevd's steps with two at once: A = Q T Q^T (sytrd; a's columns then hold Q's reflectors),
 * then on one thread T = Z diag(L) Z^T (stedc, divide and conquer; L into w) while another
 * forms Q (orgtr, in a), then V = Q Z (one gemm) into v (*, n, n) row-major. At 128 x 128,
 * stedc is half of syevd's time and forming Q about a fifth; syevd's own order (ormtr after
 * stedc) leaves the second thread idle. *info is the first failure's. */
static mt_status
eigh_overlapped(mt_dtype dt, char uplo, int n, char *a, char *w, char *v, int *info)
{
    const size_t es = mt_dtype_size(dt);
    const char compz = 'I';
    char q1[16], q2[16], q3[16];
    int lw = -1, liw = -1, iq = 0, info2 = 0, info3 = 0;
    mt_tensor *scratch = NULL;
    /* the workspace queries: sytrd (q1), stedc (q2, iq), orgtr (q3) */
    LAPACK_STR(dt, sytrd, &uplo, &n, (void *)a, &n, (void *)w, (void *)w, (void *)w, (void *)q1,
               &lw, info);
    LAPACK_STR(dt, stedc, &compz, &n, (void *)w, (void *)w, (void *)w, &n, (void *)q2, &lw, &iq,
               &liw, info);
    LAPACK_STR(dt, orgtr, &uplo, &n, (void *)a, &n, (void *)w, (void *)q3, &lw, info);
    int l1 = mt_lapack_lwork(dt, q1), l2 = mt_lapack_lwork(dt, q2), l3 = mt_lapack_lwork(dt, q3);
    int li = iq > 1 ? iq : 1;
    /* e (n), tau (n), z (n x n), the three workspaces, then stedc's ints */
    const int64_t elems = 2 * (int64_t)n + (int64_t)n * n + l1 + l2 + l3;
    mt_status st = mt_lapack_scratch(elems * (int64_t)es + (int64_t)li * 4, &scratch);
    if (st) {
        return st;
    }
    char *e = mt_tensor_data(scratch), *tau = e + n * es, *z = tau + n * es;
    char *w1 = z + (size_t)n * n * es, *w2 = w1 + l1 * es, *w3 = w2 + l2 * es;
    int *iw = (int *)(w3 + l3 * es);
    LAPACK_STR(dt, sytrd, &uplo, &n, (void *)a, &n, (void *)w, (void *)e, (void *)tau, (void *)w1,
               &l1, info);
    const int held = mt_cpu_lapack_begin();
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        LAPACK_STR_HELD(dt, stedc, &compz, &n, (void *)w, (void *)e, (void *)z, &n, (void *)w2, &l2,
                        iw, &li, &info2);
#pragma omp section
        LAPACK_STR_HELD(dt, orgtr, &uplo, &n, (void *)a, &n, (void *)tau, (void *)w3, &l3, &info3);
    }
    mt_cpu_lapack_end(held);
    *info = *info ? *info : info2 ? info2 : info3;
    if (*info == 0) { /* column-major Q and Z are row-major Q^T and Z^T */
        mt_cpu_gemm_raw(dt, true, true, n, n, n, 1.0, a, n, z, n, 0.0, v, n);
    }
    mt_tensor_clear(&scratch);
    return MT_OK;
}

// A (*, n, n) symmetric (its UPLO triangle read); A = V diag(L) V^T (syevd): eigenvalues L
// (*, n) ascending, eigenvectors V (*, n, n) in columns (empty without compute_v)
mt_status
mt_cpu__linalg_eigh(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL, *lwork_t = NULL;
    const bool want_v = a->b[0];
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int n = (int)b.n, ld = n > 1 ? n : 1;
    const mt_dtype dt = A->dtype;
    const char jobz = want_v ? 'V' : 'N', uplo = a->str[0][0];
    if (st || (st = mt_lapack_scratch((int64_t)n * n * (int64_t)b.es, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work);
    for (int64_t i = 0; i < b.count && st == MT_OK && n > 0; i++) {
        char *w = mt_tensor_data(a->out[0]) + i * n * (int64_t)b.es;
        mt_lapack_to_cols(mt_lapack_matrix(&b, i), buf, n, n, n, b.es);
        if (!triangle_finite(dt, buf, n, uplo == 'U')) { /* LAPACK may not return on these */
            mt_lapack_fill_nan(dt, w, n);
            if (want_v) {
                mt_lapack_fill_nan(dt, mt_tensor_data(a->out[1]) + i * n * n * (int64_t)b.es,
                                   (int64_t)n * n);
            }
            continue;
        }
        char query[16];
        int lwork = -1, liwork = -1, iquery = 0, info = 0;
        if (want_v && n >= EIGH_OVERLAP_MIN && mt_get_num_threads() > 1 &&
            unscaled(dt, buf, n, uplo == 'U')) {
            st = eigh_overlapped(dt, uplo, n, buf, w,
                                 mt_tensor_data(a->out[1]) + i * n * n * (int64_t)b.es, &info);
            if (st == MT_OK && info > 0) {
                st = mt_linalg_fail_info("linalg.eigh", info, i, A->ndim > 2);
            }
            continue;
        }
        LAPACK_STR(dt, syevd, &jobz, &uplo, &n, (void *)buf, &ld, (void *)w, (void *)query, &lwork,
                   &iquery, &liwork, &info);
        lwork = mt_lapack_lwork(dt, query);
        liwork = iquery > 1 ? iquery : 1;
        if ((st = mt_lapack_scratch((int64_t)lwork * (int64_t)b.es + (int64_t)liwork * 4,
                                    &lwork_t))) {
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
            mt_lapack_from_cols(buf, mt_tensor_data(a->out[1]) + i * n * n * (int64_t)b.es, n, n, n,
                                b.es);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
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
        WITH_WORK(LAPACK_STR, dt, st, info, gels, &trans, &m, &n, &nrhs, (void *)a, &lda, (void *)b,
                  &ldb);
        return st;
    }
    if (strcmp(driver, "gelss") == 0) {
        WITH_WORK(LAPACK, dt, st, info, gelss, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb,
                  (void *)s, rc, rank);
        return st;
    }
    if (strcmp(driver, "gelsy") == 0) {
        mt_tensor *jpvt = NULL;
        if ((st = mt_lapack_scratch((int64_t)(n > 0 ? n : 1) * 4, &jpvt))) {
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
    lwork = mt_lapack_lwork(dt, query);
    const int liwork = iquery > 1 ? iquery : 1;
    if ((st = mt_lapack_scratch((int64_t)lwork * (int64_t)mt_dtype_size(dt) + (int64_t)liwork * 4,
                                &work))) {
        return st;
    }
    char *wk = mt_tensor_data(work);
    LAPACK(dt, gelsd, &m, &n, &nrhs, (void *)a, &lda, (void *)b, &ldb, (void *)s, rc, rank,
           (void *)wk, &lwork, (int *)(wk + (size_t)lwork * mt_dtype_size(dt)), info);
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
    if ((st = mt_lapack_check_fits(rows, nrhs)) ||
        (st = mt_lapack_scratch((m * n + rows * nrhs + k + 1) * (int64_t)es, &work))) {
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
        mt_lapack_to_cols(ai, abuf, m, n, m, es);
        memset(bbuf, 0, (size_t)(rows * nrhs) * es);
        mt_lapack_to_cols(bi, bbuf, m, nrhs, rows, es);
        int rank = (int)k, info = 0;
        bool inf_a = false, inf_b = false;
        if (mt_lapack_has_nan(dt, ai, m * n, &inf_a) || inf_a ||
            mt_lapack_has_nan(dt, bi, m * nrhs, &inf_b) || inf_b) {
            /* no solution, and the SVD drivers may never return on these: NaNs */
            mt_lapack_fill_nan(dt, bbuf, rows * nrhs);
            mt_lapack_fill_nan(dt, sv, k);
            rank = 0;
        } else if (m > 0 && n > 0 && nrhs > 0) {
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
        mt_lapack_from_cols(bbuf, mt_tensor_data(a->out[0]) + i * n * nrhs * (int64_t)es, n, nrhs,
                            rows, es);
        full_rank = full_rank && rank == n;
        if (has_rank) {
            ((int64_t *)mt_tensor_data(a->out[2]))[i] = rank;
        }
        if (has_sv) {
            memcpy(mt_tensor_data(a->out[3]) + i * k * (int64_t)es, sv, (size_t)k * es);
        }
        for (int64_t c = 0; res && c < nrhs; c++) { /* LAPACK leaves the residuals in rows n.. */
            for (int64_t r = n; r < m; r++) {
                double v = mt_lapack_get(dt, bbuf, r + c * rows);
                res[i * nrhs + c] += v * v;
            }
        }
    }
    if (st == MT_OK) {
        /* PyTorch's rule: residuals for m > n and drivers other than gelsy, and with gelsd and
         * gelss only when every matrix has full rank */
        bool residuals = res != NULL && (!has_sv || full_rank);
        const int64_t none = 0;
        shape[sys.nb] = nrhs;
        st = mt_dispatch_result(a, 1, dt, residuals ? sys.nb + 1 : 1, residuals ? shape : &none,
                                MT_DEVICE_CPU);
        for (int64_t i = 0; residuals && st == MT_OK && i < count * nrhs; i++) {
            mt_lapack_set(dt, mt_tensor_data(a->out[1]), i, res[i]);
        }
    }
    free(res);
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&Ad);
    mt_tensor_clear(&Bd);
    return st;
}
