"""The emulated cuDNN (cuda/emu/cudnn*.c) on its own: built with gcc into a small shared library
together with a test double of the emulation's runtime interface (cuda/emu/emu.h: a registry of
malloc'd "device" blocks, streams, the current device), driven through ctypes and compared with
a NumPy reference. The double lives here, not in cuda/emu/, because the real runtime is
runtime.cc; this test checks cuDNN's math and status codes, not the runtime."""
import ctypes
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from emu_build import plain_env

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "cuda/emu/cudnn.c", ROOT / "cuda/emu/cudnn_conv.c"]

RUNTIME_DOUBLE = r"""
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda/emu/emu.h"

typedef struct { char *p; size_t n; int dev; } block;
static block blocks[4096];
static int nblocks;
static uintptr_t streams[64][2];
static int nstreams;
static _Thread_local int cur;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last_kernel[64];
static int kernels;

int mt_emu_current_device(void) { return cur; }
void t_set_device(int d) { cur = d; }

void *t_malloc(size_t n, int dev)
{
    void *p = aligned_alloc(256, (n + 255) / 256 * 256);
    pthread_mutex_lock(&lock);
    blocks[nblocks++] = (block){p, n, dev};
    pthread_mutex_unlock(&lock);
    return p;
}

void t_free(void *p)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++) {
        if (blocks[i].p == p) {
            blocks[i] = blocks[--nblocks];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    free(p);
}

bool mt_emu_device_range(const void *p, size_t n, int *dev)
{
    bool ok = false;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nblocks; i++) {
        const char *c = p;
        if (c >= blocks[i].p && c + n <= blocks[i].p + blocks[i].n) {
            *dev = blocks[i].dev;
            ok = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

cudaStream_t t_stream(int dev)
{
    static char tokens[64];
    streams[nstreams][0] = (uintptr_t)&tokens[nstreams];
    streams[nstreams][1] = (uintptr_t)dev;
    return (cudaStream_t)streams[nstreams++][0];
}

cudaError_t mt_emu_stream_device(cudaStream_t s, int *dev)
{
    if (s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread) {
        *dev = cur;
        return cudaSuccess;
    }
    for (int i = 0; i < nstreams; i++) {
        if (streams[i][0] == (uintptr_t)s) {
            *dev = (int)streams[i][1];
            return cudaSuccess;
        }
    }
    return cudaErrorInvalidResourceHandle;
}
void mt_emu_stream_drain(cudaStream_t s) { (void)s; } /* synchronous here: nothing queued */
bool mt_emu_stream_defer(cudaStream_t s, int (*fn)(void *), const void *arg, size_t bytes)
{
    (void)s, (void)fn, (void)arg, (void)bytes;
    return false; /* synchronous here: the caller runs the work */
}

void mt_emu_device_work_begin(void) {}
void mt_emu_device_work_end(void) {}

uint64_t mt_emu_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void mt_emu_kernel_ran(const char *name, int device, cudaStream_t stream, uint64_t t0,
                       uint64_t t1)
{
    (void)device, (void)stream, (void)t0, (void)t1;
    pthread_mutex_lock(&lock);
    strncpy(last_kernel, name, sizeof(last_kernel) - 1);
    kernels++;
    pthread_mutex_unlock(&lock);
}

void mt_emu_memcpy_ran(cudaMemcpyKind kind, size_t bytes, int device, cudaStream_t stream,
                       uint64_t t0, uint64_t t1)
{
    (void)kind, (void)bytes, (void)device, (void)stream, (void)t0, (void)t1;
}
void mt_emu_corr_save(mt_emu_corr *c) { (void)c; } /* CUPTI's (cupti.c): no correlation ids here */
void mt_emu_corr_use(const mt_emu_corr *c) { (void)c; }

const char *t_last_kernel(void) { return last_kernel; }
int t_kernels(void) { return kernels; }
"""

SUCCESS, BAD_PARAM, STREAM_MISMATCH, NOT_SUPPORTED, EXECUTION_FAILED = 0, 2000, 2007, 3000, 5000
FLOAT, DOUBLE, HALF = 0, 1, 2
NCHW, NHWC = 0, 1
CONVOLUTION, CROSS_CORRELATION = 0, 1
FMA_MATH = 3


class Perf(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("status", ctypes.c_int), ("time", ctypes.c_float),
                ("memory", ctypes.c_size_t), ("determinism", ctypes.c_int),
                ("mathType", ctypes.c_int), ("reserved", ctypes.c_int * 3)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the emulated cuDNN")
    d = tmp_path_factory.mktemp("emu_cudnn")
    (d / "runtime_double.c").write_text(RUNTIME_DOUBLE)
    so = d / "libemu_cudnn.so"
    cmd = ["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
           f"-I{ROOT}/cuda/emu/include", f"-I{ROOT}", *map(str, SOURCES),
           str(d / "runtime_double.c"), "-o", str(so), "-lpthread"]
    subprocess.run(cmd, check=True, env=plain_env())
    L = ctypes.CDLL(str(so))
    vp = ctypes.c_void_p
    L.t_malloc.restype = vp
    L.t_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int]
    L.t_free.argtypes = [vp]
    L.t_stream.restype = vp
    L.t_last_kernel.restype = ctypes.c_char_p
    L.cudnnGetErrorString.restype = ctypes.c_char_p
    for name in ("cudnnConvolutionForward", "cudnnConvolutionBackwardData",
                 "cudnnConvolutionBackwardFilter"):
        getattr(L, name).argtypes = [vp, vp, vp, vp, vp, vp, vp, ctypes.c_int, vp,
                                     ctypes.c_size_t, vp, vp, vp]
    for name in ("cudnnGetConvolutionForwardWorkspaceSize",
                 "cudnnGetConvolutionBackwardDataWorkspaceSize",
                 "cudnnGetConvolutionBackwardFilterWorkspaceSize"):
        getattr(L, name).argtypes = [vp, vp, vp, vp, vp, ctypes.c_int, vp]
    L.cudnnSetStream.argtypes = [vp, vp]
    for name in ("cudnnDestroy", "cudnnDestroyTensorDescriptor", "cudnnDestroyFilterDescriptor",
                 "cudnnDestroyConvolutionDescriptor"):
        getattr(L, name).argtypes = [vp]
    L.cudnnSetTensor4dDescriptor.argtypes = [vp] + [ctypes.c_int] * 6
    L.cudnnSetTensor4dDescriptorEx.argtypes = [vp] + [ctypes.c_int] * 9
    L.cudnnSetFilter4dDescriptor.argtypes = [vp] + [ctypes.c_int] * 6
    L.cudnnSetConvolution2dDescriptor.argtypes = [vp] + [ctypes.c_int] * 8
    L.cudnnSetConvolutionGroupCount.argtypes = [vp, ctypes.c_int]
    L.cudnnSetConvolutionMathType.argtypes = [vp, ctypes.c_int]
    for name in ("cudnnGetConvolutionForwardAlgorithm_v7",
                 "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                 "cudnnGetConvolutionBackwardFilterAlgorithm_v7"):
        getattr(L, name).argtypes = [vp, vp, vp, vp, vp, ctypes.c_int, vp, vp]
    L.cudnnGetConvolution2dForwardOutputDim.argtypes = [vp, vp, vp, vp, vp, vp, vp]
    return L


def create(L, fn):
    h = ctypes.c_void_p()
    assert getattr(L, fn)(ctypes.byref(h)) == SUCCESS
    return h


# ---- the NumPy reference ----

def out_size(i, k, p, s, d):
    return (i + 2 * p - d * (k - 1) - 1) // s + 1


def windows(xp, i, j, oh, ow, s, d):
    return xp[:, :, i * d[0]: i * d[0] + s[0] * (oh - 1) + 1: s[0],
              j * d[1]: j * d[1] + s[1] * (ow - 1) + 1: s[1]]


def reference(kind, x, w, dy, pad, s, d, groups, flip):
    """kind "fwd": y from x, w; "data": dx from w, dy; "filter": dw from x, dy (all float64)."""
    wf = w[:, :, ::-1, ::-1] if flip else w
    N, C, H, W = x.shape
    K, CG, KH, KW = w.shape
    OH, OW = out_size(H, KH, pad[0], s[0], d[0]), out_size(W, KW, pad[1], s[1], d[1])
    KG = K // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    out = {"fwd": np.zeros((N, K, OH, OW)), "data": np.zeros_like(xp), "filter": np.zeros(w.shape)}[kind]
    for g in range(groups):
        cs, ks = slice(g * CG, (g + 1) * CG), slice(g * KG, (g + 1) * KG)
        for i in range(KH):
            for j in range(KW):
                win = windows(xp[:, cs], i, j, OH, OW, s, d)
                if kind == "fwd":
                    out[:, ks] += np.einsum("nchw,kc->nkhw", win, wf[ks, :, i, j])
                elif kind == "data":
                    windows(out[:, cs], i, j, OH, OW, s, d)[...] += np.einsum(
                        "nkhw,kc->nchw", dy[:, ks], wf[ks, :, i, j])
                else:
                    out[ks, :, i, j] += np.einsum("nchw,nkhw->kc", win, dy[:, ks])
    if kind == "data":
        out = out[:, :, pad[0]: pad[0] + H, pad[1]: pad[1] + W]
    if kind == "filter" and flip:
        out = out[:, :, ::-1, ::-1]
    return out


# ---- a convolution set up through the emulated cuDNN ----

class Conv:
    def __init__(self, L, x_shape, w_shape, pad=(0, 0), stride=(1, 1), dil=(1, 1), groups=1,
                 mode=CROSS_CORRELATION, dtype=np.float32, y_shape=None, dev=0):
        self.L, self.dtype, self.dev = L, np.dtype(dtype), dev
        self.ct = FLOAT if self.dtype == np.float32 else DOUBLE
        self.pad, self.stride, self.dil, self.groups, self.mode = pad, stride, dil, groups, mode
        self.x_shape, self.w_shape = x_shape, w_shape
        if y_shape is None:
            y_shape = (x_shape[0], w_shape[0],
                       out_size(x_shape[2], w_shape[2], pad[0], stride[0], dil[0]),
                       out_size(x_shape[3], w_shape[3], pad[1], stride[1], dil[1]))
        self.y_shape = y_shape
        L.t_set_device(dev)
        self.h = create(L, "cudnnCreate")
        self.x, self.y = create(L, "cudnnCreateTensorDescriptor"), create(L, "cudnnCreateTensorDescriptor")
        self.w = create(L, "cudnnCreateFilterDescriptor")
        self.c = create(L, "cudnnCreateConvolutionDescriptor")
        assert L.cudnnSetTensor4dDescriptor(self.x, NCHW, self.ct, *x_shape) == SUCCESS
        assert L.cudnnSetTensor4dDescriptor(self.y, NCHW, self.ct, *y_shape) == SUCCESS
        assert L.cudnnSetFilter4dDescriptor(self.w, self.ct, NCHW, *w_shape) == SUCCESS
        assert L.cudnnSetConvolution2dDescriptor(self.c, *pad, *stride, *dil, mode, self.ct) == SUCCESS
        assert L.cudnnSetConvolutionGroupCount(self.c, groups) == SUCCESS
        assert L.cudnnSetConvolutionMathType(self.c, FMA_MATH) == SUCCESS
        self.blocks = []

    def close(self):
        L = self.L
        for b in self.blocks:
            L.t_free(b)
        assert L.cudnnDestroyTensorDescriptor(self.x) == SUCCESS
        assert L.cudnnDestroyTensorDescriptor(self.y) == SUCCESS
        assert L.cudnnDestroyFilterDescriptor(self.w) == SUCCESS
        assert L.cudnnDestroyConvolutionDescriptor(self.c) == SUCCESS
        assert L.cudnnDestroy(self.h) == SUCCESS

    def dev_array(self, a, extra=0):
        """A device copy of a (with extra spare bytes), its pointer."""
        a = np.ascontiguousarray(a, dtype=self.dtype)
        p = self.L.t_malloc(a.nbytes + extra, self.dev)
        ctypes.memmove(p, a.ctypes.data, a.nbytes)
        self.blocks.append(p)
        return p

    def read(self, p, shape):
        out = np.empty(shape, self.dtype)
        ctypes.memmove(out.ctypes.data, p, out.nbytes)
        return out

    def scalar(self, v):
        return ctypes.byref(ctypes.c_float(v) if self.ct == FLOAT else ctypes.c_double(v))

    def algos(self, kind):
        L, perf, n = self.L, (Perf * 8)(), ctypes.c_int()
        fn, args = {"fwd": ("cudnnGetConvolutionForwardAlgorithm_v7", (self.x, self.w, self.c, self.y)),
                    "data": ("cudnnGetConvolutionBackwardDataAlgorithm_v7", (self.w, self.y, self.c, self.x)),
                    "filter": ("cudnnGetConvolutionBackwardFilterAlgorithm_v7", (self.x, self.y, self.c, self.w))}[kind]
        st = getattr(L, fn)(self.h, *args, 8, ctypes.byref(n), perf)
        return st, list(perf[: n.value])

    def ws_size(self, kind, algo):
        L, n = self.L, ctypes.c_size_t()
        fn, args = {"fwd": ("cudnnGetConvolutionForwardWorkspaceSize", (self.x, self.w, self.c, self.y)),
                    "data": ("cudnnGetConvolutionBackwardDataWorkspaceSize", (self.w, self.y, self.c, self.x)),
                    "filter": ("cudnnGetConvolutionBackwardFilterWorkspaceSize", (self.x, self.y, self.c, self.w))}[kind]
        return getattr(L, fn)(self.h, *args, algo, ctypes.byref(n)), n.value

    def run(self, kind, a, b, out0, alpha=1.0, beta=0.0, algo=None, ws=None, ws_bytes=None):
        """kind's pass on inputs a, b (fwd: x, w; data: w, dy; filter: x, dy) into a device copy
        of out0; returns (status, result)."""
        if algo is None:
            algo = self.algos(kind)[1][0].algo
        if ws_bytes is None:
            ws_bytes = self.ws_size(kind, algo)[1]
        if ws is None and ws_bytes:
            ws = self.L.t_malloc(ws_bytes, self.dev)
            self.blocks.append(ws)
        pa, pb, po = self.dev_array(a), self.dev_array(b), self.dev_array(out0)
        al, be = self.scalar(alpha), self.scalar(beta)
        L = self.L
        if kind == "fwd":
            st = L.cudnnConvolutionForward(self.h, al, self.x, pa, self.w, pb, self.c, algo, ws,
                                           ws_bytes, be, self.y, po)
        elif kind == "data":
            st = L.cudnnConvolutionBackwardData(self.h, al, self.w, pa, self.y, pb, self.c, algo,
                                                ws, ws_bytes, be, self.x, po)
        else:
            st = L.cudnnConvolutionBackwardFilter(self.h, al, self.x, pa, self.y, pb, self.c, algo,
                                                  ws, ws_bytes, be, self.w, po)
        return st, self.read(po, np.shape(out0))


CASES = [  # x shape, w shape, pad, stride, dilation, groups, mode
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, CROSS_CORRELATION),
    ((1, 4, 9, 8), (6, 2, 3, 2), (2, 0), (2, 3), (1, 2), 2, CROSS_CORRELATION),
    ((3, 6, 5, 7), (6, 1, 2, 3), (0, 1), (1, 2), (2, 1), 6, CONVOLUTION),
    ((1, 1, 1, 1), (1, 1, 1, 1), (0, 0), (1, 1), (1, 1), 1, CONVOLUTION),
    ((2, 4, 6, 6), (2, 4, 6, 6), (0, 0), (1, 1), (1, 1), 1, CROSS_CORRELATION),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_three_passes_match_numpy(lib, case, dtype):
    xs, wsh, pad, s, d, groups, mode = case
    rng = np.random.default_rng(0)
    conv = Conv(lib, xs, wsh, pad, s, d, groups, mode, dtype)
    x, w = rng.standard_normal(xs), rng.standard_normal(wsh)
    dy = rng.standard_normal(conv.y_shape)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    flip = mode == CONVOLUTION
    x, w, dy = (a.astype(dtype).astype(np.float64) for a in (x, w, dy))
    try:
        for kind, a, b, shape in (("fwd", x, w, conv.y_shape), ("data", w, dy, xs),
                                  ("filter", x, dy, wsh)):
            ref = reference(kind, x, w, dy, pad, s, d, groups, flip)
            # beta == 0: the output is not read (NaN stays out); beta != 0 blends it in
            st, got = conv.run(kind, a, b, np.full(shape, np.nan))
            assert st == SUCCESS
            np.testing.assert_allclose(got, ref, **tol)
            old = rng.standard_normal(shape).astype(dtype)
            st, got = conv.run(kind, a, b, old, alpha=1.5, beta=-0.5)
            assert st == SUCCESS
            np.testing.assert_allclose(got, 1.5 * ref - 0.5 * old.astype(np.float64), **tol)
            assert lib.t_last_kernel().decode() == {"fwd": "emu_cudnn_conv2d_fwd",
                                                    "data": "emu_cudnn_conv2d_bwd_data",
                                                    "filter": "emu_cudnn_conv2d_bwd_filter"}[kind]
    finally:
        conv.close()


def test_strided_and_nhwc_descriptors(lib):
    rng = np.random.default_rng(1)
    conv = Conv(lib, (2, 3, 5, 4), (2, 3, 2, 2), pad=(1, 0))
    x, w = rng.standard_normal((2, 3, 5, 4)), rng.standard_normal((2, 3, 2, 2))
    x, w = x.astype(np.float32).astype(np.float64), w.astype(np.float32).astype(np.float64)
    ref = reference("fwd", x, w, None, (1, 0), (1, 1), (1, 1), 1, False)
    try:
        # x given as NHWC memory, y through explicit (NCHW-transposed) strides
        assert lib.cudnnSetTensor4dDescriptor(conv.x, NHWC, FLOAT, 2, 3, 5, 4) == SUCCESS
        N, K, OH, OW = conv.y_shape
        assert lib.cudnnSetTensor4dDescriptorEx(conv.y, FLOAT, N, K, OH, OW, K * OH * OW, 1,
                                                OW * K, K) == SUCCESS
        st, got = conv.run("fwd", x.transpose(0, 2, 3, 1), w, np.zeros((N, OH, OW, K)))
        assert st == SUCCESS
        np.testing.assert_allclose(got.transpose(0, 3, 1, 2), ref, rtol=1e-5, atol=1e-5)
    finally:
        conv.close()


@pytest.mark.parametrize("kind", ["fwd", "data", "filter"])
def test_algorithm_queries_agree_with_workspace_sizes(lib, kind):
    conv = Conv(lib, (2, 4, 6, 6), (4, 2, 3, 3), groups=2)
    try:
        st, perf = conv.algos(kind)
        assert st == SUCCESS and len(perf) == {"fwd": 8, "data": 6, "filter": 7}[kind]
        assert perf[0].status == SUCCESS and perf[0].memory > 0 and perf[0].mathType == FMA_MATH
        assert sorted(p.algo for p in perf) == list(range(len(perf)))
        for p in perf:
            st, n = conv.ws_size(kind, p.algo)
            assert st == p.status
            if st == SUCCESS:
                assert n == p.memory
        assert conv.ws_size(kind, len(perf))[0] == BAD_PARAM
        # the workspace is used: it must be device memory, and it is written
        x = np.ones((2, 4, 6, 6))
        a, b, out = {"fwd": (x, np.ones((4, 2, 3, 3)), np.zeros((2, 4, 4, 4))),
                     "data": (np.ones((4, 2, 3, 3)), np.ones((2, 4, 4, 4)), x),
                     "filter": (x, np.ones((2, 4, 4, 4)), np.zeros((4, 2, 3, 3)))}[kind]
        need = perf[0].memory
        assert conv.run(kind, a, b, out, ws_bytes=need - 1)[0] == BAD_PARAM
        host = ctypes.create_string_buffer(need)
        assert conv.run(kind, a, b, out, ws=ctypes.addressof(host), ws_bytes=need)[0] == EXECUTION_FAILED
        ws = lib.t_malloc(need, 0)
        conv.blocks.append(ws)
        assert conv.run(kind, a, b, out, ws=ws, ws_bytes=need)[0] == SUCCESS
        assert ctypes.string_at(ws, need) == b"\xa5" * need
        unsupported = next(p.algo for p in perf if p.status != SUCCESS)
        assert conv.run(kind, a, b, out, algo=unsupported, ws_bytes=0)[0] == NOT_SUPPORTED
    finally:
        conv.close()


def test_descriptor_checks(lib):
    L = lib
    t = create(L, "cudnnCreateTensorDescriptor")
    f = create(L, "cudnnCreateFilterDescriptor")
    c = create(L, "cudnnCreateConvolutionDescriptor")
    try:
        assert L.cudnnSetTensor4dDescriptor(t, NCHW, FLOAT, 0, 1, 1, 1) == BAD_PARAM
        assert L.cudnnSetTensor4dDescriptor(t, NCHW, 99, 1, 1, 1, 1) == BAD_PARAM
        assert L.cudnnSetTensor4dDescriptor(t, 7, FLOAT, 1, 1, 1, 1) == BAD_PARAM
        assert L.cudnnSetTensor4dDescriptor(t, NCHW, FLOAT, 65536, 65536, 1, 1) == NOT_SUPPORTED
        assert L.cudnnSetTensor4dDescriptorEx(t, FLOAT, 1, 1, 1, 1, 1, 0, 1, 1) == BAD_PARAM
        assert L.cudnnSetFilter4dDescriptor(f, FLOAT, NCHW, 1, -1, 1, 1) == BAD_PARAM
        assert L.cudnnSetConvolution2dDescriptor(c, -1, 0, 1, 1, 1, 1, 0, FLOAT) == BAD_PARAM
        assert L.cudnnSetConvolution2dDescriptor(c, 0, 0, 0, 1, 1, 1, 0, FLOAT) == BAD_PARAM
        assert L.cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 0, 0, FLOAT) == BAD_PARAM
        assert L.cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, 2, FLOAT) == BAD_PARAM
        assert L.cudnnSetConvolutionGroupCount(c, 0) == BAD_PARAM
        assert L.cudnnSetConvolutionMathType(c, 9) == BAD_PARAM
        assert L.cudnnSetTensor4dDescriptor(None, NCHW, FLOAT, 1, 1, 1, 1) == BAD_PARAM
        # the output size cuDNN computes
        assert L.cudnnSetTensor4dDescriptor(t, NCHW, FLOAT, 2, 4, 9, 8) == SUCCESS
        assert L.cudnnSetFilter4dDescriptor(f, FLOAT, NCHW, 6, 2, 3, 2) == SUCCESS
        assert L.cudnnSetConvolution2dDescriptor(c, 2, 0, 2, 3, 1, 2, 1, FLOAT) == SUCCESS
        assert L.cudnnSetConvolutionGroupCount(c, 2) == SUCCESS
        dims = [ctypes.c_int() for _ in range(4)]
        assert L.cudnnGetConvolution2dForwardOutputDim(c, t, f, *map(ctypes.byref, dims)) == SUCCESS
        assert [v.value for v in dims] == [2, 6, out_size(9, 3, 2, 2, 1), out_size(8, 2, 0, 3, 2)]
    finally:
        assert L.cudnnDestroyTensorDescriptor(t) == SUCCESS
        assert L.cudnnDestroyFilterDescriptor(f) == SUCCESS
        assert L.cudnnDestroyConvolutionDescriptor(c) == SUCCESS
    # destroyed: refused, not read
    assert L.cudnnSetTensor4dDescriptor(t, NCHW, FLOAT, 1, 1, 1, 1) == BAD_PARAM
    assert L.cudnnDestroyTensorDescriptor(t) == BAD_PARAM
    assert L.cudnnDestroyTensorDescriptor(None) == SUCCESS


@pytest.mark.parametrize("bad, status", [
    (dict(y_shape=(2, 4, 5, 6)), BAD_PARAM),           # output size not cuDNN's
    (dict(y_shape=(1, 4, 6, 6)), BAD_PARAM),           # batch differs
    (dict(y_shape=(2, 3, 6, 6)), BAD_PARAM),           # output channels differ from K
    (dict(w_shape=(4, 2, 3, 3)), BAD_PARAM),           # 2 * 1 group != 3 channels
    (dict(w_shape=(4, 3, 9, 3), y_shape=(2, 4, 1, 6)), BAD_PARAM),  # filter > padded input
])
def test_inconsistent_descriptors(lib, bad, status):
    args = dict(x_shape=(2, 3, 6, 6), w_shape=(4, 3, 3, 3), pad=(1, 1))
    args.update(bad)
    conv = Conv(lib, **args)
    try:
        assert conv.algos("fwd")[0] == status
        assert conv.ws_size("fwd", 0)[0] == status
        x, w = np.ones(args["x_shape"]), np.ones(args["w_shape"])
        assert conv.run("fwd", x, w, np.zeros(conv.y_shape), algo=0, ws_bytes=0)[0] == status
    finally:
        conv.close()


def test_type_and_state_checks(lib):
    L = lib
    conv = Conv(lib, (1, 2, 4, 4), (2, 2, 3, 3))
    x, w, y = np.ones((1, 2, 4, 4)), np.ones((2, 2, 3, 3)), np.zeros((1, 2, 2, 2))
    try:
        assert L.cudnnSetFilter4dDescriptor(conv.w, DOUBLE, NCHW, 2, 2, 3, 3) == SUCCESS
        assert conv.algos("fwd")[0] == BAD_PARAM                  # data types differ
        assert L.cudnnSetFilter4dDescriptor(conv.w, FLOAT, NCHW, 2, 2, 3, 3) == SUCCESS
        assert L.cudnnSetConvolution2dDescriptor(conv.c, 0, 0, 1, 1, 1, 1, 1, DOUBLE) == SUCCESS
        assert conv.algos("fwd")[0] == NOT_SUPPORTED              # float data, double compute
        assert L.cudnnSetConvolution2dDescriptor(conv.c, 0, 0, 1, 1, 1, 1, 1, FLOAT) == SUCCESS
        fresh = create(L, "cudnnCreateTensorDescriptor")          # created, never set
        perf, n = (Perf * 8)(), ctypes.c_int()
        assert L.cudnnGetConvolutionForwardAlgorithm_v7(conv.h, fresh, conv.w, conv.c, conv.y, 8,
                                                        ctypes.byref(n), perf) == BAD_PARAM
        assert L.cudnnGetConvolutionForwardAlgorithm_v7(conv.h, conv.x, conv.w, conv.c, conv.y, 0,
                                                        ctypes.byref(n), perf) == BAD_PARAM
        assert L.cudnnDestroyTensorDescriptor(fresh) == SUCCESS
        # NULL pointers and alpha in device memory
        pa, pb, po = conv.dev_array(x), conv.dev_array(w), conv.dev_array(y)
        one = conv.scalar(1.0)
        assert L.cudnnConvolutionForward(conv.h, one, conv.x, pa, conv.w, None, conv.c, 1, None, 0,
                                         one, conv.y, po) == BAD_PARAM
        assert L.cudnnConvolutionForward(conv.h, None, conv.x, pa, conv.w, pb, conv.c, 0, None, 0,
                                         one, conv.y, po) == BAD_PARAM
        dev_one = conv.dev_array(np.ones(1))
        assert L.cudnnConvolutionForward(conv.h, dev_one, conv.x, pa, conv.w, pb, conv.c, 0, None,
                                         0, one, conv.y, po) == EXECUTION_FAILED
        # the output overlapping an input
        assert L.cudnnConvolutionForward(conv.h, one, conv.x, pa, conv.w, pb, conv.c, 0, None, 0,
                                         one, conv.y, pa) == BAD_PARAM
        # an operand past the end of its block, or host memory
        small = conv.dev_array(np.ones((1, 2, 4, 3)))
        assert conv.L.cudnnConvolutionForward(conv.h, one, conv.x, small, conv.w, pb, conv.c, 0,
                                              None, 0, one, conv.y, po) == EXECUTION_FAILED
        host = np.zeros(64, np.float32)
        assert L.cudnnConvolutionForward(conv.h, one, conv.x, pa, conv.w, pb, conv.c, 0, None, 0,
                                         one, conv.y, host.ctypes.data) == EXECUTION_FAILED
        count = L.t_kernels()
        assert L.cudnnConvolutionForward(conv.h, one, conv.x, pa, conv.w, pb, conv.c, 0, None, 0,
                                         one, conv.y, po) == SUCCESS
        assert L.t_kernels() == count + 1
        buf = ctypes.create_string_buffer(200)
        L.cudnnGetLastErrorString(buf, 200)
    finally:
        conv.close()
    assert L.cudnnGetErrorString(BAD_PARAM) == b"CUDNN_STATUS_BAD_PARAM"
    assert L.cudnnDestroy(conv.h) == BAD_PARAM  # destroyed twice


def test_devices_and_streams(lib):
    L = lib
    conv = Conv(lib, (1, 2, 4, 4), (2, 2, 3, 3), dev=0)
    x, w, y = np.ones((1, 2, 4, 4)), np.ones((2, 2, 3, 3)), np.zeros((1, 2, 2, 2))
    try:
        s0, s1 = L.t_stream(0), L.t_stream(1)
        assert L.cudnnSetStream(conv.h, s1) == STREAM_MISMATCH
        assert L.cudnnSetStream(conv.h, ctypes.c_void_p(12345)) == BAD_PARAM
        assert L.cudnnSetStream(conv.h, s0) == SUCCESS
        assert conv.run("fwd", x, w, y)[0] == SUCCESS
        L.t_set_device(1)  # the handle used while another device is current
        assert conv.run("fwd", x, w, y)[0] == EXECUTION_FAILED
        L.t_set_device(0)
        conv.dev = 1  # operands on another device than the handle's
        assert conv.run("fwd", x, w, y)[0] == EXECUTION_FAILED
        conv.dev = 0
        assert L.cudnnSetStream(conv.h, None) == SUCCESS
        assert conv.run("fwd", x, w, y)[0] == SUCCESS
    finally:
        L.t_set_device(0)
        conv.close()


def test_threads(lib):
    """Handles, descriptors and convolutions from several threads at once."""
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(3):
                conv = Conv(lib, (2, 4, 6, 5), (4, 2, 3, 3), pad=(1, 1), groups=2, dtype=np.float64)
                x, w = rng.standard_normal((2, 4, 6, 5)), rng.standard_normal((4, 2, 3, 3))
                st, got = conv.run("fwd", x, w, np.zeros(conv.y_shape))
                conv.close()
                assert st == SUCCESS
                ref = reference("fwd", x, w, None, (1, 1), (1, 1), (1, 1), 2, False)
                np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
        except Exception as e:  # reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
