/* The upsample ops' geometry (F.interpolate's nearest, nearest-exact, linear, bilinear,
 * trilinear and bicubic), shared by the front end, the CPU kernels and the CUDA kernels: where
 * output position o of a dim resized from `in` to `out` reads its input, and with what weights,
 * by PyTorch's rules (UpSample.h: the scale from align_corners or the given scale factor, the
 * half-pixel source index, its multiply fused into its subtract as PyTorch's compiler fuses
 * it, its clamps, nearest's float arithmetic whatever the dtype). The resize is separable: a point's value is the sum over its taps' products of weights. Plain C,
 * no tensor, no check. */
#ifndef MT_RESAMPLE_MATH_H
#define MT_RESAMPLE_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/grid_math.h" /* mt_grid_cubic_weights */
#include "core/math.h"      /* MT_HD */

/* the modes; taps per dim: 1, 1, 2, 4 */
enum { MT_RESAMPLE_NEAREST, MT_RESAMPLE_NEAREST_EXACT, MT_RESAMPLE_LINEAR, MT_RESAMPLE_CUBIC };
#define MT_RESAMPLE_MAX_TAPS 4

/* One call of an upsample op or its backward: planes (N * C) of spatial sizes in[] resized to
 * out[], nd dims (the unused leading entries are 1, so every kernel loops over three dims). */
typedef struct mt_resample_plan {
    int nd, mode;
    bool align;
    int64_t planes;
    int64_t in[3], out[3];
    double scales[3]; /* the scale factors given, <= 0 where None (then in / out) */
} mt_resample_plan;

static inline MT_HD int
mt_resample_taps_of(int mode)
{
    return mode == MT_RESAMPLE_CUBIC ? 4 : mode == MT_RESAMPLE_LINEAR ? 2 : 1;
}

/* nearest's source index (float arithmetic for every dtype, as PyTorch's); exact: the pixel
 * whose centre is nearest, else floor(o * scale). PyTorch's backward (only) takes the legacy
 * shortcuts, a copy for out == in and halving for out == 2 * in, even where a given scale
 * made its forward pick otherwise: `legacy` asks for them. */
static inline MT_HD int64_t
mt_resample_nearest(bool exact, bool legacy, int64_t in, int64_t out, double given, int64_t o)
{
    const float scale = given > 0 ? (float)(1.0 / given) : (float)in / (float)out;
    int64_t j;
    if (exact) {
        j = (int64_t)floorf((float)(((double)o + 0.5) * (double)scale));
    } else if (legacy && out == in) {
        j = o;
    } else if (legacy && out == 2 * in) {
        j = o >> 1;
    } else {
        j = (int64_t)floorf((float)o * scale);
    }
    return j < in - 1 ? j : in - 1;
}

/* The taps of output position o: their input indices idx[k] and weights w[k] (k < taps), in T,
 * the type PyTorch computes a dtype's weights in; back: for the backward (nearest's legacy). Linear: the two neighbours of the source
 * index (clamped to 0 unless align_corners, the second the first at the last pixel), a copy
 * when the size is kept; cubic: the four around it, clamped into the dim. */
/* clang-format off */
#define MT_RESAMPLE_MATH(T, SFX, FLOOR, FMA)                                                        \
    static inline MT_HD void mt_resample_taps_##SFX(int mode, bool align, bool back, int64_t in,   \
                                                    int64_t out, double given, int64_t o,        \
                                                    int64_t *idx, T *w)                          \
    {                                                                                             \
        if (mode == MT_RESAMPLE_NEAREST || mode == MT_RESAMPLE_NEAREST_EXACT) {                  \
            idx[0] = mt_resample_nearest(mode == MT_RESAMPLE_NEAREST_EXACT, back, in, out, given, o); \
            w[0] = 1;                                                                             \
            return;                                                                               \
        }                                                                                         \
        if (mode == MT_RESAMPLE_LINEAR && in == out) {                                           \
            idx[0] = idx[1] = o;                                                                  \
            w[0] = 1;                                                                             \
            w[1] = 0;                                                                             \
            return;                                                                               \
        }                                                                                         \
        const T scale = align ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0)                    \
                              : (given > 0 ? (T)(1.0 / given) : (T)in / (T)out);                 \
        T src = align ? scale * (T)o : FMA(scale, (T)o + (T)0.5, (T)-0.5);                     \
        if (mode == MT_RESAMPLE_LINEAR) {                                                         \
            src = src < 0 ? (T)0 : src;                                                           \
            int64_t i0 = (int64_t)FLOOR(src);                                                     \
            i0 = i0 < in - 1 ? i0 : in - 1;                                                       \
            T t = src - (T)i0;                                                                    \
            t = t < 0 ? (T)0 : t > 1 ? (T)1 : t;                                                  \
            idx[0] = i0;                                                                          \
            idx[1] = i0 < in - 1 ? i0 + 1 : i0;                                                   \
            w[0] = (T)1 - t;                                                                      \
            w[1] = t;                                                                             \
            return;                                                                               \
        }                                                                                         \
        const T f = FLOOR(src);                                                                   \
        double c[4], unused[4];                                                                   \
        mt_grid_cubic_weights((double)(src - f), c, unused);                                      \
        for (int k = 0; k < 4; k++) {                                                             \
            const int64_t j = (int64_t)f - 1 + k;                                                 \
            idx[k] = j < 0 ? 0 : j > in - 1 ? in - 1 : j;                                         \
            w[k] = (T)c[k];                                                                       \
        }                                                                                         \
    }
MT_RESAMPLE_MATH(float, f32, floorf, fmaf)
MT_RESAMPLE_MATH(double, f64, floor, fma)
/* clang-format on */

#endif
