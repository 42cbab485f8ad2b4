/* CPU kernels of the losses that need their own loop: nll_loss (the gather of the target
 * class's log-probability, with weights and ignore_index), binary_cross_entropy and
 * binary_cross_entropy_with_logits. Sums accumulate in double; the reduction of the
 * elementwise losses is mt_loss_finish's (ops/nn.c), as PyTorch's apply_loss_reduction. */
#include <math.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/elementwise.h"
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

typedef struct range_flags {
    bool bad_input, bad_target; /* a value outside [0, 1] */
} range_flags;

// out, x, t (one shape); out = -(t log x + (1 - t) log(1 - x)), each log clamped at -100
#define BCE_LOOP(name, T, F)                                                                    \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)                 \
    {                                                                                           \
        range_flags *r = ctx;                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                       \
            const T x = MT_AT(T, 1, i), t = MT_AT(T, 2, i);                                     \
            r->bad_input |= !(x >= 0 && x <= 1);                                                \
            r->bad_target |= !(t >= 0 && t <= 1);                                               \
            const T lx = fmax##F(log##F(x), (T) - 100), l1x = fmax##F(log1p##F(-x), (T) - 100); \
            MT_AT(T, 0, i) = (t - (T)1) * l1x - t * lx;                                         \
        }                                                                                       \
    }
BCE_LOOP(bce_f32, float, f)
BCE_LOOP(bce_f64, double, )

// self, target (one shape) probabilities, weight (broadcasts to it) or NULL; out = the binary
// cross entropy, reduced
mt_status
mt_cpu_binary_cross_entropy(mt_args *a)
{
    mt_tensor *self = a->t[0], *target = a->t[1], *loss = NULL;
    range_flags r = {false, false};
    mt_tensor *ins[2] = {self, target};
    mt_status st = mt_cpu_elementwise(ins, 2, self->dtype,
                                      self->dtype == MT_FLOAT32 ? bce_f32 : bce_f64, &r, false,
                                      &loss);
    if (st) {
        return st;
    }
    if (r.bad_input || r.bad_target) {
        mt_tensor_release(loss);
        return mt_fail_bce_range(r.bad_input);
    }
    return mt_loss_store(loss, a->t[2], a->i[0], a->out[0]);
}

// out, x, t, pw (one shape); out = (1 - t) x - log_sigmoid(x) (1 + (pw - 1) t), where
// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)) never overflows
#define BCE_LOGITS_LOOP(name, T, F)                                               \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)   \
    {                                                                             \
        (void)ctx;                                                                \
        for (int64_t i = 0; i < n; i++) {                                         \
            const T x = MT_AT(T, 1, i), t = MT_AT(T, 2, i), pw = MT_AT(T, 3, i);  \
            const T log_sig = fmin##F(x, (T)0) - log1p##F(exp##F(-fabs##F(x)));   \
            MT_AT(T, 0, i) = ((T)1 - t) * x - log_sig * ((T)1 + (pw - (T)1) * t); \
        }                                                                         \
    }
BCE_LOGITS_LOOP(bce_logits_f32, float, f)
BCE_LOGITS_LOOP(bce_logits_f64, double, )

// self, target (one shape) logits and probabilities, weight and pos_weight (broadcast to
// them) or NULL; out = binary_cross_entropy(sigmoid(self), target), reduced
mt_status
mt_cpu_binary_cross_entropy_with_logits(mt_args *a)
{
    mt_tensor *one = NULL, *loss = NULL;
    mt_status st = MT_OK;
    if (a->t[3] == NULL && (st = mt_tensor_scalar(mt_scalar_int(1), MT_INT64, &one))) {
        return st;
    }
    mt_tensor *ins[3] = {a->t[0], a->t[1], a->t[3] ? a->t[3] : one};
    mt_dtype dt = a->plan->loss.dt;
    st = mt_cpu_elementwise(ins, 3, dt, dt == MT_FLOAT32 ? bce_logits_f32 : bce_logits_f64, NULL,
                            false, &loss);
    mt_tensor_clear(&one);
    if (st) {
        return st;
    }
    return mt_loss_store(loss, a->t[2], a->i[0], a->out[0]);
}
