/* What 2-D pooling's forward (pool.c) shares with its backward (pool_backward.c) and the CUDA
 * kernels: the window geometry (pool_window.h) and PyTorch's checks of it. */
#ifndef MT_CPU_POOL_H
#define MT_CPU_POOL_H

#include "cpu/pool_window.h"
#include "dispatch/dispatch.h"

/* avg_pool2d's window geometry for input x from its arguments (kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override in their slots), after PyTorch's checks. */
mt_status mt_avg_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g);
/* The same for max_pool2d (kernel_size, stride, padding, dilation, ceil_mode) and
 * adaptive_avg_pool2d (output_size); dtypes are the kernel's to check. */
mt_status mt_max_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g);
mt_status mt_adaptive_avg_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g);
/* The pooling backward ops' check: grad (..., OH, OW) must have self's (..., H, W) leading
 * dims, OH and OW when those are >= 0, and a float dtype. Fills g's planes, h, w, oh, ow. */
mt_status mt_pool_backward_geom(const mt_tensor *grad, const mt_tensor *self, int64_t oh,
                                int64_t ow, pool_geom *g);
/* max_pool2d_with_indices_backward's check: the above, and indices int64 of grad's shape. */
mt_status mt_max_pool_backward_geom(const mt_tensor *grad, const mt_tensor *self,
                                    const mt_tensor *idx, pool_geom *g);

#endif
