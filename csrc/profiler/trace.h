/* The journey trace: a per-thread, nested record of what one call ran, layer by layer.
 *
 * Recording costs one predictable branch per op when off (mt_trace_on is false). The profiler
 * issue grows this into full profiler events; the layers are those of the journey table. */
#ifndef MT_TRACE_H
#define MT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

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
    int depth;
    char name[64];
    char detail[64];
    int64_t start_ns;
    int64_t end_ns;
} mt_trace_event;

extern _Thread_local bool mt_trace_on;
extern const char *const mt_layer_names[MT_NUM_LAYERS];

void mt_trace_start(void);
/* Stops recording; *events (malloc'd, the caller frees) receives the events in start order. */
int mt_trace_stop(mt_trace_event **events);
void mt_trace_enter(mt_layer layer, const char *name, const char *detail);
void mt_trace_exit(void);

#endif
