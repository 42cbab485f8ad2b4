/* Scalar math written once for every real dtype (b8, i32, i64, f32, f64; complex ones in
 * core/math_complex.h): arithmetic, sign, maximum and minimum, clamp, comparisons, logical ops,
 * selections, fmax and fmin, addcmul. Part of core/math.h (include that), after math_float.h and
 * math_int.h, whose isnan it uses. */
#ifndef MT_MATH_NUMERIC_H
#define MT_MATH_NUMERIC_H

#ifndef MT_MATH_H
#error "include core/math.h, which defines MT_HD and includes this file in order"
#endif

/* clang-format off */

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

/* addcmul: x + k * y * z (k: value). */
#define MT_DEFINE_ADDCMUL(T, S)                                                              \
    static inline MT_HD T mt_addcmul_##S(T x, T y, T z, T k) { return (T)(x + k * y * z); }
MT_DEFINE_ADDCMUL(int32_t, i32)
MT_DEFINE_ADDCMUL(int64_t, i64)
MT_DEFINE_ADDCMUL(float, f32)
MT_DEFINE_ADDCMUL(double, f64)
#undef MT_DEFINE_ADDCMUL

/* clang-format on */

#endif
