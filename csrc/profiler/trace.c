/* Storage of profiler events: one buffer per recording thread, collected when recording stops.
 *
 * Recordings (sessions) belong to the thread that starts them: a thread inside its own profile()
 * records into its session only, so two threads profiling at once each get exactly their own
 * events. A thread with no session of its own records into the oldest open one, as PyTorch's
 * profiler records the threads its profile() did not start (a worker thread of the profiled
 * code). A thread's first event while on registers its buffer in a global list; its own events
 * are appended under the buffer's lock, uncontended but for the moment stop collects it. A
 * thread that exits, or moves to another session while its buffer holds events, leaves the
 * buffer to be collected and freed by a later stop. Nothing here may fail loudly: out of memory
 * drops events and keeps the nesting balanced. */
#define _DEFAULT_SOURCE /* syscall */

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "alloc/allocator.h"
#include "profiler/trace.h"

/* Deepest nesting recorded; deeper events are counted in their parent's time only. */
#define MT_TRACE_MAX_DEPTH 64
/* Events a starting thread's buffer holds before it must grow (about 1 MiB). */
#define MT_TRACE_RESERVE 8192

#ifdef MT_NO_TRACE
#undef mt_trace_on
static atomic_bool mt_trace_on = false; /* the rest of the build reads the constant false */
#else
atomic_bool mt_trace_on = false;
#endif
mt_trace_config mt_trace_cfg; /* what any open session asks for: the union of their options */
void (*mt_trace_stack_fn)(char *buf, size_t n);
const char *const mt_layer_names[MT_NUM_LAYERS] = {"Python",  "Op",     "Library",
                                                   "Runtime", "Kernel", "Mem"};

typedef struct thread_buf {
    atomic_flag lock; /* a spin lock: its owner takes it twice per op, the collector once */
    struct thread_buf *next; /* in the global list, under list_lock */
    unsigned session;        /* the recording its events belong to */
    mt_trace_config cfg;     /* that recording's options */
    bool dead;               /* its thread exited or left it: a stop frees it */
    int64_t tid;
    mt_trace_event *events; /* kept between recordings: fresh pages cost more than the events */
    int nevents, capacity;
    char *text; /* copied names and input shapes, NUL-terminated, found by offset */
    int32_t ntext, text_capacity;
    int open_stack[MT_TRACE_MAX_DEPTH]; /* index of each open event, -1 when dropped */
    int depth;
} thread_buf;

static bool grow(thread_buf *b, int cap);

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_buf *buffers;
static unsigned last_session; /* under list_lock; bumped by each start (0: none) */

typedef struct session {
    unsigned id;
    mt_trace_config cfg;
    struct session *next; /* open sessions, oldest first, under list_lock */
} session;

static session *open_sessions;
/* The oldest open session: where threads without one of their own record (0: none). */
static atomic_uint shared_session;
/* The session this thread started and has not stopped (0: none). */
static _Thread_local unsigned own_session;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static _Thread_local thread_buf *mine;

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Uncontended (the owner recording) it costs one atomic exchange, half of a mutex's lock and
 * unlock; a collector holds it for one buffer's copy, so a waiter yields rather than sleeps. */
static void
buf_lock(thread_buf *b)
{
    while (atomic_flag_test_and_set_explicit(&b->lock, memory_order_acquire)) {
        sched_yield();
    }
}

static void
buf_unlock(thread_buf *b)
{
    atomic_flag_clear_explicit(&b->lock, memory_order_release);
}

static void
mark_dead(void *p)
{
    thread_buf *b = p;
    pthread_mutex_lock(&list_lock);
    b->dead = true;
    pthread_mutex_unlock(&list_lock);
}

static void
make_exit_key(void)
{
    pthread_key_create(&exit_key, mark_dead);
}

static void
reset(thread_buf *b)
{
    b->nevents = b->depth = 0;
    b->ntext = 0;
}

static void
release(thread_buf *b)
{
    free(b->events);
    free(b->text);
    free(b);
}

/* Copies str into b's text; its offset, or -1 when memory ran out. */
static int32_t
keep_text(thread_buf *b, const char *str)
{
    size_t n = strlen(str) + 1;
    if (n > (size_t)(INT32_MAX / 2) - (size_t)b->ntext) {
        return -1;
    }
    if ((size_t)b->ntext + n > (size_t)b->text_capacity) {
        int32_t cap = b->text_capacity ? b->text_capacity : 4096;
        while ((size_t)cap < (size_t)b->ntext + n) {
            cap *= 2;
        }
        char *grown = realloc(b->text, (size_t)cap);
        if (grown == NULL) {
            return -1;
        }
        b->text = grown;
        b->text_capacity = cap;
    }
    memcpy(b->text + b->ntext, str, n);
    int32_t at = b->ntext;
    b->ntext += (int32_t)n;
    return at;
}

static session *
find_session(unsigned id)
{
    session *x = open_sessions;
    while (x && x->id != id) {
        x = x->next;
    }
    return x;
}

/* After the open sessions changed: the shared one, the on flag, the union of options and the
 * allocation observer (under list_lock). */
static void
sessions_changed(void)
{
    mt_trace_config any = {false, false, false, false};
    for (session *x = open_sessions; x; x = x->next) {
        any.record_shapes |= x->cfg.record_shapes;
        any.profile_memory |= x->cfg.profile_memory;
        any.with_stack |= x->cfg.with_stack;
        any.with_flops |= x->cfg.with_flops;
    }
    mt_trace_cfg = any;
    atomic_store(&shared_session, open_sessions ? open_sessions->id : 0u);
    mt_set_alloc_observer(any.profile_memory ? mt_trace_mem : NULL);
    atomic_store(&mt_trace_on, open_sessions != NULL);
}

static thread_buf *
new_buffer(void)
{
    thread_buf *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    atomic_flag_clear(&b->lock);
    b->tid = (int64_t)syscall(SYS_gettid);
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, b);
    b->next = buffers;
    buffers = b;
    return b;
}

/* The calling thread's buffer for the session it records into, registered on first use; NULL
 * when no session is open for it (one stopped between the caller's test and here). */
static thread_buf *
my_buffer(void)
{
    unsigned want = own_session ? own_session : atomic_load(&shared_session);
    if (mine != NULL && want != 0 && mine->session == want) {
        return mine;
    }
    pthread_mutex_lock(&list_lock);
    want = own_session ? own_session : atomic_load(&shared_session);
    session *x = find_session(want);
    thread_buf *b = mine;
    if (x == NULL) {
        b = NULL;
    } else if (b != NULL && b->nevents > 0 && find_session(b->session)) {
        /* its events belong to another open session, whose stop will collect and free it */
        buf_lock(b);
        b->dead = true;
        buf_unlock(b);
        mine = NULL; /* a stop may free it from now on */
        b = new_buffer();
    } else if (b == NULL) {
        b = new_buffer();
    }
    if (b != NULL && x != NULL) {
        buf_lock(b);
        reset(b);
        b->session = want;
        b->cfg = x->cfg;
        buf_unlock(b);
        mine = b;
    }
    pthread_mutex_unlock(&list_lock);
    return b;
}

/* Collects session id's events into out (under list_lock); frees the buffers left to a stop. */
static bool
collect(unsigned id, mt_trace_recording *out)
{
    size_t total = 0, ntext = 1;
    for (thread_buf *b = buffers; b; b = b->next) {
        if (b->session == id) {
            total += (size_t)b->nevents;
            ntext += (size_t)b->ntext;
        }
    }
    out->events = malloc(sizeof(*out->events) * (total ? total : 1));
    out->text = malloc(ntext);
    out->nevents = 0;
    bool ok = out->events && out->text;
    if (ok) {
        out->text[0] = '\0'; /* offset 0: the empty string */
    }
    int32_t text_at = 1;
    for (thread_buf **link = &buffers; *link;) {
        thread_buf *b = *link;
        buf_lock(b);
        bool ours = b->session == id;
        if (ok && ours && b->nevents) {
            for (int k = 0; k < b->nevents; k++) {
                mt_trace_event e = b->events[k];
                e.name_at = e.name_at >= 0 ? e.name_at + text_at : -1;
                e.shapes_at = e.shapes_at >= 0 ? e.shapes_at + text_at : 0;
                e.dtypes_at = e.dtypes_at >= 0 ? e.dtypes_at + text_at : 0;
                e.stack_at = e.stack_at >= 0 ? e.stack_at + text_at : 0;
                e.flop_args_at = e.flop_args_at >= 0 ? e.flop_args_at + text_at : 0;
                out->events[out->nevents++] = e;
            }
            if (b->ntext > 0) { /* a buffer that saw no text has none (NULL) */
                memcpy(out->text + text_at, b->text, (size_t)b->ntext);
            }
            text_at += b->ntext;
        }
        if (ours) {
            reset(b);
        }
        buf_unlock(b);
        if (b->dead && (ours || find_session(b->session) == NULL)) {
            *link = b->next;
            release(b);
        } else {
            link = &b->next;
        }
    }
    return ok;
}

void
mt_trace_start_with(mt_trace_config cfg)
{
    session *x = calloc(1, sizeof(*x));
    pthread_mutex_lock(&list_lock);
    if (own_session) { /* a second start in this thread replaces its recording */
        for (session **link = &open_sessions; *link; link = &(*link)->next) {
            if ((*link)->id == own_session) {
                session *old = *link;
                *link = old->next;
                free(old);
                break;
            }
        }
        own_session = 0;
    }
    if (x != NULL) { /* out of memory: nothing is recorded */
        if (++last_session == 0) {
            last_session = 1;
        }
        x->id = last_session;
        x->cfg = cfg;
        session **link = &open_sessions;
        while (*link) {
            link = &(*link)->next;
        }
        *link = x;
        own_session = x->id;
    }
    sessions_changed();
    pthread_mutex_unlock(&list_lock);
    /* The starting thread's buffer is made and sized before the recorded code runs: a first
     * recording then pays no page faults and copies for its first events (measured: 0.5-1.3 us
     * of a 10 us profiled forward). */
    thread_buf *b = x != NULL ? my_buffer() : NULL;
    if (b != NULL) {
        buf_lock(b);
        if (b->capacity < MT_TRACE_RESERVE) {
            (void)grow(b, MT_TRACE_RESERVE); /* out of memory: it grows on demand, as before */
        }
        buf_unlock(b);
    }
}

void
mt_trace_start(void)
{
    mt_trace_start_with((mt_trace_config){false, false, false, false});
}

int
mt_trace_stop(mt_trace_recording *out)
{
    pthread_mutex_lock(&list_lock);
    unsigned id = own_session;
    own_session = 0;
    for (session **link = &open_sessions; id && *link; link = &(*link)->next) {
        if ((*link)->id == id) {
            session *x = *link;
            *link = x->next;
            free(x);
            break;
        }
    }
    sessions_changed();
    /* a thread that started nothing gets an empty recording */
    bool ok = collect(id ? id : (unsigned)-1, out);
    pthread_mutex_unlock(&list_lock);
    if (!ok) {
        mt_trace_recording_free(out);
        return -1;
    }
    return 0;
}

void
mt_trace_recording_free(mt_trace_recording *r)
{
    free(r->events);
    free(r->text);
    r->events = NULL;
    r->text = NULL;
    r->nevents = 0;
}

const char *
mt_trace_text(const mt_trace_recording *r, int32_t at)
{
    return at >= 0 ? r->text + at : "";
}

const char *
mt_trace_name(const mt_trace_recording *r, const mt_trace_event *e)
{
    return e->name ? e->name : mt_trace_text(r, e->name_at);
}

/* Grows b's events (locked) to hold cap; the new pages are written once here, so the kernel
 * maps them now rather than on the recorded code's time. False when memory ran out. */
static bool
grow(thread_buf *b, int cap)
{
    mt_trace_event *grown = realloc(b->events, sizeof(*grown) * (size_t)cap);
    if (grown == NULL) {
        return false;
    }
    memset(grown + b->capacity, 0, sizeof(*grown) * (size_t)(cap - b->capacity));
    b->events = grown;
    b->capacity = cap;
    return true;
}

/* A new event slot in b (locked), or NULL when memory ran out. */
static mt_trace_event *
append(thread_buf *b)
{
    if (b->nevents == b->capacity && !grow(b, b->capacity ? b->capacity * 2 : 256)) {
        return NULL;
    }
    mt_trace_event *e = &b->events[b->nevents++];
    *e = (mt_trace_event){.name_at = -1,
                          .shapes_at = -1,
                          .dtypes_at = -1,
                          .stack_at = -1,
                          .flop_args_at = -1,
                          .depth = b->depth,
                          .tid = b->tid,
                          .device = MT_DEVICE_CPU,
                          .cache = -1};
    return e;
}

/* Opens one event in b (locked) at time t: name is kept as given, or copied when copy. */
static void
open_event(thread_buf *b, mt_layer layer, const char *name, bool copy, const char *detail,
           int64_t t)
{
    mt_trace_event *e = NULL;
    if (b->depth < MT_TRACE_MAX_DEPTH) {
        e = append(b);
        b->open_stack[b->depth] = e ? b->nevents - 1 : -1;
    }
    b->depth++;
    if (e) {
        e->layer = (int8_t)layer;
        e->detail = detail ? detail : "";
        if (copy) {
            e->name_at = keep_text(b, name);
        } else {
            e->name = name;
        }
        e->start_ns = e->end_ns = t;
    }
}

/* Closes the n innermost open events of b (locked) at time t. */
static void
close_events(thread_buf *b, int n, int64_t t)
{
    /* An exit with nothing open (recording started inside a region) is ignored. */
    for (; n > 0 && b->depth > 0; n--) {
        b->depth--;
        if (b->depth < MT_TRACE_MAX_DEPTH && b->open_stack[b->depth] >= 0 &&
            b->open_stack[b->depth] < b->nevents) {
            b->events[b->open_stack[b->depth]].end_ns = t;
        }
    }
}

static void
enter(mt_layer layer, const char *name, bool copy, const char *detail, const struct mt_args *a,
      const char *kernel)
{
    thread_buf *b = my_buffer();
    if (b == NULL) {
        return;
    }
    /* Before the lock: the stack is read under the GIL, which a stopping thread may hold while
     * it waits for this buffer. */
    char stack[1024];
    stack[0] = '\0'; /* not "= \"\"": that would clear the whole array on every op */
    if (a && mt_trace_cfg.with_stack && mt_trace_stack_fn) {
        mt_trace_stack_fn(stack, sizeof(stack));
    }
    buf_lock(b);
    int at = b->depth < MT_TRACE_MAX_DEPTH ? b->nevents : -1;
    open_event(b, layer, name, copy, detail, 0);
    if (at >= 0 && at < b->nevents) {
        mt_trace_event *e = &b->events[at];
        if (a && (b->cfg.record_shapes || b->cfg.with_flops)) {
            char shapes[256], dtypes[160];
            mt_trace_format_inputs(a, shapes, sizeof(shapes), dtypes, sizeof(dtypes));
            e->shapes_at = keep_text(b, shapes);
            e->dtypes_at = keep_text(b, dtypes);
        }
        if (stack[0]) {
            e->stack_at = keep_text(b, stack);
        }
        if (a && b->cfg.with_flops) {
            char flop_args[128];
            mt_trace_format_flop_args(name, a, flop_args, sizeof(flop_args));
            if (flop_args[0]) {
                e->flop_args_at = keep_text(b, flop_args);
            }
        }
    }
    /* The clock is read last, so that formatting the inputs is not counted as the op's time;
     * an op's kernel starts at the op's own start (nothing runs between the two). */
    int64_t t = now_ns();
    if (at >= 0 && at < b->nevents) {
        b->events[at].start_ns = b->events[at].end_ns = t;
    }
    if (kernel) {
        open_event(b, MT_LAYER_KERNEL, kernel, false, detail, t);
    }
    buf_unlock(b);
}

void
mt_trace_enter(mt_layer layer, const char *name, const char *detail)
{
    enter(layer, name, false, detail, NULL, NULL);
}

void
mt_trace_enter_copy(mt_layer layer, const char *name, const char *detail)
{
    enter(layer, name, true, detail, NULL, NULL);
}

void
mt_trace_enter_op(const char *name, const char *key, const struct mt_args *a, const char *kernel)
{
    enter(MT_LAYER_OP, name, false, key, a, kernel);
}

void
mt_trace_exit_n(int n)
{
    thread_buf *b = mine;
    if (b == NULL) {
        return;
    }
    int64_t t = now_ns();
    buf_lock(b);
    close_events(b, n, t);
    buf_unlock(b);
}

void
mt_trace_exit(void)
{
    mt_trace_exit_n(1);
}

/* Sets the int64_t field at offset of the calling thread's innermost open event (if any). */
static void
tag_innermost(size_t offset, int64_t value)
{
    thread_buf *b = mine;
    if (b == NULL) {
        return;
    }
    buf_lock(b);
    int at = b->depth > 0 && b->depth <= MT_TRACE_MAX_DEPTH ? b->open_stack[b->depth - 1] : -1;
    if (at >= 0 && at < b->nevents) {
        *(int64_t *)((char *)&b->events[at] + offset) = value;
    }
    buf_unlock(b);
}

void
mt_trace_set_correlation(int64_t corr)
{
    tag_innermost(offsetof(mt_trace_event, corr), corr);
}

void
mt_trace_set_bytes(int64_t bytes)
{
    tag_innermost(offsetof(mt_trace_event, bytes), bytes);
}

void
mt_trace_mem(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache)
{
    if (!atomic_load_explicit(&mt_trace_on, memory_order_relaxed)) {
        return;
    }
    thread_buf *b = my_buffer();
    if (b == NULL || !b->cfg.profile_memory) {
        return;
    }
    buf_lock(b);
    mt_trace_event *e = b->depth < MT_TRACE_MAX_DEPTH ? append(b) : NULL;
    if (e) {
        e->layer = MT_LAYER_MEM;
        e->name = bytes >= 0 ? "alloc" : "free";
        e->detail = pool ? pool : ""; /* allocators name their pools with literals */
        e->start_ns = e->end_ns = now_ns();
        e->bytes = bytes;
        e->ptr = (uintptr_t)ptr;
        e->device = dev;
        e->cache = (int8_t)cache;
    }
    buf_unlock(b);
}
