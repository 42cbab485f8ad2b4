/* Selection by a mask on the CPU: masked_select, nonzero (masked_fill is an elementwise op:
 * ops/elementwise.def).
 *
 * The shared iterator walks its operands in row-major order of their logical shape (it drops and
 * merges dims but never reorders them), so masked_select and nonzero can append to their output
 * as they go. Elements move as raw words of their width (bool for width 1, normalised as it is
 * read: loops.h; complex128 for width 16). */
#include <inttypes.h>
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/front.h"

/* Both ops run as PyTorch's do on several threads: the elements split into parts (ranges of
 * the row-major order), each part's trues counted on its thread, a prefix sum of the counts
 * giving each part where its output begins, and each thread writing its own part. The writes
 * are branchless (every element is stored at the next free slot, which advances only on a
 * true): a mask of random trues mispredicts half of the branches of `if (mask) write`. A part
 * stops once its count is written, so no store leaves its own slots. */
#define MASK_MAX_PARTS 64 /* the most parts one call is split into (and counts it keeps) */

/* out[p] = the first output slot of part p, for parts counts; returns the total. */
static int64_t
prefix(const int64_t *count, int parts, int64_t *out)
{
    int64_t total = 0;
    for (int p = 0; p < parts; p++) {
        out[p] = total;
        total += count[p];
    }
    return total;
}

/* ---- masked_select ---- */

typedef struct select_ctx {
    char *out;     /* the next free element of the result */
    int64_t count; /* of true mask elements: counted, or (writing) still to write */
} select_ctx;

// mask (*) bool; count += number of trues
static void
count_loop(char **data, const int64_t *strides, int64_t n, void *ctx)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) {
        c += MT_GET(bool, 1, i);
    }
    ((select_ctx *)ctx)->count += c;
}

// self (*), mask (*) bool; appends self[i] where mask[i], until count elements are written
#define SELECT_LOOP(name, T)                                                    \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                           \
        select_ctx *c = ctx;                                                    \
        T *out = (T *)c->out;                                                   \
        int64_t pos = 0;                                                        \
        for (int64_t i = 0; i < n && pos < c->count; i++) {                     \
            out[pos] = MT_GET(T, 0, i);                                         \
            pos += MT_GET(bool, 1, i);                                          \
        }                                                                       \
        c->out = (char *)(out + pos);                                           \
        c->count -= pos;                                                        \
    }
SELECT_LOOP(select_w1, bool)
SELECT_LOOP(select_w4, uint32_t)
SELECT_LOOP(select_w8, uint64_t)
SELECT_LOOP(select_w16, double _Complex)

// self (*), mask (*) bool, broadcast together; out (count of trues) = self's elements where mask
mt_status
mt_cpu_masked_select(mt_args *a)
{
    mt_tensor *self = a->t[0], *mask = a->t[1];
    const mt_shape_plan *p = &a->plan->shape;
    mt_tensor *ops[2] = {self, mask};
    mt_iter it;
    mt_status st = mt_iter_build(&it, p->ndim, p->sizes, ops, 2);
    if (st) {
        return st;
    }
    const int parts = mt_iter_parts(&it) < MASK_MAX_PARTS ? mt_iter_parts(&it) : MASK_MAX_PARTS;
    int64_t count[MASK_MAX_PARTS], first[MASK_MAX_PARTS];
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        mt_iter sub;
        select_ctx c = {NULL, 0};
        mt_iter_part(&it, parts, k, &sub);
        mt_iter_run(&sub, count_loop, &c);
        count[k] = c.count;
    }
    int64_t total = prefix(count, parts, first);
    if ((st = mt_dispatch_result(a, 0, self->dtype, 1, &total, mt_tensor_device(self)))) {
        return st;
    }
    const size_t w = mt_dtype_size(self->dtype);
    const mt_loop_fn loop = w == 1   ? select_w1
                            : w == 4 ? select_w4
                            : w == 8 ? select_w8
                                     : select_w16;
    char *out = mt_tensor_data(a->out[0]);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        mt_iter sub;
        select_ctx c = {out + first[k] * (int64_t)w, count[k]};
        mt_iter_part(&it, parts, k, &sub);
        mt_iter_run(&sub, loop, &c);
    }
    return MT_OK;
}

/* ---- nonzero ---- */

// f (n) 0/1; the number of ones in f[begin, end)
static int64_t
count_ones(const bool *f, int64_t begin, int64_t end)
{
    int64_t c = 0;
    for (int64_t i = begin; i < end; i++) {
        c += f[i];
    }
    return c;
}

// f (n) 0/1, flat over sizes (ndim >= 1); out (count, ndim) = the coordinates of the ones in
// f[begin, end), of which there are count. Walks rows of the last dim, whose other coordinates
// stay put along the row.
static void
coordinates(const bool *f, int ndim, const int64_t *sizes, int64_t begin, int64_t end,
            int64_t count, int64_t *out)
{
    int64_t coord[MT_MAX_DIMS], rest = begin, pos = 0;
    if (count == 0) {
        return; /* nothing to write, and a dim of size 0 cannot be divided by */
    }
    for (int d = ndim - 1; d >= 0; d--) {
        coord[d] = rest % sizes[d];
        rest /= sizes[d];
    }
    const int last = ndim - 1;
    for (int64_t i = begin; i < end && pos < count;) {
        const int64_t row_end = i + (sizes[last] - coord[last]),
                      stop = row_end < end ? row_end : end;
        for (int64_t j = coord[last]; i < stop && pos < count; i++, j++) {
            int64_t *o = out + pos * ndim;
            for (int d = 0; d < last; d++) {
                o[d] = coord[d];
            }
            o[last] = j;
            pos += f[i];
        }
        coord[last] = 0; /* the next row's start, carried into the dims before */
        for (int d = last - 1; d >= 0 && ++coord[d] == sizes[d]; d--) {
            coord[d] = 0;
        }
    }
}

// self (*); out (count, ndim) int64: the coordinates of self's nonzero elements in row-major
// order (NaN counts as nonzero)
mt_status
mt_cpu_nonzero(mt_args *a)
{
    mt_tensor *self = a->t[0], *flags = NULL;
    /* contiguous, and 0 or 1 (the cast reads self's bools as byte != 0): element i is flat i */
    mt_status st = mt_cpu_cast(self, MT_BOOL, &flags);
    if (st) {
        return st;
    }
    const bool *f = (const bool *)mt_tensor_data(flags);
    const int64_t n = mt_tensor_numel(flags);
    const int parts = mt_parallel_parts(n, 32768) < MASK_MAX_PARTS ? mt_parallel_parts(n, 32768)
                                                                   : MASK_MAX_PARTS;
    int64_t count[MASK_MAX_PARTS], first[MASK_MAX_PARTS];
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        count[k] = count_ones(f, n * k / parts, n * (k + 1) / parts);
    }
    int64_t shape[2] = {prefix(count, parts, first), self->ndim};
    if ((st = mt_dispatch_result(a, 0, MT_INT64, 2, shape, mt_tensor_device(self)))) {
        goto out_release;
    }
    int64_t *out = (int64_t *)mt_tensor_data(a->out[0]);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int k = 0; k < parts; k++) {
        if (self->ndim > 0) {
            coordinates(f, self->ndim, self->sizes, n * k / parts, n * (k + 1) / parts, count[k],
                        out + first[k] * self->ndim);
        }
    }
out_release:
    mt_tensor_clear(&flags);
    return st;
}
