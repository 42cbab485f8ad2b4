"""The emulated CUDA runtime and launcher (cuda/emu/runtime.cc, launch.cc, kernel.h) on their own:
a small CUDA program, compiled by g++ as the emulated build compiles cuda/*.cu, checks barriers
(fibers), plain launches, atomics and __shared__ under concurrent launches from several threads,
and the strictness a GPU has: bad configurations, host and other-device pointers given to a
kernel, copies of the wrong kind or past a block's end, frees of unknown pointers, the memory
limit, destroyed and other-device streams, events without timing; in the synchronous and the
asynchronous mode (MINITORCH_EMU_ASYNC), whichever the caller's environment sets. Skips without
g++."""
import subprocess

import pytest
from emu_build import build_emu_program, plain_env

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <string>
#include <thread>
#include <vector>

#include "emu.h"

static int failures;
#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

static std::string last_kernel;
static int kernels_ran, copies_ran;
void mt_emu_kernel_ran(const char *name, int, cudaStream_t, uint64_t s, uint64_t e)
{
    if (e < s) failures++;
    last_kernel = name;
    kernels_ran++;
}
void mt_emu_memcpy_ran(cudaMemcpyKind, size_t, int, cudaStream_t, uint64_t, uint64_t) { copies_ran++; }
void mt_emu_corr_save(mt_emu_corr *c) { (void)c; } /* CUPTI's (cupti.c): no correlation ids here */
void mt_emu_corr_use(const mt_emu_corr *c) { (void)c; }

// out[o] = sum of x[o * n .. o * n + n), a tree over the block in shared memory
template <typename T> __global__ void block_sum(const T *x, T *out, long rows, long n)
{
    __shared__ T buf[1024];
    const unsigned t = threadIdx.x + threadIdx.y * blockDim.x, nt = blockDim.x * blockDim.y;
    for (long o = blockIdx.x; o < rows; o += gridDim.x) {
        T s = 0;
        for (long j = t; j < n; j += nt) s += x[o * n + j];
        buf[t] = s;
        __syncthreads();
        for (unsigned h = nt / 2; h > 0; h /= 2) {
            if (t < h) buf[t] += buf[t + h];
            __syncthreads();
        }
        if (t == 0) out[o] = buf[0];
        __syncthreads();
    }
}

__global__ void count(unsigned long long *c, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        atomicAdd(c, 1ull);
}

__global__ void add_float(float *c) { atomicAdd(c, 0.5f); }

// thread 0 leaves before the barrier the others wait at: undefined on a GPU, reported here
__global__ void diverge(int *x)
{
    if (threadIdx.x == 0) return;
    __syncthreads();
    x[threadIdx.x] = 1;
}

static bool reduce_ok(unsigned bx, unsigned by, long rows, long n, unsigned grid)
{
    // device memory is reached through copies only: host code touching it faults (guard.cc)
    double *x, *out;
    std::vector<double> hx((size_t)(rows * n)), hout((size_t)rows);
    if (cudaMalloc((void **)&x, rows * n * 8) || cudaMalloc((void **)&out, rows * 8)) return false;
    for (long i = 0; i < rows * n; i++) hx[i] = (double)(i % 97);
    bool ok = cudaMemcpy(x, hx.data(), rows * n * 8, cudaMemcpyHostToDevice) == cudaSuccess;
    void *args[] = {&x, &out, &rows, &n};
    ok = ok && cudaLaunchKernel(MT_KERNEL_PTR(block_sum<double>), dim3(grid), dim3(bx, by), args, 0, 0) == cudaSuccess;
    ok = ok && cudaMemcpy(hout.data(), out, rows * 8, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (long o = 0; ok && o < rows; o++) {
        double s = 0;
        for (long j = 0; j < n; j++) s += hx[o * n + j];
        ok = s == hout[o];
    }
    cudaFree(x);
    cudaFree(out);
    return ok;
}

int main()
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 2);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 1) == cudaSuccess && strstr(prop.name, "emulated") != NULL);
    CHECK(cudaGetDeviceProperties(&prop, 2) == cudaErrorInvalidDevice);
    CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice && cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);

    // barriers: one block, several, 2-D blocks, more rows than blocks, a second launch
    CHECK(reduce_ok(256, 1, 1, 1000, 1));
    CHECK(reduce_ok(256, 1, 37, 300, 8));
    CHECK(reduce_ok(16, 8, 5, 77, 5));
    CHECK(reduce_ok(1, 1, 3, 5, 3));
    CHECK(reduce_ok(1024, 1, 2, 4096, 2));
    const char *name = NULL;
    CHECK(cudaFuncGetName(&name, MT_KERNEL_PTR(block_sum<double>)) == cudaSuccess &&
          std::string(name) == "void block_sum<double>(const double*, double*, long int, long int)");
    CHECK(last_kernel == name);
    CHECK(cudaFuncGetName(&name, (const void *)&n) == cudaErrorInvalidDeviceFunction);
    cudaGetLastError();

    // atomics and __shared__ with launches from several OS threads at once
    unsigned long long *c;
    CHECK(cudaMalloc((void **)&c, 8) == cudaSuccess && cudaMemset(c, 0, 8) == cudaSuccess);
    std::vector<std::thread> ts;
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        ts.emplace_back([&, k] {
            long m = 100000;
            void *args[] = {&c, &m};
            if (cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(64), dim3(256), args, 0, 0) != cudaSuccess) bad++;
            if (!reduce_ok(128, 1, 20 + k, 500, 7)) bad++;
        });
    }
    for (auto &t : ts) t.join();
    CHECK(bad == 0);
    unsigned long long total = 0;
    CHECK(cudaMemcpy(&total, c, 8, cudaMemcpyDeviceToHost) == cudaSuccess && total == 400000);
    float *f;
    CHECK(cudaMalloc((void **)&f, 4) == cudaSuccess && cudaMemset(f, 0, 4) == cudaSuccess);
    void *fargs[] = {&f};
    float fsum = 0;
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(add_float), dim3(3), dim3(100), fargs, 0, 0) == cudaSuccess &&
          cudaMemcpy(&fsum, f, 4, cudaMemcpyDeviceToHost) == cudaSuccess && fsum == 150.0f);

    // launch configurations a GPU refuses
    long m = 1;
    void *cargs[] = {&c, &m};
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1025), cargs, 0, 0) == cudaErrorInvalidConfiguration);
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(0), dim3(32), cargs, 0, 0) == cudaErrorInvalidConfiguration);
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1, 65536), dim3(32), cargs, 0, 0) == cudaErrorInvalidConfiguration);
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(32, 32, 2), cargs, 0, 0) == cudaErrorInvalidConfiguration);
    CHECK(cudaLaunchKernel((const void *)&m, dim3(1), dim3(1), cargs, 0, 0) == cudaErrorInvalidDeviceFunction);
    cudaGetLastError();

    // pointer arguments: host memory, freed memory, another device's memory
    unsigned long long host = 0, *hp = &host;
    void *hargs[] = {&hp, &m};
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1), hargs, 0, 0) == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress && cudaGetLastError() == cudaSuccess && host == 0);
    CHECK(cudaSetDevice(1) == cudaSuccess);
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1), cargs, 0, 0) == cudaErrorIllegalAddress);
    CHECK(cudaSetDevice(0) == cudaSuccess);
    unsigned long long *gone;
    CHECK(cudaMalloc((void **)&gone, 8) == cudaSuccess && cudaFree(gone) == cudaSuccess);
    void *gargs[] = {&gone, &m};
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1), gargs, 0, 0) == cudaErrorIllegalAddress);
    CHECK(cudaFree(gone) == cudaErrorInvalidValue && cudaFree(&host) == cudaErrorInvalidValue);
    CHECK(cudaFree(NULL) == cudaSuccess);
    cudaGetLastError();

    // pinned host memory is mapped: a kernel writes it (device-side assertions do), the host reads
    unsigned long long *pinned;
    CHECK(cudaMallocHost((void **)&pinned, 8) == cudaSuccess);
    *pinned = 0;
    void *pargs[] = {&pinned, &m};
    // (the launch may return before the kernel ran, as on a GPU: the host reads after a synchronize)
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1), pargs, 0, 0) == cudaSuccess);
    CHECK(cudaStreamSynchronize(0) == cudaSuccess && *pinned != 0);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);

    // each wait of the host for the device is counted: synchronize calls, blocking copies to the host
    unsigned long long syncs = mt_emu_sync_count(), word = 0, *dword;
    CHECK(cudaMalloc((void **)&dword, 8) == cudaSuccess);
    CHECK(cudaMemcpy(dword, &word, 8, cudaMemcpyHostToDevice) == cudaSuccess && mt_emu_sync_count() == syncs);
    CHECK(cudaMemcpyAsync(&word, dword, 8, cudaMemcpyDeviceToHost, 0) == cudaSuccess && mt_emu_sync_count() == syncs);
    CHECK(cudaMemcpy(&word, dword, 8, cudaMemcpyDeviceToHost) == cudaSuccess && mt_emu_sync_count() == syncs + 1);
    CHECK(cudaStreamSynchronize(0) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
    CHECK(mt_emu_sync_count() == syncs + 3 && cudaFree(dword) == cudaSuccess);

    // a barrier some threads never reach: runs, and is reported
    int *xs;
    CHECK(cudaMalloc((void **)&xs, 64 * 4) == cudaSuccess);
    void *dargs[] = {&xs};
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(diverge), dim3(1), dim3(64), dargs, 0, 0) == cudaSuccess);

    // copies: kinds must match where the pointers are, extents stay inside a block
    char buf[64] = {0}, *d;
    CHECK(cudaMalloc((void **)&d, 64) == cudaSuccess);
    int before = copies_ran;
    CHECK(cudaMemcpy(d, buf, 64, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(buf, d, 64, cudaMemcpyDefault) == cudaSuccess && copies_ran == before + 2);
    CHECK(cudaMemcpy(d, buf, 64, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(buf, d, 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(d + 8, buf, 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(d, d + 32, 32, cudaMemcpyDeviceToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(buf, buf + 8, 8, cudaMemcpyHostToHost) == cudaSuccess);
    CHECK(cudaMemcpy(d, buf, 8, (cudaMemcpyKind)7) == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaMemset(d + 60, 0, 8) == cudaErrorInvalidValue && cudaMemset(buf, 0, 8) == cudaErrorInvalidValue);
    cudaGetLastError();

    // streams and events
    cudaStream_t s1, s0;
    CHECK(cudaSetDevice(1) == cudaSuccess && cudaStreamCreate(&s1) == cudaSuccess);
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s0) == cudaSuccess);
    CHECK(cudaMemsetAsync(d, 0, 8, s1) == cudaErrorInvalidResourceHandle);
    CHECK(cudaLaunchKernel(MT_KERNEL_PTR(count), dim3(1), dim3(1), cargs, 0, s1) == cudaErrorInvalidResourceHandle);
    CHECK(cudaMemsetAsync(d, 0, 8, s0) == cudaSuccess && cudaStreamDestroy(s0) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s0) == cudaErrorInvalidResourceHandle && cudaStreamDestroy(s0) == cudaErrorInvalidResourceHandle);
    cudaEvent_t a, b, quiet;
    float ms = -1;
    CHECK(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess);
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventRecord(a, 0) == cudaSuccess && cudaEventRecord(b, 0) == cudaSuccess);
    // a record still queued has no time yet (cudaErrorNotReady, as CUDA): wait for b first
    CHECK(cudaEventSynchronize(b) == cudaSuccess);
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms >= 0);
    CHECK(cudaEventCreateWithFlags(&quiet, cudaEventDisableTiming) == cudaSuccess && cudaEventRecord(quiet, 0) == cudaSuccess);
    CHECK(cudaEventElapsedTime(&ms, a, quiet) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventRecord(a, s1) == cudaErrorInvalidResourceHandle); // a is device 0's
    CHECK(cudaStreamWaitEvent(s1, b, 0) == cudaSuccess && cudaStreamDestroy(s1) == cudaSuccess);
    CHECK(cudaEventDestroy(a) == cudaSuccess && cudaEventQuery(a) == cudaErrorInvalidResourceHandle);
    cudaGetLastError();

    // the memory limit (MINITORCH_EMU_MEMORY = 1 MiB here)
    size_t free_b, total_b;
    void *big, *small;
    CHECK(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b == (1 << 20));
    CHECK(cudaMalloc(&big, 2 << 20) == cudaErrorMemoryAllocation && cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaMalloc(&small, 1000) == cudaSuccess && ((uintptr_t)small % 256) == 0);
    CHECK(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b <= total_b - 1024);
    printf("%s\n", failures ? "FAILED" : "ALL OK");
    return failures != 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return build_emu_program(tmp_path_factory.mktemp("emu_runtime"), PROGRAM)


# MINITORCH_EMU_ASYNC: each stream a queue run by its own thread, launches and async copies
# returning before they ran (the program synchronizes where a GPU needs it, so it holds in both)
@pytest.mark.parametrize("asynchronous", ["0", "1"])
@pytest.mark.parametrize("reverse", ["0", "1"])  # MINITORCH_EMU_REVERSE: last block and thread first
def test_the_runtime_and_launcher(program, reverse, asynchronous):
    env = plain_env(MINITORCH_EMU_DEVICES="2", MINITORCH_EMU_MEMORY=str(1 << 20), MINITORCH_EMU_REVERSE=reverse,
                    MINITORCH_EMU_ASYNC=asynchronous)
    r = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout + r.stderr
    # each refused pointer is named, and the divergent barrier reported once
    assert r.stderr.count("cudaErrorIllegalAddress") == 3
    assert "another device's" in r.stderr and "a host pointer" in r.stderr
    assert r.stderr.count("void diverge(int*): some threads of a block ended") == 1
