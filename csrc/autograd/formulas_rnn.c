/* The backward formula of the fused LSTM cell (ops.def's _thnn_fused_lstm_cell, which
 * ops/rnn.c's LSTM steps record), as PyTorch's derivatives.yaml row: the fused backward op where
 * the backward does not record, else the same math through ops from the kept inputs
 * (ops/rnn_cell.c), so a double backward goes through it. */
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
