/* Element types, their sizes and names, and PyTorch's type promotion.
 *
 * The order of the enum is the promotion order within the integer and float categories. */
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
mt_dtype_is_float(mt_dtype dt)
{
    return dt == MT_FLOAT32 || dt == MT_FLOAT64;
}

static inline bool
mt_dtype_is_integral(mt_dtype dt, bool include_bool)
{
    return dt == MT_INT32 || dt == MT_INT64 || (include_bool && dt == MT_BOOL);
}

/* promote_types(a, b): the smallest dtype both convert to without loss of category. */
mt_dtype mt_promote_types(mt_dtype a, mt_dtype b);
/* Whether a value of dtype from may be written into a tensor of dtype to (PyTorch's canCast):
 * no float into an integer, nothing non-bool into a bool. */
bool mt_can_cast(mt_dtype from, mt_dtype to);

/* Operands as type promotion sees them: a tensor with dims outranks a 0-dim tensor, which
 * outranks a wrapped Python number; a weaker operand changes the result only when its category
 * (bool < integer < float) is higher, and then a wrapped float gives the default float dtype. */
typedef struct mt_promotion {
    int dim, zero, wrapped; /* an mt_dtype, or -1 when no operand of that rank was seen */
} mt_promotion;

void mt_promotion_init(mt_promotion *p);
void mt_promotion_add(mt_promotion *p, mt_dtype dt, int ndim, bool wrapped);
mt_dtype mt_promotion_result(const mt_promotion *p);

#endif
