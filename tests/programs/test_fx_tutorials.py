"""Two torch.fx tutorials as written, torchvision's ResNet-18 replaced by a small ResNet of the
same blocks: "Building a Convolution/Batch Norm fuser in FX" (copy.deepcopy of the model,
fx.symbolic_trace, dict(fx_model.named_modules()), a walk over graph.nodes matching call_module
BatchNorm2d after Conv2d by node.args[0].target, len(node.args[0].users), fuse_conv_bn_weights
with torch.rsqrt and reshape([-1] + [1] * ...), _parent_name by rsplit, setattr on the parent,
node.replace_all_uses_with, graph.erase_node, graph.lint, recompile, the fused model's code and
outputs checked against the unfused eval model, a benchmark helper timing both); "Building a
Simple CPU Performance Profiler with FX" (a ProfilingInterpreter subclass of fx.Interpreter
over symbolic_trace(model) whose run() and run_node() time each node with time.time(), the
runtimes kept per node in a dict, the summary table's rows sorted by runtime; its result equal
to the model's)."""
import copy
import statistics
import time
from typing import Any, Dict, Tuple

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def small_resnet(torch):
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_classes=5):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
            self.layer2 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, num_classes)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer2(self.layer1(x))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return ResNet


def conv_bn_fuser(torch, init=None):
    nn = torch.nn
    fx = torch.fx
    rng = np.random.default_rng(0)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 1)
            self.bn = nn.BatchNorm2d(1)

        def forward(self, x):
            x = self.conv(x)
            x = self.bn(x)
            return x

    torch.manual_seed(0)
    model = M()
    rn18 = small_resnet(torch)()
    result = {}
    start_from(torch, {"m": model, "rn": rn18}, init, result)
    # running statistics of a trained model (in place of a checkpoint's)
    with torch.no_grad():
        for m in list(model.modules()) + list(rn18.modules()):
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.tensor(rng.standard_normal(m.num_features) * 0.1, dtype=torch.float32))
                m.running_var.copy_(torch.tensor(rng.random(m.num_features) + 0.5, dtype=torch.float32))
    model.eval()

    def fuse_conv_bn_eval(conv, bn):
        """
        Given a conv Module `A` and an batch_norm module `B`, returns a conv
        module `C` such that C(x) == B(A(x)) in inference mode.
        """
        assert(not (conv.training or bn.training)), "Fusion only for eval!"
        fused_conv = copy.deepcopy(conv)

        fused_conv.weight, fused_conv.bias = \
            fuse_conv_bn_weights(fused_conv.weight, fused_conv.bias,
                                 bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)

        return fused_conv

    def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
        if conv_b is None:
            conv_b = bn_rm.new_zeros(bn_rm.shape)
        bn_var_rsqrt = torch.rsqrt(bn_rv + bn_eps)

        conv_w = conv_w * (bn_w * bn_var_rsqrt).reshape([-1] + [1] * (len(conv_w.shape) - 1))
        conv_b = (conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b

        return torch.nn.Parameter(conv_w), torch.nn.Parameter(conv_b)

    def _parent_name(target: str) -> Tuple[str, str]:
        """
        Splits a ``qualname`` into parent path and last atom.
        For example, `foo.bar.baz` -> (`foo.bar`, `baz`)
        """
        *parent, name = target.rsplit('.', 1)
        return parent[0] if parent else '', name

    def replace_node_module(node: fx.Node, modules: Dict[str, Any], new_module: torch.nn.Module):
        assert(isinstance(node.target, str))
        parent_name, name = _parent_name(node.target)
        setattr(modules[parent_name], name, new_module)

    def fuse(model: torch.nn.Module) -> torch.nn.Module:
        model = copy.deepcopy(model)
        # The first step of most FX passes is to symbolically trace our model to
        # obtain a `GraphModule`. This is a representation of our original model
        # that is functionally identical to our original model, except that we now
        # also have a graph representation of our forward pass.
        fx_model: fx.GraphModule = fx.symbolic_trace(model)
        modules = dict(fx_model.named_modules())

        # The primary representation for working with FX are the `Graph` and the
        # `Node`. Each `GraphModule` has a `Graph` associated with it - this
        # `Graph` is also what generates `GraphModule.code`.
        # The `Graph` itself is represented as a list of `Node` objects. Thus, to
        # iterate through all of the operations in our graph, we iterate over each
        # `Node` in our `Graph`.
        for node in fx_model.graph.nodes:
            # The FX IR contains several types of nodes, which generally represent
            # call sites to modules, functions, or methods. The type of node is
            # determined by `Node.op`.
            if node.op != 'call_module':  # If our current node isn't calling a Module then we can ignore it.
                continue
            # For call sites, `Node.target` represents the module/function/method
            # that's being called. Here, we check `Node.target` to see if it's a
            # batch norm module, and then check `Node.args[0].target` to see if the
            # input `Node` is a convolution.
            if type(modules[node.target]) is nn.BatchNorm2d and type(modules[node.args[0].target]) is nn.Conv2d:
                if len(node.args[0].users) > 1:  # Output of conv is used by other nodes
                    continue
                conv = modules[node.args[0].target]
                bn = modules[node.target]
                fused_conv = fuse_conv_bn_eval(conv, bn)
                replace_node_module(node.args[0], modules, fused_conv)
                # As we've folded the batch nor into the conv, we need to replace all uses
                # of the batch norm with the conv.
                node.replace_all_uses_with(node.args[0])
                # Now that all uses of the batch norm have been replaced, we can
                # safely remove the batch norm.
                fx_model.graph.erase_node(node)
        fx_model.graph.lint()
        # After we've modified our graph, we need to recompile our graph in order
        # to keep the generated code in sync.
        fx_model.recompile()
        return fx_model

    fused_model = fuse(model)
    code = fused_model.code
    inp = torch.tensor(rng.standard_normal((5, 1, 1, 1)), dtype=torch.float32)
    torch.testing.assert_close(fused_model(inp), model(inp))
    result["m"] = {"calls": sorted(n.target for n in fused_model.graph.nodes if n.op == "call_module"),
                   "code_mentions_bn": "self.bn" in code, "code_mentions_conv": "self.conv(" in code,
                   "out": numpy_of(fused_model(inp))}

    rn18.eval()
    inp = torch.tensor(rng.standard_normal((2, 3, 16, 16)), dtype=torch.float32)
    output = rn18(inp)

    def benchmark(model, iters=3):
        for _ in range(2):
            model(inp)
        begin = time.time()
        for _ in range(iters):
            model(inp)
        return str(time.time() - begin)

    fused_rn18 = fuse(rn18)
    timings = (benchmark(rn18), benchmark(fused_rn18))
    nodes = [(n.op, str(n.target)) for n in fused_rn18.graph.nodes]
    result["rn"] = {"out": numpy_of(fused_rn18(inp)), "unfused": numpy_of(output),
                    "bn_left": [t for op, t in nodes if op == "call_module" and "bn" in t],
                    "calls": len([1 for op, _ in nodes if op == "call_module"]),
                    "downsample_fused": sorted(k for k, _ in fused_rn18.named_modules() if "downsample" in k)}
    result["own"] = {"timings": timings}
    return result


def fx_profiler(torch, init=None):
    fx = torch.fx
    Interpreter = fx.Interpreter
    rng = np.random.default_rng(1)
    torch.manual_seed(0)
    rn18 = small_resnet(torch)()
    result = {}
    start_from(torch, rn18, init, result)
    rn18.eval()
    input = torch.tensor(rng.standard_normal((2, 3, 16, 16)), dtype=torch.float32)
    traced_rn18 = torch.fx.symbolic_trace(rn18)

    class ProfilingInterpreter(Interpreter):
        def __init__(self, mod: torch.nn.Module):
            # Rather than have the user symbolically trace their model,
            # we're going to do it in the constructor. As a result, the
            # user can pass in any ``Module`` without having to worry about
            # symbolic tracing APIs
            gm = torch.fx.symbolic_trace(mod)
            super().__init__(gm)

            # We are going to store away two things here:
            #
            # 1. A list of total runtimes for ``mod``. In other words, we are
            #    storing away the time ``mod(...)`` took each time this
            #    interpreter is called.
            self.total_runtime_sec: list = []
            # 2. A map from ``Node`` to a list of times (in seconds) that
            #    node took to run. This can be seen as similar to (1) but
            #    for specific sub-parts of the model.
            self.runtimes_sec: Dict[torch.fx.Node, list] = {}

        def run(self, *args) -> Any:
            # Record the time we started running the model
            t_start = time.time()
            # Run the model by delegating back into Interpreter.run()
            return_val = super().run(*args)
            # Record the time we finished running the model
            t_end = time.time()
            # Store the total elapsed time this model execution took in the
            # ``ProfilingInterpreter``
            self.total_runtime_sec.append(t_end - t_start)
            return return_val

        def run_node(self, n: torch.fx.Node) -> Any:
            # Record the time we started running the op
            t_start = time.time()
            # Run the op by delegating back into Interpreter.run_node()
            return_val = super().run_node(n)
            # Record the time we finished running the op
            t_end = time.time()
            # If we don't have an entry for this node in our runtimes_sec
            # data structure, add one with an empty list value.
            self.runtimes_sec.setdefault(n, [])
            # Record the total elapsed time for this single invocation
            # in the runtimes_sec data structure
            self.runtimes_sec[n].append(t_end - t_start)
            return return_val

        def summary(self, should_sort: bool = False) -> list:
            node_summaries = []
            mean_total_runtime = statistics.mean(self.total_runtime_sec)
            for node, runtimes in self.runtimes_sec.items():
                mean_runtime = statistics.mean(runtimes)
                pct_total = mean_runtime / mean_total_runtime * 100
                node_summaries.append([node.op, str(node), mean_runtime, pct_total])
            if should_sort:
                node_summaries.sort(key=lambda s: s[2], reverse=True)
            return node_summaries

    interp = ProfilingInterpreter(rn18)
    out = interp.run(input)
    rows = interp.summary(True)
    result.update(out=numpy_of(out), same=bool(torch.allclose(out, rn18(input), atol=1e-5)),
                  traced=numpy_of(traced_rn18(input)),
                  nodes=sorted((op, name) for op, name, _, _ in rows),
                  sorted_ok=all(rows[i][2] >= rows[i + 1][2] for i in range(len(rows) - 1)),
                  runs=len(interp.total_runtime_sec))
    return result


def test_conv_bn_fuser_in_fx():
    compare_program(conv_bn_fuser, rtol=1e-4, atol=1e-5)


def test_fx_profiling_interpreter():
    compare_program(fx_profiler, rtol=1e-4, atol=1e-5)
