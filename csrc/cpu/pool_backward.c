/* 2-D and 3-D pooling's backward on the CPU: max_pool2d/3d (the gradient goes to each window's
 * argmax, from the forward's indices), avg_pool2d and adaptive_avg_pool2d (each window's gradient
 * spread evenly over the pixels it averaged, with the forward's divisor).
 *
 * As in the forward, tensors are seen as planes (P, D, H, W), D = 1 in 2-D; the gradient of the
 * input is zeros of self's shape into which every output element adds its share. A channels-last
 * result (of a channels-last self) is computed an image (D, H, W, C) at a time, a position's
 * channels at once. Their arguments are the front end's to check (ops/pool_checks.c); an index
 * outside its plane is seen here. Floats only. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* One plane: gx (D, H, W) += what grad (OD, OH, OW) gives back; idx (OD, OH, OW) for max
 * pooling. Returns false on an index outside the plane. */
typedef bool (*pool_back_fn)(const void *grad, const int64_t *idx, void *gx, const pool_geom *g);

// grad, idx (OD, OH, OW), gx (D, H, W): gx[idx[o]] += grad[o]
#define MAX_BACK(name, T)                                                              \
    static bool name(const void *gv, const int64_t *idx, void *xv, const pool_geom *g) \
    {                                                                                  \
        const T *grad = (const T *)gv;                                                 \
        T *gx = (T *)xv;                                                               \
        for (int64_t o = 0; o < g->od * g->oh * g->ow; o++) {                          \
            if (idx[o] < 0 || idx[o] >= g->d * g->h * g->w) {                          \
                return false;                                                          \
            }                                                                          \
            gx[idx[o]] += grad[o];                                                     \
        }                                                                              \
        return true;                                                                   \
    }

/* gx (D, H, W) += v over depths [b[0], b[1]), rows [b[2], b[3]), columns [b[4], b[5]). */
#define WINDOW_ADD(name, T)                                              \
    static void name(T *gx, const pool_geom *g, const int64_t b[6], T v) \
    {                                                                    \
        for (int64_t id = b[0]; id < b[1]; id++) {                       \
            for (int64_t ih = b[2]; ih < b[3]; ih++) {                   \
                for (int64_t iw = b[4]; iw < b[5]; iw++) {               \
                    gx[(id * g->h + ih) * g->w + iw] += v;               \
                }                                                        \
            }                                                            \
        }                                                                \
    }

// grad (OD, OH, OW), gx (D, H, W): each window's grad / divisor added to its taps inside the
// input (windows, divisors as the avg pooling forward's in pool.c)
#define AVG_BACK(name, T, ADD)                                                         \
    static bool name(const void *gv, const int64_t *idx, void *xv, const pool_geom *g) \
    {                                                                                  \
        (void)idx;                                                                     \
        const T *grad = (const T *)gv;                                                 \
        for (int64_t od = 0; od < g->od; od++) {                                       \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                   \
                for (int64_t ow = 0; ow < g->ow; ow++) {                               \
                    int64_t b[6];                                                      \
                    const int64_t divide = mt_avg_pool_window(g, od, oh, ow, b);       \
                    if (mt_pool_window_inside(b)) {                                    \
                        ADD((T *)xv, g, b, *grad / (T)divide);                         \
                    }                                                                  \
                    grad++;                                                            \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        return true;                                                                   \
    }

// grad (OD, OH, OW), gx (D, H, W): window (od, oh, ow) spans depths [floor(od*D/OD),
// ceil((od+1)*D/OD)) and the rows and columns likewise; its grad / its size goes to each of
// its taps
#define ADAPTIVE_BACK(name, T, ADD)                                                        \
    static bool name(const void *gv, const int64_t *idx, void *xv, const pool_geom *g)     \
    {                                                                                      \
        (void)idx;                                                                         \
        const T *grad = (const T *)gv;                                                     \
        int64_t b[6];                                                                      \
        for (int64_t od = 0; od < g->od; od++) {                                           \
            mt_adaptive_window(od, g->d, g->od, &b[0], &b[1]);                             \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                       \
                mt_adaptive_window(oh, g->h, g->oh, &b[2], &b[3]);                         \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                   \
                    mt_adaptive_window(ow, g->w, g->ow, &b[4], &b[5]);                     \
                    ADD((T *)xv, g, b,                                                     \
                        *grad++ / (T)(b[1] - b[0]) / (T)(b[3] - b[2]) / (T)(b[5] - b[4])); \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        return true;                                                                       \
    }

MAX_BACK(max_back_f32, float)
MAX_BACK(max_back_f64, double)
WINDOW_ADD(add_f32, float)
WINDOW_ADD(add_f64, double)
AVG_BACK(avg_back_f32, float, add_f32)
AVG_BACK(avg_back_f64, double, add_f64)
ADAPTIVE_BACK(adaptive_back_f32, float, add_f32)
ADAPTIVE_BACK(adaptive_back_f64, double, add_f64)

/* ---- channels-last: an image (D, H, W, C) at a time, a position's C channels side by side,
 * each element's shares added in the order of the loops above ---- */

// grad and idx (OD, OH, OW, C) (idx: max pooling's, else NULL), gx (D, H, W, C): one image,
// as MAX_BACK, AVG_BACK or ADAPTIVE_BACK (kind) channel by channel. False on an index
// outside the plane.
#define BACK_CL(name, T)                                                                          \
    static bool name(pool_kind kind, const T *restrict grad, const int64_t *restrict idx,         \
                     T *restrict gx, const pool_geom *g, int64_t C)                               \
    {                                                                                             \
        const int64_t in_plane = g->d * g->h * g->w;                                              \
        for (int64_t pos = 0; pos < g->od * g->oh * g->ow; pos++) {                               \
            const T *restrict gr = grad + pos * C;                                                \
            if (kind == POOL_MAX) {                                                               \
                const int64_t *restrict ix = idx + pos * C;                                       \
                for (int64_t c = 0; c < C; c++) {                                                 \
                    if (ix[c] < 0 || ix[c] >= in_plane) {                                         \
                        return false;                                                             \
                    }                                                                             \
                    gx[ix[c] * C + c] += gr[c];                                                   \
                }                                                                                 \
                continue;                                                                         \
            }                                                                                     \
            const int64_t od = pos / (g->oh * g->ow), oh = pos / g->ow % g->oh, ow = pos % g->ow; \
            int64_t b[6], divide = 1;                                                             \
            if (kind == POOL_AVG) {                                                               \
                divide = mt_avg_pool_window(g, od, oh, ow, b);                                    \
            } else {                                                                              \
                mt_adaptive_pool_window(g, od, oh, ow, b);                                        \
            }                                                                                     \
            for (int64_t id = b[0]; id < b[1]; id++) {                                            \
                for (int64_t ih = b[2]; ih < b[3]; ih++) {                                        \
                    for (int64_t iw = b[4]; iw < b[5]; iw++) {                                    \
                        T *restrict x = gx + ((id * g->h + ih) * g->w + iw) * C;                  \
                        for (int64_t c = 0; c < C && kind == POOL_AVG; c++) {                     \
                            x[c] += gr[c] / (T)divide;                                            \
                        }                                                                         \
                        for (int64_t c = 0; c < C && kind != POOL_AVG; c++) {                     \
                            x[c] += gr[c] / (T)(b[1] - b[0]) / (T)(b[3] - b[2]) /                 \
                                    (T)(b[5] - b[4]);                                             \
                        }                                                                         \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        return true;                                                                              \
    }
BACK_CL(back_cl_f32, float)
BACK_CL(back_cl_f64, double)

// gx (N, C, [D,] H, W) = a->out[0] and grad_output (a->t[0]) and idx (or NULL) of the
// front end's sizes, all channels-last: kind's gradient, an image at a time
static mt_status
run_back_cl(mt_args *a, pool_kind kind, const pool_geom *g, mt_tensor *idx)
{
    mt_tensor *grad = NULL, *ix = NULL, *gx = a->out[0];
    const mt_memory_format fmt = gx->ndim == 5 ? MT_CHANNELS_LAST_3D : MT_CHANNELS_LAST;
    mt_status st = mt_cpu_dense_format(a->t[0], fmt, &grad);
    if (st == MT_OK && idx) {
        st = mt_cpu_dense_format(idx, fmt, &ix);
    }
    if (st) {
        goto out_release;
    }
    const int64_t n = gx->sizes[0], C = gx->sizes[1];
    const int64_t in_image = g->d * g->h * g->w * C, out_image = g->od * g->oh * g->ow * C;
    const bool f32 = gx->dtype == MT_FLOAT32;
    const int64_t size = f32 ? 4 : 8;
    const char *gd = mt_tensor_data(grad);
    const int64_t *id = ix ? (const int64_t *)mt_tensor_data(ix) : NULL;
    char *xd = mt_tensor_data(gx);
    /* threads over the images (each zeroes and writes its own image of gx) */
    const int parts = mt_parallel_parts(n * (in_image + out_image), 32768);
    bool ok = true;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(&& : ok)
    for (int64_t i = 0; i < n; i++) {
        memset(xd + i * in_image * size, 0, (size_t)(in_image * size));
        const int64_t *iix = id ? id + i * out_image : NULL;
        ok = (f32 ? back_cl_f32(kind, (const float *)(gd + i * out_image * size), iix,
                                (float *)(xd + i * in_image * size), g, C)
                  : back_cl_f64(kind, (const double *)(gd + i * out_image * size), iix,
                                (double *)(xd + i * in_image * size), g, C)) &&
             ok;
    }
    if (!ok) {
        st = mt_fail_pool_index(g->nd, g->d * g->h * g->w);
    }
out_release:
    mt_tensor_clear(&grad);
    mt_tensor_clear(&ix);
    return st;
}

/* The result, a->out[0] (self's (t[1]) shape) = zeros with loop's gradient of grad (t[0])
 * added, plane by plane, each plane zeroed by the thread that adds into it (kind's channels-last loop for a channels-last result); idx (or NULL)
 * the forward's indices. */
static mt_status
run_back(mt_args *a, pool_back_fn loop, pool_kind kind, const pool_geom *g, mt_tensor *idx)
{
    mt_tensor *grad = NULL, *ix = NULL, *gx = a->out[0];
    mt_dtype dt = a->t[0]->dtype;
    size_t item = mt_dtype_size(dt);
    if (mt_front_take_format(a->plan, a, 0)) {
        return run_back_cl(a, kind, g, idx);
    }
    mt_status st = mt_cpu_dense(a->t[0], dt, &grad);
    if (st == MT_OK && idx) {
        st = mt_cpu_dense(idx, MT_INT64, &ix);
    }
    if (st) {
        goto out_release;
    }
    const int64_t in_plane = g->d * g->h * g->w, out_plane = g->od * g->oh * g->ow;
    const int64_t size = (int64_t)item;
    /* threads over the planes (each zeroes and writes its own plane of gx: a memset of all of
     * gx before, on one thread, took max_pool2d's backward 1.2x PyTorch's time at 2 threads) */
    const int parts = mt_parallel_parts(g->planes * (in_plane + out_plane), 32768);
    const char *gd = mt_tensor_data(grad);
    const int64_t *id = ix ? (const int64_t *)mt_tensor_data(ix) : NULL;
    char *xd = mt_tensor_data(gx);
    bool ok = true;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(&& : ok)
    for (int64_t p = 0; p < g->planes; p++) {
        memset(xd + p * in_plane * size, 0, (size_t)(in_plane * size));
        ok = loop(gd + p * out_plane * size, id ? id + p * out_plane : NULL,
                  xd + p * in_plane * size, g) &&
             ok;
    }
    if (!ok) {
        st = mt_fail_pool_index(g->nd, in_plane);
    }
out_release:
    mt_tensor_clear(&grad);
    mt_tensor_clear(&ix);
    return st;
}

/* ---- the ops: one kernel for the 2-D and the 3-D op (ops.def's CPU_AS rows) ---- */

// max_pool2d/3d_with_indices_backward: grad_output (N, C, [OD,] OH, OW) or (C, [OD,] OH, OW),
// self (N, C, [D,] H, W) or (C, [D,] H, W), indices (int64, grad_output's shape) of each
// window's maximum in its plane; out (self's shape)
mt_status
mt_cpu_max_pool_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0], *idx = a->t[2];
    return run_back(a, grad->dtype == MT_FLOAT32 ? max_back_f32 : max_back_f64, POOL_MAX,
                    &a->plan->pool, idx);
}

// avg_pool2d/3d_backward: grad_output and self as max_pool_backward's, the forward's window
// arguments
mt_status
mt_cpu_avg_pool_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0];
    return run_back(a, grad->dtype == MT_FLOAT32 ? avg_back_f32 : avg_back_f64, POOL_AVG,
                    &a->plan->pool, NULL);
}

// _adaptive_avg_pool2d/3d_backward: grad_output and self as max_pool_backward's
mt_status
mt_cpu_adaptive_avg_pool_backward(mt_args *a)
{
    mt_tensor *grad = a->t[0];
    return run_back(a, grad->dtype == MT_FLOAT32 ? adaptive_back_f32 : adaptive_back_f64,
                    POOL_ADAPTIVE_AVG, &a->plan->pool, NULL);
}
