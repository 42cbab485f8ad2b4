/* The CPU's thread count, device-neutral: torch.set_num_threads and get_num_threads (and the
 * inter-op pair) as any layer reads them, a front end's layout rule (ops/conv_checks.c) or the
 * Python binding (python/threads.c). The CPU backend implements them (cpu/threads.c, over its
 * OpenMP pool, which OpenBLAS's parallel sections run on too) and cpu/iter.h re-exports them;
 * nothing here knows OpenMP or OpenBLAS. */
#ifndef MT_CORE_THREADS_H
#define MT_CORE_THREADS_H

#include <stdbool.h>

/* mt_set_num_threads (n >= 1) sets the count for minitorch's loops and OpenBLAS's alike. There
 * is no inter-op pool: its count is kept for get_num_interop_threads, and may be set once (false
 * after). */
void mt_set_num_threads(int n);
int mt_get_num_threads(void);
bool mt_set_num_interop_threads(int n);
int mt_get_num_interop_threads(void);

#endif
