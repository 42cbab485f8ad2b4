/* The LSTM layer op (ops.def's _lstm_layer, PyTorch's mkldnn_rnn_layer on its CPU path): one
 * layer in one direction, every time step, in one op, so that autograd records one node a layer
 * (MkldnnRnnLayerBackward0) instead of a mm and a cell a step, and its backward makes W_hh's
 * gradient one product over all the steps (K = N) instead of T products added up.
 * Written with ops (mm and the fused cell of ops/rnn_cell.c), so every device runs it; nothing
 * here touches data but batch_sizes. ops/rnn.c runs it for every LSTM layer with no empty step.
 *
 * T steps, step t of bs[t] rows (all B = bs[0] without batch_sizes; a packed sequence's batch
 * shrinks step by step, as PyTorch's packed LSTM's), N rows in all, hidden size H, state size P
 * (H without projection): xw (N, 4H) the input projection x W_ih^T + the biases (ops/rnn.c),
 * step t's rows from off[t] = bs[0] + ... + bs[t - 1]; h0 (B, P), c0 (B, H), w_hh (4H, P), w_hr
 * (P, H) or NULL. Forward, step t (from the last one with reverse), PyTorch's gate order i, f, g, o,
 * h_prev the first bs[t] rows of the step before's h (with reverse, where the batch grows, that
 * step's h and then h0's rows beyond it; c_prev alike):
 *     gates_t = xw_t + h_prev W_hh^T;  h_t, c_t, ws_t = the fused cell;  h_t = h_t W_hr^T
 * Backward, the steps in the other order, gh the gradient reaching h_t, gc c_t's:
 *     gh_cell = gh W_hr;  dgates_t, gc = the cell's backward;  gh_prev = dout_prev + dgates_t W_hh
 * (on the rows the steps share; the rows that came from h0, c0 make dh0's and dc0's), then
 * d(xw) = dgates_all (N, 4H), dW_hh = dgates_all^T h_prev_all (4H, P), and
 * dW_hr = gh_all^T (o tanh(c))_all (P, H). */
#include <stdlib.h>

#include "ops/nn.h"
#include "ops/rnn_steps.h"

static mt_status
check_layer(const mt_args *a, mt_rnn_steps *L)
{
    static const char op[] = "_lstm_layer";
    const mt_tensor *xw = a->t[0], *h0 = a->t[1], *c0 = a->t[2], *w_hh = a->t[3], *w_hr = a->t[4];
    L->bs = NULL;
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
    if (xw->sizes[1] != 4 * h) {
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
    return mt_rnn_steps_of(op, xw->sizes[0], xw->sizes[1], b, a->t[5], L);
}

/* One forward step t: its h, c and workspace into made[t], made[T + t], made[2T + t]; prev the
 * step run before it (-1: none). */
static mt_status
step_forward(const mt_rnn_steps *L, mt_args *a, mt_tensor *w_hh_t, mt_tensor *w_hr_t, int64_t t,
             int64_t prev, mt_tensor **made)
{
    const int64_t T = L->T;
    tmp s = {0};
    mt_tensor *r = NULL, *h_cell = NULL;
    mt_tensor *h = mt_rnn_state_before(&s, L, t, prev >= 0 ? made[prev] : NULL, a->t[1]);
    mt_tensor *c = mt_rnn_state_before(&s, L, t, prev >= 0 ? made[T + prev] : NULL, a->t[2]);
    mt_tensor *xw_t = mt_rnn_rows_of(&s, a->t[0], L, t);
    mt_tensor *hw = failed(&s, h, c) ? NULL : own(&s, mt_op_mm(h, w_hh_t, &r), &r);
    if (!failed(&s, xw_t, hw)) {
        s.st = mt_op__thnn_fused_lstm_cell(xw_t, hw, c, NULL, NULL, w_hr_t ? &h_cell : &made[t],
                                           &made[T + t], &made[2 * T + t]);
    }
    h_cell = w_hr_t ? own(&s, s.st, &h_cell) : NULL;
    if (w_hr_t && !failed(&s, h_cell, h_cell)) {
        s.st = mt_op_mm(h_cell, w_hr_t, &made[t]);
    }
    return finish(&s);
}

// xw (N, 4H), h0 (B, P), c0 (B, H), w_hh (4H, P), w_hr (P, H) or None, batch_sizes (T) or None
// -> out (N, P), cs (N, H), workspace (N, 4H)
mt_status
mt_composite__lstm_layer(mt_args *a)
{
    mt_rnn_steps L;
    mt_status st = check_layer(a, &L);
    if (st) {
        free(L.bs);
        return st;
    }
    const int64_t T = L.T;
    const bool reverse = a->b[0];
    /* each step t's h (row t), c (row T + t) and workspace (row 2T + t) */
    mt_tensor **made = calloc(3 * (size_t)T, sizeof(*made));
    if (made == NULL) {
        free(L.bs);
        return mt_fail(MT_ENOMEM, "_lstm_layer: out of memory for %lld steps", (long long)T);
    }
    mt_tensor *w_hh_t = NULL, *w_hr_t = NULL;
    st = mt_rnn_weight_t(a->t[3], &w_hh_t);
    if (a->t[4]) {
        st = st ? st : mt_op_t(a->t[4], &w_hr_t);
    }
    for (int64_t k = 0; k < T && st == MT_OK; k++) {
        const int64_t t = reverse ? T - 1 - k : k;
        st = step_forward(&L, a, w_hh_t, w_hr_t, t, k == 0 ? -1 : reverse ? t + 1 : t - 1, made);
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
    free(L.bs);
    mt_tensor_clear(&w_hr_t);
    mt_tensor_clear(&w_hh_t);
    return st;
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

/* The backward of step t (prev: the step run before it, -1 for none): from gh and gc, the
 * gradients reaching its h and c (gc NULL: none yet), its dgates (into kept[t], and gh into
 * kept[T + t] with projection); *gh and *gc become the gradients reaching prev's h and c (the
 * first m rows of the step's own, m = min(bs[t], bs[prev]), the rest from prev's outputs alone),
 * and the step's rows beyond m, which came from h0 and c0, join dh0's and dc0's pieces
 * (first[*np] and first[T + *np]) where wanted. */
static mt_status
step_back(const mt_rnn_steps *L, mt_tensor *const *in, mt_tensor *grad_out, mt_tensor *grad_cs,
          mt_tensor *cs, mt_tensor *ws, const bool *want, int64_t t, int64_t prev, mt_tensor **gh,
          mt_tensor **gc, mt_tensor **kept, mt_tensor **first, int64_t *np)
{
    mt_tensor *c0 = in[2], *w_hh = in[3], *w_hr = in[4], *r = NULL;
    const int64_t T = L->T, n = L->bs[t], r_p = prev >= 0 ? L->bs[prev] : 0;
    const int64_t m = r_p < n ? r_p : n;
    tmp u = {0};
    mt_tensor *gh_t = *gh ? *gh : mt_rnn_rows_of(&u, grad_out, L, t);
    mt_tensor *gc_t = *gc;
    if (grad_cs) {
        mt_tensor *mine = mt_rnn_rows_of(&u, grad_cs, L, t);
        gc_t = *gc ? bin(&u, MT_OP_add, *gc, mine) : mine;
    }
    mt_tensor *cx = mt_rnn_state_before(&u, L, t,
                                        prev >= 0 ? mt_rnn_rows_of(&u, cs, L, prev) : NULL, c0);
    mt_tensor *cy = mt_rnn_rows_of(&u, cs, L, t), *ws_t = mt_rnn_rows_of(&u, ws, L, t);
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
    /* prev's: its own dout (and c's nothing) plus, on the first m rows, dgates W_hh and dcx */
    mt_tensor *next_h = NULL, *next_c = NULL;
    if (prev >= 0) {
        mt_tensor *dout = mt_rnn_rows_of(&u, grad_out, L, prev);
        mt_tensor *dout_m = mt_rnn_some_rows(&u, dout, 0, m),
                  *dgates_m = mt_rnn_some_rows(&u, dgates, 0, m);
        mt_tensor *top = failed(&u, dout_m, dgates_m)
                             ? NULL
                             : own(&u,
                                   mt_op_addmm(dout_m, dgates_m, w_hh, mt_scalar_int(1),
                                               mt_scalar_int(1), &r),
                                   &r);
        next_h = mt_rnn_padded(&u, top, dout, r_p);
        next_c = mt_rnn_padded(&u, mt_rnn_some_rows(&u, dcx, 0, m), NULL, r_p);
    }
    if (n > m && (want[1] || want[2])) { /* rows [m, n) of the state came from h0 and c0 */
        if (want[1] && !failed(&u, dgates, dgates)) {
            mt_tensor *part = mt_rnn_some_rows(&u, dgates, m, n - m);
            give(&u, failed(&u, part, part) ? NULL : own(&u, mt_op_mm(part, w_hh, &r), &r),
                 &first[*np]);
        }
        if (want[2]) {
            give(&u, mt_rnn_some_rows(&u, dcx, m, n - m), &first[T + *np]);
        }
        *np += u.st == MT_OK;
    }
    mt_tensor_clear(gh);
    mt_tensor_clear(gc);
    if (next_h) {
        give(&u, next_h, gh);
        give(&u, next_c, gc);
    }
    return finish(&u);
}

mt_status
mt_lstm_layer_backward(mt_tensor *grad_out, mt_tensor *grad_cs, mt_tensor *const *in,
                       mt_tensor *out, mt_tensor *cs, mt_tensor *workspace, bool reverse,
                       const bool *want, mt_tensor **gi)
{
    mt_tensor *xw = in[0], *h0 = in[1], *c0 = in[2], *w_hh = in[3], *w_hr = in[4];
    const int64_t H = c0->sizes[1];
    mt_rnn_steps L;
    mt_status st = mt_rnn_steps_of("_lstm_layer", xw->sizes[0], xw->sizes[1], c0->sizes[0], in[5],
                                   &L);
    const int64_t T = st ? 0 : L.T;
    /* each step t's dgates (row t) and, with projection, gh (row T + t); dh0's pieces (row
     * first[k]) and dc0's (first[T + k]), from the last rows of the batch back */
    mt_tensor **kept = st ? NULL : calloc(4 * (size_t)T, sizeof(*kept));
    if (kept == NULL) {
        free(L.bs);
        return st ? st
                  : mt_fail(MT_ENOMEM, "_lstm_layer: out of memory for %lld steps", (long long)T);
    }
    mt_tensor **first = kept + 2 * T;
    int64_t np = 0;
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *h_prev = mt_rnn_previous_states(&s, out, h0, &L, reverse);
    mt_tensor *ws = mt_grad_enabled() ? recomputed_workspace(&s, xw, h_prev, w_hh) : workspace;
    if (grad_out == NULL && s.st == MT_OK) {
        grad_out = mt_rnn_zeros_like(&s, out);
    }
    /* owned: the gradients reaching the state of the step about to go back */
    mt_tensor *gh = NULL, *gc = NULL;
    for (int64_t k = T - 1; k >= 0 && s.st == MT_OK; k--) {
        const int64_t t = reverse ? T - 1 - k : k;
        s.st = step_back(&L, in, grad_out, grad_cs, cs, ws, want, t,
                         k == 0    ? -1
                         : reverse ? t + 1
                                   : t - 1,
                         &gh, &gc, kept, first, &np);
    }
    mt_tensor *dgates_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept, 0, &r), &r);
    if (want[0]) {
        give(&s, dgates_all, &gi[0]);
    }
    if (want[1]) {
        give(&s, mt_rnn_cat_reversed(&s, first, np), &gi[1]);
    }
    if (want[2]) {
        give(&s, mt_rnn_cat_reversed(&s, first + T, np), &gi[2]);
    }
    if (want[3]) {
        give(&s, mt_rnn_rows_product(&s, dgates_all, h_prev), &gi[3]);
    }
    if (want[4] && w_hr) { /* h_cell = o tanh(c) of every step */
        mt_tensor *gh_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept + T, 0, &r), &r);
        mt_tensor *o = failed(&s, ws, ws) ? NULL : own(&s, mt_op_narrow(ws, 1, 3 * H, H, &r), &r);
        mt_tensor *h_cell = bin(&s, MT_OP_mul, o, un(&s, MT_OP_tanh, cs));
        give(&s, mt_rnn_rows_product(&s, gh_all, h_cell), &gi[4]);
    }
    mt_tensor_clear(&gh);
    mt_tensor_clear(&gc);
    for (int64_t k = 0; k < 4 * T; k++) {
        mt_tensor_clear(&kept[k]);
    }
    free(kept);
    free(L.bs);
    st = finish(&s);
    for (int k = 0; st && k < 5; k++) {
        mt_tensor_clear(&gi[k]);
    }
    return st;
}
