/* What the emulated cuBLAS's two files share: cublas.c (the legacy API) and cublaslt.c
 * (cuBLASLt), whose products run through cublas.c's checks and loops. Internal to the
 * emulation; the backend sees only cublas_v2.h and cublasLt.h. */
#ifndef MT_EMU_CUBLAS_EMU_H
#define MT_EMU_CUBLAS_EMU_H

#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>

#include "cublas_v2.h"

/* The arguments of one (batched) gemm, column-major as cuBLAS takes them:
 * C = alpha op(A) op(B) + beta C, op(A) (m, k), op(B) (k, n), matrix i at A + i * sa (B, C
 * likewise); bias (m) added to each row of C, then relu or gelu, where an epilogue asks. */
/* The activation of an epilogue: none, relu, gelu (cuBLASLt's: approximated with tanh). */
enum { MT_EMU_ACT_NONE, MT_EMU_ACT_RELU, MT_EMU_ACT_GELU };

typedef struct mt_emu_gemm {
    cublasOperation_t ta, tb;
    int m, n, k;
    const void *alpha, *A, *B, *beta;
    void *C;
    int lda, ldb, ldc;
    long long sa, sb, sc;
    int batch;
    const void *bias; /* NULL: no bias epilogue */
    int act;          /* MT_EMU_ACT_*: CUBLASLT_EPILOGUE_RELU(_BIAS), GELU(_BIAS) */
    bool tf32;        /* float32 operands rounded to TF32 (tensor cores) */
    bool cplx;        /* complex64 or complex128 (dbl) elements and alpha and beta: (re, im) */
} mt_emu_gemm;

/* A legacy API product (cublas<t>gemm, cublas<t>gemmStridedBatched as fn) on handle h: its
 * handle's state, the argument and memory checks, then the product on its stream. */
cublasStatus_t mt_emu_cublas_gemm(cublasHandle_t h, const char *fn, const mt_emu_gemm *g,
                                  bool batched, bool dbl);
/* g's product of complex elements (g->cplx; cublas_complex.c), al and be (re, im) pairs */
cublasStatus_t mt_emu_zgemm_compute(const mt_emu_gemm *g, const double *al, const double *be,
                                    bool dbl);

/* g's argument checks, then the checks of a call on device and stream (host scalars) and the
 * product, reported to the profiler as kernel (a name that lives as long as the process). */
cublasStatus_t mt_emu_cublas_gemm_on(const char *fn, int device, cudaStream_t stream,
                                     const mt_emu_gemm *g, bool dbl, const char *kernel);

/* A level-1 dot or level-2 gemv of float or double (dbl) elements, real or complex (cplx:
 * (re, im) pairs, alpha, beta and the result too; conj_x: dotc's conjugated x): the handle's
 * state, the argument and memory checks, then the product on its stream (cublas.c). */
cublasStatus_t mt_emu_cublas_dot(cublasHandle_t h, const char *fn, int n, const void *x, int incx,
                                 const void *y, int incy, void *result, bool dbl, bool cplx,
                                 bool conj_x);
cublasStatus_t mt_emu_cublas_gemv(cublasHandle_t h, const char *fn, cublasOperation_t op, int m,
                                  int n, const void *alpha, const void *A, int lda, const void *x,
                                  int incx, const void *beta, void *y, int incy, bool dbl,
                                  bool cplx);
/* Their complex products (cublas_complex.c), once the checks passed; al and be (re, im) */
void mt_emu_zdot_compute(int64_t n, const void *x, int incx, const void *y, int incy, void *result,
                         bool dbl, bool conj_x);
void mt_emu_zgemv_compute(cublasOperation_t op, int64_t m, int64_t n, const double *al,
                          const void *A, int lda, const void *x, int incx, const double *be,
                          void *y, int incy, bool dbl);

/* The offset of element i of n, inc apart: BLAS starts a negative increment at the far end. */
static inline int64_t
mt_emu_at(int64_t i, int64_t n, int64_t inc)
{
    return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}

/* One line to stderr: "<lib> emulation: fn: message (status name)"; returns status. */
cublasStatus_t mt_emu_cublas_vcomplain(const char *lib, cublasStatus_t status, const char *fn,
                                       const char *fmt, va_list ap);

#endif
