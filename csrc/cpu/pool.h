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

/* kernel_size, stride and padding (int[] slots 0-2) into g; `op` names the op in messages. */
mt_status mt_cpu_pool_window_args(const mt_args *a, const char *op, pool_geom *g);
/* The output size of windows g over x (..., H, W), after PyTorch's checks of it. */
mt_status mt_cpu_pool_window_shape(const mt_tensor *x, bool ceil_mode, pool_geom *g);

#endif
