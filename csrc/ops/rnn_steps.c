/* The steps of the recurrent layer ops and the pieces of rows they cut and join (see
 * ops/rnn_steps.h): the LSTM layer (ops/rnn_layer.c) and the GRU and tanh/relu layers
 * (ops/rnn_layer_gru.c) share them. Nothing here touches data but batch_sizes. */
#include "ops/rnn_steps.h"

mt_status
mt_rnn_steps_of(const char *op, int64_t rows, int64_t cols, int64_t b, const mt_tensor *batch_sizes,
                mt_rnn_steps *L)
{
    L->bs = NULL;
    if (batch_sizes && (batch_sizes->ndim != 1 || batch_sizes->dtype != MT_INT64 ||
                        mt_tensor_device(batch_sizes).type != MT_CPU)) {
        return mt_fail(MT_ERUNTIME, "%s: batch_sizes should be a 1-D CPU int64 tensor", op);
    }
    if (batch_sizes == NULL && (rows == 0 || rows % b != 0)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected input_projection of shape (steps * %lld, %lld), got (%lld, "
                       "%lld)",
                       op, (long long)b, (long long)cols, (long long)rows, (long long)cols);
    }
    L->T = batch_sizes ? batch_sizes->sizes[0] : rows / b;
    if (L->T <= 0) {
        return mt_fail(MT_ERUNTIME, "%s: expected batch_sizes of at least one step", op);
    }
    L->bs = malloc(2 * (size_t)L->T * sizeof(int64_t));
    if (L->bs == NULL) {
        return mt_fail(MT_ENOMEM, "%s: out of memory for %lld steps", op, (long long)L->T);
    }
    L->off = L->bs + L->T;
    const int64_t *v = batch_sizes ? (const int64_t *)mt_tensor_data(batch_sizes) : NULL;
    int64_t sum = 0;
    for (int64_t t = 0; t < L->T; t++) {
        L->bs[t] = v ? v[t * batch_sizes->strides[0]] : b;
        L->off[t] = sum;
        sum += L->bs[t];
        if (L->bs[t] <= 0 || L->bs[t] > (t ? L->bs[t - 1] : b) || (t == 0 && L->bs[0] != b)) {
            return mt_fail(MT_ERUNTIME,
                           "%s: expected batch_sizes positive and non-increasing from h0's %lld "
                           "rows, got %lld at step %lld",
                           op, (long long)b, (long long)L->bs[t], (long long)t);
        }
    }
    if (sum != rows) {
        return mt_fail(MT_ERUNTIME,
                       "%s: batch_sizes sum to %lld but input_projection has %lld rows", op,
                       (long long)sum, (long long)rows);
    }
    return MT_OK;
}

/* Rows [start, start + n) of src: a piece of a tensor that one cat makes. */
typedef struct rows_run {
    mt_tensor *src;
    int64_t start, n;
} rows_run;

/* runs[k] = rows [start, start + n) of src, joined to runs[k - 1] where they continue it; the
 * number of runs after */
static int64_t
add_run(rows_run *runs, int64_t k, mt_tensor *src, int64_t start, int64_t n)
{
    if (n <= 0) {
        return k;
    }
    if (k > 0 && runs[k - 1].src == src && runs[k - 1].start + runs[k - 1].n == start) {
        runs[k - 1].n += n;
        return k;
    }
    runs[k] = (rows_run){src, start, n};
    return k + 1;
}

/* The k runs as one tensor (one run of all src's rows: src itself) */
static mt_tensor *
cat_runs(tmp *s, const rows_run *runs, int64_t k)
{
    if (s->st) {
        return NULL;
    }
    if (k == 1 && runs[0].start == 0 && runs[0].n == runs[0].src->sizes[0]) {
        return runs[0].src;
    }
    mt_tensor **parts = malloc((size_t)k * sizeof(*parts)), *r = NULL;
    if (parts == NULL) {
        s->st = mt_fail(MT_ENOMEM, "rnn layer: out of memory for %lld pieces", (long long)k);
        return NULL;
    }
    for (int64_t j = 0; j < k && s->st == MT_OK; j++) {
        parts[j] = own(s, mt_op_narrow(runs[j].src, 0, runs[j].start, runs[j].n, &r), &r);
    }
    mt_tensor *whole = NULL;
    if (s->st == MT_OK) {
        whole = k == 1 ? parts[0] : own(s, mt_op_cat((int)k, parts, 0, &r), &r);
    }
    free(parts);
    return whole;
}

mt_tensor *
mt_rnn_state_before(tmp *s, const mt_rnn_steps *L, int64_t t, mt_tensor *before, mt_tensor *first)
{
    if (failed(s, first, first)) {
        return NULL;
    }
    rows_run runs[2];
    const int64_t n = L->bs[t], m = before ? (before->sizes[0] < n ? before->sizes[0] : n) : 0;
    int64_t k = before ? add_run(runs, 0, before, 0, m) : 0;
    k = add_run(runs, k, first, m, n - m);
    return cat_runs(s, runs, k);
}

mt_tensor *
mt_rnn_rows_of(tmp *s, mt_tensor *x, const mt_rnn_steps *L, int64_t t)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_narrow(x, 0, L->off[t], L->bs[t], &r), &r);
}

mt_tensor *
mt_rnn_previous_states(tmp *s, mt_tensor *x, mt_tensor *first, const mt_rnn_steps *L, bool reverse)
{
    if (failed(s, x, first)) {
        return NULL;
    }
    rows_run *runs = malloc(2 * (size_t)L->T * sizeof(*runs));
    if (runs == NULL) {
        s->st = mt_fail(MT_ENOMEM, "rnn layer: out of memory for %lld steps", (long long)L->T);
        return NULL;
    }
    int64_t k = 0;
    for (int64_t t = 0; t < L->T; t++) {
        const int64_t prev = reverse ? t + 1 : t - 1, n = L->bs[t];
        const bool has_prev = prev >= 0 && prev < L->T;
        const int64_t m = has_prev ? (L->bs[prev] < n ? L->bs[prev] : n) : 0;
        if (has_prev) {
            k = add_run(runs, k, x, L->off[prev], m);
        }
        k = add_run(runs, k, first, m, n - m);
    }
    mt_tensor *r = cat_runs(s, runs, k);
    free(runs);
    return r;
}

mt_tensor *
mt_rnn_rows_product(tmp *s, mt_tensor *x, mt_tensor *y)
{
    mt_tensor *r = NULL, *xt = failed(s, x, y) ? NULL : own(s, mt_op_t(x, &r), &r);
    return failed(s, xt, xt) ? NULL : own(s, mt_op_mm(xt, y, &r), &r);
}

mt_tensor *
mt_rnn_cat_reversed(tmp *s, mt_tensor **pieces, int64_t k)
{
    if (s->st || k == 0) {
        return NULL;
    }
    if (k == 1) {
        return pieces[0];
    }
    mt_tensor **parts = malloc((size_t)k * sizeof(*parts)), *r = NULL;
    if (parts == NULL) {
        s->st = mt_fail(MT_ENOMEM, "rnn layer: out of memory for %lld pieces", (long long)k);
        return NULL;
    }
    for (int64_t j = 0; j < k; j++) {
        parts[j] = pieces[k - 1 - j];
    }
    mt_tensor *whole = own(s, mt_op_cat((int)k, parts, 0, &r), &r);
    free(parts);
    return whole;
}

mt_tensor *
mt_rnn_some_rows(tmp *s, mt_tensor *x, int64_t start, int64_t n)
{
    mt_tensor *r = NULL;
    if (failed(s, x, x) || (start == 0 && n == x->sizes[0])) {
        return x;
    }
    return own(s, mt_op_narrow(x, 0, start, n, &r), &r);
}

mt_tensor *
mt_rnn_zeros_like(tmp *s, mt_tensor *like)
{
    mt_tensor *r = NULL;
    if (failed(s, like, like)) {
        return NULL;
    }
    return own(s,
               mt_op_zeros(like->ndim, like->sizes, like->dtype, mt_tensor_device(like), false, &r),
               &r);
}

mt_tensor *
mt_rnn_padded(tmp *s, mt_tensor *top, mt_tensor *rest, int64_t rows)
{
    mt_tensor *r = NULL;
    if (failed(s, top, top) || top->sizes[0] == rows) {
        return top;
    }
    const int64_t m = top->sizes[0], sizes[2] = {rows - m, top->sizes[1]};
    mt_tensor *tail = rest
                          ? mt_rnn_some_rows(s, rest, m, rows - m)
                          : own(s,
                                mt_op_zeros(2, sizes, top->dtype, mt_tensor_device(top), false, &r),
                                &r);
    if (failed(s, tail, tail)) {
        return NULL;
    }
    return own(s, mt_op_cat(2, (mt_tensor *[]){top, tail}, 0, &r), &r);
}

mt_status
mt_rnn_weight_t(mt_tensor *w, mt_tensor **out)
{
    mt_tensor *view = NULL;
    mt_status st = mt_op_t(w, &view);
    st = st ? st : mt_op_contiguous(view, out);
    mt_tensor_clear(&view);
    return st;
}
