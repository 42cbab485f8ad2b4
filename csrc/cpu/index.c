/* Gathering and scattering through index tensors on the CPU: index_select, gather, scatter,
 * scatter_add, and index / index_put_, the kernels of advanced indexing (t[idx], t[idx] = v).
 *
 * Each kernel is one run of the shared iterator over three operands of one shape: a destination,
 * a source, and int64 positions. The tensor that is indexed is viewed with that shape and a
 * stride of 0 along the indexed dims; the position of each element, times the byte stride of
 * the indexed dim, is added to its address (PyTorch's index kernels work the same way). Indices
 * are checked against their dim before anything is written, so a bad index leaves the
 * destination untouched. Elements move as raw bytes of their width, so one loop serves every
 * dtype of a width; only the accumulating forms compute, per dtype. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/elementwise.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/index_plan.h"

/* ---- the loops: data[0] destination, data[1] source, data[2] int64 positions ---- */

typedef struct move_ctx {
    int64_t step; /* bytes per unit of position */
} move_ctx;

// dst[i] = *(src_i + pos[i] * step): the source is indexed. One position for the whole run (a
// row of t[idx]) is a plain strided copy, which the compiler vectorises.
#define TAKE_LOOP(name, T)                                                                  \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)             \
    {                                                                                       \
        const int64_t step = ((const move_ctx *)ctx)->step;                                 \
        if (strides[2] == 0) {                                                              \
            const char *src = data[1] + *(const int64_t *)data[2] * step;                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                MT_AT(T, 0, i) = *(const T *)(src + i * strides[1]);                        \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                   \
            MT_AT(T, 0, i) = *(const T *)(data[1] + i * strides[1] + MT_AT(int64_t, 2, i) * step); \
        }                                                                                   \
    }
// *(dst_i + pos[i] * step) = src[i] (or += when accumulating): the destination is indexed
#define PUT_LOOP(name, T, EXPR)                                                             \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)             \
    {                                                                                       \
        const int64_t step = ((const move_ctx *)ctx)->step;                                 \
        for (int64_t i = 0; i < n; i++) {                                                   \
            T *p = (T *)(data[0] + i * strides[0] + MT_AT(int64_t, 2, i) * step);           \
            const T v = MT_AT(T, 1, i);                                                     \
            *p = (EXPR);                                                                    \
        }                                                                                   \
    }
TAKE_LOOP(take_w1, uint8_t)
TAKE_LOOP(take_w4, uint32_t)
TAKE_LOOP(take_w8, uint64_t)
PUT_LOOP(put_w1, uint8_t, v)
PUT_LOOP(put_w4, uint32_t, v)
PUT_LOOP(put_w8, uint64_t, v)
/* indexed by log2 of the element's width, halved: 1 -> 0, 4 -> 1, 8 -> 2 */
static const mt_loop_fn take_loops[3] = {take_w1, take_w4, take_w8};
static const mt_loop_fn put_loops[3] = {put_w1, put_w4, put_w8};
#define ADD_LOOP(E, T, S) PUT_LOOP(add_##S, T, (T)(*p + v))
MT_DTYPES(ADD_LOOP)
static const mt_loop_fn add_loops[MT_NUM_DTYPES] = {add_b8, add_i32, add_i64, add_f32, add_f64};

static mt_loop_fn
by_width(const mt_loop_fn *loops, mt_dtype dt)
{
    size_t w = mt_dtype_size(dt);
    return loops[w == 1 ? 0 : w == 4 ? 1 : 2];
}

/* One iterator run of loop over (dst, src, pos), each broadcast to shape. */
static mt_status
run(int ndim, const int64_t *shape, mt_tensor *dst, mt_tensor *src, mt_tensor *pos,
    mt_loop_fn loop, int64_t step)
{
    mt_tensor *ops[3] = {dst, src, pos};
    mt_iter it;
    mt_status st = mt_iter_build(&it, ndim, shape, ops, 3);
    if (st == MT_OK) {
        move_ctx c = {step};
        mt_iter_run(&it, loop, &c);
    }
    return st;
}

/* ---- shared checks ---- */

/* index as a contiguous int64 tensor (a new reference, a copy if it shares the memory of
 * `written`), every value checked to lie in [0, size); the message of an index outside is
 * PyTorch's gather and scatter one. */
static mt_status
positions(mt_tensor *index, int dim, int64_t size, const mt_tensor *written, mt_tensor **out)
{
    bool reuse = index->dtype == MT_INT64 && mt_tensor_is_contiguous(index) &&
                 (written == NULL || index->storage != written->storage);
    mt_status st = reuse ? (*out = mt_tensor_retain(index), MT_OK)
                         : mt_cpu_cast(index, MT_INT64, out);
    if (st) {
        return st;
    }
    const int64_t *v = (const int64_t *)mt_tensor_data(*out);
    for (int64_t i = 0, n = mt_tensor_numel(*out); i < n; i++) {
        if (v[i] < 0 || v[i] >= size) {
            mt_tensor_clear(out);
            return mt_fail_index_bounds(v[i], dim, size, MT_ERUNTIME);
        }
    }
    return MT_OK;
}

/* A view of t with the given sizes and strides (in elements) at t's own offset. */
static mt_status
restride(mt_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, mt_tensor **out)
{
    return mt_tensor_view(t, ndim, sizes, strides, t->offset, out);
}

/* ---- gather ---- */

// self (*), index (*) int32/int64 of self's rank, no larger than self but along dim;
// out (index's shape)[..., i, ...] = self[..., index[..., i, ...], ...] with i at dim
mt_status
mt_cpu_gather(mt_args *a)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *pos = NULL, *src = NULL;
    int dim = 0;
    mt_status st = mt_check_gather(self, a->i[0], index, &dim);
    if (st) {
        return st;
    }
    int64_t ss[MT_MAX_DIMS], sst[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, sst);
    mt_index_geometry1(index, is, ist);
    if ((st = positions(index, dim, ss[dim], NULL, &pos))) {
        return st;
    }
    int64_t step = sst[dim] * (int64_t)mt_dtype_size(self->dtype);
    sst[dim] = 0;
    st = restride(self, n, is, sst, &src);
    if (st == MT_OK) {
        st = mt_tensor_empty(index->ndim, index->sizes, self->dtype, mt_tensor_device(self),
                             &a->out[0]);
    }
    if (st == MT_OK) {
        st = run(n, is, a->out[0], src, pos, by_width(take_loops, self->dtype), step);
    }
    if (st) {
        mt_tensor_clear(&a->out[0]);
    }
    mt_tensor_clear(&src);
    mt_tensor_clear(&pos);
    return st;
}

/* ---- scatter, scatter_add ---- */

// self (*), index (*) int of self's rank, src (*) no smaller than index, or a Python number;
// self[..., index[..., i, ...], ...] = src[..., i, ...] (or +=), i at dim
static mt_status
scatter_into(mt_tensor *self, int dim, mt_tensor *index, mt_tensor *src, bool add)
{
    mt_tensor *pos = NULL, *dst = NULL, *from = NULL;
    int64_t ss[MT_MAX_DIMS], sst[MT_MAX_DIMS], is[MT_MAX_DIMS], ist[MT_MAX_DIMS];
    int64_t cs[MT_MAX_DIMS], cst[MT_MAX_DIMS];
    int n = mt_index_geometry1(self, ss, sst);
    mt_index_geometry1(index, is, ist);
    mt_status st = positions(index, dim, ss[dim], self, &pos);
    if (st) {
        return st;
    }
    if (src->is_wrapped_number || src->storage == self->storage) {
        /* A number takes self's dtype; a source sharing self's memory is read before writing. */
        st = mt_cpu_cast(src, self->dtype, &from);
    } else {
        from = mt_tensor_retain(src);
    }
    if (st == MT_OK && from->ndim > 0) {
        mt_index_geometry1(from, cs, cst);
        mt_tensor *v = NULL;
        st = restride(from, n, is, cst, &v);
        mt_tensor_release(from);
        from = v;
    }
    int64_t step = sst[dim] * (int64_t)mt_dtype_size(self->dtype);
    sst[dim] = 0;
    if (st == MT_OK) {
        st = restride(self, n, is, sst, &dst);
    }
    if (st == MT_OK) {
        mt_loop_fn loop = add ? add_loops[self->dtype] : by_width(put_loops, self->dtype);
        st = run(n, is, dst, from, pos, loop, step);
        mt_tensor_bump_version(self);
    }
    mt_tensor_clear(&dst);
    mt_tensor_clear(&from);
    mt_tensor_clear(&pos);
    return st;
}

static mt_status
scatter(mt_args *a, bool add, bool inplace)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *src = a->t[2], *target = NULL;
    int dim = 0;
    mt_status st = mt_check_scatter(self, a->i[0], index, src, &dim);
    if (st) {
        return st;
    }
    if (inplace) {
        if ((st = mt_check_writable(self))) {
            return st;
        }
        target = mt_tensor_retain(self);
    } else if ((st = mt_cpu_cast(self, self->dtype, &target))) {
        return st;
    }
    st = scatter_into(target, dim, index, src, add);
    if (st) {
        mt_tensor_release(target);
        return st;
    }
    a->out[0] = target;
    return MT_OK;
}

MT_CPU_KERNELS(scatter, scatter, false)
MT_CPU_KERNELS(scatter_add, scatter, true)

/* ---- advanced indexing: index, index_put_, index_select ---- */

typedef struct offset_ctx {
    int64_t size, step; /* of the indexed dim: its size, its stride in bytes */
    bool bad;
    int64_t bad_index;
} offset_ctx;

// pos (B), idx (broadcast to B); pos += wrap(idx) * step, a negative index counting from the end
#define OFFSET_LOOP(name, T)                                                        \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)     \
    {                                                                               \
        offset_ctx *c = ctx;                                                        \
        for (int64_t i = 0; i < n && !c->bad; i++) {                                \
            int64_t j = (int64_t)MT_AT(T, 1, i);                                    \
            if (j < -c->size || j >= c->size) {                                     \
                c->bad = true;                                                      \
                c->bad_index = j;                                                   \
                return;                                                             \
            }                                                                       \
            MT_AT(int64_t, 0, i) += (j < 0 ? j + c->size : j) * c->step;            \
        }                                                                           \
    }
OFFSET_LOOP(offset_i32, int32_t)
OFFSET_LOOP(offset_i64, int64_t)

/* The CPU's mt_index_offsets_fn (ops/index_plan.h). */
static mt_status
offsets(mt_tensor *self, mt_tensor *const *idx, int nb, const int64_t *b, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(nb, b, MT_INT64, mt_tensor_device(self), out);
    if (st) {
        return st;
    }
    mt_cpu_fill(*out, mt_scalar_int(0));
    int64_t width = (int64_t)mt_dtype_size(self->dtype);
    for (int d = 0; d < self->ndim && st == MT_OK; d++) {
        if (idx[d] == NULL) {
            continue;
        }
        offset_ctx c = {self->sizes[d], self->strides[d] * width, false, 0};
        mt_tensor *ops[2] = {*out, idx[d]};
        mt_iter it;
        if ((st = mt_iter_build(&it, nb, b, ops, 2))) {
            break;
        }
        mt_iter_run(&it, idx[d]->dtype == MT_INT32 ? offset_i32 : offset_i64, &c);
        if (c.bad) {
            st = mt_fail_index_bounds(c.bad_index, d, c.size, MT_EINDEX);
        }
    }
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

/* out = self[indices] (a new tensor) */
static mt_status
take(mt_tensor *self, int n, mt_tensor *const *indices, mt_tensor **out)
{
    mt_index_plan p;
    mt_status st = mt_index_plan_make(self, n, indices, offsets, &p);
    if (st) {
        return st;
    }
    st = mt_tensor_empty(p.ndim, p.shape, self->dtype, mt_tensor_device(self), out);
    if (st == MT_OK && (st = run(p.ndim, p.shape, *out, p.src, p.pos,
                                 by_width(take_loops, self->dtype), 1))) {
        mt_tensor_clear(out);
    }
    mt_index_plan_release(&p);
    return st;
}

// self (*), indices (tensors or NULL, one per leading dim); out = self[indices]
mt_status
mt_cpu_index(mt_args *a)
{
    return take(a->t[0], a->ntl, a->tl, &a->out[0]);
}

// self (*), indices as for index, values broadcast to self[indices]'s shape, of self's dtype;
// self[indices] = values (or += values when accumulate)
mt_status
mt_cpu_index_put_(mt_args *a)
{
    mt_tensor *self = a->t[0], *values = a->t[1], *from = NULL;
    mt_status st = mt_check_index_put_dtype(self, values);
    if (st || (st = mt_check_writable(self))) {
        return st;
    }
    mt_index_plan p;
    if ((st = mt_index_plan_make(self, a->ntl, a->tl, offsets, &p))) {
        return st;
    }
    if ((st = mt_check_index_put(values, &p))) {
        goto out_release;
    }
    /* values that share self's memory are read in full before anything is written */
    st = values->storage == self->storage ? mt_cpu_cast(values, values->dtype, &from)
                                          : (from = mt_tensor_retain(values), MT_OK);
    if (st == MT_OK) {
        mt_loop_fn loop = a->b[0] ? add_loops[self->dtype] : by_width(put_loops, self->dtype);
        st = run(p.ndim, p.shape, p.src, from, p.pos, loop, 1);
        mt_tensor_bump_version(self);
    }
    if (st == MT_OK) {
        a->out[0] = mt_tensor_retain(self);
    }
out_release:
    mt_tensor_clear(&from);
    mt_index_plan_release(&p);
    return st;
}

// self (*), index (n) or 0-dim, int32/int64; out = self with dim's entries self[..., index, ...]
mt_status
mt_cpu_index_select(mt_args *a)
{
    mt_tensor *self = a->t[0], *index = a->t[1], *flat = NULL, *res = NULL;
    int dim = 0;
    int64_t n = 0;
    mt_status st = mt_check_index_select(self, a->i[0], index, &dim, &n);
    if (st) {
        return st;
    }
    int64_t size = self->ndim ? self->sizes[dim] : 1;
    if ((st = mt_cpu_cast(index, MT_INT64, &flat))) {
        return st;
    }
    const int64_t *v = (const int64_t *)mt_tensor_data(flat);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= size) {
            st = mt_fail(MT_EINDEX, "index out of range in self");
            goto out_release;
        }
    }
    /* a 0-dim self is one element of a 1-dim one; a 0-dim index one of a 1-dim index */
    int64_t one = 1, zero = 0;
    mt_tensor *base = self;
    if (self->ndim == 0 && (st = mt_tensor_view(self, 1, &one, &zero, self->offset, &base))) {
        goto out_release;
    }
    mt_tensor *view = NULL;
    if ((st = mt_tensor_view(flat, 1, &n, &one, 0, &view)) == MT_OK) {
        mt_tensor *indices[MT_MAX_DIMS] = {NULL};
        indices[dim] = view;
        st = take(base, dim + 1, indices, &res);
        mt_tensor_release(view);
    }
    if (base != self) {
        mt_tensor_release(base);
    }
    if (st == MT_OK && self->ndim == 0) {
        /* the one element back as a 0-dim tensor */
        st = mt_tensor_view(res, 0, NULL, NULL, res->offset, &a->out[0]);
        mt_tensor_clear(&res);
    } else {
        a->out[0] = res;
    }
out_release:
    mt_tensor_clear(&flat);
    return st;
}
