/* Profiler events: a per-thread, nested record of what ran, layer by layer.
 *
 * Recording costs one predictable branch per op when off (mt_trace_on is false). A recording
 * belongs to the thread that starts it: a thread inside its own recording records into it alone,
 * one without records into the oldest open recording (trace.c). Each thread appends to its own
 * buffer (its first event registers it); mt_trace_stop collects the caller's recording's events
 * from every thread. The layers are those of the journey table. No Python here: the bindings in
 * python/profiler.c turn events into tuples, and minitorch/profiler/ builds PyTorch's views from
 * them. */
#ifndef MT_TRACE_H
#define MT_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/device.h"

typedef enum mt_layer {
    MT_LAYER_PYTHON = 0,
    MT_LAYER_OP,
    MT_LAYER_LIBRARY,
    MT_LAYER_RUNTIME,
    MT_LAYER_KERNEL,
    MT_LAYER_MEM,
    MT_NUM_LAYERS
} mt_layer;

/* Kept small (pages of events are written once each): strings are pointers to names that outlive
 * the recording (op, key, kernel and library names), or offsets into the recording's text. */
typedef struct mt_trace_event {
    const char *name;   /* "addmm", "mt_cpu_addmm", "cblas_sgemv", "alloc"; NULL: see name_at */
    const char *detail; /* dispatch key, library, "nn.Module", "user_annotation", or pool */
    int32_t name_at; /* a copied name (a module's class, a record_function's): offset in text */
    int32_t shapes_at; /* record_shapes: "[[1, 4], [8, 4], [8]]" in text, or -1 */
    int32_t dtypes_at; /* record_shapes: "['float', 'float', 'float']" in text, or -1 */
    int32_t stack_at; /* with_stack, Op events: "file(line): function" lines in text, or -1 */
    int32_t flop_args_at; /* with_flops: what besides shapes the op's count needs, or -1 */
    int32_t depth; /* nesting within its thread, 0 outermost */
    int64_t start_ns; /* CLOCK_MONOTONIC */
    int64_t end_ns; /* equal to start_ns for Mem events (instants) */
    int64_t tid; /* the recording thread's id, as the OS numbers it */
    int64_t bytes; /* Mem: bytes allocated (> 0) or freed (< 0); Comm ranges: bytes sent */
    int64_t corr; /* Runtime/Library: correlation id of the GPU work it started, else 0 */
    uintptr_t ptr; /* Mem: the block's address */
    mt_device device; /* Mem: where the block lives */
    int8_t layer; /* an mt_layer */
    int8_t cache; /* Mem: 1 served from a cache, 0 a real allocation, -1 no cache */
} mt_trace_event;

/* What a stop returns: every thread's events, each thread's in start order, and their text. */
typedef struct mt_trace_recording {
    mt_trace_event *events;
    int nevents;
    char *text;
} mt_trace_recording;

typedef struct mt_trace_config {
    bool record_shapes; /* Op events carry their inputs' shapes and dtypes */
    bool profile_memory; /* allocators report Mem::alloc / Mem::free */
    bool with_stack; /* Op events carry the Python stack (mt_trace_stack_fn) */
    bool with_flops; /* Op events carry shapes, and the counted ops their other arguments */
} mt_trace_config;

/* Whether any thread's recording is open. Read with a plain load: every op tests it once.
 * Set only by start and stop. */
#ifdef MT_NO_TRACE
/* A build that records nothing (MINITORCH_NO_TRACE=1): every check is a constant the compiler
 * removes, so benchmarks/bench_profiler.py --callgrind can count what the real checks cost. */
#define mt_trace_on false
#else
extern atomic_bool mt_trace_on;
#endif
extern mt_trace_config mt_trace_cfg;
extern const char *const mt_layer_names[MT_NUM_LAYERS];

/* Starts the calling thread's recording (replacing one it had open), with no shapes and no
 * memory events (the journey's). */
void mt_trace_start(void);
void mt_trace_start_with(mt_trace_config cfg);
/* Stops the calling thread's recording (an empty one if it started none); *out receives what
 * was recorded (release it with mt_trace_recording_free).
 * Returns MT_ENOMEM-like -1 when the collection ran out of memory, else 0. */
int mt_trace_stop(mt_trace_recording *out);
void mt_trace_recording_free(mt_trace_recording *r);
/* An event's strings ("" when absent). */
const char *mt_trace_name(const mt_trace_recording *r, const mt_trace_event *e);
const char *mt_trace_text(const mt_trace_recording *r, int32_t at);
/* Opens an event as a child of the thread's innermost open one. name and detail must outlive the
 * recording (literals, table entries); mt_trace_enter_copy copies name (Python's strings). */
void mt_trace_enter(mt_layer layer, const char *name, const char *detail);
void mt_trace_enter_copy(mt_layer layer, const char *name, const char *detail);
/* The same for an op at dispatcher entry: with record_shapes, its inputs' shapes and dtypes;
 * kernel (or NULL: a composite) opens the backend kernel's event inside it at the same time,
 * under the same lock and clock read (half the cost of two enters). */
struct mt_args;
void mt_trace_enter_op(const char *name, const char *key, const struct mt_args *a,
                       const char *kernel);
void mt_trace_exit(void);
/* Closes the n innermost open events with one clock read (an op and its kernel). */
void mt_trace_exit_n(int n);
/* Writes an op's inputs' shapes and dtypes, as PyTorch lists them, into shapes and dtypes
 * (profiler/inputs.c). */
void mt_trace_format_inputs(const struct mt_args *a, char *shapes, size_t nshapes, char *dtypes,
                            size_t ndtypes);
/* with_flops: the arguments besides tensors that op's FLOP count needs, as PyTorch's profiler
 * saves them for the ops it counts; "" for the others (profiler/inputs.c). */
void mt_trace_format_flop_args(const char *op, const struct mt_args *a, char *buf, size_t n);
/* An instant Mem event: an allocation (bytes > 0) or a free (bytes < 0) of ptr on dev. */
void mt_trace_mem(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache);

/* with_stack: writes the calling thread's Python stack, innermost frame first, one
 * "file(line): function" per line, into buf (set by the Python bindings; NULL: no stacks). */
extern void (*mt_trace_stack_fn)(char *buf, size_t n);
/* Tags the calling thread's innermost open event with a correlation id (its GPU work's). */
void mt_trace_set_correlation(int64_t corr);
/* Tags it with the bytes it moves (a Comm:: range: the collective's message, this rank's). */
void mt_trace_set_bytes(int64_t bytes);

/* The GPU half (profiler/gpu.c): device events arrive from a backend (minitorch._C_cuda, through
 * its stop hook's report) when a recording with CUDA activity stops, and are kept apart from the threads' CPU
 * events: they have no nesting, only a correlation id tying each to the Runtime or Library event
 * that started it. */
typedef enum mt_gpu_kind { MT_GPU_KERNEL = 0, MT_GPU_MEMCPY, MT_GPU_MEMSET } mt_gpu_kind;

typedef struct mt_trace_gpu_event {
    char *name; /* owned: a kernel's name as CUPTI or the launch site gives it */
    int kind; /* an mt_gpu_kind */
    int device, stream;
    int64_t corr;
    int64_t start_ns, end_ns; /* CLOCK_MONOTONIC, as the CPU events */
} mt_trace_gpu_event;

/* Reports one device event to _C (mt_trace_gpu_event_add): a backend's stop hook receives it. */
typedef void (*mt_trace_gpu_report)(int kind, const char *name, int device, int stream,
                                    int64_t corr, int64_t start_ns, int64_t end_ns);
typedef void (*mt_trace_gpu_start_hook)(void);
typedef void (*mt_trace_gpu_stop_hook)(mt_trace_gpu_report report);

/* The CPU events' clock, CLOCK_MONOTONIC: inline, so a backend's device times share it. */
static inline int64_t
mt_trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* A fresh correlation id (> 0), unique in the process. */
int64_t mt_trace_next_correlation(void);
/* A backend's span: when a recording is on, opens an event as mt_trace_enter does and, when
 * correlated (the span starts device work), tags it with a fresh correlation id, which it returns
 * (0 when not correlated); -1, opening nothing, when no recording is on (the backend's one call
 * per launch). Closed with mt_trace_exit. */
int64_t mt_trace_span_enter(mt_layer layer, const char *name, const char *detail, bool correlated);
/* The backend's start (before a recording with CUDA activity starts) and stop (after it stops:
 * it resolves device times and reports them through its argument). NULL clears them. */
void mt_trace_set_gpu_hooks(mt_trace_gpu_start_hook start, mt_trace_gpu_stop_hook stop);
void mt_trace_gpu_start(void);
void mt_trace_gpu_stop(void);
/* Adds one device event (name is copied); events that do not fit are dropped. */
void mt_trace_gpu_event_add(int kind, const char *name, int device, int stream, int64_t corr,
                            int64_t start_ns, int64_t end_ns);
/* Hands over (and forgets) the device events collected so far: *n of them, free with
 * mt_trace_gpu_events_free. */
mt_trace_gpu_event *mt_trace_gpu_take(int *n);
void mt_trace_gpu_events_free(mt_trace_gpu_event *events, int n);

#endif
