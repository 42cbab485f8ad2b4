/* Complex views and the discrete Fourier transforms' front end, for every device.
 *
 * view_as_real and view_as_complex rename a tensor's bytes (a complex element is its real part
 * then its imaginary part), views of self's base as every view op's result; conj_physical negates the imaginary parts through the real view.
 * mt_front_fft checks the _fft_* primitives' arguments (minitorch/fft.py has already resized the
 * signal and turned norm into a normalization) and works out their result's geometry and
 * factor; the kernels (cpu/fft.c) only compute. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dispatch/complex.h"
#include "dispatch/kernels.h"
#include "ops/reduce_dims.h"
#include "ops/front.h"
#include "ops/ops.h"

// self (*) complex -> out (*, 2) real: the same memory, the real part at [..., 0]
mt_status
mt_composite_view_as_real(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (!mt_dtype_is_complex(self->dtype)) {
        return mt_fail(MT_ERUNTIME, "view_as_real is only supported for complex tensors");
    }
    int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
    if (self->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "view_as_real: too many dimensions (%d)", self->ndim);
    }
    for (int d = 0; d < self->ndim; d++) {
        sizes[d] = self->sizes[d];
        strides[d] = self->strides[d] * 2;
    }
    sizes[self->ndim] = 2;
    strides[self->ndim] = 1;
    /* a view of self's own geometry (sharing its version counter), then renamed */
    mt_status st = mt_tensor_view(self, self->ndim, self->sizes, self->strides, self->offset,
                                  &a->out[0]);
    if (st == MT_OK) {
        mt_tensor *out = a->out[0];
        out->dtype = mt_dtype_to_real(self->dtype);
        out->ndim = self->ndim + 1;
        memcpy(out->sizes, sizes, sizeof(int64_t) * (size_t)out->ndim);
        memcpy(out->strides, strides, sizeof(int64_t) * (size_t)out->ndim);
        out->offset = self->offset * 2;
        mt_autograd_as_view(self, out); /* a view of self's base, as PyTorch's */
    }
    return st;
}

// self (*, 2) float32/float64, last dim of stride 1 -> out (*) complex: the same memory
mt_status
mt_composite_view_as_complex(mt_args *a)
{
    mt_tensor *self = a->t[0];
    if (self->dtype != MT_FLOAT32 && self->dtype != MT_FLOAT64) {
        return mt_fail(MT_ERUNTIME,
                       "view_as_complex is only supported for float and double tensors, but got "
                       "a tensor of scalar type: %s",
                       mt_dtype_scalar_name(self->dtype));
    }
    const int last = self->ndim - 1;
    if (self->ndim == 0) {
        return mt_fail(MT_ERUNTIME, "Input tensor must have one or more dimensions");
    }
    if (self->sizes[last] != 2) {
        return mt_fail(MT_ERUNTIME, "Tensor must have a last dimension of size 2");
    }
    if (self->strides[last] != 1) {
        return mt_fail(MT_ERUNTIME, "Tensor must have a last dimension with stride 1");
    }
    int64_t strides[MT_MAX_DIMS];
    for (int d = 0; d < last; d++) {
        if (self->strides[d] % 2 != 0) {
            return mt_fail(MT_ERUNTIME,
                           "Tensor must have a stride divisible by 2 for all but last dimension");
        }
        strides[d] = self->strides[d] / 2;
    }
    if (self->offset % 2 != 0) {
        return mt_fail(MT_ERUNTIME, "Tensor must have a storage_offset divisible by 2");
    }
    mt_status st = mt_tensor_view(self, self->ndim, self->sizes, self->strides, self->offset,
                                  &a->out[0]);
    if (st == MT_OK) {
        mt_tensor *out = a->out[0];
        out->dtype = mt_dtype_to_complex(self->dtype);
        out->ndim = last;
        memcpy(out->strides, strides, sizeof(int64_t) * (size_t)last);
        out->offset = self->offset / 2;
        mt_autograd_as_view(self, out);
    }
    return st;
}

// self (*) -> out (*): the complex conjugate, view_as_complex(stack([re, -im], -1)) of self's
// parts, on self's device (nothing made on the host); a copy of a real self
mt_status
mt_composite_conj_physical(mt_args *a)
{
    mt_tensor *self = a->t[0], *real = NULL, *re = NULL, *im = NULL, *neg = NULL, *both = NULL;
    if (!mt_dtype_is_complex(self->dtype)) {
        return mt_op_clone(self, &a->out[0]);
    }
    mt_status st = mt_op_view_as_real(self, &real);
    if (st == MT_OK && (st = mt_op_select(real, self->ndim, 0, &re)) == MT_OK &&
        (st = mt_op_select(real, self->ndim, 1, &im)) == MT_OK &&
        (st = mt_op_neg(im, &neg)) == MT_OK) {
        mt_tensor *parts[2] = {re, neg};
        if ((st = mt_op_stack(2, parts, -1, &both)) == MT_OK) {
            st = mt_op_view_as_complex(both, &a->out[0]);
        }
    }
    mt_tensor_clear(&both);
    mt_tensor_clear(&neg);
    mt_tensor_clear(&im);
    mt_tensor_clear(&re);
    mt_tensor_clear(&real);
    return st;
}

/* The dims an FFT transforms: wrapped, each once, at least one. */
static mt_status
fft_dims(const mt_tensor *self, const mt_intlist *dims, mt_fft_plan *p)
{
    if (dims->n == 0) {
        return mt_fail(MT_ERUNTIME, "_fft: dim must not be empty");
    }
    if (self->ndim == 0) {
        return mt_fail(MT_EINDEX, "Dimension specified as %" PRId64 " but tensor has no dimensions",
                       dims->v[0]);
    }
    p->ndims = dims->n;
    return mt_wrap_dims(dims, self->ndim, "FFT dims must be unique", p->dims, NULL);
}

// _fft_c2c: self (*) complex -> (*) of its dtype; _fft_r2c: self (*) float32/float64 -> (*)
// complex, the last dim of `dim` n -> n / 2 + 1 when onesided; _fft_c2r: self (*) complex ->
// (*) real, the last dim of `dim` -> last_dim_size
mt_status
mt_front_fft(const mt_args *a, mt_plan *plan)
{
    const mt_tensor *self = a->t[0];
    mt_fft_plan *p = &plan->fft;
    const char *name = mt_op_names[plan->op];
    const bool r2c = plan->op == MT_OP__fft_r2c, c2r = plan->op == MT_OP__fft_c2r;
    if (r2c && self->dtype != MT_FLOAT32 && self->dtype != MT_FLOAT64) {
        return mt_fail(MT_ERUNTIME, "%s: expected a float32 or float64 input, but got %s", name,
                       mt_dtype_scalar_name(self->dtype));
    }
    if (!r2c && !mt_dtype_is_complex(self->dtype)) {
        return mt_fail(MT_ERUNTIME, "%s: expected a complex input, but got %s", name,
                       mt_dtype_scalar_name(self->dtype));
    }
    const int64_t norm = a->i[0];
    if (norm < 0 || norm > 2) {
        return mt_fail(MT_EVALUE, "%s: invalid normalization %" PRId64, name, norm);
    }
    mt_status st = fft_dims(self, &a->l[0], p);
    if (st) {
        return st;
    }
    const int h = p->dims[p->ndims - 1];
    p->ndim = self->ndim;
    memcpy(p->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    p->dt = r2c   ? mt_dtype_to_complex(self->dtype)
            : c2r ? mt_dtype_to_real(self->dtype)
                  : self->dtype;
    if (c2r) {
        if (a->i[1] < 1) {
            return mt_fail(MT_ERUNTIME, "Invalid number of data points (%" PRId64 ") specified",
                           a->i[1]);
        }
        p->sizes[h] = a->i[1];
    }
    double n = 1;
    for (int k = 0; k < p->ndims; k++) {
        n *= (double)p->sizes[p->dims[k]];
    }
    if (r2c && a->b[0]) {
        p->sizes[h] = self->sizes[h] / 2 + 1;
    }
    p->scale = norm == 0 || n == 0 ? 1.0 : norm == 1 ? 1.0 / sqrt(n) : 1.0 / n;
    return mt_front_output(plan, p->dt, p->ndim, p->sizes);
}
