/* The CUDA runtime layer: checked calls and launches, lazy device discovery and the device
 * guard. (The allocator is alloc.c, the streams stream.c.)
 *
 * Nothing here may exit or assert: every failure becomes an mt_status with CUDA's own words. */
#include <stdatomic.h>
#include <stdio.h>

#include "cuda/cuda.h"
#include "cuda/profile.h"

mt_status
mt_cuda_check_at(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess) {
        return MT_OK;
    }
    (void)cudaGetLastError(); /* a non-sticky error must not fail the next check */
    mt_status code = err == cudaErrorMemoryAllocation ? MT_ECUDA_OOM : MT_ECUDA;
    return mt_fail(code, "CUDA error: %s (%s at %s:%d)", cudaGetErrorString(err), call, file, line);
}

static _Thread_local int current = -1; /* what this thread last set with cudaSetDevice */

mt_status
mt_cuda_launch_at(const void *kernel, unsigned grid, unsigned block, void **args, const char *name,
                  const char *file, int line)
{
    if (grid == 0) {
        return MT_OK; /* nothing to do: CUDA rejects an empty grid */
    }
    dim3 g = {grid, 1, 1}, b = {block, 1, 1};
    cudaStream_t stream = mt_cuda_current_stream(current);
    mt_cuda_span span = mt_cuda_span_launch(kernel, name);
    cudaError_t err = cudaLaunchKernel(kernel, g, b, args, 0, stream);
    mt_cuda_span_end(&span);
    mt_status st = mt_cuda_check_at(err, name, file, line);
    if (st == MT_OK) {
        st = mt_cuda_check_at(cudaGetLastError(), name, file, line);
    }
    return st;
}

/* Each device's SM count, 0 until asked (a race only asks twice). */
static atomic_int sm_counts[MT_CUDA_MAX_DEVICES];

int
mt_cuda_sm_count(void)
{
    const int d = current >= 0 && current < MT_CUDA_MAX_DEVICES ? current : 0;
    int n = atomic_load_explicit(&sm_counts[d], memory_order_relaxed);
    if (n > 0) {
        return n;
    }
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d) != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        return 132; /* an H200's: only the grid's size depends on it */
    }
    atomic_store_explicit(&sm_counts[d], n, memory_order_relaxed);
    return n;
}

/* The outcome of the one cudaGetDeviceCount: -1 until asked. */
static atomic_int init_state = -1;
static int num_devices;
static char init_message[512]; /* why no device is usable, "" when one is */

/* What a user without a GPU reads (after PyTorch's words): how to run this backend anyway. */
#define EMU_HINT                                                                           \
    " (To run minitorch's CUDA backend without a GPU, on its emulated device: build with " \
    "MINITORCH_CUDA_EMU=1 and run with MINITORCH_CUDA_EMU=1.)"

/* PyTorch's words (c10/cuda's device_count) for the machines that have no usable GPU: cudart
 * reports a missing driver as an insufficient one, so the driver's version tells them apart. */
static void
describe(cudaError_t err)
{
    int driver = 0;
    if (err == cudaErrorInsufficientDriver) {
        (void)cudaDriverGetVersion(&driver);
        (void)cudaGetLastError();
    }
    if (err == cudaErrorInsufficientDriver && driver <= 0) {
        snprintf(init_message, sizeof(init_message),
                 "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                 "and "
                 "installed a driver from http://www.nvidia.com/Download/index.aspx" EMU_HINT);
    } else if (err == cudaErrorInsufficientDriver) {
        snprintf(init_message, sizeof(init_message),
                 "The NVIDIA driver on your system is too old (found version %d). Please update "
                 "your GPU driver by downloading and installing a new version from the URL: "
                 "http://www.nvidia.com/Download/index.aspx Alternatively, build minitorch with a "
                 "CUDA toolkit that your driver supports.",
                 driver);
    } else if (err == cudaErrorNoDevice) {
        snprintf(init_message, sizeof(init_message), "No CUDA GPUs are available" EMU_HINT);
    } else {
        snprintf(init_message, sizeof(init_message), "CUDA error: %s", cudaGetErrorString(err));
    }
}

static void
discover(void)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess && n == 0) {
        err = cudaErrorNoDevice;
    }
    (void)cudaGetLastError();
    if (err != cudaSuccess) {
        describe(err);
    }
    num_devices = err == cudaSuccess ? n : 0;
    atomic_store(&init_state, err == cudaSuccess ? 1 : 0);
}

const char *
mt_cuda_unavailable_reason(void)
{
    if (atomic_load(&init_state) < 0) {
        discover();
    }
    return atomic_load(&init_state) == 1 ? NULL : init_message;
}

int
mt_cuda_device_count(void)
{
    return mt_cuda_unavailable_reason() ? 0 : num_devices;
}

mt_status
mt_cuda_lazy_init(void)
{
    const char *why = mt_cuda_unavailable_reason();
    if (why) { /* PyTorch's lazy init raises a RuntimeError, no AcceleratorError */
        return mt_fail(MT_ERUNTIME, "%s", why);
    }
    return MT_OK;
}

static atomic_bool initialized; /* a device has been made current: torch.cuda.is_initialized() */

mt_status
mt_cuda_use_device(mt_device dev)
{
    mt_status st = mt_cuda_lazy_init();
    if (st || dev.index == current) {
        return st;
    }
    if (dev.index >= num_devices) {
        return mt_fail(MT_ECUDA, "CUDA error: invalid device ordinal (device cuda:%d of %d)",
                       dev.index, num_devices);
    }
    st = mt_cuda_check(cudaSetDevice(dev.index));
    if (st == MT_OK) {
        current = dev.index;
        atomic_store(&initialized, true);
    }
    return st;
}

/* The device this thread chose (set_device; 0 until it does). Ops switch the CUDA runtime's
 * device to their tensors' as they run, but the chosen one stays what current_device() says and
 * what "cuda" without an index means, as PyTorch's device guards restore it after each op. */
static _Thread_local int selected = 0;

int
mt_cuda_selected_device(void)
{
    return selected;
}

mt_status
mt_cuda_select_device(int index)
{
    mt_status st = mt_cuda_use_device((mt_device){MT_CUDA, index});
    if (st == MT_OK) {
        selected = index;
    }
    return st;
}

bool
mt_cuda_is_initialized(void)
{
    return atomic_load(&initialized);
}
