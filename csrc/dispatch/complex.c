/* Which ops take complex tensors, for every device: the dispatcher's rule for complex64 and
 * complex128 (dispatch.c calls mt_complex_dispatch for a call that has one).
 *
 * An op whose ops.def row says COMPLEX takes them as they are: it moves or allocates elements
 * (views, copies, cat, fills), has complex loops (the elementwise rows of
 * ops/elementwise.def's MT_EW_COMPLEX: add, mul, div, exp, ...) or computes in complex itself
 * (the FFTs). A few ops have a complex form written in other ops (complex_forms below): abs
 * (hypot of the parts), sum, mean and cumsum (each part alike, on the real view; a real input
 * cast first when dtype= is complex), the matrix products (four real products of the parts;
 * addmm, addmv and baddbmm add beta * self to one), var and std (the parts' variances summed),
 * the norms (of abs), any and all (of t != 0), the uniform_ and normal_ fills
 * (on the real view), and the pads and unfold and fold's im2col and col2im (the same call on
 * each part), so their gradients come from those ops' rows. The matrix products of one
 * complex dtype run as their device's BLAS kernel (blas_takes); the real products remain where
 * the dtypes differ (a real self of addmm) or the CUDA build has no cuBLAS.
 * Any other op refuses them with PyTorch's message for a dtype a kernel has no loop for (sign
 * with its own, pointing at sgn). On the CUDA device any other call runs as cuda_complex
 * (below) says: the backend's complex kernels, the real views, or the host. Nothing here
 * computes an element. */
#include "dispatch/complex.h"

#include <math.h>

#include "dispatch/backend.h"
#include "ops/elementwise.h"
#include "ops/front.h"
#include "ops/linalg.h"
#include "ops/op_chain.h"
#include "ops/ops.h"

bool
mt_args_on_cuda(const mt_args *a)
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

int
mt_args_first_dtype(const mt_args *a, bool (*is)(mt_dtype))
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && is(a->t[k]->dtype)) {
            return a->t[k]->dtype;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && is(a->tl[k]->dtype)) {
            return a->tl[k]->dtype;
        }
    }
    return a->dtype >= 0 && is((mt_dtype)a->dtype) ? a->dtype : -1;
}

/* The first complex dtype of the call (for the message). */
static mt_dtype
complex_dtype(const mt_args *a)
{
    const int dt = mt_args_first_dtype(a, mt_dtype_is_complex);
    return dt >= 0 ? (mt_dtype)dt : MT_COMPLEX64;
}

static mt_status
not_implemented(mt_op op, const mt_args *a)
{
    if (op == MT_OP_sign || op == MT_OP_sign_) { /* PyTorch's own words, and class, for sign */
        return mt_fail(MT_ENOTIMPL, "Unlike NumPy, torch.sign is not intended to support complex "
                                    "numbers. Please use torch.sgn instead.");
    }
    if (mt_ew_kernel_name(op, a)) { /* the elementwise family: its front end's words */
        return mt_ew_refuse_complex(op, a);
    }
    return mt_fail(MT_ERUNTIME, "\"%s\" not implemented for '%s'", mt_op_names[op],
                   mt_dtype_scalar_name(complex_dtype(a)));
}

/* Part k (0 real, 1 imaginary) of a complex t, a view, owned by the chain s. */
static mt_tensor *
part(tmp *s, mt_tensor *t, int k)
{
    mt_tensor *r = NULL, *p = NULL;
    mt_tensor *real = s->st ? NULL : own(s, mt_op_view_as_real(t, &r), &r);
    return s->st ? NULL : own(s, mt_op_select(real, real->ndim - 1, k, &p), &p);
}

// self (*) complex -> out (*) real: |self| = hypot(re, im), 0 where self is 0; hypot is taken
// of 1 there, so that the gradient at 0 is 0 (PyTorch's sgn(0)), not hypot's 0 / 0
static mt_status
complex_abs(mt_op op, mt_args *a)
{
    (void)op;
    tmp s = {0};
    mt_tensor *zero = bin(&s, MT_OP_eq, a->t[0], num(&s, 0.0));
    mt_tensor *safe = sel(&s, zero, num(&s, 1.0), a->t[0]);
    mt_tensor *h = bin(&s, MT_OP_hypot, part(&s, safe, 0), part(&s, safe, 1));
    give(&s, sel(&s, zero, num(&s, 0.0), h), &a->out[0]);
    return finish(&s);
}

/* *out = dim d of self wrapped into [0, ndim) (a 0-dim tensor has dim 0 and -1), or PyTorch's
 * IndexError */
static mt_status
wrap_dim(const mt_tensor *self, int64_t d, int64_t *out)
{
    const int nd = self->ndim > 0 ? self->ndim : 1;
    if (d < -nd || d >= nd) {
        return mt_fail(MT_EINDEX,
                       "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                       -nd, nd - 1, (long long)d);
    }
    *out = d < 0 ? d + nd : d;
    return MT_OK;
}

/* *out = self as the complex dtype a reduction's dtype= asks for (a real self: the cast, whose
 * gradient is the real part), else self itself, retained. */
static mt_status
complex_input(mt_tensor *self, int dtype, mt_tensor **out)
{
    if (dtype >= 0 && mt_dtype_is_complex((mt_dtype)dtype) && self->dtype != (mt_dtype)dtype) {
        return mt_op__to_copy(self, dtype, mt_tensor_device(self), out);
    }
    *out = mt_tensor_retain(self);
    return MT_OK;
}

// sum and mean of self (*) over dims, self or dtype complex: the same reduction of the complex
// input's real view (*, 2) over the same dims (the parts' dim last, never reduced), viewed back
// as complex
static mt_status
complex_reduce(mt_op op, mt_args *a)
{
    mt_tensor *self = a->t[0], *z = NULL, *real = NULL, *red = NULL;
    const mt_intlist *l = &a->l[0];
    const int64_t *given = mt_intlist_values(l);
    int64_t dims[MT_MAX_DIMS];
    int n = 0;
    mt_status st = MT_OK;
    if (l->none || l->n == 0) {
        for (int d = 0; d < self->ndim; d++) {
            dims[n++] = d;
        }
    } else {
        for (int k = 0; k < l->n && k < MT_MAX_DIMS && st == MT_OK; k++) {
            st = wrap_dim(self, given[k], &dims[n++]);
        }
    }
    if (st || (st = complex_input(self, a->dtype, &z))) {
        return st;
    }
    if (self->ndim == 0) { /* a 0-dim tensor's dim 0 or -1: nothing to reduce */
        st = mt_op_clone(z, &a->out[0]);
        mt_tensor_clear(&z);
        return st;
    }
    int dtype = a->dtype >= 0 ? (int)mt_dtype_to_real((mt_dtype)a->dtype) : -1;
    st = mt_op_view_as_real(z, &real);
    if (st == MT_OK) {
        st = op == MT_OP_sum ? mt_op_sum(real, n, dims, a->b[0], dtype, &red)
                             : mt_op_mean(real, n, dims, a->b[0], dtype, &red);
    }
    if (st == MT_OK) {
        st = mt_op_view_as_complex(red, &a->out[0]);
    }
    mt_tensor_clear(&red);
    mt_tensor_clear(&real);
    mt_tensor_clear(&z);
    return st;
}

// cumsum of self (*) along dim, self or dtype complex: the running sums of each part, the
// cumsum of the real view (*, 2) along the same dim, viewed back as complex
static mt_status
complex_cumsum(mt_op op, mt_args *a)
{
    (void)op;
    mt_tensor *z = NULL, *real = NULL, *run = NULL;
    int64_t dim = 0;
    mt_status st = wrap_dim(a->t[0], a->i[0], &dim);
    if (st || (st = complex_input(a->t[0], a->dtype, &z))) {
        return st;
    }
    if (z->ndim == 0) {
        st = mt_op_clone(z, &a->out[0]);
    } else if ((st = mt_op_view_as_real(z, &real)) == MT_OK &&
               (st = mt_op_cumsum(real, dim, -1, &run)) == MT_OK) {
        st = mt_op_view_as_complex(run, &a->out[0]);
    }
    mt_tensor_clear(&run);
    mt_tensor_clear(&real);
    mt_tensor_clear(&z);
    return st;
}

// mm, bmm, matmul of a (.., n, k) and b (.., k, m) (mv and dot: their vectors), both complex: with a = ar + i ai and
// b = br + i bi, re = ar br - ai bi and im = ar bi + ai br (products of real tensors), and the
// result (.., n, m) is view_as_complex(stack([re, im], -1))
static mt_status
complex_product(mt_op op, mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1];
    if (x->dtype != y->dtype && op == MT_OP_dot) {
        return mt_fail(MT_ERUNTIME,
                       "dot : expected both vectors to have same dtype, but found %s and %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(y->dtype));
    }
    if (x->dtype != y->dtype) {
        return mt_fail(MT_ERUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                       mt_dtype_c_name(x->dtype), mt_dtype_c_name(y->dtype));
    }
    tmp s = {0};
    mt_tensor *ar = part(&s, x, 0), *ai = part(&s, x, 1);
    mt_tensor *br = part(&s, y, 0), *bi = part(&s, y, 1);
    mt_tensor *pair[2] = {bin(&s, MT_OP_sub, bin(&s, op, ar, br), bin(&s, op, ai, bi)),
                          bin(&s, MT_OP_add, bin(&s, op, ar, bi), bin(&s, op, ai, br))};
    mt_tensor *sk = NULL, *c = NULL;
    mt_tensor *stacked = s.st ? NULL : own(&s, mt_op_stack(2, pair, -1, &sk), &sk);
    mt_tensor *z = s.st ? NULL : own(&s, mt_op_view_as_complex(stacked, &c), &c);
    give(&s, z, &a->out[0]);
    return finish(&s);
}

/* a's call of op again with self in place of its first tensor (a complex dtype= read as its
 * parts'), its result owned by s */
static mt_tensor *
same_call(tmp *s, mt_op op, const mt_args *a, mt_tensor *self)
{
    if (failed(s, self, self)) {
        return NULL;
    }
    mt_args b = *a;
    b.t[0] = self;
    b.out[0] = NULL;
    if (b.dtype >= 0) {
        b.dtype = (int)mt_dtype_to_real((mt_dtype)b.dtype);
    }
    mt_status st = mt_dispatch(op, &b);
    return own(s, st, &b.out[0]);
}

/* x * v for a Python number v (x itself when v is 1) */
static mt_tensor *
times(tmp *s, mt_tensor *x, mt_scalar v)
{
    if (!v.is_complex && mt_scalar_to_double(v) == 1.0) {
        return x;
    }
    mt_tensor *r = NULL;
    mt_dtype dt = v.is_complex ? MT_COMPLEX128 : MT_FLOAT64;
    mt_tensor *k = s->st ? NULL : own(s, mt_tensor_scalar(v, dt, &r), &r);
    return bin(s, MT_OP_mul, x, k);
}

// addmm (self (n, m), mat1 (n, k), mat2 (k, m)), addmv and baddbmm alike, an operand complex:
// beta * self + alpha * (mat1 @ mat2), the product by its own complex form (mm, mv, bmm); self
// is left out when beta is 0, as PyTorch's (a NaN there does not spread)
static mt_status
complex_add_product(mt_op op, mt_args *a)
{
    mt_op product = op == MT_OP_addmm ? MT_OP_mm : op == MT_OP_addmv ? MT_OP_mv : MT_OP_bmm;
    tmp s = {0};
    mt_tensor *p = times(&s, bin(&s, product, a->t[1], a->t[2]), a->s[1]);
    bool no_self = !a->s[0].is_complex && mt_scalar_to_double(a->s[0]) == 0.0;
    give(&s, no_self ? p : bin(&s, MT_OP_add, times(&s, a->t[0], a->s[0]), p), &a->out[0]);
    return finish(&s);
}

// var and std of self (*) complex over dim: |z - mean|^2 is the sum of the parts' squared
// distances, so var(self) = var(re) + var(im), real; std is its square root
static mt_status
complex_moment(mt_op op, mt_args *a)
{
    tmp s = {0};
    mt_tensor *v = bin(&s, MT_OP_add, same_call(&s, MT_OP_var, a, part(&s, a->t[0], 0)),
                       same_call(&s, MT_OP_var, a, part(&s, a->t[0], 1)));
    give(&s, op == MT_OP_std ? un(&s, MT_OP_sqrt, v) : v, &a->out[0]);
    return finish(&s);
}

// norm and linalg_vector_norm of self (*) complex: the same norm of |self|, real (a dtype=
// names the complex dtype whose parts' dtype the result takes)
static mt_status
complex_norm(mt_op op, mt_args *a)
{
    mt_status st = mt_linalg_check_norm_dtype(a->t[0]->dtype, a->dtype);
    if (st) {
        return st;
    }
    tmp s = {0};
    give(&s, same_call(&s, op, a, un(&s, MT_OP_abs, a->t[0])), &a->out[0]);
    return finish(&s);
}

// uniform_ and normal_ of a complex self (*): the same draw on its real view (*, 2), both parts
// alike and from one stream, as PyTorch's; normal_'s std is divided by sqrt(2), so that the
// complex values have variance std^2 (randn's: E|z|^2 = 1). rand and randn of a complex dtype
// fill through these.
static mt_status
complex_random_fill(mt_op op, mt_args *a)
{
    mt_tensor *self = a->t[0], *real = NULL, *filled = NULL;
    mt_status st = mt_op_view_as_real(self, &real);
    if (st == MT_OK && op == MT_OP_uniform_) {
        st = mt_op_uniform_(real, a->s[0], a->s[1], a->gen, &filled);
    } else if (st == MT_OK) {
        double std = mt_scalar_to_double(a->s[1]);
        /* a negative std keeps its value, for normal_'s own message */
        mt_scalar part_std = std < 0 ? a->s[1] : mt_scalar_float(std / sqrt(2.0));
        st = mt_op_normal_(real, a->s[0], part_std, a->gen, &filled);
    }
    if (st == MT_OK) {
        a->out[0] = mt_tensor_retain(self);
    }
    mt_tensor_clear(&filled);
    mt_tensor_clear(&real);
    return st;
}

/* t's truth, as PyTorch and NumPy read a complex value: t != 0 (either part nonzero, NaN too) */
static mt_tensor *
truth(tmp *s, mt_tensor *t)
{
    return bin(s, MT_OP_ne, t, num(s, 0.0));
}

// any and all of a complex tensor: the same call on t != 0 (either part nonzero, NaN too), as
// PyTorch reads it (the logical ops have complex loops: ops/elementwise.def)
static mt_status
complex_logical(mt_op op, mt_args *a)
{
    tmp s = {0};
    mt_args b = *a;
    b.out[0] = NULL;
    for (int k = 0; k < 2; k++) {
        if (b.t[k] && mt_dtype_is_complex(b.t[k]->dtype)) {
            b.t[k] = truth(&s, a->t[k]);
        }
    }
    if (s.st == MT_OK) {
        mt_status st = mt_dispatch(op, &b);
        give(&s, own(&s, st, &b.out[0]), &a->out[0]);
    }
    return finish(&s);
}

/* The part k (0 real, 1 imaginary) of a Python number v; None stays None. */
static mt_scalar
scalar_part(mt_scalar v, int k)
{
    if (mt_scalar_is_none(v)) {
        return v;
    }
    if (k == 1) {
        return mt_scalar_float(v.imag);
    }
    v.imag = 0.0;
    v.is_complex = false;
    return v;
}

// the pads (pad, constant_pad_nd, reflection_pad{1,2,3}d, replication_pad{1,2,3}d,
// _pad_circular) and unfold and fold's im2col and col2im of a complex self: each moves or sums
// the parts alike, so the same call runs on each part (a real tensor of self's shape, so that
// the op's own checks and messages apply), a constant pad's value split into its parts, and
// the two results are joined as the complex result
static mt_status
complex_by_parts(mt_op op, mt_args *a)
{
    tmp s = {0};
    mt_tensor *parts[2] = {NULL, NULL}, *r = NULL;
    const bool valued = op == MT_OP_pad || op == MT_OP_constant_pad_nd;
    for (int k = 0; k < 2 && s.st == MT_OK; k++) {
        mt_args b = *a;
        b.out[0] = NULL;
        b.t[0] = part(&s, a->t[0], k);
        if (valued) {
            b.s[0] = scalar_part(a->s[0], k);
        }
        if (s.st == MT_OK) {
            mt_status st = mt_dispatch(op, &b);
            parts[k] = own(&s, st, &b.out[0]);
        }
    }
    mt_tensor *joined = s.st ? NULL : own(&s, mt_op_stack(2, parts, -1, &r), &r);
    mt_tensor *z = s.st ? NULL : own(&s, mt_op_view_as_complex(joined, &r), &r);
    give(&s, z, &a->out[0]);
    return finish(&s);
}

/* The ops with a complex form written in other ops. */
static const struct {
    mt_op op;
    mt_status (*form)(mt_op op, mt_args *a);
} complex_forms[] = {{MT_OP_abs, complex_abs},
                     {MT_OP_sum, complex_reduce},
                     {MT_OP_mean, complex_reduce},
                     {MT_OP_cumsum, complex_cumsum},
                     {MT_OP_mm, complex_product},
                     {MT_OP_bmm, complex_product},
                     {MT_OP_matmul, complex_product},
                     {MT_OP_mv, complex_product},
                     {MT_OP_dot, complex_product},
                     {MT_OP_addmm, complex_add_product},
                     {MT_OP_addmv, complex_add_product},
                     {MT_OP_baddbmm, complex_add_product},
                     {MT_OP_var, complex_moment},
                     {MT_OP_std, complex_moment},
                     {MT_OP_norm, complex_norm},
                     {MT_OP_any, complex_logical},
                     {MT_OP_all, complex_logical},
                     {MT_OP_linalg_vector_norm, complex_norm},
                     {MT_OP_uniform_, complex_random_fill},
                     {MT_OP_normal_, complex_random_fill},
                     {MT_OP_pad, complex_by_parts},
                     {MT_OP_constant_pad_nd, complex_by_parts},
                     {MT_OP_reflection_pad1d, complex_by_parts},
                     {MT_OP_reflection_pad2d, complex_by_parts},
                     {MT_OP_reflection_pad3d, complex_by_parts},
                     {MT_OP_replication_pad1d, complex_by_parts},
                     {MT_OP_replication_pad2d, complex_by_parts},
                     {MT_OP_replication_pad3d, complex_by_parts},
                     {MT_OP__pad_circular, complex_by_parts},
                     {MT_OP_im2col, complex_by_parts},
                     {MT_OP_col2im, complex_by_parts}};

/* copy_(self, src) with a complex side on the CUDA device, on the real views ([..., 2] floats,
 * which the backend's copies move): both complex, part for part; a real src fills the real parts
 * and zeroes the imaginary ones; a complex src into a real self gives its real parts (a bool self
 * whether either part is nonzero). */
static mt_status
cuda_complex_copy(mt_args *a)
{
    mt_tensor *self = a->t[0], *src = a->t[1];
    tmp s = {0};
    if (src == NULL) {
        return mt_fail(MT_ERUNTIME, "copy_: a chain of ops with a missing operand");
    }
    const bool to_complex = mt_dtype_is_complex(self->dtype);
    const bool from_complex = mt_dtype_is_complex(src->dtype);
    mt_tensor *r = NULL;
    if (to_complex && from_complex) {
        mt_tensor *dst = own(&s, mt_op_view_as_real(self, &r), &r);
        mt_tensor *from = s.st ? NULL : own(&s, mt_op_view_as_real(src, &r), &r);
        if (s.st == MT_OK) {
            own(&s, mt_op_copy_(dst, from, &r), &r);
        }
    } else if (to_complex) {
        mt_tensor *re = part(&s, self, 0), *im = part(&s, self, 1);
        if (s.st == MT_OK) {
            own(&s, mt_op_copy_(re, src, &r), &r);
        }
        if (s.st == MT_OK) {
            own(&s, mt_op_zero_(im, &r), &r);
        }
    } else {
        /* a bool is whether either part is nonzero */
        mt_tensor *from = self->dtype == MT_BOOL ? truth(&s, src) : part(&s, src, 0);
        if (s.st == MT_OK) {
            own(&s, mt_op_copy_(self, from, &r), &r);
        }
    }
    if (s.st == MT_OK) {
        a->out[0] = mt_tensor_retain(self);
    }
    return finish(&s);
}

/* *out = t on dev, requiring grad where t is a leaf that does (a factory's requires_grad=True:
 * the copy is a leaf too) */
static mt_status
device_copy(mt_tensor *t, mt_device dev, mt_tensor **out)
{
    mt_status st = mt_op__to_copy(t, t->dtype, dev, out);
    if (st == MT_OK && t->requires_grad && t->grad_fn == NULL && !(*out)->requires_grad) {
        st = mt_tensor_set_requires_grad(*out, true);
    }
    return st;
}

/* The ops besides the elementwise family whose CUDA kernels take complex tensors as they are:
 * fill_ and cat (cuda/kernels.cu's fills and casts have the complex dtypes); the ops that only
 * move elements, which their kernels move by width (a complex64 as 8 bytes, a complex128 as 16:
 * cuda/index.cu's take and put for gather, scatter, the index ops and flip, factory.cu's
 * triangles, select.cu's masked_select; scatter_add and index_put_'s accumulate add the parts);
 * prod and cumprod, whose kernels (reduce.cu, reduce_dim.cu) multiply in complex128
 * (cuda/device_complex.h). */
static const mt_op cuda_complex_kernels[] = {MT_OP_fill_,         MT_OP_cat,      MT_OP_gather,
                                             MT_OP_scatter,       MT_OP_scatter_, MT_OP_scatter_add,
                                             MT_OP_scatter_add_,  MT_OP_index,    MT_OP_index_put_,
                                             MT_OP_index_select,  MT_OP_flip,     MT_OP_tril,
                                             MT_OP_tril_,         MT_OP_triu,     MT_OP_triu_,
                                             MT_OP_masked_select, MT_OP_prod,     MT_OP_cumprod};

/* Whether the CUDA backend's kernel of op takes this call's complex tensors as they are: the
 * elementwise family (cuda/kernels.cu has a complex64 and a complex128 loop for each
 * MT_EW_COMPLEX row of ops/elementwise.def, the rows whose ops have COMPLEX in their flags) and
 * cuda_complex_kernels (scatter's reduce="multiply" too: with no atomic complex product,
 * cuda/index.cu multiplies each destination by one thread, in index order, deterministic). */
static bool
cuda_kernel_takes_complex(mt_op op)
{
    if (!(mt_op_flags[op] & COMPLEX) || mt_kernel_for(op, MT_KEY_CUDA)->fn == NULL) {
        return false;
    }
    if (mt_op_is_elementwise[op]) {
        return true;
    }
    for (size_t k = 0; k < sizeof(cuda_complex_kernels) / sizeof(cuda_complex_kernels[0]); k++) {
        if (cuda_complex_kernels[k] == op) {
            return true;
        }
    }
    return false;
}

/* op on the host: its tensors copied there (a factory made there), the op dispatched as any
 * call (autograd records it between the copies), its results copied back to dev, an in-place
 * op's into self. As dispatch/host_fallback.c's round trip: correct and slow. */
static mt_status
cuda_complex_on_host(mt_op op, mt_args *a)
{
    mt_args c;
    mt_device dev;
    mt_status st = mt_host_args(a, MT_CUDA, &c, &dev);
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        c.into[k] = NULL;
    }
    c.plan = NULL; /* dispatched afresh: its own front end runs */
    if (st == MT_OK) {
        st = mt_dispatch(op, &c);
    }
    if (st == MT_OK && (mt_op_flags[op] & INPLACE)) {
        st = mt_op_copy_(a->t[0], c.t[0], NULL); /* the host copy of self, written back */
        if (st == MT_OK) {
            a->out[0] = mt_tensor_retain(a->t[0]);
        }
    } else if (st == MT_OK && mt_op_nout[op] < 0) {
        st = mt_args_alloc_outl(a, c.noutl);
        for (int k = 0; k < c.noutl && st == MT_OK; k++) {
            st = device_copy(c.outl[k], dev, &a->outl[k]);
        }
        if (st) {
            mt_args_clear_outl(a);
        }
    } else if (st == MT_OK) {
        for (int k = 0; k < mt_op_nout[op] && k < MT_MAX_OUTPUTS && st == MT_OK; k++) {
            st = c.out[k] ? device_copy(c.out[k], dev, &a->out[k]) : MT_OK;
        }
        for (int k = 0; st && k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a->out[k]);
        }
    }
    mt_host_args_release(&c, a->ntl);
    return st;
}

/* Whether autograd records this call: grad mode on and a tensor argument requires grad. */
static bool
needs_grad(const mt_args *a)
{
    if (!mt_grad_enabled()) {
        return false;
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && mt_tensor_requires_grad(a->t[k])) {
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && mt_tensor_requires_grad(a->tl[k])) {
            return true;
        }
    }
    return false;
}

/* A call with complex tensors (or dtype) on the CUDA device: copy_ on the real views (every
 * copy to, from and on the device comes here); empty, which only allocates, and the ops whose
 * CUDA kernels take complex tensors (cuda_kernel_takes_complex: the elementwise family, fill_,
 * cat, the ops that move elements, prod and cumprod) by the backend's kernel; an op that takes
 * complex tensors as they are and has no kernel of the backend's but a composite (the views,
 * reshape, _to_copy, clone, stack, zeros, conj_physical, take, roll, index_add, ...) by its
 * composite, on the device, whose ops come back here; any other op on the host. An op autograd
 * records (a formula of its own, a tensor that requires grad) goes to autograd first, which
 * calls it again below itself with grad mode off. Each op on the host is a TODO for a CUDA
 * kernel: the FFTs (no cuFFT in this build), the linear algebra. */
static mt_status
cuda_complex(mt_op op, mt_args *a, bool *handled)
{
    if (needs_grad(a) && mt_kernel_for(op, MT_KEY_AUTOGRAD)->fn) {
        return MT_OK; /* autograd records op, then calls it below itself (grad off): here again */
    }
    if (op == MT_OP_copy_) {
        *handled = true;
        return cuda_complex_copy(a);
    }
    if (op == MT_OP_empty || cuda_kernel_takes_complex(op)) {
        return MT_OK;
    }
    if ((mt_op_flags[op] & COMPLEX) && mt_kernel_for(op, MT_KEY_CUDA)->fn == NULL &&
        mt_kernel_for(op, MT_KEY_COMPOSITE)->fn != NULL) {
        return MT_OK;
    }
    *handled = true;
    return cuda_complex_on_host(op, a);
}

mt_status
mt_complex_refuse_cuda(mt_op op)
{
    return mt_fail(MT_ENOTIMPL,
                   "%s: complex tensors are not supported on the CUDA device by minitorch (no CUDA "
                   "kernel takes complex64 or complex128)",
                   mt_op_names[op]);
}

/* Whether a complex matrix product runs as its device's BLAS kernel, one complex gemm, gemv or
 * dot (OpenBLAS's cblas_zgemm on the CPU, cublasZgemm, cublasZgemv, cublasZdotu on the CUDA
 * device; csrc/cpu/blas.c, cuda/blas.c), rather than as complex_product's real products: mm,
 * bmm, addmm, baddbmm, mv, addmv, dot (and matmul's composite through them), its tensors of one
 * complex dtype on one device whose backend has the kernel (a CUDA build without cuBLAS has
 * none). One that records a gradient goes to autograd first, whose formulas
 * (autograd/formulas.c) take the conjugate transposes PyTorch's do: each gradient is one
 * complex product too. */
static bool
blas_takes(mt_op op, const mt_args *a, bool on_cuda)
{
    static const mt_op three[] = {MT_OP_addmm, MT_OP_baddbmm, MT_OP_addmv};
    static const mt_op two[] = {MT_OP_mm, MT_OP_bmm, MT_OP_matmul, MT_OP_mv, MT_OP_dot};
    int n = 0;
    for (int k = 0; k < 3; k++) {
        n = op == three[k] ? 3 : n;
    }
    for (int k = 0; k < 5; k++) {
        n = op == two[k] ? 2 : n;
    }
    const mt_key key = on_cuda ? MT_KEY_CUDA : MT_KEY_CPU;
    if (n == 0 || mt_kernel_for(op == MT_OP_matmul ? MT_OP_mm : op, key)->fn == NULL) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        if (a->t[k] == NULL || a->t[k]->dtype != a->t[0]->dtype ||
            mt_tensor_device(a->t[k]).type != (on_cuda ? MT_CUDA : MT_CPU)) {
            return false;
        }
    }
    return mt_dtype_is_complex(a->t[0]->dtype);
}

/* op's complex form for this call, or NULL */
static mt_status (*form_of(mt_op op, const mt_args *a))(mt_op, mt_args *)
{
    for (size_t k = 0; k < sizeof(complex_forms) / sizeof(complex_forms[0]); k++) {
        if (complex_forms[k].op == op && a->t[0] &&
            (mt_dtype_is_complex(a->t[0]->dtype) ||
             (a->t[1] && mt_dtype_is_complex(a->t[1]->dtype)) ||
             (a->dtype >= 0 && mt_dtype_is_complex((mt_dtype)a->dtype)))) {
            return complex_forms[k].form;
        }
    }
    return NULL;
}

mt_status
mt_complex_dispatch(mt_op op, mt_args *a, bool *handled)
{
    *handled = false;
    const bool on_cuda = mt_args_on_cuda(a);
    if ((mt_op_flags[op] & COMPLEX) && !on_cuda) {
        return MT_OK;
    }
    if (blas_takes(op, a, on_cuda)) {
        return MT_OK; /* the backend's BLAS kernel, or matmul's composite */
    }
    mt_status (*form)(mt_op, mt_args *) = form_of(op, a);
    if (form) { /* on every device: its ops come back here */
        *handled = true;
        return form(op, a);
    }
    return on_cuda ? cuda_complex(op, a, handled) : not_implemented(op, a);
}
