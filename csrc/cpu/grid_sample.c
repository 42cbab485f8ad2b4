/* grid_sample on the CPU: grid_sampler_2d and its backward, bilinear and nearest, each output
 * pixel read from the input at the grid's (x, y) through the padding mode (core/grid_math.h,
 * computed in the tensors' dtype as PyTorch's CPU kernel computes it), as PyTorch's
 * grid_sampler_2d_cpu. Inputs are read through their strides; the front end
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
 * grad_output (N, C, OH, OW) and the two gradients, contiguous and zeroed. */
typedef struct grid_args {
    const mt_tensor *in, *grid, *go;
    mt_tensor *out, *gin, *ggrid;
    int mode, padding;
    bool align;
    int64_t N, C, H, W, OH, OW;
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
#define GRID_POINT(T, SFX)                                                                     \
    static void point_##SFX(const grid_args *a, int64_t n, int64_t h, int64_t w, T *ix, T *iy, \
                            T *dx, T *dy)                                                      \
    {                                                                                          \
        const int64_t *gs = a->grid->strides;                                                  \
        const T *g = (const T *)mt_tensor_data(a->grid) + n * gs[0] + h * gs[1] + w * gs[2];   \
        *ix = mt_grid_source_index_##SFX(g[0], a->W, a->padding, a->align, dx);                \
        *iy = mt_grid_source_index_##SFX(g[gs[3]], a->H, a->padding, a->align, dy);            \
    }

// sample n: out[n] (C, OH, OW) from input[n] (C, H, W)
#define SAMPLE_FORWARD(name, T, SFX)                                                             \
    static void name(const grid_args *a, int64_t n)                                              \
    {                                                                                            \
        const int64_t C = a->C, H = a->H, W = a->W, plane = a->OH * a->OW, *is = a->in->strides; \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                               \
        T *o = (T *)mt_tensor_data(a->out) + n * C * plane;                                      \
        for (int64_t p = 0; p < plane; p++) {                                                    \
            T ix, iy, dx, dy;                                                                    \
            point_##SFX(a, n, p / a->OW, p % a->OW, &ix, &iy, &dx, &dy);                         \
            bool finite = isfinite(ix) && isfinite(iy);                                          \
            if (a->mode == MT_GRID_NEAREST || !finite) {                                         \
                /* a bilinear point at NaN or inf is NaN (NaN weights, as PyTorch's) */          \
                int64_t px = finite ? (int64_t)nearbyint(ix) : -1;                               \
                int64_t py = finite ? (int64_t)nearbyint(iy) : -1;                               \
                bool inside = mt_grid_in(py, px, H, W);                                          \
                T miss = a->mode == MT_GRID_NEAREST ? (T)0 : (T)NAN;                             \
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

// sample n: each tap's weight times the output's gradient goes to its input pixel; the grid's
// gradient is the bilinear surface's slope times the source index's derivative (0 for nearest)
#define SAMPLE_BACKWARD(name, T, SFX)                                                           \
    static void name(const grid_args *a, int64_t n)                                             \
    {                                                                                           \
        const int64_t C = a->C, H = a->H, W = a->W, *is = a->in->strides, *os = a->go->strides; \
        const T *x = (const T *)mt_tensor_data(a->in) + n * is[0];                              \
        const T *go = (const T *)mt_tensor_data(a->go) + n * os[0];                             \
        T *gi = (T *)mt_tensor_data(a->gin) + n * C * H * W;                                    \
        T *gg = (T *)mt_tensor_data(a->ggrid) + n * a->OH * a->OW * 2;                          \
        for (int64_t p = 0; p < a->OH * a->OW; p++) {                                           \
            int64_t h = p / a->OW, w = p % a->OW;                                               \
            T ix, iy, dx, dy;                                                                   \
            point_##SFX(a, n, h, w, &ix, &iy, &dx, &dy);                                        \
            const T *gp = go + h * os[2] + w * os[3];                                           \
            if (!isfinite(ix) || !isfinite(iy)) {                                               \
                continue; /* reads nothing: no gradient */                                      \
            }                                                                                   \
            if (a->mode == MT_GRID_NEAREST) {                                                   \
                int64_t px = (int64_t)nearbyint(ix), py = (int64_t)nearbyint(iy);               \
                for (int64_t c = 0; mt_grid_in(py, px, H, W) && c < C; c++) {                   \
                    gi[c * H * W + py * W + px] += gp[c * os[1]];                               \
                }                                                                               \
                continue;                                                                       \
            }                                                                                   \
            corners k = bilinear_corners(ix, iy);                                               \
            double fx = ix - (double)k.x0, fy = iy - (double)k.y0;                              \
            /* d weight / d ix and d weight / d iy of nw ne sw se */                            \
            const double wx[4] = {-(1 - fy), 1 - fy, -fy, fy};                                  \
            const double wy[4] = {-(1 - fx), -fx, 1 - fx, fx};                                  \
            double sx = 0, sy = 0;                                                              \
            for (int64_t c = 0; c < C; c++) {                                                   \
                const double gv = (double)gp[c * os[1]];                                        \
                for (int q = 0; q < 4; q++) {                                                   \
                    int64_t py = k.y0 + q / 2, px = k.x0 + q % 2;                               \
                    if (!mt_grid_in(py, px, H, W)) {                                            \
                        continue;                                                               \
                    }                                                                           \
                    gi[c * H * W + py * W + px] += (T)(k.w[q] * gv);                            \
                    const double v = (double)x[c * is[1] + py * is[2] + px * is[3]];            \
                    sx += v * wx[q] * gv;                                                       \
                    sy += v * wy[q] * gv;                                                       \
                }                                                                               \
            }                                                                                   \
            gg[p * 2] = (T)(sx * (double)dx);                                                   \
            gg[p * 2 + 1] = (T)(sy * (double)dy);                                               \
        }                                                                                       \
    }

GRID_POINT(float, f32)
GRID_POINT(double, f64)
SAMPLE_FORWARD(forward_f32, float, f32)
SAMPLE_FORWARD(forward_f64, double, f64)
SAMPLE_BACKWARD(backward_f32, float, f32)
SAMPLE_BACKWARD(backward_f64, double, f64)

typedef void (*sample_fn)(const grid_args *a, int64_t n);

/* a's sizes and modes from the op's arguments (input t[k], grid t[k + 1]) */
static grid_args
grid_args_of(const mt_args *op, int k)
{
    const mt_tensor *in = op->t[k], *grid = op->t[k + 1];
    return (grid_args){.in = in,
                       .grid = grid,
                       .mode = (int)op->i[0],
                       .padding = (int)op->i[1],
                       .align = op->b[0],
                       .N = in->sizes[0],
                       .C = in->sizes[1],
                       .H = in->sizes[2],
                       .W = in->sizes[3],
                       .OH = grid->sizes[1],
                       .OW = grid->sizes[2]};
}

/* sample(a, n) for every n, threads over the batch */
static void
run(const grid_args *a, sample_fn sample)
{
    const int parts = mt_parallel_parts(a->N * a->C * a->OH * a->OW, 16384);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t n = 0; n < a->N; n++) {
        sample(a, n);
    }
}

// input (N, C, H, W), grid (N, OH, OW, 2); out (N, C, OH, OW)
mt_status
mt_cpu_grid_sampler_2d(mt_args *a)
{
    grid_args g = grid_args_of(a, 0);
    if (g.in->dtype != MT_FLOAT32 && g.in->dtype != MT_FLOAT64) {
        return mt_fail_not_implemented("grid_sampler_2d_cpu_kernel_impl", "", g.in->dtype);
    }
    int64_t sizes[4] = {g.N, g.C, g.OH, g.OW};
    mt_status st = mt_tensor_empty(4, sizes, g.in->dtype, mt_tensor_device(g.in), &g.out);
    if (st) {
        return st;
    }
    run(&g, g.in->dtype == MT_FLOAT32 ? forward_f32 : forward_f64);
    a->out[0] = g.out;
    return MT_OK;
}

// grad_output (N, C, OH, OW), input (N, C, H, W), grid (N, OH, OW, 2); out: the gradients of
// input and of grid
mt_status
mt_cpu_grid_sampler_2d_backward(mt_args *a)
{
    grid_args g = grid_args_of(a, 1);
    g.go = a->t[0];
    mt_dtype dt = g.in->dtype;
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64) {
        return mt_fail_not_implemented("grid_sampler_2d_backward_cpu", "", dt);
    }
    mt_device dev = mt_tensor_device(g.in);
    mt_status st = mt_tensor_empty(4, g.in->sizes, dt, dev, &g.gin);
    if (st == MT_OK) {
        st = mt_tensor_empty(4, g.grid->sizes, dt, dev, &g.ggrid);
    }
    if (st) {
        mt_tensor_clear(&g.gin);
        return st;
    }
    memset(mt_tensor_data(g.gin), 0, (size_t)mt_tensor_numel(g.gin) * mt_dtype_size(dt));
    memset(mt_tensor_data(g.ggrid), 0, (size_t)mt_tensor_numel(g.ggrid) * mt_dtype_size(dt));
    run(&g, dt == MT_FLOAT32 ? backward_f32 : backward_f64);
    a->out[0] = g.gin;
    a->out[1] = g.ggrid;
    return MT_OK;
}
