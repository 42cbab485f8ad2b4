/* The dispatcher: operator ids from ops.def, dispatch keys, boxed arguments, kernel table.
 *
 * Every tensor operation is mt_dispatch(op, args): the key set comes from the arguments
 * (their devices; whether any requires grad) and thread-local state (grad mode, tracing); the
 * highest-priority key with a kernel runs, else the op's composite kernel. Kernels take one
 * boxed mt_args, so the profiler, the tracer and Python-registered kernels see every op alike. */
#ifndef MT_DISPATCH_H
#define MT_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/device.h"
#include "core/generator.h"
#include "core/scalar.h"
#include "core/status.h"
#include "core/tensor.h"

typedef enum mt_op {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) MT_OP_##name,
#include "dispatch/ops.def"
#undef MT_OP
    MT_NUM_OPS
} mt_op;

/* In priority order, lowest first; Composite is the fallback, not a key of any tensor. The
 * backend keys (CPU, CUDA, Meta) come before Python, and Python before Autograd: a Tensor
 * subclass's __torch_dispatch__ (or a TorchDispatchMode) sees the ops below autograd, as
 * PyTorch's Python key. */
typedef enum mt_key {
    MT_KEY_CPU = 0,
    MT_KEY_CUDA,
    MT_KEY_META,
    MT_KEY_PYTHON,
    MT_KEY_AUTOGRAD,
    MT_KEY_TRACER,
    MT_KEY_COMPOSITE,
    MT_NUM_KEYS
} mt_key;

/* flags of ops.def */
#define METHOD 1
#define FUNCTION 2
#define INPLACE 4
/* the small dtypes (see ops.def and dispatch/widen.c): taken as stored; results not narrowed */
#define AS_STORED 8
#define KEEPS_DTYPE 16
/* complex tensors (dispatch/complex.c): COMPLEX takes them as they are; an op without it
 * refuses them, unless dispatch/complex.c has a complex form of it written in other ops */
#define COMPLEX 32
/* an op without COMPLEX whose Scalar arguments still take a complex Python number (PyTorch's
 * binding takes one for every Scalar; here only where the op keeps the imaginary part): the
 * matrix products' beta and alpha, checked against the product's dtype by their front end
 * (ops/matmul_checks.c) and taken complex by their kernels. csrc/python/args.c reads it. */
#define COMPLEX_SCALARS 64
/* Python numbers PyTorch's overload takes as a Scalar: a bit per tensor slot (mt_args.t[k]) that
 * the overload PyTorch picks for a number there declares Scalar, not Tensor (pow.Tensor_Scalar,
 * clamp, masked_fill.Scalar; rsub.Scalar for 1 - x, which is x.__rsub__(1), sub with the number
 * in slot 0 here). Such a number, or an absent optional there (clamp(x, min=0)'s max), is no
 * input of the op's autograd node, so its next_functions leave it out: x.pow(2) has one entry,
 * x + 2 two (add.Tensor takes the number wrapped as a tensor). Read with mt_op_scalar_slots. */
#define SCALAR_SLOTS(mask) ((mask) << MT_SCALAR_SLOTS_SHIFT)
#define MT_SCALAR_SLOTS_SHIFT 8 /* above the flags; MT_MAX_TENSOR_ARGS bits */
/* Tensors that live on the host for data on any device: a bit per tensor slot, as PyTorch's
 * packed recurrent ops take batch_sizes as a CPU tensor (it only says how many rows each step has,
 * read on the host by csrc/ops/rnn.c and rnn_layer.c). The dispatcher leaves them out of the
 * call's device and keys. Read with mt_op_host_slots. */
#define HOST_SLOTS(mask) ((mask) << MT_HOST_SLOTS_SHIFT)
#define MT_HOST_SLOTS_SHIFT (MT_SCALAR_SLOTS_SHIFT + MT_MAX_TENSOR_ARGS) /* above SCALAR_SLOTS */
/* nout of an op that returns a Tensor[] (split, chunk, unbind): its kernel fills outl */
#define LIST -1

#define MT_MAX_TENSOR_ARGS 6 /* gru_cell: input, hx, w_ih, w_hh, b_ih, b_hh */
#define MT_MAX_OUTPUTS 4 /* linalg_lstsq: solution, residuals, rank, singular_values */
/* _fused_adam_: params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps */
#define MT_MAX_TENSOR_LISTS 6
#define MT_MAX_FLOAT_ARGS 5 /* _fused_adam_: lr, beta1, beta2, weight_decay, eps */

/* A Tensor[] argument: n tensors, owned for the call. */
typedef struct mt_tensorlist {
    mt_tensor **t;
    int n;
} mt_tensorlist;

/* An int[] argument: n values in v. An int[*] one (a list that is not a shape: split sizes) may
 * be longer: then its values are at ext (borrowed for the call) and v is unused; read such a
 * list through mt_intlist_values. */
typedef struct mt_intlist {
    int n;
    bool none; /* an absent optional int[] */
    const int64_t *ext;
    int64_t v[MT_MAX_DIMS]; /* only the first n are set */
} mt_intlist;

static inline const int64_t *
mt_intlist_values(const mt_intlist *l)
{
    return l->ext ? l->ext : l->v;
}

struct mt_plan; /* ops/plans.h */

/* The boxed arguments of one call. Slots are filled in schema order (see ops.def). An autograd
 * node keeps the non-tensor ones (keep_args in autograd/autograd.c: a new member goes there too). */
typedef struct mt_args {
    mt_tensor *t[MT_MAX_TENSOR_ARGS]; /* borrowed; NULL for an absent optional */
    mt_scalar s[3];
    int64_t i[4];
    unsigned i_none; /* bit k: int slot k is an absent optional */
    bool b[4]; /* lstm: has_biases, train, bidirectional, batch_first */
    const char *str[1]; /* borrowed for the call; NULL for an absent optional */
    double f[MT_MAX_FLOAT_ARGS]; /* float: the optimizer steps' hyperparameters */
    int dtype; /* an mt_dtype, or -1 for None */
    bool has_device;
    mt_device device;
    mt_generator *gen; /* a Generator? argument: borrowed; NULL for None (the default one) */
    mt_tensor *out[MT_MAX_OUTPUTS]; /* owned references, set by the kernel */
    /* a Tensor[] argument: ntl tensors, owned for the call; a Tensor?[] (index's indices) may
     * hold NULL entries */
    mt_tensor **tl;
    int ntl;
    /* the second and later Tensor[] arguments (the optimizer steps' lists): tls[k] is the
     * (k + 2)-th, filled in order (t is not NULL, even for an empty list, up to the last); read
     * every list through mt_args_tensorlist */
    mt_tensorlist tls[MT_MAX_TENSOR_LISTS - 1];
    mt_tensor **outl; /* a Tensor[] result: noutl owned references, see mt_args_alloc_outl */
    int noutl;
    /* out=: the tensors the caller offers to hold the results (python/out.c), borrowed, for
     * the call of op into_op only. A result the op's front end states with the dtype, sizes
     * and strides of into[k], on its device and sharing no memory with an input, is into[k]
     * itself (mt_front_alloc_outputs; the elementwise family's mt_ew_call takes any strides
     * and an input that is into[k]): the kernel writes there and a->out[k] is into[k]. The
     * dispatcher drops them on the way to any other kernel (run() in dispatch.c). */
    mt_tensor *into[MT_MAX_OUTPUTS];
    int into_op;
    /* for the backend kernel: what the op's front end computed (ops/front.h), set by the
     * dispatcher for the kernel's call only; NULL for an op without a front end */
    const struct mt_plan *plan;
    /* last, as mt_args_init leaves their values (2.6 KB, of which only the first n are read);
     * five for col2im's output_size, kernel_size, dilation, padding and stride */
    mt_intlist l[5];
} mt_args;

/* The k-th Tensor[] argument of a call (k = 0 is tl). */
static inline mt_tensorlist
mt_args_tensorlist(const mt_args *a, int k)
{
    return k == 0 ? (mt_tensorlist){a->tl, a->ntl} : a->tls[k - 1];
}

typedef mt_status (*mt_kernel_fn)(mt_args *a);

typedef struct mt_kernel {
    mt_kernel_fn fn;
    const char *name; /* for the journey and the profiler: "mt_cpu_addmm" */
} mt_kernel;

/* Resets a to "no arguments": no tensors, no optional values, dtype None. */
void mt_args_init(mt_args *a);
/* Makes room for n results (all NULL) in a->outl; mt_args_clear_outl releases them and it. */
mt_status mt_args_alloc_outl(mt_args *a, int64_t n);
void mt_args_clear_outl(mt_args *a);

mt_status mt_dispatch(mt_op op, mt_args *a);
/* The one allocation of a result by a kernel: a result whose size only its values show
 * (masked_select's and nonzero's counts, unique's distinct values, lstsq's residuals, present
 * only where every matrix has full rank), which PyTorch too allocates once it has counted.
 * Every other result its front end states and the dispatcher allocates before the kernel runs.
 * a->out[k] = a new tensor (ndim, sizes) of dt on dev, through the device's allocator, as the
 * stated results are; the dispatcher releases it if the kernel then fails. */
static inline mt_status
mt_dispatch_result(mt_args *a, int k, mt_dtype dt, int ndim, const int64_t *sizes, mt_device dev)
{
    /* inline: each device's kernels compile their own (the plug-in's mt_tensor_empty is _C's) */
    if (k < 0 || k >= MT_MAX_OUTPUTS || a->out[k] != NULL) {
        return mt_fail(MT_ERUNTIME, "a kernel's result %d is out of range or made twice", k);
    }
    return mt_tensor_empty(ndim, sizes, dt, dev, &a->out[k]);
}
/* Runs the kernel for key below `below` (used by Autograd and Tracer kernels). */
mt_status mt_redispatch(mt_op op, mt_args *a, mt_key below);

void mt_register_kernel(mt_op op, mt_key key, mt_kernel_fn fn, const char *name);
const mt_kernel *mt_kernel_for(mt_op op, mt_key key);

extern const char *const mt_op_names[MT_NUM_OPS];
extern const char *const mt_op_schemas[MT_NUM_OPS];
extern const int mt_op_nout[MT_NUM_OPS];
extern const int mt_op_flags[MT_NUM_OPS];
/* the tensor slots a row's SCALAR_SLOTS(mask) flag names, a bit each */
static inline unsigned
mt_op_scalar_slots(mt_op op)
{
    return (unsigned)mt_op_flags[op] >> MT_SCALAR_SLOTS_SHIFT & ((1u << MT_MAX_TENSOR_ARGS) - 1u);
}
/* the tensor slots a row's HOST_SLOTS(mask) flag names, a bit each */
static inline unsigned
mt_op_host_slots(mt_op op)
{
    return (unsigned)mt_op_flags[op] >> MT_HOST_SLOTS_SHIFT & ((1u << MT_MAX_TENSOR_ARGS) - 1u);
}
/* "mt_cuda_<kernel>", the kernel a row's cuda column names (registered by _C_cuda), or NULL */
extern const char *const mt_op_cuda_kernels[MT_NUM_OPS];
extern const char *const mt_key_names[MT_NUM_KEYS];

/* A boxed fallback: one kernel for every op of a key (PyTorch's backend fallback), used where the
 * op has no kernel of its own for that key. The Tracer key's is the graph tracer (csrc/tracer/). */
typedef mt_status (*mt_fallback_fn)(mt_op op, mt_args *a);
void mt_register_fallback(mt_key key, mt_fallback_fn fn);
/* Kernels registered from Python for a built-in op (minitorch.library, as torch.library's
 * Library("aten", "IMPL").impl): the binding layer keeps them and sets one hook that runs them;
 * the dispatcher keeps only, per op, which keys have one, and prefers such a kernel to the
 * table's for its key (one test per call while the op has none). */
typedef mt_status (*mt_override_fn)(mt_op op, mt_key key, mt_args *a);
void mt_set_override_hook(mt_override_fn fn);
void mt_set_override(mt_op op, mt_key key, bool on);
/* Thread-local tracing: while on, every call's key set has MT_KEY_TRACER. */
bool mt_tracing_enabled(void);
void mt_set_tracing(bool on);
/* The key whose kernel computes op below Autograd (CPU, CUDA or the composite). */
mt_status mt_backend_key(mt_op op, const mt_args *a, mt_key *out);

/* The Python key (PyTorch's): a call has it when one of its tensors is flagged python_dispatch
 * (a Tensor subclass with __torch_dispatch__) or a torch dispatch mode is on in this thread; its
 * fallback (python/python_dispatch.c) hands the op to Python. The mode count is this thread's;
 * the dispatcher reads it only while some thread has one (a plain global, one test per call). */
void mt_set_python_modes(int n);

/* Thread-local grad mode, read by the dispatcher once autograd is registered. */
bool mt_grad_enabled(void);
void mt_set_grad_enabled(bool on);

#endif
