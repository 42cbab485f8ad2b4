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
#include "ops/temps.h"

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

/* *out: the singular values of A's matrices over dims d0, d1 (moved last), in dtype dt (or A's) */
static mt_status
svdvals_over(mt_temps *p, mt_tensor *A, int d0, int d1, int dt, mt_tensor **out)
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
    mt_tensor **moved = mt_temp(p), **cast = mt_temp(p), **s = mt_temp(p);
    mt_status st = mt_op_permute(A, A->ndim, perm, moved);
    if (st == MT_OK) {
        st = dt >= 0 && dt != (int)A->dtype ? mt_op__to_copy(*moved, dt, mt_tensor_device(A), cast)
                                            : mt_op_alias(*moved, cast);
    }
    if (st == MT_OK) {
        st = mt_op_linalg_svdvals(*cast, NULL, s);
    }
    *out = *s;
    return st;
}

/* *out = x (reduced over the two matrix dims, last) with both dims back as size 1 if keepdim */
static mt_status
keep_matrix_dims(mt_temps *p, mt_tensor *x, int d0, int d1, bool keepdim, mt_tensor **out)
{
    if (!keepdim) {
        *out = x;
        return MT_OK;
    }
    int lo = d0 < d1 ? d0 : d1, hi = d0 < d1 ? d1 : d0;
    mt_tensor **u = mt_temp(p), **v = mt_temp(p);
    mt_status st = mt_op_unsqueeze(x, lo, u);
    if (st == MT_OK) {
        st = mt_op_unsqueeze(*u, hi, v);
    }
    *out = *v;
    return st;
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
    mt_temps p = {0};
    mt_tensor *r = NULL;
    if (mag == 2) {
        mt_tensor *s = NULL, **ext = mt_temp(&p);
        int64_t last = -1;
        if ((st = svdvals_over(&p, A, d0, d1, a->dtype, &s)) ||
            (st = (ord > 0 ? mt_op_amax : mt_op_amin)(s, 1, &last, false, ext)) ||
            (st = keep_matrix_dims(&p, *ext, d0, d1, keepdim, &r))) {
            goto out_clear;
        }
    } else { /* 1: max over columns of the column sums; inf: the same on the transpose */
        int64_t first = isinf(ord) ? d1 : d0, second = isinf(ord) ? d0 : d1;
        if (!keepdim && first < second) {
            second--;
        }
        mt_tensor **sums = mt_temp(&p), **ext = mt_temp(&p);
        if ((st = mt_op_norm(A, mt_scalar_float(1), 1, &first, keepdim, a->dtype, sums)) ||
            (st = (ord > 0 ? mt_op_amax : mt_op_amin)(*sums, 1, &second, keepdim, ext))) {
            goto out_clear;
        }
        r = *ext;
    }
    a->out[0] = mt_tensor_retain(r);
out_clear:
    mt_temps_clear(&p);
    return st;
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
    mt_temps p = {0};
    mt_tensor *s = NULL, **sum = mt_temp(&p), *r = NULL;
    int64_t last = -1;
    if ((st = svdvals_over(&p, A, d0, d1, a->dtype, &s)) == MT_OK &&
        (st = mt_op_sum(s, 1, &last, false, -1, sum)) == MT_OK &&
        (st = keep_matrix_dims(&p, *sum, d0, d1, a->b[0], &r)) == MT_OK) {
        a->out[0] = mt_tensor_retain(r);
    }
    mt_temps_clear(&p);
    return st;
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
mt_composite_inverse(mt_args *a)
{
    return mt_composite_linalg_inv(a);
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
    mt_temps p = {0};
    mt_tensor **sign = mt_temp(&p), **logabs = mt_temp(&p), **neg = mt_temp(&p);
    mt_tensor *minus = NULL, *nan = NULL;
    mt_status st;
    if ((st = mt_op_linalg_slogdet(a->t[0], sign, logabs)) == MT_OK &&
        (st = mt_temp_number(&p, -1.0, &minus)) == MT_OK &&
        (st = mt_temp_number(&p, NAN, &nan)) == MT_OK &&
        (st = mt_op_eq(*sign, minus, neg)) == MT_OK) {
        st = mt_op_where(*neg, nan, *logabs, &a->out[0]);
    }
    mt_temps_clear(&p);
    return st;
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
mt_composite_cholesky(mt_args *a)
{
    return mt_composite_linalg_cholesky(a);
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

/* PyTorch's get_atol_rtol: atol (0 by default) and rtol (0 when atol is given and positive, else
 * eps(dtype) * max(m, n) by default), as float64 tensors on A's device. */
static mt_status
tolerances(mt_temps *p, const mt_tensor *A, mt_tensor *atol, mt_tensor *rtol, mt_tensor **at,
           mt_tensor **rt)
{
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    const double eps = A->dtype == MT_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    const double dflt = eps * (double)(m > n ? m : n);
    mt_device dev = mt_tensor_device(A);
    mt_tensor **a0 = mt_temp(p), **r0 = mt_temp(p), **pos = mt_temp(p), **zero = mt_temp(p);
    mt_tensor **rw = mt_temp(p);
    mt_status st = MT_OK;
    if (atol) {
        *at = atol;
    } else if ((st = mt_op_full(0, NULL, mt_scalar_float(0), MT_FLOAT64, dev, false, a0)) ==
               MT_OK) {
        *at = *a0;
    }
    if (st || rtol) {
        *rt = rtol;
        return st;
    }
    if ((st = mt_op_full(0, NULL, mt_scalar_float(dflt), MT_FLOAT64, dev, false, r0))) {
        return st;
    }
    *rt = *r0;
    if (atol) { /* where(atol > 0, 0, default) */
        if ((st = mt_op_full(0, NULL, mt_scalar_float(0), MT_FLOAT64, dev, false, zero)) ||
            (st = mt_op_gt(atol, *zero, pos)) || (st = mt_op_where(*pos, *zero, *r0, rw))) {
            return st;
        }
        *rt = *rw;
    }
    return MT_OK;
}

/* *tol = max(atol, rtol * top), top the largest singular value (*, 1) */
static mt_status
tolerance(mt_temps *p, mt_tensor *at, mt_tensor *rt, mt_tensor *top, mt_tensor **tol)
{
    mt_tensor **scaled = mt_temp(p), **t = mt_temp(p);
    mt_status st = mt_op_mul(rt, top, scaled);
    if (st == MT_OK) {
        st = mt_op_maximum(at, *scaled, t);
    }
    *tol = *t;
    return st;
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
    mt_temps p = {0};
    mt_tensor **U = mt_temp(&p), **S = mt_temp(&p), **V = mt_temp(&p), **absS = mt_temp(&p);
    mt_tensor **top = mt_temp(&p), **keep = mt_temp(&p), **inv = mt_temp(&p), **sinv = mt_temp(&p);
    mt_tensor **row = mt_temp(&p), **scaled = mt_temp(&p), **Ut = mt_temp(&p),
              **sinv_c = mt_temp(&p);
    mt_tensor *zero = NULL;
    int64_t last = -1;
    mt_status st = tolerances(&p, A, a->t[1], a->t[2], &at, &rt);
    if (st) {
        goto out_clear;
    }
    if (mt_tensor_numel(A) == 0) { /* V diag(1/S) U^T of nothing: zeros (*, n, m) */
        st = mt_op_svd(A, true, true, U, S, V);
        if (st == MT_OK && (st = mt_op_transpose(*U, -2, -1, Ut)) == MT_OK) {
            st = mt_op_matmul(*V, *Ut, &a->out[0]);
        }
        goto out_clear;
    }
    if (hermitian) {
        if ((st = mt_op_linalg_eigh(A, "L", S, U)) || (st = mt_op_abs(*S, absS)) ||
            (st = mt_op_amax(*absS, 1, &last, true, top))) {
            goto out_clear;
        }
    } else if ((st = mt_op_svd(A, true, true, U, S, V)) || (st = mt_op_alias(*S, absS)) ||
               (st = mt_op_narrow(*S, -1, 0, 1, top))) {
        goto out_clear;
    }
    if ((st = tolerance(&p, at, rt, *top, &tol)) || (st = mt_op_gt(*absS, tol, keep)) ||
        (st = mt_op_reciprocal(*S, inv)) || (st = mt_temp_number(&p, 0.0, &zero)) ||
        (st = mt_op_where(*keep, *inv, zero, sinv)) ||
        (st = mt_op__to_copy(*sinv, A->dtype, mt_tensor_device(A), sinv_c)) ||
        (st = mt_op_unsqueeze(*sinv_c, -2, row)) ||
        (st = mt_op_mul(hermitian ? *U : *V, *row, scaled)) ||
        (st = mt_op_transpose(*U, -2, -1, Ut))) {
        goto out_clear;
    }
    st = mt_op_matmul(*scaled, *Ut, &a->out[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
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
    mt_tensor *A = a->t[0], *at = NULL, *rt = NULL, *tol = NULL;
    const char *api = "torch.linalg.matrix_rank";
    mt_status st;
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor input must have at least 2 dimensions.",
                       api);
    }
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "This function doesn't handle types other than float and double");
    }
    mt_temps p = {0};
    mt_tensor **S = mt_temp(&p), **absS = mt_temp(&p), **top = mt_temp(&p), **keep = mt_temp(&p);
    int64_t last = -1;
    mt_tensor **at1 = mt_temp(&p), **rt1 = mt_temp(&p);
    if ((st = tolerances(&p, A, a->t[1], a->t[2], &at, &rt)) ||
        (st = mt_op_unsqueeze(at, -1, at1)) || (st = mt_op_unsqueeze(rt, -1, rt1))) {
        goto out_clear;
    }
    at = *at1;
    rt = *rt1;
    if ((st = a->b[0] ? mt_op_linalg_eigvalsh(A, "L", S) : mt_op_linalg_svdvals(A, NULL, S)) ||
        (st = mt_op_abs(*S, absS))) {
        goto out_clear;
    }
    if (mt_tensor_numel(*absS) == 0) { /* no singular values: rank 0 */
        st = mt_op_sum(*absS, 1, &last, false, MT_INT64, &a->out[0]);
        goto out_clear;
    }
    if ((st = mt_op_amax(*absS, 1, &last, true, top)) || (st = tolerance(&p, at, rt, *top, &tol)) ||
        (st = mt_op_gt(*absS, tol, keep))) {
        goto out_clear;
    }
    st = mt_op_sum(*keep, 1, &last, false, MT_INT64, &a->out[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
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

/* *out = c[0] X[0] + c[1] X[1] + c[2] X[2] + c[3] X[3] */
static mt_status
combination(mt_temps *p, mt_tensor *const X[4], const double c[4], mt_tensor **out)
{
    mt_tensor *k = NULL, **acc = mt_temp(p);
    mt_status st = mt_temp_number(p, c[0], &k);
    if (st || (st = mt_op_mul(X[0], k, acc))) {
        return st;
    }
    for (int i = 1; i < 4; i++) {
        mt_tensor **next = i == 3 ? out : mt_temp(p);
        if ((st = mt_op_add(*acc, X[i], mt_scalar_float(c[i]), next))) {
            return st;
        }
        acc = next;
    }
    return MT_OK;
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
    mt_temps p = {0};
    mt_tensor **norms = mt_temp(&p), **largest = mt_temp(&p);
    mt_scalar v;
    int64_t dims[2] = {-2, -1};
    if ((st = mt_op_linalg_matrix_norm(A, mt_scalar_float(1), 2, dims, false, -1, norms)) ||
        (st = mt_op_amax(*norms, 0, NULL, false, largest)) || (st = mt_tensor_item(*largest, &v))) {
        mt_temps_clear(&p);
        return st;
    }
    double norm = mt_scalar_to_double(v);
    int s = isfinite(norm) && norm > PADE13_THETA ? (int)ceil(log2(norm / PADE13_THETA)) : 0;
    const double *b = pade13;
    mt_tensor *scale = NULL, **As = mt_temp(&p), **I = mt_temp(&p), **A2 = mt_temp(&p),
              **A4 = mt_temp(&p), **A6 = mt_temp(&p), **in_u = mt_temp(&p), **mu = mt_temp(&p),
              **pu = mt_temp(&p), **U = mt_temp(&p), **in_v = mt_temp(&p), **mv = mt_temp(&p),
              **V = mt_temp(&p), **num = mt_temp(&p), **den = mt_temp(&p), **sum_u = mt_temp(&p),
              **sum_v = mt_temp(&p);
    if ((st = mt_temp_number(&p, ldexp(1.0, -s), &scale)) || (st = mt_op_mul(A, scale, As)) ||
        (st = mt_op_eye(n, n, A->dtype, mt_tensor_device(A), false, I)) ||
        (st = mt_op_matmul(*As, *As, A2)) || (st = mt_op_matmul(*A2, *A2, A4)) ||
        (st = mt_op_matmul(*A4, *A2, A6))) {
        goto out_release;
    }
    mt_tensor *X[4] = {*A6, *A4, *A2, *I};
    /* U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I) */
    /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    if ((st = combination(&p, X, (double[4]){b[13], b[11], b[9], 0}, in_u)) ||
        (st = mt_op_matmul(*A6, *in_u, mu)) ||
        (st = combination(&p, X, (double[4]){b[7], b[5], b[3], b[1]}, pu)) ||
        (st = mt_op_add(*pu, *mu, mt_scalar_float(1), sum_u)) ||
        (st = mt_op_matmul(*As, *sum_u, U)) ||
        (st = combination(&p, X, (double[4]){b[12], b[10], b[8], 0}, in_v)) ||
        (st = mt_op_matmul(*A6, *in_v, mv)) ||
        (st = combination(&p, X, (double[4]){b[6], b[4], b[2], b[0]}, V)) ||
        (st = mt_op_add(*V, *mv, mt_scalar_float(1), sum_v)) ||
        (st = mt_op_add(*sum_v, *U, mt_scalar_float(1), num)) ||
        (st = mt_op_sub(*sum_v, *U, mt_scalar_float(1), den))) {
        goto out_release;
    }
    mt_tensor *r = NULL;
    if ((st = mt_op_linalg_solve(*den, *num, true, &r))) {
        goto out_release;
    }
    for (int k = 0; k < s && st == MT_OK; k++) {
        mt_tensor *sq = NULL;
        st = mt_op_matmul(r, r, &sq);
        mt_tensor_release(r);
        r = sq;
    }
    a->out[0] = r;
out_release:
    mt_temps_clear(&p);
    return st;
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
    mt_temps p = {0};
    mt_tensor **lu = mt_temp(&p), **piv = mt_temp(&p), **info = mt_temp(&p);
    mt_status st = mt_op_linalg_lu_factor_ex(a->t[0], a->b[0], false, lu, piv, info);
    if (st == MT_OK) {
        st = mt_op_lu_unpack(*lu, *piv, true, true, &a->out[0], &a->out[1], &a->out[2]);
    }
    mt_temps_clear(&p);
    return st;
}

// torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, b)
mt_status
mt_composite_lu_solve(mt_args *a)
{
    return mt_op_linalg_lu_solve(a->t[1], a->t[2], a->t[0], true, false, &a->out[0]);
}
