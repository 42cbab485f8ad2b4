"""The emulated cuBLAS (cuda/emu/cublas.c, its complex products cublas_complex.c) on its own, against
NumPy: both are compiled with a small stand-in for the emulated runtime (the registry of device
blocks, streams, the current device; written below) into a shared library driven through ctypes,
with NumPy arrays registered as device memory. Column-major layouts, transposes, leading dimensions,
increments (negative and zero), strides, pointer modes, the documented INVALID_VALUE checks and the
emulation's EXECUTION_FAILED checks. Skips without gcc."""
import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest
from emu_build import plain_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STUB = r"""
#include <stdint.h>
#include <string.h>
#include "emu.h"

typedef struct { uintptr_t p; size_t n; int dev; } block;
static block blocks[256];
static int nblocks, current;
static void *streams[16];
static int stream_dev[16], nstreams;
static char last[64];
static int last_dev, nran;

void stub_reset(void) { nblocks = 0; nstreams = 0; current = 0; last[0] = 0; nran = 0; }
void stub_register(void *p, size_t n, int dev) { blocks[nblocks++] = (block){(uintptr_t)p, n, dev}; }
void stub_set_device(int d) { current = d; }
void stub_add_stream(void *s, int dev) { streams[nstreams] = s; stream_dev[nstreams++] = dev; }
const char *stub_last_kernel(void) { return last; }
int stub_last_device(void) { return last_dev; }
int stub_ran(void) { return nran; }

int mt_emu_current_device(void) { return current; }
bool mt_emu_device_range(const void *p, size_t bytes, int *device)
{
    for (int i = 0; i < nblocks; i++) {
        uintptr_t a = (uintptr_t)p;
        if (a >= blocks[i].p && a - blocks[i].p <= blocks[i].n && bytes <= blocks[i].n - (a - blocks[i].p)) {
            *device = blocks[i].dev;
            return true;
        }
    }
    return false;
}
cudaError_t mt_emu_stream_device(cudaStream_t s, int *device)
{
    if (s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread) { *device = current; return cudaSuccess; }
    for (int i = 0; i < nstreams; i++) {
        if (streams[i] == (void *)s) { *device = stream_dev[i]; return cudaSuccess; }
    }
    return cudaErrorInvalidResourceHandle;
}
void mt_emu_stream_drain(cudaStream_t s) { (void)s; } /* synchronous here: nothing queued */
bool mt_emu_stream_defer(cudaStream_t s, int (*fn)(void *), const void *arg, size_t bytes)
{
    (void)s, (void)fn, (void)arg, (void)bytes;
    return false; /* synchronous here: the caller runs the work */
}
static uint64_t clock_ns;
uint64_t mt_emu_now_ns(void) { return clock_ns += 1000; }
void mt_emu_device_work_begin(void) {}
void mt_emu_device_work_end(void) {}
void mt_emu_kernel_ran(const char *name, int device, cudaStream_t stream, uint64_t s, uint64_t e)
{
    (void)stream; (void)s; (void)e;
    strncpy(last, name, sizeof(last) - 1);
    last_dev = device;
    nran++;
}
void mt_emu_memcpy_ran(cudaMemcpyKind k, size_t b, int d, cudaStream_t s, uint64_t t0, uint64_t t1)
{
    (void)k; (void)b; (void)d; (void)s; (void)t0; (void)t1;
}
void mt_emu_corr_save(mt_emu_corr *c) { (void)c; } /* CUPTI's (cupti.c): no correlation ids here */
void mt_emu_corr_use(const mt_emu_corr *c) { (void)c; }
"""

SUCCESS, NOT_INITIALIZED, INVALID_VALUE, EXECUTION_FAILED = 0, 1, 7, 13
N, T, C = 0, 1, 2
HOST, DEVICE = 0, 1
P, I, LL = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    d = tmp_path_factory.mktemp("emu_cublas")
    (d / "stub.c").write_text(STUB)
    so = d / "libemucublas.so"
    emu = os.path.join(ROOT, "cuda", "emu")
    subprocess.run([gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-I", os.path.join(emu, "include"), "-I", emu, "-I", os.path.join(ROOT, "csrc"),
                    os.path.join(emu, "cublas.c"), os.path.join(emu, "cublas_complex.c"), str(d / "stub.c"),
                    "-o", str(so), "-lpthread", "-lm"],
                   check=True, env=plain_env())  # csrc: core/math.h's GELU for the GELU epilogue
    lib = ctypes.CDLL(str(so))
    lib.stub_register.argtypes = [P, ctypes.c_size_t, I]
    lib.stub_add_stream.argtypes = [P, I]
    lib.stub_last_kernel.restype = ctypes.c_char_p
    lib.cublasGetStatusName.restype = ctypes.c_char_p
    lib.cublasGetStatusName.argtypes = [I]
    lib.cublasCreate_v2.argtypes = [P]
    lib.cublasDestroy_v2.argtypes = [P]
    lib.cublasSetStream_v2.argtypes = [P, P]
    lib.cublasSetPointerMode_v2.argtypes = [P, I]
    for t in "SD":
        getattr(lib, f"cublas{t}scal_v2").argtypes = [P, I, P, P, I]
        getattr(lib, f"cublas{t}dot_v2").argtypes = [P, I, P, I, P, I, P]
        getattr(lib, f"cublas{t}gemv_v2").argtypes = [P, I, I, I, P, P, I, P, I, P, P, I]
        getattr(lib, f"cublas{t}gemm_v2").argtypes = [P, I, I, I, I, I, P, P, I, P, I, P, P, I]
        getattr(lib, f"cublas{t}gemmStridedBatched").argtypes = [
            P, I, I, I, I, I, P, P, I, LL, P, I, LL, P, P, I, LL, I]
    for t in "CZ":
        getattr(lib, f"cublas{t}dotu_v2").argtypes = [P, I, P, I, P, I, P]
        getattr(lib, f"cublas{t}dotc_v2").argtypes = [P, I, P, I, P, I, P]
        getattr(lib, f"cublas{t}gemv_v2").argtypes = [P, I, I, I, P, P, I, P, I, P, P, I]
        getattr(lib, f"cublas{t}gemm_v2").argtypes = [P, I, I, I, I, I, P, P, I, P, I, P, P, I]
    return lib


@pytest.fixture
def cu(lib):
    """(lib, handle) on device 0, a fresh registry; the handle is destroyed after the test."""
    lib.stub_reset()
    h = P()
    assert lib.cublasCreate_v2(ctypes.byref(h)) == SUCCESS
    keep = []
    lib.keep = keep  # registered arrays must outlive the calls
    yield lib, h
    lib.cublasDestroy_v2(h)


def dev(lib, a, device=0):
    """a registered as device memory (exactly its bytes)."""
    a = np.ascontiguousarray(a)
    lib.stub_register(a.ctypes.data, a.nbytes, device)
    lib.keep.append(a)
    return a


def ptr(a, offset=0):
    return ctypes.c_void_p(a.ctypes.data + offset * a.itemsize)


def scalar(x, dtype):
    return ctypes.byref((ctypes.c_double if dtype == np.float64 else ctypes.c_float)(x))


def fn(lib, dtype, name):
    return getattr(lib, "cublas" + ("D" if dtype == np.float64 else "S") + name)


def colmajor(buf, rows, cols, ld, offset=0):
    """The (rows, cols) matrix stored column-major at buf[offset:] with leading dimension ld."""
    return np.lib.stride_tricks.as_strided(buf[offset:], (rows, cols),
                                           (buf.itemsize, ld * buf.itemsize))


def op(m, t):
    return m if t == N else m.T


RNG = np.random.default_rng(0)
TOL = {np.float32: 1e-5, np.float64: 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(N, N), (N, T), (T, N), (T, T), (C, N), (N, C)])
@pytest.mark.parametrize("m,n,k,pad", [(3, 4, 5, 0), (1, 7, 2, 3), (6, 1, 1, 1), (4, 3, 0, 2),
                                       (17, 9, 13, 5)])
def test_gemm(cu, dtype, ta, tb, m, n, k, pad):
    lib, h = cu
    ar, ac = (m, k) if ta == N else (k, m)
    br, bc = (k, n) if tb == N else (n, k)
    lda, ldb, ldc = ar + pad, br + 2 * pad, m + pad
    A = dev(lib, RNG.standard_normal(max(lda * ac, 1)).astype(dtype))
    B = dev(lib, RNG.standard_normal(max(ldb * bc, 1)).astype(dtype))
    C0 = RNG.standard_normal(ldc * n).astype(dtype)
    C = dev(lib, C0.copy())
    alpha, beta = 1.5, -0.5
    s = fn(lib, dtype, "gemm_v2")(h, ta, tb, m, n, k, scalar(alpha, dtype), ptr(A), lda, ptr(B),
                                  ldb, scalar(beta, dtype), ptr(C), ldc)
    assert s == SUCCESS
    a64 = colmajor(A.astype(np.float64), ar, ac, lda)
    b64 = colmajor(B.astype(np.float64), br, bc, ldb)
    c0 = colmajor(C0.astype(np.float64), m, n, ldc)
    want = alpha * op(a64, ta) @ op(b64, tb) + beta * c0
    np.testing.assert_allclose(colmajor(C, m, n, ldc), want, rtol=TOL[dtype], atol=TOL[dtype])
    rows = np.arange(ldc * n) % ldc >= m  # the padding between C's columns is not touched
    np.testing.assert_array_equal(C[rows], C0[rows])
    letters = "ntc"
    prefix = "d" if dtype == np.float64 else "s"
    assert lib.stub_last_kernel().decode() == f"emu_cublas_{prefix}gemm_{letters[ta]}{letters[tb]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_beta_zero_ignores_c_alpha_zero_ignores_ab(cu, dtype):
    lib, h = cu
    m, n, k = 3, 2, 4
    A = dev(lib, RNG.standard_normal(m * k).astype(dtype))
    B = dev(lib, RNG.standard_normal(k * n).astype(dtype))
    C = dev(lib, np.full(m * n, np.nan, dtype))
    gemm = fn(lib, dtype, "gemm_v2")
    assert gemm(h, N, N, m, n, k, scalar(1, dtype), ptr(A), m, ptr(B), k, scalar(0, dtype),
                ptr(C), m) == SUCCESS
    want = colmajor(A.astype(np.float64), m, k, m) @ colmajor(B.astype(np.float64), k, n, k)
    np.testing.assert_allclose(colmajor(C, m, n, m), want, rtol=TOL[dtype])
    A[:] = np.nan
    C[:] = 2
    assert gemm(h, N, N, m, n, k, scalar(0, dtype), ptr(A), m, ptr(B), k, scalar(3, dtype),
                ptr(C), m) == SUCCESS
    np.testing.assert_array_equal(C, 6)
    C[:] = np.nan  # k == 0 with beta == 0 writes zeros
    assert gemm(h, N, N, m, n, 0, scalar(1, dtype), ptr(A), m, ptr(B), 1, scalar(0, dtype),
                ptr(C), m) == SUCCESS
    np.testing.assert_array_equal(C, 0)
    ran = lib.stub_ran()  # m == 0: nothing runs, nothing is checked
    assert gemm(h, N, N, 0, n, k, scalar(1, dtype), None, 1, None, k, scalar(0, dtype), None,
                1) == SUCCESS
    assert lib.stub_ran() == ran


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(N, N), (T, N), (N, T)])
@pytest.mark.parametrize("sa_zero", [False, True])
def test_gemm_strided_batched(cu, dtype, ta, tb, sa_zero):
    lib, h = cu
    m, n, k, batch = 4, 3, 5, 3
    ar, ac = (m, k) if ta == N else (k, m)
    br, bc = (k, n) if tb == N else (n, k)
    lda, ldb, ldc = ar + 1, br, m + 2
    sa = 0 if sa_zero else lda * ac + 3
    sb, sc = ldb * bc, ldc * n + 1
    A = dev(lib, RNG.standard_normal(sa * (batch - 1) + lda * ac).astype(dtype))
    B = dev(lib, RNG.standard_normal(sb * batch).astype(dtype))
    C0 = RNG.standard_normal(sc * batch).astype(dtype)
    C = dev(lib, C0.copy())
    s = fn(lib, dtype, "gemmStridedBatched")(h, ta, tb, m, n, k, scalar(2, dtype), ptr(A), lda,
                                             sa, ptr(B), ldb, sb, scalar(1, dtype), ptr(C), ldc,
                                             sc, batch)
    assert s == SUCCESS
    for b in range(batch):
        a = colmajor(A.astype(np.float64), ar, ac, lda, b * sa)
        bb = colmajor(B.astype(np.float64), br, bc, ldb, b * sb)
        want = 2 * op(a, ta) @ op(bb, tb) + colmajor(C0.astype(np.float64), m, n, ldc, b * sc)
        np.testing.assert_allclose(colmajor(C, m, n, ldc, b * sc), want, rtol=TOL[dtype],
                                   atol=TOL[dtype])
    assert "gemm_strided_batched_" in lib.stub_last_kernel().decode()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans", [N, T])
@pytest.mark.parametrize("m,n,lda,incx,incy", [(3, 4, 3, 1, 1), (5, 2, 7, 2, -1),
                                               (1, 6, 4, -3, 2), (4, 4, 4, 1, -2)])
def test_gemv(cu, dtype, trans, m, n, lda, incx, incy):
    lib, h = cu
    xn, yn = (n, m) if trans == N else (m, n)
    A = dev(lib, RNG.standard_normal(lda * n).astype(dtype))
    X = dev(lib, RNG.standard_normal(1 + (xn - 1) * abs(incx)).astype(dtype))
    Y0 = RNG.standard_normal(1 + (yn - 1) * abs(incy)).astype(dtype)
    Y = dev(lib, Y0.copy())
    s = fn(lib, dtype, "gemv_v2")(h, trans, m, n, scalar(0.5, dtype), ptr(A), lda, ptr(X), incx,
                                  scalar(2, dtype), ptr(Y), incy)
    assert s == SUCCESS
    x = X.astype(np.float64)[::incx][:xn]  # a negative increment starts at the far end
    y0 = Y0.astype(np.float64)[::incy][:yn]
    want = 0.5 * op(colmajor(A.astype(np.float64), m, n, lda), trans) @ x + 2 * y0
    np.testing.assert_allclose(Y[::incy][:yn], want, rtol=TOL[dtype], atol=TOL[dtype])
    prefix = "d" if dtype == np.float64 else "s"
    assert lib.stub_last_kernel().decode() == f"emu_cublas_{prefix}gemv_{'nt'[trans]}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemv_beta_zero_and_quick_return(cu, dtype):
    lib, h = cu
    A = dev(lib, np.ones(6, dtype))
    X = dev(lib, np.arange(3, dtype=dtype))
    Y = dev(lib, np.full(2, np.nan, dtype))
    gemv = fn(lib, dtype, "gemv_v2")
    assert gemv(h, N, 2, 3, scalar(1, dtype), ptr(A), 2, ptr(X), 1, scalar(0, dtype), ptr(Y),
                1) == SUCCESS
    np.testing.assert_array_equal(Y, [3, 3])
    # op T with m == 0: BLAS's quick return leaves y (length n) as it was, even with beta 0
    assert gemv(h, T, 0, 2, scalar(1, dtype), ptr(A), 1, ptr(X), 1, scalar(0, dtype), ptr(Y),
                1) == SUCCESS
    np.testing.assert_array_equal(Y, [3, 3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,incx,incy", [(5, 1, 1), (4, -2, 3), (3, 0, 1), (0, 1, 1), (1, 5, -5)])
def test_dot_host_and_device_result(cu, dtype, n, incx, incy):
    lib, h = cu
    X = dev(lib, RNG.standard_normal(max(1 + (n - 1) * abs(incx), 1)).astype(dtype))
    Y = dev(lib, RNG.standard_normal(max(1 + (n - 1) * abs(incy), 1)).astype(dtype))

    def vec(v, inc):
        v = v.astype(np.float64)
        return np.full(n, v[0]) if inc == 0 else v[::inc][:n]

    want = float(vec(X, incx) @ vec(Y, incy)) if n else 0.0
    dot = fn(lib, dtype, "dot_v2")
    res = (ctypes.c_double if dtype == np.float64 else ctypes.c_float)(np.nan)
    assert dot(h, n, ptr(X), incx, ptr(Y), incy, ctypes.byref(res)) == SUCCESS
    assert res.value == pytest.approx(want, rel=TOL[dtype], abs=TOL[dtype])
    R = dev(lib, np.full(1, np.nan, dtype))
    assert lib.cublasSetPointerMode_v2(h, DEVICE) == SUCCESS
    assert dot(h, n, ptr(X), incx, ptr(Y), incy, ptr(R)) == SUCCESS
    assert R[0] == pytest.approx(want, rel=TOL[dtype], abs=TOL[dtype])


# ---- the complex level-1 and level-2 calls (cublas_complex.c) ----

CTOL = {np.complex64: 1e-5, np.complex128: 1e-12}


def csample(n, dtype):
    return (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(dtype)


def cscalar(z, dtype):
    """a cuComplex or cuDoubleComplex (re, im) holding z"""
    return ctypes.byref(((ctypes.c_double if dtype == np.complex128 else ctypes.c_float) * 2)(z.real, z.imag))


def cfn(lib, dtype, name):
    return getattr(lib, "cublas" + ("Z" if dtype == np.complex128 else "C") + name)


def cop(m, t):
    return m if t == N else m.T if t == T else m.conj().T


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("trans", [N, T, C])
@pytest.mark.parametrize("m,n,lda,incx,incy", [(3, 4, 3, 1, 1), (5, 2, 7, 2, -1), (1, 6, 4, -3, 2)])
def test_complex_gemv(cu, dtype, trans, m, n, lda, incx, incy):
    lib, h = cu
    xn, yn = (n, m) if trans == N else (m, n)
    A = dev(lib, csample(lda * n, dtype))
    X = dev(lib, csample(1 + (xn - 1) * abs(incx), dtype))
    Y0 = csample(1 + (yn - 1) * abs(incy), dtype)
    Y = dev(lib, Y0.copy())
    alpha, beta = 0.5 - 1j, 2j
    s = cfn(lib, dtype, "gemv_v2")(h, trans, m, n, cscalar(alpha, dtype), ptr(A), lda, ptr(X), incx,
                                   cscalar(beta, dtype), ptr(Y), incy)
    assert s == SUCCESS
    x = X.astype(np.complex128)[::incx][:xn]
    y0 = Y0.astype(np.complex128)[::incy][:yn]
    want = alpha * cop(colmajor(A.astype(np.complex128), m, n, lda), trans) @ x + beta * y0
    np.testing.assert_allclose(Y[::incy][:yn], want, rtol=CTOL[dtype], atol=CTOL[dtype])
    prefix = "z" if dtype == np.complex128 else "c"
    assert lib.stub_last_kernel().decode() == f"emu_cublas_{prefix}gemv_{'ntc'[trans]}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("conj", [False, True])
@pytest.mark.parametrize("n,incx,incy", [(5, 1, 1), (4, -2, 3), (0, 1, 1)])
def test_complex_dot_host_and_device_result(cu, dtype, conj, n, incx, incy):
    lib, h = cu
    X = dev(lib, csample(max(1 + (n - 1) * abs(incx), 1), dtype))
    Y = dev(lib, csample(max(1 + (n - 1) * abs(incy), 1), dtype))
    x, y = X.astype(np.complex128)[::incx][:n], Y.astype(np.complex128)[::incy][:n]
    want = (np.vdot(x, y) if conj else x @ y) if n else 0
    dot = cfn(lib, dtype, "dotc_v2" if conj else "dotu_v2")
    res = np.full(1, np.nan, dtype)
    assert dot(h, n, ptr(X), incx, ptr(Y), incy, ptr(res)) == SUCCESS  # host memory
    np.testing.assert_allclose(res[0], want, rtol=CTOL[dtype], atol=CTOL[dtype])
    R = dev(lib, np.full(1, np.nan, dtype))
    assert lib.cublasSetPointerMode_v2(h, DEVICE) == SUCCESS
    assert dot(h, n, ptr(X), incx, ptr(Y), incy, ptr(R)) == SUCCESS
    np.testing.assert_allclose(R[0], want, rtol=CTOL[dtype], atol=CTOL[dtype])
    prefix = "z" if dtype == np.complex128 else "c"
    assert lib.stub_last_kernel().decode() == f"emu_cublas_{prefix}dot{'c' if conj else 'u'}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("ta,tb", [(N, C), (C, N), (T, C)])
def test_complex_gemm_conjugate_transposes(cu, dtype, ta, tb):
    """op C, the conjugate transpose that the complex gradients' products take"""
    lib, h = cu
    m, n, k = 3, 4, 5
    ar, ac = (m, k) if ta == N else (k, m)
    br, bc = (k, n) if tb == N else (n, k)
    A, B = dev(lib, csample(ar * ac, dtype)), dev(lib, csample(br * bc, dtype))
    C0 = csample(m * n, dtype)
    Cm = dev(lib, C0.copy())
    alpha, beta = 1 + 1j, -0.5
    s = cfn(lib, dtype, "gemm_v2")(h, ta, tb, m, n, k, cscalar(alpha, dtype), ptr(A), ar, ptr(B), br,
                                   cscalar(beta, dtype), ptr(Cm), m)
    assert s == SUCCESS
    a, b = colmajor(A.astype(np.complex128), ar, ac, ar), colmajor(B.astype(np.complex128), br, bc, br)
    want = alpha * cop(a, ta) @ cop(b, tb) + beta * colmajor(C0.astype(np.complex128), m, n, m)
    np.testing.assert_allclose(colmajor(Cm, m, n, m), want, rtol=CTOL[dtype], atol=CTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scal(cu, dtype):
    lib, h = cu
    X0 = RNG.standard_normal(7).astype(dtype)
    X = dev(lib, X0.copy())
    scal = fn(lib, dtype, "scal_v2")
    assert scal(h, 3, scalar(-2, dtype), ptr(X), 2) == SUCCESS
    want = X0.copy()
    want[0:6:2] *= -2
    np.testing.assert_array_equal(X, want)
    assert scal(h, 3, scalar(-2, dtype), ptr(X), -1) == SUCCESS  # BLAS: incx <= 0 does nothing
    np.testing.assert_array_equal(X, want)


def test_status_names(lib):
    assert lib.cublasGetStatusName(0) == b"CUBLAS_STATUS_SUCCESS"
    assert lib.cublasGetStatusName(7) == b"CUBLAS_STATUS_INVALID_VALUE"
    assert lib.cublasGetStatusName(13) == b"CUBLAS_STATUS_EXECUTION_FAILED"


def test_documented_argument_checks(cu):
    lib, h = cu
    A = dev(lib, np.zeros(64, np.float32))
    one = scalar(1, np.float32)
    gemm, gemv = lib.cublasSgemm_v2, lib.cublasSgemv_v2
    bad_gemm = [
        (N, N, -1, 2, 2, 1, 2, 1),  # m < 0
        (N, N, 2, 2, -1, 2, 1, 2),  # k < 0
        (7, N, 2, 2, 2, 2, 2, 2),  # transa
        (N, N, 3, 2, 2, 2, 2, 3),  # lda < m for op N
        (T, N, 3, 2, 4, 3, 4, 3),  # lda < k for op T
        (N, N, 3, 2, 4, 3, 3, 3),  # ldb < k for op N
        (N, T, 3, 2, 4, 3, 1, 3),  # ldb < n for op T
        (N, N, 3, 2, 4, 3, 4, 2),  # ldc < m
        (N, N, 0, 2, 2, 0, 2, 1),  # lda < max(1, m) even when m == 0
    ]
    for ta, tb, m, n, k, lda, ldb, ldc in bad_gemm:
        assert gemm(h, ta, tb, m, n, k, one, ptr(A), lda, ptr(A), ldb, one, ptr(A, 32),
                    ldc) == INVALID_VALUE, (ta, tb, m, n, k, lda, ldb, ldc)
    assert gemm(h, N, N, 2, 2, 2, None, ptr(A), 2, ptr(A), 2, one, ptr(A, 32), 2) == INVALID_VALUE
    assert gemm(h, N, N, 2, 2, 2, one, ptr(A), 2, ptr(A), 2, one, None, 2) == INVALID_VALUE
    sb = lib.cublasSgemmStridedBatched
    assert sb(h, N, N, 2, 2, 2, one, ptr(A), 2, 4, ptr(A), 2, 4, one, ptr(A, 32), 2, 4,
              -1) == INVALID_VALUE
    assert gemv(h, N, 2, 2, one, ptr(A), 2, ptr(A), 0, one, ptr(A, 32), 1) == INVALID_VALUE
    assert gemv(h, N, 2, 2, one, ptr(A), 2, ptr(A), 1, one, ptr(A, 32), 0) == INVALID_VALUE
    assert gemv(h, N, 3, 2, one, ptr(A), 2, ptr(A), 1, one, ptr(A, 32), 1) == INVALID_VALUE
    assert gemv(h, N, -1, 2, one, ptr(A), 2, ptr(A), 1, one, ptr(A, 32), 1) == INVALID_VALUE
    assert gemv(h, 5, 2, 2, one, ptr(A), 2, ptr(A), 1, one, ptr(A, 32), 1) == INVALID_VALUE
    assert lib.cublasSetPointerMode_v2(h, 2) == INVALID_VALUE
    assert lib.cublasCreate_v2(None) == INVALID_VALUE


def test_handles(lib, capfd):
    lib.stub_reset()
    one = scalar(1, np.float32)
    x = np.zeros(4, np.float32)
    assert lib.cublasSscal_v2(None, 4, one, ptr(x), 1) == NOT_INITIALIZED
    h = P()
    assert lib.cublasCreate_v2(ctypes.byref(h)) == SUCCESS
    assert lib.cublasDestroy_v2(h) == SUCCESS
    assert lib.cublasSscal_v2(h, 4, one, ptr(x), 1) == NOT_INITIALIZED
    assert lib.cublasDestroy_v2(h) == NOT_INITIALIZED
    assert "was destroyed or never created" in capfd.readouterr().err


def test_emulation_checks(cu, capfd):
    lib, h = cu
    f4 = np.float32
    one = scalar(1, f4)
    A = dev(lib, np.zeros(16, f4))
    C = dev(lib, np.zeros(16, f4))
    other = dev(lib, np.zeros(16, f4), device=1)
    host = np.zeros(16, f4)
    gemm = lib.cublasSgemm_v2

    def call(a=A, c=C, m=4, lda=4, alpha=one):
        return gemm(h, N, N, m, 4, 4, alpha, ptr(a), lda, ptr(A), 4, one, ptr(c), 4)

    assert call() == SUCCESS
    assert call(lda=5) == EXECUTION_FAILED  # A's extent 3 * 5 + 4 = 19 > 16 elements
    assert "is not inside one live device allocation" in capfd.readouterr().err
    assert call(a=host) == EXECUTION_FAILED  # a host pointer as A
    assert call(a=other) == EXECUTION_FAILED  # device 1's memory on a device-0 handle
    assert "is memory of device 1" in capfd.readouterr().err
    assert call(c=A) == EXECUTION_FAILED  # C overlaps A
    assert "overlaps" in capfd.readouterr().err
    dalpha = dev(lib, np.ones(1, f4))
    assert call(alpha=ptr(dalpha)) == EXECUTION_FAILED  # device alpha in host pointer mode
    assert lib.cublasSetPointerMode_v2(h, DEVICE) == SUCCESS
    assert call(alpha=one) == EXECUTION_FAILED  # host alpha in device pointer mode
    assert lib.cublasSetPointerMode_v2(h, HOST) == SUCCESS
    lib.stub_set_device(1)
    assert call() == EXECUTION_FAILED  # the handle's device is not current
    assert "device 1 is current" in capfd.readouterr().err
    lib.stub_set_device(0)
    stream1 = ctypes.c_void_p(0x5000)
    lib.stub_add_stream(stream1, 1)
    assert lib.cublasSetStream_v2(h, stream1) == SUCCESS
    assert call() == EXECUTION_FAILED  # a stream of device 1 on a device-0 handle
    assert "belongs to device 1" in capfd.readouterr().err
    assert lib.cublasSetStream_v2(h, ctypes.c_void_p(0x6000)) == INVALID_VALUE  # unknown stream
    assert lib.cublasSetStream_v2(h, None) == SUCCESS
    assert call() == SUCCESS
    assert lib.stub_last_device() == 0


def test_strided_batched_overlapping_c(cu, capfd):
    lib, h = cu
    f4 = np.float32
    one = scalar(1, f4)
    A = dev(lib, np.zeros(64, f4))
    C = dev(lib, np.zeros(64, f4))
    sb = lib.cublasSgemmStridedBatched

    def call(sc, ldc=2, batch=3):
        return sb(h, N, N, 2, 2, 2, one, ptr(A), 2, 0, ptr(A), 2, 4, one, ptr(C), ldc, sc, batch)

    assert call(0) == EXECUTION_FAILED  # every batch writes the same C
    assert call(3) == EXECUTION_FAILED  # batch 1 starts inside batch 0's second column
    assert "overlap" in capfd.readouterr().err
    assert call(4) == SUCCESS
    assert call(2, ldc=4, batch=2) == SUCCESS  # interleaved: batch 1 in rows 2-3 of ldc-4 columns
    assert call(2, ldc=4) == EXECUTION_FAILED  # but batch 2 starts in batch 0's column 1
    assert call(0, batch=1) == SUCCESS
    assert call(30) == SUCCESS  # batch 2 is C[60:64], the last 4 elements
    assert call(31) == EXECUTION_FAILED  # batch 2 reaches past C's 64 elements
