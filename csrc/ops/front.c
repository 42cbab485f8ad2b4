/* The tables of front ends (front.h), by op, and how a front end states its results. */
#include <string.h>

#include "ops/front.h"
#include "ops/ops.h" /* copy_, for mt_front_relayout_outputs */

mt_status
mt_front_output_strided(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes,
                        const int64_t *strides)
{
    if (p->nout >= MT_MAX_OUTPUTS || ndim > MT_MAX_DIMS) {
        return mt_fail(MT_ERUNTIME, "%s: %d results of %d dims are more than a call holds",
                       mt_op_names[p->op], p->nout + 1, ndim);
    }
    mt_out_spec *o = &p->out[p->nout++];
    o->relayout = false;
    o->dtype = dt;
    o->ndim = ndim;
    if (ndim > 0) { /* a 0-dim result may come with NULL sizes */
        memcpy(o->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
        memcpy(o->strides, strides, sizeof(int64_t) * (size_t)ndim);
    }
    return MT_OK;
}

mt_status
mt_front_output(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes)
{
    int64_t strides[MT_MAX_DIMS];
    if (ndim > MT_MAX_DIMS) {
        return mt_check_sizes(ndim, sizes);
    }
    mt_contiguous_strides(ndim, sizes, strides);
    return mt_front_output_strided(p, dt, ndim, sizes, strides);
}

mt_status
mt_front_output_format(mt_plan *p, mt_dtype dt, int ndim, const int64_t *sizes,
                       mt_memory_format fmt)
{
    int64_t strides[MT_MAX_DIMS], rows[MT_MAX_DIMS];
    if (ndim > MT_MAX_DIMS) {
        return mt_check_sizes(ndim, sizes);
    }
    mt_format_strides(fmt, ndim, sizes, strides);
    mt_contiguous_strides(ndim, sizes, rows);
    mt_status st = mt_front_output_strided(p, dt, ndim, sizes, strides);
    if (st == MT_OK) {
        p->out[p->nout - 1].relayout = ndim > 0 &&
                                       memcmp(strides, rows, sizeof(int64_t) * (size_t)ndim) != 0;
    }
    return st;
}

mt_status
mt_front_write_result(mt_tensor *out, const mt_tensor *src)
{
    /* an empty result has nothing to copy (and channels-last strides of 0 outside a size-0
     * dim, which copy_ would refuse to write through) */
    mt_status st = mt_tensor_numel(out) > 0 ? mt_op_copy_(out, (mt_tensor *)src, NULL) : MT_OK;
    /* a new result nobody has seen: its version stays 0 (copy_ is its first write) */
    atomic_store(&out->version->value, 0);
    return st;
}

bool
mt_front_take_format(const mt_plan *p, mt_args *a, int k)
{
    const mt_out_spec *o = &p->out[k];
    mt_tensor *t = a->out[k];
    if (!o->relayout || t == NULL || t->ndim != o->ndim) {
        return false;
    }
    /* a permutation of the row-major strides of the same sizes: the same bytes, laid out anew */
    memcpy(t->strides, o->strides, sizeof(int64_t) * (size_t)o->ndim);
    return true;
}

mt_status
mt_front_relayout_outputs(const mt_plan *p, mt_args *a)
{
    mt_status st = MT_OK;
    for (int k = 0; k < p->nout && st == MT_OK; k++) {
        const mt_out_spec *o = &p->out[k];
        mt_tensor *t = NULL;
        if (!o->relayout ||
            memcmp(a->out[k]->strides, o->strides, sizeof(int64_t) * (size_t)o->ndim) == 0) {
            continue; /* row-major as stated, or written in its layout (mt_front_take_format) */
        }
        st = mt_tensor_empty_strided(o->ndim, o->sizes, o->strides, o->dtype,
                                     mt_tensor_device(a->out[k]), &t);
        if (st == MT_OK) {
            st = mt_front_write_result(t, a->out[k]);
        }
        if (st == MT_OK) {
            mt_tensor_release(a->out[k]);
            a->out[k] = t;
            t = NULL;
        }
        mt_tensor_clear(&t);
    }
    return st;
}

/* Whether t and u reach a common element (their byte ranges meet), other than as one view
 * when same_view. */
static bool
shares_memory(const mt_tensor *t, const mt_tensor *u, bool same_view)
{
    if (t == NULL || t->storage != u->storage || mt_tensor_numel(t) == 0) {
        return false;
    }
    return !(same_view && mt_tensor_same_view(t, u));
}

mt_tensor *
mt_front_dest(mt_args *a, mt_op op, int k, mt_dtype dt, int ndim, const int64_t *sizes,
              const int64_t *strides, mt_device dev, bool same_view)
{
    mt_tensor *d = a->into[k];
    if (d == NULL || a->into_op != (int)op || d->dtype != dt || d->is_inference ||
        d->python_dispatch || !mt_device_eq(mt_tensor_device(d), dev)) {
        return NULL;
    }
    for (int j = 0; j < MT_MAX_TENSOR_ARGS; j++) {
        if (shares_memory(a->t[j], d, same_view)) {
            return NULL;
        }
    }
    for (int l = 0; l < MT_MAX_TENSOR_LISTS && mt_args_tensorlist(a, l).t; l++) {
        mt_tensorlist tl = mt_args_tensorlist(a, l);
        for (int j = 0; j < tl.n; j++) {
            if (shares_memory(tl.t[j], d, false)) {
                return NULL;
            }
        }
    }
    bool same_sizes = d->ndim == ndim &&
                      (ndim == 0 || memcmp(d->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0);
    if (!same_sizes) {
        mt_tensor *r = NULL;
        if (mt_tensor_numel(d) != 0 || mt_op_resize_(d, ndim, sizes, &r) != MT_OK) {
            return NULL; /* the copy resizes it, with PyTorch's warning, or says why not */
        }
        mt_tensor_clear(&r);
    }
    if (strides ? ndim > 0 && memcmp(d->strides, strides, sizeof(int64_t) * (size_t)ndim) != 0
                : mt_tensor_has_internal_overlap(d)) {
        return NULL;
    }
    return d;
}

mt_status
mt_front_alloc_outputs(const mt_plan *p, mt_args *a, mt_device dev)
{
    mt_status st = MT_OK;
    for (int k = 0; k < p->nout && st == MT_OK; k++) {
        const mt_out_spec *o = &p->out[k];
        mt_tensor *d = NULL;
        if (o->ndim != MT_OUT_BY_KERNEL && !o->relayout &&
            (d = mt_front_dest(a, p->op, k, o->dtype, o->ndim, o->sizes, o->strides, dev, false))) {
            a->out[k] = mt_tensor_retain(d);
        } else if (o->ndim != MT_OUT_BY_KERNEL) {
            int64_t rows[MT_MAX_DIMS];
            const int64_t *strides = o->strides;
            if (o->relayout) { /* the kernel's row-major result, copied into strides after */
                mt_contiguous_strides(o->ndim, o->sizes, rows);
                strides = rows;
            }
            st = mt_tensor_empty_strided(o->ndim, o->sizes, strides, o->dtype, dev, &a->out[k]);
        }
    }
    for (int k = 0; st && k < p->nout; k++) {
        mt_tensor_clear(&a->out[k]);
    }
    return st;
}

mt_status
mt_front_output_by_kernel(mt_plan *p, mt_dtype dt)
{
    mt_status st = mt_front_output(p, dt, 0, NULL);
    if (st == MT_OK) {
        p->out[p->nout - 1].ndim = MT_OUT_BY_KERNEL;
    }
    return st;
}

mt_status
mt_front_output_like(mt_plan *p, mt_dtype dt, const mt_tensor *t)
{
    int64_t strides[MT_MAX_DIMS];
    mt_preserve_strides(t, strides);
    return mt_front_output_strided(p, dt, t->ndim, t->sizes, strides);
}

const mt_front_fn mt_op_fronts[MT_NUM_OPS] = {
#define MT_FRONT_ENTRY(op, front) [MT_OP_##op] = mt_front_##front,
    MT_FRONTS(MT_FRONT_ENTRY)
#undef MT_FRONT_ENTRY
};

const bool mt_op_is_elementwise[MT_NUM_OPS] = {
#define MT_EW_OP(op, row, flags, shell, schema) [MT_OP_##op] = true,
#include "ops/elementwise.def"
};
