/* Backward formulas of the complex views and the discrete Fourier transforms (PyTorch's
 * FunctionsManual.cpp: fft_r2c_backward, fft_c2r_backward; c2c's is the opposite transform).
 * The normalization is the forward's: the adjoint of an unnormalized forward transform is the
 * unnormalized inverse one, and so on for each mode. conj_physical has no row: its pieces
 * (view_as_real, mul, view_as_complex) record. */
#include "autograd/formula_chain.h"

// self (*) complex, out (*, 2): the gradient (*, 2) read as complex
mt_status
mt_grad_view_as_real(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    (void)n;
    tmp s = {0};
    give(&s, un(&s, MT_OP_view_as_complex, un(&s, MT_OP_contiguous, g[0])), &gi[0]);
    return finish(&s);
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
static mt_tensor *
real_part(tmp *s, mt_tensor *c)
{
    mt_tensor *parts = un(s, MT_OP_view_as_real, c), *r = NULL;
    return failed(s, parts, parts) ? NULL : own(s, mt_op_select(parts, parts->ndim - 1, 0, &r), &r);
}

// self (*) real, out (*) complex, onesided: n/2 + 1 along h (the last of dim); the gradient
// zero-padded back to n along h, transformed back, its real part
mt_status
mt_grad__fft_r2c(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_args *a = &n->args;
    const mt_meta *m = &n->in_meta[0];
    tmp s = {0};
    mt_tensor *full = g[0], *r = NULL;
    if (a->b[0]) {
        int h = 0;
        s.st = mt_wrap_dim(a->l[0].v[a->l[0].n - 1], m->ndim, &h);
        full = s.st
                   ? NULL
                   : own(&s, mt_op_zeros(m->ndim, m->sizes, g[0]->dtype, m->device, false, &r), &r);
        mt_tensor *part = s.st ? NULL : own(&s, mt_op_narrow(full, h, 0, g[0]->sizes[h], &r), &r);
        if (part) {
            s.st = mt_op_copy_(part, g[0], NULL);
        }
    }
    mt_tensor *back = s.st ? NULL
                           : own(&s, mt_op__fft_c2c(full, a->l[0].n, a->l[0].v, a->i[0], false, &r),
                                 &r);
    give(&s, real_part(&s, back), &gi[0]);
    return finish(&s);
}

// self (*) complex, n/2 + 1 along h (the last of dim), out (*) real, n along h: the gradient's
// one-sided transform, its entries 1 .. n - (n/2 + 1) doubled (they stand for two each)
mt_status
mt_grad__fft_c2r(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_args *a = &n->args;
    tmp s = {0};
    mt_tensor *r = NULL;
    int h = 0;
    s.st = mt_wrap_dim(a->l[0].v[a->l[0].n - 1], g[0]->ndim, &h);
    if (s.st == MT_OK) {
        s.st = mt_op__fft_r2c(g[0], a->l[0].n, a->l[0].v, a->i[0], true, &gi[0]);
    }
    const int64_t doubled = s.st ? 0 : g[0]->sizes[h] - gi[0]->sizes[h];
    if (doubled > 0) {
        mt_tensor *twice = own(&s, mt_op_narrow(gi[0], h, 1, doubled, &r), &r);
        mt_tensor *two = s.st ? NULL
                              : own(&s, mt_tensor_scalar(mt_scalar_int(2), MT_INT64, &r), &r);
        if (two) {
            two->is_wrapped_number = true;
            s.st = mt_op_mul_(twice, two, NULL);
        }
    }
    return finish(&s);
}
