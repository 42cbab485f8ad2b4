"""The profiler on a GPU: the seed network on CUDA, its Runtime::/Library:: events nested under the
ops, Kernel events with device times inside the recording, Malloc/Memcpy events, and the Chrome
trace's GPU track and flow arrows."""
import gc
import json

import pytest

import minitorch
from minitorch import nn
from minitorch.profiler import ProfilerActivity, profile

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


def chain(e):
    return chain(e.cpu_parent) + (e.name,) if e.cpu_parent else (e.name,)


def record(**kwargs):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to("cuda")
    x = minitorch.randn(1, 4).to("cuda")
    model(x)  # cuBLAS's handle and the kernels' first load stay out of the recording
    minitorch.cuda.synchronize()
    gc.collect()
    getattr(minitorch.cuda, "empty_cache", lambda: None)()  # a caching allocator must cudaMalloc again
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kwargs) as prof:
        y = model(x)
        # a real cudaMalloc and a host-to-device copy: 2 MiB, past what the small pool's segment
        # (which the model's tensors keep) can serve
        host = minitorch.randn(512, 1024).to("cuda")
        back = y.cpu()
        minitorch.cuda.synchronize()
    return prof, back, host


def test_nesting_of_runtime_and_library_events():
    prof, _, _ = record()
    paths = [chain(e) for e in prof.events() if e.device_type == "CPU"]
    addmm = ("Python::Sequential", "Python::Linear", "Op::linear", "Op::addmm", "Kernel::mt_cuda_addmm")
    libs = [p for p in paths if p[:5] == addmm and len(p) == 6 and p[5].startswith("Library::cublas")]
    assert libs and all(p[5] in ("Library::cublasSgemv_v2", "Library::cublasSgemm_v2") for p in libs)
    # addmm copies the bias into its output first: a launch or a device copy under the same kernel
    assert any(p[:5] == addmm and p[-1].startswith("Runtime::") for p in paths)
    relu = [p for p in paths if "Op::clamp_min" in p and p[-1] == "Runtime::LaunchKernel"]
    assert relu
    names = {e.name for e in prof.events()}
    assert {"Runtime::Malloc", "Runtime::Memcpy", "Runtime::DeviceSynchronize"} <= names


def test_kernels_have_device_times_inside_the_recording():
    prof, _, _ = record()
    events = prof.events()
    cpu = [e for e in events if e.device_type == "CPU"]
    gpu = [e for e in events if e.device_type == "CUDA"]
    assert gpu and any(e.name.startswith("Kernel::") for e in gpu)
    assert any(e.detail == "memcpy" for e in gpu)
    lo, hi = min(e.start_ns for e in cpu), max(e.end_ns for e in cpu)
    for e in gpu:
        assert e.end_ns > e.start_ns and e.device_time_total > 0
        assert lo <= e.start_ns and e.end_ns <= hi + 1_000_000  # within the recording (1 ms slack)
        assert e.launch is not None and e.launch.correlation == e.correlation
        # device work starts after the call that enqueued it (10 us: the clocks are matched once)
        assert e.launch.start_ns <= e.start_ns + 10_000
    addmm = [e for e in events if e.name == "Op::addmm"]
    assert all(e.device_time_total > 0 for e in addmm)
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "CUDA total" in table and "Self CUDA time total" in table
    assert "GPU" in prof.journey() and "CUDA:0" in prof.journey()


def test_chrome_trace_has_the_gpu_track_and_flows(tmp_path):
    prof, _, _ = record()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and isinstance(e.get("args"), dict)
               and "stream" in e["args"]]
    assert kernels and all(e["pid"] == 0 for e in kernels)
    runtime = {e["args"]["correlation"] for e in events if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = {e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    assert starts and ends <= starts
    assert {e["args"]["correlation"] for e in kernels} <= starts
    assert runtime & starts
    assert any(e.get("cat") == "gpu_memcpy" for e in events)


def test_with_stack_and_memory_on_cuda():
    prof, _, _ = record(with_stack=True, profile_memory=True)
    ops = [e for e in prof.events() if e.layer == "Op"]
    assert ops and all(e.stack for e in ops)
    assert any(m.device.startswith("cuda") for m in prof.memory_events())


def test_main_job_shows_the_gpu_journey(tmp_path):
    """`python -m minitorch` on a CUDA device: every layer seen, our launches and cuBLAS's
    kernels, and on the emulated device a line that says so."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(minitorch.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "minitorch"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.returncode == 0, out.stderr
    assert "on CUDA, layer by layer" in out.stdout and "Layers not seen" not in out.stdout
    assert "Runtime::LaunchKernel" in out.stdout and "ew_kernel<ew::clamp_min_f32>" in out.stdout
    if minitorch.cuda._C_cuda.has_cublas:
        assert "Library::cublasSgemv_v2" in out.stdout
    assert ("emulated CUDA device (CPU)" in out.stdout) == minitorch.cuda._is_emulated()
