/* Backward formulas: arithmetic, the matmul family, sum/mean, views and copies.
 *
 * Their rows are in formulas.def (PyTorch's derivatives.yaml, as C): node name, which inputs
 * get gradients, what is saved. Gradients may come back in the broadcast shape or another dtype:
 * the engine sums and casts them to each input's. */
#include <string.h>

#include "autograd/formula_chain.h"

static double
scalar_or(mt_scalar s, double dflt)
{
    return mt_scalar_is_none(s) ? dflt : mt_scalar_to_double(s);
}

/* *out = g * s, or g itself when s is 1. */
static mt_status
times(mt_tensor *g, double s, mt_tensor **out)
{
    if (s == 1.0) {
        *out = mt_tensor_retain(g);
        return MT_OK;
    }
    return mt_ag_scale(g, s, out);
}

// self, other, alpha: self + alpha * other
mt_status
mt_grad_add(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = times(g[0], 1.0, &gi[0]);
    return st ? st : times(g[0], scalar_or(n->args.s[0], 1.0), &gi[1]);
}

mt_status
mt_grad_sub(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = times(g[0], 1.0, &gi[0]);
    return st ? st : times(g[0], -scalar_or(n->args.s[0], 1.0), &gi[1]);
}

// rsub: out = other - alpha * self
mt_status
mt_grad_rsub(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = times(g[0], -scalar_or(n->args.s[0], 1.0), &gi[0]);
    return st ? st : times(g[0], 1.0, &gi[1]);
}

/* Whether a gradient flows to t, an op's input (an edge of its node). */
static bool
gets_grad(const mt_tensor *t)
{
    return t && !t->is_wrapped_number && mt_autograd_dtype(t->dtype) && mt_tensor_requires_grad(t);
}

void
mt_saves_mul(const mt_args *a, unsigned *save_inputs, bool *save_outputs)
{
    (void)save_outputs;
    /* as PyTorch's MulBackward: self only for other's gradient, other only for self's (so
     * `v * 2` keeps no v that a later in-place op would invalidate, nor a copy of self for
     * `v.mul_(2)`) */
    *save_inputs &= (gets_grad(a->t[1]) ? 0x1u : 0u) | (gets_grad(a->t[0]) ? 0x2u : 0u);
}

// mul_'s and mul's: the gradients of the inputs whose counterpart was kept (mt_saves_mul)
mt_status
mt_grad_mul(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0];
    mt_tensor *other = n->saved[1];
    mt_status st = other ? mt_ag_by_conj(MT_OP_mul, g[0], other, &gi[0]) : MT_OK;
    return st || self == NULL ? st : mt_ag_by_conj(MT_OP_mul, g[0], self, &gi[1]);
}

mt_status
mt_grad_neg(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    return mt_op_neg(g[0], &gi[0]);
}

/* g where mask holds (where it does not, when pass is false), else 0: a select, not g * mask,
 * so that an inf or NaN gradient where it is 0 stays 0 */
static mt_tensor *
masked(tmp *s, mt_tensor *g, mt_tensor *mask, bool pass)
{
    mt_tensor *r = NULL;
    mt_tensor *zero = s->st ? NULL : own(s, mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &r), &r);
    return sel(s, mask, pass ? g : zero, pass ? zero : g);
}

// clamp_min(self, min): the gradient passes where self >= min
mt_status
mt_grad_clamp_min(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *lo = own(&s, mt_tensor_scalar(n->args.s[0], n->args.s[0].type, &r), &r);
    give(&s, masked(&s, g[0], bin(&s, MT_OP_ge, n->saved[0], lo), true), &gi[0]);
    return finish(&s);
}

// relu: the gradient is 0 where the result is <= 0 and passes elsewhere, NaN included
// (PyTorch's threshold_backward)
mt_status
mt_grad_relu(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *zero = own(&s, mt_tensor_scalar(mt_scalar_int(0), MT_INT64, &r), &r);
    give(&s, masked(&s, g[0], bin(&s, MT_OP_le, n->saved_out[0], zero), false), &gi[0]);
    return finish(&s);
}

/* ---- unary math with the result or the input saved ---- */

mt_status
mt_grad_exp(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_ag_by_conj(MT_OP_mul, g[0], n->saved_out[0], &gi[0]);
}

mt_status
mt_grad_log(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_ag_by_conj(MT_OP_div, g[0], n->saved[0], &gi[0]);
}

// tanh: g * conj(1 - out^2) = g - g * conj(out^2)
mt_status
mt_grad_tanh(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *out = n->saved_out[0];
    mt_tensor *d = bin(&s, MT_OP_mul, g[0], conj_of(&s, bin(&s, MT_OP_mul, out, out)));
    give(&s, bin(&s, MT_OP_sub, g[0], d), &gi[0]);
    return finish(&s);
}

// sigmoid: sigmoid_backward(g, out) = g * conj((1 - out) * out), as PyTorch's
mt_status
mt_grad_sigmoid(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_sigmoid_backward(g[0], n->saved_out[0], &gi[0]);
}

// sigmoid_backward(grad_output, y), linear in grad_output: its gradient is
// sigmoid_backward(g, conj(y)); y's is conj(g) * grad_output * (1 - 2 conj(y)) (derivatives.yaml)
mt_status
mt_grad_sigmoid_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *y = conj_of(&s, n->saved[1]);
    if (wants(n, 0) && !failed(&s, y, y)) {
        s.st = mt_op_sigmoid_backward(g[0], y, &gi[0]);
    }
    if (wants(n, 1)) {
        mt_tensor *d = bin(&s, MT_OP_sub, num(&s, 1.0), scaled(&s, y, 2.0));
        give(&s, bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, conj_of(&s, g[0]), n->saved[0]), d), &gi[1]);
    }
    return finish(&s);
}

/* ---- matrix products ---- */

/* A complex product's gradients take the other operand's conjugate transpose (PyTorch's:
 * grad_mat1 = g @ mat2^H, grad_mat2 = mat1^H @ g): its conjugate (conj_of, one elementwise
 * pass) transposed as a view, so the product itself is one complex gemm (on the CUDA device
 * cublasCgemm or cublasZgemm, dispatch/complex.c), not the four real products of the parts.
 *
 * A matrix operand's gradient comes out in the operand's own layout, as PyTorch's
 * mm_mat1_backward and mm_mat2_backward make it: for a column-major operand (a transposed
 * contiguous matrix, such as linear's weight.t()) the product is computed transposed and handed
 * back as its transpose. So linear's weight gets a contiguous gradient through t()'s backward,
 * and a gradient from autograd.grad can be view()ed where PyTorch's can. */
static bool
column_major(const mt_tensor *m)
{
    return m->ndim == 2 && m->strides[0] == 1 && m->strides[1] == m->sizes[0];
}

/* op(a) @ op(b), where op transposes an operand when its flag is set; the product itself
 * transposed when tout is; owned by s. */
static mt_tensor *
mm_t(tmp *s, mt_tensor *a, bool ta, mt_tensor *b, bool tb, bool tout)
{
    mt_tensor *x = ta ? un(s, MT_OP_t, a) : a;
    mt_tensor *y = tb ? un(s, MT_OP_t, b) : b;
    mt_tensor *p = bin(s, MT_OP_mm, x, y);
    return tout ? un(s, MT_OP_t, p) : p;
}

// mat1 (n, k), mat2 (k, m), g (n, m): d/dmat1 = g @ mat2^H, or (conj(mat2) @ g^T)^T for a
// column-major mat1
static mt_status
mm_mat1_grad(mt_tensor *g, mt_tensor *mat1, mt_tensor *mat2, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *c = conj_of(&s, mat2);
    give(&s,
         column_major(mat1) ? mm_t(&s, c, false, g, true, true)
                            : mm_t(&s, g, false, c, true, false),
         out);
    return finish(&s);
}

// d/dmat2 = mat1^H @ g, or (g^T @ conj(mat1))^T for a column-major mat2
static mt_status
mm_mat2_grad(mt_tensor *g, mt_tensor *mat1, mt_tensor *mat2, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *c = conj_of(&s, mat1);
    give(&s,
         column_major(mat2) ? mm_t(&s, g, true, c, false, true)
                            : mm_t(&s, c, true, g, false, false),
         out);
    return finish(&s);
}

// self (n), mat1 (n, k), mat2 (k, m): beta * self + alpha * mat1 @ mat2 (a complex alpha or
// beta: its conjugate scales the gradients)
mt_status
mt_grad_addmm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *m1 = n->saved[1], *m2 = n->saved[2], *r = NULL;
    const mt_scalar alpha = n->args.s[1];
    give(&s, times_conj(&s, g[0], n->args.s[0]), &gi[0]);
    if (s.st == MT_OK && wants(n, 1)) {
        give(&s, times_conj(&s, own(&s, mm_mat1_grad(g[0], m1, m2, &r), &r), alpha), &gi[1]);
    }
    if (s.st == MT_OK && wants(n, 2)) {
        give(&s, times_conj(&s, own(&s, mm_mat2_grad(g[0], m1, m2, &r), &r), alpha), &gi[2]);
    }
    return finish(&s);
}

// self (n, k), mat2 (k, m)
mt_status
mt_grad_mm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_tensor *self = n->saved[0], *mat2 = n->saved[1];
    mt_status st = MT_OK;
    if (n->edges[0].node) {
        st = mm_mat1_grad(g[0], self, mat2, &gi[0]);
    }
    if (st == MT_OK && n->edges[1].node) {
        st = mm_mat2_grad(g[0], self, mat2, &gi[1]);
    }
    return st;
}

/* x (b, n, k) -> x^H (b, k, n): conj(x) with its last two dims swapped (a view of the conjugate) */
static mt_tensor *
batch_adjoint(tmp *s, mt_tensor *x)
{
    mt_tensor *c = conj_of(s, x), *r = NULL;
    return failed(s, c, c) ? NULL : own(s, mt_op_transpose(c, 1, 2, &r), &r);
}

// self (b, n, k), mat2 (b, k, m): d/dself = g @ mat2^H, d/dmat2 = self^H @ g
mt_status
mt_grad_bmm(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *self = n->saved[0], *mat2 = n->saved[1];
    if (wants(n, 0)) {
        give(&s, bin(&s, MT_OP_bmm, g[0], batch_adjoint(&s, mat2)), &gi[0]);
    }
    if (s.st == MT_OK && wants(n, 1)) {
        give(&s, bin(&s, MT_OP_bmm, batch_adjoint(&s, self), g[0]), &gi[1]);
    }
    return finish(&s);
}

// self (n, k), vec (k): d/dself = g (n) outer conj(vec), d/dvec = self^H @ g
mt_status
mt_grad_mv(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *self = n->saved[0], *vec = n->saved[1], *r = NULL;
    if (wants(n, 0)) {
        mt_tensor *col = own(&s, mt_op_unsqueeze(g[0], 1, &r), &r);
        give(&s, bin(&s, MT_OP_mul, col, conj_of(&s, vec)), &gi[0]);
    }
    if (wants(n, 1)) {
        give(&s, bin(&s, MT_OP_mv, un(&s, MT_OP_t, conj_of(&s, self)), g[0]), &gi[1]);
    }
    return finish(&s);
}

// self (n), other (n): d/dself = g conj(other), d/dother = g conj(self)
mt_status
mt_grad_dot(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = mt_ag_by_conj(MT_OP_mul, g[0], n->saved[1], &gi[0]);
    return st ? st : mt_ag_by_conj(MT_OP_mul, g[0], n->saved[0], &gi[1]);
}

/* ---- reductions: the gradient spreads back over the reduced dims ---- */

/* g (the reduction's result) reshaped with size-1 dims where input dims were reduced, then
 * expanded to the input's shape. */
static mt_status
spread(mt_node *n, const mt_intlist *dims, mt_tensor *g, mt_tensor **out)
{
    const mt_meta *m = &n->in_meta[0];
    bool reduce[MT_MAX_DIMS] = {false};
    bool all = dims->none || dims->n == 0;
    for (int k = 0; k < dims->n && !all; k++) {
        int64_t d = dims->v[k] < 0 ? dims->v[k] + m->ndim : dims->v[k];
        if (d >= 0 && d < m->ndim) {
            reduce[d] = true;
        }
    }
    int64_t keep[MT_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) {
        keep[d] = all || reduce[d] ? 1 : m->sizes[d];
    }
    tmp s = {0};
    mt_tensor *r = NULL;
    if (own(&s, mt_op_reshape(g, m->ndim, keep, &r), &r)) {
        s.st = mt_ag_expand_to(r, m, out);
    }
    return finish(&s);
}

mt_status
mt_grad_sum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return spread(n, &n->args.l[0], g[0], &gi[0]);
}

/* As PyTorch's mean_backward: sum's backward (g spread over the input's shape), then divided
 * by the count of reduced elements, so the gradient is a tensor of its own (no stride 0 a user
 * could not write into) with PyTorch's rounding (g / n, not g * (1 / n)). */
mt_status
mt_grad_mean(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    int64_t in = mt_numel(n->in_meta[0].ndim, n->in_meta[0].sizes);
    int64_t out = mt_numel(n->out_meta[0].ndim, n->out_meta[0].sizes);
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *spread_g = own(&s, spread(n, &n->args.l[0], g[0], &r), &r);
    mt_tensor *count = s.st ? NULL
                            : own(&s,
                                  mt_tensor_scalar(mt_scalar_int(out ? in / out : 0), MT_INT64, &r),
                                  &r);
    give(&s, bin(&s, MT_OP_div, spread_g, count), &gi[0]);
    return finish(&s);
}

/* As PyTorch's nansum_backward: sum's backward times (self is no NaN), so a NaN of self gets 0
 * (and an infinite g there NaN, as PyTorch's product gives it). */
mt_status
mt_grad_nansum(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *spread_g = own(&s, spread(n, &n->args.l[0], g[0], &r), &r);
    mt_tensor *kept = un(&s, MT_OP_logical_not, un(&s, MT_OP_isnan, n->saved[0]));
    give(&s, bin(&s, MT_OP_mul, spread_g, kept), &gi[0]);
    return finish(&s);
}

/* ---- views and copies ---- */

mt_status
mt_grad_identity(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    gi[0] = mt_tensor_retain(g[0]);
    return MT_OK;
}

mt_status
mt_grad_view(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_reshape(g[0], n->in_meta[0].ndim, n->in_meta[0].sizes, &gi[0]);
}

mt_status
mt_grad_t(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    return mt_op_t(g[0], &gi[0]);
}

mt_status
mt_grad_transpose(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_transpose(g[0], n->args.i[0], n->args.i[1], &gi[0]);
}

mt_status
mt_grad_permute(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *p = &n->args.l[0];
    int64_t inverse[MT_MAX_DIMS];
    for (int k = 0; k < p->n; k++) {
        int64_t d = p->v[k] < 0 ? p->v[k] + p->n : p->v[k];
        inverse[d] = k;
    }
    return mt_op_permute(g[0], p->n, inverse, &gi[0]);
}

/* *part = the part of z (shaped like n's input) that n's output viewed */
static mt_status
embed_part(mt_node *n, mt_tensor *z, mt_op view, mt_tensor **part)
{
    const mt_args *a = &n->args;
    mt_status st;
    if (view == MT_OP_select) {
        st = mt_op_select(z, a->i[0], a->i[1], part);
    } else if (view == MT_OP_slice) {
        int64_t start = a->i_none >> 1 & 1u ? MT_INT_NONE : a->i[1];
        int64_t end = a->i_none >> 2 & 1u ? MT_INT_NONE : a->i[2];
        st = mt_op_slice(z, a->i[0], start, end, a->i[3], part);
    } else if (view == MT_OP_diagonal) {
        st = mt_op_diagonal(z, a->i[0], a->i[1], a->i[2], part);
    } else if (view == MT_OP_narrow_copy) {
        st = mt_op_narrow(z, a->i[0], a->i[1], a->i[2], part);
    } else { /* trace: the main diagonal, filled with the 0-dim g */
        st = mt_op_diagonal(z, 0, 0, 1, part);
    }
    return st;
}


/* Zeros of m's geometry to hold gradient g: for a __torch_dispatch__ subclass's g, made by its
 * class (an element of g expanded, copied and zeroed, as PyTorch's g.new_zeros reaches it), so
 * that the gradient stays of that class; plain zeros otherwise. */
static mt_status
zeros_for(const mt_meta *m, mt_tensor *g, mt_tensor **out)
{
    if (!g->python_dispatch || mt_tensor_numel(g) == 0 || g->dtype != m->dtype) {
        return mt_ag_zeros(m, out);
    }
    int64_t strides[MT_MAX_DIMS] = {0};
    tmp s = {0};
    mt_tensor *r = NULL;
    bool grad = mt_grad_enabled(); /* zeros, no history (as new_zeros) */
    mt_set_grad_enabled(false);
    mt_tensor *one = own(&s,
                         mt_op_as_strided(g, m->ndim, m->sizes, m->ndim, strides, g->offset, &r),
                         &r);
    mt_tensor *copy = s.st ? NULL : own(&s, mt_op_clone(one, &r), &r);
    if (copy && own(&s, mt_op_zero_(copy, &r), &r)) { /* zero_ returns copy itself */
        give(&s, copy, out);
    }
    mt_set_grad_enabled(grad);
    return finish(&s);
}

mt_status
mt_ags_embed(mt_node *n, mt_tensor *g, mt_op view, mt_tensor **out)
{
    tmp s = {0};
    mt_tensor *r = NULL;
    mt_tensor *z = own(&s, zeros_for(&n->in_meta[0], g, &r), &r);
    mt_tensor *part = s.st ? NULL : own(&s, embed_part(n, z, view, &r), &r);
    if (part) {
        s.st = view == MT_OP_trace ? mt_op_fill_(part, g, NULL) : mt_op_copy_(part, g, NULL);
    }
    give(&s, z, out);
    return finish(&s);
}

mt_status
mt_region_select(mt_node *n, mt_tensor *base, mt_tensor **out)
{
    return embed_part(n, base, MT_OP_select, out);
}

mt_status
mt_region_slice(mt_node *n, mt_tensor *base, mt_tensor **out)
{
    return embed_part(n, base, MT_OP_slice, out);
}

// select, slice, diagonal, trace, narrow_copy (their rows share it): zeros of the input's
// shape with g written into the part n's op took
mt_status
mt_grad_embed(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_ags_embed(n, g[0], n->formula->op, &gi[0]);
}

// copy_(self, src): self's old value is gone (no gradient), src gets g
mt_status
mt_grad_copy(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = mt_ag_zeros(&n->in_meta[0], &gi[0]);
    if (st == MT_OK) {
        gi[1] = mt_tensor_retain(g[0]);
    }
    return st;
}

mt_status
mt_grad_zero_(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)g;
    return mt_ag_zeros(&n->in_meta[0], &gi[0]);
}

// fill_(self, value): self's old value is gone (no gradient); a 0-dim tensor value gets the
// sum of g, being every element
mt_status
mt_grad_fill(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = mt_ag_zeros(&n->in_meta[0], &gi[0]);
    if (st == MT_OK && n->edges[1].node) {
        st = mt_ag_sum_to(g[0], &n->in_meta[1], &gi[1]);
    }
    return st;
}

/* ---- a loss PyTorch gives a node of its own ---- */

// mse_loss(self, target, reduction: 0 none, 1 mean, 2 sum): d/dself = 2 (self - target) g [/ N],
// N the number of elements of self and target broadcast together (the mean's count)
mt_status
mt_grad_mse_loss(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    tmp s = {0};
    mt_tensor *diff = bin(&s, MT_OP_sub, n->saved[0], n->saved[1]);
    int64_t numel = diff ? mt_tensor_numel(diff) : 0;
    double k = n->args.i[0] == 1 ? 2.0 / (double)(numel ? numel : 1) : 2.0;
    mt_tensor *gs = bin(&s, MT_OP_mul, bin(&s, MT_OP_mul, diff, num(&s, k)), g[0]);
    give(&s, gs, &gi[0]);
    if (wants(n, 1)) {
        give(&s, un(&s, MT_OP_neg, gs), &gi[1]);
    }
    return finish(&s);
}

// stack(tensors, dim): input k's gradient is g's slice k along dim
mt_status
mt_grad_stack(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    mt_status st = MT_OK;
    for (int k = 0; st == MT_OK && k < n->nedges; k++) {
        if (n->edges[k].node) {
            st = mt_op_select(g[0], n->args.i[0], k, &gi[k]);
        }
    }
    return st;
}

/* The node names of the overloads PyTorch numbers apart (the rows with .overload). */
const char *
mt_formula_overload_name(mt_op op, const mt_args *a)
{
    switch (op) {
    case MT_OP_sum:
        return a->l[0].none || a->l[0].n == 0 ? "SumBackward0" : NULL;
    case MT_OP_mean:
        return a->l[0].none || a->l[0].n == 0 ? "MeanBackward0" : NULL;
    case MT_OP_squeeze: /* squeeze(dim), squeeze(dims) */
        return a->l[0].none ? NULL : a->l[0].n == 1 ? "SqueezeBackward1" : "SqueezeBackward2";
    case MT_OP_squeeze_: /* squeeze_(dim), squeeze_(dims) */
        return a->l[0].none ? NULL : a->l[0].n == 1 ? "SqueezeBackward4" : "SqueezeBackward5";
    case MT_OP_prod: /* prod(dim) */
        return a->i_none & 1u ? NULL : "ProdBackward1";
    case MT_OP_scatter: /* scatter(..., value); with a reduce, no derivative (as PyTorch) */
    case MT_OP_scatter_:
        return a->str[0]                               ? "NotImplemented"
               : a->t[2] && a->t[2]->is_wrapped_number ? "ScatterBackward1"
                                                       : NULL;
    case MT_OP_index_fill: /* index_fill(..., Tensor value) */
    case MT_OP_index_fill_:
        return a->t[2] && !a->t[2]->is_wrapped_number ? "IndexFillBackward1" : NULL;
    case MT_OP_fill_: /* fill_.Scalar, fill_.Tensor */
        return a->t[1]->is_wrapped_number ? NULL : "FillBackward3";
    default:
        return mt_formula_math_overload_name(op, a);
    }
}
