/* What runtime.cc and launch.cc (the emulated cudart) share beyond emu.h. */
#ifndef MT_EMU_RUNTIME_H
#define MT_EMU_RUNTIME_H

#include "emu.h"

/* Records err as the calling thread's last error (cudaGetLastError) unless it is cudaSuccess,
 * and returns it: every runtime function returns through this. */
cudaError_t mt_emu_error(cudaError_t err);

/* Whether a device ordinal exists. */
bool mt_emu_valid_device(int device);

/* The device a stream-ordered operation (launch, copy, fill) runs on: the stream's, which must
 * be the current device (cudaErrorInvalidResourceHandle otherwise, as on a GPU). */
cudaError_t mt_emu_stream_for_work(cudaStream_t stream, int *device);

/* The configured devices and bytes of memory each (MINITORCH_EMU_DEVICES, MINITORCH_EMU_MEMORY). */
void mt_emu_memory_config(int *devices, size_t *per_device);

/* guard.cc: whether device memory comes from the guarded arena (MINITORCH_EMU_GUARD, not under
 * ASan); its first-fit allocator (bytes a multiple of 256; NULL when the device's slice has no
 * free range that large) and the matching free. */
bool mt_emu_guard_on(void);
void *mt_emu_arena_alloc(int device, size_t bytes);
void mt_emu_arena_free(void *p, size_t bytes);

/* For guard.cc's fault handler: the live device block holding p (its start, requested size and
 * device), without waiting for the registry's lock (false when it is held or p is in no block). */
bool mt_emu_block_try_find(const void *p, uintptr_t *start, size_t *size, int *device);

#ifdef __cplusplus
#include <functional>

/* The asynchronous mode: queues fn on a live stream (checked by the caller) to run on its
 * worker; an error it returns is the device's next synchronisation's (mt_emu_async_error). */
void mt_emu_submit(cudaStream_t stream, std::function<cudaError_t()> fn);

/* The error left by queued work that failed on the device (reported once), or cudaSuccess. */
cudaError_t mt_emu_async_error(int device);
#endif

#endif
