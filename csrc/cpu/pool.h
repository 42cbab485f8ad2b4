/* What 2-D pooling's forward (pool.c) shares with its backward (pool_backward.c): the window
 * geometry and PyTorch's checks of it. */
#ifndef MT_CPU_POOL_H
#define MT_CPU_POOL_H

#include "dispatch/dispatch.h"

typedef struct pool_geom {
    int64_t planes, h, w, oh, ow; /* input (planes, H, W), out (planes, OH, OW) */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool count_include_pad;
    bool has_divisor;
    int64_t divisor;
} pool_geom;

/* avg_pool2d's window geometry for input x from its arguments (kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override in their slots), after PyTorch's checks. */
mt_status mt_cpu_avg_pool_geom(const mt_args *a, const mt_tensor *x, pool_geom *g);

#endif
