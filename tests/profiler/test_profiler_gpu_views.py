"""The profiler's GPU views without a GPU, and with_stack.

GPU events are injected through _C's test hooks (_trace_runtime_inject, _trace_gpu_inject: what the
CUDA backend reports), or built from synthetic tuples, so the Chrome trace's GPU tracks and flow
arrows, the table's CUDA columns and the journey's GPU rows are tested on any machine.
tests/cuda/test_cuda_profiler.py checks the same on a real GPU."""
import json
import re
import time

from minitorch import _C
from minitorch.profiler import EventList, ProfilerActivity, profile
from minitorch.profiler import events as _events
from minitorch.profiler.journey import journey_view

from test_profiler import run, seed  # the seed network, recorded as there

FRAME = re.compile(r"^.+\(\d+\): \S+$")


# ---- with_stack ----

def test_with_stack_records_the_python_stack_of_each_op():
    prof, _ = run(with_stack=True)
    ops = [e for e in prof.events() if e.layer == "Op"]
    assert ops and all(e.stack for e in ops)
    for e in ops:
        assert all(FRAME.match(f) for f in e.stack), e.stack
        assert len(e.stack) <= 8
    addmm = next(e for e in ops if e.name == "Op::addmm")
    # innermost first: F.linear (addmm runs inside the linear composite), then nn.Linear's forward
    assert re.search(r"functional\.py\(\d+\): linear$", addmm.stack[0])
    assert any(f.endswith(": forward") for f in addmm.stack[1:])
    assert not any(e.stack for e in prof.events() if e.layer != "Op")


def test_without_stack_no_stacks():
    prof, _ = run()
    assert not any(e.stack for e in prof.events())
    assert "Source Location" not in prof.key_averages().table()


def test_group_by_stack_n_and_source_location_column():
    prof, _ = run(with_stack=True)
    rows = prof.key_averages(group_by_stack_n=2)
    addmm = [r for r in rows if r.key == "Op::addmm"]
    # the two Linear layers call addmm from the same line: one row; its stack cut to 2 frames
    assert len(addmm) == 1 and addmm[0].count == 2 and len(addmm[0].stack) == 2
    assert all(r.stack == [] for r in rows if not r.key.startswith("Op::"))
    table = rows.table(sort_by="cpu_time_total")
    assert "Source Location" in table.splitlines()[1]
    assert addmm[0].stack[0][-20:] in table and addmm[0].stack[1][-20:] in table
    # without grouping, rows carry no stack (as PyTorch's)
    assert all(r.stack == [] for r in prof.key_averages())


def test_with_stack_in_chrome_trace(tmp_path):
    prof, _ = run(with_stack=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    ops = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "cpu_op"
           and e["name"].startswith("Op::")]
    assert ops and all(FRAME.match(e["args"]["Call stack"].split(";")[0]) for e in ops)


# ---- GPU events, injected as the CUDA backend reports them ----

def profile_with_fake_kernels():
    """A recording with two launches and their device work: a kernel and a copy."""
    model, x = seed()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(x)
        launch = _C._trace_runtime_inject()
        copy = _C._trace_runtime_inject()
        t = time.monotonic_ns()  # CLOCK_MONOTONIC, the recording's clock
        _C._trace_gpu_inject(0, "void fake_kernel<float>(int)", 0, 7, launch, t + 1000, t + 4000)
        _C._trace_gpu_inject(1, "Memcpy HtoD (Pageable -> Device)", 0, 7, copy, t + 5000, t + 6000)
    return prof, launch, copy


def test_injected_gpu_events_link_to_their_launch():
    prof, launch, copy = profile_with_fake_kernels()
    gpu = [e for e in prof.events() if e.device_type == "CUDA"]
    assert [e.name for e in gpu] == ["Kernel::void fake_kernel<float>(int)", "Memcpy HtoD (Pageable -> Device)"]
    kernel, memcpy = gpu
    assert kernel.launch.name == "Runtime::LaunchKernel" and kernel.launch.correlation == launch
    assert memcpy.launch.correlation == copy and memcpy.detail == "memcpy"
    assert kernel.device_time_total == 3.0 and kernel.cpu_time_total == 0.0
    assert kernel.thread == 7 and kernel.device_index == 0
    # no op around the launch: its own event owns the device time
    assert kernel.launch.self_device_time_total == 3.0
    assert _C._trace_gpu_events() == []  # taken once


def test_chrome_trace_gpu_track_and_flow_arrows(tmp_path):
    prof, launch, copy = profile_with_fake_kernels()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    cpu_pid = next(e["pid"] for e in events if e.get("cat") == "cpu_op")
    runtime = [e for e in events if e.get("cat") == "cuda_runtime"]
    assert [e["args"]["correlation"] for e in runtime] == [launch, copy]
    assert all(e["pid"] == cpu_pid and e["name"] == "Runtime::LaunchKernel" for e in runtime)
    kernel = next(e for e in events if e.get("cat") == "kernel" and e["pid"] == 0)
    assert kernel["tid"] == 7 and kernel["dur"] == 3.0 and kernel["args"]["correlation"] == launch
    memcpy = next(e for e in events if e.get("cat") == "gpu_memcpy")
    assert (memcpy["pid"], memcpy["tid"], memcpy["args"]["correlation"]) == (0, 7, copy)
    flows = [e for e in events if e.get("cat") == "ac2g"]
    assert sorted((e["ph"], e["id"]) for e in flows) == sorted([("s", launch), ("f", launch), ("s", copy),
                                                                ("f", copy)])
    for f in flows:
        target = runtime if f["ph"] == "s" else [kernel, memcpy]
        match = next(e for e in target if e["args"]["correlation"] == f["id"])
        assert (f["pid"], f["tid"], f["ts"]) == (match["pid"], match["tid"], match["ts"])
    assert all(f["bp"] == "e" for f in flows if f["ph"] == "f")
    meta = {(e["name"], e["pid"], e.get("tid")): e["args"] for e in events if e["ph"] == "M"}
    assert meta[("process_name", 0, 0)] == {"name": "GPU 0"}
    assert meta[("thread_name", 0, 7)] == {"name": "stream 7"}


def synthetic():
    """Op::addmm > Kernel::mt_cuda_addmm > (Library::cublasSgemv_v2, Runtime::LaunchKernel), each
    call's device work after it: times in ns."""
    def cpu(depth, layer, name, detail, start, end, corr=0):
        return (depth, layer, name, detail, (end - start) / 1e3, start, end, 1, "", "", 0, 0, 0, 0, -1, corr, "", "")
    raw = [cpu(0, "Python", "Linear", "nn.Module", 0, 100_000),
           cpu(1, "Op", "addmm", "CUDA", 10_000, 90_000),
           cpu(2, "Kernel", "mt_cuda_addmm", "CUDA", 11_000, 89_000),
           cpu(3, "Library", "cublasSgemv_v2", "cuBLAS", 20_000, 40_000, corr=11),
           cpu(3, "Runtime", "LaunchKernel", "CUDA", 50_000, 60_000, corr=12)]
    gpu = [(0, "gemv2T_kernel", 0, 7, 11, 45_000, 55_000), (0, "gemvx_reduce", 0, 7, 11, 56_000, 58_000),
           (0, "void ew_kernel<float>(mt_cuda_ew*)", 0, 7, 12, 61_000, 65_000)]
    return _events.build(raw, gpu)


def test_kernels_count_in_the_op_that_launched_them():
    functions, _ = synthetic()
    by = {e.name: e for e in functions}
    linear, addmm = by["Python::Linear"], by["Op::addmm"]
    assert addmm.self_device_time_total == 16.0 and addmm.device_time_total == 16.0
    assert linear.self_device_time_total == 0.0 and linear.device_time_total == 16.0
    assert by["Runtime::LaunchKernel"].self_device_time_total == 0.0
    assert by["Kernel::gemv2T_kernel"].launch is by["Library::cublasSgemv_v2"]


def test_table_cuda_columns():
    functions, memory = synthetic()
    rows = EventList(functions, use_device="cuda").key_averages()
    table = rows.table(sort_by="self_cuda_time_total")
    header = table.splitlines()[1]
    for column in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"):
        assert column in header
    assert "Self CUDA time total: 16.000us" in table
    assert table.splitlines()[3].split()[0] == "Op::addmm"  # sorted by self CUDA: the op first
    kernel = next(r for r in rows if r.key == "Kernel::gemv2T_kernel")
    assert kernel.device_type == "CUDA" and kernel.cpu_time_total == 0 and kernel.self_device_time_total == 10.0
    # no device time at all: PyTorch leaves the CUDA columns out
    cpu_only = [e for e in functions if e.device_type == "CPU" and e.layer != "Op"]
    assert "CUDA" not in EventList(cpu_only, use_device="cuda").key_averages().table()


def test_journey_shows_gpu_rows_and_times():
    functions, memory = synthetic()
    text = journey_view(functions, memory, use_device="cuda")
    lines = text.splitlines()
    gpu_row = next(line for line in lines if "Kernel::gemv2T_kernel" in line)
    assert "CUDA:0" in gpu_row and "10.0 us" in gpu_row and "started by Library::cublasSgemv_v2" in gpu_row
    # right under the call that started it
    lib = next(i for i, line in enumerate(lines) if "Library::cublasSgemv_v2" in line)
    assert "Kernel::gemv2T_kernel" in lines[lib + 1]
    # GPU time down the launch chain: the op, its host kernel, the call
    assert "Op::addmm  80.0 us (2.0 us)  GPU 16.0 us  [CUDA]" in text
    assert "Kernel::mt_cuda_addmm  78.0 us (48.0 us)  GPU 16.0 us  [CUDA]" in text
    assert "Library::cublasSgemv_v2  20.0 us (20.0 us)  GPU 12.0 us  [cuBLAS]" in text
    assert "Kernel::void ew_kernel<float>(mt_cuda_ew*)  GPU 4.0 us  [CUDA:0 stream 7]" in text


def test_cpu_recording_has_no_gpu_events():
    prof, _ = run()
    assert all(e.device_type == "CPU" and not e.kernels for e in prof.events())
    assert all(e.correlation == 0 for e in prof.events())
