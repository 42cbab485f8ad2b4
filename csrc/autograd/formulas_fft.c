/* Backward formulas of the complex views and the discrete Fourier transforms (PyTorch's
 * FunctionsManual.cpp: fft_r2c_backward, fft_c2r_backward; c2c's is the opposite transform).
 * The normalization is the forward's: the adjoint of an unnormalized forward transform is the
 * unnormalized inverse one, and so on for each mode. conj_physical has no row: its pieces
 * (view_as_real, mul, view_as_complex) record. */
#include "autograd/formulas.h"

// self (*) complex, out (*, 2): the gradient (*, 2) read as complex
mt_status
mt_grad_view_as_real(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    mt_tensor *c = NULL;
    mt_status st = mt_op_contiguous(g[0], &c);
    if (st == MT_OK) {
        st = mt_op_view_as_complex(c, &gi[0]);
    }
    mt_tensor_clear(&c);
    return st;
}

mt_status
mt_grad_view_as_complex(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    return mt_op_view_as_real(g[0], &gi[0]);
}

mt_status
mt_grad__fft_c2c(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_args *a = &n->args;
    return mt_op__fft_c2c(g[0], a->l[0].n, a->l[0].v, a->i[0], !a->b[0], &gi[0]);
}

/* The real part of a complex tensor, as a view. */
static mt_status
real_part(mt_tensor *c, mt_tensor **out)
{
    mt_tensor *r = NULL;
    mt_status st = mt_op_view_as_real(c, &r);
    if (st == MT_OK) {
        st = mt_op_select(r, r->ndim - 1, 0, out);
    }
    mt_tensor_clear(&r);
    return st;
}

// self (*) real, out (*) complex, onesided: n/2 + 1 along h (the last of dim); the gradient
// zero-padded back to n along h, transformed back, its real part
mt_status
mt_grad__fft_r2c(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_args *a = &n->args;
    const mt_meta *m = &n->in_meta[0];
    mt_tensor *full = NULL, *part = NULL, *back = NULL;
    mt_status st = MT_OK;
    if (a->b[0]) {
        int h;
        if ((st = mt_wrap_dim(a->l[0].v[a->l[0].n - 1], m->ndim, &h)) ||
            (st = mt_op_zeros(m->ndim, m->sizes, g[0]->dtype, m->device, false, &full)) ||
            (st = mt_op_narrow(full, h, 0, g[0]->sizes[h], &part)) ||
            (st = mt_op_copy_(part, g[0], NULL))) {
            goto out_clear;
        }
    } else {
        full = mt_tensor_retain(g[0]);
    }
    if ((st = mt_op__fft_c2c(full, a->l[0].n, a->l[0].v, a->i[0], false, &back)) == MT_OK) {
        st = real_part(back, &gi[0]);
    }
out_clear:
    mt_tensor_clear(&back);
    mt_tensor_clear(&part);
    mt_tensor_clear(&full);
    return st;
}

// self (*) complex, n/2 + 1 along h (the last of dim), out (*) real, n along h: the gradient's
// one-sided transform, its entries 1 .. n - (n/2 + 1) doubled (they stand for two each)
mt_status
mt_grad__fft_c2r(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_args *a = &n->args;
    mt_tensor *twice = NULL, *two = NULL;
    int h;
    mt_status st = mt_wrap_dim(a->l[0].v[a->l[0].n - 1], g[0]->ndim, &h);
    if (st || (st = mt_op__fft_r2c(g[0], a->l[0].n, a->l[0].v, a->i[0], true, &gi[0]))) {
        return st;
    }
    const int64_t doubled = g[0]->sizes[h] - gi[0]->sizes[h];
    if (doubled > 0 && (st = mt_op_narrow(gi[0], h, 1, doubled, &twice)) == MT_OK &&
        (st = mt_tensor_scalar(mt_scalar_int(2), MT_INT64, &two)) == MT_OK) {
        two->is_wrapped_number = true;
        st = mt_op_mul_(twice, two, NULL);
    }
    mt_tensor_clear(&two);
    mt_tensor_clear(&twice);
    if (st) {
        mt_tensor_clear(&gi[0]);
    }
    return st;
}
