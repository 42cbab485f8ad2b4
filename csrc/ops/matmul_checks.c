/* The front ends of the matrix products (mm, addmm, bmm, baddbmm, mv, addmv, dot), for every
 * device: PyTorch's shape and dtype checks (worded as its CPU or CUDA kernel words them where
 * they differ), beta and alpha for the kernels (mt_product_plan), and the result: contiguous,
 * in the first factor's dtype. Which dtypes a backend has loops for is the backend's to say. */
#include <inttypes.h>

#include "ops/front.h"

static mt_status
check_matrix(const mt_tensor *t, const char *what)
{
    if (t->ndim != 2) {
        return mt_fail(MT_ERUNTIME, "%s must be a matrix, got %d-D tensor", what, t->ndim);
    }
    return MT_OK;
}

/* m1 (name1) and m2 ("mat2") matrices that multiply. */
static mt_status
check_matrices(const mt_tensor *m1, const mt_tensor *m2, const char *name1)
{
    mt_status st;
    if ((st = check_matrix(m1, name1)) || (st = check_matrix(m2, "mat2"))) {
        return st;
    }
    if (m1->sizes[1] != m2->sizes[0]) {
        return mt_fail(MT_ERUNTIME,
                       "mat1 and mat2 shapes cannot be multiplied (%" PRId64 "x%" PRId64
                       " and %" PRId64 "x%" PRId64 ")",
                       m1->sizes[0], m1->sizes[1], m2->sizes[0], m2->sizes[1]);
    }
    return MT_OK;
}

/* mm's (and CUDA addmm's) dtype error; the CPU's names the C types, CUDA's PyTorch's. */
static mt_status
fail_mm_dtypes(const mt_tensor *m1, const mt_tensor *m2)
{
    bool cuda = mt_front_on_cuda(m1);
    return mt_fail(MT_ERUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                   cuda ? mt_dtype_scalar_name(m1->dtype) : mt_dtype_c_name(m1->dtype),
                   cuda ? mt_dtype_scalar_name(m2->dtype) : mt_dtype_c_name(m2->dtype));
}

/* beta (a->s[0]) and alpha (a->s[1]) of a product in dtype dt, 1 where not given, converted
 * checked as PyTorch's are: into dt, or into float for float16 and bfloat16 (its opmath type;
 * 1e39 fits neither). An integer product takes them as its own dtype first
 * (beta.to<int64_t>()): 0.5 becomes 0, -1.5 becomes -1. */
static mt_status
product_scalars(const mt_args *a, mt_dtype dt, mt_product_plan *p)
{
    mt_scalar *s[2] = {&p->beta, &p->alpha};
    const mt_dtype into = mt_dtype_is_float(dt) && mt_dtype_is_small(dt) ? MT_FLOAT32 : dt;
    for (int k = 0; k < 2; k++) {
        *s[k] = mt_scalar_is_none(a->s[k]) ? mt_scalar_int(1) : a->s[k];
        mt_status st = mt_check_scalar_fits(*s[k], into);
        if (st) {
            return st;
        }
        if (mt_dtype_is_integral(dt, false)) {
            *s[k] = mt_scalar_int(mt_scalar_to_int(*s[k]));
        }
    }
    return MT_OK;
}

/* The product's result, of the given sizes in x's dtype, once the checks passed (st MT_OK). */
static mt_status
product_output(mt_status st, mt_plan *p, const mt_tensor *x, int ndim, const int64_t *sizes)
{
    return st ? st : mt_front_output(p, x->dtype, ndim, sizes);
}

/* A product without self: out = 1 * x @ y, the result as product_output's. */
static mt_status
plain_product(mt_plan *p, const mt_tensor *x, int ndim, const int64_t *sizes)
{
    p->product = (mt_product_plan){mt_scalar_int(0), mt_scalar_int(1)};
    return mt_front_output(p, x->dtype, ndim, sizes);
}

// self (m,k), mat2 (k,n)
mt_status
mt_front_mm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *m2 = a->t[1];
    mt_status st = check_matrices(self, m2, "self");
    if (st == MT_OK && self->dtype != m2->dtype) {
        st = fail_mm_dtypes(self, m2);
    }
    if (st) {
        return st;
    }
    const int64_t sizes[2] = {self->sizes[0], m2->sizes[1]};
    return plain_product(p, self, 2, sizes);
}

// self broadcast to (m,n), mat1 (m,k), mat2 (k,n)
mt_status
mt_front_addmm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *m1 = a->t[1], *m2 = a->t[2];
    mt_status st = check_matrices(m1, m2, "mat1");
    if (st) {
        return st;
    }
    if (m1->dtype != m2->dtype && mt_front_on_cuda(m1)) {
        return fail_mm_dtypes(m1, m2);
    }
    if (m1->dtype != m2->dtype) {
        return mt_fail(MT_ERUNTIME, "mat1 and mat2 must have the same dtype, but got %s and %s",
                       mt_dtype_scalar_name(m1->dtype), mt_dtype_scalar_name(m2->dtype));
    }
    if (!mt_front_on_cuda(m1) && self->dtype != m1->dtype) {
        return mt_fail(MT_ERUNTIME, "self and mat2 must have the same dtype, but got %s and %s",
                       mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(m2->dtype));
    }
    const int64_t sizes[2] = {m1->sizes[0], m2->sizes[1]};
    return product_output(product_scalars(a, m1->dtype, &p->product), p, m1, 2, sizes);
}

/* bmm and baddbmm: batch1 (b,m,k) and batch2 (b,k,n) (the dtypes are each one's own). */
static mt_status
check_batches(const mt_tensor *b1, const mt_tensor *b2)
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

// self (B,m,k), mat2 (B,k,n)
mt_status
mt_front_bmm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *m2 = a->t[1];
    mt_status st = check_batches(self, m2);
    if (st == MT_OK && self->dtype != m2->dtype) {
        st = mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                     mt_dtype_scalar_name(self->dtype), mt_dtype_scalar_name(m2->dtype));
    }
    if (st) {
        return st;
    }
    const int64_t sizes[3] = {self->sizes[0], self->sizes[1], m2->sizes[2]};
    return plain_product(p, self, 3, sizes);
}

// self broadcast to (B,m,n), batch1 (B,m,k), batch2 (B,k,n)
mt_status
mt_front_baddbmm(const mt_args *a, mt_plan *p)
{
    const mt_tensor *self = a->t[0], *b1 = a->t[1], *b2 = a->t[2];
    mt_status st = check_batches(b1, b2);
    if (st == MT_OK && (self->dtype != b1->dtype || b1->dtype != b2->dtype)) {
        st = mt_fail(MT_ERUNTIME,
                     "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                     mt_dtype_c_name(self->dtype), mt_dtype_c_name(b1->dtype),
                     mt_dtype_c_name(b2->dtype));
    }
    if (st) {
        return st;
    }
    const int64_t sizes[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    return product_output(product_scalars(a, b1->dtype, &p->product), p, b1, 3, sizes);
}

/* mv (input NULL) and addmv(input, mat, vec): the shapes, then one dtype for all. */
static mt_status
check_matvec(const mt_tensor *input, const mt_tensor *mat, const mt_tensor *vec)
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

// self (m,k), vec (k)
mt_status
mt_front_mv(const mt_args *a, mt_plan *p)
{
    mt_status st = check_matvec(NULL, a->t[0], a->t[1]);
    return st ? st : plain_product(p, a->t[0], 1, a->t[0]->sizes);
}

// self broadcast to (m), mat (m,k), vec (k)
mt_status
mt_front_addmv(const mt_args *a, mt_plan *p)
{
    mt_status st = check_matvec(a->t[0], a->t[1], a->t[2]);
    if (st == MT_OK) {
        st = product_scalars(a, a->t[1]->dtype, &p->product);
    }
    return product_output(st, p, a->t[1], 1, a->t[1]->sizes);
}

// self (n), tensor (n): two 1-D tensors of one size and one dtype
mt_status
mt_front_dot(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0], *y = a->t[1];
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
    return plain_product(p, x, 0, NULL);
}
