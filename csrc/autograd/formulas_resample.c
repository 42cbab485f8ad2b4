/* The backward formulas of the ops that move pixels about: the upsample ops and their
 * backwards, pixel_shuffle and pixel_unshuffle (each the other's), im2col and col2im (each the
 * other's). For the upsample ops: both are linear in their
 * tensor: an upsample's gradient is its backward op on the same sizes and scales, and the
 * backward's gradient (a double backward) is the upsample itself, each recorded as one op. */
#include "autograd/formulas.h"
#include "dispatch/dispatch.h"
#include "ops/ops.h"

/* each upsample op and its backward */
static const mt_op pairs[][2] = {
    {MT_OP_upsample_nearest1d, MT_OP_upsample_nearest1d_backward},
    {MT_OP_upsample_nearest2d, MT_OP_upsample_nearest2d_backward},
    {MT_OP_upsample_nearest3d, MT_OP_upsample_nearest3d_backward},
    {MT_OP__upsample_nearest_exact1d, MT_OP__upsample_nearest_exact1d_backward},
    {MT_OP__upsample_nearest_exact2d, MT_OP__upsample_nearest_exact2d_backward},
    {MT_OP__upsample_nearest_exact3d, MT_OP__upsample_nearest_exact3d_backward},
    {MT_OP_upsample_linear1d, MT_OP_upsample_linear1d_backward},
    {MT_OP_upsample_bilinear2d, MT_OP_upsample_bilinear2d_backward},
    {MT_OP_upsample_bicubic2d, MT_OP_upsample_bicubic2d_backward},
    {MT_OP_upsample_trilinear3d, MT_OP_upsample_trilinear3d_backward},
};

/* the other op of op's pair */
static mt_op
partner(mt_op op)
{
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        if (pairs[k][0] == op || pairs[k][1] == op) {
            return pairs[k][pairs[k][0] == op];
        }
    }
    return op; /* unreachable: every row naming these functions is in the table */
}

/* The partner op called on g with the node's own arguments: output_size, align_corners and the
 * scales sit in the same slots in both schemas; the backward also takes input_size (l[1]),
 * the forward's input's sizes. */
static mt_status
call_partner(mt_node *n, mt_tensor *g, const mt_meta *input, mt_tensor **out)
{
    mt_args a = n->args;
    a.t[0] = g;
    a.plan = NULL;
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        a.out[k] = NULL;
    }
    if (input) {
        a.l[1].n = input->ndim;
        a.l[1].none = false;
        a.l[1].ext = NULL;
        for (int d = 0; d < input->ndim; d++) {
            a.l[1].v[d] = input->sizes[d];
        }
    }
    mt_status st = mt_dispatch(partner(n->formula->op), &a);
    if (st == MT_OK) {
        *out = a.out[0];
    }
    return st;
}

// upsample_*: self (N, C, *in), grad (N, C, *output_size) -> (N, C, *in)
mt_status
mt_grad_upsample(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return call_partner(n, g[0], &n->in_meta[0], &gi[0]);
}

// upsample_*_backward: grad_output (N, C, *output_size), grad (N, C, *in) -> upsampled
mt_status
mt_grad_upsample_backward(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return call_partner(n, g[0], NULL, &gi[0]);
}

// pixel_shuffle: self (*, C r r, H, W), grad (*, C, H r, W r) -> pixel_unshuffle(grad, r)
mt_status
mt_grad_pixel_shuffle(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_pixel_unshuffle(g[0], n->args.i[0], &gi[0]);
}

// pixel_unshuffle: self (*, C, H r, W r), grad (*, C r r, H, W) -> pixel_shuffle(grad, r)
mt_status
mt_grad_pixel_unshuffle(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    return mt_op_pixel_shuffle(g[0], n->args.i[0], &gi[0]);
}

// im2col: self (N, C, H, W) or (C, H, W), grad (N, C*KH*KW, L) -> col2im(grad, (H, W), ...)
mt_status
mt_grad_im2col(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *l = n->args.l;
    const mt_meta *in = &n->in_meta[0];
    return mt_op_col2im(g[0], 2, in->sizes + in->ndim - 2, l[0].n, l[0].v, l[1].n, l[1].v, l[2].n,
                        l[2].v, l[3].n, l[3].v, &gi[0]);
}

// col2im: self (N, C*KH*KW, L), grad (N, C, H, W) -> im2col(grad, ...)
mt_status
mt_grad_col2im(mt_node *n, mt_tensor *const *g, mt_tensor **gi)
{
    const mt_intlist *l = n->args.l;
    return mt_op_im2col(g[0], l[1].n, l[1].v, l[2].n, l[2].v, l[3].n, l[3].v, l[4].n, l[4].v,
                        &gi[0]);
}
