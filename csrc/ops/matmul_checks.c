/* The shape checks of the matrix products (ops/arg_checks.h), for every device. */
#include <inttypes.h>

#include "ops/arg_checks.h"

mt_status
mt_check_matvec(const mt_tensor *input, const mt_tensor *mat, const mt_tensor *vec)
{
    int64_t n_in = input == NULL ? mat->sizes[0] : input->ndim == 0 ? 1 : input->sizes[0];
    if (mat->ndim != 2 || vec->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "vector + matrix @ vector expected, got %d, %d, %d",
                       input ? input->ndim : 1, mat->ndim, vec->ndim);
    }
    if (mat->sizes[1] != vec->sizes[0] || (input && input->ndim > 1) ||
        (n_in != mat->sizes[0] && n_in != 1)) {
        return mt_fail(MT_ERUNTIME,
                       "size mismatch, got input (%" PRId64 "), mat (%" PRId64 "x%" PRId64
                       "), vec (%" PRId64 ")",
                       n_in, mat->sizes[0], mat->sizes[1], vec->sizes[0]);
    }
    if (input == NULL && mat->dtype != vec->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(mat->dtype), mt_dtype_scalar_name(vec->dtype));
    }
    if (input && (input->dtype != mat->dtype || mat->dtype != vec->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                       mt_dtype_scalar_name(input->dtype), mt_dtype_scalar_name(mat->dtype),
                       mt_dtype_scalar_name(vec->dtype));
    }
    return MT_OK;
}

mt_status
mt_check_batches(const mt_tensor *b1, const mt_tensor *b2)
{
    if (b1->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "batch1 must be a 3D tensor");
    }
    if (b2->ndim != 3) {
        return mt_fail(MT_ERUNTIME, "batch2 must be a 3D tensor");
    }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        return mt_fail(MT_ERUNTIME,
                       "Expected size for first two dimensions of batch2 tensor to be: [%" PRId64
                       ", %" PRId64 "] but got: [%" PRId64 ", %" PRId64 "].",
                       b1->sizes[0], b1->sizes[2], b2->sizes[0], b2->sizes[1]);
    }
    return MT_OK;
}

mt_status
mt_check_dot(const mt_tensor *x, const mt_tensor *y)
{
    if (x->ndim != 1 || y->ndim != 1) {
        return mt_fail(MT_ERUNTIME, "1D tensors expected, but got %dD and %dD tensors", x->ndim,
                       y->ndim);
    }
    if (x->sizes[0] != y->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "inconsistent tensor size, expected tensor [%" PRId64 "] and src [%" PRId64
                       "] to have the same number of elements, but got %" PRId64 " and %" PRId64
                       " elements respectively",
                       x->sizes[0], y->sizes[0], x->sizes[0], y->sizes[0]);
    }
    if (x->dtype != y->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "dot : expected both vectors to have same dtype, but found %s and %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(y->dtype));
    }
    return MT_OK;
}
