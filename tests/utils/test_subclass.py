"""Tensor subclasses and __torch_function__ (PyTorch's "Extending torch" notes), compared with
torch: which types ops return, which functions a hook sees, modes, the switches that turn the
protocol off, autograd, pickling and copying through subclasses, and that plain tensors and
nn.Parameter still take the C path without a Python call."""
import copy
import logging
import pickle
import sys

import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, same_as_torch

try:
    import torch
except ImportError:
    torch = None

LIBS = [minitorch] + ([torch] if torch is not None else [])
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def _plain_subclass(lib):
    class MyT(lib.Tensor):
        pass

    return MyT


def _logging_subclass(lib, seen):
    """The LoggingTensor of PyTorch's notes, logging each function's name."""

    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is not lib.Tensor.__repr__:
                logging.getLogger("subclass-test").info("func: %s", func.__name__)
                seen.append(func.__name__)
            if kwargs is None:
                kwargs = {}
            return super().__torch_function__(func, types, args, kwargs)

    return LoggingTensor


CALLS = {
    "x + 1": lambda lib, x: x + 1,
    "2 * x": lambda lib, x: 2 * x,
    "1 - x": lambda lib, x: 1 - x,
    "add": lambda lib, x: lib.add(x, 1, alpha=2),
    "Tensor.add": lambda lib, x: x.add(x),
    "sum": lambda lib, x: x.sum(),
    "cat": lambda lib, x: lib.cat([x, x]),
    "getitem": lambda lib, x: x[0],
    "view": lambda lib, x: x.view(3),
    "matmul": lambda lib, x: x @ x,
    "neg": lambda lib, x: -x,
    "lt": lambda lib, x: x < 1,
    "exp": lambda lib, x: lib.exp(x),
    "reshape": lambda lib, x: x.reshape(1, 3),
    "unbind": lambda lib, x: lib.unbind(x),
    "max.dim": lambda lib, x: lib.max(x, 0),
    "add_": lambda lib, x: x.add_(1),
    "float": lambda lib, x: x.float(),
}


def _types(r):
    if isinstance(r, (tuple, list)):
        return [type(v).__name__ for v in r]
    return type(r).__name__


def _run_calls(lib, cls):
    out = {}
    for name, call in CALLS.items():
        x = lib.tensor([1.0, 2.0, 3.0]).as_subclass(cls)
        out[name] = _types(call(lib, x))
    return out


def test_results_keep_the_subclass_as_torch():
    got = _run_calls(minitorch, _plain_subclass(minitorch))
    assert all(t == "MyT" or t == ["MyT"] * len(t) for t in got.values()), got
    if torch is not None:
        assert got == _run_calls(torch, _plain_subclass(torch))


def test_results_of_a_parameter_are_plain_tensors():
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(3))
        assert type(p).__name__ == "Parameter"
        for r in (p + 1, p * p, p.sum(), p[0], lib.cat([p, p]), p.view(3)):
            assert type(r) is lib.Tensor
        assert not lib.overrides.has_torch_function((p,))
        assert lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl


def _seen_by_hook(lib):
    seen = []
    LoggingTensor = _logging_subclass(lib, seen)
    calls = {}
    for name, call in CALLS.items():
        x = lib.tensor([1.0, 2.0, 3.0]).as_subclass(LoggingTensor)
        seen.clear()
        call(lib, x)
        calls[name] = list(seen)
    x = lib.ones(3).as_subclass(LoggingTensor)
    seen.clear()
    x[0] = 5
    calls["setitem"] = list(seen)
    return calls


def test_the_hook_sees_the_functions_torch_passes():
    got = _seen_by_hook(minitorch)
    assert got["x + 1"] == ["add"] and got["1 - x"] == ["__rsub__"] and got["cat"] == ["cat"]
    assert got["getitem"] == ["__getitem__"] and got["setitem"] == ["__setitem__"]
    if torch is None:
        return
    want = _seen_by_hook(torch)
    # reshape is a Python method composed of other ops in minitorch (reshape -> view)
    for name in set(CALLS) - {"reshape"}:
        assert got[name] == want[name], (name, got[name], want[name])


MEMBERS = {
    "shape": lambda x: x.shape, "size": lambda x: x.size(), "dim": lambda x: x.dim(), "dtype": lambda x: x.dtype,
    "T": lambda x: x.T, "float": lambda x: x.float(), "item": lambda x: x.sum().item(),
    "tolist": lambda x: x.tolist(), "repr": lambda x: repr(x), "len": lambda x: len(x),
    "grad_fn": lambda x: x.grad_fn, "numel": lambda x: x.numel(), "numpy": lambda x: x.detach().numpy(),
    "backward": lambda x: x.sum().backward(), "requires_grad": lambda x: x.requires_grad,
    "is_leaf": lambda x: x.is_leaf, "data": lambda x: x.data,
}


def _members_seen(lib):
    seen = []
    LoggingTensor = _logging_subclass(lib, seen)
    rows = {}
    for name, call in MEMBERS.items():
        x = lib.ones(2, 3, requires_grad=True).as_subclass(LoggingTensor)
        seen.clear()
        r = call(x)
        rows[name] = (list(seen), type(r).__name__)
    y = lib.ones(2).as_subclass(LoggingTensor)
    seen.clear()
    y.requires_grad = True
    rows["set requires_grad"] = (list(seen), y.requires_grad)
    return rows


def test_properties_and_methods_that_are_no_ops_dispatch_too():
    got = _members_seen(minitorch)
    assert got["shape"] == (["__get__"], "Size") and got["size"] == (["size"], "Size")
    assert got["T"] == (["__get__"], "LoggingTensor") and got["repr"] == ([], "str")
    assert got["set requires_grad"] == (["__set__"], True)
    if torch is not None:
        assert got == _members_seen(torch)
    # a plain Tensor's members are Tensor's own, not wrappers
    assert minitorch.Tensor.size is minitorch._C.TensorBase.size
    assert "shape" not in vars(minitorch.Tensor) and "shape" not in vars(minitorch.nn.Parameter)


def test_the_hook_gets_the_public_function_and_types():
    for lib in LIBS:
        log = []

        class Recorder(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append((func, types, len(args), dict(kwargs or {})))
                return super().__torch_function__(func, types, args, kwargs)

        x = lib.ones(2).as_subclass(Recorder)
        lib.add(x, lib.ones(2), alpha=3)
        x.mul(2)
        x + 1
        assert log[0][0] is lib.add and log[0][1] == (Recorder,) and log[0][2] == 2 and log[0][3] == {"alpha": 3}
        assert log[1][0] is lib.Tensor.mul and log[1][2] == 2
        assert log[2][0] is lib.Tensor.add


def test_extra_attributes_and_in_place_results():
    rows = []
    for lib in LIBS:
        class Tagged(lib.Tensor):
            pass

        x = lib.tensor([1.0, 2.0]).as_subclass(Tagged)
        x.tag = "kept"
        same = x.add_(1)
        new = x + 1
        rows.append([same is x, getattr(same, "tag", None), getattr(new, "tag", None), type(new).__name__,
                     x.tolist(), new.tolist()])
    assert rows[0] == [True, "kept", None, "Tagged", [2.0, 3.0], [3.0, 4.0]]
    assert all(r == rows[0] for r in rows)


def _metadata_example(lib):
    """The MetadataTensor of PyTorch's notes: a wrapper (no Tensor subclass) that keeps metadata."""

    class MetadataTensor:
        def __init__(self, data, metadata=None, **kwargs):
            self._t = lib.as_tensor(data, **kwargs)
            self._metadata = metadata

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            metadatas = tuple(a._metadata for a in args if hasattr(a, "_metadata"))
            args = [getattr(a, "_t", a) for a in args]
            assert len(metadatas) > 0
            ret = func(*args, **kwargs)
            return MetadataTensor(ret, metadata=metadatas[0])

    m = MetadataTensor([[1.0, 2.0], [3.0, 4.0]], metadata={"owner": "Ministry of Silly Walks"})
    out = [lib.add(m, lib.ones(2, 2)), lib.mul(lib.ones(2) * 2, m), m._t.exp()]
    return [(type(o).__name__, getattr(o, "_metadata", None), (getattr(o, "_t", o)).tolist()) for o in out]


def test_the_metadata_tensor_example():
    got = _metadata_example(minitorch)
    assert got[0][0] == "MetadataTensor" and got[0][1] == {"owner": "Ministry of Silly Walks"}
    assert got[0][2] == [[2.0, 3.0], [4.0, 5.0]]
    assert got[2][0] == "Tensor"
    if torch is not None:
        want = _metadata_example(torch)
        assert [g[:2] for g in got] == [w[:2] for w in want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[2], w[2], rtol=1e-6)


def test_modes_see_every_call_factories_too():
    rows = []
    for lib in LIBS:
        class Logger(lib.overrides.TorchFunctionMode):
            def __init__(self):
                super().__init__()
                self.seen = []

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with Logger() as outer:
            with Logger() as inner:
                y = lib.zeros(2) + x
                s = lib.exp(y).sum()
            z = x * 2
        with lib._C.DisableTorchFunction(), Logger() as off:
            lib.ones(1) + 1
        rows.append((inner.seen, outer.seen, off.seen, s.item(), type(z).__name__, z.tolist()))
        assert not lib._C._is_torch_function_mode_enabled()
    assert rows[0][0] == ["zeros", "add", "exp", "sum"] and rows[0][1][-1] == "mul" and rows[0][2] == []
    if torch is not None:
        assert rows[0] == rows[1]


def test_disable_switches():
    rows = []
    for lib in LIBS:
        MyT = _plain_subclass(lib)
        x = lib.ones(2).as_subclass(MyT)
        with lib._C.DisableTorchFunctionSubclass():
            inside = [type(x + 1) is lib.Tensor, lib.overrides.has_torch_function((x,)), lib._C._is_torch_function_enabled()]
        with lib._C.DisableTorchFunction():
            inside.append(type(x.sum()) is lib.Tensor)
        inside += [type(x + 1) is MyT, lib.overrides.has_torch_function((x,)), lib._C._is_torch_function_enabled()]

        class Off(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

        inside.append(type(lib.ones(2).as_subclass(Off) * 2) is lib.Tensor)
        rows.append(inside)
    assert rows[0] == [True, False, False, True, True, True, True, True]
    assert all(r == rows[0] for r in rows)


def test_a_class_that_changes_its_torch_function_is_seen_at_once():
    """The gate remembers a class found not to override with its version tag (csrc/python/
    torch_function.c): setting the attribute afterwards must take effect on the next call."""
    class Switch(minitorch.Tensor):
        __torch_function__ = minitorch._C._disabled_torch_function_impl

    a = minitorch.ones(1).as_subclass(Switch)
    assert type(a + a) is minitorch.Tensor and type(a.sum()) is minitorch.Tensor
    Switch.__torch_function__ = vars(minitorch.Tensor)["__torch_function__"]
    assert type(a + a) is Switch and type(a.sum()) is Switch
    Switch.__torch_function__ = minitorch._C._disabled_torch_function_impl
    assert type(a + a) is minitorch.Tensor


def test_not_implemented_from_every_handler_is_a_type_error():
    for lib in LIBS:
        class Refuses(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        x = lib.ones(2).as_subclass(Refuses)
        with pytest.raises(TypeError, match=r"Multiple dispatch failed for '(torch|minitorch)\.add'; all "
                                            r"__torch_function__ handlers returned NotImplemented"):
            lib.add(x, 1)


def test_a_subclass_goes_before_its_base():
    for lib in LIBS:
        order = []

        class Base(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(("base", cls.__name__))
                return NotImplemented

        class Child(Base):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                order.append(("child", sorted(t.__name__ for t in types)))
                with lib._C.DisableTorchFunctionSubclass():
                    return func(*args, **(kwargs or {}))

        b, c = lib.ones(2).as_subclass(Base), lib.ones(2).as_subclass(Child)
        r = lib.add(b, c)
        assert order == [("child", ["Base", "Child"])] and type(r) is lib.Tensor


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_values_and_gradients_through_a_subclass(layout):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))  # broadcast
    b[1] = np.nan if layout == "transposed" else b[1]

    def fn(lib, x, y):
        MyT = _plain_subclass(lib)
        xs, ys = x.as_subclass(MyT), y.as_subclass(MyT)
        out = (xs * ys).exp().sum(dim=0) + lib.cat([xs[0], ys])[:4]
        assert type(out) is MyT
        return out

    same_as_torch(fn, [a, b], layout=layout)
    same_as_torch(lambda lib, x: fn(lib, x, x[0]), [np.zeros((0, 4))])


def test_autograd_through_a_subclass_as_torch():
    rows = []
    for lib in LIBS:
        MyT = _plain_subclass(lib)
        leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = leaf.as_subclass(MyT)
        loss = (y * y).sum()
        loss.backward()
        own = lib.tensor([1.0, 2.0]).as_subclass(MyT).requires_grad_()
        (own ** 3).sum().backward()
        rows.append([type(y.grad_fn).__name__, y.is_leaf, type(loss).__name__, type(leaf.grad).__name__,
                     leaf.grad.tolist(), type(own.grad).__name__, own.grad.tolist()])
    assert rows[0] == ["AliasBackward0", False, "MyT", "Tensor", [2.0, 4.0, 6.0], "Tensor", [3.0, 12.0]]
    assert all(r == rows[0] for r in rows)


class Pickled(minitorch.Tensor):
    pass


def test_pickle_and_deepcopy_keep_class_and_attributes():
    x = minitorch.tensor([1.0, 2.0]).as_subclass(Pickled)
    x.note = {"k": [1, 2]}
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert type(y) is Pickled and y.note == {"k": [1, 2]} and y.tolist() == [1.0, 2.0]
        assert y.data_ptr() != x.data_ptr()
    d = copy.deepcopy(x)
    assert d.note is not x.note
    g = minitorch.ones(2, requires_grad=True).as_subclass(Pickled)
    for y in (pickle.loads(pickle.dumps(g.detach().requires_grad_())), copy.deepcopy(g.detach().requires_grad_())):
        assert type(y) is Pickled and y.requires_grad and y.is_leaf


def test_as_subclass_and_make_subclass():
    MyT = _plain_subclass(minitorch)
    x = minitorch.ones(2)
    y = x.as_subclass(MyT)
    assert type(y) is MyT and y.data_ptr() == x.data_ptr() and type(x) is minitorch.Tensor
    z = minitorch.Tensor._make_subclass(MyT, minitorch.ones(2, requires_grad=True), True)
    assert type(z) is MyT and z.is_leaf and z.requires_grad
    with pytest.raises(TypeError, match="must be a subclass of Tensor"):
        x.as_subclass(int)


def test_a_parameter_of_a_subclass_keeps_its_class():
    rows = []
    for lib in LIBS:
        MyT = _plain_subclass(lib)
        lin = lib.nn.Linear(3, 2)
        p = lib.nn.Parameter(lib.ones(2, 3).as_subclass(MyT))
        lin.weight = p
        out = lin(lib.ones(1, 3))
        out.sum().backward()
        rows.append([type(p).__name__, isinstance(p, lib.nn.Parameter), isinstance(p, MyT), p.is_leaf,
                     p.requires_grad, type(p * 2).__name__, [n for n, _ in lin.named_parameters()],
                     type(out).__name__, type(p.grad).__name__, p.grad.tolist(),
                     isinstance(lib.ones(1), lib.nn.Parameter), isinstance(lib.nn.Parameter(lib.ones(1)), MyT)])
    assert rows[0] == ["MyT", True, True, True, True, "MyT", ["weight", "bias"], "MyT", "Tensor",
                       [[1.0, 1.0, 1.0]] * 2, False, False]
    assert all(r == rows[0] for r in rows)


def test_get_overridable_functions_and_tensor_like():
    o = minitorch.overrides
    spaces = o.get_overridable_functions()
    assert minitorch.add in spaces[minitorch] and minitorch.Tensor.add in spaces[minitorch.Tensor]
    assert minitorch.tensor not in spaces[minitorch]
    assert o.resolve_name(minitorch.add) == "torch.add"
    x = minitorch.ones(1).as_subclass(_plain_subclass(minitorch))
    assert o.is_tensor_like(x) and o.is_tensor_like(minitorch.ones(1)) and not o.is_tensor_like(1)
    with o.enable_reentrant_dispatch():
        assert (x + 1).tolist() == [2.0]


def test_multi_grad_hook_all_and_any():
    rows = []
    for lib in LIBS:
        out = []
        a, b, c = (lib.ones(n, requires_grad=True) for n in (2, 3, 1))
        graph = lib.autograd.graph
        h = graph.register_multi_grad_hook((a, b, c), lambda gs: out.append(
            ("all", [None if g is None else g.tolist() for g in gs])))
        h2 = graph.register_multi_grad_hook((a, b), lambda g: out.append(("any", g.tolist())), mode="any")
        ((a * 2).sum() + (b * 3).sum()).backward()
        (a * 5).sum().backward()
        (c * 7).sum().backward()
        h.remove()
        h2.remove()
        (a * 5).sum().backward()
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            graph.register_multi_grad_hook((a,), print, mode="some")
        # the order between the two hooks within one pass is PyTorch's engine's; each mode's own is compared
        rows.append(sorted(out, key=lambda r: r[0] == "any"))
    assert rows[0][:3] == [("all", [[2.0, 2.0], [3.0, 3.0, 3.0], None]), ("all", [[5.0, 5.0], None, None]),
                           ("all", [None, None, [7.0]])]
    assert rows[0][3:] == [("any", [3.0, 3.0, 3.0]), ("any", [5.0, 5.0])]
    assert all(r == rows[0] for r in rows)


def _python_calls(fn):
    """How many Python-level functions run during fn() (C calls are not counted)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        count += event == "call"

    fn()  # warm
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count - 1  # the profiled lambda's own frame


def test_plain_tensors_and_parameters_stay_on_the_c_path():
    """The gate costs plain tensors (and nn.Parameter) nothing: their calls run no Python at all,
    while a subclass's go through its __torch_function__ (the timing is benchmarks/bench_overhead.py's)."""
    a, b = minitorch.ones(3), minitorch.ones(3)
    p = minitorch.nn.Parameter(minitorch.ones(3))
    for call in (lambda: a + b, lambda: a.sum(), lambda: minitorch.cat([a, b]), lambda: a[0], lambda: p * a,
                 lambda: minitorch.add(p, 1), lambda: -p, lambda: a.permute((0,)), lambda: minitorch.sum(a, 0, keepdim=True, dtype=minitorch.float64)):
        assert _python_calls(call) == 0
    x = a.as_subclass(_plain_subclass(minitorch))
    assert _python_calls(lambda: x + 1) > 0


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="no CUDA device (MINITORCH_CUDA_EMU=1 emulates one)")
def test_a_subclass_on_the_cuda_device():
    MyT = _plain_subclass(minitorch)
    x = minitorch.ones(3, device="cuda", requires_grad=True)
    y = x.as_subclass(MyT)
    out = (y * 2)[1:].sum()
    out.backward()
    assert type(out) is MyT and out.device.type == "cuda" and out.item() == 4.0
    assert type(x.grad) is minitorch.Tensor and x.grad.tolist() == [0.0, 2.0, 2.0]
