"""torch.distributed.rpc: the RRef type that training helpers test outputs against (before any
agent runs), and the framework itself: workers started by mp.spawn calling each other with
rpc_sync / rpc_async / remote, RRefs passed around and called through, remote exceptions, an
@async_execution function, and shutdown, compared line by line with PyTorch's run of the same script."""
from pathlib import Path

import pytest

import minitorch
from launching import spawned_stdout

SCRIPT = Path(__file__).resolve().parent / "scripts" / "rpc.py"


def test_rref_type_reached_through_the_api_module():
    rpc = minitorch.distributed.rpc
    assert rpc.RRef is rpc.api.RRef
    assert not isinstance(minitorch.ones(2), rpc.api.RRef)
    assert not isinstance([minitorch.ones(2)], rpc.RRef)
    hint = rpc.RRef[minitorch.Tensor]  # Generic, as PyTorch's: usable in annotations
    assert hint.__origin__ is rpc.RRef
    assert rpc.is_available() is True


def test_without_an_agent_raises_as_pytorch():
    rpc = minitorch.distributed.rpc
    got = []
    for call in (lambda r: r.RRef(minitorch.ones(1)), lambda r: r.rpc_sync("w", print),
                 lambda r: r.get_worker_info()):
        with pytest.raises(RuntimeError) as e:
            call(rpc)
        got.append(str(e.value))
    assert got[0].startswith("Current RPC agent is not set!")
    torch = pytest.importorskip("torch")
    if not torch.distributed.rpc.is_available():
        return
    with pytest.raises(RuntimeError) as ref:
        torch.distributed.rpc.RRef(torch.ones(1))
    assert got[0] == str(ref.value)
    with pytest.raises(RuntimeError) as ref:
        torch.distributed.rpc.rpc_sync("w", print)
    assert got[1] == str(ref.value)


def test_helper_that_unwraps_rrefs_runs():
    # rasbt's compute_accuracy: a local output passes through the RRef test unchanged.
    torch = minitorch
    model = torch.nn.Linear(3, 2)
    logits = model(torch.ones(4, 3))
    if isinstance(logits, torch.distributed.rpc.api.RRef):
        logits = logits.local_value()
    _, predicted = torch.max(logits, 1)
    assert predicted.shape == (4,)


def _run(library: str) -> list:
    return [line.replace(library, "torch") for line in spawned_stdout(SCRIPT, library)]


def test_rpc_workers_match_pytorch():
    got = _run("minitorch")
    assert got[0] == "WorkerInfo(id=0, name=worker0) WorkerInfo(id=1, name=worker1) 1"
    assert "caught RuntimeError" in "\n".join(got) and got[-1] == "[20, 20]"
    torch = pytest.importorskip("torch")
    if not torch.distributed.rpc.is_available():
        return
    assert got == _run("torch")
