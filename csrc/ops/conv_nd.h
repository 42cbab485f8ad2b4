/* What the convolutions composed of the 2-D convolution ops share between ops/composite_conv.c
 * (1-D, the transposed 1-D and 2-D, the gradients) and ops/composite_conv3d.c (3-D): one
 * convolution's arguments, their checks, the 2-D transposed convolution, conv3d's gradients. */
#ifndef MT_OPS_CONV_ND_H
#define MT_OPS_CONV_ND_H

#include "dispatch/dispatch.h"
#include "ops/plans.h"

/* One convolution's arguments, each as dims values. */
typedef struct mt_conv_params {
    int dims;
    int64_t stride[MT_MAX_DIMS], pad[MT_MAX_DIMS], dil[MT_MAX_DIMS], opad[MT_MAX_DIMS], groups;
} mt_conv_params;

/* conv3d's geometry (its front end's plan, and its weight gradient's) from the batched input's
 * sizes xs (N, C, D, H, W), the weight's ws, the output's spatial sizes out and the arguments:
 * a depth slice's 2-D geometry (one channel) and the depth's. */
conv3_geom mt_conv3_geom(const int64_t *xs, const int64_t *ws, const int64_t *out,
                         const mt_conv_params *c);
/* The checks of input x (dims + 1 or dims + 2 dims), weight and bias, and the output's spatial
 * sizes in out (transposed only: a plain convolution's come from conv2d's front end). */
mt_status mt_conv_check(const mt_args *a, const char *name, int dims, bool transposed,
                        mt_conv_params *c, int64_t *out);
/* PyTorch's refusal of an empty input with a batch and channels ("Only zero batch or zero
 * channel inputs are supported"), x shown as its backends see it (batched, 1-D as 1 x L). */
mt_status mt_conv_check_empty(const mt_tensor *x, int dims);
/* The checks of w's kernel sizes and of dilation dil (dims values, none negative) that PyTorch's
 * CPU kernels make (slow_conv2d/3d, or slow_conv_dilated where a dilation is not 1), in their
 * words: a zero kernel size or dilation. */
mt_status mt_conv_check_kernel(const mt_tensor *w, int dims, const int64_t *dil);
/* The gradients of input x (gi[0]) and weight w (gi[1]) asked for in need of a convolution of
 * an empty input: zeros laid out as x and as w each (PyTorch's Empty backend's zeros_like), not
 * in the convolution's memory format. */
mt_status mt_conv_empty_grads(const mt_tensor *x, const mt_tensor *w, const bool *need,
                              mt_tensor **gi);
/* The transposed convolution of x2 (a 2-D batch or plane) with w2 (in, out / groups, KH, KW):
 * conv2d's input gradient for an input of the output's size. */
mt_status mt_conv_transposed2d(mt_tensor *x2, mt_tensor *w2, const int64_t *out_hw,
                               const mt_conv_params *c2, mt_tensor **out);
/* conv3d's gradients of input (gi[0]) and weight (gi[1]) asked for in need, each through
 * differentiable ops (so twice differentiable); unbatched x and g go as a batch of one. */
mt_status mt_conv3d_backward(const mt_conv_params *c, mt_tensor *x, mt_tensor *w, mt_tensor *g,
                             const bool *need, mt_tensor **gi);
/* conv_transpose3d's gradients of input (gi[0]) and weight (gi[1]) asked for in need, from the
 * output's gradient g, through differentiable ops (conv3d and conv3d's gradients). */
mt_status mt_conv_transpose3d_backward(const mt_conv_params *c, mt_tensor *x, mt_tensor *w,
                                       mt_tensor *g, const bool *need, mt_tensor **gi);
/* The memory formats PyTorch gives a convolution's output (fmt[0]) and its input's and weight's
 * gradients (fmt[1], fmt[2]), batched x (N, C, ...) and w, as the backend it picks lays them out
 * (Convolution.cpp's _select_conv_backend and determine_backend_memory_format): on the CPU
 * oneDNN's channels-last (3d) when x or w suggests it, the slow 2-D kernels' channels-last, the
 * slow 3-D kernels' row-major; cuDNN's rule on CUDA. False, deciding nothing, for a 1-D,
 * unbatched or empty convolution. */
bool mt_conv_layouts(const mt_tensor *x, const mt_tensor *w, const mt_conv_params *c,
                     bool transposed, mt_memory_format *fmt);
/* *out = t (a convolution's result or gradient, dense) with exactly fmt's strides, size-1 dims
 * included: t itself, a view of it, or a copy, through differentiable ops. */
mt_status mt_conv_in_layout(mt_tensor *t, mt_memory_format fmt, mt_tensor **out);
/* conv2d's gradients gi[0] (input) and gi[1] (weight), those need asks for, restated in
 * mt_conv_layouts' formats; args conv2d's, x and w its input and weight. */
mt_status mt_conv2d_grads_in_layout(const mt_args *args, const mt_tensor *x, const mt_tensor *w,
                                    const bool *need, mt_tensor **gi);

#endif
