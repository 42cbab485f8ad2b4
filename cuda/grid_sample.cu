// grid_sampler_2d and its backward (bilinear, nearest and bicubic, the three padding modes) and
// grid_sampler_3d's (trilinear and nearest): the CPU's
// kernels (cpu/grid_sample.c) with a thread per output point (n, oh, ow) in place of a thread
// per sample, as PyTorch's grid_sampler_2d_kernel. The backward scatters each tap's share of the
// gradient into the input's with atomicAdd (points of one sample may share pixels); the grid's
// gradient is the point's own.
#include "core/grid_math.h"
#include "cuda/device_math.h"
#include "cuda/grid_sample.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"

// The source position (ix, iy) of grid point (n, h, w), and its derivatives, in T
static __device__ __forceinline__ void
source(const mt_grid_geom &g, const float *grid, int64_t n, int64_t h, int64_t w, float *ix,
       float *iy, float *dx, float *dy)
{
    const float *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    *ix = mt_grid_source_index_f32(p[0], g.W, g.padding, g.align, dx);
    *iy = mt_grid_source_index_f32(p[g.gs[3]], g.H, g.padding, g.align, dy);
}

static __device__ __forceinline__ void
source(const mt_grid_geom &g, const double *grid, int64_t n, int64_t h, int64_t w, double *ix,
       double *iy, double *dx, double *dy)
{
    const double *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    *ix = mt_grid_source_index_f64(p[0], g.W, g.padding, g.align, dx);
    *iy = mt_grid_source_index_f64(p[g.gs[3]], g.H, g.padding, g.align, dy);
}

// bicubic's taps of grid point (n, h, w) (core/grid_math.h); false where it is not finite
static __device__ __forceinline__ bool
cubic_taps(const mt_grid_geom &g, const float *grid, int64_t n, int64_t h, int64_t w,
           mt_grid_cubic *k)
{
    const float *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    return mt_grid_cubic_taps_f32(p[0], p[g.gs[3]], g.H, g.W, g.padding, g.align, k);
}

static __device__ __forceinline__ bool
cubic_taps(const mt_grid_geom &g, const double *grid, int64_t n, int64_t h, int64_t w,
           mt_grid_cubic *k)
{
    const double *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    return mt_grid_cubic_taps_f64(p[0], p[g.gs[3]], g.H, g.W, g.padding, g.align, k);
}

// in (N, C, H, W), grid (N, OH, OW, 2) -> out (N, C, OH, OW)
template <typename T>
__global__ void
grid_forward_kernel(mt_grid_geom g, const T *in, const T *grid, T *out)
{
    const int64_t plane = g.OH * g.OW;
    MT_CUDA_GRID_STRIDE(e, g.N * plane)
    {
        const int64_t n = e / plane, p = e % plane;
        const T *x = in + n * g.is[0];
        T *o = out + n * g.C * plane + p;
        if (g.mode == MT_GRID_BICUBIC) {
            mt_grid_cubic k;
            const bool finite = cubic_taps(g, grid, n, p / g.OW, p % g.OW, &k);
            for (int64_t c = 0; c < g.C; c++) {
                double acc = 0;
                for (int j = 0; finite && j < 4; j++) {
                    double row = 0;
                    for (int i = 0; k.y[j] >= 0 && i < 4; i++) {
                        const int64_t at = c * g.is[1] + k.y[j] * g.is[2] + k.x[i] * g.is[3];
                        row += k.x[i] >= 0 ? (double)x[at] * k.wx[i] : 0;
                    }
                    acc += row * k.wy[j];
                }
                o[c * plane] = finite ? (T)acc : T(NAN);
            }
            continue;
        }
        T ix, iy, dx, dy;
        source(g, grid, n, p / g.OW, p % g.OW, &ix, &iy, &dx, &dy);
        const bool finite = isfinite(ix) && isfinite(iy);
        if (g.mode == MT_GRID_NEAREST || !finite) {
            // a bilinear point at NaN or inf is NaN (NaN weights, as PyTorch's)
            const int64_t px = finite ? (int64_t)nearbyint((double)ix) : -1;
            const int64_t py = finite ? (int64_t)nearbyint((double)iy) : -1;
            const bool inside = mt_grid_in(py, px, g.H, g.W);
            const T miss = g.mode == MT_GRID_NEAREST ? T(0) : T(NAN);
            for (int64_t c = 0; c < g.C; c++) {
                o[c * plane] = inside ? x[c * g.is[1] + py * g.is[2] + px * g.is[3]] : miss;
            }
            continue;
        }
        const double fx = floor((double)ix), fy = floor((double)iy);
        const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
        const double ax = ix - fx, ay = iy - fy;
        const double wt[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
        for (int64_t c = 0; c < g.C; c++) {
            double acc = 0;
            for (int q = 0; q < 4; q++) {
                const int64_t py = y0 + q / 2, px = x0 + q % 2;
                if (mt_grid_in(py, px, g.H, g.W)) {
                    acc += (double)x[c * g.is[1] + py * g.is[2] + px * g.is[3]] * wt[q];
                }
            }
            o[c * plane] = (T)acc;
        }
    }
}

// go (N, C, OH, OW), in, grid -> gin (N, C, H, W) += each tap's weight times go, atomically;
// ggrid (N, OH, OW, 2) = the bilinear surface's slope times the source index's derivative
template <typename T>
__global__ void
grid_backward_kernel(mt_grid_geom g, const T *go, const T *in, const T *grid, T *gin, T *ggrid)
{
    const int64_t plane = g.OH * g.OW, HW = g.H * g.W;
    MT_CUDA_GRID_STRIDE(e, g.N * plane)
    {
        const int64_t n = e / plane, p = e % plane, h = p / g.OW, w = p % g.OW;
        const T *x = in + n * g.is[0];
        const T *gp = go + n * g.os[0] + h * g.os[2] + w * g.os[3];
        T *gi = gin + n * g.C * HW;
        if (g.mode == MT_GRID_BICUBIC) {
            // the 16 taps' shares (several may land on one pixel), the bicubic surface's slope
            mt_grid_cubic k;
            if (!cubic_taps(g, grid, n, h, w, &k)) {
                continue;
            }
            double sx = 0, sy = 0;
            for (int64_t c = 0; c < g.C; c++) {
                const double gv = (double)gp[c * g.os[1]];
                for (int j = 0; j < 4; j++) {
                    for (int i = 0; k.y[j] >= 0 && i < 4; i++) {
                        if (k.x[i] < 0) {
                            continue;
                        }
                        atomicAdd(gi + c * HW + k.y[j] * g.W + k.x[i], (T)(k.wx[i] * k.wy[j] * gv));
                        const double v = (double)
                            x[c * g.is[1] + k.y[j] * g.is[2] + k.x[i] * g.is[3]];
                        sx += v * k.dwx[i] * k.wy[j] * gv;
                        sy += v * k.wx[i] * k.dwy[j] * gv;
                    }
                }
            }
            ggrid[e * 2] = (T)(sx * k.mx);
            ggrid[e * 2 + 1] = (T)(sy * k.my);
            continue;
        }
        T ix, iy, dx, dy;
        source(g, grid, n, h, w, &ix, &iy, &dx, &dy);
        if (!isfinite(ix) || !isfinite(iy)) {
            continue; // reads nothing: no gradient
        }
        if (g.mode == MT_GRID_NEAREST) {
            const int64_t px = (int64_t)nearbyint((double)ix), py = (int64_t)nearbyint((double)iy);
            for (int64_t c = 0; mt_grid_in(py, px, g.H, g.W) && c < g.C; c++) {
                atomicAdd(gi + c * HW + py * g.W + px, gp[c * g.os[1]]);
            }
            continue;
        }
        const double fx = floor((double)ix), fy = floor((double)iy);
        const int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
        const double ax = ix - fx, ay = iy - fy;
        const double wt[4] = {(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay};
        // d weight / d ix and d weight / d iy of nw ne sw se
        const double wx[4] = {-(1 - ay), 1 - ay, -ay, ay};
        const double wy[4] = {-(1 - ax), -ax, 1 - ax, ax};
        double sx = 0, sy = 0;
        for (int64_t c = 0; c < g.C; c++) {
            const double gv = (double)gp[c * g.os[1]];
            for (int q = 0; q < 4; q++) {
                const int64_t py = y0 + q / 2, px = x0 + q % 2;
                if (!mt_grid_in(py, px, g.H, g.W)) {
                    continue;
                }
                atomicAdd(gi + c * HW + py * g.W + px, (T)(wt[q] * gv));
                const double v = (double)x[c * g.is[1] + py * g.is[2] + px * g.is[3]];
                sx += v * wx[q] * gv;
                sy += v * wy[q] * gv;
            }
        }
        ggrid[e * 2] = (T)(sx * (double)dx);
        ggrid[e * 2 + 1] = (T)(sy * (double)dy);
    }
}

// 3-D: the source position i = (x, y, z) of grid point (n, d, h, w) and its derivatives (the
// CPU's point3: PyTorch's generic kernel's arithmetic)
static __device__ __forceinline__ void
source3(const mt_grid_geom &g, const float *grid, int64_t n, int64_t p, float i[3], float di[3])
{
    const int64_t w = p % g.OW, h = p / g.OW % g.OH, d = p / (g.OW * g.OH),
                  size[3] = {g.W, g.H, g.D};
    const float *q = grid + n * g.gs[0] + d * g.gs[1] + h * g.gs[2] + w * g.gs[3];
    for (int k = 0; k < 3; k++) {
        i[k] = mt_grid_source_index_3d_f32(q[k * g.gs[4]], size[k], g.padding, g.align, &di[k]);
    }
}

static __device__ __forceinline__ void
source3(const mt_grid_geom &g, const double *grid, int64_t n, int64_t p, double i[3], double di[3])
{
    const int64_t w = p % g.OW, h = p / g.OW % g.OH, d = p / (g.OW * g.OH),
                  size[3] = {g.W, g.H, g.D};
    const double *q = grid + n * g.gs[0] + d * g.gs[1] + h * g.gs[2] + w * g.gs[3];
    for (int k = 0; k < 3; k++) {
        i[k] = mt_grid_source_index_3d_f64(q[k * g.gs[4]], size[k], g.padding, g.align, &di[k]);
    }
}

// corner q (x + (q & 1), y + (q >> 1 & 1), z + (q >> 2)) of the cell whose fractions are f: its
// weight, or with along = 0, 1, 2 the weight's derivative in x, y or z
static __device__ __forceinline__ double
corner_weight(const double f[3], int q, int along)
{
    double w = 1;
    for (int k = 0; k < 3; k++) {
        const bool far = (q >> k) & 1;
        w *= k == along ? (far ? 1 : -1) : far ? f[k] : 1 - f[k];
    }
    return w;
}

// in (N, C, D, H, W), grid (N, OD, OH, OW, 3) -> out (N, C, OD, OH, OW), trilinear or nearest
template <typename T>
__global__ void
grid3d_forward_kernel(mt_grid_geom g, const T *in, const T *grid, T *out)
{
    const int64_t vol = g.OD * g.OH * g.OW;
    MT_CUDA_GRID_STRIDE(e, g.N * vol)
    {
        const int64_t n = e / vol, p = e % vol;
        T i[3], di[3];
        source3(g, grid, n, p, i, di);
        const T *x = in + n * g.is[0];
        T *o = out + n * g.C * vol + p;
        if (g.mode == MT_GRID_NEAREST) {
            const int64_t px = (int64_t)nearbyint((double)i[0]),
                          py = (int64_t)nearbyint((double)i[1]);
            const int64_t pz = (int64_t)nearbyint((double)i[2]);
            const bool inside = mt_grid_in_3d(pz, py, px, g.D, g.H, g.W);
            for (int64_t c = 0; c < g.C; c++) {
                o[c * vol] = inside ? x[c * g.is[1] + pz * g.is[2] + py * g.is[3] + px * g.is[4]]
                                    : T(0);
            }
            continue;
        }
        double f[3], fl[3];
        for (int k = 0; k < 3; k++) {
            fl[k] = floor((double)i[k]);
            f[k] = (double)i[k] - fl[k];
        }
        const int64_t x0 = (int64_t)fl[0], y0 = (int64_t)fl[1], z0 = (int64_t)fl[2];
        for (int64_t c = 0; c < g.C; c++) {
            double acc = 0;
            for (int q = 0; q < 8; q++) {
                const int64_t px = x0 + (q & 1), py = y0 + (q >> 1 & 1), pz = z0 + (q >> 2);
                if (mt_grid_in_3d(pz, py, px, g.D, g.H, g.W)) {
                    acc += (double)x[c * g.is[1] + pz * g.is[2] + py * g.is[3] + px * g.is[4]] *
                           corner_weight(f, q, -1);
                }
            }
            o[c * vol] = (T)acc;
        }
    }
}

// go (N, C, OD, OH, OW), in, grid -> gin (N, C, D, H, W) += each corner's weight times go,
// atomically; ggrid (N, OD, OH, OW, 3) = the trilinear surface's slope times the source index's
// derivative (0 for nearest)
template <typename T>
__global__ void
grid3d_backward_kernel(mt_grid_geom g, const T *go, const T *in, const T *grid, T *gin, T *ggrid)
{
    const int64_t vol = g.OD * g.OH * g.OW, DHW = g.D * g.H * g.W;
    MT_CUDA_GRID_STRIDE(e, g.N * vol)
    {
        const int64_t n = e / vol, p = e % vol;
        const int64_t w = p % g.OW, h = p / g.OW % g.OH, d = p / (g.OW * g.OH);
        T i[3], di[3];
        source3(g, grid, n, p, i, di);
        const T *x = in + n * g.is[0];
        const T *gp = go + n * g.os[0] + d * g.os[2] + h * g.os[3] + w * g.os[4];
        T *gi = gin + n * g.C * DHW;
        if (g.mode == MT_GRID_NEAREST) {
            const int64_t px = (int64_t)nearbyint((double)i[0]),
                          py = (int64_t)nearbyint((double)i[1]);
            const int64_t pz = (int64_t)nearbyint((double)i[2]);
            for (int64_t c = 0; mt_grid_in_3d(pz, py, px, g.D, g.H, g.W) && c < g.C; c++) {
                atomicAdd(gi + c * DHW + (pz * g.H + py) * g.W + px, gp[c * g.os[1]]);
            }
            continue;
        }
        double f[3], fl[3], s[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            fl[k] = floor((double)i[k]);
            f[k] = (double)i[k] - fl[k];
        }
        const int64_t x0 = (int64_t)fl[0], y0 = (int64_t)fl[1], z0 = (int64_t)fl[2];
        for (int64_t c = 0; c < g.C; c++) {
            const double gv = (double)gp[c * g.os[1]];
            for (int q = 0; q < 8; q++) {
                const int64_t px = x0 + (q & 1), py = y0 + (q >> 1 & 1), pz = z0 + (q >> 2);
                if (!mt_grid_in_3d(pz, py, px, g.D, g.H, g.W)) {
                    continue;
                }
                atomicAdd(gi + c * DHW + (pz * g.H + py) * g.W + px,
                          (T)(corner_weight(f, q, -1) * gv));
                const double v = (double)
                    x[c * g.is[1] + pz * g.is[2] + py * g.is[3] + px * g.is[4]];
                for (int along = 0; along < 3; along++) {
                    s[along] += v * corner_weight(f, q, along) * gv;
                }
            }
        }
        for (int along = 0; along < 3; along++) {
            ggrid[e * 3 + along] = (T)(s[along] * (double)di[along]);
        }
    }
}

extern "C" const void *
mt_cuda_grid3d_kernel(mt_dtype dt, int back)
{
    if (dt == MT_FLOAT32) {
        return back ? MT_KERNEL_PTR(grid3d_backward_kernel<float>)
                    : MT_KERNEL_PTR(grid3d_forward_kernel<float>);
    }
    if (dt == MT_FLOAT64) {
        return back ? MT_KERNEL_PTR(grid3d_backward_kernel<double>)
                    : MT_KERNEL_PTR(grid3d_forward_kernel<double>);
    }
    return nullptr;
}

extern "C" const void *
mt_cuda_grid_kernel(mt_dtype dt, int back)
{
    if (dt == MT_FLOAT32) {
        return back ? MT_KERNEL_PTR(grid_backward_kernel<float>)
                    : MT_KERNEL_PTR(grid_forward_kernel<float>);
    }
    if (dt == MT_FLOAT64) {
        return back ? MT_KERNEL_PTR(grid_backward_kernel<double>)
                    : MT_KERNEL_PTR(grid_forward_kernel<double>);
    }
    return nullptr;
}
