/* 2-D pooling on the CPU: max_pool2d (with or without indices), avg_pool2d, adaptive_avg_pool2d.
 *
 * The input is made contiguous and seen as planes (N*C, H, W); each output element is one window
 * of its plane. Window bounds, divisors and the NaN rule are PyTorch's (Pool.h, cpu_max_pool,
 * cpu_avg_pool, cpu_adaptive_avg_pool), and so are the checks and their order: the first failing
 * check gives PyTorch's message. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/pool.h"
#include "dispatch/kernels.h"

/* ---- argument checks ---- */

/* l's one or two values as (first, second); false if it has another count. */
static bool
pair(const mt_intlist *l, int64_t *first, int64_t *second)
{
    if (l->n != 1 && l->n != 2) {
        return false;
    }
    *first = l->v[0];
    *second = l->v[l->n - 1];
    return true;
}

/* a / b rounded toward negative infinity (PyTorch's div_rtn); b != 0. */
static int64_t
div_rtn(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* PyTorch's pooling_output_shape: the window count along one dim, after its checks. */
static mt_status
output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
            int64_t *out)
{
    if (stride == 0) {
        return mt_fail(MT_ERUNTIME, "stride should not be zero");
    }
    if (pad < 0) {
        return mt_fail(MT_ERUNTIME, "pad must be non-negative, but got pad: %" PRId64, pad);
    }
    if (pad > ((k - 1) * dil + 1) / 2) {
        return mt_fail(MT_ERUNTIME,
                       "pad should be at most half of effective kernel size, but got pad=%" PRId64
                       ", kernel_size=%" PRId64 " and dilation=%" PRId64,
                       pad, k, dil);
    }
    int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t n = div_rtn(span, stride) + 1;
    /* In ceil mode the last window must start inside the image or its left padding. */
    if (ceil_mode && (n - 1) * stride >= in + pad) {
        n--;
    }
    *out = n;
    return MT_OK;
}

/* PyTorch's pool2d_shape_check (contiguous layout) for x (C, H, W) or (N, C, H, W). */
static mt_status
shape_check(const mt_tensor *x, const pool_geom *g)
{
    if (g->kh <= 0 || g->kw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kH: %" PRId64
                       " kW: %" PRId64, g->kh, g->kw);
    }
    if (g->sh <= 0 || g->sw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "stride should be greater than zero, but got dH: %" PRId64 " dW: %" PRId64,
                       g->sh, g->sw);
    }
    if (g->dh <= 0 || g->dw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilationH: %" PRId64
                       " dilationW: %" PRId64, g->dh, g->dw);
    }
    const int64_t *s = x->sizes;
    bool valid = x->ndim >= 3 && s[1] != 0 && s[2] != 0;
    if (!((x->ndim == 3 && s[0] != 0 && valid) || (x->ndim == 4 && valid && s[3] != 0))) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                       "input, but got:%s",
                       mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    if (g->kw / 2 < g->pw || g->kh / 2 < g->ph) {
        return mt_fail(MT_ERUNTIME,
                       "pad should be smaller than or equal to half of kernel size, but got padW = "
                       "%" PRId64 ", padH = %" PRId64 ", kW = %" PRId64 ", kH = %" PRId64,
                       g->pw, g->ph, g->kw, g->kh);
    }
    if (g->ow < 1 || g->oh < 1) {
        int64_t c = x->sizes[x->ndim - 3];
        return mt_fail(MT_ERUNTIME,
                       "Given input size: (%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Calculated output size: (%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Output size is too small",
                       c, g->h, g->w, c, g->oh, g->ow);
    }
    return MT_OK;
}

/* Window geometry of max_pool2d and avg_pool2d from their int[] arguments kernel_size, stride
 * and padding (slots 0-2); `op` names the op in the messages. */
static mt_status
window_args(const mt_args *a, const char *op, pool_geom *g)
{
    const mt_intlist *stride = &a->l[1];
    if (!pair(&a->l[0], &g->kh, &g->kw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    }
    if (stride->none || stride->n == 0) {
        g->sh = g->kh;
        g->sw = g->kw;
    } else if (!pair(stride, &g->sh, &g->sw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: stride must either be omitted, a single int, or a tuple of two "
                       "ints",
                       op);
    }
    if (!pair(&a->l[2], &g->ph, &g->pw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: padding must either be a single int, or a tuple of two ints", op);
    }
    return MT_OK;
}

/* Output sizes and the checks that follow them; x has at least 3 dims. */
static mt_status
window_shape(const mt_tensor *x, bool ceil_mode, pool_geom *g)
{
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    g->planes = mt_tensor_numel(x) / (g->h * g->w > 0 ? g->h * g->w : 1);
    mt_status st;
    if ((st = output_size(g->h, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh)) ||
        (st = output_size(g->w, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow))) {
        return st;
    }
    return shape_check(x, g);
}

static mt_status
not_implemented(const char *op, mt_dtype dt)
{
    return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for '%s'", op, mt_dtype_scalar_name(dt));
}

/* ---- the loops: one plane each, one instance per dtype ---- */

/* The first tap index >= 0 of a window starting at `start` with taps every `dil`. */
static int64_t
first_tap(int64_t start, int64_t dil)
{
    return start >= 0 ? start : start + (-start + dil - 1) / dil * dil;
}

/* min(a, b) */
static int64_t
lo(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

// x (H, W), out (OH, OW), idx (OH, OW) int64 flat h*W+w, or NULL.
// A NaN wins and a later NaN wins again (PyTorch's `val > max || isnan(val)`).
#define MAX_POOL(name, T, LOWEST, ISNAN)                                                           \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)                   \
    {                                                                                              \
        const T *x = (const T *)xv;                                                                \
        T *out = (T *)ov;                                                                          \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                                   \
            int64_t h0 = oh * g->sh - g->ph, h1 = lo(h0 + (g->kh - 1) * g->dh + 1, g->h);          \
            h0 = first_tap(h0, g->dh);                                                             \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                               \
                int64_t w0 = ow * g->sw - g->pw, w1 = lo(w0 + (g->kw - 1) * g->dw + 1, g->w);      \
                w0 = first_tap(w0, g->dw);                                                         \
                T best = LOWEST;                                                                   \
                int64_t at = h0 * g->w + w0;                                                       \
                for (int64_t ih = h0; ih < h1; ih += g->dh) {                                      \
                    for (int64_t iw = w0; iw < w1; iw += g->dw) {                                  \
                        const T v = x[ih * g->w + iw];                                             \
                        if (v > best || ISNAN(v)) {                                                \
                            best = v;                                                              \
                            at = ih * g->w + iw;                                                   \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
                *out++ = best;                                                                     \
                if (idx) {                                                                         \
                    *idx++ = at;                                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* The sum of x (H, W) over rows [h0, h1) and columns [w0, w1). */
#define WINDOW_SUM(name, T, ACC)                                                                   \
    static ACC name(const T *x, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1)         \
    {                                                                                              \
        ACC sum = 0;                                                                               \
        for (int64_t ih = h0; ih < h1; ih++) {                                                     \
            for (int64_t iw = w0; iw < w1; iw++) {                                                 \
                sum += x[ih * w + iw];                                                             \
            }                                                                                      \
        }                                                                                          \
        return sum;                                                                                \
    }

// x (H, W), out (OH, OW): each window's sum over its taps inside the image, divided by
// divisor_override, or the window's size clipped to the padded image (count_include_pad),
// or the count of taps inside the image.
#define AVG_POOL(name, T, ACC, SUM)                                                                \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)                   \
    {                                                                                              \
        (void)idx;                                                                                 \
        const T *x = (const T *)xv;                                                                \
        T *out = (T *)ov;                                                                          \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                                   \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                               \
                int64_t h0, h1, w0, w1;                                                            \
                const int64_t divide = mt_avg_pool_window(g, oh, ow, &h0, &h1, &w0, &w1);          \
                ACC sum = SUM(x, g->w, h0, h1, w0, w1);                                            \
                /* a window of padding only is 0 (its divisor may be too) */                       \
                *out++ = h0 < h1 && w0 < w1 ? (T)(sum / (ACC)divide) : 0;                          \
            }                                                                                      \
        }                                                                                          \
    }

// x (H, W), out (OH, OW): window (oh, ow) spans rows [floor(oh*H/OH), ceil((oh+1)*H/OH))
// and the columns likewise; out is its mean.
#define ADAPTIVE_AVG_POOL(name, T, ACC, SUM)                                                       \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)                   \
    {                                                                                              \
        (void)idx;                                                                                 \
        const T *x = (const T *)xv;                                                                \
        T *out = (T *)ov;                                                                          \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                                   \
            int64_t h0, h1, w0, w1;                                                                \
            mt_adaptive_window(oh, g->h, g->oh, &h0, &h1);                                         \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                               \
                mt_adaptive_window(ow, g->w, g->ow, &w0, &w1);                                     \
                ACC sum = SUM(x, g->w, h0, h1, w0, w1);                                            \
                *out++ = (T)(sum / (ACC)(h1 - h0) / (ACC)(w1 - w0));                               \
            }                                                                                      \
        }                                                                                          \
    }

#define NO_NAN(v) false
MAX_POOL(max_f32, float, -INFINITY, isnan)
MAX_POOL(max_f64, double, -INFINITY, isnan)
MAX_POOL(max_i32, int32_t, INT32_MIN, NO_NAN)
MAX_POOL(max_i64, int64_t, INT64_MIN, NO_NAN)
WINDOW_SUM(sum_f32, float, float)
WINDOW_SUM(sum_f64, double, double)
WINDOW_SUM(sum_i64, int64_t, int64_t)
AVG_POOL(avg_f32, float, float, sum_f32)
AVG_POOL(avg_f64, double, double, sum_f64)
AVG_POOL(avg_i64, int64_t, int64_t, sum_i64)
ADAPTIVE_AVG_POOL(adaptive_f32, float, float, sum_f32)
ADAPTIVE_AVG_POOL(adaptive_f64, double, double, sum_f64)

/* One plane: x (H, W) -> out (OH, OW), idx (OH, OW) or NULL. */
typedef void (*pool_fn)(const void *x, void *out, int64_t *idx, const pool_geom *g);

/* Runs loop on x (contiguous in a copy if need be) into a new out shaped like x with (OH, OW)
 * last, and an int64 idx of that shape if want_idx; sets a->out. */
static mt_status
run_pool(mt_args *a, pool_fn loop, const pool_geom *g, bool want_idx)
{
    mt_tensor *self = a->t[0], *x = NULL, *out = NULL, *idx = NULL;
    int64_t sizes[MT_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    sizes[self->ndim - 2] = g->oh;
    sizes[self->ndim - 1] = g->ow;
    mt_status st = mt_tensor_empty(self->ndim, sizes, self->dtype, mt_tensor_device(self), &out);
    if (st == MT_OK && want_idx) {
        st = mt_tensor_empty(self->ndim, sizes, MT_INT64, mt_tensor_device(self), &idx);
    }
    if (st == MT_OK) {
        st = mt_tensor_is_contiguous(self) ? (x = mt_tensor_retain(self), MT_OK)
                                           : mt_cpu_cast(self, self->dtype, &x);
    }
    if (st) {
        goto out_release;
    }
    size_t item = mt_dtype_size(x->dtype);
    for (int64_t p = 0; p < g->planes; p++) {
        loop(mt_tensor_data(x) + p * g->h * g->w * (int64_t)item,
             mt_tensor_data(out) + p * g->oh * g->ow * (int64_t)item,
             idx ? (int64_t *)mt_tensor_data(idx) + p * g->oh * g->ow : NULL, g);
    }
    a->out[0] = out;
    a->out[1] = idx;
    out = idx = NULL;
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&out);
    mt_tensor_clear(&idx);
    return st;
}

/* ---- the ops ---- */

mt_status
mt_max_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){0};
    mt_status st = window_args(a, "max_pool2d", g);
    if (st) {
        return st;
    }
    if (!pair(&a->l[3], &g->dh, &g->dw)) {
        return mt_fail(MT_ERUNTIME,
                       "max_pool2d: dilation must be either a single int, or a tuple of two ints");
    }
    if (x->ndim != 3 && x->ndim != 4) {
        return mt_fail(MT_ERUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
    }
    return window_shape(x, a->b[0], g);
}

static mt_status
max_pool(mt_args *a, bool want_idx)
{
    const mt_tensor *x = a->t[0];
    pool_geom g;
    mt_status st = mt_max_pool2d_geom(a, x, &g);
    if (st) {
        return st;
    }
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = max_f32, [MT_FLOAT64] = max_f64, [MT_INT32] = max_i32, [MT_INT64] = max_i64};
    if (loops[x->dtype] == NULL) {
        return not_implemented("max_pool2d", x->dtype); /* PyTorch's name for both forms */
    }
    return run_pool(a, loops[x->dtype], &g, want_idx);
}

// self (N, C, H, W) or (C, H, W); out (N, C, OH, OW) or (C, OH, OW)
mt_status
mt_cpu_max_pool2d(mt_args *a)
{
    return max_pool(a, false);
}

// as max_pool2d; indices (int64, out's shape) of each maximum within its plane, h * W + w
mt_status
mt_cpu_max_pool2d_with_indices(mt_args *a)
{
    return max_pool(a, true);
}

/* Checks the input has dim -3, as PyTorch's input.size(-3) does. */
static mt_status
has_dim_minus_3(const mt_tensor *x)
{
    if (x->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as -3 but tensor has no dimensions");
    }
    int d;
    return mt_wrap_dim(-3, x->ndim, &d);
}

mt_status
mt_avg_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){.dh = 1, .dw = 1, .count_include_pad = a->b[1]};
    mt_status st = window_args(a, "avg_pool2d", g);
    if (st) {
        return st;
    }
    g->has_divisor = !(a->i_none & 1u);
    g->divisor = a->i[0];
    if (g->has_divisor && g->divisor == 0) {
        return mt_fail(MT_ERUNTIME, "divisor must be not zero");
    }
    if ((st = has_dim_minus_3(x))) {
        return st;
    }
    return window_shape(x, a->b[0], g);
}

// self (N, C, H, W) or (C, H, W); out (N, C, OH, OW) or (C, OH, OW)
mt_status
mt_cpu_avg_pool2d(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    pool_geom g;
    mt_status st = mt_avg_pool2d_geom(a, x, &g);
    if (st) {
        return st;
    }
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = avg_f32, [MT_FLOAT64] = avg_f64, [MT_INT64] = avg_i64};
    if (loops[x->dtype] == NULL) {
        return not_implemented("avg_pool2d", x->dtype);
    }
    return run_pool(a, loops[x->dtype], &g, false);
}

mt_status
mt_adaptive_avg_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){0};
    char buf[256];
    if (a->l[0].n == 1) {
        g->oh = g->ow = a->l[0].v[0];
    } else if (a->l[0].n == 2) {
        g->oh = a->l[0].v[0];
        g->ow = a->l[0].v[1];
    } else {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool2d: output_size must be 2");
    }
    if (g->oh < 0 || g->ow < 0) {
        return mt_fail(MT_ERUNTIME,
                       "adaptive_avg_pool2d: elements of output_size must be greater than or "
                       "equal to 0 but received {%" PRId64 ", %" PRId64 "}",
                       g->oh, g->ow);
    }
    if (x->ndim != 3 && x->ndim != 4) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %s",
                       mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    for (int d = x->ndim - 2; d < x->ndim; d++) {
        if (x->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                           "non-batch dimensions, but input has sizes %s with dimension %d being "
                           "empty",
                           mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), d);
        }
    }
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    g->planes = mt_tensor_numel(x) / (g->h * g->w);
    return MT_OK;
}

// self (N, C, H, W) or (C, H, W); out (N, C, OH, OW) or (C, OH, OW), output_size (OH, OW)
mt_status
mt_cpu_adaptive_avg_pool2d(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    pool_geom g;
    mt_status st = mt_adaptive_avg_pool2d_geom(a, x, &g);
    if (st) {
        return st;
    }
    static const pool_fn loops[MT_NUM_DTYPES] = {[MT_FLOAT32] = adaptive_f32,
                                                 [MT_FLOAT64] = adaptive_f64};
    if (loops[x->dtype] == NULL) {
        return not_implemented("adaptive_avg_pool2d", x->dtype);
    }
    return run_pool(a, loops[x->dtype], &g, false);
}
