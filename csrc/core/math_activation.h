/* Scalar math of the activations of torch.nn.functional, forward and backward: SiLU, GELU, mish,
 * elu, softplus, hardtanh, threshold, leaky_relu, hardswish, hardsigmoid, log_sigmoid, shrinks;
 * also the tails of the CPU's staged float32 loops. Part of core/math.h (include that), after
 * math_float.h (sigmoid) and math_numeric.h (clamp_min, clamp_max). */
#ifndef MT_MATH_ACTIVATION_H
#define MT_MATH_ACTIVATION_H

#ifndef MT_MATH_H
#error "include core/math.h, which defines MT_HD and includes this file in order"
#endif

/* clang-format off */

/* mish and its derivative given t = tanh(softplus(x)) (and en = exp(-x)), softplus given
 * l = log1p(exp(b x)), log_sigmoid given l = log1p(exp(-|x|)) and its derivative given
 * b = exp(-|x|): the arithmetic after the transcendental functions, shared by the formulas
 * below and the CPU's staged float32 loops (cpu/elementwise.c), which compute each function
 * over a block first. */
#define MT_DEFINE_ACTIVATION_TAILS(T, suffix)                                                \
    static inline MT_HD MT_ALWAYS_INLINE T mt_mish_tail_##suffix(T x, T t) { return x * t; } \
    static inline MT_HD MT_ALWAYS_INLINE T mt_mish_backward_tail_##suffix(T g, T x, T t, T en) \
    {                                                                                        \
        const T sig = (T)1 / ((T)1 + en);                                                    \
        return g * (t + x * sig * ((T)1 - t * t));                                           \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_softplus_tail_##suffix(T x, T b, T t, T l)     \
    {                                                                                        \
        return x * b > t ? x : l / b;                                                        \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_log_sigmoid_tail_##suffix(T x, T l)            \
    {                                                                                        \
        return ((T)0 < x ? (T)0 : x) - l;                                                    \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_log_sigmoid_backward_tail_##suffix(T g, T x, T b) \
    {                                                                                        \
        return x < (T)0 ? ((T)1 - b / ((T)1 + b)) * g : (b / ((T)1 + b)) * g;                \
    }
MT_DEFINE_ACTIVATION_TAILS(float, f32)
MT_DEFINE_ACTIVATION_TAILS(double, f64)

/* SiLU, GELU (exact, and the tanh approximation with PyTorch's constants sqrt(2/pi) and
 * 0.044715) and the derivatives of GELU that its backward kernel multiplies the gradient by
 * (PyTorch's GeluBackwardKernelImpl): exact, Phi(x) + x phi(x); and of the tanh approximation;
 * SiLU's, s (1 + x (1 - s)) with s = sigmoid(x) (PyTorch's silu_backward); mish
 * x tanh(softplus(x)) and its derivative. Written once in terms of the ERF, EXP, EXPNEG (exp of
 * an argument <= 0 or NaN), LOG1P, TANH and SIGMOID they are given: libm's here (every device's
 * definition), cpu/vmath.h's vectorisable float ones for the CPU's float32 loops. GELU's phi(x)
 * is exp(-(x / sqrt 2)^2), the exp that erf(x / sqrt 2) takes for |x| >= sqrt 2 there, so the
 * vectorised backward computes it once. */
#define MT_DEFINE_GELU(T, suffix, ERF, EXP, EXPNEG, LOG1P, TANH, SIGMOID)                     \
    static inline MT_HD MT_ALWAYS_INLINE T mt_silu_##suffix(T x) { return x * SIGMOID(x); }  \
    static inline MT_HD MT_ALWAYS_INLINE T mt_silu_backward_##suffix(T g, T x)               \
    {                                                                                        \
        const T s = SIGMOID(x);                                                              \
        return g * (s * ((T)1 + x * ((T)1 - s)));                                            \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_gelu_##suffix(T x)                             \
    {                                                                                        \
        return (T)0.5 * x * ((T)1 + ERF(x * (T)MT_SQRT1_2));                                 \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_gelu_tanh_##suffix(T x)                        \
    {                                                                                        \
        const T inner = (T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x);          \
        return (T)0.5 * x * ((T)1 + TANH(inner));                                            \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_gelu_backward_##suffix(T g, T x)               \
    {                                                                                        \
        const T xs = x * (T)MT_SQRT1_2;                                                      \
        const T cdf = (T)0.5 * ((T)1 + ERF(xs));                                             \
        const T pdf = (T)0.39894228040143267794 * EXPNEG(-(xs * xs)); /* 1/sqrt(2pi) */      \
        return g * (cdf + x * pdf);                                                          \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_gelu_tanh_backward_##suffix(T g, T x)          \
    {                                                                                        \
        const T beta = (T)0.79788456080286535588, kappa = (T)0.044715;                       \
        const T t = TANH(beta * (x + kappa * x * x * x));                                    \
        const T inner = beta * ((T)1 + (T)3 * kappa * x * x);                                \
        return g * ((T)0.5 * ((T)1 + t) + (T)0.5 * x * ((T)1 - t * t) * inner);             \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_mish_##suffix(T x)                             \
    {                                                                                        \
        return mt_mish_tail_##suffix(x, TANH(LOG1P(EXP(x))));                                \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_mish_backward_##suffix(T g, T x)               \
    {                                                                                        \
        return mt_mish_backward_tail_##suffix(g, x, TANH(LOG1P(EXP(x))), EXP(-x));           \
    }
MT_DEFINE_GELU(float, f32, erff, expf, expf, log1pf, tanhf, mt_sigmoid_f32)
MT_DEFINE_GELU(double, f64, erf, exp, exp, log1p, tanh, mt_sigmoid_f64)

/* elu with alpha a, scale s, input scale q: s x above 0, else s a (exp(q x) - 1), and its
 * derivative from x; softplus with beta b: x where b x > threshold t, else log1p(exp(b x)) / b,
 * and its derivative. In terms of the EXP and LOG1P given, as MT_DEFINE_GELU. Both sides are
 * computed, then one is selected: a call inside a ?: is control flow, which kept GCC from
 * vectorising the float32 loops (softplus 12x, elu 2.5x PyTorch's time). */
#define MT_DEFINE_EXP_ACTIVATIONS(T, suffix, EXP, LOG1P)                                     \
    static inline MT_HD MT_ALWAYS_INLINE T mt_elu_##suffix(T x, T a, T s, T q)               \
    {                                                                                        \
        const T neg = (EXP(x * q) - (T)1) * (a * s);                                         \
        return x < 0 ? neg : x * s; /* -0.0 gives -0.0, as PyTorch's expm1 */                \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_elu_backward_##suffix(T g, T x, T a, T s, T q) \
    {                                                                                        \
        const T neg = g * q * (a * s) * EXP(x * q);                                          \
        return x <= 0 ? neg : g * s;                                                         \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_softplus_##suffix(T x, T b, T t)               \
    {                                                                                        \
        return mt_softplus_tail_##suffix(x, b, t, LOG1P(EXP(x * b)));                        \
    }                                                                                        \
    static inline MT_HD MT_ALWAYS_INLINE T mt_softplus_backward_##suffix(T g, T x, T b, T t) \
    {                                                                                        \
        const T z = EXP(x * b);                                                              \
        return x * b > t ? g : g * z / (z + (T)1);                                           \
    }
MT_DEFINE_EXP_ACTIVATIONS(float, f32, expf, log1pf)
MT_DEFINE_EXP_ACTIVATIONS(double, f64, exp, log1p)

/* ---- activations of torch.nn.functional ----
 * PyTorch's CPU kernels' formulas (aten/src/ATen/native/cpu/Activation.cpp), forward and
 * backward; g is the incoming gradient. A NaN x gives what PyTorch's vectorized loop gives:
 * NaN through the arithmetic, or the branch its comparisons then take. The integer rows
 * (hardtanh, threshold) cast their bounds to the integer type first, as PyTorch does. */
#define MT_DEFINE_ACTIVATIONS_NUMERIC(T, suffix)                                              \
    /* clamp by two numbers (clamp(x, lo, hi) with Python numbers runs this row): x kept where \
     * it equals a bound (-0.0 clamped to [0, 1] stays -0.0), as PyTorch's clamp of numbers  \
     * and hardtanh; NaN from any of the three. One compare and select a bound, where         \
     * mt_clamp's NaN tests per operand made clamp of 1M floats twice clamp_min's time. */    \
    static inline MT_HD T mt_hardtanh_##suffix(T x, T lo, T hi)                              \
    {                                                                                        \
        return mt_clamp_max_##suffix(mt_clamp_min_##suffix(x, lo), hi);                      \
    }                                                                                        \
    static inline MT_HD T mt_threshold_##suffix(T x, T th, T v) { return x <= th ? v : x; }   \
    static inline MT_HD T mt_threshold_backward_##suffix(T g, T x, T th)                     \
    {                                                                                        \
        return x <= th ? (T)0 : g;                                                           \
    }
MT_DEFINE_ACTIVATIONS_NUMERIC(int32_t, i32)
MT_DEFINE_ACTIVATIONS_NUMERIC(int64_t, i64)
MT_DEFINE_ACTIVATIONS_NUMERIC(float, f32)
MT_DEFINE_ACTIVATIONS_NUMERIC(double, f64)
#undef MT_DEFINE_ACTIVATIONS_NUMERIC

/* leaky_relu (slope k below 0); elu's derivative from the result r (in place: r <= 0 where
 * x <= 0; elu and softplus are MT_DEFINE_EXP_ACTIVATIONS' above); hardtanh's derivative (1 strictly inside (lo, hi)); (mish is GELU's macro's); hardswish
 * x relu6(x + 3) / 6 and hardsigmoid relu6(x + 3) / 6 (relu6 with std::min/max's NaN rule);
 * log_sigmoid min(x, 0) - log1p(exp(-|x|)); sigmoid's derivative g y (1 - y); prelu's kernel (weight w below 0); softshrink and
 * hardshrink by lambda l, one derivative for both. */
#define MT_DEFINE_ACTIVATIONS(T, suffix, F)                                                   \
    static inline MT_HD T mt_leaky_relu_##suffix(T x, T k) { return x > 0 ? x : x * k; }      \
    static inline MT_HD T mt_leaky_relu_backward_##suffix(T g, T x, T k)                     \
    {                                                                                        \
        return x > 0 ? g : g * k;                                                            \
    }                                                                                        \
    static inline MT_HD T mt_elu_backward_result_##suffix(T g, T r, T a, T s, T q)           \
    {                                                                                        \
        return r <= 0 ? g * q * (r + a * s) : g * s;                                         \
    }                                                                                        \
    static inline MT_HD T mt_hardtanh_backward_##suffix(T g, T x, T lo, T hi)                \
    {                                                                                        \
        return (x <= lo || x >= hi) ? (T)0 : g;                                              \
    }                                                                                        \
    /* both selects test x, not the first's result: the same values (NaN stays), but GCC's   \
     * AVX-512 code for the chained form took five mask operations, and hardswish 1.5x the   \
     * time of a copy, against 1.0x */                                                       \
    static inline MT_HD T mt_relu6_of_##suffix(T x)                                          \
    {                                                                                        \
        const T lo = x < (T)0 ? (T)0 : x;                                                    \
        return x > (T)6 ? (T)6 : lo;                                                         \
    }                                                                                        \
    static inline MT_HD T mt_hardswish_##suffix(T x)                                         \
    {                                                                                        \
        return x * mt_relu6_of_##suffix(x + (T)3) / (T)6;                                    \
    }                                                                                        \
    static inline MT_HD T mt_hardswish_backward_##suffix(T g, T x)                           \
    {                                                                                        \
        return x < (T)-3 ? (T)0 : x >= (T)3 ? g : g * (x / (T)3 + (T)0.5);                   \
    }                                                                                        \
    static inline MT_HD T mt_hardsigmoid_##suffix(T x)                                       \
    {                                                                                        \
        return mt_relu6_of_##suffix(x + (T)3) / (T)6;                                        \
    }                                                                                        \
    /* PyTorch's 1/6 is the float 1.0f / 6.0f for double too */                             \
    static inline MT_HD T mt_hardsigmoid_backward_##suffix(T g, T x)                         \
    {                                                                                        \
        return (x > (T)-3 && x < (T)3) ? g * (T)(1.0f / 6.0f) : (T)0;                        \
    }                                                                                        \
    static inline MT_HD T mt_log_sigmoid_##suffix(T x)                                       \
    {                                                                                        \
        return mt_log_sigmoid_tail_##suffix(x, log1p##F(exp##F(-fabs##F(x))));               \
    }                                                                                        \
    static inline MT_HD T mt_log_sigmoid_backward_##suffix(T g, T x)                         \
    {                                                                                        \
        return mt_log_sigmoid_backward_tail_##suffix(g, x, exp##F(-fabs##F(x)));             \
    }                                                                                        \
    /* sigmoid's derivative from its result y, in PyTorch's order: (g (1 - y)) y */          \
    static inline MT_HD T mt_sigmoid_backward_##suffix(T g, T y)                             \
    {                                                                                        \
        return g * ((T)1 - y) * y;                                                           \
    }                                                                                        \
    static inline MT_HD T mt_prelu_##suffix(T x, T w) { return x > 0 ? x : w * x; }          \
    static inline MT_HD T mt_softshrink_##suffix(T x, T l)                                   \
    {                                                                                        \
        return x != x ? x : x > l ? x - l : (x < -l ? x + l : (T)0); /* NaN stays */          \
    }                                                                                        \
    static inline MT_HD T mt_hardshrink_##suffix(T x, T l)                                   \
    {                                                                                        \
        return (x >= -l && x <= l) ? (T)0 : x;                                               \
    }                                                                                        \
    static inline MT_HD T mt_shrink_backward_##suffix(T g, T x, T l)                         \
    {                                                                                        \
        return (x >= -l && x <= l) ? (T)0 : g;                                               \
    }
MT_DEFINE_ACTIVATIONS(float, f32, f)
MT_DEFINE_ACTIVATIONS(double, f64, )
#undef MT_DEFINE_ACTIVATIONS

/* clang-format on */

#endif
