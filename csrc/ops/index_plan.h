/* What the index kernels of every device share (index_plan.c; their front ends, the checks of
 * gather, scatter, index_select, index, index_put_ and embedding, are there too): the plan of
 * advanced indexing (self[indices]): the result's shape, self viewed with it, and the positions
 * of the indexed elements. Only the loops and the reading of index values are the device's own
 * (csrc/cpu/index.c, cuda/ops_index.c). */
#ifndef MT_OPS_INDEX_PLAN_H
#define MT_OPS_INDEX_PLAN_H

#include "dispatch/dispatch.h"
#include "ops/fails.h"

/* t's sizes and strides with at least one dim: gather and scatter see a 0-dim tensor as one
 * element of a 1-dim one, as PyTorch does. Returns the number of dims. */
int mt_index_geometry1(const mt_tensor *t, int64_t *sizes, int64_t *strides);

/* The byte offsets (shape B, contiguous int64, on self's device) of the indexed dims' elements:
 * the sum over the indexed dims d of wrap(idx[d]) * self's byte stride of d, each idx[d]
 * broadcast to B; an index outside [-size, size) fails with mt_fail_index_bounds(MT_EINDEX).
 * idx[d] is NULL for a dim that is not indexed. The device's part of the plan. */
typedef mt_status (*mt_index_offsets_fn)(mt_tensor *self, mt_tensor *const *idx, int nb,
                                         const int64_t *b, mt_tensor **out);

/* self[indices] as PyTorch's index sees it. indices[k] applies to the next dim of self (a bool
 * mask of m dims to the next m, as the columns of its nonzero()); NULL skips a dim. The index
 * tensors broadcast to one shape B, which replaces the indexed dims in the result: in their place
 * if they are adjacent, else in front (NumPy's rule). The indices passed the front end's checks;
 * what only their values show (no broadcast shape, an index out of range) fails here. */
typedef struct mt_index_plan {
    int ndim;
    int64_t shape[MT_MAX_DIMS]; /* the result's */
    mt_tensor *src;             /* self with the result's shape, stride 0 along B */
    mt_tensor *pos;             /* int64 byte offsets into self, shape B seen as the result's */
} mt_index_plan;

/* values: index_put_'s, checked against the result's shape before any index is read (PyTorch's
 * order: a shape mismatch is reported before an index out of bounds), or NULL */
mt_status mt_index_plan_make(mt_tensor *self, int n, mt_tensor *const *indices,
                             mt_index_offsets_fn offsets, const mt_tensor *values,
                             mt_index_plan *p);
void mt_index_plan_release(mt_index_plan *p);
/* self[indices]'s checks before any index is read (index_advanced.c), which the front ends of
 * index and index_put_ run first. */
mt_status mt_index_check_indices(const mt_tensor *self, int n, mt_tensor *const *indices);

/* ---- the kernels, over a device's backend ---- */

typedef enum mt_index_mode {
    MT_INDEX_TAKE, /* dst = *(src + pos * step) */
    MT_INDEX_PUT,  /* *(dst + pos * step) = src */
    MT_INDEX_ADD,  /* *(dst + pos * step) += src (atomically where positions repeat) */
    /* the other reductions of scatter and scatter_reduce, atomic as ADD: *= src, and
     * maximum / minimum (NaN-propagating, core/math.h's) of the two */
    MT_INDEX_MUL,
    MT_INDEX_MAX,
    MT_INDEX_MIN,
} mt_index_mode;

/* What a device gives the index kernels below. */
typedef struct mt_index_backend {
    /* *out = index as a contiguous int64 tensor (a copy when it shares written's memory), or,
     * when a value lies outside [0, size), *out NULL, *bad true and *bad_value the first one. */
    mt_status (*positions)(mt_tensor *index, int64_t size, const mt_tensor *written,
                           mt_tensor **out, bool *bad, int64_t *bad_value);
    /* *out = a new contiguous copy of src in dtype dt. */
    mt_status (*cast)(mt_tensor *src, mt_dtype dt, mt_tensor **out);
    /* One pass of mode over dst, src (of dst's dtype) and pos (int64), each broadcast to shape;
     * step is the bytes per unit of position. apart: dst is a view of a tensor whose elements
     * are all distinct memory (dense), so where dst steps along a dim, distinct indices of it
     * write distinct elements, whatever the positions (a device may split it between threads). */
    mt_status (*run)(int ndim, const int64_t *shape, mt_tensor *dst, mt_tensor *src, mt_tensor *pos,
                     mt_index_mode mode, int64_t step, bool apart);
    mt_index_offsets_fn offsets;
} mt_index_backend;

/* The kernels of gather, scatter (with its reduce) and scatter_add (add) in place or not,
 * scatter_reduce, index, index_put_, index_select and embedding, for any device, after their
 * front ends (a->plan). */
mt_status mt_index_gather(mt_args *a, const mt_index_backend *be);
mt_status mt_index_scatter(mt_args *a, const mt_index_backend *be, bool inplace);
mt_status mt_index_scatter_reduce(mt_args *a, const mt_index_backend *be, bool inplace);
mt_status mt_index_index(mt_args *a, const mt_index_backend *be);
mt_status mt_index_put(mt_args *a, const mt_index_backend *be);
mt_status mt_index_select(mt_args *a, const mt_index_backend *be);
mt_status mt_index_embedding(mt_args *a, const mt_index_backend *be);

/* The family's ops, each with its call of the kernels above for a backend be: X(op, call). The
 * CPU's kernels (cpu/index.c) and a device backend's (dispatch/backend.c) are generated from
 * this one list. */
#define MT_INDEX_OPS(X)                                      \
    X(gather, mt_index_gather(a, be))                        \
    X(index, mt_index_index(a, be))                          \
    X(index_put_, mt_index_put(a, be))                       \
    X(index_select, mt_index_select(a, be))                  \
    X(embedding, mt_index_embedding(a, be))                  \
    X(scatter, mt_index_scatter(a, be, false))               \
    X(scatter_, mt_index_scatter(a, be, true))               \
    X(scatter_add, mt_index_scatter(a, be, false))           \
    X(scatter_add_, mt_index_scatter(a, be, true))           \
    X(scatter_reduce, mt_index_scatter_reduce(a, be, false)) \
    X(scatter_reduce_, mt_index_scatter_reduce(a, be, true))

#endif
