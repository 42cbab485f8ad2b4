/* What conv2d's forward (conv.c) shares with its backward (conv_backward.c): the geometry of
 * one convolution and the im2col layout. */
#ifndef MT_CPU_CONV_H
#define MT_CPU_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/dispatch.h"

typedef struct conv_geom {
    int64_t n, c, h, w; /* input (N, C, H, W) */
    int64_t oc, kh, kw; /* weight (OC, C / groups, KH, KW) */
    int64_t oh, ow;     /* out (N, OC, OH, OW) */
    int64_t sh, sw, ph, pw, dh, dw, groups;
} conv_geom;

/* The first ow in [0, OW) at which tap offset `off` lands at or right of 0, and the first at
 * which it lands at or beyond `size`: the taps in [lo, hi) read the image. */
static inline void
mt_conv_inside(int64_t off, int64_t stride, int64_t size, int64_t ow, int64_t *lo, int64_t *hi)
{
    *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    *hi = size - off <= 0 ? 0 : (size - off + stride - 1) / stride;
    *hi = *hi < ow ? *hi : ow;
    *lo = *lo < *hi ? *lo : *hi;
}

/* The shared argument checks (PyTorch's, in its order) and geometry, also used by the CUDA
 * kernels through the C API: conv2d's from its arguments (input, weight, bias; stride, padding,
 * dilation, groups), and the backward ops' from the forward's input and weight sizes (grad_out
 * must have the forward output's shape and a float dtype). */
mt_status mt_conv2d_geom(const mt_args *a, conv_geom *g);
mt_status mt_conv_backward_geom(const mt_args *a, const mt_tensor *go, int in_ndim,
                                const int64_t *in_sizes, int w_ndim, const int64_t *w_sizes,
                                conv_geom *g);

void mt_cpu_im2col(const char *x, char *col, const conv_geom *g, size_t item, int64_t oh0,
                   int64_t oh1);

#endif
