/* The emulated cuBLAS's complex products (include/cublas_v2.h): cublasCgemm and cublasZgemm and
 * their strided-batched forms, cublasCgemv and cublasZgemv, cublasCdotu, cublasCdotc,
 * cublasZdotu and cublasZdotc, column-major exactly as cuBLAS documents them, with op
 * CUBLAS_OP_C the conjugate transpose; accumulated in double complex. Their handle, argument,
 * memory and stream checks are cublas.c's, which calls the mt_emu_z*_compute functions here
 * for the products. */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "cublas_emu.h"
#include "cublas_v2.h"
#include "emu.h"

/* element i of a complex array of float (or double: dbl) pairs, rounded to TF32 when tf32 */
static double complex
zget(const void *p, int64_t i, bool dbl, bool tf32)
{
    if (dbl) {
        const double *d = (const double *)p + 2 * i;
        return CMPLX(d[0], d[1]);
    }
    const float *f = (const float *)p + 2 * i;
    return tf32 ? CMPLX(mt_emu_tf32(f[0]), mt_emu_tf32(f[1])) : CMPLX(f[0], f[1]);
}

static void
zput(void *p, int64_t i, double complex v, bool dbl)
{
    if (dbl) {
        double *d = (double *)p + 2 * i;
        d[0] = creal(v);
        d[1] = cimag(v);
    } else {
        float *f = (float *)p + 2 * i;
        f[0] = (float)creal(v);
        f[1] = (float)cimag(v);
    }
}

/* element (r, c) of op(X) for X column-major with leading dimension ld at X + base */
static double complex
op_get(const void *X, int64_t base, cublasOperation_t op, int64_t r, int64_t c, int64_t ld,
       bool dbl, bool tf32)
{
    double complex v = zget(X, base + (op == CUBLAS_OP_N ? r + c * ld : c + r * ld), dbl, tf32);
    return op == CUBLAS_OP_C ? conj(v) : v;
}

// op(A) (m, k), op(B) (k, n), C (m, n), column-major complex, batch times:
// C = al op(A) op(B) + be C
cublasStatus_t
mt_emu_zgemm_compute(const mt_emu_gemm *g, const double *al, const double *be, bool dbl)
{
    const int64_t m = g->m, n = g->n, k = g->k;
    const double complex alpha = CMPLX(al[0], al[1]), beta = CMPLX(be[0], be[1]);
    /* alpha == 0 or k == 0 is C = beta C, reading neither A nor B (BLAS) */
    const bool product = alpha != 0 && k > 0;
    /* op(A) row i and op(B) column j as contiguous rows, so each C(i, j) is one dot */
    double complex *ap = product ? malloc((size_t)(m * k) * sizeof(double complex)) : NULL;
    double complex *bp = product ? malloc((size_t)(n * k) * sizeof(double complex)) : NULL;
    if (product && (ap == NULL || bp == NULL)) {
        free(ap);
        free(bp);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    for (int64_t b = 0; b < g->batch; b++) {
        for (int64_t i = 0; product && i < m; i++) {
            for (int64_t p = 0; p < k; p++) {
                ap[i * k + p] = op_get(g->A, b * g->sa, g->ta, i, p, g->lda, dbl, g->tf32);
            }
        }
        for (int64_t j = 0; product && j < n; j++) {
            for (int64_t p = 0; p < k; p++) {
                bp[j * k + p] = op_get(g->B, b * g->sb, g->tb, p, j, g->ldb, dbl, g->tf32);
            }
        }
        for (int64_t j = 0; j < n; j++) {
            for (int64_t i = 0; i < m; i++) {
                double complex acc = 0;
                for (int64_t p = 0; product && p < k; p++) {
                    acc += ap[i * k + p] * bp[j * k + p];
                }
                const int64_t ci = b * g->sc + i + j * g->ldc;
                /* beta == 0: C is not read, so NaN there does not propagate */
                double complex v = beta == 0 ? 0 : beta * zget(g->C, ci, dbl, false);
                zput(g->C, ci, product ? v + alpha * acc : v, dbl);
            }
        }
    }
    free(ap);
    free(bp);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
               int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
               const cuComplex *B, int ldb, const cuComplex *beta, cuComplex *C, int ldc)
{
    mt_emu_gemm g = {transa, transb, m, n, k, alpha, A,    B, beta,  C,   lda,
                     ldb,    ldc,    0, 0, 0, 1,     NULL, 0, false, true};
    return mt_emu_cublas_gemm(handle, "cublasCgemm_v2", &g, false, false);
}

cublasStatus_t
cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
               int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
               const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
               int ldc)
{
    mt_emu_gemm g = {transa, transb, m, n, k, alpha, A,    B, beta,  C,   lda,
                     ldb,    ldc,    0, 0, 0, 1,     NULL, 0, false, true};
    return mt_emu_cublas_gemm(handle, "cublasZgemm_v2", &g, false, true);
}

cublasStatus_t
cublasCgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
                          long long int strideA, const cuComplex *B, int ldb, long long int strideB,
                          const cuComplex *beta, cuComplex *C, int ldc, long long int strideC,
                          int batchCount)
{
    mt_emu_gemm g = {transa,  transb,  m,          n,    k,   alpha, A,
                     B,       beta,    C,          lda,  ldb, ldc,   strideA,
                     strideB, strideC, batchCount, NULL, 0,   false, true};
    return mt_emu_cublas_gemm(handle, "cublasCgemmStridedBatched", &g, true, false);
}

cublasStatus_t
cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, const cuDoubleComplex *alpha,
                          const cuDoubleComplex *A, int lda, long long int strideA,
                          const cuDoubleComplex *B, int ldb, long long int strideB,
                          const cuDoubleComplex *beta, cuDoubleComplex *C, int ldc,
                          long long int strideC, int batchCount)
{
    mt_emu_gemm g = {transa,  transb,  m,          n,    k,   alpha, A,
                     B,       beta,    C,          lda,  ldb, ldc,   strideA,
                     strideB, strideC, batchCount, NULL, 0,   false, true};
    return mt_emu_cublas_gemm(handle, "cublasZgemmStridedBatched", &g, true, true);
}

// x (n, inc incx), y (n, inc incy) -> *result = sum x y, or sum conj(x) y (conj_x); 0 for n <= 0
void
mt_emu_zdot_compute(int64_t n, const void *x, int incx, const void *y, int incy, void *result,
                    bool dbl, bool conj_x)
{
    double complex acc = 0;
    for (int64_t i = 0; i < n; i++) {
        double complex xi = zget(x, mt_emu_at(i, n, incx), dbl, false);
        acc += (conj_x ? conj(xi) : xi) * zget(y, mt_emu_at(i, n, incy), dbl, false);
    }
    zput(result, 0, acc, dbl);
}

// A (m, n) column-major (ld lda), x (n, or m for op T and C), y (m, or n) complex:
// y = al op(A) x + be y
void
mt_emu_zgemv_compute(cublasOperation_t op, int64_t m, int64_t n, const double *al, const void *A,
                     int lda, const void *x, int incx, const double *be, void *y, int incy,
                     bool dbl)
{
    const double complex alpha = CMPLX(al[0], al[1]), beta = CMPLX(be[0], be[1]);
    const int64_t xn = op == CUBLAS_OP_N ? n : m, yn = op == CUBLAS_OP_N ? m : n;
    for (int64_t i = 0; i < yn; i++) {
        double complex acc = 0;
        for (int64_t j = 0; alpha != 0 && j < xn; j++) {
            /* op(A) (yn, xn): element (i, j) */
            acc += op_get(A, 0, op, i, j, lda, dbl, false) *
                   zget(x, mt_emu_at(j, xn, incx), dbl, false);
        }
        const int64_t yi = mt_emu_at(i, yn, incy);
        /* beta == 0: y is not read, so NaN there does not propagate */
        double complex v = beta == 0 ? 0 : beta * zget(y, yi, dbl, false);
        zput(y, yi, alpha != 0 ? v + alpha * acc : v, dbl);
    }
}

cublasStatus_t
cublasCgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const cuComplex *alpha,
               const cuComplex *A, int lda, const cuComplex *x, int incx, const cuComplex *beta,
               cuComplex *y, int incy)
{
    return mt_emu_cublas_gemv(handle, "cublasCgemv_v2", trans, m, n, alpha, A, lda, x, incx, beta,
                              y, incy, false, true);
}

cublasStatus_t
cublasZgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
               const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
               const cuDoubleComplex *x, int incx, const cuDoubleComplex *beta, cuDoubleComplex *y,
               int incy)
{
    return mt_emu_cublas_gemv(handle, "cublasZgemv_v2", trans, m, n, alpha, A, lda, x, incx, beta,
                              y, incy, true, true);
}

cublasStatus_t
cublasCdotu_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, const cuComplex *y,
               int incy, cuComplex *result)
{
    return mt_emu_cublas_dot(handle, "cublasCdotu_v2", n, x, incx, y, incy, result, false, true,
                             false);
}

cublasStatus_t
cublasCdotc_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, const cuComplex *y,
               int incy, cuComplex *result)
{
    return mt_emu_cublas_dot(handle, "cublasCdotc_v2", n, x, incx, y, incy, result, false, true,
                             true);
}

cublasStatus_t
cublasZdotu_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx,
               const cuDoubleComplex *y, int incy, cuDoubleComplex *result)
{
    return mt_emu_cublas_dot(handle, "cublasZdotu_v2", n, x, incx, y, incy, result, true, true,
                             false);
}

cublasStatus_t
cublasZdotc_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx,
               const cuDoubleComplex *y, int incy, cuDoubleComplex *result)
{
    return mt_emu_cublas_dot(handle, "cublasZdotc_v2", n, x, incx, y, incy, result, true, true,
                             true);
}
