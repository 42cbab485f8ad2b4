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

/* ---- masked_select ---- */

typedef struct select_ctx {
    char *out;     /* the next free element of the result */
    int64_t count; /* of true mask elements */
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

// self (*), mask (*) bool; appends self[i] where mask[i]
#define SELECT_LOOP(name, T)                                                    \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                           \
        select_ctx *c = ctx;                                                    \
        T *out = (T *)c->out;                                                   \
        for (int64_t i = 0; i < n; i++) {                                       \
            if (MT_GET(bool, 1, i)) {                                           \
                *out++ = MT_GET(T, 0, i);                                       \
            }                                                                   \
        }                                                                       \
        c->out = (char *)out;                                                   \
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
    select_ctx c = {NULL, 0};
    mt_iter_run(&it, count_loop, &c);
    if ((st = mt_dispatch_result(a, 0, self->dtype, 1, &c.count, mt_tensor_device(self)))) {
        return st;
    }
    size_t w = mt_dtype_size(self->dtype);
    c.out = mt_tensor_data(a->out[0]);
    mt_iter_run(&it, w == 1 ? select_w1 : w == 4 ? select_w4 : w == 8 ? select_w8 : select_w16, &c);
    return MT_OK;
}

/* ---- nonzero ---- */

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
    int64_t n = mt_tensor_numel(flags), count = 0;
    for (int64_t i = 0; i < n; i++) {
        count += f[i];
    }
    int64_t shape[2] = {count, self->ndim};
    if ((st = mt_dispatch_result(a, 0, MT_INT64, 2, shape, mt_tensor_device(self)))) {
        goto out_release;
    }
    int64_t *out = (int64_t *)mt_tensor_data(a->out[0]), coord[MT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (f[i] && self->ndim) {
            memcpy(out, coord, sizeof(int64_t) * (size_t)self->ndim);
            out += self->ndim;
        }
        for (int d = self->ndim - 1; d >= 0 && ++coord[d] == self->sizes[d]; d--) {
            coord[d] = 0;
        }
    }
out_release:
    mt_tensor_clear(&flags);
    return st;
}
