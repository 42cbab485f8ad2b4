/* The shared argument rules of ops/factory_args.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops/factory_args.h"
#include "ops/reduce_dims.h"

/* The number of values start + i * step before end (exclusive), for a step of end's side of
 * start: ceil((end - start) / step) in unsigned arithmetic, which no int64 range overflows. */
static uint64_t
range_count(int64_t start, int64_t end, int64_t step)
{
    uint64_t dist = step > 0 ? (uint64_t)end - (uint64_t)start : (uint64_t)start - (uint64_t)end;
    uint64_t by = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    return dist / by + (dist % by != 0);
}

mt_status
mt_arange_spec(const mt_args *a, const char *device, mt_range_spec *r)
{
    mt_scalar start = a->s[0], end = a->s[1], step = a->s[2];
    if (mt_scalar_is_none(end)) {
        end = start;
        start = mt_scalar_int(0);
    }
    if (mt_scalar_is_none(step)) {
        step = mt_scalar_int(1);
    }
    bool any_float = start.type == MT_FLOAT64 || end.type == MT_FLOAT64 || step.type == MT_FLOAT64;
    *r = (mt_range_spec){0};
    r->dt = a->dtype >= 0 ? (mt_dtype)a->dtype : any_float ? MT_DEFAULT_FLOAT : MT_INT64;
    double s = mt_scalar_to_double(start), e = mt_scalar_to_double(end),
           d = mt_scalar_to_double(step);
    if (!(d > 0 || d < 0)) { /* NaN too */
        return mt_fail(MT_ERUNTIME, "step must be nonzero");
    }
    if (!isfinite(s) || !isfinite(e)) {
        return mt_fail(MT_ERUNTIME, "unsupported range: %g -> %g", s, e);
    }
    if ((d > 0 && e < s) || (d < 0 && e > s)) {
        return mt_fail(MT_ERUNTIME, "upper bound and lower bound inconsistent with step sign");
    }
    if (r->dt == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"arange_%s\" not implemented for 'Bool'", device);
    }
    double count = ceil((e - s) / d);
    r->s = s;
    r->d = d;
    r->ints = mt_dtype_is_integral(r->dt, false);
    if (r->ints) {
        /* An integer arange computes in int64 from start and step taken as int64 first (PyTorch's
         * accumulate type): arange(0, 5, 1.5, dtype=int64) counts 0, 1, 2, 3, 4. */
        mt_status st;
        if ((st = mt_check_scalar_fits(start, MT_INT64)) ||
            (st = mt_check_scalar_fits(step, MT_INT64)) ||
            (r->dt == MT_INT64 && (st = mt_check_scalar_fits(end, MT_INT64)))) {
            return st;
        }
        r->si = mt_scalar_to_int(start);
        r->di = mt_scalar_to_int(step);
        if (r->dt == MT_INT64) {
            /* PyTorch sizes an int64 range in int64, exact past 2**53; other dtypes by the
             * doubles above (int32's arange(0, 5, 1.5) has 4 elements 0, 1, 2, 3). */
            if (r->di == 0) {
                return mt_fail(MT_EVALUE, "step must be nonzero");
            }
            count = (double)range_count(r->si, mt_scalar_to_int(end), r->di);
        }
    }
    if (count > 9.0e18) {
        return mt_fail(MT_ERUNTIME, "invalid size, possible overflow?");
    }
    r->n = (int64_t)count;
    return MT_OK;
}

/* Start or end as the output dtype sees it first (an integer dtype truncates 0.5 to 0). */
static double
endpoint(mt_scalar s, mt_dtype dt)
{
    return mt_dtype_is_float(dt) ? mt_scalar_to_double(s) : (double)mt_scalar_to_int(s);
}

mt_status
mt_spaced_spec(const mt_args *a, const char *kernel, mt_range_spec *r)
{
    *r = (mt_range_spec){0};
    r->dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    r->n = a->i[0];
    if (r->n < 0) {
        return mt_fail(MT_ERUNTIME, "number of steps must be non-negative");
    }
    if (r->dt == MT_BOOL) {
        return mt_fail(MT_ENOTIMPL, "\"%s\" not implemented for 'Bool'", kernel);
    }
    r->s = endpoint(a->s[0], r->dt);
    r->e = endpoint(a->s[1], r->dt);
    r->base = mt_scalar_is_none(a->s[2]) ? 10.0 : mt_scalar_to_double(a->s[2]);
    return MT_OK;
}

mt_status
mt_eye_spec(const mt_args *a, mt_dtype *dt, int64_t *n, int64_t *m)
{
    *dt = a->dtype >= 0 ? (mt_dtype)a->dtype : MT_DEFAULT_FLOAT;
    *n = a->i[0];
    *m = (a->i_none & 2u) ? *n : a->i[1];
    if (*n < 0) {
        return mt_fail(MT_ERUNTIME, "n must be greater or equal to 0, got %lld", (long long)*n);
    }
    if (*m < 0) {
        return mt_fail(MT_ERUNTIME, "m must be greater or equal to 0, got %lld", (long long)*m);
    }
    return MT_OK;
}

mt_status
mt_factory_finish(mt_args *a, mt_tensor *out)
{
    mt_status st = mt_tensor_set_requires_grad(out, a->b[0]);
    if (st) {
        mt_tensor_release(out);
        return st;
    }
    a->out[0] = out;
    return MT_OK;
}

/* PyTorch still accepts 1-D empty tensors of any other shape in cat, and skips them. */
static bool
cat_skips(const mt_tensor *t)
{
    return t->ndim == 1 && t->sizes[0] == 0;
}

/* Checks that t matches the reference tensor in every dim but dim; PyTorch's messages. */
static mt_status
check_cat_shape(const mt_tensor *ref, const mt_tensor *t, int dim, int index)
{
    if (ref->ndim != t->ndim) {
        return mt_fail(MT_ERUNTIME, "Tensors must have same number of dimensions: got %d and %d",
                       ref->ndim, t->ndim);
    }
    for (int d = 0; d < t->ndim; d++) {
        if (d != dim && ref->sizes[d] != t->sizes[d]) {
            return mt_fail(MT_ERUNTIME,
                           "Sizes of tensors must match except in dimension %d. Expected size "
                           "%" PRId64 " but got size %" PRId64 " for tensor number %d in the list.",
                           dim, ref->sizes[d], t->sizes[d], index);
        }
    }
    return MT_OK;
}

/* cat(tensors, dim): PyTorch's checks; the promoted dtype, the result's rank, sizes, and dim. */
static mt_status
cat_spec(const mt_args *a, mt_dtype *dt, int *ndim, int64_t *sizes, int *dim)
{
    int n = a->ntl;
    mt_tensor **ts = a->tl;
    if (n == 0) {
        return mt_fail(MT_EVALUE, "torch.cat(): expected a non-empty list of Tensors");
    }
    *dt = ts[0]->dtype;
    int ref = -1;
    for (int k = 0; k < n; k++) {
        if (ts[k]->ndim == 0) {
            return mt_fail(MT_ERUNTIME,
                           "zero-dimensional tensor (at position %d) cannot be concatenated", k);
        }
        *dt = mt_promote_types(*dt, ts[k]->dtype);
        if (ref < 0 && !cat_skips(ts[k])) {
            ref = k;
        }
    }
    *ndim = 1;
    *dim = 0;
    memset(sizes, 0, sizeof(int64_t) * MT_MAX_DIMS);
    if (ref < 0) {
        return MT_OK;
    }
    mt_status st = mt_wrap_dim(a->i[0], ts[ref]->ndim, dim);
    if (st) {
        return st;
    }
    *ndim = ts[ref]->ndim;
    memcpy(sizes, ts[ref]->sizes, sizeof(int64_t) * (size_t)*ndim);
    sizes[*dim] = 0;
    for (int k = ref; k < n; k++) {
        if (cat_skips(ts[k])) {
            continue;
        }
        if ((st = check_cat_shape(ts[ref], ts[k], *dim, k))) {
            return st;
        }
        sizes[*dim] += ts[k]->sizes[*dim];
    }
    return MT_OK;
}

// tensors: n tensors (A, k_i, B) along dim (1-D empty ones skipped); out (A, sum k_i, B), of
// the promoted dtype
mt_status
mt_cat_with(mt_args *a, mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src))
{
    mt_dtype dt = MT_FLOAT32;
    int ndim = 1, dim = 0;
    int64_t sizes[MT_MAX_DIMS];
    mt_tensor **ts = a->tl, *out;
    mt_status st = cat_spec(a, &dt, &ndim, sizes, &dim);
    if (st || (st = mt_tensor_empty(ndim, sizes, dt, mt_tensor_device(ts[0]), &out))) {
        return st;
    }
    int64_t at = 0; /* where the next input starts along dim */
    for (int k = 0; k < a->ntl && st == MT_OK && mt_tensor_numel(out) > 0; k++) {
        if (cat_skips(ts[k]) || ts[k]->sizes[dim] == 0) {
            continue;
        }
        mt_tensor *slot;
        st = mt_tensor_view(out, ndim, ts[k]->sizes, out->strides, at * out->strides[dim], &slot);
        if (st == MT_OK) {
            st = copy_into(slot, ts[k]);
            mt_tensor_release(slot);
        }
        at += ts[k]->sizes[dim];
    }
    if (st) {
        mt_tensor_release(out);
        return st;
    }
    a->out[0] = out;
    return MT_OK;
}

mt_status
mt_check_one_hot(const mt_tensor *self, const mt_args *a, int64_t *classes)
{
    *classes = (a->i_none & 1u) ? -1 : a->i[0];
    if (self->dtype != MT_INT64) {
        return mt_fail(MT_ERUNTIME, "one_hot is only applicable to index tensor of type LongTensor.");
    }
    if (self->ndim + 1 > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "one_hot: the input has too many dimensions");
    }
    if (mt_tensor_numel(self) == 0 && *classes == -1) {
        return mt_fail(MT_ERUNTIME, "Can not infer total number of classes from empty tensor.");
    }
    return MT_OK;
}

mt_status
mt_check_triangle(const mt_tensor *self, const char *name)
{
    if (self->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: input tensor must have at least 2 dimensions", name);
    }
    return MT_OK;
}

mt_status
mt_flip_dims(const mt_tensor *self, const mt_intlist *dims, bool *flip)
{
    return mt_dim_set(self, dims, flip);
}
