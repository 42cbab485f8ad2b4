/* The front ends of 2-D and 3-D pooling (max_pool2d/3d with and without indices, avg_pool2d/3d,
 * adaptive_avg_pool2d/3d) and of their backward ops, for every device: PyTorch's checks in its
 * order (Pool.h's pool2d_shape_check, pool3d_shape_check, pooling_output_shape), so the first
 * failing one gives its message, and the window geometry (pool_geom) that the kernels of
 * csrc/cpu/pool*.c and cuda/ops_pool.c loop over. One front end per family serves both ranks,
 * over nd spatial dims (mt_pool_nd of the op); a 2-D op is a 3-D one of depth 1. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/fails.h"
#include "ops/front.h"

/* a / b rounded toward negative infinity (PyTorch's div_rtn); b != 0. */
static int64_t
div_rtn(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* PyTorch's pooling_output_shape: the window count along one dim, after its checks. */
static mt_status
output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
            int64_t *out)
{
    if (stride == 0) {
        return mt_fail(MT_ERUNTIME, "stride should not be zero");
    }
    if (pad < 0) {
        return mt_fail(MT_ERUNTIME, "pad must be non-negative, but got pad: %" PRId64, pad);
    }
    if (pad > ((k - 1) * dil + 1) / 2) {
        return mt_fail(MT_ERUNTIME,
                       "pad should be at most half of effective kernel size, but got pad=%" PRId64
                       ", kernel_size=%" PRId64 " and dilation=%" PRId64,
                       pad, k, dil);
    }
    int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t n = div_rtn(span, stride) + 1;
    /* In ceil mode the last window must start inside the image or its left padding. */
    if (ceil_mode && (n - 1) * stride >= in + pad) {
        n--;
    }
    *out = n;
    return MT_OK;
}

int
mt_pool_nd(mt_op op)
{
    switch (op) {
    case MT_OP_max_pool3d:
    case MT_OP_max_pool3d_with_indices:
    case MT_OP_avg_pool3d:
    case MT_OP_adaptive_avg_pool3d:
    case MT_OP_max_pool3d_with_indices_backward:
    case MT_OP_avg_pool3d_backward:
    case MT_OP__adaptive_avg_pool3d_backward:
    case MT_OP_adaptive_max_pool3d:
    case MT_OP_adaptive_max_pool3d_backward:
        return 3;
    default:
        return 2;
    }
}

/* How PyTorch's messages count nd values. */
static const char *const count_words[4] = {"", "one", "two", "three"};

/* An int[1] or int[nd] argument's values as (d, h, w), d only in 3-D, one value standing for
 * all; false for another count. */
static bool
spread(const mt_intlist *l, int nd, int64_t *d, int64_t *h, int64_t *w)
{
    if (l->n != 1 && l->n != nd) {
        return false;
    }
    if (nd == 3) {
        *d = l->v[0];
    }
    *h = l->v[(l->n - 1) / 2];
    *w = l->v[l->n - 1];
    return true;
}

/* A window argument as PyTorch's shape checks show it: "kT: 1 kH: 2 kW: 3" for name "k", the T
 * part in 3-D only. */
static const char *
named(char *buf, size_t size, int nd, const char *name, int64_t d, int64_t h, int64_t w)
{
    if (nd == 3) {
        snprintf(buf, size, "%sT: %" PRId64 " %sH: %" PRId64 " %sW: %" PRId64, name, d, name, h,
                 name, w);
    } else {
        snprintf(buf, size, "%sH: %" PRId64 " %sW: %" PRId64, name, h, name, w);
    }
    return buf;
}

/* "CxHxW", or "CxDxHxW" in 3-D: a plane count and its spatial sizes. */
static const char *
crossed(char *buf, size_t size, int nd, int64_t c, int64_t d, int64_t h, int64_t w)
{
    if (nd == 3) {
        snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64, c, d, h, w);
    } else {
        snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64, c, h, w);
    }
    return buf;
}

/* PyTorch's pool2d_shape_check and pool3d_shape_check (contiguous layout) for x with nd + 1 or
 * nd + 2 dims: fn names the 3-D op in its messages, check_input_size for avg_pool3d's. */
static mt_status
shape_check(const mt_tensor *x, int nd, const char *fn, bool check_input_size, const pool_geom *g)
{
    char b1[256], b2[256];
    if (g->kd <= 0 || g->kh <= 0 || g->kw <= 0) {
        return mt_fail(MT_ERUNTIME, "kernel size should be greater than zero, but got %s",
                       named(b1, sizeof(b1), nd, "k", g->kd, g->kh, g->kw));
    }
    if (g->sd <= 0 || g->sh <= 0 || g->sw <= 0) {
        return mt_fail(MT_ERUNTIME, "stride should be greater than zero, but got %s",
                       named(b1, sizeof(b1), nd, "d", g->sd, g->sh, g->sw));
    }
    if (g->dd <= 0 || g->dh <= 0 || g->dw <= 0) {
        return mt_fail(MT_ERUNTIME, "dilation should be greater than zero, but got %s",
                       named(b1, sizeof(b1), nd, "dilation", g->dd, g->dh, g->dw));
    }
    /* the non-batch dims must not be empty; the batch dim may */
    int empty = x->ndim == nd + 1 || x->ndim == nd + 2 ? -1 : 0;
    for (int i = x->ndim == nd + 2 ? 1 : 0; empty < 0 && i < x->ndim; i++) {
        empty = x->sizes[i] <= 0 ? i : -1;
    }
    if (empty >= 0 && nd == 2) {
        return mt_fail(MT_ERUNTIME,
                       "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                       "input, but got:%s",
                       mt_format_sizes(b1, sizeof(b1), x->ndim, x->sizes));
    }
    if (empty >= 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected input's non-batch dimensions to have positive length, "
                       "but input has a shape of %s and non-batch dimension %" PRId64
                       " has length zero!",
                       fn, mt_format_sizes(b1, sizeof(b1), x->ndim, x->sizes), x->sizes[empty]);
    }
    if (check_input_size && (g->d < g->kd || g->h < g->kh || g->w < g->kw)) {
        return mt_fail(MT_ERUNTIME,
                       "input image (T: %" PRId64 " H: %" PRId64 " W: %" PRId64
                       ") smaller than kernel size (kT: %" PRId64 " kH: %" PRId64 " kW: %" PRId64
                       ")",
                       g->d, g->h, g->w, g->kd, g->kh, g->kw);
    }
    if (g->kd / 2 < g->pd || g->kw / 2 < g->pw || g->kh / 2 < g->ph) {
        return nd == 3 ? mt_fail(MT_ERUNTIME,
                                 "pad should be smaller than or equal to half of kernel size, but "
                                 "got kT: %" PRId64 " kW: %" PRId64 " kH: %" PRId64
                                 " padT: %" PRId64 " padW: %" PRId64 " padH: %" PRId64,
                                 g->kd, g->kw, g->kh, g->pd, g->pw, g->ph)
                       : mt_fail(MT_ERUNTIME,
                                 "pad should be smaller than or equal to half of kernel size, but "
                                 "got padW = %" PRId64 ", padH = %" PRId64 ", kW = %" PRId64
                                 ", kH = %" PRId64,
                                 g->pw, g->ph, g->kw, g->kh);
    }
    if (g->od < 1 || g->ow < 1 || g->oh < 1) {
        int64_t c = x->sizes[x->ndim - nd - 1];
        return mt_fail(MT_ERUNTIME,
                       "Given input size: (%s). Calculated output size: (%s). Output size is too "
                       "small",
                       crossed(b1, sizeof(b1), nd, c, g->d, g->h, g->w),
                       crossed(b2, sizeof(b2), nd, c, g->od, g->oh, g->ow));
    }
    return MT_OK;
}

/* The window arguments kernel_size, stride and padding (slots 0-2) over nd dims, with `op`'s
 * wording (`either` for all but avg_pool3d's). */
static mt_status
window_args(const mt_args *a, int nd, const char *op, const char *either, pool_geom *g)
{
    const mt_intlist *stride = &a->l[1];
    const char *count = count_words[nd];
    if (!spread(&a->l[0], nd, &g->kd, &g->kh, &g->kw)) {
        return mt_fail(MT_ERUNTIME, "%s: kernel_size must %sbe a single int, or a tuple of %s ints",
                       op, either, count);
    }
    if (stride->none || stride->n == 0) {
        g->sd = g->kd;
        g->sh = g->kh;
        g->sw = g->kw;
    } else if (!spread(stride, nd, &g->sd, &g->sh, &g->sw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: stride must %sbe omitted, a single int, or a tuple of %s ints", op,
                       either, count);
    }
    if (!spread(&a->l[2], nd, &g->pd, &g->ph, &g->pw)) {
        return mt_fail(MT_ERUNTIME, "%s: padding must %sbe a single int, or a tuple of %s ints", op,
                       either, count);
    }
    return MT_OK;
}

/* g's input sizes from x's last nd dims and its planes (a 2-D geometry of depth 1). */
static void
input_sizes(const mt_tensor *x, int nd, pool_geom *g)
{
    if (nd == 2) {
        mt_pool_flat_depth(g);
    } else {
        g->nd = 3;
        g->d = x->sizes[x->ndim - 3];
    }
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    const int64_t volume = g->d * g->h * g->w;
    g->planes = volume > 0 ? mt_tensor_numel(x) / volume : 0;
}

/* The input's spatial sizes, the output sizes and the shape checks that follow them (as
 * shape_check's arguments); x has at least nd + 1 dims. */
static mt_status
window_shape(const mt_tensor *x, bool ceil_mode, int nd, const char *fn, bool check_input_size,
             pool_geom *g)
{
    input_sizes(x, nd, g);
    mt_status st;
    if ((nd == 3 && (st = output_size(g->d, g->kd, g->pd, g->sd, g->dd, ceil_mode, &g->od))) ||
        (st = output_size(g->h, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh)) ||
        (st = output_size(g->w, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow))) {
        return st;
    }
    return shape_check(x, nd, fn, check_input_size, g);
}

/* Checks x has nd + 1 or nd + 2 dims, as the max pools (and avg_pool3d) do before their sizes. */
static mt_status
batch_dims(const mt_tensor *x, int nd)
{
    if (x->ndim != nd + 1 && x->ndim != nd + 2) {
        return mt_fail(MT_ERUNTIME, "non-empty %dD or %dD (batch mode) tensor expected for input",
                       nd + 1, nd + 2);
    }
    return MT_OK;
}

/* Checks the input has dim -3, as PyTorch's input.size(-3) does. */
static mt_status
has_dim_minus_3(const mt_tensor *x)
{
    if (x->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as -3 but tensor has no dimensions");
    }
    int d;
    return mt_wrap_dim(-3, x->ndim, &d);
}

/* max_pool2d/3d (and with_indices) over nd dims: kernel_size, stride, padding, dilation,
 * ceil_mode */
static mt_status
max_pool_geom(const mt_args *a, const mt_tensor *x, int nd, pool_geom *g)
{
    *g = (pool_geom){0};
    const char *op = nd == 3 ? "max_pool3d" : "max_pool2d";
    mt_status st = window_args(a, nd, op, "either ", g);
    if (st) {
        return st;
    }
    if (!spread(&a->l[3], nd, &g->dd, &g->dh, &g->dw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: dilation must be either a single int, or a tuple of %s ints", op,
                       count_words[nd]);
    }
    if ((st = batch_dims(x, nd))) {
        return st;
    }
    /* PyTorch names its 3-D kernel, per device */
    const char *fn = mt_front_on_cuda(x) ? "max_pool3d_with_indices_out_cuda_template()"
                                         : "max_pool3d_with_indices_out_cpu_template()";
    return window_shape(x, a->b[0], nd, fn, false, g);
}

/* avg_pool2d/3d over nd dims for input x: kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override in their slots */
static mt_status
avg_pool_geom(const mt_args *a, const mt_tensor *x, int nd, pool_geom *g)
{
    *g = (pool_geom){.dd = 1, .dh = 1, .dw = 1, .count_include_pad = a->b[1]};
    mt_status st = window_args(a, nd, nd == 3 ? "avg_pool3d" : "avg_pool2d",
                               nd == 3 ? "" : "either ", g);
    if (st || (nd == 3 && (st = batch_dims(x, nd)))) {
        return st;
    }
    g->has_divisor = !(a->i_none & 1u);
    g->divisor = a->i[0];
    if (g->has_divisor && g->divisor == 0) {
        return mt_fail(MT_ERUNTIME, "divisor must be not zero");
    }
    if (nd == 2 && (st = has_dim_minus_3(x))) {
        return st;
    }
    return window_shape(x, a->b[0], nd, "avg_pool3d()", nd == 3, g);
}

/* The memory format of the results of a pooling over the spatial dims of the op's input x:
 * the one x suggests when x is batched (channels-last stays channels-last, as PyTorch's
 * poolings keep it; of its 3-d ones only max_pool3d's kernels keep channels_last_3d), else
 * row-major. */
static mt_memory_format
pool_format(const mt_plan *p, const mt_tensor *x)
{
    const int nd = mt_pool_nd(p->op);
    const bool keeps = nd == 2 || p->op == MT_OP_max_pool3d ||
                       p->op == MT_OP_max_pool3d_with_indices ||
                       p->op == MT_OP_max_pool3d_with_indices_backward;
    return keeps && x->ndim == nd + 2 ? mt_suggest_memory_format(x) : MT_CONTIGUOUS_FORMAT;
}

/* The forward ops' results once the checks passed (st MT_OK): x's shape with the plan's output
 * sizes last, in x's dtype and memory format; and the int64 indices of that shape and format
 * for the ops that return them. */
static mt_status
pool_outputs(mt_status st, mt_plan *p, const mt_tensor *x)
{
    int64_t sizes[MT_MAX_DIMS];
    if (st) {
        return st;
    }
    const mt_memory_format fmt = pool_format(p, x);
    mt_pool_out_sizes(&p->pool, x->ndim, x->sizes, sizes);
    st = mt_front_output_format(p, x->dtype, x->ndim, sizes, fmt);
    if (st == MT_OK && mt_op_nout[p->op] == 2) {
        st = mt_front_output_format(p, MT_INT64, x->ndim, sizes, fmt);
    }
    return st;
}

/* The backward ops' result once the checks passed: grad_output's dtype, self's shape and
 * memory format. */
static mt_status
pool_backward_output(mt_status st, mt_plan *p, const mt_tensor *grad, const mt_tensor *self)
{
    return st ? st
              : mt_front_output_format(p, grad->dtype, self->ndim, self->sizes,
                                       pool_format(p, self));
}

// self (N, C, [D,] H, W) or (C, [D,] H, W); max_pool2d/3d and their with_indices forms
mt_status
mt_front_max_pool(const mt_args *a, mt_plan *p)
{
    return pool_outputs(max_pool_geom(a, a->t[0], mt_pool_nd(p->op), &p->pool), p, a->t[0]);
}

// self (N, C, [D,] H, W) or (C, [D,] H, W); avg_pool2d/3d
mt_status
mt_front_avg_pool(const mt_args *a, mt_plan *p)
{
    return pool_outputs(avg_pool_geom(a, a->t[0], mt_pool_nd(p->op), &p->pool), p, a->t[0]);
}

// self (N, C, [D,] H, W) or (C, [D,] H, W), output_size ([OD,] OH, OW); adaptive_avg_pool2d/3d
mt_status
mt_front_adaptive_avg_pool(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    const int nd = mt_pool_nd(p->op);
    const char *op = nd == 3 ? "adaptive_avg_pool3d" : "adaptive_avg_pool2d";
    pool_geom *g = &p->pool;
    *g = (pool_geom){0};
    char buf[256];
    if (!spread(&a->l[0], nd, &g->od, &g->oh, &g->ow)) {
        return mt_fail(MT_ERUNTIME, "%s: output_size must be %d", op, nd);
    }
    if (g->od < 0 || g->oh < 0 || g->ow < 0) {
        if (nd == 3) { /* PyTorch's spacing */
            snprintf(buf, sizeof(buf), "{%" PRId64 ", %" PRId64 ",%" PRId64 "}", g->od, g->oh,
                     g->ow);
        } else {
            snprintf(buf, sizeof(buf), "{%" PRId64 ", %" PRId64 "}", g->oh, g->ow);
        }
        return mt_fail(MT_ERUNTIME,
                       "%s: elements of output_size must be greater than or equal to 0 but "
                       "received %s",
                       op, buf);
    }
    if (x->ndim != nd + 1 && x->ndim != nd + 2) {
        return mt_fail(MT_ERUNTIME, "%s(): Expected %dD or %dD tensor, but got %s", op, nd + 1,
                       nd + 2, mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    /* PyTorch checks the spatial dims in 2-D, every dim but the first in 3-D */
    for (int d = nd == 3 ? 1 : x->ndim - 2; d < x->ndim; d++) {
        if (x->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "%s(): Expected input to have non-zero size for non-batch dimensions, "
                           "but input has sizes %s with dimension %d being empty",
                           op, mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), d);
        }
    }
    input_sizes(x, nd, g);
    return pool_outputs(MT_OK, p, x);
}

// self (N, C, [D,] H, W) or (C, [D,] H, W), output_size ([OD,] OH, OW), its Nones already the
// input's sizes (F.adaptive_max_pool2d/3d); adaptive_max_pool2d/3d, with the indices
mt_status
mt_front_adaptive_max_pool(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    const int nd = mt_pool_nd(p->op);
    const char *op = nd == 3 ? "adaptive_max_pool3d" : "adaptive_max_pool2d";
    const mt_intlist *size = &a->l[0];
    pool_geom *g = &p->pool;
    *g = (pool_geom){0};
    char buf[256];
    if (x->ndim != nd + 1 && x->ndim != nd + 2) {
        return mt_fail(MT_ERUNTIME, "%s(): Expected %dD or %dD tensor, but got: %s", op, nd + 1,
                       nd + 2, mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    if (!spread(size, nd, &g->od, &g->oh, &g->ow)) {
        return mt_fail(MT_ERUNTIME, "%s(): internal error: output_size.size() must be %d", op, nd);
    }
    for (int d = 0; d < size->n; d++) {
        if (size->v[d] < 0) {
            int64_t shape[MT_MAX_DIMS];
            mt_pool_out_sizes(&(pool_geom){.nd = nd, .od = g->od, .oh = g->oh, .ow = g->ow},
                              x->ndim, x->sizes, shape);
            return mt_fail(MT_ERUNTIME,
                           "Trying to create tensor with negative dimension %" PRId64 ": %s",
                           size->v[d], mt_format_sizes(buf, sizeof(buf), x->ndim, shape));
        }
    }
    for (int d = 1; d < x->ndim; d++) {
        if (x->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "%s(): Expected input to have non-zero size for non-batch dimensions, "
                           "but input has sizes %s with dimension %d being empty",
                           op, mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), d);
        }
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail_not_implemented(nd == 3 ? "adaptive_max_pool3d_cpu" : "adaptive_max_pool2d",
                                       "", x->dtype);
    }
    input_sizes(x, nd, g);
    /* the largest window, for the kernels' estimate of the work */
    g->kd = nd == 3 && g->od ? g->d / g->od + 1 : 1;
    g->kh = g->oh ? g->h / g->oh + 1 : 0;
    g->kw = g->ow ? g->w / g->ow + 1 : 0;
    return pool_outputs(MT_OK, p, x);
}

/* The pooling backward ops' check over nd spatial dims: grad (..., [OD,] OH, OW) must have
 * self's (..., [D,] H, W) leading dims, and g's output sizes where want_sizes, and a float
 * dtype. Fills g's planes, input and output sizes (the depths 1 in 2-D). */
static mt_status
backward_geom(const mt_tensor *grad, const mt_tensor *self, int nd, bool want_sizes, pool_geom *g)
{
    char b1[256], b2[256];
    const int64_t want[3] = {g->od, g->oh, g->ow};
    bool ok = self->ndim >= nd && grad->ndim == self->ndim &&
              memcmp(grad->sizes, self->sizes, sizeof(int64_t) * (size_t)(self->ndim - nd)) == 0;
    for (int i = 0; ok && want_sizes && i < nd; i++) {
        ok = grad->sizes[grad->ndim - nd + i] == want[3 - nd + i];
    }
    if (!ok) {
        return mt_fail(MT_ERUNTIME,
                       "pooling backward: grad_output of size %s does not fit an "
                       "input of size %s",
                       mt_format_sizes(b1, sizeof(b1), grad->ndim, grad->sizes),
                       mt_format_sizes(b2, sizeof(b2), self->ndim, self->sizes));
    }
    if (!mt_dtype_is_float(grad->dtype)) {
        return mt_fail(MT_ENOTIMPL, "pooling backward not implemented for '%s'",
                       mt_dtype_scalar_name(grad->dtype));
    }
    g->nd = nd;
    g->d = nd == 3 ? self->sizes[self->ndim - 3] : 1;
    g->od = nd == 3 ? grad->sizes[grad->ndim - 3] : 1;
    g->h = self->sizes[self->ndim - 2];
    g->w = self->sizes[self->ndim - 1];
    g->oh = grad->sizes[grad->ndim - 2];
    g->ow = grad->sizes[grad->ndim - 1];
    const int64_t volume = g->d * g->h * g->w;
    g->planes = volume > 0 ? mt_tensor_numel(self) / volume : 0;
    return MT_OK;
}

// max_pool2d/3d_with_indices_backward and adaptive_max_pool2d/3d_backward: grad_output (N, C,
// [OD,] OH, OW) or (C, [OD,] OH, OW),
// self (N, C, [D,] H, W) or (C, [D,] H, W), indices (int64, grad_output's shape)
mt_status
mt_front_max_pool_backward(const mt_args *a, mt_plan *p)
{
    const mt_tensor *grad = a->t[0], *self = a->t[1], *idx = a->t[2];
    const int nd = mt_pool_nd(p->op);
    const bool adaptive = p->op == MT_OP_adaptive_max_pool2d_backward ||
                          p->op == MT_OP_adaptive_max_pool3d_backward;
    pool_geom *g = &p->pool;
    *g = (pool_geom){0};
    mt_status st = backward_geom(grad, self, nd, false, g);
    if (st == MT_OK && (idx->dtype != MT_INT64 || idx->ndim != grad->ndim ||
                        memcmp(idx->sizes, grad->sizes, sizeof(int64_t) * (size_t)grad->ndim))) {
        st = mt_fail(MT_ERUNTIME,
                     "%s_pool%dd%s_backward: expected int64 indices of "
                     "grad_output's shape",
                     adaptive ? "adaptive_max" : "max", nd, adaptive ? "" : "_with_indices");
    }
    return pool_backward_output(st, p, grad, self);
}

// avg_pool2d/3d_backward: grad_output and self as max_pool_backward's, the forward's window
// arguments
mt_status
mt_front_avg_pool_backward(const mt_args *a, mt_plan *p)
{
    const int nd = mt_pool_nd(p->op);
    mt_status st = avg_pool_geom(a, a->t[1], nd, &p->pool);
    if (st == MT_OK) {
        st = backward_geom(a->t[0], a->t[1], nd, true, &p->pool);
    }
    return pool_backward_output(st, p, a->t[0], a->t[1]);
}

// _adaptive_avg_pool2d/3d_backward: grad_output and self as max_pool_backward's
mt_status
mt_front_adaptive_avg_pool_backward(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[1], *grad = a->t[0];
    const int nd = mt_pool_nd(p->op);
    p->pool = (pool_geom){0};
    if (self->ndim != nd + 1 && self->ndim != nd + 2) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool%dd_backward: expected %dD or %dD input", nd,
                       nd + 1, nd + 2);
    }
    for (int d = 1; d < grad->ndim; d++) {
        if (grad->sizes[d] == 0) {
            char buf[256];
            return mt_fail(MT_ERUNTIME,
                           "adaptive_avg_pool%dd_backward(): Expected grad_output to have non-zero "
                           "size for non-batch dimensions, but grad_output has sizes %s with "
                           "dimension %d being empty",
                           nd, mt_format_sizes(buf, sizeof(buf), grad->ndim, grad->sizes), d);
        }
    }
    return pool_backward_output(backward_geom(grad, self, nd, false, &p->pool), p, grad, self);
}
