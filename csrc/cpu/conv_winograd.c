/* conv2d by Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015) on row-major float32, for the layers conv.c and the
 * input gradient of conv_backward.c send here: 3x3 taps, unit strides and dilation, one group,
 * where it pays (mt_cpu_conv_winograd_suits).
 *
 * Each 2x2 block of outputs (a tile) of channel o reads a 4x4 block d of each input channel c
 * (zeros in the padding) and
 *
 *     out tile = A^T [ sum over c of (G w[o, c] G^T) * (B^T d B) ] A   (* elementwise, 4x4)
 *
 *     B^T = | 1  0 -1  0 |    G = | 1    0    0   |    A^T = | 1  1  1  0 |
 *           | 0  1  1  0 |        | 1/2  1/2  1/2 |          | 0  1 -1 -1 |
 *           | 0 -1  1  0 |        | 1/2 -1/2  1/2 |
 *           | 0  1  0 -1 |        | 0    0    1   |
 *
 * The sum over c at each of the 16 positions xi of the 4x4 is a matrix product: with
 * U[xi] (OC, C) the transformed weights and V[xi] (C, T) the transformed tiles of all T tiles of
 * all images, M[xi] (OC, T) = U[xi] @ V[xi], 16 gemms of K = C. That is 16 products a tile
 * where im2col + gemm makes 36 (4 outputs x 9 taps): on 512 -> 512 3x3 on 7x7 (8 images, 8x8
 * of tiles covering 7x7) 1.07 GFLOP where im2col's gemm is 1.85, and with no im2col.
 * The transforms add and halve; their rounding is that of a few more additions per term.
 * The kernel only computes: the checks and the geometry are the front end's (ops/conv_checks.c). */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/conv.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "core/threads.h"

/* fused multiply-adds in the transforms are free to form under -std=c11 */
#define FUSED __attribute__((optimize("fp-contract=fast")))
/* The transforms' short copies (a row's part of a vector, 12 of 16 lanes on a 56-wide plane) as
 * masked vector moves, not memcpy calls (GCC turns a copy loop into one): 4% of 64 -> 64 on 56x56
 * was in memmove */
#define NO_MEMCPY_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#define WL 16 /* lanes of the transforms' vectors: one AVX-512 register of float */
typedef float vw __attribute__((vector_size(WL * sizeof(float))));
/* Most bytes of v and m together for one chunk of tiles: they stay in L2 between the transforms
 * and the gemms */
#define WINO_CHUNK_BYTES (2 << 20)
/* but at least this many tiles a chunk: gemms of fewer columns run slower */
#define WINO_MIN_TILES 128
/* conv.c's deep layer (CONV_DEEP_TAPS) on a small plane (CONV_SMALL_PLANE), where im2col's
 * gemm took 21.4 ms on 512 -> 512 3x3 on 7x7 (8 images) and this 16.4-19.2, one thread */
#define WINO_MIN_TAPS 256
#define WINO_SMALL_PLANE 64

/* Whether the products of g's tiles with its 3x3 taps pay for the transforms: more than 256
 * taps (3 -> 64 and 32 -> 32 were faster through the direct kernel: 32 -> 32 on 32x32 took
 * 1.79 ms where it took 1.66) and at least 64 output channels, or a small plane. One thread, the
 * best of 8 on the loaded machine, ms, Winograd / the direct kernel / PyTorch: 64 -> 64 on 56x56
 * (8 images) 15.0 / 22.2 / 17.8, 128 -> 128 on 28x28 13.1 / 19.6 / 16.9, 256 -> 256 on 14x14
 * 13.3 / 19.5 / 15.8, 32 -> 64 on 32x32 2.8 / 3.1 / 5.9. */
bool
mt_cpu_conv_winograd_suits(const conv_geom *g, mt_dtype dt)
{
    const int64_t tiles = g->n * ((g->oh + 1) / 2) * ((g->ow + 1) / 2);
    if (!(dt == MT_FLOAT32 && g->groups == 1 && g->kh == 3 && g->kw == 3 && g->sh == 1 &&
          g->sw == 1 && g->dh == 1 && g->dw == 1 && tiles > 0 && tiles <= INT32_MAX &&
          g->c * 9 > WINO_MIN_TAPS)) {
        return false;
    }
    return g->oc >= 64 || g->oh * g->ow < WINO_SMALL_PLANE;
}

// w (OC, C, 3, 3) -> u (16, OC, C): u[xi][o, c] = (G w[o, c] G^T)[xi], WL input channels at a
// time: their taps gathered first (k[tap][lane]), so that the transform and the 16 stores are
// each one vector over the lanes (a channel at a time, with its 9 taps 9 floats apart and its 16
// results C apart, took 9 ms of a 24 ms call on 512 -> 512). With flip, w is (C, OC, 3, 3), the
// weight of the convolution whose input's gradient this one is: read with its channels swapped
// and its taps reversed.
static MT_SIMD_CLONES FUSED void
weight_transform(const float *w, float *u, int64_t oc, int64_t c, bool flip)
{
    const int64_t plane = oc * c, so = flip ? 9 : c * 9, si = flip ? oc * 9 : 9;
    const int parts = mt_parallel_parts(plane * 16, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t o = 0; o < oc; o++) {
        for (int64_t i0 = 0; i0 < c; i0 += WL) {
            const int lanes = c - i0 < WL ? (int)(c - i0) : WL;
            float k[9][WL] = {{0}}, t[4][3][WL], r[16][WL];
            for (int l = 0; l < lanes; l++) {
                for (int j = 0; j < 9; j++) {
                    k[j][l] = w[o * so + (i0 + l) * si + (flip ? 8 - j : j)];
                }
            }
            for (int j = 0; j < 3; j++) { /* G w: rows of the kernel combined */
                for (int l = 0; l < WL; l++) {
                    t[0][j][l] = k[j][l];
                    t[1][j][l] = 0.5f * (k[j][l] + k[3 + j][l] + k[6 + j][l]);
                    t[2][j][l] = 0.5f * (k[j][l] - k[3 + j][l] + k[6 + j][l]);
                    t[3][j][l] = k[6 + j][l];
                }
            }
            for (int q = 0; q < 4; q++) { /* (G w) G^T: its columns combined alike */
                for (int l = 0; l < WL; l++) {
                    r[4 * q + 0][l] = t[q][0][l];
                    r[4 * q + 1][l] = 0.5f * (t[q][0][l] + t[q][1][l] + t[q][2][l]);
                    r[4 * q + 2][l] = 0.5f * (t[q][0][l] - t[q][1][l] + t[q][2][l]);
                    r[4 * q + 3][l] = t[q][2][l];
                }
            }
            for (int xi = 0; xi < 16; xi++) {
                float *at = u + xi * plane + o * c + i0;
                if (lanes == WL) { /* a vector store (a loop of `lanes` became a memcpy call) */
                    for (int l = 0; l < WL; l++) {
                        at[l] = r[xi][l];
                    }
                    continue;
                }
                for (int l = 0; l < lanes; l++) {
                    at[l] = r[xi][l];
                }
            }
        }
    }
}

/* Where tile t = (n, ty, tx) lies: its image and the output row and column of its top left */
typedef struct tile {
    int64_t n, y, x; /* y = 2*ty, x = 2*tx */
} tile;

// x (N, C, H, W) -> v (16, C, nt) for the nt tiles of the rows of tiles [r0, r0 + nt/tw) (row
// r: image r / th, ty = r % th), its channels [c0, c1): v[xi][c, t] = (B^T d B)[xi], d the 4x4 block of channel c that
// tile t reads from row 2*ty - ph and column 2*tx - pw on, 0 outside. WL tiles of a row at a
// time: the 4 input rows they read copied first (row[r][2*l + q] = d[r][q] of tile l, zeros in
// the padding), then the transform and the stores (contiguous in t) are vectors over the lanes.
static MT_SIMD_CLONES NO_MEMCPY_CALLS void
input_transform(const float *x, float *v, const conv_geom *g, int64_t th, int64_t tw, int64_t r0,
                int64_t nt, int64_t c0, int64_t c1)
{
    const int64_t plane = g->c * nt, hw = g->h * g->w;
    for (int64_t c = c0; c < c1; c++) {
        for (int64_t t0 = 0; t0 < nt; t0 += tw) {
            const int64_t n = (r0 + t0 / tw) / th, ty = (r0 + t0 / tw) % th;
            const float *src = x + (n * g->c + c) * hw;
            for (int64_t tx0 = 0; tx0 < tw; tx0 += WL) {
                const int lanes = tw - tx0 < WL ? (int)(tw - tx0) : WL, cols = 2 * lanes + 2;
                const int64_t iw0 = 2 * tx0 - g->pw;
                float row[4][2 * WL + 2] = {{0}};
                for (int r = 0; r < 4; r++) {
                    const int64_t ih = 2 * ty + r - g->ph;
                    if (ih < 0 || ih >= g->h) {
                        continue;
                    }
                    const float *in = src + ih * g->w + iw0;
                    if (iw0 >= 0 && iw0 + cols <= g->w) { /* inside: no checks */
                        for (int s = 0; s < cols; s++) {
                            row[r][s] = in[s];
                        }
                        continue;
                    }
                    for (int s = 0; s < cols; s++) {
                        row[r][s] = iw0 + s >= 0 && iw0 + s < g->w ? in[s] : 0.0f;
                    }
                }
                vw d[4][4]; /* d[r][q] lane l: row[r][2*l + q], the even and odd columns */
                for (int r = 0; r < 4; r++) {
                    vw a[4];
                    for (int k = 0; k < 4; k++) { /* columns 0-15, 16-31, 2-17, 18-33 */
                        memcpy(&a[k], row[r] + k % 2 * WL + k / 2 * 2, sizeof(vw));
                    }
                    for (int k = 0; k < 2; k++) {
                        d[r][2 * k] = __builtin_shufflevector(a[2 * k], a[2 * k + 1], 0, 2, 4, 6, 8,
                                                              10, 12, 14, 16, 18, 20, 22, 24, 26,
                                                              28, 30);
                        d[r][2 * k + 1] = __builtin_shufflevector(a[2 * k], a[2 * k + 1], 1, 3, 5,
                                                                  7, 9, 11, 13, 15, 17, 19, 21, 23,
                                                                  25, 27, 29, 31);
                    }
                }
                vw b[4][4];
                for (int q = 0; q < 4; q++) { /* B^T d: rows combined */
                    b[0][q] = d[0][q] - d[2][q];
                    b[1][q] = d[1][q] + d[2][q];
                    b[2][q] = d[2][q] - d[1][q];
                    b[3][q] = d[1][q] - d[3][q];
                }
                float *at = v + c * nt + t0 + tx0;
                for (int r = 0; r < 4; r++) { /* (B^T d) B: columns combined alike */
                    const vw e[4] = {b[r][0] - b[r][2], b[r][1] + b[r][2], b[r][2] - b[r][1],
                                     b[r][1] - b[r][3]};
                    for (int k = 0; k < 4; k++) {
                        float *dst = at + (4 * r + k) * plane;
                        if (lanes == WL) {
                            memcpy(dst, &e[k], sizeof(vw));
                            continue;
                        }
                        for (int l = 0; l < lanes; l++) {
                            dst[l] = e[k][l];
                        }
                    }
                }
            }
        }
    }
}

// m (16, OC, T) -> out (N, OC, OH, OW), channels [o0, o1): out tile t of channel o = bias[o] + A^T m[.][o, t] A,
// its rows and columns past OH and OW dropped; the T tiles are whole rows of TW = OW/2 (rounded
// up) tiles. WL tiles of a row at a time: the loads (contiguous in t; lanes past the row's end
// read on and are dropped) and the transform vectors over the lanes, then each of the two output rows they make
// stored as one run of 2*WL columns (a store a tile's element took a third of the transform's
// time on 64 -> 64 on 56x56).
static MT_SIMD_CLONES NO_MEMCPY_CALLS void
output_transform(const float *m, const float *bias, int64_t bias_stride, float *out, const tile *tl,
                 int64_t tiles, const conv_geom *g, int64_t o0, int64_t o1)
{
    const int64_t plane = g->oc * tiles, ohw = g->oh * g->ow, tw = (g->ow + 1) / 2;
    for (int64_t o = o0; o < o1; o++) {
        const float add = bias ? bias[o * bias_stride] : 0.0f;
        for (int64_t t0 = 0; t0 < tiles; t0 += tw) { /* a row of tiles */
            float *dst = out + (tl[t0].n * g->oc + o) * ohw + tl[t0].y * g->ow;
            const int nrows = tl[t0].y + 1 < g->oh ? 2 : 1;
            for (int64_t tx0 = 0; tx0 < tw; tx0 += WL) {
                const float *at = m + o * tiles + t0 + tx0;
                /* mv[xi] lane l: m[xi][o, tile tx0 + l]; lanes past the row read what follows
                 * (the next row's tiles, or the slack after m) and are never stored */
                vw mv[16];
                for (int xi = 0; xi < 16; xi++) {
                    memcpy(&mv[xi], at + xi * plane, sizeof(vw));
                }
                vw r[2][4];
                for (int q = 0; q < 4; q++) { /* A^T m: rows combined */
                    r[0][q] = mv[q] + mv[4 + q] + mv[8 + q];
                    r[1][q] = mv[4 + q] - mv[8 + q] - mv[12 + q];
                }
                const int64_t cols = g->ow - 2 * tx0 < 2 * WL ? g->ow - 2 * tx0 : 2 * WL;
                for (int i = 0; i < nrows; i++) { /* (A^T m) A, its two columns interleaved */
                    const vw even = add + r[i][0] + r[i][1] + r[i][2];
                    const vw odd = add + r[i][1] - r[i][2] - r[i][3];
                    const vw lo = __builtin_shufflevector(even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4,
                                                          20, 5, 21, 6, 22, 7, 23);
                    const vw hi = __builtin_shufflevector(even, odd, 8, 24, 9, 25, 10, 26, 11, 27,
                                                          12, 28, 13, 29, 14, 30, 15, 31);
                    float *row = dst + i * g->ow + 2 * tx0; /* output row 2*ty + i */
                    if (cols == 2 * WL) { /* two vector stores */
                        memcpy(row, &lo, sizeof(vw));
                        memcpy(row + WL, &hi, sizeof(vw));
                        continue;
                    }
                    for (int64_t j = 0; j < cols; j++) {
                        row[j] = j < WL ? lo[j] : hi[j - WL];
                    }
                }
            }
        }
    }
}

/* The transformed weight kept with the weight's storage (mt_derived) for the next call: a
 * layer's forward runs again and again on one weight at inference, and its transform took 2.5 ms
 * of 17 on 512 -> 512 on 7x7. It holds while the weight is the same view (offset, sizes, strides)
 * of that storage and no in-place write went through any tensor on the storage since (the
 * storage's count of writes, which every version bump adds to: an optimizer step, copy_, out=,
 * a write through `.data`); writes into memory shared with NumPy are seen by no version counter
 * and not by this. Freed with the storage; all kept together hold at most WINO_CACHE_BYTES. The
 * input gradient's flipped transform is not kept: in training the weight changes every step. */
#define WINO_CACHE_BYTES ((int64_t)256 << 20)

typedef struct kept_u {
    mt_derived base; /* first: the storage releases it through base.release */
    int64_t offset, sizes[4], strides[4], bytes;
    long writes;
    float *u; /* (16, OC, C) */
} kept_u;

static atomic_llong kept_bytes;

static void
kept_release(mt_derived *d)
{
    kept_u *k = (kept_u *)d;
    atomic_fetch_sub(&kept_bytes, k->bytes);
    free(k->u);
    free(k);
}

/* wt's storage's kept transform, taken out of it (NULL if none, or another kernel's) */
static kept_u *
kept_take(const mt_tensor *wt)
{
    mt_derived *d = atomic_exchange(&wt->storage->derived, NULL);
    if (d && d->release != kept_release) {
        mt_derived *none = NULL;
        if (!atomic_compare_exchange_strong(&wt->storage->derived, &none, d)) {
            d->release(d);
        }
        return NULL;
    }
    return (kept_u *)d;
}

static bool
kept_fits(const kept_u *k, const mt_tensor *wt, long writes)
{
    bool same = k->offset == wt->offset && k->writes == writes;
    for (int d = 0; d < 4; d++) {
        same = same && k->sizes[d] == wt->sizes[d] && k->strides[d] == wt->strides[d];
    }
    return same;
}

/* A block for wt's transform of n floats, or NULL where the budget or memory runs out */
static kept_u *
kept_new(const mt_tensor *wt, long writes, int64_t n)
{
    const int64_t bytes = n * (int64_t)sizeof(float);
    if (atomic_fetch_add(&kept_bytes, bytes) + bytes > WINO_CACHE_BYTES) {
        atomic_fetch_sub(&kept_bytes, bytes);
        return NULL;
    }
    kept_u *k = malloc(sizeof(*k));
    float *u = aligned_alloc(64, (size_t)(bytes + 63) / 64 * 64);
    if (k == NULL || u == NULL) {
        free(k);
        free(u);
        atomic_fetch_sub(&kept_bytes, bytes);
        return NULL;
    }
    *k = (kept_u){
        .base = {kept_release}, .offset = wt->offset, .bytes = bytes, .writes = writes, .u = u};
    memcpy(k->sizes, wt->sizes, sizeof(k->sizes));
    memcpy(k->strides, wt->strides, sizeof(k->strides));
    return k;
}

/* Puts k back with wt's storage, unless another call put one there meanwhile */
static void
kept_put(const mt_tensor *wt, kept_u *k)
{
    mt_derived *none = NULL;
    if (!atomic_compare_exchange_strong(&wt->storage->derived, &none, &k->base)) {
        kept_release(&k->base);
    }
}

/* What one call shares with its threads: the operands, the geometry, the transformed weight u
 * (16, OC, C) and where each tile lies */
typedef struct wino {
    const float *x, *bias, *u;
    int64_t bias_stride, th, tw;
    float *out;
    const tile *tl;
    const conv_geom *g;
} wino;

/* The part [*lo, *hi) of n that thread me of a team of `team` takes */
static void
share(int64_t n, int me, int team, int64_t *lo, int64_t *hi)
{
    *lo = n * me / team;
    *hi = n * (me + 1) / team;
}

// the nt tiles from t0 on (whole rows of tiles): v (16, C, nt), m (16, OC, nt) the chunk's
// buffers, then into p->out. A team of more than one thread shares each step (channels, the
// 16 gemms, output channels) and waits for all at its end; one thread does it all alone, and
// its gemms, inside a parallel region, run on it alone (blas.c).
static void
chunk_pass(const wino *p, float *v, float *m, int64_t t0, int64_t nt, int me, int team)
{
    const conv_geom *g = p->g;
    int64_t lo, hi;
    share(g->c, me, team, &lo, &hi);
    input_transform(p->x, v, g, p->th, p->tw, t0 / p->tw, nt, lo, hi);
    if (team > 1) {
#pragma omp barrier
    }
    share(16, me, team, &lo, &hi);
    for (int64_t xi = lo; xi < hi; xi++) {
        mt_cpu_gemm_raw(MT_FLOAT32, false, false, (int)g->oc, (int)nt, (int)g->c, 1.0,
                        p->u + xi * g->oc * g->c, (int)g->c, v + xi * g->c * nt, (int)nt, 0.0,
                        m + xi * g->oc * nt, (int)nt);
    }
    if (team > 1) {
#pragma omp barrier
    }
    share(g->oc, me, team, &lo, &hi);
    output_transform(m, p->bias, p->bias_stride, p->out, p->tl + t0, nt, g, lo, hi);
    if (team > 1) {
#pragma omp barrier
    }
}

mt_status
mt_cpu_conv_winograd(const float *x, const float *w, const mt_tensor *wt, const float *bias,
                     int64_t bias_stride, float *out, bool flip, const conv_geom *g)
{
    const int64_t th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, tiles = g->n * th * tw;
    const int threads = mt_get_num_threads();
    /* Whole rows of tiles a chunk, whose v and m stay in one core's L2 (WINO_CHUNK_BYTES) but
     * hold WINO_MIN_TILES at least. With more than one thread and tiles enough for a chunk
     * each, each thread takes chunks of its own (as many chunks as a multiple of the threads:
     * a thread's chunks end in no wait for the others); with fewer, a chunk of them all
     * whose steps the threads share. */
    const int64_t rows = g->n * th, tile_bytes = 16 * (g->c + g->oc) * (int64_t)sizeof(float);
    int64_t chunk = WINO_CHUNK_BYTES / tile_bytes;
    chunk = chunk < WINO_MIN_TILES ? WINO_MIN_TILES : chunk;
    int64_t nchunks = (tiles + chunk - 1) / chunk;
    const bool own = threads > 1 && tiles >= threads * WINO_MIN_TILES;
    if (own) {
        nchunks = (nchunks + threads - 1) / threads * threads;
    }
    int64_t chunk_rows = (rows + nchunks - 1) / nchunks;
    chunk = chunk_rows * tw;
    nchunks = (rows + chunk_rows - 1) / chunk_rows;
    const int bufs = own ? (nchunks < threads ? (int)nchunks : threads) : 1;
    const int64_t nu = g->oc * g->c, nv = g->c * chunk, nm = g->oc * chunk;
    /* the transformed weight: kept with wt's storage if it still holds, else made (and kept) */
    const long writes = wt ? atomic_load(&wt->storage->writes) : 0;
    kept_u *kept = wt ? kept_take(wt) : NULL;
    if (kept && !kept_fits(kept, wt, writes)) {
        kept_release(&kept->base);
        kept = NULL;
    }
    const bool made = kept == NULL;
    if (made && wt) {
        kept = kept_new(wt, writes, 16 * nu);
    }
    /* u (16, OC, C) unless kept, then v (16, C, chunk) and m (16, OC, chunk) for each thread with
     * chunks of its own, then the tiles (3 int64: 6 floats), then WL floats that
     * output_transform's last vector may read past m (lanes it never stores) */
    int64_t numel = 16 * ((kept ? 0 : nu) + bufs * (nv + nm)) + 6 * tiles + WL;
    mt_tensor *work = NULL;
    mt_status st = mt_tensor_empty(1, &numel, MT_FLOAT32, MT_DEVICE_CPU, &work);
    if (st) {
        if (kept) {
            kept_release(&kept->base);
        }
        return st;
    }
    float *u = kept ? kept->u : (float *)mt_tensor_data(work);
    float *vm = kept ? (float *)mt_tensor_data(work) : u + 16 * nu;
    tile *tl = (tile *)(vm + 16 * bufs * (nv + nm)); /* a multiple of 16 floats: 64-byte aligned */
    for (int64_t t = 0; t < tiles; t++) {
        tl[t] = (tile){.n = t / (th * tw), .y = t / tw % th * 2, .x = t % tw * 2};
    }
    if (made) {
        weight_transform(w, u, g->oc, g->c, flip);
    }
    const wino p = {.x = x,
                    .bias = bias,
                    .u = u,
                    .bias_stride = bias_stride,
                    .th = th,
                    .tw = tw,
                    .out = out,
                    .tl = tl,
                    .g = g};
    if (own) {
#pragma omp parallel num_threads(bufs)
        {
            float *v = vm + 16 * omp_get_thread_num() * (nv + nm), *m = v + 16 * nv;
#pragma omp for schedule(dynamic, 1)
            for (int64_t c = 0; c < nchunks; c++) {
                const int64_t t0 = c * chunk;
                chunk_pass(&p, v, m, t0, tiles - t0 < chunk ? tiles - t0 : chunk, 0, 1);
            }
        }
    } else {
        const int team = mt_parallel_parts(16 * (nu + nv + nm), 32768);
#pragma omp parallel num_threads(team)
        for (int64_t t0 = 0; t0 < tiles; t0 += chunk) {
            chunk_pass(&p, vm, vm + 16 * nv, t0, tiles - t0 < chunk ? tiles - t0 : chunk,
                       omp_get_thread_num(), omp_get_num_threads());
        }
    }
    if (kept) {
        kept_put(wt, kept);
    }
    mt_tensor_clear(&work);
    return MT_OK;
}
