/* The C API that _C exports to its plug-ins (minitorch._C_cuda) as the PyCapsule
 * minitorch._C._C_API, the way NumPy exports _ARRAY_API: the core's services, the one direction
 * of the plug-in interface. The other is the device backend (dispatch/backend.h), the vtable a
 * plug-in hands _C once with mt_register_backend, as ggml's backends: its memory, device and
 * profiler hooks, the device loops the families' front ends drive (_C registers those families'
 * kernels for the device key and keeps their control flow), its own kernel table and its host
 * fallback. So a plug-in never calls a front end back; it only computes.
 *
 * The services, by group (24 entries and mt_fail):
 *   registration  mt_register_backend, mt_last_error, mt_backend_caching (a device's caching
 *                 allocator) with mt_caching_malloc/free/record_stream (the raw-block API)
 *   dispatch      mt_dispatch (composites through the typed mt_op_* API), mt_args_init
 *   tensors       empty, view, release, clear, requires_grad, item, shape and dtype helpers
 *   errors        mt_fail, and mt_fail_kernel: every message of ops/fails.h, as one entry
 *   tracing       the profiler's spans (mt_trace_span_enter, mt_trace_exit); device events go
 *                 the other way, reported through the backend's stop hook
 *   generator     mt_generator_philox_for: a Generator's Philox seed and offset, advanced
 *
 * The small pure pieces of a family that a device kernel shares with the CPU one (reductions'
 * and factories' results, sort's geometry, unique's outputs, the normalisations' inputs and
 * running statistics) are inline in their headers: each side compiles its own.
 *
 * A plug-in is a separate shared object, loaded with its symbols private, so it cannot link
 * against _C's functions: it receives this table of pointers at import and calls through it.
 * MT_CAPI_FUNCTIONS is the one list: _C fills the table from it (python/capi.c) and a plug-in
 * defines same-named forwarding functions from it (cuda/capi_import.c), so plug-in code calls
 * mt_tensor_empty() as _C's own code does. Add to the end and bump MT_CAPI_VERSION; a plug-in
 * built against another version refuses to load. mt_fail is variadic and forwarded by hand;
 * ops/fails.h's functions are forwarded by hand to mt_fail_kernel. */
#ifndef MT_CAPI_H
#define MT_CAPI_H

#include "alloc/caching.h"
#include "dispatch/backend.h"
#include "core/generator.h"
#include "ops/elementwise.h"
#include "dispatch/dispatch.h"
#include "ops/arg_checks.h"
#include "ops/distributions.h"
#include "ops/factory_args.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/index_plan.h"
#include "ops/nn.h"
#include "ops/ops.h"
#include "ops/reduce_dims.h"
#include "ops/stats.h"
#include "profiler/trace.h"

/* The C API's version, bumped with each change of the table: 2: elementwise front end, arg
 * checks; 3: caching allocator; 4: tracing; 5: conv/pool checks; 6: index, factory, random, nn
 * checks; 7: mt_max_pool_backward_geom; 8: matrix product checks; 9: batch_norm and the backward
 * checks of the normalisations and nll_loss; 10: the sort family's checks and shapes, the inputs
 * of the normalisations' backward, batch_norm's running statistics; 11: mt_set_cuda_index_fn; 12:
 * mt_check_fill_value, mt_pow_as_root; 13: no mt_op_* (the plug-in compiles ops_api.h's own); 14:
 * the elementwise front end mt_ew_call replaces its checks; 15: every op's front end runs in the
 * dispatcher, which hands the kernel its plan (mt_args.plan): no mt_check_* and spec functions,
 * the shared messages of ops/fails.h; 16: Generator objects (mt_generator_for,
 * mt_generator_philox in place of mt_seed_epoch), bernoulli's p and multinomial; 17: the
 * statistics kernels' histc range and bincount length; 18: the front ends of every family: no
 * spec, geometry and check functions, nor the message formatting a backend no longer does; 19:
 * mt_default_float (set_default_dtype); 20: mt_tensor's view fields (view_base ...); 21:
 * mt_index_scatter takes its mode from the plan; 22: mt_tensor's and mt_node's gradient hooks;
 * 23: the device backend (dispatch/backend.h) replaces kernel, allocator, hook and device-index
 * registration and the families' shared kernels (mt_ew_call, mt_index_*, mt_sort_with, mt_histc_range,
 * mt_bincount_*, mt_loss_finish, ...); mt_fail_kernel replaces ops/fails.h's functions,
 * mt_generator_philox_for mt_generator_for and mt_generator_philox; 72 entries down to 37; 24:
 * mt_trace_span_enter replaces mt_trace_enabled/enter/now_ns/next_correlation/set_correlation,
 * the backend's stop hook reports device events (no mt_trace_gpu_event_add), the host round
 * trip is _C's (no mt_kernel_for): 31 entries; 25: mt_reduce_result, mt_factory_finish,
 * mt_sort_geom and mt_unique_outputs inline in their headers, bernoulli_'s kernel expands p
 * with mt_op_expand (its front end checked p), mt_norm_backward_inputs and
 * mt_batch_norm_update_running inline in arg_checks.h: 24 entries; 26: op_names, _C's table of
 * op names (the plug-in keeps no copy) */
#define MT_CAPI_VERSION 26

/* F(return type, name, parameters, arguments) for functions returning a value,
 * V(name, parameters, arguments) for void ones. */
#define MT_CAPI_FUNCTIONS(F, V)                                                                  \
    F(const char *, mt_last_error, (void), ())                                                   \
    F(mt_status, mt_register_backend, (const mt_device_backend *be), (be))                       \
    F(mt_status, mt_backend_caching,                                                             \
      (mt_device_type type, int device, mt_caching_allocator **out), (type, device, out))        \
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
    V(mt_contiguous_strides, (int ndim, const int64_t *sizes, int64_t *strides),                 \
      (ndim, sizes, strides))                                                                    \
    F(mt_status, mt_broadcast_shapes,                                                            \
      (int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out),             \
      (na, a, nb, b, nout, out))                                                                 \
    F(mt_status, mt_tensor_set_requires_grad, (mt_tensor * t, bool on), (t, on))                 \
    F(mt_status, mt_tensor_item, (const mt_tensor *t, mt_scalar *out), (t, out))                 \
    V(mt_store_scalar, (char *p, mt_dtype dt, mt_scalar v), (p, dt, v))                          \
    F(size_t, mt_dtype_size, (mt_dtype dt), (dt))                                                \
    F(mt_status, mt_caching_malloc,                                                              \
      (mt_caching_allocator * ca, size_t size, uintptr_t stream, void **ptr),                    \
      (ca, size, stream, ptr))                                                                   \
    F(mt_status, mt_caching_free, (mt_caching_allocator * ca, void *ptr), (ca, ptr))             \
    F(mt_status, mt_caching_record_stream,                                                       \
      (mt_caching_allocator * ca, void *ptr, uintptr_t stream), (ca, ptr, stream))               \
    F(int64_t, mt_trace_span_enter,                                                              \
      (mt_layer layer, const char *name, const char *detail, bool correlated),                   \
      (layer, name, detail, correlated))                                                         \
    V(mt_trace_exit, (void), ())                                                                 \
    F(mt_status, mt_generator_philox_for,                                                        \
      (mt_generator * gen, mt_device dev, uint64_t increment, uint64_t *seed, uint64_t *offset), \
      (gen, dev, increment, seed, offset))                                                       \
    F(mt_status, mt_fail_kernel, (mt_kernel_fail kind, const mt_fail_args *x), (kind, x))

typedef struct mt_c_api {
    int version;     /* MT_CAPI_VERSION of the _C that made the table */
    int size;        /* sizeof(mt_c_api) there */
    int num_ops;     /* MT_NUM_OPS there: a stale plug-in must not index another op table */
    const char *const *op_names; /* mt_op_names: num_ops names, in ops.def's order */
    mt_status (*mt_fail)(mt_status code, const char *fmt, ...);
#define MT_CAPI_FIELD(ret, name, params, args) ret(*name) params;
#define MT_CAPI_VFIELD(name, params, args) void(*name) params;
    MT_CAPI_FUNCTIONS(MT_CAPI_FIELD, MT_CAPI_VFIELD)
#undef MT_CAPI_FIELD
#undef MT_CAPI_VFIELD
} mt_c_api;

#define MT_CAPI_CAPSULE "minitorch._C._C_API"

#endif
