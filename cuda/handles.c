/* Per-thread library handles with a pool for exiting threads' (handles.h). */
#include <stdlib.h>

#include "cuda/handles.h"

/* mt_cuda_lib_flag bits: PyTorch's defaults (none set) until Python sets them */
static atomic_int lib_flags;

void
mt_cuda_set_lib_flags(int flags)
{
    atomic_store(&lib_flags, flags);
}

bool
mt_cuda_lib_flag_on(mt_cuda_lib_flag f)
{
    return (atomic_load(&lib_flags) & (int)f) != 0;
}

typedef struct thread_handles {
    mt_cuda_handles *lib;
    void *h[MT_CUDA_MAX_DEVICES];
} thread_handles;

/* The exiting thread's handles go to the pool (the key's destructor). */
static void
return_handles(void *p)
{
    thread_handles *t = p;
    mt_cuda_handles *lib = t->lib;
    pthread_mutex_lock(&lib->lock);
    for (int d = 0; d < MT_CUDA_MAX_DEVICES; d++) {
        if (t->h[d] == NULL) {
            continue;
        }
        if (lib->pool_n[d] < MT_CUDA_HANDLE_POOL) {
            lib->pool[d][lib->pool_n[d]++] = t->h[d];
        } else {
            lib->destroy(t->h[d]);
        }
    }
    pthread_mutex_unlock(&lib->lock);
    free(t);
}

static mt_status
thread_state(mt_cuda_handles *lib, thread_handles **out)
{
    if (!atomic_load_explicit(&lib->key_ready, memory_order_acquire)) {
        pthread_mutex_lock(&lib->lock);
        int err = 0;
        if (!atomic_load_explicit(&lib->key_ready, memory_order_relaxed) &&
            (err = pthread_key_create(&lib->key, return_handles)) == 0) {
            atomic_store_explicit(&lib->key_ready, true, memory_order_release);
        }
        pthread_mutex_unlock(&lib->lock);
        if (err) {
            return mt_fail(MT_ERUNTIME, "%s: no thread-specific key for its handles", lib->library);
        }
    }
    thread_handles *t = pthread_getspecific(lib->key);
    if (t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL) {
            return mt_fail(MT_ENOMEM, "%s: out of memory for the thread's handles", lib->library);
        }
        t->lib = lib;
        if (pthread_setspecific(lib->key, t) != 0) {
            free(t);
            return mt_fail(MT_ENOMEM, "%s: out of memory for the thread's handles", lib->library);
        }
    }
    *out = t;
    return MT_OK;
}

mt_status
mt_cuda_thread_handle(mt_cuda_handles *lib, mt_device dev, void **out)
{
    mt_status st = mt_cuda_use_device(dev);
    if (st) {
        return st;
    }
    if (dev.index >= MT_CUDA_MAX_DEVICES) {
        return mt_fail(MT_ECUDA, "%s: device cuda:%d is beyond the %d supported", lib->library,
                       dev.index, MT_CUDA_MAX_DEVICES);
    }
    thread_handles *t = NULL;
    if ((st = thread_state(lib, &t))) {
        return st;
    }
    int d = dev.index;
    if (t->h[d] == NULL) {
        pthread_mutex_lock(&lib->lock);
        if (lib->pool_n[d] > 0) {
            t->h[d] = lib->pool[d][--lib->pool_n[d]];
        }
        pthread_mutex_unlock(&lib->lock);
    }
    if (t->h[d] == NULL && (st = lib->create(&t->h[d]))) {
        t->h[d] = NULL;
        return st;
    }
    *out = t->h[d];
    return MT_OK;
}
