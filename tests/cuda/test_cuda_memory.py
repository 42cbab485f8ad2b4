"""The caching allocator on a real device, and streams and events (skipped without a GPU; the
allocator's rules are tested over host memory in tests/alloc/)."""
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

MiB = 1 << 20


@pytest.fixture(autouse=True)
def clean():
    minitorch.cuda.synchronize()
    minitorch.cuda.empty_cache()
    yield


def test_stats_follow_allocations_and_the_cache_serves_the_second():
    base = minitorch.cuda.memory_allocated()
    x = minitorch.empty(MiB // 4, device="cuda")  # 1 MiB: small pool, a 2 MiB segment
    assert minitorch.cuda.memory_allocated() - base == MiB
    assert minitorch.cuda.memory_reserved() >= 2 * MiB
    stats = minitorch.cuda.memory_stats()
    assert stats["allocation.all.current"] >= 1 and stats["segment.small_pool.current"] >= 1
    segments = stats["num_device_alloc"]
    del x
    assert minitorch.cuda.memory_allocated() == base
    y = minitorch.empty(MiB // 4, device="cuda")
    assert minitorch.cuda.memory_stats()["num_device_alloc"] == segments  # served by the cache
    assert minitorch.cuda.max_memory_allocated() >= base + MiB
    del y


def test_empty_cache_gives_segments_back_and_reset_peak():
    x = minitorch.empty(64 * MiB // 4, device="cuda")
    del x
    assert minitorch.cuda.memory_reserved() >= 64 * MiB
    minitorch.cuda.empty_cache()
    assert minitorch.cuda.memory_reserved() == minitorch.cuda.memory_stats()["reserved_bytes.all.current"]
    assert minitorch.cuda.memory_reserved() < 64 * MiB
    minitorch.cuda.reset_peak_memory_stats()
    assert minitorch.cuda.max_memory_allocated() == minitorch.cuda.memory_allocated()
    assert "PyTorch CUDA memory summary, device ID 0" in minitorch.cuda.memory_summary()


def test_oom_raises_and_the_process_stays_usable():
    before = minitorch.cuda.memory_stats()
    with pytest.raises(minitorch.cuda.OutOfMemoryError) as e:
        minitorch.empty(1 << 48, device="cuda")  # 1 PiB of floats
    msg = str(e.value)
    assert msg.startswith("CUDA out of memory. Tried to allocate ") and "GPU 0 has a total capacity of" in msg
    assert "reserved by PyTorch but unallocated" in msg
    stats = minitorch.cuda.memory_stats()
    assert stats["num_ooms"] == before["num_ooms"] + 1
    assert stats["num_alloc_retries"] == before["num_alloc_retries"] + 1
    x = minitorch.ones(1000, device="cuda")
    assert float(x.sum().cpu().numpy()) == 1000.0


def test_record_stream_keeps_the_block_until_the_stream_is_done():
    s = minitorch.cuda.Stream()
    x = minitorch.empty(MiB // 4, device="cuda")
    ptr = x.data_ptr()
    with minitorch.cuda.stream(s):
        for _ in range(20):
            x.add_(1)  # work on s that uses the block
    x.record_stream(s)
    x[2:].record_stream(s)  # a view names the same block
    allocated = minitorch.cuda.memory_allocated()
    del x
    assert minitorch.cuda.memory_allocated() == allocated - MiB  # freed, though maybe not reusable yet
    s.synchronize()
    z = minitorch.empty(MiB // 4, device="cuda")  # s's event has passed: the block is back
    assert z.data_ptr() == ptr
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        z.record_stream(None)


def test_raw_caching_allocator_alloc():
    p = minitorch.cuda.caching_allocator_alloc(4096)
    assert p != 0 and minitorch.cuda.memory_allocated() >= 4096
    minitorch.cuda.caching_allocator_delete(p)
    with pytest.raises(minitorch.cuda.OutOfMemoryError, match="CUDA out of memory"):
        minitorch.cuda.caching_allocator_alloc(1 << 60)  # 1 EiB: no device has it
    p = minitorch.cuda.caching_allocator_alloc(4096)  # still usable
    minitorch.cuda.caching_allocator_delete(p)
    with pytest.raises(ValueError, match="size must be non-negative, got -1"):
        minitorch.cuda.caching_allocator_alloc(-1)
    with pytest.raises(TypeError):
        minitorch.cuda.caching_allocator_alloc(4096.0)


def test_stream_context_changes_current_stream():
    default = minitorch.cuda.current_stream()
    assert default == minitorch.cuda.default_stream() and default.cuda_stream == 0
    s = minitorch.cuda.Stream(priority=-1)
    assert s.cuda_stream != 0
    with minitorch.cuda.stream(s):
        assert minitorch.cuda.current_stream() == s
        x = minitorch.ones(1 << 20, device="cuda") * 2  # a kernel on s
        s.synchronize()
        assert s.query()
    assert minitorch.cuda.current_stream() == default
    assert float(x.sum().cpu().numpy()) == 2.0 * (1 << 20)


def test_events_time_and_order_streams():
    start, end = minitorch.cuda.Event(enable_timing=True), minitorch.cuda.Event(enable_timing=True)
    a = minitorch.ones(4 << 20, device="cuda")
    start.record()
    for _ in range(10):
        a = a + 1
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms > 0
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    with minitorch.cuda.stream(s):
        b = a * 2
    ev = s.record_event()
    ev.wait()  # the current stream waits for b
    assert float(b.cpu().numpy()[0]) == 22.0
    with pytest.raises(ValueError, match="Both events must be recorded"):
        minitorch.cuda.Event(enable_timing=True).elapsed_time(end)
