/* The CUDA elementwise driver (elementwise.c): promotion is the caller's, broadcasting, casts of
 * inputs, output allocation or in-place checks and the launch are its. */
#ifndef MT_CUDA_ELEMENTWISE_H
#define MT_CUDA_ELEMENTWISE_H

#include "cuda/cuda.h"
#include "cuda/kernels.h"

/* Runs op over ins (broadcast together, cast to dt; a Python number may be any of them) into a
 * new tensor of dtype dt in *out, or, when inplace, into ins[0] (*out: a new reference to it).
 * k is the op's scalar (alpha, a clamp bound); name is the op's, for "not implemented" errors. */
mt_status mt_cuda_elementwise(mt_tensor *const *ins, int nin, mt_dtype dt, mt_cuda_ew_op op,
                              mt_scalar k, const char *name, bool inplace, mt_tensor **out);
/* dst = src on one device, src broadcast to dst's shape and cast to its dtype. */
mt_status mt_cuda_copy_into(mt_tensor *dst, mt_tensor *src);
/* fill dst (CUDA) with value */
mt_status mt_cuda_fill(mt_tensor *dst, mt_scalar value);

#endif
