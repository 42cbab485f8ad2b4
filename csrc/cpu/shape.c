/* Shape kernels on the CPU that move elements: cat, flip, tril and triu (and their in-place
 * forms). Views (narrow, split, ...) live in csrc/ops/, since they move nothing.
 *
 * cat copies each input into its slice of the result with mt_cpu_copy_into, so any strides and
 * any mix of dtypes work; flip gathers with negative strides, which no tensor may hold. */
#include <inttypes.h>
#include <string.h>

#include "core/math.h"
#include "cpu/copy.h"
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"

mt_status
mt_cpu_cat(mt_args *a)
{
    return mt_cat_with(a, mt_cpu_copy_into);
}

/* Copies the elements of a strided block (byte strides, which may be negative) to dst in
 * row-major order; ndim may be 0 (one element). */
static void
gather(char *dst, const char *src, int ndim, const int64_t *sizes, const int64_t *strides,
       size_t esize)
{
    int64_t idx[MT_MAX_DIMS] = {0};
    int64_t inner = ndim ? sizes[ndim - 1] : 1, step = ndim ? strides[ndim - 1] : 0;
    int64_t rows = mt_numel(ndim, sizes) / inner;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < inner; i++, dst += esize) {
            if (esize == 1) { /* a bool: normalised as it is read (core/math.h) */
                *dst = (char)mt_load_b8(src + i * step);
            } else {
                memcpy(dst, src + i * step, esize);
            }
        }
        for (int d = ndim - 2; d >= 0; d--) {
            src += strides[d];
            if (++idx[d] < sizes[d]) {
                break;
            }
            src -= strides[d] * sizes[d];
            idx[d] = 0;
        }
    }
}

// self (any shape), dims; out (the result: same shape, contiguous) with the dims in dims
// reversed
mt_status
mt_cpu_flip(mt_args *a)
{
    mt_tensor *self = a->t[0], *out = a->out[0];
    const bool *flip = a->plan->shape.dims;
    if (mt_tensor_numel(out) > 0) {
        size_t esize = mt_dtype_size(self->dtype);
        const char *src = mt_tensor_data(self);
        int64_t strides[MT_MAX_DIMS];
        for (int d = 0; d < self->ndim; d++) {
            strides[d] = self->strides[d] * (int64_t)esize;
            if (flip[d]) {
                src += (self->sizes[d] - 1) * strides[d];
                strides[d] = -strides[d];
            }
        }
        gather(mt_tensor_data(out), src, self->ndim, self->sizes, strides, esize);
    }
    return MT_OK;
}

/* Zeroes the elements of t (..., M, N) outside its lower (tril) or upper (triu) triangle:
 * element (i, j) stays when j - i <= diagonal (lower), when j - i >= diagonal (upper). Zero is
 * all bits clear in every dtype. */
static void
zero_triangle(mt_tensor *t, int64_t diagonal, bool lower)
{
    int nd = t->ndim;
    int64_t m = t->sizes[nd - 2], n = t->sizes[nd - 1];
    if (m == 0 || n == 0) {
        return;
    }
    size_t esize = mt_dtype_size(t->dtype);
    int64_t rs = t->strides[nd - 2] * (int64_t)esize, cs = t->strides[nd - 1] * (int64_t)esize;
    /* Beyond these bounds every diagonal gives the same result; they keep i + k in range. */
    int64_t k = diagonal < -m ? -m : diagonal > n ? n : diagonal;
    int64_t batches = mt_tensor_numel(t) / (m * n);
    for (int64_t b = 0; b < batches; b++) {
        char *base = mt_tensor_data(t);
        for (int64_t rest = b, d = nd - 3; d >= 0; d--) {
            base += (rest % t->sizes[d]) * t->strides[d] * (int64_t)esize;
            rest /= t->sizes[d];
        }
        for (int64_t i = 0; i < m; i++) {
            /* zero the columns [lo, hi) of row i */
            int64_t lo = lower ? i + k + 1 : 0, hi = lower ? n : i + k;
            lo = lo < 0 ? 0 : lo > n ? n : lo;
            hi = hi < 0 ? 0 : hi > n ? n : hi;
            char *row = base + i * rs;
            if (cs == (int64_t)esize && hi > lo) {
                memset(row + lo * cs, 0, (size_t)(hi - lo) * esize);
                continue;
            }
            for (int64_t j = lo; j < hi; j++) {
                memset(row + j * cs, 0, esize);
            }
        }
    }
}

// self (..., M, N); out (the result, contiguous (..., M, N)): self inside the triangle of
// diagonal i[0] (tril: below and on it, triu: above and on it), else 0; in place: into self. One kernel for the four ops
// (ops.def's CPU_AS(triangle) rows; the plan's op tells them apart).
mt_status
mt_cpu_triangle(mt_args *a)
{
    const mt_op op = a->plan->op;
    const bool lower = op == MT_OP_tril || op == MT_OP_tril_;
    const bool inplace = op == MT_OP_tril_ || op == MT_OP_triu_;
    mt_tensor *self = a->t[0];
    if (inplace) {
        zero_triangle(self, a->i[0], lower);
        mt_tensor_bump_version(self);
        a->out[0] = mt_tensor_retain(self);
        return MT_OK;
    }
    mt_status st = mt_cpu_copy_into(a->out[0], self);
    if (st == MT_OK) {
        zero_triangle(a->out[0], a->i[0], lower);
    }
    return st;
}
