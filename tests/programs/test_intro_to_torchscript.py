"""PyTorch's "Introduction to TorchScript" tutorial (beginner_source/Intro_to_TorchScript_tutorial.py),
its code as published with `import torch` read as the library under test: MyCell, MyDecisionGate,
torch.jit.trace of the cell (print(traced_cell), .graph, .code, traced_cell.dg.code), torch.jit.script
of the gate and the cell (.code), the mixed MyRNNLoop / WrapRNN (a scripted loop over a traced cell,
traced in turn), traced.save('wrapped_rnn.pt') and torch.jit.load. The test checks, for minitorch and
for PyTorch alike, that each compiled module computes what the eager one does, that the loaded module
computes what the saved one did, that tracing the gate warns TracerWarning, and that the traced cell's
graph holds the same ops in both libraries. (minitorch's script runs the Python code eagerly, and a
scripted module traced from outside is recorded op by op, where PyTorch calls it: WrapRNN's code differs.)"""
import contextlib
import io
import os
import warnings

import numpy as np
import pytest

import minitorch

# PyTorch 2.13 deprecates TorchScript; both libraries say so at each entry point
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch.jit.\w+` is deprecated:DeprecationWarning")


def tutorial(torch, workdir):
    out = io.StringIO()
    seen = {}
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(torch.__version__)
            torch.manual_seed(191009)  # set the seed for reproducibility

            class MyCell(torch.nn.Module):
                def __init__(self):
                    super(MyCell, self).__init__()
                    self.linear = torch.nn.Linear(4, 4)

                def forward(self, x, h):
                    new_h = torch.tanh(self.linear(x) + h)
                    return new_h, new_h

            my_cell = MyCell()
            x, h = torch.rand(3, 4), torch.rand(3, 4)
            traced_cell = torch.jit.trace(my_cell, (x, h))
            print(traced_cell)
            traced_cell(x, h)

            print(traced_cell.graph)
            print(traced_cell.code)

            print(my_cell(x, h))
            print(traced_cell(x, h))
            seen["cell"] = (my_cell(x, h)[0], traced_cell(x, h)[0])
            seen["cell_ops"] = [n.kind() for n in traced_cell.inlined_graph.nodes() if n.kind().startswith("aten::")]

            class MyDecisionGate(torch.nn.Module):
                def forward(self, x):
                    if x.sum() > 0:
                        return x
                    else:
                        return -x

            class MyCell(torch.nn.Module):
                def __init__(self, dg):
                    super(MyCell, self).__init__()
                    self.dg = dg
                    self.linear = torch.nn.Linear(4, 4)

                def forward(self, x, h):
                    new_h = torch.tanh(self.dg(self.linear(x)) + h)
                    return new_h, new_h

            my_cell = MyCell(MyDecisionGate())
            traced_cell = torch.jit.trace(my_cell, (x, h))

            print(traced_cell.dg.code)
            print(traced_cell.code)
            seen["gate_positive"] = bool(my_cell.linear(x).sum() > 0)
            seen["gate_ops"] = [n.kind() for n in traced_cell.inlined_graph.nodes() if n.kind().startswith("aten::")]
            seen["gate_warnings"] = [str(w.message) for w in caught if w.category is torch.jit.TracerWarning]

            scripted_gate = torch.jit.script(MyDecisionGate())

            my_cell = MyCell(scripted_gate)
            scripted_cell = torch.jit.script(my_cell)

            print(scripted_gate.code)
            print(scripted_cell.code)

            # New inputs
            x, h = torch.rand(3, 4), torch.rand(3, 4)
            print(scripted_cell(x, h))
            seen["scripted"] = (scripted_cell(x, h)[0], my_cell(x, h)[0])
            seen["scripted_gate"] = (scripted_gate(-x), x)

            class MyRNNLoop(torch.nn.Module):
                def __init__(self):
                    super(MyRNNLoop, self).__init__()
                    self.cell = torch.jit.trace(MyCell(scripted_gate), (x, h))

                def forward(self, xs):
                    h, y = torch.zeros(3, 4), torch.zeros(3, 4)
                    for i in range(xs.size(0)):
                        y, h = self.cell(xs[i], h)
                    return y, h

            rnn_loop = torch.jit.script(MyRNNLoop())
            print(rnn_loop.code)

            class WrapRNN(torch.nn.Module):
                def __init__(self):
                    super(WrapRNN, self).__init__()
                    self.loop = torch.jit.script(MyRNNLoop())

                def forward(self, xs):
                    y, h = self.loop(xs)
                    return torch.relu(y)

            traced = torch.jit.trace(WrapRNN(), (torch.rand(10, 3, 4)))
            print(traced.code)

            traced.save('wrapped_rnn.pt')

            loaded = torch.jit.load('wrapped_rnn.pt')

            print(loaded)
            print(loaded.code)
            xs = torch.rand(10, 3, 4)
            seen["loaded"] = (loaded(xs), traced(xs))
    finally:
        os.chdir(cwd)
    seen["printed"] = out.getvalue()
    return seen


def _close(pair):
    a, b = (t.detach().numpy() for t in pair)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["minitorch", "torch"])
def test_intro_to_torchscript(name, tmp_path):
    torch = minitorch if name == "minitorch" else pytest.importorskip("torch")
    seen = tutorial(torch, tmp_path)
    for key in ("cell", "scripted", "loaded"):
        _close(seen[key])
    _close((seen["scripted_gate"][0], seen["scripted_gate"][1]))  # -x summed to less than 0: x back
    assert seen["cell_ops"] == ["aten::linear", "aten::add", "aten::tanh"]
    want = ["aten::linear"] + ([] if seen["gate_positive"] else ["aten::neg"]) + ["aten::add", "aten::tanh"]
    assert seen["gate_ops"] == want
    assert any("Converting a tensor to a Python boolean" in w for w in seen["gate_warnings"])
    printed = seen["printed"]
    assert "original_name=MyCell" in printed and "(linear): Linear(original_name=Linear)" in printed
    assert "graph(%self" in printed and "def forward(self," in printed
    # the scripted gate's code: its source here, TorchScript's compiled form in PyTorch
    assert ("if x.sum() > 0:" if name == "minitorch" else "torch.sum(x)") in printed
    assert (tmp_path / "wrapped_rnn.pt").is_file()
