/* scaled_dot_product_attention as a composite of ops (PyTorch's math path,
 * _scaled_dot_product_attention_math in ATen's transformers/attention.cpp): PyTorch's checks
 * and messages, then matmul, the mask, a softmax whose rows of only -inf give 0 (_safe_softmax),
 * dropout and a second matmul, each through the dispatcher; so it runs on every device and
 * autograd records its pieces (double backward included). 4-D float inputs on the CPU without
 * dropout go to the fused kernel instead, as PyTorch's go to its flash kernel (_scaled_dot_product_flash_attention_for_cpu, whose
 * front end is here too). No kernel lives here. */
#include <math.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/front.h"
#include "ops/nn.h"
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
    return failed(s, reps, reps)
               ? NULL
               : own(s, mt_op_repeat_interleave(x, reps, -3, MT_INT_NONE, &r), &r);
}

/* pre_process_group_query_attention_input: key and value heads repeated up to query's */
static mt_status
group_heads(tmp *s, mt_tensor *q, mt_tensor **k, mt_tensor **v)
{
    if (q->ndim < 3 || (*k)->ndim < 3 || (*v)->ndim < 3) {
        int nd = q->ndim < 3 ? q->ndim : (*k)->ndim < 3 ? (*k)->ndim : (*v)->ndim;
        return mt_fail(MT_EINDEX,
                       "Dimension out of range (expected to be in range of [%d, %d], "
                       "but got -3)",
                       -nd, nd - 1);
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

/* the probabilities softmax(q k^T * scale + mask) over the keys, is_causal keeping key j for
 * query i when j <= i only, a row of only -inf giving 0 */
static mt_tensor *
probs(tmp *s, mt_tensor *q, mt_tensor *k, mt_tensor *mask, bool is_causal, double scale)
{
    mt_tensor *r = NULL;
    if (is_causal && !failed(s, q, k)) {
        int64_t ls[2] = {q->sizes[q->ndim - 2], k->sizes[k->ndim - 2]};
        mt_tensor *ones = own(s, mt_op_ones(2, ls, MT_BOOL, mt_tensor_device(q), false, &r), &r);
        mask = failed(s, ones, ones) ? NULL : own(s, mt_op_tril(ones, 0, &r), &r);
    }
    mt_tensor *kt = failed(s, k, k) ? NULL : own(s, mt_op_transpose(k, -2, -1, &r), &r);
    mt_tensor *scores = scaled(s, bin(s, MT_OP_matmul, q, kt), scale);
    if (mask) {
        return safe_softmax(s, with_mask(s, scores, mask));
    }
    return failed(s, scores, scores) ? NULL : own(s, mt_op_softmax(scores, -1, -1, &r), &r);
}

mt_status
mt_attention_probs(mt_tensor *q, mt_tensor *k, mt_tensor *mask, bool is_causal, double scale,
                   mt_tensor **out)
{
    tmp s = {0};
    give(&s, probs(&s, q, k, mask, is_causal, scale), out);
    return finish(&s);
}

/* mask as the additive float mask the fused kernel takes, in dt, expanded to (B, H, L, S) */
static mt_tensor *
additive(tmp *s, mt_tensor *mask, mt_dtype dt, const int64_t *sizes)
{
    mt_tensor *r = NULL;
    mt_tensor *m = mask->dtype == MT_BOOL ? sel(s, mask, num(s, 0.0), num(s, -INFINITY)) : mask;
    if (!failed(s, m, m) && m->dtype != dt) {
        m = own(s, mt_op__to_copy(m, dt, mt_tensor_device(m), &r), &r);
    }
    return failed(s, m, m) ? NULL : own(s, mt_op_expand(m, 4, sizes, &r), &r);
}

/* Whether PyTorch's CPU flash kernel takes the call (its sdp_utils' checks): float inputs,
 * no dropout, 4-D query, key and value of one batch and head count and one head size, no
 * empty sequence, and a mask (if any) that needs no gradient; the rest take the math path. */
static bool
flash_fits(const mt_tensor *q, const mt_tensor *k, const mt_tensor *v, const mt_tensor *mask,
           double dropout_p)
{
    if (mt_tensor_device(q).type != MT_CPU || dropout_p != 0 || !mt_dtype_is_float(q->dtype) ||
        q->ndim != 4 || k->ndim != 4 || v->ndim != 4) {
        return false;
    }
    for (int d = 0; d < 2; d++) {
        if (k->sizes[d] != q->sizes[d] || v->sizes[d] != q->sizes[d]) {
            return false;
        }
    }
    return k->sizes[3] == q->sizes[3] && v->sizes[3] == q->sizes[3] && q->sizes[2] > 0 &&
           k->sizes[2] > 0 && (mask == NULL || (mask->ndim >= 2 && !mask->requires_grad));
}

/* The fused CPU kernel's call on the 4-D inputs as they are (so its node's edges are theirs),
 * the mask broadcast to (B, H, L, S). */
static mt_tensor *
fused(tmp *s, mt_tensor *q, mt_tensor *k, mt_tensor *v, mt_tensor *mask, bool is_causal,
      double scale)
{
    mt_tensor *r = NULL;
    const int64_t sizes[4] = {q->sizes[0], q->sizes[1], q->sizes[2], k->sizes[2]};
    mt_tensor *m4 = mask ? additive(s, mask, q->dtype, sizes) : NULL;
    if (mask && failed(s, m4, m4)) {
        return NULL;
    }
    return own(s,
               mt_op__scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, m4,
                                                                 mt_scalar_float(scale), &r),
               &r);
}

// query (..., L, E), key (..., S, E), value (..., S, Ev), attn_mask broadcastable to
// (..., L, S); out (..., L, Ev) = dropout(softmax(query key^T * scale + mask)) value. The calls
// PyTorch's CPU flash kernel takes (flash_fits) take the fused kernel (csrc/cpu/attention.c);
// the rest, 3-D, CUDA and dropout_p > 0 included, this composite of ops.
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
    double scale = mt_attention_scale(a->s[0], q);
    tmp s = {0};
    mt_tensor *r = NULL;
    if (enable_gqa && (st = group_heads(&s, q, &k, &v))) {
        finish(&s);
        return st;
    }
    if (flash_fits(q, k, v, mask, dropout_p)) {
        give(&s, fused(&s, q, k, v, mask, is_causal, scale), &a->out[0]);
        return finish(&s);
    }
    mt_tensor *attn = probs(&s, q, k, mask, is_causal, scale);
    if (dropout_p > 0 && !failed(&s, attn, attn)) {
        attn = own(&s, mt_op_dropout(attn, mt_scalar_float(dropout_p), true, &r), &r);
    }
    give(&s, bin(&s, MT_OP_matmul, attn, v), &a->out[0]);
    return finish(&s);
}

/* The result (.., L, Ev) laid out in the query's order of dims, as PyTorch's CPU flash kernel
 * lays it out: a query made by view(B, L, H, E).transpose(1, 2) gives a result whose
 * transpose(1, 2) is contiguous again (so .view(B, L, H * Ev) works, as attention modules
 * write it). A query whose last dim is not its innermost, or an order that would not keep Ev
 * innermost, gives a contiguous result. */
static mt_status
out_like_query(mt_plan *p, const mt_tensor *q, int64_t Ev)
{
    const int nd = q->ndim;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    memcpy(sizes, q->sizes, sizeof(int64_t) * (size_t)nd);
    sizes[nd - 1] = Ev;
    if (q->strides[nd - 1] != 1) {
        return mt_front_output(p, q->dtype, nd, sizes);
    }
    mt_dense_strides_like(nd, sizes, 1, &q->strides, strides);
    if (strides[nd - 1] != 1 && mt_numel(nd, sizes) > 1) {
        return mt_front_output(p, q->dtype, nd, sizes);
    }
    return mt_front_output_strided(p, q->dtype, nd, sizes, strides);
}

/* _scaled_dot_product_flash_attention_for_cpu's checks (an internal op: the composite above
 * calls it with flattened batches); its plan: the scale; its result: out_like_query's */
mt_status
mt_front_sdpa_flash_cpu(const mt_args *a, mt_plan *p)
{
    mt_tensor *q = a->t[0], *k = a->t[1], *v = a->t[2], *m = a->t[3];
    const int nd = q->ndim;
    if ((nd != 3 && nd != 4) || k->ndim != nd || v->ndim != nd || (m && m->ndim != nd)) {
        return mt_fail(MT_ERUNTIME, "_scaled_dot_product_flash_attention_for_cpu: expected 3-D "
                                    "or 4-D query, key, value and attn_mask of one rank "
                                    "((batch, [heads,] rows, cols)");
    }
    if (!mt_dtype_is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype ||
        (m && m->dtype != q->dtype)) {
        return mt_fail(MT_ERUNTIME, "_scaled_dot_product_flash_attention_for_cpu: expected "
                                    "floating point inputs of one dtype");
    }
    if (a->b[0] && m) {
        return mt_fail(MT_ERUNTIME, "_scaled_dot_product_flash_attention_for_cpu: attn_mask and "
                                    "is_causal together");
    }
    const int64_t L = q->sizes[nd - 2], S = k->sizes[nd - 2];
    bool match = k->sizes[nd - 1] == q->sizes[nd - 1] && v->sizes[nd - 2] == S &&
                 (m == NULL || (m->sizes[nd - 2] == L && m->sizes[nd - 1] == S));
    for (int d = 0; d < nd - 2; d++) {
        match = match && k->sizes[d] == q->sizes[d] && v->sizes[d] == q->sizes[d] &&
                (m == NULL || m->sizes[d] == q->sizes[d]);
    }
    if (!match) {
        return mt_fail(MT_ERUNTIME, "_scaled_dot_product_flash_attention_for_cpu: query (B, L, "
                                    "E), key (B, S, E), value (B, S, Ev) and attn_mask (B, L, S) "
                                    "do not match");
    }
    p->scale = mt_attention_scale(a->s[0], q);
    return out_like_query(p, q, v->sizes[nd - 1]);
}
