/* Direct convolution for float32 with few taps per output: the first layers of CNNs (C = 1 or
 * 3 input channels, 3x3 or 5x5 kernels) and small 3-D convolutions.
 *
 * With K = C/groups*KD*KH*KW taps per output, im2col writes K copies of the input and the gemm
 * it feeds has a tiny inner dimension, so copying and BLAS's packing outweigh the arithmetic
 * (conv2d (32, 3, 32, 32) with 64 3x3 filters: K = 27). Here each output is summed in
 * registers straight from a zero-padded copy of the input:
 *
 *     out[n, o, od, oh, ow] = bias[o] + sum over taps t = (c, kd, kh, kw) of
 *         w[o, t] * xpad[n, g*C/groups + c, od*sd + kd*dd, oh*sh + kh*dh, ow*sw + kw*dw]
 *
 * The padded copy splits each row by the width stride sw into its phases (pad_input), so that
 * the DW outputs ow0 .. ow0+DW-1 of a row read DW adjacent inputs: one vector. A block is doc
 * output channels by rows output rows by DW columns, 16 vectors of accumulators (8 x 2, 4 x 4
 * where a group has 4 output channels or fewer, 1 x 16 where it has one); each tap loads rows
 * input vectors and doc weights and does 16 fused multiply-adds. The weights are packed per block of doc channels, tap
 * by tap, so a tap's doc weights lie side by side.
 *
 * A block's rows are rows of a grid over each output plane: its output rows, or, where there is
 * one (conv1d, which conv2d runs as OH = 1), that row cut into pieces of DW columns (DW further
 * in the input too, whatever the width stride), so that a block's second row is not left empty.
 *
 * The weight's gradient (conv2d's and conv3d's, mt_cpu_conv_direct_weight, at the end) reads the
 * same padded copy: each work item sums grad_output times the input for 4 channels by 6 taps,
 * or, where a group has 48 output channels or more, 64 channels by 6 taps. */
#include <string.h>

#include "cpu/conv.h"
#include "cpu/conv_direct.h"
#include "cpu/iter.h"
#include "cpu/loops.h"

#define DW 16 /* output columns per vector: one AVX-512 register of float */
#define ACC 16 /* accumulator vectors of a block: 8 channels x 2 rows, 4 x 4 or 1 x 16 */
/* Up to this many taps the direct path is taken at any width (im2col + gemm took 2-4x its time
 * on (N, 3..16, 14..64, 14..64) 3x3 and 5x5 and on (8, 4, 16, 16, 16) 3x3x3, one thread). Beyond
 * it, where the rows fill the vectors: at K = 576..2304 on 14x14..56x56 it took 0.5-0.75x of
 * im2col + gemm's time (per image). conv.c's deep-layer rule sends small planes (under 64
 * pixels: 7x7) and, on one thread, strided planes of more than 256 taps to im2col + one gemm
 * over all images instead, which beat this kernel there. */
#define DIRECT_FEW_TAPS 256
/* Most bytes of the padded copy of the input: images go through a chunk at a time */
#define PAD_BYTES (8 << 20)

typedef float vf __attribute__((vector_size(DW * sizeof(float))));
typedef float vh __attribute__((vector_size(DW / 2 * sizeof(float)))); /* half a vector */
typedef int32_t vi __attribute__((vector_size(DW * sizeof(int32_t)))); /* a lane mask */

/* The build is ISO C (-std=c11), under which GCC keeps a * b + c as two roundings and two
 * instructions; the block sums are fused multiply-adds (one rounding, as oneDNN's and BLAS's
 * kernels do), twice the arithmetic a cycle. Every function of the sums has it, as GCC inlines
 * only between functions of the same options. */
#define FUSED __attribute__((optimize("fp-contract=fast")))

bool
mt_cpu_conv_direct_suits(const conv3_geom *g, mt_dtype dt)
{
    const conv_geom *hw = &g->hw;
    const int64_t taps = g->c / hw->groups * g->kd * hw->kh * hw->kw;
    if (dt != MT_FLOAT32 || taps == 0 || hw->n == 0 || hw->oc == 0 || g->od <= 0 || hw->oh <= 0 ||
        hw->ow <= 0) {
        return false;
    }
    /* a 1x1x1 kernel with unit strides and no padding: the gemm reads the input as it lies */
    if (g->kd * hw->kh * hw->kw == 1 && g->sd == 1 && hw->sh == 1 && g->pd + hw->ph + hw->pw == 0) {
        return false;
    }
    /* Few taps: im2col's copies outweigh the arithmetic, whatever the width. Many: the direct
     * kernel still wins where its vectors are mostly full (rows of 8 or fewer share a vector two
     * by two: OW = 7 fills 7 lanes of 8, OW = 4 only 4; a lone row goes in pieces of DW, two
     * to a block) */
    const int64_t piece = hw->oh == 1 && hw->ow > DW / 2 ? 2 * DW : DW;
    const int64_t lanes = hw->ow <= DW / 2 ? DW / 2 : (hw->ow + piece - 1) / piece * piece;
    return taps <= DIRECT_FEW_TAPS || 4 * hw->ow >= 3 * lanes;
}

/* acc[r * doc + o] += the sums of output row r of a block (its first row's inputs at x, the
 * next row's `step` further) for channel o, over the taps t in [c*cs + t0, c*cs + t1) for c <
 * nc (packed weights wp (taps, doc); off[t] tap t's offset in xpad). doc and rows are constants
 * where it is inlined. */
static inline __attribute__((always_inline)) FUSED void
block_sums(const float *x, int64_t step, const int64_t *off, const float *wp, int64_t nc,
           int64_t cs, int64_t t0, int64_t t1, int doc, int rows, vf *acc)
{
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t t = c * cs + t0; t < c * cs + t1; t++) {
            const float *wt = wp + t * doc;
            for (int r = 0; r < rows; r++) {
                vf xv; /* DW adjacent inputs, unaligned */
                memcpy(&xv, x + r * step + off[t], sizeof(xv));
                for (int o = 0; o < doc; o++) {
                    acc[r * doc + o] += wt[o] * xv;
                }
            }
        }
    }
}

typedef struct direct_plan {
    const conv3_geom *g;
    const float *xpad, *wp, *bias; /* bias (OC) dense, or NULL */
    const int64_t *off;
    float *out;
    int64_t pix; /* from an output to the next of its row: 1, or OC in a channels-last out */
    int64_t taps, hp, wpad, dp, cg, ocg, blocks, row_blocks;
    int doc, rows; /* a block's channels and rows: 8 x 2, 4 x 4 for a few channels, 1 x 16 */
    bool narrow;   /* rows of DW / 2 outputs or fewer: narrow_sums, 8 x 4 */
    /* the grid of a plane's outputs the blocks cover: grid_rows rows of grid_cols columns, a
     * grid row istep inputs and ostep outputs after the one before: the output rows (OH, OW,
     * sh * wpad, OW), or where OH = 1 that row in pieces (OW / DW rounded up, DW, DW, DW) */
    int64_t grid_rows, grid_cols, istep, ostep;
    int64_t n0;    /* the image xpad's first holds */
} direct_plan;

/* Work item `item`: image n0 + n, group gi, channel block b, output depth od and grid rows
 * rb*rows .. (rb+1)*rows - 1 (those that exist: the others are summed from what lies past the
 * rows, and dropped), every column. */
typedef struct block {
    const float *x, *wp; /* its first row's inputs in xpad; its channels' packed weights */
    float *out;          /* its first output */
    int64_t nrows, oc0, noc; /* rows that exist, first channel, channels that exist */
    int64_t ochan;           /* from an output channel to the next */
    int64_t left;            /* outputs of the plane from its first output on */
    /* its taps: [c*cs + t0, c*cs + t1) for c < nc, those of the kernel depths that read the
     * input at its output depth (the others read only padding: 4% of the multiply-adds of a
     * 3x3x3 kernel on a depth of 16 with padding 1), or all at once (nc = 1) */
    int64_t nc, cs, t0, t1;
} block;

static inline __attribute__((always_inline)) block
block_of(const direct_plan *p, int64_t item, int doc, int rows)
{
    const conv3_geom *g = p->g;
    const conv_geom *hw = &g->hw;
    int64_t rest = item, rb, od, b, gi;
    if (p->pix == 1) { /* row-major: a channel block's rows one after the other */
        rb = rest % p->row_blocks;
        rest /= p->row_blocks;
        od = rest % g->od;
        rest /= g->od;
    }
    b = rest % p->blocks; /* channels-last: the blocks of the same pixels one after the other */
    rest /= p->blocks;
    gi = rest % hw->groups;
    rest /= hw->groups;
    if (p->pix != 1) {
        rb = rest % p->row_blocks;
        rest /= p->row_blocks;
        od = rest % g->od;
        rest /= g->od;
    }
    const int64_t n = rest, oh = rb * rows;
    block k = {.nrows = p->grid_rows - oh < rows ? p->grid_rows - oh : rows,
               .oc0 = gi * p->ocg + b * doc};
    k.noc = p->ocg - b * doc < doc ? p->ocg - b * doc : doc;
    int64_t lo, hi;
    mt_conv_taps_inside(od, g->sd, g->pd, g->dd, g->d, g->kd, &lo, &hi);
    const int64_t kt = hw->kh * hw->kw; /* taps of a kernel depth */
    const bool all = lo == 0 && hi == g->kd;
    k.nc = all ? 1 : p->cg;
    k.cs = all ? 0 : g->kd * kt;
    k.t0 = all ? 0 : lo * kt;
    k.t1 = all ? p->taps : hi * kt;
    const int64_t plane = hw->oh * hw->ow;
    k.ochan = p->pix == 1 ? g->od * plane : 1;
    k.left = plane - oh * p->ostep;
    k.x = p->xpad + ((n * g->c + gi * p->cg) * p->dp + od * g->sd) * p->hp * p->wpad +
          oh * p->istep;
    k.wp = p->wp + (gi * p->blocks + b) * p->taps * doc;
    k.out = p->pix == 1
                ? p->out + (((p->n0 + n) * hw->oc + k.oc0) * g->od + od) * plane + oh * p->ostep
                : p->out + (((p->n0 + n) * g->od + od) * plane + oh * p->ostep) * hw->oc + k.oc0;
    return k;
}

/* dst[j * pix] = v[j] for j < n: a row's outputs from one vector of sums, side by side (pix 1)
 * or one channel of a channels-last out (pix OC) */
static inline void
store_row(float *dst, const float *v, int64_t n, int64_t pix)
{
    if (pix == 1) {
        memcpy(dst, v, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        dst[j * pix] = v[j];
    }
}

/* The sums of work item `item`, blocks of doc channels x rows rows x DW columns. */
static inline __attribute__((always_inline)) FUSED void
item_sums(const direct_plan *p, int64_t item, int doc, int rows)
{
    const block k = block_of(p, item, doc, rows);
    const int64_t nrows = k.nrows, oc0 = k.oc0, noc = k.noc, ochan = k.ochan;
    const int64_t istep = p->istep, ostep = p->ostep;
    const float *x = k.x, *wp = k.wp;
    float *out = k.out;
    for (int64_t ow0 = 0; ow0 < p->grid_cols; ow0 += DW) {
        vf acc[ACC];
        for (int r = 0; r < rows; r++) {
            for (int o = 0; o < doc; o++) {
                acc[r * doc + o] = (vf){0} + (p->bias && o < noc ? p->bias[oc0 + o] : 0.0f);
            }
        }
        block_sums(x + ow0, istep, p->off, wp, k.nc, k.cs, k.t0, k.t1, doc, rows, acc);
        for (int64_t r = 0; r < nrows; r++) {
            /* the columns of grid row r from ow0 on that exist: DW, fewer at the grid's edge */
            int64_t cols = p->grid_cols - ow0 < DW ? p->grid_cols - ow0 : DW;
            cols = k.left - r * ostep - ow0 < cols ? k.left - r * ostep - ow0 : cols;
            if (p->pix != 1 && cols == DW && noc == doc) {
                /* channels-last, a whole block: each column's doc channels side by side */
                float *dst = out + (r * ostep + ow0) * p->pix;
                for (int j = 0; j < DW; j++) {
                    for (int o = 0; o < doc; o++) {
                        dst[j * p->pix + o] = acc[r * doc + o][j];
                    }
                }
                continue;
            }
            for (int64_t o = 0; o < noc && p->pix == 1 && cols == DW; o++) {
                /* a whole vector: one store, not a libc call (4% of the stem's time) */
                memcpy(out + o * ochan + r * ostep + ow0, &acc[r * doc + o], sizeof(vf));
            }
            for (int64_t o = 0; o < noc && !(p->pix == 1 && cols == DW); o++) {
                store_row(out + o * ochan + (r * ostep + ow0) * p->pix,
                          (const float *)&acc[r * doc + o], cols, p->pix);
            }
        }
    }
}

/* item_sums for rows of at most DW / 2 outputs (7x7 and 8x8 images): two rows share a vector
 * (lanes 0-7 row r, 8-15 row r + 1), blocks of 8 channels x 4 rows. */
static inline __attribute__((always_inline)) FUSED void
narrow_sums(const direct_plan *p, int64_t item)
{
    const conv_geom *hw = &p->g->hw;
    const block k = block_of(p, item, 8, 4);
    const int64_t nrows = k.nrows, oc0 = k.oc0, noc = k.noc, step = p->istep, ochan = k.ochan;
    const float *x = k.x, *wp = k.wp;
    float *out = k.out;
    vf acc[16]; /* acc[pair * 8 + o]: rows 2 * pair and 2 * pair + 1 of channel o */
    for (int v = 0; v < 16; v++) {
        acc[v] = (vf){0} + (p->bias && v % 8 < noc ? p->bias[oc0 + v % 8] : 0.0f);
    }
    for (int64_t t = 0; t < p->taps; t++) {
        const float *wt = wp + t * 8;
        for (int pair = 0; pair < 2; pair++) {
            vh lo, hi; /* DW / 2 adjacent inputs of each of the two rows */
            memcpy(&lo, x + 2 * pair * step + p->off[t], sizeof(lo));
            memcpy(&hi, x + (2 * pair + 1) * step + p->off[t], sizeof(hi));
            const vf xv = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                  13, 14, 15);
            for (int o = 0; o < 8; o++) {
                acc[pair * 8 + o] += wt[o] * xv;
            }
        }
    }
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t o = 0; o < noc; o++) {
            const vf v = acc[r / 2 * 8 + o];
            const vh row = r % 2 ? __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
                                 : __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
            store_row(out + o * ochan + r * hw->ow * p->pix, (const float *)&row, hw->ow, p->pix);
        }
    }
}

MT_SIMD_CLONES FUSED static void
direct_item(const direct_plan *p, int64_t item)
{
    if (p->narrow) {
        narrow_sums(p, item);
    } else if (p->doc == 8) {
        item_sums(p, item, 8, 2);
    } else if (p->doc == 4) {
        item_sums(p, item, 4, 4);
    } else {
        item_sums(p, item, 1, ACC);
    }
}

/* xpad (nimg, C, DP, HP, WP) = x (nimg, C, D, H, W) with pd, ph, pw zeros on each side, each row
 * of WP = sw * wq split by the width stride sw into its phases: padded column j at
 * (j % sw) * wq + j / sw, so that the columns a tap reads at ow = 0, 1, 2, ... lie side by side */
static void
pad_input(const float *x, float *xpad, int64_t nimg, const conv3_geom *g, int64_t dp, int64_t hp,
          int64_t wp)
{
    const conv_geom *hw = &g->hw;
    const int64_t sw = hw->sw, wq = wp / sw;
    const int64_t planes = nimg * g->c * dp;
    const int parts = mt_parallel_parts(planes * hp * wp, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t q = 0; q < planes; q++) {
        const int64_t nc = q / dp, id = q % dp - g->pd;
        float *dst = xpad + q * hp * wp;
        if (id < 0 || id >= g->d) {
            memset(dst, 0, (size_t)(hp * wp) * sizeof(float));
            continue;
        }
        const float *src = x + (nc * g->d + id) * hw->h * hw->w;
        for (int64_t i = 0; i < hp; i++) {
            float *row = dst + i * wp;
            const int64_t ih = i - hw->ph;
            if (ih < 0 || ih >= hw->h) {
                memset(row, 0, (size_t)wp * sizeof(float));
                continue;
            }
            /* phase ph's column q is padded column q*sw + ph: input column q*sw + ph - pw
             * (a strided gather a phase, not a store an element: that was a sixth of the
             * ResNet stem's time) */
            for (int64_t ph = 0; ph < sw && sw > 1; ph++) {
                int64_t lo, hi;
                mt_conv_inside(ph - hw->pw, sw, hw->w, wq, &lo, &hi);
                mt_conv_row4((const char *)(src + ih * hw->w), (char *)(row + ph * wq), ph - hw->pw,
                             sw, lo, hi, wq);
            }
            if (sw > 1) {
                continue;
            }
            memset(row, 0, (size_t)hw->pw * sizeof(float));
            memcpy(row + hw->pw, src + ih * hw->w, (size_t)hw->w * sizeof(float));
            memset(row + wp - hw->pw, 0, (size_t)hw->pw * sizeof(float));
        }
    }
}

/* off[t] = where tap t = (c, kd, kh, kw) reads in xpad (pad_input's layout, planes (DP, HP, WP))
 * at output (0, 0, 0) of channel 0: taps [0, KD*KH*KW) are those of one channel's volume. */
static void
tap_offsets(const conv3_geom *g, int64_t taps, int64_t dp, int64_t hp, int64_t wp, int64_t *off)
{
    const conv_geom *hw = &g->hw;
    for (int64_t t = 0; t < taps; t++) {
        const int64_t kw = t % hw->kw, kh = t / hw->kw % hw->kh, kd = t / (hw->kw * hw->kh) % g->kd;
        const int64_t c = t / (hw->kw * hw->kh * g->kd);
        const int64_t col = kw * hw->dw; /* its phase's row, then its place there */
        off[t] = ((c * dp + kd * g->dd) * hp + kh * hw->dh) * wp + col % hw->sw * (wp / hw->sw) +
                 col / hw->sw;
    }
}

mt_status
mt_cpu_conv_direct(const float *x, const float *w, const float *bias, float *out, bool cl,
                   const conv3_geom *g, mt_device dev)
{
    const conv_geom *hw = &g->hw;
    direct_plan p = {.g = g, .bias = bias, .out = out, .pix = cl ? hw->oc : 1};
    p.cg = g->c / hw->groups;
    p.ocg = hw->oc / hw->groups;
    p.taps = p.cg * g->kd * hw->kh * hw->kw;
    p.narrow = hw->ow <= DW / 2;
    /* one channel a group (depthwise): a block of ACC rows, not 4 rows of 4 channels of which 3 are
     * empty */
    p.doc = p.narrow ? 8 : p.ocg == 1 ? 1 : p.ocg <= 4 ? 4 : 8;
    p.rows = p.narrow ? 4 : ACC / p.doc;
    p.blocks = (p.ocg + p.doc - 1) / p.doc;
    const bool pieces = hw->oh == 1 && !p.narrow; /* one output row: the grid cuts it */
    p.grid_rows = pieces ? (hw->ow + DW - 1) / DW : hw->oh;
    p.grid_cols = pieces ? DW : hw->ow;
    p.row_blocks = (p.grid_rows + p.rows - 1) / p.rows;
    /* the padded input holds every row an output row reads; a row's last vector reads up to
     * DW - 1 columns past its end, a last block up to rows - 1 rows past the last output row
     * (into the next plane, or the zeros after the last image: slack) */
    p.dp = g->d + 2 * g->pd;
    p.hp = hw->h + 2 * hw->ph;
    p.wpad = (hw->w + 2 * hw->pw + hw->sw - 1) / hw->sw * hw->sw; /* sw phases (pad_input) */
    p.istep = pieces ? DW : hw->sh * p.wpad;
    p.ostep = pieces ? DW : hw->ow;
    /* images a chunk at a time, their padded copy within PAD_BYTES */
    const int64_t per_image = g->c * p.dp * p.hp * p.wpad;
    int64_t chunk = PAD_BYTES / (int64_t)sizeof(float) / per_image;
    chunk = chunk < 1 ? 1 : chunk > hw->n ? hw->n : chunk;
    mt_tensor *xpad = NULL, *wpk = NULL, *off = NULL;
    /* past the last image: the grid rows a last block reads beyond the plane's, and a vector */
    const int64_t slack = (p.rows - 1) * p.istep + DW;
    int64_t pad_elems = chunk * per_image + slack,
            pack_elems = hw->groups * p.blocks * p.taps * p.doc;
    mt_status st;
    if ((st = mt_tensor_empty(1, &pad_elems, MT_FLOAT32, dev, &xpad)) ||
        (st = mt_tensor_empty(1, &pack_elems, MT_FLOAT32, dev, &wpk)) ||
        (st = mt_tensor_empty(1, &p.taps, MT_INT64, dev, &off))) {
        goto out_release;
    }
    float *wp = (float *)mt_tensor_data(wpk);
    int64_t *offs = (int64_t *)mt_tensor_data(off);
    /* wp (groups, blocks, taps, doc): channel gi*ocg + b*doc + o of w (OC, taps), 0 past ocg */
    for (int64_t gb = 0; gb < hw->groups * p.blocks; gb++) {
        const int64_t gi = gb / p.blocks, b = gb % p.blocks;
        for (int64_t t = 0; t < p.taps; t++) {
            for (int64_t o = 0; o < p.doc; o++) {
                const int64_t oc = b * p.doc + o;
                wp[(gb * p.taps + t) * p.doc + o] = oc < p.ocg ? w[(gi * p.ocg + oc) * p.taps + t]
                                                               : 0.0f;
            }
        }
    }
    tap_offsets(g, p.taps, p.dp, p.hp, p.wpad, offs);
    p.xpad = (float *)mt_tensor_data(xpad);
    p.wp = wp;
    p.off = offs;
    const int64_t in_image = g->c * g->d * hw->h * hw->w;
    for (p.n0 = 0; p.n0 < hw->n; p.n0 += chunk) {
        const int64_t nimg = p.n0 + chunk < hw->n ? chunk : hw->n - p.n0;
        float *xp = (float *)mt_tensor_data(xpad);
        pad_input(x + p.n0 * in_image, xp, nimg, g, p.dp, p.hp, p.wpad);
        memset(xp + nimg * per_image, 0, (size_t)slack * sizeof(float));
        const int64_t items = nimg * hw->groups * p.blocks * g->od * p.row_blocks;
        const int parts = mt_parallel_parts(items * ACC * hw->ow * p.taps, 65536);
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t i = 0; i < items; i++) {
            direct_item(&p, i);
        }
    }
out_release:
    mt_tensor_clear(&off);
    mt_tensor_clear(&wpk);
    mt_tensor_clear(&xpad);
    return st;
}

/* ---- the weight's gradient ----
 *
 *     gw[o, c, kh, kw] = sum over n, oh, ow of
 *         go[n, o, oh, ow] * xpad[n, g*C/groups + c, oh*sh + kh*dh, ow*sw + kw*dw]
 *
 * (o in group g; conv3d's alike, with taps (kd, kh, kw) and output rows (od, oh), the depth
 * padded too). The taps of a group are taken in gw's order, t = (c, kd, kh, kw), each at its
 * offset in xpad (tap_offsets, as the forward's). A work item sums WG_DOC output channels by
 * WG_TAPS taps in 24 vectors, DW output columns at a time: WG_DOC loads of grad_output and
 * WG_TAPS of the padded input for 24 fused multiply-adds, all in registers; then it adds up each
 * vector's lanes. A row's last vector ends at its end, its lanes that the vector before holds
 * masked off; rows narrower than a vector are copied with zeros after them (gpad), and read past
 * their end in the padded input.
 *
 * By channels (wgrad_oc_item), where a group has 48 output channels or more: grad_output is
 * transposed per chunk to (images, pixels, channels) in gpad, so that the DW lanes of a vector
 * are DW output channels. An item then sums WC_OC channels by WG_TAPS taps in the same 24
 * vectors, a pixel at a time: WC_VEC loads of gpad and WG_TAPS broadcast inputs for 24 fused
 * multiply-adds. Every lane is a sum that exists whatever the rows' width (those by pixels leave
 * 2 lanes of 16 idle on rows of 14 and 28, mask the last vector of a row, and add up the lanes
 * at the end). 1 thread, 8 images: 128 -> 128 on 28x28 21.4 -> 12.5 ms, 256 -> 256 on 14x14
 * 25.5 -> 12.1 ms, 64 -> 64 on 56x56 20.4 -> 13.5 ms.
 *
 * Threads: each takes an equal share of the images, a chunk at a time (its own padded copies,
 * its own sums: no thread waits for another until the end, where the sums are added up); the
 * images left over (7 on 2 threads: 1) go after, the items of each chunk split among them. A chunk's images
 * are few enough that an item's grad_output (WG_DOC channels) stays in L2 for the next item. */

#define WG_DOC 4 /* output channels of an item */
/* taps of an item: 24 vectors of sums, 4 + 6 loads for 24 multiply-adds, the loaded vectors and
 * the sums in 29 registers (8 channels by 3 taps took 1.6x the time: 8 + 3 loads and 24 sums
 * leave too few registers, and the compiler read grad_output from memory in each multiply-add,
 * 27 loads for 24) */
#define WG_TAPS 6
/* wgrad_oc_item's output channels: WC_VEC vectors of DW, by the WG_TAPS taps in 24 vectors of
 * sums (4 + 6 loads for 24 multiply-adds, as wgrad_item's) */
#define WC_VEC 4
#define WC_OC (WC_VEC * DW)
/* Most bytes of grad_output of an item's channels in one chunk of images: within L2 */
#define WG_GO_BYTES (256 << 10)

typedef struct wgrad_plan {
    const conv3_geom *g;
    const int64_t *off; /* tap_offsets of a group's C/groups*KD*KH*KW taps */
    int64_t taps, tgroups, blocks, cg, ocg, dp, hp, wpad, chunk;
    int64_t owp; /* grad_output's row stride as read: OW, or DW for rows copied into gpad */
    int64_t ocp; /* by channels: a group's output channels in gpad, OC/groups rounded up to WC_OC */
    bool by_oc; /* wgrad_oc_item's sums (grad_output transposed into gpad), else wgrad_item's */
} wgrad_plan;

/* One thread's part: a chunk of images in its padded copy, and where its sums go. */
typedef struct wgrad_part {
    const float *xpad; /* the chunk's padded images */
    const float *go; /* its grad_output (rows of owp): the caller's, or gpad (by_oc: gt) */
    float *gpad, *gw; /* gw (OC, taps) */
    int64_t nimg;
    bool first; /* its first chunk: store the sums rather than add them */
} wgrad_part;

/* acc[t * WG_DOC + o] += go row o * the input tap t reads, DW columns at col; with a mask, the
 * inputs' lanes outside keep are zeroed: those the vector before summed, and those past the
 * row's outputs (a zero of gpad would turn an inf or NaN there into NaN) */
static inline __attribute__((always_inline)) FUSED void
wgrad_step(const float *const *gr, const float *xr, const int64_t *off, int64_t col, const vi *keep,
           vf *acc)
{
    vf gv[WG_DOC];
    for (int o = 0; o < WG_DOC; o++) {
        memcpy(&gv[o], gr[o] + col, sizeof(gv[o]));
    }
    for (int t = 0; t < WG_TAPS; t++) {
        vf xv;
        memcpy(&xv, xr + off[t] + col, sizeof(xv));
        if (keep != NULL) {
            xv = (vf)((vi)xv & *keep);
        }
        for (int o = 0; o < WG_DOC; o++) {
            acc[t * WG_DOC + o] += gv[o] * xv;
        }
    }
}

/* What work item `item` sums, in blocks of doc output channels: group gi, block b (channels
 * oc0 .. oc0 + noc that exist), taps t0 .. t0 + nt and the offsets of WG_TAPS of them (those
 * past the last read the first's, their sums dropped). */
typedef struct wgrad_block {
    int64_t gi, b, oc0, noc, t0, nt;
    int64_t off[WG_TAPS];
} wgrad_block;

static inline __attribute__((always_inline)) wgrad_block
wgrad_block_of(const wgrad_plan *p, int64_t item, int64_t doc)
{
    wgrad_block k = {.b = item / p->tgroups % p->blocks, .t0 = WG_TAPS * (item % p->tgroups)};
    k.gi = item / (p->tgroups * p->blocks);
    k.nt = p->taps - k.t0 < WG_TAPS ? p->taps - k.t0 : WG_TAPS;
    k.oc0 = k.gi * p->ocg + k.b * doc;
    k.noc = p->ocg - k.b * doc < doc ? p->ocg - k.b * doc : doc;
    for (int t = 0; t < WG_TAPS; t++) {
        k.off[t] = p->off[k.t0 + (t < k.nt ? t : 0)];
    }
    return k;
}

/* Block k's sums (sums[t * ld + o]: tap t0 + t, channel oc0 + o) into q->gw, stored on q's
 * first chunk, added after */
static void
wgrad_store(const wgrad_plan *p, const wgrad_part *q, const wgrad_block *k, const float *sums,
            int64_t ld)
{
    for (int64_t t = 0; t < k->nt; t++) {
        for (int64_t o = 0; o < k->noc; o++) {
            float *dst = q->gw + (k->oc0 + o) * p->taps + k->t0 + t;
            *dst = q->first ? sums[t * ld + o] : *dst + sums[t * ld + o];
        }
    }
}

/* Work item `item` of part q: group gi, channel block b, taps WG_TAPS * tg on (those that exist:
 * the others repeat the first's sums, dropped), over q's images. */
MT_SIMD_CLONES FUSED static void
wgrad_item(const wgrad_plan *p, const wgrad_part *q, int64_t item)
{
    const conv3_geom *g = p->g;
    const conv_geom *hw = &g->hw;
    const wgrad_block k = wgrad_block_of(p, item, WG_DOC);
    const int64_t gi = k.gi, oc0 = k.oc0, noc = k.noc;
    const int64_t *off = k.off;
    const int64_t plane = g->od * hw->oh * p->owp, last = p->owp - DW;
    vi keep; /* the lanes of a row's last vector that are outputs the others do not hold */
    for (int l = 0; l < DW; l++) {
        keep[l] = last + l >= (last + DW - 1) / DW * DW && last + l < hw->ow ? -1 : 0;
    }
    vf acc[WG_TAPS * WG_DOC] = {{0}};
    for (int64_t n = 0; n < q->nimg; n++) {
        const float *xg = q->xpad + (n * g->c + gi * p->cg) * p->dp * p->hp * p->wpad;
        const float *gr[WG_DOC];
        for (int o = 0; o < WG_DOC; o++) { /* channels past the group's: its first again */
            gr[o] = q->go + (n * hw->oc + oc0 + (o < noc ? o : 0)) * plane;
        }
        for (int64_t od = 0; od < g->od; od++) {
            for (int64_t oh = 0; oh < hw->oh; oh++) {
                const float *xr = xg + (od * g->sd * p->hp + oh * hw->sh) * p->wpad;
                for (int64_t col = 0; col < last; col += DW) {
                    wgrad_step(gr, xr, off, col, NULL, acc);
                }
                wgrad_step(gr, xr, off, last, &keep, acc);
                for (int o = 0; o < WG_DOC; o++) {
                    gr[o] += p->owp;
                }
            }
        }
    }
    float sums[WG_TAPS * WG_DOC]; /* each vector's lanes added up */
    for (int v = 0; v < WG_TAPS * WG_DOC; v++) {
        sums[v] = 0.0f;
        for (int l = 0; l < DW; l++) {
            sums[v] += acc[v][l];
        }
    }
    wgrad_store(p, q, &k, sums, WG_DOC);
}

/* Work item `item` of part q by channels: group gi, WC_OC output channels from b * WC_OC (those
 * past the group's are gt's zeros, dropped), taps WG_TAPS * tg on (as wgrad_item's), over q's
 * images. gt (images, pixels, groups * ocp) is grad_output transposed (transpose_go): at each
 * output pixel, WC_OC / DW vector loads of gt and WG_TAPS broadcast inputs for 24 fused
 * multiply-adds, every lane a channel (no mask whatever the row's width, no sum of lanes). */
MT_SIMD_CLONES FUSED static void
wgrad_oc_item(const wgrad_plan *p, const wgrad_part *q, int64_t item)
{
    const conv3_geom *g = p->g;
    const conv_geom *hw = &g->hw;
    const wgrad_block k = wgrad_block_of(p, item, WC_OC);
    const int64_t gi = k.gi, b = k.b;
    const int64_t *off = k.off;
    const int64_t width = hw->groups * p->ocp, pixels = g->od * hw->oh * hw->ow;
    vf acc[WG_TAPS * WC_VEC] = {{0}}; /* acc[t * WC_VEC + v]: tap t, channels v * DW .. + DW */
    for (int64_t n = 0; n < q->nimg; n++) {
        const float *xg = q->xpad + (n * g->c + gi * p->cg) * p->dp * p->hp * p->wpad;
        const float *gp = q->go + n * pixels * width + gi * p->ocp + b * WC_OC;
        for (int64_t od = 0; od < g->od; od++) {
            for (int64_t oh = 0; oh < hw->oh; oh++) {
                const float *xr = xg + (od * g->sd * p->hp + oh * hw->sh) * p->wpad;
                for (int64_t ow = 0; ow < hw->ow; ow++, gp += width) {
                    vf gv[WC_VEC]; /* one load each (a memcpy of all four went through the stack) */
                    for (int v = 0; v < WC_VEC; v++) {
                        memcpy(&gv[v], gp + v * DW, sizeof(vf));
                    }
                    for (int t = 0; t < WG_TAPS; t++) {
                        const float xv = xr[off[t] + ow];
                        for (int v = 0; v < WC_VEC; v++) {
                            acc[t * WC_VEC + v] += xv * gv[v];
                        }
                    }
                }
            }
        }
    }
    /* out of the registers in one go: indexing acc by lane kept it in memory, stored at every
     * pixel */
    float sums[WG_TAPS][WC_OC];
    memcpy(sums, acc, sizeof(sums));
    wgrad_store(p, q, &k, (const float *)sums, WC_OC);
}

// go (nimg, OC, pixels) -> gt (nimg, pixels, groups, ocp): group gi's channels, then zeros up to
// ocp; a block of DW pixels at a time (DW rows of gt written while go is read along its rows)
static void
transpose_go(const wgrad_plan *p, const float *go, float *gt, int64_t nimg)
{
    const conv_geom *hw = &p->g->hw;
    const int64_t pixels = p->g->od * hw->oh * hw->ow, width = hw->groups * p->ocp;
    const int64_t blocks = (pixels + DW - 1) / DW;
    const int parts = mt_parallel_parts(nimg * pixels * width, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t nb = 0; nb < nimg * blocks; nb++) {
        const int64_t n = nb / blocks, p0 = nb % blocks * DW;
        const int64_t np = pixels - p0 < DW ? pixels - p0 : DW;
        float *dst = gt + (n * pixels + p0) * width;
        for (int64_t gi = 0; gi < hw->groups; gi++) {
            for (int64_t o = 0; o < p->ocp; o++) {
                const float *src = go + (n * hw->oc + gi * p->ocg + o) * pixels + p0;
                for (int64_t j = 0; j < np; j++) {
                    dst[j * width + gi * p->ocp + o] = o < p->ocg ? src[j] : 0.0f;
                }
            }
        }
    }
}

/* dst (rows, owp) = src (rows, ow), each row's last owp - ow zeros */
static void
pad_rows(const float *src, float *dst, int64_t rows, int64_t ow, int64_t owp)
{
    const int parts = mt_parallel_parts(rows * owp, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        memcpy(dst + r * owp, src + r * ow, (size_t)ow * sizeof(float));
        memset(dst + r * owp + ow, 0, (size_t)(owp - ow) * sizeof(float));
    }
}

/* Images [n0, n0 + nimg) of x into q's padded copy (and of go into gpad, for narrow rows), then
 * every item's sums into q->gw: the items split among `threads` (1 inside a thread's share of
 * the images). */
static void
wgrad_chunk(const wgrad_plan *p, wgrad_part *q, const float *x, const float *go, int64_t n0,
            int64_t nimg, int threads)
{
    const conv3_geom *g = p->g;
    const conv_geom *hw = &g->hw;
    const int64_t rows = g->od * hw->oh;
    q->nimg = nimg;
    q->go = go + n0 * hw->oc * rows * hw->ow;
    pad_input(x + n0 * g->c * g->d * hw->h * hw->w, (float *)q->xpad, nimg, g, p->dp, p->hp,
              p->wpad);
    if (p->by_oc) {
        transpose_go(p, q->go, q->gpad, nimg);
        q->go = q->gpad;
    } else if (q->gpad != NULL) {
        pad_rows(q->go, q->gpad, nimg * hw->oc * rows, hw->ow, p->owp);
        q->go = q->gpad;
    }
    const int64_t items = hw->groups * p->blocks * p->tgroups;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t i = 0; i < items; i++) {
        if (p->by_oc) {
            wgrad_oc_item(p, q, i);
        } else {
            wgrad_item(p, q, i);
        }
    }
    q->first = false;
}

/* Whether wgrad_oc_item takes a group of ocg output channels: 48 or more, filling 3/4 of the
 * lanes of its blocks of WC_OC or more */
static bool
wgrad_by_channels(int64_t ocg)
{
    return 4 * ocg >= 3 * ((ocg + WC_OC - 1) / WC_OC * WC_OC);
}

bool
mt_cpu_conv_direct_weight_suits(const conv3_geom *g, mt_dtype dt)
{
    const conv_geom *hw = &g->hw;
    if (dt != MT_FLOAT32 || hw->n <= 0 || hw->oc <= 0 || g->c / hw->groups <= 0 || g->od <= 0 ||
        hw->oh <= 0 || hw->ow <= 0) {
        return false;
    }
    /* a 1x1 kernel with unit strides and no padding: the gemm reads the input as it lies */
    if (g->kd * hw->kh * hw->kw == 1 && g->sd * hw->sh * hw->sw == 1 &&
        g->pd + hw->ph + hw->pw == 0) {
        return false;
    }
    /* vectors mostly full; with strides, few taps only (64 -> 128 3x3/2 on 56x56 took 1.1x of
     * im2col + gemm's time, the ResNet stem's 3 -> 64 7x7/2 0.55x) */
    const bool strided = g->sd > 1 || hw->sh > 1 || hw->sw > 1;
    return 4 * hw->ow >= 3 * ((hw->ow + DW - 1) / DW * DW) &&
           (!strided || g->c / hw->groups * g->kd * hw->kh * hw->kw <= DIRECT_FEW_TAPS);
}

mt_status
mt_cpu_conv_direct_weight(const float *x, const float *go, float *gw, const conv3_geom *g,
                          mt_device dev)
{
    const conv_geom *hw = &g->hw;
    wgrad_plan p = {.g = g};
    p.cg = g->c / hw->groups;
    p.ocg = hw->oc / hw->groups;
    p.taps = p.cg * g->kd * hw->kh * hw->kw;
    p.tgroups = (p.taps + WG_TAPS - 1) / WG_TAPS;
    p.ocp = (p.ocg + WC_OC - 1) / WC_OC * WC_OC;
    p.by_oc = wgrad_by_channels(p.ocg);
    p.blocks = p.by_oc ? p.ocp / WC_OC : (p.ocg + WG_DOC - 1) / WG_DOC;
    p.dp = g->d + 2 * g->pd;
    p.hp = hw->h + 2 * hw->ph;
    p.wpad = (hw->w + 2 * hw->pw + hw->sw - 1) / hw->sw * hw->sw; /* sw phases (pad_input) */
    p.owp = hw->ow < DW ? DW : hw->ow;
    /* `parts` equal shares of the images apart, one a thread; the images left over (fewer than
     * the threads), or all of a batch smaller than the threads, with each chunk's items split
     * among them */
    const int64_t per_image = g->c * p.dp * p.hp * p.wpad, rows = g->od * hw->oh;
    /* an item's grad_output of one image, as it reads it: gt's WC_OC lanes of each pixel, or
     * WG_DOC rows of owp */
    const int64_t item_go = p.by_oc ? WC_OC * rows * hw->ow : WG_DOC * rows * p.owp;
    const int threads = mt_parallel_parts(hw->n * hw->groups * p.blocks * p.tgroups * WG_TAPS *
                                              item_go,
                                          65536);
    const int parts = hw->n >= threads ? threads : 1;
    const int64_t share = hw->n / parts;
    const int64_t go_chunk = WG_GO_BYTES / (item_go * (int64_t)sizeof(float));
    p.chunk = PAD_BYTES / (int64_t)sizeof(float) / per_image;
    p.chunk = p.chunk < go_chunk ? p.chunk : go_chunk;
    p.chunk = p.chunk < 1 ? 1 : p.chunk > share ? share : p.chunk;
    mt_tensor *xpad = NULL, *gpad = NULL, *off = NULL;
    /* xpad holds each part's padded images, then the sums of the parts after the first; a row's
     * last vector reads up to DW - 1 columns past the row: past a part's last, slack */
    const int64_t pad_part = p.chunk * per_image + DW;
    const int64_t gpad_part = p.chunk * rows *
                              (p.by_oc ? hw->groups * p.ocp * hw->ow : hw->oc * p.owp);
    const int64_t total = hw->oc * p.taps;
    int64_t pad_elems = parts * pad_part + (parts - 1) * total, gpad_elems = parts * gpad_part;
    mt_status st;
    if ((st = mt_tensor_empty(1, &pad_elems, MT_FLOAT32, dev, &xpad)) ||
        ((p.by_oc || hw->ow < DW) &&
         (st = mt_tensor_empty(1, &gpad_elems, MT_FLOAT32, dev, &gpad))) ||
        (st = mt_tensor_empty(1, &p.taps, MT_INT64, dev, &off))) {
        goto out_release;
    }
    float *sums = (float *)mt_tensor_data(xpad) + parts * pad_part;
    tap_offsets(g, p.taps, p.dp, p.hp, p.wpad, (int64_t *)mt_tensor_data(off));
    p.off = (const int64_t *)mt_tensor_data(off);
    /* part k's sums: gw itself for the first, sums (parts - 1, OC, taps) for the others */
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int k = 0; k < parts; k++) {
        float *xp = (float *)mt_tensor_data(xpad) + k * pad_part;
        wgrad_part q = {.xpad = xp,
                        .gpad = gpad ? (float *)mt_tensor_data(gpad) + k * gpad_part : NULL,
                        .gw = k == 0 ? gw : sums + (k - 1) * total,
                        .first = true};
        memset(xp + p.chunk * per_image, 0, DW * sizeof(float));
        for (int64_t n0 = k * share; n0 < (k + 1) * share; n0 += p.chunk) {
            const int64_t nimg = n0 + p.chunk < (k + 1) * share ? p.chunk : (k + 1) * share - n0;
            wgrad_chunk(&p, &q, x, go, n0, nimg, parts > 1 ? 1 : threads);
        }
    }
    /* the images left over, into part 0's sums (which its share has begun) */
    wgrad_part q0 = {.xpad = (float *)mt_tensor_data(xpad),
                     .gpad = gpad ? (float *)mt_tensor_data(gpad) : NULL,
                     .gw = gw};
    for (int64_t n0 = parts * share; n0 < hw->n; n0 += p.chunk) {
        const int64_t nimg = n0 + p.chunk < hw->n ? p.chunk : hw->n - n0;
        wgrad_chunk(&p, &q0, x, go, n0, nimg, threads);
    }
    /* the other parts' sums added into gw, in order, split among the threads by elements */
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int k = 0; k < parts; k++) {
        const int64_t e0 = total * k / parts, e1 = total * (k + 1) / parts;
        for (int j = 1; j < parts; j++) {
            const float *s = sums + (j - 1) * total;
            for (int64_t e = e0; e < e1; e++) {
                gw[e] += s[e];
            }
        }
    }
out_release:
    mt_tensor_clear(&off);
    mt_tensor_clear(&gpad);
    mt_tensor_clear(&xpad);
    return st;
}
