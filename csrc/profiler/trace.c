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
const char *const mt_layer_names[MT_NUM_LAYERS] = {"Python", "Op",     "Library",
                                                   "Runtime", "Kernel", "Mem"};

typedef struct thread_buf {
    pthread_mutex_t lock;
    struct thread_buf *next; /* in the global list, under list_lock */
    unsigned session;        /* the recording its events belong to */
    bool dead;               /* its thread exited: the next stop frees it */
    int64_t tid;
    mt_trace_event *events;
    int nevents, capacity;
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
    free(b->events);
    b->events = NULL;
    b->nevents = b->capacity = b->depth = 0;
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
mt_trace_stop(mt_trace_event **out)
{
    atomic_store(&mt_trace_on, false);
    mt_set_alloc_observer(NULL);
    pthread_mutex_lock(&list_lock);
    int total = 0;
    for (thread_buf *b = buffers; b; b = b->next) {
        total += b->session == session ? b->nevents : 0;
    }
    mt_trace_event *all = malloc(sizeof(*all) * (size_t)(total ? total : 1));
    int n = 0;
    for (thread_buf **link = &buffers; *link;) {
        thread_buf *b = *link;
        pthread_mutex_lock(&b->lock);
        if (all && b->session == session && b->nevents) {
            memcpy(all + n, b->events, sizeof(*all) * (size_t)b->nevents);
            n += b->nevents;
        }
        reset(b);
        pthread_mutex_unlock(&b->lock);
        if (b->dead) {
            *link = b->next;
            pthread_mutex_destroy(&b->lock);
            free(b);
        } else {
            link = &b->next;
        }
    }
    pthread_mutex_unlock(&list_lock);
    *out = all;
    return all ? n : -1;
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
    memset(e, 0, offsetof(mt_trace_event, start_ns));
    e->depth = b->depth;
    e->tid = b->tid;
    e->bytes = 0;
    e->ptr = 0;
    e->device = MT_DEVICE_CPU;
    e->cache = -1;
    return e;
}

static void
enter(mt_layer layer, const char *name, const char *detail, const struct mt_args *a)
{
    thread_buf *b = my_buffer();
    if (b == NULL) {
        return;
    }
    pthread_mutex_lock(&b->lock);
    mt_trace_event *e = NULL;
    if (b->depth < MT_TRACE_MAX_DEPTH) {
        e = append(b);
        b->open_stack[b->depth] = e ? b->nevents - 1 : -1;
    }
    b->depth++;
    if (e) {
        e->layer = layer;
        snprintf(e->name, sizeof(e->name), "%s", name);
        snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
        if (a && mt_trace_cfg.record_shapes) {
            mt_trace_record_inputs(e, a);
        }
        e->start_ns = e->end_ns = now_ns();
    }
    pthread_mutex_unlock(&b->lock);
}

void
mt_trace_enter(mt_layer layer, const char *name, const char *detail)
{
    enter(layer, name, detail, NULL);
}

void
mt_trace_enter_op(const char *name, const char *key, const struct mt_args *a)
{
    enter(MT_LAYER_OP, name, key, a);
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
        snprintf(e->name, sizeof(e->name), "%s", bytes >= 0 ? "alloc" : "free");
        snprintf(e->detail, sizeof(e->detail), "%s", pool ? pool : "");
        e->start_ns = e->end_ns = now_ns();
        e->bytes = bytes;
        e->ptr = (uintptr_t)ptr;
        e->device = dev;
        e->cache = cache;
    }
    pthread_mutex_unlock(&b->lock);
}
