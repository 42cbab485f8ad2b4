/* conv2d on channels-last (NHWC) float tensors on the CPU, reading them as they lie: no copy of
 * the input or of grad_output into NCHW first (conv.c and conv_backward.c choose these paths
 * where the front end states a channels-last result).
 *
 * The rows are the output pixels p = (n, oh, ow), P = N*OH*OW of them; in NHWC each is a run of
 * channels. Three parts:
 * - gemms over the rows (float32 and float64, any geometry). col (P, G, KH, KW, C/G), NHWC's
 *   im2col, holds in row p, for each group gi and tap (kh, kw), the C/G channels of group gi at
 *   the input pixel the tap reads from p (zeros in the padding). With K = KH*KW*C/G, OG = OC/G:
 *     grad_w[gi] (OG, K) += grad_out[:, gi] (P, OG)^T @ col[:, gi] (P, K)
 *     dcol[:, gi] (P, K)  = grad_out[:, gi] (P, OG) @ w[gi] (OG, K)
 *     grad_in (N, H, W, C) += each tap's C/G channels of dcol at the pixel it read (col2im)
 *   (OC, K) in (kh, kw, c) order is the channels-last weight's own layout. P goes in blocks of
 *   whole output rows (n, oh) whose col stays in cache; a 1x1 kernel with stride 1 and no
 *   padding needs no col (the input's rows are their own).
 * - the weight's gradient in float32 summed in registers, a tap at a time (wgrad_nhwc_item):
 *   OpenBLAS's AVX2 sgemm ran the gemm above at about half the rate of AVX-512 code.
 * - the convolution in float32 summed in registers (conv_nhwc_item): conv2d's forward, and its
 *   input gradient with unit strides (the convolution of grad_output with the flipped weight),
 *   reading a zero-padded NHWC copy of the input where it has padding.
 * The checks and the geometry are the front end's (ops/conv_checks.c). */
#include <limits.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/conv.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"

/* Most bytes of one block of col (or dcol): the gemm and col2im then find it in L2 */
#define NHWC_COL_BYTES (1 << 19)
/* Fewest input and output channels of a group for these kernels: the register kernels' vectors
 * hold 16 channels */
#define NHWC_MIN_CHANNELS 16

/* The sizes both gradients use, and the block of output rows one col holds. */
typedef struct nhwc_plan {
    const conv_geom *g;
    mt_dtype dt;
    size_t item;
    int64_t cg, og, taps, k; /* k: KH*KW*C/G, a group's width in col */
    int64_t rows;            /* output rows (n, oh) of a block */
    bool own_col;            /* false: a 1x1 kernel, stride 1, no padding (col is the input) */
} nhwc_plan;

static nhwc_plan
plan_of(const conv_geom *g, mt_dtype dt)
{
    nhwc_plan p = {.g = g, .dt = dt, .item = mt_dtype_size(dt)};
    p.cg = g->c / g->groups;
    p.og = g->oc / g->groups;
    p.taps = g->kh * g->kw;
    p.k = p.taps * p.cg;
    p.own_col = !(p.taps == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0);
    const int64_t row_bytes = g->ow * g->groups * p.k * (int64_t)p.item;
    /* without a col, the gemm reads every row at once (as many as BLAS's int counts) */
    p.rows = p.own_col ? NHWC_COL_BYTES / (row_bytes + 1) : INT_MAX / (g->ow + 1);
    p.rows = p.rows < 1 ? 1 : p.rows > g->n * g->oh ? g->n * g->oh : p.rows;
    return p;
}

bool
mt_cpu_conv_nhwc_suits(const conv_geom *g, mt_dtype dt)
{
    /* groups of few channels (depthwise: one) make many tiny gemms, slower than the NCHW
     * kernels even after a copy into NCHW (14-21x for (8, 32, 56, 56) with groups = 32) */
    const bool wide = g->c / g->groups >= NHWC_MIN_CHANNELS &&
                      g->oc / g->groups >= NHWC_MIN_CHANNELS;
    /* col's rows (every group's taps), grad_output's and a block's pixels are BLAS's ints */
    return (dt == MT_FLOAT32 || dt == MT_FLOAT64) && wide && g->c * g->kh * g->kw <= INT_MAX &&
           g->oc <= INT_MAX && g->oh * g->ow <= INT_MAX;
}

// x (N, H, W, C) -> col (pixels of output rows [r0, r1) of (N*OH), G, KH, KW, C/G)
static void
im2col_nhwc(const char *x, char *col, const nhwc_plan *p, int64_t r0, int64_t r1)
{
    const conv_geom *g = p->g;
    const size_t run = (size_t)p->cg * p->item;
    const int64_t width = g->groups * p->k, pix = (r1 - r0) * g->ow;
    const int parts = mt_parallel_parts(pix * width, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t q = 0; q < pix; q++) {
        const int64_t r = r0 + q / g->ow, ow = q % g->ow, n = r / g->oh, oh = r % g->oh;
        char *dst = col + q * width * (int64_t)p->item;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            for (int64_t i = 0; i < g->kh; i++) {
                const int64_t ih = oh * g->sh + i * g->dh - g->ph;
                for (int64_t j = 0; j < g->kw; j++, dst += run) {
                    const int64_t iw = ow * g->sw + j * g->dw - g->pw;
                    if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) {
                        memset(dst, 0, run);
                        continue;
                    }
                    memcpy(dst, x + (((n * g->h + ih) * g->w + iw) * g->c + gi * p->cg) * p->item,
                           run);
                }
            }
        }
    }
}

// xrow (W, C), the input row kernel row i of an output row read, += that row's dcol (OW, G, KH,
// KW, C/G) at src: each tap's channels added to the pixel it read
#define ADD_ROW(name, T)                                                             \
    static void name(const T *src, T *xrow, const nhwc_plan *p, int64_t i)           \
    {                                                                                \
        const conv_geom *g = p->g;                                                   \
        for (int64_t ow = 0; ow < g->ow; ow++, src += g->groups * p->k) {            \
            for (int64_t j = 0; j < g->kw; j++) {                                    \
                const int64_t iw = ow * g->sw + j * g->dw - g->pw;                   \
                for (int64_t gi = 0; gi < g->groups && iw >= 0 && iw < g->w; gi++) { \
                    T *dst = xrow + iw * g->c + gi * p->cg;                          \
                    const T *s = src + gi * p->k + (i * g->kw + j) * p->cg;          \
                    for (int64_t c = 0; c < p->cg; c++) {                            \
                        dst[c] += s[c];                                              \
                    }                                                                \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }
ADD_ROW(add_row_f32, float)
ADD_ROW(add_row_f64, double)

// x (N, H, W, C) += dcol (pixels of output rows [r0, r1), G, KH, KW, C/G): im2col_nhwc's
// adjoint. With the kernel row i fixed, distinct output rows reach distinct input rows, so the
// threads split the rows kernel row by kernel row and never meet.
static void
col2im_nhwc(const char *dcol, char *x, const nhwc_plan *p, int64_t r0, int64_t r1)
{
    const conv_geom *g = p->g;
    const int64_t item = (int64_t)p->item, width = g->groups * p->k;
    const int parts = mt_parallel_parts((r1 - r0) * g->ow * width, 32768);
#pragma omp parallel num_threads(parts)
    for (int64_t i = 0; i < g->kh; i++) {
#pragma omp for schedule(static)
        for (int64_t r = r0; r < r1; r++) {
            const int64_t n = r / g->oh, ih = r % g->oh * g->sh + i * g->dh - g->ph;
            if (ih < 0 || ih >= g->h) {
                continue;
            }
            const char *src = dcol + (r - r0) * g->ow * width * item;
            char *xrow = x + (n * g->h + ih) * g->w * g->c * item;
            if (p->dt == MT_FLOAT32) {
                add_row_f32((const float *)src, (float *)xrow, p, i);
            } else {
                add_row_f64((const double *)src, (double *)xrow, p, i);
            }
        }
    }
}

/* ---- the weight's gradient, float32, summed in registers ----
 *
 *     gw[o, kh, kw, c] = sum over (n, oh, ow) of go[n, oh, ow, o] * x[n, ih, iw, c],
 *     ih = oh*sh + kh*dh - ph, iw = ow*sw + kw*dw - pw (pixels outside the input add nothing)
 *
 * (conv3d's NDHWC alike, with a depth tap kd reading x[n, od*sd + kd*dd - pd, ...]; the rows
 * are then (n, od, oh), and conv2d's plan is the depth slice of one with d = kd = od = 1).
 * In NHWC both factors are runs of channels: a work item holds wo output channels by wv vectors
 * of DW input channels in wo*wv vectors of sums, one tap, and at each pixel loads wv vectors of x
 * and broadcasts wo values of go into wo*wv fused multiply-adds (the outer product that a gemm
 * over the pixels would do, with no col). wv is 2 (8 channels by 32) where a group has more than
 * DW input channels, else 1 (16 by 16, or 8 by 16 for 8 output channels or fewer): two vectors
 * of 16 channels would hold the same ones twice. The rows go a chunk at a time, so that the
 * chunk's go and x, which every item of it reads, stay in L2. */

#define DW 16 /* floats of a vector: one AVX-512 register (as conv_direct.c's) */
#define WACC 16 /* vectors of sums of an item: wo * wv (8 x 2, 16 x 1 or 8 x 1) */
/* Most bytes of go and x rows of one chunk of output rows: within L2 */
#define WG_CHUNK_BYTES (512 << 10)

typedef float vf __attribute__((vector_size(DW * sizeof(float))));
/* fused multiply-adds under -std=c11, as conv_direct.c's FUSED says */
#define FUSED __attribute__((optimize("fp-contract=fast")))

typedef struct wgrad_nhwc {
    const conv3_geom *g3;
    const conv_geom *g; /* g3's depth slice (its channels are c) */
    const float *x, *go;
    float *gw;
    int64_t c, cg, og, taps, cblocks, oblocks;
    int wo, wv;
    int64_t r0, r1; /* the chunk's output rows (n, od, oh) */
} wgrad_nhwc;

static bool
direct_weight_suits(const conv_geom *g, int64_t c, mt_dtype dt)
{
    /* channels fill the vectors (a last partial vector overlaps the one before it) */
    return dt == MT_FLOAT32 && c / g->groups >= DW && g->oc / g->groups > 0;
}

/* Work item `item`: group gi, block ob of wo output channels (those past the group's repeat its
 * first, dropped), block cb of wv*DW input channels, tap t = (kd, kh, kw); its sums added into
 * gw. A vector that would run past the group's channels starts DW before their end instead, and
 * stores only the lanes no vector before it holds. wo and wv are constants where it is
 * inlined. */
static inline __attribute__((always_inline)) FUSED void
wgrad_sums(const wgrad_nhwc *p, int64_t item, int wo, int wv)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const int64_t t = item % p->taps, cb = item / p->taps % p->cblocks;
    const int64_t ob = item / (p->taps * p->cblocks) % p->oblocks;
    const int64_t gi = item / (p->taps * p->cblocks * p->oblocks);
    const int64_t kw = t % g->kw, kh = t / g->kw % g->kh, kd = t / (g->kw * g->kh);
    const int64_t c0 = cb * wv * DW, o0 = ob * wo;
    const int64_t noc = p->og - o0 < wo ? p->og - o0 : wo;
    int64_t vs[2], oo[WACC], lo, hi;
    for (int j = 0; j < wv; j++) {
        vs[j] = c0 + DW * j < p->cg - DW ? c0 + DW * j : p->cg - DW;
    }
    for (int o = 0; o < wo; o++) {
        oo[o] = gi * p->og + o0 + (o < noc ? o : 0);
    }
    mt_conv_inside(kw * g->dw - g->pw, g->sw, g->w, g->ow, &lo, &hi);
    vf acc[WACC] = {{0}};
    for (int64_t r = p->r0; r < p->r1; r++) {
        const int64_t v = r / g->oh, n = v / g3->od;
        const int64_t id = v % g3->od * g3->sd + kd * g3->dd - g3->pd;
        const int64_t ih = r % g->oh * g->sh + kh * g->dh - g->ph;
        if (id < 0 || id >= g3->d || ih < 0 || ih >= g->h) {
            continue;
        }
        const float *xrow = p->x + ((n * g3->d + id) * g->h + ih) * g->w * p->c + gi * p->cg;
        for (int64_t ow = lo; ow < hi; ow++) {
            const float *gp = p->go + (r * g->ow + ow) * g->oc;
            const float *xp = xrow + (ow * g->sw + kw * g->dw - g->pw) * p->c;
            vf xv[2];
            for (int j = 0; j < wv; j++) {
                memcpy(&xv[j], xp + vs[j], sizeof(vf));
            }
            for (int o = 0; o < wo; o++) {
                const float b = gp[oo[o]];
                for (int j = 0; j < wv; j++) {
                    acc[o * wv + j] += b * xv[j];
                }
            }
        }
    }
    float sums[WACC][DW]; /* out of the registers as in conv_nhwc_item */
    for (int v = 0; v < wo * wv; v++) {
        memcpy(sums[v], &acc[v], sizeof(vf));
    }
    for (int64_t o = 0; o < noc; o++) {
        float *dst = p->gw + ((gi * p->og + o0 + o) * p->taps + t) * p->cg;
        for (int j = 0; j < wv; j++) {
            for (int l = 0; l < DW; l++) {
                if (vs[j] + l >= c0 + DW * j) {
                    dst[vs[j] + l] += sums[o * wv + j][l];
                }
            }
        }
    }
}

MT_SIMD_CLONES FUSED static void
wgrad_nhwc_item(const wgrad_nhwc *p, int64_t item)
{
    if (p->wv == 2) {
        wgrad_sums(p, item, 8, 2);
    } else if (p->wo == 16) {
        wgrad_sums(p, item, 16, 1);
    } else {
        wgrad_sums(p, item, 8, 1);
    }
}

/* gw (OC, KD, KH, KW, C/G) = the weight's gradient by wgrad_nhwc_item, chunk by chunk of output
 * rows; go (N, OD, OH, OW, OC), x (N, D, H, W, C) */
static void
weight_direct_nhwc(const float *go, const float *x, float *gw, const conv3_geom *g3)
{
    const conv_geom *g = &g3->hw;
    wgrad_nhwc p = {.g3 = g3, .g = g, .x = x, .go = go, .gw = gw, .c = g3->c};
    p.cg = g3->c / g->groups;
    p.og = g->oc / g->groups;
    p.taps = g3->kd * g->kh * g->kw;
    p.wv = p.cg > DW ? 2 : 1;
    p.wo = p.wv == 1 && p.og > WACC / 2 ? WACC : WACC / 2;
    p.cblocks = (p.cg + p.wv * DW - 1) / (p.wv * DW);
    p.oblocks = (p.og + p.wo - 1) / p.wo;
    const int64_t row_bytes = (g->oc + g->sh * p.c) * g->ow * (int64_t)sizeof(float) + 1;
    int64_t chunk = WG_CHUNK_BYTES / row_bytes;
    chunk = chunk < 1 ? 1 : chunk;
    const int64_t items = g->groups * p.oblocks * p.cblocks * p.taps;
    const int64_t nrows = g->n * g3->od * g->oh;
    memset(gw, 0, (size_t)(g->oc * p.taps * p.cg) * sizeof(float));
    for (p.r0 = 0; p.r0 < nrows; p.r0 += chunk) {
        p.r1 = p.r0 + chunk < nrows ? p.r0 + chunk : nrows;
        const int parts = mt_parallel_parts(items * (p.r1 - p.r0) * g->ow * WACC * DW, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t i = 0; i < items; i++) {
            wgrad_nhwc_item(&p, i);
        }
    }
}

/* ---- the convolution itself, float32, NHWC (or NDHWC) in and out ----
 *
 *     out[n, od, oh, ow, o] = bias[o] + sum over taps t = (kd, kh, kw) and channels c of o's
 *         group gi of w[o, kd, kh, kw, c] *
 *         x[n, od*sd + kd*dd - pd, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw, gi*C/G + c]
 *
 * (conv2d's is the depth slice: d = kd = od = 1.) The input is read from a zero-padded copy
 * xpad (N, DP, HP, WP, C) (pad_nhwc; none where there is no padding), so every tap of every
 * pixel reads memory: a pixel's taps lie at the same offsets off[r] from its first, with no edge
 * case. The taps go in runs of adjacent values: with one group and dw = 1 a kernel row (kd, kh)
 * is one run of KW*C (a first layer's 3 channels make a run of 9, not three of 3), otherwise
 * each tap is a run of C/G.
 * The simple loop (pixel_sums) sums one pixel's channels one at a time; it does the few pixels
 * past the last whole block. The fast one (item_sums) sums a block of xp pixels by xv vectors of
 * DW output channels in xp*xv registers: at each value of a run it loads xv vectors of weights
 * (packed: a tap's and channel's output channels side by side) and broadcasts the value each of
 * its xp pixels reads into xp*xv fused multiply-adds. xv is 4 (64 channels, 6 pixels: 10 loads
 * for 24 multiply-adds) where a group has more than 32 output channels, 2 (32 channels, 8
 * pixels) where it has 17 to 32, else 1 (16 channels, 8 pixels).
 * conv2d's input gradient with unit strides runs here as the convolution of grad_output with the
 * flipped weight (conv_backward.c). */

#define XACC 24 /* most vectors of sums of a block: xp * xv */
/* pixels of a block with one vector, and with two: 8 each (on a channels-last (8, 64, 56, 56)
 * 3x3 with 4 groups 8.1-8.2 ms where 12 took 8.6-9.0, with 2 groups 11.3-11.6 where 12 took
 * 11.9-12.2, one thread; with 24 their pointers outnumber the registers) */
#define XP1 8
#define XP2 8
/* blocks of a work item: where a block's pixels are found is stepped from the one before (the
 * divisions that find it from scratch cost a tenth of a block of 27 taps) */
#define ITEM_BLOCKS 8
/* Most bytes of the padded copy of the input: images go through a chunk at a time */
#define NHWC_PAD_BYTES (8 << 20)

typedef struct conv_nhwc {
    const conv3_geom *g3;
    const conv_geom *g;               /* g3's depth slice (its channels are g3->c) */
    const float *x, *wp, *biasp;      /* x: the chunk's xpad; biasp (G, ogp): bias or 0 */
    const int64_t *off;               /* off[r]: run r's first value from a pixel's first tap's */
    float *out;                       /* the chunk's first output */
    int64_t c, cg, og, ogp, oblocks;  /* ogp: og rounded up to xv*DW */
    int64_t dp, hp, wpd;              /* xpad's depth, height and width */
    int64_t runs, run, kwr;           /* runs of a group's kernel, values of a run, runs of a
                                       * kernel row (1 or KW) */
    int64_t blocks;                   /* whole blocks of xp pixels in the chunk */
    int xv, xp;
} conv_nhwc;

/* Where pixel px (n, od, oh, ow) of the chunk reads its tap (0, 0, 0) in xpad. */
static inline int64_t
pixel_at(const conv_nhwc *p, int64_t px)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const int64_t ow = px % g->ow, r = px / g->ow, oh = r % g->oh, v = r / g->oh;
    const int64_t od = v % g3->od, n = v / g3->od;
    return (((n * p->dp + od * g3->sd) * p->hp + oh * g->sh) * p->wpd + ow * g->sw) * p->c;
}

/* The kernel rows that read the input at pixel px's output row: kd in [in[0], in[1]), kh in
 * [in[2], in[3]); the others read only the padding (zeros), and are skipped (8% of the
 * multiply-adds of a 3x3x3 kernel on 16x32x32 with padding 1). */
static inline void
rows_inside(const conv_nhwc *p, int64_t px, int64_t *in)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const int64_t r = px / g->ow, oh = r % g->oh, od = r / g->oh % g3->od;
    mt_conv_taps_inside(od, g3->sd, g3->pd, g3->dd, g3->d, g3->kd, &in[0], &in[1]);
    mt_conv_taps_inside(oh, g->sh, g->ph, g->dh, g->h, g->kh, &in[2], &in[3]);
}

/* out[px] (OC) = bias + the sums of pixel px of the chunk, channel by channel: the simple loop.
 * The packed weights wp (G, runs, run, ogp) hold w[o, tap, c] at [gi][r][c of the run][o % og]. */
static void
pixel_sums(const conv_nhwc *p, int64_t px)
{
    const float *xq = p->x + pixel_at(p, px);
    for (int64_t o = 0; o < p->g->oc; o++) {
        const int64_t gi = o / p->og;
        const float *wo = p->wp + gi * p->runs * p->run * p->ogp + o % p->og;
        float s = p->biasp[gi * p->ogp + o % p->og];
        for (int64_t r = 0; r < p->runs; r++) {
            for (int64_t c = 0; c < p->run; c++) {
                s += xq[p->off[r] + gi * p->cg + c] * wo[(r * p->run + c) * p->ogp];
            }
        }
        p->out[px * p->g->oc + o] = s;
    }
}

/* acc += the sums of one run: nc values from xq[q] + off for the xp pixels q, weights wt (nc
 * rows of ogp, from the block's first channel) */
static inline __attribute__((always_inline)) FUSED void
run_sums(const float *const *xq, int64_t off, int64_t nc, const float *wt, int64_t ogp, vf *acc,
         int xv, int xp)
{
    for (int64_t c = 0; c < nc; c++, wt += ogp) {
        vf wv[4];
        for (int v = 0; v < xv; v++) {
            memcpy(&wv[v], wt + v * DW, sizeof(vf));
        }
        for (int q = 0; q < xp; q++) {
            const float b = xq[q][off + c];
            for (int v = 0; v < xv; v++) {
                acc[q * xv + v] += b * wv[v];
            }
        }
    }
}

/* out (xp pixels, OC) from the block's first = the sums of its pixels, whose taps (0, 0, 0) in
 * group gi's channels are xq[0 .. xp), for xv vectors of channels from o0 of the group, over
 * the kernel rows kd in [k[0], k[1]), kh in [k[2], k[3]) (the others read only padding). xv and
 * xp are constants where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
block_sums(const conv_nhwc *p, const float *const *xq, const int64_t *k, int64_t gi, int64_t o0,
           float *out, int xv, int xp)
{
    const conv_geom *g = p->g;
    const int64_t no = p->og - o0 < xv * DW ? p->og - o0 : xv * DW;
    vf acc[XACC];
    /* every loop over the sums fully unrolled: with constant indices acc stays in registers (a
     * loop GCC left rolled spilled acc to the stack, and copied it through there into out: a
     * third of CIFAR's first layer's time went outside the multiply-adds) */
#pragma GCC unroll 4
    for (int v = 0; v < xv; v++) {
        vf b;
        memcpy(&b, p->biasp + gi * p->ogp + o0 + v * DW, sizeof(vf));
#pragma GCC unroll 8
        for (int q = 0; q < xp; q++) {
            acc[q * xv + v] = b;
        }
    }
    const float *wk = p->wp + gi * p->runs * p->run * p->ogp + o0;
    for (int64_t kd = k[0]; kd < k[1]; kd++) { /* the kernel rows that read the input */
        const int64_t r1 = (kd * p->g->kh + k[3]) * p->kwr;
        for (int64_t r = (kd * p->g->kh + k[2]) * p->kwr; r < r1; r++) {
            run_sums(xq, p->off[r], p->run, wk + r * p->run * p->ogp, p->ogp, acc, xv, xp);
        }
    }
    /* the sums of the channels that exist into out, a vector at a time from their registers */
    if (no == xv * DW) {
#pragma GCC unroll 8
        for (int q = 0; q < xp; q++) {
#pragma GCC unroll 4
            for (int v = 0; v < xv; v++) {
                memcpy(out + q * g->oc + gi * p->og + o0 + v * DW, &acc[q * xv + v], sizeof(vf));
            }
        }
        return;
    }
#pragma GCC unroll 8
    for (int q = 0; q < xp; q++) { /* a group's last channels, which fill part of a block */
#pragma GCC unroll 4
        for (int v = 0; v < xv; v++) {
            float *o = out + q * g->oc + gi * p->og + o0 + v * DW;
            const int64_t left = no - v * DW; /* the channels of this vector that exist */
            if (left >= DW) {
                memcpy(o, &acc[q * xv + v], sizeof(vf));
            } else if (left > 0) {
                float sums[DW];
                memcpy(sums, &acc[q * xv + v], sizeof(vf));
                memcpy(o, sums, (size_t)left * sizeof(float));
            }
        }
    }
}

/* Work item `item`: blocks ITEM_BLOCKS*ib .. of xp pixels each, row after row of the chunk's
 * output (a block runs on into the next row, so that narrow rows fill it), group gi, output
 * channels xv*DW*ob .. of it. */
static inline __attribute__((always_inline)) FUSED void
item_sums(const conv_nhwc *p, int64_t item, int xv, int xp)
{
    const conv_geom *g = p->g;
    const int64_t ob = item % p->oblocks, gi = item / p->oblocks % g->groups;
    const int64_t b0 = item / (p->oblocks * g->groups) * ITEM_BLOCKS;
    const int64_t b1 = b0 + ITEM_BLOCKS < p->blocks ? b0 + ITEM_BLOCKS : p->blocks;
    int64_t px = b0 * xp, ow = px % g->ow, at = pixel_at(p, px), in[4];
    rows_inside(p, px, in);
    for (int64_t b = b0; b < b1; b++) {
        const float *xq[XACC];
        int64_t k[4] = {in[0], in[1], in[2], in[3]}; /* the rows of the block's output rows */
        for (int q = 0; q < xp; q++) { /* the next pixel of a row: sw pixels on in xpad */
            xq[q] = p->x + at + gi * p->cg;
            px++;
            if (++ow < g->ow) {
                at += g->sw * p->c;
                continue;
            }
            ow = 0;
            at = pixel_at(p, px);
            rows_inside(p, px, in);
            for (int i = 0; i < 4 && q + 1 < xp; i++) { /* a block on two rows: both rows' */
                k[i] = i % 2 ? (in[i] > k[i] ? in[i] : k[i]) : (in[i] < k[i] ? in[i] : k[i]);
            }
        }
        block_sums(p, xq, k, gi, ob * xv * DW, p->out + b * xp * g->oc, xv, xp);
    }
}

MT_SIMD_CLONES FUSED static void
conv_nhwc_item(const conv_nhwc *p, int64_t item)
{
    if (p->xv == 4) {
        item_sums(p, item, 4, XACC / 4);
    } else if (p->xv == 2) {
        item_sums(p, item, 2, XP2);
    } else {
        item_sums(p, item, 1, XP1);
    }
}

/* Whether a group's og output channels fill an item's vectors well enough: 3/4 of them or more
 * (16 of 32 took twice the NCHW kernel's time), or 12 to 16 in one vector */
static bool
fills_vectors(int64_t og)
{
    return og >= 3 * DW / 2 || (og >= 3 * DW / 4 && og <= DW);
}

bool
mt_cpu_conv_nhwc_direct_suits(const conv_geom *g, mt_dtype dt)
{
    /* any input channels (3, a first layer's: 0.8x the time of a copy into NCHW and the NCHW
     * kernel) */
    return dt == MT_FLOAT32 && fills_vectors(g->oc / g->groups) && g->c / g->groups > 0 &&
           g->n > 0 && g->oh > 0 && g->ow > 0;
}

bool
mt_cpu_conv_ndhwc_direct_suits(const conv3_geom *g, mt_dtype dt)
{
    const conv_geom *hw = &g->hw;
    return dt == MT_FLOAT32 && fills_vectors(hw->oc / hw->groups) && g->c / hw->groups > 0 &&
           hw->n > 0 && g->od > 0 && hw->oh > 0 && hw->ow > 0;
}

/* wp (G, KD*KH*KW, C/G, ogp) = the weights of g, each group's output channels last, 0 past og:
 * w (OC, KD, KH, KW, C/G) as it lies, or with flip (2-D) the forward weight (C, KH, KW, OC/G) of
 * the convolution whose input gradient g is: its taps reversed, its channels swapped */
static void
pack_weight(const float *w, float *wp, const conv_nhwc *p, bool flip)
{
    const conv_geom *g = p->g;
    const int64_t taps = p->g3->kd * g->kh * g->kw;
    memset(wp, 0, (size_t)(g->groups * taps * p->cg * p->ogp) * sizeof(float));
    for (int64_t o = 0; o < g->oc; o++) {
        const int64_t gi = o / p->og, oo = o % p->og;
        for (int64_t t = 0; t < taps; t++) {
            for (int64_t c = 0; c < p->cg; c++) {
                const int64_t src = flip ? ((gi * p->cg + c) * taps + taps - 1 - t) * p->og + oo
                                         : (o * taps + t) * p->cg + c;
                wp[((gi * taps + t) * p->cg + c) * p->ogp + oo] = w[src];
            }
        }
    }
}

/* off[r] = where run r reads in xpad from a pixel's tap (0, 0, 0): kernel rows (kd, kh) of KW*C
 * values (one group, dw = 1), or taps (kd, kh, kw) of C/G */
static void
run_offsets(conv_nhwc *p, int64_t *off)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const bool rows = g->groups == 1 && g->dw == 1;
    const int64_t kw = rows ? 1 : g->kw;
    p->kwr = kw;
    p->runs = g3->kd * g->kh * kw;
    p->run = rows ? g->kw * p->c : p->cg;
    for (int64_t r = 0; r < p->runs; r++) {
        const int64_t j = r % kw, i = r / kw % g->kh, k = r / (kw * g->kh);
        off[r] = ((k * g3->dd * p->hp + i * g->dh) * p->wpd + j * g->dw) * p->c;
    }
}

// xpad (nimg, DP, HP, WP, C) = images [n0, n0 + nimg) of x (N, D, H, W, C) with pd, ph, pw
// zeros before each dimension and zeros after it up to DP, HP, WP
static void
pad_nhwc(const float *x, float *xpad, int64_t n0, int64_t nimg, const conv_nhwc *p)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const int64_t rows = nimg * p->dp * p->hp, c = p->c;
    const int parts = mt_parallel_parts(rows * p->wpd * c, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t n = n0 + r / (p->dp * p->hp), id = r / p->hp % p->dp - g3->pd;
        const int64_t ih = r % p->hp - g->ph;
        float *dst = xpad + r * p->wpd * c;
        if (id < 0 || id >= g3->d || ih < 0 || ih >= g->h) {
            memset(dst, 0, (size_t)(p->wpd * c) * sizeof(float));
            continue;
        }
        memset(dst, 0, (size_t)(g->pw * c) * sizeof(float));
        memcpy(dst + g->pw * c, x + ((n * g3->d + id) * g->h + ih) * g->w * c,
               (size_t)(g->w * c) * sizeof(float));
        memset(dst + (g->pw + g->w) * c, 0, (size_t)((p->wpd - g->pw - g->w) * c) * sizeof(float));
    }
}

/* The extent of xpad along one dimension: the input and its padding, at least what the last
 * output's last tap reads. */
static int64_t
padded(int64_t size, int64_t pad, int64_t out, int64_t stride, int64_t k, int64_t dil)
{
    const int64_t need = (out - 1) * stride + (k - 1) * dil + 1;
    return size + 2 * pad > need ? size + 2 * pad : need;
}

// out (N, OD, OH, OW, OC) = conv(x (N, D, H, W, C), w) + bias (OC) or none: images a chunk
// at a time, each chunk padded into xpad, then its whole blocks of pixels by item_sums (split
// among the threads) and its last pixels by pixel_sums
static mt_status
conv_ndhwc(const float *x, const float *w, const float *bias, float *out, bool flip,
           const conv3_geom *g3)
{
    const conv_geom *g = &g3->hw;
    conv_nhwc p = {.g3 = g3, .g = g, .c = g3->c};
    p.cg = g3->c / g->groups;
    p.og = g->oc / g->groups;
    p.xv = p.og > 2 * DW ? 4 : p.og > DW ? 2 : 1;
    p.xp = p.xv == 1 ? XP1 : p.xv == 2 ? XP2 : XACC / p.xv;
    p.ogp = (p.og + p.xv * DW - 1) / (p.xv * DW) * (p.xv * DW);
    p.oblocks = p.ogp / (p.xv * DW);
    p.dp = padded(g3->d, g3->pd, g3->od, g3->sd, g3->kd, g3->dd);
    p.hp = padded(g->h, g->ph, g->oh, g->sh, g->kh, g->dh);
    p.wpd = padded(g->w, g->pw, g->ow, g->sw, g->kw, g->dw);
    const bool pad = p.dp != g3->d || p.hp != g->h || p.wpd != g->w;
    const int64_t taps = g3->kd * g->kh * g->kw, np = g->groups * taps * p.cg * p.ogp;
    const int64_t nb = g->groups * p.ogp;
    const int64_t image = p.dp * p.hp * p.wpd * p.c, pixels = g3->od * g->oh * g->ow;
    int64_t chunk = pad ? NHWC_PAD_BYTES / (image * (int64_t)sizeof(float) + 1) : g->n;
    chunk = chunk < 1 ? 1 : chunk > g->n ? g->n : chunk;
    /* the packed weights, the bias, the offsets (int64, two floats each), then xpad; np and nb
     * are multiples of DW, so the offsets are 8-byte aligned */
    int64_t numel = np + nb + 2 * taps + (pad ? chunk * image : 0);
    mt_tensor *scratch = NULL;
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &scratch);
    if (st) {
        return st;
    }
    float *wp = (float *)mt_tensor_data(scratch), *biasp = wp + np, *xpad = biasp + nb + 2 * taps;
    int64_t *off = (int64_t *)(biasp + nb);
    pack_weight(w, wp, &p, flip);
    for (int64_t o = 0; o < nb; o++) {
        const int64_t gi = o / p.ogp, oo = o % p.ogp;
        biasp[o] = bias && oo < p.og ? bias[gi * p.og + oo] : 0.0f;
    }
    run_offsets(&p, off);
    p.wp = wp;
    p.biasp = biasp;
    p.off = off;
    for (int64_t n0 = 0; n0 < g->n; n0 += chunk) {
        const int64_t nimg = g->n - n0 < chunk ? g->n - n0 : chunk, npix = nimg * pixels;
        if (pad) {
            pad_nhwc(x, xpad, n0, nimg, &p);
        }
        p.x = pad ? xpad : x + n0 * image;
        p.out = out + n0 * pixels * g->oc;
        p.blocks = npix / p.xp;
        const int64_t items = (p.blocks + ITEM_BLOCKS - 1) / ITEM_BLOCKS * g->groups * p.oblocks;
        const int parts = mt_parallel_parts(items * ITEM_BLOCKS * XACC * DW * taps * p.cg, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t i = 0; i < items; i++) {
            conv_nhwc_item(&p, i);
        }
        for (int64_t px = p.blocks * p.xp; px < npix; px++) {
            pixel_sums(&p, px);
        }
    }
    mt_tensor_clear(&scratch);
    return MT_OK;
}

mt_status
mt_cpu_conv_nhwc_direct(const float *x, const float *w, const float *bias, float *out, bool flip,
                        const conv_geom *g)
{
    const conv3_geom g3 = {.hw = *g, .c = g->c, .d = 1, .kd = 1, .od = 1, .sd = 1, .dd = 1};
    return conv_ndhwc(x, w, bias, out, flip, &g3);
}

mt_status
mt_cpu_conv_ndhwc_direct(const float *x, const float *w, const float *bias, float *out,
                         const conv3_geom *g)
{
    return conv_ndhwc(x, w, bias, out, false, g);
}

/* *col: a block of col for plan p (none without one). */
static mt_status
col_new(const nhwc_plan *p, mt_tensor **col)
{
    int64_t numel = p->rows * p->g->ow * p->g->groups * p->k;
    return p->own_col ? mt_tensor_empty(1, &numel, p->dt, MT_DEVICE_CPU, col) : MT_OK;
}

mt_status
mt_cpu_conv_nhwc_weight(const char *go, const char *x, char *gw, const conv_geom *g, mt_dtype dt)
{
    if (direct_weight_suits(g, g->c, dt)) {
        const conv3_geom g3 = {.hw = *g, .c = g->c, .d = 1, .kd = 1, .od = 1, .sd = 1, .dd = 1};
        weight_direct_nhwc((const float *)go, (const float *)x, (float *)gw, &g3);
        return MT_OK;
    }
    const nhwc_plan p = plan_of(g, dt);
    const int64_t item = (int64_t)p.item, width = g->groups * p.k, nrows = g->n * g->oh;
    mt_tensor *col = NULL;
    mt_status st = col_new(&p, &col);
    memset(gw, 0, (size_t)(g->oc * p.k * item));
    for (int64_t r0 = 0; st == MT_OK && r0 < nrows && p.og > 0 && p.k > 0 && g->ow > 0;
         r0 += p.rows) {
        const int64_t r1 = r0 + p.rows < nrows ? r0 + p.rows : nrows, pix = (r1 - r0) * g->ow;
        const char *src = x + r0 * g->ow * g->c * item; /* a 1x1 kernel's col: the input's rows */
        if (p.own_col) {
            im2col_nhwc(x, mt_tensor_data(col), &p, r0, r1);
            src = mt_tensor_data(col);
        }
        for (int64_t gi = 0; gi < g->groups; gi++) {
            mt_cpu_gemm_raw(dt, true, false, (int)p.og, (int)p.k, (int)pix, 1.0,
                            go + (r0 * g->ow * g->oc + gi * p.og) * item, (int)g->oc,
                            src + gi * p.k * item, (int)width, 1.0, gw + gi * p.og * p.k * item,
                            (int)p.k);
        }
    }
    mt_tensor_clear(&col);
    return st;
}

mt_status
mt_cpu_conv_nhwc_input(const char *go, const char *w, char *gx, const conv_geom *g, mt_dtype dt)
{
    const nhwc_plan p = plan_of(g, dt);
    const int64_t item = (int64_t)p.item, width = g->groups * p.k, nrows = g->n * g->oh;
    mt_tensor *dcol = NULL;
    mt_status st = col_new(&p, &dcol);
    if (p.own_col || p.og == 0) { /* col2im adds into it; without a col the gemm writes it */
        memset(gx, 0, (size_t)(g->n * g->h * g->w * g->c * item));
    }
    for (int64_t r0 = 0; st == MT_OK && r0 < nrows && p.og > 0 && p.k > 0 && g->ow > 0;
         r0 += p.rows) {
        const int64_t r1 = r0 + p.rows < nrows ? r0 + p.rows : nrows, pix = (r1 - r0) * g->ow;
        char *dst = p.own_col ? mt_tensor_data(dcol) : gx + r0 * g->ow * g->c * item;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            mt_cpu_gemm_raw(dt, false, false, (int)pix, (int)p.k, (int)p.og, 1.0,
                            go + (r0 * g->ow * g->oc + gi * p.og) * item, (int)g->oc,
                            w + gi * p.og * p.k * item, (int)p.k, 0.0, dst + gi * p.k * item,
                            (int)width);
        }
        if (p.own_col) {
            col2im_nhwc(dst, gx, &p, r0, r1);
        }
    }
    mt_tensor_clear(&dcol);
    return st;
}

bool
mt_cpu_conv_ndhwc_weight_suits(const conv3_geom *g, mt_dtype dt)
{
    const conv_geom *hw = &g->hw;
    return direct_weight_suits(hw, g->c, dt) && hw->n > 0 && g->od > 0 && hw->oh > 0 && hw->ow > 0;
}

mt_status
mt_cpu_conv_ndhwc_weight(const float *go, const float *x, float *gw, const conv3_geom *g)
{
    weight_direct_nhwc(go, x, gw, g);
    return MT_OK;
}
