"""Public PyTorch names that real programs meet and that were missing: torch.jit's eager
fallbacks (annotate, Attribute, Final, ScriptModule/ScriptFunction, fork/wait, isinstance,
trace_module, script_if_tracing, optimized_execution, set_fusion_strategy), torch.utils.checkpoint's
detach_variable, set_checkpoint_early_stop and selective checkpointing (which runs as plain
checkpointing), autograd.graph's GradientEdge, get_gradient_edge and increment_version,
testing.assert_allclose, nn.utils.convert_conv2d/3d_weight_memory_format, and the Tensor members
output_nr, name, as_strided_, dim_order, const_data_ptr, resize and resize_as; each against
PyTorch where it is installed."""
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")
LIBS = [minitorch] + ([torch] if torch is not None else [])


# ---- torch.jit ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_jit_eager_pieces(lib):
    """annotate returns its value, Attribute is a (value, type) named tuple, Final is typing's,
    fork runs the function and wait/Future.wait give its result, and an exception in the forked
    function is raised by fork itself (as PyTorch's eager fork)."""
    jit = lib.jit
    assert jit.annotate(List[int], [1]) == [1]
    a = jit.Attribute(3, int)
    assert (a.value, a.type) == (3, int) and a == (3, int)
    assert jit.Final is __import__("typing").Final
    fut = jit.fork(lambda x, y=0: x * 2 + y, 5, y=1)
    assert fut.done() and jit.wait(fut) == 11 and fut.wait() == 11

    def boom():
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        jit.fork(boom)


CASES = [([1, 2], List[int]), ([1, "a"], List[int]), ({"a": 1}, Dict[str, int]), ({"a": 1}, Dict[int, int]),
         (None, Optional[int]), (3, Optional[int]), ("x", Optional[int]), ((1, "a"), Tuple[int, str]),
         ((1, "a", 2), Tuple[int, str]), ([[1], [2, 3]], List[List[int]]), ([[1], ["a"]], List[List[int]]),
         ({"k": [1.0]}, Dict[str, List[float]]), (3, int), (3, (str, int)), (3.0, (str, int)), ([1], Tuple[int])]


@pytest.mark.parametrize("obj,target", CASES)
def test_jit_isinstance_same_as_torch(obj, target):
    got = minitorch.jit.isinstance(obj, target)
    if torch is not None:
        assert got == torch.jit.isinstance(obj, target)
    assert isinstance(got, bool)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_jit_isinstance_refusals_and_empty_containers(lib):
    with pytest.raises(RuntimeError, match=r"Attempted to use list without a contained type. Please add a "
                                           r"contained type, e.g. list\[int\]"):
        lib.jit.isinstance([1], list)
    with pytest.raises(RuntimeError, match=r"Attempted to use Dict without contained types"):
        lib.jit.isinstance({}, Dict)
    with pytest.raises(RuntimeError, match="must be a type or a tuple of types"):
        lib.jit.isinstance(1, [int])
    with pytest.warns(UserWarning, match="The inner type of a container is lost"):
        assert lib.jit.isinstance([], List[str])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_jit_switches_and_decorators(lib):
    """set_fusion_strategy returns the strategy it replaces (PyTorch's default first) and refuses
    an unknown kind; optimized_execution is a context manager; script_if_tracing and trace_module
    give eager callables that compute as before."""
    jit = lib.jit
    prev = jit.set_fusion_strategy([("DYNAMIC", 3)])
    try:
        assert prev == [("STATIC", 2), ("DYNAMIC", 10)]
        assert jit.set_fusion_strategy([("STATIC", 1)]) == [("DYNAMIC", 3)]
        with pytest.raises(ValueError, match="FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: FOO"):
            jit.set_fusion_strategy([("FOO", 1)])
    finally:
        jit.set_fusion_strategy(prev)
    with jit.optimized_execution(False):
        pass

    def double(x):
        return x * 2
    assert jit.script_if_tracing(double)(lib.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]

    class M(lib.nn.Module):
        def forward(self, x):
            return x + 1

        def other(self, x):
            return x - 1
    traced = jit.trace_module(M(), {"forward": lib.ones(2), "other": lib.ones(2)})
    assert traced(lib.ones(2)).tolist() == [2.0, 2.0] and traced.other(lib.ones(2)).tolist() == [0.0, 0.0]
    assert isinstance(traced, lib.nn.Module)


def test_jit_script_classes():
    """ScriptModule is a Module class (old-style subclasses run eagerly), ScriptFunction a class;
    script wraps functions and modules in them."""
    jit = minitorch.jit
    assert issubclass(jit.ScriptModule, minitorch.nn.Module)

    class Old(jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = minitorch.nn.Linear(2, 2)

        @jit.script_method
        def forward(self, x):
            return self.lin(x)
    m = Old()
    assert m(minitorch.ones(1, 2)).shape == (1, 2) and len(list(m.parameters())) == 2

    def f(x):
        return x + 1
    assert isinstance(jit.script(f), jit.ScriptFunction) and jit.script(f)(1) == 2
    assert isinstance(jit.script(minitorch.nn.Linear(1, 1)), jit.ScriptModule)
    wrapped = jit.ScriptFunction(f)
    assert wrapped(1) == 2 and wrapped.__name__ == "f"


# ---- torch.utils.checkpoint ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_detach_variable(lib):
    x = lib.ones(2, requires_grad=True) * 2
    y = lib.ones(2)
    out = lib.utils.checkpoint.detach_variable((x, y, 3))
    assert out[0].requires_grad and out[0].grad_fn is None and not out[1].requires_grad and out[2] == 3
    assert out[0].data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"):
        lib.utils.checkpoint.detach_variable([x])


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))


@pytest.mark.parametrize("policy", ["list", "fn"])
def test_selective_checkpoint_is_checkpoint(policy):
    """create_selective_checkpoint_contexts' pair as context_fn gives the gradients of the
    unchecked model (every op recomputed); set_checkpoint_early_stop nests and restores; the
    policy enum is PyTorch's; bad policies are refused with PyTorch's errors."""
    ck = minitorch.utils.checkpoint
    assert [p.name for p in ck.CheckpointPolicy] == ["MUST_SAVE", "PREFER_SAVE", "MUST_RECOMPUTE",
                                                    "PREFER_RECOMPUTE", "MUST_CPU_OFFLOAD", "PREFER_CPU_OFFLOAD"]
    if torch is not None:
        assert [p.value for p in ck.CheckpointPolicy] == [p.value for p in torch.utils.checkpoint.CheckpointPolicy]
    net = _net(minitorch)
    x = minitorch.randn(3, 4)
    net(x).pow(2).sum().backward()
    want = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    arg = [minitorch.ops.aten.mm.default] if policy == "list" else (lambda ctx, op, *a, **k: ck.CheckpointPolicy.MUST_SAVE)
    with ck.set_checkpoint_early_stop(False):
        out = ck.checkpoint(net, x, use_reentrant=False,
                            context_fn=lambda: ck.create_selective_checkpoint_contexts(arg))
    out.pow(2).sum().backward()
    for p, w in zip(net.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload"):
        ck.create_selective_checkpoint_contexts([minitorch.ops.aten.mm])
    with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops."):
        ck.create_selective_checkpoint_contexts(3)


# ---- autograd.graph ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_gradient_edge_and_output_nr(lib):
    """get_gradient_edge: a leaf's AccumulateGrad with 0, a result's grad_fn with its output
    number (linalg.svd's S is output 1, Vh 2), usable by name; refused without requires_grad."""
    graph = lib.autograd.graph
    x = lib.randn(3, 3, requires_grad=True)
    edge = graph.get_gradient_edge(x)
    assert isinstance(edge, graph.GradientEdge) and edge.output_nr == 0
    assert edge.node.name().endswith("AccumulateGrad")
    u, s, vh = lib.linalg.svd(x)
    assert graph.get_gradient_edge(s).node is s.grad_fn and graph.get_gradient_edge(vh).output_nr == 2
    assert (u.output_nr, s.output_nr, vh.output_nr, x.output_nr, lib.ones(1).output_nr) == (0, 1, 2, 0, 0)
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor that does not "
                                           "require gradients"):
        graph.get_gradient_edge(lib.ones(2))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_increment_version(lib):
    """bumps the counter (one tensor or several), values untouched, so a saved tensor's backward
    then fails its version check."""
    x = lib.tensor([1.0, float("nan"), -0.0], requires_grad=True)
    y = x * 1
    z = y.exp()  # saves its result
    v = z._version
    lib.autograd.graph.increment_version(z)
    lib.autograd.graph.increment_version([z, y])
    assert z._version == v + 2
    np.testing.assert_allclose(z.detach().numpy(), np.exp([1.0, float("nan"), -0.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ---- testing.assert_allclose ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_assert_allclose(lib):
    """deprecated (FutureWarning); looser float32 defaults than assert_close; NaNs equal by
    default; other dtypes allowed; numbers and lists turned into tensors."""
    with pytest.warns(FutureWarning, match=r"`torch.testing.assert_allclose\(\)` is deprecated since 1.12"):
        lib.testing.assert_allclose(lib.ones(2), [1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        lib.testing.assert_allclose(lib.ones(2), [1.0, 1.00005])  # within rtol 1e-4
        lib.testing.assert_allclose(lib.tensor([float("nan"), 1.0]), lib.tensor([float("nan"), 1.0]))
        lib.testing.assert_allclose(lib.ones(2, dtype=lib.float64), lib.ones(2))
        lib.testing.assert_allclose(2, 2)
        with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
            lib.testing.assert_allclose(lib.ones(2), [1.0, 1.001])
        with pytest.raises(AssertionError):
            lib.testing.assert_allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")]), equal_nan=False)
        with pytest.raises(AssertionError, match="custom"):
            lib.testing.assert_allclose(lib.ones(1), [2.0], msg="custom")


# ---- nn.utils.convert_conv2d/3d_weight_memory_format ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_convert_conv_weight_memory_format(lib):
    """The weights of nested Conv2d/ConvTranspose2d (Conv3d for the 3-d form) take the layout;
    values, the Parameter objects and the other layers stay; the output is unchanged."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
                            lib.nn.Conv3d(2, 2, 1))
    w = net[0].weight
    before = w.detach().clone()
    x = lib.randn(1, 3, 6, 6)
    y = net[1](net[0](x))
    assert lib.nn.utils.convert_conv2d_weight_memory_format(net, lib.channels_last) is net
    assert net[0].weight is w and torch_equal(lib, w, before)
    assert net[0].weight.is_contiguous(memory_format=lib.channels_last)
    assert net[1][0].weight.is_contiguous(memory_format=lib.channels_last)
    assert net[2].weight.is_contiguous() and not net[0].weight.is_contiguous()
    np.testing.assert_allclose(net[1](net[0](x)).detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-6)
    lib.nn.utils.convert_conv3d_weight_memory_format(net, lib.channels_last_3d)
    assert net[2].weight.is_contiguous(memory_format=lib.channels_last_3d)


def torch_equal(lib, a, b):
    return bool(lib.equal(a, b))


# ---- Tensor members ----

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_tensor_members(lib):
    x = lib.arange(6.0)
    assert x.name is None and x.const_data_ptr() == x.data_ptr()
    v = x._version
    assert x.as_strided_((2, 2), (1, 2), 1) is x
    assert x.shape == (2, 2) and x.stride() == (1, 2) and x.storage_offset() == 1
    assert x.tolist() == [[1.0, 3.0], [2.0, 4.0]] and x._version == v + 1
    with pytest.raises(RuntimeError):
        lib.arange(4.0).as_strided_((3, 3), (3, 1))  # past the storage
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = lib.arange(6.0, requires_grad=True).resize(3, 2)
    assert r.shape == (3, 2)
    r.sum().backward()
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert lib.arange(6.0).t().resize_as(lib.ones(2, 3)).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"requested resize to 4x2 \(8 elements in total\), but the given "
                                               r"tensor has a size of 6 \(6 elements\)"):
            lib.arange(6.0).resize(4, 2)


SHAPES = [((2, 3), None), ((2, 3, 4), (1, 2, 6)), ((2, 1, 3), None), ((2, 3, 4, 5), "cl"), ((3, 3), (1, 3)),
          ((2, 2), (2, 2)), ((4,), (0,)), ((2, 3), (0, 1)), ((), None), ((3, 1), (1, 1)), ((2, 3, 4, 5, 6), "cl3"),
          ((1, 1), None), ((4, 1, 5), (5, 5, 1)), ((3, 4, 2), (1, 6, 3))]


@needs_torch
@pytest.mark.parametrize("shape,strides", SHAPES)
def test_dim_order_same_as_torch(shape, strides):
    """the order, and the ambiguity checks (True, a list of formats) raising where PyTorch's do."""
    def make(lib):
        if strides is None:
            return lib.empty(shape)
        if strides in ("cl", "cl3"):
            return lib.empty(shape).to(memory_format=lib.channels_last if strides == "cl" else lib.channels_last_3d)
        return lib.empty_strided(shape, strides)
    for check in (False, True, ["contiguous_format"], ["channels_last"], ["contiguous_format", "channels_last"]):
        results = []
        for lib in (minitorch, torch):
            arg = [getattr(lib, f) for f in check] if isinstance(check, list) else check
            try:
                results.append(make(lib).dim_order(ambiguity_check=arg))
            except RuntimeError:
                results.append("RuntimeError")
        assert results[0] == results[1], (check, results)
