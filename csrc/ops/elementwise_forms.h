/* The forms of ops/elementwise.def's rows, without the rows themselves: how many inputs a loop
 * reads, their C types and the result's for a row computing in T, how its scalar function is
 * called, and the dtype sets a row's dtypes column names. A file that needs no row (a kernel
 * file generating its own table from these forms, as cuda/random.cu) includes this alone, so a
 * change of elementwise.def does not rebuild it; ops/elementwise_table.h adds the rows' ids.
 *
 * For form F: MT_EW_NIN_F the inputs; MT_EW_BOOLIN_F the inputs read as bool (bit k for input
 * k, the others are T); MT_EW_BOOLOUT_F whether the result is bool (else T); MT_EW_CALL_F(f) f
 * applied to the inputs x, y, z and the op's scalars k, k2, k3. */
#ifndef MT_OPS_ELEMENTWISE_FORMS_H
#define MT_OPS_ELEMENTWISE_FORMS_H

#define MT_EW_MAX_K 3 /* scalar operands of a row: k, k2, k3 (elu's alpha, scale, input_scale) */

/* f(x) */
#define MT_EW_NIN_X 1
#define MT_EW_BOOLIN_X 0
#define MT_EW_BOOLOUT_X 0
#define MT_EW_CALL_X(f) f(x)
/* bool f(x): predicates */
#define MT_EW_NIN_XB 1
#define MT_EW_BOOLIN_XB 0
#define MT_EW_BOOLOUT_XB 1
#define MT_EW_CALL_XB(f) f(x)
/* f(x, k): a Scalar operand */
#define MT_EW_NIN_XK 1
#define MT_EW_BOOLIN_XK 0
#define MT_EW_BOOLOUT_XK 0
#define MT_EW_CALL_XK(f) f(x, k)
/* f(x, y) */
#define MT_EW_NIN_XY 2
#define MT_EW_BOOLIN_XY 0
#define MT_EW_BOOLOUT_XY 0
#define MT_EW_CALL_XY(f) f(x, y)
/* bool f(x, y): comparisons */
#define MT_EW_NIN_XYB 2
#define MT_EW_BOOLIN_XYB 0
#define MT_EW_BOOLOUT_XYB 1
#define MT_EW_CALL_XYB(f) f(x, y)
/* f(x, y, k): add and sub with alpha */
#define MT_EW_NIN_XYK 2
#define MT_EW_BOOLIN_XYK 0
#define MT_EW_BOOLOUT_XYK 0
#define MT_EW_CALL_XYK(f) f(x, y, k)
/* f(x, y), a division: an integer y of 0 is flagged (the CPU raises ZeroDivisionError) */
#define MT_EW_NIN_DIV 2
#define MT_EW_BOOLIN_DIV 0
#define MT_EW_BOOLOUT_DIV 0
#define MT_EW_CALL_DIV(f) f(x, y)
/* f(x, k, k2), f(x, k, k2, k3): several Scalar operands (softplus's beta and threshold, elu's
 * alpha, scale and input_scale); f(x, y, k, k2), f(x, y, k, k2, k3): their backward rows */
#define MT_EW_NIN_XKK 1
#define MT_EW_BOOLIN_XKK 0
#define MT_EW_BOOLOUT_XKK 0
#define MT_EW_CALL_XKK(f) f(x, k, k2)
#define MT_EW_NIN_XKKK 1
#define MT_EW_BOOLIN_XKKK 0
#define MT_EW_BOOLOUT_XKKK 0
#define MT_EW_CALL_XKKK(f) f(x, k, k2, k3)
#define MT_EW_NIN_XYKK 2
#define MT_EW_BOOLIN_XYKK 0
#define MT_EW_BOOLOUT_XYKK 0
#define MT_EW_CALL_XYKK(f) f(x, y, k, k2)
#define MT_EW_NIN_XYKKK 2
#define MT_EW_BOOLIN_XYKKK 0
#define MT_EW_BOOLOUT_XYKKK 0
#define MT_EW_CALL_XYKKK(f) f(x, y, k, k2, k3)
/* f(x, y, z) */
#define MT_EW_NIN_XYZ 3
#define MT_EW_BOOLIN_XYZ 0
#define MT_EW_BOOLOUT_XYZ 0
#define MT_EW_CALL_XYZ(f) f(x, y, z)
/* f(x, y, z, k): addcmul and addcdiv with value, nan_to_num with its NaN replacement */
#define MT_EW_NIN_XYZK 3
#define MT_EW_BOOLIN_XYZK 0
#define MT_EW_BOOLOUT_XYZK 0
#define MT_EW_CALL_XYZK(f) f(x, y, z, k)
/* f(bool x, y, z): where */
#define MT_EW_NIN_CXY 3
#define MT_EW_BOOLIN_CXY 1
#define MT_EW_BOOLOUT_CXY 0
#define MT_EW_CALL_CXY(f) f(x, y, z)
/* f(x, bool y, z): masked_fill */
#define MT_EW_NIN_XCY 3
#define MT_EW_BOOLIN_XCY 2
#define MT_EW_BOOLOUT_XCY 0
#define MT_EW_CALL_XCY(f) f(x, y, z)

/* MT_EW_T<k>(form, T): the C type of input k (1 to 3) of a row computing in T; MT_EW_R(form, T)
 * the result's. */
#define MT_EW_PICK_0(T) T
#define MT_EW_PICK_1(T) bool
#define MT_EW_PICK(bit, T) MT_EW_PICK_(bit, T)
#define MT_EW_PICK_(bit, T) MT_EW_PICK_##bit(T)
#define MT_EW_BIT1_0 0
#define MT_EW_BIT1_1 1
#define MT_EW_BIT1_2 0
#define MT_EW_BIT2_0 0
#define MT_EW_BIT2_1 0
#define MT_EW_BIT2_2 1
#define MT_EW_BIT1(mask) MT_EW_BIT1_(mask)
#define MT_EW_BIT1_(mask) MT_EW_BIT1_##mask
#define MT_EW_BIT2(mask) MT_EW_BIT2_(mask)
#define MT_EW_BIT2_(mask) MT_EW_BIT2_##mask
#define MT_EW_T1(form, T) MT_EW_PICK(MT_EW_BIT1(MT_EW_BOOLIN_##form), T)
#define MT_EW_T2(form, T) MT_EW_PICK(MT_EW_BIT2(MT_EW_BOOLIN_##form), T)
#define MT_EW_T3(form, T) T
#define MT_EW_R(form, T) MT_EW_PICK(MT_EW_BOOLOUT_##form, T)

/* X(name, form, T, suffix) for each dtype a row's dtypes column names, N(name, form, T, suffix)
 * for the others, in mt_dtype order. */
#define MT_EW_EACH(B, I32, I64, F32, F64, name, form) \
    B(name, form, bool, b8)                           \
    I32(name, form, int32_t, i32)                     \
    I64(name, form, int64_t, i64) F32(name, form, float, f32) F64(name, form, double, f64)
#define MT_EW_DTYPES_ALL(X, N, name, form) MT_EW_EACH(X, X, X, X, X, name, form)
#define MT_EW_DTYPES_NUMERIC(X, N, name, form) MT_EW_EACH(N, X, X, X, X, name, form)
#define MT_EW_DTYPES_FLOAT(X, N, name, form) MT_EW_EACH(N, N, N, X, X, name, form)
#define MT_EW_DTYPES_INTEGRAL(X, N, name, form) MT_EW_EACH(X, X, X, N, N, name, form)
#define MT_EW_DTYPES_INTEGER(X, N, name, form) MT_EW_EACH(N, X, X, N, N, name, form)

#endif
