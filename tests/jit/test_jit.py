"""torch.jit.trace / script / save / load: a traced module replays the recorded ops (the same
outputs and gradients as the eager module, parameters shared), its graph names PyTorch's ops,
archives round-trip, and bad calls fail with PyTorch's exception classes."""
import warnings

import numpy as np
import pytest

import minitorch

# PyTorch 2.13 deprecates TorchScript; both libraries say so at each entry point
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch.jit.\w+` is deprecated:DeprecationWarning")


def mlp(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


class Cell:
    """The tutorial's cell, built for either library."""

    @staticmethod
    def make(torch):
        class MyCell(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 4)

            def forward(self, x, h):
                new_h = torch.tanh(self.linear(x) + h)
                return new_h, new_h
        return MyCell()


def test_traced_mlp_replays_with_shared_parameters_and_gradients():
    model = mlp(minitorch)
    x = minitorch.randn(5, 4)
    traced = minitorch.jit.trace(model, x)
    assert isinstance(traced, minitorch.jit.TracedModule) and isinstance(traced, minitorch.jit.ScriptModule)
    x2 = minitorch.randn(7, 4)  # another batch size: the replay is not the recorded numbers
    np.testing.assert_allclose(traced(x2).detach().numpy(), model(x2).detach().numpy(), rtol=1e-6)
    assert [n for n, _ in traced.named_parameters()] == [n for n, _ in model.named_parameters()]
    assert traced.state_dict()["0.weight"] is not None and getattr(traced, "0").weight is model[0].weight
    traced(x2).sum().backward()
    got = model[0].weight.grad.clone()
    model.zero_grad()
    model(x2).sum().backward()
    np.testing.assert_allclose(got.numpy(), model[0].weight.grad.numpy(), rtol=1e-6)
    with minitorch.no_grad():
        model[2].bias.add_(1.0)  # the replay reads the module's current weights
    np.testing.assert_allclose(traced(x2).detach().numpy(), model(x2).detach().numpy(), rtol=1e-6)


def test_graph_op_names_as_pytorchs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    want = [n.kind() for n in torch.jit.trace(mlp(torch), torch.from_numpy(x)).inlined_graph.nodes()
            if n.kind().startswith("aten::")]
    got = [n.kind() for n in minitorch.jit.trace(mlp(minitorch), minitorch.from_numpy(x)).graph.nodes()]
    assert got == want == ["aten::linear", "aten::relu", "aten::linear"]
    cell = minitorch.jit.trace(Cell.make(minitorch), (minitorch.rand(3, 4), minitorch.rand(3, 4)))
    text = str(cell.graph)
    assert text.startswith("graph(%self : __torch__.")
    assert "%x : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)" in text
    assert 'prim::GetAttr[name="weight"]' in text and "= aten::linear(%x, %weight, %bias)" in text
    assert "aten::tanh" in text and "prim::TupleConstruct" in text
    assert "_0 = torch.linear(x, linear_weight, linear_bias)" in cell.code and "return (_2, _2)" in cell.code


def test_traced_cnn_matches_eager_and_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 1, 8, 8)).astype(np.float32)

    def cnn(lib):
        lib.manual_seed(0)
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(27, 2))
    ref = cnn(torch)
    mine = cnn(minitorch)
    mine.load_state_dict({k: minitorch.from_numpy(v.detach().numpy()) for k, v in ref.state_dict().items()})
    traced = minitorch.jit.trace(mine, minitorch.from_numpy(x))
    x2 = np.random.default_rng(2).standard_normal((3, 1, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(traced(minitorch.from_numpy(x2)).detach().numpy(),
                               torch.jit.trace(ref, torch.from_numpy(x))(torch.from_numpy(x2)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    ops = [n.kind() for n in traced.graph.nodes()]
    assert ops[-3:] == ["aten::max_pool2d", "aten::flatten", "aten::linear"] and "aten::relu" in ops


def test_control_flow_is_frozen_with_a_tracer_warning():
    class Gate(minitorch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x
    with pytest.warns(minitorch.jit.TracerWarning, match="Python boolean"):
        traced = minitorch.jit.trace(Gate(), minitorch.ones(2))
    assert traced(-minitorch.ones(2)).tolist() == [-1.0, -1.0]  # the branch taken while tracing
    assert minitorch.jit.script(Gate())(-minitorch.ones(2)).tolist() == [1.0, 1.0]  # script runs Python
    with pytest.raises(minitorch.jit.TracingCheckError, match="Graphs differed"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", minitorch.jit.TracerWarning)
            minitorch.jit.trace(Gate(), minitorch.ones(2), check_inputs=[(-minitorch.ones(2),)])


def test_trace_function_and_refusals():
    def f(a, b):
        return a * 2 + b
    traced = minitorch.jit.trace(f, (minitorch.ones(2), minitorch.ones(2)))
    assert isinstance(traced, minitorch.jit.ScriptFunction)
    assert traced(minitorch.ones(2), minitorch.zeros(2)).tolist() == [2.0, 2.0]
    assert [n.kind() for n in traced.graph.nodes()] == ["aten::mul", "aten::add"]
    with pytest.raises(RuntimeError, match="cannot be traced"):
        minitorch.jit.trace(lambda a, n: a * n, (minitorch.ones(2), 3))
    with pytest.raises(RuntimeError, match="Only tensors"):
        minitorch.jit.trace(lambda a: a.sum().item(), minitorch.ones(2), check_trace=False)
    with pytest.raises(RuntimeError, match="must be specified"):
        minitorch.jit.trace(f)
    with pytest.raises(RuntimeError, match="script"):
        _ = minitorch.jit.script(f).graph


def test_save_load_round_trip_traced(tmp_path):
    model = Cell.make(minitorch)
    x, h = minitorch.rand(3, 4), minitorch.rand(3, 4)
    traced = minitorch.jit.trace(model, (x, h))
    path = tmp_path / "cell.pt"
    traced.save(str(path), _extra_files={"meta.txt": "hello"})
    import zipfile
    names = zipfile.ZipFile(path).namelist()
    assert {"cell/data.pkl", "cell/constants.pkl", "cell/data/0", "cell/extra/meta.txt"} <= set(names)
    assert any(n.startswith("cell/code/__torch__/") for n in names)
    extra = {"meta.txt": ""}
    loaded = minitorch.jit.load(str(path), map_location="cpu", _extra_files=extra)
    assert extra["meta.txt"] == b"hello"
    assert isinstance(loaded, minitorch.jit.RecursiveScriptModule) and loaded.original_name == "MyCell"
    x2 = minitorch.rand(5, 4)
    h2 = minitorch.rand(5, 4)
    np.testing.assert_allclose(loaded(x2, h2)[0].detach().numpy(), model(x2, h2)[0].detach().numpy(), rtol=1e-6)
    assert loaded.code == traced.code and str(loaded.graph) == str(traced.graph)
    assert sorted(loaded.state_dict()) == sorted(model.state_dict())


class Offset(minitorch.nn.Module):
    """At module level: a scripted module is saved with its class by reference, as pickle does."""

    def __init__(self):
        super().__init__()
        self.lin = minitorch.nn.Linear(2, 2)
        self.scale = 3

    def forward(self, x):
        return self.lin(x) * self.scale + minitorch.tensor([1.0, -1.0])


def test_save_load_scripted_and_constants(tmp_path):
    m = Offset()
    x = minitorch.rand(4, 2)
    for compiled in (minitorch.jit.script(m), minitorch.jit.trace(m, x)):
        path = tmp_path / "m.pt"
        minitorch.jit.save(compiled, str(path))
        loaded = minitorch.jit.load(str(path))
        np.testing.assert_allclose(loaded(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert "self.lin(x) * self.scale" in minitorch.jit.script(m).code


def test_load_refusals(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        minitorch.jit.load(str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="is a directory"):
        minitorch.jit.load(str(tmp_path))
    minitorch.save({"w": minitorch.ones(2)}, str(tmp_path / "sd.pt"))
    with pytest.raises(RuntimeError, match="constants.pkl"):
        minitorch.jit.load(str(tmp_path / "sd.pt"))
    (tmp_path / "junk.pt").write_bytes(b"not a zip")
    with pytest.raises(RuntimeError, match="zip archive"):
        minitorch.jit.load(str(tmp_path / "junk.pt"))


def test_archive_of_pytorch_is_refused_clearly(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.jit.trace(Cell.make(torch), (torch.rand(3, 4), torch.rand(3, 4))).save(str(path))
    with pytest.raises(RuntimeError, match="not written by minitorch.jit.save"):
        minitorch.jit.load(str(path))


def test_submodules_have_their_own_traced_code_and_dead_ops_are_left_out():
    class Gate(minitorch.nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    class Net(minitorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = minitorch.nn.Linear(3, 3)
            self.gate = Gate()

        def forward(self, x):
            return self.gate(self.lin(x)).relu()
    net = Net()
    with minitorch.no_grad():
        net.lin.weight.fill_(-1.0)
        net.lin.bias.zero_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", minitorch.jit.TracerWarning)
        traced = minitorch.jit.trace(net, minitorch.ones(2, 3))
    # the branch's sum and comparison feed only Python: left out, as PyTorch's dead code elimination does
    assert [n.kind() for n in traced.graph.nodes()] == ["aten::linear", "aten::neg", "aten::relu"]
    assert isinstance(traced.gate, minitorch.jit.TracedModule) and "torch.neg(x)" in traced.gate.code
    assert traced.gate(minitorch.ones(2)).tolist() == [-1.0, -1.0]
    assert traced.lin.weight is net.lin.weight


def test_batch_norm_running_stats_update_through_the_replay(tmp_path):
    bn = minitorch.nn.BatchNorm1d(3)
    traced = minitorch.jit.trace(bn, minitorch.randn(4, 3), check_trace=False)
    before = bn.running_mean.clone()
    traced(minitorch.randn(4, 3) + 5.0)
    assert not minitorch.equal(bn.running_mean, before) and int(bn.num_batches_tracked) == 2
    traced.save(str(tmp_path / "bn.pt"))
    loaded = minitorch.jit.load(str(tmp_path / "bn.pt"))
    np.testing.assert_allclose(loaded.running_mean.numpy(), bn.running_mean.numpy())


def test_trace_module_methods_save_and_load(tmp_path):
    class M(minitorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = minitorch.nn.Parameter(minitorch.ones(2))

        def forward(self, x):
            return x * self.w

        def other(self, x):
            return x - self.w
    traced = minitorch.jit.trace_module(M(), {"forward": minitorch.ones(2), "other": minitorch.ones(2)})
    minitorch.jit.save(traced, str(tmp_path / "m.pt"))
    loaded = minitorch.jit.load(str(tmp_path / "m.pt"))
    x = minitorch.tensor([3.0, 4.0])
    assert loaded(x).tolist() == [3.0, 4.0] and loaded.other(x).tolist() == [2.0, 3.0]


def test_freeze_wants_a_script_module_and_entry_points_warn_deprecated_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, minitorch):
        model = lib.nn.Linear(2, 2).eval()
        with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
            lib.jit.freeze(model)
        with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
            lib.jit.optimize_for_inference(model)
        with pytest.warns(DeprecationWarning, match=r"`torch.jit.trace` is deprecated"):
            traced = lib.jit.trace(model, lib.ones(1, 2))
        with pytest.warns(DeprecationWarning, match=r"`torch.jit.script` is deprecated"):
            lib.jit.script(model)
        assert lib.jit.freeze(traced) is not None


def test_torch_load_hands_a_jit_archive_to_jit_load(tmp_path):
    model = minitorch.nn.Linear(2, 2)
    minitorch.jit.trace(model, minitorch.ones(1, 2)).save(str(tmp_path / "m.pt"))
    with pytest.warns(UserWarning, match="looks like a TorchScript archive"):
        with pytest.raises(RuntimeError, match="weights_only=True"):
            minitorch.load(str(tmp_path / "m.pt"))
    with pytest.warns(UserWarning, match="dispatching to 'torch.jit.load'"):
        loaded = minitorch.load(str(tmp_path / "m.pt"), weights_only=False)
    x = minitorch.randn(3, 2)
    np.testing.assert_allclose(loaded(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_a_temporary_generator_outlives_the_trace():
    """The tracer keeps the call's Generator: one made for a single call is gone when the trace
    ends, and the record must not read it freed (the sanitizer run checks this)."""
    def f(x):
        return x + minitorch.randn(3, generator=minitorch.Generator().manual_seed(0))
    traced = minitorch.jit.trace(f, minitorch.zeros(3), check_trace=False)
    assert [n.kind() for n in traced.graph.nodes()] == ["aten::randn", "aten::add"]
    assert traced(minitorch.zeros(3)).shape == (3,)


def test_sizes_read_by_the_users_code_lock_the_replay_to_the_traced_sizes(tmp_path):
    """PyTorch's tracer records x.size(0); minitorch's records the number, so instead of computing
    silently with the old size the replay refuses other sizes, after a TracerWarning. Sizes that
    minitorch's own modules read (Flatten, Linear) do not lock it."""
    class Net(minitorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = minitorch.nn.Linear(12, 2)

        def forward(self, x):
            return self.fc(x.view(x.size(0), -1))
    with pytest.warns(minitorch.jit.TracerWarning, match="size while tracing records it as a constant"):
        traced = minitorch.jit.trace(Net(), minitorch.randn(4, 3, 4))
    assert traced(minitorch.randn(4, 3, 4)).shape == (4, 2)
    with pytest.raises(RuntimeError, match=r"traced with size \[4, 3, 4\] and is given \[8, 3, 4\]"):
        traced(minitorch.randn(8, 3, 4))
    traced.save(str(tmp_path / "n.pt"))
    with pytest.raises(RuntimeError, match="traced sizes"):
        minitorch.jit.load(str(tmp_path / "n.pt"))(minitorch.randn(8, 3, 4))
    flat = minitorch.nn.Sequential(minitorch.nn.Flatten(), minitorch.nn.Linear(12, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", minitorch.jit.TracerWarning)
        assert minitorch.jit.trace(flat, minitorch.randn(4, 3, 4))(minitorch.randn(8, 3, 4)).shape == (8, 2)


def test_trace_on_cuda_and_load_onto_the_cpu(tmp_path):
    if not minitorch.cuda.is_available():
        pytest.skip("no CUDA device (run with MINITORCH_CUDA_EMU=1 for the emulated one)")
    model = mlp(minitorch).cuda()
    x = minitorch.randn(5, 4, device="cuda")
    traced = minitorch.jit.trace(model, x)
    assert "device=cuda:0" in str(traced.graph)
    traced.save(str(tmp_path / "c.pt"))
    on_cpu = minitorch.jit.load(str(tmp_path / "c.pt"), map_location="cpu")
    assert all(p.device.type == "cpu" for p in on_cpu.parameters())
    np.testing.assert_allclose(on_cpu(x.cpu()).detach().numpy(), model(x).detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
    on_gpu = minitorch.jit.load(str(tmp_path / "c.pt"))
    assert all(p.device.type == "cuda" for p in on_gpu.parameters())


def test_example_kwarg_inputs_and_keyword_calls():
    class Two(minitorch.nn.Module):
        def forward(self, x, y):
            return x - y
    traced = minitorch.jit.trace(Two(), example_kwarg_inputs={"y": minitorch.ones(2), "x": minitorch.zeros(2)})
    assert traced(minitorch.zeros(2), minitorch.ones(2)).tolist() == [-1.0, -1.0]
    assert traced(y=minitorch.ones(2), x=minitorch.full((2,), 3.0)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="unexpected keyword argument 'z'"):
        traced(minitorch.ones(2), z=minitorch.ones(2))
    torch = pytest.importorskip("torch")
    two = torch.jit.trace(_torch_two(torch), example_kwarg_inputs={"y": torch.ones(2), "x": torch.zeros(2)})
    assert two(y=torch.ones(2), x=torch.full((2,), 3.0)).tolist() == [2.0, 2.0]


def _torch_two(torch):
    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x - y
    return Two()
