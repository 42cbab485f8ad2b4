"""The CUDA backend as far as a machine without a GPU can check it: the package imports, the
C API capsule exists, _C_cuda is built where a toolkit is (and loads, or says why not), and CUDA
requests fail with PyTorch's exception classes."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

import pytest

import minitorch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_capsule_exists():
    assert type(minitorch._C._C_API).__name__ == "PyCapsule"
    assert "minitorch._C._C_API" in repr(minitorch._C._C_API)


def has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(not (os.environ.get("CUDA_HOME") or shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                    reason="no CUDA toolkit here: _C_cuda is not built")
def test_cuda_extension_was_built_and_loads_or_says_why():
    # setup.py builds _C_cuda where a toolkit and the driver are, or wherever MINITORCH_CUDA=1 (CI)
    if os.environ.get("MINITORCH_CUDA") == "0":
        pytest.skip("MINITORCH_CUDA=0")
    if os.environ.get("MINITORCH_CUDA") != "1" and not has_driver():
        pytest.skip("a CUDA toolkit but no NVIDIA driver: _C_cuda is built only with MINITORCH_CUDA=1")
    assert minitorch.cuda.is_built(), minitorch.cuda._unavailable_reason()
    assert minitorch._C._dispatch_table("add").get("CUDA") == "mt_cuda_add"


def test_unavailable_has_a_reason():
    if minitorch.cuda.is_available():
        assert minitorch.cuda._unavailable_reason() is None
        return
    why = minitorch.cuda._unavailable_reason()
    assert isinstance(why, str) and why
    assert minitorch.cuda.device_count() == 0
    if not minitorch.cuda.is_built():  # a CPU-only build (make test-cpu) says so, and what to do
        assert why.startswith("minitorch was built without CUDA") and "MINITORCH_CUDA_EMU=1" in why, why


def expected_error():
    """PyTorch's: AssertionError on a build without CUDA, RuntimeError with CUDA's words else."""
    if not minitorch.cuda.is_built():
        return AssertionError, "minitorch not compiled with CUDA enabled"
    return RuntimeError, minitorch.cuda._unavailable_reason()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("make", [
    lambda: minitorch.zeros(2, device="cuda"),
    lambda: minitorch.ones(2).cuda(),
    lambda: minitorch.ones(2).to("cuda:0"),
    lambda: minitorch.empty(0, device=minitorch.device("cuda", 0)),
    lambda: minitorch.nn.Linear(2, 2).to("cuda"),
    lambda: minitorch.cuda.current_device(),
    lambda: minitorch.cuda.synchronize(),
    lambda: minitorch.cuda.get_device_name(),
    lambda: minitorch.cuda.device(0).__enter__(),
])
def test_cuda_requests_raise_pytorchs_class(make):
    cls, words = expected_error()
    with pytest.raises(cls) as e:
        make()
    assert words in str(e.value)


def test_without_the_backend_it_is_pytorchs_assertion():
    # A fresh interpreter where _C_cuda cannot be imported: a CPU-only build.
    code = ("import sys; sys.modules['minitorch._C_cuda'] = None\n"
            "import minitorch\n"
            "assert not minitorch.cuda.is_available() and minitorch.cuda.device_count() == 0\n"
            "assert 'MINITORCH_CUDA_EMU=1' in minitorch.cuda._unavailable_reason()\n"
            "try:\n    minitorch.zeros(1, device='cuda')\nexcept AssertionError as e:\n"
            "    assert str(e) == 'minitorch not compiled with CUDA enabled', e\n"
            "else:\n    raise SystemExit('no error')\n"
            "try:\n    minitorch.cuda.current_device()\nexcept AssertionError:\n    pass\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)


@pytest.mark.skipif(not minitorch.cuda.is_built() or minitorch.cuda.is_available() or has_driver(),
                    reason="needs the CUDA backend built on a machine with no NVIDIA driver")
def test_no_driver_is_said_in_pytorchs_words():
    # cudart calls a missing driver an insufficient one ("CUDA driver version is insufficient for
    # CUDA runtime version"); PyTorch, like us, asks the driver's version to say what is wrong.
    why = minitorch.cuda._unavailable_reason()
    assert why.startswith("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                          "and installed a driver from http://www.nvidia.com/Download/index.aspx"), why
    assert "insufficient" not in why and "MINITORCH_CUDA_EMU=1" in why
    with pytest.raises(RuntimeError, match="^Found no NVIDIA driver on your system"):
        minitorch.ones(1).cuda()


def test_cuda_devices_parse():
    d = minitorch.device("cuda:1")
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    assert minitorch.device("cuda") == minitorch.device("cuda")
    assert issubclass(minitorch.cuda.OutOfMemoryError, RuntimeError)


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a GPU is present")
def test_memory_functions_without_a_device_are_pytorchs():
    c = minitorch.cuda
    assert not c.is_initialized()
    for f in (c.memory_allocated, c.max_memory_allocated, c.memory_reserved, c.max_memory_reserved):
        assert f() == 0 and f(0) == 0
    assert c.memory_stats() == {} and type(c.memory_stats()).__name__ == "OrderedDict"
    assert c.empty_cache() is None
    with pytest.raises(KeyError, match="allocated_bytes.all.current"):
        c.memory_summary()  # PyTorch's too: its stats are empty before CUDA is initialised
    cls, words = expected_error()
    if not c.is_built():
        cls, words = AttributeError, "_cuda_resetPeakMemoryStats"
    with pytest.raises(cls, match=re.escape(words)):
        c.reset_peak_memory_stats()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("make", [
    lambda: minitorch.cuda.Stream(),
    lambda: minitorch.cuda.current_stream(),
    lambda: minitorch.cuda.default_stream(),
    lambda: minitorch.cuda.Event(enable_timing=True).record(),
    lambda: minitorch.cuda.caching_allocator_alloc(16),
])
def test_streams_and_events_without_a_device_raise(make):
    cls, words = expected_error()
    match = re.escape(words)
    if not minitorch.cuda.is_built():
        match = None  # Stream/Event say "requires CUDA support" / "dummy base class", others assert
        cls = (RuntimeError, AssertionError)
    with pytest.raises(cls, match=match):
        make()


def test_stream_context_of_none_and_record_stream_type():
    with minitorch.cuda.stream(None):
        pass
    assert minitorch.cuda.StreamContext(None).stream is None
    with pytest.raises(RuntimeError, match="unknown parameter type"):
        minitorch.ones(2).record_stream(None)


def test_memory_summary_is_pytorchs_table():
    torch = pytest.importorskip("torch")
    from unittest import mock

    import minitorch.cuda.memory as mm
    stats = minitorch._C._HostCachingAllocator().memory_stats()
    for k, v in zip(sorted(stats), [0, 7, 900_000, 3 << 30, 10**6, 5 << 40] * 100):
        stats[k] = v
    with mock.patch.object(torch.cuda.memory, "memory_stats", lambda device=None: stats):
        want = torch.cuda.memory.memory_summary(0) + torch.cuda.memory.memory_summary(0, abbreviated=True)
    with mock.patch.object(mm, "memory_stats", lambda device=None: stats):
        got = mm.memory_summary(0) + mm.memory_summary(0, abbreviated=True)
    assert got == want


def test_cuda_memory_stats_keys_are_the_host_allocators():
    # The device view and the host-backend test view share one flattening, PyTorch's names.
    dev = minitorch._C._cuda_memory_stats(0)
    host = minitorch._C._HostCachingAllocator().memory_stats()
    assert list(dev) == list(host) and dev == host
    assert {"allocated_bytes.all.current", "reserved_bytes.all.peak", "num_alloc_retries", "num_ooms",
            "segment.small_pool.current"} <= set(dev)


def test_device_context_without_an_index_does_nothing():
    # torch.cuda.device(None / -1) and device_of(a CPU tensor) change nothing, GPU or not
    with minitorch.cuda.device(None), minitorch.cuda.device(-1), minitorch.cuda.device_of(minitorch.ones(1)):
        pass
