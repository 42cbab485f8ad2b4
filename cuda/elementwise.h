/* The CUDA elementwise driver (elementwise.c): promotion is the caller's; broadcasting, casts
 * of inputs, output allocation and in-place checks are the shared front end's
 * (core/elementwise.h); the launch is its own. */
#ifndef MT_CUDA_ELEMENTWISE_H
#define MT_CUDA_ELEMENTWISE_H

#include "cuda/cuda.h"
#include "cuda/kernels.h"

/* Runs op over ins (broadcast together, cast to dt; a Python number may be any of them) into a
 * new tensor of dtype dt in *out, or, when inplace, into ins[0] (*out: a new reference to it).
 * k is the op's scalar (alpha, a clamp bound); name is the op's, for "not implemented" errors. */
mt_status mt_cuda_elementwise(mt_tensor *const *ins, int nin, mt_dtype dt, mt_cuda_ew_op op,
                              mt_scalar k, const char *name, bool inplace, mt_tensor **out);
/* The general form: inputs computed in dt, the result of dtype `result` (bool for the
 * comparison ops of kernels.h). */
mt_status mt_cuda_elementwise_typed(mt_tensor *const *ins, int nin, mt_dtype dt, mt_dtype result,
                                    mt_cuda_ew_op op, mt_scalar k, const char *name, bool inplace,
                                    mt_tensor **out);
/* dst = src on one device, src broadcast to dst's shape and cast to its dtype. */
mt_status mt_cuda_copy_into(mt_tensor *dst, mt_tensor *src);
/* *out = a new contiguous tensor holding src (CUDA) cast to dt. */
mt_status mt_cuda_cast(mt_tensor *src, mt_dtype dt, mt_tensor **out);
/* fill dst (CUDA) with value */
mt_status mt_cuda_fill(mt_tensor *dst, mt_scalar value);

#endif
