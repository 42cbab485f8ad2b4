/* Composite linear algebra: the norms (vector, matrix, linalg.norm's choice between them), the
 * checked forms over the _ex kernels (inv, cholesky), the SVD's and eigh's narrower forms,
 * pinv and matrix_rank, and the legacy torch.* names (inverse, det, slogdet, logdet, cholesky,
 * qr, svd, pinverse). Written in ops, as PyTorch's CompositeImplicitAutograd ones are. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/linalg.h"
#include "ops/ops.h"
#include "ops/op_chain.h"

/* ---- norms ---- */

// self (any shape); out: the ord-norm of self's elements over dim (all by default)
mt_status
mt_composite_linalg_vector_norm(mt_args *a)
{
    mt_tensor *self = a->t[0];
    mt_status st = mt_linalg_check_float(self, "linalg.vector_norm");
    return st ? st
              : mt_op_norm(self, a->s[0], a->l[0].n, mt_op_ints(&a->l[0]), a->b[0], a->dtype,
                           &a->out[0]);
}

/* the two dims of a matrix norm, wrapped, with PyTorch's checks */
static mt_status
matrix_dims(const mt_tensor *A, const mt_intlist *dim, int *d0, int *d1)
{
    const char *api = "linalg.matrix_norm";
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor A must have at least 2 dimensions.", api);
    }
    if (dim->n != 2) {
        char got[128] = "";
        for (int k = 0; k < dim->n; k++) {
            size_t len = strlen(got);
            snprintf(got + len, sizeof(got) - len, "%s%lld", k ? " " : "", (long long)dim->v[k]);
        }
        return mt_fail(MT_ERUNTIME, "%s: dim must be a 2-tuple. Got %s", api, got);
    }
    mt_status st = mt_wrap_dim(dim->v[0], A->ndim, d0);
    if (st || (st = mt_wrap_dim(dim->v[1], A->ndim, d1))) {
        return st;
    }
    if (*d0 == *d1) {
        return mt_fail(MT_ERUNTIME, "%s: dims must be different. Got (%d, %d)", api, *d0, *d1);
    }
    return mt_linalg_check_float(A, api);
}

/* The singular values of A's matrices over dims d0, d1 (moved last), in dtype dt (or A's): a
 * step of the chain s. */
static mt_tensor *
svdvals_over(tmp *s, mt_tensor *A, int d0, int d1, int dt)
{
    int64_t perm[MT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < A->ndim; d++) {
        if (d != d0 && d != d1) {
            perm[k++] = d;
        }
    }
    perm[k++] = d0;
    perm[k++] = d1;
    mt_tensor *r = NULL;
    mt_tensor *moved = s->st ? NULL : own(s, mt_op_permute(A, A->ndim, perm, &r), &r);
    mt_tensor *cast = moved;
    if (dt >= 0 && dt != (int)A->dtype && !failed(s, moved, moved)) {
        cast = own(s, mt_op__to_copy(moved, dt, mt_tensor_device(A), &r), &r);
    }
    return failed(s, cast, cast) ? NULL : own(s, mt_op_linalg_svdvals(cast, NULL, &r), &r);
}

/* x (reduced over the two matrix dims, last) with both dims back as size 1 if keepdim */
static mt_tensor *
keep_matrix_dims(tmp *s, mt_tensor *x, int d0, int d1, bool keepdim)
{
    if (!keepdim) {
        return x;
    }
    int lo = d0 < d1 ? d0 : d1, hi = d0 < d1 ? d1 : d0;
    return unsqueezed(s, unsqueezed(s, x, lo), hi);
}

/* x's largest (ord > 0) or smallest values along dim, a step of the chain s */
static mt_tensor *
extreme(tmp *s, mt_tensor *x, double ord, int64_t dim, bool keepdim)
{
    mt_tensor *r = NULL;
    return failed(s, x, x)
               ? NULL
               : own(s, (ord > 0 ? mt_op_amax : mt_op_amin)(x, 1, &dim, keepdim, &r), &r);
}

// self (*, m, n) over dim; out: the ord-norm of the matrices: the largest (2) or smallest (-2)
// singular value, the largest (1) or smallest (-1) column sum of |x|, row sum (inf, -inf)
mt_status
mt_composite_linalg_matrix_norm(mt_args *a)
{
    mt_tensor *A = a->t[0];
    const double ord = mt_scalar_to_double(a->s[0]);
    const bool keepdim = a->b[0];
    int d0, d1;
    mt_status st = matrix_dims(A, &a->l[0], &d0, &d1);
    if (st) {
        return st;
    }
    const double mag = fabs(ord);
    if (mag != 1 && mag != 2 && !isinf(ord)) {
        return mt_fail(MT_ERUNTIME, "linalg.matrix_norm: Order %g not supported.", ord);
    }
    tmp s = {0};
    mt_tensor *r = NULL, *norm;
    if (mag == 2) {
        mt_tensor *sv = svdvals_over(&s, A, d0, d1, a->dtype);
        norm = keep_matrix_dims(&s, extreme(&s, sv, ord, -1, false), d0, d1, keepdim);
    } else { /* 1: max over columns of the column sums; inf: the same on the transpose */
        int64_t first = isinf(ord) ? d1 : d0, second = isinf(ord) ? d0 : d1;
        if (!keepdim && first < second) {
            second--;
        }
        mt_tensor *sums = own(&s,
                              mt_op_norm(A, mt_scalar_float(1), 1, &first, keepdim, a->dtype, &r),
                              &r);
        norm = extreme(&s, sums, ord, second, keepdim);
    }
    give(&s, norm, &a->out[0]);
    return finish(&s);
}

// self (*, m, n) over dim; out: 'fro' (the 2-norm of the elements) or 'nuc' (the sum of the
// singular values) norm of the matrices
mt_status
mt_composite_linalg_matrix_norm_str(mt_args *a)
{
    mt_tensor *A = a->t[0];
    const char *ord = a->str[0];
    int d0, d1;
    mt_status st = matrix_dims(A, &a->l[0], &d0, &d1);
    if (st) {
        return st;
    }
    if (strcmp(ord, "fro") == 0) {
        int64_t dims[2] = {d0, d1};
        return mt_op_norm(A, mt_scalar_float(2), 2, dims, a->b[0], a->dtype, &a->out[0]);
    }
    if (strcmp(ord, "nuc") != 0) {
        return mt_fail(MT_ERUNTIME, "linalg.matrix_norm: Order %s not supported.", ord);
    }
    tmp s = {0};
    mt_tensor *r = NULL, *sv = svdvals_over(&s, A, d0, d1, a->dtype);
    int64_t last = -1;
    mt_tensor *sum = failed(&s, sv, sv) ? NULL
                                        : own(&s, mt_op_sum(sv, 1, &last, false, -1, &r), &r);
    give(&s, keep_matrix_dims(&s, sum, d0, d1, a->b[0]), &a->out[0]);
    return finish(&s);
}

/* linalg.norm's rules for dim: 1 or 2 dims; without dim (when ord is given) a 1-D or 2-D self */
static mt_status
norm_dims(const mt_tensor *X, const mt_intlist *dim, bool has_ord, const char *must)
{
    if (!dim->none && dim->n != 1 && dim->n != 2) {
        char got[128];
        return mt_fail(MT_ERUNTIME,
                       "linalg.norm: If dim is specified, %s be of length 1 or 2. Got %s", must,
                       mt_format_sizes(got, sizeof(got), dim->n, dim->v));
    }
    if (dim->none && has_ord && X->ndim != 1 && X->ndim != 2) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                       "2D. Got %dD.",
                       X->ndim);
    }
    return MT_OK;
}

// self (any shape); out: a matrix norm when ord is given and dim names 2 dims (or self is 2-D
// without dim), else the vector norm (ord 2 by default)
mt_status
mt_composite_linalg_norm(mt_args *a)
{
    mt_tensor *X = a->t[0];
    const bool has_ord = a->s[0].type != MT_NUM_DTYPES;
    const mt_intlist *dim = &a->l[0];
    mt_status st = norm_dims(X, dim, has_ord, "it must");
    if (st) {
        return st;
    }
    if (has_ord && ((!dim->none && dim->n == 2) || (dim->none && X->ndim == 2))) {
        int64_t both[2] = {0, 1};
        return mt_op_linalg_matrix_norm(X, a->s[0], 2, dim->none ? both : dim->v, a->b[0], a->dtype,
                                        &a->out[0]);
    }
    return mt_op_linalg_vector_norm(X, has_ord ? a->s[0] : mt_scalar_float(2), dim->n,
                                    mt_op_ints(dim), a->b[0], a->dtype, &a->out[0]);
}

mt_status
mt_composite_linalg_norm_str(mt_args *a)
{
    mt_tensor *X = a->t[0];
    const mt_intlist *dim = &a->l[0];
    mt_status st = norm_dims(X, dim, true, "it mut");
    if (st) {
        return st;
    }
    int64_t both[2] = {0, 1};
    return mt_op_linalg_matrix_norm_str(X, a->str[0], dim->none ? 2 : dim->n,
                                        dim->none ? both : dim->v, a->b[0], a->dtype, &a->out[0]);
}

/* ---- the checked forms, the narrower forms, the legacy names ---- */

/* The result of an _ex op (st), with PyTorch's LinAlgError (named api) where its info is not
 * 0; *info released. */
static mt_status
checked(mt_args *a, mt_status st, mt_tensor **info, const char *api)
{
    if (st == MT_OK && (st = mt_linalg_check_info(*info, api, a->t[0]->ndim > 2))) {
        mt_tensor_clear(&a->out[0]);
    }
    mt_tensor_clear(info);
    return st;
}

// A (*, n, n); out: A^-1, LinAlgError for a singular matrix
mt_status
mt_composite_linalg_inv(mt_args *a)
{
    mt_tensor *info = NULL;
    return checked(a, mt_op_linalg_inv_ex(a->t[0], false, &a->out[0], &info), &info, "linalg.inv");
}

mt_status
mt_composite_det(mt_args *a)
{
    return mt_op_linalg_det(a->t[0], &a->out[0]);
}

mt_status
mt_composite_slogdet(mt_args *a)
{
    return mt_op_linalg_slogdet(a->t[0], &a->out[0], &a->out[1]);
}

// self (*, n, n); out: log det(self): NaN where det < 0, -inf where 0
mt_status
mt_composite_logdet(mt_args *a)
{
    tmp s = {0};
    mt_tensor *sign = NULL, *logabs = NULL;
    mt_status st = mt_op_linalg_slogdet(a->t[0], &sign, &logabs);
    sign = own(&s, st, &sign); /* each result adopted, whatever became of the other */
    logabs = own(&s, st, &logabs);
    mt_tensor *neg = bin(&s, MT_OP_eq, sign, num(&s, -1.0));
    give(&s, sel(&s, neg, num(&s, NAN), logabs), &a->out[0]);
    return finish(&s);
}

// self (*, n, n) symmetric positive-definite; out: L, self = L L^T (U = L^T with upper)
mt_status
mt_composite_linalg_cholesky(mt_args *a)
{
    mt_tensor *info = NULL;
    return checked(a, mt_op_linalg_cholesky_ex(a->t[0], a->b[0], false, &a->out[0], &info), &info,
                   "linalg.cholesky");
}

mt_status
mt_composite_qr(mt_args *a)
{
    return mt_op_linalg_qr(a->t[0], a->b[0] ? "reduced" : "complete", &a->out[0], &a->out[1]);
}

/* Whether a backward may reach t: then the SVD and eigh forms without vectors compute them
 * anyway, for their gradients (PyTorch's _may_require_fw_or_bw_grad). */
static bool
may_need_grad(const mt_tensor *t)
{
    return mt_tensor_requires_grad(t) && mt_grad_enabled();
}

// A (*, m, n); U, S, Vh: A = U diag(S) Vh, U (*, m, m) and Vh (*, n, n) with full_matrices
mt_status
mt_composite_linalg_svd(mt_args *a)
{
    return mt_op__linalg_svd(a->t[0], a->b[0], true, a->str[0], &a->out[0], &a->out[1], &a->out[2]);
}

// A (*, m, n); out (*, min(m, n)): the singular values, descending
mt_status
mt_composite_linalg_svdvals(mt_args *a)
{
    mt_tensor *U = NULL, *Vh = NULL;
    mt_status st = mt_op__linalg_svd(a->t[0], false, may_need_grad(a->t[0]), a->str[0], &U,
                                     &a->out[0], &Vh);
    mt_tensor_clear(&U);
    mt_tensor_clear(&Vh);
    return st;
}

// self (*, m, n); U, S, V (not Vh): self = U diag(S) V^T, reduced when some; without
// compute_uv, U and V are zeros (*, m, m) and (*, n, n)
mt_status
mt_composite_svd(mt_args *a)
{
    mt_tensor *A = a->t[0], *Vh = NULL;
    mt_status st;
    if (a->b[1]) {
        st = mt_op__linalg_svd(A, !a->b[0], true, NULL, &a->out[0], &a->out[1], &Vh);
        if (st == MT_OK) {
            st = mt_op_transpose(Vh, -2, -1, &a->out[2]);
        }
        mt_tensor_clear(&Vh);
        return st;
    }
    if ((st = mt_linalg_check_matrix(A, "linalg.svd", "A", false))) {
        return st;
    }
    int64_t shape[MT_MAX_DIMS];
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1];
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)nb);
    shape[nb] = shape[nb + 1] = m;
    if ((st = mt_op_zeros(A->ndim, shape, A->dtype, mt_tensor_device(A), false, &a->out[0]))) {
        return st;
    }
    shape[nb] = shape[nb + 1] = n;
    if ((st = mt_op_zeros(A->ndim, shape, A->dtype, mt_tensor_device(A), false, &a->out[2])) ||
        (st = mt_op_linalg_svdvals(A, NULL, &a->out[1]))) {
        mt_tensor_clear(&a->out[0]);
        mt_tensor_clear(&a->out[2]);
    }
    return st;
}

// self (*, n, n) symmetric (its UPLO triangle); eigenvalues (ascending), eigenvectors (columns)
mt_status
mt_composite_linalg_eigh(mt_args *a)
{
    return mt_op__linalg_eigh(a->t[0], a->str[0], true, &a->out[0], &a->out[1]);
}

mt_status
mt_composite_linalg_eigvalsh(mt_args *a)
{
    mt_tensor *V = NULL;
    mt_status st = mt_op__linalg_eigh(a->t[0], a->str[0], may_need_grad(a->t[0]), &a->out[0], &V);
    mt_tensor_clear(&V);
    return st;
}

// self (*, n, n) real or complex; eigenvalues (*, n) and eigenvectors (*, n, n) (columns of
// unit norm), complex
mt_status
mt_composite_linalg_eig(mt_args *a)
{
    return mt_op__linalg_eig(a->t[0], true, &a->out[0], &a->out[1]);
}

mt_status
mt_composite_linalg_eigvals(mt_args *a)
{
    mt_tensor *V = NULL;
    mt_status st = mt_linalg_check_eig(a->t[0], MT_OP_linalg_eigvals, "linalg.eigvals");
    if (st == MT_OK) {
        st = mt_op__linalg_eig(a->t[0], may_need_grad(a->t[0]), &a->out[0], &V);
    }
    mt_tensor_clear(&V);
    return st;
}

/* ---- pinv, matrix_rank ---- */

/* a 0-dim float64 v on dev, a step of the chain s */
static mt_tensor *
float64_full(tmp *s, double v, mt_device dev)
{
    mt_tensor *r = NULL;
    return s->st ? NULL
                 : own(s, mt_op_full(0, NULL, mt_scalar_float(v), MT_FLOAT64, dev, false, &r), &r);
}

/* PyTorch's get_atol_rtol: atol (0 by default) and rtol (0 when atol is given and positive, else
 * eps(dtype) * max(m, n) by default), as float64 tensors on A's device: steps of the chain s. */
static void
tolerances(tmp *s, const mt_tensor *A, mt_tensor *atol, mt_tensor *rtol, mt_tensor **at,
           mt_tensor **rt)
{
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    const double eps = A->dtype == MT_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    const double dflt = eps * (double)(m > n ? m : n);
    mt_device dev = mt_tensor_device(A);
    *at = atol ? atol : float64_full(s, 0, dev);
    if (rtol) {
        *rt = rtol;
        return;
    }
    *rt = float64_full(s, dflt, dev);
    if (atol) { /* where(atol > 0, 0, default) */
        mt_tensor *zero = float64_full(s, 0, dev);
        *rt = sel(s, bin(s, MT_OP_gt, atol, zero), zero, *rt);
    }
}

/* max(atol, rtol * top), top the largest singular value (*, 1): a step of the chain s */
static mt_tensor *
tolerance(tmp *s, mt_tensor *at, mt_tensor *rt, mt_tensor *top)
{
    return bin(s, MT_OP_maximum, at, bin(s, MT_OP_mul, rt, top));
}

/* x^T over its last two dims, a step of the chain s */
static mt_tensor *
transposed(tmp *s, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_transpose(x, -2, -1, &r), &r);
}

/* U, S, V of A's svd (full_matrices, compute_uv), steps of the chain s */
static void
svd_of(tmp *s, mt_tensor *A, mt_tensor **U, mt_tensor **S, mt_tensor **V)
{
    *U = *S = *V = NULL;
    if (s->st == MT_OK) { /* each result adopted, whatever became of the others */
        mt_status st = mt_op_svd(A, true, true, U, S, V);
        *U = own(s, st, U);
        *S = own(s, st, S);
        *V = own(s, st, V);
    }
}

// self (*, m, n); out (*, n, m): the pseudo-inverse, V diag(1/S) U^T over the singular values
// above max(atol, rtol * the largest) (eigenvalues of an hermitian self, by absolute value)
mt_status
mt_composite_linalg_pinv(mt_args *a)
{
    mt_tensor *A = a->t[0], *at = NULL, *rt = NULL, *tol = NULL;
    const bool hermitian = a->b[0];
    char shape[128];
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype) || A->ndim < 2) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.pinv(%s{%s}): expected a tensor with 2 or more dimensions of float, "
                       "double, cfloat or cdouble types",
                       mt_dtype_scalar_name(A->dtype),
                       mt_format_sizes(shape, sizeof(shape), A->ndim, A->sizes));
    }
    tmp s = {0};
    mt_tensor *r = NULL, *U = NULL, *S = NULL, *V = NULL, *absS, *top;
    int64_t last = -1;
    tolerances(&s, A, a->t[1], a->t[2], &at, &rt);
    if (mt_tensor_numel(A) == 0) { /* V diag(1/S) U^T of nothing: zeros (*, n, m) */
        svd_of(&s, A, &U, &S, &V);
        give(&s, bin(&s, MT_OP_matmul, V, transposed(&s, U)), &a->out[0]);
        return finish(&s);
    }
    if (hermitian) {
        if (s.st == MT_OK) { /* each result adopted, whatever became of the other */
            mt_status st = mt_op_linalg_eigh(A, "L", &S, &U);
            S = own(&s, st, &S);
            U = own(&s, st, &U);
        }
        absS = un(&s, MT_OP_abs, S);
        top = failed(&s, absS, absS) ? NULL : own(&s, mt_op_amax(absS, 1, &last, true, &r), &r);
    } else {
        svd_of(&s, A, &U, &S, &V);
        absS = S;
        top = failed(&s, S, S) ? NULL : own(&s, mt_op_narrow(S, -1, 0, 1, &r), &r);
    }
    tol = tolerance(&s, at, rt, top);
    mt_tensor *sinv = sel(&s, bin(&s, MT_OP_gt, absS, tol), un(&s, MT_OP_reciprocal, S),
                          num(&s, 0.0));
    mt_tensor *sinv_c = failed(&s, sinv, sinv)
                            ? NULL
                            : own(&s, mt_op__to_copy(sinv, A->dtype, mt_tensor_device(A), &r), &r);
    mt_tensor *scaled = bin(&s, MT_OP_mul, hermitian ? U : V, unsqueezed(&s, sinv_c, -2));
    give(&s, bin(&s, MT_OP_matmul, scaled, transposed(&s, U)), &a->out[0]);
    return finish(&s);
}

// self (*, m, n); out: pinv(self, rtol=rcond), as PyTorch's pinverse
mt_status
mt_composite_pinverse(mt_args *a)
{
    mt_tensor *rtol = NULL;
    mt_status st = mt_tensor_scalar(mt_scalar_float(a->f[0]), MT_FLOAT64, &rtol);
    if (st == MT_OK) {
        st = mt_op_linalg_pinv(a->t[0], NULL, rtol, false, &a->out[0]);
        mt_tensor_release(rtol);
    }
    return st;
}

// self (*, m, n); out (*) int64: how many singular values (|eigenvalues| when hermitian) exceed
// max(atol, rtol * the largest)
mt_status
mt_composite_linalg_matrix_rank(mt_args *a)
{
    mt_tensor *A = a->t[0], *at = NULL, *rt = NULL;
    const char *api = "torch.linalg.matrix_rank";
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor input must have at least 2 dimensions.",
                       api);
    }
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "This function doesn't handle types other than float and double");
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    int64_t last = -1;
    tolerances(&s, A, a->t[1], a->t[2], &at, &rt);
    at = unsqueezed(&s, at, -1);
    rt = unsqueezed(&s, rt, -1);
    mt_tensor *S = s.st ? NULL
                        : own(&s,
                              a->b[0] ? mt_op_linalg_eigvalsh(A, "L", &r)
                                      : mt_op_linalg_svdvals(A, NULL, &r),
                              &r);
    mt_tensor *absS = un(&s, MT_OP_abs, S), *keep = absS;
    if (absS && mt_tensor_numel(absS) > 0) { /* else no singular values: rank 0 */
        mt_tensor *top = own(&s, mt_op_amax(absS, 1, &last, true, &r), &r);
        keep = bin(&s, MT_OP_gt, absS, tolerance(&s, at, rt, top));
    }
    if (!failed(&s, keep, keep)) {
        s.st = mt_op_sum(keep, 1, &last, false, MT_INT64, &a->out[0]);
    }
    return finish(&s);
}

/* ---- the matrix exponential ---- */

/* Pade [13/13] coefficients and the 1-norm up to which the approximant is accurate to double
 * precision (Higham, "The scaling and squaring method for the matrix exponential revisited",
 * 2005) */
static const double pade13[14] = {64764752532480000.0,
                                  32382376266240000.0,
                                  7771770303897600.0,
                                  1187353796428800.0,
                                  129060195264000.0,
                                  10559470521600.0,
                                  670442572800.0,
                                  33522128640.0,
                                  1323241920.0,
                                  40840800.0,
                                  960960.0,
                                  16380.0,
                                  182.0,
                                  1.0};
#define PADE13_THETA 5.371920351148152

/* c[0] X[0] + c[1] X[1] + c[2] X[2] + c[3] X[3], a step of the chain s */
static mt_tensor *
combination(tmp *s, mt_tensor *const X[4], const double c[4])
{
    mt_tensor *r = NULL, *acc = bin(s, MT_OP_mul, X[0], num(s, c[0]));
    for (int i = 1; i < 4; i++) {
        acc = failed(s, acc, X[i]) ? NULL
                                   : own(s, mt_op_add(acc, X[i], mt_scalar_float(c[i]), &r), &r);
    }
    return acc;
}

/* x + alpha y, a step of the chain s */
static mt_tensor *
added(tmp *s, mt_tensor *x, mt_tensor *y, double alpha)
{
    mt_tensor *r = NULL;
    return failed(s, x, y) ? NULL : own(s, mt_op_add(x, y, mt_scalar_float(alpha), &r), &r);
}

// A (*, n, n) float; out (*, n, n) = exp(A), by scaling and squaring around a Pade [13/13]
// approximant: A / 2^s with its 1-norm (the batch's largest) below theta_13, then s squarings.
// Its gradient is that of these ops.
mt_status
mt_composite_linalg_matrix_exp(mt_args *a)
{
    mt_tensor *A = a->t[0];
    mt_status st = mt_linalg_check_matrix(A, "linalg.matrix_exp", "A", true);
    if (st) {
        return st;
    }
    int64_t n = A->sizes[A->ndim - 1];
    if (mt_tensor_numel(A) == 0) {
        return mt_op_clone(A, &a->out[0]);
    }
    if (n == 1) {
        return mt_op_exp(A, &a->out[0]);
    }
    tmp t = {0};
    mt_tensor *r = NULL;
    mt_scalar v;
    int64_t dims[2] = {-2, -1};
    mt_tensor *norms = own(&t,
                           mt_op_linalg_matrix_norm(A, mt_scalar_float(1), 2, dims, false, -1, &r),
                           &r);
    mt_tensor *largest = failed(&t, norms, norms)
                             ? NULL
                             : own(&t, mt_op_amax(norms, 0, NULL, false, &r), &r);
    if (failed(&t, largest, largest) || (t.st = mt_tensor_item(largest, &v))) {
        return finish(&t);
    }
    double norm = mt_scalar_to_double(v);
    int s = isfinite(norm) && norm > PADE13_THETA ? (int)ceil(log2(norm / PADE13_THETA)) : 0;
    const double *b = pade13;
    mt_tensor *As = bin(&t, MT_OP_mul, A, num(&t, ldexp(1.0, -s)));
    mt_tensor *I = t.st ? NULL
                        : own(&t, mt_op_eye(n, n, A->dtype, mt_tensor_device(A), false, &r), &r);
    mt_tensor *A2 = bin(&t, MT_OP_matmul, As, As), *A4 = bin(&t, MT_OP_matmul, A2, A2);
    mt_tensor *A6 = bin(&t, MT_OP_matmul, A4, A2);
    mt_tensor *X[4] = {A6, A4, A2, I};
    /* U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I) */
    /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    mt_tensor *mu = bin(&t, MT_OP_matmul, A6,
                        combination(&t, X, (double[4]){b[13], b[11], b[9], 0}));
    mt_tensor *pu = combination(&t, X, (double[4]){b[7], b[5], b[3], b[1]});
    mt_tensor *U = bin(&t, MT_OP_matmul, As, added(&t, pu, mu, 1));
    mt_tensor *mv = bin(&t, MT_OP_matmul, A6,
                        combination(&t, X, (double[4]){b[12], b[10], b[8], 0}));
    mt_tensor *V = combination(&t, X, (double[4]){b[6], b[4], b[2], b[0]});
    mt_tensor *sum_v = added(&t, V, mv, 1);
    mt_tensor *numer = added(&t, sum_v, U, 1), *denom = added(&t, sum_v, U, -1);
    mt_tensor *e = failed(&t, numer, denom)
                       ? NULL
                       : own(&t, mt_op_linalg_solve(denom, numer, true, &r), &r);
    for (int k = 0; k < s; k++) {
        e = bin(&t, MT_OP_matmul, e, e);
    }
    give(&t, e, &a->out[0]);
    return finish(&t);
}

mt_status
mt_composite_matrix_exp(mt_args *a)
{
    return mt_op_linalg_matrix_exp(a->t[0], &a->out[0]);
}

/* ---- LU ---- */

// A (*, m, n); out: LU, pivots of lu_factor_ex, a RuntimeError where U has a zero diagonal entry
mt_status
mt_composite_linalg_lu_factor(mt_args *a)
{
    mt_tensor *info = NULL;
    mt_status st = mt_op_linalg_lu_factor_ex(a->t[0], a->b[0], false, &a->out[0], &a->out[1],
                                             &info);
    if (st == MT_OK &&
        (st = mt_linalg_check_info(info, "torch.linalg.lu_factor", a->t[0]->ndim > 2))) {
        mt_tensor_clear(&a->out[0]);
        mt_tensor_clear(&a->out[1]);
    }
    mt_tensor_clear(&info);
    return st;
}

// A (*, n, n) symmetric; out: LD (*, n, n), pivots (*, n) of linalg_ldl_factor_ex, which must
// have factored every matrix
mt_status
mt_composite_linalg_ldl_factor(mt_args *a)
{
    mt_tensor *info = NULL;
    mt_status st = mt_op_linalg_ldl_factor_ex(a->t[0], a->b[0], false, &a->out[0], &a->out[1],
                                              &info);
    if (st == MT_OK &&
        (st = mt_linalg_check_info(info, "torch.linalg.ldl_factor", a->t[0]->ndim > 2))) {
        mt_tensor_clear(&a->out[0]);
        mt_tensor_clear(&a->out[1]);
    }
    mt_tensor_clear(&info);
    return st;
}

// A (*, m, n); out: P (*, m, m), L (*, m, k), U (*, k, n), A = P L U (a singular A too)
mt_status
mt_composite_linalg_lu(mt_args *a)
{
    tmp s = {0};
    mt_tensor *lu = NULL, *piv = NULL, *info = NULL;
    mt_status st = mt_op_linalg_lu_factor_ex(a->t[0], a->b[0], false, &lu, &piv, &info);
    lu = own(&s, st, &lu); /* each result adopted, whatever became of the others */
    piv = own(&s, st, &piv);
    own(&s, st, &info);
    if (!failed(&s, lu, piv)) {
        s.st = mt_op_lu_unpack(lu, piv, true, true, &a->out[0], &a->out[1], &a->out[2]);
    }
    return finish(&s);
}

// torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, b)
mt_status
mt_composite_lu_solve(mt_args *a)
{
    return mt_op_linalg_lu_solve(a->t[1], a->t[2], a->t[0], true, false, &a->out[0]);
}
