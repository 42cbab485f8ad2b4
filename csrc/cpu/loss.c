/* CPU kernels of the losses that need their own loop: nll_loss (the gather of the target
 * class's log-probability, with weights and ignore_index), binary_cross_entropy and
 * binary_cross_entropy_with_logits. Sums accumulate in double; the reduction of the
 * elementwise losses is mt_loss_finish's (ops/nn.c), as PyTorch's apply_loss_reduction. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/nn.h"

/* ---- nll_loss ---- */

typedef struct nll_frame {
    int64_t N, C, K;    /* x is (N, C, K), target and the per-element loss (N, K) */
    int64_t ignore;     /* ignore_index */
    const int64_t *t;   /* target */
    const double *w;    /* weight (C) or NULL */
    double total, wsum; /* sum of the losses and of the weights of the targets kept */
    int64_t bad;        /* a target out of [0, C) */
    bool has_bad;
} nll_frame;

// x (N, C, K), target (N, K); loss[n, k] = -w[t] x[n, t, k], 0 where t is ignore_index
#define NLL_LOOP(name, T)                                                   \
    static void name(const void *xv, void *lv, nll_frame *f)                \
    {                                                                       \
        const T *x = (const T *)xv;                                         \
        T *loss = (T *)lv;                                                  \
        for (int64_t n = 0; n < f->N; n++) {                                \
            for (int64_t k = 0; k < f->K; k++) {                            \
                const int64_t e = n * f->K + k, t = f->t[e];                \
                if (t == f->ignore) {                                       \
                    if (loss) {                                             \
                        loss[e] = 0;                                        \
                    }                                                       \
                    continue;                                               \
                }                                                           \
                if (t < 0 || t >= f->C) {                                   \
                    f->has_bad = true;                                      \
                    f->bad = t;                                             \
                    return;                                                 \
                }                                                           \
                const double w = f->w ? f->w[t] : 1.0;                      \
                const T l = (T)(-w * (double)x[(n * f->C + t) * f->K + k]); \
                if (loss) {                                                 \
                    loss[e] = l;                                            \
                }                                                           \
                f->total += l;                                              \
                f->wsum += w;                                               \
            }                                                               \
        }                                                                   \
    }
NLL_LOOP(nll_f32, float)
NLL_LOOP(nll_f64, double)

// self (C) or (N, C, d1, ...) log-probabilities, target (N, d1, ...) int64 class indices,
// weight (C) or NULL; out = -weight[target] * self[target], reduced
mt_status
mt_cpu_nll_loss(mt_args *a)
{
    mt_tensor *self = a->t[0], *target = a->t[1], *weight = a->t[2];
    mt_tensor *x = NULL, *t = NULL, *w = NULL;
    int64_t reduction = a->i[0];
    nll_frame f = {.N = a->plan->loss.N,
                   .C = a->plan->loss.C,
                   .K = a->plan->loss.K,
                   .ignore = a->i[1]};
    mt_status st;
    if ((st = mt_cpu_dense(self, self->dtype, &x)) || (st = mt_cpu_dense(target, MT_INT64, &t)) ||
        (weight && (st = mt_cpu_dense(weight, MT_FLOAT64, &w)))) {
        goto out_release;
    }
    f.t = (const int64_t *)mt_tensor_data(t);
    f.w = w ? (const double *)mt_tensor_data(w) : NULL;
    /* without a batch dim the one loss is 0-dim, whatever target's rank */
    /* the per-element losses are the result without a reduction, else only summed */
    void *loss = reduction == MT_REDUCTION_NONE ? mt_tensor_data(a->out[0]) : NULL;
    (self->dtype == MT_FLOAT32 ? nll_f32 : nll_f64)(mt_tensor_data(x), loss, &f);
    if (f.has_bad) {
        st = mt_fail_nll_target(f.bad);
    } else if (reduction != MT_REDUCTION_NONE) {
        double v = reduction == MT_REDUCTION_SUM ? f.total : f.total / f.wsum;
        mt_store_scalar(mt_tensor_data(a->out[0]), self->dtype, mt_scalar_float(v));
    }
out_release:
    mt_tensor_clear(&x);
    mt_tensor_clear(&t);
    mt_tensor_clear(&w);
    return st;
}

/* ---- binary cross entropy ---- */

/* A loop's context: whether pos_weight is given (else 1), and what the loops report back: a
 * value outside [0, 1] (atomic: mt_iter_run_parallel may run a loop on several threads). */
typedef struct bce_ctx {
    bool has_pw;
    atomic_bool bad_input, bad_target;
} bce_ctx;

// out, x, t (one shape); out = -(t log x + (1 - t) log(1 - x)), each log clamped at -100
#define BCE_LOOP(name, T, F)                                                                    \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)                 \
    {                                                                                           \
        bce_ctx *r = ctx;                                                                       \
        bool bad_x = false, bad_t = false;                                                      \
        for (int64_t i = 0; i < n; i++) {                                                       \
            const T x = MT_AT(T, 1, i), t = MT_AT(T, 2, i);                                     \
            bad_x |= !(x >= 0 && x <= 1);                                                       \
            bad_t |= !(t >= 0 && t <= 1);                                                       \
            const T lx = fmax##F(log##F(x), (T) - 100), l1x = fmax##F(log1p##F(-x), (T) - 100); \
            MT_AT(T, 0, i) = (t - (T)1) * l1x - t * lx;                                         \
        }                                                                                       \
        if (bad_x) {                                                                            \
            atomic_store(&r->bad_input, true);                                                  \
        }                                                                                       \
        if (bad_t) {                                                                            \
            atomic_store(&r->bad_target, true);                                                 \
        }                                                                                       \
    }
BCE_LOOP(bce_f32, float, f)
BCE_LOOP(bce_f64, double, )

// out, x, t, pw (one shape; pw 1 where absent); out = (1 - t) x - log_sigmoid(x) (1 + (pw - 1) t),
// where log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)) never overflows
#define BCE_LOGITS_LOOP(name, T, F)                                               \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)   \
    {                                                                             \
        const bool has_pw = ((const bce_ctx *)ctx)->has_pw;                       \
        for (int64_t i = 0; i < n; i++) {                                         \
            const T x = MT_AT(T, 1, i), t = MT_AT(T, 2, i);                       \
            const T pw = has_pw ? MT_AT(T, 3, i) : (T)1;                          \
            const T log_sig = fmin##F(x, (T)0) - log1p##F(exp##F(-fabs##F(x)));   \
            MT_AT(T, 0, i) = ((T)1 - t) * x - log_sig * ((T)1 + (pw - (T)1) * t); \
        }                                                                         \
    }
BCE_LOGITS_LOOP(bce_logits_f32, float, f)
BCE_LOGITS_LOOP(bce_logits_f64, double, )

/* The CPU's bce loop (ops/nn.h's mt_bce_fn), on the threads over the prepared operands. */
// x, t, pw (one shape) or NULL, loss (that shape); loss = bce(x, t) or, with logits,
// bce(sigmoid(x), t) with pw
static mt_status
cpu_bce(mt_tensor *const *ins, bool logits, mt_tensor *loss)
{
    mt_tensor *ops[4] = {loss, ins[0], ins[1], ins[2]};
    bce_ctx r = {.has_pw = ins[2] != NULL};
    atomic_init(&r.bad_input, false);
    atomic_init(&r.bad_target, false);
    const bool f32 = loss->dtype == MT_FLOAT32;
    mt_iter it;
    mt_status st = mt_iter_build_any_order(&it, loss->ndim, loss->sizes, ops, ins[2] ? 4 : 3);
    if (st) {
        return st;
    }
    mt_iter_run_parallel(&it,
                         logits ? (f32 ? bce_logits_f32 : bce_logits_f64)
                                : (f32 ? bce_f32 : bce_f64),
                         &r);
    const bool bad_input = atomic_load(&r.bad_input);
    return bad_input || atomic_load(&r.bad_target) ? mt_fail_bce_range(bad_input) : MT_OK;
}

// self, target (one shape) probabilities, weight (broadcasts to it) or NULL; out = the binary
// cross entropy, reduced
mt_status
mt_cpu_binary_cross_entropy(mt_args *a)
{
    return mt_bce_with(a, false, cpu_bce);
}

// self, target (one shape) logits and probabilities, weight and pos_weight (broadcast to
// them) or NULL; out = binary_cross_entropy(sigmoid(self), target), reduced
mt_status
mt_cpu_binary_cross_entropy_with_logits(mt_args *a)
{
    return mt_bce_with(a, true, cpu_bce);
}
