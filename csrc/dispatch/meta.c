/* The meta device (PyTorch's): tensors with sizes, strides and a dtype, and no data.
 *
 * Its allocator hands out no memory. Its kernels compute only what a result looks like, from
 * what every op already knows of it: the op's CPU path (its front end's checks in PyTorch's
 * words, type promotion, the result's shape and strides) runs on stand-ins, CPU tensors laid
 * out as the meta arguments (holding values every kernel accepts: stand_in_values), and its results come back as meta tensors laid out as
 * the CPU ones (a view or an in-place result: on the meta argument's storage). Ops that only
 * make or fill a tensor (empty, the random fills) run just their front end and allocate on the
 * meta device, so a model of any size can be built there. The composites decompose as on any
 * device. Ops whose results' shapes depend on the values (nonzero, unique, ...) refuse, as
 * PyTorch's meta device does, and so does copying data out of it.
 *
 * What the stand-ins cost: the CPU memory of the arguments and results, and the CPU kernel's
 * time, for the call (PyTorch's meta kernels, written op by op, cost neither). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/meta.h"
#include "ops/front.h"
#include "ops/ops.h"

/* ---- the allocator: storages with a size and no memory ---- */

static mt_status
meta_alloc(mt_allocator *self, size_t nbytes, mt_device dev, void **out, void **ctx)
{
    (void)self;
    (void)nbytes;
    (void)dev;
    *out = NULL;
    *ctx = NULL;
    return MT_OK;
}

static void
meta_free(mt_allocator *self, void *ptr, size_t nbytes, void *ctx)
{
    (void)self;
    (void)ptr;
    (void)nbytes;
    (void)ctx;
}

static void
meta_stats(mt_allocator *self, mt_alloc_stats *out)
{
    (void)self;
    *out = (mt_alloc_stats){0};
}

static void
meta_empty_cache(mt_allocator *self)
{
    (void)self;
}

static mt_allocator meta_allocator = {"meta", meta_alloc, meta_free, meta_stats, meta_empty_cache};

/* ---- stand-ins: a CPU storage per meta storage among the arguments ---- */

typedef struct stand_in {
    mt_storage *meta;  /* borrowed: an argument's storage */
    mt_storage *cpu;   /* owned: its stand-in (see stand_in_values) */
    mt_tensor *orig;   /* borrowed: the first argument on meta */
    long version;      /* cpu's version counter before the call */
} stand_in;

/* A stand-in tensor (owned by the call) and the argument (borrowed) it stands for. */
typedef struct stand_in_tensor {
    mt_tensor *arg, *cpu;
} stand_in_tensor;

/* The stand-ins of one call. */
typedef struct stand_ins {
    stand_in *v;
    int n, cap;
    stand_in_tensor *t;
    int nt, capt;
} stand_ins;

static bool
is_meta(const mt_tensor *t)
{
    return t != NULL && mt_tensor_device(t).type == MT_META;
}

static mt_status
grow(void **v, int *cap, int need, size_t item)
{
    if (need <= *cap) {
        return MT_OK;
    }
    int ncap = *cap ? *cap * 2 : 8;
    ncap = ncap < need ? need : ncap;
    void *nv = realloc(*v, (size_t)ncap * item);
    if (nv == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for the meta device's stand-ins");
    }
    *v = nv;
    *cap = ncap;
    return MT_OK;
}

/* The values a stand-in holds, which a kernel may read: 0 in integer and bool tensors (an index
 * in range wherever a dim is not empty, an all-false mask), 1 in floating ones (a valid
 * probability, rate or weight: multinomial, bernoulli, the gamma draws). */
static mt_status
stand_in_values(mt_storage *cpu, mt_dtype dtype)
{
    if (cpu->nbytes > 0) {
        memset(cpu->data, 0, cpu->nbytes);
    }
    if (!mt_dtype_is_float(dtype) && !mt_dtype_is_complex(dtype)) {
        return MT_OK;
    }
    int64_t n = (int64_t)(cpu->nbytes / mt_dtype_size(dtype)), one_stride = 1;
    mt_tensor *all = NULL, *one = NULL;
    mt_status st = mt_tensor_on_storage(cpu, 1, &n, &one_stride, 0, dtype, &all);
    if (st == MT_OK && (st = mt_tensor_scalar(mt_scalar_int(1), MT_INT64, &one)) == MT_OK) {
        st = mt_op_fill_(all, one, NULL);
    }
    mt_tensor_clear(&one);
    mt_tensor_clear(&all);
    return st;
}

/* The stand-in of t's storage, made on first use. */
static mt_status
storage_of(stand_ins *s, mt_tensor *t, stand_in **out)
{
    for (int k = 0; k < s->n; k++) {
        if (s->v[k].meta == t->storage) {
            *out = &s->v[k];
            return MT_OK;
        }
    }
    mt_status st = grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
    mt_storage *cpu = NULL;
    if (st == MT_OK && (st = mt_storage_new(t->storage->nbytes, MT_DEVICE_CPU, &cpu)) == MT_OK &&
        (st = stand_in_values(cpu, t->dtype)) != MT_OK) {
        mt_storage_release(cpu);
    }
    if (st == MT_OK) {
        s->v[s->n] = (stand_in){t->storage, cpu, t, atomic_load(&cpu->version.value)};
        *out = &s->v[s->n++];
    }
    return st;
}

/* *out: t itself (a new reference; NULL for NULL) unless it is on the meta device, else a CPU
 * tensor laid out as t over its storage's stand-in. */
static mt_status
stand_in_for(stand_ins *s, mt_tensor *t, mt_tensor **out)
{
    *out = NULL;
    if (!is_meta(t)) {
        *out = t ? mt_tensor_retain(t) : NULL;
        return MT_OK;
    }
    stand_in *si = NULL;
    mt_status st = grow((void **)&s->t, &s->capt, s->nt + 1, sizeof(*s->t));
    if (st == MT_OK && (st = storage_of(s, t, &si)) == MT_OK) {
        st = mt_tensor_on_storage(si->cpu, t->ndim, t->sizes, t->strides, t->offset, t->dtype, out);
    }
    if (st == MT_OK) {
        /* the list's own reference: c's argument slot holds the other */
        s->t[s->nt++] = (stand_in_tensor){t, mt_tensor_retain(*out)};
    }
    return st;
}

/* The argument that stand-in tensor t stands for, or NULL. */
static mt_tensor *
argument_of(const stand_ins *s, const mt_tensor *t)
{
    for (int k = 0; k < s->nt; k++) {
        if (s->t[k].cpu == t) {
            return s->t[k].arg;
        }
    }
    return NULL;
}

/* A result of the CPU path, t, as a meta tensor: the argument itself for an argument's stand-in
 * (an in-place op's self), a view of the argument's storage for a view of a stand-in, else a
 * new meta tensor laid out as t. */
static mt_status
to_meta(const stand_ins *s, mt_tensor *t, mt_tensor **out)
{
    *out = NULL;
    if (t == NULL) {
        return MT_OK;
    }
    mt_tensor *arg = argument_of(s, t);
    if (arg) {
        *out = mt_tensor_retain(arg);
        return MT_OK;
    }
    for (int k = 0; k < s->n; k++) {
        if (s->v[k].cpu != t->storage) {
            continue;
        }
        /* a view (view_dtype's too): on the argument's storage, sharing its version counter */
        mt_tensor base = *s->v[k].orig;
        base.dtype = t->dtype;
        mt_status st = mt_tensor_view(&base, t->ndim, t->sizes, t->strides, t->offset, out);
        if (st == MT_OK && t->view_base) {
            mt_tensor *of = argument_of(s, t->view_base);
            of = of ? of : s->v[k].orig;
            (*out)->view_base = mt_tensor_retain(of->view_base ? of->view_base : of);
            (*out)->view_version = mt_tensor_version(*out);
            (*out)->view_creation = t->view_creation;
            (*out)->view_output_nr = t->view_output_nr;
        }
        return st;
    }
    mt_storage *storage = NULL;
    mt_status st = mt_storage_new(t->storage->nbytes, MT_DEVICE_META, &storage);
    if (st == MT_OK) {
        st = mt_tensor_on_storage(storage, t->ndim, t->sizes, t->strides, t->offset, t->dtype, out);
        mt_storage_release(storage);
    }
    if (st == MT_OK) {
        (*out)->requires_grad = t->requires_grad; /* a factory's requires_grad=True */
        (*out)->is_wrapped_number = t->is_wrapped_number;
    }
    return st;
}

static void
stand_ins_free(stand_ins *s)
{
    for (int k = 0; k < s->nt; k++) {
        mt_tensor_release(s->t[k].cpu);
    }
    for (int k = 0; k < s->n; k++) {
        mt_storage_release(s->v[k].cpu);
    }
    free(s->v);
    free(s->t);
}

/* ---- the kernels ---- */

/* Whether index's indices hold a boolean mask (whose true count is the result's size). */
static bool
has_mask(const mt_args *a)
{
    for (int k = 0; k < a->ntl; k++) {
        if (a->tl[k] && (a->tl[k]->dtype == MT_BOOL || a->tl[k]->dtype == MT_UINT8)) {
            return true;
        }
    }
    return false;
}

/* The ops whose results' shapes depend on the values: PyTorch has no meta kernel for them
 * either. */
static bool
needs_values(mt_op op, const mt_args *a)
{
    switch (op) {
    case MT_OP_index:
        return has_mask(a);
    case MT_OP_nonzero:
    case MT_OP_masked_select:
    case MT_OP__unique2:
    case MT_OP_unique_dim:
    case MT_OP_bincount:
    case MT_OP_histc:
    case MT_OP_histogram_bins:
        return true;
    default:
        return false;
    }
}

/* Whether op only makes or fills a tensor, its front end being all it checks: empty, and the
 * in-place ops with a front end that read no other tensor (the random fills, fill_ with a
 * number). They run on the meta device as they are, allocating nothing. */
static bool
only_fills(mt_op op, const mt_args *a)
{
    if (op == MT_OP_empty) {
        return true;
    }
    if (!(mt_op_flags[op] & INPLACE) || mt_op_fronts[op] == NULL || a->ntl > 0) {
        return false;
    }
    for (int k = 1; k < MT_MAX_TENSOR_ARGS; k++) {
        if (a->t[k]) {
            return false;
        }
    }
    return true;
}

static mt_status
run_fill(mt_op op, mt_args *a)
{
    mt_plan plan;
    plan.op = op;
    plan.nout = 0;
    mt_status st = mt_op_fronts[op](a, &plan);
    if (st) {
        return st;
    }
    if (op == MT_OP_empty) { /* the result as stated, on meta; the CPU kernel adds nothing */
        const mt_plan *outer = a->plan;
        a->plan = &plan;
        if ((st = mt_front_alloc_outputs(&plan, a, a->device)) == MT_OK &&
            (st = mt_kernel_for(op, MT_KEY_CPU)->fn(a))) {
            mt_tensor_clear(&a->out[0]);
        }
        a->plan = outer;
        return st;
    }
    mt_tensor_bump_version(a->t[0]);
    a->out[0] = mt_tensor_retain(a->t[0]);
    return MT_OK;
}

/* The call's arguments with their stand-ins: c is a with each meta tensor replaced. */
static mt_status
stand_in_args(stand_ins *s, const mt_args *a, mt_args *c)
{
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS && st == MT_OK; k++) {
        st = stand_in_for(s, a->t[k], &c->t[k]);
    }
    for (int l = 0; l < MT_MAX_TENSOR_LISTS && st == MT_OK; l++) {
        mt_tensorlist given = mt_args_tensorlist(a, l);
        if (given.t == NULL) {
            continue;
        }
        mt_tensor **list = calloc(given.n > 0 ? (size_t)given.n : 1, sizeof(*list));
        if (list == NULL) {
            return mt_fail(MT_ENOMEM, "out of memory for the meta device's stand-ins");
        }
        if (l == 0) {
            c->tl = list;
        } else {
            c->tls[l - 1].t = list;
        }
        for (int k = 0; k < given.n && st == MT_OK; k++) {
            st = stand_in_for(s, given.t[k], &list[k]);
        }
    }
    return st;
}

/* Releases what stand_in_args made (the tensors themselves are the stand-ins' or retained). */
static void
free_stand_in_args(const mt_args *a, mt_args *c)
{
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor_clear(&c->t[k]);
    }
    for (int l = 0; l < MT_MAX_TENSOR_LISTS; l++) {
        mt_tensorlist given = mt_args_tensorlist(a, l), made = mt_args_tensorlist(c, l);
        for (int k = 0; made.t && made.t != given.t && k < given.n; k++) {
            mt_tensor_clear(&made.t[k]);
        }
        if (made.t != given.t) {
            free(made.t);
        }
    }
}

/* The results of the CPU path, c's, as a's meta results. */
static mt_status
results_to_meta(const stand_ins *s, mt_args *c, mt_args *a)
{
    mt_status st = MT_OK;
    for (int k = 0; k < MT_MAX_OUTPUTS && st == MT_OK; k++) {
        st = to_meta(s, c->out[k], &a->out[k]);
    }
    if (st == MT_OK && c->outl) {
        st = mt_args_alloc_outl(a, c->noutl);
        for (int k = 0; k < c->noutl && st == MT_OK; k++) {
            st = to_meta(s, c->outl[k], &a->outl[k]);
        }
    }
    for (int k = 0; k < s->n; k++) { /* what the CPU path wrote in place, the argument was */
        long changed = atomic_load(&s->v[k].cpu->version.value) - s->v[k].version;
        atomic_fetch_add(&s->v[k].orig->version->value, changed);
    }
    if (st) {
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a->out[k]);
        }
        mt_args_clear_outl(a);
    }
    return st;
}

static mt_status
meta_kernel(mt_op op, mt_args *a)
{
    if (needs_values(op, a)) {
        return mt_fail(MT_ENOTIMPL,
                       "aten::%s: attempted to run this operator with Meta tensors, but there was "
                       "no fake impl or Meta kernel registered.",
                       mt_op_names[op]);
    }
    if (op == MT_OP_copy_ && !is_meta(a->t[0]) && is_meta(a->t[1])) {
        return mt_fail(MT_ENOTIMPL, "Cannot copy out of meta tensor; no data!");
    }
    if (only_fills(op, a)) {
        return run_fill(op, a);
    }
    stand_ins s = {0};
    mt_args c = *a;
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        c.out[k] = NULL;
    }
    c.outl = NULL;
    c.noutl = 0;
    c.plan = NULL;
    if (c.has_device && c.device.type == MT_META) {
        c.device = MT_DEVICE_CPU; /* a factory: made on the CPU, then described on meta */
    }
    mt_status st = stand_in_args(&s, a, &c);
    if (st == MT_OK && (st = mt_redispatch(op, &c, MT_KEY_META)) == MT_OK) {
        st = results_to_meta(&s, &c, a);
    }
    for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
        mt_tensor_clear(&c.out[k]);
    }
    mt_args_clear_outl(&c);
    free_stand_in_args(a, &c);
    stand_ins_free(&s);
    return st;
}

#define PER_OP_CALL meta_kernel
#define PER_OP_PREFIX meta
#include "dispatch/per_op_kernels.h" /* meta_<op>, meta_kernels */

/* "mt_meta_<op>" */
static char meta_names[MT_NUM_OPS][80];

void
mt_meta_init(void)
{
    mt_register_allocator(MT_META, &meta_allocator);
    for (int op = 0; op < MT_NUM_OPS; op++) {
        /* an op without a CPU kernel is a composite: it decomposes on the meta device */
        if (mt_kernel_for(op, MT_KEY_CPU)->fn) {
            snprintf(meta_names[op], sizeof(meta_names[op]), "mt_meta_%s", mt_op_names[op]);
            mt_register_kernel(op, MT_KEY_META, meta_kernels[op], meta_names[op]);
        }
    }
}
