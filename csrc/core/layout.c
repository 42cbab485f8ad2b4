/* Shape and stride arithmetic: element counts, contiguous and dense strides, memory formats,
 * overlap, dim wrapping, broadcasting, sizes as text. Plain arithmetic on sizes and strides: no
 * storage, no allocation (tensor lifetimes are core/tensor.c's). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/tensor.h"

int64_t
mt_numel(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        n *= sizes[d];
    }
    return n;
}

void
mt_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= sizes[d] > 1 ? sizes[d] : 1;
    }
}

bool
mt_tensor_is_contiguous(const mt_tensor *t)
{
    /* As PyTorch: strides of size-1 dims do not matter, nor anything in an empty tensor. */
    if (mt_tensor_numel(t) == 0) {
        return true;
    }
    int64_t expected = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    return true;
}

bool
mt_tensor_is_dense(const mt_tensor *t)
{
    if (mt_tensor_numel(t) == 0) {
        return true;
    }
    /* the dims of size >= 2, by increasing stride, must each step over all the ones before */
    int perm[MT_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] >= 2) {
            int k = n++;
            for (; k > 0 && t->strides[perm[k - 1]] > t->strides[d]; k--) {
                perm[k] = perm[k - 1];
            }
            perm[k] = d;
        }
    }
    int64_t expected = 1;
    for (int k = 0; k < n; k++) {
        if (t->strides[perm[k]] != expected) {
            return false;
        }
        expected *= t->sizes[perm[k]];
    }
    return true;
}

/* 1 if dim a belongs outside dim b, -1 if inside, 0 if no operand says: the first whose strides
 * differ decides (a stride of 0, a broadcast dim, compares with nothing); equal strides put the
 * larger dim outside. */
static int
dense_order(int n, const int64_t (*op_strides)[MT_MAX_DIMS], const int64_t *sizes, int a, int b)
{
    for (int k = 0; k < n; k++) {
        int64_t sa = op_strides[k][a], sb = op_strides[k][b];
        if (sa == 0 || sb == 0) {
            continue;
        }
        if (sa != sb) {
            return sa < sb ? -1 : 1;
        }
        if (sizes[a] > sizes[b]) {
            return 1;
        }
    }
    return 0;
}

void
mt_dense_strides_like(int ndim, const int64_t *sizes, int n,
                      const int64_t (*op_strides)[MT_MAX_DIMS], int64_t *strides)
{
    /* perm lists the dims from innermost out, starting from row-major order, insertion-sorted
     * by dense_order; a dim no operand places keeps its row-major place. */
    int perm[MT_MAX_DIMS];
    for (int k = 0; k < ndim; k++) {
        perm[k] = ndim - 1 - k;
    }
    for (int i = 1; i < ndim; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            int c = dense_order(n, op_strides, sizes, perm[d0], perm[d1]);
            if (c > 0) {
                int tmp = perm[d0];
                perm[d0] = perm[d1];
                perm[d1] = tmp;
                d1 = d0;
            } else if (c < 0) {
                break;
            }
        }
    }
    int64_t step = 1;
    for (int k = 0; k < ndim; k++) {
        strides[perm[k]] = step;
        step *= sizes[perm[k]] > 1 ? sizes[perm[k]] : 1;
    }
}

void
mt_preserve_strides(const mt_tensor *t, int64_t *strides)
{
    if (mt_tensor_is_dense(t)) {
        memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
        return;
    }
    mt_dense_strides_like(t->ndim, t->sizes, 1, &t->strides, strides); /* infer_dense_strides */
}

/* The dims of a channels-last layout from the innermost out: C, then W, H (D), then N. */
static const int cl_order_2d[4] = {1, 3, 2, 0}, cl_order_3d[5] = {1, 4, 3, 2, 0};

mt_memory_format
mt_suggest_memory_format(const mt_tensor *t)
{
    if ((t->ndim != 4 && t->ndim != 5) || t->strides[1] == 0) {
        return MT_CONTIGUOUS_FORMAT;
    }
    const int *order = t->ndim == 4 ? cl_order_2d : cl_order_3d;
    int64_t floor = 0;
    for (int k = 0; k < t->ndim; k++) {
        const int d = order[k];
        if (t->sizes[d] == 0 || t->strides[d] < floor || (d == 0 && floor == t->strides[1])) {
            return MT_CONTIGUOUS_FORMAT;
        }
        floor = t->sizes[d] > 1 ? t->strides[d] * t->sizes[d] : t->strides[d];
    }
    return t->ndim == 4 ? MT_CHANNELS_LAST : MT_CHANNELS_LAST_3D;
}

void
mt_format_strides(mt_memory_format fmt, int ndim, const int64_t *sizes, int64_t *strides)
{
    if (!((fmt == MT_CHANNELS_LAST && ndim == 4) || (fmt == MT_CHANNELS_LAST_3D && ndim == 5))) {
        mt_contiguous_strides(ndim, sizes, strides);
        return;
    }
    const int *order = ndim == 4 ? cl_order_2d : cl_order_3d;
    int64_t step = 1;
    for (int k = 0; k < ndim; k++) {
        strides[order[k]] = step;
        step *= sizes[order[k]];
    }
}

bool
mt_tensor_has_internal_overlap(const mt_tensor *t)
{
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] > 1 && t->strides[d] == 0) {
            return true;
        }
    }
    return false;
}

mt_status
mt_wrap_dim(int64_t dim, int ndim, int *out)
{
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        return mt_fail(MT_EINDEX,
                       "Dimension out of range (expected to be in range of [%" PRId64 ", %" PRId64
                       "], but got %" PRId64 ")",
                       -n, n - 1, dim);
    }
    *out = (int)(dim < 0 ? dim + n : dim);
    return MT_OK;
}

char *
mt_format_sizes(char *buf, size_t n, int ndim, const int64_t *sizes)
{
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && used < n; d++) {
        used += (size_t)snprintf(buf + used, n - used, d ? ", %" PRId64 : "%" PRId64, sizes[d]);
    }
    if (used < n) {
        snprintf(buf + used, n - used, "]");
    }
    return buf;
}

mt_status
mt_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int k = 0; k < n; k++) {
        /* k counts dims from the right, as broadcasting aligns trailing dims. */
        int64_t sa = k < na ? a[na - 1 - k] : 1;
        int64_t sb = k < nb ? b[nb - 1 - k] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            return mt_fail(MT_ESHAPE,
                           "The size of tensor a (%" PRId64
                           ") must match the size of tensor b (%" PRId64
                           ") at non-singleton dimension %d",
                           sa, sb, n - 1 - k);
        }
        out[n - 1 - k] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return MT_OK;
}
