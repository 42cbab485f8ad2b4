/* im2col and col2im on the CPU (F.unfold and F.fold): the convolution's own loops
 * (mt_cpu_im2col_rows, conv.c; mt_cpu_col2im_image, conv_backward.c) over each image, threaded
 * over the images. The checks and the geometry (conv_geom: c channels of h x w images, oh x ow
 * blocks) are the front end's (ops/conv_checks.c). */
#include <string.h>

#include "cpu/conv.h"
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"

// self (N, C, H, W) or (C, H, W); out (N, C*KH*KW, OH*OW) or (C*KH*KW, OH*OW), the front end's
mt_status
mt_cpu_im2col(mt_args *a)
{
    const conv_geom *g = &a->plan->conv;
    mt_tensor *self = a->t[0], *x = NULL, *out = a->out[0];
    if (self->dtype != MT_FLOAT32 && self->dtype != MT_FLOAT64) {
        return mt_fail_not_implemented("im2col_out_cpu", "", self->dtype);
    }
    const int64_t rows = g->c * g->kh * g->kw, length = g->oh * g->ow;
    mt_status st = mt_cpu_dense(self, self->dtype, &x);
    if (st) {
        return st;
    }
    const size_t item = mt_dtype_size(self->dtype);
    const char *xd = mt_tensor_data(x);
    char *od = mt_tensor_data(out);
    const int64_t image = g->c * g->h * g->w;
    const int parts = mt_parallel_parts(g->n * rows * length, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t b = 0; b < g->n; b++) {
        mt_cpu_im2col_rows(xd + b * image * (int64_t)item, od + b * rows * length * (int64_t)item,
                           length, g, item, 0, g->oh);
    }
    mt_tensor_clear(&x);
    return MT_OK;
}

// self (N, C*KH*KW, L) or (C*KH*KW, L); out (N, C, H, W) or (C, H, W), output_size (H, W), the
// front end's
mt_status
mt_cpu_col2im(mt_args *a)
{
    const conv_geom *g = &a->plan->conv;
    mt_tensor *self = a->t[0], *col = NULL, *out = a->out[0];
    if (self->dtype != MT_FLOAT32 && self->dtype != MT_FLOAT64) {
        return mt_fail_not_implemented("col2im_out_cpu", "", self->dtype);
    }
    mt_status st = mt_cpu_dense(self, self->dtype, &col);
    if (st) {
        return st;
    }
    const size_t item = mt_dtype_size(self->dtype);
    memset(mt_tensor_data(out), 0, (size_t)mt_tensor_numel(out) * item);
    const char *cd = mt_tensor_data(col);
    char *od = mt_tensor_data(out);
    const int64_t image = g->c * g->h * g->w, cols = g->oc * g->oh * g->ow;
    const int parts = mt_parallel_parts(g->n * cols, 32768);
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t b = 0; b < g->n; b++) {
        mt_cpu_col2im_image(cd + b * cols * (int64_t)item, od + b * image * (int64_t)item, g,
                            self->dtype);
    }
    mt_tensor_clear(&col);
    return MT_OK;
}
