"""minitorch.Stream and minitorch.Event on the CPU, as torch.Stream and torch.Event (the CUDA
side: tests/cuda/test_cuda_device_api.py)."""
import pytest

import minitorch
from helpers import torch


def libs():
    return (minitorch,) if torch is None else (minitorch, torch)


def test_cpu_stream():
    for lib in libs():
        s = lib.Stream("cpu")
        assert (s.device_type, s.device_index, s.stream_id) == (0, -1, 0)
        assert s.device == lib.device("cpu") and s.query() is True and s.synchronize() is None
        assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
        with s:
            assert lib.ones(2).sum().item() == 2
        assert s == lib.Stream("cpu") and hash(s) == hash(lib.Stream("cpu"))


def test_cpu_event_cannot_record():
    for lib in libs():
        e = lib.Event("cpu", enable_timing=True)
        assert e.device == lib.device("cpu") and e.query() is True
        assert repr(e) == "torch.Event device_type=cpu, device_index=-1, event_flag=1, event_id=0"
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
            e.record(lib.Stream("cpu"))
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
            lib.Stream("cpu").record_event()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="the default device is CUDA here")
def test_default_is_the_cpu_without_cuda():
    assert minitorch.Stream().device.type == "cpu" and minitorch.Event().device.type == "cpu"
