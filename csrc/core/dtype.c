/* Tables of element types. Pure data and promotion rules; no allocation. */
#include <stdatomic.h>

#include "core/dtype.h"
#include "core/status.h"

static const size_t sizes[MT_NUM_DTYPES] = {1, 4,  8, 4, 8, 1, 1, 2, 2, 2,
                                            8, 16, 2, 4, 8, 1, 1, 1, 1};
static const char *const scalar_names[MT_NUM_DTYPES] = {
    "Bool",           "Int",    "Long",   "Float",         "Double",       "Byte",
    "Char",           "Short",  "Half",   "BFloat16",      "ComplexFloat", "ComplexDouble",
    "UInt16",         "UInt32", "UInt64", "Float8_e4m3fn", "Float8_e5m2",  "Float8_e4m3fnuz",
    "Float8_e5m2fnuz"};
static const char *const c_names[MT_NUM_DTYPES] = {"bool",
                                                   "int",
                                                   "long int",
                                                   "float",
                                                   "double",
                                                   "unsigned char",
                                                   "signed char",
                                                   "short int",
                                                   "c10::Half",
                                                   "c10::BFloat16",
                                                   "c10::complex<float>",
                                                   "c10::complex<double>",
                                                   "unsigned short",
                                                   "unsigned int",
                                                   "unsigned long",
                                                   "c10::Float8_e4m3fn",
                                                   "c10::Float8_e5m2",
                                                   "c10::Float8_e4m3fnuz",
                                                   "c10::Float8_e5m2fnuz"};
static const char *const names[MT_NUM_DTYPES] = {"bool",           "int32",       "int64",
                                                 "float32",        "float64",     "uint8",
                                                 "int8",           "int16",       "float16",
                                                 "bfloat16",       "complex64",   "complex128",
                                                 "uint16",         "uint32",      "uint64",
                                                 "float8_e4m3fn",  "float8_e5m2", "float8_e4m3fnuz",
                                                 "float8_e5m2fnuz"};
/* The rank of a dtype inside its category (bool 0; integers; floats; complex by the float rank
 * of its parts): the wider wins, and two of one rank but different dtypes (uint8 and int8,
 * float16 and bfloat16) meet one rank up. The shell dtypes promote by mt_promote_check's rule,
 * never by rank. */
static const int ranks[MT_NUM_DTYPES] = {0, 3, 4, 2, 3, 1, 1, 2, 1, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0};
/* The integer and float dtype of each rank. */
static const mt_dtype int_of_rank[5] = {MT_BOOL, MT_UINT8, MT_INT16, MT_INT32, MT_INT64};
static const mt_dtype float_of_rank[4] = {MT_BOOL, MT_FLOAT16, MT_FLOAT32, MT_FLOAT64};

size_t
mt_dtype_size(mt_dtype dt)
{
    return sizes[dt];
}

const char *
mt_dtype_scalar_name(mt_dtype dt)
{
    return scalar_names[dt];
}

const char *
mt_dtype_c_name(mt_dtype dt)
{
    return c_names[dt];
}

const char *
mt_dtype_name(mt_dtype dt)
{
    return names[dt];
}

mt_dtype
mt_promote_types(mt_dtype a, mt_dtype b)
{
    /* PyTorch's table: bool joins anything; an integer and a float give the float; within a
     * category the higher rank wins, and uint8 + int8 -> int16, float16 + bfloat16 -> float32. */
    if (a == b) {
        return a;
    }
    if (mt_dtype_is_shell(a) || mt_dtype_is_shell(b)) {
        /* a uint16/32/64 with a float: the float; any other pair is refused (mt_promote_check) */
        return mt_dtype_is_float(b) && !mt_dtype_is_float8(b) && !mt_dtype_is_float8(a) ? b : a;
    }
    if (b == MT_BOOL) {
        return a;
    }
    if (a == MT_BOOL) {
        return b;
    }
    /* complex with anything: complex, with parts as wide as the wider float (complex64 and
     * float64 give complex128); an integer counts as no width */
    if (mt_dtype_is_complex(a) || mt_dtype_is_complex(b)) {
        int wa = mt_dtype_is_float(a) || mt_dtype_is_complex(a) ? ranks[a] : 0;
        int wb = mt_dtype_is_float(b) || mt_dtype_is_complex(b) ? ranks[b] : 0;
        return (wa > wb ? wa : wb) >= 3 ? MT_COMPLEX128 : MT_COMPLEX64;
    }
    bool fa = mt_dtype_is_float(a), fb = mt_dtype_is_float(b);
    if (fa != fb) {
        return fa ? a : b;
    }
    int ra = ranks[a], rb = ranks[b];
    if (ra != rb) {
        return ra > rb ? a : b;
    }
    return fa ? float_of_rank[ra + 1] : int_of_rank[ra + 1];
}

int
mt_promote_check(mt_dtype a, mt_dtype b)
{
    if (a == b || !(mt_dtype_is_shell(a) || mt_dtype_is_shell(b))) {
        return MT_OK;
    }
    if (mt_dtype_is_float8(a) || mt_dtype_is_float8(b)) {
        return mt_fail(MT_ERUNTIME,
                       "Promotion for Float8 Types is not supported, attempted to promote %s and "
                       "%s",
                       scalar_names[a], scalar_names[b]);
    }
    /* uint16/32/64 meet a float (not float8, above) as the float; nothing else */
    bool to_float = (mt_dtype_is_float(a) && !mt_dtype_is_shell(a)) ||
                    (mt_dtype_is_float(b) && !mt_dtype_is_shell(b));
    if (to_float) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME,
                   "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                   "promote %s and %s",
                   scalar_names[a], scalar_names[b]);
}

static _Atomic int default_float = MT_FLOAT32; /* an mt_dtype; read by every float default */

mt_dtype
mt_default_float(void)
{
    return (mt_dtype)atomic_load_explicit(&default_float, memory_order_relaxed);
}

void
mt_set_default_float(mt_dtype dt)
{
    atomic_store(&default_float, (int)dt);
}

bool
mt_can_cast(mt_dtype from, mt_dtype to)
{
    if (mt_dtype_is_float(from) && mt_dtype_is_integral(to, true)) {
        return false;
    }
    if (from != MT_BOOL && to == MT_BOOL) {
        return false;
    }
    if (mt_dtype_is_complex(from) && !mt_dtype_is_complex(to)) {
        return false;
    }
    return true;
}

void
mt_promotion_init(mt_promotion *p)
{
    p->dim = p->zero = p->wrapped = -1;
}

static int
promote_skip_none(int a, int b)
{
    if (a < 0) {
        return b;
    }
    if (b < 0) {
        return a;
    }
    return (int)mt_promote_types((mt_dtype)a, (mt_dtype)b);
}

void
mt_promotion_add(mt_promotion *p, mt_dtype dt, int ndim, bool wrapped)
{
    if (wrapped) {
        /* A Python float is "a float" and counts as the default float dtype; a Python complex
         * the complex dtype of the default float's parts. */
        mt_dtype as = mt_dtype_is_float(dt)     ? MT_DEFAULT_FLOAT
                      : mt_dtype_is_complex(dt) ? mt_dtype_to_complex(MT_DEFAULT_FLOAT)
                                                : dt;
        p->wrapped = promote_skip_none(p->wrapped, (int)as);
    } else if (ndim == 0) {
        p->zero = promote_skip_none(p->zero, (int)dt);
    } else {
        p->dim = promote_skip_none(p->dim, (int)dt);
    }
}

static int
category(int dt)
{
    return dt < 0                              ? -1
           : dt == MT_BOOL                     ? 0
           : mt_dtype_is_complex((mt_dtype)dt) ? 3
           : mt_dtype_is_float((mt_dtype)dt)   ? 2
                                               : 1;
}

/* PyTorch's combine_categories: the lower-ranked dtype counts only from a higher category. */
static int
combine(int higher, int lower)
{
    if (higher < 0) {
        return lower;
    }
    return category(lower) > category(higher) ? promote_skip_none(higher, lower) : higher;
}

mt_dtype
mt_promotion_result(const mt_promotion *p)
{
    int r = combine(p->dim, combine(p->zero, p->wrapped));
    return r < 0 ? MT_DEFAULT_FLOAT : (mt_dtype)r;
}
