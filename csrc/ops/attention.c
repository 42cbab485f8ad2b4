/* scaled_dot_product_attention as a composite of ops (PyTorch's math path,
 * _scaled_dot_product_attention_math in ATen's transformers/attention.cpp): PyTorch's checks
 * and messages, then matmul, the mask, a softmax whose rows of only -inf give 0 (_safe_softmax),
 * dropout and a second matmul, each through the dispatcher; so it runs on every device and
 * autograd records its pieces (double backward included). No kernel lives here. */
#include <math.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/op_chain.h"

/* "cpu" or "cuda:<index>" into buf (16 bytes), as PyTorch prints a device */
static const char *
device_str(mt_device d, char *buf)
{
    if (d.type == MT_CPU) {
        return "cpu";
    }
    char digits[12];
    int n = 0;
    unsigned v = (unsigned)d.index;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 10);
    memcpy(buf, "cuda:", 5);
    for (int k = 0; k < n; k++) {
        buf[5 + k] = digits[n - 1 - k];
    }
    buf[5 + n] = 0;
    return buf;
}

/* validate_sdpa_input's checks, in its order */
static mt_status
check_inputs(mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask)
{
    if (q->dtype != k->dtype || q->dtype != v->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "Expected query, key, and value to have the same dtype, but got "
                       "query.dtype: %s key.dtype: %s and value.dtype: %s instead.",
                       mt_dtype_c_name(q->dtype), mt_dtype_c_name(k->dtype),
                       mt_dtype_c_name(v->dtype));
    }
    mt_device dq = mt_tensor_device(q), dk = mt_tensor_device(k), dv = mt_tensor_device(v);
    if (!mt_device_eq(dq, dk) || !mt_device_eq(dq, dv)) {
        char sq[16], sk[16], sv[16];
        return mt_fail(MT_ERUNTIME,
                       "Expected query, key, and value to have the same device type, but got "
                       "query.device: %s key.device: %s and value.device: %s instead.",
                       device_str(dq, sq), device_str(dk, sk), device_str(dv, sv));
    }
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2) {
        return mt_fail(MT_ERUNTIME,
                       "Expected query, key, and value to all be  at least 2 dimensional, but "
                       "got query.dim: %d key.dim: %d and value.dim: %d instead.",
                       q->ndim, k->ndim, v->ndim);
    }
    if (mask && mask->dtype != MT_BOOL && mask->dtype != MT_FLOAT32 && mask->dtype != q->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "Expected attn_mask dtype to be bool or float or to match query dtype, "
                       "but got attn_mask.dtype: %s and  query.dtype: %s instead.",
                       mt_dtype_c_name(mask->dtype), mt_dtype_c_name(q->dtype));
    }
    return MT_OK;
}

/* x repeated n times along dim -3 (each head n times in a row), or x when n is 1 */
static mt_tensor *
repeat_heads(tmp *s, mt_tensor *x, int64_t n)
{
    mt_tensor *r = NULL, *reps = NULL;
    if (n == 1 || failed(s, x, x)) {
        return x;
    }
    reps = own(s, mt_tensor_scalar(mt_scalar_int(n), MT_INT64, &r), &r);
    return failed(s, reps, reps) ? NULL
                                 : own(s, mt_op_repeat_interleave(x, reps, -3, MT_INT_NONE, &r), &r);
}

/* pre_process_group_query_attention_input: key and value heads repeated up to query's */
static mt_status
group_heads(tmp *s, mt_tensor *q, mt_tensor **k, mt_tensor **v)
{
    if (q->ndim < 3 || (*k)->ndim < 3 || (*v)->ndim < 3) {
        int nd = q->ndim < 3 ? q->ndim : (*k)->ndim < 3 ? (*k)->ndim : (*v)->ndim;
        return mt_fail(MT_EINDEX, "Dimension out of range (expected to be in range of [%d, %d], "
                                  "but got -3)", -nd, nd - 1);
    }
    int64_t hq = q->sizes[q->ndim - 3], hk = (*k)->sizes[(*k)->ndim - 3];
    int64_t hv = (*v)->sizes[(*v)->ndim - 3];
    bool all_equal = hq == hk && hk == hv;
    if (!all_equal && (hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0)) {
        /* PyTorch's message ends there */
        return mt_fail(MT_ERUNTIME, "Number of heads in key and value must divide the number of "
                                    "heads in ");
    }
    if (!all_equal) {
        *k = repeat_heads(s, *k, hq / hk);
        *v = repeat_heads(s, *v, hq / hv);
    }
    return s->st;
}

/* The additive form of a mask, as scores + mask: a bool mask (True: take part) is 0 where True
 * and -inf elsewhere; a float mask is itself. */
static mt_tensor *
with_mask(tmp *s, mt_tensor *scores, mt_tensor *mask)
{
    mt_tensor *r = NULL;
    if (mask->dtype != MT_BOOL) {
        return bin(s, MT_OP_add, scores, mask);
    }
    mt_tensor *off = un(s, MT_OP_logical_not, mask);
    mt_tensor *ninf = num(s, -INFINITY);
    if (failed(s, off, ninf)) {
        return NULL;
    }
    return own(s, mt_op_masked_fill(scores, off, ninf, &r), &r);
}

/* softmax over the last dim, a row of only -inf giving 0 (PyTorch's _safe_softmax); such rows
 * are set to 0 before the softmax, so neither the values nor the gradients see a NaN */
static mt_tensor *
safe_softmax(tmp *s, mt_tensor *x)
{
    mt_tensor *r = NULL;
    int64_t last = -1;
    mt_tensor *ninf = bin(s, MT_OP_eq, x, num(s, -INFINITY));
    mt_tensor *dead = failed(s, ninf, ninf) ? NULL
                                            : own(s, mt_op_all(ninf, 1, &last, true, &r), &r);
    mt_tensor *zero = num(s, 0.0);
    mt_tensor *live = sel(s, dead, zero, x);
    mt_tensor *p = failed(s, live, live) ? NULL : own(s, mt_op_softmax(live, -1, -1, &r), &r);
    return sel(s, dead, zero, p);
}

// query (..., L, E), key (..., S, E), value (..., S, Ev), attn_mask broadcastable to
// (..., L, S); out (..., L, Ev) = dropout(softmax(query key^T * scale + mask)) value
mt_status
mt_composite_scaled_dot_product_attention(mt_args *a)
{
    mt_tensor *q = a->t[0], *k = a->t[1], *v = a->t[2], *mask = a->t[3];
    double dropout_p = a->f[0];
    bool is_causal = a->b[0], enable_gqa = a->b[1];
    mt_status st = check_inputs(q, k, v, mask);
    if (st) {
        return st;
    }
    if (is_causal && mask) {
        return mt_fail(MT_ERUNTIME, "_scaled_dot_product_attention: Explicit attn_mask should not "
                                    "be set when is_causal=True");
    }
    double scale = mt_scalar_is_none(a->s[0]) ? 1.0 / sqrt((double)q->sizes[q->ndim - 1])
                                              : mt_scalar_to_double(a->s[0]);
    tmp s = {0};
    mt_tensor *r = NULL;
    if (enable_gqa && (st = group_heads(&s, q, &k, &v))) {
        finish(&s);
        return st;
    }
    if (is_causal) {
        int64_t ls[2] = {q->sizes[q->ndim - 2], k->sizes[k->ndim - 2]};
        mt_tensor *ones = own(&s, mt_op_ones(2, ls, MT_BOOL, mt_tensor_device(q), false, &r), &r);
        mask = failed(&s, ones, ones) ? NULL : own(&s, mt_op_tril(ones, 0, &r), &r);
    }
    mt_tensor *kt = failed(&s, k, k) ? NULL : own(&s, mt_op_transpose(k, -2, -1, &r), &r);
    mt_tensor *scores = scaled(&s, bin(&s, MT_OP_matmul, q, kt), scale);
    mt_tensor *attn = mask ? safe_softmax(&s, with_mask(&s, scores, mask))
                           : (failed(&s, scores, scores)
                                  ? NULL
                                  : own(&s, mt_op_softmax(scores, -1, -1, &r), &r));
    if (dropout_p > 0 && !failed(&s, attn, attn)) {
        attn = own(&s, mt_op_dropout(attn, mt_scalar_float(dropout_p), true, &r), &r);
    }
    give(&s, bin(&s, MT_OP_matmul, attn, v), &a->out[0]);
    return finish(&s);
}
