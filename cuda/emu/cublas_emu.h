/* What the emulated cuBLAS's two files share: cublas.c (the legacy API) and cublaslt.c
 * (cuBLASLt), whose products run through cublas.c's checks and loops. Internal to the
 * emulation; the backend sees only cublas_v2.h and cublasLt.h. */
#ifndef MT_EMU_CUBLAS_EMU_H
#define MT_EMU_CUBLAS_EMU_H

#include <stdarg.h>
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

/* One line to stderr: "<lib> emulation: fn: message (status name)"; returns status. */
cublasStatus_t mt_emu_cublas_vcomplain(const char *lib, cublasStatus_t status, const char *fn,
                                       const char *fmt, va_list ap);

#endif
