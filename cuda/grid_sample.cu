// grid_sampler_2d and its backward (bilinear and nearest, the three padding modes): the CPU's
// kernels (cpu/grid_sample.c) with a thread per output point (n, oh, ow) in place of a thread
// per sample, as PyTorch's grid_sampler_2d_kernel. The backward scatters each tap's share of the
// gradient into the input's with atomicAdd (points of one sample may share pixels); the grid's
// gradient is the point's own.
#include "core/grid_math.h"
#include "cuda/device_math.h"
#include "cuda/grid_sample.h"
#include "cuda/kernels.h"

#define GRID_STRIDE(i, n)                                                     \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)gridDim.x * blockDim.x)

// The source position (ix, iy) of grid point (n, h, w), and its derivatives, in T
static __device__ __forceinline__ void
source(const mt_cuda_grid &g, const float *grid, int64_t n, int64_t h, int64_t w, float *ix,
       float *iy, float *dx, float *dy)
{
    const float *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    *ix = mt_grid_source_index_f32(p[0], g.W, g.padding, g.align, dx);
    *iy = mt_grid_source_index_f32(p[g.gs[3]], g.H, g.padding, g.align, dy);
}

static __device__ __forceinline__ void
source(const mt_cuda_grid &g, const double *grid, int64_t n, int64_t h, int64_t w, double *ix,
       double *iy, double *dx, double *dy)
{
    const double *p = grid + n * g.gs[0] + h * g.gs[1] + w * g.gs[2];
    *ix = mt_grid_source_index_f64(p[0], g.W, g.padding, g.align, dx);
    *iy = mt_grid_source_index_f64(p[g.gs[3]], g.H, g.padding, g.align, dy);
}

// in (N, C, H, W), grid (N, OH, OW, 2) -> out (N, C, OH, OW)
template <typename T>
__global__ void
grid_forward_kernel(mt_cuda_grid g, const T *in, const T *grid, T *out)
{
    const int64_t plane = g.OH * g.OW;
    GRID_STRIDE(e, g.N * plane)
    {
        const int64_t n = e / plane, p = e % plane;
        T ix, iy, dx, dy;
        source(g, grid, n, p / g.OW, p % g.OW, &ix, &iy, &dx, &dy);
        const T *x = in + n * g.is[0];
        T *o = out + n * g.C * plane + p;
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
grid_backward_kernel(mt_cuda_grid g, const T *go, const T *in, const T *grid, T *gin, T *ggrid)
{
    const int64_t plane = g.OH * g.OW, HW = g.H * g.W;
    GRID_STRIDE(e, g.N * plane)
    {
        const int64_t n = e / plane, p = e % plane, h = p / g.OW, w = p % g.OW;
        T ix, iy, dx, dy;
        source(g, grid, n, h, w, &ix, &iy, &dx, &dy);
        if (!isfinite(ix) || !isfinite(iy)) {
            continue; // reads nothing: no gradient
        }
        const T *x = in + n * g.is[0];
        const T *gp = go + n * g.os[0] + h * g.os[2] + w * g.os[3];
        T *gi = gin + n * g.C * HW;
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
