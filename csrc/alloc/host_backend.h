/* A caching-allocator backend over host memory, for testing the algorithm on any machine.
 *
 * Segments are aligned_alloc'd; a capacity makes raw_alloc fail past a total, and
 * fail_next makes the next raw_alloc calls fail on demand. Streams are just numbers: an
 * event recorded on a stream stays pending until the test completes that stream's work
 * (or the allocator waits on it). Not thread-safe: the test surface calls it under the GIL. */
#ifndef MT_HOST_BACKEND_H
#define MT_HOST_BACKEND_H

#include <stdint.h>

#include "alloc/caching.h"

typedef struct mt_host_backend mt_host_backend;

extern const mt_caching_backend mt_host_backend_vtable;

/* capacity 0: no limit but the C library's. */
mt_status mt_host_backend_create(size_t capacity, mt_host_backend **out);
void mt_host_backend_destroy(mt_host_backend *hb);

void mt_host_backend_fail_next(mt_host_backend *hb, int n); /* the next n raw_allocs fail */
/* Marks the work queued so far on stream (on every stream if all) as done. */
void mt_host_backend_complete(mt_host_backend *hb, uintptr_t stream, bool all);
void mt_host_backend_set_stream(mt_host_backend *hb, uintptr_t stream); /* current stream */

typedef struct mt_host_backend_counts {
    int64_t raw_alloc_calls, raw_free_calls; /* calls, failed ones included */
    size_t in_use;                           /* bytes handed to the allocator */
} mt_host_backend_counts;
void mt_host_backend_counts_get(const mt_host_backend *hb, mt_host_backend_counts *out);

#endif
