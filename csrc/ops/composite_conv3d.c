/* conv3d and conv_transpose3d as compositions of the 2-D convolution ops, for every device: a
 * 3-D convolution is the sum over the kernel's depth taps of 2-D ones over the depth slices each
 * tap meets (folded into the batch), a transposed one the sum of 2-D transposed ones placed at
 * the output depths each tap reaches; conv3d's gradients through differentiable ops (for
 * mt_conv_nd_backward, ops/composite_conv.c, which holds the shared checks); and conv3d's front
 * end for its CPU kernel. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_nd.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"
#include "ops/ops.h"

/* The depth slices of x (N, C, Dp, H, W, padded in depth) that depth tap kd meets for each of
 * od output depths, as a batch of planes: (N * od, C, H, W), output depth fastest. */
static mt_status
depth_slices(mt_tensor *x, int64_t kd, int64_t od, const mt_conv_params *c, mt_tensor **out)
{
    static const int64_t perm[5] = {0, 2, 1, 3, 4};
    int64_t start = kd * c->dil[0],
            flat[4] = {x->sizes[0] * od, x->sizes[1], x->sizes[3], x->sizes[4]};
    mt_tensor *xs = NULL, *xp = NULL;
    mt_status st = mt_op_slice(x, 2, start, start + (od - 1) * c->stride[0] + 1, c->stride[0], &xs);
    st = st ? st : mt_op_permute(xs, 5, perm, &xp);
    st = st ? st : mt_op_reshape(xp, 4, flat, out);
    mt_tensor_release(xs);
    mt_tensor_release(xp);
    return st;
}

/* conv3d's input gradient: the transposed convolution of g with w, its output_padding the
 * input rows the forward's stride left unread at the end of each dim. x and g batched. */
static mt_status
conv3d_grad_input(mt_tensor *x, mt_tensor *w, mt_tensor *g, const mt_conv_params *c,
                  mt_tensor **out)
{
    /* With unit strides, and padding within the kernel's reach, the transposed convolution is
     * a convolution of g with w's channels swapped and its taps reversed, padded by what the
     * forward's padding left of the kernel's reach: one conv3d op, rather than the transposed
     * convolution's depth taps. */
    bool plain = true;
    int64_t rpad[3], ones[3] = {1, 1, 1};
    for (int d = 0; d < 3; d++) {
        rpad[d] = c->dil[d] * (w->sizes[2 + d] - 1) - c->pad[d];
        plain = plain && c->stride[d] == 1 && rpad[d] >= 0;
    }
    if (plain) {
        /* w (OC, C/G, K...) -> (G, OC/G, C/G, K...) -> (G, C/G, OC/G, K...) -> (C, OC/G, K...) */
        const int64_t gr = c->groups, *ws = w->sizes;
        const int64_t split[6] = {gr, ws[0] / gr, ws[1], ws[2], ws[3], ws[4]};
        const int64_t back[5] = {ws[1] * gr, ws[0] / gr, ws[2], ws[3], ws[4]}, taps[3] = {2, 3, 4};
        mt_tensor *w6 = NULL, *wt = NULL, *w5 = NULL, *wf = NULL;
        mt_status st = mt_op_reshape(w, 6, split, &w6);
        st = st ? st : mt_op_transpose(w6, 1, 2, &wt);
        st = st ? st : mt_op_reshape(wt, 5, back, &w5);
        st = st ? st : mt_op_flip(w5, 3, taps, &wf);
        st = st ? st : mt_op_conv3d(g, wf, NULL, 3, ones, 3, rpad, 3, c->dil, gr, out);
        mt_tensor_release(w6);
        mt_tensor_release(wt);
        mt_tensor_release(w5);
        mt_tensor_release(wf);
        return st;
    }
    int64_t opad[3];
    for (int d = 0; d < 3; d++) {
        int64_t reached = (g->sizes[2 + d] - 1) * c->stride[d] - 2 * c->pad[d] +
                          c->dil[d] * (w->sizes[2 + d] - 1) + 1;
        opad[d] = x->sizes[2 + d] - reached;
    }
    return mt_op_conv_transpose3d(g, w, NULL, 3, c->stride, 3, c->pad, 3, opad, c->groups, 3,
                                  c->dil, out);
}

/* conv3d's weight gradient: on the CPU its one op (vol2col and a gemm per volume, or the
 * direct kernels, with no copy per depth tap: cpu/conv_backward.c); elsewhere depth tap by depth
 * tap: tap kd's is the 2-D convolution's weight gradient of the depth slices it met
 * (depth_slices) with g's planes (N * OD, O, OH, OW), stacked along the kernel's depth. x and g
 * batched. */
static mt_status
conv3d_grad_weight(mt_tensor *x, mt_tensor *w, mt_tensor *g, const mt_conv_params *c,
                   mt_tensor **out)
{
    if (mt_tensor_device(x).type == MT_CPU) {
        return mt_op_convolution_backward_weight(g, x, 5, w->sizes, 3, c->stride, 3, c->pad, 3,
                                                 c->dil, c->groups, out);
    }
    static const int64_t perm[5] = {0, 2, 1, 3, 4};
    const int64_t kd = w->sizes[2], od = g->sizes[2];
    const int64_t planes[4] = {g->sizes[0] * od, g->sizes[1], g->sizes[3], g->sizes[4]};
    const int64_t wsize[4] = {w->sizes[0], w->sizes[1], w->sizes[3], w->sizes[4]};
    int64_t pad[6] = {0, 0, 0, 0, c->pad[0], c->pad[0]};
    mt_tensor *xp = NULL, *gt = NULL, *g2 = NULL, *x2 = NULL, *taps[MT_MAX_DIMS] = {NULL};
    mt_tensor **many = kd > MT_MAX_DIMS ? calloc((size_t)kd, sizeof(mt_tensor *)) : taps;
    if (many == NULL) {
        return mt_fail(MT_ENOMEM, "conv3d: out of memory");
    }
    mt_status st = mt_op_constant_pad_nd(x, 6, pad, mt_scalar_int(0), &xp);
    st = st ? st : mt_op_permute(g, 5, perm, &gt);
    st = st ? st : mt_op_reshape(gt, 4, planes, &g2);
    for (int64_t k = 0; k < kd && st == MT_OK; k++) {
        st = depth_slices(xp, k, od, c, &x2);
        st = st ? st
                : mt_op_convolution_backward_weight(g2, x2, 4, wsize, 2, c->stride + 1, 2,
                                                    c->pad + 1, 2, c->dil + 1, c->groups, &many[k]);
        mt_tensor_clear(&x2);
    }
    st = st ? st : mt_op_stack((int)kd, many, 2, out);
    for (int64_t k = 0; k < kd; k++) {
        mt_tensor_release(many[k]);
    }
    if (many != taps) {
        free(many);
    }
    mt_tensor_release(xp);
    mt_tensor_release(gt);
    mt_tensor_release(g2);
    return st;
}

/* conv3d's gradients of input (gi[0]) and weight (gi[1]) asked for in need, each through
 * differentiable ops (so twice differentiable); unbatched x and g go as a batch of one. */
mt_status
mt_conv3d_backward(const mt_conv_params *c, mt_tensor *x, mt_tensor *w, mt_tensor *g,
                   const bool *need, mt_tensor **gi)
{
    const bool batched = x->ndim == 5;
    mt_tensor *xb = NULL, *gb = NULL, *r = NULL;
    mt_status st = batched ? (xb = mt_tensor_retain(x), MT_OK) : mt_op_unsqueeze(x, 0, &xb);
    st = st ? st : batched ? (gb = mt_tensor_retain(g), MT_OK) : mt_op_unsqueeze(g, 0, &gb);
    if (st == MT_OK && need[0]) {
        int64_t zero = 0;
        st = conv3d_grad_input(xb, w, gb, c, batched ? &gi[0] : &r);
        st = st || batched ? st : mt_op_squeeze(r, 1, &zero, &gi[0]);
    }
    if (st == MT_OK && need[1]) {
        st = conv3d_grad_weight(xb, w, gb, c, &gi[1]);
    }
    mt_tensor_release(xb);
    mt_tensor_release(gb);
    mt_tensor_release(r);
    return st;
}

/* conv_transpose3d's gradients of input (gi[0]) and weight (gi[1]) asked for in need, from
 * the output's gradient g: the input's is conv3d of g with w (cut to the input where
 * output_padding reached past the stride), the weight's conv3d's weight gradient with g as the
 * input and x (zero-padded at the end to that conv3d's output) as the output's gradient; both
 * differentiable again. x and g batched or not alike. */
mt_status
mt_conv_transpose3d_backward(const mt_conv_params *c, mt_tensor *x, mt_tensor *w, mt_tensor *g,
                             const bool *need, mt_tensor **gi)
{
    const int sp = x->ndim - 3; /* the first spatial dim */
    int64_t reach[3], pad[6] = {0};
    bool cut = false, padded = false;
    for (int d = 0; d < 3; d++) {
        reach[d] = (g->sizes[sp + d] + 2 * c->pad[d] - c->dil[d] * (w->sizes[2 + d] - 1) - 1) /
                       c->stride[d] +
                   1;
        cut = cut || reach[d] > x->sizes[sp + d];
        pad[2 * (2 - d) + 1] = reach[d] > x->sizes[sp + d] ? reach[d] - x->sizes[sp + d] : 0;
        padded = padded || pad[2 * (2 - d) + 1] > 0;
    }
    mt_tensor *r = NULL, *xp = NULL;
    mt_status st = MT_OK;
    if (need[0]) {
        st = mt_op_conv3d(g, w, NULL, 3, c->stride, 3, c->pad, 3, c->dil, c->groups, &r);
        for (int d = 0; st == MT_OK && cut && d < 3; d++) {
            mt_tensor *part = NULL;
            st = mt_op_narrow(r, sp + d, 0, x->sizes[sp + d], &part);
            mt_tensor_release(r);
            r = part;
        }
        if (st == MT_OK) {
            gi[0] = r;
            r = NULL;
        }
    }
    if (st == MT_OK && need[1]) {
        const bool weight_only[2] = {false, true};
        mt_tensor *both[2] = {NULL, NULL};
        st = padded ? mt_op_constant_pad_nd(x, 6, pad, mt_scalar_int(0), &xp)
                    : (xp = mt_tensor_retain(x), MT_OK);
        st = st ? st : mt_conv3d_backward(c, g, w, xp, weight_only, both);
        gi[1] = both[1];
    }
    mt_tensor_release(r);
    mt_tensor_release(xp);
    return st;
}

/* A 3-D convolution's result from acc, its values depth-major (N, OD, OC, OH, OW) as split
 * gives the sizes: (N, OC, OD, OH, OW) contiguous (an empty one too), plus bias (OC) if any,
 * without N unless batched. */
static mt_status
depth_major_result(mt_tensor *acc, const int64_t *split, mt_tensor *bias, bool batched,
                   mt_tensor **out)
{
    static const int64_t perm[5] = {0, 2, 1, 3, 4}, col[4] = {-1, 1, 1, 1};
    mt_tensor *v = NULL, *p = NULL, *b = NULL, *sum = NULL, *res = NULL;
    mt_status st = mt_op_reshape(acc, 5, split, &v);
    st = st ? st : mt_op_permute(v, 5, perm, &p);
    /* no output channel (zero input channels): no bias to add */
    if (st == MT_OK && bias && p->sizes[1] == bias->sizes[0]) {
        st = mt_op_view(bias, 4, col, &b);
        st = st ? st : mt_op_add(p, b, mt_scalar_int(1), &sum);
    }
    if (st == MT_OK && mt_tensor_numel(p) == 0) {
        /* row-major too: contiguous() keeps an empty view's strides, reshape makes them so */
        st = mt_op_reshape(sum ? sum : p, 5, p->sizes, &res);
    } else {
        st = st ? st : mt_op_contiguous(sum ? sum : p, &res);
    }
    if (st == MT_OK && !batched) {
        int64_t zero = 0;
        st = mt_op_squeeze(res, 1, &zero, out);
    } else if (st == MT_OK) {
        *out = mt_tensor_retain(res);
    }
    mt_tensor_release(v);
    mt_tensor_release(p);
    mt_tensor_release(b);
    mt_tensor_release(sum);
    mt_tensor_release(res);
    return st;
}

/* The 2-D convolution of depth tap kd of w (O, C/g, KD, KH, KW) with the slices of x (N, C,
 * Dp, H, W, padded in depth) it meets for each of od output depths: (N * od, O, OH, OW). */
static mt_status
depth_tap(mt_tensor *x, mt_tensor *w, int64_t kd, int64_t od, const mt_conv_params *c,
          mt_tensor **out)
{
    mt_tensor *x2 = NULL, *wk = NULL;
    mt_status st = depth_slices(x, kd, od, c, &x2);
    st = st ? st : mt_op_select(w, 2, kd, &wk);
    st = st ? st
            : mt_op_conv2d(x2, wk, NULL, 2, c->stride + 1, 2, c->pad + 1, 2, c->dil + 1, c->groups,
                           out);
    mt_tensor_release(x2);
    mt_tensor_release(wk);
    return st;
}

/* conv3d's checks, in PyTorch's order: the bias's dtype, then mt_conv_check's shapes, the
 * kernel's sizes and dilation and the weight's dtype. */
static mt_status
check_conv3d(const mt_args *a, mt_conv_params *c)
{
    const mt_tensor *x = a->t[0], *w = a->t[1], *bias = a->t[2];
    if ((x->ndim == 4 || x->ndim == 5) && bias && bias->dtype != x->dtype) {
        return mt_fail(MT_ERUNTIME, "Input type (%s) and bias type (%s) should be the same",
                       mt_dtype_c_name(x->dtype), mt_dtype_c_name(bias->dtype));
    }
    mt_status st = mt_conv_check(a, "conv3d", 3, false, c, NULL);
    if (st) {
        return st;
    }
    if ((st = mt_conv_check_kernel(w, 3, c->dil))) {
        return st;
    }
    if (w->dtype != x->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(w->dtype));
    }
    return MT_OK;
}

/* conv3d's front end for its CPU kernel (cpu/conv.c): the checks, and the geometry as a depth
 * slice's 2-D one plus the depth's. */
mt_status
mt_front_conv3d(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0], *w = a->t[1];
    mt_conv_params c;
    mt_status st = check_conv3d(a, &c);
    if (st) {
        return st;
    }
    int64_t xs[5] = {1, 1, 1, 1, 1}, out[3];
    memcpy(xs + 5 - x->ndim, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    for (int d = 0; d < 3; d++) {
        out[d] = (xs[2 + d] + 2 * c.pad[d] - c.dil[d] * (w->sizes[2 + d] - 1) - 1) / c.stride[d] +
                 1;
    }
    p->conv3 = mt_conv3_geom(xs, w->sizes, out, &c);
    /* zero input channels make zero output channels (PyTorch's Empty backend) */
    if (xs[1] == 0) {
        p->conv3.hw.oc = 0;
    }
    const int64_t sizes[5] = {xs[0], p->conv3.hw.oc, out[0], out[1], out[2]};
    const bool batched = x->ndim == 5;
    mt_memory_format fmt[3];
    if (!mt_conv_layouts(x, w, &c, false, fmt)) {
        fmt[0] = mt_conv_memory_format(x, w);
    }
    return mt_front_output_format(p, x->dtype, x->ndim, sizes + !batched, fmt[0]);
}

// input (N, C, D, H, W) or (C, D, H, W), weight (O, C/groups, KD, KH, KW), bias (O) or None;
// out (N, O, OD, OH, OW): sum over kd of depth_tap, back in (N, O, OD, OH, OW) order, plus bias
mt_status
mt_composite_conv3d(mt_args *a)
{
    mt_tensor *x = a->t[0], *w = a->t[1], *bias = a->t[2];
    mt_conv_params c;
    mt_status st = check_conv3d(a, &c);
    if (st) {
        return st;
    }
    bool batched = x->ndim == 5;
    int64_t pad[6] = {0, 0, 0, 0, c.pad[0], c.pad[0]};
    mt_tensor *xb = NULL, *xp = NULL, *acc = NULL, *y = NULL, *t = NULL;
    st = batched ? (xb = mt_tensor_retain(x), MT_OK) : mt_op_unsqueeze(x, 0, &xb);
    st = st ? st : mt_op_constant_pad_nd(xb, 6, pad, mt_scalar_int(0), &xp);
    if (st) {
        goto out_release;
    }
    int64_t n = xp->sizes[0], kd = w->sizes[2];
    int64_t od = (xp->sizes[2] - c.dil[0] * (kd - 1) - 1) / c.stride[0] + 1;
    for (int64_t k = 0; k < kd && st == MT_OK; k++) {
        st = depth_tap(xp, w, k, od, &c, acc ? &y : &acc);
        if (st == MT_OK && y) {
            st = mt_op_add(acc, y, mt_scalar_int(1), &t);
            mt_tensor_clear(&acc);
            mt_tensor_clear(&y);
            acc = t;
            t = NULL;
        }
    }
    if (st) {
        goto out_release;
    }
    int64_t split[5] = {n, od, acc->sizes[1], acc->sizes[2], acc->sizes[3]};
    st = depth_major_result(acc, split, bias, batched, &y);
    /* laid out as the CPU kernel's result (mt_front_conv3d) */
    mt_memory_format fmt[3];
    if (st == MT_OK && !mt_conv_layouts(x, w, &c, false, fmt)) {
        fmt[0] = mt_conv_memory_format(x, w);
    }
    st = st ? st : mt_conv_in_layout(y, fmt[0], &a->out[0]);
out_release:
    mt_tensor_release(xb);
    mt_tensor_release(xp);
    mt_tensor_release(acc);
    mt_tensor_release(y);
    return st;
}

/* Depth tap k's share of a transposed 3-D convolution: y (N * D, O, OH, OW), the 2-D transposed
 * convolution of each input depth slice with w[:, :, k], placed at the output depths
 * id * sd + k * dd of a (N, L, O * OH * OW) stretch, zeros elsewhere. */
static mt_status
place_depth_tap(mt_tensor *y, int64_t n, int64_t d, int64_t k, int64_t len, const mt_conv_params *c,
                mt_tensor **out)
{
    const int64_t rest = mt_tensor_numel(y) / (n * d > 0 ? n * d : 1);
    const int64_t span = (d - 1) * c->stride[0] + 1, at = k * c->dil[0];
    int64_t col[4] = {n, d, 1, rest}, flat[3] = {n, d * c->stride[0], rest};
    int64_t gaps[4] = {0, 0, 0, c->stride[0] - 1}, shift[4] = {0, 0, at, len - at - span};
    mt_tensor *v = NULL, *spaced = NULL, *r = NULL, *cut = NULL;
    mt_status st = mt_op_reshape(y, 4, col, &v);
    st = st ? st : mt_op_constant_pad_nd(v, 4, gaps, mt_scalar_int(0), &spaced);
    st = st ? st : mt_op_reshape(spaced, 3, flat, &r);
    st = st ? st : mt_op_narrow(r, 1, 0, span, &cut);
    st = st ? st : mt_op_constant_pad_nd(cut, 4, shift, mt_scalar_int(0), out);
    mt_tensor_release(v);
    mt_tensor_release(spaced);
    mt_tensor_release(r);
    mt_tensor_release(cut);
    return st;
}

// input (N, IC, D, H, W) or (IC, D, H, W), weight (IC, OC/groups, KD, KH, KW), bias (OC) or
// None; out (N, OC, OD, OH, OW): per depth tap kd the 2-D transposed convolution of the input's
// depth slices (folded into the batch) with w[:, :, kd], spread to the output depths they reach
// (place_depth_tap), summed, cut by the depth padding, plus bias
mt_status
mt_composite_conv_transpose3d(mt_args *a)
{
    mt_tensor *x = a->t[0], *w = a->t[1], *bias = a->t[2];
    mt_conv_params c, c2;
    int64_t out_sp[3];
    mt_status st = mt_conv_check(a, "conv_transpose3d", 3, true, &c, out_sp);
    if (st) {
        return st;
    }
    c2 = (mt_conv_params){.dims = 2, .groups = c.groups};
    for (int d = 0; d < 2; d++) {
        c2.stride[d] = c.stride[d + 1];
        c2.pad[d] = c.pad[d + 1];
        c2.dil[d] = c.dil[d + 1];
        c2.opad[d] = c.opad[d + 1];
    }
    static const int64_t perm[5] = {0, 2, 1, 3, 4};
    const bool batched = x->ndim == 5;
    mt_tensor *xb = NULL, *xt = NULL, *x2 = NULL, *acc = NULL, *wk = NULL, *y = NULL, *part = NULL,
              *t = NULL;
    st = batched ? (xb = mt_tensor_retain(x), MT_OK) : mt_op_unsqueeze(x, 0, &xb);
    if (st) {
        goto out_release;
    }
    const int64_t n = xb->sizes[0], d = xb->sizes[2], kd = w->sizes[2];
    const int64_t oc = w->sizes[1] * c.groups, len = out_sp[0] + 2 * c.pad[0];
    int64_t flat[4] = {n * d, xb->sizes[1], xb->sizes[3], xb->sizes[4]};
    st = mt_op_permute(xb, 5, perm, &xt);
    st = st ? st : mt_op_reshape(xt, 4, flat, &x2);
    for (int64_t k = 0; k < kd && st == MT_OK; k++) {
        st = mt_op_select(w, 2, k, &wk);
        st = st ? st : mt_conv_transposed2d(x2, wk, out_sp + 1, &c2, &y);
        st = st ? st : place_depth_tap(y, n, d, k, len, &c, acc ? &part : &acc);
        if (st == MT_OK && part) {
            st = mt_op_add(acc, part, mt_scalar_int(1), &t);
            mt_tensor_clear(&acc);
            acc = t;
            t = NULL;
        }
        mt_tensor_clear(&wk);
        mt_tensor_clear(&y);
        mt_tensor_clear(&part);
    }
    if (st) {
        goto out_release;
    }
    /* acc (N, L, OC * OH * OW) -> the padding cut, (N, OC, OD, OH, OW), plus bias */
    int64_t split[5] = {n, out_sp[0], oc, out_sp[1], out_sp[2]};
    st = mt_op_narrow(acc, 1, c.pad[0], out_sp[0], &t);
    st = st ? st : depth_major_result(t, split, bias, batched, &y);
    mt_memory_format fmt[3];
    if (st == MT_OK && mt_conv_layouts(x, w, &c, true, fmt)) {
        st = mt_conv_in_layout(y, fmt[0], &a->out[0]);
    } else if (st == MT_OK) {
        a->out[0] = y;
        y = NULL;
    }
out_release:
    mt_tensor_release(xb);
    mt_tensor_release(xt);
    mt_tensor_release(x2);
    mt_tensor_release(acc);
    mt_tensor_release(wk);
    mt_tensor_release(y);
    mt_tensor_release(part);
    mt_tensor_release(t);
    return st;
}
