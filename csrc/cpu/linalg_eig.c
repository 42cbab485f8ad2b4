/* The general (non-symmetric) eigendecomposition on the CPU: linalg.eig's kernel over LAPACK's
 * geev (s, d, c and z), and its backward, which works in double complex whatever the dtype
 * (zgemm for the products, zgesv for the solve with V^H). Real inputs give complex results, as
 * PyTorch's. A matrix with a NaN or an infinity never reaches geev: the eigenvalues alone are
 * NaN for it, and with eigenvectors it is PyTorch's error. Nothing here checks an argument
 * (ops/linalg_checks.c does); layout and conventions as cpu/linalg_spectral.c's. */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/lapack.h"
#include "dispatch/kernels.h"
#include "ops/linalg.h"

typedef double complex cplx;

/* One geev call on the n x n matrix in columns a (overwritten): eigenvalues into w (complex
 * dtypes: n complex; real ones: n real parts, then n imaginary parts), right eigenvectors into
 * vr (n x n columns, LAPACK's packing for the real routines) when jobv is 'V'. work holds lwork
 * elements of dt (lwork -1: a query, its answer in work[0]); rwork 2n reals (complex only). */
static void
geev(mt_dtype dt, char jobv, int n, void *a, void *w, void *vr, void *work, int lwork, void *rwork,
     int *info)
{
    const char no_left = 'N';
    const int lda = n > 1 ? n : 1, ldv = n > 1 ? n : 1, one = 1;
    char unused_vl[16];
    void *wi = (char *)w + (size_t)n * mt_dtype_size(dt);
    switch (dt) {
    case MT_FLOAT32:
        mt_cpu_lib_enter("sgeev");
        scipy_LAPACK_sgeev(&no_left, &jobv, &n, a, &lda, w, wi, (void *)unused_vl, &one, vr, &ldv,
                           work, &lwork, info);
        break;
    case MT_FLOAT64:
        mt_cpu_lib_enter("dgeev");
        scipy_LAPACK_dgeev(&no_left, &jobv, &n, a, &lda, w, wi, (void *)unused_vl, &one, vr, &ldv,
                           work, &lwork, info);
        break;
    case MT_COMPLEX64:
        mt_cpu_lib_enter("cgeev");
        scipy_LAPACK_cgeev(&no_left, &jobv, &n, a, &lda, w, (void *)unused_vl, &one, vr, &ldv, work,
                           &lwork, rwork, info);
        break;
    default:
        mt_cpu_lib_enter("zgeev");
        scipy_LAPACK_zgeev(&no_left, &jobv, &n, a, &lda, w, (void *)unused_vl, &one, vr, &ldv, work,
                           &lwork, rwork, info);
        break;
    }
    mt_cpu_lib_exit();
}

/* Element k of the complex buffer p (complex64 or complex128) = (re, im). */
static void
set_complex(mt_dtype cdt, char *p, int64_t k, double re, double im)
{
    const mt_dtype rdt = mt_dtype_to_real(cdt);
    mt_lapack_set(rdt, p, 2 * k, re);
    mt_lapack_set(rdt, p, 2 * k + 1, im);
}

/* A real geev's results as complex: w (real parts, then imaginary parts) into L (n), and vr's
 * columns into V (n x n, row-major) when given: a real eigenvalue's column is its vector; a
 * pair (im > 0 first) shares two columns j, j + 1 as re and im, the second vector conjugated. */
static void
unpack_real(mt_dtype rdt, int n, const char *w, const char *vr, mt_dtype cdt, char *L, char *V)
{
    for (int j = 0; j < n; j++) {
        set_complex(cdt, L, j, mt_lapack_get(rdt, w, j), mt_lapack_get(rdt, w, n + j));
    }
    for (int j = 0; V != NULL && j < n; j++) {
        const bool pair = mt_lapack_get(rdt, w, n + j) != 0.0 && j + 1 < n;
        for (int r = 0; r < n; r++) {
            const double re = mt_lapack_get(rdt, vr, r + (int64_t)j * n);
            const double im = pair ? mt_lapack_get(rdt, vr, r + (int64_t)(j + 1) * n) : 0.0;
            set_complex(cdt, V, (int64_t)r * n + j, re, im);
            if (pair) {
                set_complex(cdt, V, (int64_t)r * n + j + 1, re, -im);
            }
        }
        j += pair;
    }
}

// A (*, n, n) real or complex; A V = V diag(L) (geev, right eigenvectors): L (*, n) and V
// (*, n, n) complex (complex64 for float32 and complex64), V's columns of unit norm as LAPACK
// normalises them; V empty without compute_v
mt_status
mt_cpu__linalg_eig(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL, *lwork_t = NULL;
    const bool want_v = a->b[0];
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int n = (int)b.n;
    const mt_dtype dt = A->dtype, cdt = mt_dtype_to_complex(dt), rdt = mt_dtype_to_real(dt);
    const bool cin = mt_dtype_is_complex(dt);
    const size_t ces = mt_dtype_size(cdt);
    if (st) {
        goto out_release;
    }
    /* buffers: the matrix in columns, w (n complex), vr (n x n), rwork (2n reals) */
    const int64_t nn = (int64_t)n * n;
    if ((st = mt_lapack_scratch(nn * (int64_t)b.es * 2 + (int64_t)n * (int64_t)ces * 2 + 64,
                                &work))) {
        goto out_release;
    }
    char *acols = mt_tensor_data(work), *w = acols + (size_t)nn * b.es;
    char *vr = w + (size_t)n * ces, *rwork = vr + (size_t)nn * b.es;
    const char jobv = want_v ? 'V' : 'N';
    for (int64_t i = 0; i < b.count && st == MT_OK && n > 0; i++) {
        char *Li = mt_tensor_data(a->out[0]) + i * n * (int64_t)ces;
        char *Vi = want_v ? mt_tensor_data(a->out[1]) + i * nn * (int64_t)ces : NULL;
        bool inf = false;
        if (mt_lapack_has_nan(rdt, mt_lapack_matrix(&b, i), nn * (cin ? 2 : 1), &inf) || inf) {
            if (want_v) {
                st = mt_linalg_fail_eig_nonfinite();
                break;
            }
            mt_lapack_fill_nan(rdt, Li, 2 * (int64_t)n); /* LAPACK may not return on these */
            continue;
        }
        mt_lapack_to_cols(mt_lapack_matrix(&b, i), acols, n, n, n, b.es);
        char query[32];
        int info = 0;
        geev(dt, jobv, n, acols, w, vr, query, -1, rwork, &info);
        int lwork = mt_lapack_lwork(rdt, query);
        if ((st = mt_lapack_scratch((int64_t)lwork * (int64_t)b.es, &lwork_t))) {
            break;
        }
        geev(dt, jobv, n, acols, w, vr, mt_tensor_data(lwork_t), lwork, rwork, &info);
        mt_tensor_clear(&lwork_t);
        if (info > 0) {
            st = mt_linalg_fail_info("linalg.eig", info, i, A->ndim > 2);
        } else if (cin) {
            memcpy(Li, w, (size_t)n * ces);
            if (want_v) {
                mt_lapack_from_cols(vr, Vi, n, n, n, ces);
            }
        } else {
            unpack_real(rdt, n, w, vr, cdt, Li, Vi);
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

/* ---- the backward ---- */

/* c (n x n, columns) = op(x) op(y), op each the matrix or (conj) its conjugate transpose */
static void
zgemm(int n, bool conj_x, const cplx *x, bool conj_y, const cplx *y, cplx *c)
{
    const cplx one = 1.0, zero = 0.0;
    mt_cpu_lib_enter("cblas_zgemm");
    scipy_cblas_zgemm(CblasColMajor, conj_x ? CblasConjTrans : CblasNoTrans,
                      conj_y ? CblasConjTrans : CblasNoTrans, n, n, n, &one, x, n, y, n, &zero, c,
                      n);
    mt_cpu_lib_exit();
}

/* The middle factor M of one matrix's gradient (columns): off the diagonal
 * (V^H gV - V^H V diag(re(diag(V^H gV))))_rc / conj(L_c - L_r), gL on it (0 without gL; the
 * off-diagonal part 0 without gV). vhg and vhv are scratch. Fails when the loss depends on the
 * eigenvectors' phases (an imaginary part of diag(V^H gV) above PyTorch's tolerance). */
static mt_status
middle(int n, const cplx *L, const cplx *gL, const cplx *V, const cplx *gV, cplx *vhg, cplx *vhv,
       cplx *M)
{
    memset(M, 0, sizeof(cplx) * (size_t)n * (size_t)n);
    if (gV != NULL) {
        zgemm(n, true, V, false, gV, vhg);
        zgemm(n, true, V, false, V, vhv);
        for (int j = 0; j < n; j++) {
            if (fabs(cimag(vhg[j + (int64_t)j * n])) > 1e-2) { /* PyTorch's allclose(.., 0) */
                return mt_linalg_fail_eig_phase();
            }
        }
        for (int c = 0; c < n; c++) {
            const double d = creal(vhg[c + (int64_t)c * n]);
            for (int r = 0; r < n; r++) {
                const int64_t k = r + (int64_t)c * n;
                M[k] = r == c ? 0.0 : (vhg[k] - vhv[k] * d) / conj(L[c] - L[r]);
            }
        }
    }
    for (int j = 0; gL != NULL && j < n; j++) {
        M[j + (int64_t)j * n] = gL[j];
    }
    return MT_OK;
}

// gL (*, n), gV (*, n, n) (either NULL), L (*, n), V (*, n, n) from _linalg_eig; PyTorch's
// linalg_eig_backward: gA = V^-H M V^H (middle() gives M) = the solution X of V^H X = M V^H,
// gA (*, n, n) complex, or its real part (L's real dtype) when A was real
mt_status
mt_cpu__linalg_eig_backward(mt_args *a)
{
    mt_tensor *gLt = a->t[0], *gVt = a->t[1], *Lt = a->t[2], *Vt = a->t[3];
    mt_tensor *gLd = NULL, *gVd = NULL, *Ld = NULL, *Vd = NULL, *work = NULL;
    const bool real_out = a->b[0];
    const int n = (int)Vt->sizes[Vt->ndim - 1];
    const int64_t nn = (int64_t)n * n, count = mt_numel(Lt->ndim - 1, Lt->sizes);
    const mt_dtype odt = real_out ? mt_dtype_to_real(Lt->dtype) : Lt->dtype;
    mt_status st = mt_lapack_check_fits(n, n);
    if (st || (st = mt_cpu_dense(Lt, MT_COMPLEX128, &Ld)) ||
        (st = mt_cpu_dense(Vt, MT_COMPLEX128, &Vd)) ||
        (gLt && (st = mt_cpu_dense(gLt, MT_COMPLEX128, &gLd))) ||
        (gVt && (st = mt_cpu_dense(gVt, MT_COMPLEX128, &gVd))) ||
        (st = mt_lapack_scratch(6 * nn * (int64_t)sizeof(cplx) + (int64_t)n * 4 + 64, &work))) {
        goto out_release;
    }
    /* scratch, each n x n in columns: V, gV, V^H gV, V^H V, M (then M V^H, then gA), V^H */
    cplx *v = (cplx *)mt_tensor_data(work), *g = v + nn, *vhg = g + nn, *vhv = vhg + nn;
    cplx *m = vhv + nn, *vh = m + nn;
    int *ipiv = (int *)(vh + nn);
    char *out = mt_tensor_data(a->out[0]);
    for (int64_t i = 0; i < count && n > 0; i++) {
        const cplx *Vi = (const cplx *)mt_tensor_data(Vd) + i * nn;
        const cplx *Li = (const cplx *)mt_tensor_data(Ld) + i * n;
        const cplx *gLi = gLd ? (const cplx *)mt_tensor_data(gLd) + i * n : NULL;
        mt_lapack_to_cols((const char *)Vi, (char *)v, n, n, n, sizeof(cplx));
        if (gVd) {
            mt_lapack_to_cols(mt_tensor_data(gVd) + i * nn * (int64_t)sizeof(cplx), (char *)g, n, n,
                              n, sizeof(cplx));
        }
        if ((st = middle(n, Li, gLi, v, gVd ? g : NULL, vhg, vhv, m))) {
            break;
        }
        zgemm(n, false, m, true, v, vhg); /* M V^H */
        for (int64_t k = 0; k < nn; k++) { /* V^H in columns is the row-major V conjugated */
            vh[k] = conj(Vi[k]);
        }
        int info = 0, lda = n;
        mt_cpu_lib_enter("zgesv");
        LAPACK_zgesv(&n, &n, (void *)vh, &lda, ipiv, (void *)vhg, &lda, &info);
        mt_cpu_lib_exit();
        if (info > 0) {
            st = mt_linalg_fail_info("linalg.solve", info, i, Lt->ndim > 1);
            break;
        }
        for (int r = 0; r < n; r++) {
            for (int c = 0; c < n; c++) {
                const cplx x = vhg[r + (int64_t)c * n];
                const int64_t k = i * nn + (int64_t)r * n + c;
                if (real_out) {
                    mt_lapack_set(odt, out, k, creal(x));
                } else {
                    set_complex(odt, out, k, creal(x), cimag(x));
                }
            }
        }
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&Ld);
    mt_tensor_clear(&Vd);
    mt_tensor_clear(&gLd);
    mt_tensor_clear(&gVd);
    return st;
}
