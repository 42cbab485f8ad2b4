/* conv2d's backward on the CPU: the gradients of the input and of the weight, one BLAS gemm per
 * image and group, in conv.c's im2col layout (the bias's is a sum, done with ops by the formula).
 *
 * For image b and group g, with col (C/G*KH*KW, OH*OW) the im2col of the image:
 *   d col   = weight_g^T (C/G*KH*KW, OC/G) @ grad_out_g (OC/G, OH*OW), scattered back by col2im
 *             (each pixel gets the sum over the taps that read it);
 *   d weight_g (OC/G, C/G*KH*KW) += grad_out_g @ col_g^T.
 * A 1x1 kernel with stride 1 and no padding needs no col, as in the forward. Float32 goes
 * through the direct kernels where they suit the shape (run_dense): the weight's gradient, and
 * with unit strides the input's, which is then itself a convolution (input_as_conv). A
 * channels-last call (the front end states channels-last results) goes to conv_nhwc.c's
 * kernels, which read grad_output and the other operand as they lie. The arguments are the
 * front end's to check (ops/conv_checks.c); floats only (BLAS). */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/conv.h"
#include "cpu/conv_direct.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

/* Whether the image is its own col (a 1x1 kernel, stride 1, no padding). */
static bool
col_is_image(const conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
}

// col (C*KH*KW, OH*OW) -> x (C, H, W), channel c: x[c] += every tap's value at the pixel it
// read (im2col's adjoint); taps in the padding are dropped. Channels are independent: rows
// (c, kh, kw) of col reach only x[c].
#define COL2IM(name, T)                                                 \
    static void name(const T *col, T *x, const conv_geom *g, int64_t c) \
    {                                                                   \
        col += c * g->kh * g->kw * g->oh * g->ow;                       \
        for (int64_t i = 0; i < g->kh; i++) {                           \
            for (int64_t j = 0; j < g->kw; j++) {                       \
                int64_t off = j * g->dw - g->pw, lo, hi;                \
                mt_conv_inside(off, g->sw, g->w, g->ow, &lo, &hi);      \
                for (int64_t oh = 0; oh < g->oh; oh++, col += g->ow) {  \
                    int64_t ih = oh * g->sh + i * g->dh - g->ph;        \
                    if (ih < 0 || ih >= g->h) {                         \
                        continue;                                       \
                    }                                                   \
                    T *dst = x + (c * g->h + ih) * g->w + off;          \
                    for (int64_t ow = lo; ow < hi; ow++) {              \
                        dst[ow * g->sw] += col[ow];                     \
                    }                                                   \
                }                                                       \
            }                                                           \
        }                                                               \
    }
COL2IM(col2im_f32, float)
COL2IM(col2im_f64, double)

void
mt_cpu_col2im_image(const void *col, void *x, const conv_geom *g, mt_dtype dt)
{
    for (int64_t c = 0; c < g->c; c++) {
        if (dt == MT_FLOAT64) {
            col2im_f64((const double *)col, (double *)x, g, c);
        } else {
            col2im_f32((const float *)col, (float *)x, g, c);
        }
    }
}

/* What both backward kernels hold: the geometry, the sizes of one image and group, and the
 * tensors: grad_output and the other operand (weight or input) dense in dt, a col buffer for
 * each of `parts` parts of the images (none for 0, or where the image is its own col) and the
 * gradient being made (a->out[0], row-major, of the size in a->l[0], zeroed). */
typedef struct conv_bwd {
    conv_geom g;
    mt_dtype dt;
    int64_t item, ohw, hw, m, og; /* m: C/G*KH*KW, og: OC/G */
    bool own_col;
    mt_tensor *go, *other, *col, *grad;
} conv_bwd;

static mt_status
conv_bwd_begin(mt_args *a, conv_bwd *c, int parts)
{
    *c = (conv_bwd){.g = a->plan->conv, .dt = a->t[0]->dtype};
    const conv_geom *g = &c->g;
    mt_status st = mt_cpu_conv_fits_blas(g);
    if (st) {
        return st;
    }
    c->item = (int64_t)mt_dtype_size(c->dt);
    c->ohw = g->oh * g->ow;
    c->hw = g->h * g->w;
    c->m = g->c / g->groups * g->kh * g->kw;
    c->og = g->oc / g->groups;
    c->own_col = !col_is_image(g);
    int64_t col_sizes[2] = {parts * g->c * g->kh * g->kw, c->ohw}; /* a col for each part */
    c->grad = a->out[0];
    memset(mt_tensor_data(c->grad), 0, (size_t)mt_tensor_numel(c->grad) * (size_t)c->item);
    if ((st = mt_cpu_dense(a->t[0], c->dt, &c->go)) ||
        (st = mt_cpu_dense(a->t[1], c->dt, &c->other)) ||
        (c->own_col && parts > 0 &&
         (st = mt_tensor_empty(2, col_sizes, c->dt, MT_DEVICE_CPU, &c->col)))) {
        return st;
    }
    return MT_OK;
}

/* Releases what conv_bwd_begin made (the gradient is a->out[0]'s). */
static mt_status
conv_bwd_end(conv_bwd *c, mt_status st)
{
    mt_tensor_clear(&c->go);
    mt_tensor_clear(&c->other);
    mt_tensor_clear(&c->col);
    return st;
}

// w (OC, C/G, KH, KW) -> wf (C, OC/G, KH, KW): each group's channels swapped, taps reversed
static void
flip_weight(const float *w, float *wf, const conv_geom *g)
{
    const int64_t cg = g->c / g->groups, og = g->oc / g->groups, taps = g->kh * g->kw;
    for (int64_t gi = 0; gi < g->groups; gi++) {
        for (int64_t o = 0; o < og; o++) {
            for (int64_t c = 0; c < cg; c++) {
                const float *src = w + ((gi * og + o) * cg + c) * taps;
                float *dst = wf + ((gi * cg + c) * og + o) * taps;
                for (int64_t t = 0; t < taps; t++) {
                    dst[t] = src[taps - 1 - t];
                }
            }
        }
    }
}

/* The forward's geometry as the direct kernel's (conv_direct.h), d = kd = 1 */
static conv3_geom
as_3d(const conv_geom *g)
{
    return (conv3_geom){.hw = *g, .c = g->c, .d = 1, .kd = 1, .od = 1, .sd = 1, .dd = 1};
}

/* With unit strides, grad_input[n, c, ih, iw] sums grad_output[n, o, ih + p - kh*d, ...] *
 * w[o, c, kh, kw]: the convolution of grad_output (OC input channels) with flip_weight's wf,
 * padded by d*(K-1) - p (when that is not negative), of the input's size; *tg its geometry. */
static bool
input_as_conv(const conv_geom *g, conv3_geom *tg)
{
    *tg = as_3d(g);
    tg->c = g->oc; /* input and output swapped (the 3-D kernel reads c, the NHWC one hw.c) */
    tg->hw.c = g->oc;
    tg->hw.h = g->oh;
    tg->hw.w = g->ow;
    tg->hw.oc = g->c;
    tg->hw.oh = g->h;
    tg->hw.ow = g->w;
    tg->hw.ph = g->dh * (g->kh - 1) - g->ph;
    tg->hw.pw = g->dw * (g->kw - 1) - g->pw;
    return g->sh == 1 && g->sw == 1 && tg->hw.ph >= 0 && tg->hw.pw >= 0;
}

/* A gradient from grad_output and the other operand (weight or input), all dense, into out;
 * cl: out is to be channels-last (the direct kernels write it so if they can) */
typedef mt_status (*bwd_fn)(const char *go, const char *other, char *out, bool cl,
                            const conv_geom *g, mt_dtype dt);

// go (N, OC, OH, OW), w (OC, C/G, KH, KW) -> out (N, C, H, W), or channels-last (N, H, W, C)
// with cl: input_as_conv's convolution; float32
static mt_status
input_direct(const char *go, const char *w, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)dt;
    conv3_geom tg;
    input_as_conv(g, &tg);
    /* 3x3 taps: Winograd's where it pays (row-major out), as conv2d's forward, reading w as
     * it lies */
    if (!cl && mt_cpu_conv_winograd_suits(&tg.hw, MT_FLOAT32)) {
        return mt_cpu_conv_winograd((const float *)go, (const float *)w, NULL, NULL, 0,
                                    (float *)out, true, &tg.hw);
    }
    mt_tensor *wf = NULL;
    const int64_t wf_sizes[4] = {g->c, g->oc / g->groups, g->kh, g->kw};
    mt_status st = mt_tensor_empty(4, wf_sizes, MT_FLOAT32, MT_DEVICE_CPU, &wf);
    if (st == MT_OK) {
        flip_weight((const float *)w, (float *)mt_tensor_data(wf), g);
        st = mt_cpu_conv_direct((const float *)go, (const float *)mt_tensor_data(wf), NULL,
                                (float *)out, cl, &tg, MT_DEVICE_CPU);
    }
    mt_tensor_clear(&wf);
    return st;
}

// go (N, OC, OH, OW), x (N, C, H, W) -> out (OC, C/G, KH, KW), row-major whatever cl says (a
// channels-last weight's gradient is copied into its layout after); float32
static mt_status
weight_direct(const char *go, const char *x, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)cl;
    (void)dt;
    const conv3_geom dg = as_3d(g);
    return mt_cpu_conv_direct_weight((const float *)x, (const float *)go, (float *)out, &dg,
                                     MT_DEVICE_CPU);
}

// channels-last go (N, OH, OW, OC) and w (OC, KH, KW, C/G) or x (N, H, W, C): conv_nhwc.c's
// kernels (the input's gradient with unit strides as its direct convolution, else its gemms), out
// channels-last too (cl is always true)
static mt_status
input_nhwc(const char *go, const char *w, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)cl;
    conv3_geom tg;
    if (!input_as_conv(g, &tg) || !mt_cpu_conv_nhwc_direct_suits(&tg.hw, dt)) {
        return mt_cpu_conv_nhwc_input(go, w, out, g, dt);
    }
    return mt_cpu_conv_nhwc_direct((const float *)go, (const float *)w, NULL, (float *)out, true,
                                   &tg.hw);
}

// depthwise: channels-last go (N, OH, OW, C), w (C, 1, KH, KW) or x (N, H, W, C), out
// channels-last: conv_depthwise.c's kernels; float32
static mt_status
input_dw(const char *go, const char *w, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)cl;
    (void)dt;
    return mt_cpu_conv_dw_input((const float *)go, (const float *)w, (float *)out, g);
}

static mt_status
weight_dw(const char *go, const char *x, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)cl;
    (void)dt;
    return mt_cpu_conv_dw_weight((const float *)go, (const float *)x, (float *)out, g);
}

static mt_status
weight_nhwc(const char *go, const char *x, char *out, bool cl, const conv_geom *g, mt_dtype dt)
{
    (void)cl;
    return mt_cpu_conv_nhwc_weight(go, x, out, g, dt);
}

/* Whether the channels-last gemms (conv_nhwc.c) take this call: the front end states a
 * channels-last result (a channels-last forward's), and the dtypes suit; then a->out[0] takes
 * that layout, and the kernel writes it so. */
static bool
nhwc_takes(mt_args *a)
{
    const mt_dtype dt = a->t[0]->dtype;
    return a->t[1]->dtype == dt && mt_cpu_conv_nhwc_suits(&a->plan->conv, dt) &&
           mt_front_take_format(a->plan, a, 0);
}

/* Whether conv_depthwise.c's kernels take this call: as nhwc_takes, for a depthwise float32
 * convolution. */
static bool
dw_takes(mt_args *a)
{
    const mt_dtype dt = a->t[0]->dtype;
    return a->t[1]->dtype == dt && mt_cpu_conv_dw_suits(&a->plan->conv, dt) &&
           mt_front_take_format(a->plan, a, 0);
}

/* a->out[0] (of a->l[0]'s size) = fn(grad_output, the other operand) (a->t[0], a->t[1]), both
 * made dense: row-major float32 for the direct kernels (conv_direct.c, which save the gemm's col,
 * and the input gradient col2im's scattered sums), channels-last in their own dtype with nhwc.
 * fn is told to write a channels-last result where its front end stated one (cl). */
static mt_status
run_dense(mt_args *a, bwd_fn fn, bool cl, bool nhwc)
{
    mt_tensor *go = NULL, *other = NULL;
    mt_status st;
    if (nhwc) {
        st = mt_cpu_dense_format(a->t[0], MT_CHANNELS_LAST, &go);
        st = st ? st : mt_cpu_dense_format(a->t[1], MT_CHANNELS_LAST, &other);
    } else {
        st = mt_cpu_dense(a->t[0], MT_FLOAT32, &go);
        st = st ? st : mt_cpu_dense(a->t[1], MT_FLOAT32, &other);
    }
    if (st == MT_OK) {
        st = fn(mt_tensor_data(go), mt_tensor_data(other), mt_tensor_data(a->out[0]), cl,
                &a->plan->conv, a->t[0]->dtype);
    }
    mt_tensor_clear(&other);
    mt_tensor_clear(&go);
    return st;
}

// images [b0, b1) of the input's gradient: per image and group, col = w_g^T @ go_g (or straight
// into the image's gradient, a 1x1 kernel), then col2im split among the threads by channels
// (after the gemm, which is BLAS's; one thread inside a part of mt_cpu_conv_images_apart's)
static void
input_images(const conv_bwd *c, char *col, int64_t b0, int64_t b1)
{
    const conv_geom *g = &c->g;
    const int64_t item = c->item, ohw = c->ohw, m = c->m, og = c->og;
    for (int64_t b = b0; b < b1 && ohw > 0 && m > 0; b++) {
        const char *go_b = mt_tensor_data(c->go) + b * g->oc * ohw * item;
        char *gx_b = mt_tensor_data(c->grad) + b * g->c * c->hw * item;
        char *dst = c->own_col ? col : gx_b;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            mt_cpu_gemm_raw(c->dt, true, false, (int)m, (int)ohw, (int)og, 1.0,
                            mt_tensor_data(c->other) + gi * og * m * item, (int)m,
                            go_b + gi * og * ohw * item, (int)ohw, 0.0, dst + gi * m * ohw * item,
                            (int)ohw);
        }
        const int parts = c->own_col ? mt_parallel_parts(m * g->groups * ohw, 32768) : 1;
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t ch = 0; ch < (c->own_col ? g->c : 0); ch++) {
            if (c->dt == MT_FLOAT32) {
                col2im_f32((const float *)col, (float *)gx_b, g, ch);
            } else {
                col2im_f64((const double *)col, (double *)gx_b, g, ch);
            }
        }
    }
}

// grad_output (N, OC, OH, OW) or unbatched, weight (OC, C/G, KH, KW), input_size (N, C, H, W)
// or (C, H, W); out (input_size) = the gradient of conv2d's input
mt_status
mt_cpu_convolution_backward_input(mt_args *a)
{
    conv3_geom tg;
    const mt_dtype dt = a->t[0]->dtype;
    const bool unit = input_as_conv(&a->plan->conv, &tg);
    const bool direct = unit && mt_cpu_conv_direct_suits(&tg, dt);
    if (dw_takes(a)) {
        return run_dense(a, input_dw, true, true);
    }
    /* channels-last: conv_nhwc.c's direct kernel, or its gemms where the NCHW direct kernel
     * does not suit either (they took 3x its time on 16 channels, copies included) */
    if ((!direct || (unit && mt_cpu_conv_nhwc_direct_suits(&tg.hw, dt))) && nhwc_takes(a)) {
        return run_dense(a, input_nhwc, true, true);
    }
    if (direct) {
        return run_dense(a, input_direct, mt_front_take_format(a->plan, a, 0), false);
    }
    const int apart = mt_cpu_conv_images_apart(&a->plan->conv);
    conv_bwd c;
    mt_status st = conv_bwd_begin(a, &c, apart);
    const conv_geom *g = &c.g;
    const int64_t share = g->n / apart, krows = g->c * g->kh * g->kw;
    const int blas_threads = apart > 1 ? mt_cpu_lapack_begin() : 1;
#pragma omp parallel for num_threads(apart) schedule(static) if (apart > 1)
    for (int k = 0; k < (st == MT_OK ? apart : 0); k++) {
        char *col = c.own_col ? mt_tensor_data(c.col) + k * krows * c.ohw * c.item : NULL;
        input_images(&c, col, k * share, (k + 1) * share);
    }
    if (apart > 1) {
        mt_cpu_lapack_end(blas_threads);
    }
    return conv_bwd_end(&c, st);
}


// images [b0, b0 + nb) side by side in rows of ld, input channels [c0, c1): their rows of col
// (C*KH*KW, ld), the images' im2cols (or the images themselves, a 1x1 kernel), and unless gt is
// NULL gt (OC, ld) their grad_outputs
static void
gather_chunk(const conv_bwd *c, int64_t b0, int64_t nb, int64_t ld, int64_t c0, int64_t c1,
             char *col, char *gt)
{
    const conv_geom *g = &c->g;
    conv_geom part = *g; /* im2col of channels [c0, c1) */
    part.c = c1 - c0;
    const int64_t item = c->item;
    const size_t row = (size_t)(c->ohw * item);
    for (int64_t i = 0; i < nb; i++) {
        const char *x = mt_tensor_data(c->other) + ((b0 + i) * g->c + c0) * c->hw * item;
        const char *go = mt_tensor_data(c->go) + (b0 + i) * g->oc * c->ohw * item;
        char *at = col + (c0 * g->kh * g->kw * ld + i * c->ohw) * item;
        if (c->own_col) {
            mt_cpu_im2col_rows(x, at, ld, &part, (size_t)item, 0, g->oh);
        } else {
            for (int64_t r = 0; r < part.c; r++) {
                memcpy(at + r * ld * item, x + r * c->hw * item, row);
            }
        }
        for (int64_t o = 0; gt != NULL && o < g->oc; o++) {
            memcpy(gt + (o * ld + i * c->ohw) * item, go + o * c->ohw * item, row);
        }
    }
}

// the columns of the weight's gradient that read input channels [c0, c1) (gw (OC, C/G*KH*KW)),
// over every image, nb at a time: those channels' rows of col (gather_chunk) and per group
// gw_g[:, their taps] += go_g (OC/G, nb*OH*OW) @ their rows^T. go_g is a copy in gt for a
// chunk of several images, else grad_output as it lies; a 1x1 kernel's one image is its own col.
// col's rows are nb*OH*OW apart whatever the chunk (a part on its last, shorter, chunk would
// otherwise write its rows over those of a part still on a longer one).
static void
weight_columns(const conv_bwd *c, int64_t nb, int64_t c0, int64_t c1, char *col, char *gt)
{
    const conv_geom *g = &c->g;
    const int64_t item = c->item, ohw = c->ohw, taps = g->kh * g->kw, cg = g->c / g->groups;
    char *gw = mt_tensor_data(c->grad);
    for (int64_t b0 = 0; b0 < g->n; b0 += nb) {
        const int64_t n = b0 + nb < g->n ? nb : g->n - b0, len = n * ohw;
        const char *go = mt_tensor_data(c->go) + b0 * g->oc * ohw * item;
        const char *src = mt_tensor_data(c->other) + b0 * g->c * c->hw * item;
        int64_t ldg = ohw, lds = ohw; /* the rows' strides of go and src */
        if (n > 1 || c->own_col) {
            gather_chunk(c, b0, n, nb * ohw, c0, c1, col, n > 1 ? gt : NULL);
            ldg = n > 1 ? nb * ohw : ohw;
            go = n > 1 ? gt : go;
            lds = nb * ohw;
            src = col;
        }
        for (int64_t gi = 0; gi < g->groups; gi++) {
            const int64_t lo = c0 > gi * cg ? c0 : gi * cg;
            const int64_t hi = c1 < (gi + 1) * cg ? c1 : (gi + 1) * cg;
            if (lo < hi) {
                mt_cpu_gemm_raw(c->dt, false, true, (int)c->og, (int)((hi - lo) * taps), (int)len,
                                1.0, go + gi * c->og * ldg * item, (int)ldg,
                                src + lo * taps * lds * item, (int)lds, 1.0,
                                gw + (gi * c->og * c->m + (lo - gi * cg) * taps) * item, (int)c->m);
            }
        }
    }
}

/* Fewest multiply-adds of a thread's columns of the weight's gradient (weight_columns), as
 * conv.c's CONV_APART_MACS for a thread's images */
#define WGRAD_PART_MACS (1 << 20)

/* Most bytes of one chunk's copies of col and grad_output in conv2d's weight gradient (of col
 * alone in conv3d's): small images go a chunk at a time, one gemm a chunk (and group) rather
 * than one an image, which on (128, 16, 16, 16) planes (conv3d's depth taps, once) was 384
 * gemms too small to split. */
#define BWD_CHUNK_BYTES (1 << 22)

/* ---- conv3d's weight gradient (a weight_size of 5 dims; the front end's plan is conv3) ---- */

// go (N, OC, OD, OH, OW), x (N, C, D, H, W), both dense in dt -> gw (OC, C/G*KD*KH*KW), zeroed:
// per volume and block of output depths, vol2col (conv.c), then per group
// gw_g (OC/G, K) += go_g (OC/G, depths*OH*OW) @ col_g^T (depths*OH*OW, K): one gemm, no copy per
// depth tap
static mt_status
weight3d_gemm(const char *go, const char *x, char *gw, const conv3_geom *g, mt_dtype dt)
{
    const conv_geom *p = &g->hw;
    const int64_t item = (int64_t)mt_dtype_size(dt), plane = p->oh * p->ow, n = g->od * plane;
    const int64_t og = p->oc / p->groups, k = g->c / p->groups * g->kd * p->kh * p->kw;
    const int64_t krows = k * p->groups, volume = g->c * g->d * p->h * p->w;
    memset(gw, 0, (size_t)(p->oc * k * item));
    if (n == 0 || k == 0 || og == 0) {
        return MT_OK;
    }
    int64_t depths = BWD_CHUNK_BYTES / (krows * plane * item + 1);
    depths = depths < 1 ? 1 : depths > g->od ? g->od : depths;
    const int64_t col_sizes[2] = {krows, depths * plane};
    mt_tensor *col = NULL;
    mt_status st = mt_tensor_empty(2, col_sizes, dt, MT_DEVICE_CPU, &col);
    for (int64_t b = 0; st == MT_OK && b < p->n; b++) {
        for (int64_t od0 = 0; od0 < g->od; od0 += depths) {
            const int64_t od1 = od0 + depths < g->od ? od0 + depths : g->od;
            const int64_t nb = (od1 - od0) * plane;
            const char *cb = mt_tensor_data(col);
            mt_cpu_vol2col(x + b * volume * item, mt_tensor_data(col), nb, g, (size_t)item, od0,
                           od1);
            for (int64_t gi = 0; gi < p->groups; gi++) {
                mt_cpu_gemm_raw(dt, false, true, (int)og, (int)k, (int)nb, 1.0,
                                go + ((b * p->oc + gi * og) * n + od0 * plane) * item, (int)n,
                                cb + gi * k * nb * item, (int)nb, 1.0, gw + gi * og * k * item,
                                (int)k);
            }
        }
    }
    mt_tensor_clear(&col);
    return st;
}

// grad_output (N, OC, OD, OH, OW), input (N, C, D, H, W), weight_size (OC, C/G, KD, KH, KW);
// out = the gradient of conv3d's weight: channels-last-3d float32 by conv_nhwc.c's register
// kernel (from the data as it lies), float32 by the direct kernel, else vol2col and gemms
static mt_status
weight3d(mt_args *a)
{
    const conv3_geom *g = &a->plan->conv3;
    const mt_dtype dt = a->t[0]->dtype;
    const conv_geom flat = mt_cpu_conv3_flat(g);
    mt_status st = mt_cpu_conv_fits_blas(&flat);
    if (st) {
        return st;
    }
    const bool cl = a->t[1]->dtype == dt && mt_cpu_conv_ndhwc_weight_suits(g, dt) &&
                    mt_front_take_format(a->plan, a, 0);
    mt_tensor *go = NULL, *x = NULL;
    if (cl) { /* both float32 (the kernel's suits) */
        st = mt_cpu_dense_format(a->t[0], MT_CHANNELS_LAST_3D, &go);
        st = st ? st : mt_cpu_dense_format(a->t[1], MT_CHANNELS_LAST_3D, &x);
    } else {
        st = mt_cpu_dense(a->t[0], dt, &go);
        st = st ? st : mt_cpu_dense(a->t[1], dt, &x);
    }
    const char *gd = st ? NULL : mt_tensor_data(go), *xd = st ? NULL : mt_tensor_data(x);
    char *gw = mt_tensor_data(a->out[0]);
    if (st == MT_OK && cl) {
        st = mt_cpu_conv_ndhwc_weight((const float *)gd, (const float *)xd, (float *)gw, g);
    } else if (st == MT_OK && mt_cpu_conv_direct_weight_suits(g, dt)) {
        st = mt_cpu_conv_direct_weight((const float *)xd, (const float *)gd, (float *)gw, g,
                                       MT_DEVICE_CPU);
    } else if (st == MT_OK) {
        st = weight3d_gemm(gd, xd, gw, g, dt);
    }
    mt_tensor_clear(&x);
    mt_tensor_clear(&go);
    return st;
}

// grad_output (N, OC, OH, OW) or unbatched, input (N, C, H, W) or (C, H, W), weight_size
// (OC, C/G, KH, KW); out (weight_size) = the gradient of conv2d's weight (conv3d's: weight3d)
mt_status
mt_cpu_convolution_backward_weight(mt_args *a)
{
    if (a->l[0].n == 5) {
        return weight3d(a);
    }
    const conv3_geom dg = as_3d(&a->plan->conv);
    if (dw_takes(a)) {
        return run_dense(a, weight_dw, true, true);
    }
    if (nhwc_takes(a)) {
        return run_dense(a, weight_nhwc, true, true);
    }
    if (mt_cpu_conv_direct_weight_suits(&dg, a->t[0]->dtype)) {
        return run_dense(a, weight_direct, false, false);
    }
    conv_bwd c;
    mt_status st = conv_bwd_begin(a, &c, 0);
    const conv_geom *g = &c.g;
    const int64_t item = c.item, ohw = c.ohw, krows = g->c * g->kh * g->kw;
    int64_t nb = BWD_CHUNK_BYTES / ((krows + g->oc) * ohw * item + 1);
    nb = nb < 1 ? 1 : nb > g->n ? g->n : nb;
    /* The threads split the input channels, so the columns of the gradient: each builds its
     * channels' rows of col and its own copy of the chunk's grad_output, and runs its gemms on
     * its thread, any batch, no thread waiting for another (OpenBLAS splitting each chunk's
     * gemm had both wait for each chunk's im2col and for each other at its every panel). */
    int parts = mt_parallel_parts(g->n * g->oc * c.m * ohw, WGRAD_PART_MACS);
    parts = parts > g->c ? (int)g->c : parts;
    mt_tensor *col = NULL, *gt = NULL;
    const int64_t col_sizes[2] = {krows, nb * ohw}, gt_sizes[2] = {parts * g->oc, nb * ohw};
    if (st == MT_OK && ohw > 0 && c.m > 0 && (c.own_col || nb > 1)) {
        st = mt_tensor_empty(2, col_sizes, c.dt, MT_DEVICE_CPU, &col);
    }
    if (st == MT_OK && ohw > 0 && c.m > 0 && nb > 1) {
        st = mt_tensor_empty(2, gt_sizes, c.dt, MT_DEVICE_CPU, &gt);
    }
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int k = 0; k < (st == MT_OK && ohw > 0 && c.m > 0 ? parts : 0); k++) {
        weight_columns(&c, nb, g->c * k / parts, g->c * (k + 1) / parts,
                       col ? mt_tensor_data(col) : NULL,
                       gt ? mt_tensor_data(gt) + k * g->oc * nb * ohw * item : NULL);
    }
    mt_tensor_clear(&col);
    mt_tensor_clear(&gt);
    return conv_bwd_end(&c, st);
}
