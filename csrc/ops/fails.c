/* The errors a backend kernel raises itself (ops/fails.h), each message once. */
#include <inttypes.h>

#include "ops/fails.h"

mt_status
mt_fail_not_implemented(const char *kernel, const char *suffix, mt_dtype dt)
{
    return mt_fail(MT_ENOTIMPL, "\"%s%s\" not implemented for '%s'", kernel, suffix,
                   mt_dtype_scalar_name(dt));
}

mt_status
mt_fail_index_bounds(int64_t index, int dim, int64_t size, mt_status code)
{
    return mt_fail(code, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64,
                   index, dim, size);
}

mt_status
mt_fail_embedding_index(void)
{
    return mt_fail(MT_EINDEX, "index out of range in self");
}

mt_status
mt_fail_nll_target(int64_t target)
{
    return mt_fail(MT_EINDEX, "Target %lld is out of bounds.", (long long)target);
}

mt_status
mt_fail_bce_range(bool input)
{
    return mt_fail(MT_ERUNTIME, "all elements of %s should be between 0 and 1",
                   input ? "input" : "target");
}

mt_status
mt_fail_one_hot_class(bool negative)
{
    return negative ? mt_fail(MT_ERUNTIME, "Class values must be non-negative.")
                    : mt_fail(MT_ERUNTIME, "Class values must be smaller than num_classes.");
}

mt_status
mt_fail_pool_index(int nd, int64_t plane)
{
    return mt_fail(MT_EINDEX,
                   "max_pool%dd_with_indices_backward: an index is outside its plane of %lld "
                   "elements",
                   nd, (long long)plane);
}

mt_status
mt_fail_kernel(mt_kernel_fail kind, const mt_fail_args *x)
{
    switch (kind) {
    case MT_FAIL_NOT_IMPLEMENTED:
        return mt_fail_not_implemented(x->kernel, x->suffix, x->dtype);
    case MT_FAIL_INDEX_BOUNDS:
        return mt_fail_index_bounds(x->value, x->dim, x->size, x->code);
    case MT_FAIL_EMBEDDING_INDEX:
        return mt_fail_embedding_index();
    case MT_FAIL_NLL_TARGET:
        return mt_fail_nll_target(x->value);
    case MT_FAIL_BCE_RANGE:
        return mt_fail_bce_range(x->flag);
    case MT_FAIL_ONE_HOT_CLASS:
        return mt_fail_one_hot_class(x->flag);
    case MT_FAIL_POOL_INDEX:
        return mt_fail_pool_index(x->dim, x->value);
    }
    return mt_fail(MT_ERUNTIME, "unknown kernel failure %d", (int)kind);
}
