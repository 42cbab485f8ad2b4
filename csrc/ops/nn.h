/* What the loss kernels of csrc/cpu/ share with the nn composites of nn.c: the reduction of
 * a per-element loss, as PyTorch's apply_loss_reduction. */
#ifndef MT_OPS_NN_H
#define MT_OPS_NN_H

#include <math.h>

#include "dispatch/dispatch.h"

/* PyTorch's Reduction enum, the int `reduction` argument of every loss op. */
enum { MT_REDUCTION_NONE = 0, MT_REDUCTION_MEAN = 1, MT_REDUCTION_SUM = 2 };

/* *out = loss (times weight, in place, when weight is given) reduced: itself, its mean or its
 * sum. Takes over the reference to loss. */
mt_status mt_loss_finish(mt_tensor *loss, mt_tensor *weight, int64_t reduction, mt_tensor **out);
/* The same into out, a result its front end stated (the loss kernels'). */
mt_status mt_loss_store(mt_tensor *loss, mt_tensor *weight, int64_t reduction, mt_tensor *out);
/* A device's binary cross entropy loop (with logits): loss = the per-element loss of ins[0]
 * (input), ins[1] (target) and ins[2] (pos_weight, or NULL for 1), each contiguous, of loss's
 * shape and dtype, loss allocated (contiguous): it only computes; PyTorch's error for a
 * probability outside [0, 1] (mt_fail_bce_range) where the device reports it then. */
typedef mt_status (*mt_bce_fn)(mt_tensor *const *ins, bool logits, mt_tensor *loss);
/* binary_cross_entropy (logits false) or binary_cross_entropy_with_logits on the call's device,
 * around the device's loop: the inputs made contiguous in the shape and dtype of the front end's
 * plan, the per-element loss allocated (the result itself without a reduction), then the weight
 * and the reduction into a->out[0]. Each device's kernel of the two ops. */
mt_status mt_bce_with(mt_args *a, bool logits, mt_bce_fn loop);

/* The modes of the pads (ops/pad.c): reflection, replication, circular gather; constant reads
 * no input position in its border. */
typedef enum mt_pad_mode {
    MT_PAD_REFLECT,
    MT_PAD_REPLICATE,
    MT_PAD_CIRCULAR,
    MT_PAD_CONSTANT
} mt_pad_mode;

/* The input position that output position j reads along a dim of size n padded by (l, r); -1
 * for a constant pad's border (negative pads crop, so j - l is always the position). */
int64_t mt_pad_source(mt_pad_mode mode, int64_t j, int64_t n, int64_t l, int64_t r);
/* *out = the int64 index vector, on dev, of a dim of size n padded by (l, r) in mode: output
 * position j reads input position out[j] (the forward gathers through it, the backward
 * scatters back through it). */
mt_status mt_pad_index(mt_pad_mode mode, int64_t n, int64_t l, int64_t r, mt_device dev,
                       mt_tensor **out);

/* The gradients of conv1d's or conv_transpose1d/2d's input, weight and bias (those need asks
 * for) from the output's gradient g (ops/composite_conv.c, for their autograd formulas). */
mt_status mt_conv_nd_backward(const mt_args *args, int dims, bool transposed, mt_tensor *x,
                              mt_tensor *w, mt_tensor *g, const bool *need, mt_tensor **gi);
/* *out = g, the gradient of a convolution of x and w, laid out in the convolution's memory
 * format (mt_conv_memory_format; g itself when it suggests it), through differentiable ops:
 * the backward ops read the format from it, as PyTorch's backward lays grad_output out. */
mt_status mt_conv_grad_output_in_format(const mt_tensor *x, const mt_tensor *w, mt_tensor *g,
                                        mt_tensor **out);
/* *out = t laid out in memory format fmt (t itself when it suggests fmt already), through
 * differentiable ops (ops/composite_conv.c) */
mt_status mt_in_format(mt_tensor *t, mt_memory_format fmt, mt_tensor **out);
/* scaled_dot_product_attention's scale: the given one, or 1/sqrt(E) of query (..., L, E) */
static inline double
mt_attention_scale(mt_scalar scale, const mt_tensor *q)
{
    return mt_scalar_is_none(scale) ? 1.0 / sqrt((double)q->sizes[q->ndim - 1])
                                    : mt_scalar_to_double(scale);
}

/* *out = softmax(q k^T * scale + mask) over the keys (is_causal: key j for query i when j <= i
 * only), a row of only -inf giving 0: the attention probabilities, through ops (ops/attention.c) */
mt_status mt_attention_probs(mt_tensor *q, mt_tensor *k, mt_tensor *mask, bool is_causal,
                             double scale, mt_tensor **out);

/* The fused LSTM cell's gradients through ops, from its inputs (the gates recomputed): out[0]
 * the gates' (B, 4H), out[1] cx's, out[2] the biases' (4H) where has_bias, else NULL; grad_hy
 * and grad_cy may be NULL (zero). Its autograd formula's path when the backward records
 * (ops/rnn.c). */
mt_status mt_lstm_cell_backward_ops(mt_tensor *grad_hy, mt_tensor *grad_cy, mt_tensor *input_gates,
                                    mt_tensor *hidden_gates, mt_tensor *input_bias,
                                    mt_tensor *hidden_bias, mt_tensor *cx, mt_tensor *cy,
                                    mt_tensor **out);
/* The same math through ops from the activated gates: *ws (B, 4H) of input_gates +
 * hidden_gates; *dgates (B, 4H) and *dcx (B, H) of a cell step from its workspace (no bias).
 * The LSTM layer's backward when it records (ops/rnn_layer.c). */
mt_status mt_lstm_workspace_ops(mt_tensor *input_gates, mt_tensor *hidden_gates, mt_tensor **ws);
mt_status mt_lstm_cell_grads_ops(mt_tensor *grad_hy, mt_tensor *grad_cy, mt_tensor *cx,
                                 mt_tensor *cy, mt_tensor *workspace, mt_tensor **dgates,
                                 mt_tensor **dcx);

/* The gradients of the LSTM layer (ops.def's _lstm_layer; its formula's, formulas_rnn.c): from
 * grad_out (N, P) and grad_cs (N, H) (either NULL: zero), its inputs in[6] (w_hr NULL without
 * projection, batch_sizes NULL for steps of the whole batch) and results out, cs and workspace,
 * gi[k] for the inputs k < 5 that want[k]: d(input projection) (N, 4H), dh0, dc0, dW_hh, dW_hr. Through ops; where grad mode is on
 * (create_graph) the gates are recomputed from the inputs so that the backward records. */
mt_status mt_lstm_layer_backward(mt_tensor *grad_out, mt_tensor *grad_cs, mt_tensor *const *in,
                                 mt_tensor *out, mt_tensor *cs, mt_tensor *workspace, bool reverse,
                                 const bool *want, mt_tensor **gi);

/* GRU's step through ops (ops/rnn_layer_gru.c): xw (B, 3H) the input's part of the gates r, z,
 * n (with b_ih), hw (B, 3H) the state's (with b_hh), h (B, H) -> *h_out (B, H). The GRU cell's
 * pointwise part (ops/rnn.c) and the GRU layer's steps. */
mt_status mt_gru_step_ops(mt_tensor *xw, mt_tensor *hw, mt_tensor *h, mt_tensor **h_out);
/* The gradients of the GRU and tanh/relu layers (ops.def's _gru_layer and _rnn_layer; their
 * formulas', formulas_rnn.c), as the LSTM layer's: from grad_out (N, H) (NULL: zero), the inputs
 * in (the op's tensor slots: GRU's xw, h0, w_hh, b_hh, batch_sizes; _rnn_layer's xw, h0, w_hh,
 * batch_sizes, xw unused) and the results, gi[k] for the inputs k that want[k]: d(input
 * projection), dh0, dW_hh and GRU's db_hh. */
mt_status mt_gru_layer_backward(mt_tensor *grad_out, mt_tensor *const *in, mt_tensor *out,
                                mt_tensor *workspace, bool reverse, const bool *want,
                                mt_tensor **gi);
mt_status mt_rnn_layer_backward(mt_tensor *grad_out, mt_tensor *const *in, mt_tensor *out,
                                bool relu, bool reverse, const bool *want, mt_tensor **gi);

#endif
