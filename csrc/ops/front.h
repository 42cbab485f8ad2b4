/* Front ends: the device-independent part of an op, written once for every device (PyTorch's
 * structured kernels' meta function): the argument checks with PyTorch's messages, in its
 * order; the results' dtypes, shapes and strides (mt_front_output), which the dispatcher
 * allocates on the call's device before the kernel runs; and what else the kernels need, as a
 * plan (ops/plans.h).
 *
 * One mechanism, run once per call, before the device's loop:
 * - an op registered in mt_op_fronts has its front end run by the dispatcher (run() in
 *   dispatch/dispatch.c) right before its backend kernel, CPU or CUDA, which reads the plan
 *   through a->plan and, where the front end stated them, finds its results in a->out;
 * - the elementwise family's front end (mt_ew_call, ops/elementwise.h) runs inside the kernels
 *   generated from its table, which go on to the device's loop.
 * A backend kernel then only computes. It has no check and no message of its own, but for a
 * dtype it has no loop for (mt_fail_not_implemented) and what only the data shows while it
 * computes (an index out of range): one mt_fail_* function each, in csrc/, that every backend
 * calls, so each message exists once. */
#ifndef MT_OPS_FRONT_H
#define MT_OPS_FRONT_H

#include "dispatch/dispatch.h"
#include "ops/plans.h"

typedef mt_status (*mt_front_fn)(const mt_args *a, mt_plan *p);

/* The results of an op, stated by its front end in order (out[0], out[1], ...): the dispatcher
 * allocates them on the call's device before the kernel runs, so the kernel finds a->out[k]
 * allocated and only writes its values (and releases none: on failure the dispatcher does).
 * An error for more results than MT_MAX_OUTPUTS or more dims than MT_MAX_DIMS. */
mt_status mt_front_output(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes);
/* The same with the given strides (a result laid out as PyTorch lays it out, not contiguous). */
mt_status mt_front_output_strided(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes,
                                  const int64_t *strides);
/* A result laid out in memory format fmt (a channels-last result of the CNN ops, as PyTorch's
 * suggest_memory_format picks it) whose kernels write row-major results: they get a row-major
 * a->out[k], which the dispatcher copies into fmt's strides after (mt_front_relayout_outputs);
 * row-major in fmt costs nothing more. */
mt_status mt_front_output_format(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes,
                                 mt_memory_format fmt);
/* A kernel that writes result k straight in the layout its front end stated with
 * mt_front_output_format (a channels-last conv2d result from its gemm, a channels-last pooling)
 * says so before writing it: a->out[k], allocated row-major for the relayout and not written
 * yet, takes the stated strides (the same dense span), so the dispatcher copies nothing after.
 * True when the result is now in a layout other than row-major, which the kernel must write;
 * false when it was stated row-major (nothing changes). */
bool mt_front_take_format(const mt_plan *p, mt_args *a, int k);
/* The results stated by mt_front_output_format in a format other than row-major, copied into
 * it once the kernel has written them (a->out[k] replaced) unless the kernel took the format
 * (mt_front_take_format). On failure a->out is left to the caller to release. */
mt_status mt_front_relayout_outputs(const mt_plan *p, mt_args *a);

/* out (a result just allocated) = src, as copy_ but leaving out's version 0, as a result no one
 * has seen yet: results a kernel computes elsewhere and hands over whole */
mt_status mt_front_write_result(mt_tensor *out, const mt_tensor *src);
/* A result of t's shape and layout (PyTorch's preserve_format) in dtype dt. */
mt_status mt_front_output_like(mt_plan *p, mt_dtype dt, const mt_tensor *t);
/* A result whose size only its values show, of dtype dt: stated as made by the kernel, which
 * allocates it once it knows the size, with mt_dispatch_result (dispatch/dispatch.h). */
mt_status mt_front_output_by_kernel(mt_plan *p, mt_dtype dt);
/* The out= tensor the caller offers for result k of op (a->into[k], dispatch.h), when the
 * kernel can write that result there: of dtype dt and shape (ndim, sizes) (an out with no
 * elements is resized to it first, as PyTorch's resize_output; one with elements and another
 * shape takes the copy, which warns), laid out as strides (NULL: any layout without internal
 * overlap, which the elementwise loops write), on dev, and sharing no memory with an input
 * (but for an input that is the same view, when same_view is true: an elementwise op then
 * computes in place). NULL otherwise: the result is made anew and copied into out. */
mt_tensor *mt_front_dest(mt_args *a, mt_op op, int k, mt_dtype dt, int ndim, const int64_t *sizes,
                         const int64_t *strides, mt_device dev, bool same_view);
/* Allocates the results p states as a->out[0..p->nout) on dev, through its allocator, or takes
 * the caller's out= tensor for one (mt_front_dest): the dispatcher's step before the kernel
 * (and the host round trip's, for its host copies). On failure none is left. */
mt_status mt_front_alloc_outputs(const mt_plan *p, mt_args *a, mt_device dev);

/* An int[1] or int[2] argument's values as (first, second), one value standing for both; false
 * for another count. */
static inline bool
mt_front_pair(const mt_intlist *l, int64_t *first, int64_t *second)
{
    if (l->n != 1 && l->n != 2) {
        return false;
    }
    *first = l->v[0];
    *second = l->v[l->n - 1];
    return true;
}

/* A convolution's int[] argument (stride, padding, ...) as dims values, one int standing for
 * parsed of them (the op's int[parsed]); PyTorch's error for another count (ops/conv_checks.c). */
mt_status mt_conv_expand_param(const mt_intlist *l, const char *name, int parsed, int dims,
                               int64_t *out, int *n);
/* PyTorch's checks of a convolution weight's dims and of its first dim against groups; the
 * input's sizes, batched, as the messages show them. */
mt_status mt_conv_check_weight(const mt_tensor *wt, int input_ndim, const char *input_sizes,
                               int64_t groups);

/* The memory format of a convolution's results (PyTorch's mkldnn_conv_use_channels_last): for
 * a batched x, channels-last (3d) when x or w suggests it, else row-major. The backward ops
 * read it from grad_output and the other operand, which autograd lays out in the forward's. */
mt_memory_format mt_conv_memory_format(const mt_tensor *x, const mt_tensor *w);

/* Whether t is on a CUDA device: for the messages that PyTorch words per device. */
static inline bool
mt_front_on_cuda(const mt_tensor *t)
{
    return mt_tensor_device(t).type == MT_CUDA;
}

/* A pooling op's spatial dims: 3 for the 3-D poolings and their backward ops, else 2. Their
 * front ends, kernels and formulas serve both ranks and tell them apart by it (pool_checks.c). */
int mt_pool_nd(mt_op op);

/* The ops with a front end: X(op, front) runs mt_front_<front> before op's kernels, by family
 * and the file that defines them. A front end shared by several ops tells them apart by p->op.
 * A new op's front end is its function and one entry here. */
/* clang-format off */
#define MT_FRONTS(X)                                                                             \
    /* reductions and the ops along one dim: reduce_checks.c */                                 \
    X(sum, sum) X(prod, prod) X(mean, mean) X(amax, extremum) X(amin, extremum)                 \
    X(max, extremum) X(min, extremum) X(all, logical) X(any, logical) X(norm, norm)             \
    X(var, moment) X(std, moment) X(logsumexp, logsumexp) X(max_dim, arg_extreme)               \
    X(nansum, sum)                                                                               \
    X(min_dim, arg_extreme) X(argmax, arg_extreme) X(argmin, arg_extreme) X(cumsum, scan)       \
    X(cumprod, scan) X(softmax, softmax) X(log_softmax, softmax)                                \
    X(_log_softmax_backward_data, log_softmax_backward)                                          \
    X(_softmax_backward_data, log_softmax_backward)                                          \
    /* matrix products: matmul_checks.c */                                                      \
    X(mm, mm) X(addmm, addmm) X(_addmm_activation, addmm) X(bmm, bmm) X(baddbmm, baddbmm) X(mv, mv) X(addmv, addmv)         \
    X(dot, dot)                                                                                  \
    /* convolution: conv_checks.c */                                                            \
    X(conv2d, conv2d) X(convolution_backward_input, convolution_backward)                       \
    X(convolution_backward_weight, convolution_backward)                                         \
    X(im2col, im2col) X(col2im, col2im)                                                          \
    /* conv3d's own kernel (composite_conv3d.c: its checks are the composite's) */                \
    X(conv3d, conv3d)                                                                            \
    /* pooling: pool_checks.c */                                                                \
    X(max_pool2d, max_pool) X(max_pool2d_with_indices, max_pool) X(max_pool3d, max_pool)        \
    X(max_pool3d_with_indices, max_pool) X(avg_pool2d, avg_pool) X(avg_pool3d, avg_pool)        \
    X(adaptive_avg_pool2d, adaptive_avg_pool) X(adaptive_avg_pool3d, adaptive_avg_pool)          \
    X(adaptive_max_pool2d, adaptive_max_pool) X(adaptive_max_pool3d, adaptive_max_pool)          \
    X(adaptive_max_pool2d_backward, max_pool_backward)                                           \
    X(adaptive_max_pool3d_backward, max_pool_backward)                                           \
    X(max_pool2d_with_indices_backward, max_pool_backward)                                      \
    X(max_pool3d_with_indices_backward, max_pool_backward)                                      \
    X(avg_pool2d_backward, avg_pool_backward) X(avg_pool3d_backward, avg_pool_backward)         \
    X(_adaptive_avg_pool2d_backward, adaptive_avg_pool_backward)                                \
    X(_adaptive_avg_pool3d_backward, adaptive_avg_pool_backward)                                \
    /* upsampling: upsample.c */                                                                 \
    X(upsample_nearest1d, upsample) X(upsample_nearest1d_backward, upsample_backward)            \
    X(_upsample_nearest_exact1d, upsample) X(_upsample_nearest_exact1d_backward, upsample_backward) \
    X(upsample_linear1d, upsample) X(upsample_linear1d_backward, upsample_backward)              \
    X(upsample_nearest2d, upsample) X(upsample_nearest2d_backward, upsample_backward)            \
    X(_upsample_nearest_exact2d, upsample) X(_upsample_nearest_exact2d_backward, upsample_backward) \
    X(upsample_bilinear2d, upsample) X(upsample_bilinear2d_backward, upsample_backward)          \
    X(upsample_bicubic2d, upsample) X(upsample_bicubic2d_backward, upsample_backward)            \
    X(upsample_nearest3d, upsample) X(upsample_nearest3d_backward, upsample_backward)            \
    X(_upsample_nearest_exact3d, upsample) X(_upsample_nearest_exact3d_backward, upsample_backward) \
    X(upsample_trilinear3d, upsample) X(upsample_trilinear3d_backward, upsample_backward)        \
    /* spatial transformers: grid_sample.c */                                                    \
    X(grid_sampler_2d, grid_sampler_2d) X(grid_sampler_2d_backward, grid_sampler_2d_backward)   \
    X(grid_sampler_3d, grid_sampler_3d) X(grid_sampler_3d_backward, grid_sampler_3d_backward)   \
    /* layers and losses: nn_checks.c, norm_checks.c */                                          \
    X(layer_norm, layer_norm) X(batch_norm, batch_norm)                                         \
    X(native_layer_norm, layer_norm)                                                      \
    X(layer_norm_backward, layer_norm_backward) X(batch_norm_backward, batch_norm_backward)     \
    X(nll_loss, nll_loss) X(nll_loss_backward, nll_loss_backward)                               \
    X(binary_cross_entropy, binary_cross_entropy)                                                \
    X(binary_cross_entropy_with_logits, binary_cross_entropy_with_logits)                       \
    X(embedding_dense_backward, embedding_dense_backward)                                        \
    /* indexing: index_plan.c */                                                                \
    X(gather, gather) X(scatter, scatter) X(scatter_, scatter) X(scatter_add, scatter)          \
    X(scatter_add_, scatter) X(scatter_reduce, scatter_reduce)                                  \
    X(scatter_reduce_, scatter_reduce) X(index_select, index_select) X(index, index)                      \
    X(index_put_, index_put_) X(embedding, embedding)                                            \
    /* sorting: sort_checks.c */                                                                \
    X(sort, sort) X(argsort, sort) X(topk, topk) X(_unique2, unique)                              \
    /* shape ops that move elements: shape_checks.c */                                          \
    X(cat, cat) X(flip, flip) X(tril, triangle) X(tril_, triangle) X(triu, triangle)            \
    X(triu_, triangle) X(one_hot, one_hot) X(masked_select, masked_select)                      \
    /* the gathering pads: pad.c */                                                             \
    X(reflection_pad1d, pad_gather) X(reflection_pad2d, pad_gather)                             \
    X(reflection_pad3d, pad_gather) X(replication_pad1d, pad_gather)                            \
    X(replication_pad2d, pad_gather) X(replication_pad3d, pad_gather)                           \
    X(constant_pad_nd, constant_pad_nd)                                                          \
    /* factories: factory_args.c */                                                             \
    X(empty, empty) X(arange, arange) X(linspace, spaced) X(logspace, spaced) X(eye, eye)       \
    X(randperm, randperm)                                                                        \
    /* random fills: random_checks.c */                                                         \
    X(uniform_, random_fill) X(normal_, random_fill) X(random_, random_fill)                     \
    X(exponential_, random_fill) X(geometric_, random_fill) X(log_normal_, random_fill)         \
    X(cauchy_, random_fill)                                                                      \
    /* copies and fills: arg_checks.c */                                                        \
    X(copy_, copy_) X(fill_, fill_)                                                              \
    /* optimizer steps: optim.c */                                                              \
    X(_fused_sgd_, fused_sgd) X(_fused_adam_, fused_adam) X(_fused_adamw_, fused_adam)           \
    X(_fused_rmsprop_, fused_rmsprop)                                                            \
    /* random draws: distributions.c */                                                         \
    X(bernoulli_, bernoulli_) X(poisson, poisson) X(multinomial, multinomial)                   \
    X(_standard_gamma, gamma) X(_sample_dirichlet, dirichlet) X(binomial, binomial)              \
    X(_standard_gamma_grad, gamma_grad) X(_dirichlet_grad, gamma_grad)                       \
    /* linear algebra: linalg_fronts.c */                                                        \
    X(linalg_inv_ex, linalg_square) X(linalg_det, linalg_square) X(linalg_slogdet, linalg_square) \
    X(linalg_solve, linalg_solve) X(linalg_solve_triangular, linalg_solve_triangular)           \
    X(linalg_cholesky_ex, linalg_cholesky_ex) X(linalg_qr, linalg_qr)                           \
    X(linalg_lu_factor_ex, linalg_lu_factor_ex) X(lu_unpack, lu_unpack)                         \
    X(linalg_lu_solve, linalg_lu_solve)                                                          \
    X(geqrf, geqrf) X(linalg_ldl_factor_ex, linalg_ldl_factor_ex) X(linalg_ldl_solve, linalg_ldl_solve) \
    X(_linalg_svd, _linalg_svd) X(_linalg_eigh, _linalg_eigh) X(linalg_lstsq, linalg_lstsq)     \
    X(_linalg_eig, _linalg_eig) X(_linalg_eig_backward, _linalg_eig_backward)                 \
    /* statistics: stats_checks.c */                                                            \
    X(histc, histc) X(histogram_bins, histogram_bins) X(bincount, bincount)                     \
    X(searchsorted, searchsorted) X(cummax, cummax) X(cummin, cummax) X(unique_dim, unique_dim)   \
    /* everyday pointwise: reduce_checks.c */                                      \
    X(logcumsumexp, logcumsumexp)                                                               \
    /* discrete Fourier transforms: fft.c */                                                    \
    X(_fft_c2c, fft) X(_fft_r2c, fft) X(_fft_c2r, fft)                                           \
    /* attention: attention.c */                                                                \
    X(_scaled_dot_product_flash_attention_for_cpu, sdpa_flash_cpu)                              \
    /* the fused LSTM cell: rnn.c */                                                            \
    X(_thnn_fused_lstm_cell, lstm_cell_fused) X(_thnn_fused_lstm_cell_backward_impl, lstm_cell_fused_backward)
/* clang-format on */

#define MT_FRONT_DECLARE(op, front) mt_status mt_front_##front(const mt_args *a, mt_plan *p);
MT_FRONTS(MT_FRONT_DECLARE)
#undef MT_FRONT_DECLARE

/* The front end of each op that the dispatcher runs (NULL: none, or the elementwise family's). */
extern const mt_front_fn mt_op_fronts[MT_NUM_OPS];
/* Whether op is one of the elementwise family's (ops/elementwise.def's MT_EW_OP lines). */
extern const bool mt_op_is_elementwise[MT_NUM_OPS];

#endif
