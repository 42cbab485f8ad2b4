/* Storage and tensor: the data model of minitorch.
 *
 * A storage is a refcounted block of memory from an allocator. A tensor is a strided view of a
 * storage: sizes, strides and offset in elements, a dtype, and the flags autograd needs. Views
 * share their storage and their base's version counter, which in-place ops bump. Neither struct
 * knows about Python; `pyobj` is an opaque back pointer kept by the binding layer. */
#ifndef MT_TENSOR_H
#define MT_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/allocator.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/scalar.h"
#include "core/status.h"

/* Most dims a tensor may have; sizes and strides are stored inline (NumPy allows 64). */
#define MT_MAX_DIMS 64

/* A version counter (PyTorch's VariableVersion): bumped by every in-place write through a tensor
 * that uses it; autograd compares it with the value it saved. It belongs to a tensor and its
 * views, as in PyTorch: views and detach() share their base's, `.data` gets a new one
 * (mt_tensor_new_version), so `x.data.add_(1)` is not a change autograd sees. The tensors made
 * on a storage start with the storage's own counter (no allocation per tensor); a tensor holds a
 * reference to its counter only when it is not its storage's (after `t.data = other`, t keeps
 * its counter, and the struct of its old storage outlives that storage's memory). */
typedef struct mt_version {
    atomic_long value;
    atomic_long refcount; /* a storage's own counts 1 for the storage while its memory lives */
    struct mt_storage *home; /* the storage that embeds it, or NULL (malloc'ed alone) */
} mt_version;

/* Something a kernel derived from a storage's contents and keeps with it for its next call
 * (conv_winograd.c's transformed weight): released with the storage's memory. */
typedef struct mt_derived {
    void (*release)(struct mt_derived *d);
} mt_derived;

typedef struct mt_storage {
    atomic_long refcount;
    void *data;
    size_t nbytes;
    mt_allocator *allocator; /* frees data */
    void *ctx;               /* the allocator's per-block context */
    mt_device device;
    mt_version version; /* the first counter of the tensors made on this storage */
    /* in-place writes through any tensor on it, whichever version counter each bumped (`.data`
     * has one of its own): what a derived block's validity is checked against */
    atomic_long writes;
    _Atomic(mt_derived *) derived; /* NULL, or one block; taken with an atomic exchange */
} mt_storage;

typedef struct mt_tensor {
    atomic_long refcount;
    mt_storage *storage;
    mt_version *version; /* &storage->version, or a counter of its own (shared by its views) */
    int64_t offset; /* in elements */
    int ndim;
    int64_t sizes[MT_MAX_DIMS];
    int64_t strides[MT_MAX_DIMS]; /* in elements, never negative */
    mt_dtype dtype;
    bool requires_grad; /* its own flag: a view also requires grad when its base does */
    bool is_wrapped_number; /* made from a Python number: weaker in type promotion */
    /* made in inference mode (mt_inference_mode), or a view of such a tensor (PyTorch's
     * inference tensors): outside inference mode it is not updated in place nor saved for
     * backward, and it has no version counter to read */
    bool is_inference;
    /* the wrapper of a Tensor subclass with __torch_dispatch__ (python/python_dispatch.c): every
     * call with it among its tensors takes the dispatcher's Python key; set by the binding layer,
     * and kept by a view made in C (mt_tensor_view), which has no memory either */
    bool python_dispatch;
    /* pyobj is a strong reference that this tensor holds (PyTorch's PyObject preservation: the
     * subclass object outlives its last Python reference while the tensor lives on, in a graph
     * or as a gradient); mt_tensor_pyobj_hook drops it when the tensor goes */
    bool owns_pyobj;
    /* A view (made by a view op: PyTorch's _base): the tensor whose memory it views, never
     * itself a view (a view of a view points at the first one's base), owned; NULL otherwise.
     * It shares its base's version counter. Under autograd (autograd/autograd.h), a view whose
     * base was changed in place since view_version gets its history rebuilt from the base's. */
    struct mt_tensor *view_base;
    long view_version; /* a view: the version its grad_fn was last set at */
    uint8_t view_creation; /* a view: how it was made (mt_view_creation) */
    int view_output_nr; /* a view: which output of the op that made it (for messages) */
    struct mt_tensor *grad;
    void *pyobj; /* borrowed: the live Python wrapper of this tensor, if any */
    /* autograd (autograd/autograd.h): the node that made this tensor (owned; NULL for a leaf)
     * and which of its outputs it is; a leaf's AccumulateGrad node (borrowed: the node owns
     * the leaf and clears this when it goes) */
    struct mt_node *grad_fn;
    int output_nr;
    bool retains_grad;
    /* a leaf's Tensor.grad_dtype: 0 its own dtype (the default), MT_GRAD_DTYPE_ANY (None: a
     * gradient of any dtype may be assigned), else 1 + the dtype its gradients are cast to */
    uint8_t grad_dtype;
    struct mt_node *grad_acc;
    /* a leaf's gradient hooks (autograd/autograd.h), owned; a non-leaf's are its grad_fn's */
    struct mt_hook *hooks;
    /* Set on a sparse COO gradient (autograd/sparse_grad.h): this tensor holds its values
     * (nnz, *dense dims) and sparse_indices, owned, its int64 indices (sparse_dim, nnz); its
     * dense size is that of the variable it is the gradient of. NULL on every other tensor. */
    struct mt_tensor *sparse_indices;
    bool sparse_coalesced; /* its indices are sorted and unique */
} mt_tensor;

#define MT_GRAD_DTYPE_ANY 255 /* mt_tensor.grad_dtype for None */

/* How a view was made, which decides whether autograd lets it (or its base) be modified in
 * place (PyTorch's CreationMeta). */
typedef enum mt_view_creation {
    MT_VIEW_DEFAULT, /* by a view op in grad mode */
    MT_VIEW_NO_GRAD, /* in no_grad mode, or a view of such a view */
    MT_VIEW_MULTI_OUTPUT, /* one of the views of unbind, split or chunk */
    MT_VIEW_CUSTOM_FUNCTION, /* an output of an autograd.Function */
} mt_view_creation;

mt_status mt_storage_new(size_t nbytes, mt_device dev, mt_storage **out);
/* Wraps memory owned elsewhere; allocator->free(allocator, data, nbytes, ctx) runs at the end. */
mt_status mt_storage_wrap(void *data, size_t nbytes, mt_device dev, mt_allocator *allocator,
                          void *ctx, mt_storage **out);
void mt_storage_retain(mt_storage *s);
void mt_storage_release(mt_storage *s);

/* A new contiguous tensor; its memory is uninitialised. */
mt_status mt_tensor_empty(int ndim, const int64_t *sizes, mt_dtype dtype, mt_device dev,
                          mt_tensor **out);
/* A new tensor laid out by strides, a permutation of a contiguous layout of sizes (dense). */
mt_status mt_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                  mt_dtype dtype, mt_device dev, mt_tensor **out);
/* A view of base's storage with the given geometry, checked against the storage's bounds. */
mt_status mt_tensor_view(mt_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
                         int64_t offset, mt_tensor **out);
/* Gives t a version counter of its own (kept by the views made of t from now on), starting at
 * value; t's old counter stays with the tensors that share it. */
mt_status mt_tensor_new_version(mt_tensor *t, long value);
/* t uses src's version counter from now on (PyTorch's set_version_counter: a view made
 * elsewhere, a __torch_dispatch__ subclass's, joins its base's). */
void mt_tensor_share_version(mt_tensor *t, const mt_tensor *src);
/* Moves t onto storage (retained; t's old one released), keeping t's version counter. */
void mt_tensor_set_storage(mt_tensor *t, mt_storage *storage);
/* A tensor on storage (which it retains), checked against the storage's bounds. */
mt_status mt_tensor_on_storage(mt_storage *storage, int ndim, const int64_t *sizes,
                               const int64_t *strides, int64_t offset, mt_dtype dtype,
                               mt_tensor **out);
/* A 0-dim CPU tensor holding a Python number, flagged as a wrapped number. */
mt_status mt_tensor_scalar(mt_scalar value, mt_dtype dtype, mt_tensor **out);

static inline mt_tensor *
mt_tensor_retain(mt_tensor *t)
{
    atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
    return t;
}
void mt_tensor_release(mt_tensor *t);
/* Set by the binding layer: releases the Python object a tensor owns (owns_pyobj) at its end. */
extern void (*mt_tensor_pyobj_hook)(mt_tensor *t);
/* Autograd's part of a tensor's end (autograd.c): drops its grad_fn and retain_grad link. */
void mt_autograd_forget(mt_tensor *t);
/* Frees a list of gradient hooks (autograd.c). */
void mt_hooks_free(struct mt_hook *h);
/* Autograd's part of a view op (autograd/views.c): out, just made from self by a view op,
 * becomes a view of self's base. */
void mt_autograd_as_view(mt_tensor *self, mt_tensor *out);
/* views[0..n), the results of unbind, split or chunk (whose node PyTorch names node_name), may
 * not be modified in place under autograd, nor their base while they are used. */
void mt_autograd_multi_output_views(mt_tensor **views, int64_t n, const char *node_name);
/* Releases *t if set and clears it. */
void mt_tensor_clear(mt_tensor **t);
/* The number of tensor and storage structs now alive (for leak tests). */
void mt_live_counts(int64_t *tensors, int64_t *storages);

int64_t mt_numel(int ndim, const int64_t *sizes);
static inline int64_t
mt_tensor_numel(const mt_tensor *t)
{
    return mt_numel(t->ndim, t->sizes);
}
static inline mt_device
mt_tensor_device(const mt_tensor *t)
{
    return t->storage->device;
}
static inline char *
mt_tensor_data(const mt_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)mt_dtype_size(t->dtype);
}
static inline void
mt_tensor_bump_version(mt_tensor *t)
{
    atomic_fetch_add_explicit(&t->version->value, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->storage->writes, 1, memory_order_relaxed);
}
static inline long
mt_tensor_version(const mt_tensor *t)
{
    return atomic_load(&t->version->value);
}
/* Whether t requires grad: its own flag, or for a view its base's, which an in-place op may
 * have set since the view was made (PyTorch's DifferentiableViewMeta::requires_grad). */
static inline bool
mt_tensor_requires_grad(const mt_tensor *t)
{
    return t->requires_grad || (t->view_base && t->view_base->requires_grad);
}

/* Inference mode (PyTorch's InferenceMode), for the calling thread: while on, every new tensor
 * but a view is an inference tensor. */
bool mt_inference_mode(void);
void mt_set_inference_mode(bool on);
/* PyTorch's errors for an inference tensor outside inference mode: updated in place (written),
 * saved for backward, asked to require grad, asked its version. MT_OK when t may be so used. */
mt_status mt_check_inference_write(const mt_tensor *t);
mt_status mt_check_inference_saved(const mt_tensor *t);
mt_status mt_check_inference_requires_grad(const mt_tensor *t, bool on);
mt_status mt_check_inference_version(const mt_tensor *t);

void mt_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
bool mt_tensor_is_contiguous(const mt_tensor *t);
/* Whether t's elements fill their span exactly, each once: a permutation of a contiguous layout
 * (PyTorch's is_non_overlapping_and_dense; an empty tensor counts, being contiguous). */
bool mt_tensor_is_dense(const mt_tensor *t);
/* The strides of a copy of t that keeps its layout (PyTorch's memory_format=preserve_format, as
 * clone gives): t's own when its elements fill their span exactly (a transposed matrix stays
 * transposed), else dense strides in the order of t's. */
void mt_preserve_strides(const mt_tensor *t, int64_t *strides);
/* PyTorch's memory formats: the order a dense result's dims are stored in. */
typedef enum mt_memory_format {
    MT_CONTIGUOUS_FORMAT, /* row-major */
    MT_CHANNELS_LAST, /* (N, C, H, W) stored as (N, H, W, C) */
    MT_CHANNELS_LAST_3D, /* (N, C, D, H, W) stored as (N, D, H, W, C) */
} mt_memory_format;
/* The format t's strides look like (PyTorch's suggest_memory_format): channels-last (3d) for a
 * 4-d (5-d) t whose strides grow from the channel dim outward in that order, else row-major.
 * Ambiguous layouts count as row-major: a channel stride of 0, a size-0 dim, a batch dim
 * stepping no further than the channel dim (N111). */
mt_memory_format mt_suggest_memory_format(const mt_tensor *t);
/* The strides of a dense tensor of sizes stored in fmt (row-major for a rank fmt is not of);
 * as PyTorch's, a size-0 dim makes the channels-last strides outside it 0. */
void mt_format_strides(mt_memory_format fmt, int ndim, const int64_t *sizes, int64_t *strides);
/* Dense strides for sizes, its dims ordered as the strides of n operands of that shape say
 * (op_strides[k], 0 on a dim operand k is broadcast along): PyTorch's infer_dense_strides for
 * one operand, TensorIterator's reorder_dimensions for several (the first to differ decides). */
void mt_dense_strides_like(int ndim, const int64_t *sizes, int n,
                           const int64_t (*op_strides)[MT_MAX_DIMS], int64_t *strides);
/* Whether some memory location is reached by two elements (a size>1 dim with stride 0), which
 * makes writing through t ill-defined; PyTorch's has_internal_overlap, the cases it is sure of. */
bool mt_tensor_has_internal_overlap(const mt_tensor *t);
/* Sets requires_grad; only floating-point tensors may require it (PyTorch's error). */
mt_status mt_tensor_set_requires_grad(mt_tensor *t, bool on);
/* PyTorch's error for an in-place write into a tensor with internal overlap. */
mt_status mt_check_writable(const mt_tensor *t);
/* MT_OK if the scalar converts into dtype dt as c10's checked_convert allows (no integer
 * overflow, no NaN or infinity into an integer, no finite value beyond a floating dtype's largest:
 * 70000 into float16), else PyTorch's overflow error. Which conversions PyTorch checks is each
 * op's (tensor() and setitem into float16 do not). */
mt_status mt_check_scalar_fits(mt_scalar v, mt_dtype dt);
/* Whether a and b are the same view: same storage, offset, sizes and strides. */
bool mt_tensor_same_view(const mt_tensor *a, const mt_tensor *b);

/* Wraps a possibly negative dim into [0, ndim), with PyTorch's IndexError message. A 0-dim
 * tensor accepts dims -1 and 0, as in PyTorch. */
mt_status mt_wrap_dim(int64_t dim, int ndim, int *out);
/* The broadcast shape of a and b, with PyTorch's error message; out may alias a or b. */
mt_status mt_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                              int64_t *out);
/* Checks sizes are non-negative and their product fits; PyTorch's messages. */
mt_status mt_check_sizes(int ndim, const int64_t *sizes);
/* Writes "[2, 3]" into buf; returns buf. */
char *mt_format_sizes(char *buf, size_t n, int ndim, const int64_t *sizes);
/* Reads and writes one element of dtype dt at p. A complex element reads as its real part and
 * is written as (v, 0), but for complex128 only the real part: its second 8 bytes are the
 * caller's (so an 8-byte buffer suffices for every dtype). */
mt_scalar mt_load_scalar(const char *p, mt_dtype dt);
void mt_store_scalar(char *p, mt_dtype dt, mt_scalar v);
/* The value of a one-element tensor. */
mt_status mt_tensor_item(const mt_tensor *t, mt_scalar *out);

#endif
