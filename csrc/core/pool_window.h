/* The pooling windows as plain C without the dispatcher, so that nvcc compiles the same
 * functions for the CUDA kernels (cuda/pool.cu) as the C compiler does for the CPU loops.
 * One geometry serves 2-D and 3-D pooling: a 2-D op is a 3-D one of depth 1 (d = od = kd = sd
 * = dd = 1, pd = 0), so an index h * W + w within a plane is (d * H + h) * W + w with d = 0. */
#ifndef MT_CORE_POOL_WINDOW_H
#define MT_CORE_POOL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MT_POOL_INLINE static __host__ __device__ __forceinline__
#else
#define MT_POOL_INLINE static inline
#endif

typedef struct pool_geom {
    int nd;                              /* 2 or 3 spatial dims: the output's last nd sizes */
    int64_t planes, d, h, w, od, oh, ow; /* input (planes, D, H, W), out (planes, OD, OH, OW) */
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
    bool count_include_pad;
    bool has_divisor;
    int64_t divisor;
} pool_geom;

/* The pooling a channels-last loop does (cpu/pool.c, cpu/pool_backward.c): which windows, and
 * their maximum or their mean. */
typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_ADAPTIVE_MAX, POOL_ADAPTIVE_AVG } pool_kind;

/* The 2-D geometry as a 3-D one of depth 1. */
MT_POOL_INLINE void
mt_pool_flat_depth(pool_geom *g)
{
    g->nd = 2;
    g->d = g->od = g->kd = g->sd = g->dd = 1;
    g->pd = 0;
}

/* The output's ndim sizes: the input's (in) with the last nd (g->nd) replaced by g's output
 * sizes. */
MT_POOL_INLINE void
mt_pool_out_sizes(const pool_geom *g, int ndim, const int64_t *in, int64_t *out)
{
    for (int i = 0; i < ndim; i++) {
        out[i] = in[i];
    }
    if (g->nd == 3) {
        out[ndim - 3] = g->od;
    }
    out[ndim - 2] = g->oh;
    out[ndim - 1] = g->ow;
}

/* max pooling's window along one dim of size n from output position o (kernel k, stride s,
 * padding p, dilation dil): the first tap inside the input *i0 (the first of start + j * dil
 * that is >= 0), and *i1 past the last. */
MT_POOL_INLINE void
mt_max_pool_taps(int64_t o, int64_t n, int64_t k, int64_t s, int64_t p, int64_t dil, int64_t *i0,
                 int64_t *i1)
{
    const int64_t start = o * s - p, end = start + (k - 1) * dil + 1;
    *i1 = end < n ? end : n;
    *i0 = start >= 0 ? start : start + (-start + dil - 1) / dil * dil;
}

/* max pooling's window (od, oh, ow): its taps, depths [b[0], b[1]), rows [b[2], b[3]) and
 * columns [b[4], b[5]), every g->dd, g->dh and g->dw of them. */
MT_POOL_INLINE void
mt_max_pool_window(const pool_geom *g, int64_t od, int64_t oh, int64_t ow, int64_t b[6])
{
    mt_max_pool_taps(od, g->d, g->kd, g->sd, g->pd, g->dd, &b[0], &b[1]);
    mt_max_pool_taps(oh, g->h, g->kh, g->sh, g->ph, g->dh, &b[2], &b[3]);
    mt_max_pool_taps(ow, g->w, g->kw, g->sw, g->pw, g->dw, &b[4], &b[5]);
}

/* avg pooling's window from output position o along one dim of size n (kernel k, stride s,
 * padding p): its taps inside the input [*i0, *i1), and its length clipped to the padded input. */
MT_POOL_INLINE int64_t
mt_avg_pool_span(int64_t o, int64_t n, int64_t k, int64_t s, int64_t p, int64_t *i0, int64_t *i1)
{
    int64_t a = o * s - p, b = a + k;
    b = b < n + p ? b : n + p;
    *i0 = a > 0 ? a : 0;
    *i1 = b < n ? b : n;
    return b - a;
}

/* avg pooling's window (od, oh, ow): the taps inside the input, depths [b[0], b[1]), rows
 * [b[2], b[3]) and columns [b[4], b[5]) (empty for a window of padding only), and the divisor:
 * divisor_override, or the window's size clipped to the padded input (count_include_pad), or
 * the count of taps inside. */
MT_POOL_INLINE int64_t
mt_avg_pool_window(const pool_geom *g, int64_t od, int64_t oh, int64_t ow, int64_t b[6])
{
    const int64_t padded = mt_avg_pool_span(od, g->d, g->kd, g->sd, g->pd, &b[0], &b[1]) *
                           mt_avg_pool_span(oh, g->h, g->kh, g->sh, g->ph, &b[2], &b[3]) *
                           mt_avg_pool_span(ow, g->w, g->kw, g->sw, g->pw, &b[4], &b[5]);
    return g->has_divisor         ? g->divisor
           : g->count_include_pad ? padded
                                  : (b[1] - b[0]) * (b[3] - b[2]) * (b[5] - b[4]);
}

/* Whether window b of mt_avg_pool_window has a tap inside the input. */
MT_POOL_INLINE bool
mt_pool_window_inside(const int64_t b[6])
{
    return b[0] < b[1] && b[2] < b[3] && b[4] < b[5];
}

/* adaptive pooling's window i of n over a dim of size len: [floor(i*len/n), ceil((i+1)*len/n)) */
MT_POOL_INLINE void
mt_adaptive_window(int64_t i, int64_t len, int64_t n, int64_t *start, int64_t *end)
{
    *start = i * len / n;
    *end = ((i + 1) * len + n - 1) / n;
}

/* adaptive pooling's window (od, oh, ow), as mt_avg_pool_window's b */
MT_POOL_INLINE void
mt_adaptive_pool_window(const pool_geom *g, int64_t od, int64_t oh, int64_t ow, int64_t b[6])
{
    mt_adaptive_window(od, g->d, g->od, &b[0], &b[1]);
    mt_adaptive_window(oh, g->h, g->oh, &b[2], &b[3]);
    mt_adaptive_window(ow, g->w, g->ow, &b[4], &b[5]);
}

#endif
