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

MT_GRID_MATH(float, f32)
MT_GRID_MATH(double, f64)
/* clang-format on */

static inline MT_HD bool
mt_grid_in(int64_t y, int64_t x, int64_t h, int64_t w)
{
    return y >= 0 && y < h && x >= 0 && x < w;
}

#endif
