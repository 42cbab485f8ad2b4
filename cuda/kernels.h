/* What the host code (C) and the kernels (.cu) share: the parameter block of an elementwise
 * launch, the op ids, and the kernel tables the .cu files export. */
#ifndef MT_CUDA_KERNELS_H
#define MT_CUDA_KERNELS_H

#include <stdint.h>

#include "core/dtype.h"
/* core/tensor.h is C only (stdatomic.h); its MT_MAX_DIMS is checked equal in elementwise.c */
#define MT_CUDA_MAX_DIMS 16

#ifdef __cplusplus
extern "C" {
#endif

#define MT_CUDA_THREADS 256 /* threads per block of the elementwise kernels */
#define MT_CUDA_MAX_OPERANDS 3 /* out and up to two inputs */

/* A value stored both ways, so a kernel of any dtype reads it without a host-side switch. */
typedef struct mt_cuda_scalar {
    double f;
    int64_t i;
} mt_cuda_scalar;

/* One elementwise launch, passed by value. Operand 0 is the output. Inputs already have the
 * kernel's dtype; an input whose data is NULL is a Python number held in scalar[k]. Sizes and
 * strides (in elements) are after broadcasting and dimension coalescing; contig says every
 * operand with data is contiguous, so element i sits at offset i everywhere. */
typedef struct mt_cuda_ew {
    int ndim, nin, contig;
    int64_t n;
    int64_t sizes[MT_CUDA_MAX_DIMS];
    int64_t strides[MT_CUDA_MAX_OPERANDS][MT_CUDA_MAX_DIMS];
    char *data[MT_CUDA_MAX_OPERANDS];
    mt_cuda_scalar scalar[MT_CUDA_MAX_OPERANDS];
    mt_cuda_scalar k; /* the op's own scalar: alpha of add/sub, the bound of clamp_min */
} mt_cuda_ew;

typedef enum mt_cuda_ew_op {
    MT_CUDA_FILL, /* out = k; no inputs */
    MT_CUDA_ADD,  /* out = x + k * y */
    MT_CUDA_SUB,  /* out = x - k * y */
    MT_CUDA_MUL,
    MT_CUDA_DIV,
    MT_CUDA_NEG,
    MT_CUDA_CLAMP_MIN, /* out = max(x, k), NaN-propagating (relu is clamp_min(x, 0)) */
    MT_CUDA_CLAMP_MAX,
    MT_CUDA_EXP,
    MT_CUDA_LOG,
    MT_CUDA_SQRT,
    MT_CUDA_RSQRT,
    MT_CUDA_SIN,
    MT_CUDA_COS,
    MT_CUDA_TANH,
    MT_CUDA_SIGMOID,
    MT_CUDA_ABS,
    MT_CUDA_RECIPROCAL,
    MT_CUDA_NUM_EW_OPS
} mt_cuda_ew_op;

/* The kernel for op on dtype dt (a __global__ taking one mt_cuda_ew), or NULL if none. */
const void *mt_cuda_ew_kernel(mt_cuda_ew_op op, mt_dtype dt);
/* The kernel that copies operand 1 (dtype from) into operand 0 (dtype to), casting. */
const void *mt_cuda_cast_kernel(mt_dtype to, mt_dtype from);
/* Sum of a contiguous x (n elements of dtype dt) into acc[blockIdx.x] per block: args
 * (const void *x, int64_t n, void *acc); the accumulator dtype is mt_cuda_sum_acc(dt). */
const void *mt_cuda_sum_kernel(mt_dtype dt);
mt_dtype mt_cuda_sum_acc(mt_dtype dt);
#define MT_CUDA_SUM_THREADS 512
#define MT_CUDA_SUM_BLOCKS 1024 /* most partial sums of the first pass */

#ifdef __cplusplus
}
#endif

#endif
