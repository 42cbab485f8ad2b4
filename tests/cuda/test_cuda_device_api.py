"""torch.cuda's device questions and memory knobs on the device (the emulated one under
MINITORCH_CUDA_EMU=1): get_device_properties/capability, is_bf16/tf32_supported, init, the
deprecated memory names, set/get_per_process_memory_fraction enforced by the caching allocator,
and nvtx ranges in the profiler. Without a device, see tests/core/test_cuda_absent_api.py."""
import warnings

import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

MiB = 1 << 20
cuda = minitorch.cuda


def test_device_properties():
    p = cuda.get_device_properties()
    assert p.name == cuda.get_device_name()
    assert p.total_memory == cuda.mem_get_info()[1] and p.total_memory > 0
    assert p.major >= 1 and p.minor >= 0 and p.multi_processor_count >= 1
    assert cuda.get_device_properties(0).name == cuda.get_device_properties("cuda:0").name
    assert cuda.get_device_capability() == (p.major, p.minor)
    assert f"major={p.major}, minor={p.minor}" in repr(p) and p.name in repr(p)
    if cuda._is_emulated():  # the emulator answers as an H200 would
        assert (p.major, p.minor, p.multi_processor_count) == (9, 0, 132)
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(cuda.device_count())
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.get_device_properties("cpu")


def test_bf16_tf32_init():
    cuda.init()
    major = cuda.get_device_capability()[0]
    assert cuda.is_bf16_supported() is True
    assert cuda.is_bf16_supported(including_emulation=False) is (major >= 8)
    assert cuda.is_tf32_supported() is (major >= 8)


def test_deprecated_memory_names():
    x = minitorch.empty(MiB // 4, device="cuda")
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.memory_reserved`"):
        assert cuda.memory_cached() == cuda.memory_reserved() > 0
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.max_memory_reserved`"):
        assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    del x
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls"):
        cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    y = minitorch.empty(MiB, device="cuda")
    del y
    with pytest.warns(FutureWarning, match="reset_max_memory_cached now calls"):
        cuda.reset_max_memory_cached()
    assert cuda.max_memory_reserved() == cuda.memory_reserved()


def test_memory_fraction_is_enforced():
    cuda.synchronize()
    cuda.empty_cache()
    total = cuda.get_device_properties().total_memory
    assert cuda.get_per_process_memory_fraction() == 1.0
    try:
        fraction = 64 * MiB / total
        cuda.set_per_process_memory_fraction(fraction)
        assert cuda.get_per_process_memory_fraction() == pytest.approx(fraction)
        keep = minitorch.empty(32 * MiB // 4, device="cuda")  # 32 MiB: within the 64 allowed
        with pytest.raises(cuda.OutOfMemoryError, match=r"Tried to allocate 40\.00 MiB.*64\.00 MiB allowed; "):
            minitorch.empty(40 * MiB // 4, device="cuda")
        del keep
        cuda.empty_cache()
        minitorch.empty(40 * MiB // 4, device="cuda")  # alone it fits
        # the cache is given back before the limit refuses: a freed segment makes room
        a = minitorch.empty(40 * MiB // 4, device="cuda")
        del a
        b = minitorch.empty(48 * MiB // 4, device="cuda")
        del b
    finally:
        cuda.set_per_process_memory_fraction(1.0)
        cuda.empty_cache()
    minitorch.empty(80 * MiB // 4, device="cuda")


def test_memory_fraction_errors():
    with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
        cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1.5. Allowed range: 0~1"):
        cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(ValueError, match=r"Invalid fraction value: -0.1"):
        cuda.set_per_process_memory_fraction(-0.1)


def test_nvtx_ranges_in_the_profiler():
    nvtx = cuda.nvtx
    assert nvtx.range_pop() == -1
    with minitorch.profiler.profile() as prof:
        assert nvtx.range_push("outer") == 0
        assert nvtx.range_push("inner") == 1
        minitorch.ones(3) + 1
        assert nvtx.range_pop() == 1
        assert nvtx.range_pop() == 0
        rid = nvtx.range_start("started")
        nvtx.range_end(rid)
        nvtx.mark("instant")
        with nvtx.range("block {}", 7):
            minitorch.ones(2) * 2

        @nvtx.range("decorated")
        def f():
            return 1

        assert f() == 1
    names = {e.name for e in prof.events()}
    assert {"outer", "inner", "started", "instant", "block 7", "decorated"} <= names
    outer = next(e for e in prof.events() if e.name == "outer")
    inner = next(e for e in prof.events() if e.name == "inner")
    assert outer.start_ns <= inner.start_ns and inner.end_ns <= outer.end_ns


def test_generic_stream_and_event_on_cuda():
    s = minitorch.Stream()
    assert s.device == minitorch.device("cuda", cuda.current_device()) and s.device_type == 1
    x = minitorch.ones(1000, device="cuda")
    with s:
        assert cuda.current_stream().cuda_stream == s.stream_id
        y = x * 2
    start, end = minitorch.Event(enable_timing=True), minitorch.Event(enable_timing=True)
    start.record(s)
    with s:
        y = y + 1
    end.record(s)
    end.synchronize()
    assert s.query() and end.query() and start.elapsed_time(end) >= 0
    other = minitorch.Stream("cuda", priority=-1)
    other.wait_stream(s)
    other.wait_event(end)
    e = other.record_event()
    e.wait(s)
    s.synchronize()
    assert float(y.sum()) == 3000.0
    assert s == s and s != other and "device_type=cuda" in repr(s)
    assert "device_type=cuda" in repr(e)
