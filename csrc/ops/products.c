/* Products made of other products, for every device: kron, tensordot, cross (and
 * linalg_cross) and cdist.
 *
 * As in PyTorch: kron is a broadcast mul of two interleaved reshapes (PyTorch's views the
 * product, which fails where its mul laid the product out transposed; this one does not), tensordot a permute and an
 * mm, cross three differences of products of selects; cdist is the p-norm of the pairwise
 * differences (PyTorch's own kernel; the norm of the differences gives its values and, for
 * every p, its gradients), or for p = 2 with more than 25 rows (PyTorch's rule) one matrix
 * product, _euclidean_dist, which has its own gradient (EuclideanDistBackward0). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/op_chain.h"
#include "ops/ops.h"

// self (a1, ..., ak), other (b1, ..., bk) (the shorter padded with leading 1s) ->
// out (a1 * b1, ..., ak * bk): every product of an element of self and one of other
mt_status
mt_composite_kron(mt_args *a)
{
    mt_tensor *self = a->t[0], *other = a->t[1], *x = NULL, *y = NULL, *prod = NULL;
    int n = self->ndim > other->ndim ? self->ndim : other->ndim;
    if (2 * n > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "kron: only tensors with up to %d dims are supported",
                       MT_MAX_DIMS / 2);
    }
    int64_t xs[MT_MAX_DIMS], ys[MT_MAX_DIMS], shape[MT_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        int ds = d - (n - self->ndim), dox = d - (n - other->ndim);
        xs[2 * d] = ds >= 0 ? self->sizes[ds] : 1;
        xs[2 * d + 1] = 1;
        ys[2 * d] = 1;
        ys[2 * d + 1] = dox >= 0 ? other->sizes[dox] : 1;
        shape[d] = xs[2 * d] * ys[2 * d + 1];
    }
    mt_status st = mt_op_reshape(self, 2 * n, xs, &x);
    if (st == MT_OK && (st = mt_op_reshape(other, 2 * n, ys, &y)) == MT_OK &&
        (st = mt_op_mul(x, y, &prod)) == MT_OK) {
        st = mt_op_reshape(prod, n, shape, &a->out[0]);
    }
    mt_tensor_clear(&x);
    mt_tensor_clear(&y);
    mt_tensor_clear(&prod);
    return st;
}

/* The dims of l wrapped against ndim into w and marked in used; PyTorch's error for a repeat. */
static mt_status
contracted(const mt_intlist *l, int ndim, int64_t *w, bool *used)
{
    for (int k = 0; k < l->n; k++) {
        int d;
        mt_status st = mt_wrap_dim(l->v[k], ndim, &d);
        if (st) {
            return st;
        }
        if (used[d]) {
            return mt_fail(MT_ERUNTIME, "dim %d appears multiple times in the list of dims", d);
        }
        used[d] = true;
        w[k] = d;
    }
    return MT_OK;
}

// self (..), other (..), dims_self[k] of self summed against dims_other[k] of other ->
// out (self's other dims, other's other dims): self permuted to (rest, contracted) and other to
// (contracted, rest), both seen as matrices, one mm
mt_status
mt_composite_tensordot(mt_args *a)
{
    mt_tensor *x = a->t[0], *y = a->t[1];
    const mt_intlist *dx = &a->l[0], *dy = &a->l[1];
    if (dx->n != dy->n) {
        return mt_fail(MT_ERUNTIME, "both dimension lists should have same length");
    }
    if (x->dtype != y->dtype) {
        return mt_fail(MT_ERUNTIME, "both inputs should have same dtype");
    }
    int64_t wx[MT_MAX_DIMS], wy[MT_MAX_DIMS];
    bool cx[MT_MAX_DIMS] = {false}, cy[MT_MAX_DIMS] = {false};
    mt_tensor *tx = mt_tensor_retain(x), *ty = mt_tensor_retain(y);
    mt_tensor *px = NULL, *py = NULL, *mx = NULL, *my = NULL, *prod = NULL;
    int64_t csize = 1;
    mt_status st = MT_OK;
    for (int k = 0; k < dx->n && st == MT_OK; k++) {
        int i, j;
        if ((st = mt_wrap_dim(dx->v[k], x->ndim, &i)) ||
            (st = mt_wrap_dim(dy->v[k], y->ndim, &j))) {
            break;
        }
        int64_t s1 = x->ndim ? x->sizes[i] : 1, s2 = y->ndim ? y->sizes[j] : 1;
        mt_tensor *summed = NULL;
        if (s2 == 1) { /* a broadcast dim: summed at once */
            st = mt_op_sum(tx, 1, (const int64_t[]){i}, true, (int)tx->dtype, &summed);
            mt_tensor_release(tx);
            tx = summed;
        } else if (s1 == 1) {
            st = mt_op_sum(ty, 1, (const int64_t[]){j}, true, (int)ty->dtype, &summed);
            mt_tensor_release(ty);
            ty = summed;
        } else if (s1 != s2) {
            st = mt_fail(MT_ERUNTIME,
                         "contracted dimensions need to match, but first has size %" PRId64
                         " in dim %" PRId64 " and second has size %" PRId64 " in dim %" PRId64,
                         s1, dx->v[k], s2, dy->v[k]);
        } else {
            csize *= s1;
        }
    }
    if (st || (st = contracted(dx, x->ndim, wx, cx)) || (st = contracted(dy, y->ndim, wy, cy))) {
        goto out_release;
    }
    int64_t px_order[MT_MAX_DIMS], py_order[MT_MAX_DIMS], rsizes[MT_MAX_DIMS];
    int64_t size1 = 1, size2 = 1;
    int np = 0, nr = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!cx[d]) {
            px_order[np++] = d;
            size1 *= tx->sizes[d];
            rsizes[nr++] = tx->sizes[d];
        }
    }
    for (int k = 0; k < dx->n; k++) {
        px_order[np++] = wx[k];
    }
    np = 0;
    for (int k = 0; k < dy->n; k++) {
        py_order[np++] = wy[k];
    }
    for (int d = 0; d < y->ndim; d++) {
        if (!cy[d]) {
            py_order[np++] = d;
            size2 *= ty->sizes[d];
            rsizes[nr++] = ty->sizes[d];
        }
    }
    if (nr > MT_MAX_DIMS) {
        st = mt_fail(MT_ERUNTIME, "tensordot: only tensors with up to %d dims are supported",
                     MT_MAX_DIMS);
        goto out_release;
    }
    int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
    if ((st = mt_op_permute(tx, tx->ndim, px_order, &px)) ||
        (st = mt_op_permute(ty, ty->ndim, py_order, &py)) || (st = mt_op_reshape(px, 2, s1, &mx)) ||
        (st = mt_op_reshape(py, 2, s2, &my)) || (st = mt_op_mm(mx, my, &prod))) {
        goto out_release;
    }
    st = mt_op_reshape(prod, nr, rsizes, &a->out[0]);
out_release:
    mt_tensor_clear(&tx);
    mt_tensor_clear(&ty);
    mt_tensor_clear(&px);
    mt_tensor_clear(&py);
    mt_tensor_clear(&mx);
    mt_tensor_clear(&my);
    mt_tensor_clear(&prod);
    return st;
}

/* out = x_i * y_j - x_j * y_i, with x_i the select of x at i along dim. */
static mt_status
cross_term(mt_tensor *const *xs, mt_tensor *const *ys, int i, int j, mt_tensor **out)
{
    mt_tensor *p = NULL, *q = NULL;
    mt_status st = mt_op_mul(xs[i], ys[j], &p);
    if (st == MT_OK && (st = mt_op_mul(xs[j], ys[i], &q)) == MT_OK) {
        st = mt_op_sub(p, q, mt_scalar_int(1), out);
    }
    mt_tensor_clear(&p);
    mt_tensor_clear(&q);
    return st;
}

/* self, other (..., 3, ...) of one rank and dtype, their other dims broadcast: the cross
 * products of their vectors along dim. */
static mt_status
cross_along(mt_tensor *x, mt_tensor *y, int64_t dim, mt_tensor **out)
{
    if (x->ndim != y->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.cross: inputs must have the same number of dimensions.");
    }
    int d;
    mt_status st = mt_wrap_dim(dim, x->ndim, &d);
    if (st) {
        return st;
    }
    int64_t nx = x->ndim ? x->sizes[d] : 1, ny = y->ndim ? y->sizes[d] : 1;
    if (nx != 3 || ny != 3) {
        return mt_fail(MT_ERUNTIME,
                       "linalg.cross: inputs dimension %" PRId64 " must have length 3. Got %" PRId64
                       " and %" PRId64,
                       dim, nx, ny);
    }
    int nb;
    int64_t b[MT_MAX_DIMS];
    if ((st = mt_broadcast_shapes(x->ndim, x->sizes, y->ndim, y->sizes, &nb, b))) {
        return st;
    }
    if (x->dtype != y->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(x->dtype), mt_dtype_scalar_name(y->dtype));
    }
    mt_tensor *xs[3] = {NULL}, *ys[3] = {NULL}, *terms[3] = {NULL};
    for (int k = 0; k < 3 && st == MT_OK; k++) {
        if ((st = mt_op_select(x, d, k, &xs[k])) == MT_OK) {
            st = mt_op_select(y, d, k, &ys[k]);
        }
    }
    for (int k = 0; k < 3 && st == MT_OK; k++) {
        st = cross_term(xs, ys, (k + 1) % 3, (k + 2) % 3, &terms[k]);
    }
    if (st == MT_OK) {
        st = mt_op_stack(3, terms, d, out);
    }
    for (int k = 0; k < 3; k++) {
        mt_tensor_clear(&xs[k]);
        mt_tensor_clear(&ys[k]);
        mt_tensor_clear(&terms[k]);
    }
    return st;
}

mt_status
mt_composite_linalg_cross(mt_args *a)
{
    return cross_along(a->t[0], a->t[1], a->i[0], &a->out[0]);
}

// cross(self, other, dim=None): without a dim, the first dim of size 3
mt_status
mt_composite_cross(mt_args *a)
{
    mt_tensor *self = a->t[0];
    int64_t dim = a->i[0];
    if (a->i_none & 1u) {
        dim = -1;
        for (int d = 0; d < self->ndim && dim < 0; d++) {
            dim = self->sizes[d] == 3 ? d : -1;
        }
        if (dim < 0) {
            return mt_fail(MT_ERUNTIME, "no dimension of size 3 in input");
        }
    }
    return cross_along(self, a->t[1], dim, &a->out[0]);
}

/* cdist's checks of one input, X1 or X2. */
static mt_status
check_cdist_input(const mt_tensor *x, const char *name)
{
    if (x->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "cdist only supports at least 2D tensors, %s got: %dD", name,
                       x->ndim);
    }
    if (!mt_dtype_is_float(x->dtype)) {
        return mt_fail(MT_ERUNTIME, "cdist only supports floating-point dtypes, %s got: %s", name,
                       mt_dtype_scalar_name(x->dtype));
    }
    return MT_OK;
}

// x1 (*, P, M), x2 (*, R, M), M > 0 -> out (*, P, R): the distance of every row of x1 to every
// row of x2 through one matrix product, sqrt(max(|x1_i|^2 + |x2_j|^2 - 2 x1_i . x2_j, 0))
mt_status
mt_composite__euclidean_dist(mt_args *a)
{
    mt_tensor *x1 = a->t[0], *x2 = a->t[1], *r = NULL;
    const int64_t last = -1;
    tmp s = {0};
    mt_tensor *n1 = bin(&s, MT_OP_mul, x1, x1), *n2 = bin(&s, MT_OP_mul, x2, x2);
    n1 = failed(&s, n1, n1) ? NULL : own(&s, mt_op_sum(n1, 1, &last, true, -1, &r), &r);
    n2 = failed(&s, n2, n2) ? NULL : own(&s, mt_op_sum(n2, 1, &last, true, -1, &r), &r);
    mt_tensor *n2t = failed(&s, n2, n2) ? NULL : own(&s, mt_op_transpose(n2, -2, -1, &r), &r);
    mt_tensor *x2t = failed(&s, x2, x2) ? NULL : own(&s, mt_op_transpose(x2, -2, -1, &r), &r);
    mt_tensor *dot = bin(&s, MT_OP_matmul, x1, x2t), *sq = bin(&s, MT_OP_add, n1, n2t);
    mt_tensor *d2 = failed(&s, sq, dot) ? NULL
                                        : own(&s, mt_op_sub(sq, dot, mt_scalar_int(2), &r), &r);
    if (!failed(&s, d2, d2)) {
        /* d2 is this call's own: rounding may leave it below 0, so clamp it there, in place */
        s.st = mt_op_clamp_min_(d2, mt_scalar_int(0), NULL);
    }
    if (!failed(&s, d2, d2)) {
        s.st = mt_op_sqrt_(d2, NULL);
    }
    give(&s, d2, &a->out[0]);
    return finish(&s);
}

/* cdist's p = 2 path (PyTorch's cdist_impl): the batch dims of x1 (B1.., P, M) and
 * x2 (B2.., R, M) broadcast and flattened to one, _euclidean_dist, the result viewed as
 * (B.., P, R). */
static mt_status
euclidean_dist_batched(mt_tensor *x1, mt_tensor *x2, mt_tensor **out)
{
    const int nb1 = x1->ndim - 2, nb2 = x2->ndim - 2, nb = nb1 > nb2 ? nb1 : nb2;
    int64_t e1[MT_MAX_DIMS], e2[MT_MAX_DIMS], shape[MT_MAX_DIMS], batch = 1;
    for (int d = 0; d < nb; d++) {
        const int64_t b1 = d - (nb - nb1) >= 0 ? x1->sizes[d - (nb - nb1)] : 1;
        const int64_t b2 = d - (nb - nb2) >= 0 ? x2->sizes[d - (nb - nb2)] : 1;
        if (b1 != b2 && b1 != 1 && b2 != 1) {
            return mt_fail(MT_ERUNTIME,
                           "The size of tensor a (%" PRId64 ") must match the size of tensor b "
                           "(%" PRId64 ") at non-singleton dimension %d",
                           b1, b2, d);
        }
        e1[d] = e2[d] = shape[d] = b1 == 1 ? b2 : b1;
        batch *= shape[d];
    }
    const int64_t p1 = x1->sizes[nb1], p2 = x2->sizes[nb2], m = x1->sizes[nb1 + 1];
    e1[nb] = p1;
    e2[nb] = p2;
    e1[nb + 1] = e2[nb + 1] = m;
    shape[nb] = p1;
    shape[nb + 1] = p2;
    mt_tensor *r = NULL;
    tmp s = {0};
    mt_tensor *dist;
    if (batch == 1) {
        dist = bin(&s, MT_OP__euclidean_dist, x1, x2);
    } else {
        const int64_t v1[3] = {batch, p1, m}, v2[3] = {batch, p2, m};
        mt_tensor *a1 = own(&s, mt_op_expand(x1, nb + 2, e1, &r), &r);
        mt_tensor *a2 = own(&s, mt_op_expand(x2, nb + 2, e2, &r), &r);
        a1 = failed(&s, a1, a2) ? NULL : own(&s, mt_op_reshape(a1, 3, v1, &r), &r);
        a2 = failed(&s, a2, a2) ? NULL : own(&s, mt_op_reshape(a2, 3, v2, &r), &r);
        dist = bin(&s, MT_OP__euclidean_dist, a1, a2);
    }
    if (!failed(&s, dist, dist)) {
        give(&s, own(&s, mt_op_view(dist, nb + 2, shape, &r), &r), out);
    }
    return finish(&s);
}

// x1 (B.., P, M), x2 (B.., R, M) -> out (B.., P, R): the p-norm distance of every row of x1 to
// every row of x2, the batch dims broadcast; as the norm of x1 (B.., P, 1, M) - x2 (B.., 1, R, M)
mt_status
mt_composite_cdist(mt_args *a)
{
    mt_tensor *x1 = a->t[0], *x2 = a->t[1], *u1 = NULL, *u2 = NULL, *diff = NULL;
    double p = a->f[0];
    mt_status st = check_cdist_input(x1, "X1");
    if (st || (st = check_cdist_input(x2, "X2"))) {
        return st;
    }
    int64_t m1 = x1->sizes[x1->ndim - 1], m2 = x2->sizes[x2->ndim - 1];
    if (m1 != m2) {
        return mt_fail(MT_ERUNTIME,
                       "X1 and X2 must have the same number of columns. X1: %" PRId64
                       " X2: %" PRId64,
                       m1, m2);
    }
    if (x1->dtype != x2->dtype) {
        return mt_fail(MT_ERUNTIME, "expected scalar type %s but found %s",
                       mt_dtype_scalar_name(x1->dtype), mt_dtype_scalar_name(x2->dtype));
    }
    if (!(p >= 0)) { /* NaN too */
        return mt_fail(MT_ERUNTIME, "cdist only supports non-negative p values");
    }
    /* PyTorch's choice (compute_mode None: 0, use_mm: 1, donot_use_mm: 2), empty inputs aside */
    const int64_t r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
    const int64_t mode = a->i_none & 1 ? 0 : a->i[0];
    if (p == 2 && mt_tensor_numel(x1) > 0 && mt_tensor_numel(x2) > 0 &&
        (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)))) {
        return euclidean_dist_batched(x1, x2, &a->out[0]);
    }
    if ((st = mt_op_unsqueeze(x1, -2, &u1)) == MT_OK &&
        (st = mt_op_unsqueeze(x2, -3, &u2)) == MT_OK &&
        (st = mt_op_sub(u1, u2, mt_scalar_int(1), &diff)) == MT_OK) {
        st = mt_op_norm(diff, mt_scalar_float(p), 1, (const int64_t[]){-1}, false, -1, &a->out[0]);
    }
    mt_tensor_clear(&u1);
    mt_tensor_clear(&u2);
    mt_tensor_clear(&diff);
    return st;
}
