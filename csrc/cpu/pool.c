/* 2-D and 3-D pooling on the CPU: max_pool2d/3d (with or without indices), avg_pool2d/3d,
 * adaptive_avg_pool2d/3d, adaptive_max_pool2d/3d.
 *
 * The input is made contiguous and seen as planes (N*C, D, H, W), D = 1 for the 2-D ops; each
 * output element is one window of its plane. A channels-last result (of a channels-last input,
 * ops/pool_checks.c) is written so, from the input laid out so: each window's channels at once.
 * A row-major input of 8 planes or more goes by blocks of planes, each transposed so that the
 * same channels-last loop runs across the block's planes (vectors across planes instead of one
 * window at a time: 8-10x faster on (64, 256, 4, 4)); fewer planes go one at a time.
 * Window bounds, divisors and the NaN rule are PyTorch's (Pool.h, cpu_max_pool, cpu_avg_pool,
 * cpu_adaptive_avg_pool); the checks and the geometry are the front end's (ops/pool_checks.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* ---- the loops: one plane each, one instance per dtype ---- */

/* The maximum of x (D, H, W) over depths [b[0], b[1]), rows [b[2], b[3]) and columns [b[4],
 * b[5]), every step[0], step[1] and step[2] of them, and in *at its index (d*H+h)*W+w (the
 * first tap's if none is bigger than LOWEST). A NaN wins and a later NaN wins again (PyTorch's
 * `val > max || isnan(val)`). Each tap selects without a branch: on data in no order, a branch
 * on the compare missed about every other tap (a 2x2 window took some 50 cycles). */
#define WINDOW_MAX(name, T, LOWEST, ISNAN)                                   \
    static inline T name(const T *x, const pool_geom *g, const int64_t b[6], \
                         const int64_t step[3], int64_t *at)                 \
    {                                                                        \
        T best = LOWEST;                                                     \
        int64_t best_at = (b[0] * g->h + b[2]) * g->w + b[4];                \
        for (int64_t id = b[0]; id < b[1]; id += step[0]) {                  \
            for (int64_t ih = b[2]; ih < b[3]; ih += step[1]) {              \
                const int64_t row = (id * g->h + ih) * g->w;                 \
                for (int64_t iw = b[4]; iw < b[5]; iw += step[2]) {          \
                    const T v = x[row + iw];                                 \
                    const bool take = (v > best) | ISNAN(v);                 \
                    best = take ? v : best;                                  \
                    best_at = take ? row + iw : best_at;                     \
                }                                                            \
            }                                                                \
        }                                                                    \
        *at = best_at;                                                       \
        return best;                                                         \
    }

// x (D, H, W), out (OD, OH, OW), idx (OD, OH, OW) int64 flat (d*H+h)*W+w, or NULL: each
// window's maximum (WMAX, a WINDOW_MAX)
#define MAX_POOL(name, T, WMAX)                                                           \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)          \
    {                                                                                     \
        const T *x = (const T *)xv;                                                       \
        T *out = (T *)ov;                                                                 \
        const int64_t step[3] = {g->dd, g->dh, g->dw};                                    \
        int64_t b[6], at;                                                                 \
        for (int64_t od = 0; od < g->od; od++) {                                          \
            mt_max_pool_taps(od, g->d, g->kd, g->sd, g->pd, g->dd, &b[0], &b[1]);         \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                      \
                mt_max_pool_taps(oh, g->h, g->kh, g->sh, g->ph, g->dh, &b[2], &b[3]);     \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                  \
                    mt_max_pool_taps(ow, g->w, g->kw, g->sw, g->pw, g->dw, &b[4], &b[5]); \
                    *out++ = WMAX(x, g, b, step, &at);                                    \
                    if (idx) {                                                            \
                        *idx++ = at;                                                      \
                    }                                                                     \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
    }

/* The sum of x (D, H, W) over depths [b[0], b[1]), rows [b[2], b[3]), columns [b[4], b[5]). */
#define WINDOW_SUM(name, T, ACC)                                        \
    static ACC name(const T *x, const pool_geom *g, const int64_t b[6]) \
    {                                                                   \
        ACC sum = 0;                                                    \
        for (int64_t id = b[0]; id < b[1]; id++) {                      \
            for (int64_t ih = b[2]; ih < b[3]; ih++) {                  \
                for (int64_t iw = b[4]; iw < b[5]; iw++) {              \
                    sum += x[(id * g->h + ih) * g->w + iw];             \
                }                                                       \
            }                                                           \
        }                                                               \
        return sum;                                                     \
    }

// x (D, H, W), out (OD, OH, OW): each window's sum over its taps inside the input, divided by
// divisor_override, or the window's size clipped to the padded input (count_include_pad),
// or the count of taps inside the input.
#define AVG_POOL(name, T, ACC, SUM)                                                          \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g)             \
    {                                                                                        \
        (void)idx;                                                                           \
        const T *x = (const T *)xv;                                                          \
        T *out = (T *)ov;                                                                    \
        for (int64_t od = 0; od < g->od; od++) {                                             \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                         \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                     \
                    int64_t b[6];                                                            \
                    const int64_t divide = mt_avg_pool_window(g, od, oh, ow, b);             \
                    /* a window of padding only is 0 (its divisor may be too) */             \
                    *out++ = mt_pool_window_inside(b) ? (T)(SUM(x, g, b) / (ACC)divide) : 0; \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

// x (D, H, W), out (OD, OH, OW), idx (OD, OH, OW) or NULL: window (od, oh, ow) spans depths
// [floor(od*D/OD), ceil((od+1)*D/OD)) and the rows and columns likewise; out is OF of it (OF:
// an ADAPTIVE_MEAN or ADAPTIVE_PEAK), which also sets its idx entry if given one.
#define ADAPTIVE_POOL(name, T, OF)                                               \
    static void name(const void *xv, void *ov, int64_t *idx, const pool_geom *g) \
    {                                                                            \
        const T *x = (const T *)xv;                                              \
        T *out = (T *)ov;                                                        \
        int64_t b[6];                                                            \
        for (int64_t od = 0; od < g->od; od++) {                                 \
            mt_adaptive_window(od, g->d, g->od, &b[0], &b[1]);                   \
            for (int64_t oh = 0; oh < g->oh; oh++) {                             \
                mt_adaptive_window(oh, g->h, g->oh, &b[2], &b[3]);               \
                for (int64_t ow = 0; ow < g->ow; ow++) {                         \
                    mt_adaptive_window(ow, g->w, g->ow, &b[4], &b[5]);           \
                    *out++ = OF(x, g, b, idx ? idx++ : NULL);                    \
                }                                                                \
            }                                                                    \
        }                                                                        \
    }

/* a window's mean (adaptive_avg_pool) */
#define ADAPTIVE_MEAN(name, T, ACC, SUM)                                                         \
    static T name(const T *x, const pool_geom *g, const int64_t b[6], int64_t *idx)              \
    {                                                                                            \
        (void)idx;                                                                               \
        return (T)(SUM(x, g, b) / (ACC)(b[1] - b[0]) / (ACC)(b[3] - b[2]) / (ACC)(b[5] - b[4])); \
    }

/* a window's maximum and in *idx its index (adaptive_max_pool) */
#define ADAPTIVE_PEAK(name, T, WMAX)                                                \
    static T name(const T *x, const pool_geom *g, const int64_t b[6], int64_t *idx) \
    {                                                                               \
        const int64_t step[3] = {1, 1, 1};                                          \
        int64_t at;                                                                 \
        const T v = WMAX(x, g, b, step, &at);                                       \
        if (idx) {                                                                  \
            *idx = at;                                                              \
        }                                                                           \
        return v;                                                                   \
    }

#define NO_NAN(v) false
WINDOW_MAX(wmax_f32, float, -INFINITY, isnan)
WINDOW_MAX(wmax_f64, double, -INFINITY, isnan)
WINDOW_MAX(wmax_i32, int32_t, INT32_MIN, NO_NAN)
WINDOW_MAX(wmax_i64, int64_t, INT64_MIN, NO_NAN)
MAX_POOL(max_f32, float, wmax_f32)
MAX_POOL(max_f64, double, wmax_f64)
MAX_POOL(max_i32, int32_t, wmax_i32)
MAX_POOL(max_i64, int64_t, wmax_i64)
ADAPTIVE_PEAK(peak_f32, float, wmax_f32)
ADAPTIVE_PEAK(peak_f64, double, wmax_f64)
ADAPTIVE_POOL(adaptive_max_f32, float, peak_f32)
ADAPTIVE_POOL(adaptive_max_f64, double, peak_f64)
WINDOW_SUM(sum_f32, float, float)
WINDOW_SUM(sum_f64, double, double)
WINDOW_SUM(sum_i64, int64_t, int64_t)
AVG_POOL(avg_f32, float, float, sum_f32)
AVG_POOL(avg_f64, double, double, sum_f64)
AVG_POOL(avg_i64, int64_t, int64_t, sum_i64)
ADAPTIVE_MEAN(mean_f32, float, float, sum_f32)
ADAPTIVE_MEAN(mean_f64, double, double, sum_f64)
ADAPTIVE_POOL(adaptive_f32, float, mean_f32)
ADAPTIVE_POOL(adaptive_f64, double, mean_f64)

/* One plane: x (D, H, W) -> out (OD, OH, OW), idx (OD, OH, OW) or NULL. */
typedef void (*pool_fn)(const void *x, void *out, int64_t *idx, const pool_geom *g);

/* ---- channels-last: an image (D, H, W, C) at a time, each window's C channels side by side,
 * so the loop over the channels is the inner one and runs over adjacent elements. The
 * windows, the order of the taps and so the values are those of the loops above. ---- */

// x (D, H, W, C) one image; out (C) and idx (C) or NULL the results of output position (od, oh,
// ow): per channel the maximum and its index (d*H+h)*W+w (a NaN wins, as WINDOW_MAX), or the
// mean (AVG_POOL's, ADAPTIVE_MEAN's divisors), of the kind's window there
#define POOL_CL(name, T, LOWEST, ISNAN)                                                     \
    MT_SIMD_CLONES static void name(pool_kind kind, const void *xv, void *ov, int64_t *idx, \
                                    const pool_geom *g, int64_t C, int64_t od, int64_t oh,  \
                                    int64_t ow)                                             \
    {                                                                                       \
        const T *restrict x = (const T *)xv;                                                \
        T *restrict out = (T *)ov;                                                          \
        int64_t *restrict at = idx, b[6], step[3] = {1, 1, 1}, divide = 1;                  \
        const bool adaptive = kind == POOL_ADAPTIVE_MAX || kind == POOL_ADAPTIVE_AVG;       \
        if (adaptive) {                                                                     \
            mt_adaptive_pool_window(g, od, oh, ow, b);                                      \
        } else if (kind == POOL_MAX) {                                                      \
            mt_max_pool_window(g, od, oh, ow, b);                                           \
            step[0] = g->dd, step[1] = g->dh, step[2] = g->dw;                              \
        } else {                                                                            \
            divide = mt_avg_pool_window(g, od, oh, ow, b);                                  \
        }                                                                                   \
        const bool peak = kind == POOL_MAX || kind == POOL_ADAPTIVE_MAX;                    \
        const int64_t first = (b[0] * g->h + b[2]) * g->w + b[4];                           \
        for (int64_t c = 0; c < C; c++) {                                                   \
            out[c] = peak ? LOWEST : (T)0;                                                  \
        }                                                                                   \
        for (int64_t c = 0; at && c < C; c++) {                                             \
            at[c] = first;                                                                  \
        }                                                                                   \
        if (!peak && !mt_pool_window_inside(b)) {                                           \
            return; /* a window of padding only is 0 (its divisor may be too) */            \
        }                                                                                   \
        for (int64_t id = b[0]; id < b[1]; id += step[0]) {                                 \
            for (int64_t ih = b[2]; ih < b[3]; ih += step[1]) {                             \
                for (int64_t iw = b[4]; iw < b[5]; iw += step[2]) {                         \
                    const int64_t here = (id * g->h + ih) * g->w + iw;                      \
                    const T *restrict v = x + here * C;                                     \
                    if (!peak) {                                                            \
                        for (int64_t c = 0; c < C; c++) {                                   \
                            out[c] += v[c];                                                 \
                        }                                                                   \
                    } else if (at == NULL) {                                                \
                        for (int64_t c = 0; c < C; c++) {                                   \
                            out[c] = (v[c] > out[c]) | ISNAN(v[c]) ? v[c] : out[c];         \
                        }                                                                   \
                    } else {                                                                \
                        for (int64_t c = 0; c < C; c++) {                                   \
                            const bool more = (v[c] > out[c]) | ISNAN(v[c]);                \
                            out[c] = more ? v[c] : out[c];                                  \
                            at[c] = more ? here : at[c];                                    \
                        }                                                                   \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        for (int64_t c = 0; kind == POOL_AVG && c < C; c++) {                               \
            out[c] = (T)(out[c] / (T)divide);                                               \
        }                                                                                   \
        for (int64_t c = 0; kind == POOL_ADAPTIVE_AVG && c < C; c++) {                      \
            out[c] = out[c] / (T)(b[1] - b[0]) / (T)(b[3] - b[2]) / (T)(b[5] - b[4]);       \
        }                                                                                   \
    }
POOL_CL(pool_cl_f32, float, -INFINITY, isnan)
POOL_CL(pool_cl_f64, double, -INFINITY, isnan)
POOL_CL(pool_cl_i32, int32_t, INT32_MIN, NO_NAN)
POOL_CL(pool_cl_i64, int64_t, INT64_MIN, NO_NAN)

/* One output position of a channels-last image (POOL_CL). */
typedef void (*pool_cl_fn)(pool_kind kind, const void *x, void *out, int64_t *idx,
                           const pool_geom *g, int64_t C, int64_t od, int64_t oh, int64_t ow);

/* The channels-last loop of dtype dt, or NULL. */
static pool_cl_fn
cl_loop(mt_dtype dt)
{
    static const pool_cl_fn loops[MT_NUM_DTYPES] = {[MT_FLOAT32] = pool_cl_f32,
                                                    [MT_FLOAT64] = pool_cl_f64,
                                                    [MT_INT32] = pool_cl_i32,
                                                    [MT_INT64] = pool_cl_i64};
    return loops[dt];
}

// x (N, C, [D,] H, W) of the front end's sizes, out and idx (N, C, [OD,] OH, OW) (idx or NULL),
// all three stored channels-last: a->out as mt_front_take_format left them
static mt_status
run_pool_cl(mt_args *a, pool_cl_fn loop, pool_kind kind, const pool_geom *g, bool want_idx)
{
    mt_tensor *self = a->t[0], *x = NULL;
    const mt_memory_format fmt = self->ndim == 5 ? MT_CHANNELS_LAST_3D : MT_CHANNELS_LAST;
    mt_status st = mt_cpu_dense_format(self, fmt, &x);
    if (st) {
        return st;
    }
    const int64_t item = (int64_t)mt_dtype_size(x->dtype), C = self->sizes[1];
    const int64_t n = self->sizes[0], in_image = g->d * g->h * g->w * C;
    const int64_t rows = n * g->od * g->oh; /* output rows (n, od, oh), threads over them */
    const int parts = mt_parallel_parts(rows * g->ow * C * g->kd * g->kh * g->kw, 32768);
    const char *xd = mt_tensor_data(x);
    char *od = mt_tensor_data(a->out[0]);
    int64_t *id = want_idx ? (int64_t *)mt_tensor_data(a->out[1]) : NULL;
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t oh = r % g->oh, d = r / g->oh % g->od, b = r / g->oh / g->od;
        for (int64_t ow = 0; ow < g->ow; ow++) {
            const int64_t at = (r * g->ow + ow) * C; /* the position's first result */
            loop(kind, xd + b * in_image * item, od + at * item, id ? id + at : NULL, g, C, d, oh,
                 ow);
        }
    }
    mt_tensor_clear(&x);
    return MT_OK;
}

/* The planes of a block of the row-major path: enough to fill the channels-last loop's vectors
 * across them, few enough that a block's copies stay in the cache (about 64 KiB of float32
 * input a block). */
#define POOL_BLOCK_ELEMS 16384
#define POOL_BLOCK_MIN 8
#define POOL_BLOCK_MAX 64

/* dst (cols, rows) = src (rows, cols) transposed, elements of item bytes: copy.c's tiled copy */
static void
transpose(const char *src, char *dst, int64_t rows, int64_t cols, int64_t item)
{
    mt_cpu_copy_tiles(src, cols, 1, dst, 1, rows, rows, cols, (size_t)item);
}

// x (P, IN) P planes, IN = D*H*W; out (P, OUT) and idx (P, OUT) or NULL, OUT = OD*OH*OW; buf
// (IN, P), obuf (OUT, P), ibuf (OUT, P) room: the planes transposed into buf, pooled there by
// the channels-last loop with the planes as its channels (so one vector op serves P windows,
// where a plane's own loop walks one window at a time), the results transposed back
static void
pool_planes(pool_cl_fn loop, pool_kind kind, const pool_geom *g, const char *x, char *out,
            int64_t *idx, int64_t P, int64_t item, char *buf, char *obuf, int64_t *ibuf)
{
    const int64_t in_plane = g->d * g->h * g->w, out_plane = g->od * g->oh * g->ow;
    transpose(x, buf, P, in_plane, item);
    for (int64_t pos = 0; pos < out_plane; pos++) {
        const int64_t ow = pos % g->ow, oh = pos / g->ow % g->oh, od = pos / g->ow / g->oh;
        loop(kind, buf, obuf + pos * P * item, idx ? ibuf + pos * P : NULL, g, P, od, oh, ow);
    }
    transpose(obuf, out, out_plane, P, item);
    if (idx) {
        transpose((const char *)ibuf, (char *)idx, out_plane, P, sizeof(int64_t));
    }
}

/* Runs the row-major pooling of x (contiguous in a copy if need be) into the result, a->out[0],
 * shaped like x with (OH, OW) or (OD, OH, OW) last, and into the int64 indices of that shape,
 * a->out[1], if want_idx: blocks of planes through pool_planes (cl_loop), the blocks over the
 * threads; fewer planes than a block's least (an image of 1 or 3 channels), a plane at a time
 * (plane_loop: the vectors across so few planes cost more than they serve). */
static mt_status
run_pool(mt_args *a, pool_fn plane_loop, pool_cl_fn loop, pool_kind kind, const pool_geom *g,
         bool want_idx)
{
    /* a channels-last result (the front end's, from a channels-last input) is written so */
    if (mt_front_take_format(a->plan, a, 0)) {
        if (want_idx) {
            mt_front_take_format(a->plan, a, 1);
        }
        return run_pool_cl(a, loop, kind, g, want_idx);
    }
    mt_tensor *self = a->t[0], *x = NULL, *out = a->out[0], *idx = want_idx ? a->out[1] : NULL;
    mt_status st = mt_tensor_is_contiguous(self) ? (x = mt_tensor_retain(self), MT_OK)
                                                 : mt_cpu_cast(self, self->dtype, &x);
    if (st) {
        return st;
    }
    const int64_t item = (int64_t)mt_dtype_size(x->dtype);
    const int64_t in_plane = g->d * g->h * g->w, out_plane = g->od * g->oh * g->ow;
    int64_t P = in_plane > 0 ? POOL_BLOCK_ELEMS / in_plane : POOL_BLOCK_MAX;
    P = P < POOL_BLOCK_MIN ? POOL_BLOCK_MIN : P > POOL_BLOCK_MAX ? POOL_BLOCK_MAX : P;
    P = P < g->planes ? P : g->planes;
    const int64_t blocks = P > 0 ? (g->planes + P - 1) / P : 0;
    /* threads over the blocks; a block costs about its output times the window */
    const int parts = mt_parallel_parts(g->planes * out_plane * g->kd * g->kh * g->kw, 32768);
    /* each part's buf, obuf and ibuf, each starting on a 64-byte boundary: ibuf's int64s and a
     * float64 buf need their alignment whatever the float32 sizes before them */
    const int64_t buf_bytes = (P * in_plane * item + 63) & ~(int64_t)63;
    const int64_t obuf_bytes = (P * out_plane * item + 63) & ~(int64_t)63;
    const int64_t per_part = buf_bytes + obuf_bytes + ((P * out_plane * 8 + 63) & ~(int64_t)63);
    const bool by_plane = g->planes < POOL_BLOCK_MIN;
    char *room = blocks > 0 && !by_plane ? malloc((size_t)(parts * per_part)) : NULL;
    if (blocks > 0 && !by_plane && room == NULL) {
        st = mt_fail(MT_ENOMEM, "%s: out of memory", mt_op_names[a->plan->op]);
        goto out_release;
    }
    const char *xd = mt_tensor_data(x);
    char *od = mt_tensor_data(out);
    int64_t *id = idx ? (int64_t *)mt_tensor_data(idx) : NULL;
    if (by_plane) {
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int64_t p = 0; p < g->planes; p++) {
            plane_loop(xd + p * in_plane * item, od + p * out_plane * item,
                       id ? id + p * out_plane : NULL, g);
        }
    } else {
#pragma omp parallel for num_threads(parts) schedule(static)
        for (int part = 0; part < parts; part++) {
            char *buf = room + part * per_part, *obuf = buf + buf_bytes;
            int64_t *ibuf = (int64_t *)(obuf + obuf_bytes);
            for (int64_t blk = blocks * part / parts; blk < blocks * (part + 1) / parts; blk++) {
                const int64_t p0 = blk * P, n = g->planes - p0 < P ? g->planes - p0 : P;
                pool_planes(loop, kind, g, xd + p0 * in_plane * item, od + p0 * out_plane * item,
                            id ? id + p0 * out_plane : NULL, n, item, buf, obuf, ibuf);
            }
        }
    }
out_release:
    free(room);
    mt_tensor_clear(&x);
    return st;
}

/* ---- the ops: one kernel for the 2-D and the 3-D op (ops.def's CPU_AS rows), the plan's
 * geometry telling them apart ---- */

// self (N, C, [D,] H, W) or (C, [D,] H, W); out (N, C, [OD,] OH, OW) or (C, [OD,] OH, OW).
// max_pool2d/3d, and their with_indices forms, which also return int64 indices (out's shape)
// of each maximum within its plane, (d * H + h) * W + w
mt_status
mt_cpu_max_pool(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = max_f32, [MT_FLOAT64] = max_f64, [MT_INT32] = max_i32, [MT_INT64] = max_i64};
    if (loops[x->dtype] == NULL) {
        /* for both forms */
        return mt_fail_not_implemented(a->plan->pool.nd == 3 ? "max_pool3d" : "max_pool2d", "",
                                       x->dtype);
    }
    return run_pool(a, loops[x->dtype], cl_loop(x->dtype), POOL_MAX, &a->plan->pool,
                    mt_op_nout[a->plan->op] == 2);
}

// avg_pool2d/3d: self and out as max_pool's
mt_status
mt_cpu_avg_pool(mt_args *a)
{
    const mt_tensor *x = a->t[0];
    static const pool_fn loops[MT_NUM_DTYPES] = {
        [MT_FLOAT32] = avg_f32, [MT_FLOAT64] = avg_f64, [MT_INT64] = avg_i64};
    if (loops[x->dtype] == NULL) {
        return mt_fail_not_implemented(a->plan->pool.nd == 3 ? "avg_pool3d_out_frame"
                                                             : "avg_pool2d",
                                       "", x->dtype);
    }
    return run_pool(a, loops[x->dtype], cl_loop(x->dtype), POOL_AVG, &a->plan->pool, false);
}

/* adaptive pooling with loops f32 and f64 (max: also the indices); kernel2 and kernel3 name
 * PyTorch's 2-D and 3-D kernels in a dtype error */
static mt_status
adaptive(mt_args *a, pool_fn f32, pool_fn f64, const char *kernel2, const char *kernel3,
         bool want_idx)
{
    const mt_dtype dt = a->t[0]->dtype;
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
        return mt_fail_not_implemented(a->plan->pool.nd == 3 ? kernel3 : kernel2, "", dt);
    }
    return run_pool(a, dt == MT_FLOAT64 ? f64 : f32, cl_loop(dt),
                    want_idx ? POOL_ADAPTIVE_MAX : POOL_ADAPTIVE_AVG, &a->plan->pool, want_idx);
}

// adaptive_max_pool2d/3d: self and out as max_pool's, output_size ([OD,] OH, OW); also the
// int64 indices of the maxima within their planes
mt_status
mt_cpu_adaptive_max_pool(mt_args *a)
{
    return adaptive(a, adaptive_max_f32, adaptive_max_f64, "adaptive_max_pool2d",
                    "adaptive_max_pool3d_cpu", true);
}

// adaptive_avg_pool2d/3d: self and out as max_pool's, output_size ([OD,] OH, OW)
mt_status
mt_cpu_adaptive_avg_pool(mt_args *a)
{
    return adaptive(a, adaptive_f32, adaptive_f64, "adaptive_avg_pool2d", "adaptive_avg_pool3d_cpu",
                    false);
}
