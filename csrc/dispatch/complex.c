/* Which ops take complex tensors, for every device: the dispatcher's rule for complex64 and
 * complex128 (dispatch.c calls mt_complex_dispatch for a call that has one).
 *
 * An op whose ops.def row says COMPLEX takes them as they are: it moves or allocates elements
 * (views, copies, cat, fills) or computes in complex itself (the FFTs). An op whose row says
 * REALVIEW acts on each part alike (add, sub, neg, scaling by a real number): it runs on the
 * tensors' real views (view_as_real, ..., 2) and its result is viewed back as complex, so its
 * gradient comes through the views' rows. abs has a complex form of its own, hypot of the
 * parts (complex_forms below). Any other op refuses them with PyTorch's message for
 * a dtype a kernel has no loop for. The CUDA backend has no complex kernels: every op refuses
 * them there, naming itself. Nothing here computes an element. */
#include "dispatch/complex.h"

#include "ops/ops.h"

static bool
on_cuda(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && !a->t[k]->is_wrapped_number && mt_tensor_device(a->t[k]).type == MT_CUDA) {
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && mt_tensor_device(a->tl[k]).type == MT_CUDA) {
            return true;
        }
    }
    return a->has_device && a->device.type == MT_CUDA;
}

/* The first complex dtype of the call (for the message). */
static mt_dtype
complex_dtype(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && mt_dtype_is_complex(a->t[k]->dtype)) {
            return a->t[k]->dtype;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && mt_dtype_is_complex(a->tl[k]->dtype)) {
            return a->tl[k]->dtype;
        }
    }
    return a->dtype >= 0 && mt_dtype_is_complex((mt_dtype)a->dtype) ? (mt_dtype)a->dtype
                                                                    : MT_COMPLEX64;
}

static mt_status
not_implemented(mt_op op, const mt_args *a)
{
    return mt_fail(MT_ERUNTIME, "\"%s\" not implemented for '%s'", mt_op_names[op],
                   mt_dtype_scalar_name(complex_dtype(a)));
}

/* A real operand of a REALVIEW op: only a Python number that scales (x * 2, x / 2) acts on
 * both parts alike; a real tensor added to a complex one would change the real part only. */
static bool
scales(mt_op op, int k, const mt_tensor *t)
{
    return k == 1 && t->is_wrapped_number &&
           (op == MT_OP_mul || op == MT_OP_mul_ || op == MT_OP_div || op == MT_OP_div_);
}

// each complex tensor (*) as its real view (*, 2); the result (*, 2) viewed back as (*)
static mt_status
run_on_real_views(mt_op op, mt_args *a)
{
    mt_tensor *given[MT_MAX_TENSOR_ARGS] = {NULL};
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        mt_tensor *t = a->t[k];
        if (t == NULL) {
            continue;
        }
        if (!mt_dtype_is_complex(t->dtype)) {
            st = scales(op, k, t) ? MT_OK : not_implemented(op, a);
            continue;
        }
        mt_tensor *real = NULL;
        if ((st = mt_op_view_as_real(t, &real)) == MT_OK) {
            given[k] = t;
            a->t[k] = real;
        }
    }
    if (st == MT_OK) {
        st = mt_dispatch(op, a);
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (given[k]) {
            mt_tensor_release(a->t[k]);
            a->t[k] = given[k];
        }
    }
    if (st) {
        return st;
    }
    mt_tensor *real = a->out[0];
    a->out[0] = NULL;
    if (mt_op_flags[op] & INPLACE) {
        a->out[0] = mt_tensor_retain(a->t[0]);
    } else {
        st = mt_op_view_as_complex(real, &a->out[0]);
    }
    mt_tensor_release(real);
    return st;
}

// self (*) complex -> out (*) real: |self| = hypot(re, im)
static mt_status
complex_abs(mt_args *a)
{
    mt_tensor *real = NULL, *re = NULL, *im = NULL;
    mt_status st;
    if ((st = mt_op_view_as_real(a->t[0], &real)) == MT_OK &&
        (st = mt_op_select(real, real->ndim - 1, 0, &re)) == MT_OK &&
        (st = mt_op_select(real, real->ndim - 1, 1, &im)) == MT_OK) {
        st = mt_op_hypot(re, im, &a->out[0]);
    }
    mt_tensor_clear(&im);
    mt_tensor_clear(&re);
    mt_tensor_clear(&real);
    return st;
}

/* The ops with a complex form written in other ops. */
static const struct {
    mt_op op;
    mt_status (*form)(mt_args *a);
} complex_forms[] = {{MT_OP_abs, complex_abs}};

mt_status
mt_complex_refuse_cuda(mt_op op)
{
    return mt_fail(MT_ENOTIMPL,
                   "%s: complex tensors are not supported on the CUDA device by minitorch (no CUDA "
                   "kernel takes complex64 or complex128)",
                   mt_op_names[op]);
}

mt_status
mt_complex_dispatch(mt_op op, mt_args *a, bool *handled)
{
    *handled = false;
    if (on_cuda(a)) {
        return mt_complex_refuse_cuda(op);
    }
    if (mt_op_flags[op] & COMPLEX) {
        return MT_OK;
    }
    for (size_t k = 0; k < sizeof(complex_forms) / sizeof(complex_forms[0]); k++) {
        if (complex_forms[k].op == op && a->t[0] && mt_dtype_is_complex(a->t[0]->dtype)) {
            *handled = true;
            return complex_forms[k].form(a);
        }
    }
    if (mt_op_flags[op] & REALVIEW) {
        *handled = true;
        return run_on_real_views(op, a);
    }
    return not_implemented(op, a);
}
