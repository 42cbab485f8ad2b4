/* Scalar math shared by the CPU loops and the CUDA kernels, forward and backward.
 *
 * Each formula is written once here. MT_HD marks them __host__ __device__ under nvcc. */
#ifndef MT_MATH_H
#define MT_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MT_HD __host__ __device__
#else
#define MT_HD
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

/* Float math of the unary ops, for float (f32, libm suffix f) and double (f64, no suffix).
 * sigmoid never evaluates exp of a large positive number, so it cannot overflow to inf/inf;
 * silu and gelu are written in terms of sigmoid and erf so NaN and inf follow them. */
#define MT_DEFINE_FLOAT_MATH(T, suffix, F)                                                   \
    static inline MT_HD T mt_exp_##suffix(T x) { return exp##F(x); }                         \
    static inline MT_HD T mt_log_##suffix(T x) { return log##F(x); }                         \
    static inline MT_HD T mt_log1p_##suffix(T x) { return log1p##F(x); }                     \
    static inline MT_HD T mt_sqrt_##suffix(T x) { return sqrt##F(x); }                       \
    static inline MT_HD T mt_rsqrt_##suffix(T x) { return (T)1 / sqrt##F(x); }               \
    static inline MT_HD T mt_sin_##suffix(T x) { return sin##F(x); }                         \
    static inline MT_HD T mt_cos_##suffix(T x) { return cos##F(x); }                         \
    static inline MT_HD T mt_tanh_##suffix(T x) { return tanh##F(x); }                       \
    static inline MT_HD T mt_abs_##suffix(T x) { return fabs##F(x); }                        \
    static inline MT_HD T mt_sigmoid_##suffix(T x)                                           \
    {                                                                                        \
        if (x >= 0) {                                                                        \
            return (T)1 / ((T)1 + exp##F(-x));                                               \
        }                                                                                    \
        const T e = exp##F(x); /* also the NaN path: x >= 0 is false for NaN */             \
        return e / ((T)1 + e);                                                               \
    }                                                                                        \
    static inline MT_HD T mt_silu_##suffix(T x) { return x * mt_sigmoid_##suffix(x); }       \
    static inline MT_HD T mt_gelu_##suffix(T x)                                              \
    {                                                                                        \
        return (T)0.5 * x * ((T)1 + erf##F(x * (T)MT_SQRT1_2));                              \
    }                                                                                        \
    static inline MT_HD bool mt_isnan_##suffix(T x) { return x != x; }                       \
    static inline MT_HD bool mt_isinf_##suffix(T x) { return isinf(x); }
MT_DEFINE_FLOAT_MATH(float, f32, f)
MT_DEFINE_FLOAT_MATH(double, f64, )
#undef MT_DEFINE_FLOAT_MATH

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

/* maximum and minimum propagate NaN from either operand, as PyTorch's do: NaN > y and
 * NaN < y are false, so a NaN y is returned unless x itself is NaN. */
#define MT_DEFINE_MINMAX(T, suffix)                                                          \
    static inline MT_HD T mt_maximum_##suffix(T x, T y)                                      \
    {                                                                                        \
        return (mt_isnan_##suffix(x) || x > y) ? x : y;                                      \
    }                                                                                        \
    static inline MT_HD T mt_minimum_##suffix(T x, T y)                                      \
    {                                                                                        \
        return (mt_isnan_##suffix(x) || x < y) ? x : y;                                      \
    }
MT_DEFINE_MINMAX(bool, b8)
MT_DEFINE_MINMAX(int32_t, i32)
MT_DEFINE_MINMAX(int64_t, i64)
MT_DEFINE_MINMAX(float, f32)
MT_DEFINE_MINMAX(double, f64)
#undef MT_DEFINE_MINMAX

/* clamp_min and relu propagate NaN from either side, as PyTorch does. */
#define MT_DEFINE_CLAMP_MIN(T, suffix)                                   \
    static inline MT_HD T mt_clamp_min_##suffix(T x, T lo)               \
    {                                                                    \
        return (lo != lo) ? lo : (x < lo ? lo : x);                      \
    }
MT_DEFINE_CLAMP_MIN(float, f32)
MT_DEFINE_CLAMP_MIN(double, f64)
#undef MT_DEFINE_CLAMP_MIN

/* More float math: unary ops of issue 3, and GELU's tanh approximation (PyTorch's constants:
 * sqrt(2/pi) and 0.044715). */
#define MT_DEFINE_FLOAT_MATH2(T, suffix, F)                                                  \
    static inline MT_HD T mt_reciprocal_##suffix(T x) { return (T)1 / x; }                   \
    static inline MT_HD T mt_exp2_##suffix(T x) { return exp2##F(x); }                       \
    static inline MT_HD T mt_expm1_##suffix(T x) { return expm1##F(x); }                     \
    static inline MT_HD T mt_log2_##suffix(T x) { return log2##F(x); }                       \
    static inline MT_HD T mt_log10_##suffix(T x) { return log10##F(x); }                     \
    static inline MT_HD T mt_gelu_tanh_##suffix(T x)                                         \
    {                                                                                        \
        const T inner = (T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x);          \
        return (T)0.5 * x * ((T)1 + tanh##F(inner));                                         \
    }                                                                                        \
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
MT_DEFINE_FLOAT_MATH2(float, f32, f)
MT_DEFINE_FLOAT_MATH2(double, f64, )
#undef MT_DEFINE_FLOAT_MATH2

/* Integer division, remainder and power. The caller has excluded a zero divisor (PyTorch
 * raises ZeroDivisionError); a divisor of -1 is answered without dividing, since INT_MIN / -1
 * traps (SIGFPE) on x86. Negation and products wrap through the unsigned type U, as PyTorch's
 * integers do. pow of a negative exponent (reached only from a tensor exponent; a Python-number
 * one is refused first) is 1 / base rounded toward zero: 1, +-1 for -1, else 0. */
#define MT_DEFINE_INT_DIV(T, U, suffix)                                                      \
    static inline MT_HD T mt_div_trunc_##suffix(T x, T y)                                    \
    {                                                                                        \
        return y == -1 ? (T)(0 - (U)x) : (T)(x / y);                                         \
    }                                                                                        \
    static inline MT_HD T mt_div_floor_##suffix(T x, T y)                                    \
    {                                                                                        \
        if (y == -1) {                                                                       \
            return (T)(0 - (U)x);                                                            \
        }                                                                                    \
        const T q = (T)(x / y);                                                              \
        return (x % y != 0 && ((x < 0) != (y < 0))) ? (T)(q - 1) : q;                        \
    }                                                                                        \
    static inline MT_HD T mt_remainder_##suffix(T x, T y)                                    \
    {                                                                                        \
        if (y == -1) {                                                                       \
            return 0;                                                                        \
        }                                                                                    \
        const T r = (T)(x % y);                                                              \
        return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                            \
    }                                                                                        \
    static inline MT_HD T mt_fmod_##suffix(T x, T y) { return y == -1 ? 0 : (T)(x % y); }    \
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
MT_DEFINE_INT_DIV(int32_t, uint32_t, i32)
MT_DEFINE_INT_DIV(int64_t, uint64_t, i64)
#undef MT_DEFINE_INT_DIV

/* clamp_max mirrors clamp_min: a NaN bound propagates. */
#define MT_DEFINE_CLAMP_MAX(T, suffix)                                   \
    static inline MT_HD T mt_clamp_max_##suffix(T x, T hi)               \
    {                                                                    \
        return (hi != hi) ? hi : (x > hi ? hi : x);                      \
    }
MT_DEFINE_CLAMP_MAX(float, f32)
MT_DEFINE_CLAMP_MAX(double, f64)
#undef MT_DEFINE_CLAMP_MAX

/* The derivatives of GELU that its backward kernel multiplies the gradient by (PyTorch's
 * GeluBackwardKernelImpl): exact, Phi(x) + x phi(x); and of the tanh approximation. */
#define MT_DEFINE_GELU_BACKWARD(T, suffix, F)                                                \
    static inline MT_HD T mt_gelu_backward_##suffix(T g, T x)                                \
    {                                                                                        \
        const T cdf = (T)0.5 * ((T)1 + erf##F(x * (T)MT_SQRT1_2));                           \
        const T pdf = (T)0.39894228040143267794 * exp##F((T)-0.5 * x * x); /* 1/sqrt(2pi) */ \
        return g * (cdf + x * pdf);                                                          \
    }                                                                                        \
    static inline MT_HD T mt_gelu_tanh_backward_##suffix(T g, T x)                           \
    {                                                                                        \
        const T beta = (T)0.79788456080286535588, kappa = (T)0.044715;                       \
        const T t = tanh##F(beta * (x + kappa * x * x * x));                                 \
        const T inner = beta * ((T)1 + (T)3 * kappa * x * x);                                \
        return g * ((T)0.5 * ((T)1 + t) + (T)0.5 * x * ((T)1 - t * t) * inner);             \
    }
MT_DEFINE_GELU_BACKWARD(float, f32, f)
MT_DEFINE_GELU_BACKWARD(double, f64, )
#undef MT_DEFINE_GELU_BACKWARD

/* random_'s draw from 64 random bits: from + bits mod span, span 0 standing for all 2^64 values
 * (random_(-2**63) of int64). In unsigned arithmetic: the offset may pass INT64_MAX before it
 * lands in range. */
static inline MT_HD int64_t
mt_random_in_range(uint64_t bits, int64_t from, uint64_t span)
{
    return (int64_t)((uint64_t)from + (span ? bits % span : bits));
}

#endif
