/* Fused optimizer updates (SGD, Adam/AdamW, RMSprop) over lists of CPU tensors, in place.
 *
 * The per-element math follows PyTorch's single-tensor implementations step by step, in the
 * parameter's dtype with each Python-number coefficient rounded to it, as PyTorch's in-place ops
 * compute, so float32 results agree with PyTorch's to rounding. Per-step scalars (bias
 * corrections) are computed once per parameter in double, as PyTorch computes them in Python.
 * The loops see contiguous memory: a strided operand is updated through a contiguous copy. */
#include <math.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/optim.h"
#include "profiler/trace.h"

#define MAX_OPERANDS 5 /* Adam: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq */
#define OPTIM_GRAIN 32768 /* elements below which a thread costs more than it saves */

/* Elements lo..hi of one parameter's update; data[k] is operand k's first element (or NULL). */
typedef void (*range_fn)(char *const *data, int64_t lo, int64_t hi, const void *ctx);

/* PyTorch's lerp: exact at both ends whichever side of 0.5 the weight is. */
#define LERP(a, b, w) \
    (fabs((double)(w)) < 0.5 ? (a) + (w) * ((b) - (a)) : (b) - ((b) - (a)) * (1 - (w)))

/* torch.maximum: NaN wins. */
#define MAXIMUM(a, b) (((a) > (b) || isnan(a)) ? (a) : (b))

/* ---- SGD ------------------------------------------------------------------------------------- */

typedef struct sgd_ctx {
    const mt_sgd_opts *o;
    bool first; /* the momentum buffer starts as the gradient */
} sgd_ctx;

// p, g, buf (n); g = -g if maximize; g += wd * p; buf = momentum * buf + (1 - dampening) * g;
// g = nesterov ? g + momentum * buf : buf; p -= lr * g
#define SGD_LOOP(name, T)                                                                       \
    static void name(char *const *data, int64_t lo, int64_t hi, const void *ctx)                \
    {                                                                                           \
        const sgd_ctx *c = ctx;                                                                 \
        const mt_sgd_opts *o = c->o;                                                            \
        T *p = (T *)data[0], *buf = (T *)data[2];                                               \
        const T *g = (const T *)data[1];                                                        \
        const T wd = (T)o->weight_decay, mom = (T)o->momentum;                                  \
        const T keep = (T)(1 - o->dampening), neg_lr = (T)-o->lr;                               \
        const bool maximize = o->maximize, decay = o->weight_decay != 0;                        \
        const bool use_buf = o->momentum != 0, first = c->first, nesterov = o->nesterov;        \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            T gi = maximize ? -g[i] : g[i];                                                     \
            if (decay) {                                                                        \
                gi = gi + wd * p[i];                                                            \
            }                                                                                   \
            if (use_buf) {                                                                      \
                T b = first ? gi : buf[i] * mom + keep * gi;                                    \
                buf[i] = b;                                                                     \
                gi = nesterov ? gi + mom * b : b;                                               \
            }                                                                                   \
            p[i] = p[i] + neg_lr * gi;                                                          \
        }                                                                                       \
    }
SGD_LOOP(sgd_f32, float)
SGD_LOOP(sgd_f64, double)

/* ---- Adam and AdamW -------------------------------------------------------------------------- */

typedef struct adam_ctx {
    const mt_adam_opts *o;
    double step_size;        /* lr / (1 - beta1^step) */
    double bias_corr2_sqrt;  /* sqrt(1 - beta2^step) */
} adam_ctx;

// p, g, m, v, vmax (n); g = -g if maximize; AdamW: p *= 1 - lr * wd, Adam: g += wd * p;
// m = lerp(m, g, 1 - beta1); v = beta2 * v + (1 - beta2) * g * g; vmax = max(vmax, v) with
// amsgrad; p -= step_size * m / (sqrt(amsgrad ? vmax : v) / bias_corr2_sqrt + eps)
#define ADAM_LOOP(name, T, SQRT)                                                                \
    static void name(char *const *data, int64_t lo, int64_t hi, const void *ctx)                \
    {                                                                                           \
        const adam_ctx *c = ctx;                                                                \
        const mt_adam_opts *o = c->o;                                                           \
        T *p = (T *)data[0], *m = (T *)data[2], *v = (T *)data[3], *vmax = (T *)data[4];        \
        const T *g = (const T *)data[1];                                                        \
        const T wd = (T)o->weight_decay, decay = (T)(1 - o->lr * o->weight_decay);              \
        const T w1 = (T)(1 - o->beta1), beta2 = (T)o->beta2, w2 = (T)(1 - o->beta2);            \
        const T bc2 = (T)c->bias_corr2_sqrt, eps = (T)o->eps, neg_step = (T)-c->step_size;      \
        const bool maximize = o->maximize, amsgrad = o->amsgrad;                                \
        const bool coupled = o->weight_decay != 0 && !o->decoupled_weight_decay;                \
        const bool decoupled = o->weight_decay != 0 && o->decoupled_weight_decay;               \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            T gi = maximize ? -g[i] : g[i];                                                     \
            if (decoupled) {                                                                    \
                p[i] = p[i] * decay;                                                            \
            } else if (coupled) {                                                               \
                gi = gi + wd * p[i];                                                            \
            }                                                                                   \
            m[i] = LERP(m[i], gi, w1);                                                          \
            v[i] = v[i] * beta2;                                                                \
            v[i] = v[i] + w2 * gi * gi;                                                         \
            T second = v[i];                                                                    \
            if (amsgrad) {                                                                      \
                vmax[i] = MAXIMUM(vmax[i], v[i]);                                               \
                second = vmax[i];                                                               \
            }                                                                                   \
            T denom = SQRT(second) / bc2 + eps;                                                 \
            p[i] = p[i] + neg_step * m[i] / denom;                                              \
        }                                                                                       \
    }
ADAM_LOOP(adam_f32, float, sqrtf)
ADAM_LOOP(adam_f64, double, sqrt)

/* ---- RMSprop --------------------------------------------------------------------------------- */

// p, g, sq, ga, buf (n); g = -g if maximize; g += wd * p; sq = alpha * sq + (1 - alpha) * g * g;
// centered: ga = lerp(ga, g, 1 - alpha), avg = sqrt(sq - ga * ga), else avg = sqrt(sq);
// avg += eps; momentum: buf = momentum * buf + g / avg, p -= lr * buf; else p -= lr * g / avg
#define RMSPROP_LOOP(name, T, SQRT)                                                             \
    static void name(char *const *data, int64_t lo, int64_t hi, const void *ctx)                \
    {                                                                                           \
        const mt_rmsprop_opts *o = ctx;                                                         \
        T *p = (T *)data[0], *sq = (T *)data[2], *ga = (T *)data[3], *buf = (T *)data[4];       \
        const T *g = (const T *)data[1];                                                        \
        const T wd = (T)o->weight_decay, alpha = (T)o->alpha, w = (T)(1 - o->alpha);            \
        const T eps = (T)o->eps, mom = (T)o->momentum, neg_lr = (T)-o->lr;                      \
        const bool maximize = o->maximize, decay = o->weight_decay != 0;                        \
        const bool centered = o->centered, use_buf = o->momentum > 0;                           \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            T gi = maximize ? -g[i] : g[i];                                                     \
            if (decay) {                                                                        \
                gi = gi + wd * p[i];                                                            \
            }                                                                                   \
            sq[i] = sq[i] * alpha;                                                              \
            sq[i] = sq[i] + w * gi * gi;                                                        \
            T avg;                                                                              \
            if (centered) {                                                                     \
                ga[i] = LERP(ga[i], gi, w);                                                     \
                avg = SQRT(sq[i] + (T)-1 * ga[i] * ga[i]);                                      \
            } else {                                                                            \
                avg = SQRT(sq[i]);                                                              \
            }                                                                                   \
            avg = avg + eps;                                                                    \
            if (use_buf) {                                                                      \
                buf[i] = buf[i] * mom;                                                          \
                buf[i] = buf[i] + (T)1 * gi / avg;                                              \
                p[i] = p[i] + neg_lr * buf[i];                                                  \
            } else {                                                                            \
                p[i] = p[i] + neg_lr * gi / avg;                                                \
            }                                                                                   \
        }                                                                                       \
    }
RMSPROP_LOOP(rmsprop_f32, float, sqrtf)
RMSPROP_LOOP(rmsprop_f64, double, sqrt)

/* ---- checks and the shared driver ------------------------------------------------------------ */

// The checks every optimizer makes before writing anything: CPU tensors, float parameters, and
// each operand of each list shaped and typed like its parameter.
static mt_status
check_param(const char *fn, int i, const mt_tensor *p, const mt_tensor *g)
{
    if (mt_tensor_device(p).type != MT_CPU || mt_tensor_device(g).type != MT_CPU) {
        return mt_fail(MT_EDEVICE, "%s: expected all tensors to be on the CPU (params[%d])", fn, i);
    }
    if (!mt_dtype_is_float(p->dtype)) {
        return mt_fail(MT_EDTYPE, "%s: params[%d] has dtype %s, expected float32 or float64", fn,
                       i, mt_dtype_name(p->dtype));
    }
    return mt_check_writable(p);
}

static mt_status
check_operand(const char *fn, const char *list, int i, const mt_tensor *t, const mt_tensor *p,
              bool written)
{
    char a[128], b[128];
    if (mt_tensor_device(t).type != MT_CPU) {
        return mt_fail(MT_EDEVICE, "%s: expected all tensors to be on the CPU (%s[%d])", fn, list,
                       i);
    }
    if (t->dtype != p->dtype) {
        return mt_fail(MT_EDTYPE, "%s: %s[%d] has dtype %s but params[%d] has dtype %s", fn, list,
                       i, mt_dtype_name(t->dtype), i, mt_dtype_name(p->dtype));
    }
    bool same = t->ndim == p->ndim;
    for (int d = 0; same && d < t->ndim; d++) {
        same = t->sizes[d] == p->sizes[d];
    }
    if (!same) {
        return mt_fail(MT_ESHAPE, "%s: %s[%d] has shape %s but params[%d] has shape %s", fn, list,
                       i, mt_format_sizes(a, sizeof(a), t->ndim, t->sizes), i,
                       mt_format_sizes(b, sizeof(b), p->ndim, p->sizes));
    }
    return written ? mt_check_writable(t) : MT_OK;
}

static mt_status
check_step(const char *fn, int i, const mt_tensor *s)
{
    if (mt_tensor_device(s).type != MT_CPU || mt_tensor_numel(s) != 1) {
        return mt_fail(MT_ERUNTIME, "%s: steps[%d] must be a one-element CPU tensor", fn, i);
    }
    return MT_OK;
}

/* step += 1, in the step tensor's dtype (float32 in PyTorch); returns the new value. */
static double
advance_step(mt_tensor *s)
{
    mt_scalar v;
    (void)mt_tensor_item(s, &v); /* cannot fail: check_step saw one element */
    double next = mt_scalar_to_double(v) + 1;
    mt_store_scalar(mt_tensor_data(s), s->dtype, mt_scalar_float(next));
    mt_tensor_bump_version(s);
    return mt_scalar_to_double(mt_load_scalar(mt_tensor_data(s), s->dtype));
}

static void
run_range(range_fn fn, char *const *data, int64_t n, const void *ctx)
{
    const int parts = mt_parallel_parts(n, OPTIM_GRAIN);
    if (parts <= 1) {
        fn(data, 0, n, ctx);
        return;
    }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        fn(data, n * k / parts, n * (k + 1) / parts, ctx);
    }
}

/* One parameter's update: ops[0] is the parameter, NULL operands are absent, bit k of `written`
 * says the update writes operand k. Strided operands go through contiguous copies. */
static mt_status
apply(mt_tensor *const *ops, unsigned written, range_fn f32, range_fn f64, const void *ctx)
{
    mt_tensor *staged[MAX_OPERANDS] = {NULL};
    char *data[MAX_OPERANDS] = {NULL};
    mt_status st = MT_OK;
    for (int k = 0; k < MAX_OPERANDS; k++) {
        if (ops[k] == NULL) {
            continue;
        }
        if (mt_tensor_is_contiguous(ops[k])) {
            staged[k] = mt_tensor_retain(ops[k]);
        } else if ((st = mt_cpu_cast(ops[k], ops[k]->dtype, &staged[k])) != MT_OK) {
            goto out_release;
        }
        data[k] = mt_tensor_data(staged[k]);
    }
    run_range(ops[0]->dtype == MT_FLOAT32 ? f32 : f64, data, mt_tensor_numel(ops[0]), ctx);
    for (int k = 0; k < MAX_OPERANDS; k++) {
        if (ops[k] == NULL || !(written & (1u << k))) {
            continue;
        }
        if (staged[k] != ops[k] && (st = mt_cpu_copy_into(ops[k], staged[k])) != MT_OK) {
            goto out_release;
        }
        mt_tensor_bump_version(ops[k]);
    }
out_release:
    for (int k = 0; k < MAX_OPERANDS; k++) {
        mt_tensor_clear(&staged[k]);
    }
    return st;
}

#define W(k) (1u << (k))

static void
trace_enter(const char *name)
{
    if (mt_trace_on) {
        mt_trace_enter(MT_LAYER_KERNEL, name, "CPU");
    }
}

static void
trace_exit(void)
{
    if (mt_trace_on) {
        mt_trace_exit();
    }
}

/* ---- the entry points ------------------------------------------------------------------------ */

mt_status
mt_cpu_fused_sgd(int n, mt_tensor *const *params, mt_tensor *const *grads, mt_tensor *const *bufs,
                 const bool *first, const mt_sgd_opts *o)
{
    const char *fn = "_fused_sgd_";
    const bool mom = o->momentum != 0;
    mt_status st = MT_OK;
    for (int i = 0; i < n; i++) {
        if ((st = check_param(fn, i, params[i], grads[i])) ||
            (st = check_operand(fn, "grads", i, grads[i], params[i], false)) ||
            (mom && (st = check_operand(fn, "momentum_buffers", i, bufs[i], params[i], true)))) {
            return st;
        }
    }
    trace_enter("mt_cpu_fused_sgd");
    for (int i = 0; st == MT_OK && i < n; i++) {
        mt_tensor *ops[MAX_OPERANDS] = {params[i], grads[i], mom ? bufs[i] : NULL};
        sgd_ctx c = {o, mom && first[i]};
        st = apply(ops, W(0) | W(2), sgd_f32, sgd_f64, &c);
    }
    trace_exit();
    return st;
}

mt_status
mt_cpu_fused_adam(int n, mt_tensor *const *params, mt_tensor *const *grads,
                  mt_tensor *const *exp_avgs, mt_tensor *const *exp_avg_sqs,
                  mt_tensor *const *max_exp_avg_sqs, mt_tensor *const *steps,
                  const mt_adam_opts *o)
{
    const char *fn = o->decoupled_weight_decay ? "_fused_adamw_" : "_fused_adam_";
    mt_status st = MT_OK;
    for (int i = 0; i < n; i++) {
        if ((st = check_param(fn, i, params[i], grads[i])) ||
            (st = check_operand(fn, "grads", i, grads[i], params[i], false)) ||
            (st = check_operand(fn, "exp_avgs", i, exp_avgs[i], params[i], true)) ||
            (st = check_operand(fn, "exp_avg_sqs", i, exp_avg_sqs[i], params[i], true)) ||
            (o->amsgrad &&
             (st = check_operand(fn, "max_exp_avg_sqs", i, max_exp_avg_sqs[i], params[i], true))) ||
            (st = check_step(fn, i, steps[i]))) {
            return st;
        }
    }
    trace_enter(o->decoupled_weight_decay ? "mt_cpu_fused_adamw" : "mt_cpu_fused_adam");
    for (int i = 0; st == MT_OK && i < n; i++) {
        const double step = advance_step(steps[i]);
        adam_ctx c = {o, o->lr / (1 - pow(o->beta1, step)), pow(1 - pow(o->beta2, step), 0.5)};
        mt_tensor *ops[MAX_OPERANDS] = {params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                                        o->amsgrad ? max_exp_avg_sqs[i] : NULL};
        st = apply(ops, W(0) | W(2) | W(3) | W(4), adam_f32, adam_f64, &c);
    }
    trace_exit();
    return st;
}

mt_status
mt_cpu_fused_rmsprop(int n, mt_tensor *const *params, mt_tensor *const *grads,
                     mt_tensor *const *square_avgs, mt_tensor *const *grad_avgs,
                     mt_tensor *const *bufs, mt_tensor *const *steps, const mt_rmsprop_opts *o)
{
    const char *fn = "_fused_rmsprop_";
    const bool mom = o->momentum > 0;
    mt_status st = MT_OK;
    for (int i = 0; i < n; i++) {
        if ((st = check_param(fn, i, params[i], grads[i])) ||
            (st = check_operand(fn, "grads", i, grads[i], params[i], false)) ||
            (st = check_operand(fn, "square_avgs", i, square_avgs[i], params[i], true)) ||
            (o->centered &&
             (st = check_operand(fn, "grad_avgs", i, grad_avgs[i], params[i], true))) ||
            (mom && (st = check_operand(fn, "momentum_buffers", i, bufs[i], params[i], true))) ||
            (st = check_step(fn, i, steps[i]))) {
            return st;
        }
    }
    trace_enter("mt_cpu_fused_rmsprop");
    for (int i = 0; st == MT_OK && i < n; i++) {
        advance_step(steps[i]);
        mt_tensor *ops[MAX_OPERANDS] = {params[i], grads[i], square_avgs[i],
                                        o->centered ? grad_avgs[i] : NULL, mom ? bufs[i] : NULL};
        st = apply(ops, W(0) | W(2) | W(3) | W(4), rmsprop_f32, rmsprop_f64, o);
    }
    trace_exit();
    return st;
}
