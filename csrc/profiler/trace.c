/* Storage of profiler events: one buffer per recording thread, collected when recording stops.
 *
 * A thread's first event while on registers its buffer in a global list; its own events are
 * appended under the buffer's lock, uncontended but for the moment stop collects it. A thread
 * that exits leaves its buffer to be collected and freed by the next stop. Nothing here may fail
 * loudly: out of memory drops events and keeps the nesting balanced. */
#define _DEFAULT_SOURCE /* syscall */

#include <pthread.h>
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

atomic_bool mt_trace_on = false;
mt_trace_config mt_trace_cfg;
void (*mt_trace_stack_fn)(char *buf, size_t n);
const char *const mt_layer_names[MT_NUM_LAYERS] = {"Python", "Op",     "Library",
                                                   "Runtime", "Kernel", "Mem"};

typedef struct thread_buf {
    pthread_mutex_t lock;
    struct thread_buf *next; /* in the global list, under list_lock */
    unsigned session;        /* the recording its events belong to */
    bool dead;               /* its thread exited: the next stop frees it */
    int64_t tid;
    mt_trace_event *events; /* kept between recordings: fresh pages cost more than the events */
    int nevents, capacity;
    char *text; /* copied names and input shapes, NUL-terminated, found by offset */
    int32_t ntext, text_capacity;
    int open_stack[MT_TRACE_MAX_DEPTH]; /* index of each open event, -1 when dropped */
    int depth;
} thread_buf;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_buf *buffers;
static unsigned session; /* under list_lock; bumped by each start */
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
    pthread_mutex_destroy(&b->lock);
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

/* The calling thread's buffer for the current recording, registered on first use. */
static thread_buf *
my_buffer(void)
{
    if (mine == NULL) {
        thread_buf *b = calloc(1, sizeof(*b));
        if (b == NULL) {
            return NULL;
        }
        pthread_mutex_init(&b->lock, NULL);
        b->tid = (int64_t)syscall(SYS_gettid);
        pthread_once(&exit_key_once, make_exit_key);
        pthread_setspecific(exit_key, b);
        pthread_mutex_lock(&list_lock);
        b->session = session;
        b->next = buffers;
        buffers = b;
        pthread_mutex_unlock(&list_lock);
        mine = b;
    }
    return mine;
}

void
mt_trace_start_with(mt_trace_config cfg)
{
    pthread_mutex_lock(&list_lock);
    session++;
    for (thread_buf *b = buffers; b; b = b->next) {
        pthread_mutex_lock(&b->lock);
        reset(b);
        b->session = session;
        pthread_mutex_unlock(&b->lock);
    }
    mt_trace_cfg = cfg;
    mt_set_alloc_observer(cfg.profile_memory ? mt_trace_mem : NULL);
    atomic_store(&mt_trace_on, true);
    pthread_mutex_unlock(&list_lock);
}

void
mt_trace_start(void)
{
    mt_trace_start_with((mt_trace_config){false, false});
}

int
mt_trace_stop(mt_trace_recording *out)
{
    atomic_store(&mt_trace_on, false);
    mt_set_alloc_observer(NULL);
    pthread_mutex_lock(&list_lock);
    size_t total = 0, ntext = 1;
    for (thread_buf *b = buffers; b; b = b->next) {
        if (b->session == session) {
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
        pthread_mutex_lock(&b->lock);
        if (ok && b->session == session && b->nevents) {
            for (int k = 0; k < b->nevents; k++) {
                mt_trace_event e = b->events[k];
                e.name_at = e.name_at >= 0 ? e.name_at + text_at : -1;
                e.shapes_at = e.shapes_at >= 0 ? e.shapes_at + text_at : 0;
                e.dtypes_at = e.dtypes_at >= 0 ? e.dtypes_at + text_at : 0;
                e.stack_at = e.stack_at >= 0 ? e.stack_at + text_at : 0;
                out->events[out->nevents++] = e;
            }
            if (b->ntext > 0) { /* a buffer that saw no text has none (NULL) */
                memcpy(out->text + text_at, b->text, (size_t)b->ntext);
            }
            text_at += b->ntext;
        }
        reset(b);
        pthread_mutex_unlock(&b->lock);
        if (b->dead) {
            *link = b->next;
            release(b);
        } else {
            link = &b->next;
        }
    }
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

/* A new event slot in b (locked), or NULL when memory ran out. */
static mt_trace_event *
append(thread_buf *b)
{
    if (b->nevents == b->capacity) {
        int cap = b->capacity ? b->capacity * 2 : 256;
        mt_trace_event *grown = realloc(b->events, sizeof(*grown) * (size_t)cap);
        if (grown == NULL) {
            return NULL;
        }
        b->events = grown;
        b->capacity = cap;
    }
    mt_trace_event *e = &b->events[b->nevents++];
    *e = (mt_trace_event){.name_at = -1, .shapes_at = -1, .dtypes_at = -1, .stack_at = -1,
                          .depth = b->depth,
                          .tid = b->tid, .device = MT_DEVICE_CPU, .cache = -1};
    return e;
}

static void
enter(mt_layer layer, const char *name, bool copy, const char *detail, const struct mt_args *a)
{
    thread_buf *b = my_buffer();
    if (b == NULL) {
        return;
    }
    /* Before the lock: the stack is read under the GIL, which a stopping thread may hold while
     * it waits for this buffer. */
    char stack[1024] = "";
    if (a && mt_trace_cfg.with_stack && mt_trace_stack_fn) {
        mt_trace_stack_fn(stack, sizeof(stack));
    }
    pthread_mutex_lock(&b->lock);
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
        if (a && mt_trace_cfg.record_shapes) {
            char shapes[256], dtypes[160];
            mt_trace_format_inputs(a, shapes, sizeof(shapes), dtypes, sizeof(dtypes));
            e->shapes_at = keep_text(b, shapes);
            e->dtypes_at = keep_text(b, dtypes);
        }
        if (stack[0]) {
            e->stack_at = keep_text(b, stack);
        }
        e->start_ns = e->end_ns = now_ns();
    }
    pthread_mutex_unlock(&b->lock);
}

void
mt_trace_enter(mt_layer layer, const char *name, const char *detail)
{
    enter(layer, name, false, detail, NULL);
}

void
mt_trace_enter_copy(mt_layer layer, const char *name, const char *detail)
{
    enter(layer, name, true, detail, NULL);
}

void
mt_trace_enter_op(const char *name, const char *key, const struct mt_args *a)
{
    enter(MT_LAYER_OP, name, false, key, a);
}

void
mt_trace_exit(void)
{
    thread_buf *b = mine;
    if (b == NULL) {
        return;
    }
    int64_t t = now_ns();
    pthread_mutex_lock(&b->lock);
    /* An exit with nothing open (recording started inside a region) is ignored. */
    if (b->depth > 0) {
        b->depth--;
        if (b->depth < MT_TRACE_MAX_DEPTH && b->open_stack[b->depth] >= 0 &&
            b->open_stack[b->depth] < b->nevents) {
            b->events[b->open_stack[b->depth]].end_ns = t;
        }
    }
    pthread_mutex_unlock(&b->lock);
}

void
mt_trace_set_correlation(int64_t corr)
{
    thread_buf *b = mine;
    if (b == NULL) {
        return;
    }
    pthread_mutex_lock(&b->lock);
    int at = b->depth > 0 && b->depth <= MT_TRACE_MAX_DEPTH ? b->open_stack[b->depth - 1] : -1;
    if (at >= 0 && at < b->nevents) {
        b->events[at].corr = corr;
    }
    pthread_mutex_unlock(&b->lock);
}

void
mt_trace_mem(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache)
{
    if (!atomic_load_explicit(&mt_trace_on, memory_order_relaxed) || !mt_trace_cfg.profile_memory) {
        return;
    }
    thread_buf *b = my_buffer();
    if (b == NULL) {
        return;
    }
    pthread_mutex_lock(&b->lock);
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
    pthread_mutex_unlock(&b->lock);
}
