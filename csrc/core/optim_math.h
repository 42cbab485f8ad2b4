/* The per-element math of the optimizer steps (SGD, Adam/AdamW, RMSprop), written once for the
 * CPU loops (cpu/optim.c) and the CUDA kernels (cuda/optim.cu).
 *
 * It follows PyTorch's single-tensor implementations (torch/optim/) step by step, in the
 * parameter's dtype with each hyperparameter rounded to it, as PyTorch's in-place ops compute, so
 * float32 results agree with PyTorch's to rounding. Per-step scalars (Adam's bias corrections)
 * are computed in double, as PyTorch computes them in Python. No checks here: the front end
 * (ops/optim.c) has made them. */
#ifndef MT_OPTIM_MATH_H
#define MT_OPTIM_MATH_H

#include "core/math.h"

/* The hyperparameters of one call, as plain values (a CUDA kernel takes them by value). */
typedef struct mt_sgd_hyper {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
    bool first; /* the momentum buffers hold nothing yet and start as the gradient */
} mt_sgd_hyper;

typedef struct mt_adam_hyper {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
    bool decoupled; /* AdamW: the parameter shrinks, the gradient keeps no weight decay */
} mt_adam_hyper;

typedef struct mt_rmsprop_hyper {
    double lr, alpha, eps, weight_decay, momentum;
    bool centered, maximize;
} mt_rmsprop_hyper;

/* PyTorch's lerp: exact at both ends whichever side of 0.5 the weight is. */
#define MT_OPTIM_LERP(a, b, w) \
    (fabs((double)(w)) < 0.5 ? (a) + (w) * ((b) - (a)) : (b) - ((b) - (a)) * (1 - (w)))

/* torch.maximum: NaN wins. */
#define MT_OPTIM_MAXIMUM(a, b) (((a) > (b) || isnan(a)) ? (a) : (b))

/* For T (float, suffix f32, libm suffix F f; double, f64, none): the coefficients of a step in
 * T, and one element's update. A state pointer an option does not use may be NULL. */
#define MT_DEFINE_OPTIM_MATH(T, suffix, F)                                                         \
    typedef struct mt_sgd_coef_##suffix {                                                          \
        T wd, mom, keep, neg_lr;                                                                   \
        bool maximize, decay, use_buf, first, nesterov;                                            \
    } mt_sgd_coef_##suffix;                                                                        \
    static inline MT_HD mt_sgd_coef_##suffix mt_sgd_coef_##suffix##_of(mt_sgd_hyper h)             \
    {                                                                                              \
        mt_sgd_coef_##suffix c = {(T)h.weight_decay, (T)h.momentum, (T)(1 - h.dampening),          \
                                  (T) - h.lr,        h.maximize,    h.weight_decay != 0,           \
                                  h.momentum != 0,   h.first,       h.nesterov};                   \
        return c;                                                                                  \
    }                                                                                              \
    /* g = -g if maximize; g += wd * p; buf = momentum * buf + (1 - dampening) * g (buf = g   \
     * the first time); g = nesterov ? g + momentum * buf : buf; p -= lr * g */    \
    static inline MT_HD void mt_sgd_update_##suffix(T *p, T g, T *buf,                             \
                                                    const mt_sgd_coef_##suffix *c)                 \
    {                                                                                              \
        T gi = c->maximize ? -g : g;                                                               \
        if (c->decay) {                                                                            \
            gi = gi + c->wd * *p;                                                                  \
        }                                                                                          \
        if (c->use_buf) {                                                                          \
            T b = c->first ? gi : *buf * c->mom + c->keep * gi;                                    \
            *buf = b;                                                                              \
            gi = c->nesterov ? gi + c->mom * b : b;                                                \
        }                                                                                          \
        *p = *p + c->neg_lr * gi;                                                                  \
    }                                                                                              \
                                                                                                   \
    typedef struct mt_adam_coef_##suffix {                                                         \
        T wd, decay, w1, beta2, w2, bc2, eps, neg_step;                                            \
        bool maximize, amsgrad, coupled, decoupled;                                                \
    } mt_adam_coef_##suffix;                                                                       \
    /* step: the step count after this step's increment */                                         \
    static inline MT_HD mt_adam_coef_##suffix mt_adam_coef_##suffix##_of(mt_adam_hyper h,          \
                                                                         double step)              \
    {                                                                                              \
        const double step_size = h.lr / (1 - pow(h.beta1, step));                                  \
        const double bias_corr2_sqrt = sqrt(1 - pow(h.beta2, step));                               \
        mt_adam_coef_##suffix c = {(T)h.weight_decay,                                              \
                                   (T)(1 - h.lr * h.weight_decay),                                 \
                                   (T)(1 - h.beta1),                                               \
                                   (T)h.beta2,                                                     \
                                   (T)(1 - h.beta2),                                               \
                                   (T)bias_corr2_sqrt,                                             \
                                   (T)h.eps,                                                       \
                                   (T) - step_size,                                                \
                                   h.maximize,                                                     \
                                   h.amsgrad,                                                      \
                                   h.weight_decay != 0 && !h.decoupled,                            \
                                   h.weight_decay != 0 && h.decoupled};                            \
        return c;                                                                                  \
    }                                                                                              \
    /* g = -g if maximize; AdamW: p *= 1 - lr * wd, Adam: g += wd * p; m = lerp(m, g, 1 -     \
     * beta1); v = beta2 * v + (1 - beta2) * g * g; vmax = max(vmax, v) with amsgrad;         \
     * p -= step_size * m / (sqrt(amsgrad ? vmax : v) / bias_corr2_sqrt + eps) */    \
    static inline MT_HD void mt_adam_update_##suffix(T *p, T g, T *m, T *v, T *vmax,               \
                                                     const mt_adam_coef_##suffix *c)               \
    {                                                                                              \
        T gi = c->maximize ? -g : g;                                                               \
        if (c->decoupled) {                                                                        \
            *p = *p * c->decay;                                                                    \
        } else if (c->coupled) {                                                                   \
            gi = gi + c->wd * *p;                                                                  \
        }                                                                                          \
        *m = MT_OPTIM_LERP(*m, gi, c->w1);                                                         \
        *v = *v * c->beta2;                                                                        \
        *v = *v + c->w2 * gi * gi;                                                                 \
        T second = *v;                                                                             \
        if (c->amsgrad) {                                                                          \
            *vmax = MT_OPTIM_MAXIMUM(*vmax, *v);                                                   \
            second = *vmax;                                                                        \
        }                                                                                          \
        T denom = sqrt##F(second) / c->bc2 + c->eps;                                               \
        *p = *p + c->neg_step * *m / denom;                                                        \
    }                                                                                              \
                                                                                                   \
    typedef struct mt_rmsprop_coef_##suffix {                                                      \
        T wd, alpha, w, eps, mom, neg_lr;                                                          \
        bool maximize, decay, centered, use_buf;                                                   \
    } mt_rmsprop_coef_##suffix;                                                                    \
    static inline MT_HD mt_rmsprop_coef_##suffix mt_rmsprop_coef_##suffix##_of(mt_rmsprop_hyper h) \
    {                                                                                              \
        mt_rmsprop_coef_##suffix c = {(T)h.weight_decay, (T)h.alpha,          (T)(1 - h.alpha),    \
                                      (T)h.eps,          (T)h.momentum,       (T) - h.lr,          \
                                      h.maximize,        h.weight_decay != 0, h.centered,          \
                                      h.momentum > 0};                                             \
        return c;                                                                                  \
    }                                                                                              \
    /* g = -g if maximize; g += wd * p; sq = alpha * sq + (1 - alpha) * g * g; centered:     \
     * ga = lerp(ga, g, 1 - alpha), avg = sqrt(sq - ga * ga), else avg = sqrt(sq); avg += eps; \
     * momentum: buf = momentum * buf + g / avg, p -= lr * buf; else p -= lr * g / avg */     \
    static inline MT_HD void mt_rmsprop_update_##suffix(T *p, T g, T *sq, T *ga, T *buf,           \
                                                        const mt_rmsprop_coef_##suffix *c)         \
    {                                                                                              \
        T gi = c->maximize ? -g : g;                                                               \
        if (c->decay) {                                                                            \
            gi = gi + c->wd * *p;                                                                  \
        }                                                                                          \
        *sq = *sq * c->alpha;                                                                      \
        *sq = *sq + c->w * gi * gi;                                                                \
        T avg;                                                                                     \
        if (c->centered) {                                                                         \
            *ga = MT_OPTIM_LERP(*ga, gi, c->w);                                                    \
            avg = sqrt##F(*sq + (T) - 1 * *ga * *ga);                                              \
        } else {                                                                                   \
            avg = sqrt##F(*sq);                                                                    \
        }                                                                                          \
        avg = avg + c->eps;                                                                        \
        if (c->use_buf) {                                                                          \
            *buf = *buf * c->mom;                                                                  \
            *buf = *buf + (T)1 * gi / avg;                                                         \
            *p = *p + c->neg_lr * *buf;                                                            \
        } else {                                                                                   \
            *p = *p + c->neg_lr * gi / avg;                                                        \
        }                                                                                          \
    }
MT_DEFINE_OPTIM_MATH(float, f32, f)
MT_DEFINE_OPTIM_MATH(double, f64, )

#endif
