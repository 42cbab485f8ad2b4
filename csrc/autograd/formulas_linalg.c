/* Backward formulas of the statistics and linear algebra ops: PyTorch's
 * derivatives.yaml and FunctionsManual.cpp for real matrices, written in ops (so they run on any
 * device the ops do, and can be differentiated again with create_graph).
 *
 * Notation: X^T is the transpose of the last two dims, A (*, m, n) a batch of matrices. */
#include <string.h>

#include "autograd/formula_chain.h"

/* ---- small matrix helpers, steps of a chain ---- */

/* x^T */
static mt_tensor *
mT(tmp *s, mt_tensor *x)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_transpose(x, -2, -1, &r), &r);
}

static mt_tensor *
mm(tmp *s, mt_tensor *a, mt_tensor *b)
{
    return bin(s, MT_OP_matmul, a, b);
}

static mt_tensor *
tril(tmp *s, mt_tensor *x, int64_t k)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_tril(x, k, &r), &r);
}

static mt_tensor *
triu(tmp *s, mt_tensor *x, int64_t k)
{
    mt_tensor *r = NULL;
    return failed(s, x, x) ? NULL : own(s, mt_op_triu(x, k, &r), &r);
}

/* X with A X = B (left) or X A = B, A triangular (upper or lower, unit diagonal when unit) */
static mt_tensor *
solve_tri(tmp *s, mt_tensor *A, mt_tensor *B, bool upper, bool left, bool unit)
{
    mt_tensor *r = NULL;
    return failed(s, A, B) ? NULL
                           : own(s, mt_op_linalg_solve_triangular(A, B, upper, left, unit, &r), &r);
}

/* the identity (k, k) in x's dtype and device, k x's last size */
static mt_tensor *
eye_like(tmp *s, mt_tensor *x)
{
    if (failed(s, x, x)) {
        return NULL;
    }
    int64_t k = x->sizes[x->ndim - 1];
    mt_tensor *r = NULL;
    return own(s, mt_op_eye(k, k, x->dtype, mt_tensor_device(x), false, &r), &r);
}

/* (*, k) -> (*, k, k) with v on the diagonal */
static mt_tensor *
diag_embed(tmp *s, mt_tensor *v)
{
    return bin(s, MT_OP_mul, unsqueezed(s, v, -1), eye_like(s, v));
}

/* x * scale(k) along the last dims: x (*, k, k) times v (*, k) as a row (row) or a column
 * (!row) */
static mt_tensor *
scale_by(tmp *s, mt_tensor *x, mt_tensor *v, bool row)
{
    return bin(s, MT_OP_mul, x, unsqueezed(s, v, row ? -2 : -1));
}

/* x - x^T */
static mt_tensor *
skew(tmp *s, mt_tensor *x)
{
    return bin(s, MT_OP_sub, x, mT(s, x));
}

/* E (*, k, k): v_k - v_j off the diagonal (v as given: S^2 for the SVD, L for eigh), 1 on it */
static mt_tensor *
gaps(tmp *s, mt_tensor *v)
{
    mt_tensor *d = bin(s, MT_OP_sub, unsqueezed(s, v, -2), unsqueezed(s, v, -1));
    return bin(s, MT_OP_add, d, eye_like(s, v));
}

/* ---- statistics ---- */

// cummax, cummin (their rows share it): self (any shape); grad (self's shape) summed into the
// positions the running extremum took
mt_status
mt_grad_cumulative_extreme(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0], *r = NULL;
    if (self->ndim == 0) {
        gi[0] = mt_tensor_retain(g[0]);
        return MT_OK;
    }
    tmp s = {0};
    mt_tensor *idx = own(&s, mt_ags_rerun_indices(n, self, false, &r), &r);
    mt_tensor *z = zeros_of(&s, &n->in_meta[0]);
    if (z) {
        s.st = mt_op_scatter_add(z, n->args.i[0], idx, g[0], &gi[0]);
    }
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *iv = own(&s, mt_ags_rerun_indices(n, self, false, &r), &r);
    mt_tensor *z = zeros_of(&s, &n->in_meta[0]), *gv = g[0];
    if (!n->args.b[0]) { /* the picked values and indices back at dim, size 1 */
        gv = unsqueezed(&s, gv, d);
        iv = unsqueezed(&s, iv, d);
    }
    if (!failed(&s, gv, iv)) {
        s.st = mt_op_scatter(z, d, iv, gv, NULL, &gi[0]);
    }
    return finish(&s);
}

// self (any shape), result (a 0-dim median); PyTorch's evenly_distribute_backward: grad shared
// by the elements equal to the result (NaN counting as equal to a NaN result)
mt_status
mt_grad_median(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *mask = eq_or_nan(&s, n->saved[0], n->saved_out[0]), *r = NULL;
    mt_tensor *count = failed(&s, mask, mask)
                           ? NULL
                           : own(&s, mt_op_sum(mask, 0, NULL, false, -1, &r), &r);
    give(&s, bin(&s, MT_OP_mul, mask, bin(&s, MT_OP_div, g[0], count)), &gi[0]);
    return finish(&s);
}

/* ---- linear algebra ---- */

// A (*, n, n), inverse X = A^-1; gA = -X^T g X^T
mt_status
mt_grad_linalg_inv_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *xt = mT(&s, n->saved_out[0]);
    give(&s, un(&s, MT_OP_neg, mm(&s, xt, mm(&s, g[0], xt))), &gi[0]);
    return finish(&s);
}

/* d (*) times A^-T (*, n, n): the gradient of det (d = g det) and of log |det| (d = g). A
 * singular matrix has det 0, and so gets 0 (PyTorch's LU-based formula gives ~0 too). */
static mt_tensor *
times_inverse_t(tmp *s, mt_tensor *A, mt_tensor *d)
{
    mt_tensor *inv = NULL, *info = NULL;
    if (s->st == MT_OK) {
        mt_status st = mt_op_linalg_inv_ex(A, false, &inv, &info);
        inv = own(s, st, &inv);
        own(s, st, &info);
    }
    mt_tensor *it = mT(s, inv);
    return bin(s, MT_OP_mul, unsqueezed(s, unsqueezed(s, d, -1), -1), it);
}

// A (*, n, n), det (*); gA = g det A^-T
mt_status
mt_grad_linalg_det(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *d = bin(&s, MT_OP_mul, g[0], n->saved_out[0]);
    give(&s, times_inverse_t(&s, n->saved[0], d), &gi[0]);
    return finish(&s);
}

// A (*, n, n); gA = g_logabsdet A^-T (sign is locally constant)
mt_status
mt_grad_linalg_slogdet(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    give(&s, times_inverse_t(&s, n->saved[0], g[1]), &gi[0]);
    return finish(&s);
}

/* A solve's gradient of A: -gB X^T (A X = B) or -X^T gB (X A = B) */
static mt_tensor *
solve_grad_a(tmp *s, mt_tensor *gb, mt_tensor *X, bool left)
{
    mt_tensor *xt = mT(s, X);
    return un(s, MT_OP_neg, left ? mm(s, gb, xt) : mm(s, xt, gb));
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
    tmp s = {0};
    mt_tensor *at = mT(&s, A), *r = NULL;
    mt_tensor *gb = failed(&s, at, at) ? NULL : own(&s, mt_op_linalg_solve(at, g[0], left, &r), &r);
    mt_tensor *gbv = gb, *xv = X;
    if (vector) {
        gbv = unsqueezed(&s, gb, -1);
        xv = unsqueezed(&s, X, -1);
    }
    if (wants(n, 0)) {
        give(&s, solve_grad_a(&s, gbv, xv, left), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, gb, &gi[1]);
    }
    return finish(&s);
}

// A (*, n, n) triangular, X the solution; gB = solve_triangular(A^T, g), gA = -gB X^T (left) or
// -X^T gB, kept to A's triangle (without its diagonal when unitriangular)
mt_status
mt_grad_linalg_solve_triangular(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *A = n->saved[0], *X = n->saved_out[0];
    const bool upper = n->args.b[0], left = n->args.b[1], unit = n->args.b[2];
    tmp s = {0};
    mt_tensor *gb = solve_tri(&s, mT(&s, A), g[0], !upper, left, unit);
    if (wants(n, 0)) {
        mt_tensor *neg = solve_grad_a(&s, gb, X, left);
        give(&s, upper ? triu(&s, neg, unit ? 1 : 0) : tril(&s, neg, unit ? -1 : 0), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, gb, &gi[1]);
    }
    return finish(&s);
}

// L (*, n, n), A = L L^T (U = L^T when upper); gA = L^-T Phi(tril(L^T gL)) L^-1 with
// Phi(X) = (X + tril(X, -1)^T) / 2, symmetric (PyTorch's cholesky_backward)
mt_status
mt_grad_linalg_cholesky_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *L = n->saved_out[0], *gL = g[0];
    if (n->args.b[0]) { /* upper */
        L = mT(&s, L);
        gL = mT(&s, gL);
    }
    mt_tensor *lh = mT(&s, L);
    mt_tensor *lo = tril(&s, mm(&s, lh, gL), 0);
    mt_tensor *sum = bin(&s, MT_OP_add, lo, mT(&s, tril(&s, lo, -1)));
    mt_tensor *left = solve_tri(&s, lh, bin(&s, MT_OP_mul, sum, num(&s, 0.5)), true, true, false);
    give(&s, solve_tri(&s, L, left, false, false, false), &gi[0]);
    return finish(&s);
}

/* X + X^T with the diagonal halved: X + X^T - diag(X) (PyTorch's syminvadj) */
static mt_tensor *
syminvadj(tmp *s, mt_tensor *x)
{
    mt_tensor *sum = bin(s, MT_OP_add, x, mT(s, x));
    return bin(s, MT_OP_sub, sum, bin(s, MT_OP_mul, x, eye_like(s, x)));
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
    tmp s = {0};
    mt_tensor *rt = mT(&s, R);
    mt_tensor *grr = mm(&s, g[1], rt);
    mt_tensor *M = bin(&s, MT_OP_sub, grr, mm(&s, mT(&s, Q), g[0]));
    if (m >= nc) {
        mt_tensor *acc = bin(&s, MT_OP_add, mm(&s, Q, syminvadj(&s, triu(&s, M, 0))), g[0]);
        give(&s, solve_tri(&s, rt, acc, false, false, false), &gi[0]);
        return finish(&s);
    }
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, R->sizes, sizeof(int64_t) * (size_t)R->ndim);
    shape[R->ndim - 1] = nc - m;
    mt_tensor *qs = mm(&s, Q, tril(&s, bin(&s, MT_OP_sub, mT(&s, M), M), 0));
    mt_tensor *part = solve_tri(&s, mT(&s, narrowed(&s, R, -1, 0, m)), qs, false, false, false);
    mt_tensor *r = NULL;
    mt_tensor *zeros = s.st ? NULL
                            : own(&s,
                                  mt_op_zeros(R->ndim, shape, R->dtype, mt_tensor_device(R), false,
                                              &r),
                                  &r);
    mt_tensor *full = cat2(&s, part, zeros, -1);
    give(&s, bin(&s, MT_OP_add, full, mm(&s, Q, g[1])), &gi[0]);
    return finish(&s);
}

/* svd_backward's term for a non-square A on the longer side, Q = U (left, m > n) or Vh (m < n),
 * gQ its gradient: left, Q body + (I - Q Q^T) gQ S^-1; else body Q + S^-1 gQ (I - Q^T Q). */
static mt_tensor *
svd_side(tmp *s, mt_tensor *Q, mt_tensor *body, mt_tensor *gQ, mt_tensor *S, bool left)
{
    mt_tensor *qb = left ? mm(s, Q, body) : mm(s, body, Q);
    mt_tensor *gs = scale_by(s, gQ, un(s, MT_OP_reciprocal, S), left);
    mt_tensor *qt = mT(s, Q);
    mt_tensor *t = left ? mm(s, qt, gs) : mm(s, gs, qt);
    mt_tensor *proj = left ? mm(s, Q, t) : mm(s, t, Q);
    return bin(s, MT_OP_sub, bin(s, MT_OP_add, qb, gs), proj);
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
    tmp s = {0};
    if (n->args.b[0]) { /* full_matrices: the first k columns of U, rows of Vh */
        U = narrowed(&s, U, -1, 0, k);
        Vh = narrowed(&s, Vh, -2, 0, k);
        gU = narrowed(&s, gU, -1, 0, k);
        gVh = narrowed(&s, gVh, -2, 0, k);
    }
    if (!has_u && !has_v) { /* svdvals: U diag(gS) Vh */
        give(&s, mm(&s, U, scale_by(&s, Vh, gS, false)), &gi[0]);
        return finish(&s);
    }
    /* a gradient that did not reach U (Vh) is zeros: its term adds nothing */
    mt_tensor *sk_u = skew(&s, mm(&s, mT(&s, U), gU));
    mt_tensor *sk_v = skew(&s, mm(&s, Vh, mT(&s, gVh)));
    mt_tensor *top = bin(&s, MT_OP_add, scale_by(&s, sk_u, S, true), scale_by(&s, sk_v, S, false));
    mt_tensor *E = gaps(&s, bin(&s, MT_OP_mul, S, S));
    mt_tensor *body = bin(&s, MT_OP_add, bin(&s, MT_OP_div, top, E), diag_embed(&s, gS));
    if (m > nc && has_u) { /* [U inner + (I - U U^T) gU S^-1] Vh */
        give(&s, mm(&s, svd_side(&s, U, body, gU, S, true), Vh), &gi[0]);
    } else if (m < nc && has_v) { /* U [inner Vh + S^-1 gVh (I - V Vh)] */
        give(&s, mm(&s, U, svd_side(&s, Vh, body, gVh, S, false)), &gi[0]);
    } else {
        give(&s, mm(&s, U, mm(&s, body, Vh)), &gi[0]);
    }
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *vt = mT(&s, V);
    if (!n->grad_given[1]) { /* eigenvalues only: V diag(gL) V^T */
        give(&s, mm(&s, scale_by(&s, V, g[0], true), vt), &gi[0]);
        return finish(&s);
    }
    mt_tensor *half = bin(&s, MT_OP_mul, skew(&s, mm(&s, vt, g[1])), num(&s, 0.5));
    mt_tensor *inner = bin(&s, MT_OP_add, bin(&s, MT_OP_div, half, gaps(&s, L)),
                           diag_embed(&s, g[0]));
    give(&s, mm(&s, V, mm(&s, inner, vt)), &gi[0]);
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *pt = mT(&s, P), *gt = mT(&s, g[0]);
    if (m <= nc) {
        /* K = g^T P; -(P K)^T + K P^T - (A P) K P^T + (P^T P)(g^T - K A) */
        mt_tensor *K = mm(&s, gt, P);
        mt_tensor *kpt = mm(&s, K, pt);
        mt_tensor *t2 = mT(&s, mm(&s, P, K));
        mt_tensor *t4 = mm(&s, mm(&s, A, P), kpt);
        mt_tensor *t8 = mm(&s, mm(&s, pt, P), bin(&s, MT_OP_sub, gt, mm(&s, K, A)));
        mt_tensor *s2 = bin(&s, MT_OP_sub, bin(&s, MT_OP_sub, kpt, t2), t4);
        give(&s, bin(&s, MT_OP_add, s2, t8), &gi[0]);
    } else {
        /* K = P g^T; -(K P)^T + (g^T - A K) P P^T + P^T K - P^T K P A */
        mt_tensor *K = mm(&s, P, gt);
        mt_tensor *ptk = mm(&s, pt, K);
        mt_tensor *t2 = mT(&s, mm(&s, K, P));
        mt_tensor *t6 = mm(&s, mm(&s, bin(&s, MT_OP_sub, gt, mm(&s, A, K)), P), pt);
        mt_tensor *t8 = mm(&s, mm(&s, ptk, P), A);
        mt_tensor *s2 = bin(&s, MT_OP_add, bin(&s, MT_OP_sub, t6, t2), ptk);
        give(&s, bin(&s, MT_OP_sub, s2, t8), &gi[0]);
    }
    return finish(&s);
}

/* ---- LU ---- */

/* *P, *L, *U = lu_unpack(LU, pivots) */
static void
unpacked(tmp *s, mt_tensor *LU, mt_tensor *pivots, mt_tensor **P, mt_tensor **L, mt_tensor **U)
{
    *P = *L = *U = NULL;
    if (s->st == MT_OK) {
        mt_status st = mt_op_lu_unpack(LU, pivots, true, true, P, L, U);
        *P = own(s, st, P);
        *L = own(s, st, L);
        *U = own(s, st, U);
    }
}

/* PyTorch's linalg_lu_backward for real matrices: A (*, m, n) = P L U, L (*, m, k) unit lower,
 * U (*, k, n) upper, k = min(m, n), gL and gU their gradients.
 * m == n: gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T;
 * m < n (U = [U1 U2]): gA = P L^-T [tril(L^T gL - triu(gU) U^T, -1) U1^-T + triu(gU1), gU2];
 * m > n (L = [L1; L2]): gA = P [L1^-T triu(gU U^T - L^T tril(gL, -1)) + tril(gL1, -1); gL2] U^-T */
static mt_tensor *
lu_backward(tmp *s, mt_tensor *gL, mt_tensor *gU, mt_tensor *P, mt_tensor *L, mt_tensor *U)
{
    if (failed(s, L, U)) {
        return NULL;
    }
    const int64_t m = L->sizes[L->ndim - 2], nc = U->sizes[U->ndim - 1], k = m < nc ? m : nc;
    mt_tensor *lt = mT(s, L), *ut = mT(s, U), *x2;
    if (m == nc) {
        mt_tensor *sum = bin(s, MT_OP_add, tril(s, mm(s, lt, gL), -1), triu(s, mm(s, gU, ut), 0));
        x2 = solve_tri(s, lt, solve_tri(s, ut, sum, false, false, false), true, true, true);
    } else if (m < nc) {
        mt_tensor *d = bin(s, MT_OP_sub, mm(s, lt, gL), mm(s, triu(s, gU, 0), ut));
        mt_tensor *u1t = mT(s, narrowed(s, U, -1, 0, k));
        mt_tensor *x1 = solve_tri(s, u1t, tril(s, d, -1), false, false, false);
        mt_tensor *y = bin(s, MT_OP_add, x1, triu(s, narrowed(s, gU, -1, 0, k), 0));
        mt_tensor *z = cat2(s, y, narrowed(s, gU, -1, k, nc - k), -1);
        x2 = solve_tri(s, lt, z, true, true, true);
    } else {
        mt_tensor *d = bin(s, MT_OP_sub, mm(s, gU, ut), mm(s, lt, tril(s, gL, -1)));
        mt_tensor *l1t = mT(s, narrowed(s, L, -2, 0, k));
        mt_tensor *x1 = solve_tri(s, l1t, triu(s, d, 0), true, true, true);
        mt_tensor *y = bin(s, MT_OP_add, x1, tril(s, narrowed(s, gL, -2, 0, k), -1));
        mt_tensor *z = cat2(s, y, narrowed(s, gL, -2, k, m - k), -2);
        x2 = solve_tri(s, ut, z, false, false, false);
    }
    return mm(s, P, x2);
}

// A (*, m, n); LU, pivots of lu_factor_ex: PyTorch's lu_factor_ex_backward, the gradient of LU
// split into L's part (its first k columns) and U's (its first k rows)
mt_status
mt_grad_linalg_lu_factor_ex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *LU = n->saved_out[0], *P, *L, *U;
    const int64_t m = LU->sizes[LU->ndim - 2], nc = LU->sizes[LU->ndim - 1], k = m < nc ? m : nc;
    tmp s = {0};
    unpacked(&s, LU, n->saved_out[1], &P, &L, &U);
    mt_tensor *gL = narrowed(&s, g[0], -1, 0, k), *gU = narrowed(&s, g[0], -2, 0, k);
    give(&s, lu_backward(&s, gL, gU, P, L, U), &gi[0]);
    return finish(&s);
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
    tmp s = {0};
    mt_tensor *lo = tril(&s, g[1], -1), *up = triu(&s, g[2], 0);
    if (m == nc || failed(&s, lo, up)) {
        give(&s, bin(&s, MT_OP_add, lo, up), &gi[0]);
        return finish(&s);
    }
    /* the narrower of the two gets zeros: L's columns past m (m < n), U's rows past n (m > n) */
    mt_tensor *narrow = m < nc ? lo : up, *wide = m < nc ? up : lo, *r = NULL;
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, narrow->sizes, sizeof(int64_t) * (size_t)narrow->ndim);
    shape[narrow->ndim - (m < nc ? 1 : 2)] = m < nc ? nc - m : m - nc;
    mt_tensor *zeros = own(&s,
                           mt_op_zeros(narrow->ndim, shape, narrow->dtype, mt_tensor_device(narrow),
                                       false, &r),
                           &r);
    mt_tensor *full = cat2(&s, narrow, zeros, m < nc ? -1 : -2);
    give(&s, bin(&s, MT_OP_add, wide, full), &gi[0]);
    return finish(&s);
}

// LU, pivots of A (*, n, n), X the solution of op(A) X = B (left) or X op(A) = B, op(A) = A^T
// with adjoint. gB = lu_solve(LU, pivots, g, left, !adjoint); gA = -gB X^T (left), -X gB^T (left,
// adjoint), -X^T gB, -gB^T X (adjoint); then through A = P L U:
// gLU = tril(P^T gA U^T, -1) + triu(L^T P^T gA)
mt_status
mt_grad_linalg_lu_solve(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *LU = n->saved[0], *piv = n->saved[1], *X = n->saved_out[0], *r = NULL;
    const bool left = n->args.b[0], adjoint = n->args.b[1];
    tmp s = {0};
    mt_tensor *gB = own(&s, mt_op_linalg_lu_solve(LU, piv, g[0], left, !adjoint, &r), &r);
    if (wants(n, 1)) {
        give(&s, gB, &gi[1]);
    }
    if (!wants(n, 0)) {
        return finish(&s);
    }
    mt_tensor *xt = mT(&s, X), *gbt = mT(&s, gB), *P, *L, *U;
    mt_tensor *prod = left ? (adjoint ? mm(&s, X, gbt) : mm(&s, gB, xt))
                           : (adjoint ? mm(&s, gbt, X) : mm(&s, xt, gB));
    mt_tensor *gA = un(&s, MT_OP_neg, prod);
    unpacked(&s, LU, piv, &P, &L, &U);
    mt_tensor *pg = mm(&s, mT(&s, P), gA);
    mt_tensor *lo = tril(&s, mm(&s, pg, mT(&s, U)), -1);
    mt_tensor *up = triu(&s, mm(&s, mT(&s, L), pg), 0);
    give(&s, bin(&s, MT_OP_add, lo, up), &gi[0]);
    return finish(&s);
}
