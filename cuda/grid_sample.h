/* grid_sampler_2d and its backward on CUDA: what the host code (ops_grid.c) and the kernels
 * (grid_sample.cu) share. The arithmetic of a grid value is core/grid_math.h's, the CPU's. */
#ifndef MT_CUDA_GRID_SAMPLE_H
#define MT_CUDA_GRID_SAMPLE_H

#include <stdint.h>

#include "core/dtype.h"
#include "core/grid_math.h" /* mt_grid_geom */

#ifdef __cplusplus
extern "C" {
#endif

/* Forward (back 0): args (mt_grid_geom g, const T *in, const T *grid, T *out); backward (back
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
