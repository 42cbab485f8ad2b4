/* The pooling windows as plain C without the dispatcher, so that nvcc compiles the same
 * functions for the CUDA kernels (cuda/pool.cu) as the C compiler does for the CPU loops. */
#ifndef MT_CPU_POOL_WINDOW_H
#define MT_CPU_POOL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MT_POOL_INLINE static __host__ __device__ __forceinline__
#else
#define MT_POOL_INLINE static inline
#endif

typedef struct pool_geom {
    int64_t planes, h, w, oh, ow; /* input (planes, H, W), out (planes, OH, OW) */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool count_include_pad;
    bool has_divisor;
    int64_t divisor;
} pool_geom;

/* avg_pool2d's window (oh, ow): the taps inside the image, rows [*h0, *h1) and columns
 * [*w0, *w1) (empty for a window of padding only), and the divisor: divisor_override, or the
 * window's size clipped to the padded image (count_include_pad), or the count of taps inside. */
MT_POOL_INLINE int64_t
mt_avg_pool_window(const pool_geom *g, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1,
                   int64_t *w0, int64_t *w1)
{
    int64_t a = oh * g->sh - g->ph, b = a + g->kh, c = ow * g->sw - g->pw, d = c + g->kw;
    b = b < g->h + g->ph ? b : g->h + g->ph;
    d = d < g->w + g->pw ? d : g->w + g->pw;
    const int64_t padded = (b - a) * (d - c);
    *h0 = a > 0 ? a : 0;
    *w0 = c > 0 ? c : 0;
    *h1 = b < g->h ? b : g->h;
    *w1 = d < g->w ? d : g->w;
    return g->has_divisor ? g->divisor : g->count_include_pad ? padded : (*h1 - *h0) * (*w1 - *w0);
}

/* adaptive pooling's window i of n over a dim of size len: [floor(i*len/n), ceil((i+1)*len/n)) */
MT_POOL_INLINE void
mt_adaptive_window(int64_t i, int64_t len, int64_t n, int64_t *start, int64_t *end)
{
    *start = i * len / n;
    *end = ((i + 1) * len + n - 1) / n;
}

/* The window (oh, ow) of avg_pool2d (mt_avg_pool_window, returning its divisor) or, adaptive, of
 * adaptive_avg_pool2d (rows mt_adaptive_window(oh, H, OH), columns likewise; returning 1, unused:
 * its mean divides by the height, then the width, as PyTorch's). */
MT_POOL_INLINE int64_t
mt_mean_pool_window(const pool_geom *g, bool adaptive, int64_t oh, int64_t ow, int64_t *h0,
                    int64_t *h1, int64_t *w0, int64_t *w1)
{
    if (!adaptive) {
        return mt_avg_pool_window(g, oh, ow, h0, h1, w0, w1);
    }
    mt_adaptive_window(oh, g->h, g->oh, h0, h1);
    mt_adaptive_window(ow, g->w, g->ow, w0, w1);
    return 1;
}

#endif
