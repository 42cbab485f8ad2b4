/* The graph tracer: the Tracer dispatch key's fallback records each op that runs (minitorch.viz).
 *
 * While tracing is on (per thread), every call's key set has MT_KEY_TRACER; its fallback appends a
 * record (op, nesting depth, the key that computed it, its input and output tensors, retained so
 * that no tensor address is reused during the trace) and redispatches below itself. Calls a
 * composite makes are recorded too, one level deeper, so a graph can show linear > t, addmm.
 * Each record also keeps a copy of the call's arguments, numbers and lists included, so that
 * torch.jit.trace can replay the call (python/tracer.c boxes them by the op's schema). */
#ifndef MT_TRACER_H
#define MT_TRACER_H

#include "dispatch/dispatch.h"

typedef struct mt_trace_rec {
    mt_op op;
    int depth;
    mt_key key; /* the key whose kernel computed it, below Autograd */
    bool ok; /* false if the op failed */
    int nin, nout;
    mt_tensor **in; /* owned references; Python numbers wrapped as tensors are left out */
    mt_tensor **out; /* owned references */
    /* the call's arguments: its tensors (t, tl, tls) and generator retained, its int[*] lists
     * and string copied; no outputs, out= tensors or plan. NULL if the op failed before it was
     * kept. */
    mt_args *args;
} mt_trace_rec;

void mt_tracer_init(void);
/* Drops any earlier records of this thread and turns tracing on. */
void mt_tracer_start(void);
/* Turns tracing off and hands over this thread's records (free them with mt_tracer_free). */
void mt_tracer_stop(mt_trace_rec **recs, int64_t *n);
void mt_tracer_free(mt_trace_rec *recs, int64_t n);
/* How many ops this thread has recorded so far (module scopes are marked by this count). */
int64_t mt_tracer_count(void);

#endif
