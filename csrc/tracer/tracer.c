/* The Tracer key's fallback and its per-thread record list (see tracer.h). */
#include <stdlib.h>
#include <string.h>

#include "tracer/tracer.h"

static _Thread_local mt_trace_rec *recs;
static _Thread_local int64_t nrecs, caprecs;
static _Thread_local int depth;

static mt_status
grow(void)
{
    if (nrecs < caprecs) {
        return MT_OK;
    }
    int64_t cap = caprecs ? 2 * caprecs : 64;
    mt_trace_rec *r = realloc(recs, (size_t)cap * sizeof(*r));
    if (r == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for the graph tracer");
    }
    recs = r;
    caprecs = cap;
    return MT_OK;
}

/* Retains the non-NULL tensors of src (skipping wrapped numbers) into a new array. */
static mt_status
keep(mt_tensor *const *src, int n, mt_tensor ***out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (n == 0) {
        return MT_OK;
    }
    mt_tensor **v = malloc((size_t)n * sizeof(*v));
    if (v == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for the graph tracer");
    }
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (src[k] && !src[k]->is_wrapped_number) {
            v[m++] = mt_tensor_retain(src[k]);
        }
    }
    *out = v;
    *nout = m;
    return MT_OK;
}

/* Releases what args_keep took in a (NULL or a kept copy) and a itself. */
static void
args_release(mt_args *a)
{
    if (a == NULL) {
        return;
    }
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        mt_tensor_clear(&a->t[k]);
    }
    for (int j = 0; j < MT_MAX_TENSOR_LISTS; j++) {
        mt_tensorlist l = mt_args_tensorlist(a, j);
        for (int k = 0; l.t && k < l.n; k++) {
            mt_tensor_clear(&l.t[k]);
        }
        free(l.t);
    }
    for (size_t k = 0; k < sizeof(a->l) / sizeof(a->l[0]); k++) {
        free((int64_t *)a->l[k].ext);
    }
    free((char *)a->str[0]);
    mt_generator_release(a->gen);
    free(a);
}

/* A retained copy of list l (Tensor?[] entries may be NULL), or NULL when out of memory. */
static mt_tensor **
list_keep(mt_tensorlist l)
{
    mt_tensor **v = calloc(l.n > 0 ? (size_t)l.n : 1, sizeof(*v));
    for (int k = 0; v && k < l.n; k++) {
        v[k] = l.t[k] ? mt_tensor_retain(l.t[k]) : NULL;
    }
    return v;
}

/* A copy of the call's arguments that outlives the call (see mt_trace_rec.args): its tensors
 * and generator retained, its int[*] lists and string copied. autograd.c's keep_args keeps the
 * non-tensor members for a node, borrowing what lives longer than the call; a new mt_args member
 * goes in both. */
static mt_status
args_keep(const mt_args *a, mt_args **out)
{
    mt_args *c = malloc(sizeof(*c));
    if (c == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory for the graph tracer");
    }
    memcpy(c, a, sizeof(*c));
    memset(c->out, 0, sizeof(c->out));
    memset(c->into, 0, sizeof(c->into));
    c->outl = NULL;
    c->noutl = 0;
    c->plan = NULL;
    c->str[0] = NULL;
    c->tl = NULL;
    for (int j = 0; j < MT_MAX_TENSOR_LISTS - 1; j++) {
        c->tls[j].t = NULL;
    }
    for (size_t k = 0; k < sizeof(c->l) / sizeof(c->l[0]); k++) {
        c->l[k].ext = NULL;
    }
    bool failed = false;
    c->gen = a->gen ? mt_generator_retain(a->gen) : NULL; /* a temporary Generator may go first */
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        c->t[k] = a->t[k] ? mt_tensor_retain(a->t[k]) : NULL;
    }
    for (int j = 0; j < MT_MAX_TENSOR_LISTS; j++) {
        mt_tensorlist l = mt_args_tensorlist(a, j);
        mt_tensor **v = l.t ? list_keep(l) : NULL;
        failed |= l.t && v == NULL;
        if (j == 0) {
            c->tl = v;
        } else {
            c->tls[j - 1].t = v;
        }
    }
    for (size_t k = 0; k < sizeof(a->l) / sizeof(a->l[0]); k++) {
        if (a->l[k].ext && a->l[k].n > 0) {
            int64_t *v = malloc((size_t)a->l[k].n * sizeof(*v));
            failed |= v == NULL;
            if (v) {
                memcpy(v, a->l[k].ext, (size_t)a->l[k].n * sizeof(*v));
            }
            c->l[k].ext = v;
        }
    }
    if (a->str[0]) {
        char *str = malloc(strlen(a->str[0]) + 1);
        failed |= str == NULL;
        c->str[0] = str ? strcpy(str, a->str[0]) : NULL;
    }
    if (failed) {
        args_release(c);
        return mt_fail(MT_ENOMEM, "out of memory for the graph tracer");
    }
    *out = c;
    return MT_OK;
}

static void
rec_clear(mt_trace_rec *r)
{
    args_release(r->args);
    for (int k = 0; k < r->nin; k++) {
        mt_tensor_clear(&r->in[k]);
    }
    for (int k = 0; k < r->nout; k++) {
        mt_tensor_clear(&r->out[k]);
    }
    free(r->in);
    free(r->out);
}

static mt_status
record_inputs(mt_op op, const mt_args *a, mt_trace_rec *r)
{
    mt_tensor *all[MT_MAX_TENSOR_ARGS];
    int n = 0;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        all[n++] = a->t[k];
    }
    mt_status st = keep(all, n, &r->in, &r->nin);
    if (st == MT_OK && a->ntl > 0) {
        /* a Tensor[] argument (cat, stack) follows the named tensors */
        mt_tensor **tl;
        int ntl;
        st = keep(a->tl, a->ntl, &tl, &ntl);
        mt_tensor **both = st ? NULL : realloc(r->in, (size_t)(r->nin + ntl + 1) * sizeof(*both));
        if (st == MT_OK && both == NULL) {
            for (int k = 0; k < ntl; k++) {
                mt_tensor_clear(&tl[k]);
            }
            st = mt_fail(MT_ENOMEM, "out of memory for the graph tracer");
        }
        if (st == MT_OK) {
            for (int k = 0; k < ntl; k++) {
                both[r->nin + k] = tl[k];
            }
            r->in = both;
            r->nin += ntl;
        }
        free(tl);
    }
    if (st == MT_OK) {
        st = mt_backend_key(op, a, &r->key);
    }
    if (st == MT_OK) {
        st = args_keep(a, &r->args);
    }
    return st;
}

static mt_status
trace_fallback(mt_op op, mt_args *a)
{
    mt_status st = grow();
    if (st) {
        return st;
    }
    /* Recorded before it runs, so a composite comes before the ops it calls. */
    int64_t at = nrecs;
    mt_trace_rec *r = &recs[at];
    *r = (mt_trace_rec){.op = op, .depth = depth, .key = MT_KEY_COMPOSITE};
    st = record_inputs(op, a, r);
    if (st) {
        rec_clear(r);
        return st;
    }
    nrecs++;
    depth++;
    st = mt_redispatch(op, a, MT_KEY_TRACER);
    depth--;
    r = &recs[at]; /* nested calls may have moved the list */
    if (st) {
        return st;
    }
    r->ok = true;
    if (mt_op_nout[op] == LIST) {
        return keep(a->outl, a->noutl, &r->out, &r->nout);
    }
    return keep(a->out, mt_op_nout[op], &r->out, &r->nout);
}

void
mt_tracer_init(void)
{
    mt_register_fallback(MT_KEY_TRACER, trace_fallback);
}

void
mt_tracer_start(void)
{
    mt_tracer_free(recs, nrecs);
    recs = NULL;
    nrecs = caprecs = 0;
    depth = 0;
    mt_set_tracing(true);
}

void
mt_tracer_stop(mt_trace_rec **out, int64_t *n)
{
    mt_set_tracing(false);
    *out = recs;
    *n = nrecs;
    recs = NULL;
    nrecs = caprecs = 0;
}

void
mt_tracer_free(mt_trace_rec *r, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        rec_clear(&r[k]);
    }
    free(r);
}

int64_t
mt_tracer_count(void)
{
    return nrecs;
}
