/* conv2d's backward on the CPU: the gradients of the input and of the weight, one BLAS gemm per
 * image and group, in conv.c's im2col layout (the bias's is a sum, done with ops by the formula).
 *
 * For image b and group g, with col (C/G*KH*KW, OH*OW) the im2col of the image:
 *   d col   = weight_g^T (C/G*KH*KW, OC/G) @ grad_out_g (OC/G, OH*OW), scattered back by col2im
 *             (each pixel gets the sum over the taps that read it);
 *   d weight_g (OC/G, C/G*KH*KW) += grad_out_g @ col_g^T.
 * A 1x1 kernel with stride 1 and no padding needs no col, as in the forward. The arguments are
 * the front end's to check (ops/conv_checks.c); floats only (BLAS). */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "cpu/blas.h"
#include "cpu/conv.h"
#include "cpu/copy.h"
#include "dispatch/kernels.h"

/* A new tensor of zeros. */
static mt_status
zeros(int ndim, const int64_t *sizes, mt_dtype dt, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(ndim, sizes, dt, MT_DEVICE_CPU, out);
    if (st == MT_OK) {
        memset(mt_tensor_data(*out), 0, (size_t)mt_tensor_numel(*out) * mt_dtype_size(dt));
    }
    return st;
}

/* Whether the image is its own col (a 1x1 kernel, stride 1, no padding). */
static bool
col_is_image(const conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
}

// col (C*KH*KW, OH*OW) -> x (C, H, W): x += every tap's value at the pixel it read (im2col's
// adjoint); taps in the padding are dropped
#define COL2IM(name, T)                                                    \
    static void name(const T *col, T *x, const conv_geom *g)               \
    {                                                                      \
        for (int64_t c = 0; c < g->c; c++) {                               \
            for (int64_t i = 0; i < g->kh; i++) {                          \
                for (int64_t j = 0; j < g->kw; j++) {                      \
                    int64_t off = j * g->dw - g->pw, lo, hi;               \
                    mt_conv_inside(off, g->sw, g->w, g->ow, &lo, &hi);     \
                    for (int64_t oh = 0; oh < g->oh; oh++, col += g->ow) { \
                        int64_t ih = oh * g->sh + i * g->dh - g->ph;       \
                        if (ih < 0 || ih >= g->h) {                        \
                            continue;                                      \
                        }                                                  \
                        T *dst = x + (c * g->h + ih) * g->w + off;         \
                        for (int64_t ow = lo; ow < hi; ow++) {             \
                            dst[ow * g->sw] += col[ow];                    \
                        }                                                  \
                    }                                                      \
                }                                                          \
            }                                                              \
        }                                                                  \
    }
COL2IM(col2im_f32, float)
COL2IM(col2im_f64, double)

// grad_output (N, OC, OH, OW) or unbatched, weight (OC, C/G, KH, KW), input_size (N, C, H, W)
// or (C, H, W); out (input_size) = the gradient of conv2d's input
mt_status
mt_cpu_convolution_backward_input(mt_args *a)
{
    mt_tensor *go = NULL, *w = NULL, *col = NULL, *gx = NULL;
    const mt_intlist *in = &a->l[0];
    const conv_geom g = a->plan->conv;
    mt_status st = mt_cpu_conv_fits_blas(&g);
    if (st) {
        return st;
    }
    mt_dtype dt = a->t[0]->dtype;
    size_t item = mt_dtype_size(dt);
    const int64_t ohw = g.oh * g.ow, hw = g.h * g.w, m = g.c / g.groups * g.kh * g.kw;
    const int64_t og = g.oc / g.groups;
    bool own_col = !col_is_image(&g);
    int64_t col_sizes[2] = {g.c * g.kh * g.kw, ohw};
    if ((st = zeros(in->n, in->v, dt, &gx)) || (st = mt_cpu_dense(a->t[0], dt, &go)) ||
        (st = mt_cpu_dense(a->t[1], dt, &w)) ||
        (own_col && (st = mt_tensor_empty(2, col_sizes, dt, MT_DEVICE_CPU, &col)))) {
        goto out_release;
    }
    for (int64_t b = 0; b < g.n && ohw > 0 && m > 0; b++) {
        const char *go_b = mt_tensor_data(go) + b * g.oc * ohw * (int64_t)item;
        char *gx_b = mt_tensor_data(gx) + b * g.c * hw * (int64_t)item;
        char *dst = own_col ? mt_tensor_data(col) : gx_b;
        for (int64_t gi = 0; gi < g.groups; gi++) {
            mt_cpu_gemm_raw(dt, true, false, (int)m, (int)ohw, (int)og, 1.0,
                            mt_tensor_data(w) + gi * og * m * (int64_t)item, (int)m,
                            go_b + gi * og * ohw * (int64_t)item, (int)ohw, 0.0,
                            dst + gi * m * ohw * (int64_t)item, (int)ohw);
        }
        if (own_col && dt == MT_FLOAT32) {
            col2im_f32((const float *)mt_tensor_data(col), (float *)gx_b, &g);
        } else if (own_col) {
            col2im_f64((const double *)mt_tensor_data(col), (double *)gx_b, &g);
        }
    }
    a->out[0] = gx;
    gx = NULL;
out_release:
    mt_tensor_clear(&gx);
    mt_tensor_clear(&go);
    mt_tensor_clear(&w);
    mt_tensor_clear(&col);
    return st;
}

// grad_output (N, OC, OH, OW) or unbatched, input (N, C, H, W) or (C, H, W), weight_size
// (OC, C/G, KH, KW); out (weight_size) = the gradient of conv2d's weight
mt_status
mt_cpu_convolution_backward_weight(mt_args *a)
{
    mt_tensor *go = NULL, *x = NULL, *col = NULL, *gw = NULL;
    const mt_intlist *ws = &a->l[0];
    const conv_geom g = a->plan->conv;
    mt_status st = mt_cpu_conv_fits_blas(&g);
    if (st) {
        return st;
    }
    mt_dtype dt = a->t[0]->dtype;
    size_t item = mt_dtype_size(dt);
    const int64_t ohw = g.oh * g.ow, hw = g.h * g.w, k = g.c / g.groups * g.kh * g.kw;
    const int64_t og = g.oc / g.groups;
    bool own_col = !col_is_image(&g);
    int64_t col_sizes[2] = {g.c * g.kh * g.kw, ohw};
    if ((st = zeros(ws->n, ws->v, dt, &gw)) || (st = mt_cpu_dense(a->t[0], dt, &go)) ||
        (st = mt_cpu_dense(a->t[1], dt, &x)) ||
        (own_col && (st = mt_tensor_empty(2, col_sizes, dt, MT_DEVICE_CPU, &col)))) {
        goto out_release;
    }
    for (int64_t b = 0; b < g.n && ohw > 0 && k > 0; b++) {
        const char *go_b = mt_tensor_data(go) + b * g.oc * ohw * (int64_t)item;
        const char *src = mt_tensor_data(x) + b * g.c * hw * (int64_t)item;
        if (own_col) {
            mt_cpu_im2col(src, mt_tensor_data(col), &g, item, 0, g.oh);
            src = mt_tensor_data(col);
        }
        for (int64_t gi = 0; gi < g.groups; gi++) {
            mt_cpu_gemm_raw(dt, false, true, (int)og, (int)k, (int)ohw, 1.0,
                            go_b + gi * og * ohw * (int64_t)item, (int)ohw,
                            src + gi * k * ohw * (int64_t)item, (int)ohw, 1.0,
                            mt_tensor_data(gw) + gi * og * k * (int64_t)item, (int)k);
        }
    }
    a->out[0] = gw;
    gw = NULL;
out_release:
    mt_tensor_clear(&gw);
    mt_tensor_clear(&go);
    mt_tensor_clear(&x);
    mt_tensor_clear(&col);
    return st;
}
