"""DLPack on CUDA (skipped without a GPU): zero-copy round trips with minitorch itself, PyTorch
and CuPy (each where it has CUDA), every dtype, non-contiguous views, both capsule kinds, the
deleter running exactly once, imported memory staying out of the caching allocator, the stream
protocol both ways, dl_device/copy/device=, and PyTorch's errors."""
import gc

import numpy as np
import pytest

import minitorch
from helpers import dlpack_sample, dlpack_stats

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

try:
    import torch

    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None

# The emulated device's memory is host memory in a registry of its own: PyTorch's and CuPy's
# CUDA cannot touch it, so the interop tests need a real GPU.
EMULATED = minitorch.cuda._is_emulated()
REAL_GPU_ONLY = "needs a real GPU: the emulated device's memory is not CUDA memory to PyTorch or CuPy"
needs_torch = pytest.mark.skipif(torch is None or EMULATED,
                                 reason=REAL_GPU_ONLY if EMULATED else "PyTorch with CUDA is not installed")
needs_cupy = pytest.mark.skipif(cupy is None or EMULATED, reason=REAL_GPU_ONLY if EMULATED else "CuPy is not installed")
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
# elements: a few kernels over it take long enough for a missing wait to show (the emulated
# device runs each kernel to its end before the launch returns: any size shows the order)
BIG = 1 << 16 if EMULATED else 1 << 24


def cuda_views(dtype):
    """(layout, minitorch CUDA tensor, its values) for a contiguous, a transposed and a sliced view."""
    a = dlpack_sample(dtype, (4, 6))
    t = minitorch.tensor(a, device="cuda")
    yield "contiguous", t, a
    yield "transposed", t.t(), a.T
    yield "sliced", t[1:, ::2], a[1:, ::2]


@pytest.fixture(autouse=True)
def clean():
    minitorch.cuda.synchronize()
    yield
    minitorch.cuda.synchronize()


def test_device_and_capsule_kinds():
    t = minitorch.ones(2, device="cuda")
    assert t.__dlpack_device__() == (2, t.device.index or 0)
    assert 'dltensor"' in repr(t.__dlpack__())
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(1, 0)))


@pytest.mark.parametrize("max_version", [None, (1, 0)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_minitorch_round_trip_zero_copy(dtype, max_version):
    for _, t, a in cuda_views(dtype):
        m = minitorch.from_dlpack(t.__dlpack__(max_version=max_version))
        assert m.device == t.device and m.dtype == t.dtype
        assert m.data_ptr() == t.data_ptr() and tuple(m.shape) == a.shape
        for d, size in enumerate(a.shape):
            if size > 1:
                assert m.stride(d) == t.stride(d)
        np.testing.assert_array_equal(m.cpu().numpy(), a)
        assert minitorch.from_dlpack(t).data_ptr() == t.data_ptr()  # through the protocol too


def test_writes_visible_both_ways_and_ops_on_imports():
    t = minitorch.zeros(3, 4, device="cuda")
    m = minitorch.from_dlpack(t[:, 1:])
    m.add_(2)
    assert float(t.sum().cpu().numpy()) == 2 * 9
    t[0, 1] = 7
    assert float(m[0, 0].cpu().numpy()) == 7
    r = (m * 3 + m).sum(1)  # ops on imported memory
    np.testing.assert_allclose(r.cpu().numpy(), [4 * (7 + 2 + 2), 4 * 6, 4 * 6])


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_deleter_runs_exactly_once(max_version):
    before = dlpack_stats()
    t = minitorch.arange(6.0, device="cuda")
    t.__dlpack__(max_version=max_version)  # dropped unconsumed: the capsule's destructor runs it
    m = minitorch.from_dlpack(t.__dlpack__(max_version=max_version))
    views = [m[1:], m[::2]]
    others = [torch.from_dlpack(t)] if torch is not None else []
    if cupy is not None:
        others.append(cupy.from_dlpack(t))
    mid = dlpack_stats()
    assert mid["exported"] - before["exported"] == 2 + len(others)
    assert mid["deleted"] - before["deleted"] == 1
    del m
    assert dlpack_stats()["deleted"] - before["deleted"] == 1  # the views still hold it
    del views, others
    after = dlpack_stats()
    assert after["exported"] - before["exported"] == after["deleted"] - before["deleted"]
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(6.0))


def test_imported_memory_is_not_the_caching_allocators():
    x = minitorch.empty(1 << 18, device="cuda")  # 1 MiB
    allocated = minitorch.cuda.memory_allocated()
    m = minitorch.from_dlpack(x)
    assert minitorch.cuda.memory_allocated() == allocated  # no block for the import
    assert minitorch._C._dlpack_is_imported(m) and not minitorch._C._dlpack_is_imported(x)
    m.record_stream(minitorch.cuda.Stream())  # harmless: no block of the allocator to hold
    m[1:].record_stream(minitorch.cuda.Stream())
    del x
    assert minitorch.cuda.memory_allocated() == allocated  # the import keeps the producer's block
    m.fill_(1)
    del m
    gc.collect()
    # the import's free ran the producer's deleter, whose release gave the block back once
    assert minitorch.cuda.memory_allocated() == allocated - (1 << 20)
    minitorch.cuda.empty_cache()


def test_copy_and_dl_device():
    t = minitorch.arange(6.0, device="cuda").view(2, 3)
    c = minitorch.from_dlpack(t.__dlpack__(max_version=(1, 0), copy=True))
    assert c.device == t.device and c.data_ptr() != t.data_ptr()
    assert minitorch.from_dlpack(t, copy=True).data_ptr() != t.data_ptr()
    assert minitorch.from_dlpack(t, copy=False).data_ptr() == t.data_ptr()
    same = minitorch.from_dlpack(t.__dlpack__(dl_device=(2, t.device.index or 0)))
    assert same.data_ptr() == t.data_ptr()
    host = minitorch.from_dlpack(t.__dlpack__(dl_device=(1, 0)))  # a host copy, as PyTorch 2.13
    assert host.device == minitorch.device("cpu")
    np.testing.assert_array_equal(host.numpy(), np.arange(6.0).reshape(2, 3))

    class HostView:  # a consumer asking for the host copy, as NumPy's from_dlpack(device="cpu")
        def __dlpack__(self, **kw):
            return t.__dlpack__(dl_device=(1, 0), max_version=kw.get("max_version"))

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.from_dlpack(HostView()), np.arange(6.0).reshape(2, 3))
    back = minitorch.from_dlpack(host.__dlpack__(dl_device=(2, 0)))  # and a device copy
    assert back.device == minitorch.device("cuda", 0)
    np.testing.assert_array_equal(back.cpu().numpy(), host.numpy())


def test_from_dlpack_device():
    t = minitorch.arange(4.0, device="cuda")
    assert minitorch.from_dlpack(t, device="cuda").data_ptr() == t.data_ptr()
    assert minitorch.from_dlpack(t, device="cuda:0", copy=True).data_ptr() != t.data_ptr()
    h = minitorch.from_dlpack(t, device="cpu")
    assert h.device == minitorch.device("cpu")
    np.testing.assert_array_equal(h.numpy(), np.arange(4.0))
    a = np.arange(3.0)
    d = minitorch.from_dlpack(a, device=minitorch.device("cuda", 0))
    assert d.device == minitorch.device("cuda", 0)
    np.testing.assert_array_equal(d.cpu().numpy(), a)
    with pytest.raises(ValueError, match=r"cannot move DLPack tensor from device \(2, 0\) to "
                                         r"\(1, 0\) without copying"):
        minitorch.from_dlpack(t, device="cpu", copy=False)


def test_errors():
    t = minitorch.ones(2, device="cuda")
    libs = [minitorch] + ([torch] if torch is not None else [])
    for lib in libs:
        x = lib.ones(2, device="cuda")
        with pytest.raises(AssertionError, match=r"unsupported stream on CUDA: 0\."):
            x.__dlpack__(stream=0)
        with pytest.raises(BufferError, match="require gradient"):
            lib.ones(2, device="cuda", requires_grad=True).__dlpack__(stream=0)
        with pytest.raises(ValueError, match=r"cannot move \(i.e. copy=False\) tensor from cuda:0 "
                                             r"to cpu without copying\."):
            x.__dlpack__(dl_device=(1, 0), copy=False)
        with pytest.raises(TypeError, match="stream must be"):
            x.__dlpack__(stream=1.5)
    with pytest.raises(AssertionError, match="unsupported stream on CUDA: -3"):
        t.__dlpack__(stream=-3)
    with pytest.raises(BufferError, match="Unsupported device_type: 7"):
        t.__dlpack__(dl_device=(7, 0))
    with pytest.raises(BufferError, match="per-thread default stream is not supported."):
        t.__dlpack__(stream=2)
    # NumPy refuses a CUDA capsule and drops it with its error set: the capsule's destructor keeps
    # that error (it used to clear it: SystemError "returned NULL without setting an exception")
    with pytest.raises(RuntimeError, match="Unsupported device in DLTensor"):
        np.from_dlpack(t)
    for s in (None, -1, 1):  # legacy default, no sync, legacy default
        assert minitorch.from_dlpack(t.__dlpack__(stream=s)).data_ptr() == t.data_ptr()

    class Elsewhere:  # a producer whose memory is on a device this machine does not have
        def __dlpack_device__(self):
            return (2, minitorch.cuda.device_count())

        def __dlpack__(self, **kwargs):
            raise AssertionError("not asked: the device is refused first")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        minitorch.from_dlpack(Elsewhere())


@pytest.mark.skipif(minitorch.cuda.device_count() < 2, reason="needs two devices")
def test_export_from_another_device_than_the_current_one():
    t = minitorch.ones(2, device="cuda:1")
    with pytest.raises(BufferError, match="Can't export tensors on a different CUDA device index. "
                                          "Expected: 1. Current device: 0."):
        t.__dlpack__()


def pending_work(value_from=0.0, n=30):
    """A big tensor and n kernels queued on the current stream that make every element n."""
    x = minitorch.full((BIG,), value_from, device="cuda")
    for _ in range(n):
        x.add_(1)
    return x


def test_export_makes_the_consumer_stream_wait():
    # Pool streams are blocking, so they sync with the legacy stream but not with each other:
    # the consumer's stream b sees a's pending work only through the wait __dlpack__ queues.
    a, b = minitorch.cuda.Stream(), minitorch.cuda.Stream()
    assert a != b
    with minitorch.cuda.stream(a):
        x = pending_work()
        cap = x.__dlpack__(stream=b.cuda_stream, max_version=(1, 0))
    with minitorch.cuda.stream(b):
        m = minitorch.from_dlpack(cap)
        lo = m.min()
    b.synchronize()
    assert float(lo.cpu().numpy()) == 30
    a.synchronize()


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_round_trip_zero_copy(dtype):
    for _, t, a in cuda_views(dtype):
        p = torch.from_dlpack(t)
        assert p.is_cuda and p.data_ptr() == t.data_ptr()
        assert str(p.dtype).split(".")[1] == dtype
        np.testing.assert_array_equal(p.cpu().numpy(), a)
        m = minitorch.from_dlpack(p)
        assert m.data_ptr() == p.data_ptr() and m.device == t.device
        np.testing.assert_array_equal(m.cpu().numpy(), a)
    q = torch.zeros(3, 4, device="cuda")
    m = minitorch.from_dlpack(q.t()[1:])
    assert m.stride() == q.t()[1:].stride()
    m.add_(5)
    torch.cuda.synchronize()
    assert float(q.sum()) == 5 * 9
    q[1, 1] = 9
    assert float(m[0, 1].cpu().numpy()) == 9


@needs_torch
def test_torch_deleter_runs_once_and_memory_is_not_ours():
    ours = minitorch.cuda.memory_allocated()
    p = torch.ones(1 << 20, device="cuda")
    theirs = torch.cuda.memory_allocated()
    ptr = p.data_ptr()
    m = minitorch.from_dlpack(p)
    assert minitorch.cuda.memory_allocated() == ours
    m.record_stream(minitorch.cuda.Stream())
    del p
    gc.collect()
    assert torch.cuda.memory_allocated() == theirs  # minitorch holds it
    assert float(m.sum().cpu().numpy()) == 1 << 20 and m.data_ptr() == ptr
    del m
    gc.collect()
    assert torch.cuda.memory_allocated() == theirs - 4 * (1 << 20)
    assert minitorch.cuda.memory_allocated() == ours


@needs_torch
def test_export_to_a_torch_side_stream_waits_for_our_work():
    side = torch.cuda.Stream()  # non-blocking: only the wait orders it after our stream
    x = pending_work()
    with torch.cuda.stream(side):
        p = torch.from_dlpack(x)  # passes side's handle as stream=
        lo = p.min()
    side.synchronize()
    assert float(lo) == 30
    s = minitorch.cuda.Stream()  # our current stream a pool stream: the event is recorded there
    with minitorch.cuda.stream(s):
        y = pending_work()
        with torch.cuda.stream(side):
            lo = torch.from_dlpack(y).min()
    side.synchronize()
    assert float(lo) == 30


@needs_torch
def test_import_from_a_torch_side_stream():
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        p = torch.zeros(BIG, device="cuda")
        for _ in range(30):
            p.add_(1)
        m = minitorch.from_dlpack(p)  # torch makes our (legacy) stream wait for side
    assert float(m.min().cpu().numpy()) == 30
    s = minitorch.cuda.Stream()
    with torch.cuda.stream(side):
        q = torch.zeros(BIG, device="cuda")
        for _ in range(30):
            q.add_(1)
        with minitorch.cuda.stream(s):
            n = minitorch.from_dlpack(q)  # our current stream s is the one passed
            lo = n.min()
    s.synchronize()
    assert float(lo.cpu().numpy()) == 30
    side.synchronize()


@needs_cupy
@pytest.mark.parametrize("dtype", DTYPES)
def test_cupy_round_trip_zero_copy(dtype):
    for _, t, a in cuda_views(dtype):
        c = cupy.from_dlpack(t)
        assert c.data.ptr == t.data_ptr() and c.dtype == a.dtype
        np.testing.assert_array_equal(cupy.asnumpy(c), a)
        m = minitorch.from_dlpack(c)
        assert m.data_ptr() == t.data_ptr()
        np.testing.assert_array_equal(m.cpu().numpy(), a)
    c = cupy.zeros((3, 4), dtype=cupy.float32)
    m = minitorch.from_dlpack(c[:, 1:])
    m.add_(1)
    minitorch.cuda.synchronize()
    assert float(c.sum()) == 9
    c[0, 1] = 4
    cupy.cuda.Device().synchronize()
    assert float(m[0, 0].cpu().numpy()) == 4


@needs_cupy
def test_cupy_streams():
    side = cupy.cuda.Stream(non_blocking=True)
    x = pending_work()
    with side:
        lo = cupy.from_dlpack(x).min()  # CuPy passes side as stream=
    side.synchronize()
    assert float(lo) == 30
    with side:
        c = cupy.zeros(BIG, dtype=cupy.float32)
        for _ in range(30):
            c += 1
        m = minitorch.from_dlpack(c)  # CuPy makes our legacy stream wait for side
    assert float(m.min().cpu().numpy()) == 30
    side.synchronize()
