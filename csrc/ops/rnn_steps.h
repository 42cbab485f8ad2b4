/* The steps of a recurrent layer op (ops.def's _lstm_layer, _gru_layer, _rnn_layer) and the
 * pieces of rows their forwards and backwards cut and join (ops/rnn_steps.c): which rows each
 * step has, the state a step starts from, the products over all the steps. Only batch_sizes
 * is read on the host; every piece is an op through the dispatcher, steps of an op_chain.h
 * chain (a failed chain makes each a no-op returning NULL).
 *
 * T steps, step t of bs[t] rows from row off[t] of the (N, *) tensors (all B = bs[0] without
 * batch_sizes; a packed sequence's batch shrinks step by step, sequences sorted longest
 * first). Forward, a step's state is the first rows of the state after the step run before it;
 * running in reverse, where the batch grows, that state's rows and then the initial state's
 * (h0, c0) rows beyond them. */
#ifndef MT_OPS_RNN_STEPS_H
#define MT_OPS_RNN_STEPS_H

#include "ops/op_chain.h"

typedef struct mt_rnn_steps {
    int64_t T, *bs, *off;
} mt_rnn_steps;

/* L for the op's rows rows and a batch of b: rows / b steps of b rows, or batch_sizes' (a CPU
 * int64 vector of positive, non-increasing sizes from b, summing to rows). Errors name op.
 * Frees nothing on failure: L->bs is NULL or the caller's to free. */
mt_status mt_rnn_steps_of(const char *op, int64_t rows, int64_t cols, int64_t b,
                          const mt_tensor *batch_sizes, mt_rnn_steps *L);

/* step t's rows of x */
mt_tensor *mt_rnn_rows_of(tmp *s, mt_tensor *x, const mt_rnn_steps *L, int64_t t);
/* rows [start, start + n) of x (x itself where that is all of it) */
mt_tensor *mt_rnn_some_rows(tmp *s, mt_tensor *x, int64_t start, int64_t n);
/* The state before step t (bs[t] rows): the first rows of before (the state after the step run
 * before it, NULL for the first step), then first's (h0 or c0) beyond before's rows. */
mt_tensor *mt_rnn_state_before(tmp *s, const mt_rnn_steps *L, int64_t t, mt_tensor *before,
                               mt_tensor *first);
/* The states before each step in time order (N, cols): for each step t, state_before's rows,
 * taken from x (the states after every step) and first (h0). */
mt_tensor *mt_rnn_previous_states(tmp *s, mt_tensor *x, mt_tensor *first, const mt_rnn_steps *L,
                                  bool reverse);
/* x^T y: (cols of x, cols of y), the product over all the rows */
mt_tensor *mt_rnn_rows_product(tmp *s, mt_tensor *x, mt_tensor *y);
/* The k pieces, last first, as one tensor (NULL for none) */
mt_tensor *mt_rnn_cat_reversed(tmp *s, mt_tensor **pieces, int64_t k);
/* top (m rows), then rest (its rows from m on) or, rest NULL, zeros: rows rows in all */
mt_tensor *mt_rnn_padded(tmp *s, mt_tensor *top, mt_tensor *rest, int64_t rows);
/* *out = W^T as a contiguous matrix (one copy a layer): OpenBLAS multiplies a few rows of state
 * by a plain matrix faster than by a transposed view, and each step makes such a product */
mt_status mt_rnn_weight_t(mt_tensor *w, mt_tensor **out);
/* zeros of like's shape, dtype and device: the gradient of a result that got none */
mt_tensor *mt_rnn_zeros_like(tmp *s, mt_tensor *like);

#endif
