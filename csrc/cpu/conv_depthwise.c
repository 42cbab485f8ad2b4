/* Depthwise conv2d (groups = C = OC: each output channel reads its own input channel) on
 * channels-last float32 tensors on the CPU: the forward, and the input's and the weight's
 * gradients, from the NHWC data as it lies (conv.c and conv_backward.c choose these where the
 * front end states a channels-last result; the checks and the geometry are ops/conv_checks.c's).
 * At the end, the forward on row-major (NCHW) float32, any depth multiplier (OC = m*C).
 *
 *     out[n, oh, ow, c] = bias[c] + sum over taps t = (kh, kw) of
 *         x[n, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw, c] * w[c, kh, kw]
 *
 * In NHWC a pixel's channels lie side by side and each meets only itself, so the sums go DW
 * channels to a vector: a tap of a pixel is one load of x and one fused multiply-add, with no
 * broadcast (conv_nhwc.c's kernels vectorise over a group's output channels, of which a
 * depthwise convolution has one, and the NCHW kernels over a row, after a copy into NCHW).
 * A channel count that is not a multiple of DW ends with a vector that overlaps the one before
 * it (C >= DW); the lanes it shares are stored by the vector before it only. */
#include <string.h>

#include "cpu/conv.h"
#include "cpu/iter.h"
#include "cpu/loops.h"

#define DW 16   /* channels of a vector: one AVX-512 register of float */
/* vectors of sums of a forward strip, pixels x vectors of channels: 16 took 2.0-2.5 ms where 24
 * took 2.6-2.8 on MobileNet's stride-2 (32, 64, 56, 56) 3x3, one thread (12 about as 16) */
#define DACC 16
/* Most bytes of grad_output and x rows of one chunk of rows in the weight's gradient: in L2 */
#define DW_CHUNK_BYTES (512 << 10)

typedef float vf __attribute__((vector_size(DW * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(DW * sizeof(int32_t)))); /* a lane mask */
/* fused multiply-adds under -std=c11, as conv_direct.c's FUSED says */
#define FUSED __attribute__((optimize("fp-contract=fast")))

bool
mt_cpu_conv_dw_suits(const conv_geom *g, mt_dtype dt)
{
    return dt == MT_FLOAT32 && g->groups == g->c && g->oc == g->c && g->c >= DW && g->n > 0 &&
           g->oh > 0 && g->ow > 0;
}

typedef struct dw_plan {
    const conv_geom *g;
    const float *x, *wp, *bias, *zeros; /* wp (taps, C); zeros: a pixel's C channels of 0 */
    float *out;
    int64_t taps, nvec, cblocks; /* vectors of channels (the last may overlap), blocks of v */
    int v;                       /* vectors of channels of a work item: 4, 2 or 1 */
} dw_plan;

/* The first channel of vector j of channel block cb (a last partial one starts DW before C),
 * and in *own how many of its lanes from `first` on it stores (0: a vector past the last). */
static inline int64_t
vec_at(const dw_plan *p, int64_t cb, int j, int64_t *first, int64_t *own)
{
    const int64_t c = (cb * p->v + j) * DW, at = c < p->g->c - DW ? c : p->g->c - DW;
    *first = c;
    *own = c >= p->g->c ? 0 : p->g->c - c < DW ? p->g->c - c : DW;
    return at;
}

/* Output pixels ow0 .. ow0 + npx - 1 of output row (n, oh), channels cv[j] .. cv[j] + DW - 1 of
 * the v vectors: their sums in px * v vectors of registers, then stored (a vector that overlaps
 * the one before it, own[j] < DW lanes its own, through memory). inside: every tap of every
 * pixel reads inside the row, so no test, and one pointer steps the stride from pixel to pixel
 * (the compiler then addresses the pixels from two registers; a pointer a pixel outnumbered the
 * registers and went through the stack); otherwise a pixel in the padding, or past npx, reads
 * zeros. With slide (3: inside, a kernel row of 3 taps, unit stride and dilation), input pixel
 * i of a kernel row's window meets tap kw at output pixel i - kw: each is loaded once for the
 * row's taps, not once a tap. v, px, inside and slide are constants where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
dw_strip(const dw_plan *p, int64_t n, int64_t oh, int64_t ow0, int64_t npx, const int64_t *cv,
         const int64_t *first, const int64_t *own, int v, int px, bool inside, int slide)
{
    const conv_geom *g = p->g;
    vf acc[DACC], b[4] = {{0}};
    for (int j = 0; j < v && p->bias; j++) {
        memcpy(&b[j], p->bias + cv[j], sizeof(vf));
    }
    /* unrolled, so that acc's indices are constants and acc stays in registers */
#pragma GCC unroll 24
    for (int q = 0; q < px; q++) {
        for (int j = 0; j < v; j++) {
            acc[q * v + j] = b[j];
        }
    }
    for (int64_t kh = 0; kh < g->kh; kh++) {
        const int64_t ih = oh * g->sh + kh * g->dh - g->ph;
        if (ih < 0 || ih >= g->h) {
            continue;
        }
        const float *xrow = p->x + (n * g->h + ih) * g->w * g->c;
        if (slide) {
            vf wr[3 * 4]; /* wr[kw * v + j]: the row's taps */
            for (int kw = 0; kw < slide; kw++) {
                for (int j = 0; j < v; j++) {
                    memcpy(&wr[kw * v + j], p->wp + (kh * slide + kw) * g->c + cv[j], sizeof(vf));
                }
            }
            const float *xp = xrow + (ow0 - g->pw) * g->c;
#pragma GCC unroll 32
            for (int i = 0; i < px + slide - 1; i++, xp += g->c) {
                for (int j = 0; j < v; j++) {
                    vf xv;
                    memcpy(&xv, xp + cv[j], sizeof(vf));
                    for (int kw = 0; kw < slide; kw++) {
                        if (i - kw >= 0 && i - kw < px) {
                            acc[(i - kw) * v + j] += xv * wr[kw * v + j];
                        }
                    }
                }
            }
            continue;
        }
        for (int64_t kw = 0; kw < g->kw; kw++) {
            const float *wt = p->wp + (kh * g->kw + kw) * g->c;
            vf wv[4];
            for (int j = 0; j < v; j++) {
                memcpy(&wv[j], wt + cv[j], sizeof(vf));
            }
            /* pixel q reads input pixel iw0 + q*sw */
            const int64_t iw0 = ow0 * g->sw + kw * g->dw - g->pw;
            if (inside) {
                const float *xp = xrow + iw0 * g->c;
#pragma GCC unroll 24
                for (int q = 0; q < px; q++, xp += g->sw * g->c) {
                    for (int j = 0; j < v; j++) {
                        vf xv;
                        memcpy(&xv, xp + cv[j], sizeof(vf));
                        acc[q * v + j] += xv * wv[j];
                    }
                }
                continue;
            }
#pragma GCC unroll 24
            for (int q = 0; q < px; q++) {
                const int64_t iw = iw0 + q * g->sw;
                const float *xp = q < npx && iw >= 0 && iw < g->w ? xrow + iw * g->c : p->zeros;
                for (int j = 0; j < v; j++) {
                    vf xv;
                    memcpy(&xv, xp + cv[j], sizeof(vf));
                    acc[q * v + j] += xv * wv[j];
                }
            }
        }
    }
    float *dst = p->out + ((n * g->oh + oh) * g->ow + ow0) * g->c;
#pragma GCC unroll 24
    for (int q = 0; q < px; q++, dst += g->c) {
        for (int j = 0; j < v && q < npx; j++) {
            if (own[j] == DW) {
                memcpy(dst + first[j], &acc[q * v + j], sizeof(vf));
                continue;
            }
            float part[DW];
            memcpy(part, &acc[q * v + j], sizeof(vf));
            memcpy(dst + first[j], part + (first[j] - cv[j]), (size_t)own[j] * sizeof(float));
        }
    }
}

/* Prefetches into L2 input pixels [iw0, iw1) of the rows below output row oh's window, which
 * the next output row reads: they come from memory while this row computes (MobileNet's
 * stride-2 (32, 64, 56, 56) 3x3 took 2.6 ms with it, 3.2 without, one thread). */
static inline void
prefetch_below(const dw_plan *p, int64_t n, int64_t oh, int64_t iw0, int64_t iw1)
{
    const conv_geom *g = p->g;
    const int64_t last = oh * g->sh + (g->kh - 1) * g->dh - g->ph;
    iw0 = iw0 < 0 ? 0 : iw0;
    iw1 = iw1 > g->w ? g->w : iw1;
    for (int64_t ih = last + 1 < 0 ? 0 : last + 1; ih <= last + g->sh && ih < g->h; ih++) {
        const float *row = p->x + (n * g->h + ih) * g->w * g->c;
        for (int64_t at = iw0 * g->c; at < iw1 * g->c; at += 64 / sizeof(float)) {
            __builtin_prefetch(row + at, 0, 2);
        }
    }
}

/* Work item `item`: output row r = (n, oh), channel block cb of v vectors. The pixels whose
 * every tap reads inside the row go px at a time (v * px = DACC), a last strip overlapping the
 * one before it (its pixels computed twice, stored alike), the others, at the row's edges, one
 * at a time; a row with fewer than px inside pixels goes px at a time, tested. (The edges as
 * strips of px, tested, were 40% of the time of MobileNet's (32, 32, 56, 56) 3x3: two strips of
 * five.) v and px are constants where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
dw_row(const dw_plan *p, int64_t item, int v, int px, int slide)
{
    const conv_geom *g = p->g;
    const int64_t cb = item % p->cblocks, r = item / p->cblocks, n = r / g->oh, oh = r % g->oh;
    int64_t cv[4], first[4], own[4], lo, hi, l, h;
    for (int j = 0; j < v; j++) {
        cv[j] = vec_at(p, cb, j, &first[j], &own[j]);
    }
    mt_conv_inside(-g->pw, g->sw, g->w, g->ow, &lo, &h);
    mt_conv_inside((g->kw - 1) * g->dw - g->pw, g->sw, g->w, g->ow, &l, &hi);
    if (hi - lo < px) {
        for (int64_t ow0 = 0; ow0 < g->ow; ow0 += px) {
            const int64_t npx = g->ow - ow0 < px ? g->ow - ow0 : px;
            dw_strip(p, n, oh, ow0, npx, cv, first, own, v, px, false, 0);
        }
        return;
    }
    for (int64_t ow0 = lo; ow0 < hi; ow0 += px) {
        const int64_t at = ow0 + px <= hi ? ow0 : hi - px;
        prefetch_below(p, n, oh, at * g->sw - g->pw, (at + px) * g->sw - g->pw);
        dw_strip(p, n, oh, at, px, cv, first, own, v, px, true, slide);
    }
    for (int64_t ow = 0; ow < lo; ow++) {
        dw_strip(p, n, oh, ow, 1, cv, first, own, v, 1, false, 0);
    }
    for (int64_t ow = hi; ow < g->ow; ow++) {
        dw_strip(p, n, oh, ow, 1, cv, first, own, v, 1, false, 0);
    }
}

/* Work item `item` with the plan's vectors a block; slide as dw_strip's, a constant where it is
 * inlined */
static inline __attribute__((always_inline)) FUSED void
dw_item_with(const dw_plan *p, int64_t item, int slide)
{
    if (p->v == 4) {
        dw_row(p, item, 4, DACC / 4, slide);
    } else if (p->v == 2) {
        dw_row(p, item, 2, DACC / 2, slide);
    } else {
        dw_row(p, item, 1, DACC, slide);
    }
}

MT_SIMD_CLONES FUSED static void
dw_item(const dw_plan *p, int64_t item)
{
    dw_item_with(p, item, 0);
}

/* an item of a kernel of 3 taps a row, unit stride and dilation */
MT_SIMD_CLONES FUSED static void
dw_item_slide(const dw_plan *p, int64_t item)
{
    dw_item_with(p, item, 3);
}

/* The vectors of channels and how many an item takes: 4, 2 or 1, dividing them (so that only
 * the last vector may overlap the one before it, and no item computes a vector twice). */
static void
plan_vectors(dw_plan *p)
{
    p->taps = p->g->kh * p->g->kw;
    p->nvec = (p->g->c + DW - 1) / DW;
    p->v = p->nvec % 4 == 0 ? 4 : p->nvec % 2 == 0 ? 2 : 1;
    p->cblocks = p->nvec / p->v;
}

mt_status
mt_cpu_conv_dw(const float *x, const float *w, const float *bias, float *out, bool flip,
               const conv_geom *g)
{
    dw_plan p = {.g = g, .x = x, .bias = bias, .out = out};
    plan_vectors(&p);
    mt_tensor *packed = NULL;
    int64_t numel = (p.taps + 1) * g->c; /* the weights (taps, C), then a pixel of zeros */
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &packed);
    if (st) {
        return st;
    }
    float *wp = (float *)mt_tensor_data(packed);
    for (int64_t c = 0; c < g->c; c++) { /* w (C, KH, KW) -> (KH, KW, C), reversed with flip */
        for (int64_t t = 0; t < p.taps; t++) {
            wp[t * g->c + c] = w[c * p.taps + (flip ? p.taps - 1 - t : t)];
        }
    }
    memset(wp + p.taps * g->c, 0, (size_t)g->c * sizeof(float));
    p.wp = wp;
    p.zeros = wp + p.taps * g->c;
    const int64_t items = g->n * g->oh * p.cblocks;
    const bool slide = g->kw == 3 && g->sw == 1 && g->dw == 1;
    const int parts = mt_parallel_parts(items * g->ow * p.taps * p.v * DW, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t i = 0; i < items; i++) {
        if (slide) {
            dw_item_slide(&p, i);
        } else {
            dw_item(&p, i);
        }
    }
    mt_tensor_clear(&packed);
    return MT_OK;
}

/* ---- the input's gradient with strides ----
 *
 *     gx[n, ih, iw, c] = sum over taps (kh, kw) and outputs (oh, ow) with oh*sh + kh*dh - ph = ih
 *         and ow*sw + kw*dw - pw = iw of go[n, oh, ow, c] * w[c, kh, kw]
 *
 * gathered pixel by pixel (each written once, by one thread): a tap reaches pixel (ih, iw) from
 * the output (oh, ow) where the stride divides the distance. With unit strides the gradient is
 * the forward kernel's convolution of go with the taps reversed (mt_cpu_conv_dw with flip). */

/* o = (i + p - k*d) / s where s divides it and 0 <= o < size, else -1 */
static inline int64_t
source_of(int64_t i, int64_t p, int64_t k, int64_t d, int64_t s, int64_t size)
{
    const int64_t t = i + p - k * d;
    return t < 0 || t % s != 0 || t / s >= size ? -1 : t / s;
}

/* Work item `item`: input row (n, ih), every pixel and channel of it, zeroed, then each
 * output pixel's go times a tap's weights added into the pixel the tap read there, kernel row by
 * kernel row: the stride's division once per kernel row, not per pixel and tap. A last vector
 * that overlaps the one before it adds only its own lanes (the others' products masked to 0). */
MT_SIMD_CLONES FUSED static void
dw_input_row(const dw_plan *p, const float *go, float *gx, int64_t item)
{
    const conv_geom *g = p->g;
    const int64_t n = item / g->h, ih = item % g->h;
    float *row = gx + item * g->w * g->c;
    memset(row, 0, (size_t)(g->w * g->c) * sizeof(float));
    int64_t first, own;
    vi mine = {0}; /* the lanes of the last vector that are its own */
    const int64_t last = vec_at(p, (p->nvec - 1) / p->v, (int)((p->nvec - 1) % p->v), &first, &own);
    for (int l = 0; l < DW; l++) {
        mine[l] = last + l >= first ? -1 : 0;
    }
    const int64_t whole = own == DW ? p->nvec : p->nvec - 1; /* vectors with every lane own */
    for (int64_t kh = 0; kh < g->kh; kh++) {
        const int64_t oh = source_of(ih, g->ph, kh, g->dh, g->sh, g->oh);
        for (int64_t kw = 0; kw < g->kw && oh >= 0; kw++) {
            const int64_t off = kw * g->dw - g->pw;
            int64_t lo, hi;
            mt_conv_inside(off, g->sw, g->w, g->ow, &lo, &hi);
            const float *gp = go + (n * g->oh + oh) * g->ow * g->c,
                        *wt = p->wp + (kh * g->kw + kw) * g->c;
            for (int64_t ow = lo; ow < hi; ow++) {
                float *dst = row + (ow * g->sw + off) * g->c;
                const float *src = gp + ow * g->c;
                for (int64_t c = 0; c < whole * DW; c += DW) {
                    vf d, gv, wv;
                    memcpy(&d, dst + c, sizeof(vf));
                    memcpy(&gv, src + c, sizeof(vf));
                    memcpy(&wv, wt + c, sizeof(vf));
                    d += gv * wv;
                    memcpy(dst + c, &d, sizeof(vf));
                }
                if (whole < p->nvec) {
                    vf d, gv, wv;
                    memcpy(&d, dst + last, sizeof(vf));
                    memcpy(&gv, src + last, sizeof(vf));
                    memcpy(&wv, wt + last, sizeof(vf));
                    d += (vf)((vi)(gv * wv) & mine);
                    memcpy(dst + last, &d, sizeof(vf));
                }
            }
        }
    }
}

mt_status
mt_cpu_conv_dw_input(const float *go, const float *w, float *gx, const conv_geom *g)
{
    if (g->sh == 1 && g->sw == 1 && g->dh * (g->kh - 1) >= g->ph && g->dw * (g->kw - 1) >= g->pw) {
        /* the convolution of go (OH, OW) with the reversed taps, padded by d*(K-1) - p */
        conv_geom t = *g;
        t.h = g->oh;
        t.w = g->ow;
        t.oh = g->h;
        t.ow = g->w;
        t.ph = g->dh * (g->kh - 1) - g->ph;
        t.pw = g->dw * (g->kw - 1) - g->pw;
        return mt_cpu_conv_dw(go, w, NULL, gx, true, &t);
    }
    dw_plan p = {.g = g};
    plan_vectors(&p);
    mt_tensor *packed = NULL;
    int64_t numel = p.taps * g->c;
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &packed);
    if (st) {
        return st;
    }
    float *wp = (float *)mt_tensor_data(packed);
    for (int64_t c = 0; c < g->c; c++) {
        for (int64_t t = 0; t < p.taps; t++) {
            wp[t * g->c + c] = w[c * p.taps + t];
        }
    }
    p.wp = wp;
    const int64_t items = g->n * g->h;
    const int parts = mt_parallel_parts(items * g->w * p.taps * g->c, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t i = 0; i < items; i++) {
        dw_input_row(&p, go, gx, i);
    }
    mt_tensor_clear(&packed);
    return MT_OK;
}

/* ---- the weight's gradient ----
 *
 *     gw[c, kh, kw] = sum over (n, oh, ow) of go[n, oh, ow, c] * x[n, oh*sh + kh*dh - ph,
 *         ow*sw + kw*dw - pw, c]
 *
 * The chunks of output rows go one after the other, their go and x rows in L2 for the items
 * that all read them. With 3 or 5 taps a kernel row a work item is a kernel row and a block of
 * vectors of channels (dw_weight_rows); otherwise a tap and a vector of channels, summed in four
 * vectors (four independent chains of multiply-adds): the simple form. On MobileNet's stride-2
 * (32, 64, 56, 56) 3x3 the first took 2.1 ms where the second took 4.8 (one thread). */

typedef struct dw_wgrad {
    const dw_plan *p;
    const float *go, *x;
    float *gw;
    int64_t r0, r1; /* the chunk's output rows (n, oh) */
} dw_wgrad;

MT_SIMD_CLONES FUSED static void
dw_weight_item(const dw_wgrad *w, int64_t item)
{
    const dw_plan *p = w->p;
    const conv_geom *g = p->g;
    const int64_t t = item % p->taps, k = item / p->taps, kh = t / g->kw, kw = t % g->kw;
    int64_t first, own, lo, hi;
    const int64_t c = vec_at(p, k / p->v, (int)(k % p->v), &first, &own);
    mt_conv_inside(kw * g->dw - g->pw, g->sw, g->w, g->ow, &lo, &hi);
    vf acc[4] = {{0}};
    for (int64_t r = w->r0; r < w->r1; r++) {
        const int64_t n = r / g->oh, ih = r % g->oh * g->sh + kh * g->dh - g->ph;
        if (ih < 0 || ih >= g->h) {
            continue;
        }
        /* output pixel ow reads input pixel ow*sw + off of row ih */
        const float *gp = w->go + r * g->ow * g->c + c;
        const float *xp = w->x + (n * g->h + ih) * g->w * g->c + c;
        const int64_t off = kw * g->dw - g->pw;
        int64_t ow = lo;
        for (; ow + 4 <= hi; ow += 4) {
            for (int u = 0; u < 4; u++) {
                vf gv, xv;
                memcpy(&gv, gp + (ow + u) * g->c, sizeof(vf));
                memcpy(&xv, xp + ((ow + u) * g->sw + off) * g->c, sizeof(vf));
                acc[u] += gv * xv;
            }
        }
        for (; ow < hi; ow++) {
            vf gv, xv;
            memcpy(&gv, gp + ow * g->c, sizeof(vf));
            memcpy(&xv, xp + (ow * g->sw + off) * g->c, sizeof(vf));
            acc[0] += gv * xv;
        }
    }
    float sums[DW];
    const vf all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    memcpy(sums, &all, sizeof(vf));
    for (int64_t l = 0; l < own; l++) {
        w->gw[(first + l) * p->taps + t] += sums[first - c + l];
    }
}

/* acc[j * kwn + kw] += output pixel q's go (row gp) times what tap kw of the kernel row reads in
 * input row xp, vectors of channels cv[j], for the taps that read inside the row */
static inline __attribute__((always_inline)) FUSED void
dw_weight_pixel(const conv_geom *g, const float *gp, const float *xp, int64_t q, const int64_t *cv,
                int kwn, int v, vf *acc)
{
    for (int j = 0; j < v; j++) {
        vf gv;
        memcpy(&gv, gp + q * g->c + cv[j], sizeof(vf));
        for (int kw = 0; kw < kwn; kw++) {
            const int64_t iw = q * g->sw + kw * g->dw - g->pw;
            if (iw >= 0 && iw < g->w) {
                vf xv;
                memcpy(&xv, xp + iw * g->c + cv[j], sizeof(vf));
                acc[j * kwn + kw] += gv * xv;
            }
        }
    }
}

/* Work item `item` of a kernel of kwn = KW taps a row (3 or 5): a block of v vectors of channels
 * (plan_vectors': 4, 2 or 1) and a kernel row kh, its kwn taps summed over the chunk's rows,
 * 4 / v pixels at a time in 4 * kwn vectors of sums: at each pixel go is loaded once for the
 * row's taps (where an item a tap loaded it for each), and a pixel's channels are read as one
 * run by KH items, not a vector at a time by KH*KW. Pixels that some tap of the row reads
 * outside the input go one by one, tested. kwn and v are constants where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
dw_weight_row(const dw_wgrad *w, int64_t item, int kwn, int v)
{
    const dw_plan *p = w->p;
    const conv_geom *g = p->g;
    const int64_t kh = item % g->kh, cb = item / g->kh;
    const int px = 4 / v;
    int64_t cv[4], first[4], own[4], lo = 0, hi = g->ow;
    for (int j = 0; j < v; j++) {
        cv[j] = vec_at(p, cb, j, &first[j], &own[j]);
    }
    for (int kw = 0; kw < kwn; kw++) { /* the pixels whose every tap of the row reads inside */
        int64_t l, h;
        mt_conv_inside(kw * g->dw - g->pw, g->sw, g->w, g->ow, &l, &h);
        lo = l > lo ? l : lo;
        hi = h < hi ? h : hi;
    }
    if (lo >= hi) { /* none: every pixel goes tested */
        lo = hi = 0;
    }
    vf acc[4 * 5] = {{0}}; /* acc[(u * v + j) * kwn + kw]: pixel u, vector j, tap kw */
    for (int64_t r = w->r0; r < w->r1; r++) {
        const int64_t n = r / g->oh, ih = r % g->oh * g->sh + kh * g->dh - g->ph;
        if (ih < 0 || ih >= g->h) {
            continue;
        }
        /* output pixel ow reads input pixel ow*sw + kw*dw - pw of row ih */
        const float *gp = w->go + r * g->ow * g->c;
        const float *xp = w->x + (n * g->h + ih) * g->w * g->c;
        int64_t ow = lo;
        for (; ow + px <= hi; ow += px) {
            for (int u = 0; u < px; u++) {
                for (int j = 0; j < v; j++) {
                    vf gv;
                    memcpy(&gv, gp + (ow + u) * g->c + cv[j], sizeof(vf));
                    for (int kw = 0; kw < kwn; kw++) {
                        const int64_t iw = (ow + u) * g->sw + kw * g->dw - g->pw;
                        vf xv;
                        memcpy(&xv, xp + iw * g->c + cv[j], sizeof(vf));
                        acc[(u * v + j) * kwn + kw] += gv * xv;
                    }
                }
            }
        }
        for (int64_t q = 0; q < lo; q++) {
            dw_weight_pixel(g, gp, xp, q, cv, kwn, v, acc);
        }
        for (int64_t q = ow; q < g->ow; q++) {
            dw_weight_pixel(g, gp, xp, q, cv, kwn, v, acc);
        }
    }
    for (int j = 0; j < v; j++) {
        for (int kw = 0; kw < kwn; kw++) {
            vf all = acc[j * kwn + kw];
            for (int u = 1; u < px; u++) {
                all += acc[(u * v + j) * kwn + kw];
            }
            float sums[DW];
            memcpy(sums, &all, sizeof(vf));
            for (int64_t l = 0; l < own[j]; l++) {
                w->gw[(first[j] + l) * p->taps + kh * g->kw + kw] += sums[first[j] - cv[j] + l];
            }
        }
    }
}

MT_SIMD_CLONES FUSED static void
dw_weight_rows(const dw_wgrad *w, int64_t item)
{
    const int v = w->p->v;
    if (w->p->g->kw == 3 && v == 4) {
        dw_weight_row(w, item, 3, 4);
    } else if (w->p->g->kw == 3 && v == 2) {
        dw_weight_row(w, item, 3, 2);
    } else if (w->p->g->kw == 3) {
        dw_weight_row(w, item, 3, 1);
    } else if (v == 4) {
        dw_weight_row(w, item, 5, 4);
    } else if (v == 2) {
        dw_weight_row(w, item, 5, 2);
    } else {
        dw_weight_row(w, item, 5, 1);
    }
}

mt_status
mt_cpu_conv_dw_weight(const float *go, const float *x, float *gw, const conv_geom *g)
{
    dw_plan p = {.g = g};
    plan_vectors(&p);
    dw_wgrad w = {.p = &p, .go = go, .x = x, .gw = gw};
    const int64_t row_bytes = (1 + g->sh) * g->ow * g->c * (int64_t)sizeof(float) + 1;
    int64_t chunk = DW_CHUNK_BYTES / row_bytes;
    chunk = chunk < 1 ? 1 : chunk;
    /* 3 or 5 taps a kernel row: an item a kernel row (dw_weight_rows), else a tap; the rows'
     * items take blocks of fewer vectors where they would not go round the threads twice */
    const bool rows = g->kw == 3 || g->kw == 5;
    while (rows && p.v > 1 && g->kh * p.cblocks < 2 * mt_get_num_threads()) {
        p.v /= 2;
        p.cblocks = p.nvec / p.v;
    }
    const int64_t items = rows ? g->kh * p.cblocks : p.taps * p.nvec, nrows = g->n * g->oh;
    memset(gw, 0, (size_t)(g->c * p.taps) * sizeof(float));
    for (w.r0 = 0; w.r0 < nrows; w.r0 += chunk) {
        w.r1 = w.r0 + chunk < nrows ? w.r0 + chunk : nrows;
        const int parts = mt_parallel_parts(items * (w.r1 - w.r0) * g->ow * DW, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t i = 0; i < items; i++) {
            if (rows) {
                dw_weight_rows(&w, i);
            } else {
                dw_weight_item(&w, i);
            }
        }
    }
    return MT_OK;
}

/* ---- NCHW (row-major) ----
 *
 *     out[n, o, oh, ow] = bias[o] + sum over taps (kh, kw) of
 *         x[n, o / m, oh*sh + kh*dh - ph, ow*sw + kw*dw - pw] * w[o, kh, kw]      (m = OC / C)
 *
 * An output plane at a time, from its input plane (a few KiB, in L1). The simple form
 * (dw_nchw_plane) sums a row of output tap by tap, each tap adding its weight times a row of
 * x, shifted, over the columns where it reads inside the row: 1.3x PyTorch's time on
 * MobileNet's (32, 32, 56, 56) 3x3, as each tap loaded and stored the whole row again. With unit
 * width stride (dw_nchw_plane_fast) the input plane is first copied with its padding as zeros
 * into a scratch plane, whose rows are then read a vector of DW columns at a time with no test:
 * NV vectors of output columns summed over every tap in registers, stored once. */

#define NV 4 /* vectors of output columns summed together: 64 columns, a 56-wide row in one go */

bool
mt_cpu_conv_dw_nchw_suits(const conv_geom *g, mt_dtype dt)
{
    return dt == MT_FLOAT32 && g->c > 0 && g->groups == g->c && g->oc % g->c == 0 && g->n > 0 &&
           g->oh > 0 && g->ow > 0;
}

// x (H, W) one input plane, w (KH, KW) one filter, out (OH, OW) its output plane
MT_SIMD_CLONES FUSED static void
dw_nchw_plane(const float *restrict x, const float *restrict w, float b, float *restrict out,
              const conv_geom *g)
{
    for (int64_t oh = 0; oh < g->oh; oh++) {
        float *restrict o = out + oh * g->ow;
        for (int64_t ow = 0; ow < g->ow; ow++) {
            o[ow] = b;
        }
        for (int64_t kh = 0; kh < g->kh; kh++) {
            const int64_t ih = oh * g->sh + kh * g->dh - g->ph;
            if (ih < 0 || ih >= g->h) {
                continue;
            }
            for (int64_t kw = 0; kw < g->kw; kw++) {
                /* output column ow reads xs[ow * sw], inside the row for ow in [lo, hi) */
                const int64_t off = kw * g->dw - g->pw;
                int64_t lo, hi;
                mt_conv_inside(off, g->sw, g->w, g->ow, &lo, &hi);
                const float *restrict xs = x + ih * g->w + off;
                const float wt = w[kh * g->kw + kw];
                for (int64_t ow = lo; ow < hi; ow++) {
                    o[ow] += wt * xs[ow * g->sw];
                }
            }
        }
    }
}

/* The scratch plane of dw_nchw_plane_fast: input rows -ph .. (OH-1)*sh + (KH-1)*dh - ph, each of
 * pw zeros, then the row (or zeros above and below the input), then zeros up to the columns
 * that NV vectors a block of output columns and the last tap read. *rows and *cols its sizes. */
static void
padded_plane_size(const conv_geom *g, int64_t *rows, int64_t *cols)
{
    const int64_t block = NV * DW, wide = (g->ow + block - 1) / block * block;
    *rows = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    *cols = wide + (g->kw - 1) * g->dw;
}

// x (H, W) one input plane -> pad, the scratch plane of padded_plane_size
static void
pad_plane(const float *restrict x, float *restrict pad, const conv_geom *g)
{
    int64_t rows, cols;
    padded_plane_size(g, &rows, &cols);
    for (int64_t r = 0; r < rows; r++) { /* row r is input row r - ph */
        float *pr = pad + r * cols;
        const int64_t ih = r - g->ph, n = g->w < cols - g->pw ? g->w : cols - g->pw;
        memset(pr, 0, (size_t)cols * sizeof(float));
        if (ih >= 0 && ih < g->h && n > 0) {
            memcpy(pr + g->pw, x + ih * g->w, (size_t)n * sizeof(float));
        }
    }
}

/* output columns ow0 .. ow0 + nv*DW of row oh (fewer at the row's end) from the padded plane:
 * nv is a constant at each call, so the nv sums stay in registers */
static inline __attribute__((always_inline)) FUSED void
dw_nchw_block(const float *restrict pad, int64_t cols, const float *restrict w, float b,
              float *restrict out, int64_t oh, int64_t ow0, const int nv, const conv_geom *g)
{
    vf acc[NV];
    for (int j = 0; j < nv; j++) {
        acc[j] = (vf){0} + b;
    }
    for (int64_t kh = 0; kh < g->kh; kh++) {
        const float *pr = pad + (oh * g->sh + kh * g->dh) * cols + ow0;
        for (int64_t kw = 0; kw < g->kw; kw++) {
            const float wt = w[kh * g->kw + kw];
            for (int j = 0; j < nv; j++) {
                vf xv;
                memcpy(&xv, pr + kw * g->dw + j * DW, sizeof(vf));
                acc[j] += xv * wt;
            }
        }
    }
    /* a vector past the row's end runs into later rows of the plane, which this thread writes
     * after this one: stored whole (a libc memmove of the row's last 12 floats was 12% of
     * MNIST's 28-wide first layer); only at the plane's end is it cut */
    float *o = out + oh * g->ow + ow0;
    const int64_t room = (g->oh - oh) * g->ow - ow0;
    for (int j = 0; j < nv && ow0 + j * DW < g->ow; j++) {
        const int64_t left = g->ow - ow0 - j * DW;
        if ((j + 1) * DW <= room) {
            memcpy(o + j * DW, &acc[j], sizeof(vf));
        } else {
            memcpy(o + j * DW, &acc[j], (size_t)(left < DW ? left : DW) * sizeof(float));
        }
    }
}

// pad (padded_plane_size) one padded input plane, w (KH, KW), out (OH, OW); sw == 1. A row's
// last block sums only the vectors it needs (MNIST's 28 columns: 2 of NV's 4)
MT_SIMD_CLONES FUSED static void
dw_nchw_plane_fast(const float *restrict pad, const float *restrict w, float b, float *restrict out,
                   const conv_geom *g)
{
    int64_t rows, cols;
    padded_plane_size(g, &rows, &cols);
    for (int64_t oh = 0; oh < g->oh; oh++) {
        for (int64_t ow0 = 0; ow0 < g->ow; ow0 += NV * DW) {
            const int64_t need = (g->ow - ow0 + DW - 1) / DW;
            switch (need < NV ? need : NV) {
            case 1:
                dw_nchw_block(pad, cols, w, b, out, oh, ow0, 1, g);
                break;
            case 2:
                dw_nchw_block(pad, cols, w, b, out, oh, ow0, 2, g);
                break;
            case 3:
                dw_nchw_block(pad, cols, w, b, out, oh, ow0, 3, g);
                break;
            default:
                dw_nchw_block(pad, cols, w, b, out, oh, ow0, NV, g);
                break;
            }
        }
    }
}

mt_status
mt_cpu_conv_dw_nchw(const float *x, const float *w, const float *bias, int64_t bias_stride,
                    float *out, const conv_geom *g)
{
    const int64_t m = g->oc / g->c, planes = g->n * g->oc, taps = g->kh * g->kw;
    const int parts = mt_parallel_parts(planes * g->oh * g->ow * taps, 65536);
    const bool fast = g->sw == 1;
    int64_t rows, cols;
    padded_plane_size(g, &rows, &cols);
    int64_t numel = fast ? parts * rows * cols : 0; /* a scratch plane a thread */
    mt_tensor *scratch = NULL;
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &scratch);
    if (st) {
        return st;
    }
    float *pads = (float *)mt_tensor_data(scratch);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int part = 0; part < parts; part++) {
        int64_t padded = -1; /* the input plane this part's scratch plane holds */
        for (int64_t p = planes * part / parts; p < planes * (part + 1) / parts; p++) {
            const int64_t n = p / g->oc, o = p % g->oc, plane = n * g->c + o / m;
            const float *xp = x + plane * g->h * g->w, *wp = w + o * taps;
            const float b = bias ? bias[o * bias_stride] : 0.0f;
            if (fast) {
                /* the m output planes of one input plane share its padded copy (MNIST's first
                 * layer, 1 -> 32: padded once, not 32 times) */
                float *pad = pads + part * rows * cols;
                if (plane != padded) {
                    pad_plane(xp, pad, g);
                    padded = plane;
                }
                dw_nchw_plane_fast(pad, wp, b, out + p * g->oh * g->ow, g);
            } else {
                dw_nchw_plane(xp, wp, b, out + p * g->oh * g->ow, g);
            }
        }
    }
    mt_tensor_clear(&scratch);
    return MT_OK;
}
