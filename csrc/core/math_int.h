/* Scalar math of the integers and bool only (suffixes i32, i64, b8): the integer division,
 * remainder and power, the bitwise ops and shifts, and the integer forms of rounding and of the
 * tests of a value. Part of core/math.h (include that), after core/math_float.h. */
#ifndef MT_MATH_INT_H
#define MT_MATH_INT_H

#ifndef MT_MATH_H
#error "include core/math.h, which defines MT_HD and includes this file in order"
#endif

/* clang-format off */

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

/* Rounding of an integer is the identity, as PyTorch's. */
#define MT_DEFINE_INT_ROUNDING(T, S)                                                         \
    static inline MT_HD T mt_floor_##S(T x) { return x; }                                    \
    static inline MT_HD T mt_ceil_##S(T x) { return x; }                                     \
    static inline MT_HD T mt_trunc_##S(T x) { return x; }                                    \
    static inline MT_HD T mt_round_##S(T x) { return x; }
MT_DEFINE_INT_ROUNDING(int32_t, i32)
MT_DEFINE_INT_ROUNDING(int64_t, i64)
#undef MT_DEFINE_INT_ROUNDING

/* No integer is infinite; a bool is never negative. */
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

/* clang-format on */

#endif
