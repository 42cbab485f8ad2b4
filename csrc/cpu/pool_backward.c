/* 2-D pooling's backward on the CPU: max_pool2d (the gradient goes to each window's argmax, from
 * the forward's indices), avg_pool2d and adaptive_avg_pool2d (each window's gradient spread
 * evenly over the pixels it averaged, with the forward's divisor).
 *
 * As in the forward, tensors are seen as planes (P, H, W); the gradient of the input is zeros of
 * self's shape into which every output element adds its share. Their arguments are the front
 * end's to check (ops/pool_checks.c); an index outside its plane is seen here. Floats only. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* One plane: gx (H, W) += what grad (OH, OW) gives back; idx (OH, OW) for max pooling. Returns
 * false on an index outside the plane. */
typedef bool (*pool_back_fn)(const void *grad, const int64_t *idx, void *gx, const pool_geom *g);

// grad, idx (OH, OW), gx (H, W): gx[idx[o]] += grad[o]
#define MAX_BACK(name, T)                                                              \
    static bool name(const void *gv, const int64_t *idx, void *xv, const pool_geom *g) \
    {                                                                                  \
        const T *grad = (const T *)gv;                                                 \
        T *gx = (T *)xv;                                                               \
        for (int64_t o = 0; o < g->oh * g->ow; o++) {                                  \
            if (idx[o] < 0 || idx[o] >= g->h * g->w) {                                 \
                return false;                                                          \
            }                                                                          \
            gx[idx[o]] += grad[o];                                                     \
        }                                                                              \
        return true;                                                                   \
    }

// grad (OH, OW), gx (H, W): each window's grad / its divisor added to its pixels inside the
// image; the windows and divisors of the forward in pool.c: avg_pool2d's, or (ADAPTIVE)
// adaptive_avg_pool2d's, rows [floor(oh*H/OH), ceil((oh+1)*H/OH)) and the columns likewise,
// divided by their height, then their width
#define MEAN_BACK(name, T, ADAPTIVE)                                                           \
    static bool name(const void *gv, const int64_t *idx, void *xv, const pool_geom *g)         \
    {                                                                                          \
        (void)idx;                                                                             \
        const T *grad = (const T *)gv;                                                         \
        T *gx = (T *)xv;                                                                       \
        for (int64_t oh = 0; oh < g->oh; oh++) {                                               \
            for (int64_t ow = 0; ow < g->ow; ow++) {                                           \
                int64_t h0, h1, w0, w1;                                                        \
                const int64_t divide = mt_mean_pool_window(g, ADAPTIVE, oh, ow, &h0, &h1, &w0, \
                                                           &w1);                               \
                if (h0 >= h1 || w0 >= w1) {                                                    \
                    continue;                                                                  \
                }                                                                              \
                const T go = grad[oh * g->ow + ow];                                            \
                const T v = ADAPTIVE ? go / (T)(h1 - h0) / (T)(w1 - w0) : go / (T)divide;      \
                for (int64_t ih = h0; ih < h1; ih++) {                                         \
                    for (int64_t iw = w0; iw < w1; iw++) {                                     \
                        gx[ih * g->w + iw] += v;                                               \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return true;                                                                           \
    }

MAX_BACK(max_back_f32, float)
MAX_BACK(max_back_f64, double)
MEAN_BACK(avg_back_f32, float, false)
MEAN_BACK(avg_back_f64, double, false)
MEAN_BACK(adaptive_back_f32, float, true)
MEAN_BACK(adaptive_back_f64, double, true)

/* a->out[0] = zeros shaped as self (t[1]) with loop's gradient of grad (t[0]) added, plane by
 * plane; idx (or NULL) the forward's indices. */
static mt_status
run_back(mt_args *a, pool_back_fn loop, const pool_geom *g, mt_tensor *idx)
{
    mt_tensor *self = a->t[1], *grad = NULL, *ix = NULL, *gx = NULL;
    mt_dtype dt = a->t[0]->dtype;
    size_t item = mt_dtype_size(dt);
    mt_status st = mt_tensor_empty(self->ndim, self->sizes, dt, MT_DEVICE_CPU, &gx);
    if (st == MT_OK) {
        memset(mt_tensor_data(gx), 0, (size_t)mt_tensor_numel(gx) * item);
        st = mt_cpu_dense(a->t[0], dt, &grad);
    }
    if (st == MT_OK && idx) {
        st = mt_cpu_dense(idx, MT_INT64, &ix);
    }
    if (st) {
        goto out_release;
    }
    const int64_t in_plane = g->h * g->w, out_plane = g->oh * g->ow, size = (int64_t)item;
    /* threads over the planes (each writes its own plane of gx) */
    const int parts = mt_parallel_parts(g->planes * (in_plane + out_plane), 32768);
    const char *gd = mt_tensor_data(grad);
    const int64_t *id = ix ? (const int64_t *)mt_tensor_data(ix) : NULL;
    char *xd = mt_tensor_data(gx);
    bool ok = true;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(&& : ok)
    for (int64_t p = 0; p < g->planes; p++) {
        ok = loop(gd + p * out_plane * size, id ? id + p * out_plane : NULL,
                  xd + p * in_plane * size, g) &&
             ok;
    }
    if (!ok) {
        st = mt_fail_pool_index(in_plane);
        goto out_release;
    }
    a->out[0] = gx;
    gx = NULL;
out_release:
    mt_tensor_clear(&grad);
    mt_tensor_clear(&ix);
    mt_tensor_clear(&gx);
    return st;
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W), indices (int64,
// grad_output's shape) of each window's maximum in its plane; out (self's shape)
mt_status
mt_cpu_max_pool2d_with_indices_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *idx = a->t[2];
    return run_back(a, grad->dtype == MT_FLOAT32 ? max_back_f32 : max_back_f64, &a->plan->pool,
                    idx);
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W), the forward's
// window arguments; out (self's shape)
mt_status
mt_cpu_avg_pool2d_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0];
    return run_back(a, grad->dtype == MT_FLOAT32 ? avg_back_f32 : avg_back_f64, &a->plan->pool,
                    NULL);
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W); out (self's shape)
mt_status
mt_cpu__adaptive_avg_pool2d_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0];
    return run_back(a, grad->dtype == MT_FLOAT32 ? adaptive_back_f32 : adaptive_back_f64,
                    &a->plan->pool, NULL);
}
