/* Element types, their sizes and names, and PyTorch's type promotion.
 *
 * The first five are in promotion order; the small ones (uint8, int8, int16, float16, bfloat16)
 * come after them so that the tables indexed by dtype keep their rows, and promotion is
 * mt_promote_types's rule, not the enum order. float16 and bfloat16 are storage types: kernels
 * load them to float32, compute and round once on store (core/half.h). complex64 and complex128
 * (a float or double real part, then the imaginary part) come last: only the ops whose ops.def
 * row says COMPLEX take them (the dispatcher refuses them for the others, dispatch/complex.c).
 * After them, PyTorch's "shell" dtypes: uint16, uint32, uint64 and the four float8 formats
 * (core/float8.h). They are stored, converted, printed and moved like any dtype, but only the few
 * ops PyTorch's CPU computes on them take them (dispatch/shell.c), and they promote with no other
 * dtype but their own (uint16/32/64 also with a float, which wins). */
#ifndef MT_DTYPE_H
#define MT_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mt_dtype {
    MT_BOOL = 0,
    MT_INT32,
    MT_INT64,
    MT_FLOAT32,
    MT_FLOAT64,
    MT_UINT8,
    MT_INT8,
    MT_INT16,
    MT_FLOAT16,
    MT_BFLOAT16,
    MT_COMPLEX64,
    MT_COMPLEX128,
    MT_UINT16,
    MT_UINT32,
    MT_UINT64,
    MT_FLOAT8_E4M3FN,
    MT_FLOAT8_E5M2,
    MT_FLOAT8_E4M3FNUZ,
    MT_FLOAT8_E5M2FNUZ,
    MT_NUM_DTYPES
} mt_dtype;

/* The default floating-point dtype (PyTorch's get_default_dtype): the dtype of float factories,
 * of Python floats in tensor() and mixed with integer tensors, and of integer inputs to float
 * math. float32 until minitorch.set_default_dtype changes it; one for the process, as PyTorch's. */
mt_dtype mt_default_float(void);
/* Sets it; dt must be a floating-point dtype (the binding layer checks, with PyTorch's error). */
void mt_set_default_float(mt_dtype dt);
#define MT_DEFAULT_FLOAT (mt_default_float())

size_t mt_dtype_size(mt_dtype dt);
/* PyTorch's ScalarType name, used in error messages: "Float", "Long", ... */
const char *mt_dtype_scalar_name(mt_dtype dt);
/* The C type name PyTorch prints in dtype-mismatch messages: "float", "long int", ... */
const char *mt_dtype_c_name(mt_dtype dt);
/* The Python name: "float32", "int64", ... */
const char *mt_dtype_name(mt_dtype dt);

static inline bool
mt_dtype_is_float8(mt_dtype dt)
{
    return dt >= MT_FLOAT8_E4M3FN && dt <= MT_FLOAT8_E5M2FNUZ;
}

/* The shell dtypes: uint16, uint32, uint64 and the float8 formats. */
static inline bool
mt_dtype_is_shell(mt_dtype dt)
{
    return dt >= MT_UINT16 && dt < MT_NUM_DTYPES;
}

/* Complex or a shell dtype: the enum's tail, the dtypes the dispatcher routes through a rule of
 * their own (dispatch/complex.c, dispatch/shell.c) before the kernels' keys. */
static inline bool
mt_dtype_has_own_rule(mt_dtype dt)
{
    return dt >= MT_COMPLEX64 && dt < MT_NUM_DTYPES;
}

static inline bool
mt_dtype_is_float(mt_dtype dt)
{
    return dt == MT_FLOAT32 || dt == MT_FLOAT64 || dt == MT_FLOAT16 || dt == MT_BFLOAT16 ||
           mt_dtype_is_float8(dt);
}

/* The dtypes no kernel computes in: float16, bfloat16 and float8 (computed in float32), uint8,
 * int8, int16, uint16 (computed in int32 and wrapped on store, as C and PyTorch do), uint32 and
 * uint64 (computed in int64: every uint32 fits, and a uint64 is its two's complement bits, which
 * add, multiply, compare for equality and combine bitwise alike). */
static inline bool
mt_dtype_is_small(mt_dtype dt)
{
    return (dt >= MT_UINT8 && dt <= MT_BFLOAT16) || mt_dtype_is_shell(dt);
}

static inline bool
mt_dtype_is_complex(mt_dtype dt)
{
    return dt == MT_COMPLEX64 || dt == MT_COMPLEX128;
}

/* The real dtype of a complex one's parts (float32 for complex64), and the complex dtype whose
 * parts a real float dtype is (complex64 for float32 and the 16-bit floats, as PyTorch's
 * toComplexType); any other dtype itself. */
static inline mt_dtype
mt_dtype_to_real(mt_dtype dt)
{
    return dt == MT_COMPLEX64 ? MT_FLOAT32 : dt == MT_COMPLEX128 ? MT_FLOAT64 : dt;
}

static inline mt_dtype
mt_dtype_to_complex(mt_dtype dt)
{
    return dt == MT_FLOAT64 || dt == MT_COMPLEX128       ? MT_COMPLEX128
           : mt_dtype_is_float(dt) || dt == MT_COMPLEX64 ? MT_COMPLEX64
                                                         : dt;
}

/* The dtype a small dtype computes in: float32, int32 or int64; any other dtype itself. */
static inline mt_dtype
mt_dtype_compute(mt_dtype dt)
{
    return !mt_dtype_is_small(dt)               ? dt
           : mt_dtype_is_float(dt)              ? MT_FLOAT32
           : dt == MT_UINT32 || dt == MT_UINT64 ? MT_INT64
                                                : MT_INT32;
}

static inline bool
mt_dtype_is_integral(mt_dtype dt, bool include_bool)
{
    return dt == MT_INT32 || dt == MT_INT64 || dt == MT_UINT8 || dt == MT_INT8 || dt == MT_INT16 ||
           dt == MT_UINT16 || dt == MT_UINT32 || dt == MT_UINT64 || (include_bool && dt == MT_BOOL);
}

/* Whether an integral dtype has no negative values (bool, uint8, uint16, uint32, uint64). */
static inline bool
mt_dtype_is_unsigned(mt_dtype dt)
{
    return dt == MT_BOOL || dt == MT_UINT8 || dt == MT_UINT16 || dt == MT_UINT32 || dt == MT_UINT64;
}

/* promote_types(a, b): the smallest dtype both convert to without loss of category. For a pair
 * PyTorch refuses (a shell dtype with another but a float, mt_promote_check), the first. */
mt_dtype mt_promote_types(mt_dtype a, mt_dtype b);
/* MT_OK where a and b promote; else PyTorch's error for the shell dtypes, recorded. */
int mt_promote_check(mt_dtype a, mt_dtype b);
/* Whether a value of dtype from may be written into a tensor of dtype to (PyTorch's canCast):
 * no float into an integer, nothing non-bool into a bool. */
bool mt_can_cast(mt_dtype from, mt_dtype to);

/* Operands as type promotion sees them: a tensor with dims outranks a 0-dim tensor, which
 * outranks a wrapped Python number; a weaker operand changes the result only when its category
 * (bool < integer < float < complex) is higher, and then a wrapped float gives the default float dtype. */
typedef struct mt_promotion {
    int dim, zero, wrapped; /* an mt_dtype, or -1 when no operand of that rank was seen */
} mt_promotion;

void mt_promotion_init(mt_promotion *p);
void mt_promotion_add(mt_promotion *p, mt_dtype dt, int ndim, bool wrapped);
mt_dtype mt_promotion_result(const mt_promotion *p);

#endif
