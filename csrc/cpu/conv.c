/* conv2d on the CPU: im2col, then one BLAS gemm per image (or chunk of small images) and group
 * (Caffe's layout).
 *
 * For image b, col (C*KH*KW, OH*OW) holds in row (c, kh, kw) what kernel tap (kh, kw) of channel
 * c sees at every output position, 0 where the tap falls in the padding. Then
 * out[b] (OC, OH*OW) = weight (OC, C/groups*KH*KW) @ col, one gemm per group on row blocks of
 * weight and col, written straight into the NCHW output, so nothing is transposed afterwards.
 * Small images (a whole col under CONV_COL_BYTES) go a chunk at a time: their cols side by side,
 * one gemm for the chunk, whose (OC, image, OH*OW) result is copied out with the bias added;
 * im2col and that copy are split among the threads, a gemm of one image is too small to be.
 * A deep layer (many taps on a small or strided plane) comes here rather than to the direct
 * kernel, its small images all in one gemm; a float32 one with 3x3 taps, unit strides and one
 * group on a small plane goes to conv_winograd.c. Depthwise float32 goes to conv_depthwise.c,
 * float32 with few taps or rows that fill vectors to conv_direct.c.
 * A 1x1 kernel with stride 1 and no padding needs no col: the image is its own. Integer dtypes,
 * which no BLAS has, use a plain loop on the same col. The checks and the geometry are the front
 * end's (ops/conv_checks.c). */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/conv.h"
#include "cpu/conv_direct.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* Most bytes of one block of col: the gemm then reads it from L2 rather than from memory
 * (512 KiB measured best for (32, 64, 56, 56) * (64, 64, 3, 3), 15% faster than no blocks). */
#define CONV_COL_BYTES (1 << 19)
/* Most bytes of col and of the gemm's result together for one chunk of a batch of small images
 * (conv_images): big enough that one gemm splits well among the threads, small enough that the
 * copy out of the result reads it from cache. */
#define CONV_BATCH_BYTES (1 << 21)
/* A deep layer: more taps than this (C/groups*KH*KW) on a strided or small output plane. There
 * im2col + gemm beat the direct kernel (conv_direct.c), one thread: 512 -> 512 3x3 on 7x7 (N = 8)
 * took 21.4 ms where it took 26.5 (OpenBLAS's sgemm of that shape alone 19.0); the stride-2
 * ResNet downsamplings 64 -> 128 on 56x56, 128 -> 256 on 28x28, 256 -> 512 on 14x14 took 11.5,
 * 10.4, 10.7 where they took 13.8, 11.7, 13.6. (At stride 1 on 14x14 and above the direct kernel
 * was within 5% of the sgemm's time, or under it.) */
#define CONV_DEEP_TAPS 256
/* An output plane of fewer pixels than this is small: one gemm an image has too few columns
 * (49 at 7x7: 1.2x the time of one gemm for 8 images' columns side by side) */
#define CONV_SMALL_PLANE 64
/* Most bytes of col and of the gemm's result together for one chunk of a deep layer's small
 * images: as many as fit, up to this */
#define CONV_DEEP_BYTES (1 << 25)
/* Fewest multiply-adds of a thread's share of the images for them to go apart (images_apart) */
#define CONV_APART_MACS (1 << 20)


conv_geom
mt_cpu_conv3_flat(const conv3_geom *g)
{
    const conv_geom *p = &g->hw;
    return (conv_geom){.n = p->n,
                       .c = g->c,
                       .oc = p->oc,
                       .kh = g->kd * p->kh,
                       .kw = p->kw,
                       .oh = g->od * p->oh,
                       .ow = p->ow,
                       .groups = p->groups};
}

mt_status
mt_cpu_conv_fits_blas(const conv_geom *g)
{
    int64_t kg = g->c / g->groups * g->kh * g->kw;
    if (g->oc > INT_MAX || g->oh * g->ow > INT_MAX || kg > INT_MAX) {
        return mt_fail(MT_ERUNTIME, "conv2d: sizes exceed what 32-bit BLAS can address");
    }
    return MT_OK;
}


// x (C, H, W) one contiguous image, col (C*KH*KW, (oh1-oh0)*OW) for output rows [oh0, oh1),
// its rows ld elements apart; elements of `item` bytes (4 or 8)
void
mt_cpu_im2col_rows(const char *x, char *col0, int64_t ld, const conv_geom *g, size_t item,
                   int64_t oh0, int64_t oh1)
{
    char *col;
    const int64_t rowbytes = g->ow * (int64_t)item;
    for (int64_t c = 0; c < g->c; c++) {
        for (int64_t i = 0; i < g->kh; i++) {
            for (int64_t j = 0; j < g->kw; j++) {
                int64_t off = j * g->dw - g->pw, lo, hi;
                mt_conv_inside(off, g->sw, g->w, g->ow, &lo, &hi);
                col = col0 + ((c * g->kh + i) * g->kw + j) * ld * (int64_t)item;
                for (int64_t oh = oh0; oh < oh1; oh++, col += rowbytes) {
                    int64_t ih = oh * g->sh + i * g->dh - g->ph;
                    if (ih < 0 || ih >= g->h) {
                        memset(col, 0, (size_t)rowbytes);
                        continue;
                    }
                    /* row ih of channel c; output column ow reads its pixel ow*sw + off */
                    const char *src = x + (c * g->h + ih) * g->w * (int64_t)item;
                    if (item == 4) {
                        mt_conv_row4(src, col, off, g->sw, lo, hi, g->ow);
                    } else {
                        mt_conv_row8(src, col, off, g->sw, lo, hi, g->ow);
                    }
                }
            }
        }
    }
}

// mt_cpu_im2col_rows of one image split among the threads by channels (the rows of col that a
// channel fills are its own): where one image at a time goes, its im2col is not left to one
// thread while the others wait for the gemm
static void
im2col_threaded(const char *x, char *col, int64_t ld, const conv_geom *g, size_t item, int64_t oh0,
                int64_t oh1)
{
    const int parts = mt_parallel_parts(g->c * g->kh * g->kw * (oh1 - oh0) * g->ow, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int p = 0; p < parts; p++) {
        const int64_t c0 = g->c * p / parts, c1 = g->c * (p + 1) / parts;
        conv_geom some = *g;
        some.c = c1 - c0;
        mt_cpu_im2col_rows(x + c0 * g->h * g->w * (int64_t)item,
                           col + c0 * g->kh * g->kw * ld * (int64_t)item, ld, &some, item, oh0,
                           oh1);
    }
}

/* out (m, n) += w (m, k) @ col (k, n), row strides ldc and ldb; integers wrap on overflow
 * (unsigned arithmetic). */
#define INT_GEMM(name, T, U)                                                                 \
    static void name(const void *wv, const void *colv, int64_t ldb, void *outv, int64_t ldc, \
                     int64_t m, int64_t n, int64_t k)                                        \
    {                                                                                        \
        const T *w = (const T *)wv, *col = (const T *)colv;                                  \
        T *out = (T *)outv;                                                                  \
        for (int64_t i = 0; i < m; i++) {                                                    \
            T *o = out + i * ldc;                                                            \
            for (int64_t p = 0; p < k; p++) {                                                \
                const U wip = (U)w[i * k + p];                                               \
                const T *c = col + p * ldb;                                                  \
                for (int64_t j = 0; j < n; j++) {                                            \
                    o[j] = (T)((U)o[j] + wip * (U)c[j]);                                     \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }
INT_GEMM(gemm_int32, int32_t, uint32_t)
INT_GEMM(gemm_int64, int64_t, uint64_t)

/* row[0 .. n) = the element of `item` bytes at v: word loops the compiler vectorises (a memcpy
 * per element was a third of a small-channel forward's time). */
static void
fill_row(char *row, const char *v, int64_t n, size_t item)
{
    if (item == 4) {
        uint32_t w;
        memcpy(&w, v, 4);
        for (int64_t j = 0; j < n; j++) {
            memcpy(row + j * 4, &w, 4);
        }
    } else if (item == 8) {
        uint64_t w;
        memcpy(&w, v, 8);
        for (int64_t j = 0; j < n; j++) {
            memcpy(row + j * 8, &w, 8);
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            memcpy(row + j * (int64_t)item, v, item);
        }
    }
}

/* Every row of out (OC, n), rows ldc apart, starts as its channel's bias, or 0. */
static void
init_rows(char *out, int64_t ldc, const mt_tensor *bias, int64_t oc, int64_t n, size_t item)
{
    const char *b = bias ? mt_tensor_data(bias) : NULL;
    for (int64_t o = 0; o < oc; o++) {
        char *row = out + o * ldc * (int64_t)item;
        if (b == NULL) {
            memset(row, 0, (size_t)n * item);
            continue;
        }
        fill_row(row, b + o * bias->strides[0] * (int64_t)item, n, item);
    }
}

/* Every row of out (n, OC), rows ldc apart, is the bias (OC), or 0: a channels-last result. */
static void
init_cols(char *out, int64_t ldc, const mt_tensor *bias, int64_t oc, int64_t n, size_t item)
{
    const size_t bytes = (size_t)oc * item;
    const char *b = bias ? mt_tensor_data(bias) : NULL;
    for (int64_t o = 0; o < oc && n > 0; o++) { /* the first row; the others copy it */
        if (b == NULL) {
            memset(out, 0, bytes);
            break;
        }
        memcpy(out + o * (int64_t)item, b + o * bias->strides[0] * (int64_t)item, item);
    }
    for (int64_t j = 1; j < n; j++) {
        memcpy(out + j * ldc * (int64_t)item, out, bytes);
    }
}

// out (OC, n) = bias + weight (OC, C/G*KH*KW) @ col (C*KH*KW, n), group by group: n columns
// of an image's OH*OW; the rows of col are ldb apart, those of out ldc apart. With cl (float
// dtypes only) out is (n, OC), a channels-last block: the same gemm with its operands
// transposed, out^T = col^T @ weight^T, so BLAS writes it in that layout.
static void
conv_block(const char *w, const char *col, int64_t ldb, char *out, int64_t ldc, int64_t n,
           const mt_tensor *bias, const conv_geom *g, mt_dtype dt, bool cl)
{
    size_t item = mt_dtype_size(dt);
    int64_t m = g->oc / g->groups, k = g->c / g->groups * g->kh * g->kw;
    bool blas = dt == MT_FLOAT32 || dt == MT_FLOAT64;
    if (cl && (bias || k == 0)) {
        init_cols(out, ldc, bias, g->oc, n, item);
    } else if (bias || !blas || k == 0) {
        init_rows(out, ldc, bias, g->oc, n, item);
    }
    for (int64_t gi = 0; gi < g->groups && k > 0; gi++) {
        const char *wg = w + gi * m * k * (int64_t)item, *cg = col + gi * k * ldb * (int64_t)item;
        char *og = out + gi * m * (cl ? 1 : ldc) * (int64_t)item;
        if (cl) {
            mt_cpu_gemm_raw(dt, true, true, (int)n, (int)m, (int)k, 1.0, cg, (int)ldb, wg, (int)k,
                            bias ? 1.0 : 0.0, og, (int)ldc);
        } else if (blas) {
            mt_cpu_gemm_raw(dt, false, false, (int)m, (int)n, (int)k, 1.0, wg, (int)k, cg, (int)ldb,
                            bias ? 1.0 : 0.0, og, (int)ldc);
        } else if (dt == MT_INT32) {
            gemm_int32(wg, cg, ldb, og, ldc, m, n, k);
        } else {
            gemm_int64(wg, cg, ldb, og, ldc, m, n, k);
        }
    }
}

// tmp (OC, nb, n) -> out (nb, OC, n), plus bias (OC) or NULL, of T
#define SCATTER_ROWS(name, T)                                                                     \
    static void name(const char *tmpv, char *outv, const mt_tensor *bias, int64_t nb, int64_t oc, \
                     int64_t n)                                                                   \
    {                                                                                             \
        const T *tmp = (const T *)tmpv, *b = bias ? (const T *)mt_tensor_data(bias) : NULL;       \
        T *out = (T *)outv;                                                                       \
        const int64_t bs = bias ? bias->strides[0] : 0;                                           \
        const int parts = mt_parallel_parts(nb * oc * n, 32768);                                  \
        _Pragma("omp parallel for num_threads(parts) schedule(static)") for (int64_t r = 0;       \
                                                                             r < nb * oc; r++)    \
        {                                                                                         \
            const int64_t i = r / oc, o = r % oc;                                                 \
            const T *src = tmp + (o * nb + i) * n, add = b ? b[o * bs] : (T)0;                    \
            T *dst = out + r * n;                                                                 \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                   \
            {                                                                                     \
                dst[j] = src[j] + add;                                                            \
            }                                                                                     \
        }                                                                                         \
    }
SCATTER_ROWS(scatter_rows_f32, float)
SCATTER_ROWS(scatter_rows_f64, double)

// x (N, C, H, W) contiguous of float or double, out (N, OC, OH*OW); images [b0, b1): their
// cols side by side in col (C*KH*KW, nb*OH*OW) (im2col split among the threads, an image
// each), one gemm per group into tmp (OC, nb*OH*OW) (OpenBLAS's jobs on the same threads),
// then each image's (OC, OH*OW) of tmp into out with the bias added (split among the threads).
// With no tmp, out is channels-last (N, OH*OW, OC), and the gemm writes the chunk's rows of it.
// No BLAS call runs inside one of our parallel regions (threads.c).
static void
conv_images(const char *x, char *out, const char *w, char *col, char *tmp, int64_t b0, int64_t b1,
            const mt_tensor *bias, const conv_geom *g, mt_dtype dt)
{
    const size_t item = mt_dtype_size(dt);
    const int64_t n = g->oh * g->ow, nb = b1 - b0, in_bytes = g->c * g->h * g->w * (int64_t)item;
    const int parts = mt_parallel_parts(nb * g->c * g->kh * g->kw * n, 32768);
    /* fewer images than threads: each image's split by channels */
    for (int64_t i = 0; i < nb && nb < parts; i++) {
        im2col_threaded(x + (b0 + i) * in_bytes, col + i * n * (int64_t)item, nb * n, g, item, 0,
                        g->oh);
    }
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t i = 0; i < (nb < parts ? 0 : nb); i++) {
        mt_cpu_im2col_rows(x + (b0 + i) * in_bytes, col + i * n * (int64_t)item, nb * n, g, item, 0,
                           g->oh);
    }
    char *o = out + b0 * g->oc * n * (int64_t)item;
    if (tmp == NULL) { /* channels-last: the chunk's (nb*OH*OW, OC) is one block of out */
        conv_block(w, col, nb * n, o, g->oc, nb * n, bias, g, dt, true);
        return;
    }
    conv_block(w, col, nb * n, tmp, nb * n, nb * n, NULL, g, dt, false);
    if (dt == MT_FLOAT32) {
        scatter_rows_f32(tmp, o, bias, nb, g->oc, n);
    } else {
        scatter_rows_f64(tmp, o, bias, nb, g->oc, n);
    }
}

/* The parts the images split into where more than one thread runs: each part a thread's, with
 * its own col, its gemms run by BLAS at one thread (mt_cpu_lapack_begin). Where they split
 * evenly and the work fills the threads, so that no thread waits for another between im2col
 * and the gemm, nor OpenBLAS's threads for each other inside a small gemm (a 1x1 256 -> 64 on
 * 14x14 is a 64x196x256 gemm an image); else 1, and each image's im2col and gemm are split. */
int
mt_cpu_conv_images_apart(const conv_geom *g)
{
    const int64_t macs = g->n * g->oc * (g->c / g->groups) * g->kh * g->kw * g->oh * g->ow;
    const int parts = mt_parallel_parts(macs, CONV_APART_MACS);
    return parts > 1 && g->n % parts == 0 ? parts : 1;
}

/* Whether g is a deep layer (CONV_DEEP_TAPS): im2col + gemm rather than the direct kernel. A
 * strided plane of CONV_SMALL_PLANE pixels or more only where one thread runs each image (one
 * thread, or the images apart): on two threads splitting each image, its im2col and gemm in
 * turn took 9.2 ms on 64 -> 128 3x3/2 on 56x56 where the direct kernel took 6.9 (128 -> 256/2
 * on 28x28: 8.9 and 6.0; wall time, the best of 20 on the loaded machine). */
static bool
deep_layer(const conv_geom *g, int apart)
{
    const bool strided = g->sh > 1 || g->sw > 1;
    return g->c / g->groups * g->kh * g->kw > CONV_DEEP_TAPS &&
           ((strided && (mt_get_num_threads() == 1 || apart > 1)) ||
            g->oh * g->ow < CONV_SMALL_PLANE);
}

// a->out[0] = conv(x, w) + bias (a->t[2]) by the direct kernel (conv_direct.c); x and w dense,
// out row-major, or channels-last with cl
static mt_status
conv_direct(mt_args *a, mt_tensor *x, mt_tensor *w, const conv3_geom *dg, bool cl)
{
    mt_tensor *b = NULL;
    mt_status st = a->t[2] ? mt_cpu_dense(a->t[2], MT_FLOAT32, &b) : MT_OK;
    if (st == MT_OK) {
        st = mt_cpu_conv_direct((const float *)mt_tensor_data(x), (const float *)mt_tensor_data(w),
                                b ? (const float *)mt_tensor_data(b) : NULL,
                                (float *)mt_tensor_data(a->out[0]), cl, dg, mt_tensor_device(x));
    }
    mt_tensor_clear(&b);
    return st;
}

// a->out[0] (N, OH, OW, OC) = conv(x, w) + bias by conv_nhwc.c's direct kernel, or with
// depthwise conv_depthwise.c's, which read x and w channels-last (as they lie in a
// channels-last model; laid out so first otherwise)
static mt_status
conv_nhwc(mt_args *a, bool depthwise)
{
    mt_tensor *x = NULL, *w = NULL, *b = NULL;
    mt_status st = mt_cpu_dense_format(a->t[0], MT_CHANNELS_LAST, &x);
    st = st ? st : mt_cpu_dense_format(a->t[1], MT_CHANNELS_LAST, &w);
    st = st || a->t[2] == NULL ? st : mt_cpu_dense(a->t[2], MT_FLOAT32, &b);
    if (st == MT_OK && depthwise) {
        st = mt_cpu_conv_dw((const float *)mt_tensor_data(x), (const float *)mt_tensor_data(w),
                            b ? (const float *)mt_tensor_data(b) : NULL,
                            (float *)mt_tensor_data(a->out[0]), false, &a->plan->conv);
    } else if (st == MT_OK) {
        st = mt_cpu_conv_nhwc_direct((const float *)mt_tensor_data(x),
                                     (const float *)mt_tensor_data(w),
                                     b ? (const float *)mt_tensor_data(b) : NULL,
                                     (float *)mt_tensor_data(a->out[0]), false, &a->plan->conv);
    }
    mt_tensor_clear(&b);
    mt_tensor_clear(&w);
    mt_tensor_clear(&x);
    return st;
}

// a->out[0] (N, OD, OH, OW, OC) = conv3d(x, w) + bias by conv_nhwc.c's direct kernel, reading x
// and w channels-last-3d (laid out so first where they are not)
static mt_status
conv_ndhwc(mt_args *a)
{
    mt_tensor *x = NULL, *w = NULL, *b = NULL;
    mt_status st = mt_cpu_dense_format(a->t[0], MT_CHANNELS_LAST_3D, &x);
    st = st ? st : mt_cpu_dense_format(a->t[1], MT_CHANNELS_LAST_3D, &w);
    st = st || a->t[2] == NULL ? st : mt_cpu_dense(a->t[2], MT_FLOAT32, &b);
    if (st == MT_OK) {
        st = mt_cpu_conv_ndhwc_direct((const float *)mt_tensor_data(x),
                                      (const float *)mt_tensor_data(w),
                                      b ? (const float *)mt_tensor_data(b) : NULL,
                                      (float *)mt_tensor_data(a->out[0]), &a->plan->conv3);
    }
    mt_tensor_clear(&b);
    mt_tensor_clear(&w);
    mt_tensor_clear(&x);
    return st;
}

/* What every part of mt_cpu_conv2d's im2col + gemm path shares: the dense operands, the
 * layout of col (blocks of `rows` output rows, or chunks of `chunk` images with batch) */
typedef struct conv_share {
    const char *x, *w;
    char *out;
    const mt_tensor *bias;
    const conv_geom *g;
    mt_dtype dt;
    bool own_col, cl, batch;
    int64_t rows, chunk;
} conv_share;

// images [b0, b1) of s->x into s->out by im2col into col (unless the image is its own) and
// gemms: chunk by chunk through conv_images (tmp its result, NULL channels-last) with
// s->batch, else an image and a block of rows at a time
static void
conv_part(const conv_share *s, char *col, char *tmp, int64_t b0, int64_t b1)
{
    const conv_geom *g = s->g;
    const size_t item = mt_dtype_size(s->dt);
    const int64_t n = g->oh * g->ow, in_bytes = g->c * g->h * g->w * (int64_t)item;
    for (int64_t c0 = b0; c0 < b1 && s->batch; c0 += s->chunk) {
        conv_images(s->x, s->out, s->w, col, tmp, c0, c0 + s->chunk < b1 ? c0 + s->chunk : b1,
                    s->bias, g, s->dt);
    }
    for (int64_t b = b0; b < b1 && !s->batch; b++) {
        const char *image = s->x + b * in_bytes;
        char *out_b = s->out + b * g->oc * n * (int64_t)item;
        for (int64_t oh0 = 0; oh0 < g->oh; oh0 += s->rows) {
            int64_t oh1 = oh0 + s->rows < g->oh ? oh0 + s->rows : g->oh, nb = (oh1 - oh0) * g->ow;
            if (s->own_col) {
                im2col_threaded(image, col, nb, g, item, oh0, oh1);
            }
            /* rows [oh0, oh1) of out_b: (OC, nb) rows n apart, or (nb, OC) channels-last */
            conv_block(s->w, s->own_col ? col : image, s->own_col ? nb : n,
                       out_b + oh0 * g->ow * (s->cl ? g->oc : 1) * (int64_t)item, s->cl ? g->oc : n,
                       nb, s->bias, g, s->dt, s->cl);
        }
    }
}

// input (N, C, H, W) or (C, H, W), weight (OC, C/groups, KH, KW), bias (OC) or None;
// out (N, OC, OH, OW) or (OC, OH, OW) row-major, or channels-last (N, OH, OW, OC) as the front
// end states it, written so by the direct kernel and the gemm (the integer loops write
// row-major, which the dispatcher copies into that layout after)
mt_status
mt_cpu_conv2d(mt_args *a)
{
    const conv_geom g = a->plan->conv;
    mt_tensor *x = NULL, *w = NULL, *col = NULL, *tmp = NULL, *out = a->out[0];
    mt_dtype dt = a->t[0]->dtype;
    /* PyTorch's dilated kernel, which runs for any dilation > 1, lacks int32 as well. */
    bool dilated = g.dh > 1 || g.dw > 1;
    if (dt == MT_BOOL || (dilated && dt == MT_INT32)) {
        return mt_fail_not_implemented(dilated ? "slow_conv_dilated<>" : "slow_conv2d_cpu", "", dt);
    }
    mt_status st = mt_cpu_conv_fits_blas(&g);
    if (st || mt_tensor_numel(out) == 0) {
        return st;
    }
    /* channels-last float32 (the stated layout): the NHWC kernels, with no copy into NCHW */
    const bool depthwise = mt_cpu_conv_dw_suits(&g, dt);
    if ((depthwise || mt_cpu_conv_nhwc_direct_suits(&g, dt)) && a->t[1]->dtype == dt &&
        mt_front_take_format(a->plan, a, 0)) {
        return conv_nhwc(a, depthwise);
    }
    size_t item = mt_dtype_size(dt);
    if ((st = mt_cpu_dense(a->t[0], a->t[0]->dtype, &x)) ||
        (st = mt_cpu_dense(a->t[1], a->t[1]->dtype, &w))) {
        goto out_release;
    }
    if (mt_cpu_conv_dw_nchw_suits(&g, dt) && a->t[1]->dtype == dt) { /* row-major out */
        const mt_tensor *b = a->t[2];
        st = mt_cpu_conv_dw_nchw((const float *)mt_tensor_data(x), (const float *)mt_tensor_data(w),
                                 b ? (const float *)mt_tensor_data(b) : NULL, b ? b->strides[0] : 0,
                                 (float *)mt_tensor_data(out), &g);
        goto out_release;
    }
    const conv3_geom dg = {.hw = g, .c = g.c, .d = 1, .kd = 1, .od = 1, .sd = 1, .dd = 1};
    const int apart = mt_cpu_conv_images_apart(&g);
    const bool deep = deep_layer(&g, apart);
    /* Winograd's F(2x2, 3x3): 16 products a tile of 4 outputs where the gemm or the direct
     * kernel makes 36, and no im2col; where it pays (mt_cpu_conv_winograd_suits) */
    if (mt_cpu_conv_winograd_suits(&g, dt) && a->t[1]->dtype == dt) { /* row-major out */
        const mt_tensor *b = a->t[2];
        st = mt_cpu_conv_winograd((const float *)mt_tensor_data(x),
                                  (const float *)mt_tensor_data(w), a->t[1],
                                  b ? (const float *)mt_tensor_data(b) : NULL,
                                  b ? b->strides[0] : 0, (float *)mt_tensor_data(out), false, &g);
        goto out_release;
    }
    if (!deep && mt_cpu_conv_direct_suits(&dg, dt)) {
        st = conv_direct(a, x, w, &dg, mt_front_take_format(a->plan, a, 0));
        goto out_release;
    }
    /* A 1x1 kernel with stride 1 and no padding reads each image as it lies. Otherwise col
     * holds a block of `rows` output rows, small enough to stay in cache for the gemm, or in a
     * deep layer the whole image (blocks of rows made gemms of 224 columns, 1.1x the time). */
    bool own_col = !(g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0);
    const int64_t n = g.oh * g.ow, krows = g.c * g.kh * g.kw;
    int64_t rows = own_col && !deep ? CONV_COL_BYTES / (krows * g.ow * (int64_t)item + 1) : g.oh;
    rows = rows < 1 ? 1 : rows > g.oh ? g.oh : rows;
    /* Images whose whole col fits a block go chunk by chunk through conv_images, with more
     * than one thread: on one, its copy out of the gemm's result costs more than it saves,
     * but for a deep layer's small planes, whose gemm an image is a poor shape. A deep layer's
     * larger planes go an image at a time: a gemm an image fills the threads, and a chunk of
     * one (its col over 1 MiB) would only add the copy. Apart, each part does so with its
     * share of the images. */
    const bool blas = dt == MT_FLOAT32 || dt == MT_FLOAT64;
    const bool small = deep && n < CONV_SMALL_PLANE;
    const int64_t share = g.n / apart;
    int64_t chunk = (small ? CONV_DEEP_BYTES : CONV_BATCH_BYTES) /
                    ((krows + g.oc) * n * (int64_t)item + 1);
    chunk = chunk < 1 ? 1 : chunk > share ? share : chunk;
    /* a channels-last result takes the gemm's output as it comes, with no copy out */
    const bool cl = blas && mt_front_take_format(a->plan, a, 0);
    const bool batch = own_col && blas && rows == g.oh && share > 1 && g.c / g.groups > 0 &&
                       (small || (!deep && (mt_get_num_threads() > 1 || cl)));
    /* part k's col: rows [k*krows, (k+1)*krows); its tmp: rows [k*OC, (k+1)*OC) */
    int64_t col_sizes[2] = {apart * krows, batch ? chunk * n : rows * g.ow};
    int64_t tmp_sizes[2] = {apart * g.oc, chunk * n};
    if ((own_col && g.n > 0 &&
         (st = mt_tensor_empty(2, col_sizes, dt, mt_tensor_device(x), &col))) ||
        (batch && !cl && (st = mt_tensor_empty(2, tmp_sizes, dt, mt_tensor_device(x), &tmp)))) {
        goto out_release;
    }
    const conv_share sh = {.x = mt_tensor_data(x),
                           .w = mt_tensor_data(w),
                           .out = mt_tensor_data(out),
                           .bias = a->t[2],
                           .g = &g,
                           .dt = dt,
                           .own_col = own_col,
                           .cl = cl,
                           .batch = batch,
                           .rows = rows,
                           .chunk = chunk};
    const int blas_threads = apart > 1 ? mt_cpu_lapack_begin() : 1;
#pragma omp parallel for num_threads(apart) schedule(static) if (apart > 1)
    for (int k = 0; k < apart; k++) {
        conv_part(&sh, col ? mt_tensor_data(col) + k * krows * col_sizes[1] * (int64_t)item : NULL,
                  tmp ? mt_tensor_data(tmp) + k * g.oc * tmp_sizes[1] * (int64_t)item : NULL,
                  k * share, (k + 1) * share);
    }
    if (apart > 1) {
        mt_cpu_lapack_end(blas_threads);
    }
out_release:
    mt_tensor_clear(&tmp);
    mt_tensor_clear(&col);
    mt_tensor_clear(&w);
    mt_tensor_clear(&x);
    return st;
}

// x (C, D, H, W) one contiguous volume; col (C*KD*KH*KW, (od1-od0)*OH*OW) for output depths
// [od0, od1), its rows ld elements apart: the row block (c, kd) holds, at each output depth,
// the 2-D im2col of the depth slice tap kd meets there (g->hw, one channel), zeros where that
// slice lies in the depth padding
void
mt_cpu_vol2col(const char *x, char *col, int64_t ld, const conv3_geom *g, size_t item, int64_t od0,
               int64_t od1)
{
    const conv_geom *p = &g->hw;
    const int64_t taps = p->kh * p->kw, n = p->oh * p->ow, plane = p->h * p->w * (int64_t)item;
    const int parts = mt_parallel_parts(g->c * g->kd * (od1 - od0) * taps * n, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t r = 0; r < g->c * g->kd; r++) {
        const int64_t c = r / g->kd, k = r % g->kd;
        char *rows = col + r * taps * ld * (int64_t)item;
        for (int64_t od = od0; od < od1; od++) {
            const int64_t id = od * g->sd + k * g->dd - g->pd;
            char *at = rows + (od - od0) * n * (int64_t)item;
            if (id >= 0 && id < g->d) {
                mt_cpu_im2col_rows(x + (c * g->d + id) * plane, at, ld, p, item, 0, p->oh);
                continue;
            }
            for (int64_t t = 0; t < taps; t++) {
                memset(at + t * ld * (int64_t)item, 0, (size_t)n * item);
            }
        }
    }
}

// input (N, C, D, H, W) or (C, D, H, W), weight (OC, C/groups, KD, KH, KW), bias (OC) or None;
// out (N, OC, OD, OH, OW) or (OC, OD, OH, OW), row-major, or channels-last-3d as the front end
// states it: float32 through the NDHWC kernel (channels-last) or the direct one; otherwise per
// volume, blocks of output depths through vol2col, then out (OC, depths*OH*OW) = weight (OC,
// C/groups*KD*KH*KW) @ col per group (row-major, which the dispatcher lays out after)
mt_status
mt_cpu_conv3d(mt_args *a)
{
    const conv3_geom *g = &a->plan->conv3;
    const conv_geom *p = &g->hw;
    mt_tensor *x = NULL, *w = NULL, *col = NULL, *out = a->out[0];
    mt_dtype dt = a->t[0]->dtype;
    /* PyTorch's dilated kernel lacks int32 too, as conv2d's */
    bool dilated = g->dd > 1 || p->dh > 1 || p->dw > 1;
    if (dt == MT_BOOL || (dilated && dt == MT_INT32)) {
        return mt_fail_not_implemented(dilated ? "slow_conv_dilated<>" : "compute_columns3d", "",
                                       dt);
    }
    const conv_geom flat = mt_cpu_conv3_flat(g);
    mt_status st = mt_cpu_conv_fits_blas(&flat);
    if (st || mt_tensor_numel(out) == 0) {
        return st;
    }
    /* channels-last-3d float32 (the stated layout): the NDHWC kernel, with no copy into NCDHW
     * (from its padded copy it took 1.14 ms where a copy into NCDHW and the direct kernel,
     * writing NDHWC, took 1.42 on (8, 4, 16^3) with 16 3x3x3 filters, and 17.2 where they took
     * 17.9 on (4, 16, 16, 32, 32) with 32, one thread) */
    if (mt_cpu_conv_ndhwc_direct_suits(g, dt) && a->t[1]->dtype == dt &&
        mt_front_take_format(a->plan, a, 0)) {
        return conv_ndhwc(a);
    }
    const size_t item = mt_dtype_size(dt);
    if ((st = mt_cpu_dense(a->t[0], dt, &x)) || (st = mt_cpu_dense(a->t[1], a->t[1]->dtype, &w))) {
        goto out_release;
    }
    if (mt_cpu_conv_direct_suits(g, dt)) {
        st = conv_direct(a, x, w, g, mt_front_take_format(a->plan, a, 0));
        goto out_release;
    }
    /* a 1x1x1 kernel with stride 1 and no padding reads each volume as it lies; otherwise col
     * holds a block of output depths small enough to stay in cache for the gemm */
    const bool own_col = !(g->kd == 1 && p->kh == 1 && p->kw == 1 && g->sd == 1 && p->sh == 1 &&
                           p->sw == 1 && g->pd == 0 && p->ph == 0 && p->pw == 0);
    const int64_t plane = p->oh * p->ow, n = g->od * plane, krows = g->c * flat.kh * p->kw;
    int64_t depths = own_col ? CONV_COL_BYTES / (krows * plane * (int64_t)item + 1) : g->od;
    depths = depths < 1 ? 1 : depths > g->od ? g->od : depths;
    int64_t col_sizes[2] = {krows, depths * plane};
    if (own_col && p->n > 0 &&
        (st = mt_tensor_empty(2, col_sizes, dt, mt_tensor_device(x), &col))) {
        goto out_release;
    }
    const int64_t in_bytes = g->c * g->d * p->h * p->w * (int64_t)item;
    for (int64_t b = 0; b < p->n; b++) {
        const char *volume = mt_tensor_data(x) + b * in_bytes;
        char *out_b = mt_tensor_data(out) + b * p->oc * n * (int64_t)item;
        for (int64_t od0 = 0; od0 < g->od; od0 += depths) {
            int64_t od1 = od0 + depths < g->od ? od0 + depths : g->od, nb = (od1 - od0) * plane;
            if (own_col) {
                mt_cpu_vol2col(volume, mt_tensor_data(col), nb, g, item, od0, od1);
            }
            conv_block(mt_tensor_data(w), own_col ? mt_tensor_data(col) : volume, own_col ? nb : n,
                       out_b + od0 * plane * (int64_t)item, n, nb, a->t[2], &flat, dt, false);
        }
    }
out_release:
    mt_tensor_clear(&col);
    mt_tensor_clear(&w);
    mt_tensor_clear(&x);
    return st;
}
