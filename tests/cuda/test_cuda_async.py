"""The emulated device's asynchronous mode (MINITORCH_EMU_ASYNC=1, cuda/emu/runtime.cc): each
stream's work runs in order on its own worker thread, so a missing stream wait shows as wrong
data, as on a GPU. Its debug hooks (exported by the emulated build, reached with ctypes) hold a
stream's worker or make it sleep before each work, which makes the races deterministic.
Skipped on a real GPU and in the synchronous mode (`make test-cuda-emu-async` runs it)."""
import contextlib
import ctypes
import time

import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)
if not minitorch.cuda._is_emulated():
    pytest.skip("the asynchronous mode is the emulated device's", allow_module_level=True)

_lib = ctypes.CDLL(minitorch.cuda._C_cuda.__file__)
_lib.mt_emu_debug_stream_hold.argtypes = [ctypes.c_ulonglong, ctypes.c_int]
_lib.mt_emu_debug_stream_delay.argtypes = [ctypes.c_ulonglong, ctypes.c_uint]

if not _lib.mt_emu_debug_async():
    pytest.skip("the emulated device runs synchronously (MINITORCH_EMU_ASYNC=1 makes it asynchronous)",
                allow_module_level=True)

N = 1 << 12


@contextlib.contextmanager
def held(stream):
    """stream's worker starts no work inside the block (a host sync with it would hang there)."""
    assert _lib.mt_emu_debug_stream_hold(stream.cuda_stream, 1) == 0
    try:
        yield
    finally:
        assert _lib.mt_emu_debug_stream_hold(stream.cuda_stream, 0) == 0


@contextlib.contextmanager
def delayed(stream, ms):
    """stream's worker sleeps ms before each work it runs."""
    assert _lib.mt_emu_debug_stream_delay(stream.cuda_stream, int(ms * 1000)) == 0
    try:
        yield
    finally:
        assert _lib.mt_emu_debug_stream_delay(stream.cuda_stream, 0) == 0


@pytest.fixture(autouse=True)
def clean():
    minitorch.cuda.synchronize()
    yield
    minitorch.cuda.synchronize()


def two_streams():
    a, b = minitorch.cuda.Stream(), minitorch.cuda.Stream()
    assert a != b
    return a, b


def consume_on_b(wait):
    """x = 0, then on a: x += 1 (a held until b's work ran), on b: y = x * 2, waiting for a or not."""
    a, b = two_streams()
    x = minitorch.zeros(N, device="cuda")
    a.wait_stream(minitorch.cuda.current_stream())
    b.wait_stream(minitorch.cuda.current_stream())
    with held(a):
        with minitorch.cuda.stream(a):
            x.add_(1)
        assert not a.query()  # the host returned before the kernel ran
        with minitorch.cuda.stream(b):
            if wait:
                b.wait_stream(a)
            y = x * 2
        if not wait:
            b.synchronize()  # b's kernel ran while a's was still pending
        else:
            assert not b.query()  # b waits for a, which is held
    minitorch.cuda.synchronize()
    return x.cpu().numpy(), y.cpu().numpy()


def test_a_missing_stream_wait_reads_stale_data():
    x, y = consume_on_b(wait=False)
    np.testing.assert_array_equal(x, np.ones(N, np.float32))
    np.testing.assert_array_equal(y, np.zeros(N, np.float32))  # x read before a's add: the bug shows


def test_wait_stream_orders_the_consumer_after_the_producer():
    x, y = consume_on_b(wait=True)
    np.testing.assert_array_equal(x, np.ones(N, np.float32))
    np.testing.assert_array_equal(y, np.full(N, 2, np.float32))


def test_event_wait_orders_the_consumer():
    a, b = two_streams()
    x = minitorch.zeros(N, device="cuda")
    a.wait_stream(minitorch.cuda.current_stream())
    b.wait_stream(minitorch.cuda.current_stream())
    e = minitorch.cuda.Event()
    with held(a):
        with minitorch.cuda.stream(a):
            x.fill_(3.0)
            e.record()
        assert not e.query()
        b.wait_event(e)
        with minitorch.cuda.stream(b):
            y = x + 1
        assert not b.query()
    b.synchronize()
    assert e.query() and a.query() and b.query()
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(N, 4, np.float32))


def test_query_and_synchronize_follow_the_pending_work():
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    s.synchronize()
    e = minitorch.cuda.Event()
    assert s.query() and e.query()  # nothing pending, nothing recorded
    with held(s):
        with minitorch.cuda.stream(s):
            x = minitorch.ones(N, device="cuda")
            e.record()
        assert not s.query()
        assert not e.query()
    e.synchronize()
    assert e.query()
    s.synchronize()
    assert s.query()
    np.testing.assert_array_equal(x.cpu().numpy(), np.ones(N, np.float32))


def test_elapsed_time_measures_when_the_stream_ran_the_work():
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    start, end = minitorch.cuda.Event(enable_timing=True), minitorch.cuda.Event(enable_timing=True)
    x = minitorch.ones(N, device="cuda")
    minitorch.cuda.synchronize()
    with delayed(s, 100):
        t0 = time.perf_counter()
        with minitorch.cuda.stream(s):
            start.record()
            x.mul_(2)  # its kernel starts 100 ms after the start record ran, the end 100 ms later
            end.record()
        host_ms = (time.perf_counter() - t0) * 1e3
        assert host_ms < 100  # the host did not wait for the stream
        end.synchronize()
    ms = start.elapsed_time(end)
    assert ms >= 200
    np.testing.assert_array_equal(x.cpu().numpy(), np.full(N, 2, np.float32))


def test_elapsed_time_before_the_events_ran_fails():
    s = minitorch.cuda.Stream()
    start, end = minitorch.cuda.Event(enable_timing=True), minitorch.cuda.Event(enable_timing=True)
    with held(s):
        start.record(s)
        end.record(s)
        with pytest.raises(RuntimeError, match="not ready"):
            start.elapsed_time(end)
    end.synchronize()
    assert start.elapsed_time(end) >= 0


def test_the_default_stream_waits_for_blocking_streams():
    """CUDA's legacy default stream: a copy to the host waits for the pool streams' work."""
    s = minitorch.cuda.Stream()
    x = minitorch.zeros(N, device="cuda")
    s.wait_stream(minitorch.cuda.current_stream())
    with delayed(s, 30):
        with minitorch.cuda.stream(s):
            x.add_(5)
    np.testing.assert_array_equal(x.cpu().numpy(), np.full(N, 5, np.float32))


def test_launch_arguments_are_copied_at_the_launch():
    """Each launch keeps its own scalar: queued fills of different values do not share one."""
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    xs = [minitorch.empty(N, device="cuda") for _ in range(4)]
    with held(s):
        with minitorch.cuda.stream(s):
            for i, x in enumerate(xs):
                x.fill_(float(i))
    s.synchronize()
    for i, x in enumerate(xs):
        np.testing.assert_array_equal(x.cpu().numpy(), np.full(N, i, np.float32))


def free_and_reuse(record):
    """x made on a, read on b (held), freed, then a new block on a written at once: record_stream
    keeps x's block from being handed out while b's read is pending."""
    a, b = two_streams()
    minitorch.cuda.synchronize()
    minitorch.cuda.empty_cache()
    with minitorch.cuda.stream(a):
        x = minitorch.ones(N, device="cuda")
    b.wait_stream(a)
    with held(b):
        with minitorch.cuda.stream(b):
            y = x * 2
        if record:
            x.record_stream(b)
        ptr = x.data_ptr()
        del x
        with minitorch.cuda.stream(a):
            z = minitorch.full((N,), 7.0, device="cuda")
        a.synchronize()  # z written while b's read of x's block is still pending
        reused = z.data_ptr() == ptr
    b.synchronize()
    return reused, y.cpu().numpy()


def test_record_stream_keeps_a_block_from_reuse_while_a_stream_reads_it():
    reused, y = free_and_reuse(record=True)
    assert not reused
    np.testing.assert_array_equal(y, np.full(N, 2, np.float32))


def test_without_record_stream_the_reused_block_is_overwritten_under_the_reader():
    reused, y = free_and_reuse(record=False)
    assert reused  # the allocator handed x's block to a at once: a's stream order only
    np.testing.assert_array_equal(y, np.full(N, 14, np.float32))  # b read a's 7s: the bug shows


def test_library_calls_are_stream_ordered():
    """cuBLAS on a stream runs after the stream's earlier kernels (here delayed)."""
    s = minitorch.cuda.Stream()
    a = minitorch.zeros((8, 8), device="cuda")
    eye = minitorch.eye(8, device="cuda")
    s.wait_stream(minitorch.cuda.current_stream())
    with delayed(s, 20):
        with minitorch.cuda.stream(s):
            a.fill_(2.0)
            c = a @ eye
    s.synchronize()
    np.testing.assert_array_equal(c.cpu().numpy(), np.full((8, 8), 2, np.float32))


def library_calls_on_held_stream(wait):
    """On a held: x = 1 then a cuBLAS product and a cuDNN convolution of it (queued like kernels:
    the host returns with a still held); on b, waiting for a or not, the same product."""
    import minitorch.nn.functional as F

    a, b = two_streams()
    x = minitorch.zeros((8, 8), device="cuda")
    eye = minitorch.eye(8, device="cuda")
    w = minitorch.ones((1, 1, 1, 1), device="cuda")
    a.wait_stream(minitorch.cuda.current_stream())
    b.wait_stream(minitorch.cuda.current_stream())
    with held(a):
        with minitorch.cuda.stream(a):
            x.fill_(1.0)
            c = x @ eye  # cublasSgemm: queued after the fill
            d = F.conv2d(x[None, None], w)  # cudnnConvolutionForward: queued too
        assert not a.query()  # the host returned before the library work ran
        with minitorch.cuda.stream(b):
            if wait:
                b.wait_stream(a)
            e = x @ eye
        if not wait:
            b.synchronize()  # b's product ran while a's fill was pending
    minitorch.cuda.synchronize()
    return c.cpu().numpy(), d.cpu().numpy(), e.cpu().numpy()


def test_library_calls_are_queued_on_their_stream():
    c, d, e = library_calls_on_held_stream(wait=True)
    np.testing.assert_array_equal(c, np.ones((8, 8), np.float32))
    np.testing.assert_array_equal(d, np.ones((1, 1, 8, 8), np.float32))
    np.testing.assert_array_equal(e, np.ones((8, 8), np.float32))


def test_a_missing_wait_before_a_library_call_reads_stale_data():
    c, _, e = library_calls_on_held_stream(wait=False)
    np.testing.assert_array_equal(c, np.ones((8, 8), np.float32))
    np.testing.assert_array_equal(e, np.zeros((8, 8), np.float32))  # x read before a's fill
