/* The small dtypes (uint8, int8, int16, float16, bfloat16, and the shell dtypes that
 * dispatch/shell.c lets through) through the kernels of the dtypes
 * they compute in, as PyTorch's CPU computes float16 and bfloat16: load to float32 (integers to
 * int32, which C's arithmetic on them does too), compute, round or wrap once on store.
 *
 * The dispatcher calls mt_widen_run for a backend kernel given a small-dtype tensor: the op's
 * front end checks the call as given (so errors name 'Half', 'Byte'), the small tensors are copied
 * to their computing dtype, the op runs, and its results in that dtype are converted back to the
 * dtype PyTorch gives; an in-place op's self (and the tensors an op updates: the optimizer steps'
 * lists, batch_norm's running statistics) gets the new values copied back. Only copies move
 * data here, through the device's copy_ kernel: this file computes nothing. */
#include <stdlib.h>

#include "dispatch/widen.h"
#include "ops/front.h"

/* index and index_put_ take their indices as given: a uint8 mask is no integer index (the
 * binding layer turns it into a bool mask, with PyTorch's warning). */
static bool
widens_list(mt_op op, int list)
{
    return list > 0 || !(op == MT_OP_index || op == MT_OP_index_put_ || op == MT_OP_index_put);
}

static bool
is_small(const mt_tensor *t)
{
    return t && mt_dtype_is_small(t->dtype);
}

_Thread_local int mt_widen_stored_dtype = -1;

/* the call mt_widen_run is running: its arguments, and each widened slot beside its tensor as
 * given */
typedef struct widened_call {
    const mt_args *a;
    mt_tensor **const *slot;
    mt_tensor *const *orig;
    int n;
} widened_call;

static _Thread_local const widened_call *running;

mt_tensor *
mt_widen_as_given(const mt_args *a, mt_tensor *t)
{
    for (int k = 0; running && running->a == a && k < running->n; k++) {
        if (*running->slot[k] == t) {
            return running->orig[k];
        }
    }
    return t;
}

bool
mt_widen_needed(mt_op op, const mt_args *a)
{
    if (mt_op_flags[op] & AS_STORED) {
        return false;
    }
    if (a->dtype >= 0 && mt_dtype_is_small((mt_dtype)a->dtype)) {
        return true;
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (is_small(a->t[k])) {
            return true;
        }
    }
    for (int l = 0; l < MT_MAX_TENSOR_LISTS; l++) {
        mt_tensorlist tl = mt_args_tensorlist(a, l);
        if (l > 0 && tl.t == NULL) {
            break;
        }
        for (int k = 0; widens_list(op, l) && k < tl.n; k++) {
            if (is_small(tl.t[k])) {
                return true;
            }
        }
    }
    return false;
}

/* dst = src through the copy_ kernel of dst's device (both on it). */
static mt_status
backend_copy(mt_tensor *dst, mt_tensor *src)
{
    mt_key key = mt_tensor_device(dst).type == MT_CUDA ? MT_KEY_CUDA : MT_KEY_CPU;
    const mt_kernel *k = mt_kernel_for(MT_OP_copy_, key);
    if (k->fn == NULL) {
        return mt_fail(MT_ENOTIMPL,
                       "Could not run 'aten::copy_' with arguments from the '%s' "
                       "backend.",
                       mt_key_names[key]);
    }
    mt_args c;
    mt_args_init(&c);
    c.t[0] = dst;
    c.t[1] = src;
    mt_status st = k->fn(&c);
    for (int o = 0; o < MT_MAX_OUTPUTS; o++) {
        mt_tensor_clear(&c.out[o]);
    }
    return st;
}

/* A copy of src in dtype dt, laid out as src (PyTorch's to(dtype) with preserve_format): its
 * strides where src is dense (a transposed input keeps its layout, so results follow it as they
 * would), else dense strides in the order of src's. */
static mt_status
cast_copy(mt_tensor *src, mt_dtype dt, mt_tensor **out)
{
    int64_t strides[MT_MAX_DIMS];
    mt_preserve_strides(src, strides);
    mt_status st = mt_tensor_empty_strided(src->ndim, src->sizes, strides, dt,
                                           mt_tensor_device(src), out);
    if (st) {
        return st;
    }
    st = backend_copy(*out, src);
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

/* The dtype results in the computing dtype go back to: none for an op flagged KEEPS_DTYPE in
 * ops.def (its results are positions, not values), else the dtype argument where one is given,
 * else the promotion of the small tensors, unless a tensor of the computing dtype itself joined
 * them and outranks them (float16 + float32 tensors gives float32). -1: none. */
static int
castback_dtype(mt_op op, const mt_args *a, mt_tensor *const *orig, int n)
{
    if (mt_op_flags[op] & KEEPS_DTYPE) {
        return -1;
    }
    /* the norms whose float16/bfloat16 input may have float32 parameters (PyTorch's mixed type,
     * mt_check_param_dtype) give the input's dtype */
    bool mixed_norm = op == MT_OP_layer_norm || op == MT_OP_native_layer_norm ||
                      op == MT_OP_batch_norm;
    if (mixed_norm && is_small(orig[0])) {
        return orig[0]->dtype;
    }
    if (a->dtype >= 0) {
        /* a dtype= given: the results are in it (x.half().sum(dtype=float32) is float32) */
        return mt_dtype_is_small((mt_dtype)a->dtype) ? a->dtype : -1;
    }
    mt_promotion small, all;
    mt_promotion_init(&small);
    mt_promotion_init(&all);
    bool any = false;
    for (int k = 0; k < n; k++) {
        const mt_tensor *t = orig[k];
        if (t == NULL) {
            continue;
        }
        mt_promotion_add(&all, t->dtype, t->ndim, t->is_wrapped_number);
        if (mt_dtype_is_small(t->dtype)) {
            mt_promotion_add(&small, t->dtype, t->ndim, false);
            any = true;
        }
    }
    if (!any) {
        return -1;
    }
    mt_dtype r = mt_promotion_result(&small);
    if (!mt_dtype_is_small(r)) {
        return -1;
    }
    mt_dtype w = mt_dtype_compute(r);
    for (int k = 0; k < n; k++) {
        if (orig[k] && !orig[k]->is_wrapped_number && orig[k]->dtype == w &&
            !mt_dtype_is_small(mt_promotion_result(&all))) {
            return -1;
        }
    }
    return (int)r;
}

/* Whether slot k of the call is a tensor the op writes: an in-place op's self, every list of an
 * op with no result (the optimizer steps), batch_norm's running statistics. */
static bool
written(mt_op op, int k, int nt)
{
    if (k >= nt) {
        return mt_op_nout[op] == 0;
    }
    return (k == 0 && (mt_op_flags[op] & INPLACE)) ||
           (op == MT_OP_batch_norm && (k == 3 || k == 4));
}

/* Whether result o of op holds values of the inputs' dtype when that dtype computes in int64
 * (uint32, uint64): only the first result (sort's values, not its indices), and not argsort's
 * positions nor the integer sums and products, which PyTorch gives in int64 whatever the integer
 * input. */
static bool
values_result(mt_op op, int o, int castback)
{
    if (castback < 0 || mt_dtype_compute((mt_dtype)castback) != MT_INT64) {
        return true;
    }
    return o == 0 && op != MT_OP_sum && op != MT_OP_prod && op != MT_OP_cumsum &&
           op != MT_OP_cumprod && op != MT_OP_nansum && op != MT_OP_argsort;
}

/* Result r in the computing dtype back to dt, in place of r. */
static mt_status
narrow_result(mt_tensor **r, int dt)
{
    if (*r == NULL || dt < 0 || (*r)->dtype != mt_dtype_compute((mt_dtype)dt)) {
        return MT_OK;
    }
    mt_tensor *n = NULL;
    mt_status st = cast_copy(*r, (mt_dtype)dt, &n);
    if (st == MT_OK) {
        mt_tensor_release(*r);
        *r = n;
    }
    return st;
}

mt_status
mt_widen_run(mt_op op, mt_args *a, mt_key key, mt_widen_inner inner)
{
    mt_front_fn front = mt_op_fronts[op];
    if (front) {
        mt_plan plan;
        plan.op = op;
        plan.nout = 0;
        mt_status st = front(a, &plan);
        if (st) {
            return st;
        }
    }
    /* every tensor slot of the call, a->t first */
    enum { MAX_SLOTS = 256 };
    mt_tensor **slot[MAX_SLOTS];
    int n = 0;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        slot[n++] = &a->t[k];
    }
    for (int l = 0; l < MT_MAX_TENSOR_LISTS; l++) {
        mt_tensorlist tl = mt_args_tensorlist(a, l);
        if (l > 0 && tl.t == NULL) {
            break;
        }
        for (int k = 0; widens_list(op, l) && k < tl.n; k++) {
            if (n == MAX_SLOTS) {
                return mt_fail(MT_ENOTIMPL,
                               "%s: too many tensors for float16/bfloat16 and the "
                               "small integer dtypes (at most %d)",
                               mt_op_names[op], MAX_SLOTS - MT_MAX_TENSOR_ARGS);
            }
            slot[n++] = &tl.t[k];
        }
    }
    mt_tensor *orig[MAX_SLOTS];
    for (int k = 0; k < n; k++) {
        orig[k] = *slot[k];
    }
    const int castback = castback_dtype(op, a, orig, n);
    const int given_dtype = a->dtype;
    const int stored = a->t[0] ? (int)a->t[0]->dtype : given_dtype; /* a factory's: its dtype= */
    mt_status st = MT_OK;
    int widened = 0;
    for (; widened < n && st == MT_OK; widened++) {
        mt_tensor *t = orig[widened];
        if (!is_small(t)) {
            continue;
        }
        /* a tensor given twice (x + x, x.add_(x)) is widened once, and stays one tensor */
        int seen = 0;
        while (seen < widened && orig[seen] != t) {
            seen++;
        }
        if (seen < widened) {
            *slot[widened] = mt_tensor_retain(*slot[seen]);
        } else {
            st = cast_copy(t, mt_dtype_compute(t->dtype), slot[widened]);
        }
    }
    if (st) {
        goto out_restore;
    }
    if (given_dtype >= 0) {
        a->dtype = (int)mt_dtype_compute((mt_dtype)given_dtype);
    }
    /* nan_to_num's default infinities are the stored dtype's largest finite values */
    const mt_scalar given_s1 = a->s[1], given_s2 = a->s[2];
    if ((op == MT_OP_nan_to_num || op == MT_OP_nan_to_num_) && mt_dtype_is_float(orig[0]->dtype) &&
        mt_dtype_is_small(orig[0]->dtype)) {
        const double max = orig[0]->dtype == MT_FLOAT16 ? 65504.0 : 3.3895313892515355e38;
        a->s[1] = mt_scalar_is_none(a->s[1]) ? mt_scalar_float(max) : a->s[1];
        a->s[2] = mt_scalar_is_none(a->s[2]) ? mt_scalar_float(-max) : a->s[2];
    }
    const int outer_stored = mt_widen_stored_dtype;
    const widened_call *outer = running, now = {a, slot, orig, n};
    mt_widen_stored_dtype = stored;
    running = &now;
    st = inner(op, a, 1u << key);
    running = outer;
    mt_widen_stored_dtype = outer_stored;
    a->dtype = given_dtype;
    a->s[1] = given_s1;
    a->s[2] = given_s2;
    for (int k = 0; k < n && st == MT_OK; k++) {
        if (*slot[k] == orig[k] || !written(op, k, MT_MAX_TENSOR_ARGS)) {
            continue;
        }
        st = backend_copy(orig[k], *slot[k]);
        /* a result that is the widened self is self */
        for (int o = 0; o < MT_MAX_OUTPUTS && st == MT_OK; o++) {
            if (a->out[o] == *slot[k]) {
                mt_tensor_release(a->out[o]);
                a->out[o] = mt_tensor_retain(orig[k]);
            }
        }
    }
    /* all and any of a uint8 tensor give uint8 (PyTorch keeps this for old code) */
    const bool bytes_logical = (op == MT_OP_all || op == MT_OP_any) && orig[0]->dtype == MT_UINT8;
    for (int o = 0; o < MT_MAX_OUTPUTS && st == MT_OK; o++) {
        if (bytes_logical && a->out[o] && a->out[o]->dtype == MT_BOOL) {
            mt_tensor *n = NULL;
            st = cast_copy(a->out[o], MT_UINT8, &n);
            if (st == MT_OK) {
                mt_tensor_release(a->out[o]);
                a->out[o] = n;
            }
        }
        st = st ? st : narrow_result(&a->out[o], values_result(op, o, castback) ? castback : -1);
    }
    for (int o = 0; o < a->noutl && st == MT_OK; o++) {
        st = narrow_result(&a->outl[o], castback);
    }
    if (st) {
        for (int o = 0; o < MT_MAX_OUTPUTS; o++) {
            mt_tensor_clear(&a->out[o]);
        }
        mt_args_clear_outl(a);
    }
out_restore:
    for (int k = 0; k < widened; k++) {
        if (*slot[k] != orig[k]) {
            mt_tensor_clear(slot[k]);
            *slot[k] = orig[k];
        }
    }
    return st;
}
