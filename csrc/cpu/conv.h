/* What conv2d's forward (conv.c) shares with its backward (conv_backward.c): the im2col layout
 * and BLAS's limits; the geometry (conv_geom) is the front end's plan (ops/plans.h). */
#ifndef MT_CPU_CONV_H
#define MT_CPU_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/dispatch.h"
#include "ops/front.h"

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

/* dst[0 .. OW) = row tap offset `off` reads at each output column: src[ow*sw + off], 0 for the
 * columns [0, lo) and [hi, OW) whose pixel lies in the padding (mt_conv_inside), in words of T (the
 * element's size: the bytes are copied, not converted). Plain loops, not a libc call a piece: a
 * deep layer's rows are short (7 columns at 7x7, where memcpy and memset calls were most of
 * im2col's time) and with width stride 2 a call an element was. im2col (conv.c) and the direct
 * kernel's padded copy (conv_direct.c, a phase of a strided row) both gather rows so. */
#define MT_CONV_ROW(name, T)                                                                   \
    static inline void name(const char *srcv, char *dstv, int64_t off, int64_t sw, int64_t lo, \
                            int64_t hi, int64_t ow)                                            \
    {                                                                                          \
        const T *src = (const T *)srcv + off;                                                  \
        T *dst = (T *)dstv;                                                                    \
        for (int64_t j = 0; j < lo; j++) {                                                     \
            dst[j] = 0;                                                                        \
        }                                                                                      \
        if (sw == 1) {                                                                         \
            for (int64_t j = lo; j < hi; j++) {                                                \
                dst[j] = src[j];                                                               \
            }                                                                                  \
        } else if (sw == 2) { /* a constant stride, which the compiler vectorises */           \
            for (int64_t j = lo; j < hi; j++) {                                                \
                dst[j] = src[j * 2];                                                           \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t j = lo; j < hi; j++) {                                                \
                dst[j] = src[j * sw];                                                          \
            }                                                                                  \
        }                                                                                      \
        for (int64_t j = hi; j < ow; j++) {                                                    \
            dst[j] = 0;                                                                        \
        }                                                                                      \
    }
MT_CONV_ROW(mt_conv_row4, uint32_t)
MT_CONV_ROW(mt_conv_row8, uint64_t)

/* The taps t in [*lo, *hi) of a kernel dimension of k taps that read inside the input (size
 * long) at output o: o*stride + t*dil - pad in [0, size); the others read only padding. */
static inline void
mt_conv_taps_inside(int64_t o, int64_t stride, int64_t pad, int64_t dil, int64_t size, int64_t k,
                    int64_t *lo, int64_t *hi)
{
    const int64_t first = o * stride - pad; /* where tap 0 reads */
    *lo = first >= 0 ? 0 : (-first + dil - 1) / dil;
    *hi = size - first <= 0 ? 0 : (size - first + dil - 1) / dil;
    *hi = *hi < k ? *hi : k;
    *lo = *lo < *hi ? *lo : *hi;
}

/* The gemm's view of a 3-D convolution (vol2col's col): kernel rows KD*KH, output rows OD*OH. */
conv_geom mt_cpu_conv3_flat(const conv3_geom *g);

/* Whether BLAS's 32-bit sizes hold g's products, else the error. */
mt_status mt_cpu_conv_fits_blas(const conv_geom *g);

/* The parts g's images split into among the threads for im2col + gemm (each part a thread's,
 * its gemms run by BLAS at one thread), or 1 where they do not split evenly or are too little
 * work: conv.c */
int mt_cpu_conv_images_apart(const conv_geom *g);

/* col (C*KH*KW, (oh1-oh0)*OW), rows ld elements apart, of image x (C, H, W): conv.c */
void mt_cpu_im2col_rows(const char *x, char *col, int64_t ld, const conv_geom *g, size_t item,
                        int64_t oh0, int64_t oh1);

/* x (C, H, W) += col (C*KH*KW, OH*OW) summed into the pixels its taps read (im2col's
 * adjoint), dt float32 or float64: conv_backward.c */
void mt_cpu_col2im_image(const void *col, void *x, const conv_geom *g, mt_dtype dt);

/* conv2d's gradients on channels-last operands, all dense in dt (float32 or float64), from
 * the NHWC data as it lies (conv_nhwc.c), where mt_cpu_conv_nhwc_suits(g, dt):
 * gw (OC, KH, KW, C/G) from grad_out (N, OH, OW, OC) and x (N, H, W, C);
 * gx (N, H, W, C) from grad_out and w (OC, KH, KW, C/G), through gemms and col2im (float32 with
 * unit strides goes through mt_cpu_conv_nhwc_direct instead: conv_backward.c). */
bool mt_cpu_conv_nhwc_suits(const conv_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_nhwc_weight(const char *go, const char *x, char *gw, const conv_geom *g,
                                  mt_dtype dt);
mt_status mt_cpu_conv_nhwc_input(const char *go, const char *w, char *gx, const conv_geom *g,
                                 mt_dtype dt);

/* out (N, OH, OW, OC) = conv(x (N, H, W, C), w (OC, KH, KW, C/G)) + bias (OC) or none, all
 * dense float32 (conv_nhwc.c), where mt_cpu_conv_nhwc_direct_suits(g, dt). With flip, g is the
 * convolution that gives another's input gradient from its grad_output (unit strides), and w
 * (C, KH, KW, OC/G) that other's weight, read with its taps reversed and channels swapped. */
bool mt_cpu_conv_nhwc_direct_suits(const conv_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_nhwc_direct(const float *x, const float *w, const float *bias, float *out,
                                  bool flip, const conv_geom *g);

/* conv3d's out (N, OD, OH, OW, OC) = conv(x (N, D, H, W, C), w (OC, KD, KH, KW, C/G)) + bias or
 * none, dense float32, by the same kernel (conv_nhwc.c), where mt_cpu_conv_ndhwc_direct_suits. */
bool mt_cpu_conv_ndhwc_direct_suits(const conv3_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_ndhwc_direct(const float *x, const float *w, const float *bias, float *out,
                                   const conv3_geom *g);

/* conv3d's weight gradient gw (OC, KD, KH, KW, C/G) from grad_out (N, OD, OH, OW, OC) and x
 * (N, D, H, W, C), dense float32, by conv2d's channels-last register kernel with a depth tap
 * (conv_nhwc.c), where mt_cpu_conv_ndhwc_weight_suits(g, dt). */
bool mt_cpu_conv_ndhwc_weight_suits(const conv3_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_ndhwc_weight(const float *go, const float *x, float *gw, const conv3_geom *g);

/* col (C*KD*KH*KW, (od1-od0)*OH*OW), rows ld elements apart, of volume x (C, D, H, W): for output
 * depths [od0, od1), zeros where a tap's depth slice lies in the padding (conv.c) */
void mt_cpu_vol2col(const char *x, char *col, int64_t ld, const conv3_geom *g, size_t item,
                    int64_t od0, int64_t od1);

/* depthwise conv2d (groups = C = OC) on channels-last float32 (conv_depthwise.c), where
 * mt_cpu_conv_dw_suits(g, dt), all dense; w (C, KH, KW) is the weight in either layout (the same
 * bytes): out (N, OH, OW, C) = conv(x (N, H, W, C), w) + bias (C) or none, with flip the taps
 * reversed (an input gradient as a convolution); gx (N, H, W, C) from grad_out (N, OH, OW, C);
 * gw (C, KH, KW) from grad_out and x. */
bool mt_cpu_conv_dw_suits(const conv_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_dw(const float *x, const float *w, const float *bias, float *out, bool flip,
                         const conv_geom *g);
mt_status mt_cpu_conv_dw_input(const float *go, const float *w, float *gx, const conv_geom *g);
mt_status mt_cpu_conv_dw_weight(const float *go, const float *x, float *gw, const conv_geom *g);

/* depthwise conv2d on row-major float32 (conv_depthwise.c), groups = C and OC a multiple of C
 * (mt_cpu_conv_dw_nchw_suits), x and w dense: out (N, OC, OH, OW) = conv(x (N, C, H, W),
 * w (OC, 1, KH, KW)) + bias (OC, elements bias_stride apart) or none. */
bool mt_cpu_conv_dw_nchw_suits(const conv_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_dw_nchw(const float *x, const float *w, const float *bias,
                              int64_t bias_stride, float *out, const conv_geom *g);

/* conv2d by Winograd's F(2x2, 3x3) on row-major float32 (conv_winograd.c), where
 * mt_cpu_conv_winograd_suits(g, dt) (3x3, unit strides and dilation, one group, where it pays),
 * x and w dense: out (N, OC, OH, OW) = conv(x (N, C, H, W), w (OC, C, 3, 3)) + bias (OC,
 * elements bias_stride apart) or none. With flip, g is the convolution that gives another's
 * input gradient from its grad_output, and w (C, OC, 3, 3) that other's weight, read with its
 * taps reversed and channels swapped. wt: the weight tensor w was read from (dense or not),
 * whose storage keeps w's transform for the next call while it holds; or NULL (not kept). */
bool mt_cpu_conv_winograd_suits(const conv_geom *g, mt_dtype dt);
mt_status mt_cpu_conv_winograd(const float *x, const float *w, const mt_tensor *wt,
                               const float *bias, int64_t bias_stride, float *out, bool flip,
                               const conv_geom *g);

#endif
