/* The CPU kernels of the optimizer steps (ops.def's _fused_sgd_, _fused_adam_, _fused_adamw_,
 * _fused_rmsprop_): each updates every parameter of the call, and its state, in place.
 *
 * The front end (ops/optim.c) has checked the lists; the per-element math is core/optim_math.h's,
 * shared with the CUDA kernels. Strided operands are updated through contiguous copies
 * (mt_optim_stage). */
#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/optim.h"

#define OPTIM_GRAIN 32768 /* elements below which a thread costs more than it saves */

/* Elements lo..hi of one parameter's update; data[k] is operand k's first element (or NULL). */
typedef void (*range_fn)(char *const *data, int64_t lo, int64_t hi, const void *coef);

#define AT(k, T) (data[k] ? (T *)data[k] + i : NULL) /* operand k's element i, or NULL */

// p, g and the state (n) of one parameter: element i's update is mt_<opt>_update_<sfx>(p, g,
// state..., coef), coef an mt_<opt>_coef_<sfx>
#define LOOP(opt, T, sfx, ...)                                                           \
    static void opt##_##sfx(char *const *data, int64_t lo, int64_t hi, const void *coef) \
    {                                                                                    \
        const mt_##opt##_coef_##sfx c = *(const mt_##opt##_coef_##sfx *)coef;            \
        for (int64_t i = lo; i < hi; i++) {                                              \
            mt_##opt##_update_##sfx(AT(0, T), *AT(1, T), __VA_ARGS__, &c);               \
        }                                                                                \
    }
LOOP(sgd, float, f32, AT(2, float))
LOOP(sgd, double, f64, AT(2, double))
LOOP(adam, float, f32, AT(2, float), AT(3, float), AT(4, float))
LOOP(adam, double, f64, AT(2, double), AT(3, double), AT(4, double))
LOOP(rmsprop, float, f32, AT(2, float), AT(3, float), AT(4, float))
LOOP(rmsprop, double, f64, AT(2, double), AT(3, double), AT(4, double))

/* The float32 loops of the common options, vectorised: the same mt_<opt>_update_f32 with the
 * options fixed at compile time (the per-element tests on them fold away) and the operands
 * restrict (pick_f32 takes them only when their ranges are disjoint). The general loops above
 * are scalar: their option tests are control flow. sqrtf is the vector square root (setup.py
 * builds this file without errno) and nothing is contracted (-std=c11), so the results equal the
 * general loop's bit for bit. */

// p, g, m, v (n): Adam without amsgrad or maximize; weight decay none, coupled (Adam) or
// decoupled (AdamW)
#define ADAM_FAST(name, cpl, dec)                                                                \
    MT_SIMD_CLONES static void name(char *const *data, int64_t lo, int64_t hi, const void *coef) \
    {                                                                                            \
        mt_adam_coef_f32 c = *(const mt_adam_coef_f32 *)coef;                                    \
        c.maximize = c.amsgrad = false;                                                          \
        c.coupled = cpl;                                                                         \
        c.decoupled = dec;                                                                       \
        float *restrict p = (float *)data[0], *restrict m = (float *)data[2];                    \
        float *restrict v = (float *)data[3];                                                    \
        const float *restrict g = (const float *)data[1];                                        \
        for (int64_t i = lo; i < hi; i++) {                                                      \
            mt_adam_update_f32(&p[i], g[i], &m[i], &v[i], NULL, &c);                             \
        }                                                                                        \
    }
ADAM_FAST(adam_f32_plain, false, false)
ADAM_FAST(adam_f32_coupled, true, false)
ADAM_FAST(adam_f32_decoupled, false, true)

// p, g, buf (n): SGD with momentum after its first step, without nesterov, maximize or weight
// decay
MT_SIMD_CLONES static void
sgd_f32_momentum(char *const *data, int64_t lo, int64_t hi, const void *coef)
{
    mt_sgd_coef_f32 c = *(const mt_sgd_coef_f32 *)coef;
    c.maximize = c.decay = c.first = c.nesterov = false;
    c.use_buf = true;
    float *restrict p = (float *)data[0], *restrict buf = (float *)data[2];
    const float *restrict g = (const float *)data[1];
    for (int64_t i = lo; i < hi; i++) {
        mt_sgd_update_f32(&p[i], g[i], &buf[i], &c);
    }
}

/* Whether the n-element operands in data (NULL: absent) share no byte, so restrict holds. */
static bool
disjoint(char *const *data, int64_t n, size_t size)
{
    for (int a = 0; a < MT_OPTIM_OPERANDS; a++) {
        for (int b = a + 1; b < MT_OPTIM_OPERANDS; b++) {
            if (data[a] && data[b] && data[a] < data[b] + n * size &&
                data[b] < data[a] + n * size) {
                return false;
            }
        }
    }
    return true;
}

/* The loop for one float32 parameter: a vectorised one where its options and operands allow,
 * else the general fn. */
static range_fn
pick_f32(range_fn fn, const void *coef, char *const *data, int64_t n)
{
    range_fn fast = NULL;
    if (fn == adam_f32) {
        const mt_adam_coef_f32 *c = coef;
        if (!c->maximize && !c->amsgrad) {
            fast = c->coupled     ? adam_f32_coupled
                   : c->decoupled ? adam_f32_decoupled
                                  : adam_f32_plain;
        }
    } else if (fn == sgd_f32) {
        const mt_sgd_coef_f32 *c = coef;
        if (!c->maximize && !c->decay && c->use_buf && !c->first && !c->nesterov) {
            fast = sgd_f32_momentum;
        }
    }
    return fast && disjoint(data, n, sizeof(float)) ? fast : fn;
}

/* step += 1, in the step tensor's dtype (float32 in PyTorch); returns the new value. */
static double
advance_step(mt_tensor *s)
{
    mt_scalar v;
    (void)mt_tensor_item(s, &v); /* cannot fail: the front end saw one element */
    double next = mt_scalar_to_double(v) + 1;
    mt_store_scalar(mt_tensor_data(s), s->dtype, mt_scalar_float(next));
    mt_tensor_bump_version(s);
    return mt_scalar_to_double(mt_load_scalar(mt_tensor_data(s), s->dtype));
}

static void
run_range(range_fn fn, char *const *data, int64_t n, const void *coef)
{
    const int parts = mt_parallel_parts(n, OPTIM_GRAIN);
    if (parts <= 1) {
        fn(data, 0, n, coef);
        return;
    }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        fn(data, n * k / parts, n * (k + 1) / parts, coef);
    }
}

static mt_status
dense_copy(mt_tensor *t, mt_tensor **out)
{
    return mt_cpu_cast(t, t->dtype, out);
}

/* One parameter's update: ops[0] is the parameter, ops[1] its gradient (read only), the rest its
 * state (written), NULL where the options use none. */
static mt_status
apply(mt_tensor *const *ops, range_fn fn, const void *coef)
{
    mt_tensor *staged[MT_OPTIM_OPERANDS] = {NULL};
    char *data[MT_OPTIM_OPERANDS] = {NULL};
    mt_status st = mt_optim_stage(ops, dense_copy, staged);
    if (st == MT_OK) {
        for (int k = 0; k < MT_OPTIM_OPERANDS; k++) {
            data[k] = staged[k] ? mt_tensor_data(staged[k]) : NULL;
        }
        const int64_t n = mt_tensor_numel(ops[0]);
        run_range(ops[0]->dtype == MT_FLOAT32 ? pick_f32(fn, coef, data, n) : fn, data, n, coef);
    }
    return mt_optim_unstage(ops, staged, mt_cpu_copy_into, st);
}

/* Every parameter's update: fn32 or fn64 (by the parameter's dtype) with coefficients made by
 * coef (which fills the one for the dtype, given the step count after its increment). */
typedef void (*coef_fn)(const mt_args *a, bool f32, double step, void *coef);

static mt_status
run_steps(mt_args *a, mt_optim_kind kind, range_fn fn32, range_fn fn64, coef_fn coef)
{
    mt_status st = MT_OK;
    for (int i = 0; st == MT_OK && i < a->ntl; i++) {
        mt_tensor *ops[MT_OPTIM_OPERANDS], *step;
        mt_optim_operands(a, kind, i, ops, &step);
        const bool f32 = ops[0]->dtype == MT_FLOAT32;
        union {
            mt_sgd_coef_f32 s32;
            mt_sgd_coef_f64 s64;
            mt_adam_coef_f32 a32;
            mt_adam_coef_f64 a64;
            mt_rmsprop_coef_f32 r32;
            mt_rmsprop_coef_f64 r64;
        } c;
        coef(a, f32, step ? advance_step(step) : 0, &c);
        st = apply(ops, f32 ? fn32 : fn64, &c);
    }
    return st;
}

static void
sgd_coef(const mt_args *a, bool f32, double step, void *c)
{
    (void)step;
    if (f32) {
        *(mt_sgd_coef_f32 *)c = mt_sgd_coef_f32_of(mt_sgd_hyper_of(a));
    } else {
        *(mt_sgd_coef_f64 *)c = mt_sgd_coef_f64_of(mt_sgd_hyper_of(a));
    }
}

#define ADAM_COEF(name, decoupled)                                                              \
    static void name(const mt_args *a, bool f32, double step, void *c)                          \
    {                                                                                           \
        if (f32) {                                                                              \
            *(mt_adam_coef_f32 *)c = mt_adam_coef_f32_of(mt_adam_hyper_of(a, decoupled), step); \
        } else {                                                                                \
            *(mt_adam_coef_f64 *)c = mt_adam_coef_f64_of(mt_adam_hyper_of(a, decoupled), step); \
        }                                                                                       \
    }
ADAM_COEF(adam_coef, false)
ADAM_COEF(adamw_coef, true)

static void
rmsprop_coef(const mt_args *a, bool f32, double step, void *c)
{
    (void)step; /* counted, not used, as in PyTorch */
    if (f32) {
        *(mt_rmsprop_coef_f32 *)c = mt_rmsprop_coef_f32_of(mt_rmsprop_hyper_of(a));
    } else {
        *(mt_rmsprop_coef_f64 *)c = mt_rmsprop_coef_f64_of(mt_rmsprop_hyper_of(a));
    }
}

mt_status
mt_cpu__fused_sgd_(mt_args *a)
{
    return run_steps(a, MT_OPTIM_SGD, sgd_f32, sgd_f64, sgd_coef);
}

mt_status
mt_cpu__fused_adam_(mt_args *a)
{
    return run_steps(a, MT_OPTIM_ADAM, adam_f32, adam_f64, adam_coef);
}

mt_status
mt_cpu__fused_adamw_(mt_args *a)
{
    return run_steps(a, MT_OPTIM_ADAM, adam_f32, adam_f64, adamw_coef);
}

mt_status
mt_cpu__fused_rmsprop_(mt_args *a)
{
    return run_steps(a, MT_OPTIM_RMSPROP, rmsprop_f32, rmsprop_f64, rmsprop_coef);
}
