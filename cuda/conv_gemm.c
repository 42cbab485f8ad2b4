/* conv2d and its backward without cuDNN, as PyTorch's slow_conv2d (what its CUDA build runs
 * under torch.backends.cudnn.enabled = False; at the end, F.unfold and F.fold's im2col and
 * col2im ops on the same kernels): the input unfolded into columns by im2col
 * (im2col.cu), then per group one batched product on cuBLAS through the dispatcher (bmm,
 * baddbmm with the bias), so the profiler shows the decomposition. Checks and geometry are the
 * front end's (ops/conv_checks.c, a->plan->conv); every operand is made contiguous first.
 *
 * With K = C/G * KH * KW taps per output and L = OH * OW outputs per plane, for group g:
 *   forward          out_g (N, OC/G, L) = w_g (OC/G, K) @ col_g (N, K, L) (+ bias_g)
 *   grad of input    gcol_g (N, K, L) = w_g^T (K, OC/G) @ go_g (N, OC/G, L), then col2im
 *   grad of weight   gw_g (OC/G, K) = sum over N of go_g (N, OC/G, L) @ col_g^T (N, L, K)
 * w_g is broadcast over the batch (batch stride 0). The columns take N * C * KH * KW * L
 * elements of device memory at once (PyTorch unfolds one image at a time). */
#include "cuda/conv_gemm.h"
#include "cuda/elementwise.h"
#include "cuda/kernels.h"
#include "cuda/kernels_index_fill_nn.h"
#include "cuda/ops.h"

/* The geometry of the kernels from the front end's plan. */
static mt_cuda_col_geom
col_geom(const conv_geom *g)
{
    return (mt_cuda_col_geom){.n = g->n,
                              .c = g->c,
                              .h = g->h,
                              .w = g->w,
                              .kh = g->kh,
                              .kw = g->kw,
                              .oh = g->oh,
                              .ow = g->ow,
                              .sh = g->sh,
                              .sw = g->sw,
                              .ph = g->ph,
                              .pw = g->pw,
                              .dh = g->dh,
                              .dw = g->dw};
}

/* A 3-D view of the contiguous t: sizes s, strides st, starting off elements in. */
static mt_status
view3(mt_tensor *t, int64_t s0, int64_t s1, int64_t s2, int64_t st0, int64_t st1, int64_t st2,
      int64_t off, mt_tensor **out)
{
    const int64_t sizes[3] = {s0, s1, s2}, strides[3] = {st0, st1, st2};
    return mt_tensor_view(t, 3, sizes, strides, t->offset + off, out);
}

/* *col (N, C * KH * KW, L) = the columns of x (N, C, H, W) contiguous (back false), or x from
 * the columns col (back true). */
static mt_status
unfold(const conv_geom *g, mt_tensor *x, mt_tensor *col, bool back)
{
    mt_cuda_col_geom cg = col_geom(g);
    void *xd = mt_tensor_data(x), *cd = mt_tensor_data(col);
    void *args[] = {&cg, back ? &cd : &xd, back ? &xd : &cd};
    int64_t n = back ? mt_tensor_numel(x) : mt_tensor_numel(col);
    mt_status st = mt_cuda_use_device(mt_tensor_device(x));
    return st ? st : mt_cuda_launch_n(mt_cuda_im2col_kernel(x->dtype, back), n, args);
}

static mt_status
columns_of(const conv_geom *g, mt_tensor *x, mt_tensor **col)
{
    const int64_t sizes[3] = {g->n, g->c * g->kh * g->kw, g->oh * g->ow};
    mt_status st = mt_tensor_empty(3, sizes, x->dtype, mt_tensor_device(x), col);
    if (st == MT_OK && (st = unfold(g, x, *col, false))) {
        mt_tensor_clear(col);
    }
    return st;
}

/* Whether the products have any term: no input channel or filter tap sums nothing. */
static bool
has_taps(const conv_geom *g)
{
    return g->c > 0 && g->kh > 0 && g->kw > 0;
}

// input (N, C, H, W) or (C, H, W), weight (OC, C/G, KH, KW), bias (OC) or None;
// out (N, OC, OH, OW) or (OC, OH, OW), row-major (the front end's)
mt_status
mt_cuda_conv2d_gemm(mt_args *a)
{
    const conv_geom g = a->plan->conv;
    const int64_t G = g.groups, K = g.c / G * g.kh * g.kw, L = g.oh * g.ow, ocg = g.oc / G;
    mt_tensor *x = NULL, *w = NULL, *col = NULL, *out = a->out[0], *bias = a->t[2];
    mt_status st = MT_OK;
    if (mt_tensor_numel(out) == 0) {
        goto out_release;
    }
    if (!has_taps(&g)) { /* the bias alone, or zeros */
        mt_tensor *bv = NULL;
        if (bias == NULL) {
            st = mt_cuda_fill(out, mt_scalar_int(0));
        } else if ((st = view3(bias, g.n, g.oc, L, 0, bias->strides[0], 0, 0, &bv)) == MT_OK) {
            mt_tensor *ov = NULL;
            if ((st = view3(out, g.n, g.oc, L, g.oc * L, L, 1, 0, &ov)) == MT_OK) {
                st = mt_cuda_copy_into(ov, bv);
            }
            mt_tensor_clear(&ov);
        }
        mt_tensor_clear(&bv);
        goto out_release;
    }
    if ((st = mt_cuda_dense_as(a->t[0], a->t[0]->dtype, &x)) ||
        (st = mt_cuda_dense_as(a->t[1], a->t[1]->dtype, &w)) || (st = columns_of(&g, x, &col))) {
        goto out_release;
    }
    for (int64_t k = 0; k < G && st == MT_OK; k++) {
        mt_tensor *wv = NULL, *cv = NULL, *bv = NULL, *ov = NULL, *r = NULL;
        if ((st = view3(w, g.n, ocg, K, 0, K, 1, k * ocg * K, &wv)) == MT_OK &&
            (st = view3(col, g.n, K, L, G * K * L, L, 1, k * K * L, &cv)) == MT_OK &&
            (st = view3(out, g.n, ocg, L, g.oc * L, L, 1, k * ocg * L, &ov)) == MT_OK) {
            if (bias == NULL) {
                st = mt_op_bmm(wv, cv, &r);
            } else if ((st = view3(bias, g.n, ocg, L, 0, bias->strides[0], 0,
                                   k * ocg * bias->strides[0], &bv)) == MT_OK) {
                st = mt_op_baddbmm(bv, wv, cv, mt_scalar_int(1), mt_scalar_int(1), &r);
            }
        }
        if (st == MT_OK) {
            st = mt_cuda_copy_into(ov, r);
        }
        mt_tensor_clear(&wv);
        mt_tensor_clear(&cv);
        mt_tensor_clear(&bv);
        mt_tensor_clear(&ov);
        mt_tensor_clear(&r);
    }
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&w);
    mt_tensor_clear(&col);
    return st;
}

/* out (the gradient's shape, allocated): zeros when the convolution has no term, *done set. */
static mt_status
empty_grad(const conv_geom *g, mt_tensor *out, bool *done)
{
    *done = mt_tensor_numel(out) == 0 || !has_taps(g) || g->n == 0 || g->oc == 0 ||
            g->oh * g->ow == 0;
    return *done && mt_tensor_numel(out) > 0 ? mt_cuda_fill(out, mt_scalar_int(0)) : MT_OK;
}

// grad_output (N, OC, OH, OW) or unbatched, weight (OC, C/G, KH, KW), input_size l[0];
// out (input_size) = the gradient of conv2d's input
mt_status
mt_cuda_conv_backward_input_gemm(mt_args *a)
{
    const conv_geom g = a->plan->conv;
    const int64_t G = g.groups, K = g.c / G * g.kh * g.kw, L = g.oh * g.ow, ocg = g.oc / G;
    mt_tensor *go = NULL, *w = NULL, *gcol = NULL, *out = a->out[0];
    bool done = false;
    mt_status st;
    if ((st = empty_grad(&g, out, &done)) || done) {
        goto out_release;
    }
    const int64_t sizes[3] = {g.n, G * K, L};
    if ((st = mt_cuda_dense_as(a->t[0], a->t[0]->dtype, &go)) ||
        (st = mt_cuda_dense_as(a->t[1], a->t[1]->dtype, &w)) ||
        (st = mt_tensor_empty(3, sizes, out->dtype, mt_tensor_device(out), &gcol))) {
        goto out_release;
    }
    for (int64_t k = 0; k < G && st == MT_OK; k++) {
        mt_tensor *wt = NULL, *gv = NULL, *cv = NULL, *r = NULL;
        if ((st = view3(w, g.n, K, ocg, 0, 1, K, k * ocg * K, &wt)) == MT_OK &&
            (st = view3(go, g.n, ocg, L, g.oc * L, L, 1, k * ocg * L, &gv)) == MT_OK &&
            (st = view3(gcol, g.n, K, L, G * K * L, L, 1, k * K * L, &cv)) == MT_OK &&
            (st = mt_op_bmm(wt, gv, &r)) == MT_OK) {
            st = mt_cuda_copy_into(cv, r);
        }
        mt_tensor_clear(&wt);
        mt_tensor_clear(&gv);
        mt_tensor_clear(&cv);
        mt_tensor_clear(&r);
    }
    if (st == MT_OK) {
        st = unfold(&g, out, gcol, true);
    }
out_release:
    mt_tensor_clear(&go);
    mt_tensor_clear(&w);
    mt_tensor_clear(&gcol);
    return st;
}

// grad_output (N, OC, OH, OW) or unbatched, input (N, C, H, W), weight_size l[0];
// out (weight_size) = the gradient of conv2d's weight
mt_status
mt_cuda_conv_backward_weight_gemm(mt_args *a)
{
    const conv_geom g = a->plan->conv;
    const int64_t G = g.groups, K = g.c / G * g.kh * g.kw, L = g.oh * g.ow, ocg = g.oc / G;
    const int64_t batch_dim = 0;
    mt_tensor *go = NULL, *x = NULL, *col = NULL, *out = a->out[0];
    bool done = false;
    mt_status st;
    if ((st = empty_grad(&g, out, &done)) || done) {
        goto out_release;
    }
    if ((st = mt_cuda_dense_as(a->t[0], a->t[0]->dtype, &go)) ||
        (st = mt_cuda_dense_as(a->t[1], a->t[1]->dtype, &x)) || (st = columns_of(&g, x, &col))) {
        goto out_release;
    }
    for (int64_t k = 0; k < G && st == MT_OK; k++) {
        mt_tensor *gv = NULL, *ct = NULL, *r = NULL, *s = NULL, *ov = NULL;
        const int64_t os[2] = {ocg, K}, ost[2] = {K, 1};
        if ((st = view3(go, g.n, ocg, L, g.oc * L, L, 1, k * ocg * L, &gv)) == MT_OK &&
            (st = view3(col, g.n, L, K, G * K * L, 1, L, k * K * L, &ct)) == MT_OK &&
            (st = mt_op_bmm(gv, ct, &r)) == MT_OK &&
            (st = mt_op_sum(r, 1, &batch_dim, false, -1, &s)) == MT_OK &&
            (st = mt_tensor_view(out, 2, os, ost, out->offset + k * ocg * K, &ov)) == MT_OK) {
            st = mt_cuda_copy_into(ov, s);
        }
        mt_tensor_clear(&gv);
        mt_tensor_clear(&ct);
        mt_tensor_clear(&r);
        mt_tensor_clear(&s);
        mt_tensor_clear(&ov);
    }
out_release:
    mt_tensor_clear(&go);
    mt_tensor_clear(&x);
    mt_tensor_clear(&col);
    return st;
}

/* ---- im2col and col2im (F.unfold and F.fold): the same kernels as ops of their own, the
 * geometry the front end's (ops/conv_checks.c) ---- */

/* The columns of self (back false: an image batch, a->out[0] the columns) or the image of
 * self's columns (back true), a->out[0] the front end's result; an unbatched self is its batch
 * of one. */
static mt_status
unfold_op(mt_args *a, bool back)
{
    const conv_geom *g = &a->plan->conv;
    mt_tensor *self = a->t[0], *src = NULL, *out = a->out[0];
    if (mt_cuda_im2col_kernel(self->dtype, back) == NULL) {
        return mt_fail_not_implemented(back ? "col2im_out_cuda" : "im2col_out_cuda", "",
                                       self->dtype);
    }
    mt_status st = mt_cuda_dense_as(self, self->dtype, &src);
    if (st == MT_OK && mt_tensor_numel(out) > 0) {
        st = back ? unfold(g, out, src, true) : unfold(g, src, out, false);
    }
    mt_tensor_clear(&src);
    return st;
}

// self (N, C, H, W) or (C, H, W); out (N, C*KH*KW, OH*OW) or (C*KH*KW, OH*OW)
mt_status
mt_cuda_im2col(mt_args *a)
{
    return unfold_op(a, false);
}

// self (N, C*KH*KW, L) or (C*KH*KW, L); out (N, C, H, W) or (C, H, W)
mt_status
mt_cuda_col2im(mt_args *a)
{
    return unfold_op(a, true);
}
