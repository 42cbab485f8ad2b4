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

/* The switches of torch.backends that the library calls obey, set from Python
 * (minitorch/backends: _C_cuda.set_library_flags) and read by conv.c and blas.c at each call. */
typedef enum mt_cuda_lib_flag {
    MT_CUDNN_BENCHMARK = 1 << 0,     /* cudnn.benchmark: cudnnFind* instead of the heuristics */
    MT_CUDNN_DETERMINISTIC = 1 << 1, /* cudnn.deterministic: deterministic algorithms only */
    MT_MATMUL_ALLOW_TF32 = 1 << 2,   /* cuda.matmul.allow_tf32: float32 products on TF32 */
    MT_CUDNN_DISABLED = 1 << 3,      /* not cudnn.enabled: convolutions on im2col + cuBLAS */
    MT_CUDNN_NO_TF32 = 1 << 4,       /* not cudnn.allow_tf32: float32 convolutions in FMA math */
} mt_cuda_lib_flag;

void mt_cuda_set_lib_flags(int flags);
bool mt_cuda_lib_flag_on(mt_cuda_lib_flag f);

#endif
