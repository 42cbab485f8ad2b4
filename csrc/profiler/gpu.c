/* The GPU half of the profiler's storage: correlation ids, the backend's start/stop hooks, and the
 * device events a backend reports when a recording stops.
 *
 * _C knows no CUDA. minitorch._C_cuda's backend (dispatch/backend.h) brings two hooks: start (a time base
 * per device, CUPTI if it loads) and stop (every pending pair of CUDA events resolved to device
 * times on the CPU clock, and CUPTI's records of library kernels), which reports each device event
 * through its argument, mt_trace_gpu_event_add; the Python bindings take them with
 * mt_trace_gpu_take. The backend's spans (Runtime::, Library::) open with mt_trace_span_enter. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/trace.h"

static atomic_llong next_corr = 1;
static mt_trace_gpu_start_hook start_hook;
static mt_trace_gpu_stop_hook stop_hook; /* set once at _C_cuda's import, under the GIL */

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static mt_trace_gpu_event *store;
static int nstore, store_capacity;

int64_t
mt_trace_next_correlation(void)
{
    return (int64_t)atomic_fetch_add(&next_corr, 1);
}

int64_t
mt_trace_span_enter(mt_layer layer, const char *name, const char *detail, bool correlated)
{
    if (!mt_trace_on) {
        return -1;
    }
    mt_trace_enter(layer, name, detail);
    if (!correlated) {
        return 0;
    }
    int64_t corr = mt_trace_next_correlation();
    mt_trace_set_correlation(corr);
    return corr;
}

void
mt_trace_set_gpu_hooks(mt_trace_gpu_start_hook start, mt_trace_gpu_stop_hook stop)
{
    start_hook = start;
    stop_hook = stop;
}

void
mt_trace_gpu_start(void)
{
    /* events of a recording that was never taken are stale */
    int n = 0;
    mt_trace_gpu_events_free(mt_trace_gpu_take(&n), n);
    if (start_hook) {
        start_hook();
    }
}

void
mt_trace_gpu_stop(void)
{
    if (stop_hook) {
        stop_hook(mt_trace_gpu_event_add);
    }
}

void
mt_trace_gpu_event_add(int kind, const char *name, int device, int stream, int64_t corr,
                       int64_t start_ns, int64_t end_ns)
{
    char *copy = strdup(name ? name : "");
    if (copy == NULL) {
        return;
    }
    pthread_mutex_lock(&store_lock);
    if (nstore == store_capacity) {
        int cap = store_capacity ? store_capacity * 2 : 256;
        mt_trace_gpu_event *grown = realloc(store, sizeof(*grown) * (size_t)cap);
        if (grown == NULL) {
            pthread_mutex_unlock(&store_lock);
            free(copy);
            return;
        }
        store = grown;
        store_capacity = cap;
    }
    store[nstore++] = (mt_trace_gpu_event){copy, kind, device, stream, corr, start_ns, end_ns};
    pthread_mutex_unlock(&store_lock);
}

mt_trace_gpu_event *
mt_trace_gpu_take(int *n)
{
    pthread_mutex_lock(&store_lock);
    mt_trace_gpu_event *out = store;
    *n = nstore;
    store = NULL;
    nstore = store_capacity = 0;
    pthread_mutex_unlock(&store_lock);
    return out;
}

void
mt_trace_gpu_events_free(mt_trace_gpu_event *events, int n)
{
    for (int k = 0; k < n; k++) {
        free(events[k].name);
    }
    free(events);
}
