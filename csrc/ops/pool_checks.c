/* The front ends of 2-D and 3-D pooling (max_pool2d/3d with and without indices, avg_pool2d/3d,
 * adaptive_avg_pool2d/3d) and of their backward ops, for every device: PyTorch's checks in its
 * order (Pool.h's pool2d_shape_check, pool3d_shape_check, pooling_output_shape), so the first
 * failing one gives its message,
 * and the window geometry (pool_geom) that the kernels of csrc/cpu/pool*.c and cuda/ops_pool.c
 * loop over. */
#include <inttypes.h>
#include <string.h>

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

/* PyTorch's pool2d_shape_check (contiguous layout) for x (C, H, W) or (N, C, H, W). */
static mt_status
shape_check(const mt_tensor *x, const pool_geom *g)
{
    if (g->kh <= 0 || g->kw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kH: %" PRId64
                       " kW: %" PRId64,
                       g->kh, g->kw);
    }
    if (g->sh <= 0 || g->sw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "stride should be greater than zero, but got dH: %" PRId64 " dW: %" PRId64,
                       g->sh, g->sw);
    }
    if (g->dh <= 0 || g->dw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilationH: %" PRId64
                       " dilationW: %" PRId64,
                       g->dh, g->dw);
    }
    const int64_t *s = x->sizes;
    bool valid = x->ndim >= 3 && s[1] != 0 && s[2] != 0;
    if (!((x->ndim == 3 && s[0] != 0 && valid) || (x->ndim == 4 && valid && s[3] != 0))) {
        char buf[256];
        return mt_fail(MT_ERUNTIME,
                       "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                       "input, but got:%s",
                       mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    if (g->kw / 2 < g->pw || g->kh / 2 < g->ph) {
        return mt_fail(MT_ERUNTIME,
                       "pad should be smaller than or equal to half of kernel size, but got padW = "
                       "%" PRId64 ", padH = %" PRId64 ", kW = %" PRId64 ", kH = %" PRId64,
                       g->pw, g->ph, g->kw, g->kh);
    }
    if (g->ow < 1 || g->oh < 1) {
        int64_t c = x->sizes[x->ndim - 3];
        return mt_fail(MT_ERUNTIME,
                       "Given input size: (%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Calculated output size: (%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Output size is too small",
                       c, g->h, g->w, c, g->oh, g->ow);
    }
    return MT_OK;
}

/* Window geometry of max_pool2d and avg_pool2d from their int[] arguments kernel_size, stride
 * and padding (slots 0-2); `op` names the op in the messages. */
static mt_status
window_args(const mt_args *a, const char *op, pool_geom *g)
{
    const mt_intlist *stride = &a->l[1];
    if (!mt_front_pair(&a->l[0], &g->kh, &g->kw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    }
    if (stride->none || stride->n == 0) {
        g->sh = g->kh;
        g->sw = g->kw;
    } else if (!mt_front_pair(stride, &g->sh, &g->sw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: stride must either be omitted, a single int, or a tuple of two "
                       "ints",
                       op);
    }
    if (!mt_front_pair(&a->l[2], &g->ph, &g->pw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: padding must either be a single int, or a tuple of two ints", op);
    }
    return MT_OK;
}

/* Output sizes and the checks that follow them; x has at least 3 dims. */
static mt_status
window_shape(const mt_tensor *x, bool ceil_mode, pool_geom *g)
{
    mt_pool_flat_depth(g);
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    g->planes = mt_tensor_numel(x) / (g->h * g->w > 0 ? g->h * g->w : 1);
    mt_status st;
    if ((st = output_size(g->h, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh)) ||
        (st = output_size(g->w, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow))) {
        return st;
    }
    return shape_check(x, g);
}

/* max_pool2d (and with_indices): kernel_size, stride, padding, dilation, ceil_mode */
static mt_status
max_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){0};
    mt_status st = window_args(a, "max_pool2d", g);
    if (st) {
        return st;
    }
    if (!mt_front_pair(&a->l[3], &g->dh, &g->dw)) {
        return mt_fail(MT_ERUNTIME,
                       "max_pool2d: dilation must be either a single int, or a tuple of two ints");
    }
    if (x->ndim != 3 && x->ndim != 4) {
        return mt_fail(MT_ERUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
    }
    return window_shape(x, a->b[0], g);
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

/* avg_pool2d's window geometry for input x from its arguments (kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override in their slots). */
static mt_status
avg_pool2d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){.dh = 1, .dw = 1, .count_include_pad = a->b[1]};
    mt_status st = window_args(a, "avg_pool2d", g);
    if (st) {
        return st;
    }
    g->has_divisor = !(a->i_none & 1u);
    g->divisor = a->i[0];
    if (g->has_divisor && g->divisor == 0) {
        return mt_fail(MT_ERUNTIME, "divisor must be not zero");
    }
    if ((st = has_dim_minus_3(x))) {
        return st;
    }
    return window_shape(x, a->b[0], g);
}

// self (N, C, H, W) or (C, H, W), output_size (OH, OW)
mt_status
mt_front_adaptive_avg_pool2d(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    pool_geom *g = &p->pool;
    *g = (pool_geom){0};
    char buf[256];
    if (a->l[0].n == 1) {
        g->oh = g->ow = a->l[0].v[0];
    } else if (a->l[0].n == 2) {
        g->oh = a->l[0].v[0];
        g->ow = a->l[0].v[1];
    } else {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool2d: output_size must be 2");
    }
    if (g->oh < 0 || g->ow < 0) {
        return mt_fail(MT_ERUNTIME,
                       "adaptive_avg_pool2d: elements of output_size must be greater than or "
                       "equal to 0 but received {%" PRId64 ", %" PRId64 "}",
                       g->oh, g->ow);
    }
    if (x->ndim != 3 && x->ndim != 4) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %s",
                       mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    for (int d = x->ndim - 2; d < x->ndim; d++) {
        if (x->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                           "non-batch dimensions, but input has sizes %s with dimension %d being "
                           "empty",
                           mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), d);
        }
    }
    mt_pool_flat_depth(g);
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    g->planes = mt_tensor_numel(x) / (g->h * g->w);
    return MT_OK;
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

/* max_pool2d/3d_with_indices_backward over nd spatial dims: indices must be int64 of
 * grad_output's shape. */
static mt_status
max_backward_geom(const mt_args *a, int nd, pool_geom *g)
{
    const mt_tensor *grad = a->t[0], *self = a->t[1], *idx = a->t[2];
    *g = (pool_geom){0};
    mt_status st = backward_geom(grad, self, nd, false, g);
    if (st == MT_OK && (idx->dtype != MT_INT64 || idx->ndim != grad->ndim ||
                        memcmp(idx->sizes, grad->sizes, sizeof(int64_t) * (size_t)grad->ndim))) {
        st = mt_fail(MT_ERUNTIME,
                     "max_pool%dd_with_indices_backward: expected int64 indices of "
                     "grad_output's shape",
                     nd);
    }
    return st;
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W), indices (int64,
// grad_output's shape)
mt_status
mt_front_max_pool2d_with_indices_backward(const mt_args *a, mt_plan *p)
{
    return max_backward_geom(a, 2, &p->pool);
}

// self (N, C, H, W) or (C, H, W); max_pool2d and max_pool2d_with_indices
mt_status
mt_front_max_pool2d(const mt_args *a, mt_plan *p)
{
    return max_pool2d_geom(a, a->t[0], &p->pool);
}

// self (N, C, H, W) or (C, H, W)
mt_status
mt_front_avg_pool2d(const mt_args *a, mt_plan *p)
{
    return avg_pool2d_geom(a, a->t[0], &p->pool);
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W), the forward's
// window arguments
mt_status
mt_front_avg_pool2d_backward(const mt_args *a, mt_plan *p)
{
    mt_status st = avg_pool2d_geom(a, a->t[1], &p->pool);
    return st ? st : backward_geom(a->t[0], a->t[1], 2, true, &p->pool);
}

/* _adaptive_avg_pool2d/3d_backward over nd spatial dims: self (N, C, ...) or (C, ...). */
static mt_status
adaptive_backward_geom(const mt_args *a, int nd, pool_geom *g)
{
    const mt_tensor *self = a->t[1];
    *g = (pool_geom){0};
    if (self->ndim != nd + 1 && self->ndim != nd + 2) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool%dd_backward: expected %dD or %dD input", nd,
                       nd + 1, nd + 2);
    }
    const mt_tensor *grad = a->t[0];
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
    return backward_geom(grad, self, nd, false, g);
}

// grad_output (N, C, OH, OW) or (C, OH, OW), self (N, C, H, W) or (C, H, W)
mt_status
mt_front_adaptive_avg_pool2d_backward(const mt_args *a, mt_plan *p)
{
    return adaptive_backward_geom(a, 2, &p->pool);
}

/* ---- 3-D pooling ---- */

/* An int[1] or int[3] argument's values as (d, h, w), one value standing for all three; false
 * for another count. */
static bool
triple(const mt_intlist *l, int64_t *d, int64_t *h, int64_t *w)
{
    if (l->n != 1 && l->n != 3) {
        return false;
    }
    *d = l->v[0];
    *h = l->v[(l->n - 1) / 2];
    *w = l->v[l->n - 1];
    return true;
}

/* Window geometry of max_pool3d and avg_pool3d from their int[] arguments kernel_size, stride
 * and padding (slots 0-2), with each op's wording (`either` for max_pool3d's). */
static mt_status
window_args3(const mt_args *a, const char *op, const char *either, pool_geom *g)
{
    const mt_intlist *stride = &a->l[1];
    if (!triple(&a->l[0], &g->kd, &g->kh, &g->kw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: kernel_size must %sbe a single int, or a tuple of three ints", op,
                       either);
    }
    if (stride->none || stride->n == 0) {
        g->sd = g->kd;
        g->sh = g->kh;
        g->sw = g->kw;
    } else if (!triple(stride, &g->sd, &g->sh, &g->sw)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: stride must %sbe omitted, a single int, or a tuple of three ints", op,
                       either);
    }
    if (!triple(&a->l[2], &g->pd, &g->ph, &g->pw)) {
        return mt_fail(MT_ERUNTIME, "%s: padding must %sbe a single int, or a tuple of three ints",
                       op, either);
    }
    return MT_OK;
}

/* The input's dims, the output sizes and PyTorch's pool3d_shape_check (fn names the op in its
 * messages; check_input_size for avg_pool3d's); x has 4 or 5 dims. */
static mt_status
window_shape3(const mt_tensor *x, bool ceil_mode, const char *fn, bool check_input_size,
              pool_geom *g)
{
    char buf[256];
    g->nd = 3;
    g->d = x->sizes[x->ndim - 3];
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    const int64_t volume = g->d * g->h * g->w;
    g->planes = volume > 0 ? mt_tensor_numel(x) / volume : 0;
    mt_status st;
    if ((st = output_size(g->d, g->kd, g->pd, g->sd, g->dd, ceil_mode, &g->od)) ||
        (st = output_size(g->h, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh)) ||
        (st = output_size(g->w, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow))) {
        return st;
    }
    if (g->kd <= 0 || g->kh <= 0 || g->kw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kT: %" PRId64
                       " kH: %" PRId64 " kW: %" PRId64,
                       g->kd, g->kh, g->kw);
    }
    if (g->sd <= 0 || g->sh <= 0 || g->sw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "stride should be greater than zero, but got dT: %" PRId64 " dH: %" PRId64
                       " dW: %" PRId64,
                       g->sd, g->sh, g->sw);
    }
    if (g->dd <= 0 || g->dh <= 0 || g->dw <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilationT: %" PRId64
                       " dilationH: %" PRId64 " dilationW: %" PRId64,
                       g->dd, g->dh, g->dw);
    }
    for (int i = x->ndim == 5 ? 1 : 0; i < x->ndim; i++) { /* the batch dim may be empty */
        if (x->sizes[i] <= 0) {
            return mt_fail(MT_ERUNTIME,
                           "%s: Expected input's non-batch dimensions to have positive length, "
                           "but input has a shape of %s and non-batch dimension %" PRId64
                           " has length zero!",
                           fn, mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), x->sizes[i]);
        }
    }
    if (check_input_size && (g->d < g->kd || g->h < g->kh || g->w < g->kw)) {
        return mt_fail(MT_ERUNTIME,
                       "input image (T: %" PRId64 " H: %" PRId64 " W: %" PRId64
                       ") smaller than kernel size (kT: %" PRId64 " kH: %" PRId64 " kW: %" PRId64
                       ")",
                       g->d, g->h, g->w, g->kd, g->kh, g->kw);
    }
    if (g->kd / 2 < g->pd || g->kw / 2 < g->pw || g->kh / 2 < g->ph) {
        return mt_fail(MT_ERUNTIME,
                       "pad should be smaller than or equal to half of kernel size, but got kT: "
                       "%" PRId64 " kW: %" PRId64 " kH: %" PRId64 " padT: %" PRId64
                       " padW: %" PRId64 " padH: %" PRId64,
                       g->kd, g->kw, g->kh, g->pd, g->pw, g->ph);
    }
    if (g->od < 1 || g->ow < 1 || g->oh < 1) {
        int64_t c = x->sizes[x->ndim - 4];
        return mt_fail(MT_ERUNTIME,
                       "Given input size: (%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Calculated output size: (%" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64
                       "). Output size is too small",
                       c, g->d, g->h, g->w, c, g->od, g->oh, g->ow);
    }
    return MT_OK;
}

/* Checks x has 4 or 5 dims, as both 3-D pools do before their sizes. */
static mt_status
four_or_five_dims(const mt_tensor *x)
{
    if (x->ndim != 4 && x->ndim != 5) {
        return mt_fail(MT_ERUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    }
    return MT_OK;
}

/* max_pool3d (and with_indices): kernel_size, stride, padding, dilation, ceil_mode */
static mt_status
max_pool3d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){0};
    mt_status st = window_args3(a, "max_pool3d", "either ", g);
    if (st) {
        return st;
    }
    if (!triple(&a->l[3], &g->dd, &g->dh, &g->dw)) {
        return mt_fail(MT_ERUNTIME, "max_pool3d: dilation must be either a single int, or a tuple "
                                    "of three ints");
    }
    if ((st = four_or_five_dims(x))) {
        return st;
    }
    /* PyTorch names its kernel, per device */
    const char *fn = mt_front_on_cuda(x) ? "max_pool3d_with_indices_out_cuda_template()"
                                         : "max_pool3d_with_indices_out_cpu_template()";
    return window_shape3(x, a->b[0], fn, false, g);
}

/* avg_pool3d: kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override */
static mt_status
avg_pool3d_geom(const mt_args *a, const mt_tensor *x, pool_geom *g)
{
    *g = (pool_geom){.dd = 1, .dh = 1, .dw = 1, .count_include_pad = a->b[1]};
    mt_status st = window_args3(a, "avg_pool3d", "", g);
    if (st || (st = four_or_five_dims(x))) {
        return st;
    }
    g->has_divisor = !(a->i_none & 1u);
    g->divisor = a->i[0];
    if (g->has_divisor && g->divisor == 0) {
        return mt_fail(MT_ERUNTIME, "divisor must be not zero");
    }
    return window_shape3(x, a->b[0], "avg_pool3d()", true, g);
}

// self (N, C, D, H, W) or (C, D, H, W); max_pool3d and max_pool3d_with_indices
mt_status
mt_front_max_pool3d(const mt_args *a, mt_plan *p)
{
    return max_pool3d_geom(a, a->t[0], &p->pool);
}

// self (N, C, D, H, W) or (C, D, H, W)
mt_status
mt_front_avg_pool3d(const mt_args *a, mt_plan *p)
{
    return avg_pool3d_geom(a, a->t[0], &p->pool);
}

// self (N, C, D, H, W) or (C, D, H, W), output_size (OD, OH, OW)
mt_status
mt_front_adaptive_avg_pool3d(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    pool_geom *g = &p->pool;
    *g = (pool_geom){.nd = 3};
    char buf[256];
    if (!triple(&a->l[0], &g->od, &g->oh, &g->ow)) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool3d: output_size must be 3");
    }
    if (g->od < 0 || g->oh < 0 || g->ow < 0) {
        return mt_fail(MT_ERUNTIME,
                       "adaptive_avg_pool3d: elements of output_size must be greater than or "
                       "equal to 0 but received {%" PRId64 ", %" PRId64 ",%" PRId64 "}",
                       g->od, g->oh, g->ow);
    }
    if (x->ndim != 4 && x->ndim != 5) {
        return mt_fail(MT_ERUNTIME, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got %s",
                       mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes));
    }
    for (int d = 1; d < x->ndim; d++) {
        if (x->sizes[d] == 0) {
            return mt_fail(MT_ERUNTIME,
                           "adaptive_avg_pool3d(): Expected input to have non-zero size for "
                           "non-batch dimensions, but input has sizes %s with dimension %d being "
                           "empty",
                           mt_format_sizes(buf, sizeof(buf), x->ndim, x->sizes), d);
        }
    }
    g->d = x->sizes[x->ndim - 3];
    g->h = x->sizes[x->ndim - 2];
    g->w = x->sizes[x->ndim - 1];
    const int64_t volume = g->d * g->h * g->w;
    g->planes = volume > 0 ? mt_tensor_numel(x) / volume : 0;
    return MT_OK;
}

// grad_output (N, C, OD, OH, OW) or (C, OD, OH, OW), self (N, C, D, H, W) or (C, D, H, W),
// indices (int64, grad_output's shape)
mt_status
mt_front_max_pool3d_with_indices_backward(const mt_args *a, mt_plan *p)
{
    return max_backward_geom(a, 3, &p->pool);
}

// grad_output (N, C, OD, OH, OW) or (C, OD, OH, OW), self (N, C, D, H, W) or (C, D, H, W), the
// forward's window arguments
mt_status
mt_front_avg_pool3d_backward(const mt_args *a, mt_plan *p)
{
    mt_status st = avg_pool3d_geom(a, a->t[1], &p->pool);
    return st ? st : backward_geom(a->t[0], a->t[1], 3, true, &p->pool);
}

// grad_output (N, C, OD, OH, OW) or (C, OD, OH, OW), self (N, C, D, H, W) or (C, D, H, W)
mt_status
mt_front_adaptive_avg_pool3d_backward(const mt_args *a, mt_plan *p)
{
    return adaptive_backward_geom(a, 3, &p->pool);
}
