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
 *   input gradient with unit strides (the convolution of grad_output with the flipped weight).
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
 *     out[n, oh, ow, o] = bias[o] + sum over taps t = (kh, kw) and channels c of o's group of
 *         x[n, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw, c] * w[o, kh, kw, c]
 *
 * (conv3d's NDHWC alike, with a depth tap kd: x[n, od*sd + kd*dd - pd, ...] * w[o, kd, kh, kw, c];
 * the kernel takes conv3d's plan, conv2d's being its depth slice with d = kd = od = 1).
 * A work item is xp output pixels by xv vectors of DW output channels, XACC vectors of sums: at
 * each tap and input channel it loads xv vectors of the weights (packed: a tap's and channel's
 * output channels side by side) and broadcasts the channel's value at each of its xp pixels (a
 * pixel whose input lies in the padding, or past the last, reads a row of zeros). xv is 4 (64
 * channels, 6 pixels: 10 loads for 24 multiply-adds) where a group has more than 32 output
 * channels, 2 (32 channels, 8 pixels) where it has 17 to 32, else 1 (16 channels, 8 pixels).
 * conv2d's input gradient with unit strides runs here as the convolution of grad_output with the
 * flipped weight (conv_backward.c). */

#define XACC 24 /* most vectors of sums of an item: xp * xv */
/* pixels of an item with one vector, and with two: 8 each (on a channels-last (8, 64, 56, 56)
 * 3x3 with 4 groups 8.1-8.2 ms where 12 took 8.6-9.0, with 2 groups 11.3-11.6 where 12 took
 * 11.9-12.2, one thread; with 24 their pointers outnumber the registers) */
#define XP1 8
#define XP2 8
/* Most floats of a kernel row's run (KW*C, one group) that a pixel at a row's edge copies, in
 * items of one vector of output channels: few input channels, whose runs are short, where the
 * taps one by one cost more than the copy (conv3d (8, 4, 16^3) with 16 3x3x3 filters: 3.6 ->
 * 2.4 ms; with 64 output channels, 6 pixels an item, the copies cost more than they saved: CIFAR's
 * first layer 1.7 -> 2.1 ms) */
#define EDGE_RUN 64

typedef struct conv_nhwc {
    const conv3_geom *g3;
    const conv_geom *g; /* g3's depth slice (its channels are g3->c) */
    const float *x, *wp, *bias, *zeros; /* bias dense or NULL; zeros: a pixel's channels of 0 */
    float *out;
    int64_t c, cg, og, ogp, oblocks, xblocks; /* ogp: og rounded up to xv*DW */
    int xv;
    bool row_runs; /* one group, dw = 1: a kernel row's taps read adjacent pixels */
} conv_nhwc;

/* acc += the sums of one tap, or of a kernel row's taps side by side: nc channels of pixels
 * xr[0 .. xp), weights wt (nc rows of ogp) */
static inline __attribute__((always_inline)) FUSED void
tap_sums(const conv_nhwc *p, const float *const *xr, int64_t nc, const float *wt, vf *acc, int xv,
         int xp)
{
    for (int64_t c = 0; c < nc; c++, wt += p->ogp) {
        vf wv[4];
        for (int v = 0; v < xv; v++) {
            memcpy(&wv[v], wt + v * DW, sizeof(vf));
        }
        for (int q = 0; q < xp; q++) {
            const float b = xr[q][c];
            for (int v = 0; v < xv; v++) {
                acc[q * xv + v] += b * wv[v];
            }
        }
    }
}

/* Work item `item`: output pixels xp*xb .. xp*xb + xp - 1 of the N*OD*OH*OW, row after row (a
 * block runs on into the next row, so that narrow rows fill it), group gi, output channels
 * xv*DW*ob .. of it. xv and xp are constants where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
item_sums(const conv_nhwc *p, int64_t item, int xv, int xp)
{
    const conv3_geom *g3 = p->g3;
    const conv_geom *g = p->g;
    const int64_t ob = item % p->oblocks, gi = item / p->oblocks % g->groups;
    const int64_t px0 = item / (p->oblocks * g->groups) * xp, npix = g->n * g3->od * g->oh * g->ow;
    const int64_t npx = npix - px0 < xp ? npix - px0 : xp;
    const int64_t o0 = ob * xv * DW, no = p->og - o0 < xv * DW ? p->og - o0 : xv * DW;
    vf acc[XACC];
    for (int v = 0; v < xv; v++) {
        vf b = {0};
        for (int l = 0; l < DW && p->bias; l++) {
            b[l] = v * DW + l < no ? p->bias[gi * p->og + o0 + v * DW + l] : 0.0f;
        }
        for (int q = 0; q < xp; q++) {
            acc[q * xv + v] = b;
        }
    }
    /* a pixel's input at tap (0, 0, 0), its volume's first depth slice */
    int64_t id0[XACC], ih0[XACC], iw0[XACC], base[XACC];
    float edge[XACC][EDGE_RUN]; /* the runs of pixels at a row's edges */
    for (int q = 0; q < xp; q++) {
        const int64_t px = q < npx ? px0 + q : px0, r = px / g->ow, v = r / g->oh;
        /* a pixel past the last reads slices before the volume at every tap: zeros */
        id0[q] = q < npx ? v % g3->od * g3->sd - g3->pd : -g3->d - 1 - (g3->kd - 1) * g3->dd;
        ih0[q] = r % g->oh * g->sh - g->ph;
        iw0[q] = px % g->ow * g->sw - g->pw;
        base[q] = v / g3->od * g3->d;
    }
    for (int64_t kr = 0; kr < g3->kd * g->kh; kr++) { /* kernel rows (kd, kh) */
        const int64_t kd = kr / g->kh, kh = kr % g->kh;
        const float *wk = p->wp + (gi * g3->kd * g->kh + kr) * g->kw * p->cg * p->ogp + o0;
        const float *xr[XACC], *rows[XACC]; /* rows: a pixel's input row, NULL in the padding */
        /* with one group and no width dilation, a pixel's kernel row reads KW*C adjacent
         * values: one run of channels for the row, where each pixel reads all of it or none
         * (a first layer's 3 channels then make a run of 9, not 3) */
        bool row = p->row_runs;
        for (int q = 0; q < xp; q++) {
            const int64_t id = id0[q] + kd * g3->dd, ih = ih0[q] + kh * g->dh, iw = iw0[q];
            const bool rin = id >= 0 && id < g3->d && ih >= 0 && ih < g->h;
            rows[q] = rin ? p->x + ((base[q] + id) * g->h + ih) * g->w * p->c : NULL;
            const bool in = rin && iw >= 0 && iw + g->kw <= g->w;
            if (rin && !in && row && xv == 1 && g->kw * p->c <= EDGE_RUN) {
                /* a pixel at the row's left or right edge: its run copied, zeros for the taps in
                 * the padding, so that the row's pixels still go as runs */
                for (int64_t j = 0; j < g->kw; j++) {
                    float *at = edge[q] + j * p->c;
                    if (iw + j >= 0 && iw + j < g->w) {
                        memcpy(at, rows[q] + (iw + j) * p->c, (size_t)p->c * sizeof(float));
                    } else {
                        memset(at, 0, (size_t)p->c * sizeof(float));
                    }
                }
                xr[q] = edge[q];
                continue;
            }
            row = row && (in || !rin);
            xr[q] = in ? rows[q] + iw * p->c : p->zeros;
        }
        if (row) {
            tap_sums(p, xr, g->kw * p->cg, wk, acc, xv, xp);
            continue;
        }
        for (int64_t kw = 0; kw < g->kw; kw++) {
            for (int q = 0; q < xp; q++) {
                const int64_t iw = iw0[q] + kw * g->dw;
                const bool in = rows[q] && iw >= 0 && iw < g->w;
                xr[q] = in ? rows[q] + iw * p->c + gi * p->cg : p->zeros;
            }
            tap_sums(p, xr, p->cg, wk + kw * p->cg * p->ogp, acc, xv, xp);
        }
    }
    /* the sums of the pixels and channels that exist into out, a vector at a time from their
     * registers (constant indices: acc stays in them; copied through an array of sums, GCC
     * spilled acc and moved the array by rep movsq, and each pixel's run was a memcpy call: a
     * tenth of CIFAR's first layer's time) */
    for (int q = 0; q < xp; q++) {
        for (int v = 0; v < xv && q < npx; v++) {
            float *o = p->out + (px0 + q) * g->oc + gi * p->og + o0 + v * DW;
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

static mt_status
conv_ndhwc(const float *x, const float *w, const float *bias, float *out, bool flip,
           const conv3_geom *g3)
{
    const conv_geom *g = &g3->hw;
    conv_nhwc p = {.g3 = g3, .g = g, .x = x, .bias = bias, .out = out, .c = g3->c};
    p.cg = g3->c / g->groups;
    p.og = g->oc / g->groups;
    p.xv = p.og > 2 * DW ? 4 : p.og > DW ? 2 : 1;
    p.ogp = (p.og + p.xv * DW - 1) / (p.xv * DW) * (p.xv * DW);
    p.oblocks = p.ogp / (p.xv * DW);
    const int64_t px = p.xv == 1 ? XP1 : p.xv == 2 ? XP2 : XACC / p.xv;
    p.xblocks = (g->n * g3->od * g->oh * g->ow + px - 1) / px;
    const int64_t taps = g3->kd * g->kh * g->kw, np = g->groups * taps * p.cg * p.ogp;
    mt_tensor *packed = NULL;
    int64_t numel = np + g->kw * p.cg; /* the packed weights, then a kernel row of zeros */
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &packed);
    if (st) {
        return st;
    }
    float *wp = (float *)mt_tensor_data(packed);
    pack_weight(w, wp, &p, flip);
    memset(wp + np, 0, (size_t)(g->kw * p.cg) * sizeof(float));
    p.row_runs = g->groups == 1 && g->dw == 1;
    p.wp = wp;
    p.zeros = wp + np;
    const int64_t items = p.xblocks * g->groups * p.oblocks;
    const int parts = mt_parallel_parts(items * XACC * DW * taps * p.cg, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t i = 0; i < items; i++) {
        conv_nhwc_item(&p, i);
    }
    mt_tensor_clear(&packed);
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
