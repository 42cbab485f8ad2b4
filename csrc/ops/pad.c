/* Padding, as torch.nn.functional.pad: constant_pad_nd for any number of dims (a filled
 * output, and a copy of the input into its middle; negative pads narrow the input), the
 * reflection and replication pads of the last 1, 2 or 3 dims and _pad_circular as gathers
 * (index_select along each padded dim with an index vector computed here, the same one their
 * backward scatters through: formulas_nn.c), and pad, which checks and picks one as PyTorch's
 * _pad_enum. PyTorch's checks and messages; every device. */
#include <stdio.h>
#include <string.h>

#include "dispatch/kernels.h"
#include "ops/front.h"
#include "ops/nn.h"
#include "ops/ops.h"

/* Circular padding, as PyTorch's, first crops by the negative pads and wraps around what is
 * left (m positions, at least 1: mt_pad_index checks). */
int64_t
mt_pad_source(mt_pad_mode mode, int64_t j, int64_t n, int64_t l, int64_t r)
{
    int64_t i = j - l;
    switch (mode) {
    case MT_PAD_REFLECT: {
        int64_t a = i < 0 ? -i : i;
        int64_t b = (n - 1) - a;
        return (n - 1) - (b < 0 ? -b : b);
    }
    case MT_PAD_REPLICATE:
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    case MT_PAD_CONSTANT:
        return i >= 0 && i < n ? i : -1;
    default: {
        int64_t front = l > 0 ? l : 0, crop = l < 0 ? -l : 0, m = n - crop - (r < 0 ? -r : 0);
        return (((j - front) % m) + m) % m + crop;
    }
    }
}

mt_status
mt_pad_index(mt_pad_mode mode, int64_t n, int64_t l, int64_t r, mt_device dev, mt_tensor **out)
{
    int64_t len = n + l + r;
    if (mode == MT_PAD_CIRCULAR && len > 0 && n + (l < 0 ? l : 0) + (r < 0 ? r : 0) <= 0) {
        /* nothing left to wrap around (PyTorch would copy from the empty middle) */
        return mt_fail(MT_ERUNTIME, "Padding value causes wrapping around more than once.");
    }
    mt_tensor *idx = NULL;
    mt_status st = mt_tensor_empty(1, &len, MT_INT64, MT_DEVICE_CPU, &idx);
    if (st) {
        return st;
    }
    int64_t *v = (int64_t *)mt_tensor_data(idx);
    for (int64_t j = 0; j < len; j++) {
        v[j] = mt_pad_source(mode, j, n, l, r);
    }
    if (dev.type == MT_CPU) {
        *out = idx;
        return MT_OK;
    }
    st = mt_op__to_copy(idx, MT_INT64, dev, out);
    mt_tensor_release(idx);
    return st;
}

/* x gathered along its last npairs dims; pad holds (front, back) per dim, last dim first */
static mt_status
pad_by_index(mt_tensor *x, int npairs, const int64_t *pad, mt_pad_mode mode, mt_tensor **out)
{
    mt_tensor *cur = mt_tensor_retain(x), *idx = NULL, *next = NULL;
    mt_status st = MT_OK;
    for (int k = 0; k < npairs && st == MT_OK; k++) {
        int dim = x->ndim - 1 - k;
        st = mt_pad_index(mode, cur->sizes[dim], pad[2 * k], pad[2 * k + 1], mt_tensor_device(x),
                          &idx);
        if (st == MT_OK && (st = mt_op_index_select(cur, dim, idx, &next)) == MT_OK) {
            mt_tensor_release(cur);
            cur = next;
        }
        mt_tensor_clear(&idx);
    }
    if (st) {
        mt_tensor_release(cur);
        return st;
    }
    *out = cur;
    return MT_OK;
}

/* ---- reflection and replication pads ---- */

static const char *const dim_names[3] = {"W", "H", "D"}; /* padded dims, last first */

/* "input (D: 2 H: 2 W: 3) is too small. Calculated output D: ..." for the padded dims */
static mt_status
too_small(const mt_tensor *x, int npairs, const int64_t *out_sizes)
{
    char in[96] = "", got[96] = "";
    size_t ni = 0, ng = 0;
    for (int k = npairs - 1; k >= 0; k--) {
        const char *sep = k == npairs - 1 ? "" : npairs == 2 ? ", " : " ";
        ni += (size_t)snprintf(in + ni, sizeof(in) - ni, "%s%s: %lld", sep, dim_names[k],
                               (long long)x->sizes[x->ndim - 1 - k]);
        ng += (size_t)snprintf(got + ng, sizeof(got) - ng, "%s%s: %lld", k == npairs - 1 ? "" : " ",
                               dim_names[k], (long long)out_sizes[k]);
    }
    return mt_fail(MT_ERUNTIME, "input (%s) is too small. Calculated output %s", in, got);
}

/* PyTorch's checks of reflection_pad{1,2,3}d and replication_pad{1,2,3}d (npairs dims) */
static mt_status
check_pad(const mt_tensor *x, const mt_intlist *pad, int npairs, mt_pad_mode mode, const char *name)
{
    char sizes[256];
    if (pad->n != 2 * npairs) {
        return mt_fail(MT_ERUNTIME, "padding size is expected to be %d", 2 * npairs);
    }
    bool ok = x->ndim == npairs + 1 || x->ndim == npairs + 2;
    for (int d = x->ndim == npairs + 2 ? 1 : 0; ok && d < x->ndim; d++) {
        ok = x->sizes[d] != 0;
    }
    if (!ok) {
        mt_format_sizes(sizes, sizeof(sizes), x->ndim, x->sizes);
        return mt_fail(MT_ERUNTIME,
                       "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and "
                       "other non-zero dimensions for input, but got: %s",
                       npairs + 1, npairs + 2, sizes);
    }
    if (x->dtype == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for 'Bool'", name);
    }
    int64_t out_sizes[3];
    bool small = false;
    for (int k = 0; k < npairs; k++) {
        int dim = x->ndim - 1 - k;
        int64_t n = x->sizes[dim], l = pad->v[2 * k], r = pad->v[2 * k + 1];
        if (mode == MT_PAD_REFLECT && !(l < n && r < n)) {
            mt_format_sizes(sizes, sizeof(sizes), x->ndim, x->sizes);
            return mt_fail(MT_ERUNTIME,
                           "Argument #%d: Padding size should be less than the corresponding input "
                           "dimension, but got: padding (%lld, %lld) at dimension %d of input %s",
                           4 + 2 * k, (long long)l, (long long)r, dim, sizes);
        }
        out_sizes[k] = n + l + r;
        small |= out_sizes[k] < 1;
    }
    return small ? too_small(x, npairs, out_sizes) : MT_OK;
}

static mt_status
pad_op(mt_args *a, int npairs, mt_pad_mode mode, const char *name)
{
    mt_status st = check_pad(a->t[0], &a->l[0], npairs, mode, name);
    return st ? st : pad_by_index(a->t[0], npairs, a->l[0].v, mode, &a->out[0]);
}

// self (C, *) or (N, C, *), padding (front, back) for the last 1, 2 or 3 dims (the op's), last
// first: PyTorch's checks; the plan's npairs, pad_mode and the result's shape
mt_status
mt_front_pad_gather(const mt_args *a, mt_plan *p)
{
    const mt_op op = p->op;
    const int npairs = op == MT_OP_reflection_pad1d || op == MT_OP_replication_pad1d   ? 1
                       : op == MT_OP_reflection_pad2d || op == MT_OP_replication_pad2d ? 2
                                                                                       : 3;
    const bool reflect = op == MT_OP_reflection_pad1d || op == MT_OP_reflection_pad2d ||
                         op == MT_OP_reflection_pad3d;
    const mt_tensor *x = a->t[0];
    const mt_pad_mode mode = reflect ? MT_PAD_REFLECT : MT_PAD_REPLICATE;
    mt_status st = check_pad(x, &a->l[0], npairs, mode, mt_op_names[op]);
    if (st) {
        return st;
    }
    mt_shape_plan *s = &p->shape;
    s->npairs = npairs;
    s->pad_mode = (int)mode;
    s->ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        int k = x->ndim - 1 - d; /* the pair of dim d, when k < npairs */
        s->sizes[d] = x->sizes[d] + (k < npairs ? a->l[0].v[2 * k] + a->l[0].v[2 * k + 1] : 0);
    }
    return mt_front_output(p, x->dtype, x->ndim, s->sizes);
}

/* The composites of the gathering pads (the kernel of a device without its own; the CPU's is
 * cpu/shape.c's): self (C, *) or (N, C, *) with npairs padded dims (1d: W,
 * 2d: H, W, 3d: D, H, W), padding (front, back) per dim, the last dim first. */
#define PAD_OP(name, npairs, mode)             \
    mt_status mt_composite_##name(mt_args *a)  \
    {                                          \
        return pad_op(a, npairs, mode, #name); \
    }
PAD_OP(reflection_pad1d, 1, MT_PAD_REFLECT)
PAD_OP(reflection_pad2d, 2, MT_PAD_REFLECT)
PAD_OP(reflection_pad3d, 3, MT_PAD_REFLECT)
PAD_OP(replication_pad1d, 1, MT_PAD_REPLICATE)
PAD_OP(replication_pad2d, 2, MT_PAD_REPLICATE)
PAD_OP(replication_pad3d, 3, MT_PAD_REPLICATE)
#undef PAD_OP

// self (N, C, *) or (C, *), pad for the last len(pad) / 2 dims: each crops by its negative
// pads, then wraps around, at most once
mt_status
mt_composite__pad_circular(mt_args *a)
{
    mt_tensor *x = a->t[0];
    const mt_intlist *pad = &a->l[0];
    int npairs = pad->n / 2, unpadded = x->ndim - npairs;
    if (pad->n % 2 != 0 || (unpadded != 1 && unpadded != 2)) {
        return mt_fail(MT_ERUNTIME,
                       "Invalid padding size, expected 1 or 2 non-padded dimensions, which would "
                       "be equivalent to padding of length %d or %d respectively but got %d",
                       (x->ndim - 1) * 2, (x->ndim - 2) * 2, pad->n);
    }
    for (int k = 0; k < npairs; k++) {
        int64_t n = x->sizes[x->ndim - 1 - k], l = pad->v[2 * k], r = pad->v[2 * k + 1];
        if (!(l <= n && r <= n)) {
            return mt_fail(MT_ERUNTIME, "Padding value causes wrapping around more than once.");
        }
        if (n + l + r < 0) {
            return mt_fail(MT_ERUNTIME,
                           "Negative padding value is resulting in an empty dimension");
        }
    }
    return pad_by_index(x, npairs, pad->v, MT_PAD_CIRCULAR, &a->out[0]);
}

/* ---- constant padding ---- */

/* PyTorch's checks of constant_pad_nd(self, pad): an even pad list, at most two per dim of self,
 * and negative pads that crop no more than a dim holds (PyTorch narrows by them first, so its
 * narrow's message); sizes = the result's. */
static mt_status
constant_pad_shape(const mt_tensor *x, const mt_intlist *pad, int64_t *sizes)
{
    const int lead = x->ndim - pad->n / 2;
    if (pad->n % 2 != 0) {
        return mt_fail(MT_ERUNTIME, "Length of pad must be even but instead it equals %d", pad->n);
    }
    if (lead < 0) {
        return mt_fail(MT_ERUNTIME,
                       "Length of pad should be no more than twice the number of dimensions of the "
                       "input. Pad length is %dwhile the input has %ddimensions.",
                       pad->n, x->ndim);
    }
    for (int d = 0; d < x->ndim; d++) {
        int64_t n = x->sizes[d];
        if (d >= lead) {
            int64_t front = pad->v[2 * (x->ndim - d - 1)], back = pad->v[2 * (x->ndim - d - 1) + 1];
            bool cropped_away = (n += front < 0 ? front : 0) < 0;
            cropped_away |= (n += back < 0 ? back : 0) < 0;
            if (cropped_away) {
                return mt_fail(MT_ERUNTIME, "narrow(): length must be non-negative.");
            }
            n += (front > 0 ? front : 0) + (back > 0 ? back : 0);
        }
        sizes[d] = n;
    }
    return MT_OK;
}

// self (any shape), pad (front, back) for its last len(pad) / 2 dims, last first: the result
// in the memory format self suggests (a channels-last image stays channels-last, as PyTorch's),
// which the CPU kernel (cpu/shape.c's mt_cpu_pad_gather) writes once, border and copy together
mt_status
mt_front_constant_pad_nd(const mt_args *a, mt_plan *p)
{
    const mt_tensor *x = a->t[0];
    mt_shape_plan *s = &p->shape;
    int64_t strides[MT_MAX_DIMS];
    mt_status st = constant_pad_shape(x, &a->l[0], s->sizes);
    if (st) {
        return st;
    }
    s->ndim = x->ndim;
    s->npairs = a->l[0].n / 2;
    s->pad_mode = (int)MT_PAD_CONSTANT;
    bool any_positive = false;
    for (int k = 0; k < a->l[0].n; k++) {
        any_positive |= a->l[0].v[k] > 0;
    }
    if (any_positive) {
        mt_format_strides(mt_suggest_memory_format(x), x->ndim, s->sizes, strides);
    } else { /* PyTorch clones self narrowed: that view's layout, made dense */
        mt_dense_strides_like(x->ndim, s->sizes, 1, &x->strides, strides);
    }
    return mt_front_output_strided(p, x->dtype, x->ndim, s->sizes, strides);
}

// self (any shape), pad as above; negative pads narrow; out filled with value around a copy of
// self (the composite of a device without a kernel of its own)
mt_status
mt_composite_constant_pad_nd(mt_args *a)
{
    mt_tensor *x = a->t[0], *in = NULL, *out = NULL, *mid = NULL, *next = NULL;
    const mt_intlist *pad = &a->l[0];
    int64_t shape[MT_MAX_DIMS];
    mt_status st = constant_pad_shape(x, pad, shape);
    if (st) {
        return st;
    }
    /* negative pads: a narrower view of self */
    bool any_positive = false;
    const int lead = x->ndim - pad->n / 2;
    in = mt_tensor_retain(x);
    for (int d = lead; d < x->ndim && st == MT_OK; d++) {
        int64_t front = pad->v[2 * (x->ndim - d - 1)], back = pad->v[2 * (x->ndim - d - 1) + 1];
        any_positive |= front > 0 || back > 0;
        if (front < 0 && (st = mt_op_narrow(in, d, -front, in->sizes[d] + front, &next)) == MT_OK) {
            mt_tensor_release(in);
            in = next;
        }
        if (st == MT_OK && back < 0 &&
            (st = mt_op_narrow(in, d, 0, in->sizes[d] + back, &next)) == MT_OK) {
            mt_tensor_release(in);
            in = next;
        }
    }
    if (st || !any_positive) {
        st = st ? st : mt_op_clone(in, &a->out[0]);
        goto out_release;
    }
    /* in the memory format self suggests: storage for all of it, seen with that format's
     * strides */
    mt_tensor *value = NULL, *flat = NULL;
    int64_t numel = 1, strides[MT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        numel *= shape[d];
    }
    mt_format_strides(mt_suggest_memory_format(x), x->ndim, shape, strides);
    if ((st = mt_op_empty(1, &numel, x->dtype, mt_tensor_device(x), false, &flat)) == MT_OK) {
        st = mt_op_as_strided(flat, x->ndim, shape, x->ndim, strides, 0, &out);
        mt_tensor_release(flat);
    }
    if (st || (st = mt_tensor_scalar(a->s[0], a->s[0].type, &value))) {
        goto out_release;
    }
    st = mt_op_fill_(out, value, &next);
    mt_tensor_release(value);
    mt_tensor_clear(&next);
    /* the copy goes into the middle: out narrowed by the positive pads */
    mid = st ? NULL : mt_tensor_retain(out);
    for (int d = lead; d < x->ndim && st == MT_OK; d++) {
        int64_t front = pad->v[2 * (x->ndim - d - 1)], back = pad->v[2 * (x->ndim - d - 1) + 1];
        int64_t start = front > 0 ? front : 0, len = mid->sizes[d] - start - (back > 0 ? back : 0);
        if ((st = mt_op_narrow(mid, d, start, len, &next)) == MT_OK) {
            mt_tensor_release(mid);
            mid = next;
        }
    }
    if (st == MT_OK && (st = mt_op_copy_(mid, in, &next)) == MT_OK) {
        mt_tensor_clear(&next);
        a->out[0] = out;
        out = NULL;
    }
out_release:
    mt_tensor_clear(&in);
    mt_tensor_clear(&mid);
    mt_tensor_clear(&out);
    return st;
}

/* ---- pad: PyTorch's _pad_enum ---- */

// self, pad, mode ('constant', 'reflect', 'replicate', 'circular'), value (constant only)
mt_status
mt_composite_pad(mt_args *a)
{
    mt_tensor *x = a->t[0];
    const mt_intlist *pad = &a->l[0];
    const char *mode = a->str[0] ? a->str[0] : "constant";
    mt_pad_mode m = MT_PAD_REFLECT;
    if (strcmp(mode, "reflect") == 0) {
        m = MT_PAD_REFLECT;
    } else if (strcmp(mode, "replicate") == 0) {
        m = MT_PAD_REPLICATE;
    } else if (strcmp(mode, "circular") == 0) {
        m = MT_PAD_CIRCULAR;
    } else if (strcmp(mode, "constant") != 0) {
        return mt_fail(MT_ENOTIMPL, "Unrecognised padding mode %s", mode);
    }
    if (pad->n % 2 != 0) {
        return mt_fail(MT_ERUNTIME, "Padding length must be divisible by 2");
    }
    if (pad->n > 2 * x->ndim) {
        return mt_fail(MT_ERUNTIME,
                       "Padding length should be less than or equal to two times the input "
                       "dimension but got padding length %d and input of dimension %d",
                       pad->n, x->ndim);
    }
    if (strcmp(mode, "constant") == 0) {
        mt_scalar v = mt_scalar_is_none(a->s[0]) ? mt_scalar_float(0.0) : a->s[0];
        return mt_op_constant_pad_nd(x, pad->n, pad->v, v, &a->out[0]);
    }
    if (!mt_scalar_is_none(a->s[0]) && mt_scalar_to_double(a->s[0]) != 0) {
        return mt_fail(MT_ERUNTIME, "Padding mode \"%s\" doesn't take in value argument", mode);
    }
    int npairs = pad->n / 2;
    if (npairs >= 1 && npairs <= 3 && (x->ndim == npairs + 1 || x->ndim == npairs + 2)) {
        static mt_status (*const ops[2][3])(mt_tensor *, int, const int64_t *, mt_tensor **) = {
            {mt_op_reflection_pad1d, mt_op_reflection_pad2d, mt_op_reflection_pad3d},
            {mt_op_replication_pad1d, mt_op_replication_pad2d, mt_op_replication_pad3d},
        };
        if (m == MT_PAD_CIRCULAR) {
            return mt_op__pad_circular(x, pad->n, pad->v, &a->out[0]);
        }
        return ops[m == MT_PAD_REPLICATE][npairs - 1](x, pad->n, pad->v, &a->out[0]);
    }
    return mt_fail(MT_ENOTIMPL,
                   "Padding size %d is not supported for %dD input tensor.\n"
                   "Supported combinations for non-constant padding:\n"
                   "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                   "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                   "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)",
                   pad->n, x->ndim);
}
