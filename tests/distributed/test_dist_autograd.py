"""torch.distributed.autograd and DistributedOptimizer: two RPC workers started by mp.spawn run
calls inside dist_autograd contexts (rpc_sync of builtins, a call that calls back its caller,
rpc_async, replies holding dicts of tensors, remote() then to_here(), a parameter server whose
inputs need no grad, two threads' contexts whose backward passes run at once) and steps of
DistributedOptimizer; the gradients every worker keeps and the parameters after the steps are
compared line by line with PyTorch's run of the same script, as are the error messages."""
from pathlib import Path

import pytest

import minitorch
from launching import spawned_stdout

SCRIPT = Path(__file__).resolve().parent / "scripts" / "dist_autograd.py"


def test_without_rpc_raises_as_pytorch():
    dist_autograd = minitorch.distributed.autograd
    assert dist_autograd.is_available()
    for call in (lambda d: d.context().__enter__(), lambda d: d.get_gradients(5),
                 lambda d: d.backward(5, [minitorch.ones(1, requires_grad=True)])):
        with pytest.raises(RuntimeError, match=r"^Need to initialize distributed autograd using "
                                               r"torch\.distributed\.autograd\.init\(\)$"):
            call(dist_autograd)


def test_distributed_autograd_matches_pytorch():
    got = spawned_stdout(SCRIPT, "minitorch")
    text = "\n".join(got)
    # what must hold without PyTorch to compare with: the gradients reached every worker
    assert "grad untouched True True" in got and "ps grad 1 None" not in text and "remote to_here None" not in text
    assert got[-1].startswith("after the context: Could not find autograd context with id: ")
    # two threads' contexts at once: B's backward ran while A's waited on worker1 for it
    assert "worker1 saw B done while A's backward waited [True]" in got
    assert "concurrent A [8.0, -16.0]" in got and "concurrent B [27.0, 48.0]" in got
    torch = pytest.importorskip("torch")
    if not torch.distributed.rpc.is_available():
        return
    assert got == spawned_stdout(SCRIPT, "torch")
