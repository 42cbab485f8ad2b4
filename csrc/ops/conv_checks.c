/* The front ends of conv2d and of its backward ops (convolution_backward_input and _weight)
 * and of im2col and col2im (unfold and fold),
 * for every device: PyTorch's checks in its order (Convolution.cpp), so the first failing one
 * gives its message, and the geometry (conv_geom) the kernels of csrc/cpu/conv*.c and
 * cuda/conv.c compute with. */
#include <inttypes.h>
#include <string.h>

#include "core/threads.h" /* mt_get_num_threads */
#include "dispatch/widen.h"
#include "ops/conv_nd.h"
#include "ops/fails.h"
#include "ops/front.h"

/* An int[] argument as one value per spatial dim of the weight, dims of them: a single int
 * stands for parsed (PyTorch's int[parsed] parsing, then expand_param_if_needed). Returns the
 * count in *n. */
mt_status
mt_conv_expand_param(const mt_intlist *l, const char *name, int parsed, int dims, int64_t *out,
                     int *n)
{
    memcpy(out, l->v, sizeof(int64_t) * (size_t)l->n);
    *n = l->n;
    if (*n == 1) {
        /* a 1-D op's int[1] stays one value, which PyTorch then gives every dim of the weight */
        const int to = parsed > 1 ? parsed : dims;
        for (int k = 1; k < to; k++) {
            out[k] = out[0];
        }
        *n = to;
    }
    if (*n != dims) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "expected %s to be a single integer value or a list of %d values to match "
                       "the convolution dimensions, but got %s=%s",
                       name, dims, name, mt_format_sizes(buf, sizeof(buf), *n, out));
    }
    return MT_OK;
}

/* PyTorch's checks of the weight's dims against the (batched) input's, input_ndim dims of sizes
 * shown as input_sizes, and of its first dim against groups. */
mt_status
mt_conv_check_weight(const mt_tensor *wt, int input_ndim, const char *input_sizes, int64_t groups)
{
    char b[256];
    mt_format_sizes(b, sizeof(b), wt->ndim, wt->sizes);
    if (wt->ndim != input_ndim) {
        return mt_fail(MT_ERUNTIME,
                       "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                       "%d-dimensional input of size %s instead",
                       wt->ndim, wt->ndim, b, input_ndim, input_sizes);
    }
    if (wt->sizes[0] < groups) {
        return mt_fail(MT_ERUNTIME,
                       "Given groups=%" PRId64 ", expected weight to be at least %" PRId64
                       " at dimension 0, but got weight of size %s instead",
                       groups, groups, b);
    }
    if (wt->sizes[0] % groups) {
        return mt_fail(MT_ERUNTIME,
                       "Given groups=%" PRId64 ", expected weight to be divisible by %" PRId64
                       " at dimension 0, but got weight of size [%s] instead",
                       groups, groups, b);
    }
    return MT_OK;
}

mt_memory_format
mt_conv_memory_format(const mt_tensor *x, const mt_tensor *w)
{
    const mt_memory_format cl = x->ndim == 4 ? MT_CHANNELS_LAST : MT_CHANNELS_LAST_3D;
    /* float64 stays row-major in cuDNN (cudnn_conv_suggest_memory_format) and in PyTorch's
     * CPU conv3d (oneDNN has no float64; slow_conv3d is row-major); its CPU conv2d's slow
     * kernels keep channels_last for every dtype */
    const bool f64 = x->dtype == MT_FLOAT64 || w->dtype == MT_FLOAT64;
    /* an empty input's results are row-major, as PyTorch's Empty backend's (a view of zeros) */
    if ((x->ndim != 4 && x->ndim != 5) || w->ndim != x->ndim || mt_tensor_numel(x) == 0 ||
        (f64 && (mt_front_on_cuda(x) || x->ndim == 5))) {
        return MT_CONTIGUOUS_FORMAT;
    }
    return mt_suggest_memory_format(x) == cl || mt_suggest_memory_format(w) == cl
               ? cl
               : MT_CONTIGUOUS_FORMAT;
}

/* Whether t is dense in fmt, size-1 dims aside (PyTorch's is_contiguous(memory_format)). */
static bool
dense_in(const mt_tensor *t, mt_memory_format fmt)
{
    int64_t want[MT_MAX_DIMS];
    mt_format_strides(fmt, t->ndim, t->sizes, want);
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] != 1 && t->strides[d] != want[d]) {
            return false;
        }
    }
    return true;
}

/* Whether oneDNN takes bfloat16 convolutions on this CPU (PyTorch's mkldnn_bf16_device_check:
 * AVX-512 with BW, VL and DQ), and float16 ones (its mkldnn_fp16_device_check: oneDNN's
 * avx512_core_fp16 ISA, AVX512-FP16 on top of those); elsewhere PyTorch sends float16 to its
 * slow row-major kernels. */
static bool
mkldnn_bf16_device(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
#else
    return false;
#endif
}

static bool
mkldnn_fp16_device(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    return mkldnn_bf16_device() && __builtin_cpu_supports("avx512fp16");
#else
    return false;
#endif
}

/* x's dtype as PyTorch's choice of backend sees it: a float16 or bfloat16 x reaches the layout
 * rule widened to float32 (dispatch/widen.c), but PyTorch picks by the stored dtype. */
static mt_dtype
stored_dtype(const mt_tensor *x)
{
    const int stored = mt_widen_stored_dtype;
    return stored >= 0 && mt_dtype_compute((mt_dtype)stored) == x->dtype ? (mt_dtype)stored
                                                                         : x->dtype;
}

/* Whether PyTorch's CPU picks its oneDNN backend (Convolution.cpp's use_mkldnn) for x (N, C, H,
 * W) or (N, C, D, H, W), batched, and w: every bfloat16 (and float16) one where the CPU has the instructions,
 * float32 ones (no float64 in oneDNN) but a 1x1 kernel unstrided and undilated on one thread
 * with fewer than 16 images (the slow kernels are faster there), and small single-image
 * ungrouped inputs with kernels up to 3 wide. */
static bool
use_mkldnn(const mt_tensor *x, const mt_tensor *w, const mt_conv_params *c, bool transposed)
{
    bool strided = false, dilated = false, opad_big = false;
    for (int d = 0; d < c->dims; d++) {
        strided = strided || c->stride[d] != 1;
        dilated = dilated || c->dil[d] != 1;
        opad_big = opad_big || (transposed && c->opad[d] >= c->stride[d]);
    }
    if (opad_big) {
        return false;
    }
    const mt_dtype dt = stored_dtype(x);
    if (dt == MT_BFLOAT16) {
        return mkldnn_bf16_device();
    }
    if (dt == MT_FLOAT16) {
        return mkldnn_fp16_device();
    }
    if (dt != MT_FLOAT32) {
        return false;
    }
    const int64_t *xs = x->sizes, kw = w->sizes[w->ndim - 1], kh = w->sizes[w->ndim - 2];
    const bool worth = strided || dilated || xs[0] >= 16 || kw != 1 || kh != 1 ||
                       mt_get_num_threads() > 1;
    const bool big = c->groups > 1 || (kw > 3 && kh > 3) || xs[0] > 1 ||
                     xs[0] * xs[1] * xs[2] * xs[3] > 20480;
    return worth && big;
}

bool
mt_conv_layouts(const mt_tensor *x, const mt_tensor *w, const mt_conv_params *c, bool transposed,
                mt_memory_format *fmt)
{
    const int k = x->ndim;
    const mt_memory_format cl = k == 4 ? MT_CHANNELS_LAST : MT_CHANNELS_LAST_3D;
    const bool x_cl = mt_suggest_memory_format(x) != MT_CONTIGUOUS_FORMAT,
               w_cl = mt_suggest_memory_format(w) != MT_CONTIGUOUS_FORMAT;
    fmt[0] = fmt[1] = fmt[2] = MT_CONTIGUOUS_FORMAT;
    if ((k != 4 && k != 5) || k != c->dims + 2 || w->ndim != k || x->sizes[0] == 0 ||
        x->sizes[1] == 0) {
        return false; /* 1-D, unbatched, or the Empty backend (zeros laid out as x and w) */
    }
    if (mt_front_on_cuda(x)) { /* cudnn_conv_suggest_memory_format, for all three */
        const bool f64 = x->dtype == MT_FLOAT64 || w->dtype == MT_FLOAT64;
        fmt[0] = fmt[1] = fmt[2] = !f64 && (x_cl || w_cl) ? cl : MT_CONTIGUOUS_FORMAT;
        return true;
    }
    bool dilated = false;
    for (int d = 0; d < c->dims; d++) {
        dilated = dilated || c->dil[d] != 1;
    }
    if (use_mkldnn(x, w, c, transposed)) { /* Mkldnn(Transpose): mkldnn_conv_use_channels_last */
        fmt[0] = fmt[1] = fmt[2] = x_cl || w_cl ? cl : MT_CONTIGUOUS_FORMAT;
        return true;
    }
    if (k == 5) { /* Slow3d, SlowDilated3d, SlowTranspose3d: row-major */
        return true;
    }
    /* Slow2d, SlowDilated2d, SlowTranspose2d: thnn_conv_use_channels_last; the first and the last
     * give the weight's gradient the format the weight suggests once made dense in it (a 1x1
     * kernel's row-major weight stays row-major) */
    fmt[0] = fmt[1] = fmt[2] = x_cl || w_cl ? MT_CHANNELS_LAST : MT_CONTIGUOUS_FORMAT;
    if (fmt[0] == MT_CHANNELS_LAST && (transposed || !dilated) && dense_in(w, MT_CHANNELS_LAST)) {
        fmt[2] = mt_suggest_memory_format(w);
    }
    return true;
}

/* x's sizes as PyTorch's backends see them: batched, a 1-D convolution's as a 1 x L plane */
static int
backend_sizes(const mt_tensor *x, int dims, int64_t *out)
{
    const int shown = dims == 1 ? 4 : dims + 2;
    for (int d = 0; d < shown; d++) {
        out[d] = 1;
    }
    const int lead = dims + 2 - x->ndim; /* 1 when unbatched */
    for (int d = 0; d < x->ndim; d++) {
        out[d + lead + (dims == 1 && d + lead >= 2)] = x->sizes[d];
    }
    return shown;
}

mt_status
mt_conv_check_empty(const mt_tensor *x, int dims)
{
    int64_t xs[5];
    const int n = backend_sizes(x, dims, xs);
    if (mt_tensor_numel(x) == 0 && xs[0] != 0 && xs[1] != 0) {
        char b[256];
        return mt_fail(MT_ERUNTIME,
                       "Only zero batch or zero channel inputs are supported, but got input "
                       "shape: %s",
                       mt_format_sizes(b, sizeof(b), n, xs));
    }
    return MT_OK;
}

mt_status
mt_conv_check_kernel(const mt_tensor *w, int dims, const int64_t *dil)
{
    /* a 1-D convolution's as the 1 x K plane the 2-D kernels see (w is (OC, C, K) or 2-D) */
    const int64_t *k = w->sizes + 2, one = 1;
    int64_t k2[3], d2[3];
    const int shown = dims == 1 ? 2 : dims;
    bool dilated = false, k0 = false, d0 = false;
    for (int d = 0; d < shown; d++) {
        k2[d] = dims == 1 && d == 0 ? one : k[d - (shown - dims)];
        d2[d] = dims == 1 && d == 0 ? one : dil[d - (shown - dims)];
        dilated = dilated || d2[d] != 1;
        k0 = k0 || k2[d] <= 0;
        d0 = d0 || d2[d] <= 0;
    }
    char b[256];
    if (dilated && (k0 || d0)) { /* slow_conv_dilated's checks */
        return mt_fail(MT_ERUNTIME, "%s should be greater than zero, but got %s",
                       k0 ? "kernel size" : "dilation",
                       mt_format_sizes(b, sizeof(b), shown, k0 ? k2 : d2));
    }
    if (k0 && dims == 3) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got: %" PRId64 " x %" PRId64
                       " x %" PRId64 " (TxHxW)",
                       k2[0], k2[1], k2[2]);
    }
    if (k0) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kernel_height: %" PRId64
                       " kernel_width: %" PRId64,
                       k2[0], k2[1]);
    }
    return MT_OK;
}

// input (N, C, H, W) or (C, H, W), weight (OC, C/groups, KH, KW), bias (OC) or None
mt_status
mt_front_conv2d(const mt_args *a, mt_plan *p)
{
    conv_geom *g = &p->conv;
    const mt_tensor *x = a->t[0], *wt = a->t[1], *bias = a->t[2];
    char b1[256], b2[256];
    if (x->ndim != 3 && x->ndim != 4) {
        return mt_fail(MT_ERUNTIME,
                       "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                       "size: %s",
                       mt_format_sizes(b1, sizeof(b1), x->ndim, x->sizes));
    }
    if (bias && bias->dtype != x->dtype) {
        return mt_fail(MT_ERUNTIME, "Input type (%s) and bias type (%s) should be the same",
                       mt_dtype_c_name(x->dtype), mt_dtype_c_name(bias->dtype));
    }
    if (wt->ndim < 3) {
        return mt_fail(MT_ERUNTIME, "weight should have at least three dimensions");
    }
    g->groups = a->i[0];
    if (g->groups <= 0) {
        return mt_fail(MT_ERUNTIME, "non-positive groups is not supported");
    }
    int dims = wt->ndim - 2, ns, np, nd;
    int64_t stride[MT_MAX_DIMS], pad[MT_MAX_DIMS], dil[MT_MAX_DIMS];
    mt_status st;
    if ((st = mt_conv_expand_param(&a->l[0], "stride", 2, dims, stride, &ns)) ||
        (st = mt_conv_expand_param(&a->l[1], "padding", 2, dims, pad, &np)) ||
        (st = mt_conv_expand_param(&a->l[2], "dilation", 2, dims, dil, &nd))) {
        return st;
    }
    for (int k = 0; k < dims; k++) {
        if (pad[k] < 0) {
            return mt_fail(MT_ERUNTIME, "negative padding is not supported");
        }
    }
    for (int k = 0; k < dims; k++) {
        if (stride[k] <= 0) {
            return mt_fail(MT_ERUNTIME, "non-positive stride is not supported");
        }
    }
    for (int k = 0; k < dims; k++) {
        if (dil[k] < 0) { /* a zero is the kernels' to refuse (mt_conv_check_kernel) */
            return mt_fail(MT_ERUNTIME, "dilation should be greater than zero");
        }
    }
    /* The messages show an unbatched input as the batch of one it becomes. */
    int64_t xs[4] = {1, 1, 1, 1};
    memcpy(xs + 4 - x->ndim, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    mt_format_sizes(b1, sizeof(b1), 4, xs);
    mt_format_sizes(b2, sizeof(b2), wt->ndim, wt->sizes);
    if ((st = mt_conv_check_weight(wt, 4, b1, g->groups))) {
        return st;
    }
    if (xs[1] != wt->sizes[1] * g->groups) {
        return mt_fail(MT_ERUNTIME,
                       "Given groups=%" PRId64 ", weight of size %s, expected input%s to have "
                       "%" PRId64 " channels, but got %" PRId64 " channels instead",
                       g->groups, b2, b1, wt->sizes[1] * g->groups, xs[1]);
    }
    if (bias && (bias->ndim != 1 || bias->sizes[0] != wt->sizes[0])) {
        char b3[256];
        return mt_fail(MT_ERUNTIME,
                       "Given weight of size %s, expected bias to be 1-dimensional with %" PRId64
                       " elements, but got bias of size %s instead",
                       b2, wt->sizes[0], mt_format_sizes(b3, sizeof(b3), bias->ndim, bias->sizes));
    }
    *g = (conv_geom){.n = xs[0],
                     .c = xs[1],
                     .h = xs[2],
                     .w = xs[3],
                     .oc = wt->sizes[0],
                     .kh = wt->sizes[2],
                     .kw = wt->sizes[3],
                     .sh = stride[0],
                     .sw = stride[1],
                     .ph = pad[0],
                     .pw = pad[1],
                     .dh = dil[0],
                     .dw = dil[1],
                     .groups = g->groups};
    int64_t in_h = g->h + 2 * g->ph, in_w = g->w + 2 * g->pw;
    int64_t k_h = g->dh * (g->kh - 1) + 1, k_w = g->dw * (g->kw - 1) + 1;
    if (in_h < k_h || in_w < k_w) {
        return mt_fail(MT_ERUNTIME,
                       "Calculated padded input size per channel: (%" PRId64 " x %" PRId64
                       "). Kernel size: (%" PRId64 " x %" PRId64
                       "). Kernel size can't be greater than actual input size",
                       in_h, in_w, k_h, k_w);
    }
    if ((st = mt_conv_check_empty(x, 2)) || (st = mt_conv_check_kernel(wt, 2, dil))) {
        return st;
    }
    if (wt->dtype != x->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(wt->dtype));
    }
    g->oh = (in_h - k_h) / g->sh + 1;
    g->ow = (in_w - k_w) / g->sw + 1;
    /* zero input channels make zero output channels (PyTorch's Empty backend): none to compute */
    g->oc = g->c == 0 ? 0 : g->oc;
    const int64_t sizes[4] = {g->n, g->oc, g->oh, g->ow};
    const bool batched = x->ndim == 4;
    mt_conv_params c = {.dims = 2,
                        .stride = {g->sh, g->sw},
                        .pad = {g->ph, g->pw},
                        .dil = {g->dh, g->dw},
                        .groups = g->groups};
    mt_memory_format fmt[3];
    if (!mt_conv_layouts(x, wt, &c, false, fmt)) {
        fmt[0] = mt_conv_memory_format(x, wt);
    }
    return mt_front_output_format(p, x->dtype, x->ndim, sizes + !batched, fmt[0]);
}

/* The backward ops' geometry from the forward's input and weight sizes: grad_out (a->t[0])
 * must have the forward output's shape and a float dtype. */
static mt_status
backward_geom(const mt_args *a, int in_ndim, const int64_t *in_sizes, int w_ndim,
              const int64_t *w_sizes, conv_geom *g)
{
    const mt_tensor *go = a->t[0];
    char b1[256], b2[256];
    if ((in_ndim != 3 && in_ndim != 4) || w_ndim != 4) {
        return mt_fail(MT_ERUNTIME, "convolution_backward: expected a 3-D or 4-D input and a 4-D "
                                    "weight");
    }
    mt_status st;
    if ((st = mt_check_sizes(in_ndim, in_sizes)) || (st = mt_check_sizes(w_ndim, w_sizes))) {
        return st;
    }
    int64_t xs[4] = {1, 1, 1, 1};
    memcpy(xs + 4 - in_ndim, in_sizes, sizeof(int64_t) * (size_t)in_ndim);
    *g = (conv_geom){.n = xs[0],
                     .c = xs[1],
                     .h = xs[2],
                     .w = xs[3],
                     .oc = w_sizes[0],
                     .kh = w_sizes[2],
                     .kw = w_sizes[3],
                     .groups = a->i[0]};
    if (!mt_front_pair(&a->l[1], &g->sh, &g->sw) || !mt_front_pair(&a->l[2], &g->ph, &g->pw) ||
        !mt_front_pair(&a->l[3], &g->dh, &g->dw)) {
        return mt_fail(MT_ERUNTIME, "convolution_backward: stride, padding and dilation must be "
                                    "one or two ints");
    }
    if (g->sh <= 0 || g->sw <= 0 || g->dh <= 0 || g->dw <= 0 || g->ph < 0 || g->pw < 0 ||
        g->kh <= 0 || g->kw <= 0 || g->groups <= 0 || g->oc % g->groups ||
        g->c != w_sizes[1] * g->groups) {
        return mt_fail(MT_ERUNTIME,
                       "convolution_backward: input of size %s and weight of size %s do not make "
                       "a convolution with these arguments",
                       mt_format_sizes(b1, sizeof(b1), in_ndim, in_sizes),
                       mt_format_sizes(b2, sizeof(b2), w_ndim, w_sizes));
    }
    int64_t in_h = g->h + 2 * g->ph, in_w = g->w + 2 * g->pw;
    int64_t k_h = g->dh * (g->kh - 1) + 1, k_w = g->dw * (g->kw - 1) + 1;
    g->oh = in_h < k_h ? 0 : (in_h - k_h) / g->sh + 1;
    g->ow = in_w < k_w ? 0 : (in_w - k_w) / g->sw + 1;
    int64_t want[4] = {g->n, g->oc, g->oh, g->ow};
    if (go->ndim != in_ndim ||
        memcmp(go->sizes, want + 4 - in_ndim, sizeof(int64_t) * (size_t)in_ndim)) {
        return mt_fail(MT_ERUNTIME,
                       "convolution_backward: expected grad_output of size %s, but "
                       "got %s",
                       mt_format_sizes(b1, sizeof(b1), in_ndim, want + 4 - in_ndim),
                       mt_format_sizes(b2, sizeof(b2), go->ndim, go->sizes));
    }
    if (!mt_dtype_is_float(go->dtype)) {
        return mt_fail_not_implemented("convolution_backward", "", go->dtype);
    }
    return MT_OK;
}

conv3_geom
mt_conv3_geom(const int64_t *xs, const int64_t *ws, const int64_t *out, const mt_conv_params *c)
{
    conv3_geom g = {.c = xs[1],
                    .d = xs[2],
                    .kd = ws[2],
                    .od = out[0],
                    .sd = c->stride[0],
                    .pd = c->pad[0],
                    .dd = c->dil[0]};
    g.hw = (conv_geom){.n = xs[0],
                       .c = 1,
                       .h = xs[3],
                       .w = xs[4],
                       .oc = ws[0],
                       .kh = ws[3],
                       .kw = ws[4],
                       .oh = out[1],
                       .ow = out[2],
                       .sh = c->stride[1],
                       .sw = c->stride[2],
                       .ph = c->pad[1],
                       .pw = c->pad[2],
                       .dh = c->dil[1],
                       .dw = c->dil[2],
                       .groups = c->groups};
    return g;
}

/* An int[] argument of a 3-D convolution as its three values, one int standing for all. */
static bool
triple(const mt_intlist *l, int64_t *v)
{
    for (int d = 0; d < 3 && (l->n == 1 || l->n == 3); d++) {
        v[d] = l->v[l->n == 1 ? 0 : d];
    }
    return l->n == 1 || l->n == 3;
}

/* conv3d's weight gradient's geometry (convolution_backward_weight with a 5-D weight_size: the
 * CPU kernel's, for conv3d's gradient, ops/composite_conv3d.c; on other devices that composite
 * goes depth tap by depth tap), as conv3d's front end makes it: the depth slice's 2-D geometry
 * (one channel) and the depth's. grad_out (a->t[0]) must have the forward output's shape. */
static mt_status
backward_geom3(const mt_args *a, const mt_tensor *x, const int64_t *w_sizes, conv3_geom *g)
{
    const mt_tensor *go = a->t[0];
    char b1[256], b2[256];
    mt_conv_params c = {.dims = 3, .groups = a->i[0]};
    int64_t *s = c.stride, *pad = c.pad, *dil = c.dil, out[3];
    mt_status st;
    if (x->ndim != 5 || mt_tensor_device(go).type != MT_CPU) {
        return mt_fail(MT_ERUNTIME, "convolution_backward: expected a 3-D or 4-D input and a 4-D "
                                    "weight, or on the CPU a 5-D input and weight");
    }
    if ((st = mt_check_sizes(5, w_sizes))) {
        return st;
    }
    if (!triple(&a->l[1], s) || !triple(&a->l[2], pad) || !triple(&a->l[3], dil)) {
        return mt_fail(MT_ERUNTIME, "convolution_backward: stride, padding and dilation must be "
                                    "one or three ints");
    }
    bool ok = a->i[0] > 0 && w_sizes[0] % a->i[0] == 0 && x->sizes[1] == w_sizes[1] * a->i[0];
    for (int d = 0; d < 3; d++) {
        ok = ok && s[d] > 0 && dil[d] > 0 && pad[d] >= 0 && w_sizes[2 + d] > 0;
        const int64_t in = x->sizes[2 + d] + 2 * pad[d], k = dil[d] * (w_sizes[2 + d] - 1) + 1;
        out[d] = !ok || in < k ? 0 : (in - k) / s[d] + 1;
    }
    if (!ok) {
        return mt_fail(MT_ERUNTIME,
                       "convolution_backward: input of size %s and weight of size %s do not make "
                       "a convolution with these arguments",
                       mt_format_sizes(b1, sizeof(b1), 5, x->sizes),
                       mt_format_sizes(b2, sizeof(b2), 5, w_sizes));
    }
    const int64_t want[5] = {x->sizes[0], w_sizes[0], out[0], out[1], out[2]};
    if (go->ndim != 5 || memcmp(go->sizes, want, sizeof(want))) {
        return mt_fail(MT_ERUNTIME,
                       "convolution_backward: expected grad_output of size %s, but got %s",
                       mt_format_sizes(b1, sizeof(b1), 5, want),
                       mt_format_sizes(b2, sizeof(b2), go->ndim, go->sizes));
    }
    if (!mt_dtype_is_float(go->dtype)) {
        return mt_fail_not_implemented("convolution_backward", "", go->dtype);
    }
    *g = mt_conv3_geom(x->sizes, w_sizes, out, &c);
    return MT_OK;
}

// grad_output (N, OC, OH, OW) or unbatched; convolution_backward_input: weight t[1],
// input_size l[0]; convolution_backward_weight: input t[1], weight_size l[0] (conv3d's too:
// grad_output (N, OC, OD, OH, OW), input (N, C, D, H, W), a 5-D weight_size, on the CPU)
mt_status
mt_front_convolution_backward(const mt_args *a, mt_plan *p)
{
    const mt_intlist *size = &a->l[0];
    const mt_tensor *other = a->t[1];
    const bool w3 = p->op == MT_OP_convolution_backward_weight && size->n == 5;
    mt_status st = p->op == MT_OP_convolution_backward_input
                       ? backward_geom(a, size->n, size->v, other->ndim, other->sizes, &p->conv)
                   : w3 ? backward_geom3(a, other, size->v, &p->conv3)
                        : backward_geom(a, other->ndim, other->sizes, size->n, size->v, &p->conv);
    if (st) {
        return st;
    }
    /* the forward's format, which grad_output and the other operand carry */
    const mt_memory_format fmt = (size->n == 4 || w3) && a->t[0]->ndim == size->n
                                     ? mt_conv_memory_format(a->t[0], other)
                                     : MT_CONTIGUOUS_FORMAT;
    return mt_front_output_format(p, a->t[0]->dtype, size->n, size->v, fmt);
}

/* ---- im2col and col2im (unfold and fold): the blocks of a convolution with a C*KH*KW x 1
 * one-hot filter per channel, so conv_geom holds them: c channels of h x w images, blocks
 * oh x ow (im2col's shape checks, PyTorch's im2col_shape_check and col2im_shape_check) ---- */

/* floor(a / b) for b > 0 (PyTorch's div_rtn) */
static int64_t
floor_div(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return a % b != 0 && a < 0 ? q - 1 : q;
}

/* kernel_size, dilation, padding and stride (l[first..first+3]) into g, and their checks in
 * PyTorch's order (col2im checks the stride second) */
static mt_status
block_params(const mt_args *a, int first, bool fold, conv_geom *g)
{
    const mt_intlist *k = &a->l[first], *d = &a->l[first + 1], *p = &a->l[first + 2],
                     *s = &a->l[first + 3];
    const char *what = fold ? "col2im" : "im2col";
    for (int i = 0; i < 4; i++) {
        if (a->l[first + i].n != 2) {
            static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
            return mt_fail(MT_ERUNTIME, "It is expected %s equals to 2, but got size %d (%s)",
                           names[i], a->l[first + i].n, what);
        }
    }
    *g = (conv_geom){.kh = k->v[0],
                     .kw = k->v[1],
                     .dh = d->v[0],
                     .dw = d->v[1],
                     .ph = p->v[0],
                     .pw = p->v[1],
                     .sh = s->v[0],
                     .sw = s->v[1],
                     .groups = 1};
    if (g->kw <= 0 || g->kh <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kernel_height: %" PRId64
                       " kernel_width: %" PRId64,
                       g->kh, g->kw);
    }
    const bool stride_ok = g->sw > 0 && g->sh > 0;
    if (fold && !stride_ok) {
        goto out_stride;
    }
    if (g->dw <= 0 || g->dh <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilation_height: %" PRId64
                       " dilation_width: %" PRId64,
                       g->dh, g->dw);
    }
    if (g->pw < 0 || g->ph < 0) {
        return mt_fail(MT_ERUNTIME,
                       "padding should be non-negative, but got pad_height: %" PRId64
                       " pad_width: %" PRId64,
                       g->ph, g->pw);
    }
    if (stride_ok) {
        return MT_OK;
    }
out_stride:
    return mt_fail(MT_ERUNTIME,
                   "stride should be greater than zero, but got stride_height: %" PRId64
                   " stride_width: %" PRId64,
                   g->sh, g->sw);
}

/* the number of blocks along a dim of size n */
static int64_t
blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s)
{
    return floor_div(n + 2 * p - (d * (k - 1) + 1), s) + 1;
}

// self (N, C, H, W) or (C, H, W), kernel_size, dilation, padding, stride; out (N, C*KH*KW, L)
// or (C*KH*KW, L), L = OH * OW blocks
mt_status
mt_front_im2col(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    conv_geom *g = &p->conv;
    mt_status st = block_params(a, 0, false, g);
    if (st) {
        return st;
    }
    const int nd = x->ndim, b = nd == 4;
    if (nd < 3) { /* PyTorch's check reads sizes 1 and 2 first */
        const int want = nd < 2 ? 1 : 2;
        return nd == 0 ? mt_fail(MT_EINDEX, "Dimension specified as 1 but tensor has no dimensions")
                       : mt_fail(MT_EINDEX,
                                 "Dimension out of range (expected to be in range of [%d, %d], "
                                 "but got %d)",
                                 -nd, nd - 1, want);
    }
    const bool valid = (nd == 3 || nd == 4) && x->sizes[b] != 0 && x->sizes[b + 1] != 0 &&
                       x->sizes[b + 2] != 0;
    if (!valid) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                       "other non-zero dimensions for input, but got: %s",
                       mt_format_sizes(buf, sizeof(buf), nd, x->sizes));
    }
    g->n = b ? x->sizes[0] : 1;
    g->c = x->sizes[b];
    g->h = x->sizes[b + 1];
    g->w = x->sizes[b + 2];
    g->oc = g->c * g->kh * g->kw;
    g->oh = blocks(g->h, g->kh, g->dh, g->ph, g->sh);
    g->ow = blocks(g->w, g->kw, g->dw, g->pw, g->sw);
    if (g->oh < 1 || g->ow < 1) {
        /* PyTorch's message repeats the height */
        return mt_fail(MT_ERUNTIME,
                       "Given input with spatial size (%" PRId64 ", %" PRId64
                       "), kernel_size=(%" PRId64 ", %" PRId64 "), dilation=(%" PRId64 ", %" PRId64
                       "), padding=(%" PRId64 ", %" PRId64
                       "), calculated shape of the array of sliding blocks as (%" PRId64
                       ", %" PRId64 "), but its components must be at least one.",
                       g->h, g->h, g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->oh, g->ow);
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail_not_implemented("im2col_out_cpu", "", x->dtype);
    }
    const int64_t sizes[3] = {g->n, g->oc, g->oh * g->ow};
    return mt_front_output(p, x->dtype, nd - 1, sizes + (nd == 3));
}

// self (N, C*KH*KW, L) or (C*KH*KW, L), output_size (H, W), kernel_size, dilation, padding,
// stride; out (N, C, H, W) or (C, H, W)
mt_status
mt_front_col2im(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    const mt_intlist *size = &a->l[0];
    conv_geom *g = &p->conv;
    if (size->n != 2) {
        return mt_fail(MT_ERUNTIME, "It is expected output_size equals to 2, but got size %d",
                       size->n);
    }
    mt_status st = block_params(a, 1, true, g);
    if (st) {
        return st;
    }
    const int nd = x->ndim, b = nd == 3;
    const bool valid = (nd == 2 || nd == 3) && x->sizes[b] != 0 && x->sizes[b + 1] != 0;
    if (!valid) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                       "size and non-zero dimensions for input, but got: %s",
                       mt_format_sizes(buf, sizeof(buf), nd, x->sizes));
    }
    const int64_t planes = x->sizes[b], length = x->sizes[b + 1];
    if (planes % (g->kh * g->kw) != 0) {
        return mt_fail(MT_ERUNTIME,
                       "Expected size of input's dimension 1 to be divisible by the product of "
                       "kernel_size, but got input.size(1)=%" PRId64 " and kernel_size=(%" PRId64
                       ", %" PRId64 ").",
                       planes, g->kh, g->kw);
    }
    g->n = b ? x->sizes[0] : 1;
    g->c = planes / (g->kh * g->kw);
    g->oc = planes;
    g->h = size->v[0];
    g->w = size->v[1];
    g->oh = blocks(g->h, g->kh, g->dh, g->ph, g->sh);
    g->ow = blocks(g->w, g->kw, g->dw, g->pw, g->sw);
    if (length != g->oh * g->ow) {
        return mt_fail(MT_ERUNTIME,
                       "Given output_size=(%" PRId64 ", %" PRId64 "), kernel_size=(%" PRId64
                       ", %" PRId64 "), dilation=(%" PRId64 ", %" PRId64 "), padding=(%" PRId64
                       ", %" PRId64 "), stride=(%" PRId64 ", %" PRId64
                       "), expected size of input's dimension 2 to match the calculated number "
                       "of sliding blocks %" PRId64 " * %" PRId64 " = %" PRId64
                       ", but got input.size(2)=%" PRId64 ".",
                       g->h, g->w, g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->sh, g->sw, g->oh,
                       g->ow, g->oh * g->ow, length);
    }
    if (g->oh < 1 || g->ow < 1 || g->h < 1 || g->w < 1) {
        return mt_fail(MT_ERUNTIME,
                       "Given output_size=(%" PRId64 ", %" PRId64 "), kernel_size=(%" PRId64
                       ", %" PRId64 "), dilation=(%" PRId64 ", %" PRId64 "), padding=(%" PRId64
                       ", %" PRId64 "), stride=(%" PRId64 ", %" PRId64
                       "), calculated shape of the array of sliding blocks as (%" PRId64
                       ", %" PRId64 "), which is too small (non-positive)",
                       g->h, g->w, g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->sh, g->sw, g->oh,
                       g->ow);
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail_not_implemented("col2im_out_cpu", "", x->dtype);
    }
    const int64_t sizes[4] = {g->n, g->c, g->h, g->w};
    return mt_front_output(p, x->dtype, nd + 1, sizes + !b);
}
