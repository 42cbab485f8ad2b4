"""minitorch.profiler on the seed network: the exact nesting and names, nested times, balanced memory
events, the Chrome trace, the table against the events, record_function, schedule, and the off path."""
import gc
import json
import threading

import pytest

import minitorch
from minitorch import nn
from minitorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def seed():
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(1, 4)
    model(x)  # OpenBLAS's lazy start-up stays out of the recording
    return model, x


def run(**kwargs):
    model, x = seed()
    # No garbage collection inside the recording: freeing an earlier test's tensors there would
    # add Mem::free events that are not the model's.
    gc.collect()
    gc.disable()
    try:
        with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
            y = model(x)
    finally:
        gc.enable()
    return prof, y


def paths(events):
    """Each event as the chain of names from its root: ('Python::Sequential', ..., 'Op::t')."""
    def chain(e):
        return chain(e.cpu_parent) + (e.name,) if e.cpu_parent else (e.name,)
    return [chain(e) for e in events]


def test_seed_network_nesting_and_names():
    prof, _ = run()
    linear = ("Python::Sequential", "Python::Linear", "Op::linear")
    expected = [
        ("Python::Sequential",),
        linear[:2], linear, linear + ("Op::t",), linear + ("Op::t", "Op::transpose"),
        linear + ("Op::t", "Op::transpose", "Op::as_strided"),
        linear + ("Op::addmm",), linear + ("Op::addmm", "Kernel::mt_cpu_addmm"),
        linear + ("Op::addmm", "Kernel::mt_cpu_addmm", "Library::cblas_sgemv"),
        ("Python::Sequential", "Python::ReLU"), ("Python::Sequential", "Python::ReLU", "Op::relu"),
        ("Python::Sequential", "Python::ReLU", "Op::relu", "Op::clamp_min"),
        ("Python::Sequential", "Python::ReLU", "Op::relu", "Op::clamp_min", "Kernel::mt_cpu_clamp_min"),
    ]
    expected += expected[1:9]
    assert paths(prof.events()) == expected
    keys = {e.name: e.detail for e in prof.events()}
    assert keys["Op::addmm"] == "CPU" and keys["Op::linear"] == "CompositeImplicitAutograd"
    assert keys["Library::cblas_sgemv"] == "OpenBLAS"
    assert {e.thread for e in prof.events()} == {threading.get_native_id()}


def test_times_are_positive_and_nest():
    prof, _ = run()
    for e in prof.events():
        assert e.cpu_time_total > 0 and e.self_cpu_time_total >= -1e-6
        p = e.cpu_parent
        if p is not None:
            assert p.start_ns <= e.start_ns <= e.end_ns <= p.end_ns


def test_record_shapes():
    prof, _ = run(record_shapes=True)
    shapes = {e.name: (e.input_shapes, e.input_dtypes) for e in prof.events() if e.name.startswith("Op::")}
    assert shapes["Op::linear"] == ([[1, 8], [2, 8], [2]], ["float", "float", "float"])  # the last call
    assert shapes["Op::addmm"][0] == [[2], [1, 8], [8, 2]]
    rows = prof.key_averages(group_by_input_shape=True)
    assert {(r.key, str(r.input_shapes)) for r in rows} >= {("Op::linear", "[[1, 4], [8, 4], [8]]"),
                                                           ("Op::linear", "[[1, 8], [2, 8], [2]]")}
    assert "Input Shapes" in rows.table()
    assert not any(e.input_shapes for e in run()[0].events())


def test_memory_events_balance():
    prof, y = run(profile_memory=True)
    mem = prof.memory_events()
    allocs = [m.bytes for m in mem if m.name == "Mem::alloc"]
    assert sorted(allocs) == [8, 32, 32]  # two Linear outputs (1x8, 1x2) and ReLU's (1x8)
    live = {}  # malloc may hand a freed block's address to a later alloc: match each free as it comes
    for m in mem:
        if m.name == "Mem::alloc":
            live[m.ptr] = m.bytes
        else:
            assert -m.bytes == live.pop(m.ptr)
    assert [m.bytes for m in mem if m.name == "Mem::free"] == [-32]  # the first Linear's output
    assert sum(m.bytes for m in mem) == 40  # what is still alive: ReLU's output and y
    assert all(m.device == "cpu" and m.pool == "cpu" for m in mem)
    kernels = [m.cpu_parent.name for m in mem if m.name == "Mem::alloc"]
    assert kernels == ["Kernel::mt_cpu_addmm", "Kernel::mt_cpu_clamp_min", "Kernel::mt_cpu_addmm"]
    top = prof.events()[0]
    assert top.name == "Python::Sequential" and top.cpu_memory_usage == 40
    assert not run()[0].memory_events()


def test_chrome_trace(tmp_path):
    prof, _ = run(profile_memory=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in spans] == [e.name for e in prof.events()]
    cats = {e["name"]: e["cat"] for e in spans}
    assert cats["Op::addmm"] == "cpu_op" and cats["Kernel::mt_cpu_addmm"] == "kernel"
    assert cats["Python::Linear"] == "python_function"
    for s, e in zip(spans, prof.events()):
        assert s["dur"] == pytest.approx(e.cpu_time_total) and s["ts"] >= 0 and s["tid"] == e.thread
    instants = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    assert len(instants) == 4 and {e["cat"] for e in instants} == {"cpu_instant_event"}
    assert sum(e["args"]["Bytes"] for e in instants) == 40


def test_table_agrees_with_events():
    prof, _ = run(profile_memory=True)
    rows = {r.key: r for r in prof.key_averages()}
    events = prof.events()
    for name, r in rows.items():
        mine = [e for e in events if e.name == name]
        assert r.count == len(mine)
        assert r.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in mine))
        assert r.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in mine))
    assert rows["Op::addmm"].count == 2 and rows["Op::as_strided"].count == 2
    # self times add up to the top-level range: the table's 100%
    total = sum(r.self_cpu_time_total for r in rows.values())
    assert total == pytest.approx(events[0].cpu_time_total)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    lines = table.splitlines()
    header = lines[1].split()
    assert " ".join(header) == ("Name Self CPU % Self CPU CPU total % CPU total CPU time avg CPU Mem "
                                "Self CPU Mem # of Calls")
    assert lines[3].split()[0] == "Python::Sequential" and lines[3].split()[3] == "100.00%"
    assert len(lines) == 3 + 5 + 2 and lines[-1].startswith("Self CPU time total: ")
    assert "Self CUDA" not in table  # CUDA columns only when CUDA was profiled


def test_record_function_ranges():
    model, x = seed()

    @record_function("decorated")
    def forward():
        return model(x)

    with profile() as prof:
        with record_function("outer"):
            forward()
    names = [e.name for e in prof.events()]
    assert names[:3] == ["outer", "decorated", "Python::Sequential"]
    assert prof.events()[0].is_user_annotation
    with record_function("not recorded"):  # no profiler: nothing happens
        pass


def test_schedule_records_only_active_steps():
    model, x = seed()
    ready = []
    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [sched(k) for k in range(5)] == [ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                                             ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE]
    with profile(schedule=sched, on_trace_ready=lambda p: ready.append(p.events())) as prof:
        for _ in range(6):
            model(x)
            prof.step()
    assert len(ready) == 1
    steps = [e.name for e in ready[0] if e.cpu_parent is None]
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"]
    assert sum(e.name == "Python::Sequential" for e in ready[0]) == 2


def test_off_records_nothing():
    model, x = seed()
    assert not minitorch._C._trace_enabled()
    model(x)
    minitorch._C._trace_start()
    assert minitorch._C._trace_stop() == []  # nothing was left behind by the calls made while off
    with profile() as prof:
        pass
    assert len(prof.events()) == 0 and prof.key_averages().table() == ""


def test_cuda_activity_without_gpu_warns():
    if minitorch.profiler.supported_activities() != {ProfilerActivity.CPU}:
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    assert prof.use_device is None


def test_events_from_another_thread():
    model, x = seed()
    with profile() as prof:
        t = threading.Thread(target=model, args=(x,))
        t.start()
        t.join()
        model(x)
    threads = [e.thread for e in prof.events() if e.name == "Python::Sequential"]
    assert len(set(threads)) == 2 and threading.get_native_id() in threads


def test_journey_view():
    prof, _ = run(profile_memory=True)
    text = prof.journey()
    head = text.splitlines()[0].split()
    assert head[:2] == ["Event", "Layer"] and "CPU" in head and "GPU" in head and head[-1] == "Device"
    for layer in ("Python", "Op", "Kernel", "Library", "Mem"):
        assert f"  {layer}  " in text
    tree = text[text.index("The tree of Python::Sequential"):]
    assert "└─ Library::cblas_sgemv" in tree and "Op::as_strided" in tree


def test_main_job_shows_the_journey_and_writes_the_trace(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(minitorch.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-m", "minitorch"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    # it runs on the best device present: where CUDA is usable (a GPU, or MINITORCH_CUDA_EMU=1's
    # emulated device) the one-row products are cuBLAS's gemv, else OpenBLAS's
    gemv = "cublasSgemv_v2" if minitorch.cuda.is_available() else "cblas_sgemv"
    for text in ("Event", "Layer", "Python::Sequential", f"└─ Library::{gemv}", "Mem::alloc"):
        assert text in out.stdout
    if minitorch.profiler.supported_activities() == {ProfilerActivity.CPU}:
        assert "CUDA not available: CPU path shown" in out.stdout
    trace = json.loads((tmp_path / "minitorch-journey" / "seed_trace.json").read_text())  # the default --out
    assert any(e.get("name") == "Op::addmm" for e in trace["traceEvents"])
    graph = (tmp_path / "minitorch-journey" / "seed_graph.svg").read_text()  # minitorch.viz's drawing
    assert graph.startswith("<svg") and ">linear</text>" in graph and ">0.weight</text>" in graph
