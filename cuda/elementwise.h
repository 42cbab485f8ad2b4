/* The CUDA elementwise driver (elementwise.c): the checks, promotion, broadcasting, casts of
 * inputs, output allocation and in-place rules are the front end's (ops/elementwise.c); the
 * launch is its own. */
#ifndef MT_CUDA_ELEMENTWISE_H
#define MT_CUDA_ELEMENTWISE_H

#include "cuda/cuda.h"
#include "cuda/kernels.h"
#include "ops/elementwise.h"

/* The kernel of ops/elementwise.def's row on dtype dt (a __global__ taking one mt_cuda_ew whose
 * inputs have the row's operand dtypes), or NULL if none: kernels.cu's table. Declared here, not
 * in kernels.h, so that the other kernel files do not depend on the rows. */
const void *mt_cuda_ew_kernel(mt_ew_id row, mt_dtype dt);
/* The CUDA device of the elementwise family (ops/elementwise.h): the front end prepares each
 * call, this runs the loop. */
extern const mt_ew_device mt_cuda_ew_device;
/* dst = src on one device, src broadcast to dst's shape and cast to its dtype. */
mt_status mt_cuda_copy_into(mt_tensor *dst, mt_tensor *src);
/* *out = a new contiguous tensor holding src (CUDA) cast to dt. */
mt_status mt_cuda_cast(mt_tensor *src, mt_dtype dt, mt_tensor **out);
/* *out = t itself (a new reference) when contiguous of dtype dt, else mt_cuda_cast's copy: what
 * a kernel that reads dense operands takes. */
mt_status mt_cuda_dense_as(mt_tensor *t, mt_dtype dt, mt_tensor **out);
/* fill dst (CUDA) with value */
mt_status mt_cuda_fill(mt_tensor *dst, mt_scalar value);

#endif
