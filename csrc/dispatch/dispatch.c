/* The dispatcher and its tables, generated from ops.def.
 *
 * It must stay cheap: computing the key set is a loop over at most MT_MAX_TENSOR_ARGS (6)
 * tensors (and the Tensor[] arguments' lists), and the profiler is one branch when off. An op
 * with a front end (ops/front.h) has it run here once, before its backend kernel, which gets
 * the front end's plan. Outside an autocast region (dispatch/autocast.c) autocast costs one
 * test of a thread-local flag. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/autocast.h"
#include "dispatch/complex.h"
#include "dispatch/deterministic.h"
#include "dispatch/kernels.h"
#include "dispatch/shell.h"
#include "dispatch/widen.h"
#include "ops/elementwise.h"
#include "ops/front.h"
#include "ops/ops.h" /* mt_op_fill_, mt_op__to_copy, for CPU scalars joining a CUDA call */
#include "profiler/trace.h"

const char *const mt_op_names[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) #name,
#include "dispatch/ops.def"
#undef MT_OP
};

const char *const mt_op_schemas[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) schema,
#include "dispatch/ops.def"
#undef MT_OP
};

const int mt_op_nout[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) nout,
#include "dispatch/ops.def"
#undef MT_OP
};

const int mt_op_flags[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) flags,
#include "dispatch/ops.def"
#undef MT_OP
};

#define MT_CUDA_KERNEL(kernel) "mt_cuda_" #kernel
#define MT_CUDA_CUBLAS_KERNEL(name) MT_CUDA_KERNEL(name)
#define MT_CUDA_NO_KERNEL NULL
const char *const mt_op_cuda_kernels[MT_NUM_OPS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) MT_CUDA_COLUMN_##cuda(name),
#include "dispatch/ops.def"
#undef MT_OP
};

const char *const mt_key_names[MT_NUM_KEYS] = {
    "CPU", "CUDA", "Meta", "Python", "Autograd", "Tracer", "CompositeImplicitAutograd"};

/* Kernels known at compile time; _C_cuda and autograd add theirs with mt_register_kernel. */
#define MT_KERNEL_CPU(name) {mt_cpu_##name, "mt_cpu_" #name}
#define MT_KERNEL_COMPOSITE(name) {mt_composite_##name, "mt_composite_" #name}
#define MT_KERNEL__(name) {NULL, NULL}
#define MT_KERNEL_CPU_AS(kernel) MT_KERNEL_CPU(kernel) MT_EAT /* as kernels.h's MT_DECL_CPU_AS */
#define MT_KERNEL_COMPOSITE_AS(kernel) MT_KERNEL_COMPOSITE(kernel) MT_EAT
static mt_kernel table[MT_NUM_OPS][MT_NUM_KEYS] = {
#define MT_OP(name, cpu, cuda, composite, nout, flags, shell, schema) \
    [MT_OP_##name] = {                                                \
        [MT_KEY_CPU] = MT_KERNEL_##cpu(name), [MT_KEY_COMPOSITE] = MT_KERNEL_##composite(name)},
#include "dispatch/ops.def"
#undef MT_OP
};

static mt_fallback_fn fallbacks[MT_NUM_KEYS];

/* Python kernels (mt_set_override): bit k of override_keys[op] for a kernel for key k */
static uint8_t override_keys[MT_NUM_OPS];
static mt_override_fn override_hook;
_Static_assert(MT_NUM_KEYS <= 8, "override_keys holds a bit per key");

static _Thread_local bool grad_enabled = true;
static _Thread_local bool tracing;
static _Thread_local int python_modes;
static int python_modes_anywhere; /* all threads' together, changed under the GIL */

void
mt_register_fallback(mt_key key, mt_fallback_fn fn)
{
    fallbacks[key] = fn;
}

void
mt_set_override_hook(mt_override_fn fn)
{
    override_hook = fn;
}

void
mt_set_override(mt_op op, mt_key key, bool on)
{
    override_keys[op] = (uint8_t)(on ? override_keys[op] | 1u << key
                                     : override_keys[op] & ~(1u << key));
}

bool
mt_tracing_enabled(void)
{
    return tracing;
}

void
mt_set_tracing(bool on)
{
    tracing = on;
}

void
mt_set_python_modes(int n)
{
    python_modes_anywhere += n - python_modes;
    python_modes = n;
}

bool
mt_grad_enabled(void)
{
    return grad_enabled;
}

void
mt_set_grad_enabled(bool on)
{
    grad_enabled = on;
}

void
mt_args_init(mt_args *a)
{
    /* Everything but the int lists' values (2 KB of MT_MAX_DIMS entries, of which only the
     * first n are ever read): zeroing them cost each call as much as the rest of the set-up.
     * They are the last member, so that the rest is one memset. */
    _Static_assert(offsetof(mt_args, l) + sizeof(a->l) == sizeof(mt_args), "l is mt_args' last");
    memset(a, 0, offsetof(mt_args, l));
    a->dtype = -1;
    a->i_none = ~0u;
    for (size_t k = 0; k < sizeof(a->s) / sizeof(a->s[0]); k++) {
        a->s[k].type = MT_NUM_DTYPES;
    }
    for (size_t k = 0; k < sizeof(a->l) / sizeof(a->l[0]); k++) {
        a->l[k].n = 0;
        a->l[k].none = true;
        a->l[k].ext = NULL;
    }
}

mt_status
mt_args_alloc_outl(mt_args *a, int64_t n)
{
    if (n > INT32_MAX) {
        return mt_fail(MT_EVALUE, "too many results: %lld", (long long)n);
    }
    a->outl = calloc(n > 0 ? (size_t)n : 1, sizeof(*a->outl));
    if (a->outl == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for %lld results", (long long)n);
    }
    a->noutl = (int)n;
    return MT_OK;
}

void
mt_args_clear_outl(mt_args *a)
{
    for (int k = 0; a->outl && k < a->noutl; k++) {
        mt_tensor_clear(&a->outl[k]);
    }
    free(a->outl);
    a->outl = NULL;
    a->noutl = 0;
}

void
mt_register_kernel(mt_op op, mt_key key, mt_kernel_fn fn, const char *name)
{
    table[op][key].fn = fn;
    table[op][key].name = name;
}

const mt_kernel *
mt_kernel_for(mt_op op, mt_key key)
{
    return &table[op][key];
}

/* A key-set bit past the keys: CPU scalars join a CUDA or meta call (run_with_scalars_on). */
#define MT_KEYS_CPU_SCALARS (1u << 31)

/* What the key set has seen so far: the common device, whether any tensor needs grad, and
 * whether a CPU scalar (a 0-dim CPU tensor) waits to join it. */
typedef struct key_state {
    bool have_device, needs_grad, cpu_scalars, python;
    mt_device dev;
} key_state;

/* A 0-dim CPU tensor other than an in-place op's self may join tensors on a CUDA or the meta
 * device, as in PyTorch (x_cuda * torch.tensor(2.0)): mt_dispatch copies it there for the call. Not for
 * copy_, which moves data between devices itself (and is how the copy is made). */
static bool
is_cpu_scalar(mt_op op, int position, const mt_tensor *t)
{
    return t->ndim == 0 && mt_tensor_device(t).type == MT_CPU && op != MT_OP_copy_ &&
           !(position == 0 && (mt_op_flags[op] & INPLACE));
}

/* The packed recurrent ops' batch_sizes (t[1], and the layer ops': _lstm_layer's t[5],
 * _gru_layer's t[4], _rnn_layer's t[3]) is a CPU tensor for data on any device, as PyTorch's: it
 * only says how many rows each step has (csrc/ops/rnn.c and rnn_steps.c read it on the host). */
static bool
is_host_arg(mt_op op, int position)
{
    return (position == 1 && (op == MT_OP_lstm_data || op == MT_OP_gru_data ||
                              op == MT_OP_rnn_tanh_data || op == MT_OP_rnn_relu_data)) ||
           (position == 5 && op == MT_OP__lstm_layer) ||
           (position == 4 && op == MT_OP__gru_layer) || (position == 3 && op == MT_OP__rnn_layer);
}

static mt_status
see_tensor(mt_op op, const mt_tensor *t, key_state *ks)
{
    /* A wrapped Python number lives on the CPU but may join tensors on any device. */
    if (t == NULL || t->is_wrapped_number) {
        return MT_OK;
    }
    if (t->python_dispatch) { /* its device is its __torch_dispatch__'s business */
        ks->python = true;
        ks->needs_grad |= mt_tensor_requires_grad(t);
        return MT_OK;
    }
    mt_device d = mt_tensor_device(t);
    if (ks->have_device && !mt_device_eq(d, ks->dev)) {
        /* copy_ moves data between devices; the CUDA kernel does both directions, the meta
         * one refuses to copy out of the meta device. */
        if (op == MT_OP_copy_) {
            ks->dev = d.type != MT_CPU && ks->dev.type != MT_META ? d : ks->dev;
            ks->needs_grad |= mt_tensor_requires_grad(t);
            return MT_OK;
        }
        char b1[32], b2[32];
        return mt_fail(MT_EDEVICE,
                       "Expected all tensors to be on the same device, but found at least two "
                       "devices, %s and %s! (when checking argument for %s)",
                       mt_device_format(b1, sizeof(b1), ks->dev),
                       mt_device_format(b2, sizeof(b2), d), mt_op_names[op]);
    }
    ks->dev = d;
    ks->have_device = true;
    ks->needs_grad |= mt_tensor_requires_grad(t);
    return MT_OK;
}

/* The key set of a call: bit k set for mt_key k. */
static mt_status
compute_keys(mt_op op, const mt_args *a, unsigned *out)
{
    unsigned keys = 0;
    key_state ks = {.have_device = false, .needs_grad = false, .dev = MT_DEVICE_CPU};
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        const mt_tensor *t = a->t[k];
        if (t && is_host_arg(op, k)) {
            continue;
        }
        if (t && !t->is_wrapped_number && !t->python_dispatch && is_cpu_scalar(op, k, t)) {
            ks.cpu_scalars = true;
            ks.needs_grad |= mt_tensor_requires_grad(t);
        } else {
            st = see_tensor(op, t, &ks);
        }
    }
    /* Index tensors may be on the CPU for a tensor anywhere (the index plan moves them, and
     * refuses other devices with PyTorch's IndexError); they are never differentiable. */
    bool index_list = op == MT_OP_index || op == MT_OP_index_put_ || op == MT_OP_index_put;
    for (int k = 0; k < a->ntl && st == MT_OK && !index_list; k++) {
        st = see_tensor(op, a->tl[k], &ks);
    }
    /* later lists fill tls in order: most calls stop at the first check */
    for (int l = 0; l < MT_MAX_TENSOR_LISTS - 1 && a->tls[l].t && st == MT_OK; l++) {
        for (int k = 0; k < a->tls[l].n && st == MT_OK; k++) {
            st = see_tensor(op, a->tls[l].t[k], &ks);
        }
    }
    if (st) {
        return st;
    }
    mt_device dev = ks.dev;
    if (ks.cpu_scalars && !ks.have_device) {
        ks.have_device = true; /* only CPU tensors: the CPU */
    } else if (ks.cpu_scalars && dev.type != MT_CPU) {
        keys |= MT_KEYS_CPU_SCALARS;
    }
    if (!ks.have_device && a->has_device) {
        dev = a->device;
    }
    if (dev.type == MT_CUDA && mt_allocator_for(dev) == NULL) {
        return mt_fail(MT_ENOCUDA, "minitorch not compiled with CUDA enabled");
    }
    keys |= 1u << (dev.type == MT_CUDA   ? MT_KEY_CUDA
                   : dev.type == MT_META ? MT_KEY_META
                                         : MT_KEY_CPU);
    if (ks.needs_grad && grad_enabled) {
        keys |= 1u << MT_KEY_AUTOGRAD;
    }
    if (tracing) {
        keys |= 1u << MT_KEY_TRACER;
    }
    if (ks.python || (python_modes_anywhere && python_modes > 0)) {
        keys = (keys & ~MT_KEYS_CPU_SCALARS) | 1u << MT_KEY_PYTHON; /* Python moves nothing */
    }
    *out = keys;
    return MT_OK;
}

/* Whether t is one of a's tensors or the base of one. */
static bool
is_input_base(const mt_args *a, const mt_tensor *t)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && (a->t[k] == t || a->t[k]->view_base == t)) {
            return true;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && (a->tl[k] == t || a->tl[k]->view_base == t)) {
            return true;
        }
    }
    return false;
}

/* A composite's result that is a view of one of its intermediates (matmul's view of its mm,
 * reshape's of its copy) is no view: PyTorch returns those through _unsafe_view, so an
 * in-place op on them is an ordinary one, not CopySlices over a tensor nobody sees. */
static void
unlink_intermediate_views(mt_args *a)
{
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        mt_tensor *o = a->out[k];
        if (o && o->view_base && !is_input_base(a, o->view_base)) {
            mt_tensor_clear(&o->view_base);
        }
    }
}

/* The device of a call's first tensor on a device other than the CPU. */
static mt_device
device_of(const mt_args *a)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k] && mt_tensor_device(a->t[k]).type != MT_CPU) {
            return mt_tensor_device(a->t[k]);
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && mt_tensor_device(a->tl[k]).type != MT_CPU) {
            return mt_tensor_device(a->tl[k]);
        }
    }
    return MT_DEVICE_CPU;
}

/* The kernel k with the results its front end stated (plan's, if any) allocated first, on the
 * device of the backend key: the CPU, else the call's device (its tensors', or a factory's
 * device argument). On failure no result is left. */
static mt_status
compute(mt_args *a, const mt_kernel *k, int key, const mt_plan *plan)
{
    const int nout = plan ? plan->nout : 0;
    mt_status st = MT_OK;
    if (nout > 0) {
        mt_device dev = key == MT_KEY_CPU ? MT_DEVICE_CPU : device_of(a);
        dev = dev.type == MT_CPU && key != MT_KEY_CPU && a->has_device ? a->device : dev;
        st = mt_front_alloc_outputs(plan, a, dev);
    }
    if (st == MT_OK) {
        st = k->fn(a);
    }
    if (st == MT_OK && nout > 0) {
        st = mt_front_relayout_outputs(plan, a);
    }
    for (int j = 0; st && j < MT_MAX_OUTPUTS; j++) { /* stated, or made by mt_dispatch_result */
        mt_tensor_clear(&a->out[j]);
    }
    return st;
}

/* k (the kernel of op for key) on a, inside the profiler's Op and Kernel events when on; plan
 * the front end's, or NULL. */
static inline mt_status
call_kernel(mt_op op, mt_args *a, const mt_kernel *k, int key, const mt_plan *plan)
{
    /* The Autograd kernel runs the op again below itself, and that call is the one traced: the
     * journey shows the op once, with the backend kernel that computed it. */
    mt_status st;
    if (!mt_trace_on || key == MT_KEY_AUTOGRAD) {
        st = compute(a, k, key, plan);
    } else {
        bool kernel = key != MT_KEY_COMPOSITE;
        mt_trace_enter_op(mt_op_names[op], mt_key_names[key], a, kernel ? k->name : NULL);
        st = compute(a, k, key, plan);
        mt_trace_exit_n(kernel ? 2 : 1);
    }
    if (key == MT_KEY_COMPOSITE && st == MT_OK) {
        unlink_intermediate_views(a);
    }
    return st;
}

/* The key whose Python kernel (mt_set_override) runs op for keys: one of op's override keys
 * that comes before every table kernel and fallback in keys' priority order, or the composite's
 * when nothing else would run; -1 when the table's kernel runs. */
static int
override_key(mt_op op, unsigned keys)
{
    unsigned ov = override_keys[op];
    for (int key = MT_KEY_TRACER; key >= 0; key--) {
        if (!(keys >> key & 1u)) {
            continue;
        }
        if (ov >> key & 1u) {
            return key;
        }
        if (table[op][key].fn || fallbacks[key]) {
            return -1;
        }
    }
    return ov >> MT_KEY_COMPOSITE & 1u ? MT_KEY_COMPOSITE : -1;
}

/* The Python kernel for key, inside the profiler's Op and Kernel events as any kernel's. */
static mt_status
run_override(mt_op op, mt_args *a, int key)
{
    if (!mt_trace_on) {
        return override_hook(op, (mt_key)key, a);
    }
    mt_trace_enter_op(mt_op_names[op], mt_key_names[key], a, "python_kernel");
    mt_status st = override_hook(op, (mt_key)key, a);
    mt_trace_exit_n(2);
    return st;
}

/* The composites that are PyTorch's own ops (CompositeExplicitAutograd) reach Python whole when
 * autograd records nothing above it: view(dtype), as aten.view.dtype. (unbind, split and
 * split_with_sizes have an Autograd kernel, autograd/views.c's, which sends them down whole.) */
static bool
whole_in_python(mt_op op, unsigned keys)
{
    return op == MT_OP_view_dtype && !(keys >> MT_KEY_AUTOGRAD & 1u);
}

/* An op that is a composite of other ops with no gradient formula of its own (PyTorch's
 * CompositeImplicitAutograd) reaches Python as the ops it is made of, which autograd records: linear
 * reaches __torch_dispatch__ as t and addmm. Factories (no tensor argument), detach, which only
 * Python may make of a Python tensor, and whole_in_python's reach it themselves. */
static bool
decomposes_above_python(mt_op op, const mt_args *a, unsigned keys)
{
    return table[op][MT_KEY_COMPOSITE].fn && !table[op][MT_KEY_CPU].fn &&
           !table[op][MT_KEY_AUTOGRAD].fn && op != MT_OP_detach && op != MT_OP_alias &&
           (a->t[0] || a->ntl) && !whole_in_python(op, keys);
}

/* a's out= destinations (mt_args.into) kept for the kernel of op about to run only when it
 * takes them (takes): its front end, the elementwise family's, or its composite, which may
 * hand them to the op that makes its result (matmul's product). Every other path drops them,
 * so that no other op (nor a copy of a made on the way) writes there. */
static inline void
keep_into(mt_op op, mt_args *a, bool takes)
{
    if (a->into[0] && (a->into_op != (int)op || !takes)) {
        memset(a->into, 0, sizeof(a->into));
    }
}

static mt_status
run(mt_op op, mt_args *a, unsigned keys)
{
    const mt_kernel *k = NULL;
    int key;
    if (override_keys[op] && (key = override_key(op, keys)) >= 0) {
        keep_into(op, a, false);
        return run_override(op, a, key);
    }
    for (key = MT_KEY_TRACER; key >= 0; key--) {
        if ((keys >> key & 1u) && table[op][key].fn) {
            k = &table[op][key];
            break;
        }
        if (key == MT_KEY_PYTHON && decomposes_above_python(op, a, keys)) {
            continue;
        }
        /* the fallback redispatches below its key, and that call is the one profiled */
        if ((keys >> key & 1u) && fallbacks[key]) {
            keep_into(op, a, false);
            return fallbacks[key](op, a);
        }
    }
    if (k == NULL) {
        key = MT_KEY_COMPOSITE;
        k = &table[op][key];
        if (k->fn == NULL) {
            int backend = keys >> MT_KEY_META & 1u   ? MT_KEY_META
                          : keys >> MT_KEY_CUDA & 1u ? MT_KEY_CUDA
                                                     : MT_KEY_CPU;
            return mt_fail(MT_ENOTIMPL,
                           "Could not run 'aten::%s' with arguments from the '%s' backend.",
                           mt_op_names[op], mt_key_names[backend]);
        }
    }
    /* The meta kernels (dispatch/meta.c) run the op's CPU path, which widens and checks. */
    bool computes = key < MT_KEY_AUTOGRAD && key != MT_KEY_META;
    /* The elementwise family's checked Scalars, in the dtypes given: once, before a small
     * dtype is widened (the widened call's own run skips them). */
    if (computes && mt_op_is_elementwise[op] && mt_widen_stored_dtype < 0) {
        mt_status st = mt_ew_check_scalars(op, a);
        if (st) {
            return st;
        }
    }
    /* A backend kernel computes the small dtypes in the dtypes they widen to. */
    if (computes && mt_widen_needed(op, a)) {
        keep_into(op, a, false); /* a widened result is no dtype of out's */
        return mt_widen_run(op, a, (mt_key)key, run);
    }
    /* The front end checks once, whichever backend computes, and leaves that kernel its plan
     * for the call. */
    mt_front_fn front = computes ? mt_op_fronts[op] : NULL;
    keep_into(op, a, key == MT_KEY_COMPOSITE || (computes && (front || mt_op_is_elementwise[op])));
    if (front == NULL) {
        return call_kernel(op, a, k, key, NULL);
    }
    mt_plan plan;
    plan.op = op;
    plan.nout = 0;
    const mt_plan *outer = a->plan;
    mt_status st = front(a, &plan);
    if (st) {
        return st;
    }
    a->plan = &plan;
    st = call_kernel(op, a, k, key, &plan);
    a->plan = outer;
    return st;
}

/* *out = the CPU scalar t (0-dim) on dev: a tensor made there and filled with t's value, read on
 * the host and handed to the device's fill_ kernel as its argument, as PyTorch hands a CPU
 * scalar to its kernels; no host-to-device copy, which from pageable memory waits for the host.
 * A scalar whose gradient autograd would record is copied (the copy is an op, so its gradient
 * comes back to the CPU), and so is one joining the meta device. */
static mt_status
scalar_on(mt_tensor *t, mt_device dev, mt_tensor **out)
{
    if (dev.type != MT_CUDA || (mt_grad_enabled() && mt_tensor_requires_grad(t))) {
        return mt_op__to_copy(t, t->dtype, dev, out);
    }
    mt_scalar v;
    mt_tensor *w = NULL;
    mt_status st = mt_tensor_item(t, &v);
    if (st == MT_OK && (st = mt_tensor_scalar(v, t->dtype, &w)) == MT_OK &&
        (st = mt_tensor_empty(0, NULL, t->dtype, dev, out)) == MT_OK &&
        (st = mt_op_fill_(*out, w, NULL))) {
        mt_tensor_clear(out);
    }
    mt_tensor_clear(&w);
    return st;
}

/* run() with the CPU scalars among a's tensors replaced, for the call, by tensors on dev
 * (scalar_on). */
static mt_status
run_with_scalars_on(mt_device dev, mt_op op, mt_args *a, unsigned keys)
{
    mt_tensor *given[MT_MAX_TENSOR_ARGS] = {NULL};
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        mt_tensor *t = a->t[k];
        if (t && !t->is_wrapped_number && is_cpu_scalar(op, k, t)) {
            mt_tensor *moved = NULL;
            if ((st = scalar_on(t, dev, &moved)) == MT_OK) {
                given[k] = t;
                a->t[k] = moved;
            }
        }
    }
    if (st == MT_OK) {
        st = run(op, a, keys & ~MT_KEYS_CPU_SCALARS);
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (given[k]) {
            mt_tensor_release(a->t[k]);
            a->t[k] = given[k];
        }
    }
    return st;
}

static mt_status dispatch_typed(mt_op op, mt_args *a, unsigned mask);
static mt_status dispatch_keys(mt_op op, mt_args *a, unsigned mask);

static mt_status
dispatch_below(mt_op op, mt_args *a, unsigned mask)
{
    if (!mt_args_any_dtype(a, mt_dtype_has_own_rule)) {
        return dispatch_keys(op, a, mask); /* the common call: one scan for both rules */
    }
    keep_into(op, a, false); /* the dtypes with rules of their own take out= by copy */
    bool guard = false;
    if (!mt_shell_involved(a)) {
        return dispatch_typed(op, a, mask);
    }
    mt_status st = mt_shell_check(op, a, &guard);
    if (st || !guard) {
        return st ? st : dispatch_typed(op, a, mask);
    }
    mt_shell_enter();
    st = mt_shell_run(op, a, mask, dispatch_typed);
    mt_shell_leave();
    return st;
}

/* dispatch_below past the shell dtypes' rule: the complex dtypes' */
static mt_status
dispatch_typed(mt_op op, mt_args *a, unsigned mask)
{
    if (mt_complex_involved(a)) {
        bool handled;
        mt_status st = mt_complex_dispatch(op, a, &handled);
        if (st || handled) {
            return st;
        }
    }
    return dispatch_keys(op, a, mask);
}

/* the kernel of the call's keys */
static mt_status
dispatch_keys(mt_op op, mt_args *a, unsigned mask)
{
    unsigned keys = 0;
    mt_status st = compute_keys(op, a, &keys);
    if (st) {
        return st;
    }
    if (keys & MT_KEYS_CPU_SCALARS) {
        return run_with_scalars_on(device_of(a), op, a, keys & (mask | MT_KEYS_CPU_SCALARS));
    }
    return run(op, a, keys & mask);
}

/* mt_dispatch past autocast */
static mt_status
dispatch_past_autocast(mt_op op, mt_args *a)
{
    if (!mt_deterministic_on) {
        return dispatch_below(op, a, ~0u);
    }
    mt_status st = mt_deterministic_check(op, a);
    if (st == MT_OK) {
        st = dispatch_below(op, a, ~0u);
    }
    return st == MT_OK ? mt_deterministic_after(op, a) : st;
}

mt_status
mt_dispatch(mt_op op, mt_args *a)
{
    /* an inference tensor is updated in place only in inference mode */
    if ((mt_op_flags[op] & INPLACE) && a->t[0] && a->t[0]->is_inference) {
        mt_status st = mt_check_inference_write(a->t[0]);
        if (st) {
            return st;
        }
    }
    if (mt_autocast_on) {
        return mt_autocast_dispatch(op, a, dispatch_past_autocast);
    }
    return dispatch_past_autocast(op, a);
}

mt_status
mt_redispatch(mt_op op, mt_args *a, mt_key below)
{
    return dispatch_below(op, a, (1u << below) - 1u);
}

mt_status
mt_backend_key(mt_op op, const mt_args *a, mt_key *out)
{
    unsigned keys = 0;
    mt_status st = compute_keys(op, a, &keys);
    if (st) {
        return st;
    }
    *out = MT_KEY_COMPOSITE;
    for (int key = MT_KEY_AUTOGRAD - 1; key >= 0; key--) {
        if ((keys >> key & 1u) && table[op][key].fn) {
            *out = (mt_key)key;
            break;
        }
    }
    return MT_OK;
}
