/* Profiler events: a per-thread, nested record of what ran, layer by layer.
 *
 * Recording costs one predictable branch per op when off (mt_trace_on is false). While on, each
 * thread appends to its own buffer (its first event registers it); mt_trace_stop collects every
 * thread's events. The layers are those of the journey table. No Python here: the bindings in
 * module.c turn events into tuples, and minitorch/profiler/ builds PyTorch's views from them. */
#ifndef MT_TRACE_H
#define MT_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

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

typedef struct mt_trace_event {
    mt_layer layer;
    int depth;          /* nesting within its thread, 0 outermost */
    char name[64];      /* "addmm", "mt_cpu_addmm", "cblas_sgemv", "Linear", "alloc" */
    char detail[64];    /* dispatch key, library, "nn.Module", "user_annotation", or pool */
    char shapes[160];   /* record_shapes: the tensor inputs' sizes, "[[1, 4], [8, 4], [8]]" */
    char dtypes[96];    /* record_shapes: their dtypes, "['float', 'float', 'float']" */
    int64_t start_ns;   /* CLOCK_MONOTONIC */
    int64_t end_ns;     /* equal to start_ns for Mem events (instants) */
    int64_t tid;        /* the recording thread's id, as the OS numbers it */
    int64_t bytes;      /* Mem: bytes allocated (> 0) or freed (< 0) */
    uintptr_t ptr;      /* Mem: the block's address */
    mt_device device;   /* Mem: where the block lives */
    int cache;          /* Mem: 1 served from a cache, 0 a real allocation, -1 no cache */
} mt_trace_event;

typedef struct mt_trace_config {
    bool record_shapes;  /* Op events carry their inputs' shapes and dtypes */
    bool profile_memory; /* allocators report Mem::alloc / Mem::free */
} mt_trace_config;

/* Read with a plain load: every op tests it once. Set only by start and stop. */
extern atomic_bool mt_trace_on;
extern mt_trace_config mt_trace_cfg;
extern const char *const mt_layer_names[MT_NUM_LAYERS];

/* Starts a recording with no shapes and no memory events (the journey's). */
void mt_trace_start(void);
void mt_trace_start_with(mt_trace_config cfg);
/* Stops recording; *events (malloc'd, the caller frees) receives every thread's events, each
 * thread's in start order. Returns their count, or -1 when out of memory. */
int mt_trace_stop(mt_trace_event **events);
/* Opens an event as a child of the thread's innermost open one. */
void mt_trace_enter(mt_layer layer, const char *name, const char *detail);
/* The same for an op at dispatcher entry: with record_shapes, its inputs' shapes and dtypes. */
struct mt_args;
void mt_trace_enter_op(const char *name, const char *key, const struct mt_args *a);
void mt_trace_exit(void);
/* Fills e's shapes and dtypes from an op's boxed arguments (profiler/inputs.c). */
void mt_trace_record_inputs(mt_trace_event *e, const struct mt_args *a);
/* An instant Mem event: an allocation (bytes > 0) or a free (bytes < 0) of ptr on dev. */
void mt_trace_mem(const void *ptr, int64_t bytes, mt_device dev, const char *pool, int cache);

#endif
