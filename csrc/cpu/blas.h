/* The BLAS call shared by the CPU kernels that lay out their own operands (conv2d's im2col). */
#ifndef MT_CPU_BLAS_H
#define MT_CPU_BLAS_H

#include <stdbool.h>

#include "core/dtype.h"

/* c (m,n) = alpha * op(a) @ op(b) + beta * c on row-major float32 or float64 buffers, op(x) x or
 * its transpose; traced as Library::cblas_sgemm / cblas_dgemm. Sizes must fit in int. */
void mt_cpu_gemm_raw(mt_dtype dt, bool ta, bool tb, int m, int n, int k, double alpha,
                     const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc);

/* A call into OpenBLAS (BLAS or LAPACK: "cblas_sgemm", "sgesdd"), traced as Library::<name>
 * while the profiler records; every enter has its exit. */
void mt_cpu_lib_enter(const char *name);
void mt_cpu_lib_exit(void);

#endif
