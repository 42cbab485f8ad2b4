/* The CUDA key's nn layers: layer_norm (nn.cu), with the shared checks of ops/arg_checks.c. */
#include "cuda/elementwise.h"
#include "cuda/kernels_more.h"
#include "cuda/ops.h"

/* *out = t as a contiguous float64 copy, or NULL for an absent t. */
static mt_status
as_double(mt_tensor *t, mt_tensor **out)
{
    *out = NULL;
    return t ? mt_cuda_cast(t, MT_FLOAT64, out) : MT_OK;
}

// input (*, normalized_shape), weight and bias (normalized_shape) or NULL; out like input
static mt_status
cuda_layer_norm(mt_args *a)
{
    mt_tensor *input = a->t[0], *x = NULL, *w = NULL, *b = NULL, *out = NULL;
    int64_t n, rows;
    double eps;
    mt_status st = mt_layer_norm_spec(a, "CUDA", &n, &rows, &eps);
    if (st || (st = as_double(a->t[1], &w)) || (st = as_double(a->t[2], &b)) ||
        (st = mt_cuda_cast(input, input->dtype, &x)) ||
        (st = mt_tensor_empty(input->ndim, input->sizes, input->dtype, mt_tensor_device(input),
                              &out))) {
        goto out_release;
    }
    const char *xd = mt_tensor_data(x);
    char *yd = mt_tensor_data(out);
    const double *wd = w ? (const double *)mt_tensor_data(w) : NULL;
    const double *bd = b ? (const double *)mt_tensor_data(b) : NULL;
    void *args[] = {&xd, &yd, &rows, &n, &eps, &wd, &bd};
    int64_t blocks = rows < 65535 ? rows : 65535; /* the kernel strides over the rows */
    if (rows > 0 && n > 0 &&
        ((st = mt_cuda_use_device(mt_tensor_device(input))) ||
         (st = mt_cuda_launch(mt_cuda_layer_norm_kernel(input->dtype), (unsigned)blocks,
                              MT_CUDA_ROW_THREADS, args)))) {
        goto out_release;
    }
    a->out[0] = out;
    out = NULL;
out_release:
    mt_tensor_clear(&out);
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    mt_tensor_clear(&b);
    return st;
}

void
mt_cuda_register_nn(void)
{
    static const mt_cuda_reg kernels[] = {
        MT_CUDA_REG(layer_norm),
    };
    mt_cuda_register_all(kernels, sizeof(kernels) / sizeof(kernels[0]));
}
