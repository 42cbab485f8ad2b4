/* grid_sampler_2d and its backward on CUDA: what the host code (ops_grid.c) and the kernels
 * (grid_sample.cu) share. The arithmetic of a grid value is core/grid_math.h's, the CPU's. */
#ifndef MT_CUDA_GRID_SAMPLE_H
#define MT_CUDA_GRID_SAMPLE_H

#include <stdint.h>

#include "core/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One call: input (N, C, H, W) and grid (N, OH, OW, 2) read through their strides (is, gs, in
 * elements); grad_output (N, C, OH, OW) through os (backward). The outputs are contiguous:
 * out (N, C, OH, OW); gin (N, C, H, W) and ggrid (N, OH, OW, 2), zeroed beforehand. In 3-D
 * the sizes D and OD lead H and OH (input (N, C, D, H, W), grid (N, OD, OH, OW, 3)) and the
 * strides have five entries; D = OD = 1 in 2-D. */
typedef struct mt_cuda_grid {
    int64_t N, C, D, H, W, OD, OH, OW;
    int64_t is[5], gs[5], os[5];
    int mode, padding, align;
} mt_cuda_grid;

/* Forward (back 0): args (mt_cuda_grid g, const T *in, const T *grid, T *out); backward (back
 * 1): (g, const T *go, const T *in, const T *grid, T *gin, T *ggrid). A thread per output point
 * (n, oh, ow), looping over the channels; any grid of MT_CUDA_THREADS. dt float32 or float64,
 * NULL otherwise. */
const void *mt_cuda_grid_kernel(mt_dtype dt, int back);

/* The 3-D kernels (trilinear and nearest), with the same arguments: a thread per output point
 * (n, od, oh, ow). */
const void *mt_cuda_grid3d_kernel(mt_dtype dt, int back);

#ifdef __cplusplus
}
#endif

#endif
