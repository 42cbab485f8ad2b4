/* Composite pointwise ops, written in terms of other ops through the dispatcher, so
 * they run on every device and record autograd through their pieces: the aliases fix (trunc)
 * and clip (clamp), isreal, float_power (pow in float64), isclose, count_nonzero,
 * broadcast_to and broadcast_tensors (expand), and view(dtype), which reinterprets the bytes. */
#include <inttypes.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/op_chain.h"

mt_status
mt_composite_fix(mt_args *a)
{
    return mt_op_trunc(a->t[0], &a->out[0]);
}

mt_status
mt_composite_fix_(mt_args *a)
{
    return mt_op_trunc_(a->t[0], &a->out[0]);
}

mt_status
mt_composite_clip(mt_args *a)
{
    return mt_op_clamp(a->t[0], a->t[1], a->t[2], &a->out[0]);
}

mt_status
mt_composite_clip_(mt_args *a)
{
    return mt_op_clamp_(a->t[0], a->t[1], a->t[2], &a->out[0]);
}

/* Every element of a real tensor is real. */
mt_status
mt_composite_isreal(mt_args *a)
{
    mt_tensor *self = a->t[0];
    return mt_op_ones(self->ndim, self->sizes, MT_BOOL, mt_tensor_device(self), false, &a->out[0]);
}

/* ---- float_power: pow with both operands in float64 ---- */

/* *out = t in float64 (a new reference); a Python number stays one, being weak in promotion. */
static mt_status
as_double(mt_tensor *t, mt_tensor **out)
{
    if (t->is_wrapped_number || t->dtype == MT_FLOAT64) {
        *out = mt_tensor_retain(t);
        return MT_OK;
    }
    return mt_op__to_copy(t, MT_FLOAT64, mt_tensor_device(t), out);
}

// self, exponent (tensors or one Python number) broadcast; out = self ** exponent in float64
mt_status
mt_composite_float_power(mt_args *a)
{
    if (a->t[0]->is_wrapped_number && a->t[1]->is_wrapped_number) {
        return mt_fail(MT_ETYPE, "float_power() received an invalid combination of arguments - got "
                                 "(Number, Number)");
    }
    mt_tensor *base = NULL, *e = NULL;
    mt_status st = as_double(a->t[0], &base);
    if (st == MT_OK && (st = as_double(a->t[1], &e)) == MT_OK) {
        st = mt_op_pow(base, e, &a->out[0]);
    }
    mt_tensor_clear(&base);
    mt_tensor_clear(&e);
    return st;
}

mt_status
mt_composite_float_power_(mt_args *a)
{
    mt_tensor *self = a->t[0], *e = NULL;
    if (self->dtype != MT_FLOAT64) {
        return mt_fail(MT_ERUNTIME,
                       "the base given to float_power_ has dtype %s but the operation's result "
                       "requires dtype Double",
                       mt_dtype_scalar_name(self->dtype));
    }
    mt_status st = as_double(a->t[1], &e);
    if (st == MT_OK) {
        st = mt_op_pow_(self, e, &a->out[0]);
    }
    mt_tensor_clear(&e);
    return st;
}

/* ---- isclose ---- */

/* x as a float if it is bool (PyTorch's isclose computes the error of bools in the default
 * float; integers stay integers) */
static mt_tensor *
unbool(tmp *s, mt_tensor *x)
{
    mt_tensor *r = NULL;
    if (s->st || x->dtype != MT_BOOL) {
        return s->st ? NULL : x;
    }
    return own(s, mt_op__to_copy(x, MT_DEFAULT_FLOAT, mt_tensor_device(x), &r), &r);
}

// self, other (one dtype, broadcast); out (bool) = self == other, or both NaN (equal_nan), or
// |self - other| finite and <= atol + rtol * |other| (PyTorch's isclose, step by step)
mt_status
mt_composite_isclose(mt_args *a)
{
    mt_tensor *self = a->t[0], *other = a->t[1];
    const double rtol = a->f[0], atol = a->f[1];
    if (self->dtype != other->dtype) {
        return mt_fail(MT_ERUNTIME, "%s did not match %s", mt_dtype_scalar_name(self->dtype),
                       mt_dtype_scalar_name(other->dtype));
    }
    if (rtol < 0) {
        return mt_fail(MT_ERUNTIME, "rtol must be greater than or equal to zero, but got %g", rtol);
    }
    if (atol < 0) {
        return mt_fail(MT_ERUNTIME, "atol must be greater than or equal to zero, but got %g", atol);
    }
    tmp s = {0};
    mt_tensor *close = bin(&s, MT_OP_eq, self, other);
    if (a->b[0] && (mt_dtype_is_float(self->dtype) || mt_dtype_is_complex(self->dtype))) {
        mt_tensor *nans = bin(&s, MT_OP_bitwise_and, un(&s, MT_OP_isnan, self),
                              un(&s, MT_OP_isnan, other));
        close = bin(&s, MT_OP_bitwise_or, close, nans);
    }
    if (rtol != 0 || atol != 0) {
        mt_tensor *x = unbool(&s, self), *y = unbool(&s, other);
        mt_tensor *scaled_y = un(&s, MT_OP_abs, bin(&s, MT_OP_mul, y, num(&s, rtol)));
        mt_tensor *allowed = bin(&s, MT_OP_add, scaled_y, num(&s, atol));
        mt_tensor *actual = un(&s, MT_OP_abs, bin(&s, MT_OP_sub, x, y));
        mt_tensor *within = bin(&s, MT_OP_bitwise_and, un(&s, MT_OP_isfinite, actual),
                                bin(&s, MT_OP_le, actual, allowed));
        close = bin(&s, MT_OP_bitwise_or, close, within);
    }
    give(&s, close, &a->out[0]);
    return finish(&s);
}

// self (any shape), dim (None: all); out (int64) = the number of nonzero elements over dim
mt_status
mt_composite_count_nonzero(mt_args *a)
{
    tmp s = {0};
    const mt_intlist *dim = &a->l[0];
    mt_tensor *nonzero = bin(&s, MT_OP_ne, a->t[0], num(&s, 0));
    if (s.st == MT_OK) {
        s.st = mt_op_sum(nonzero, dim->none ? 0 : dim->n, dim->none ? NULL : dim->v, false,
                         MT_INT64, &a->out[0]);
    }
    return finish(&s);
}

/* ---- broadcasting ---- */

mt_status
mt_composite_broadcast_to(mt_args *a)
{
    return mt_op_expand(a->t[0], a->l[0].n, a->l[0].v, &a->out[0]);
}

// tensors (any shapes that broadcast together); outl = each expanded to the common shape
mt_status
mt_composite_broadcast_tensors(mt_args *a)
{
    int ndim = 0;
    int64_t shape[MT_MAX_DIMS];
    mt_status st = MT_OK;
    for (int k = 0; k < a->ntl && st == MT_OK; k++) {
        st = mt_broadcast_shapes(ndim, shape, a->tl[k]->ndim, a->tl[k]->sizes, &ndim, shape);
    }
    if (st || (st = mt_args_alloc_outl(a, a->ntl))) {
        return st;
    }
    for (int k = 0; k < a->ntl && st == MT_OK; k++) {
        st = mt_op_expand(a->tl[k], ndim, shape, &a->outl[k]);
    }
    if (st) {
        mt_args_clear_outl(a);
    }
    return st;
}

/* ---- view(dtype) ---- */

static mt_status
last_dim_contiguous(const mt_tensor *self, const char *from, const char *to)
{
    if (self->strides[self->ndim - 1] == 1) {
        return MT_OK;
    }
    return mt_fail(MT_ERUNTIME,
                   "self.stride(-1) must be 1 to view %s as %s (different element sizes), but got "
                   "%" PRId64,
                   from, to, self->strides[self->ndim - 1]);
}

/* The geometry of self's bytes read as elements of dt (PyTorch's view_dtype): the same when
 * the element sizes agree, else the last dim (which must be contiguous) holds ratio times more
 * or fewer elements. */
static mt_status
dtype_geometry(const mt_tensor *self, mt_dtype dt, int64_t *sizes, int64_t *strides,
               int64_t *offset)
{
    const char *from = mt_dtype_scalar_name(self->dtype), *to = mt_dtype_scalar_name(dt);
    const int64_t have = (int64_t)mt_dtype_size(self->dtype), want = (int64_t)mt_dtype_size(dt);
    const int last = self->ndim - 1;
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    memcpy(strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    *offset = self->offset;
    if (have == want) {
        return MT_OK;
    }
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME,
                       "self.dim() cannot be 0 to view %s as %s (different element sizes)", from,
                       to);
    }
    if (have > want) { /* smaller elements: ratio of them in each old one */
        const int64_t ratio = have / want;
        mt_status st = last_dim_contiguous(self, from, to);
        if (st) {
            return st;
        }
        for (int d = 0; d < last; d++) {
            strides[d] *= ratio;
        }
        sizes[last] *= ratio;
        *offset *= ratio;
        return MT_OK;
    }
    const int64_t ratio = want / have; /* larger elements: each spans ratio old ones */
    if (self->sizes[last] % ratio != 0) {
        return mt_fail(MT_ERUNTIME,
                       "self.size(-1) must be divisible by %" PRId64 " to view %s as %s (different "
                       "element sizes), but got %" PRId64,
                       ratio, from, to, self->sizes[last]);
    }
    if (self->offset % ratio != 0) {
        return mt_fail(MT_ERUNTIME,
                       "self.storage_offset() must be divisible by %" PRId64 " to view %s as %s "
                       "(different element sizes), but got %" PRId64,
                       ratio, from, to, self->offset);
    }
    mt_status st = last_dim_contiguous(self, from, to);
    if (st) {
        return st;
    }
    for (int d = 0; d < last; d++) {
        if (self->strides[d] % ratio != 0) {
            return mt_fail(MT_ERUNTIME,
                           "self.stride(%d) must be divisible by %" PRId64 " to view %s as %s "
                           "(different element sizes), but got %" PRId64,
                           d, ratio, from, to, self->strides[d]);
        }
        strides[d] /= ratio;
    }
    sizes[last] /= ratio;
    *offset /= ratio;
    return MT_OK;
}

// self (..., n) -> out (..., n * size(self.dtype) / size(dtype)): the same bytes as dtype; a
// view sharing self's storage and version counter, recording no gradient (as PyTorch's)
mt_status
mt_composite_view_dtype(mt_args *a)
{
    mt_tensor *self = a->t[0];
    const mt_dtype dt = (mt_dtype)a->dtype;
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS], offset;
    mt_status st = dtype_geometry(self, dt, sizes, strides, &offset);
    if (st == MT_OK) {
        /* a view of self's own geometry (so it shares self's version counter), then the same
         * bytes renamed: the new geometry spans exactly the bytes self's does */
        st = mt_tensor_view(self, self->ndim, self->sizes, self->strides, self->offset, &a->out[0]);
    }
    if (st == MT_OK) {
        mt_tensor *out = a->out[0];
        out->dtype = dt;
        memcpy(out->sizes, sizes, sizeof(int64_t) * (size_t)self->ndim);
        memcpy(out->strides, strides, sizeof(int64_t) * (size_t)self->ndim);
        out->offset = offset;
    }
    return st;
}
