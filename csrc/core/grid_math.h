/* grid_sample's coordinate arithmetic (PyTorch's GridSampler.h and its CPU kernel's), shared
 * by the CPU kernels and any device's: a grid value in [-1, 1] becomes a source pixel index,
 * through the padding mode, with the derivative of that index with respect to the grid value.
 * Plain scalar functions; no tensor, no check. */
#ifndef MT_GRID_MATH_H
#define MT_GRID_MATH_H

#include <math.h>
#include <stdint.h>

#include "core/math.h" /* MT_HD */

/* grid_sampler's interpolation_mode and padding_mode, PyTorch's enums */
enum { MT_GRID_BILINEAR = 0, MT_GRID_NEAREST = 1, MT_GRID_BICUBIC = 2 };
enum { MT_GRID_ZEROS = 0, MT_GRID_BORDER = 1, MT_GRID_REFLECTION = 2 };

/* One call's geometry, worked out once by the front end (ops/grid_sample.c) and handed to every
 * device's kernels in the op's plan (a->plan->grid): input (N, C, H, W) and grid (N, OH, OW, 2),
 * in 3-D input (N, C, D, H, W) and grid (N, OD, OH, OW, 3) (D = OD = 1 in 2-D); out and
 * grad_output (N, C, [OD,] OH, OW). is, gs and os are the strides of input, grid and (backward)
 * grad_output, in elements, as the kernel's tensors have them (the CUDA kernels read them from
 * here; os is 0 in a forward). */
typedef struct mt_grid_geom {
    int64_t N, C, D, H, W, OD, OH, OW;
    int64_t is[5], gs[5], os[5];
    int mode, padding, align;
} mt_grid_geom;

/* The functions below, once per dtype T (suffix f32, f64): computed in T as PyTorch's CPU
 * kernel computes them, since where a grid value lands on a pixel centre (an identity affine
 * grid: every one) the rounding decides which pixels interpolate it and the grid's gradient. */
/* clang-format off */
#define MT_GRID_MATH(T, SFX)                                                                      \
    /* -1 and 1 are the centres of the corner pixels (align_corners) or their outer edges; *d:   \
     * the derivative of the result */                                                           \
    static inline MT_HD T mt_grid_unnormalize_##SFX(T c, int64_t size, bool align, T *d)         \
    {                                                                                             \
        *d = align ? (T)(size - 1) / 2 : (T)size / 2;                                            \
        return align ? (c + 1) * *d : (c + 1) * *d - (T)0.5;                                     \
    }                                                                                             \
    /* c clipped to [0, size - 1] (NaN to 0); *d: 1 inside, 0 where clipped */                   \
    static inline MT_HD T mt_grid_clip_##SFX(T c, int64_t size, T *d)                            \
    {                                                                                             \
        T hi = (T)(size - 1);                                                                     \
        *d = c > 0 && c < hi ? 1 : 0;                                                             \
        return !(c > 0) ? 0 : c >= hi ? hi : c;                                                   \
    }                                                                                             \
    /* c reflected into [twice_low / 2, twice_high / 2] by the borders, as often as it takes;    \
     * *d: +1 or -1, the direction it runs in after the reflections */                           \
    static inline MT_HD T mt_grid_reflect_##SFX(T c, int64_t twice_low, int64_t twice_high, T *d) \
    {                                                                                             \
        if (twice_low == twice_high) {                                                            \
            *d = 0;                                                                               \
            return 0;                                                                             \
        }                                                                                         \
        T lo = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2, sign = 1;                \
        c -= lo;                                                                                  \
        if (c < 0) {                                                                              \
            sign = -1;                                                                            \
            c = -c;                                                                               \
        }                                                                                         \
        T extra = (T)fmod((double)c, (double)span);                                               \
        int64_t flips = (int64_t)floor((double)(c / span));                                       \
        *d = flips % 2 == 0 ? sign : -sign;                                                       \
        return flips % 2 == 0 ? extra + lo : span - extra + lo;                                   \
    }                                                                                             \
    /* The source index of grid value c along a dim of size, and *d its derivative. Values that  \
     * are not finite go as PyTorch's CPU kernel takes them: clipped by border (NaN to 0), the   \
     * first pixel by reflection, kept by zeros (the kernels then read nothing); a finite value  \
     * past int range is -100, out of bounds (PyTorch's safe_downgrade_to_int_range) */          \
    static inline MT_HD T mt_grid_source_index_##SFX(T c, int64_t size, int padding, bool align, \
                                                    T *d)                                        \
    {                                                                                             \
        T du, dc = 1, dr = 1;                                                                     \
        c = mt_grid_unnormalize_##SFX(c, size, align, &du);                                       \
        if (padding == MT_GRID_BORDER) {                                                          \
            c = mt_grid_clip_##SFX(c, size, &dc);                                                 \
        } else if (padding == MT_GRID_REFLECTION) {                                               \
            if (isfinite(c)) {                                                                    \
                c = align ? mt_grid_reflect_##SFX(c, 0, 2 * (size - 1), &dr)                      \
                          : mt_grid_reflect_##SFX(c, -1, 2 * size - 1, &dr);                      \
            } else {                                                                              \
                c = 0;                                                                            \
                dr = 0;                                                                           \
            }                                                                                     \
            c = mt_grid_clip_##SFX(c, size, &dc);                                                 \
        } else if (!isfinite(c)) {                                                                \
            *d = du;                                                                              \
            return c;                                                                             \
        }                                                                                         \
        *d = du * dr * dc;                                                                        \
        return c > (T)INT32_MAX - 1 || c < (T)INT32_MIN ? (T)-100 : c;                            \
    }

/* The 3-D kernels' source index: PyTorch's generic CPU kernel (not the vectorised 2-D one)
 * takes values that are not finite otherwise: zeros puts them out of bounds, border clips NaN
 * and +inf to the last pixel and -inf to the first, reflection sends them all to the last
 * (*d 0 there); finite values as mt_grid_source_index */
#define MT_GRID_MATH_3D(T, SFX)                                                                   \
    static inline MT_HD T mt_grid_source_index_3d_##SFX(T c, int64_t size, int padding,         \
                                                       bool align, T *d)                         \
    {                                                                                             \
        T du, u = mt_grid_unnormalize_##SFX(c, size, align, &du);                                 \
        if (isfinite(u)) {                                                                        \
            return mt_grid_source_index_##SFX(c, size, padding, align, d);                        \
        }                                                                                         \
        *d = 0;                                                                                   \
        if (padding == MT_GRID_ZEROS) {                                                           \
            return (T)-100;                                                                       \
        }                                                                                         \
        return padding == MT_GRID_BORDER && u < 0 ? (T)0 : (T)(size - 1);                         \
    }                                                                                             \
    /* bicubic's tap at source index c (an integer value) through the padding mode, as an index \
     * into a dim of size: clipped (border), reflected and clipped (reflection), or kept (zeros,  \
     * where -1 stands for any index out of bounds) */                                         \
    static inline MT_HD int64_t mt_grid_tap_##SFX(T c, int64_t size, int padding, bool align)   \
    {                                                                                             \
        T unused;                                                                                 \
        if (padding == MT_GRID_BORDER) {                                                          \
            c = mt_grid_clip_##SFX(c, size, &unused);                                             \
        } else if (padding == MT_GRID_REFLECTION) {                                               \
            c = align ? mt_grid_reflect_##SFX(c, 0, 2 * (size - 1), &unused)                      \
                      : mt_grid_reflect_##SFX(c, -1, 2 * size - 1, &unused);                      \
            c = mt_grid_clip_##SFX(c, size, &unused);                                             \
        }                                                                                         \
        return c >= 0 && c < (T)size ? (int64_t)c : -1;                                           \
    }

MT_GRID_MATH(float, f32)
MT_GRID_MATH(double, f64)
MT_GRID_MATH_3D(float, f32)
MT_GRID_MATH_3D(double, f64)
/* clang-format on */

/* bicubic's weights of the taps floor(i) - 1 .. floor(i) + 2 at fraction t = i - floor(i) (Keys'
 * cubic convolution with a = -0.75, PyTorch's), and in dw their derivatives in t. The kernel is
 * near(s) = ((a + 2) s - (a + 3)) s^2 + 1 for |s| <= 1 and far(s) = ((a s - 5a) s + 8a) s - 4a
 * for 1 < |s| < 2, at the taps' distances t + 1, t, 1 - t and 2 - t. */
static inline MT_HD void
mt_grid_cubic_weights(double t, double w[4], double dw[4])
{
    const double a = -0.75;
    const double s[4] = {t + 1, t, 1 - t, 2 - t}, sign[4] = {1, 1, -1, -1};
    for (int k = 0; k < 4; k++) {
        const double x = s[k];
        if (k == 1 || k == 2) {
            w[k] = ((a + 2) * x - (a + 3)) * x * x + 1;
            dw[k] = sign[k] * (3 * (a + 2) * x - 2 * (a + 3)) * x;
        } else {
            w[k] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
            dw[k] = sign[k] * ((3 * a * x - 10 * a) * x + 8 * a);
        }
    }
}

/* bicubic's taps of one point: indices into the image's columns x and rows y (-1: out of bounds,
 * reading 0), their weights, the weights' derivatives in the point's fractions, and the
 * derivatives (mx, my) of the unnormalised point in the grid's values */
typedef struct mt_grid_cubic {
    int64_t x[4], y[4];
    double wx[4], wy[4], dwx[4], dwy[4], mx, my;
} mt_grid_cubic;

/* clang-format off */
/* bicubic's 4 x 4 taps around grid point (gx, gy) of an h x w image: the unnormalised point is
 * not padded, each tap is (mt_grid_tap); false where the point is not finite (its value NaN) */
#define MT_GRID_MATH_CUBIC(T, SFX)                                                                \
    static inline MT_HD bool mt_grid_cubic_taps_##SFX(T gx, T gy, int64_t h, int64_t w,          \
                                                     int padding, bool align, mt_grid_cubic *k)  \
    {                                                                                             \
        T mx, my, ix = mt_grid_unnormalize_##SFX(gx, w, align, &mx);                              \
        T iy = mt_grid_unnormalize_##SFX(gy, h, align, &my);                                      \
        if (!isfinite(ix) || !isfinite(iy)) {                                                     \
            return false;                                                                         \
        }                                                                                         \
        const T fx = floor(ix), fy = floor(iy);                                                   \
        k->mx = (double)mx;                                                                       \
        k->my = (double)my;                                                                       \
        mt_grid_cubic_weights((double)(ix - fx), k->wx, k->dwx);                                  \
        mt_grid_cubic_weights((double)(iy - fy), k->wy, k->dwy);                                  \
        for (int q = 0; q < 4; q++) {                                                             \
            k->x[q] = mt_grid_tap_##SFX(fx + (T)(q - 1), w, padding, align);                      \
            k->y[q] = mt_grid_tap_##SFX(fy + (T)(q - 1), h, padding, align);                      \
        }                                                                                         \
        return true;                                                                              \
    }

MT_GRID_MATH_CUBIC(float, f32)
MT_GRID_MATH_CUBIC(double, f64)
/* clang-format on */

static inline MT_HD bool
mt_grid_in(int64_t y, int64_t x, int64_t h, int64_t w)
{
    return y >= 0 && y < h && x >= 0 && x < w;
}

static inline MT_HD bool
mt_grid_in_3d(int64_t z, int64_t y, int64_t x, int64_t d, int64_t h, int64_t w)
{
    return z >= 0 && z < d && mt_grid_in(y, x, h, w);
}

#endif
