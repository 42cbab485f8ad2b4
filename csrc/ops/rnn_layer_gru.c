/* The GRU and Elman (tanh, relu) layer ops (ops.def's _gru_layer and _rnn_layer): one layer in
 * one direction, every time step, in one op, as the LSTM's (ops/rnn_layer.c), so that autograd
 * records one node a layer (GruLayerBackward0, RnnLayerBackward0) instead of a product and the
 * pointwise ops a step, and its backward makes W_hh's gradient one product over all the steps
 * (K = N). Written with ops, so every device runs them; nothing here touches data but
 * batch_sizes. ops/rnn.c runs them for every layer with no empty step; the steps and the rows
 * they share are ops/rnn_steps.h's.
 *
 * T steps, step t of bs[t] rows from row off[t], N rows in all, hidden size H: xw (N, G H) the
 * input projection x W_ih^T + b_ih (+ b_hh for tanh and relu, G = 1; GRU's G = 3 gates r, z, n
 * in PyTorch's order, its b_hh apart), h0 (B, H), w_hh (G H, H), b_hh (3H) or NULL. Forward,
 * step t (from the last one with reverse), h_prev the state before it (ops/rnn_steps.h):
 *     tanh, relu:  h_t = act(xw_t + h_prev W_hh^T)
 *     GRU:  hw = h_prev W_hh^T + b_hh;  r, z = sigmoid(xw_rz + hw_rz);  hn = hw_n;
 *           n = tanh(xw_n + r hn);  h_t = n + z (h_prev - n)
 * and GRU keeps r, z, n, hn as its workspace (N, 4H). Backward, the steps in the other order,
 * gh the gradient reaching h_t:
 *     tanh: d = gh (1 - h_t^2);  relu: d = gh where h_t > 0;  dxw_t = dhw_t = d
 *     GRU:  dn = gh (1 - z) (1 - n^2);  d(r, z) = (dn hn, gh (h_prev - n)) (r, z) (1 - (r, z));
 *           dxw_t = (d(r, z), dn);  dhw_t = (d(r, z), dn r);  direct = gh z
 *     gh_prev = dout_prev + direct + dhw_t W_hh  (the rows from h0 make dh0's)
 * then d(xw) = dxw_all (N, G H), dW_hh = dhw_all^T h_prev_all (G H, H), db_hh = dhw_all summed
 * over the rows. Where the backward records (create_graph) GRU's workspace is recomputed from
 * the inputs through ops, and tanh's and relu's read h_t, a result of the node. */
#include <stdlib.h>

#include "ops/nn.h"
#include "ops/rnn_steps.h"

typedef enum { LAYER_TANH, LAYER_RELU, LAYER_GRU } layer_kind;

static const char *const layer_name[] = {
    [LAYER_TANH] = "_rnn_layer", [LAYER_RELU] = "_rnn_layer", [LAYER_GRU] = "_gru_layer"};

/* columns [start, start + n) of x */
static mt_tensor *
cols(tmp *s, mt_tensor *x, int64_t start, int64_t n)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_narrow(x, 1, start, n, &r), &r);
}

/* 1 - x */
static mt_tensor *
one_minus(tmp *s, mt_tensor *x)
{
    return bin(s, MT_OP_sub, num(s, 1.0), x);
}

/* GRU's gates from xw and hw (B, 3H): parts[0] = (r, z) (B, 2H), parts[1] = n, parts[2] = hn
 * (B, H) */
static void
gru_gates(tmp *s, mt_tensor *xw, mt_tensor *hw, mt_tensor **parts)
{
    const int64_t H = failed(s, xw, hw) ? 0 : xw->sizes[1] / 3;
    parts[0] = un(s, MT_OP_sigmoid,
                  bin(s, MT_OP_add, cols(s, xw, 0, 2 * H), cols(s, hw, 0, 2 * H)));
    parts[2] = cols(s, hw, 2 * H, H);
    mt_tensor *rhn = bin(s, MT_OP_mul, cols(s, parts[0], 0, H), parts[2]);
    parts[1] = un(s, MT_OP_tanh, bin(s, MT_OP_add, cols(s, xw, 2 * H, H), rhn));
}

/* h' = n + z (h - n) */
static mt_tensor *
gru_state(tmp *s, mt_tensor *const *parts, mt_tensor *h)
{
    const int64_t H = failed(s, h, h) ? 0 : h->sizes[1];
    mt_tensor *z = cols(s, parts[0], H, H);
    return bin(s, MT_OP_add, parts[1], bin(s, MT_OP_mul, z, bin(s, MT_OP_sub, h, parts[1])));
}

/* the workspace (B, 4H): r, z, n, hn */
static mt_tensor *
gru_workspace(tmp *s, mt_tensor *const *parts)
{
    mt_tensor *r = NULL;
    if (failed(s, parts[0], parts[1]) || failed(s, parts[2], parts[2])) {
        return NULL;
    }
    return own(s, mt_op_cat(3, (mt_tensor *[]){parts[0], parts[1], parts[2]}, 1, &r), &r);
}

mt_status
mt_gru_step_ops(mt_tensor *xw, mt_tensor *hw, mt_tensor *h, mt_tensor **h_out)
{
    tmp s = {0};
    mt_tensor *parts[3];
    gru_gates(&s, xw, hw, parts);
    give(&s, gru_state(&s, parts, h), h_out);
    return finish(&s);
}

/* h W_hh^T (+ b_hh): the state's part of the gates, w_hh_t = W_hh^T */
static mt_tensor *
hidden_part(tmp *s, mt_tensor *h, mt_tensor *w_hh_t, mt_tensor *b_hh)
{
    mt_tensor *r = NULL;
    if (failed(s, h, w_hh_t)) {
        return NULL;
    }
    return own(s,
               b_hh ? mt_op_addmm(b_hh, h, w_hh_t, mt_scalar_int(1), mt_scalar_int(1), &r)
                    : mt_op_mm(h, w_hh_t, &r),
               &r);
}

/* xw (N, G H), h0 (B, H), w_hh (G H, H), b_hh (G H) or NULL: 2-D floats, then the steps */
static mt_status
check_layer(layer_kind kind, const mt_args *a, const mt_tensor *b_hh, const mt_tensor *batch_sizes,
            mt_rnn_steps *L)
{
    const char *op = layer_name[kind];
    const mt_tensor *xw = a->t[0], *h0 = a->t[1], *w_hh = a->t[2];
    const int64_t g = kind == LAYER_GRU ? 3 : 1;
    L->bs = NULL;
    if (xw->ndim != 2 || h0->ndim != 2 || w_hh->ndim != 2) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected 2-D tensors, got input_projection %d-D, h0 %d-D, w_hh %d-D",
                       op, xw->ndim, h0->ndim, w_hh->ndim);
    }
    if (!mt_dtype_is_float(xw->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s: expected input_projection of a float dtype, got %s", op,
                       mt_dtype_c_name(xw->dtype));
    }
    const int64_t b = h0->sizes[0], h = h0->sizes[1];
    if (b <= 0 || h <= 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected h0 of at least one row and column, got (%lld, %lld)", op,
                       (long long)b, (long long)h);
    }
    if (xw->sizes[1] != g * h || w_hh->sizes[0] != g * h || w_hh->sizes[1] != h ||
        (b_hh && (b_hh->ndim != 1 || b_hh->sizes[0] != g * h))) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected input_projection of %lld columns, w_hh (%lld, %lld)%s for "
                       "h0 (%lld, %lld), got input_projection (%lld, %lld), w_hh (%lld, %lld)",
                       op, (long long)(g * h), (long long)(g * h), (long long)h,
                       b_hh ? " and b_hh of as many elements as w_hh's rows" : "", (long long)b,
                       (long long)h, (long long)xw->sizes[0], (long long)xw->sizes[1],
                       (long long)w_hh->sizes[0], (long long)w_hh->sizes[1]);
    }
    return mt_rnn_steps_of(op, xw->sizes[0], xw->sizes[1], b, batch_sizes, L);
}

/* One forward step t: its h into made[t] and, GRU, its workspace into made[T + t]; prev the
 * step run before it (-1: none). */
static mt_status
step_forward(layer_kind kind, const mt_rnn_steps *L, mt_args *a, mt_tensor *w_hh_t, mt_tensor *b_hh,
             int64_t t, int64_t prev, mt_tensor **made)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *h = mt_rnn_state_before(&s, L, t, prev >= 0 ? made[prev] : NULL, a->t[1]);
    mt_tensor *xw_t = mt_rnn_rows_of(&s, a->t[0], L, t);
    if (kind == LAYER_GRU) {
        mt_tensor *parts[3];
        gru_gates(&s, xw_t, hidden_part(&s, h, w_hh_t, b_hh), parts);
        give(&s, gru_state(&s, parts, h), &made[t]);
        give(&s, gru_workspace(&s, parts), &made[L->T + t]);
        return finish(&s);
    }
    mt_tensor *pre = failed(&s, h, xw_t)
                         ? NULL
                         : own(&s,
                               mt_op_addmm(xw_t, h, w_hh_t, mt_scalar_int(1), mt_scalar_int(1), &r),
                               &r);
    give(&s, un(&s, kind == LAYER_TANH ? MT_OP_tanh : MT_OP_relu, pre), &made[t]);
    return finish(&s);
}

// xw (N, G H), h0 (B, H), w_hh (G H, H), b_hh (3H) or None, batch_sizes (T) or None
// -> out (N, H) and, GRU, the workspace (N, 4H)
static mt_status
run_layer(layer_kind kind, mt_args *a, mt_tensor *b_hh, mt_tensor *batch_sizes, bool reverse)
{
    mt_rnn_steps L;
    mt_status st = check_layer(kind, a, b_hh, batch_sizes, &L);
    if (st) {
        free(L.bs);
        return st;
    }
    const int64_t T = L.T;
    const int nout = kind == LAYER_GRU ? 2 : 1;
    /* each step t's h (row t) and, GRU, workspace (row T + t) */
    mt_tensor **made = calloc((size_t)nout * (size_t)T, sizeof(*made)), *w_hh_t = NULL;
    if (made == NULL) {
        free(L.bs);
        return mt_fail(MT_ENOMEM, "%s: out of memory for %lld steps", layer_name[kind],
                       (long long)T);
    }
    st = mt_rnn_weight_t(a->t[2], &w_hh_t);
    for (int64_t k = 0; k < T && st == MT_OK; k++) {
        const int64_t t = reverse ? T - 1 - k : k;
        st = step_forward(kind, &L, a, w_hh_t, b_hh, t,
                          k == 0    ? -1
                          : reverse ? t + 1
                                    : t - 1,
                          made);
    }
    for (int k = 0; k < nout && st == MT_OK; k++) {
        st = mt_op_cat((int)T, made + k * T, 0, &a->out[k]);
    }
    for (int k = 0; st && k < nout; k++) {
        mt_tensor_clear(&a->out[k]);
    }
    for (int64_t k = 0; k < nout * T; k++) {
        mt_tensor_clear(&made[k]);
    }
    free(made);
    free(L.bs);
    mt_tensor_clear(&w_hh_t);
    return st;
}

mt_status
mt_composite__gru_layer(mt_args *a)
{
    return run_layer(LAYER_GRU, a, a->t[3], a->t[4], a->b[0]);
}

mt_status
mt_composite__rnn_layer(mt_args *a)
{
    return run_layer(a->b[0] ? LAYER_RELU : LAYER_TANH, a, NULL, a->t[3], a->b[1]);
}

/* GRU's step backward: from gh, ws and hp (the state before the step), *dxw, *dhw (B, 3H) and
 * *direct = gh z (B, H), steps of s */
static void
gru_step_back(tmp *s, mt_tensor *gh, mt_tensor *ws, mt_tensor *hp, mt_tensor **dxw, mt_tensor **dhw,
              mt_tensor **direct)
{
    mt_tensor *r = NULL;
    const int64_t H = failed(s, hp, hp) ? 0 : hp->sizes[1];
    mt_tensor *rz = cols(s, ws, 0, 2 * H), *z = cols(s, ws, H, H), *n = cols(s, ws, 2 * H, H);
    mt_tensor *hn = cols(s, ws, 3 * H, H);
    mt_tensor *dn = bin(s, MT_OP_mul, bin(s, MT_OP_mul, gh, one_minus(s, z)),
                        one_minus(s, bin(s, MT_OP_mul, n, n)));
    mt_tensor *d[2] = {bin(s, MT_OP_mul, dn, hn), bin(s, MT_OP_mul, gh, bin(s, MT_OP_sub, hp, n))};
    mt_tensor *d_rz = failed(s, d[0], d[1]) ? NULL : own(s, mt_op_cat(2, d, 1, &r), &r);
    d_rz = bin(s, MT_OP_mul, d_rz, bin(s, MT_OP_mul, rz, one_minus(s, rz)));
    mt_tensor *dhn = bin(s, MT_OP_mul, dn, cols(s, rz, 0, H));
    *dxw = failed(s, d_rz, dn) ? NULL : own(s, mt_op_cat(2, (mt_tensor *[]){d_rz, dn}, 1, &r), &r);
    *dhw = failed(s, dhn, dhn) ? NULL : own(s, mt_op_cat(2, (mt_tensor *[]){d_rz, dhn}, 1, &r), &r);
    *direct = bin(s, MT_OP_mul, gh, z);
}

/* tanh's and relu's: the pre-activation's gradient from gh and the step's output y */
static mt_tensor *
act_back(tmp *s, layer_kind kind, mt_tensor *gh, mt_tensor *y)
{
    if (kind == LAYER_TANH) {
        return bin(s, MT_OP_mul, gh, one_minus(s, bin(s, MT_OP_mul, y, y)));
    }
    /* a select, as relu's own backward: an inf or NaN gradient where y is 0 stays 0 */
    mt_tensor *r = NULL;
    mt_tensor *zero = s->st ? NULL : own(s, mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &r), &r);
    return sel(s, bin(s, MT_OP_gt, y, zero), gh, zero);
}

/* What a step of the backward reads: the layer's results and states, all in time order */
typedef struct layer_back {
    layer_kind kind;
    const mt_rnn_steps *L;
    mt_tensor *grad_out, *out, *ws, *h_prev, *w_hh;
    bool want_h0;
} layer_back;

/* The backward of step t (prev: the step run before it, -1 for none): from *gh, the gradient
 * reaching its h (NULL: none yet but grad_out's), its dxw (into kept[t]) and, GRU, its dhw
 * (kept[T + t]); *gh becomes the gradient reaching prev's h (the first m rows of the step's own,
 * m = min(bs[t], bs[prev]), the rest from prev's outputs alone), and the step's rows beyond m,
 * which came from h0, make a piece of dh0 (first[*np]) where wanted. */
static mt_status
step_back(const layer_back *b, int64_t t, int64_t prev, mt_tensor **gh, mt_tensor **kept,
          mt_tensor **first, int64_t *np)
{
    const mt_rnn_steps *L = b->L;
    const int64_t n = L->bs[t], r_p = prev >= 0 ? L->bs[prev] : 0, m = r_p < n ? r_p : n;
    tmp u = {0};
    mt_tensor *r = NULL, *dxw = NULL, *dhw = NULL, *direct = NULL;
    mt_tensor *gh_t = *gh ? *gh : mt_rnn_rows_of(&u, b->grad_out, L, t);
    if (b->kind == LAYER_GRU) {
        gru_step_back(&u, gh_t, mt_rnn_rows_of(&u, b->ws, L, t),
                      mt_rnn_rows_of(&u, b->h_prev, L, t), &dxw, &dhw, &direct);
    } else {
        dxw = dhw = act_back(&u, b->kind, gh_t, mt_rnn_rows_of(&u, b->out, L, t));
    }
    give(&u, dxw, &kept[t]);
    if (b->kind == LAYER_GRU) {
        give(&u, dhw, &kept[L->T + t]);
    }
    mt_tensor *next = NULL;
    if (prev >= 0) { /* prev's own dout, plus on the first m rows direct + dhw W_hh */
        mt_tensor *dout = mt_rnn_rows_of(&u, b->grad_out, L, prev);
        mt_tensor *base = mt_rnn_some_rows(&u, dout, 0, m),
                  *dhw_m = mt_rnn_some_rows(&u, dhw, 0, m);
        base = direct ? bin(&u, MT_OP_add, base, mt_rnn_some_rows(&u, direct, 0, m)) : base;
        mt_tensor *top = failed(&u, base, dhw_m)
                             ? NULL
                             : own(&u,
                                   mt_op_addmm(base, dhw_m, b->w_hh, mt_scalar_int(1),
                                               mt_scalar_int(1), &r),
                                   &r);
        next = mt_rnn_padded(&u, top, dout, r_p);
    }
    if (n > m && b->want_h0) { /* rows [m, n) of the state came from h0 */
        mt_tensor *part = mt_rnn_some_rows(&u, dhw, m, n - m);
        mt_tensor *piece = failed(&u, part, part) ? NULL
                           : direct
                               ? own(&u,
                                     mt_op_addmm(mt_rnn_some_rows(&u, direct, m, n - m), part,
                                                 b->w_hh, mt_scalar_int(1), mt_scalar_int(1), &r),
                                     &r)
                               : own(&u, mt_op_mm(part, b->w_hh, &r), &r);
        give(&u, piece, &first[*np]);
        *np += u.st == MT_OK;
    }
    mt_tensor_clear(gh);
    if (next) {
        give(&u, next, gh);
    }
    return finish(&u);
}

/* GRU's workspace again through ops that record (create_graph), from xw and the states before
 * each step */
static mt_tensor *
recomputed_workspace(tmp *s, mt_tensor *xw, mt_tensor *h_prev, mt_tensor *w_hh, mt_tensor *b_hh)
{
    mt_tensor *r = NULL, *parts[3];
    mt_tensor *w_hh_t = failed(s, w_hh, w_hh) ? NULL : own(s, mt_op_t(w_hh, &r), &r);
    gru_gates(s, xw, hidden_part(s, h_prev, w_hh_t, b_hh), parts);
    return gru_workspace(s, parts);
}

// in: xw, h0, w_hh, b_hh (or NULL), batch_sizes (or NULL); out (N, H), workspace (GRU's);
// gi[k] for k < 4 that want[k]: d(xw), dh0, dW_hh, db_hh
static mt_status
layer_backward(layer_kind kind, mt_tensor *grad_out, mt_tensor *const *in, mt_tensor *out,
               mt_tensor *workspace, bool reverse, const bool *want, mt_tensor **gi)
{
    mt_tensor *h0 = in[1], *w_hh = in[2], *b_hh = in[3];
    mt_rnn_steps L;
    mt_status st = mt_rnn_steps_of(layer_name[kind], out->sizes[0], w_hh->sizes[0], h0->sizes[0],
                                   in[4], &L);
    const int64_t T = st ? 0 : L.T;
    /* each step t's dxw (row t) and, GRU, dhw (row T + t); dh0's pieces (row first[k]), from
     * the last rows of the batch back */
    mt_tensor **kept = st ? NULL : calloc(3 * (size_t)T, sizeof(*kept));
    if (kept == NULL) {
        free(L.bs);
        return st ? st
                  : mt_fail(MT_ENOMEM, "%s: out of memory for %lld steps", layer_name[kind],
                            (long long)T);
    }
    mt_tensor **first = kept + 2 * T;
    int64_t np = 0;
    tmp s = {0};
    mt_tensor *r = NULL;
    layer_back b = {kind, &L, grad_out, out, workspace, NULL, w_hh, want[1]};
    b.h_prev = mt_rnn_previous_states(&s, out, h0, &L, reverse);
    if (kind == LAYER_GRU && mt_grad_enabled()) {
        b.ws = recomputed_workspace(&s, in[0], b.h_prev, w_hh, b_hh);
    }
    if (grad_out == NULL) {
        b.grad_out = mt_rnn_zeros_like(&s, out);
    }
    mt_tensor *gh = NULL; /* owned: the gradient reaching the state of the step about to go back */
    for (int64_t k = T - 1; k >= 0 && s.st == MT_OK; k--) {
        const int64_t t = reverse ? T - 1 - k : k;
        s.st = step_back(&b, t, k == 0 ? -1 : reverse ? t + 1 : t - 1, &gh, kept, first, &np);
    }
    mt_tensor *dxw_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept, 0, &r), &r);
    mt_tensor *dhw_all = dxw_all;
    if (kind == LAYER_GRU && (want[2] || (want[3] && b_hh))) {
        dhw_all = s.st ? NULL : own(&s, mt_op_cat((int)T, kept + T, 0, &r), &r);
    }
    if (want[0]) {
        give(&s, dxw_all, &gi[0]);
    }
    if (want[1]) {
        give(&s, mt_rnn_cat_reversed(&s, first, np), &gi[1]);
    }
    if (want[2]) {
        give(&s, mt_rnn_rows_product(&s, dhw_all, b.h_prev), &gi[2]);
    }
    if (want[3] && b_hh && !failed(&s, dhw_all, dhw_all)) {
        const int64_t rows = 0;
        give(&s, own(&s, mt_op_sum(dhw_all, 1, &rows, false, -1, &r), &r), &gi[3]);
    }
    mt_tensor_clear(&gh);
    for (int64_t k = 0; k < 3 * T; k++) {
        mt_tensor_clear(&kept[k]);
    }
    free(kept);
    free(L.bs);
    st = finish(&s);
    for (int k = 0; st && k < 4; k++) {
        mt_tensor_clear(&gi[k]);
    }
    return st;
}

mt_status
mt_gru_layer_backward(mt_tensor *grad_out, mt_tensor *const *in, mt_tensor *out,
                      mt_tensor *workspace, bool reverse, const bool *want, mt_tensor **gi)
{
    return layer_backward(LAYER_GRU, grad_out, in, out, workspace, reverse, want, gi);
}

mt_status
mt_rnn_layer_backward(mt_tensor *grad_out, mt_tensor *const *in, mt_tensor *out, bool relu,
                      bool reverse, const bool *want, mt_tensor **gi)
{
    mt_tensor *const args[5] = {in[0], in[1], in[2], NULL, in[3]};
    const bool wants[4] = {want[0], want[1], want[2], false};
    return layer_backward(relu ? LAYER_RELU : LAYER_TANH, grad_out, args, out, NULL, reverse, wants,
                          gi);
}
