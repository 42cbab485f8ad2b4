/* Autocast: what the dispatcher does to a call inside an enabled torch.autocast region.
 *
 * The policy of each op is a row of dispatch/autocast.def. For a call whose tensors are on a
 * device type with autocast on, the policy picks a dtype, each eligible tensor (floating point,
 * on that device type, not float64, not a wrapped Python number) is cast to it through
 * _to_copy (an op, so autograd takes gradients back through the cast to the float32 leaves),
 * and the op runs with autocast off for that device type, as PyTorch's excluded Autocast key:
 * linear's addmm is not autocast again. The casts of float32 leaves that require grad (the
 * weights) are kept in a per-thread cache until the outermost region ends (Python clears it).
 * This file casts and chooses; it computes nothing. */
#include <stdlib.h>

#include "dispatch/autocast.h"
#include "ops/ops.h"

#define MT_AC_POLICY__ 0
#define MT_AC_POLICY_LOWER 1
#define MT_AC_POLICY_FP32 2
#define MT_AC_POLICY_FP32_DTYPE 3
#define MT_AC_POLICY_PROMOTE 4
#define MT_AC_POLICY_BANNED 5

/* policies[op][device type]: 0 for the ops autocast leaves alone */
static const unsigned char policies[MT_NUM_OPS][MT_NUM_DEVICE_TYPES] = {
#define MT_AUTOCAST(name, cpu, cuda) \
    [MT_OP_##name] = {[MT_CPU] = MT_AC_POLICY_##cpu, [MT_CUDA] = MT_AC_POLICY_##cuda},
#include "dispatch/autocast.def"
#undef MT_AUTOCAST
};

_Thread_local unsigned mt_autocast_on;
static _Thread_local mt_dtype region_dtype[MT_NUM_DEVICE_TYPES] = {MT_BFLOAT16, MT_FLOAT16};
static _Thread_local bool cache_off;

/* One cached cast: src (retained, so its address is not reused while cached) and its cast. */
typedef struct cached {
    mt_tensor *src, *cast;
} cached;

static _Thread_local cached *cache;
static _Thread_local int64_t cache_n, cache_cap;

bool
mt_autocast_enabled(mt_device_type dev)
{
    return mt_autocast_on >> dev & 1u;
}

void
mt_autocast_set_enabled(mt_device_type dev, bool on)
{
    mt_autocast_on = on ? mt_autocast_on | 1u << dev : mt_autocast_on & ~(1u << dev);
}

mt_dtype
mt_autocast_dtype(mt_device_type dev)
{
    return region_dtype[dev];
}

void
mt_autocast_set_dtype(mt_device_type dev, mt_dtype dt)
{
    region_dtype[dev] = dt;
}

bool
mt_autocast_cache_enabled(void)
{
    return !cache_off;
}

void
mt_autocast_set_cache_enabled(bool on)
{
    cache_off = !on;
}

void
mt_autocast_clear_cache(void)
{
    for (int64_t k = 0; k < cache_n; k++) {
        mt_tensor_release(cache[k].src);
        mt_tensor_release(cache[k].cast);
    }
    free(cache);
    cache = NULL;
    cache_n = cache_cap = 0;
}

int64_t
mt_autocast_cache_size(void)
{
    return cache_n;
}

/* Whether autocast may cast t in a region of device type dev (PyTorch's is_eligible). */
static bool
eligible(const mt_tensor *t, mt_device_type dev)
{
    return t && !t->is_wrapped_number && mt_tensor_device(t).type == dev &&
           mt_dtype_is_float(t->dtype) && t->dtype != MT_FLOAT64;
}

/* A weight: a float32 leaf that requires grad, cast to the region's dtype (cached_cast's test). */
static bool
cacheable(const mt_tensor *t, mt_dtype to, mt_device_type dev)
{
    return !cache_off && to == region_dtype[dev] && t->dtype == MT_FLOAT32 && t->requires_grad &&
           t->grad_fn == NULL && t->view_base == NULL;
}

static mt_status
remember(mt_tensor *src, mt_tensor *cast)
{
    if (cache_n == cache_cap) {
        int64_t cap = cache_cap ? 2 * cache_cap : 16;
        cached *grown = realloc(cache, (size_t)cap * sizeof(*cache));
        if (grown == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory for autocast's cache");
        }
        cache = grown;
        cache_cap = cap;
    }
    cache[cache_n++] = (cached){mt_tensor_retain(src), mt_tensor_retain(cast)};
    return MT_OK;
}

/* *out = t cast to dtype to (a new reference), from the cache where t is a weight. */
static mt_status
cast_one(mt_tensor *t, mt_dtype to, mt_device_type dev, mt_tensor **out)
{
    bool keep = cacheable(t, to, dev);
    for (int64_t k = 0; keep && k < cache_n; k++) {
        if (cache[k].src == t) {
            *out = mt_tensor_retain(cache[k].cast);
            return MT_OK;
        }
    }
    mt_status st = mt_op__to_copy(t, (int)to, mt_tensor_device(t), out);
    if (st == MT_OK && keep && (st = remember(t, *out)) != MT_OK) {
        mt_tensor_clear(out);
    }
    return st;
}

/* The device type of a call: its first tensor's (wrapped numbers aside); false for none. */
static bool
call_device(const mt_args *a, mt_device_type *dev)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && !a->t[k]->is_wrapped_number) {
            *dev = mt_tensor_device(a->t[k]).type;
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k]) {
            *dev = mt_tensor_device(a->tl[k]).type;
            return true;
        }
    }
    return false;
}

/* PROMOTE's dtype: float32 if an eligible tensor is float32, else the region's dtype. */
static mt_status
widest(const mt_args *a, mt_device_type dev, mt_dtype *to)
{
    mt_dtype lower = region_dtype[dev];
    *to = lower;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS + a->ntl; k++) {
        const mt_tensor *t = k < MT_MAX_TENSOR_ARGS ? a->t[k] : a->tl[k - MT_MAX_TENSOR_ARGS];
        if (!eligible(t, dev)) {
            continue;
        }
        if (t->dtype == MT_FLOAT32) {
            *to = MT_FLOAT32;
        } else if (t->dtype != lower) {
            return mt_fail(MT_ERUNTIME,
                           "Unexpected floating ScalarType in at::autocast::prioritize");
        }
    }
    return MT_OK;
}

/* Runs below(op, a) with a's eligible tensors (t[] and the first Tensor[]) cast to to. */
static mt_status
run_cast(mt_op op, mt_args *a, mt_dtype to, mt_device_type dev, mt_autocast_below below)
{
    mt_tensor *given[MT_MAX_TENSOR_ARGS] = {NULL};
    mt_tensor **given_list = a->tl, **list = NULL;
    mt_status st = MT_OK;
    if (a->ntl > 0) {
        list = calloc((size_t)a->ntl, sizeof(*list));
        if (list == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory for autocast's casts");
        }
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        mt_tensor *t = a->t[k], *cast = NULL;
        if (eligible(t, dev) && t->dtype != to && (st = cast_one(t, to, dev, &cast)) == MT_OK) {
            given[k] = t;
            a->t[k] = cast;
        }
    }
    for (int k = 0; k < a->ntl && st == MT_OK; k++) {
        mt_tensor *t = given_list[k], *cast = NULL;
        list[k] = t; /* only the casts are released below */
        if (eligible(t, dev) && t->dtype != to && (st = cast_one(t, to, dev, &cast)) == MT_OK) {
            list[k] = cast;
        }
    }
    if (st == MT_OK) {
        a->tl = list ? list : given_list;
        st = below(op, a);
        a->tl = given_list;
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (given[k]) {
            mt_tensor_release(a->t[k]);
            a->t[k] = given[k];
        }
    }
    for (int k = 0; list && k < a->ntl; k++) {
        if (list[k] && list[k] != given_list[k]) {
            mt_tensor_release(list[k]);
        }
    }
    free(list);
    return st;
}

/* The policy's dtype for the call, or MT_NUM_DTYPES for "run as given". */
static mt_status
target_dtype(int policy, mt_args *a, mt_device_type dev, mt_dtype *to)
{
    *to = MT_NUM_DTYPES;
    switch (policy) {
    case MT_AC_POLICY_LOWER:
        *to = region_dtype[dev];
        return MT_OK;
    case MT_AC_POLICY_FP32:
        *to = MT_FLOAT32;
        return MT_OK;
    case MT_AC_POLICY_PROMOTE:
        return widest(a, dev, to);
    case MT_AC_POLICY_BANNED:
        return mt_fail(MT_ERUNTIME,
                       "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe "
                       "to autocast.\nMany models use a sigmoid layer right before the binary "
                       "cross entropy layer.\nIn this case, combine the two layers using "
                       "torch.nn.functional.binary_cross_entropy_with_logits\nor "
                       "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
                       "BCEWithLogits are\nsafe to autocast.");
    default:
        return MT_OK;
    }
}

mt_status
mt_autocast_dispatch(mt_op op, mt_args *a, mt_autocast_below below)
{
    mt_device_type dev;
    if (!call_device(a, &dev) || !(mt_autocast_on >> dev & 1u) || policies[op][dev] == 0) {
        return below(op, a);
    }
    int policy = policies[op][dev];
    mt_dtype to;
    mt_status st = target_dtype(policy, a, dev, &to);
    if (st) {
        return st;
    }
    /* the op runs with this device type's autocast off, as under PyTorch's excluded key */
    unsigned saved = mt_autocast_on;
    mt_autocast_on &= ~(1u << dev);
    if (policy == MT_AC_POLICY_FP32_DTYPE) {
        /* dtype=float32 where none is given and autocast could cast the first tensor */
        int given = a->dtype;
        if (given < 0 && eligible(a->t[0], dev)) {
            a->dtype = MT_FLOAT32;
        }
        st = below(op, a);
        a->dtype = given;
    } else {
        st = run_cast(op, a, to, dev, below);
    }
    mt_autocast_on = saved;
    return st;
}
