"""torch.distributed.rpc's names reached without RPC running: the RRef type that training helpers
test outputs against, its subscription in type hints, and PyTorch's error for constructing one in a
process with no RPC agent. The framework is not built, which is_available() says."""
import pytest

import minitorch


def test_rref_type_reached_through_the_api_module():
    rpc = minitorch.distributed.rpc
    assert rpc.RRef is rpc.api.RRef
    assert not isinstance(minitorch.ones(2), rpc.api.RRef)
    assert not isinstance([minitorch.ones(2)], rpc.RRef)
    hint = rpc.RRef[minitorch.Tensor]  # Generic, as PyTorch's: usable in annotations
    assert hint.__origin__ is rpc.RRef
    assert rpc.is_available() is False


def test_rref_without_an_agent_raises_as_pytorch():
    with pytest.raises(RuntimeError, match=r"Current RPC agent is not set!") as got:
        minitorch.distributed.rpc.RRef(minitorch.ones(1))
    torch = pytest.importorskip("torch")
    if not torch.distributed.rpc.is_available():
        return
    with pytest.raises(RuntimeError) as ref:
        torch.distributed.rpc.RRef(torch.ones(1))
    assert str(got.value) == str(ref.value)


def test_helper_that_unwraps_rrefs_runs():
    # rasbt's compute_accuracy: a local output passes through the RRef test unchanged.
    torch = minitorch
    model = torch.nn.Linear(3, 2)
    logits = model(torch.ones(4, 3))
    if isinstance(logits, torch.distributed.rpc.api.RRef):
        logits = logits.local_value()
    _, predicted = torch.max(logits, 1)
    assert predicted.shape == (4,)
