/* Backward formulas of the statistics and linear algebra ops: PyTorch's
 * derivatives.yaml and FunctionsManual.cpp for real matrices, written in ops (so they run on any
 * device the ops do, and can be differentiated again with create_graph).
 *
 * Notation: X^T is the transpose of the last two dims, A (*, m, n) a batch of matrices. */
#include <string.h>

#include "autograd/formulas.h"
#include "ops/temps.h"

/* ---- small matrix helpers ---- */

static mt_status
mT(mt_tensor *x, mt_tensor **out)
{
    return mt_op_transpose(x, -2, -1, out);
}

/* the identity (k, k) in x's dtype and device */
static mt_status
eye_like(const mt_tensor *x, int64_t k, mt_tensor **out)
{
    return mt_op_eye(k, k, x->dtype, mt_tensor_device(x), false, out);
}

/* (*, k) -> (*, k, k) with v on the diagonal */
static mt_status
diag_embed(mt_temps *p, mt_tensor *v, mt_tensor **out)
{
    mt_tensor **col = mt_temp(p), **I = mt_temp(p);
    mt_status st = mt_op_unsqueeze(v, -1, col);
    if (st == MT_OK && (st = eye_like(v, v->sizes[v->ndim - 1], I)) == MT_OK) {
        st = mt_op_mul(*col, *I, out);
    }
    return st;
}

/* *out = x * scale(k) along the last dims: x (*, k, k) times v (*, k) as a row (row) or a
 * column (!row) */
static mt_status
scale_by(mt_temps *p, mt_tensor *x, mt_tensor *v, bool row, mt_tensor **out)
{
    mt_tensor **u = mt_temp(p);
    mt_status st = mt_op_unsqueeze(v, row ? -2 : -1, u);
    return st ? st : mt_op_mul(x, *u, out);
}

/* x - x^T */
static mt_status
skew(mt_temps *p, mt_tensor *x, mt_tensor **out)
{
    mt_tensor **t = mt_temp(p);
    mt_status st = mT(x, t);
    return st ? st : mt_op_sub(x, *t, mt_scalar_int(1), out);
}

/* E (*, k, k): v_k - v_j off the diagonal (v as given: S^2 for the SVD, L for eigh), 1 on it */
static mt_status
gaps(mt_temps *p, mt_tensor *v, mt_tensor **out)
{
    mt_tensor **r = mt_temp(p), **c = mt_temp(p), **d = mt_temp(p), **I = mt_temp(p);
    mt_status st;
    if ((st = mt_op_unsqueeze(v, -2, r)) || (st = mt_op_unsqueeze(v, -1, c)) ||
        (st = mt_op_sub(*r, *c, mt_scalar_int(1), d)) ||
        (st = eye_like(v, v->sizes[v->ndim - 1], I))) {
        return st;
    }
    return mt_op_add(*d, *I, mt_scalar_int(1), out);
}

/* ---- statistics ---- */

// cummax, cummin (their rows share it): self (any shape); grad (self's shape) summed into the
// positions the running extremum took
mt_status
mt_grad_cumulative_extreme(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0], *idx = NULL, *z = NULL;
    if (self->ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    mt_status st = mt_ags_rerun_indices(n, self, false, &idx);
    if (st == MT_OK && (st = mt_ag_zeros(&n->in_meta[0], &z)) == MT_OK) {
        st = mt_op_scatter_add(z, n->args.i[0], idx, g[0], &gi[0]);
    }
    mt_tensor_clear(&idx);
    mt_tensor_clear(&z);
    return st;
}

/* PyTorch's value_selecting_reduction_backward, for kthvalue, median_dim, nanmedian_dim and
 * mode (their rows share it): the gradient of each row's picked value goes to its index along
 * the dim (keepdim: b[0]). */
mt_status
mt_grad_value_selecting(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_op op = n->formula->op;
    const int dim_slot = op == MT_OP_kthvalue ? 1 : 0; /* the int slot of dim */
    mt_tensor *self = n->saved[0];
    if (self->ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    int d;
    mt_status st = mt_wrap_dim(n->args.i[dim_slot], self->ndim, &d);
    if (st) {
        return st;
    }
    mt_temps p = {0};
    mt_tensor **idx = mt_temp(&p), **z = mt_temp(&p), **gk = mt_temp(&p), **ik = mt_temp(&p);
    mt_tensor *gv = g[0], *iv = NULL;
    if ((st = mt_ags_rerun_indices(n, self, false, idx)) || (st = mt_ag_zeros(&n->in_meta[0], z))) {
        goto out_clear;
    }
    iv = *idx;
    if (!n->args.b[0]) { /* the picked values and indices back at dim, size 1 */
        if ((st = mt_op_unsqueeze(gv, d, gk)) || (st = mt_op_unsqueeze(iv, d, ik))) {
            goto out_clear;
        }
        gv = *gk;
        iv = *ik;
    }
    st = mt_op_scatter(*z, d, iv, gv, NULL, &gi[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}

// self (any shape), result (a 0-dim median); PyTorch's evenly_distribute_backward: grad shared
// by the elements equal to the result (NaN counting as equal to a NaN result)
mt_status
mt_grad_median(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0], *result = n->saved_out[0];
    mt_temps p = {0};
    mt_tensor **eq = mt_temp(&p), **sn = mt_temp(&p), **rn = mt_temp(&p), **both = mt_temp(&p);
    mt_tensor **mask = mt_temp(&p), **count = mt_temp(&p), **share = mt_temp(&p);
    mt_status st;
    if ((st = mt_op_eq(self, result, eq)) || (st = mt_op_isnan(self, sn)) ||
        (st = mt_op_isnan(result, rn)) || (st = mt_op_logical_and(*sn, *rn, both)) ||
        (st = mt_op_logical_or(*eq, *both, mask)) ||
        (st = mt_op_sum(*mask, 0, NULL, false, -1, count)) ||
        (st = mt_op_div(g[0], *count, NULL, share))) {
        goto out_clear;
    }
    st = mt_op_mul(*mask, *share, &gi[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}

/* ---- linear algebra ---- */

// A (*, n, n), inverse X = A^-1; gA = -X^T g X^T
mt_status
mt_grad_linalg_inv_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_temps p = {0};
    mt_tensor **xt = mt_temp(&p), **t1 = mt_temp(&p), **t2 = mt_temp(&p);
    mt_status st;
    if ((st = mT(n->saved_out[0], xt)) == MT_OK && (st = mt_op_matmul(g[0], *xt, t1)) == MT_OK &&
        (st = mt_op_matmul(*xt, *t1, t2)) == MT_OK) {
        st = mt_op_neg(*t2, &gi[0]);
    }
    mt_temps_clear(&p);
    return st;
}

/* *out = d (*) times A^-T (*, n, n): the gradient of det (d = g det) and of log |det| (d = g).
 * A singular matrix has det 0, and so gets 0 (PyTorch's LU-based formula gives ~0 too). */
static mt_status
times_inverse_t(mt_temps *p, mt_tensor *A, mt_tensor *d, mt_tensor **out)
{
    mt_tensor **inv = mt_temp(p), **info = mt_temp(p), **it = mt_temp(p), **d1 = mt_temp(p);
    mt_tensor **d2 = mt_temp(p);
    mt_status st;
    if ((st = mt_op_linalg_inv_ex(A, false, inv, info)) || (st = mT(*inv, it)) ||
        (st = mt_op_unsqueeze(d, -1, d1)) || (st = mt_op_unsqueeze(*d1, -1, d2))) {
        return st;
    }
    return mt_op_mul(*d2, *it, out);
}

// A (*, n, n), det (*); gA = g det A^-T
mt_status
mt_grad_linalg_det(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_temps p = {0};
    mt_tensor **d = mt_temp(&p);
    mt_status st = mt_op_mul(g[0], n->saved_out[0], d);
    if (st == MT_OK) {
        st = times_inverse_t(&p, n->saved[0], *d, &gi[0]);
    }
    mt_temps_clear(&p);
    return st;
}

// A (*, n, n); gA = g_logabsdet A^-T (sign is locally constant)
mt_status
mt_grad_linalg_slogdet(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_temps p = {0};
    mt_status st = times_inverse_t(&p, n->saved[0], g[1], &gi[0]);
    mt_temps_clear(&p);
    return st;
}

/* A solve's gradient of A: -gB X^T (A X = B) or -X^T gB (X A = B) */
static mt_status
solve_grad_a(mt_temps *p, mt_tensor *gb, mt_tensor *X, bool left, mt_tensor **out)
{
    mt_tensor **xt = mt_temp(p), **prod = mt_temp(p);
    mt_status st;
    if ((st = mT(X, xt)) ||
        (st = left ? mt_op_matmul(gb, *xt, prod) : mt_op_matmul(*xt, gb, prod))) {
        return st;
    }
    return mt_op_neg(*prod, out);
}

// A (*, n, n), X the solution of A X = B (left) or X A = B; gB = solve(A^T, g, left),
// gA = -gB X^T (left) or -X^T gB, vectors taken as columns
mt_status
mt_grad_linalg_solve(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *A = n->saved[0], *X = n->saved_out[0];
    const bool left = n->args.b[0];
    bool vector = X->ndim == 1;
    if (!vector && X->ndim == A->ndim - 1) {
        vector = true;
        for (int d = 0; d < X->ndim; d++) {
            vector = vector && X->sizes[d] == A->sizes[d];
        }
    }
    mt_temps p = {0};
    mt_tensor **at = mt_temp(&p), **gb = mt_temp(&p), **gbm = mt_temp(&p), **xm = mt_temp(&p);
    mt_tensor *gbv = NULL, *xv = X;
    mt_status st;
    if ((st = mT(A, at)) || (st = mt_op_linalg_solve(*at, g[0], left, gb))) {
        goto out_clear;
    }
    gbv = *gb;
    if (vector) {
        if ((st = mt_op_unsqueeze(*gb, -1, gbm)) || (st = mt_op_unsqueeze(X, -1, xm))) {
            goto out_clear;
        }
        gbv = *gbm;
        xv = *xm;
    }
    if (n->edges[0].node && (st = solve_grad_a(&p, gbv, xv, left, &gi[0]))) {
        goto out_clear;
    }
    if (n->edges[1].node) {
        gi[1] = mt_tensor_retain(*gb);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

// A (*, n, n) triangular, X the solution; gB = solve_triangular(A^T, g), gA = -gB X^T (left) or
// -X^T gB, kept to A's triangle (without its diagonal when unitriangular)
mt_status
mt_grad_linalg_solve_triangular(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *A = n->saved[0], *X = n->saved_out[0];
    const bool upper = n->args.b[0], left = n->args.b[1], unit = n->args.b[2];
    mt_temps p = {0};
    mt_tensor **at = mt_temp(&p), **gb = mt_temp(&p), **neg = mt_temp(&p);
    mt_status st;
    if ((st = mT(A, at)) ||
        (st = mt_op_linalg_solve_triangular(*at, g[0], !upper, left, unit, gb))) {
        goto out_clear;
    }
    if (n->edges[0].node) {
        if ((st = solve_grad_a(&p, *gb, X, left, neg)) ||
            (st = upper ? mt_op_triu(*neg, unit ? 1 : 0, &gi[0])
                        : mt_op_tril(*neg, unit ? -1 : 0, &gi[0]))) {
            goto out_clear;
        }
    }
    if (n->edges[1].node) {
        gi[1] = mt_tensor_retain(*gb);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

// L (*, n, n), A = L L^T (U = L^T when upper); gA = L^-T Phi(tril(L^T gL)) L^-1 with
// Phi(X) = (X + tril(X, -1)^T) / 2, symmetric (PyTorch's cholesky_backward)
mt_status
mt_grad_linalg_cholesky_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const bool upper = n->args.b[0];
    mt_temps p = {0};
    mt_tensor **lt = mt_temp(&p), **gt = mt_temp(&p), **lh = mt_temp(&p), **prod = mt_temp(&p);
    mt_tensor **lo = mt_temp(&p), **strict = mt_temp(&p), **st_t = mt_temp(&p), **sum = mt_temp(&p);
    mt_tensor **half = mt_temp(&p), **left = mt_temp(&p);
    mt_tensor *L = n->saved_out[0], *gL = g[0];
    mt_status st;
    if (upper) {
        if ((st = mT(L, lt)) || (st = mT(gL, gt))) {
            goto out_clear;
        }
        L = *lt;
        gL = *gt;
    }
    if ((st = mT(L, lh)) || (st = mt_op_matmul(*lh, gL, prod)) || (st = mt_op_tril(*prod, 0, lo)) ||
        (st = mt_op_tril(*lo, -1, strict)) || (st = mT(*strict, st_t)) ||
        (st = mt_op_add(*lo, *st_t, mt_scalar_int(1), sum)) ||
        (st = mt_ag_scale(*sum, 0.5, half)) ||
        (st = mt_op_linalg_solve_triangular(*lh, *half, true, true, false, left))) {
        goto out_clear;
    }
    st = mt_op_linalg_solve_triangular(L, *left, false, false, false, &gi[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}

/* X + X^T with the diagonal halved: X + X^T - diag(X) (PyTorch's syminvadj) */
static mt_status
syminvadj(mt_temps *p, mt_tensor *x, mt_tensor **out)
{
    mt_tensor **t = mt_temp(p), **s = mt_temp(p), **I = mt_temp(p), **dg = mt_temp(p);
    mt_status st;
    if ((st = mT(x, t)) || (st = mt_op_add(x, *t, mt_scalar_int(1), s)) ||
        (st = eye_like(x, x->sizes[x->ndim - 1], I)) || (st = mt_op_mul(x, *I, dg))) {
        return st;
    }
    return mt_op_sub(*s, *dg, mt_scalar_int(1), out);
}

// A (*, m, n) = Q R; PyTorch's linalg_qr_backward: with M = gR R^T - Q^T gQ,
// m >= n: gA = (Q syminvadj(triu(M)) + gQ) R^-T;
// m < n:  gA = [Q tril(M^T - M) R1^-T, 0] + Q gR, R1 the leading m x m block of R
mt_status
mt_grad_linalg_qr(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const char *mode = n->args.str[0];
    mt_tensor *Q = n->saved_out[0], *R = n->saved_out[1];
    if (strcmp(mode, "r") == 0) {
        return mt_fail(MT_ERUNTIME,
                       "The derivative of linalg.qr depends on Q, which is not computed when "
                       "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                       "differentiate through linalg.qr.");
    }
    const int64_t m = Q->sizes[Q->ndim - 2], nc = R->sizes[R->ndim - 1];
    if (strcmp(mode, "complete") == 0 && m > nc) {
        return mt_fail(MT_ERUNTIME, "The QR decomposition is not differentiable when "
                                    "mode='complete' and nrows > ncols.");
    }
    mt_temps p = {0};
    mt_tensor **rt = mt_temp(&p), **grr = mt_temp(&p), **qt = mt_temp(&p), **qg = mt_temp(&p);
    mt_tensor **M = mt_temp(&p), **tri = mt_temp(&p), **sym = mt_temp(&p), **qs = mt_temp(&p);
    mt_tensor **acc = mt_temp(&p);
    mt_status st;
    if ((st = mT(R, rt)) || (st = mt_op_matmul(g[1], *rt, grr)) || (st = mT(Q, qt)) ||
        (st = mt_op_matmul(*qt, g[0], qg)) || (st = mt_op_sub(*grr, *qg, mt_scalar_int(1), M))) {
        goto out_clear;
    }
    if (m >= nc) {
        if ((st = mt_op_triu(*M, 0, tri)) || (st = syminvadj(&p, *tri, sym)) ||
            (st = mt_op_matmul(Q, *sym, qs)) ||
            (st = mt_op_add(*qs, g[0], mt_scalar_int(1), acc))) {
            goto out_clear;
        }
        st = mt_op_linalg_solve_triangular(*rt, *acc, false, false, false, &gi[0]);
    } else {
        mt_tensor **mt = mt_temp(&p), **d = mt_temp(&p), **r1 = mt_temp(&p), **r1t = mt_temp(&p);
        mt_tensor **part = mt_temp(&p), **zeros = mt_temp(&p), **full = mt_temp(&p);
        mt_tensor **qgr = mt_temp(&p);
        int64_t shape[MT_MAX_DIMS];
        memcpy(shape, R->sizes, sizeof(int64_t) * (size_t)R->ndim);
        shape[R->ndim - 1] = nc - m;
        if ((st = mT(*M, mt)) || (st = mt_op_sub(*mt, *M, mt_scalar_int(1), d)) ||
            (st = mt_op_tril(*d, 0, tri)) || (st = mt_op_matmul(Q, *tri, qs)) ||
            (st = mt_op_narrow(R, -1, 0, m, r1)) || (st = mT(*r1, r1t)) ||
            (st = mt_op_linalg_solve_triangular(*r1t, *qs, false, false, false, part)) ||
            (st = mt_op_zeros(R->ndim, shape, R->dtype, mt_tensor_device(R), false, zeros)) ||
            (st = mt_op_cat(2, (mt_tensor *[]){*part, *zeros}, -1, full)) ||
            (st = mt_op_matmul(Q, g[1], qgr))) {
            goto out_clear;
        }
        st = mt_op_add(*full, *qgr, mt_scalar_int(1), &gi[0]);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

/* svd_backward's term for a non-square A on the longer side, Q = U (left, m > n) or Vh (m < n),
 * gQ its gradient: left, Q body + (I - Q Q^T) gQ S^-1; else body Q + S^-1 gQ (I - Q^T Q). */
static mt_status
svd_side(mt_temps *p, mt_tensor *Q, mt_tensor *body, mt_tensor *gQ, mt_tensor *S, bool left,
         mt_tensor **out)
{
    mt_tensor **qb = mt_temp(p), **gs = mt_temp(p), **qt = mt_temp(p), **t = mt_temp(p);
    mt_tensor **proj = mt_temp(p), **sum = mt_temp(p), **inv = mt_temp(p);
    mt_status st;
    if ((st = left ? mt_op_matmul(Q, body, qb) : mt_op_matmul(body, Q, qb)) ||
        (st = mt_op_reciprocal(S, inv)) || (st = scale_by(p, gQ, *inv, left, gs)) ||
        (st = mT(Q, qt)) || (st = left ? mt_op_matmul(*qt, *gs, t) : mt_op_matmul(*gs, *qt, t)) ||
        (st = left ? mt_op_matmul(Q, *t, proj) : mt_op_matmul(*t, Q, proj)) ||
        (st = mt_op_add(*qb, *gs, mt_scalar_int(1), sum))) {
        return st;
    }
    return mt_op_sub(*sum, *proj, mt_scalar_int(1), out);
}

// A (*, m, n) = U diag(S) Vh, k = min(m, n); PyTorch's svd_backward for real matrices (distinct
// singular values assumed; U and Vh narrowed to k columns / rows with full_matrices):
// inner = (skew(U^T gU) S_row + S_col skew(Vh gVh^T)) / E + diag(gS), E_jk = S_k^2 - S_j^2;
// gA = U inner Vh, plus (I - U U^T) gU S^-1 Vh for m > n, U S^-1 gVh (I - V Vh) for m < n
mt_status
mt_grad__linalg_svd(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (!n->args.b[1]) {
        return mt_fail(MT_ERUNTIME, "linalg.svd: the backward needs U and Vh: call it with "
                                    "compute_uv=True");
    }
    mt_tensor *U = n->saved_out[0], *S = n->saved_out[1], *Vh = n->saved_out[2];
    mt_tensor *gU = g[0], *gS = g[1], *gVh = g[2];
    const bool has_u = n->grad_given[0], has_v = n->grad_given[2];
    const int64_t m = U->sizes[U->ndim - 2], nc = Vh->sizes[Vh->ndim - 1],
                  k = S->sizes[S->ndim - 1];
    mt_temps p = {0};
    mt_status st = MT_OK;
    if (n->args.b[0]) { /* full_matrices: the first k columns of U, rows of Vh */
        mt_tensor **u = mt_temp(&p), **v = mt_temp(&p), **gu = mt_temp(&p), **gv = mt_temp(&p);
        if ((st = mt_op_narrow(U, -1, 0, k, u)) || (st = mt_op_narrow(Vh, -2, 0, k, v)) ||
            (st = mt_op_narrow(gU, -1, 0, k, gu)) || (st = mt_op_narrow(gVh, -2, 0, k, gv))) {
            goto out_clear;
        }
        U = *u;
        Vh = *v;
        gU = *gu;
        gVh = *gv;
    }
    mt_tensor **inner = mt_temp(&p), **sv = mt_temp(&p);
    mt_tensor *body = NULL;
    if (!has_u && !has_v) { /* svdvals: U diag(gS) Vh */
        if ((st = scale_by(&p, Vh, gS, false, sv))) {
            goto out_clear;
        }
        st = mt_op_matmul(U, *sv, &gi[0]);
        goto out_clear;
    }
    {
        mt_tensor **ut = mt_temp(&p), **utgu = mt_temp(&p), **sk_u = mt_temp(&p);
        mt_tensor **gvt = mt_temp(&p), **vgv = mt_temp(&p), **sk_v = mt_temp(&p);
        mt_tensor **a1 = mt_temp(&p), **a2 = mt_temp(&p), **num = mt_temp(&p), **s2 = mt_temp(&p);
        mt_tensor **quot = mt_temp(&p), **dg = mt_temp(&p), **E = mt_temp(&p);
        /* a gradient that did not reach U (Vh) is zeros: its term adds nothing */
        if ((st = mT(U, ut)) || (st = mt_op_matmul(*ut, gU, utgu)) ||
            (st = skew(&p, *utgu, sk_u)) || (st = mT(gVh, gvt)) ||
            (st = mt_op_matmul(Vh, *gvt, vgv)) || (st = skew(&p, *vgv, sk_v)) ||
            (st = scale_by(&p, *sk_u, S, true, a1)) || (st = scale_by(&p, *sk_v, S, false, a2)) ||
            (st = mt_op_add(*a1, *a2, mt_scalar_int(1), num)) || (st = mt_op_mul(S, S, s2)) ||
            (st = gaps(&p, *s2, E)) || (st = mt_op_div(*num, *E, NULL, quot)) ||
            (st = diag_embed(&p, gS, dg)) ||
            (st = mt_op_add(*quot, *dg, mt_scalar_int(1), inner))) {
            goto out_clear;
        }
    }
    body = *inner;
    if (m > nc && has_u) { /* [U inner + (I - U U^T) gU S^-1] Vh */
        mt_tensor **s2 = mt_temp(&p);
        if ((st = svd_side(&p, U, body, gU, S, true, s2))) {
            goto out_clear;
        }
        st = mt_op_matmul(*s2, Vh, &gi[0]);
    } else if (m < nc && has_v) { /* U [inner Vh + S^-1 gVh (I - V Vh)] */
        mt_tensor **s2 = mt_temp(&p);
        if ((st = svd_side(&p, Vh, body, gVh, S, false, s2))) {
            goto out_clear;
        }
        st = mt_op_matmul(U, *s2, &gi[0]);
    } else {
        mt_tensor **iv = mt_temp(&p);
        if ((st = mt_op_matmul(body, Vh, iv))) {
            goto out_clear;
        }
        st = mt_op_matmul(U, *iv, &gi[0]);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

// A (*, n, n) symmetric = V diag(L) V^T; PyTorch's linalg_eig_backward (hermitian):
// gA = V (skew(V^T gV) / 2 / E + diag(gL)) V^T, E_ij = L_j - L_i (1 on the diagonal)
mt_status
mt_grad__linalg_eigh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (!n->args.b[0]) {
        return mt_fail(MT_ERUNTIME, "linalg.eigh: the backward needs the eigenvectors: call it "
                                    "with compute_v=True");
    }
    mt_tensor *L = n->saved_out[0], *V = n->saved_out[1];
    mt_temps p = {0};
    mt_tensor **vt = mt_temp(&p), **inner = mt_temp(&p), **right = mt_temp(&p);
    mt_status st = mT(V, vt);
    if (st) {
        goto out_clear;
    }
    if (!n->grad_given[1]) { /* eigenvalues only: V diag(gL) V^T */
        if ((st = scale_by(&p, V, g[0], true, inner))) {
            goto out_clear;
        }
        st = mt_op_matmul(*inner, *vt, &gi[0]);
        goto out_clear;
    }
    {
        mt_tensor **vg = mt_temp(&p), **sk = mt_temp(&p), **half = mt_temp(&p), **E = mt_temp(&p);
        mt_tensor **quot = mt_temp(&p), **dg = mt_temp(&p);
        if ((st = mt_op_matmul(*vt, g[1], vg)) || (st = skew(&p, *vg, sk)) ||
            (st = mt_ag_scale(*sk, 0.5, half)) || (st = gaps(&p, L, E)) ||
            (st = mt_op_div(*half, *E, NULL, quot)) || (st = diag_embed(&p, g[0], dg)) ||
            (st = mt_op_add(*quot, *dg, mt_scalar_int(1), inner))) {
            goto out_clear;
        }
    }
    if ((st = mt_op_matmul(*inner, *vt, right)) == MT_OK) {
        st = mt_op_matmul(V, *right, &gi[0]);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

// A (*, n, n) = V diag(L) V^-1, L and V complex; PyTorch's linalg_eig_backward, one kernel
// (cpu/linalg_eig.c), its real part for a real A
mt_status
mt_grad__linalg_eig(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    if (!n->args.b[0]) {
        return mt_fail(MT_ERUNTIME, "linalg.eig: the backward needs the eigenvectors: call it "
                                    "with compute_v=True");
    }
    return mt_op__linalg_eig_backward(n->grad_given[0] ? g[0] : NULL,
                                      n->grad_given[1] ? g[1] : NULL, n->saved_out[0],
                                      n->saved_out[1], !mt_dtype_is_complex(n->in_meta[0].dtype),
                                      &gi[0]);
}

// A (*, m, n), P = pinv(A) (*, n, m); PyTorch's pinv_backward
mt_status
mt_grad_linalg_pinv(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *A = n->saved[0], *P = n->saved_out[0];
    const int64_t m = A->sizes[A->ndim - 2], nc = A->sizes[A->ndim - 1];
    mt_temps p = {0};
    mt_tensor **pt = mt_temp(&p), **gt = mt_temp(&p), **K = mt_temp(&p), **t1 = mt_temp(&p);
    mt_tensor **t2 = mt_temp(&p), **t3 = mt_temp(&p), **t4 = mt_temp(&p), **t5 = mt_temp(&p);
    mt_tensor **t6 = mt_temp(&p), **t7 = mt_temp(&p), **t8 = mt_temp(&p);
    mt_tensor **s1 = mt_temp(&p), **s2 = mt_temp(&p), **s3 = mt_temp(&p);
    mt_status st;
    if ((st = mT(P, pt)) || (st = mT(g[0], gt))) {
        goto out_clear;
    }
    if (m <= nc) {
        /* K = g^T P; -(P K)^T + K P^T - (A P) K P^T + (P^T P)(g^T - K A) */
        mt_tensor **kpt = mt_temp(&p);
        if ((st = mt_op_matmul(*gt, P, K)) || (st = mt_op_matmul(*K, *pt, kpt)) ||
            (st = mt_op_matmul(P, *K, t1)) || (st = mT(*t1, t2)) || (st = mt_op_matmul(A, P, t3)) ||
            (st = mt_op_matmul(*t3, *kpt, t4)) || (st = mt_op_matmul(*pt, P, t5)) ||
            (st = mt_op_matmul(*K, A, t6)) || (st = mt_op_sub(*gt, *t6, mt_scalar_int(1), t7)) ||
            (st = mt_op_matmul(*t5, *t7, t8)) ||
            (st = mt_op_sub(*kpt, *t2, mt_scalar_int(1), s1)) ||
            (st = mt_op_sub(*s1, *t4, mt_scalar_int(1), s2))) {
            goto out_clear;
        }
        st = mt_op_add(*s2, *t8, mt_scalar_int(1), &gi[0]);
    } else {
        /* K = P g^T; -(K P)^T + (g^T - A K) P P^T + P^T K - P^T K P A */
        mt_tensor **ptk = mt_temp(&p);
        if ((st = mt_op_matmul(P, *gt, K)) || (st = mt_op_matmul(*pt, *K, ptk)) ||
            (st = mt_op_matmul(*K, P, t1)) || (st = mT(*t1, t2)) ||
            (st = mt_op_matmul(A, *K, t3)) || (st = mt_op_sub(*gt, *t3, mt_scalar_int(1), t4)) ||
            (st = mt_op_matmul(*t4, P, t5)) || (st = mt_op_matmul(*t5, *pt, t6)) ||
            (st = mt_op_matmul(*ptk, P, t7)) || (st = mt_op_matmul(*t7, A, t8)) ||
            (st = mt_op_sub(*t6, *t2, mt_scalar_int(1), s1)) ||
            (st = mt_op_add(*s1, *ptk, mt_scalar_int(1), s2)) ||
            (st = mt_op_sub(*s2, *t8, mt_scalar_int(1), s3))) {
            goto out_clear;
        }
        gi[0] = mt_tensor_retain(*s3);
    }
out_clear:
    mt_temps_clear(&p);
    return st;
}

/* ---- LU ---- */

/* PyTorch's linalg_lu_backward for real matrices: A (*, m, n) = P L U, L (*, m, k) unit lower,
 * U (*, k, n) upper, k = min(m, n), gL and gU their gradients.
 * m == n: gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T;
 * m < n (U = [U1 U2]): gA = P L^-T [tril(L^T gL - triu(gU) U^T, -1) U1^-T + triu(gU1), gU2];
 * m > n (L = [L1; L2]): gA = P [L1^-T triu(gU U^T - L^T tril(gL, -1)) + tril(gL1, -1); gL2] U^-T */
static mt_status
lu_backward(mt_temps *p, mt_tensor *gL, mt_tensor *gU, mt_tensor *P, mt_tensor *L, mt_tensor *U,
            mt_tensor **out)
{
    const int64_t m = L->sizes[L->ndim - 2], nc = U->sizes[U->ndim - 1], k = m < nc ? m : nc;
    mt_tensor **lt = mt_temp(p), **ut = mt_temp(p), **t1 = mt_temp(p), **t2 = mt_temp(p);
    mt_tensor **t3 = mt_temp(p), **t4 = mt_temp(p), **s = mt_temp(p), **x1 = mt_temp(p);
    mt_tensor **x2 = mt_temp(p), **part = mt_temp(p), **tp = mt_temp(p), **pt = mt_temp(p);
    mt_tensor **y = mt_temp(p), **rest = mt_temp(p), **z = mt_temp(p), **tr = mt_temp(p);
    mt_status st;
    if ((st = mT(L, lt)) || (st = mT(U, ut))) {
        return st;
    }
    if (m == nc) {
        if ((st = mt_op_matmul(*lt, gL, t1)) || (st = mt_op_tril(*t1, -1, t2)) ||
            (st = mt_op_matmul(gU, *ut, t3)) || (st = mt_op_triu(*t3, 0, t4)) ||
            (st = mt_op_add(*t2, *t4, mt_scalar_int(1), s)) ||
            (st = mt_op_linalg_solve_triangular(*ut, *s, false, false, false, x1)) ||
            (st = mt_op_linalg_solve_triangular(*lt, *x1, true, true, true, x2))) {
            return st;
        }
    } else if (m < nc) {
        if ((st = mt_op_matmul(*lt, gL, t1)) || (st = mt_op_triu(gU, 0, t2)) ||
            (st = mt_op_matmul(*t2, *ut, t3)) || (st = mt_op_sub(*t1, *t3, mt_scalar_int(1), t4)) ||
            (st = mt_op_tril(*t4, -1, s)) || (st = mt_op_narrow(U, -1, 0, k, part)) ||
            (st = mT(*part, tp)) ||
            (st = mt_op_linalg_solve_triangular(*tp, *s, false, false, false, x1)) ||
            (st = mt_op_narrow(gU, -1, 0, k, pt)) || (st = mt_op_triu(*pt, 0, tr)) ||
            (st = mt_op_add(*x1, *tr, mt_scalar_int(1), y)) ||
            (st = mt_op_narrow(gU, -1, k, nc - k, rest)) ||
            (st = mt_op_cat(2, (mt_tensor *[]){*y, *rest}, -1, z)) ||
            (st = mt_op_linalg_solve_triangular(*lt, *z, true, true, true, x2))) {
            return st;
        }
    } else {
        if ((st = mt_op_matmul(gU, *ut, t1)) || (st = mt_op_tril(gL, -1, t2)) ||
            (st = mt_op_matmul(*lt, *t2, t3)) || (st = mt_op_sub(*t1, *t3, mt_scalar_int(1), t4)) ||
            (st = mt_op_triu(*t4, 0, s)) || (st = mt_op_narrow(L, -2, 0, k, part)) ||
            (st = mT(*part, tp)) ||
            (st = mt_op_linalg_solve_triangular(*tp, *s, true, true, true, x1)) ||
            (st = mt_op_narrow(gL, -2, 0, k, pt)) || (st = mt_op_tril(*pt, -1, tr)) ||
            (st = mt_op_add(*x1, *tr, mt_scalar_int(1), y)) ||
            (st = mt_op_narrow(gL, -2, k, m - k, rest)) ||
            (st = mt_op_cat(2, (mt_tensor *[]){*y, *rest}, -2, z)) ||
            (st = mt_op_linalg_solve_triangular(*ut, *z, false, false, false, x2))) {
            return st;
        }
    }
    return mt_op_matmul(P, *x2, out);
}

// A (*, m, n); LU, pivots of lu_factor_ex: PyTorch's lu_factor_ex_backward, the gradient of LU
// split into L's part (its first k columns) and U's (its first k rows)
mt_status
mt_grad_linalg_lu_factor_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *LU = n->saved_out[0];
    const int64_t m = LU->sizes[LU->ndim - 2], nc = LU->sizes[LU->ndim - 1], k = m < nc ? m : nc;
    mt_temps p = {0};
    mt_tensor **P = mt_temp(&p), **L = mt_temp(&p), **U = mt_temp(&p), **gL = mt_temp(&p);
    mt_tensor **gU = mt_temp(&p);
    mt_status st;
    if ((st = mt_op_lu_unpack(LU, n->saved_out[1], true, true, P, L, U)) == MT_OK &&
        (st = mt_op_narrow(g[0], -1, 0, k, gL)) == MT_OK &&
        (st = mt_op_narrow(g[0], -2, 0, k, gU)) == MT_OK) {
        st = lu_backward(&p, *gL, *gU, *P, *L, *U, &gi[0]);
    }
    mt_temps_clear(&p);
    return st;
}

// LU_data (*, m, n); L (*, m, k), U (*, k, n): gLU = tril(gL, -1) + triu(gU), each placed in
// the (m, n) matrix (PyTorch's lu_unpack_backward); zeros without unpack_data
mt_status
mt_grad_lu_unpack(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_meta *in = &n->in_meta[0];
    if (!n->args.b[0]) {
        return mt_ag_zeros(in, &gi[0]);
    }
    const int64_t m = in->sizes[in->ndim - 2], nc = in->sizes[in->ndim - 1];
    mt_temps p = {0};
    mt_tensor **lo = mt_temp(&p), **up = mt_temp(&p), **zeros = mt_temp(&p), **full = mt_temp(&p);
    mt_tensor *gL = g[1], *gU = g[2];
    mt_status st;
    if ((st = mt_op_tril(gL, -1, lo)) || (st = mt_op_triu(gU, 0, up))) {
        goto out_clear;
    }
    if (m == nc) {
        st = mt_op_add(*lo, *up, mt_scalar_int(1), &gi[0]);
        goto out_clear;
    }
    /* the narrower of the two gets zeros: L's columns past m (m < n), U's rows past n (m > n) */
    mt_tensor *narrow = m < nc ? *lo : *up, *wide = m < nc ? *up : *lo;
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, narrow->sizes, sizeof(int64_t) * (size_t)narrow->ndim);
    shape[narrow->ndim - (m < nc ? 1 : 2)] = m < nc ? nc - m : m - nc;
    if ((st = mt_op_zeros(narrow->ndim, shape, narrow->dtype, mt_tensor_device(narrow), false,
                          zeros)) ||
        (st = mt_op_cat(2, (mt_tensor *[]){narrow, *zeros}, m < nc ? -1 : -2, full))) {
        goto out_clear;
    }
    st = mt_op_add(wide, *full, mt_scalar_int(1), &gi[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}

// LU, pivots of A (*, n, n), X the solution of op(A) X = B (left) or X op(A) = B, op(A) = A^T
// with adjoint. gB = lu_solve(LU, pivots, g, left, !adjoint); gA = -gB X^T (left), -X gB^T (left,
// adjoint), -X^T gB, -gB^T X (adjoint); then through A = P L U:
// gLU = tril(P^T gA U^T, -1) + triu(L^T P^T gA)
mt_status
mt_grad_linalg_lu_solve(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *LU = n->saved[0], *piv = n->saved[1], *X = n->saved_out[0];
    const bool left = n->args.b[0], adjoint = n->args.b[1];
    mt_temps p = {0};
    mt_tensor **gB = mt_temp(&p), **xt = mt_temp(&p), **gbt = mt_temp(&p), **prod = mt_temp(&p);
    mt_tensor **gA = mt_temp(&p), **P = mt_temp(&p), **L = mt_temp(&p), **U = mt_temp(&p);
    mt_tensor **pt = mt_temp(&p), **pg = mt_temp(&p), **ut = mt_temp(&p), **lt = mt_temp(&p);
    mt_tensor **t1 = mt_temp(&p), **t2 = mt_temp(&p), **lo = mt_temp(&p), **up = mt_temp(&p);
    mt_status st;
    if ((st = mt_op_linalg_lu_solve(LU, piv, g[0], left, !adjoint, gB))) {
        goto out_clear;
    }
    if (n->edges[1].node) {
        gi[1] = mt_tensor_retain(*gB);
    }
    if (!n->edges[0].node) {
        goto out_clear;
    }
    if ((st = mT(X, xt)) || (st = mT(*gB, gbt)) ||
        (st = left ? (adjoint ? mt_op_matmul(X, *gbt, prod) : mt_op_matmul(*gB, *xt, prod))
                   : (adjoint ? mt_op_matmul(*gbt, X, prod) : mt_op_matmul(*xt, *gB, prod))) ||
        (st = mt_op_neg(*prod, gA)) || (st = mt_op_lu_unpack(LU, piv, true, true, P, L, U)) ||
        (st = mT(*P, pt)) || (st = mt_op_matmul(*pt, *gA, pg)) || (st = mT(*U, ut)) ||
        (st = mT(*L, lt)) || (st = mt_op_matmul(*pg, *ut, t1)) || (st = mt_op_tril(*t1, -1, lo)) ||
        (st = mt_op_matmul(*lt, *pg, t2)) || (st = mt_op_triu(*t2, 0, up))) {
        goto out_clear;
    }
    st = mt_op_add(*lo, *up, mt_scalar_int(1), &gi[0]);
out_clear:
    mt_temps_clear(&p);
    return st;
}
