/* conv1d, conv_transpose1d and conv_transpose2d as compositions of the 2-D convolution ops, for
 * every device: a 1-D convolution is the 2-D one over (N, C, 1, L) (as PyTorch's CPU conv1d
 * views it), and a transposed convolution is conv2d's input gradient,
 * convolution_backward_input, whose gradient rows (autograd/formulas_nn.c) make it
 * differentiable, twice; the gradients of these and of conv3d (mt_conv_nd_backward). The 3-D
 * convolutions are in composite_conv3d.c. The checks, shared with it (ops/conv_nd.h), are
 * PyTorch's (Convolution.cpp's check_shape_forward and the transposed kernels' output-size
 * checks), in its order, with the sizes as given. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/fails.h"
#include "ops/front.h"
#include "ops/conv_nd.h"
#include "ops/nn.h"
#include "ops/ops.h"

/* An int[] argument of an op over dims spatial dims as wdims values (see mt_conv_expand_param). */
static mt_status
expand(const mt_intlist *l, const char *name, int dims, int wdims, int64_t *out)
{
    int n;
    return mt_conv_expand_param(l, name, dims, wdims, out, &n);
}

static mt_status
check_params(const mt_args *a, int dims, bool transposed, int wdims, mt_conv_params *c)
{
    const mt_intlist *dil = &a->l[transposed ? 3 : 2];
    mt_status st;
    c->dims = dims;
    c->groups = a->i[0];
    if (c->groups <= 0) {
        return mt_fail(MT_ERUNTIME, "non-positive groups is not supported");
    }
    if ((st = expand(&a->l[0], "stride", dims, wdims, c->stride)) ||
        (st = expand(&a->l[1], "padding", dims, wdims, c->pad)) ||
        (st = expand(dil, "dilation", dims, wdims, c->dil)) ||
        (transposed && (st = expand(&a->l[2], "output_padding", dims, wdims, c->opad)))) {
        return st;
    }
    for (int k = 0; k < wdims; k++) {
        if (c->pad[k] < 0) {
            return mt_fail(MT_ERUNTIME, "negative padding is not supported");
        }
    }
    for (int k = 0; transposed && k < wdims; k++) {
        if (c->opad[k] < 0) {
            return mt_fail(MT_ERUNTIME, "negative output_padding is not supported");
        }
    }
    for (int k = 0; k < wdims; k++) {
        if (c->stride[k] <= 0) {
            return mt_fail(MT_ERUNTIME, "non-positive stride is not supported");
        }
    }
    for (int k = 0; k < wdims; k++) {
        if (c->dil[k] < 0) { /* a zero is the kernels' to refuse (check_backend) */
            return mt_fail(MT_ERUNTIME, "dilation should be greater than zero");
        }
    }
    return MT_OK;
}

/* v's n values as "a x b x c" in buf */
static const char *
join_x(char *buf, size_t size, int n, const int64_t *v)
{
    size_t used = 0;
    buf[0] = 0;
    for (int d = 0; d < n && used < size; d++) {
        int w = snprintf(buf + used, size - used, d ? " x %" PRId64 : "%" PRId64, v[d]);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* A transposed convolution's output_padding, below its stride or its dilation in each dim;
 * PyTorch's message names two dims (height, width; a 1-D one as a 1 x L plane) or three. */
static mt_status
check_output_padding(const mt_conv_params *c, int dims)
{
    static const char *const names[3] = {"depth", "height", "width"};
    const int shown = dims == 1 ? 2 : dims, skip = shown - dims;
    bool ok = true;
    for (int d = 0; d < dims; d++) {
        ok = ok && (c->opad[d] < c->stride[d] || c->opad[d] < c->dil[d]);
    }
    if (ok) {
        return MT_OK;
    }
    char msg[512];
    size_t used = 0;
    const char *what[3] = {"output_padding", "stride", "dilation"};
    const int64_t *vals[3] = {c->opad, c->stride, c->dil};
    const int64_t dflt[3] = {0, 1, 1}; /* the missing dim of a 1-D convolution */
    msg[0] = 0;
    for (int v = 0; v < 3; v++) {
        for (int d = 0; d < shown && used < sizeof(msg); d++) {
            int64_t value = d < skip ? dflt[v] : vals[v][d - skip];
            int w = snprintf(msg + used, sizeof(msg) - used, "%s%s_%s: %" PRId64, v || d ? " " : "",
                             what[v], names[3 - shown + d], value);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    return mt_fail(MT_ERUNTIME,
                   "output padding must be smaller than either stride or dilation, but got %s",
                   msg);
}

/* The checks PyTorch's transposed CPU kernels make (slow_conv_transpose2d/3d's shape checks, a
 * 1-D convolution as a 1 x L plane), in their order and words: kernel sizes and dilation above
 * zero, output_padding, a non-empty weight. */
static mt_status
check_transposed_kernel(const mt_tensor *w, const mt_conv_params *c, int dims)
{
    char b[256];
    int64_t ws[5] = {w->sizes[0], w->sizes[1], 1, 1, 1}, dil[3] = {1, 1, 1};
    const int shown = dims == 1 ? 2 : dims;
    memcpy(ws + 2 + shown - dims, w->sizes + 2, sizeof(int64_t) * (size_t)dims);
    memcpy(dil + shown - dims, c->dil, sizeof(int64_t) * (size_t)dims);
    bool k0 = false, d0 = false;
    for (int d = 0; d < shown; d++) {
        k0 = k0 || ws[2 + d] <= 0;
        d0 = d0 || dil[d] <= 0;
    }
    if (k0 && dims < 3) {
        return mt_fail(MT_ERUNTIME,
                       "kernel size should be greater than zero, but got kernel_height: %" PRId64
                       " kernel_width: %" PRId64,
                       ws[2], ws[3]);
    }
    if (d0 && dims < 3) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilation_height: %" PRId64
                       ", dilation_width: %" PRId64,
                       dil[0], dil[1]);
    }
    if (d0) {
        return mt_fail(MT_ERUNTIME,
                       "dilation should be greater than zero, but got dilation_depth: %" PRId64
                       ", dilation_height: %" PRId64 ", dilation_width: %" PRId64,
                       dil[0], dil[1], dil[2]);
    }
    mt_status st = check_output_padding(c, dims);
    if (st == MT_OK && mt_tensor_numel(w) == 0) {
        mt_format_sizes(b, sizeof(b), shown + 2, ws);
        return dims < 3 ? mt_fail(MT_ERUNTIME,
                                  "non-empty 2D or 4D weight tensor expected, but got: %s", b)
                        : mt_fail(MT_ERUNTIME,
                                  "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                                  "kernel_height x kernel_width) tensor expected for weight, but "
                                  "got: %s",
                                  b);
    }
    return st;
}

/* The checks of input x (dims + 1 or dims + 2 dims), weight and bias, and the output's spatial
 * sizes in out (transposed only: a plain convolution's come from conv2d's front end). */
mt_status
mt_conv_check(const mt_args *a, const char *name, int dims, bool transposed, mt_conv_params *c,
              int64_t *out)
{
    const mt_tensor *x = a->t[0], *w = a->t[1], *bias = a->t[2];
    char b1[256], b2[256], b3[256];
    if (x->ndim != dims + 1 && x->ndim != dims + 2) {
        return mt_fail(MT_ERUNTIME,
                       "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of "
                       "size: %s",
                       dims + 1, dims + 2, name,
                       mt_format_sizes(b1, sizeof(b1), x->ndim, x->sizes));
    }
    if (w->ndim < 3) {
        return mt_fail(MT_ERUNTIME, "weight should have at least three dimensions");
    }
    mt_status st = check_params(a, dims, transposed, w->ndim - 2, c);
    if (st) {
        return st;
    }
    int64_t xs[5] = {1, 1, 1, 1, 1};
    memcpy(xs + dims + 2 - x->ndim, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    mt_format_sizes(b1, sizeof(b1), dims + 2, xs);
    mt_format_sizes(b2, sizeof(b2), w->ndim, w->sizes);
    if ((st = mt_conv_check_weight(w, dims + 2, b1, c->groups))) {
        return st;
    }
    int64_t in_c = transposed ? w->sizes[0] : w->sizes[1] * c->groups;
    int64_t out_c = transposed ? w->sizes[1] * c->groups : w->sizes[0];
    if (xs[1] != in_c && transposed) {
        return mt_fail(MT_ERUNTIME,
                       "Given transposed=1, weight of size %s, expected input%s to have %" PRId64
                       " channels, but got %" PRId64 " channels instead",
                       b2, b1, in_c, xs[1]);
    }
    if (xs[1] != in_c) {
        return mt_fail(MT_ERUNTIME,
                       "Given groups=%" PRId64 ", weight of size %s, expected input%s to have "
                       "%" PRId64 " channels, but got %" PRId64 " channels instead",
                       c->groups, b2, b1, in_c, xs[1]);
    }
    if (bias && (bias->ndim != 1 || bias->sizes[0] != out_c)) {
        return mt_fail(MT_ERUNTIME,
                       "Given %sweight of size %s, expected bias to be 1-dimensional with %" PRId64
                       " elements, but got bias of size %s instead",
                       transposed ? "transposed=1, " : "", b2, out_c,
                       mt_format_sizes(b3, sizeof(b3), bias->ndim, bias->sizes));
    }
    const int64_t *k = w->sizes + 2, *in = xs + 2;
    if (!transposed) {
        bool too_big = false;
        int64_t padded[3], span[3];
        for (int d = 0; d < dims; d++) {
            padded[d] = in[d] + 2 * c->pad[d];
            span[d] = c->dil[d] * (k[d] - 1) + 1;
            too_big = too_big || padded[d] < span[d];
        }
        if (too_big) {
            /* the sizes as PyTorch prints them, "(a x b x c)" */
            return mt_fail(MT_ERUNTIME,
                           "Calculated padded input size per channel: (%s). Kernel size: (%s). "
                           "Kernel size can't be greater than actual input size",
                           join_x(b1, sizeof(b1), dims, padded),
                           join_x(b3, sizeof(b3), dims, span));
        }
    }
    if ((st = mt_conv_check_empty(x, dims)) || !transposed) {
        return st; /* a plain convolution's kernel checks: conv2d's front end's, conv3d's */
    }
    if (w->dtype != x->dtype || (bias && bias->dtype != x->dtype)) {
        const mt_tensor *other = w->dtype != x->dtype ? w : bias;
        return mt_fail(MT_ERUNTIME,
                       "Input type (torch.%sTensor) and %s type (torch.%sTensor) should be the "
                       "same "
                       "or input should be a MKLDNN tensor and weight is a dense tensor",
                       mt_dtype_scalar_name(x->dtype), other == w ? "weight" : "bias",
                       mt_dtype_scalar_name(other->dtype));
    }
    if ((st = check_transposed_kernel(w, c, dims))) {
        return st;
    }
    bool small = false;
    for (int d = 0; d < dims; d++) {
        out[d] = (in[d] - 1) * c->stride[d] - 2 * c->pad[d] + c->dil[d] * (k[d] - 1) + c->opad[d] +
                 1;
        small = small || out[d] < 1;
    }
    if (small) {
        /* PyTorch's sizes "(a x b)", a 1-D one as "(1 x L)" */
        int64_t in2[3] = {1, 1, 1}, out2[3] = {1, 1, 1};
        const int shown = dims == 1 ? 2 : dims;
        memcpy(in2 + shown - dims, in, sizeof(int64_t) * (size_t)dims);
        memcpy(out2 + shown - dims, out, sizeof(int64_t) * (size_t)dims);
        return mt_fail(MT_ERUNTIME,
                       "Given input size per channel: (%s). Calculated output size per channel: "
                       "(%s). Output size is too small",
                       join_x(b1, sizeof(b1), shown, in2), join_x(b3, sizeof(b3), shown, out2));
    }
    return MT_OK;
}

/* x2 (a 2-D batch or plane) as the grad_output of conv2d's input gradient of spatial size
 * out_hw with weight w2: rows an output_padding at least the stride adds (allowed when below
 * the dilation) meet a grad_output row x2 lacks, so x2 is padded with zeros to that size. */
static mt_status
transposed_input(mt_tensor *x2, const mt_tensor *w2, const int64_t *out_hw,
                 const mt_conv_params *c2, mt_tensor **out)
{
    int nd = x2->ndim;
    int64_t pad[4] = {0, 0, 0, 0};
    bool padded = false;
    for (int d = 0; d < 2; d++) {
        int64_t span = out_hw[d] + 2 * c2->pad[d] - c2->dil[d] * (w2->sizes[2 + d] - 1) - 1;
        int64_t need = span / c2->stride[d] + 1 - x2->sizes[nd - 2 + d];
        pad[2 * (1 - d) + 1] = need > 0 ? need : 0;
        padded = padded || need > 0;
    }
    if (!padded) {
        *out = mt_tensor_retain(x2);
        return MT_OK;
    }
    return mt_op_constant_pad_nd(x2, 4, pad, mt_scalar_int(0), out);
}

/* The transposed convolution of x2 (a 2-D batch or plane) with w2 (in, out / groups, KH, KW):
 * conv2d's input gradient for an input of the output's size. */
mt_status
mt_conv_transposed2d(mt_tensor *x2, mt_tensor *w2, const int64_t *out_hw, const mt_conv_params *c2,
                     mt_tensor **out)
{
    int nd = x2->ndim;
    int64_t size[4];
    memcpy(size, x2->sizes, sizeof(int64_t) * (size_t)nd);
    size[nd - 3] = w2->sizes[1] * c2->groups;
    size[nd - 2] = out_hw[0];
    size[nd - 1] = out_hw[1];
    mt_tensor *xp = NULL;
    mt_status st = transposed_input(x2, w2, out_hw, c2, &xp);
    if (st == MT_OK) {
        st = mt_op_convolution_backward_input(xp, w2, nd, size, 2, c2->stride, 2, c2->pad, 2,
                                              c2->dil, c2->groups, out);
    }
    mt_tensor_release(xp);
    return st;
}

/* The arguments of a convolution over dims spatial dims as the 2-D one's: a length L is a
 * 1 x L plane. */
static void
params2d(const mt_conv_params *c, int dims, mt_conv_params *c2)
{
    *c2 = (mt_conv_params){.dims = 2, .groups = c->groups};
    for (int d = 0; d < 2; d++) {
        int k = d - (2 - dims);
        c2->stride[d] = k < 0 ? 1 : c->stride[k];
        c2->pad[d] = k < 0 ? 0 : c->pad[k];
        c2->dil[d] = k < 0 ? 1 : c->dil[k];
    }
}

/* t as a 2-D convolution's tensor: a 1 x L plane (dim the new one) for a 1-D convolution. */
static mt_status
to2d(mt_tensor *t, int dims, int64_t dim, mt_tensor **out)
{
    if (dims == 2) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    return mt_op_unsqueeze(t, dim, out);
}

/* *out = t2, a 2-D convolution's result, back in dims spatial dims (dropping dim). Takes over
 * t2. */
static mt_status
from2d(mt_tensor *t2, int dims, int64_t dim, mt_tensor **out)
{
    if (dims == 2) {
        *out = t2;
        return MT_OK;
    }
    mt_status st = mt_op_squeeze(t2, 1, &dim, out);
    mt_tensor_release(t2);
    return st;
}

/* conv1d (transposed false) or conv_transpose1d/2d over dims spatial dims. */
static mt_status
conv_nd(mt_args *a, const char *name, int dims, bool transposed)
{
    mt_tensor *x = a->t[0], *w = a->t[1], *bias = a->t[2];
    mt_conv_params c;
    int64_t out_sp[2] = {1, 1};
    mt_status st = mt_conv_check(a, name, dims, transposed, &c, out_sp + 2 - dims);
    if (st) {
        return st;
    }
    mt_conv_params c2;
    params2d(&c, dims, &c2);
    mt_tensor *x2 = NULL, *w2 = NULL, *y = NULL, *b = NULL, *xc = NULL;
    /* a 1-D input is made contiguous first, as PyTorch's _convolution does, so that a permuted
     * (N, L, C) -> (N, C, L) input does not read as channels-last once viewed in 2-D (its
     * result stays row-major; only a channels-last-like weight makes it channels-last) */
    st = dims == 1 ? mt_op_contiguous(x, &xc) : (xc = mt_tensor_retain(x), MT_OK);
    st = st ? st : to2d(xc, dims, x->ndim - 1, &x2);
    st = st ? st : to2d(w, dims, 2, &w2);
    if (st == MT_OK && !transposed) {
        st = mt_op_conv2d(x2, w2, bias, 2, c2.stride, 2, c2.pad, 2, c2.dil, c2.groups, &y);
    } else if (st == MT_OK) {
        st = mt_conv_transposed2d(x2, w2, out_sp, &c2, &y);
        if (st == MT_OK && bias) {
            static const int64_t col[3] = {-1, 1, 1};
            mt_tensor *sum = NULL;
            st = mt_op_view(bias, 3, col, &b);
            st = st ? st : mt_op_add(y, b, mt_scalar_int(1), &sum);
            mt_tensor_release(y);
            y = sum;
        }
    }
    mt_memory_format fmt[3];
    if (st == MT_OK && transposed && mt_conv_layouts(x, w, &c, true, fmt)) {
        mt_tensor *r = y;
        y = NULL;
        st = mt_conv_in_layout(r, fmt[0], &y);
        mt_tensor_release(r);
    }
    if (st == MT_OK) {
        st = from2d(y, dims, y->ndim - 2, &a->out[0]);
        y = NULL;
    }
    mt_tensor_release(xc);
    mt_tensor_release(x2);
    mt_tensor_release(w2);
    mt_tensor_release(y);
    mt_tensor_release(b);
    return st;
}

/* *out = t laid out in memory format fmt (t itself when it suggests fmt already), through
 * differentiable ops: a channels-last copy is the contiguous copy of t's channels-last view. */
mt_status
mt_in_format(mt_tensor *t, mt_memory_format fmt, mt_tensor **out)
{
    static const int64_t last[2][5] = {{0, 2, 3, 1}, {0, 2, 3, 4, 1}},
                         back[2][5] = {{0, 3, 1, 2}, {0, 4, 1, 2, 3}};
    if (mt_suggest_memory_format(t) == fmt) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    if (fmt == MT_CONTIGUOUS_FORMAT) {
        return mt_op_contiguous(t, out);
    }
    const int k = fmt == MT_CHANNELS_LAST_3D;
    mt_tensor *p = NULL, *c = NULL;
    mt_status st = mt_op_permute(t, t->ndim, last[k], &p);
    st = st ? st : mt_op_contiguous(p, &c);
    st = st ? st : mt_op_permute(c, t->ndim, back[k], out);
    mt_tensor_release(p);
    mt_tensor_release(c);
    return st;
}

mt_status
mt_conv_in_layout(mt_tensor *t, mt_memory_format fmt, mt_tensor **out)
{
    int64_t want[MT_MAX_DIMS];
    mt_format_strides(fmt, t->ndim, t->sizes, want);
    bool exact = true, dense = true;
    for (int d = 0; d < t->ndim; d++) {
        exact = exact && t->strides[d] == want[d];
        dense = dense && (t->sizes[d] == 1 || t->strides[d] == want[d]);
    }
    if (exact || mt_tensor_numel(t) == 0) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    mt_tensor *c = NULL;
    mt_status st = MT_OK;
    if (!dense) { /* a copy in fmt (t is not dense in it, so contiguous copies) */
        static const int64_t last[2][5] = {{0, 2, 3, 1}, {0, 2, 3, 4, 1}},
                             back[2][5] = {{0, 3, 1, 2}, {0, 4, 1, 2, 3}};
        mt_tensor *p = NULL, *q = NULL;
        const int k = fmt == MT_CHANNELS_LAST_3D;
        if (fmt == MT_CONTIGUOUS_FORMAT) {
            st = mt_op_contiguous(t, &c);
        } else {
            st = mt_op_permute(t, t->ndim, last[k], &p);
            st = st ? st : mt_op_contiguous(p, &q);
            st = st ? st : mt_op_permute(q, t->ndim, back[k], &c);
        }
        mt_tensor_release(p);
        mt_tensor_release(q);
        if (st) {
            return st;
        }
        t = c;
    }
    /* the same elements at the same places: only size-1 dims' strides differ, which a view
     * restates (PyTorch's kernels allocate with fmt's strides; the gradient layout contract and
     * stride() see them) */
    st = mt_op_as_strided(t, t->ndim, t->sizes, t->ndim, want, t->offset, out);
    mt_tensor_release(c);
    return st;
}

/* gi[0] and gi[1], those need asks for, restated in the formats fmt[1] and fmt[2] */
static mt_status
grads_in_layout(const mt_memory_format *fmt, const bool *need, mt_tensor **gi)
{
    mt_status st = MT_OK;
    for (int k = 0; k < 2 && st == MT_OK; k++) {
        if (need[k] && gi[k]) {
            mt_tensor *r = gi[k];
            gi[k] = NULL;
            st = mt_conv_in_layout(r, fmt[k + 1], &gi[k]);
            mt_tensor_release(r);
        }
    }
    return st;
}

mt_status
mt_conv2d_grads_in_layout(const mt_args *args, const mt_tensor *x, const mt_tensor *w,
                          const bool *need, mt_tensor **gi)
{
    mt_conv_params c = {.dims = 2, .groups = args->i[0]};
    mt_memory_format fmt[3];
    mt_status st;
    if ((st = expand(&args->l[0], "stride", 2, 2, c.stride)) ||
        (st = expand(&args->l[1], "padding", 2, 2, c.pad)) ||
        (st = expand(&args->l[2], "dilation", 2, 2, c.dil))) {
        return st;
    }
    return mt_conv_layouts(x, w, &c, false, fmt) ? grads_in_layout(fmt, need, gi) : MT_OK;
}

mt_status
mt_conv_grad_output_in_format(const mt_tensor *x, const mt_tensor *w, mt_tensor *g, mt_tensor **out)
{
    return mt_in_format(g, mt_conv_memory_format(x, w), out);
}

/* *out = zeros laid out as t (PyTorch's zeros_like, preserve_format) */
static mt_status
zeros_like(const mt_tensor *t, mt_tensor **out)
{
    int64_t strides[MT_MAX_DIMS];
    mt_preserve_strides(t, strides);
    mt_status st = mt_tensor_empty_strided(t->ndim, t->sizes, strides, t->dtype,
                                           mt_tensor_device(t), out);
    return st ? st : mt_op_zero_(*out, NULL);
}

mt_status
mt_conv_empty_grads(const mt_tensor *x, const mt_tensor *w, const bool *need, mt_tensor **gi)
{
    mt_status st = need[0] ? zeros_like(x, &gi[0]) : MT_OK;
    return st == MT_OK && need[1] ? zeros_like(w, &gi[1]) : st;
}

/* The gradients of input x (gi[0]), weight w (gi[1]) and bias (gi[2]), those asked for in need,
 * of conv1d, conv3d or conv_transpose1d/2d (args its arguments, checked by the forward) from the
 * output's gradient g: the 2-D convolution ops, each differentiable again. */
mt_status
mt_conv_nd_backward(const mt_args *args, int dims, bool transposed, mt_tensor *x, mt_tensor *w,
                    mt_tensor *g, const bool *need, mt_tensor **gi)
{
    mt_conv_params c = {.dims = dims, .groups = args->i[0]}, c2;
    mt_status st;
    if ((st = expand(&args->l[0], "stride", dims, dims, c.stride)) ||
        (st = expand(&args->l[1], "padding", dims, dims, c.pad)) ||
        (st = expand(&args->l[transposed ? 3 : 2], "dilation", dims, dims, c.dil)) ||
        (transposed && (st = expand(&args->l[2], "output_padding", dims, dims, c.opad)))) {
        return st;
    }
    mt_tensor *x2 = NULL, *w2 = NULL, *g2 = NULL, *r = NULL, *xp = NULL, *gf = NULL;
    /* grad_output in the forward's memory format, the gradients in PyTorch's (mt_conv_layouts;
     * 1-D and unbatched ones as the 2-D ops give them) */
    mt_memory_format fmt[3];
    const bool laid = mt_conv_layouts(x, w, &c, transposed, fmt);
    if (!laid) {
        fmt[0] = fmt[1] = fmt[2] = mt_conv_memory_format(x, w);
    }
    if ((st = mt_in_format(g, fmt[0], &gf))) {
        return st;
    }
    if (mt_tensor_numel(x) == 0) {
        st = mt_conv_empty_grads(x, w, need, gi);
        goto grad_bias;
    }
    if (dims == 3) {
        st = transposed ? mt_conv_transpose3d_backward(&c, x, w, gf, need, gi)
                        : mt_conv3d_backward(&c, x, w, gf, need, gi);
        st = st ? st : grads_in_layout(fmt, need, gi);
        goto grad_bias;
    }
    params2d(&c, dims, &c2);
    int nd = x->ndim + 2 - dims;
    st = to2d(x, dims, x->ndim - 1, &x2);
    st = st ? st : to2d(w, dims, 2, &w2);
    st = st ? st : to2d(gf, dims, gf->ndim - 1, &g2);
    if (st == MT_OK && need[0] && transposed) {
        /* conv2d of the output's gradient, cut to the input where output_padding added a row */
        st = mt_op_conv2d(g2, w2, NULL, 2, c2.stride, 2, c2.pad, 2, c2.dil, c2.groups, &r);
        for (int d = nd - 2; st == MT_OK && d < nd; d++) {
            if (r->sizes[d] > x2->sizes[d]) {
                mt_tensor *cut = NULL;
                st = mt_op_narrow(r, d, 0, x2->sizes[d], &cut);
                mt_tensor_release(r);
                r = cut;
            }
        }
    } else if (st == MT_OK && need[0]) {
        st = mt_op_convolution_backward_input(g2, w2, nd, x2->sizes, 2, c2.stride, 2, c2.pad, 2,
                                              c2.dil, c2.groups, &r);
    }
    if (st == MT_OK && need[0]) {
        st = from2d(r, dims, nd - 2, &gi[0]);
        r = NULL;
    }
    if (st == MT_OK && need[1] && transposed) {
        st = transposed_input(x2, w2, g2->sizes + nd - 2, &c2, &xp);
        st = st ? st
                : mt_op_convolution_backward_weight(xp, g2, 4, w2->sizes, 2, c2.stride, 2, c2.pad,
                                                    2, c2.dil, c2.groups, &r);
    } else if (st == MT_OK && need[1]) {
        st = mt_op_convolution_backward_weight(g2, x2, 4, w2->sizes, 2, c2.stride, 2, c2.pad, 2,
                                               c2.dil, c2.groups, &r);
    }
    if (st == MT_OK && need[1]) {
        st = from2d(r, dims, 2, &gi[1]);
        r = NULL;
    }
    if (st == MT_OK && laid) {
        st = grads_in_layout(fmt, need, gi);
    }
grad_bias:
    if (st == MT_OK && need[2]) {
        int64_t sum_dims[MT_MAX_DIMS];
        int k = 0;
        for (int d = 0; d < g->ndim; d++) {
            if (d != g->ndim - dims - 1) {
                sum_dims[k++] = d;
            }
        }
        /* zero input channels made no output channels: a zero gradient for each bias */
        const int64_t oc = transposed ? w->sizes[1] * args->i[0] : w->sizes[0];
        st = g->sizes[g->ndim - dims - 1] != oc
                 ? mt_op_zeros(1, &oc, g->dtype, mt_tensor_device(g), false, &gi[2])
                 : mt_op_sum(g, k, sum_dims, false, -1, &gi[2]);
    }
    mt_tensor_release(gf);
    mt_tensor_release(x2);
    mt_tensor_release(w2);
    mt_tensor_release(g2);
    mt_tensor_release(r);
    mt_tensor_release(xp);
    return st;
}

// input (N, C, L) or (C, L), weight (OC, C/groups, K), bias (OC) or None
mt_status
mt_composite_conv1d(mt_args *a)
{
    return conv_nd(a, "conv1d", 1, false);
}

// input (N, IC, L) or (IC, L), weight (IC, OC/groups, K), bias (OC) or None
mt_status
mt_composite_conv_transpose1d(mt_args *a)
{
    return conv_nd(a, "conv_transpose1d", 1, true);
}

// input (N, IC, H, W) or (IC, H, W), weight (IC, OC/groups, KH, KW), bias (OC) or None
mt_status
mt_composite_conv_transpose2d(mt_args *a)
{
    return conv_nd(a, "conv_transpose2d", 2, true);
}
