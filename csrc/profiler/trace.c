/* Storage of journey events for the calling thread. Not a profiler yet: no aggregation. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profiler/trace.h"

/* Deepest nesting recorded; deeper events are counted in their parent's time only. */
#define MT_TRACE_MAX_DEPTH 64

_Thread_local bool mt_trace_on = false;
const char *const mt_layer_names[MT_NUM_LAYERS] = {"Python", "Op",     "Library",
                                                   "Runtime", "Kernel", "Mem"};

static _Thread_local mt_trace_event *events;
static _Thread_local int nevents, capacity;
static _Thread_local int open_stack[MT_TRACE_MAX_DEPTH];
static _Thread_local int depth;

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
mt_trace_start(void)
{
    free(events);
    events = NULL;
    nevents = capacity = depth = 0;
    mt_trace_on = true;
}

int
mt_trace_stop(mt_trace_event **out)
{
    mt_trace_on = false;
    *out = events;
    int n = nevents;
    events = NULL;
    nevents = capacity = depth = 0;
    return n;
}

void
mt_trace_enter(mt_layer layer, const char *name, const char *detail)
{
    if (depth < MT_TRACE_MAX_DEPTH && nevents == capacity) {
        int cap = capacity ? capacity * 2 : 64;
        mt_trace_event *grown = realloc(events, sizeof(*events) * (size_t)cap);
        if (grown == NULL) {
            /* Out of memory while tracing: keep the nesting balanced, drop the event. */
            open_stack[depth < MT_TRACE_MAX_DEPTH ? depth : MT_TRACE_MAX_DEPTH - 1] = -1;
            depth++;
            return;
        }
        events = grown;
        capacity = cap;
    }
    if (depth >= MT_TRACE_MAX_DEPTH) {
        depth++;
        return;
    }
    mt_trace_event *e = &events[nevents];
    e->layer = layer;
    e->depth = depth;
    snprintf(e->name, sizeof(e->name), "%s", name);
    snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
    e->start_ns = now_ns();
    e->end_ns = e->start_ns;
    open_stack[depth++] = nevents++;
}

void
mt_trace_exit(void)
{
    if (depth == 0) {
        return;
    }
    depth--;
    if (depth < MT_TRACE_MAX_DEPTH && open_stack[depth] >= 0) {
        events[open_stack[depth]].end_ns = now_ns();
    }
}
