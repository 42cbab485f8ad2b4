/* Direct convolution for float32 with few taps per output (conv_direct.c), which conv2d and
 * conv3d (conv.c) take where it suits, and conv2d's gradients (conv_backward.c). The functions
 * take conv3d's plan; conv2d's is its depth slice g->hw with d = kd = od = sd = dd = 1, pd = 0
 * and its channels in g->c (hw.c is not read). */
#ifndef MT_CPU_CONV_DIRECT_H
#define MT_CPU_CONV_DIRECT_H

#include <stdbool.h>

#include "ops/plans.h"

/* Whether the direct kernel takes g in dtype dt: float32, few taps (or many on rows that fill
 * its vectors). */
bool mt_cpu_conv_direct_suits(const conv3_geom *g, mt_dtype dt);

/* out (N, OC, OD, OH, OW) = conv(x (N, C, D, H, W), w (OC, C/groups, KD, KH, KW)) + bias (OC)
 * or none; all dense; with cl, out is channels-last (N, OD, OH, OW, OC) instead;
 * scratch on dev. */
mt_status mt_cpu_conv_direct(const float *x, const float *w, const float *bias, float *out, bool cl,
                             const conv3_geom *g, mt_device dev);

/* Whether the direct kernel takes the weight's gradient of the convolution g (conv2d's with
 * d = kd = 1) in dtype dt: float32, rows that fill its vectors. */
bool mt_cpu_conv_direct_weight_suits(const conv3_geom *g, mt_dtype dt);

/* gw (OC, C/groups, KD, KH, KW) = the weight's gradient of the convolution g of x (N, C, D, H, W)
 * with grad_output go (N, OC, OD, OH, OW) (conv2d's: D = KD = OD = 1); all dense; scratch on
 * dev. */
mt_status mt_cpu_conv_direct_weight(const float *x, const float *go, float *gw, const conv3_geom *g,
                                    mt_device dev);

#endif
