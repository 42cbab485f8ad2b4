/* The upsample ops and their backwards on CUDA: what the host code (ops_upsample.c) and the
 * kernels (upsample.cu) share. The geometry is core/resample_math.h's, the CPU's. */
#ifndef MT_CUDA_UPSAMPLE_H
#define MT_CUDA_UPSAMPLE_H

#include "core/dtype.h"
#include "core/resample_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward (back 0): args (mt_resample_plan r, const T *x, T *out), x (P, ID, IH, IW) and out
 * (P, OD, OH, OW) contiguous, a thread per output point. Backward (back 1): (r, const T *go,
 * T *gin), go (P, OD, OH, OW) contiguous, gin (P, ID, IH, IW) zeroed beforehand, a thread per
 * output point adding into its taps atomically. Any grid of MT_CUDA_THREADS; dt float32 or
 * float64, NULL otherwise. */
const void *mt_cuda_upsample_kernel(mt_dtype dt, int back);

#ifdef __cplusplus
}
#endif

#endif
