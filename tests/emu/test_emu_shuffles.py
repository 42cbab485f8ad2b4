"""The emulated device's warp shuffles (cuda/emu/kernel.h, launch.cc) on their own: a small CUDA
program, compiled by g++ as the emulated build compiles cuda/*.cu, checks __shfl_sync,
__shfl_up_sync, __shfl_down_sync and __shfl_xor_sync against CUDA's semantics (lanes out of the
segment keep their own value, widths 32, 16 and 8), a butterfly sum in every lane, shuffles in a
kernel without __syncthreads (plain calls turning into fibers), a block reduction whose last
step only warp 0 runs (the other warps wait at no shuffle), in both run orders. Skips without
g++."""
import subprocess

import pytest
from emu_build import build_emu_program, plain_env

PROGRAM = r"""
#include <stdio.h>
#include <vector>

#include "emu.h"

static int failures;
#define CHECK(cond) do { if (!(cond)) { printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #cond); failures++; } } while (0)

void mt_emu_kernel_ran(const char *, int, cudaStream_t, uint64_t, uint64_t) {}
void mt_emu_memcpy_ran(cudaMemcpyKind, size_t, int, cudaStream_t, uint64_t, uint64_t) {}
void mt_emu_corr_save(mt_emu_corr *c) { (void)c; } /* CUPTI's (cupti.c): no correlation ids here */
void mt_emu_corr_use(const mt_emu_corr *c) { (void)c; }

// out[t * 5 + k]: the four shuffles of 10 t (deltas 3 and 2, xor 5, lane 7) in segments of width,
// and the butterfly sum of the lanes' numbers over the segment
__global__ void shuffles(int *out, int width)
{
    const int t = threadIdx.x, lane = t % 32;
    out[t * 5 + 0] = __shfl_down_sync(0xffffffffu, t * 10, 3, width);
    out[t * 5 + 1] = __shfl_up_sync(0xffffffffu, t * 10, 2, width);
    out[t * 5 + 2] = __shfl_xor_sync(0xffffffffu, t * 10, 5, width);
    out[t * 5 + 3] = __shfl_sync(0xffffffffu, t * 10, 7, width);
    double v = lane;
    for (int m = width / 2; m > 0; m /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, m, width);
    }
    out[t * 5 + 4] = (int)v;
}

// out[b] = sum of x[0, n) in every block b: a strided share per thread, shuffles down within each
// warp, the warps' sums through shared memory, and warp 0 alone folds them with shuffles
__global__ void block_sum(const float *x, float *out, int n)
{
    __shared__ float part[32];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    float v = 0;
    for (int j = t; j < n; j += blockDim.x) {
        v += x[j];
    }
    for (int m = 16; m > 0; m /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, m);
    }
    if (lane == 0) {
        part[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / 32) ? part[lane] : 0.0f;
        for (int m = 16; m > 0; m /= 2) {
            v += __shfl_down_sync(0xffffffffu, v, m);
        }
        if (lane == 0) {
            out[blockIdx.x] = v;
        }
    }
}

static int expect(int t, int k, int width)
{
    const int lane = t % 32, seg = lane / width * width, in = lane % width, base = t - lane;
    int src = lane;
    if (k == 0) src = in + 3 < width ? lane + 3 : lane;
    if (k == 1) src = in >= 2 ? lane - 2 : lane;
    if (k == 2) src = ((lane ^ 5) / width == lane / width) ? lane ^ 5 : lane;
    if (k == 3) src = seg + 7 % width;
    if (k == 4) return (seg + seg + width - 1) * width / 2;
    return (base + src) * 10;
}

int main()
{
    int *out;
    const int threads = 96;
    CHECK(cudaMalloc((void **)&out, threads * 5 * sizeof(int)) == cudaSuccess);
    for (int width : {32, 16, 8}) {
        void *args[] = {&out, &width};
        CHECK(cudaLaunchKernel(MT_KERNEL_PTR(shuffles), dim3(2), dim3(threads), args, 0, 0) == cudaSuccess);
        std::vector<int> got(threads * 5);
        CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
        for (int t = 0; t < threads; t++) {
            for (int k = 0; k < 5; k++) {
                if (got[t * 5 + k] != expect(t, k, width)) {
                    printf("FAIL width %d thread %d shuffle %d: %d, not %d\n", width, t, k, got[t * 5 + k], expect(t, k, width));
                    failures++;
                }
            }
        }
    }
    const int n = 1000, blocks = 3;
    std::vector<float> x(n);
    float want = 0;
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 7);
        want += x[i];
    }
    float *dx, *dout;
    CHECK(cudaMalloc((void **)&dx, n * sizeof(float)) == cudaSuccess && cudaMalloc((void **)&dout, blocks * sizeof(float)) == cudaSuccess);
    CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    for (int bt : {32, 256, 1024}) {
        int nn = n;
        void *args[] = {&dx, &dout, &nn};
        CHECK(cudaLaunchKernel(MT_KERNEL_PTR(block_sum), dim3(blocks), dim3(bt), args, 0, 0) == cudaSuccess);
        float got[blocks];
        CHECK(cudaMemcpy(got, dout, sizeof(got), cudaMemcpyDeviceToHost) == cudaSuccess);
        for (int b = 0; b < blocks; b++) {
            CHECK(got[b] == want);
        }
    }
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms == 132);
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 99) == cudaErrorInvalidDevice);
    CHECK(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0) == cudaErrorInvalidValue);
    printf("%s\n", failures ? "FAILED" : "ALL OK");
    return failures != 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return build_emu_program(tmp_path_factory.mktemp("emu_shuffles"), PROGRAM)


@pytest.mark.parametrize("reverse", ["0", "1"])  # MINITORCH_EMU_REVERSE: last block and thread first
def test_warp_shuffles(program, reverse):
    r = subprocess.run([str(program)], capture_output=True, text=True, timeout=60,
                       env=plain_env(MINITORCH_EMU_REVERSE=reverse))
    assert r.returncode == 0 and "ALL OK" in r.stdout, r.stdout + r.stderr
    assert "some threads of a block ended" not in r.stderr  # warp 0's last step is no divergence
