/* 2-D pooling on the CPU: max_pool2d (with or without indices), avg_pool2d, adaptive_avg_pool2d.
 *
 * The input is made contiguous and seen as planes (N*C, H, W); each output element is one window
 * of its plane. Window bounds, divisors and the NaN rule are PyTorch's (Pool.h, cpu_max_pool,
 * cpu_avg_pool, cpu_adaptive_avg_pool); the checks and the geometry are the front end's
 * (ops/pool_checks.c). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

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
#define MAX_POOL(name, T, LOWEST, ISNAN)                                                      \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)              \
    {                                                                                         \
        const T *x = (const T *)xv;                                                           \
        T *out = (T *)ov;                                                                     \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                              \
            int64_t h0 = oh * g->sh - g->ph, h1 = lo(h0 + (g->kh - 1) * g->dh + 1, g->h);     \
            h0 = first_tap(h0, g->dh);                                                        \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                          \
                int64_t w0 = ow * g->sw - g->pw, w1 = lo(w0 + (g->kw - 1) * g->dw + 1, g->w); \
                w0 = first_tap(w0, g->dw);                                                    \
                T best = LOWEST;                                                              \
                int64_t at = h0 * g->w + w0;                                                  \
                for (int64_t ih = h0; ih < h1; ih += g->dh) {                                 \
                    for (int64_t iw = w0; iw < w1; iw += g->dw) {                             \
                        const T v = x[ih * g->w + iw];                                        \
                        if (v > best || ISNAN(v)) {                                           \
                            best = v;                                                         \
                            at = ih * g->w + iw;                                              \
                        }                                                                     \
                    }                                                                         \
                }                                                                             \
                *out++ = best;                                                                \
                if (idx) {                                                                    \
                    *idx++ = at;                                                              \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }

/* The sum of x (H, W) over rows [h0, h1) and columns [w0, w1). */
#define WINDOW_SUM(name, T, ACC)                                                           \
    static ACC name(const T *x, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1) \
    {                                                                                      \
        ACC sum = 0;                                                                       \
        for (int64_t ih = h0; ih < h1; ih++) {                                             \
            for (int64_t iw = w0; iw < w1; iw++) {                                         \
                sum += x[ih * w + iw];                                                     \
            }                                                                              \
        }                                                                                  \
        return sum;                                                                        \
    }

// x (H, W), out (OH, OW): each window's sum over its taps inside the image, divided by
// divisor_override, or the window's size clipped to the padded image (count_include_pad),
// or the count of taps inside the image. ADAPTIVE (adaptive_avg_pool2d): window (oh, ow) spans
// rows [floor(oh*H/OH), ceil((oh+1)*H/OH)) and the columns likewise; out is its mean.
#define AVG_POOL(name, T, ACC, SUM, ADAPTIVE)                                                  \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)               \
    {                                                                                          \
        (void)idx;                                                                             \
        const T *x = (const T *)xv;                                                            \
        T *out = (T *)ov;                                                                      \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                               \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                           \
                int64_t h0, h1, w0, w1;                                                        \
                const int64_t divide = mt_mean_pool_window(g, ADAPTIVE, oh, ow, &h0, &h1, &w0, \
                                                           &w1);                               \
                ACC sum = SUM(x, g->w, h0, h1, w0, w1);                                        \
                /* a window of padding only is 0 (its divisor may be too) */                   \
                if (h0 >= h1 || w0 >= w1) {                                                    \
                    *out++ = 0;                                                                \
                } else if (ADAPTIVE) {                                                         \
                    *out++ = (T)(sum / (ACC)(h1 - h0) / (ACC)(w1 - w0));                       \
                } else {                                                                       \
                    *out++ = (T)(sum / (ACC)divide);                                           \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

#define NO_NAN(v) false
MAX_POOL(max_f32, float, -INFINITY, isnan)
MAX_POOL(max_f64, double, -INFINITY, isnan)
MAX_POOL(max_i32, int32_t, INT32_MIN, NO_NAN)
MAX_POOL(max_i64, int64_t, INT64_MIN, NO_NAN)
WINDOW_SUM(sum_f32, float, float)
WINDOW_SUM(sum_f64, double, double)
WINDOW_SUM(sum_i64, int64_t, int64_t)
AVG_POOL(avg_f32, float, float, sum_f32, false)
AVG_POOL(avg_f64, double, double, sum_f64, false)
AVG_POOL(avg_i64, int64_t, int64_t, sum_i64, false)
AVG_POOL(adaptive_f32, float, float, sum_f32, true)
AVG_POOL(adaptive_f64, double, double, sum_f64, true)

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
    const int64_t item = (int64_t)mt_dtype_size(x->dtype);
    /* threads over the planes; a plane costs about its output times the window */
    const int parts = mt_parallel_parts(g->planes * g->oh * g->ow * g->kh * g->kw, 32768);
    char *xd = mt_tensor_data(x), *od = mt_tensor_data(out);
    int64_t *id = idx ? (int64_t *)mt_tensor_data(idx) : NULL;
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t p = 0; p < g->planes; p++) {
        loop(xd + p * g->h * g->w * item, od + p * g->oh * g->ow * item,
             id ? id + p * g->oh * g->ow : NULL, g);
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

static mt_status
max_pool(mt_args *a, bool want_idx)
{
    const mt_tensor *x = a->t[0];
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = max_f32, [MT_FLOAT64] = max_f64, [MT_INT32] = max_i32, [MT_INT64] = max_i64};
    if (loops[x->dtype] == NULL) {
        return mt_fail_not_implemented("max_pool2d", "", x->dtype); /* for both forms */
    }
    return run_pool(a, loops[x->dtype], &a->plan->pool, want_idx);
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

// self (N, C, H, W) or (C, H, W); out (N, C, OH, OW) or (C, OH, OW)
mt_status
mt_cpu_avg_pool2d(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = avg_f32, [MT_FLOAT64] = avg_f64, [MT_INT64] = avg_i64};
    if (loops[x->dtype] == NULL) {
        return mt_fail_not_implemented("avg_pool2d", "", x->dtype);
    }
    return run_pool(a, loops[x->dtype], &a->plan->pool, false);
}

// self (N, C, H, W) or (C, H, W); out (N, C, OH, OW) or (C, OH, OW), output_size (OH, OW)
mt_status
mt_cpu_adaptive_avg_pool2d(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = adaptive_f32, [MT_FLOAT64] = adaptive_f64};
    if (loops[x->dtype] == NULL) {
        return mt_fail_not_implemented("adaptive_avg_pool2d", "", x->dtype);
    }
    return run_pool(a, loops[x->dtype], &a->plan->pool, false);
}
