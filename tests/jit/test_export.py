"""torch.export.export on the jit recorder: an ExportedProgram whose graph module takes the lifted
parameters and buffers then the inputs (names and signature as PyTorch's), whose module() computes
what the eager module does, and which refuses data-dependent control flow and bad arguments."""
import numpy as np
import pytest

import minitorch

# PyTorch 2.13 deprecates TorchScript; both libraries say so at each entry point
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch.jit.\w+` is deprecated:DeprecationWarning")


def net(lib):
    lib.manual_seed(0)
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))

        def forward(self, x):
            return self.seq(x)
    return Net().eval()


def test_exported_program_matches_pytorchs_signature_and_eager_outputs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    ref, mine = net(torch), net(minitorch)
    mine.load_state_dict({k: minitorch.from_numpy(v.numpy()) for k, v in ref.state_dict().items()})
    want = torch.export.export(ref, (torch.from_numpy(x),))
    got = minitorch.export.export(mine, (minitorch.from_numpy(x),))
    for attr in ("parameters", "buffers", "user_inputs", "user_outputs"):
        assert getattr(got.graph_signature, attr) == getattr(want.graph_signature, attr), attr
    assert [n.name for n in got.graph.nodes if n.op == "placeholder"] == \
        [n.name for n in want.graph.nodes if n.op == "placeholder"]
    assert sorted(got.state_dict) == sorted(want.state_dict)
    x2 = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(got.module()(minitorch.from_numpy(x2)).detach().numpy(),
                               want.module()(torch.from_numpy(x2)).detach().numpy(), rtol=1e-5, atol=1e-6)
    ops = [str(n.target) for n in got.graph.nodes if n.op == "call_function"]
    assert ops[0] == "aten.linear.default" and ops[-1] == "aten.linear.default" and "aten.relu.default" in ops
    assert got.module().get_parameter("seq.0.weight") is mine.seq[0].weight
    with pytest.raises(RuntimeError, match="exported_program.module()"):
        got(minitorch.from_numpy(x2))
    for lib, program in ((torch, want), (minitorch, got)):  # static shapes: another batch size fails the guard
        with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 5"):
            program.module()(lib.ones(7, 4))


def test_export_refusals():
    class Gate(minitorch.nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x
    with pytest.raises(RuntimeError, match="data-dependent"):
        minitorch.export.export(Gate(), (minitorch.ones(2),))
    with pytest.raises(ValueError, match="tuple"):
        minitorch.export.export(Gate(), minitorch.ones(2))
    with pytest.raises(ValueError, match="nn.Module"):
        minitorch.export.export(lambda x: x, (minitorch.ones(2),))
