"""torch.cuda.memory._record_memory_history, _snapshot and _dump_snapshot over the caching
allocator (on the emulated device where there is no GPU): the actions in PyTorch's TraceEntry
layout (alloc, free_requested, free_completed, segment_alloc, segment_free, oom), the Python frames
of each allocation with stacks="python", the blocks' frames in the segments, the ring of
max_entries, clear_history, enabled=None, skip_actions, the pickle; and, without CUDA, PyTorch's
CPU build's AttributeError."""
import pickle

import pytest

import minitorch
from minitorch.cuda import memory

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

MiB = 1 << 20


@pytest.fixture(autouse=True)
def recording_stops():
    minitorch.cuda.synchronize()
    minitorch.cuda.empty_cache()
    yield
    memory._record_memory_history(enabled=None, clear_history=True)


def actions(device=0):
    return memory._snapshot()["device_traces"][device]


def allocate_here():
    return minitorch.empty(3 * MiB // 4, device="cuda")  # 3 MiB: a 20 MiB segment of its own


def test_history_of_one_tensor():
    memory._record_memory_history(stacks="python", clear_history=True)
    x = allocate_here()
    addr = x.data_ptr()
    del x
    minitorch.cuda.empty_cache()
    trace = actions()
    kinds = [e["action"] for e in trace]
    assert kinds == ["segment_alloc", "alloc", "free_requested", "free_completed", "segment_free"], kinds
    seg, alloc, req, done, free = trace
    assert alloc["addr"] == req["addr"] == done["addr"] == addr == seg["addr"] == free["addr"]
    assert alloc["size"] == 3 * MiB and seg["size"] == free["size"] == 20 * MiB
    assert all(set(e) == {"action", "addr", "size", "stream", "time_us", "frames"} for e in trace)
    assert [e["time_us"] for e in trace] == sorted(e["time_us"] for e in trace)
    names = [f["name"] for f in alloc["frames"]]  # innermost first (minitorch's own, then ours)
    k = names.index("allocate_here")
    assert names[k + 1] == "test_history_of_one_tensor", names
    assert alloc["frames"][k]["filename"] == __file__ and alloc["frames"][k]["line"] > 0
    assert req["frames"][0]["name"] == "test_history_of_one_tensor"  # context="all": frees too
    assert done["frames"] == []


def test_blocks_keep_their_frames_and_state_only_keeps_no_actions():
    memory._record_memory_history(enabled="state", clear_history=True)
    x = allocate_here()
    blocks = [b for s in memory._snapshot()["segments"] for b in s["blocks"] if b["address"] == x.data_ptr()]
    assert blocks and "allocate_here" in [f["name"] for f in blocks[0]["frames"]]
    assert actions() == []
    memory._record_memory_history(context=None, clear_history=True)
    y = allocate_here()
    assert all(e["frames"] == [] for e in actions())
    blocks = [b for s in memory._snapshot()["segments"] for b in s["blocks"] if b["address"] == y.data_ptr()]
    assert blocks[0]["frames"] == []
    del x, y


def test_max_entries_keeps_the_newest_and_none_stops():
    memory._record_memory_history(max_entries=3, clear_history=True)
    xs = [allocate_here() for _ in range(3)]
    trace = actions()
    assert len(trace) == 3 and trace[-1]["action"] == "alloc" and trace[-1]["addr"] == xs[-1].data_ptr()
    memory._record_memory_history(enabled=None)
    del xs
    assert len(actions()) == 3  # stopping keeps what was recorded
    memory._record_memory_history(clear_history=True)
    assert actions() == []


def test_skip_actions_and_the_legacy_form():
    memory._record_memory_history(skip_actions=["free_requested", "segment_alloc"], clear_history=True)
    x = allocate_here()
    del x
    assert [e["action"] for e in actions()] == ["alloc", "free_completed"]
    memory._record_memory_history(True, trace_alloc_max_entries=10, clear_history=True)
    y = allocate_here()
    assert [e["action"] for e in actions()][-1] == "alloc"
    del y


def test_an_out_of_memory_request_is_recorded():
    memory._record_memory_history(clear_history=True)
    with pytest.raises(minitorch.cuda.OutOfMemoryError):
        minitorch.empty(1 << 42, dtype=minitorch.uint8, device="cuda")
    oom = [e for e in actions() if e["action"] == "oom"]
    assert oom and oom[0]["size"] >= 1 << 42 and "device_free" in oom[0] and "addr" not in oom[0]


def test_bad_arguments():
    for kw in (dict(enabled="sometimes"), dict(context="stack"), dict(stacks="cpp")):
        with pytest.raises(RuntimeError):
            memory._record_memory_history(**kw)
    with pytest.raises(TypeError):
        memory._record_memory_history(enabled=3)


def test_dump_snapshot_pickles_the_snapshot(tmp_path):
    memory._record_memory_history(clear_history=True)
    x = allocate_here()
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        snap = pickle.load(f)
    assert set(snap) == {"segments", "device_traces"}
    assert any(e["action"] == "alloc" and e["addr"] == x.data_ptr() for e in snap["device_traces"][0])
    assert minitorch.cuda.memory._snapshot is memory._snapshot
    del x


def test_without_cuda_as_pytorch_cpu_build(monkeypatch):
    monkeypatch.setattr(memory, "_C_cuda", None)
    for fn, name in ((memory._record_memory_history, "_cuda_record_memory_history"),
                     (memory._snapshot, "_cuda_memorySnapshot"), (memory._dump_snapshot, "_cuda_memorySnapshot")):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            fn()
