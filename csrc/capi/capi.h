/* The C API that _C exports to its plug-ins (minitorch._C_cuda) as the PyCapsule
 * minitorch._C._C_API, the way NumPy exports _ARRAY_API.
 *
 * A plug-in is a separate shared object, loaded with its symbols private, so it cannot link
 * against _C's functions: it receives this table of pointers at import and calls through it.
 * MT_CAPI_FUNCTIONS is the one list: _C fills the table from it (python/capi.c) and a plug-in
 * defines same-named forwarding functions from it (cuda/capi_import.c), so plug-in code calls
 * mt_tensor_empty() as _C's own code does. Add to the end and bump MT_CAPI_VERSION; a plug-in
 * built against another version refuses to load. mt_fail is variadic and forwarded by hand. */
#ifndef MT_CAPI_H
#define MT_CAPI_H

#include "cpu/elementwise.h"
#include "dispatch/dispatch.h"
#include "ops/ops.h"
#include "profiler/trace.h"

#define MT_CAPI_VERSION 2

/* F(return type, name, parameters, arguments) for functions returning a value,
 * V(name, parameters, arguments) for void ones. */
#define MT_CAPI_FUNCTIONS(F, V)                                                                  \
    F(const char *, mt_last_error, (void), ())                                                   \
    V(mt_register_kernel, (mt_op op, mt_key key, mt_kernel_fn fn, const char *name),            \
      (op, key, fn, name))                                                                       \
    V(mt_register_allocator, (mt_device_type type, mt_allocator * a), (type, a))                \
    F(mt_allocator *, mt_allocator_for, (mt_device dev), (dev))                                  \
    F(mt_status, mt_dispatch, (mt_op op, mt_args * a), (op, a))                                  \
    V(mt_args_init, (mt_args * a), (a))                                                          \
    F(mt_status, mt_tensor_empty,                                                                \
      (int ndim, const int64_t *sizes, mt_dtype dtype, mt_device dev, mt_tensor **out),          \
      (ndim, sizes, dtype, dev, out))                                                            \
    F(mt_status, mt_tensor_view,                                                                 \
      (mt_tensor * base, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, \
       mt_tensor **out),                                                                         \
      (base, ndim, sizes, strides, offset, out))                                                 \
    V(mt_tensor_release, (mt_tensor * t), (t))                                                   \
    V(mt_tensor_clear, (mt_tensor * *t), (t))                                                    \
    F(int64_t, mt_numel, (int ndim, const int64_t *sizes), (ndim, sizes))                        \
    F(bool, mt_tensor_is_contiguous, (const mt_tensor *t), (t))                                  \
    V(mt_contiguous_strides, (int ndim, const int64_t *sizes, int64_t *strides),                \
      (ndim, sizes, strides))                                                                    \
    F(mt_status, mt_broadcast_shapes,                                                            \
      (int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out),             \
      (na, a, nb, b, nout, out))                                                                 \
    F(mt_status, mt_check_writable, (const mt_tensor *t), (t))                                   \
    F(mt_status, mt_tensor_set_requires_grad, (mt_tensor * t, bool on), (t, on))                 \
    F(mt_status, mt_tensor_item, (const mt_tensor *t, mt_scalar *out), (t, out))                 \
    F(mt_scalar, mt_load_scalar, (const char *p, mt_dtype dt), (p, dt))                          \
    V(mt_store_scalar, (char *p, mt_dtype dt, mt_scalar v), (p, dt, v))                          \
    F(mt_status, mt_check_scalar_fits, (mt_scalar v, mt_dtype dt), (v, dt))                      \
    F(size_t, mt_dtype_size, (mt_dtype dt), (dt))                                                \
    F(const char *, mt_dtype_scalar_name, (mt_dtype dt), (dt))                                   \
    F(bool, mt_can_cast, (mt_dtype from, mt_dtype to), (from, to))                               \
    F(mt_dtype, mt_result_type, (mt_tensor *const *ops, int n), (ops, n))                        \
    F(char *, mt_format_sizes, (char *buf, size_t n, int ndim, const int64_t *sizes),           \
      (buf, n, ndim, sizes))                                                                     \
    F(mt_status, mt_op_to_copy, (mt_tensor * self, mt_dtype dtype, mt_device dev, mt_tensor **out), \
      (self, dtype, dev, out))                                                                   \
    F(mt_status, mt_op_copy_, (mt_tensor * self, mt_tensor *src), (self, src))                   \
    F(mt_status, mt_check_inplace,                                                               \
      (const mt_tensor *self, int ndim, const int64_t *shape, mt_dtype result),                 \
      (self, ndim, shape, result))                                                               \
    F(bool, mt_tensor_same_view, (const mt_tensor *a, const mt_tensor *b), (a, b))               \
    F(mt_status, mt_op_expand, (mt_tensor * self, int ndim, const int64_t *sizes, mt_tensor **out), \
      (self, ndim, sizes, out))                                                                  \
    F(bool, mt_trace_enabled, (void), ())                                                        \
    V(mt_trace_enter, (mt_layer layer, const char *name, const char *detail),                   \
      (layer, name, detail))                                                                     \
    V(mt_trace_exit, (void), ())                                                                 \
    F(int64_t, mt_trace_now_ns, (void), ())                                                      \
    F(int64_t, mt_trace_next_correlation, (void), ())                                            \
    V(mt_trace_set_correlation, (int64_t corr), (corr))                                          \
    V(mt_trace_set_gpu_hooks, (mt_trace_gpu_hook start, mt_trace_gpu_hook stop), (start, stop)) \
    V(mt_trace_gpu_event_add,                                                                    \
      (int kind, const char *name, int device, int stream, int64_t corr, int64_t start_ns,      \
       int64_t end_ns),                                                                          \
      (kind, name, device, stream, corr, start_ns, end_ns))

typedef struct mt_c_api {
    int version;     /* MT_CAPI_VERSION of the _C that made the table */
    int size;        /* sizeof(mt_c_api) there */
    int num_ops;     /* MT_NUM_OPS there: a stale plug-in must not index another op table */
    mt_status (*mt_fail)(mt_status code, const char *fmt, ...);
#define MT_CAPI_FIELD(ret, name, params, args) ret(*name) params;
#define MT_CAPI_VFIELD(name, params, args) void(*name) params;
    MT_CAPI_FUNCTIONS(MT_CAPI_FIELD, MT_CAPI_VFIELD)
#undef MT_CAPI_FIELD
#undef MT_CAPI_VFIELD
} mt_c_api;

#define MT_CAPI_CAPSULE "minitorch._C._C_API"

#endif
