/* The fused LSTM cell (ops.def's _thnn_fused_lstm_cell and _thnn_fused_lstm_cell_backward_impl):
 * their front ends, run before the CPU kernels (cpu/rnn_cell.c), and their composites in ops,
 * which other devices run and which the autograd formula records when a backward is itself
 * differentiated. Nothing here touches data.
 *
 * gates (B, 4H) = input_gates + hidden_gates (+ input_bias + hidden_bias), in PyTorch's order
 * i, f, g, o: i, f, o through sigmoid, g through tanh (the workspace keeps the four, (B, 4H));
 * cy = f cx + i g, hy = o tanh(cy). Backward, gh and gc the gradients of hy and cy (zero where
 * absent), t = tanh(cy): gcy = gc + gh o (1 - t^2); the gates' gradients di = gcy g i (1 - i),
 * df = gcy cx f (1 - f), dg = gcy i (1 - g^2), do = gh t o (1 - o); cx's gcy f; the biases' the
 * gates' summed over the batch. */
#include "ops/front.h"
#include "ops/nn.h"
#include "ops/op_chain.h"

/* t is a floating matrix of rows x cols (cols < 0: any), of like's dtype where like is given.
 * float16 and bfloat16 pass: these fronts check the call as given, before dispatch/widen.c
 * computes it in float32 (the float8 formats never get here: dispatch/shell.c refuses them). */
static mt_status
check_matrix(const char *op, const char *name, const mt_tensor *t, int64_t rows, int64_t cols,
             const mt_tensor *like)
{
    if (t->ndim != 2 || t->sizes[0] != rows || (cols >= 0 && t->sizes[1] != cols)) {
        return mt_fail(MT_ERUNTIME, "%s: expected %s of shape (%lld, %lld), got a %d-D tensor", op,
                       name, (long long)rows, (long long)cols, t->ndim);
    }
    if (!mt_dtype_is_float(t->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s: expected %s of a float dtype, got %s", op, name,
                       mt_dtype_c_name(t->dtype));
    }
    if (like &&
        (t->dtype != like->dtype || !mt_device_eq(mt_tensor_device(t), mt_tensor_device(like)))) {
        return mt_fail(MT_ERUNTIME, "%s: expected %s of the dtype and device of the others", op,
                       name);
    }
    return MT_OK;
}

/* input_gates (B, 4H), hidden_gates of its shape, cx (B, H), biases of 4H elements or None */
static mt_status
check_cell(const mt_args *a)
{
    static const char op[] = "_thnn_fused_lstm_cell";
    const mt_tensor *ig = a->t[0];
    if (ig->ndim != 2 || ig->sizes[1] % 4 != 0) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected input_gates of shape (batch, 4 * hidden_size), got a %d-D "
                       "tensor",
                       op, ig->ndim);
    }
    const int64_t b = ig->sizes[0], h = ig->sizes[1] / 4;
    mt_status st = check_matrix(op, "input_gates", ig, b, 4 * h, NULL);
    st = st ? st : check_matrix(op, "hidden_gates", a->t[1], b, 4 * h, ig);
    st = st ? st : check_matrix(op, "cx", a->t[2], b, h, ig);
    for (int k = 3; k < 5 && st == MT_OK; k++) {
        const mt_tensor *bias = a->t[k];
        if (bias && (bias->ndim != 1 || bias->sizes[0] != 4 * h || bias->dtype != ig->dtype)) {
            st = mt_fail(MT_ERUNTIME, "%s: expected %s of %lld elements of input_gates' dtype", op,
                         k == 3 ? "input_bias" : "hidden_bias", (long long)(4 * h));
        }
    }
    return st;
}

/* grad_hy, grad_cy (B, H) or None, cx and cy (B, H), workspace (B, 4H) */
static mt_status
check_cell_backward(const mt_args *a)
{
    static const char op[] = "_thnn_fused_lstm_cell_backward_impl";
    const mt_tensor *cx = a->t[2];
    if (cx->ndim != 2) {
        return mt_fail(MT_ERUNTIME,
                       "%s: expected cx of shape (batch, hidden_size), got a %d-D tensor", op,
                       cx->ndim);
    }
    const int64_t b = cx->sizes[0], h = cx->sizes[1];
    mt_status st = check_matrix(op, "cx", cx, b, h, NULL);
    st = st ? st : check_matrix(op, "cy", a->t[3], b, h, cx);
    st = st ? st : check_matrix(op, "workspace", a->t[4], b, 4 * h, cx);
    st = st || a->t[0] == NULL ? st : check_matrix(op, "grad_hy", a->t[0], b, h, cx);
    st = st || a->t[1] == NULL ? st : check_matrix(op, "grad_cy", a->t[1], b, h, cx);
    return st;
}

/* Results (rows, cols[k]) for k < n, of dtype dt. */
static mt_status
cell_outputs(mt_status st, mt_plan *p, mt_dtype dt, int64_t rows, int n, const int64_t *cols)
{
    for (int k = 0; k < n && st == MT_OK; k++) {
        const int64_t sizes[2] = {rows, cols[k]};
        st = mt_front_output(p, dt, 2, sizes);
    }
    return st;
}

// hy, cy (B, H) and the workspace (B, 4H), of the gates' dtype
mt_status
mt_front_lstm_cell_fused(const mt_args *a, mt_plan *p)
{
    mt_status st = check_cell(a);
    const int64_t b = st ? 0 : a->t[0]->sizes[0], h = st ? 0 : a->t[0]->sizes[1] / 4;
    return cell_outputs(st, p, a->t[0]->dtype, b, 3, (const int64_t[]){h, h, 4 * h});
}

// the gates' gradient (B, 4H), cx's (B, H), and with has_bias the biases' (4H), of cx's dtype
mt_status
mt_front_lstm_cell_fused_backward(const mt_args *a, mt_plan *p)
{
    mt_status st = check_cell_backward(a);
    const int64_t b = st ? 0 : a->t[2]->sizes[0], h = st ? 0 : a->t[2]->sizes[1];
    st = cell_outputs(st, p, a->t[2]->dtype, b, 2, (const int64_t[]){4 * h, h});
    const int64_t four_h = 4 * h;
    return st || !a->b[0] ? st : mt_front_output(p, a->t[2]->dtype, 1, &four_h);
}

/* gate k (of i, f, g, o) of x (B, 4H) as a view (B, H) */
static mt_tensor *
gate(tmp *s, mt_tensor *x, int k)
{
    mt_tensor *r = NULL;
    const int64_t h = failed(s, x, x) ? 0 : x->sizes[1] / 4;
    return s->st ? NULL : own(s, mt_op_narrow(x, 1, k * h, h, &r), &r);
}

/* the activated gates (B, 4H) of input_gates + hidden_gates (+ the biases) */
static mt_tensor *
workspace_of(tmp *s, mt_tensor *ig, mt_tensor *hg, mt_tensor *ib, mt_tensor *hb)
{
    mt_tensor *gates = bin(s, MT_OP_add, ig, hg);
    gates = ib ? bin(s, MT_OP_add, gates, ib) : gates;
    gates = hb ? bin(s, MT_OP_add, gates, hb) : gates;
    mt_tensor *act[4], *r = NULL;
    for (int k = 0; k < 4; k++) {
        act[k] = un(s, k == 2 ? MT_OP_tanh : MT_OP_sigmoid, gate(s, gates, k));
    }
    for (int k = 0; k < 4; k++) {
        if (failed(s, act[k], act[k])) {
            return NULL;
        }
    }
    return own(s, mt_op_cat(4, act, 1, &r), &r);
}

mt_status
mt_composite__thnn_fused_lstm_cell(mt_args *a)
{
    mt_status st = check_cell(a);
    if (st) {
        return st;
    }
    tmp s = {0};
    mt_tensor *ws = workspace_of(&s, a->t[0], a->t[1], a->t[3], a->t[4]);
    mt_tensor *cy = bin(&s, MT_OP_add, bin(&s, MT_OP_mul, gate(&s, ws, 1), a->t[2]),
                        bin(&s, MT_OP_mul, gate(&s, ws, 0), gate(&s, ws, 2)));
    mt_tensor *hy = bin(&s, MT_OP_mul, gate(&s, ws, 3), un(&s, MT_OP_tanh, cy));
    give(&s, hy, &a->out[0]);
    give(&s, cy, &a->out[1]);
    give(&s, ws, &a->out[2]);
    return finish(&s);
}

/* 1 - x */
static mt_tensor *
one_minus(tmp *s, mt_tensor *x)
{
    return bin(s, MT_OP_sub, num(s, 1.0), x);
}

/* x (1 - x): the sigmoid's derivative from its value */
static mt_tensor *
sigmoid_slope(tmp *s, mt_tensor *x)
{
    return bin(s, MT_OP_mul, x, one_minus(s, x));
}

/* *gcy = gc + gh o (1 - t^2) and *t = tanh(cy), from gh, gc (NULL: zero); *gh0 = gh or zeros */
static mt_status
cell_state_grad(mt_tensor *gh, mt_tensor *gc, mt_tensor *cy, mt_tensor *ws, mt_tensor **gcy,
                mt_tensor **t, mt_tensor **gh0)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *tc = un(&s, MT_OP_tanh, cy);
    if (gh == NULL) {
        gh = own(&s, mt_op_zeros(2, cy->sizes, cy->dtype, mt_tensor_device(cy), false, &r), &r);
    }
    mt_tensor *d = bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, gh, gate(&s, ws, 3)),
                       one_minus(&s, bin(&s, MT_OP_mul, tc, tc)));
    give(&s, gc ? bin(&s, MT_OP_add, gc, d) : d, gcy);
    give(&s, tc, t);
    give(&s, gh, gh0);
    mt_status st = finish(&s);
    if (st) {
        mt_tensor_clear(gcy);
        mt_tensor_clear(t);
    }
    return st;
}

/* out[0..2]: the gradients of the gates, cx and the biases (has_bias) from gh, gc (NULL: zero) */
static mt_status
cell_grads(mt_tensor *gh, mt_tensor *gc, mt_tensor *cx, mt_tensor *cy, mt_tensor *ws, bool has_bias,
           mt_tensor **out)
{
    mt_tensor *gcy = NULL, *t = NULL, *gh0 = NULL, *r = NULL;
    mt_status st = cell_state_grad(gh, gc, cy, ws, &gcy, &t, &gh0);
    if (st) {
        return st;
    }
    tmp s = {0};
    mt_tensor *i = gate(&s, ws, 0), *f = gate(&s, ws, 1), *g = gate(&s, ws, 2),
              *o = gate(&s, ws, 3);
    mt_tensor *d[4] = {
        bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, gcy, g), sigmoid_slope(&s, i)),
        bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, gcy, cx), sigmoid_slope(&s, f)),
        bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, gcy, i), one_minus(&s, bin(&s, MT_OP_mul, g, g))),
        bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, gh0, t), sigmoid_slope(&s, o)),
    };
    mt_tensor *dgates = NULL;
    if (!failed(&s, d[0], d[1]) && !failed(&s, d[2], d[3])) {
        dgates = own(&s, mt_op_cat(4, d, 1, &r), &r);
    }
    give(&s, dgates, &out[0]);
    give(&s, bin(&s, MT_OP_mul, gcy, f), &out[1]);
    if (has_bias && !failed(&s, dgates, dgates)) {
        const int64_t rows = 0;
        give(&s, own(&s, mt_op_sum(dgates, 1, &rows, false, -1, &r), &r), &out[2]);
    }
    st = finish(&s);
    for (int k = 0; st && k < 3; k++) {
        mt_tensor_clear(&out[k]);
    }
    mt_tensor_clear(&gcy);
    mt_tensor_clear(&t);
    mt_tensor_clear(&gh0);
    return st;
}

mt_status
mt_composite__thnn_fused_lstm_cell_backward_impl(mt_args *a)
{
    mt_status st = check_cell_backward(a);
    return st ? st : cell_grads(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->b[0], a->out);
}

mt_status
mt_lstm_cell_backward_ops(mt_tensor *grad_hy, mt_tensor *grad_cy, mt_tensor *input_gates,
                          mt_tensor *hidden_gates, mt_tensor *input_bias, mt_tensor *hidden_bias,
                          mt_tensor *cx, mt_tensor *cy, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *ws = workspace_of(&s, input_gates, hidden_gates, input_bias, hidden_bias);
    mt_status st = failed(&s, ws, ws)
                       ? MT_OK
                       : cell_grads(grad_hy, grad_cy, cx, cy, ws, input_bias || hidden_bias, out);
    mt_status chain = finish(&s);
    return st ? st : chain;
}

mt_status
mt_lstm_workspace_ops(mt_tensor *input_gates, mt_tensor *hidden_gates, mt_tensor **ws)
{
    tmp s = {0};
    give(&s, workspace_of(&s, input_gates, hidden_gates, NULL, NULL), ws);
    return finish(&s);
}

mt_status
mt_lstm_cell_grads_ops(mt_tensor *grad_hy, mt_tensor *grad_cy, mt_tensor *cx, mt_tensor *cy,
                       mt_tensor *workspace, mt_tensor **dgates, mt_tensor **dcx)
{
    mt_tensor *r[3] = {NULL, NULL, NULL};
    mt_status st = cell_grads(grad_hy, grad_cy, cx, cy, workspace, false, r);
    *dgates = r[0];
    *dcx = r[1];
    return st;
}
