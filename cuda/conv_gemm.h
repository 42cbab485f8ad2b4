/* conv2d without cuDNN (torch.backends.cudnn.enabled = False, or a build without cuDNN), as
 * PyTorch's slow_conv2d: the input unfolded into columns (im2col, im2col.cu), one batched
 * cuBLAS product per group, and for the input's gradient the columns folded back (col2im). What
 * the host code (conv_gemm.c) and the kernels share. */
#ifndef MT_CUDA_CONV_GEMM_H
#define MT_CUDA_CONV_GEMM_H

#include <stdint.h>

#include "core/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One convolution's geometry: x (n, c, h, w), a kh x kw filter, out (n, oc, oh, ow). */
typedef struct mt_cuda_col_geom {
    int64_t n, c, h, w, kh, kw, oh, ow;
    int64_t sh, sw, ph, pw, dh, dw;
} mt_cuda_col_geom;

/* (mt_cuda_col_geom g, const T *x, T *col), any grid of MT_CUDA_THREADS: x (n, c, h, w) and
 * col (n, c, kh, kw, oh, ow) contiguous; col = the input pixel each tap of each output reads,
 * 0 in the padding. back: (g, const T *col, T *x), x = the sum of the columns' entries that
 * read each pixel (col2im). dt float32 or float64; NULL otherwise. */
const void *mt_cuda_im2col_kernel(mt_dtype dt, int back);

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
#include "cuda/cuda.h"

/* conv2d and its two backward ops on im2col + cuBLAS (a->plan->conv the front end's geometry);
 * the kernels conv.c runs when cuDNN is off or absent. */
mt_status mt_cuda_conv2d_gemm(mt_args *a);
mt_status mt_cuda_conv_backward_input_gemm(mt_args *a);
mt_status mt_cuda_conv_backward_weight_gemm(mt_args *a);
#endif

#endif
