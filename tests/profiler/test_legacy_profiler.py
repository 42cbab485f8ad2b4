"""torch.autograd.profiler's legacy interface and profiler.tensorboard_trace_handler."""
import gzip
import json
import os
import re
import socket
import warnings

import pytest

import minitorch
from minitorch.autograd import profiler as legacy


def _work():
    a = minitorch.ones(8, 8)
    with legacy.record_function("block"):
        return (a.mm(a) + 1).sum()


def test_legacy_profile_records_and_reports():
    with legacy.profile(record_shapes=True) as prof:
        _work()
    names = {e.key for e in prof.key_averages()}
    assert {"block", "Op::mm", "Op::add", "Op::sum"} <= names
    assert prof.function_events is not None and prof.self_cpu_time_total > 0
    text = str(prof.table(sort_by="cpu_time_total", row_limit=5))
    assert "Name" in text and "block" in text
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(prof.function_events)
    assert minitorch.autograd.profiler.record_function is minitorch.profiler.record_function


def test_legacy_profile_errors_and_disabled(tmp_path):
    prof = legacy.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.table()
    with prof:
        _work()
    with pytest.raises(RuntimeError, match="Profiler context manager is not reentrant"):
        with prof:
            pass
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    assert any(ev.get("name") == "block" for ev in json.loads(path.read_text())["traceEvents"])
    with legacy.profile(enabled=False) as off:
        _work()
    assert not hasattr(off, "function_events")
    with pytest.warns(FutureWarning, match="use_cuda"):
        legacy.profile(use_cuda=True)


def test_legacy_profile_as_torch_names():
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.profiler.profile() as prof:
                with lib.autograd.profiler.record_function("mine"):
                    lib.ones(3) + 1
        assert "mine" in {e.key for e in prof.key_averages()}
        assert type(prof.function_events).__name__ == "EventList"


def test_emit_nvtx_needs_cuda_or_runs():
    if minitorch.cuda.is_available():
        with legacy.emit_nvtx():
            _work()
        return
    with pytest.raises((RuntimeError, AssertionError)):
        with legacy.emit_nvtx():
            pass


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_names_and_writes(tmp_path, use_gzip):
    folder = tmp_path / "logs" / "run1"
    handler = minitorch.profiler.tensorboard_trace_handler(str(folder), use_gzip=use_gzip)
    with minitorch.profiler.profile(on_trace_ready=handler):
        _work()
    with minitorch.profiler.profile(on_trace_ready=minitorch.profiler.tensorboard_trace_handler(str(folder), "w0")):
        _work()
    files = sorted(os.listdir(folder))
    assert len(files) == 2
    ext = r"\.pt\.trace\.json" + (r"\.gz" if use_gzip else "")
    default = re.escape(f"{socket.gethostname()}_{os.getpid()}")
    assert re.fullmatch(default + r"\.\d+" + ext, files[0]), files
    assert re.fullmatch(r"w0\.\d+\.pt\.trace\.json", files[1]), files
    raw = (gzip.open if use_gzip else open)(folder / files[0], "rb").read()
    assert any(ev.get("name") == "block" for ev in json.loads(raw)["traceEvents"])
