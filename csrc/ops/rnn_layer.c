/* The LSTM layer op (ops.def's _lstm_layer, PyTorch's mkldnn_rnn_layer on its CPU path): one
 * layer in one direction, every time step, in one op, so that autograd records one node a layer
 * (MkldnnRnnLayerBackward0) instead of a mm and a cell a step, and its backward makes W_hh's
 * gradient one product over all the steps (K = T*B) instead of T products of K = B added up.
 * Written with ops (mm and the fused cell of ops/rnn_cell.c), so every device runs it; nothing
 * here touches data. ops/rnn.c runs it for LSTM's layers where every step has the whole batch.
 *
 * T steps of B rows, hidden size H, state size P (H without projection):
 * xw (T*B, 4H) the input projection x W_ih^T + the biases (ops/rnn.c), step t's rows from t*B;
 * h0 (B, P), c0 (B, H), w_hh (4H, P), w_hr (P, H) or NULL. Forward, step t (from the last one
 * with reverse), PyTorch's gate order i, f, g, o:
 *     gates_t = xw_t + h_prev W_hh^T;  h_t, c_t, ws_t = the fused cell;  h_t = h_t W_hr^T
 * Backward, the steps in the other order, gh (B, P) the gradient reaching h_t, gc c_t's:
 *     gh_cell = gh W_hr;  dgates_t, gc = the cell's backward;  gh = dout_prev + dgates_t W_hh
 * then d(xw) = dgates_all (T*B, 4H), dW_hh = dgates_all^T h_prev_all (4H, P), and
 * dW_hr = gh_all^T (o tanh(c))_all (P, H). */
#include <stdlib.h>

#include "ops/nn.h"
#include "ops/op_chain.h"

static mt_status
check_layer(const mt_args *a, int64_t *steps)
{
    static const char op[] = "_lstm_layer";
    const mt_tensor *xw = a->t[0], *h0 = a->t[1], *c0 = a->t[2], *w_hh = a->t[3], *w_hr = a->t[4];
    if (xw->ndim != 2 || h0->ndim != 2 || c0->ndim != 2 || w_hh->ndim != 2 ||
        (w_hr && w_hr->ndim != 2)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected 2-D tensors, got input_projection %d-D, h0 %d-D, c0 %d-D, "
                       "w_hh %d-D",
                       op, xw->ndim, h0->ndim, c0->ndim, w_hh->ndim);
    }
    const int64_t b = c0->sizes[0], h = c0->sizes[1], p = w_hr ? w_hr->sizes[0] : h;
    if (b <= 0 || h <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected c0 of at least one row and column, got (%lld, %lld)", op,
                       (long long)b, (long long)h);
    }
    if (xw->sizes[0] == 0 || xw->sizes[0] % b != 0 || xw->sizes[1] != 4 * h) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected input_projection of shape (steps * %lld, %lld), got (%lld, "
                       "%lld)",
                       op, (long long)b, (long long)(4 * h), (long long)xw->sizes[0],
                       (long long)xw->sizes[1]);
    }
    if (h0->sizes[0] != b || h0->sizes[1] != p || w_hh->sizes[0] != 4 * h || w_hh->sizes[1] != p ||
        (w_hr && w_hr->sizes[1] != h)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected h0 (%lld, %lld), w_hh (%lld, %lld)%s, got h0 (%lld, %lld), "
                       "w_hh (%lld, %lld)",
                       op, (long long)b, (long long)p, (long long)(4 * h), (long long)p,
                       w_hr ? " and w_hr of hidden_size columns" : "", (long long)h0->sizes[0],
                       (long long)h0->sizes[1], (long long)w_hh->sizes[0],
                       (long long)w_hh->sizes[1]);
    }
    *steps = xw->sizes[0] / b;
    return MT_OK;
}

// xw (T*B, 4H), h0 (B, P), c0 (B, H), w_hh (4H, P), w_hr (P, H) or None -> out (T*B, P),
// cs (T*B, H), workspace (T*B, 4H)
mt_status
mt_composite__lstm_layer(mt_args *a)
{
    int64_t steps = 0;
    mt_status st = check_layer(a, &steps);
    if (st) {
        return st;
    }
    const int64_t T = steps, B = a->t[2]->sizes[0];
    const bool reverse = a->b[0];
    mt_tensor *xw = a->t[0], *w_hr = a->t[4];
    /* each step t's h (row t), c (row T + t) and workspace (row 2T + t) */
    mt_tensor **made = calloc(3 * (size_t)T, sizeof(*made));
    if (made == NULL) {
        return mt_fail(MT_ENOMEM, "_lstm_layer: out of memory for %lld steps", (long long)T);
    }
    mt_tensor *w_hh_t = NULL, *w_hr_t = NULL;
    mt_tensor *h = a->t[1], *c = a->t[2]; /* borrowed: the states before the step */
    st = mt_op_t(a->t[3], &w_hh_t);
    if (w_hr) {
        st = st ? st : mt_op_t(w_hr, &w_hr_t);
    }
    for (int64_t k = 0; k < T && st == MT_OK; k++) {
        const int64_t t = reverse ? T - 1 - k : k;
        mt_tensor *xw_t = NULL, *hw = NULL, *h_cell = NULL;
        st = mt_op_narrow(xw, 0, t * B, B, &xw_t);
        st = st ? st : mt_op_mm(h, w_hh_t, &hw);
        st = st ? st
                : mt_op__thnn_fused_lstm_cell(xw_t, hw, c, NULL, NULL, w_hr ? &h_cell : &made[t],
                                              &made[T + t], &made[2 * T + t]);
        if (w_hr) {
            st = st ? st : mt_op_mm(h_cell, w_hr_t, &made[t]);
        }
        mt_tensor_clear(&h_cell);
        mt_tensor_clear(&hw);
        mt_tensor_clear(&xw_t);
        h = made[t];
        c = made[T + t];
    }
    for (int k = 0; k < 3 && st == MT_OK; k++) {
        st = mt_op_cat((int)T, made + k * T, 0, &a->out[k]);
    }
    for (int k = 0; st && k < 3; k++) {
        mt_tensor_clear(&a->out[k]);
    }
    for (int64_t k = 0; k < 3 * T; k++) {
        mt_tensor_clear(&made[k]);
    }
    free(made);
    mt_tensor_clear(&w_hr_t);
    mt_tensor_clear(&w_hh_t);
    return st;
}

/* step t's B rows of x */
static mt_tensor *
rows_of(tmp *s, mt_tensor *x, int64_t t, int64_t b)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_narrow(x, 0, t * b, b, &r), &r);
}

/* The states before each step in time order (T*B, cols): first (B, cols), then x's rows but
 * the last step's; reverse: x's rows but the first step's, then first. */
static mt_tensor *
previous_states(tmp *s, mt_tensor *x, mt_tensor *first, int64_t T, int64_t b, bool reverse)
{
    if (T == 1) {
        return first;
    }
    mt_tensor *r = NULL;
    mt_tensor *rest = failed(s, x, first)
                          ? NULL
                          : own(s, mt_op_narrow(x, 0, reverse ? b : 0, (T - 1) * b, &r), &r);
    if (failed(s, rest, rest)) {
        return NULL;
    }
    mt_tensor *parts[2] = {reverse ? rest : first, reverse ? first : rest};
    return own(s, mt_op_cat(2, parts, 0, &r), &r);
}

/* x^T y: (cols of x, cols of y), the product over all the rows */
static mt_tensor *
rows_product(tmp *s, mt_tensor *x, mt_tensor *y)
{
    mt_tensor *r = NULL, *xt = failed(s, x, y) ? NULL : own(s, mt_op_t(x, &r), &r);
    return failed(s, xt, xt) ? NULL : own(s, mt_op_mm(xt, y, &r), &r);
}

/* The workspace again, through ops that record (create_graph): the gates xw + h_prev W_hh^T. */
static mt_tensor *
recomputed_workspace(tmp *s, mt_tensor *xw, mt_tensor *h_prev, mt_tensor *w_hh)
{
    mt_tensor *r = NULL, *w_hh_t = failed(s, h_prev, w_hh) ? NULL : own(s, mt_op_t(w_hh, &r), &r);
    mt_tensor *hw = failed(s, w_hh_t, w_hh_t) ? NULL : own(s, mt_op_mm(h_prev, w_hh_t, &r), &r);
    return failed(s, hw, hw) ? NULL : own(s, mt_lstm_workspace_ops(xw, hw, &r), &r);
}

/* One step of the backward: from gh (B, P) and gc (B, H) or NULL, the gradients reaching h_t
 * and c_t, cx and cy its cell states before and after, ws its workspace: *dgates (B, 4H) and
 * *dcx (B, H). */
static mt_status
step_backward(mt_tensor *gh, mt_tensor *gc, mt_tensor *cx, mt_tensor *cy, mt_tensor *ws,
              mt_tensor *w_hr, mt_tensor **dgates, mt_tensor **dcx)
{
    tmp s = {0};
    mt_tensor *r[3] = {NULL, NULL, NULL}, *p = NULL;
    mt_tensor *gh_cell = gh;
    if (w_hr) {
        gh_cell = failed(&s, gh, w_hr) ? NULL : own(&s, mt_op_mm(gh, w_hr, &p), &p);
    }
    if (failed(&s, gh_cell, ws)) {
        return finish(&s);
    }
    mt_status st = mt_grad_enabled()
                       ? mt_lstm_cell_grads_ops(gh_cell, gc, cx, cy, ws, &r[0], &r[1])
                       : mt_op__thnn_fused_lstm_cell_backward_impl(gh_cell, gc, cx, cy, ws, false,
                                                                   &r[0], &r[1], &r[2]);
    give(&s, own(&s, st, &r[0]), dgates);
    give(&s, own(&s, st, &r[1]), dcx);
    return finish(&s);
}

mt_status
mt_lstm_layer_backward(mt_tensor *grad_out, mt_tensor *grad_cs, mt_tensor *const *in,
                       mt_tensor *out, mt_tensor *cs, mt_tensor *workspace, bool reverse,
                       const bool *want, mt_tensor **gi)
{
    mt_tensor *xw = in[0], *h0 = in[1], *c0 = in[2], *w_hh = in[3], *w_hr = in[4];
    const int64_t B = c0->sizes[0], H = c0->sizes[1], T = xw->sizes[0] / B;
    /* each step t's dgates (row t) and, with projection, gh (row T + t) */
    mt_tensor **kept = calloc(2 * (size_t)T, sizeof(*kept));
    if (kept == NULL) {
        return mt_fail(MT_ENOMEM, "_lstm_layer: out of memory for %lld steps", (long long)T);
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *h_prev = previous_states(&s, out, h0, T, B, reverse);
    mt_tensor *ws = mt_grad_enabled() ? recomputed_workspace(&s, xw, h_prev, w_hh) : workspace;
    if (grad_out == NULL && s.st == MT_OK) {
        grad_out = own(&s, mt_op_zeros(2, out->sizes, out->dtype, mt_tensor_device(out), false, &r),
                       &r);
    }
    /* owned: the gradients reaching the state of the step about to go back */
    mt_tensor *gh = NULL, *gc = NULL;
    for (int64_t k = T - 1; k >= 0 && s.st == MT_OK; k--) {
        const int64_t t = reverse ? T - 1 - k : k, before = reverse ? t + 1 : t - 1;
        tmp u = {0};
        mt_tensor *gh_t = gh ? gh : rows_of(&u, grad_out, t, B);
        mt_tensor *gc_t = gc;
        if (grad_cs) {
            mt_tensor *mine = rows_of(&u, grad_cs, t, B);
            gc_t = gc ? bin(&u, MT_OP_add, gc, mine) : mine;
        }
        mt_tensor *cx = k > 0 ? rows_of(&u, cs, before, B) : c0;
        mt_tensor *cy = rows_of(&u, cs, t, B), *ws_t = rows_of(&u, ws, t, B);
        mt_tensor *dgates = NULL, *dcx = NULL;
        if (!failed(&u, cx, cy) && !failed(&u, ws_t, gh_t)) {
            u.st = step_backward(gh_t, gc_t, cx, cy, ws_t, w_hr, &dgates, &dcx);
        }
        own(&u, u.st, &dgates);
        own(&u, u.st, &dcx);
        give(&u, dgates, &kept[t]);
        if (w_hr) {
            give(&u, gh_t, &kept[T + t]);
        }
        /* the gradient reaching the state before: dout there + dgates W_hh (h0's: no dout) */
        mt_tensor *next = NULL;
        if (k > 0) {
            mt_tensor *dout = rows_of(&u, grad_out, before, B);
            next = failed(&u, dout, dgates) ? NULL
                                            : own(&u,
                                                  mt_op_addmm(dout, dgates, w_hh, mt_scalar_int(1),
                                                              mt_scalar_int(1), &r),
                                                  &r);
        } else if (want[1]) {
            next = failed(&u, dgates, dgates) ? NULL : own(&u, mt_op_mm(dgates, w_hh, &r), &r);
        }
        mt_tensor_clear(&gh);
        mt_tensor_clear(&gc);
        if (next) {
            give(&u, next, &gh);
        }
        give(&u, dcx, &gc);
        s.st = finish(&u);
    }
    mt_tensor *dgates_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept, 0, &r), &r);
    if (want[0]) {
        give(&s, dgates_all, &gi[0]);
    }
    if (want[1]) {
        give(&s, gh, &gi[1]);
    }
    if (want[2]) {
        give(&s, gc, &gi[2]);
    }
    if (want[3]) {
        give(&s, rows_product(&s, dgates_all, h_prev), &gi[3]);
    }
    if (want[4] && w_hr) { /* h_cell = o tanh(c) of every step */
        mt_tensor *gh_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept + T, 0, &r), &r);
        mt_tensor *o = failed(&s, ws, ws) ? NULL : own(&s, mt_op_narrow(ws, 1, 3 * H, H, &r), &r);
        mt_tensor *h_cell = bin(&s, MT_OP_mul, o, un(&s, MT_OP_tanh, cs));
        give(&s, rows_product(&s, gh_all, h_cell), &gi[4]);
    }
    mt_tensor_clear(&gh);
    mt_tensor_clear(&gc);
    for (int64_t k = 0; k < 2 * T; k++) {
        mt_tensor_clear(&kept[k]);
    }
    free(kept);
    mt_status st = finish(&s);
    for (int k = 0; st && k < 5; k++) {
        mt_tensor_clear(&gi[k]);
    }
    return st;
}
