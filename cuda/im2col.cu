// im2col and col2im: conv2d's input as columns, for the convolution without cuDNN
// (conv_gemm.c multiplies them with the filter on cuBLAS). A thread per element written, grid-
// stride; consecutive threads write (and mostly read) consecutive elements.
#include "cuda/conv_gemm.h"
#include "cuda/device_math.h"
#include "cuda/grid_stride.h"
#include "cuda/kernels.h"

// x (n, c, h, w) -> col (n, c, kh, kw, oh, ow): col[n, c, i, j, y, z] =
// x[n, c, y * sh - ph + i * dh, z * sw - pw + j * dw], 0 where that is padding
template <typename T>
__global__ void
im2col_kernel(mt_cuda_col_geom g, const T *x, T *col)
{
    const int64_t total = g.n * g.c * g.kh * g.kw * g.oh * g.ow;
    MT_CUDA_GRID_STRIDE(e, total)
    {
        int64_t r = e;
        const int64_t z = r % g.ow, y = (r /= g.ow) % g.oh, j = (r /= g.oh) % g.kw;
        const int64_t i = (r /= g.kw) % g.kh, plane = r / g.kh; // plane = n * c + c
        const int64_t ih = y * g.sh - g.ph + i * g.dh, iw = z * g.sw - g.pw + j * g.dw;
        const bool in = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
        col[e] = in ? load_(x + (plane * g.h + ih) * g.w + iw) : T(0);
    }
}

// col (n, c, kh, kw, oh, ow) -> x (n, c, h, w): each pixel sums the column entries that read
// it (a gather per pixel: no atomics, a fixed order); tap i reads row ih from output row
// y = (ih + ph - i * dh) / sh when that divides exactly and lies in [0, oh)
template <typename T>
__global__ void
col2im_kernel(mt_cuda_col_geom g, const T *col, T *x)
{
    const int64_t total = g.n * g.c * g.h * g.w;
    MT_CUDA_GRID_STRIDE(e, total)
    {
        const int64_t iw = e % g.w, ih = e / g.w % g.h, plane = e / (g.w * g.h);
        const T *cp = col + plane * g.kh * g.kw * g.oh * g.ow;
        double acc = 0;
        for (int64_t i = 0; i < g.kh; i++) {
            const int64_t ty = ih + g.ph - i * g.dh;
            if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) {
                continue;
            }
            for (int64_t j = 0; j < g.kw; j++) {
                const int64_t tz = iw + g.pw - j * g.dw;
                if (tz < 0 || tz % g.sw != 0 || tz / g.sw >= g.ow) {
                    continue;
                }
                acc += (double)load_(cp + ((i * g.kw + j) * g.oh + ty / g.sh) * g.ow + tz / g.sw);
            }
        }
        x[e] = (T)acc;
    }
}

extern "C" const void *
mt_cuda_im2col_kernel(mt_dtype dt, int back)
{
    if (dt == MT_FLOAT32) {
        return back ? MT_KERNEL_PTR(col2im_kernel<float>) : MT_KERNEL_PTR(im2col_kernel<float>);
    }
    if (dt == MT_FLOAT64) {
        return back ? MT_KERNEL_PTR(col2im_kernel<double>) : MT_KERNEL_PTR(im2col_kernel<double>);
    }
    return nullptr;
}
