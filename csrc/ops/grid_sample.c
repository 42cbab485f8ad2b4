/* The front ends of grid_sampler_2d and _3d and their backwards, for every device (PyTorch's checks of
 * GridSampler.cpp, in its order, and its messages; the call's geometry, which every device's
 * kernels read as a->plan->grid), and affine_grid_generator, a composite as
 * in ATen's AffineGridGenerator.cpp: a base grid of pixel centres in [-1, 1] (plus a column of
 * ones) times each theta transposed, through bmm, so autograd records theta's gradient. */
#include "dispatch/kernels.h"
#include "core/grid_math.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/op_chain.h"
#include "ops/ops.h"

/* check_grid_sampler_common and check_grid_sampler_2d or _3d (dims 2 or 3 spatial dims), then
 * the kernels' dtype checks */
static mt_status
grid_checks(const mt_tensor *in, const mt_tensor *grid, int64_t mode, int64_t padding, int dims)
{
    char b1[256], b2[256];
    if (mt_tensor_device(in).type != mt_tensor_device(grid).type ||
        mt_tensor_device(in).index != mt_tensor_device(grid).index) {
        return mt_fail(MT_ERUNTIME,
                       "grid_sampler(): expected input and grid to be on same device, but input "
                       "is on %s and grid is on %s",
                       mt_front_on_cuda(in) ? "cuda" : "cpu",
                       mt_front_on_cuda(grid) ? "cuda" : "cpu");
    }
    if (in->ndim < 1 || grid->ndim < 1 || in->sizes[0] != grid->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "grid_sampler(): expected grid and input to have same batch size, but got "
                       "input with sizes %s and grid with sizes %s",
                       mt_format_sizes(b1, sizeof(b1), in->ndim, in->sizes),
                       mt_format_sizes(b2, sizeof(b2), grid->ndim, grid->sizes));
    }
    if (grid->sizes[grid->ndim - 1] != in->ndim - 2) {
        return mt_fail(MT_ERUNTIME,
                       "grid_sampler(): expected grid to have size %d in last dimension, but got "
                       "grid with sizes %s",
                       in->ndim - 2, mt_format_sizes(b2, sizeof(b2), grid->ndim, grid->sizes));
    }
    for (int d = 2; d < in->ndim; d++) {
        if (in->sizes[d] <= 0) {
            return mt_fail(MT_ERUNTIME,
                           "grid_sampler(): expected input to have non-empty spatial dimensions, "
                           "but input has sizes %s with dimension %d being empty",
                           mt_format_sizes(b1, sizeof(b1), in->ndim, in->sizes), d);
        }
    }
    if (in->ndim != dims + 2 || grid->ndim != dims + 2) {
        return mt_fail(MT_ERUNTIME,
                       "grid_sampler(): expected %dD input and grid with same number of "
                       "dimensions, but got input with sizes %s and grid with sizes %s",
                       dims + 2, mt_format_sizes(b1, sizeof(b1), in->ndim, in->sizes),
                       mt_format_sizes(b2, sizeof(b2), grid->ndim, grid->sizes));
    }
    if (dims == 3 && mode == MT_GRID_BICUBIC) {
        return mt_fail(MT_ERUNTIME, "grid_sampler(): bicubic interpolation only supports 4D input");
    }
    /* PyTorch's enums have no check (another value reads out of its switch): here an error */
    if (mode != MT_GRID_BILINEAR && mode != MT_GRID_NEAREST && mode != MT_GRID_BICUBIC) {
        return mt_fail(MT_EVALUE,
                       "grid_sampler_%dd(): interpolation_mode must be 0 (bilinear), 1 (nearest) "
                       "or 2 (bicubic), but got %lld",
                       dims, (long long)mode);
    }
    if (padding < MT_GRID_ZEROS || padding > MT_GRID_REFLECTION) {
        return mt_fail(MT_EVALUE,
                       "grid_sampler_%dd(): padding_mode must be 0 (zeros), 1 (border) or 2 "
                       "(reflection), but got %lld",
                       dims, (long long)padding);
    }
    const char *kernel = dims == 2 ? "grid_sampler_2d_cpu_kernel_impl" : "grid_sampler3d_cpu";
    if (!mt_dtype_is_float(in->dtype)) {
        return mt_fail_not_implemented(kernel, "", in->dtype);
    }
    if (grid->dtype != in->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(in->dtype), mt_dtype_scalar_name(grid->dtype));
    }
    return MT_OK;
}

/* the backward's checks: the forward's, and grad_output shaped as its output */
static mt_status
grid_backward_checks(const mt_args *a, int dims)
{
    const mt_tensor *go = a->t[0], *in = a->t[1], *grid = a->t[2];
    mt_status st = grid_checks(in, grid, a->i[0], a->i[1], dims);
    if (st) {
        return st;
    }
    bool same = go->ndim == in->ndim && go->sizes[0] == in->sizes[0] &&
                go->sizes[1] == in->sizes[1] && go->dtype == in->dtype;
    for (int d = 2; same && d < in->ndim; d++) {
        same = go->sizes[d] == grid->sizes[d - 1];
    }
    if (!same) {
        char b1[256];
        return mt_fail(MT_ERUNTIME,
                       "grid_sampler_%dd_backward: grad_output of sizes %s does not match the "
                       "output of input and grid",
                       dims, mt_format_sizes(b1, sizeof(b1), go->ndim, go->sizes));
    }
    return MT_OK;
}

/* The call's geometry for every device's kernels (core/grid_math.h): the sizes of input and
 * grid, the modes, and the strides of input, grid and grad_output (go; NULL in a forward). */
static mt_grid_geom
grid_geom(const mt_args *a, const mt_tensor *go, const mt_tensor *in, const mt_tensor *grid)
{
    const int e = in->ndim - 4; /* 1 in 3-D: D and OD lead */
    mt_grid_geom g = {.N = in->sizes[0],
                      .C = in->sizes[1],
                      .D = e ? in->sizes[2] : 1,
                      .H = in->sizes[2 + e],
                      .W = in->sizes[3 + e],
                      .OD = e ? grid->sizes[1] : 1,
                      .OH = grid->sizes[1 + e],
                      .OW = grid->sizes[2 + e],
                      .mode = (int)a->i[0],
                      .padding = (int)a->i[1],
                      .align = a->b[0]};
    for (int d = 0; d < in->ndim; d++) {
        g.is[d] = in->strides[d];
        g.gs[d] = grid->strides[d];
        g.os[d] = go ? go->strides[d] : 0;
    }
    return g;
}

/* The forward over dims spatial dims: its checks, then its result (N, C, [OD,] OH, OW) in
 * input's dtype. */
static mt_status
grid_forward(const mt_args *a, mt_plan *p, int dims)
{
    const mt_tensor *in = a->t[0], *grid = a->t[1];
    mt_status st = grid_checks(in, grid, a->i[0], a->i[1], dims);
    if (st) {
        return st;
    }
    p->grid = grid_geom(a, NULL, in, grid);
    int64_t sizes[5] = {in->sizes[0], in->sizes[1]};
    for (int d = 2; d < in->ndim; d++) {
        sizes[d] = grid->sizes[d - 1];
    }
    return mt_front_output(p, in->dtype, in->ndim, sizes);
}

/* The backward over dims spatial dims: its checks, then its results, the gradients of input and
 * of grid (their shapes, input's dtype). */
static mt_status
grid_backward(const mt_args *a, mt_plan *p, int dims)
{
    const mt_tensor *in = a->t[1], *grid = a->t[2];
    mt_status st = grid_backward_checks(a, dims);
    if (st == MT_OK) {
        p->grid = grid_geom(a, a->t[0], in, grid);
        st = mt_front_output(p, in->dtype, in->ndim, in->sizes);
    }
    return st ? st : mt_front_output(p, in->dtype, grid->ndim, grid->sizes);
}

// input (N, C, H, W), grid (N, OH, OW, 2), interpolation_mode, padding_mode, align_corners
mt_status
mt_front_grid_sampler_2d(const mt_args *a, mt_plan *p)
{
    return grid_forward(a, p, 2);
}

// grad_output (N, C, OH, OW), input (N, C, H, W), grid (N, OH, OW, 2)
mt_status
mt_front_grid_sampler_2d_backward(const mt_args *a, mt_plan *p)
{
    return grid_backward(a, p, 2);
}

// input (N, C, D, H, W), grid (N, OD, OH, OW, 3), interpolation_mode (not bicubic),
// padding_mode, align_corners
mt_status
mt_front_grid_sampler_3d(const mt_args *a, mt_plan *p)
{
    return grid_forward(a, p, 3);
}

// grad_output (N, C, OD, OH, OW), input (N, C, D, H, W), grid (N, OD, OH, OW, 3)
mt_status
mt_front_grid_sampler_3d_backward(const mt_args *a, mt_plan *p)
{
    return grid_backward(a, p, 3);
}

/* linspace(-1, 1, n) scaled by (n - 1) / n unless align_corners (pixel centres, not corners);
 * 0 alone for n <= 1 */
static mt_tensor *
steps(tmp *s, int64_t n, bool align_corners, mt_dtype dt, mt_device dev)
{
    mt_tensor *r = NULL;
    if (s->st) {
        return NULL;
    }
    if (n <= 1) {
        int64_t one = 1;
        return own(s, mt_op_zeros(1, &one, dt, dev, false, &r), &r);
    }
    mt_tensor *l = own(
        s, mt_op_linspace(mt_scalar_float(-1), mt_scalar_float(1), n, dt, dev, false, &r), &r);
    return align_corners ? l : scaled(s, l, (double)(n - 1) / (double)n);
}

// theta (N, 2, 3) or (N, 3, 4), size (N, C, H, W) or (N, C, D, H, W); out (N, H, W, 2) or
// (N, D, H, W, 3): each output pixel's (x, y[, z]) in [-1, 1], moved by theta
mt_status
mt_composite_affine_grid_generator(mt_args *a)
{
    mt_tensor *theta = a->t[0];
    const mt_intlist *size = &a->l[0];
    if (size->n != 4 && size->n != 5) {
        return mt_fail(MT_ERUNTIME,
                       "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
    }
    bool align = a->b[0];
    int dims = size->n - 2; /* 2 or 3 spatial dims, W first in the last axis */
    int64_t n = size->v[0], pixels = 1, full[5], base_shape[4], flat[3], out_shape[5];
    for (int d = 0; d < dims; d++) {
        pixels *= size->v[2 + d];
        base_shape[d] = size->v[2 + d];
        out_shape[1 + d] = size->v[2 + d];
    }
    base_shape[dims] = dims + 1;
    out_shape[0] = n;
    out_shape[dims + 1] = dims;
    mt_dtype dt = theta->dtype;
    mt_device dev = mt_tensor_device(theta);
    tmp s = {0};
    mt_tensor *r = NULL, *cols[4];
    /* column k (x, y, z) varies along spatial dim dims - 1 - k; the last column is ones */
    for (int k = 0; k < dims; k++) {
        int64_t along = dims - 1 - k, view[3] = {1, 1, 1};
        view[along] = size->v[2 + along];
        mt_tensor *l = steps(&s, size->v[2 + along], align, dt, dev);
        mt_tensor *v = failed(&s, l, l) ? NULL : own(&s, mt_op_view(l, dims, view, &r), &r);
        cols[k] = failed(&s, v, v) ? NULL : own(&s, mt_op_expand(v, dims, base_shape, &r), &r);
    }
    cols[dims] = s.st ? NULL : own(&s, mt_op_ones(dims, base_shape, dt, dev, false, &r), &r);
    mt_tensor *base = s.st ? NULL : own(&s, mt_op_stack(dims + 1, cols, -1, &r), &r);
    flat[0] = 1;
    flat[1] = pixels;
    flat[2] = dims + 1;
    full[0] = n;
    full[1] = pixels;
    full[2] = dims + 1;
    mt_tensor *b3 = failed(&s, base, base) ? NULL : own(&s, mt_op_reshape(base, 3, flat, &r), &r);
    mt_tensor *bn = failed(&s, b3, b3) ? NULL : own(&s, mt_op_expand(b3, 3, full, &r), &r);
    mt_tensor *tt = s.st ? NULL : own(&s, mt_op_transpose(theta, 1, 2, &r), &r);
    mt_tensor *g = bin(&s, MT_OP_bmm, bn, tt);
    mt_tensor *o = failed(&s, g, g) ? NULL : own(&s, mt_op_reshape(g, dims + 2, out_shape, &r), &r);
    give(&s, o, &a->out[0]);
    return finish(&s);
}
