/* The backward formulas of the fused LSTM cell (ops.def's _thnn_fused_lstm_cell, which
 * ops/rnn.c's packed LSTM steps and the LSTM layer record) and of the layers (_lstm_layer,
 * _gru_layer, _rnn_layer),
 * as PyTorch's derivatives.yaml rows: the fused backward op where the backward does not record,
 * else the same math through ops from the kept inputs (ops/rnn_cell.c), so a double backward
 * goes through it. */
#include "autograd/formula_chain.h"
#include "ops/nn.h"

// input_gates, hidden_gates (B, 4H), cx (B, H), input_bias, hidden_bias (4H) or None; outputs
// hy, cy (B, H), workspace (B, 4H): both gates get the gates' gradient, both biases its sum
mt_status
mt_grad__thnn_fused_lstm_cell(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *const *in = n->saved;
    mt_tensor *r[3] = {NULL, NULL, NULL};
    const bool has_bias = in[3] || in[4];
    tmp s = {0};
    mt_status st = mt_grad_enabled()
                       ? mt_lstm_cell_backward_ops(g[0], g[1], in[0], in[1], in[3], in[4], in[2],
                                                   n->saved_out[1], r)
                       : mt_op__thnn_fused_lstm_cell_backward_impl(g[0], g[1], in[2],
                                                                   n->saved_out[1], n->saved_out[2],
                                                                   has_bias, &r[0], &r[1], &r[2]);
    /* the three results, adopted together: the gates' gradient, cx's, the biases' (or none) */
    mt_tensor *gates = own(&s, st, &r[0]), *dcx = own(&s, st, &r[1]);
    mt_tensor *dbias = own(&s, st, &r[2]);
    give(&s, gates, &gi[0]);
    give(&s, gates, &gi[1]);
    give(&s, dcx, &gi[2]);
    for (int k = 3; k < 5; k++) {
        if (in[k]) {
            give(&s, dbias, &gi[k]);
        }
    }
    return finish(&s);
}

// input_projection (N, 4H), h0 (B, P), c0 (B, H), w_hh (4H, P), w_hr (P, H) or None,
// batch_sizes or None; outputs the h's (N, P), the c's (N, H) and the workspace (N, 4H), which
// takes no gradient: one backward over all the steps, ops/rnn_layer.c's
mt_status
mt_grad__lstm_layer(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const bool want[5] = {wants(n, 0), wants(n, 1), wants(n, 2), wants(n, 3), wants(n, 4)};
    return mt_lstm_layer_backward(g[0], g[1], n->saved, n->saved_out[0], n->saved_out[1],
                                  n->saved_out[2], n->args.b[0], want, gi);
}

// input_projection (N, 3H), h0 (B, H), w_hh (3H, H), b_hh (3H) or None, batch_sizes or None;
// outputs the h's (N, H) and the workspace (N, 4H), which takes no gradient: ops/rnn_layer_gru.c
mt_status
mt_grad__gru_layer(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const bool want[4] = {wants(n, 0), wants(n, 1), wants(n, 2), wants(n, 3)};
    return mt_gru_layer_backward(g[0], n->saved, n->saved_out[0], n->saved_out[1], n->args.b[0],
                                 want, gi);
}

// input_projection (N, H), h0 (B, H), w_hh (H, H), batch_sizes or None; output the h's (N, H)
mt_status
mt_grad__rnn_layer(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const bool want[3] = {wants(n, 0), wants(n, 1), wants(n, 2)};
    return mt_rnn_layer_backward(g[0], n->saved, n->saved_out[0], n->args.b[0], n->args.b[1], want,
                                 gi);
}
