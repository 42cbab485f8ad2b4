/* The recurrent networks of ATen's RNN.cpp as composites: lstm, gru, rnn_tanh, rnn_relu (each
 * with its packed overload, <op>_data, whose rows of time step t are the first batch_sizes[t]
 * sequences) and the cells lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell.
 *
 * As ATen's CPU path: per layer and direction one linear gives the input projection of every
 * time step, (N, G * H) = x (N, F) W_ih^T + b_ih (+ b_hh but for GRU, whose n gate needs
 * W_hn h + b_hn apart), then each step is one addmm of the state onto its rows (a linear of the
 * state for GRU; for LSTM a mm of the state, its rows and the cell's pointwise ops one
 * _thnn_fused_lstm_cell, ops/rnn_cell.c) and the cell's pointwise ops, with PyTorch's gate
 * order (LSTM i, f, g, o; GRU r, z, n with
 * n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). Everything is an op through the dispatcher, so
 * autograd records the pieces and every device runs them; nothing here touches data but
 * batch_sizes (a CPU int64 tensor, as PyTorch's). Dropout (train only) goes between layers.
 * A layer runs its steps as one op, _lstm_layer (ops/rnn_layer.c, PyTorch's mkldnn_rnn_layer),
 * _gru_layer or _rnn_layer (ops/rnn_layer_gru.c), which autograd records as one node with a
 * backward of its own, packed sequences of unequal lengths too (their batch_sizes go with it);
 * only a packed batch with an empty step takes the steps here, one cell a step. */
#include <stdlib.h>

#include "ops/nn.h"
#include "ops/op_chain.h"

typedef enum { CELL_TANH, CELL_RELU, CELL_LSTM, CELL_GRU } cell_kind;

static const int64_t gates_of[] = {
    [CELL_TANH] = 1, [CELL_RELU] = 1, [CELL_LSTM] = 4, [CELL_GRU] = 3};

/* One layer and direction's weights: w_ih (G*H, F), w_hh (G*H, P), b_ih and b_hh (G*H) or
 * NULL, w_hr (P, H) or NULL (LSTM's proj_size). */
typedef struct cell_params {
    mt_tensor *w_ih, *w_hh, *b_ih, *b_hh, *w_hr;
} cell_params;

/* The input projection of x (N, F): xw (N, G*H) = x W_ih^T + b_ih, plus b_hh but for GRU (one
 * bias add for all N rows, where a step would add b_hh to its B rows); either bias may be
 * absent (the cells take None). */
static mt_status
input_projection(cell_kind kind, mt_tensor *x, const cell_params *p, mt_tensor **xw)
{
    if (kind == CELL_GRU || p->b_hh == NULL) {
        return mt_op_linear(x, p->w_ih, p->b_ih, xw);
    }
    if (p->b_ih == NULL) {
        return mt_op_linear(x, p->w_ih, p->b_hh, xw);
    }
    mt_tensor *bias = NULL;
    mt_status st = mt_op_add(p->b_ih, p->b_hh, mt_scalar_int(1), &bias);
    st = st ? st : mt_op_linear(x, p->w_ih, bias, xw);
    mt_tensor_clear(&bias);
    return st;
}

/* One time step: xw (B, G*H) its rows of input_projection, h (B, P), c (B, H) for LSTM (else
 * NULL) -> h' and, for LSTM, c' (new references). w_hh_t is W_hh^T (P, G*H). */
static mt_status
cell_step(cell_kind kind, mt_tensor *xw, mt_tensor *h, mt_tensor *c, const cell_params *p,
          mt_tensor *w_hh_t, mt_tensor **h_out, mt_tensor **c_out)
{
    mt_tensor *hw = NULL, *sum = NULL, *h_full = NULL, *ws = NULL;
    mt_status st = MT_OK;
    if (kind == CELL_GRU) {
        st = mt_op_linear(h, p->w_hh, p->b_hh, &hw);
    } else if (kind == CELL_LSTM) { /* the state's part of the gates, h W_hh^T */
        st = mt_op_mm(h, w_hh_t, &hw);
    } else { /* the pre-activations xw + h W_hh^T, b_hh in xw */
        st = mt_op_addmm(xw, h, w_hh_t, mt_scalar_int(1), mt_scalar_int(1), &sum);
    }
    if (st) {
        return st;
    }
    switch (kind) {
    case CELL_TANH:
    case CELL_RELU:
        st = kind == CELL_TANH ? mt_op_tanh(sum, h_out) : mt_op_relu(sum, h_out);
        break;
    case CELL_LSTM: /* one op for the gates' pointwise part (b_hh in xw) */
        st = mt_op__thnn_fused_lstm_cell(xw, hw, c, NULL, NULL, p->w_hr ? &h_full : h_out, c_out,
                                         &ws);
        if (st == MT_OK && p->w_hr) {
            st = mt_op_linear(h_full, p->w_hr, NULL, h_out);
        }
        break;
    case CELL_GRU:
        st = mt_gru_step_ops(xw, hw, h, h_out);
        break;
    }
    mt_tensor_clear(&ws);
    mt_tensor_clear(&h_full);
    mt_tensor_clear(&sum);
    mt_tensor_clear(&hw);
    return st;
}

/* The weights' shapes the steps rely on: w_ih (G*H, *) and w_hh (G*H, *) 2-D, hidden H the
 * cell's (c's for LSTM), w_hr (P, H) where given. */
static mt_status
check_weights(cell_kind kind, const cell_params *p, int64_t hidden)
{
    int64_t rows = gates_of[kind] * hidden;
    if (p->w_ih->ndim != 2 || p->w_hh->ndim != 2 || p->w_ih->sizes[0] != rows ||
        p->w_hh->sizes[0] != rows) {
        return mt_fail(MT_ERUNTIME,
                       "rnn: expected weight_ih and weight_hh of %lld rows (%lld gates of hidden "
                       "size %lld), 2-D, got %d-D and %d-D weights of %lld and %lld rows",
                       (long long)rows, (long long)gates_of[kind], (long long)hidden, p->w_ih->ndim,
                       p->w_hh->ndim, (long long)p->w_ih->sizes[0], (long long)p->w_hh->sizes[0]);
    }
    if (p->w_hr && (p->w_hr->ndim != 2 || p->w_hr->sizes[1] != hidden)) {
        return mt_fail(MT_ERUNTIME, "rnn: expected weight_hr of %lld columns, got a %d-D tensor",
                       (long long)hidden, p->w_hr->ndim);
    }
    return MT_OK;
}

/* PyTorch's CPU message for a state h of another dtype than the weights (its product with W_hh
 * is a linear there); other devices leave it to the product's own check. */
static mt_status
check_state_dtype(const mt_tensor *h, const mt_tensor *w_hh)
{
    if (h->dtype == w_hh->dtype || mt_tensor_device(h).type != MT_CPU) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME, "mat1 and mat2 must have the same dtype, but got %s and %s",
                   mt_dtype_scalar_name(h->dtype), mt_dtype_scalar_name(w_hh->dtype));
}

/* ---- the cells ---- */

/* PyTorch's check_rnn_cell_forward_hidden for state k */
static mt_status
check_cell_hidden(const mt_tensor *input, const mt_tensor *hx, int64_t hidden, int k)
{
    if (input->ndim < 1 || hx->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "hidden%d must be 2-D, got %d-D", k, hx->ndim);
    }
    if (input->sizes[0] != hx->sizes[0]) {
        return mt_fail(MT_ERUNTIME, "Input batch size %lld doesn't match hidden%d batch size %lld",
                       (long long)input->sizes[0], k, (long long)hx->sizes[0]);
    }
    if (hx->sizes[1] != hidden) {
        return mt_fail(MT_ERUNTIME,
                       "hidden%d has inconsistent hidden_size: got %lld, expected %lld", k,
                       (long long)hx->sizes[1], (long long)hidden);
    }
    return MT_OK;
}

/* input (B, F), hx[nh] (B, H), w_ih (G*H, F), w_hh (G*H, H), b_ih, b_hh: one step, as ATen's
 * cells: PyTorch's checks of the sizes, then W_ih x + b_ih and the step. */
static mt_status
run_cell(cell_kind kind, mt_args *a, mt_tensor *const *hx, int nh)
{
    mt_tensor *input = a->t[0];
    cell_params p = {a->t[nh == 2 ? 1 : 2], a->t[nh == 2 ? 2 : 3], a->t[nh == 2 ? 3 : 4],
                     a->t[nh == 2 ? 4 : 5], NULL};
    if (input->ndim != 2 || p.w_ih->ndim != 2 || p.w_hh->ndim != 2) {
        return mt_fail(MT_ERUNTIME,
                       "rnn cell: expected a 2-D input and 2-D weights, got %d-D, %d-D and %d-D",
                       input->ndim, p.w_ih->ndim, p.w_hh->ndim);
    }
    mt_status st = check_weights(kind, &p, p.w_hh->sizes[1]);
    if (st) {
        return st;
    }
    if (input->sizes[1] != p.w_ih->sizes[1]) {
        return mt_fail(MT_ERUNTIME, "input has inconsistent input_size: got %lld expected %lld",
                       (long long)input->sizes[1], (long long)p.w_ih->sizes[1]);
    }
    for (int k = 0; k < nh && st == MT_OK; k++) {
        st = check_cell_hidden(input, hx[k], p.w_hh->sizes[1], k);
    }
    st = st ? st : check_state_dtype(hx[0], p.w_hh);
    mt_tensor *xw = NULL, *w_hh_t = NULL;
    st = st ? st : input_projection(kind, input, &p, &xw);
    st = st ? st : mt_op_t(p.w_hh, &w_hh_t);
    st = st ? st
            : cell_step(kind, xw, hx[0], nh == 2 ? hx[1] : NULL, &p, w_hh_t, &a->out[0],
                        &a->out[1]);
    mt_tensor_clear(&w_hh_t);
    mt_tensor_clear(&xw);
    return st;
}

mt_status
mt_composite_lstm_cell(mt_args *a)
{
    if (a->ntl != 2) {
        return mt_fail(MT_ERUNTIME, "lstm_cell expects two hidden states");
    }
    return run_cell(CELL_LSTM, a, a->tl, 2);
}

mt_status
mt_composite_gru_cell(mt_args *a)
{
    return run_cell(CELL_GRU, a, &a->t[1], 1);
}

mt_status
mt_composite_rnn_tanh_cell(mt_args *a)
{
    return run_cell(CELL_TANH, a, &a->t[1], 1);
}

mt_status
mt_composite_rnn_relu_cell(mt_args *a)
{
    return run_cell(CELL_RELU, a, &a->t[1], 1);
}

/* ---- the stacked, possibly bidirectional networks ---- */

/* One call's shape: T steps of bs[t] rows each (off[t] the first), L layers, D directions. */
typedef struct rnn_plan {
    cell_kind kind;
    int64_t steps, *bs, *off;
    int layers, dirs, per; /* per: tensors of params per layer and direction */
    bool biases, proj, train;
    bool whole_batch; /* every step has all B > 0 rows (padded, or packed of equal lengths) */
    mt_tensor *batch_sizes; /* a packed call's (borrowed), NULL for a padded one */
    double dropout;
} rnn_plan;

/* The k-th layer and direction's weights out of params, laid out as PyTorch's: w_ih, w_hh, then
 * b_ih, b_hh with biases, then w_hr with projections. */
static cell_params
params_of(const rnn_plan *pl, mt_tensorlist params, int k)
{
    mt_tensor *const *w = params.t + (int64_t)k * pl->per;
    return (cell_params){w[0], w[1], pl->biases ? w[2] : NULL, pl->biases ? w[3] : NULL,
                         pl->proj ? w[pl->per - 1] : NULL};
}

/* The states of the rows still running after a change of batch: forward, rows [n, rows) leave
 * (kept in *left); reverse, rows [rows, n) join from their initial state h0 (rows of (B, P)). */
static mt_status
resize_state(mt_tensor **h, mt_tensor *h0, int64_t n, mt_tensor **left)
{
    int64_t rows = (*h)->sizes[0];
    mt_tensor *next = NULL, *extra = NULL;
    mt_status st;
    if (n < rows) {
        st = mt_op_narrow(*h, 0, n, rows - n, left);
        st = st ? st : mt_op_narrow(*h, 0, 0, n, &next);
    } else {
        st = mt_op_narrow(h0, 0, rows, n - rows, &extra);
        st = st ? st : mt_op_cat(2, (mt_tensor *[]){*h, extra}, 0, &next);
    }
    mt_tensor_clear(&extra);
    if (st == MT_OK) {
        mt_tensor_clear(h);
        *h = next;
    }
    return st;
}

/* The last states (B, cols) out of the states after every step x (N, cols): running in reverse,
 * the first step's rows; forward, each sequence's last step's row: the rows of the last step,
 * then those that left the batch at each step before it (packed sequences), last first. */
static mt_status
last_states(const rnn_plan *pl, bool reverse, mt_tensor *x, mt_tensor **r)
{
    const int64_t T = pl->steps;
    if (reverse || pl->bs[T - 1] == pl->bs[0]) {
        return mt_op_narrow(x, 0, pl->off[reverse ? 0 : T - 1], pl->bs[0], r);
    }
    mt_tensor **parts = calloc((size_t)T, sizeof(*parts));
    if (parts == NULL) {
        return mt_fail(MT_ENOMEM, "rnn: out of memory for %lld steps", (long long)T);
    }
    mt_status st = MT_OK;
    int n = 0;
    for (int64_t t = T - 1; t >= 0 && st == MT_OK; t--) {
        const int64_t stay = t + 1 < T ? pl->bs[t + 1] : 0; /* the rows going on to step t + 1 */
        if (pl->bs[t] > stay) {
            st = mt_op_narrow(x, 0, pl->off[t] + stay, pl->bs[t] - stay, &parts[n++]);
        }
    }
    st = st ? st : mt_op_cat(n, parts, 0, r);
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&parts[k]);
    }
    free(parts);
    return st;
}

/* A layer in one direction with no empty step: one op of all its steps (_lstm_layer,
 * ops/rnn_layer.c; _gru_layer and _rnn_layer, ops/rnn_layer_gru.c), whose backward makes W_hh's
 * gradient one product; packed sequences of unequal lengths hand it their batch_sizes. */
static mt_status
run_layer_op(const rnn_plan *pl, const cell_params *p, bool reverse, mt_tensor *x, mt_tensor *h0,
             mt_tensor *c0, mt_tensor **out, mt_tensor **h_n, mt_tensor **c_n)
{
    mt_tensor *xw = NULL, *cs = NULL, *ws = NULL;
    mt_tensor *batch_sizes = pl->whole_batch ? NULL : pl->batch_sizes;
    mt_status st = input_projection(pl->kind, x, p, &xw);
    if (st == MT_OK && pl->kind == CELL_LSTM) {
        st = mt_op__lstm_layer(xw, h0, c0, p->w_hh, p->w_hr, reverse, batch_sizes, out, &cs, &ws);
    } else if (st == MT_OK && pl->kind == CELL_GRU) {
        st = mt_op__gru_layer(xw, h0, p->w_hh, p->b_hh, reverse, batch_sizes, out, &ws);
    } else if (st == MT_OK) {
        st = mt_op__rnn_layer(xw, h0, p->w_hh, pl->kind == CELL_RELU, reverse, batch_sizes, out);
    }
    st = st ? st : last_states(pl, reverse, *out, h_n);
    if (pl->kind == CELL_LSTM) {
        st = st ? st : last_states(pl, reverse, cs, c_n);
    }
    mt_tensor_clear(&ws);
    mt_tensor_clear(&cs);
    mt_tensor_clear(&xw);
    return st;
}

/* One layer in one direction: x (N, F) -> out (N, P), and its last states h_n (B, P) and, for
 * LSTM, c_n (B, H); h0 (B, P) and c0 (B, H) (or NULL) its initial states. */
static mt_status
run_direction(const rnn_plan *pl, const cell_params *p, bool reverse, mt_tensor *x, mt_tensor *h0,
              mt_tensor *c0, mt_tensor **out, mt_tensor **h_n, mt_tensor **c_n)
{
    int64_t T = pl->steps;
    bool lstm = c0 != NULL;
    if (pl->bs[T - 1] > 0) {
        return run_layer_op(pl, p, reverse, x, h0, c0, out, h_n, c_n);
    }
    /* outs[t]: step t's output; left[]: states of the rows that left the batch, forward
     * (h then c, 2 per change of batch; at most T - 1 changes) */
    mt_tensor **outs = calloc((size_t)(3 * T + 2), sizeof(*outs));
    if (outs == NULL) {
        return mt_fail(MT_ENOMEM, "rnn: out of memory for %lld steps", (long long)T);
    }
    mt_tensor **left = outs + T;
    int64_t nleft = 0;
    mt_tensor *xw = NULL, *h = NULL, *c = NULL, *xw_t = NULL, *h_next = NULL, *c_next = NULL;
    mt_tensor *w_hh_t = NULL;
    int64_t first = reverse ? T - 1 : 0;
    mt_status st = input_projection(pl->kind, x, p, &xw);
    st = st ? st : mt_op_t(p->w_hh, &w_hh_t);
    st = st ? st : mt_op_narrow(h0, 0, 0, pl->bs[first], &h);
    if (lstm) {
        st = st ? st : mt_op_narrow(c0, 0, 0, pl->bs[first], &c);
    }
    for (int64_t s = 0; s < T && st == MT_OK; s++) {
        int64_t t = reverse ? T - 1 - s : s, n = pl->bs[t];
        if (n != h->sizes[0]) {
            bool shrinks = n < h->sizes[0];
            st = resize_state(&h, h0, n, &left[2 * nleft]);
            if (lstm) {
                st = st ? st : resize_state(&c, c0, n, &left[2 * nleft + 1]);
            }
            nleft += shrinks;
        }
        st = st ? st : mt_op_narrow(xw, 0, pl->off[t], n, &xw_t);
        st = st ? st : cell_step(pl->kind, xw_t, h, c, p, w_hh_t, &h_next, &c_next);
        mt_tensor_clear(&xw_t);
        if (st == MT_OK) {
            mt_tensor_clear(&h);
            mt_tensor_clear(&c);
            h = h_next;
            c = c_next;
            outs[t] = mt_tensor_retain(h);
            h_next = c_next = NULL;
        }
    }
    st = st ? st : mt_op_cat((int)T, outs, 0, out);
    if (st == MT_OK && nleft > 0) {
        mt_tensor **parts = calloc((size_t)(nleft + 1), sizeof(*parts));
        if (parts == NULL) {
            st = mt_fail(MT_ENOMEM, "rnn: out of memory for %lld steps", (long long)T);
        }
        for (int which = 0; which < 1 + lstm && st == MT_OK; which++) {
            /* the rows that ran to the end, then those that left, last first */
            parts[0] = which ? c : h;
            for (int64_t k = 0; k < nleft; k++) {
                parts[1 + k] = left[2 * (nleft - 1 - k) + which];
            }
            st = mt_op_cat((int)(nleft + 1), parts, 0, which ? c_n : h_n);
        }
        free(parts);
    } else if (st == MT_OK) {
        *h_n = mt_tensor_retain(h);
        *c_n = lstm ? mt_tensor_retain(c) : NULL;
    }
    for (int64_t k = 0; k < 3 * T + 2; k++) {
        mt_tensor_clear(&outs[k]);
    }
    free(outs);
    mt_tensor_clear(&w_hh_t);
    mt_tensor_clear(&xw);
    mt_tensor_clear(&h);
    mt_tensor_clear(&c);
    return st;
}

/* The T steps' batch sizes and first rows: all B for a padded (T, B, F) input, batch_sizes'
 * for a packed (N, F) one (checked: a CPU int64 vector whose sizes sum to N, none growing). */
static mt_status
plan_steps(rnn_plan *pl, const mt_tensor *x, const mt_tensor *batch_sizes)
{
    if (batch_sizes && (batch_sizes->ndim != 1 || batch_sizes->dtype != MT_INT64 ||
                        mt_tensor_device(batch_sizes).type != MT_CPU)) {
        return mt_fail(MT_ERUNTIME, "batch_sizes should be a 1-D CPU int64 tensor");
    }
    pl->steps = batch_sizes ? batch_sizes->sizes[0] : x->sizes[0];
    if (pl->steps <= 0) {
        return mt_fail(MT_ERUNTIME, "rnn: expected a sequence of at least one step, got %lld",
                       (long long)pl->steps);
    }
    pl->bs = malloc(2 * (size_t)pl->steps * sizeof(int64_t));
    if (pl->bs == NULL) {
        return mt_fail(MT_ENOMEM, "rnn: out of memory for %lld steps", (long long)pl->steps);
    }
    pl->off = pl->bs + pl->steps;
    const int64_t *v = batch_sizes ? (const int64_t *)mt_tensor_data(batch_sizes) : NULL;
    int64_t rows = 0;
    for (int64_t t = 0; t < pl->steps; t++) {
        pl->bs[t] = v ? v[t * batch_sizes->strides[0]] : x->sizes[1];
        pl->off[t] = rows;
        rows += pl->bs[t];
        if (pl->bs[t] < 0 || (t > 0 && pl->bs[t] > pl->bs[t - 1])) {
            return mt_fail(MT_ERUNTIME,
                           "batch_sizes must be non-negative and non-increasing, got "
                           "%lld after %lld",
                           (long long)pl->bs[t], (long long)(t ? pl->bs[t - 1] : 0));
        }
    }
    if (batch_sizes && rows != x->sizes[0]) {
        return mt_fail(MT_ERUNTIME, "batch_sizes sum to %lld but the packed input has %lld rows",
                       (long long)rows, (long long)x->sizes[0]);
    }
    pl->whole_batch = pl->bs[0] > 0 && pl->bs[pl->steps - 1] == pl->bs[0];
    return MT_OK;
}

/* PyTorch's checks of the call: the number of parameters and the state's shape. */
static mt_status
check_rnn(const rnn_plan *pl, mt_tensorlist params, const mt_tensor *x, bool packed,
          const mt_tensor *h0, const mt_tensor *c0)
{
    if (x->ndim != (packed ? 2 : 3)) {
        return mt_fail(MT_ERUNTIME, "input must have %d dimensions, got %d", packed ? 2 : 3,
                       x->ndim);
    }
    if (pl->layers <= 0 || params.n % pl->per != 0 ||
        params.n != (int64_t)pl->layers * pl->dirs * pl->per) {
        return mt_fail(MT_ERUNTIME, "got an incorrect number of RNN parameters");
    }
    for (int k = 0; k < 1 + (c0 != NULL); k++) {
        const mt_tensor *s = k ? c0 : h0;
        if (s->ndim != 3 || s->sizes[0] != (int64_t)pl->layers * pl->dirs) {
            return mt_fail(MT_ERUNTIME,
                           "Expected hidden%s of %d layers and directions (3-D), got %d-D",
                           k ? "[1]" : "", pl->layers * pl->dirs, s->ndim);
        }
    }
    int64_t hidden = (c0 ? c0 : h0)->sizes[2];
    for (int k = 0; k < pl->layers * pl->dirs; k++) {
        cell_params p = params_of(pl, params, k);
        mt_status st = check_weights(pl->kind, &p, hidden);
        if (st) {
            return st;
        }
    }
    return check_state_dtype(h0, params.t[1]);
}

/* All layers: x (N, F) the time-major rows -> *out (N, D*P), h_n (L*D, B, P), c_n (L*D, B, H). */
static mt_status
run_layers(const rnn_plan *pl, mt_tensorlist params, mt_tensor *x, mt_tensor *h0, mt_tensor *c0,
           mt_tensor **out, mt_tensor **h_n, mt_tensor **c_n)
{
    int n = pl->layers * pl->dirs;
    mt_tensor **hn = calloc(2 * (size_t)n, sizeof(*hn));
    if (hn == NULL) {
        return mt_fail(MT_ENOMEM, "rnn: out of memory for %d layers", pl->layers);
    }
    mt_tensor **cn = hn + n;
    mt_tensor *layer_in = mt_tensor_retain(x);
    mt_status st = MT_OK;
    for (int l = 0; l < pl->layers && st == MT_OK; l++) {
        mt_tensor *outd[2] = {NULL, NULL}, *h0k = NULL, *c0k = NULL, *y = NULL;
        for (int d = 0; d < pl->dirs && st == MT_OK; d++) {
            int k = l * pl->dirs + d;
            cell_params p = params_of(pl, params, k);
            st = mt_op_select(h0, 0, k, &h0k);
            if (c0) {
                st = st ? st : mt_op_select(c0, 0, k, &c0k);
            }
            st = st ? st
                    : run_direction(pl, &p, d == 1, layer_in, h0k, c0k, &outd[d], &hn[k], &cn[k]);
            mt_tensor_clear(&h0k);
            mt_tensor_clear(&c0k);
        }
        if (st == MT_OK) {
            st = pl->dirs == 2 ? mt_op_cat(2, outd, -1, &y) : mt_op_alias(outd[0], &y);
        }
        if (st == MT_OK && pl->dropout > 0 && pl->train && l < pl->layers - 1) {
            mt_tensor *dropped = NULL;
            st = mt_op_dropout(y, mt_scalar_float(pl->dropout), true, &dropped);
            mt_tensor_clear(&y);
            y = dropped;
        }
        mt_tensor_clear(&outd[0]);
        mt_tensor_clear(&outd[1]);
        mt_tensor_clear(&layer_in);
        layer_in = y;
    }
    st = st ? st : mt_op_stack(n, hn, 0, h_n);
    if (c0) {
        st = st ? st : mt_op_stack(n, cn, 0, c_n);
    }
    if (st == MT_OK) {
        *out = layer_in;
        layer_in = NULL;
    }
    mt_tensor_clear(&layer_in);
    for (int k = 0; k < 2 * n; k++) {
        mt_tensor_clear(&hn[k]);
    }
    free(hn);
    return st;
}

/* The op: input (T, B, F) ((B, T, F) batch_first) or packed (N, F) with batch_sizes; h0
 * (L*D, B, P), c0 (L*D, B, H) for LSTM -> a->out: output, h_n (and c_n). */
static mt_status
run_rnn(cell_kind kind, mt_args *a, mt_tensor *input, mt_tensor *batch_sizes, mt_tensor *h0,
        mt_tensor *c0, mt_tensorlist params, bool batch_first)
{
    rnn_plan pl = {.kind = kind,
                   .layers = (int)a->i[0],
                   .dirs = a->b[2] ? 2 : 1,
                   .biases = a->b[0],
                   .proj = c0 && h0->ndim == 3 && c0->ndim == 3 && h0->sizes[2] != c0->sizes[2],
                   .train = a->b[1],
                   .batch_sizes = batch_sizes,
                   .dropout = a->f[0]};
    pl.per = 2 + 2 * pl.biases + pl.proj;
    if (a->i[0] > (int64_t)1 << 20) {
        return mt_fail(MT_ERUNTIME, "got an incorrect number of RNN parameters");
    }
    mt_status st = check_rnn(&pl, params, input, batch_sizes != NULL, h0, c0);
    if (st) {
        return st;
    }
    mt_tensor *tm = NULL, *x = NULL, *y = NULL, *shaped = NULL;
    st = batch_first ? mt_op_transpose(input, 0, 1, &tm) : mt_op_alias(input, &tm);
    st = st ? st : plan_steps(&pl, tm, batch_sizes);
    if (st == MT_OK) {
        int64_t rows[2] = {batch_sizes ? tm->sizes[0] : tm->sizes[0] * tm->sizes[1],
                           tm->sizes[tm->ndim - 1]};
        st = mt_op_reshape(tm, 2, rows, &x);
    }
    st = st ? st : run_layers(&pl, params, x, h0, c0, &y, &a->out[1], &a->out[2]);
    if (st == MT_OK && batch_sizes == NULL) {
        int64_t shape[3] = {tm->sizes[0], tm->sizes[1], y->sizes[1]};
        st = mt_op_view(y, 3, shape, &shaped);
        st = st            ? st
             : batch_first ? mt_op_transpose(shaped, 0, 1, &a->out[0])
                           : mt_op_alias(shaped, &a->out[0]);
    } else if (st == MT_OK) {
        a->out[0] = y;
        y = NULL;
    }
    free(pl.bs);
    mt_tensor_clear(&shaped);
    mt_tensor_clear(&y);
    mt_tensor_clear(&x);
    mt_tensor_clear(&tm);
    return st;
}

static mt_status
need_two_states(const mt_args *a)
{
    return a->ntl == 2 ? MT_OK : mt_fail(MT_ERUNTIME, "lstm expects two hidden states");
}

mt_status
mt_composite_lstm(mt_args *a)
{
    mt_status st = need_two_states(a);
    return st ? st : run_rnn(CELL_LSTM, a, a->t[0], NULL, a->tl[0], a->tl[1], a->tls[0], a->b[3]);
}

mt_status
mt_composite_lstm_data(mt_args *a)
{
    mt_status st = need_two_states(a);
    return st ? st : run_rnn(CELL_LSTM, a, a->t[0], a->t[1], a->tl[0], a->tl[1], a->tls[0], false);
}

/* gru, rnn_tanh, rnn_relu: (input, hx, params, ...) or, packed, (data, batch_sizes, hx, ...) */
static mt_status
run_one_state(cell_kind kind, mt_args *a, bool packed)
{
    return run_rnn(kind, a, a->t[0], packed ? a->t[1] : NULL, a->t[packed ? 2 : 1], NULL,
                   mt_args_tensorlist(a, 0), !packed && a->b[3]);
}

mt_status
mt_composite_gru(mt_args *a)
{
    return run_one_state(CELL_GRU, a, false);
}

mt_status
mt_composite_gru_data(mt_args *a)
{
    return run_one_state(CELL_GRU, a, true);
}

mt_status
mt_composite_rnn_tanh(mt_args *a)
{
    return run_one_state(CELL_TANH, a, false);
}

mt_status
mt_composite_rnn_tanh_data(mt_args *a)
{
    return run_one_state(CELL_TANH, a, true);
}

mt_status
mt_composite_rnn_relu(mt_args *a)
{
    return run_one_state(CELL_RELU, a, false);
}

mt_status
mt_composite_rnn_relu_data(mt_args *a)
{
    return run_one_state(CELL_RELU, a, true);
}
