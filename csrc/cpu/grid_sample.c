/* grid_sample on the CPU: grid_sampler_2d and its backward, bilinear, nearest and bicubic, each output
 * pixel read from the input at the grid's (x, y) through the padding mode (core/grid_math.h,
 * computed in the tensors' dtype as PyTorch's CPU kernel computes it), as PyTorch's
 * grid_sampler_2d_cpu; grid_sampler_3d (trilinear and nearest) as its generic
 * grid_sampler_3d_cpu. Inputs are read through their strides; the front end
 * (ops/grid_sample.c) has checked them. Threads over the batch, so each sample's gradient is
 * summed by one thread. */
#include <math.h>
#include <string.h>

#include "core/grid_math.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"

/* One call's tensors and sizes: input (N, C, H, W), grid (N, OH, OW, 2), and for the backward
 * grad_output (N, C, OH, OW) and the two gradients, contiguous and zeroed; in 3-D input (N, C,
 * D, H, W), grid (N, OD, OH, OW, 3) and grad_output (N, C, OD, OH, OW). */
typedef struct grid_args {
    const mt_tensor *in, *grid, *go;
    mt_tensor *out, *gin, *ggrid;
    mt_grid_geom geom; /* the sizes and modes, the front end's (a->plan->grid) */
} grid_args;

/* The four neighbours of (ix, iy), nw ne sw se, and their bilinear weights */
typedef struct corners {
    int64_t x0, y0;
    double w[4];
} corners;

static corners
bilinear_corners(double ix, double iy)
{
    corners c;
    double fx = floor(ix), fy = floor(iy);
    c.x0 = (int64_t)fx;
    c.y0 = (int64_t)fy;
    double dx = ix - fx, dy = iy - fy;
    c.w[0] = (1 - dx) * (1 - dy);
    c.w[1] = dx * (1 - dy);
    c.w[2] = (1 - dx) * dy;
    c.w[3] = dx * dy;
    return c;
}

/* The source position (ix, iy) of output pixel (n, h, w), and its derivatives */
#define GRID_POINT(T, SFX)                                                                         \
    static void point_##SFX(const grid_args *a, int64_t n, int64_t h, int64_t w, T *ix, T *iy,     \
                            T *dx, T *dy)                                                          \
    {                                                                                              \
        const int64_t *gs = a->grid->strides;                                                      \
        const T *g = (const T *)mt_tensor_data(a->grid) + n * gs[0] + h * gs[1] + w * gs[2];       \
        *ix = mt_grid_source_index_##SFX(g[0], a->geom.W, a->geom.padding, a->geom.align, dx);     \
        *iy = mt_grid_source_index_##SFX(g[gs[3]], a->geom.H, a->geom.padding, a->geom.align, dy); \
    }

/* bicubic's taps for output pixel (n, h, w) (core/grid_math.h); false where it is not finite */
#define GRID_CUBIC(T, SFX)                                                                         \
    static bool cubic_##SFX(const grid_args *a, int64_t n, int64_t h, int64_t w, mt_grid_cubic *k) \
    {                                                                                              \
        const int64_t *gs = a->grid->strides;                                                      \
        const T *g = (const T *)mt_tensor_data(a->grid) + n * gs[0] + h * gs[1] + w * gs[2];       \
        return mt_grid_cubic_taps_##SFX(g[0], g[gs[3]], a->geom.H, a->geom.W, a->geom.padding,     \
                                        a->geom.align, k);                                         \
    }

/* bicubic's value at taps k of channel plane x (strides sy, sx) */
#define CUBIC_VALUE(T)                                                                        \
    static double cubic_value_##T(const T *x, int64_t sy, int64_t sx, const mt_grid_cubic *k) \
    {                                                                                         \
        double acc = 0;                                                                       \
        for (int j = 0; j < 4; j++) {                                                         \
            double row = 0;                                                                   \
            for (int i = 0; k->y[j] >= 0 && i < 4; i++) {                                     \
                row += k->x[i] >= 0 ? (double)x[k->y[j] * sy + k->x[i] * sx] * k->wx[i] : 0;  \
            }                                                                                 \
            acc += row * k->wy[j];                                                            \
        }                                                                                     \
        return acc;                                                                           \
    }

// sample n: out[n] (C, OH, OW) from input[n] (C, H, W)
#define SAMPLE_FORWARD(name, T, SFX)                                                             \
    static void name(const grid_args *a, int64_t n)                                              \
    {                                                                                            \
        const int64_t C = a->geom.C, H = a->geom.H, W = a->geom.W,                               \
                      plane = a->geom.OH * a->geom.OW, *is = a->in->strides;                     \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                               \
        T *o = (T *)mt_tensor_data(a->out) + n * C * plane;                                      \
        for (int64_t p = 0; p < plane; p++) {                                                    \
            if (a->geom.mode == MT_GRID_BICUBIC) {                                               \
                mt_grid_cubic k;                                                                 \
                bool finite = cubic_##SFX(a, n, p / a->geom.OW, p % a->geom.OW, &k);             \
                for (int64_t c = 0; c < C; c++) {                                                \
                    o[c * plane + p] = finite                                                    \
                                           ? (T)cubic_value_##T(x + c * is[1], is[2], is[3], &k) \
                                           : (T)NAN;                                             \
                }                                                                                \
                continue;                                                                        \
            }                                                                                    \
            T ix, iy, dx, dy;                                                                    \
            point_##SFX(a, n, p / a->geom.OW, p % a->geom.OW, &ix, &iy, &dx, &dy);               \
            bool finite = isfinite(ix) && isfinite(iy);                                          \
            if (a->geom.mode == MT_GRID_NEAREST || !finite) {                                    \
                /* a bilinear point at NaN or inf is NaN (NaN weights, as PyTorch's) */          \
                int64_t px = finite ? (int64_t)nearbyint(ix) : -1;                               \
                int64_t py = finite ? (int64_t)nearbyint(iy) : -1;                               \
                bool inside = mt_grid_in(py, px, H, W);                                          \
                T miss = a->geom.mode == MT_GRID_NEAREST ? (T)0 : (T)NAN;                        \
                for (int64_t c = 0; c < C; c++) {                                                \
                    o[c * plane + p] = inside ? x[c * is[1] + py * is[2] + px * is[3]] : miss;   \
                }                                                                                \
                continue;                                                                        \
            }                                                                                    \
            corners k = bilinear_corners(ix, iy);                                                \
            for (int64_t c = 0; c < C; c++) {                                                    \
                double acc = 0;                                                                  \
                for (int q = 0; q < 4; q++) {                                                    \
                    int64_t py = k.y0 + q / 2, px = k.x0 + q % 2;                                \
                    if (mt_grid_in(py, px, H, W)) {                                              \
                        acc += (double)x[c * is[1] + py * is[2] + px * is[3]] * k.w[q];          \
                    }                                                                            \
                }                                                                                \
                o[c * plane + p] = (T)acc;                                                       \
            }                                                                                    \
        }                                                                                        \
    }

// output pixel (n, h, w) of bicubic: each of the 16 taps' weight times the output's gradient gp
// goes to its input pixel (several taps may land on one, clipped or reflected); the grid's
// gradient is the bicubic surface's slope times the unnormalisation's (a point that is not
// finite has none)
#define CUBIC_BACKWARD(T, SFX)                                                                \
    static void cubic_backward_##SFX(const grid_args *a, int64_t n, int64_t h, int64_t w,     \
                                     const T *x, const T *gp, T *gi, T *gg)                   \
    {                                                                                         \
        const int64_t HW = a->geom.H * a->geom.W, *is = a->in->strides, *os = a->go->strides; \
        mt_grid_cubic k;                                                                      \
        if (!cubic_##SFX(a, n, h, w, &k)) {                                                   \
            return;                                                                           \
        }                                                                                     \
        double sx = 0, sy = 0;                                                                \
        for (int64_t c = 0; c < a->geom.C; c++) {                                             \
            const double gv = (double)gp[c * os[1]];                                          \
            for (int j = 0; j < 4; j++) {                                                     \
                for (int i = 0; k.y[j] >= 0 && i < 4; i++) {                                  \
                    if (k.x[i] < 0) {                                                         \
                        continue;                                                             \
                    }                                                                         \
                    gi[c * HW + k.y[j] * a->geom.W + k.x[i]] += (T)(k.wx[i] * k.wy[j] * gv);  \
                    const double v = (double)x[c * is[1] + k.y[j] * is[2] + k.x[i] * is[3]];  \
                    sx += v * k.dwx[i] * k.wy[j] * gv;                                        \
                    sy += v * k.wx[i] * k.dwy[j] * gv;                                        \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        gg[0] = (T)(sx * k.mx);                                                               \
        gg[1] = (T)(sy * k.my);                                                               \
    }

// sample n: each tap's weight times the output's gradient goes to its input pixel; the grid's
// gradient is the bilinear surface's slope times the source index's derivative (0 for nearest)
#define SAMPLE_BACKWARD(name, T, SFX)                                                    \
    static void name(const grid_args *a, int64_t n)                                      \
    {                                                                                    \
        const int64_t C = a->geom.C, H = a->geom.H, W = a->geom.W, *is = a->in->strides, \
                      *os = a->go->strides;                                              \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                       \
        const T *go = (const T *)mt_tensor_data(a->go) + n * os[0];                      \
        T *gi = (T *)mt_tensor_data(a->gin) + n * C * H * W;                             \
        T *gg = (T *)mt_tensor_data(a->ggrid) + n * a->geom.OH * a->geom.OW * 2;         \
        for (int64_t p = 0; p < a->geom.OH * a->geom.OW; p++) {                          \
            int64_t h = p / a->geom.OW, w = p % a->geom.OW;                              \
            const T *gp = go + h * os[2] + w * os[3];                                    \
            if (a->geom.mode == MT_GRID_BICUBIC) {                                       \
                cubic_backward_##SFX(a, n, h, w, x, gp, gi, gg + p * 2);                 \
                continue;                                                                \
            }                                                                            \
            T ix, iy, dx, dy;                                                            \
            point_##SFX(a, n, h, w, &ix, &iy, &dx, &dy);                                 \
            if (!isfinite(ix) || !isfinite(iy)) {                                        \
                continue; /* reads nothing: no gradient */                               \
            }                                                                            \
            if (a->geom.mode == MT_GRID_NEAREST) {                                       \
                int64_t px = (int64_t)nearbyint(ix), py = (int64_t)nearbyint(iy);        \
                for (int64_t c = 0; mt_grid_in(py, px, H, W) && c < C; c++) {            \
                    gi[c * H * W + py * W + px] += gp[c * os[1]];                        \
                }                                                                        \
                continue;                                                                \
            }                                                                            \
            corners k = bilinear_corners(ix, iy);                                        \
            double fx = ix - (double)k.x0, fy = iy - (double)k.y0;                       \
            /* d weight / d ix and d weight / d iy of nw ne sw se */                     \
            const double wx[4] = {-(1 - fy), 1 - fy, -fy, fy};                           \
            const double wy[4] = {-(1 - fx), -fx, 1 - fx, fx};                           \
            double sx = 0, sy = 0;                                                       \
            for (int64_t c = 0; c < C; c++) {                                            \
                const double gv = (double)gp[c * os[1]];                                 \
                for (int q = 0; q < 4; q++) {                                            \
                    int64_t py = k.y0 + q / 2, px = k.x0 + q % 2;                        \
                    if (!mt_grid_in(py, px, H, W)) {                                     \
                        continue;                                                        \
                    }                                                                    \
                    gi[c * H * W + py * W + px] += (T)(k.w[q] * gv);                     \
                    const double v = (double)x[c * is[1] + py * is[2] + px * is[3]];     \
                    sx += v * wx[q] * gv;                                                \
                    sy += v * wy[q] * gv;                                                \
                }                                                                        \
            }                                                                            \
            gg[p * 2] = (T)(sx * (double)dx);                                            \
            gg[p * 2 + 1] = (T)(sy * (double)dy);                                        \
        }                                                                                \
    }

/* 3-D (grid_sampler_3d, PyTorch's generic CPU kernel's arithmetic): the source position i =
 * (x, y, z) of output point p of sample n, and its derivatives */
#define GRID_POINT_3D(T, SFX)                                                                 \
    static void point3_##SFX(const grid_args *a, int64_t n, int64_t p, T i[3], T di[3])       \
    {                                                                                         \
        const int64_t *gs = a->grid->strides, size[3] = {a->geom.W, a->geom.H, a->geom.D};    \
        const int64_t w = p % a->geom.OW, h = p / a->geom.OW % a->geom.OH,                    \
                      d = p / (a->geom.OW * a->geom.OH);                                      \
        const T *g = (const T *)mt_tensor_data(a->grid) + n * gs[0] + d * gs[1] + h * gs[2] + \
                     w * gs[3];                                                               \
        for (int k = 0; k < 3; k++) {                                                         \
            i[k] = mt_grid_source_index_3d_##SFX(g[k * gs[4]], size[k], a->geom.padding,      \
                                                 a->geom.align, &di[k]);                      \
        }                                                                                     \
    }

/* The eight neighbours of source position i, corner q at (x0 + (q & 1), y0 + (q >> 1 & 1), z0 +
 * (q >> 2)), the fractions f past (x0, y0, z0), and the weight of corner q */
typedef struct corners3 {
    int64_t x0, y0, z0;
    double f[3];
} corners3;

static corners3
trilinear_corners(const double i[3])
{
    corners3 c;
    double fl[3];
    for (int k = 0; k < 3; k++) {
        fl[k] = floor(i[k]);
        c.f[k] = i[k] - fl[k];
    }
    c.x0 = (int64_t)fl[0];
    c.y0 = (int64_t)fl[1];
    c.z0 = (int64_t)fl[2];
    return c;
}

/* corner q's weight, or with along = 0, 1, 2 its derivative in x, y or z (along = -1: none) */
static double
trilinear_weight(const corners3 *c, int q, int along)
{
    double w = 1;
    for (int k = 0; k < 3; k++) {
        const bool far = (q >> k) & 1;
        w *= k == along ? (far ? 1 : -1) : far ? c->f[k] : 1 - c->f[k];
    }
    return w;
}

// sample n: out[n] (C, OD, OH, OW) from input[n] (C, D, H, W), trilinear or nearest
#define SAMPLE_FORWARD_3D(name, T, SFX)                                                          \
    static void name(const grid_args *a, int64_t n)                                              \
    {                                                                                            \
        const int64_t C = a->geom.C, vol = a->geom.OD * a->geom.OH * a->geom.OW,                 \
                      *is = a->in->strides;                                                      \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                               \
        T *o = (T *)mt_tensor_data(a->out) + n * C * vol;                                        \
        for (int64_t p = 0; p < vol; p++) {                                                      \
            T i[3], di[3];                                                                       \
            point3_##SFX(a, n, p, i, di);                                                        \
            if (a->geom.mode == MT_GRID_NEAREST) {                                               \
                int64_t px = (int64_t)nearbyint(i[0]), py = (int64_t)nearbyint(i[1]);            \
                int64_t pz = (int64_t)nearbyint(i[2]);                                           \
                bool inside = mt_grid_in_3d(pz, py, px, a->geom.D, a->geom.H, a->geom.W);        \
                const T *at = x + pz * is[2] + py * is[3] + px * is[4];                          \
                for (int64_t c = 0; c < C; c++) {                                                \
                    o[c * vol + p] = inside ? at[c * is[1]] : (T)0;                              \
                }                                                                                \
                continue;                                                                        \
            }                                                                                    \
            const double id[3] = {(double)i[0], (double)i[1], (double)i[2]};                     \
            corners3 k = trilinear_corners(id);                                                  \
            for (int64_t c = 0; c < C; c++) {                                                    \
                double acc = 0;                                                                  \
                for (int q = 0; q < 8; q++) {                                                    \
                    int64_t px = k.x0 + (q & 1), py = k.y0 + (q >> 1 & 1), pz = k.z0 + (q >> 2); \
                    if (mt_grid_in_3d(pz, py, px, a->geom.D, a->geom.H, a->geom.W)) {            \
                        acc += (double)x[c * is[1] + pz * is[2] + py * is[3] + px * is[4]] *     \
                               trilinear_weight(&k, q, -1);                                      \
                    }                                                                            \
                }                                                                                \
                o[c * vol + p] = (T)acc;                                                         \
            }                                                                                    \
        }                                                                                        \
    }

// sample n in 3-D: each corner's weight times the output's gradient goes to its input point; the
// grid's gradient is the trilinear surface's slope times the source index's derivative (0 for
// nearest)
#define SAMPLE_BACKWARD_3D(name, T, SFX)                                                           \
    static void name(const grid_args *a, int64_t n)                                                \
    {                                                                                              \
        const int64_t C = a->geom.C, D = a->geom.D, H = a->geom.H, W = a->geom.W, DHW = D * H * W; \
        const int64_t vol = a->geom.OD * a->geom.OH * a->geom.OW, *is = a->in->strides,            \
                      *os = a->go->strides;                                                        \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                                 \
        const T *go = (const T *)mt_tensor_data(a->go) + n * os[0];                                \
        T *gi = (T *)mt_tensor_data(a->gin) + n * C * DHW;                                         \
        T *gg = (T *)mt_tensor_data(a->ggrid) + n * vol * 3;                                       \
        for (int64_t p = 0; p < vol; p++) {                                                        \
            const int64_t w = p % a->geom.OW, h = p / a->geom.OW % a->geom.OH,                     \
                          d = p / (a->geom.OW * a->geom.OH);                                       \
            const T *gp = go + d * os[2] + h * os[3] + w * os[4];                                  \
            T i[3], di[3];                                                                         \
            point3_##SFX(a, n, p, i, di);                                                          \
            if (a->geom.mode == MT_GRID_NEAREST) {                                                 \
                int64_t px = (int64_t)nearbyint(i[0]), py = (int64_t)nearbyint(i[1]);              \
                int64_t pz = (int64_t)nearbyint(i[2]);                                             \
                for (int64_t c = 0; mt_grid_in_3d(pz, py, px, D, H, W) && c < C; c++) {            \
                    gi[c * DHW + (pz * H + py) * W + px] += gp[c * os[1]];                         \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            const double id[3] = {(double)i[0], (double)i[1], (double)i[2]};                       \
            corners3 k = trilinear_corners(id);                                                    \
            double s[3] = {0, 0, 0};                                                               \
            for (int64_t c = 0; c < C; c++) {                                                      \
                const double gv = (double)gp[c * os[1]];                                           \
                for (int q = 0; q < 8; q++) {                                                      \
                    int64_t px = k.x0 + (q & 1), py = k.y0 + (q >> 1 & 1), pz = k.z0 + (q >> 2);   \
                    if (!mt_grid_in_3d(pz, py, px, D, H, W)) {                                     \
                        continue;                                                                  \
                    }                                                                              \
                    gi[c * DHW + (pz * H + py) * W + px] += (T)(trilinear_weight(&k, q, -1) * gv); \
                    const double v = (double)x[c * is[1] + pz * is[2] + py * is[3] + px * is[4]];  \
                    for (int along = 0; along < 3; along++) {                                      \
                        s[along] += v * trilinear_weight(&k, q, along) * gv;                       \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            for (int along = 0; along < 3; along++) {                                              \
                gg[p * 3 + along] = (T)(s[along] * (double)di[along]);                             \
            }                                                                                      \
        }                                                                                          \
    }

GRID_POINT(float, f32)
GRID_POINT(double, f64)
GRID_CUBIC(float, f32)
GRID_CUBIC(double, f64)
CUBIC_VALUE(float)
CUBIC_VALUE(double)
CUBIC_BACKWARD(float, f32)
CUBIC_BACKWARD(double, f64)
SAMPLE_FORWARD(forward_f32, float, f32)
SAMPLE_FORWARD(forward_f64, double, f64)
SAMPLE_BACKWARD(backward_f32, float, f32)
SAMPLE_BACKWARD(backward_f64, double, f64)
GRID_POINT_3D(float, f32)
GRID_POINT_3D(double, f64)
SAMPLE_FORWARD_3D(forward3_f32, float, f32)
SAMPLE_FORWARD_3D(forward3_f64, double, f64)
SAMPLE_BACKWARD_3D(backward3_f32, float, f32)
SAMPLE_BACKWARD_3D(backward3_f64, double, f64)

typedef void (*sample_fn)(const grid_args *a, int64_t n);

/* sample(a, n) for every n, threads over the batch */
static void
run(const grid_args *a, sample_fn sample)
{
    const int parts = mt_parallel_parts(a->geom.N * a->geom.C * a->geom.OD * a->geom.OH *
                                            a->geom.OW,
                                        16384);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t n = 0; n < a->geom.N; n++) {
        sample(a, n);
    }
}

/* the forward of either into the result, out (N, C, [OD,] OH, OW) */
static mt_status
sampler_forward(mt_args *a, const char *name, sample_fn f32, sample_fn f64)
{
    grid_args g = {.in = a->t[0], .grid = a->t[1], .out = a->out[0], .geom = a->plan->grid};
    if (g.in->dtype != MT_FLOAT32 && g.in->dtype != MT_FLOAT64) {
        return mt_fail_not_implemented(name, "", g.in->dtype);
    }
    run(&g, g.in->dtype == MT_FLOAT32 ? f32 : f64);
    return MT_OK;
}

/* the backward of either: the gradients of input and of grid (the results), zeroed and
 * filled */
static mt_status
sampler_backward(mt_args *a, const char *name, sample_fn f32, sample_fn f64)
{
    grid_args g = {.go = a->t[0],
                   .in = a->t[1],
                   .grid = a->t[2],
                   .gin = a->out[0],
                   .ggrid = a->out[1],
                   .geom = a->plan->grid};
    mt_dtype dt = g.in->dtype;
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
        return mt_fail_not_implemented(name, "", dt);
    }
    memset(mt_tensor_data(g.gin), 0, (size_t)mt_tensor_numel(g.gin) * mt_dtype_size(dt));
    memset(mt_tensor_data(g.ggrid), 0, (size_t)mt_tensor_numel(g.ggrid) * mt_dtype_size(dt));
    run(&g, dt == MT_FLOAT32 ? f32 : f64);
    return MT_OK;
}

// grid_sampler_2d: input (N, C, H, W), grid (N, OH, OW, 2); grid_sampler_3d: input (N, C, D,
// H, W), grid (N, OD, OH, OW, 3); out (N, C, [OD,] OH, OW)
mt_status
mt_cpu_grid_sampler(mt_args *a)
{
    if (a->plan->op == MT_OP_grid_sampler_3d) {
        return sampler_forward(a, "grid_sampler3d_cpu", forward3_f32, forward3_f64);
    }
    return sampler_forward(a, "grid_sampler_2d_cpu_kernel_impl", forward_f32, forward_f64);
}

// grad_output (N, C, [OD,] OH, OW), input, grid as the forward's; out: the gradients of input
// and of grid
mt_status
mt_cpu_grid_sampler_backward(mt_args *a)
{
    if (a->plan->op == MT_OP_grid_sampler_3d_backward) {
        return sampler_backward(a, "grid_sampler_3d_backward_cpu", backward3_f32, backward3_f64);
    }
    return sampler_backward(a, "grid_sampler_2d_backward_cpu", backward_f32, backward_f64);
}
