/* Reductions on the CPU: sum.
 *
 * The output is viewed with stride 0 along reduced dims, so the shared iterator walks the
 * input once and the inner loop accumulates; floats accumulate in double, integers in int64. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"

// acc (input shape, stride 0 on reduced dims), in; acc += in
#define SUM_LOOP(name, ACC, T)                                                  \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                           \
        (void)ctx;                                                              \
        if (strides[0] == 0 && strides[1] == sizeof(T)) {                       \
            /* Eight independent partial sums: the loop vectorises (a single      \
             * accumulator is a serial chain of adds). */                        \
            const T *xs = (const T *)data[1];                                   \
            ACC p[8] = {0};                                                     \
            int64_t i = 0;                                                      \
            for (; i + 8 <= n; i += 8) {                                        \
                for (int j = 0; j < 8; j++) {                                   \
                    p[j] += (ACC)xs[i + j];                                     \
                }                                                               \
            }                                                                   \
            ACC s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])); \
            for (; i < n; i++) {                                                \
                s += (ACC)xs[i];                                                \
            }                                                                   \
            *(ACC *)data[0] += s;                                               \
            return;                                                             \
        }                                                                       \
        if (strides[0] == 0) {                                                  \
            ACC s = 0;                                                          \
            for (int64_t i = 0; i < n; i++) {                                   \
                s += (ACC)MT_AT(T, 1, i);                                       \
            }                                                                   \
            *(ACC *)data[0] += s;                                               \
            return;                                                             \
        }                                                                       \
        for (int64_t i = 0; i < n; i++) {                                       \
            MT_AT(ACC, 0, i) += (ACC)MT_AT(T, 1, i);                            \
        }                                                                       \
    }
SUM_LOOP(sum_b8, int64_t, bool)
SUM_LOOP(sum_i32, int64_t, int32_t)
SUM_LOOP(sum_i64, int64_t, int64_t)
SUM_LOOP(sum_f32, double, float)
SUM_LOOP(sum_f64, double, double)
static const mt_loop_fn sum_loops[MT_NUM_DTYPES] = {sum_b8, sum_i32, sum_i64, sum_f32, sum_f64};

/* Which dims a reduction covers: none given (or an empty list) means all. */
static mt_status
reduced_dims(const mt_tensor *self, const mt_intlist *dims, bool *reduce)
{
    memset(reduce, 0, sizeof(bool) * MT_MAX_DIMS);
    if (dims->none || dims->n == 0) {
        for (int d = 0; d < self->ndim; d++) {
            reduce[d] = true;
        }
        return MT_OK;
    }
    for (int k = 0; k < dims->n; k++) {
        int d;
        mt_status st = mt_wrap_dim(dims->v[k], self->ndim, &d);
        if (st) {
            return st;
        }
        if (reduce[d]) {
            return mt_fail(MT_ERUNTIME, "dim %d appears multiple times in the list of dims", d);
        }
        reduce[d] = self->ndim > 0;
    }
    return MT_OK;
}

// self (any shape), dims; out = sum of self over dims (kept as size 1 when keepdim)
mt_status
mt_cpu_sum(mt_args *a)
{
    mt_tensor *self = a->t[0], *in = self, *cast = NULL, *acc = NULL, *res = NULL;
    bool keepdim = a->b[0];
    bool reduce[MT_MAX_DIMS];
    mt_status st = reduced_dims(self, &a->l[0], reduce);
    if (st) {
        return st;
    }
    mt_dtype out_dt = a->dtype >= 0                          ? (mt_dtype)a->dtype
                      : mt_dtype_is_integral(self->dtype, true) ? MT_INT64
                                                                : self->dtype;
    mt_dtype acc_dt = mt_dtype_is_float(out_dt) ? MT_FLOAT64 : MT_INT64;
    /* An integer sum of floats sums the values converted to that integer type (as PyTorch). */
    if (mt_dtype_is_float(in->dtype) != mt_dtype_is_float(out_dt)) {
        st = mt_cpu_cast(self, out_dt, &cast);
        if (st) {
            return st;
        }
        in = cast;
    }
    int64_t keep[MT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        keep[d] = reduce[d] ? 1 : self->sizes[d];
    }
    st = mt_tensor_empty(self->ndim, keep, acc_dt, mt_tensor_device(self), &acc);
    if (st) {
        goto out_release;
    }
    mt_cpu_fill(acc, mt_scalar_int(0));
    mt_iter it;
    mt_tensor *ops[2] = {acc, in};
    st = mt_iter_build(&it, self->ndim, self->sizes, ops, 2);
    if (st) {
        goto out_release;
    }
    mt_iter_run(&it, sum_loops[in->dtype], NULL);
    st = mt_cpu_cast(acc, out_dt, &res);
    if (st) {
        goto out_release;
    }
    if (keepdim) {
        a->out[0] = res;
        res = NULL;
    } else {
        int64_t sizes[MT_MAX_DIMS], strides[MT_MAX_DIMS];
        int n = 0;
        for (int d = 0; d < self->ndim; d++) {
            if (!reduce[d]) {
                sizes[n++] = self->sizes[d];
            }
        }
        mt_contiguous_strides(n, sizes, strides);
        st = mt_tensor_view(res, n, sizes, strides, 0, &a->out[0]);
    }
out_release:
    mt_tensor_clear(&res);
    mt_tensor_clear(&acc);
    mt_tensor_clear(&cast);
    return st;
}
