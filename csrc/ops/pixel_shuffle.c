/* pixel_shuffle and pixel_unshuffle, for every device: PyTorch's checks and messages, then one
 * reshape, permute and reshape (a single copy). Composites whose formula rows record one node
 * each (PixelShuffleBackward0, PixelUnshuffleBackward0), as PyTorch's: each is the other's
 * gradient. */
#include "dispatch/kernels.h"
#include "ops/ops.h"

/* self (*, C, H, W) seen as (*, C1, a, b, H1, W1), permuted to (*, C1, H1, a', W1, b') and
 * merged: shuffle (up) splits C = C1 r r and builds (*, C1, H r, W r); unshuffle splits H and W
 * by r and builds (*, C r r, H / r, W / r). */
static mt_status
rearrange(mt_tensor *x, int64_t r, bool up, mt_tensor **out, const char *name)
{
    const int lead = x->ndim - 3;
    const int64_t c = x->sizes[lead], h = x->sizes[lead + 1], w = x->sizes[lead + 2];
    int64_t grown[2];
    /* the sizes the factor multiplies (shuffle's H r and W r, unshuffle's C r r), in range */
    if (up ? __builtin_mul_overflow(h, r, &grown[0]) || __builtin_mul_overflow(w, r, &grown[1])
           : __builtin_mul_overflow(c, r, &grown[0]) ||
                 __builtin_mul_overflow(grown[0], r, &grown[1])) {
        return mt_fail(MT_ERUNTIME, "%s: the output's sizes overflow int64 with a factor of %lld",
                       name, (long long)r);
    }
    int64_t split[MT_MAX_DIMS + 3], order[MT_MAX_DIMS + 3], merged[MT_MAX_DIMS];
    for (int d = 0; d < lead; d++) {
        split[d] = merged[d] = order[d] = d;
        split[d] = merged[d] = x->sizes[d];
    }
    /* shuffle: (C1, r, r, H, W) -> (C1, H, r, W, r); unshuffle: (C, H1, r, W1, r) -> (C, r, r,
     * H1, W1); only the direction's own sizes are computed (the other's may overflow) */
    const int64_t c1 = up ? c / (r * r) : 0;
    const int64_t up_split[5] = {c1, r, r, h, w}, down_split[5] = {c, h / r, r, w / r, r};
    const int64_t up_order[5] = {0, 3, 1, 4, 2}, down_order[5] = {0, 2, 4, 1, 3};
    const int64_t up_merged[3] = {c1, grown[0], grown[1]},
                  down_merged[3] = {grown[1], h / r, w / r};
    for (int k = 0; k < 5; k++) {
        split[lead + k] = up ? up_split[k] : down_split[k];
        order[lead + k] = lead + (up ? up_order[k] : down_order[k]);
    }
    for (int k = 0; k < 3; k++) {
        merged[lead + k] = up ? up_merged[k] : down_merged[k];
    }
    mt_tensor *s = NULL, *p = NULL;
    mt_status st = mt_op_reshape(x, lead + 5, split, &s);
    if (st == MT_OK) {
        st = mt_op_permute(s, lead + 5, order, &p);
    }
    if (st == MT_OK) {
        /* a copy whenever r > 1; r == 1 would give a view, PyTorch gives a new tensor */
        st = r == 1 ? mt_op_clone(x, out) : mt_op_reshape(p, lead + 3, merged, out);
    }
    mt_tensor_clear(&s);
    mt_tensor_clear(&p);
    return st;
}

/* the checks both share: at least 3 dims, a positive factor */
static mt_status
shuffle_checks(const mt_tensor *x, int64_t r, const char *name, const char *factor)
{
    if (x->ndim < 3) {
        return mt_fail(MT_ERUNTIME,
                       "%s expects input to have at least 3 dimensions, but got input with %d "
                       "dimension(s)",
                       name, x->ndim);
    }
    if (r <= 0) {
        return mt_fail(MT_ERUNTIME, "%s expects a positive %s, but got %lld", name, factor,
                       (long long)r);
    }
    return MT_OK;
}

// self (*, C * r * r, H, W), upscale_factor r; out (*, C, H * r, W * r)
mt_status
mt_composite_pixel_shuffle(mt_args *a)
{
    mt_tensor *x = a->t[0];
    const int64_t r = a->i[0];
    mt_status st = shuffle_checks(x, r, "pixel_shuffle", "upscale_factor");
    if (st) {
        return st;
    }
    const int64_t c = x->sizes[x->ndim - 3];
    int64_t rr;
    /* r * r past int64 (a C of 0 alone is divisible by it, into sizes past int64 too) */
    if (__builtin_mul_overflow(r, r, &rr)) {
        return mt_fail(MT_ERUNTIME,
                       "pixel_shuffle: the square of upscale_factor (%lld) overflows int64",
                       (long long)r);
    }
    if (c % rr != 0) {
        return mt_fail(MT_ERUNTIME,
                       "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                       "the square of upscale_factor, but input.size(-3)=%lld is not divisible "
                       "by %lld",
                       (long long)c, (long long)rr);
    }
    return rearrange(x, r, true, &a->out[0], "pixel_shuffle");
}

// self (*, C, H * r, W * r), downscale_factor r; out (*, C * r * r, H, W)
mt_status
mt_composite_pixel_unshuffle(mt_args *a)
{
    mt_tensor *x = a->t[0];
    const int64_t r = a->i[0];
    mt_status st = shuffle_checks(x, r, "pixel_unshuffle", "downscale_factor");
    if (st) {
        return st;
    }
    static const char *const what[2] = {"height", "width"};
    for (int k = 0; k < 2; k++) {
        const int64_t size = x->sizes[x->ndim - 2 + k];
        if (size % r != 0) {
            return mt_fail(MT_ERUNTIME,
                           "pixel_unshuffle expects %s to be divisible by downscale_factor, but "
                           "input.size(%d)=%lld is not divisible by %lld",
                           what[k], k - 2, (long long)size, (long long)r);
        }
    }
    /* PyTorch's pixel_unshuffle gives an empty input back as it is */
    return mt_tensor_numel(x) == 0 ? mt_op_clone(x, &a->out[0])
                                   : rearrange(x, r, false, &a->out[0], "pixel_unshuffle");
}
