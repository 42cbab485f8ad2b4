/* Per-thread library handles (cuBLAS, cuDNN), one per device, as PyTorch keeps them: a handle
 * shared by threads races between its set-stream and the call. A thread's handles are made on
 * first use and, when the thread exits, given to a per-device pool that later threads take from
 * first (a handle costs milliseconds and device memory to make; a thread that exits must not
 * leak it). */
#ifndef MT_CUDA_HANDLES_H
#define MT_CUDA_HANDLES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cuda/cuda.h"

#define MT_CUDA_HANDLE_POOL 64 /* idle handles kept per device; more are destroyed */

typedef struct mt_cuda_handles {
    const char *library;            /* for messages: "cuBLAS" */
    mt_status (*create)(void **out); /* with the handle's device current */
    void (*destroy)(void *handle);   /* at thread exit: cannot report a failure */
    atomic_bool key_ready;
    pthread_mutex_t lock;
    pthread_key_t key; /* the thread's handles; its destructor fills the pool */
    void *pool[MT_CUDA_MAX_DEVICES][MT_CUDA_HANDLE_POOL];
    int pool_n[MT_CUDA_MAX_DEVICES];
} mt_cuda_handles;

#define MT_CUDA_HANDLES_INIT(library, create, destroy) \
    {(library), (create), (destroy), false, PTHREAD_MUTEX_INITIALIZER, 0, {{0}}, {0}}

/* Makes dev current and gives the calling thread's handle of lib for it (its own, a pooled one,
 * or a new one). */
mt_status mt_cuda_thread_handle(mt_cuda_handles *lib, mt_device dev, void **out);

#endif
