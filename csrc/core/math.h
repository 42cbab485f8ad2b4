/* Scalar math shared by the CPU loops and the CUDA kernels, forward and backward.
 *
 * Each formula is written once here. MT_HD marks them __host__ __device__ under nvcc. */
#ifndef MT_MATH_H
#define MT_MATH_H

/* The formulas are tables of macro calls, laid out by hand. */
/* clang-format off */

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MT_HD __host__ __device__
#else
#define MT_HD
#endif

/* The activations below are compositions (mish is tanh(log1p(exp(x)))); given cpu/vmath.h's
 * functions, GCC's inliner stopped part way and left a call per element in the float32 vector
 * loops (mish 10x PyTorch's time). Forced inline, the loop sees straight-line code. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define MT_ALWAYS_INLINE __attribute__((always_inline))
#else
#define MT_ALWAYS_INLINE
#endif

#define MT_SQRT1_2 0.70710678118654752440 /* 1/sqrt(2), for the exact (erf) GELU */

/* A bool in memory is read as its byte != 0, as PyTorch reads it: memory minitorch shares (a
 * NumPy array viewed as bool, a DLPack capsule) may hold any byte, and loading one that is not 0
 * or 1 through a C bool is undefined (GCC's code then gives ~2 == 3, and 2 + 255 as a sum;
 * UBSan flags it). Every kernel and cast reads bools through this; every bool minitorch writes
 * is 0 or 1. */
static inline MT_HD bool
mt_load_b8(const void *p)
{
    return *(const unsigned char *)p != 0;
}

/* mt_<fn>_f32 and mt_<fn>_f64: libm's fn of a float (libm suffix f) and a double. */
#define MT_LIBM(fn)                                                                          \
    static inline MT_HD float mt_##fn##_f32(float x) { return fn##f(x); }                    \
    static inline MT_HD double mt_##fn##_f64(double x) { return fn(x); }
MT_LIBM(exp) MT_LIBM(log) MT_LIBM(log1p) MT_LIBM(sqrt) MT_LIBM(sin) MT_LIBM(cos) MT_LIBM(tanh)
MT_LIBM(exp2) MT_LIBM(expm1) MT_LIBM(log2) MT_LIBM(log10)
#undef MT_LIBM

/* Float math of the unary ops, for float (f32, libm suffix f) and double (f64, no suffix).
 * sigmoid never evaluates exp of a large positive number, so it cannot overflow to inf/inf. */
#define MT_DEFINE_FLOAT_UNARY(T, suffix, F)                                                   \
    static inline MT_HD T mt_rsqrt_##suffix(T x) { return (T)1 / sqrt##F(x); }               \
    static inline MT_HD T mt_reciprocal_##suffix(T x) { return (T)1 / x; }                   \
    static inline MT_HD T mt_abs_##suffix(T x) { return fabs##F(x); }                        \
    static inline MT_HD T mt_sigmoid_##suffix(T x)                                           \
    {                                                                                        \
        if (x >= 0) {                                                                        \
            return (T)1 / ((T)1 + exp##F(-x));                                               \
        }                                                                                    \
        const T e = exp##F(x); /* also the NaN path: x >= 0 is false for NaN */             \
        return e / ((T)1 + e);                                                               \
    }                                                                                        \
    static inline MT_HD T mt_div_##suffix(T x, T y) { return x / y; }                        \
    static inline MT_HD T mt_hypot_##suffix(T x, T y) { return hypot##F(x, y); }             \
    static inline MT_HD bool mt_isnan_##suffix(T x) { return x != x; }                       \
    static inline MT_HD bool mt_isinf_##suffix(T x) { return isinf(x); }
MT_DEFINE_FLOAT_UNARY(float, f32, f)
MT_DEFINE_FLOAT_UNARY(double, f64, )
#undef MT_DEFINE_FLOAT_UNARY

/* mish and its derivative given t = tanh(softplus(x)) (and en = exp(-x)), softplus given
 * l = log1p(exp(b x)): the arithmetic after the transcendental functions, shared by the formulas
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

/* Integers and bools are never NaN or inf. */
#define MT_DEFINE_INT_MATH(T, suffix)                                                        \
    static inline MT_HD T mt_abs_##suffix(T x) { return x < 0 ? (T)-x : x; }                 \
    static inline MT_HD bool mt_isnan_##suffix(T x) { (void)x; return false; }               \
    static inline MT_HD bool mt_isinf_##suffix(T x) { (void)x; return false; }
MT_DEFINE_INT_MATH(int32_t, i32)
MT_DEFINE_INT_MATH(int64_t, i64)
#undef MT_DEFINE_INT_MATH
static inline MT_HD bool mt_isnan_b8(bool x) { (void)x; return false; }
static inline MT_HD bool mt_isinf_b8(bool x) { (void)x; return false; }

/* sign is PyTorch's (0 < x) - (x < 0): sign(NaN) is 0, sign(-0.0) is 0 (a bool's sign is itself). */
#define MT_DEFINE_SIGN(T, suffix) \
    static inline MT_HD T mt_sign_##suffix(T x) { return (T)((0 < x) - (x < 0)); }
MT_DEFINE_SIGN(int32_t, i32)
MT_DEFINE_SIGN(int64_t, i64)
MT_DEFINE_SIGN(float, f32)
MT_DEFINE_SIGN(double, f64)
#undef MT_DEFINE_SIGN
static inline MT_HD bool mt_sign_b8(bool x) { return x; }

/* maximum and minimum propagate NaN from either operand, as PyTorch's do: NaN > y and
 * NaN < y are false, so a NaN y is returned unless x itself is NaN. Two selects, no || : with
 * no branch in them the loops that call these (clamp, where's neighbours) vectorise (a
 * max/min and a blend), where the short-circuit made a branch per element, mispredicted on
 * mixed data (clamp of 1M floats took 56x PyTorch's time). */
#define MT_DEFINE_MINMAX(T, suffix)                                                          \
    static inline MT_HD T mt_maximum_##suffix(T x, T y)                                      \
    {                                                                                        \
        const T m = x > y ? x : y;                                                           \
        return mt_isnan_##suffix(x) ? x : m;                                                 \
    }                                                                                        \
    static inline MT_HD T mt_minimum_##suffix(T x, T y)                                      \
    {                                                                                        \
        const T m = x < y ? x : y;                                                           \
        return mt_isnan_##suffix(x) ? x : m;                                                 \
    }
MT_DEFINE_MINMAX(bool, b8)
MT_DEFINE_MINMAX(int32_t, i32)
MT_DEFINE_MINMAX(int64_t, i64)
MT_DEFINE_MINMAX(float, f32)
MT_DEFINE_MINMAX(double, f64)
#undef MT_DEFINE_MINMAX

/* clamp_min (and relu) and clamp_max propagate NaN from either side, as PyTorch does (an
 * integer bound is never NaN: the test is false). */
#define MT_DEFINE_CLAMP_BOUNDS(T, suffix)                                \
    static inline MT_HD T mt_clamp_min_##suffix(T x, T lo)               \
    {                                                                    \
        return (lo != lo) ? lo : (x < lo ? lo : x);                      \
    }                                                                    \
    static inline MT_HD T mt_clamp_max_##suffix(T x, T hi)               \
    {                                                                    \
        return (hi != hi) ? hi : (x > hi ? hi : x);                      \
    }
MT_DEFINE_CLAMP_BOUNDS(int32_t, i32)
MT_DEFINE_CLAMP_BOUNDS(int64_t, i64)
MT_DEFINE_CLAMP_BOUNDS(float, f32)
MT_DEFINE_CLAMP_BOUNDS(double, f64)
#undef MT_DEFINE_CLAMP_BOUNDS

/* Float powers, remainders and divisions with rounding. */
#define MT_DEFINE_FLOAT_DIVISION(T, suffix, F)                                               \
    static inline MT_HD T mt_pow_##suffix(T x, T y) { return pow##F(x, y); }                 \
    static inline MT_HD T mt_fmod_##suffix(T x, T y) { return fmod##F(x, y); }               \
    static inline MT_HD T mt_div_trunc_##suffix(T x, T y) { return trunc##F(x / y); }        \
    /* Python's sign rule: the remainder takes the divisor's sign. */                        \
    static inline MT_HD T mt_remainder_##suffix(T x, T y)                                    \
    {                                                                                        \
        T mod = fmod##F(x, y);                                                               \
        return (mod != 0 && ((y < 0) != (mod < 0))) ? mod + y : mod;                         \
    }                                                                                        \
    /* PyTorch's div_floor_floating: exact where floor(x / y) would round up a quotient. */ \
    static inline MT_HD T mt_div_floor_##suffix(T x, T y)                                   \
    {                                                                                        \
        if (y == 0) {                                                                        \
            return x / y; /* IEEE: inf or NaN */                                             \
        }                                                                                    \
        T mod = fmod##F(x, y);                                                               \
        T div = (x - mod) / y;                                                               \
        if (mod != 0 && ((y < 0) != (mod < 0))) {                                            \
            div -= (T)1;                                                                     \
        }                                                                                    \
        if (div == 0) {                                                                      \
            return copysign##F((T)0, x / y);                                                 \
        }                                                                                    \
        T fl = floor##F(div);                                                                \
        return div - fl > (T)0.5 ? fl + (T)1 : fl;                                           \
    }
MT_DEFINE_FLOAT_DIVISION(float, f32, f)
MT_DEFINE_FLOAT_DIVISION(double, f64, )
#undef MT_DEFINE_FLOAT_DIVISION

/* Integer division, remainder and power. x / 0 is undefined behaviour (a trap on the host), so
 * a zero divisor gives -1 for a quotient (all bits set, as the GPU's unsigned division sequence
 * does) and x for a remainder: the CPU loop flags it and the front end raises PyTorch's
 * ZeroDivisionError, while PyTorch's CUDA kernels give an unspecified value there, and ours
 * these. A divisor of -1 is answered without dividing, since INT_MIN / -1 traps (SIGFPE) on
 * x86. Negation and products wrap through the unsigned type U, as PyTorch's integers do. pow
 * of a negative exponent (reached only from a tensor exponent; a Python-number one is refused
 * first) is 1 / base rounded toward zero: 1, +-1 for -1, else 0. */
#define MT_DEFINE_INT_DIVISION(T, U, suffix)                                                 \
    static inline MT_HD T mt_div_trunc_##suffix(T x, T y)                                    \
    {                                                                                        \
        return y == 0 ? (T)-1 : y == -1 ? (T)(0 - (U)x) : (T)(x / y);                        \
    }                                                                                        \
    static inline MT_HD T mt_div_floor_##suffix(T x, T y)                                    \
    {                                                                                        \
        if (y == 0) {                                                                        \
            return (T)-1;                                                                    \
        }                                                                                    \
        if (y == -1) {                                                                       \
            return (T)(0 - (U)x);                                                            \
        }                                                                                    \
        const T q = (T)(x / y);                                                              \
        return (x % y != 0 && ((x < 0) != (y < 0))) ? (T)(q - 1) : q;                        \
    }                                                                                        \
    static inline MT_HD T mt_remainder_##suffix(T x, T y)                                    \
    {                                                                                        \
        if (y == 0 || y == -1) {                                                             \
            return y == 0 ? x : 0;                                                           \
        }                                                                                    \
        const T r = (T)(x % y);                                                              \
        return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                            \
    }                                                                                        \
    static inline MT_HD T mt_fmod_##suffix(T x, T y)                                         \
    {                                                                                        \
        return y == 0 ? x : y == -1 ? 0 : (T)(x % y);                                        \
    }                                                                                        \
    static inline MT_HD T mt_pow_##suffix(T base, T exp)                                     \
    {                                                                                        \
        if (exp < 0) {                                                                       \
            return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;                    \
        }                                                                                    \
        U r = 1, b = (U)base;                                                                \
        for (; exp; exp >>= 1) {                                                             \
            if (exp & 1) {                                                                   \
                r *= b;                                                                      \
            }                                                                                \
            b *= b;                                                                          \
        }                                                                                    \
        return (T)r;                                                                         \
    }
MT_DEFINE_INT_DIVISION(int32_t, uint32_t, i32)
MT_DEFINE_INT_DIVISION(int64_t, uint64_t, i64)
#undef MT_DEFINE_INT_DIVISION

/* Arithmetic of the numeric dtypes: k is add's and sub's alpha. A bool sum is logical or
 * (x + alpha * y as a truth value), a bool product logical and; PyTorch has no bool sub or neg. */
#define MT_DEFINE_ARITH(T, suffix)                                                           \
    static inline MT_HD T mt_add_##suffix(T x, T y, T k) { return (T)(x + k * y); }          \
    static inline MT_HD T mt_sub_##suffix(T x, T y, T k) { return (T)(x - k * y); }          \
    static inline MT_HD T mt_mul_##suffix(T x, T y) { return (T)(x * y); }                   \
    static inline MT_HD T mt_neg_##suffix(T x) { return (T)-x; }
MT_DEFINE_ARITH(int32_t, i32)
MT_DEFINE_ARITH(int64_t, i64)
MT_DEFINE_ARITH(float, f32)
MT_DEFINE_ARITH(double, f64)
#undef MT_DEFINE_ARITH
static inline MT_HD bool mt_add_b8(bool x, bool y, bool k) { return x || (k && y); }
static inline MT_HD bool mt_mul_b8(bool x, bool y) { return x && y; }

/* Bitwise ops, of bool and the integers only; ~ of a bool is logical not. */
#define MT_DEFINE_BITWISE(T, suffix)                                                         \
    static inline MT_HD T mt_bitwise_and_##suffix(T x, T y) { return (T)(x & y); }           \
    static inline MT_HD T mt_bitwise_or_##suffix(T x, T y) { return (T)(x | y); }
MT_DEFINE_BITWISE(bool, b8)
MT_DEFINE_BITWISE(int32_t, i32)
MT_DEFINE_BITWISE(int64_t, i64)
#undef MT_DEFINE_BITWISE
static inline MT_HD bool mt_bitwise_not_b8(bool x) { return !x; }
static inline MT_HD int32_t mt_bitwise_not_i32(int32_t x) { return ~x; }
static inline MT_HD int64_t mt_bitwise_not_i64(int64_t x) { return ~x; }

/* Comparisons, logical ops and selections, of every dtype: comparisons and logical ops give
 * bool; clamp is min(max(x, lo), hi), NaN-propagating; where(c, x, y) and masked_fill(x, c, v)
 * select by a bool. */
#define MT_DEFINE_SELECT(T, suffix)                                                          \
    static inline MT_HD bool mt_eq_##suffix(T x, T y) { return x == y; }                     \
    static inline MT_HD bool mt_ne_##suffix(T x, T y) { return x != y; }                     \
    static inline MT_HD bool mt_lt_##suffix(T x, T y) { return x < y; }                      \
    static inline MT_HD bool mt_le_##suffix(T x, T y) { return x <= y; }                     \
    static inline MT_HD bool mt_gt_##suffix(T x, T y) { return x > y; }                      \
    static inline MT_HD bool mt_ge_##suffix(T x, T y) { return x >= y; }                     \
    static inline MT_HD bool mt_logical_and_##suffix(T x, T y) { return x != 0 && y != 0; }  \
    static inline MT_HD bool mt_logical_or_##suffix(T x, T y) { return x != 0 || y != 0; }   \
    static inline MT_HD bool mt_logical_not_##suffix(T x) { return x == 0; }                 \
    static inline MT_HD T mt_clamp_##suffix(T x, T lo, T hi)                                 \
    {                                                                                        \
        return mt_minimum_##suffix(mt_maximum_##suffix(x, lo), hi);                          \
    }                                                                                        \
    static inline MT_HD T mt_where_##suffix(bool c, T x, T y) { return c ? x : y; }          \
    static inline MT_HD T mt_masked_fill_##suffix(T x, bool c, T v) { return c ? v : x; }
MT_DEFINE_SELECT(bool, b8)
MT_DEFINE_SELECT(int32_t, i32)
MT_DEFINE_SELECT(int64_t, i64)
MT_DEFINE_SELECT(float, f32)
MT_DEFINE_SELECT(double, f64)
#undef MT_DEFINE_SELECT


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
 * x <= 0; elu and softplus are MT_DEFINE_EXP_ACTIVATIONS' below); hardtanh's derivative (1 strictly inside (lo, hi)); (mish is GELU's macro's); hardswish
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
        return ((T)0 < x ? (T)0 : x) - log1p##F(exp##F(-fabs##F(x)));                        \
    }                                                                                        \
    static inline MT_HD T mt_log_sigmoid_backward_##suffix(T g, T x)                         \
    {                                                                                        \
        const T b = exp##F(-fabs##F(x));                                                     \
        return x < (T)0 ? ((T)1 - b / ((T)1 + b)) * g : (b / ((T)1 + b)) * g;                \
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

/* ---- everyday pointwise: rounding, tests, trigonometry, special functions, the
 * bitwise shifts, the float-pair functions; as PyTorch's kernels compute them (ATen's
 * UnaryOpsKernel, BinaryOpsKernel and native/Math.h) ---- */

#define MT_PI 3.14159265358979323846

#define MT_LIBM(fn)                                                                          \
    static inline MT_HD float mt_##fn##_f32(float x) { return fn##f(x); }                    \
    static inline MT_HD double mt_##fn##_f64(double x) { return fn(x); }
MT_LIBM(erf) MT_LIBM(erfc) MT_LIBM(lgamma) MT_LIBM(sinh) MT_LIBM(cosh) MT_LIBM(tan)
MT_LIBM(asin) MT_LIBM(acos) MT_LIBM(atan) MT_LIBM(asinh) MT_LIBM(acosh) MT_LIBM(atanh)
MT_LIBM(floor) MT_LIBM(ceil) MT_LIBM(trunc)
#undef MT_LIBM

/* Rounding of the floats (round is to nearest, ties to even: nearbyint); of the integers it is
 * the identity, as PyTorch's. round with decimals scales by 10^|decimals| first (a negative
 * decimals rounds to tens, hundreds...). frac keeps the sign: x - trunc(x). */
#define MT_DEFINE_ROUNDING(T, S, F)                                                          \
    static inline MT_HD T mt_round_##S(T x) { return nearbyint##F(x); }                      \
    static inline MT_HD T mt_frac_##S(T x) { return x - trunc##F(x); }                       \
    static inline MT_HD T mt_round_decimals_##S(T x, T decimals)                             \
    {                                                                                        \
        const bool neg = decimals < 0;                                                       \
        const T ten_pow = (T)pow(10.0, (double)(neg ? -decimals : decimals));                \
        return neg ? nearbyint##F(x / ten_pow) * ten_pow : nearbyint##F(x * ten_pow) / ten_pow; \
    }
MT_DEFINE_ROUNDING(float, f32, f)
MT_DEFINE_ROUNDING(double, f64, )
#undef MT_DEFINE_ROUNDING
#define MT_DEFINE_INT_ROUNDING(T, S)                                                         \
    static inline MT_HD T mt_floor_##S(T x) { return x; }                                    \
    static inline MT_HD T mt_ceil_##S(T x) { return x; }                                     \
    static inline MT_HD T mt_trunc_##S(T x) { return x; }                                    \
    static inline MT_HD T mt_round_##S(T x) { return x; }
MT_DEFINE_INT_ROUNDING(int32_t, i32)
MT_DEFINE_INT_ROUNDING(int64_t, i64)
#undef MT_DEFINE_INT_ROUNDING

/* The tests of a value: finite, +inf, -inf, a set sign bit (-0.0 has one; no integer is
 * infinite, a bool is never negative). */
#define MT_DEFINE_FLOAT_TESTS(T, S)                                                          \
    static inline MT_HD bool mt_isfinite_##S(T x) { return isfinite(x); }                    \
    static inline MT_HD bool mt_isposinf_##S(T x) { return x == (T)INFINITY; }               \
    static inline MT_HD bool mt_isneginf_##S(T x) { return x == -(T)INFINITY; }              \
    static inline MT_HD bool mt_signbit_##S(T x) { return signbit(x); }
MT_DEFINE_FLOAT_TESTS(float, f32)
MT_DEFINE_FLOAT_TESTS(double, f64)
#undef MT_DEFINE_FLOAT_TESTS
#define MT_DEFINE_INT_TESTS(T, S, NEG)                                                       \
    static inline MT_HD bool mt_isfinite_##S(T x) { (void)x; return true; }                  \
    static inline MT_HD bool mt_isposinf_##S(T x) { (void)x; return false; }                 \
    static inline MT_HD bool mt_isneginf_##S(T x) { (void)x; return false; }                 \
    static inline MT_HD bool mt_signbit_##S(T x) { return NEG; }
MT_DEFINE_INT_TESTS(bool, b8, ((void)x, false))
MT_DEFINE_INT_TESTS(int32_t, i32, x < 0)
MT_DEFINE_INT_TESTS(int64_t, i64, x < 0)
#undef MT_DEFINE_INT_TESTS

/* xor and the shifts. A shift by a negative amount or by the type's width or more is PyTorch's:
 * 0 to the left; to the right, the sign (x >> (width - 1)). A left shift goes through the
 * unsigned type U (a signed overflow is undefined). */
#define MT_DEFINE_SHIFTS(T, U, S)                                                            \
    static inline MT_HD T mt_bitwise_left_shift_##S(T x, T y)                                \
    {                                                                                        \
        return (y < 0 || y >= (T)(sizeof(T) * 8)) ? (T)0 : (T)((U)x << y);                   \
    }                                                                                        \
    static inline MT_HD T mt_bitwise_right_shift_##S(T x, T y)                               \
    {                                                                                        \
        const T max_shift = (T)(sizeof(T) * 8 - 1);                                          \
        return (T)(x >> ((y < 0 || y >= max_shift) ? max_shift : y));                        \
    }                                                                                        \
    static inline MT_HD T mt_bitwise_xor_##S(T x, T y) { return (T)(x ^ y); }
MT_DEFINE_SHIFTS(int32_t, uint32_t, i32)
MT_DEFINE_SHIFTS(int64_t, uint64_t, i64)
#undef MT_DEFINE_SHIFTS
static inline MT_HD bool mt_bitwise_xor_b8(bool x, bool y) { return x != y; }

/* logical_xor, and the NaN-ignoring fmax and fmin (a NaN is passed over for the other operand),
 * and heaviside(x, values): values where x is 0, else the step x > 0. */
#define MT_DEFINE_PICKS(T, S, MAX, MIN)                                                      \
    static inline MT_HD bool mt_logical_xor_##S(T x, T y) { return (x != 0) != (y != 0); }   \
    static inline MT_HD T mt_fmax_##S(T x, T y) { return MAX; }                              \
    static inline MT_HD T mt_fmin_##S(T x, T y) { return MIN; }                              \
    static inline MT_HD T mt_heaviside_##S(T x, T y) { return x == 0 ? y : (T)(x > 0); }
MT_DEFINE_PICKS(bool, b8, x || y, x && y)
MT_DEFINE_PICKS(int32_t, i32, x > y ? x : y, x < y ? x : y)
MT_DEFINE_PICKS(int64_t, i64, x > y ? x : y, x < y ? x : y)
MT_DEFINE_PICKS(float, f32, fmaxf(x, y), fminf(x, y))
MT_DEFINE_PICKS(double, f64, fmax(x, y), fmin(x, y))
#undef MT_DEFINE_PICKS

/* The float-pair functions and the float ternaries:
 * - copysign, atan2: libm's;
 * - logaddexp(x, y) = log(e^x + e^y), logaddexp2 in base 2: the larger plus log1p of the
 *   smaller's share, and x itself for two equal infinities (inf - inf would be NaN);
 * - xlogy(x, y) = x * log(y), 0 where x is 0 (unless y is NaN);
 * - lerp(x, end, w) = x + w * (end - x), from the end's side for |w| >= 0.5 (exact at w = 1);
 * - addcmul and addcdiv: x + k * y * z and x + k * y / z (k: value);
 * - nan_to_num(x, posinf, neginf, nan): the replacements of +inf, -inf and NaN;
 * - deg2rad, rad2deg: a product with the double constant rounded to T. */
#define MT_DEFINE_FLOAT_PAIRS(T, S, F)                                                       \
    static inline MT_HD T mt_copysign_##S(T x, T y) { return copysign##F(x, y); }            \
    static inline MT_HD T mt_atan2_##S(T x, T y) { return atan2##F(x, y); }                  \
    static inline MT_HD T mt_logaddexp_##S(T x, T y)                                         \
    {                                                                                        \
        if (isinf(x) && x == y) {                                                            \
            return x;                                                                        \
        }                                                                                    \
        const T m = x < y ? y : x;                                                           \
        return m + log1p##F(exp##F(-fabs##F(x - y)));                                        \
    }                                                                                        \
    static inline MT_HD T mt_logaddexp2_##S(T x, T y)                                        \
    {                                                                                        \
        if (isinf(x) && x == y) {                                                            \
            return x;                                                                        \
        }                                                                                    \
        const T m = x < y ? y : x;                                                           \
        return m + log1p##F(exp2##F(-fabs##F(x - y))) * (T)1.44269504088896340736;           \
    }                                                                                        \
    static inline MT_HD T mt_xlogy_##S(T x, T y)                                             \
    {                                                                                        \
        return y != y ? (T)NAN : x == 0 ? (T)0 : x * log##F(y);                              \
    }                                                                                        \
    static inline MT_HD T mt_lerp_##S(T x, T end, T w)                                       \
    {                                                                                        \
        return fabs##F(w) < (T)0.5 ? x + w * (end - x) : end - (end - x) * ((T)1 - w);       \
    }                                                                                        \
    static inline MT_HD T mt_addcdiv_##S(T x, T y, T z, T k) { return x + k * y / z; }       \
    static inline MT_HD T mt_nan_to_num_##S(T x, T posinf, T neginf, T nan)                  \
    {                                                                                        \
        return x != x ? nan : x == (T)INFINITY ? posinf : x == -(T)INFINITY ? neginf : x;    \
    }                                                                                        \
    static inline MT_HD T mt_deg2rad_##S(T x) { return x * (T)(MT_PI / 180); }               \
    static inline MT_HD T mt_rad2deg_##S(T x) { return x * (T)(180 / MT_PI); }
MT_DEFINE_FLOAT_PAIRS(float, f32, f)
MT_DEFINE_FLOAT_PAIRS(double, f64, )
#undef MT_DEFINE_FLOAT_PAIRS
#define MT_DEFINE_ADDCMUL(T, S)                                                              \
    static inline MT_HD T mt_addcmul_##S(T x, T y, T z, T k) { return (T)(x + k * y * z); }
MT_DEFINE_ADDCMUL(int32_t, i32)
MT_DEFINE_ADDCMUL(int64_t, i64)
MT_DEFINE_ADDCMUL(float, f32)
MT_DEFINE_ADDCMUL(double, f64)
#undef MT_DEFINE_ADDCMUL

/* erfinv: a rational approximation refined by two Newton steps (PyTorch's calc_erfinv, after
 * Pavlis's MATLAB erfinv); +-inf at +-1, NaN beyond. digamma: PyTorch's calc_digamma: the
 * reflection pi / tan(pi x) for a negative x (from its fractional part: accurate for a large
 * |x|), recurrence up to 10, then the asymptotic series; +-inf at -+0 and NaN at the negative
 * integers. */
#define MT_DEFINE_SPECIAL(T, S, F)                                                           \
    static inline MT_HD T mt_erfinv_##S(T y)                                                 \
    {                                                                                        \
        const T y_abs = fabs##F(y);                                                          \
        if (y_abs > (T)1) {                                                                  \
            return (T)NAN;                                                                   \
        }                                                                                    \
        if (y_abs == (T)1) {                                                                 \
            return copysign##F((T)INFINITY, y);                                              \
        }                                                                                    \
        T x;                                                                                 \
        if (y_abs <= (T)0.7) {                                                               \
            const T z = y * y;                                                               \
            const T num = (((T)-0.140543331 * z + (T)0.914624893) * z + (T)-1.645349621) * z + \
                          (T)0.886226899;                                                    \
            const T dem = ((((T)0.012229801 * z + (T)-0.329097515) * z + (T)1.442710462) * z + \
                           (T)-2.118377725) * z + (T)1;                                      \
            x = y * num / dem;                                                               \
        } else {                                                                             \
            const T z = sqrt##F(-log##F(((T)1 - y_abs) / (T)2));                             \
            const T num = (((T)1.641345311 * z + (T)3.429567803) * z + (T)-1.624906493) * z + \
                          (T)-1.970840454;                                                   \
            const T dem = ((T)1.6370678 * z + (T)3.5438892) * z + (T)1;                      \
            x = copysign##F(num, y) / dem;                                                   \
        }                                                                                    \
        const T two_over_sqrt_pi = (T)2 / (T)1.77245385090551602730;                         \
        x = x - (erf##F(x) - y) / (two_over_sqrt_pi * exp##F(-x * x));                       \
        x = x - (erf##F(x) - y) / (two_over_sqrt_pi * exp##F(-x * x));                       \
        return x;                                                                            \
    }                                                                                        \
    static inline MT_HD T mt_digamma_##S(T x)                                                \
    {                                                                                        \
        if (x == 0) {                                                                        \
            return copysign##F((T)INFINITY, -x);                                             \
        }                                                                                    \
        T reflection = 0;                                                                    \
        if (x < 0) {                                                                         \
            if (x == trunc##F(x)) {                                                          \
                return (T)NAN;                                                               \
            }                                                                                \
            double whole;                                                                    \
            const double r = modf((double)x, &whole);                                        \
            reflection = -(T)(MT_PI / tan(MT_PI * r));                                       \
            x = 1 - x;                                                                       \
        }                                                                                    \
        T result = 0;                                                                        \
        while (x < 10) {                                                                     \
            result -= 1 / x;                                                                 \
            x += 1;                                                                          \
        }                                                                                    \
        if (x == 10) {                                                                       \
            return result + (T)2.25175258906672110764 + reflection; /* digamma(10) */        \
        }                                                                                    \
        T y = 0;                                                                             \
        if (x < (T)1.0e17) {                                                                 \
            const T z = 1 / (x * x);                                                         \
            T p = (T)8.33333333333333333333E-2;                                              \
            p = p * z + (T)-2.10927960927960927961E-2;                                       \
            p = p * z + (T)7.57575757575757575758E-3;                                        \
            p = p * z + (T)-4.16666666666666666667E-3;                                       \
            p = p * z + (T)3.96825396825396825397E-3;                                        \
            p = p * z + (T)-8.33333333333333333333E-3;                                       \
            p = p * z + (T)8.33333333333333333333E-2;                                        \
            y = z * p;                                                                       \
        }                                                                                    \
        return result + log##F(x) - ((T)0.5 / x) - y + reflection;                           \
    }
MT_DEFINE_SPECIAL(float, f32, f)
MT_DEFINE_SPECIAL(double, f64, )
#undef MT_DEFINE_SPECIAL

/* trigamma in T (PyTorch's trigamma: the reflection for x < 1/2, six recurrence steps, then the
 * asymptotic series) */
#define MT_DEFINE_TRIGAMMA(T, S, F)                                                          \
    static inline MT_HD T mt_trigamma_##S(T x)                                               \
    {                                                                                        \
        const T pi = (T)MT_PI;                                                               \
        T sign = 1, result = 0;                                                              \
        if (x < (T)0.5) {                                                                    \
            sign = -1;                                                                       \
            const T s = sin##F(pi * x);                                                      \
            result -= (pi * pi) / (s * s);                                                   \
            x = 1 - x;                                                                       \
        }                                                                                    \
        for (int i = 0; i < 6; ++i) {                                                        \
            result += 1 / (x * x);                                                           \
            x += 1;                                                                          \
        }                                                                                    \
        const T ixx = 1 / (x * x);                                                           \
        result += (1 + 1 / (2 * x) +                                                         \
                   ixx * ((T)1 / 6 - ixx * ((T)1 / 30 - ixx * ((T)1 / 42)))) / x;            \
        return sign * result;                                                                \
    }
MT_DEFINE_TRIGAMMA(float, f32, f)
MT_DEFINE_TRIGAMMA(double, f64, )
#undef MT_DEFINE_TRIGAMMA

/* The Hurwitz zeta function sum over k >= 0 of (k + q)^-x, x >= 1 (Cephes' zeta, as PyTorch's):
 * the sum's first terms, then Euler-Maclaurin with the Bernoulli terms of A. */
static inline MT_HD double
mt_zeta_acc(double x, double q)
{
    const double MACHEP = 1.11022302462515654042E-16;
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                          -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
                          1.1646782814350067249e14, -4.5979787224074726105e15,
                          1.8152105401943546773e17, -7.1661652561756670113e18};
    if (x == 1) {
        return INFINITY;
    }
    if (x < 1) {
        return NAN;
    }
    if (q <= 0) {
        if (q == floor(q)) {
            return INFINITY;
        }
        if (x != floor(x)) {
            return NAN;
        }
    }
    double s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-MACHEP * s < b && b < MACHEP * s) {
            return s;
        }
    }
    const double w = a;
    s += b * w / (x - 1);
    s -= 0.5 * b;
    a = 1;
    double k = 0;
    for (int j = 0; j < 12; j++) {
        a *= x + k;
        b /= w;
        const double t = a * b / A[j];
        s = s + t;
        if (fabs(t / s) < MACHEP) {
            return s;
        }
        k += 1;
        a *= x + k;
        b /= w;
        k += 1; /* the next Bernoulli term's factors are (x + 2j)(x + 2j + 1) */
    }
    return s;
}

/* polygamma(n, x), the n-th derivative of digamma: digamma, trigamma, and beyond
 * (-1)^(n+1) n! zeta(n + 1, x); n (a whole number >= 0) comes as the row's scalar. */
static inline MT_HD double
mt_polygamma_acc(double x, double n)
{
    return (((int64_t)n % 2) ? 1.0 : -1.0) * exp(lgamma(n + 1)) * mt_zeta_acc(n + 1, x);
}
static inline MT_HD float
mt_polygamma_f32(float x, float n)
{
    return n == 0 ? mt_digamma_f32(x) : n == 1 ? mt_trigamma_f32(x) : (float)mt_polygamma_acc(x, n);
}
static inline MT_HD double
mt_polygamma_f64(double x, double n)
{
    return n == 0 ? mt_digamma_f64(x) : n == 1 ? mt_trigamma_f64(x) : mt_polygamma_acc(x, n);
}

/* One step of logcumsumexp: log(e^x + e^acc), PyTorch's _log_add_exp_helper (NaN in acc
 * propagates; equal infinities give x). */
static inline MT_HD double
mt_log_add_exp(double x, double acc)
{
    const double lo = acc != acc ? acc : (acc < x ? acc : x); /* std::min(x, acc) */
    const double hi = acc != acc ? acc : (x < acc ? acc : x); /* std::max(x, acc) */
    if (lo != hi || isfinite(lo)) {
        return log1p(exp(lo - hi)) + hi;
    }
    return x;
}

/* Complex math of the elementwise rows that have complex loops (ops/elementwise.def's
 * MT_EW_COMPLEX), for complex64 (c64: float parts) and complex128 (c128: double parts): C's
 * _Complex types, so the CPU loops read them as any other T. The products and quotients are
 * written out, not C's operators: C's * and / follow Annex G (a library call per element, and
 * other values than PyTorch's at infinities); these are PyTorch's (x*y as (ac - bd) + (ad + bc)i,
 * x/y by Smith's scaling, so |y| near the range's ends does not overflow). The CUDA kernels
 * have no complex loops (the dispatcher refuses complex tensors there), so nvcc never sees these. */
#ifndef __cplusplus
#include <complex.h>
#define MT_LN2 0.69314718055994530942  /* log2(x) = log(x) / ln 2 */
#define MT_LN10 2.30258509299404568402 /* log10(x) = log(x) / ln 10 */
#define MT_DEFINE_COMPLEX(C, R, suffix, F, MAKE)                                             \
    static inline C mt_cmul_##suffix(C x, C y)                                               \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y);          \
        return MAKE(a * c - b * d, a * d + b * c);                                           \
    }                                                                                        \
    static inline C mt_cdiv_##suffix(C x, C y)                                               \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y);          \
        const R ac = fabs##F(c), ad = fabs##F(d);                                            \
        if (ac == 0 && ad == 0) { /* x / 0: each part over a zero, inf or NaN as the reals */ \
            return MAKE(a / ac, b / ad);                                                     \
        }                                                                                    \
        if (ac >= ad) {                                                                      \
            const R r = d / c, s = (R)1 / (c + d * r);                                       \
            return MAKE((a + b * r) * s, (b - a * r) * s);                                   \
        }                                                                                    \
        const R r = c / d, s = (R)1 / (d + c * r);                                           \
        return MAKE((a * r + b) * s, (b * r - a) * s);                                       \
    }                                                                                        \
    static inline C mt_add_##suffix(C x, C y, C k) { return x + mt_cmul_##suffix(k, y); }   \
    static inline C mt_sub_##suffix(C x, C y, C k) { return x - mt_cmul_##suffix(k, y); }   \
    static inline C mt_mul_##suffix(C x, C y) { return mt_cmul_##suffix(x, y); }             \
    static inline C mt_div_##suffix(C x, C y) { return mt_cdiv_##suffix(x, y); }             \
    static inline C mt_neg_##suffix(C x) { return MAKE(-creal##F(x), -cimag##F(x)); }        \
    static inline C mt_reciprocal_##suffix(C x) { return mt_cdiv_##suffix(MAKE(1, 0), x); }  \
    static inline C mt_exp_##suffix(C x) { return cexp##F(x); }                              \
    static inline C mt_log_##suffix(C x) { return clog##F(x); }                              \
    static inline C mt_sqrt_##suffix(C x) { return csqrt##F(x); }                            \
    static inline C mt_rsqrt_##suffix(C x) { return mt_cdiv_##suffix(MAKE(1, 0), csqrt##F(x)); } \
    static inline C mt_log2_##suffix(C x)                                                    \
    {                                                                                        \
        const C l = clog##F(x);                                                              \
        return MAKE(creal##F(l) / (R)MT_LN2, cimag##F(l) / (R)MT_LN2);                         \
    }                                                                                        \
    static inline C mt_log10_##suffix(C x)                                                   \
    {                                                                                        \
        const C l = clog##F(x);                                                              \
        return MAKE(creal##F(l) / (R)MT_LN10, cimag##F(l) / (R)MT_LN10);                       \
    }                                                                                        \
    /* log(1 + x) without 1 + x's rounding near 0: |1 + x|^2 = 1 + (2a + a^2 + b^2) */       \
    static inline C mt_log1p_##suffix(C x)                                                   \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x);                                            \
        if (!isfinite(a) || !isfinite(b) || fabs##F(a) + fabs##F(b) > (R)0.5) {              \
            return clog##F(MAKE(1 + a, b));                                                  \
        }                                                                                    \
        return MAKE(log1p##F(2 * a + a * a + b * b) / 2, atan2##F(b, 1 + a));                \
    }                                                                                        \
    /* exp(x) - 1 without the cancellation near 0: Re = expm1(a) cos b - 2 sin^2(b / 2) */  \
    static inline C mt_expm1_##suffix(C x)                                                   \
    {                                                                                        \
        const R a = creal##F(x), b = cimag##F(x), h = sin##F(b / 2);                         \
        if (b == 0) {                                                                        \
            return MAKE(expm1##F(a), b);                                                     \
        }                                                                                    \
        return MAKE(expm1##F(a) * cos##F(b) - 2 * h * h, exp##F(a) * sin##F(b));             \
    }                                                                                        \
    static inline C mt_sin_##suffix(C x) { return csin##F(x); }                              \
    static inline C mt_cos_##suffix(C x) { return ccos##F(x); }                              \
    static inline C mt_tan_##suffix(C x) { return ctan##F(x); }                              \
    static inline C mt_sinh_##suffix(C x) { return csinh##F(x); }                            \
    static inline C mt_cosh_##suffix(C x) { return ccosh##F(x); }                            \
    static inline C mt_tanh_##suffix(C x) { return ctanh##F(x); }                            \
    static inline C mt_asin_##suffix(C x) { return casin##F(x); }                            \
    static inline C mt_acos_##suffix(C x) { return cacos##F(x); }                            \
    static inline C mt_atan_##suffix(C x) { return catan##F(x); }                            \
    static inline C mt_asinh_##suffix(C x) { return casinh##F(x); }                          \
    static inline C mt_acosh_##suffix(C x) { return cacosh##F(x); }                          \
    static inline C mt_atanh_##suffix(C x) { return catanh##F(x); }                          \
    static inline C mt_sigmoid_##suffix(C x)                                                 \
    {                                                                                        \
        const C e = cexp##F(MAKE(-creal##F(x), -cimag##F(x)));                               \
        return mt_cdiv_##suffix(MAKE(1, 0), MAKE(1 + creal##F(e), cimag##F(e)));             \
    }                                                                                        \
    /* g conj((1 - y) y): the derivative conjugated, as PyTorch's */                         \
    static inline C mt_sigmoid_backward_##suffix(C g, C y)                                   \
    {                                                                                        \
        return g * conj##F((1 - y) * y);                                                     \
    }                                                                                        \
    static inline C mt_pow_##suffix(C x, C y)                                                \
    {                                                                                        \
        /* x ** 0 is 1 and 0 ** y (Re y > 0) is 0, as PyTorch's; cpow gives NaN parts there */ \
        if (creal##F(y) == 0 && cimag##F(y) == 0) {                                          \
            return MAKE(1, 0);                                                               \
        }                                                                                    \
        if (creal##F(x) == 0 && cimag##F(x) == 0 && creal##F(y) > 0) {                       \
            return MAKE(0, 0);                                                               \
        }                                                                                    \
        return cpow##F(x, y);                                                                \
    }                                                                                        \
    static inline bool mt_eq_##suffix(C x, C y) { return x == y; }                           \
    static inline bool mt_ne_##suffix(C x, C y) { return x != y; }                           \
    static inline bool mt_isnan_##suffix(C x) { return isnan(creal##F(x)) || isnan(cimag##F(x)); } \
    static inline bool mt_isinf_##suffix(C x) { return isinf(creal##F(x)) || isinf(cimag##F(x)); } \
    static inline bool mt_isfinite_##suffix(C x)                                             \
    {                                                                                        \
        return isfinite(creal##F(x)) && isfinite(cimag##F(x));                               \
    }                                                                                        \
    static inline C mt_where_##suffix(bool c, C x, C y) { return c ? x : y; }                \
    static inline C mt_masked_fill_##suffix(C x, bool c, C v) { return c ? v : x; }
MT_DEFINE_COMPLEX(float _Complex, float, c64, f, CMPLXF)
MT_DEFINE_COMPLEX(double _Complex, double, c128, , CMPLX)
#undef MT_DEFINE_COMPLEX
#endif

/* clang-format on */

#include "core/math_special.h"

#endif
