/* Which ops alert under use_deterministic_algorithms(True), as PyTorch's documentation lists
 * them, for the ops minitorch dispatches. Each row names the op, the kernel PyTorch names in its
 * message, and when it applies: most only on CUDA tensors, the "attempting to differentiate"
 * ones when the input requires grad (minitorch alerts when the forward op is recorded, since
 * their backward is a formula, not an op of its own). This file decides; it computes nothing. */
#include "dispatch/deterministic.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

bool mt_deterministic_on;
static bool warn_only;
static bool fill_uninitialized;
static _Thread_local char pending[512];
static _Thread_local bool has_pending;

void
mt_deterministic_set(bool on, bool warn, bool fill)
{
    mt_deterministic_on = on;
    warn_only = warn;
    fill_uninitialized = fill;
}

static bool
on_cuda(const mt_args *a)
{
    return a->t[0] && mt_tensor_device(a->t[0]).type == MT_CUDA;
}

/* "when attempting to differentiate a CUDA tensor" */
static bool
differentiating_cuda(const mt_args *a)
{
    return on_cuda(a) && mt_grad_enabled() && mt_tensor_requires_grad(a->t[0]);
}

static bool
bincount_weighted_cuda(const mt_args *a)
{
    return on_cuda(a) && a->t[1] != NULL;
}

static bool
cumsum_floating_cuda(const mt_args *a)
{
    mt_dtype dt = a->dtype >= 0 ? (mt_dtype)a->dtype : a->t[0]->dtype;
    return on_cuda(a) && (mt_dtype_is_float(dt) || mt_dtype_is_complex(dt));
}

static bool
scatter_reduce_prod_cuda(const mt_args *a)
{
    return on_cuda(a) && a->str[0] && strcmp(a->str[0], "prod") == 0;
}

/* NLLLoss on a CUDA tensor: the spatial (N, C, H, W) form, reduced */
static bool
nll_loss2d_cuda(const mt_args *a)
{
    return on_cuda(a) && a->t[0]->ndim == 4 && a->i[0] != 0;
}

typedef struct alert_row {
    mt_op op;
    const char *caller; /* the kernel PyTorch's message names */
    bool (*applies)(const mt_args *a);
} alert_row;

static const alert_row alerts[] = {
    {MT_OP_avg_pool3d_backward, "avg_pool3d_backward_cuda", on_cuda},
    {MT_OP__adaptive_avg_pool2d_backward, "adaptive_avg_pool2d_backward_cuda", on_cuda},
    {MT_OP__adaptive_avg_pool3d_backward, "adaptive_avg_pool3d_backward_cuda", on_cuda},
    {MT_OP_grid_sampler_2d_backward, "grid_sampler_2d_backward_cuda", on_cuda},
    {MT_OP_grid_sampler_3d_backward, "grid_sampler_3d_backward_cuda", on_cuda},
    {MT_OP_upsample_linear1d, "upsample_linear1d_backward_out_cuda", differentiating_cuda},
    {MT_OP_upsample_bilinear2d, "upsample_bilinear2d_backward_out_cuda", differentiating_cuda},
    {MT_OP_upsample_bicubic2d, "upsample_bicubic2d_backward_out_cuda", differentiating_cuda},
    {MT_OP_upsample_trilinear3d, "upsample_trilinear3d_backward_out_cuda", differentiating_cuda},
    {MT_OP_reflection_pad1d, "reflection_pad1d_backward_out_cuda", differentiating_cuda},
    {MT_OP_reflection_pad2d, "reflection_pad2d_backward_cuda", differentiating_cuda},
    {MT_OP_reflection_pad3d, "reflection_pad3d_backward_out_cuda", differentiating_cuda},
    {MT_OP_nll_loss, "nll_loss2d_forward_out_cuda_template", nll_loss2d_cuda},
    {MT_OP_histc, "_histc_cuda", on_cuda},
    {MT_OP_bincount, "_bincount_cuda", bincount_weighted_cuda},
    {MT_OP_median_dim, "median CUDA with indices output", on_cuda},
    {MT_OP_cumsum, "cumsum_cuda_kernel", cumsum_floating_cuda},
    {MT_OP_scatter_reduce, "scatter_reduce_cuda", scatter_reduce_prod_cuda},
    {MT_OP_scatter_reduce_, "scatter_reduce_cuda", scatter_reduce_prod_cuda},
};

static mt_status
alert(const char *caller)
{
    if (!warn_only) {
        return mt_fail(
            MT_ERUNTIME,
            "%s does not have a deterministic implementation, but you set "
            "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for "
            "this operation, or you can use the 'warn_only=True' option, if that's acceptable "
            "for your application. You can also file an issue at "
            "https://github.com/pytorch/pytorch/issues to help us prioritize adding "
            "deterministic support for this operation.",
            caller);
    }
    snprintf(pending, sizeof pending,
             "%s does not have a deterministic implementation, but you set "
             "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
             "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic "
             "support for this operation.",
             caller);
    has_pending = true;
    return MT_OK;
}

mt_status
mt_deterministic_check(mt_op op, const mt_args *a)
{
    for (size_t k = 0; k < sizeof alerts / sizeof alerts[0]; k++) {
        if (alerts[k].op == op && alerts[k].applies(a)) {
            return alert(alerts[k].caller);
        }
    }
    return MT_OK;
}

/* The value empty() fills with: NaN for floating and complex dtypes, the largest value else. */
static mt_scalar
fill_value(mt_dtype dt)
{
    switch (dt) {
    case MT_BOOL:
        return mt_scalar_bool(true);
    case MT_UINT8:
        return mt_scalar_int(UINT8_MAX);
    case MT_INT8:
        return mt_scalar_int(INT8_MAX);
    case MT_INT16:
        return mt_scalar_int(INT16_MAX);
    case MT_INT32:
        return mt_scalar_int(INT32_MAX);
    case MT_INT64:
        return mt_scalar_int(INT64_MAX);
    case MT_UINT16:
        return mt_scalar_int(UINT16_MAX);
    case MT_UINT32:
        return mt_scalar_int(UINT32_MAX);
    case MT_UINT64:
        return mt_scalar_uint(UINT64_MAX);
    default:
        return mt_scalar_float(NAN);
    }
}

mt_status
mt_deterministic_fill(mt_tensor *t)
{
    if (!mt_deterministic_on || !fill_uninitialized || t == NULL || mt_tensor_numel(t) == 0) {
        return MT_OK;
    }
    mt_dtype dt = t->dtype;
    mt_tensor *value = NULL, *same = NULL;
    mt_status st = mt_tensor_scalar(fill_value(dt),
                                    mt_dtype_is_integral(dt, true) ? dt : MT_FLOAT64, &value);
    /* not recorded: the result may already be a leaf that requires grad (empty(requires_grad=True)) */
    bool grad_mode = mt_grad_enabled();
    mt_set_grad_enabled(false);
    if (st == MT_OK) {
        st = mt_op_fill_(t, value, &same);
    }
    mt_set_grad_enabled(grad_mode);
    mt_tensor_clear(&same);
    mt_tensor_clear(&value);
    return st;
}

mt_status
mt_deterministic_after(mt_op op, mt_args *a)
{
    return op == MT_OP_empty ? mt_deterministic_fill(a->out[0]) : MT_OK;
}

const char *
mt_deterministic_take_warning(void)
{
    if (!has_pending) {
        return NULL;
    }
    has_pending = false;
    return pending;
}
