/* The front ends of the upsample ops (torch._C._nn's upsample_*, under F.interpolate: nearest,
 * nearest-exact, linear, bilinear, bicubic, trilinear) and of their backwards, for every
 * device: PyTorch's checks (upsample_{1,2,3}d_common_check, the backward's grad_output check)
 * and messages, and the plan the kernels read: the mode, the spatial sizes, align_corners and
 * the scales. Where each output reads its input is core/resample_math.h's. */
#include <stdio.h>

#include "ops/fails.h"
#include "ops/front.h"
#include "ops/ops.h"

/* op -> spatial dims, mode and the kernel PyTorch names in its dtype error */
static int
describe(mt_op op, int *mode, const char **kernel)
{
    switch (op) {
    case MT_OP_upsample_nearest1d:
    case MT_OP_upsample_nearest1d_backward:
        *mode = MT_RESAMPLE_NEAREST;
        *kernel = "compute_indices_weights_nearest";
        return 1;
    case MT_OP_upsample_nearest2d:
    case MT_OP_upsample_nearest2d_backward:
        *mode = MT_RESAMPLE_NEAREST;
        *kernel = "upsample_nearest2d_channels_last";
        return 2;
    case MT_OP_upsample_nearest3d:
    case MT_OP_upsample_nearest3d_backward:
        *mode = MT_RESAMPLE_NEAREST;
        *kernel = "compute_indices_weights_nearest";
        return 3;
    case MT_OP__upsample_nearest_exact1d:
    case MT_OP__upsample_nearest_exact1d_backward:
        *mode = MT_RESAMPLE_NEAREST_EXACT;
        *kernel = "compute_indices_weights_nearest";
        return 1;
    case MT_OP__upsample_nearest_exact2d:
    case MT_OP__upsample_nearest_exact2d_backward:
        *mode = MT_RESAMPLE_NEAREST_EXACT;
        *kernel = "upsample_nearest2d_channels_last";
        return 2;
    case MT_OP__upsample_nearest_exact3d:
    case MT_OP__upsample_nearest_exact3d_backward:
        *mode = MT_RESAMPLE_NEAREST_EXACT;
        *kernel = "compute_indices_weights_nearest";
        return 3;
    case MT_OP_upsample_linear1d:
    case MT_OP_upsample_linear1d_backward:
        *mode = MT_RESAMPLE_LINEAR;
        *kernel = "compute_indices_weights_linear";
        return 1;
    case MT_OP_upsample_bilinear2d:
    case MT_OP_upsample_bilinear2d_backward:
        *mode = MT_RESAMPLE_LINEAR;
        *kernel = "upsample_bilinear2d_channels_last";
        return 2;
    case MT_OP_upsample_trilinear3d:
    case MT_OP_upsample_trilinear3d_backward:
        *mode = MT_RESAMPLE_LINEAR;
        *kernel = "compute_indices_weights_linear";
        return 3;
    default: /* upsample_bicubic2d and its backward */
        *mode = MT_RESAMPLE_CUBIC;
        *kernel = "compute_indices_weights_cubic";
        return 2;
    }
}

/* PyTorch's upsample_{1,2,3}d_common_check of the input's sizes (ndim of them) and
 * output_size, n spatial dims */
static mt_status
check_sizes(int ndim, const int64_t *sizes, const mt_intlist *size, int n)
{
    static const char *const label[] = {"D", "H", "W"};
    if (ndim != n + 2) {
        return mt_fail(MT_ERUNTIME, "It is expected input_size equals to %d, but got size %d",
                       n + 2, ndim);
    }
    if (size->n != n) {
        return mt_fail(MT_ERUNTIME, "It is expected output_size equals to %d, but got size %d", n,
                       size->n);
    }
    bool positive = true;
    char ins[128] = "", outs[128] = "";
    size_t li = 0, lo = 0;
    for (int d = 0; d < n; d++) {
        const char *sep = d ? ", " : "";
        positive = positive && sizes[2 + d] > 0 && size->v[d] > 0;
        li += (size_t)snprintf(ins + li, sizeof(ins) - li, "%s%s: %lld", sep, label[3 - n + d],
                               (long long)sizes[2 + d]);
        lo += (size_t)snprintf(outs + lo, sizeof(outs) - lo, "%s%s: %lld", sep, label[3 - n + d],
                               (long long)size->v[d]);
    }
    if (!positive) {
        return mt_fail(MT_ERUNTIME,
                       "Input and output sizes should be greater than 0, but got input (%s) "
                       "output (%s)",
                       ins, outs);
    }
    return MT_OK;
}

/* The plan of input sizes (N, C, *in) resized to output_size; the scales follow align_corners
 * in the interpolating modes' schemas, output_size (and input_size) in the nearest ones' */
static void
fill_plan(const mt_args *a, const int64_t *sizes, int n, int mode, mt_resample_plan *r)
{
    const bool interpolates = mode == MT_RESAMPLE_LINEAR || mode == MT_RESAMPLE_CUBIC;
    *r = (mt_resample_plan){.nd = n, .mode = mode, .align = interpolates ? a->b[0] : false};
    r->planes = sizes[0] * sizes[1];
    for (int d = 0; d < 3; d++) {
        const int k = d - (3 - n); /* the op's spatial dim, < 0 for the padding ones */
        r->in[d] = k < 0 ? 1 : sizes[2 + k];
        r->out[d] = k < 0 ? 1 : a->l[0].v[k];
        r->scales[d] = k < 0 || mt_scalar_is_none(a->s[k]) ? 0 : mt_scalar_to_double(a->s[k]);
    }
}

// self (N, C, *in), output_size (n ints), [align_corners,] n optional scales; out (N, C,
// *output_size)
mt_status
mt_front_upsample(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    int mode;
    const char *kernel;
    const int n = describe(p->op, &mode, &kernel);
    mt_status st = check_sizes(x->ndim, x->sizes, &a->l[0], n);
    if (st) {
        return st;
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail_not_implemented(kernel, "", x->dtype);
    }
    fill_plan(a, x->sizes, n, mode, &p->resample);
    int64_t sizes[5] = {x->sizes[0], x->sizes[1]};
    for (int d = 0; d < n; d++) {
        sizes[2 + d] = a->l[0].v[d];
    }
    /* channels-last stays channels-last, as in PyTorch */
    return mt_front_output_format(p, x->dtype, n + 2, sizes, mt_suggest_memory_format(x));
}

// grad_output (N, C, *output_size), output_size, input_size (N, C, *in), [align_corners,]
// the scales; out (N, C, *in)
mt_status
mt_front_upsample_backward(const mt_args *a, mt_plan *p)
{
    const mt_tensor *go = a->t[0];
    const mt_intlist *in = &a->l[1];
    int mode;
    const char *kernel;
    const int n = describe(p->op, &mode, &kernel);
    mt_status st = check_sizes(in->n, in->v, &a->l[0], n);
    if (st) {
        return st;
    }
    if (go->ndim != n + 2) {
        return mt_fail(MT_ERUNTIME,
                       "Expected grad_output to be a tensor of dimension %d but got: dimension %d",
                       n + 2, go->ndim);
    }
    for (int d = 0; d < n + 2; d++) {
        const int64_t want = d < 2 ? in->v[d] : a->l[0].v[d - 2];
        if (go->sizes[d] != want) {
            return mt_fail(MT_ERUNTIME,
                           "Expected grad_output to have the same shape as output; output.size(%d) "
                           "= %lld but got grad_output.size(%d) = %lld",
                           d, (long long)want, d, (long long)go->sizes[d]);
        }
    }
    if (!mt_dtype_is_float(go->dtype)) {
        return mt_fail_not_implemented(kernel, "", go->dtype);
    }
    fill_plan(a, in->v, n, mode, &p->resample);
    /* the gradient is laid out as grad_output is, but for PyTorch's bicubic and 3-d nearest
     * backward kernels, which make row-major ones */
    const bool row_major = p->op == MT_OP_upsample_bicubic2d_backward ||
                           p->op == MT_OP_upsample_nearest3d_backward ||
                           p->op == MT_OP__upsample_nearest_exact3d_backward;
    return mt_front_output_format(p, go->dtype, in->n, in->v,
                                  row_major ? MT_CONTIGUOUS_FORMAT : mt_suggest_memory_format(go));
}
