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

#endif
