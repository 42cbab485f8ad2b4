"""minitorch.fx: tracing real models (MLP, CNN with BatchNorm, residual block, a module with tensor
methods and parameters read as attributes) gives GraphModules whose outputs and gradients equal the
original's; the graph editing API; the conv-bn fuser, profiling Interpreter and Transformer written
the way PyTorch's FX tutorials write them; ShapeProp; replace_pattern; TraceError; and, where
PyTorch is installed, the same node list as torch.fx for the same model."""
import copy
import io
import operator
import time

import numpy as np
import pytest

import minitorch
import minitorch.fx as fx
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch import sigmoid  # a function bound under its own name in this module's globals
from minitorch.fx.passes.shape_prop import ShapeProp
from minitorch.fx.proxy import TraceError

# ---- models, written once for minitorch and PyTorch ------------------------------------------------


def make_models(lib):
    N, Fn = lib.nn, lib.nn.functional

    class MLP(N.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = N.Linear(6, 8)
            self.act = N.ReLU()
            self.fc2 = N.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class SmallCNN(N.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = N.Conv2d(3, 4, 3, padding=1)
            self.bn1 = N.BatchNorm2d(4)
            self.conv2 = N.Conv2d(4, 6, 3, stride=2)
            self.bn2 = N.BatchNorm2d(6)
            self.pool = N.AdaptiveAvgPool2d(1)
            self.fc = N.Linear(6, 2)

        def forward(self, x):
            x = Fn.relu(self.bn1(self.conv1(x)))
            x = lib.relu(self.bn2(self.conv2(x)))
            x = lib.flatten(self.pool(x), 1)
            return self.fc(x)

    class BasicBlock(N.Module):
        def __init__(self, c=4):
            super().__init__()
            self.conv1 = N.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = N.BatchNorm2d(c)
            self.relu = N.ReLU()
            self.conv2 = N.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = N.BatchNorm2d(c)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    class Methods(N.Module):
        def __init__(self):
            super().__init__()
            self.weight = N.Parameter(lib.randn(12, 5))
            self.bias = N.Parameter(lib.randn(5))
            self.body = N.Sequential(N.Linear(5, 5), N.Tanh())

        def forward(self, x):
            b = x.size(0)
            y = x.permute(0, 2, 1).contiguous().view(b, -1)
            y = y @ self.weight + self.bias
            y = self.body(y)
            z = lib.cat([y, y * 2], dim=1)
            return z.flatten(1).sum(dim=1, keepdim=True), x.shape[1]

    class Scaled(N.Module):
        def __init__(self):
            super().__init__()
            self.conv = N.Conv2d(2, 2, 3, padding=1)
            self.bn = N.BatchNorm2d(2)
            self.register_buffer("scale", lib.full((1,), 0.5))

        def forward(self, x):
            return lib.relu(self.bn(self.conv(x)) * self.scale + x)

    class Nested(N.Module):
        """Non-leaf submodules in a Sequential, a buffer, a ModuleDict, slicing, a tensor made in
        forward, a dict of outputs."""

        def __init__(self):
            super().__init__()
            self.layer1 = N.Sequential(Scaled(), Scaled())
            self.w = N.Parameter(lib.randn(2, 8))
            self.head = N.ModuleDict({"fc": N.Linear(8, 3)})

        def forward(self, x, mask=None):
            x = self.layer1(x)
            x = x.mean(dim=(2, 3))
            y = lib.matmul(x, self.w)
            y = y.reshape(x.shape[0], -1)[:, 1:]
            y = lib.cat([y, y.new_zeros(y.shape[0], 1)], 1)
            z = self.head["fc"](y) + lib.tensor([1.0, 2.0, 3.0])
            return {"out": z, "neg": -z, "t": z.T}

    return {"mlp": (MLP, (2, 6)), "cnn": (SmallCNN, (2, 3, 8, 8)), "block": (BasicBlock, (2, 4, 6, 6)),
            "methods": (Methods, (2, 4, 3)), "nested": (Nested, (2, 2, 4, 4))}


MODELS = make_models(minitorch)


def _grads(module, x):
    return [p.grad.numpy().copy() for p in module.parameters()] + [x.grad.numpy().copy()]


def _leaves(out):
    return list(out.values()) if isinstance(out, dict) else list(out) if isinstance(out, tuple) else [out]


def _run_with_grad(module, x_np):
    x = minitorch.tensor(x_np, requires_grad=True)
    out = module(x)
    first = _leaves(out)[0]
    weights = np.linspace(-1, 1, first.numel()).reshape(first.shape).astype(np.float32)
    (first * minitorch.tensor(weights)).sum().backward()
    return out, _grads(module, x)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_traced_model_matches_original_values_and_grads(name, mode):
    minitorch.manual_seed(0)
    cls, shape = MODELS[name]
    model = cls()
    getattr(model, mode)()
    twin = copy.deepcopy(model)
    gm = fx.symbolic_trace(twin)
    assert isinstance(gm, nn.Module) and type(gm).__name__ == cls.__name__
    x_np = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    out_ref, grads_ref = _run_with_grad(model, x_np)
    out_fx, grads_fx = _run_with_grad(gm, x_np)
    assert type(out_fx) is type(out_ref) and len(_leaves(out_fx)) == len(_leaves(out_ref))
    for a, b in zip(_leaves(out_fx), _leaves(out_ref)):
        if isinstance(b, minitorch.Tensor):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
        else:
            assert a == b
    assert len(grads_ref) == len(grads_fx)
    for g_ref, g_fx in zip(grads_ref, grads_fx):
        np.testing.assert_allclose(g_fx, g_ref, rtol=1e-4, atol=1e-6)
    # BatchNorm's running statistics moved the same way in train mode
    # (the GraphModule holds what its graph names, plus the tensors made in forward as constants)
    ref_state, fx_state = model.state_dict(), gm.state_dict()
    assert all(k.startswith("_tensor_constant") for k in set(fx_state) - set(ref_state))
    assert set(ref_state) <= set(fx_state)
    for k, v_ref in ref_state.items():
        np.testing.assert_allclose(fx_state[k].detach().numpy(), v_ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_graph_nodes_of_a_cnn():
    gm = fx.symbolic_trace(MODELS["cnn"][0]())
    nodes = [(n.op, n.target) for n in gm.graph.nodes]
    assert nodes == [("placeholder", "x"), ("call_module", "conv1"), ("call_module", "bn1"),
                     ("call_function", F.relu), ("call_module", "conv2"), ("call_module", "bn2"),
                     ("call_function", minitorch.relu), ("call_module", "pool"),
                     ("call_function", minitorch.flatten), ("call_module", "fc"), ("output", "output")]
    assert "relu = torch.nn.functional.relu(bn1);  bn1 = None" in gm.code
    assert "flatten = torch.flatten(pool, 1)" in gm.code


def test_methods_and_parameters_become_nodes():
    gm = fx.symbolic_trace(MODELS["methods"][0]())
    by_op = {}
    for n in gm.graph.nodes:
        by_op.setdefault(n.op, []).append(n.target)
    assert by_op["get_attr"] == ["weight", "bias"]
    assert by_op["call_method"] == ["size", "permute", "contiguous", "view", "flatten", "sum"]
    assert by_op["call_module"] == ["body.0", "body.1"]
    assert minitorch.cat in by_op["call_function"] and operator.matmul in by_op["call_function"]
    cat = next(n for n in gm.graph.nodes if n.target is minitorch.cat)
    assert isinstance(cat.args[0], list) and len(cat.all_input_nodes) == 2 and cat.kwargs == {"dim": 1}


def test_trace_patches_are_restored_even_on_error():
    before = (minitorch.relu, F.relu, nn.Module.__call__, nn.Module.__getattr__, minitorch.special.expit)

    class Bad(nn.Module):
        def forward(self, x):
            minitorch.relu(x)
            raise KeyError("boom")

    with pytest.raises(KeyError):
        fx.symbolic_trace(Bad())
    fx.symbolic_trace(MODELS["mlp"][0]())
    assert (minitorch.relu, F.relu, nn.Module.__call__, nn.Module.__getattr__, minitorch.special.expit) == before
    assert type(minitorch.relu).__name__ == "builtin_function_or_method"


def test_functions_bound_under_other_names_and_tensor_constants():
    class M(nn.Module):
        def forward(self, x):
            return sigmoid(x) + minitorch.ones(3)

    gm = fx.symbolic_trace(M())
    targets = [n.target for n in gm.graph.nodes]
    assert minitorch.sigmoid in targets and "_tensor_constant0" in targets
    x = minitorch.randn(2, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), (minitorch.sigmoid(x) + 1).detach().numpy(), rtol=1e-6)
    assert "_tensor_constant0" in gm.state_dict()


def test_trace_a_function_and_concrete_args():
    def f(x, scale, flip: bool = False):
        return x * scale if not flip else -x

    gm = fx.symbolic_trace(f, concrete_args={"flip": False})
    x = minitorch.randn(4)
    np.testing.assert_allclose(gm(x, 3.0).detach().numpy(), (x * 3.0).detach().numpy())
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "placeholder", "placeholder", "call_function", "output"]
    with pytest.raises(TraceError, match="control flow"):
        fx.symbolic_trace(f)


def test_data_dependent_control_flow_raises_trace_error():
    class Branchy(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    class Loops(nn.Module):
        def forward(self, x):
            return [t for t in x]

    class Unpack(nn.Module):
        def forward(self, x):
            a, b = x.split(2)
            return a + b

    with pytest.raises(TraceError, match="symbolically traced variables cannot be used as inputs to control flow"):
        fx.symbolic_trace(Branchy())
    with pytest.raises(TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(Loops())
    elsewhere = {}  # len() in a module that did not wrap it (this one did, below)
    exec("def size_of(x):\n    return len(x)", elsewhere)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(elsewhere["size_of"])
    gm = fx.symbolic_trace(Unpack())
    x = minitorch.randn(4, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), (x[:2] + x[2:]).detach().numpy())
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [operator.getitem, operator.getitem,
                                                                              operator.add]


def _double_it(x):
    return [x, x * 2][len(x) > 1]


fx.wrap("_double_it")
fx.wrap("len")


def _halve(x):
    return x / 2


fx.wrap(_halve)


def test_wrap_records_one_call_function():
    class M(nn.Module):
        def forward(self, x):
            return _double_it(x) + 1

    gm = fx.symbolic_trace(M())
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [_double_it, operator.add]
    x = minitorch.randn(3)
    np.testing.assert_allclose(gm(x).detach().numpy(), (x * 2 + 1).detach().numpy())
    assert _double_it is globals()["_double_it"] and not hasattr(_double_it, "fn")


def test_wrap_a_builtin_and_a_function_object():
    def f(x):
        return _halve(x) + len(x)

    gm = fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [_halve, len, operator.add]
    assert "len_1 = len(x)" in gm.code and "len" not in globals()
    x = minitorch.randn(4)
    np.testing.assert_allclose(gm(x).detach().numpy(), (x / 2 + 4).detach().numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="top level of a module"):
        fx.wrap("abs")


def test_sequential_root_keeps_its_argument_name():
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    gm = fx.symbolic_trace(seq)
    assert "def forward(self, input):\n    input_1 = input\n" in gm.code
    x = minitorch.randn(4, 3)
    np.testing.assert_allclose(gm(input=x).detach().numpy(), seq(x).detach().numpy())
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["0", "1"]


def test_graph_module_from_dict_and_submodule_surgery():
    g = fx.Graph()
    x = g.placeholder("x")
    lin = g.call_module("head.proj", (x,))
    scaled = g.call_function(operator.mul, (lin, g.get_attr("scale")))
    g.output(scaled)
    proj, scale = nn.Linear(3, 3), minitorch.tensor(2.0)
    gm = fx.GraphModule({"head.proj": proj, "scale": scale}, g, "Surgery")
    assert gm.head.proj is proj and "scale" in dict(gm.named_buffers()) and type(gm).__name__ == "Surgery"
    t = minitorch.randn(2, 3)
    np.testing.assert_allclose(gm(t).detach().numpy(), (proj(t) * 2).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="referenced target scale but that target was not provided"):
        fx.GraphModule({"head.proj": proj}, g)
    # swap the projection for a new submodule, the model-surgery way
    assert gm.add_submodule("head.act", nn.Tanh())
    with gm.graph.inserting_after(lin):
        act = gm.graph.call_module("head.act", (lin,))
    lin.replace_all_uses_with(act, delete_user_cb=lambda user: user is not act)
    gm.recompile()
    np.testing.assert_allclose(gm(t).detach().numpy(), (minitorch.tanh(proj(t)) * 2).detach().numpy(), rtol=1e-6)
    assert gm.graph.find_nodes(op="call_module", target="head.act") == [act]
    assert gm.delete_submodule("head.act") and not gm.delete_submodule("head.act")
    with pytest.raises(RuntimeError, match="nonexistent attribute act"):
        gm.graph.lint()


def test_torch_function_protocol_records_on_proxies():
    def scaled(x, factor=2.0):
        if minitorch.overrides.has_torch_function_unary(x):
            return minitorch.overrides.handle_torch_function(scaled, (x,), x, factor=factor)
        return x * factor

    gm = fx.symbolic_trace(lambda x: scaled(x) + 1)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [scaled, operator.add]
    np.testing.assert_allclose(gm(minitorch.ones(2)).detach().numpy(), [3.0, 3.0])


# ---- the graph API --------------------------------------------------------------------------------------


def test_graph_building_editing_and_code():
    g = fx.Graph()
    x = g.placeholder("x")
    relu = g.call_function(minitorch.relu, (x,))
    out = g.output(relu)
    with g.inserting_before(out):
        neg = g.call_function(minitorch.neg, (relu,))
    with g.inserting_after(neg):
        add = g.call_function(operator.add, (neg, x))
    out.args = (add,)
    g.lint()
    assert [n.name for n in g.nodes] == ["x", "relu", "neg", "add", "output"]
    assert relu.users == {neg: None} and add.all_input_nodes == [neg, x] and x.next is relu and relu.prev is x
    assert neg.format_node() == "%neg : [num_users=1] = call_function[target=torch.neg](args = (%relu,), kwargs = {})"
    assert "add = neg + x" in g.python_code("self").src
    gm = fx.GraphModule(nn.Module(), g)
    t = minitorch.tensor([-1.0, 2.0])
    np.testing.assert_allclose(gm(t).detach().numpy(), [-1.0, 0.0])
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(neg)
    # bypass relu, then drop what nothing reads
    neg.replace_input_with(relu, x)
    assert relu.users == {} and g.eliminate_dead_code() and [n.name for n in g.nodes] == ["x", "neg", "add", "output"]
    gm.recompile()
    np.testing.assert_allclose(gm(t).detach().numpy(), [0.0, 0.0])
    # move a node before its argument: lint says so
    x.prepend(neg)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    x.append(neg)  # back after its argument
    g.lint()


def test_node_copy_graph_copy_and_deepcopy():
    gm = fx.symbolic_trace(MODELS["mlp"][0]())
    g2 = fx.Graph()
    val_map = {}
    out = g2.graph_copy(gm.graph, val_map)
    g2.output(g2.call_function(minitorch.sigmoid, (out,)))
    g2.lint()
    assert len(val_map) == len(gm.graph.nodes) - 1 and all(n.graph is g2 for n in val_map.values())
    gm2 = fx.GraphModule(gm, g2)
    x = minitorch.randn(3, 6)
    np.testing.assert_allclose(gm2(x).detach().numpy(), minitorch.sigmoid(gm(x)).detach().numpy(), rtol=1e-6)
    g3 = fx.Graph()
    p = g3.placeholder("x")
    c = g3.node_copy(next(n for n in gm.graph.nodes if n.op == "call_module"), lambda n: p)
    assert c.args == (p,) and c.target == "fc1" and c.graph is g3
    g4 = copy.deepcopy(gm.graph)
    assert [(n.op, n.name) for n in g4.nodes] == [(n.op, n.name) for n in gm.graph.nodes]
    assert not set(g4.nodes) & set(gm.graph.nodes)


def test_print_tabular_and_readable(capsys):
    gm = fx.symbolic_trace(MODELS["mlp"][0]())
    gm.graph.print_tabular()
    table = capsys.readouterr().out
    assert "opcode" in table and "call_module" in table and "fc2" in table
    text = gm.print_readable(print_output=False)
    assert text.startswith("class MLP(torch.nn.Module):\n    def forward(self, x):")
    assert "fc1 = self.fc1(x);  x = None" in gm.code
    assert "graph():" in str(gm.graph) and "%fc1 : [num_users=1] = call_module[target=fc1]" in str(gm.graph)


def test_graph_module_state_dict_deepcopy_pickle_and_training():
    minitorch.manual_seed(0)
    model = MODELS["methods"][0]()
    gm = fx.symbolic_trace(model)
    assert list(gm.state_dict()) == list(model.state_dict())
    clone = copy.deepcopy(gm)
    assert type(clone) is not type(gm) and type(clone).__name__ == "Methods"
    assert clone.weight is not gm.weight and clone.graph is not gm.graph and clone.graph.owning_module is clone
    buf = io.BytesIO()
    minitorch.save(gm, buf)
    buf.seek(0)
    loaded = minitorch.load(buf, weights_only=False)
    x = minitorch.randn(3, 4, 3)
    for other in (clone, loaded):
        np.testing.assert_allclose(other(x)[0].detach().numpy(), gm(x)[0].detach().numpy(), rtol=1e-6)
    # train the traced module and the original side by side: same parameters after two steps
    ref = copy.deepcopy(model)
    opt_ref = minitorch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt_gm = minitorch.optim.SGD(clone.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        for mod, opt in ((ref, opt_ref), (clone, opt_gm)):
            opt.zero_grad()
            mod(x)[0].pow(2).mean().backward()
            opt.step()
    for a, b in zip(ref.parameters(), clone.parameters()):
        np.testing.assert_allclose(b.detach().detach().numpy(), a.detach().detach().numpy(), rtol=1e-5, atol=1e-6)
    clone.load_state_dict(model.state_dict())
    np.testing.assert_allclose(clone(x)[0].detach().numpy(), model(x)[0].detach().numpy(), rtol=1e-6)


# ---- the tutorials' programs ----------------------------------------------------------------------------


def _parent_name(target):
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def _replace_node_module(node, modules, new_module):
    parent_name, name = _parent_name(node.target)
    setattr(modules[parent_name], name, new_module)


def fuse(model):
    """The conv-bn fuser of PyTorch's FX tutorial."""
    model = copy.deepcopy(model)
    fx_model = fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    for node in fx_model.graph.nodes:
        if node.op != "call_module":
            continue
        prev = node.args[0]
        if (type(modules[node.target]) is nn.BatchNorm2d and isinstance(prev, fx.Node) and prev.op == "call_module"
                and type(modules[prev.target]) is nn.Conv2d):
            if len(prev.users) > 1:
                continue
            fused = nn.utils.fusion.fuse_conv_bn_eval(modules[prev.target], modules[node.target])
            _replace_node_module(prev, modules, fused)
            node.replace_all_uses_with(prev)
            fx_model.graph.erase_node(node)
    fx_model.graph.lint()
    fx_model.delete_all_unused_submodules()
    fx_model.recompile()
    return fx_model


@pytest.mark.parametrize("name", ["cnn", "block"])
def test_conv_bn_fuser(name):
    minitorch.manual_seed(0)
    model = MODELS[name][0]()
    x = minitorch.randn(*MODELS[name][1])
    model(x)  # move the running statistics off their initial values
    model.eval()
    fused = fuse(model)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in fused.modules())
    assert not any(n.op == "call_module" and n.target.startswith("bn") for n in fused.graph.nodes)
    with minitorch.no_grad():
        np.testing.assert_allclose(fused(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


class ProfilingInterpreter(fx.Interpreter):
    """The profiler of PyTorch's "Building a Simple CPU Performance Profiler with FX" tutorial."""

    def __init__(self, mod):
        gm = fx.symbolic_trace(mod)
        super().__init__(gm)
        self.total_runtime_sec = []
        self.runtimes_sec = {}

    def run(self, *args):
        t_start = time.time()
        return_val = super().run(*args)
        self.total_runtime_sec.append(time.time() - t_start)
        return return_val

    def run_node(self, n):
        t_start = time.time()
        return_val = super().run_node(n)
        self.runtimes_sec.setdefault(n, []).append(time.time() - t_start)
        return return_val


def test_profiling_interpreter_records_each_node():
    model = MODELS["block"][0]().eval()
    interp = ProfilingInterpreter(model)
    x = minitorch.randn(*MODELS["block"][1])
    with minitorch.no_grad():
        out = interp.run(x)
        out2 = interp.run(x)
        np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert out2.shape == out.shape and len(interp.total_runtime_sec) == 2
    assert set(interp.runtimes_sec) == set(interp.module.graph.nodes)
    assert all(len(v) == 2 and min(v) >= 0 for v in interp.runtimes_sec.values())
    assert sum(sum(v) for v in interp.runtimes_sec.values()) <= sum(interp.total_runtime_sec)
    # every value was dropped after its last use: only the output's remains
    assert list(interp.env) == [n for n in interp.module.graph.nodes if n.op == "output"]
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        interp.run()


def test_interpreter_hooks_see_targets_and_values():
    seen = []

    class Recorder(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            seen.append((target, tuple(type(a).__name__ for a in args)))
            return super().call_function(target, args, kwargs)

        def call_module(self, target, args, kwargs):
            seen.append((target, tuple(a.shape for a in args)))
            return super().call_module(target, args, kwargs)

    gm = fx.symbolic_trace(MODELS["cnn"][0]().eval())
    x = minitorch.randn(1, 3, 8, 8)
    out = Recorder(gm).run(x)
    np.testing.assert_allclose(out.detach().numpy(), gm(x).detach().numpy(), rtol=1e-6)
    assert seen[0] == ("conv1", ((1, 3, 8, 8),)) and (F.relu, ("Tensor",)) in seen
    env_node = next(n for n in gm.graph.nodes if n.op == "call_module")
    args, kwargs = Recorder(gm).fetch_args_kwargs_from_env(next(iter(gm.graph.nodes)))
    assert args == () and kwargs == {} and env_node.target == "conv1"


def test_transformer_swaps_add_for_mul_and_sigmoid_for_neg():
    class M(nn.Module):
        def forward(self, x, y):
            return minitorch.sigmoid(x + y) + x

    class Swap(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == operator.add:
                target = operator.mul
            if target == minitorch.sigmoid:
                return minitorch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    gm = fx.symbolic_trace(M())
    new = Swap(gm).transform()
    assert [n.target for n in new.graph.nodes if n.op == "call_function"] == [operator.mul, minitorch.neg, operator.mul]
    x, y = minitorch.randn(5), minitorch.randn(5)
    np.testing.assert_allclose(new(x, y).detach().numpy(), (-(x * y) * x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(gm(x, y).detach().numpy(), (minitorch.sigmoid(x + y) + x).detach().numpy(), rtol=1e-6)
    # an untouched Transformer reproduces the module, submodules included
    cnn = MODELS["cnn"][0]().eval()
    same = fx.Transformer(fx.symbolic_trace(cnn)).transform()
    xi = minitorch.randn(2, 3, 8, 8)
    np.testing.assert_allclose(same(xi).detach().numpy(), cnn(xi).detach().numpy(), rtol=1e-6)


def test_shape_prop():
    gm = fx.symbolic_trace(MODELS["cnn"][0]())
    x = minitorch.randn(2, 3, 8, 8)
    ShapeProp(gm).propagate(x)
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes if n.op != "output"}
    assert shapes == {"x": (2, 3, 8, 8), "conv1": (2, 4, 8, 8), "bn1": (2, 4, 8, 8), "relu": (2, 4, 8, 8),
                      "conv2": (2, 6, 3, 3), "bn2": (2, 6, 3, 3), "relu_1": (2, 6, 3, 3), "pool": (2, 6, 1, 1),
                      "flatten": (2, 6), "fc": (2, 2)}
    meta = next(iter(gm.graph.nodes)).meta["tensor_meta"]
    assert meta.dtype == minitorch.float32 and meta.stride == (192, 64, 8, 1) and meta.requires_grad is False
    assert next(iter(gm.graph.nodes)).meta["type"] is minitorch.Tensor


def test_replace_pattern():
    class M(nn.Module):
        def forward(self, x, w1, w2):
            m1 = minitorch.cat([w1, w2]).sum()
            m2 = minitorch.cat([w1, w2]).sum()
            return x + minitorch.max(m1) + minitorch.max(m2)

    def pattern(w1, w2):
        return minitorch.cat([w1, w2]).sum()

    def replacement(w1, w2):
        return minitorch.stack([w1, w2])

    gm = fx.symbolic_trace(M())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2 and all(isinstance(m.anchor, fx.Node) for m in matches)
    targets = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    assert targets.count(minitorch.stack) == 2 and minitorch.cat not in targets and "sum" not in targets
    gm.graph.lint()
    x, w1, w2 = minitorch.randn(3), minitorch.randn(3), minitorch.randn(3)
    expected = x + 2 * minitorch.max(minitorch.stack([w1, w2]))
    np.testing.assert_allclose(gm(x, w1, w2).detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def test_replace_pattern_skips_matches_used_outside():
    def f(x):
        a = minitorch.relu(x)
        return minitorch.neg(a) + a

    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, lambda x: minitorch.neg(minitorch.relu(x)), lambda x: minitorch.abs(x))
    assert matches == []
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [minitorch.relu, minitorch.neg,
                                                                              operator.add]


# ---- against torch.fx -------------------------------------------------------------------------------------


def _node_signature(gm):
    """(op, target) per node: module and method targets by name, function targets by their name."""
    return [(n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in gm.graph.nodes]


@pytest.mark.parametrize("name", list(MODELS))
def test_same_nodes_as_torch_fx(name):
    torch = pytest.importorskip("torch")
    import torch.fx

    ref_models = make_models(torch)
    ours = fx.symbolic_trace(MODELS[name][0]())
    theirs = torch.fx.symbolic_trace(ref_models[name][0]())
    assert _node_signature(ours) == _node_signature(theirs)
    assert [n.name for n in ours.graph.nodes] == [n.name for n in theirs.graph.nodes]
    assert [len(n.users) for n in ours.graph.nodes] == [len(n.users) for n in theirs.graph.nodes]
    if name != "cnn":  # torch's F.relu records its defaults as kwargs (inplace = False); ours records the call
        assert ours.code == theirs.code


# ---- the torch.fx documentation's examples ------------------------------------------------------------


def test_docs_transform_retargets_nodes():
    class M(nn.Module):
        def forward(self, x, y, *, scale=1.0):
            return minitorch.add(x, y) * scale

    def transform(m, tracer_class=fx.Tracer):
        graph = tracer_class().trace(m)
        for node in graph.nodes:
            if node.op == "call_function" and node.target == minitorch.add:
                node.target = minitorch.mul
        graph.lint()
        return fx.GraphModule(m, graph)

    gm = transform(M())
    x, y = minitorch.randn(3), minitorch.randn(3)
    np.testing.assert_allclose(gm(x, y, scale=2.0).detach().numpy(), (x * y * 2).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(gm(x, y).detach().numpy(), (x * y).detach().numpy(), rtol=1e-6)


def test_docs_decomposition_with_graph_appending_tracer():
    def relu_decomposition(x):
        return (x > 0) * x

    decomposition_rules = {F.relu: relu_decomposition}

    class M(nn.Module):
        def forward(self, x):
            return F.relu(x) + 1

    model = M()
    graph = fx.Tracer().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in decomposition_rules:
            proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a for a in node.args]
            env[node.name] = decomposition_rules[node.target](*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    gm = fx.GraphModule(model, new_graph)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [operator.gt, operator.mul, operator.add]
    x = minitorch.tensor([-2.0, 0.5, 3.0])
    np.testing.assert_allclose(gm(x).detach().numpy(), [1.0, 1.5, 4.0])


def test_interpreter_error_names_the_node():
    gm = fx.symbolic_trace(lambda x: minitorch.matmul(x, x))
    with pytest.raises(RuntimeError) as info:
        fx.Interpreter(gm).run(minitorch.randn(2, 3))
    assert "While executing %matmul" in "".join(getattr(info.value, "__notes__", []))


def test_real_tensor_methods_and_factories_with_proxy_arguments():
    class M(nn.Module):
        def forward(self, x):
            assert fx._symbolic_trace.is_fx_tracing() or not isinstance(x, fx.Proxy)
            ramp = minitorch.arange(x.shape[-1], dtype=x.dtype)
            return x + minitorch.ones(3).to(x.dtype) * ramp

    tensor_class = dict(vars(minitorch.Tensor))
    gm = fx.symbolic_trace(M())
    ops = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in gm.graph.nodes]
    assert ("call_function", "arange") in ops and ("call_method", "to") in ops
    assert ("get_attr", "_tensor_constant0") in ops and not fx._symbolic_trace.is_fx_tracing()
    assert dict(vars(minitorch.Tensor)) == tensor_class  # the methods are back as they were
    x = minitorch.randn(2, 3, dtype=minitorch.float64)
    np.testing.assert_allclose(gm(x).numpy(), (x + minitorch.arange(3, dtype=minitorch.float64)).numpy())


def test_retrace_a_graph_module_and_transform_a_nested_model():
    model = MODELS["nested"][0]().eval()
    gm = fx.symbolic_trace(model)
    again = fx.symbolic_trace(gm)
    assert again.code == gm.code
    moved = fx.Transformer(gm).transform()
    x = minitorch.randn(*MODELS["nested"][1])
    for other in (again, moved):
        out, ref = other(x), model(x)
        assert list(out) == ["out", "neg", "t"]
        for k in out:
            np.testing.assert_allclose(out[k].detach().numpy(), ref[k].detach().numpy(), rtol=1e-6)
