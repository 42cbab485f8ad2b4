"""__torch_dispatch__: wrapper subclasses (Tensor._make_wrapper_subclass), TorchDispatchMode, and
the ops they see below autograd, next to PyTorch running the same programs."""
import gc
import importlib

import numpy as np
import pytest

import minitorch
from minitorch import _C


def _libs():
    libs = [minitorch]
    try:
        import torch
        libs.append(torch)
    except ImportError:
        pass
    return libs


def _modules(lib):
    """The library's _python_dispatch and _pytree modules."""
    name = lib.__name__
    return (importlib.import_module(f"{name}.utils._python_dispatch"),
            importlib.import_module(f"{name}.utils._pytree"))


def logging_tensor(lib, log):
    """PyTorch's LoggingTensor example: a wrapper subclass that records each op and runs it on the
    tensor it wraps (unwrapping the arguments and rewrapping the results with tree_map)."""
    _, pytree = _modules(lib)

    class LoggingTensor(lib.Tensor):
        elem: object

        __torch_function__ = lib._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem, *args, **kwargs):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                  storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                                  device=elem.device, requires_grad=kwargs.get("requires_grad", False))
            r.elem = elem.detach() if r.requires_grad else elem
            return r

        def __repr__(self):
            return super().__repr__(tensor_contents=f"{self.elem}")

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, cls) else e

            def wrap(e):
                return cls(e) if isinstance(e, lib.Tensor) else e

            log.append(str(func))
            return pytree.tree_map(wrap, func(*pytree.tree_map(unwrap, args), **pytree.tree_map(unwrap, kwargs or {})))

    return LoggingTensor


def logging_mode(lib, log):
    dispatch, _ = _modules(lib)

    class LoggingMode(dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(str(func))
            return func(*args, **(kwargs or {}))

    return LoggingMode


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _program(lib, wrap):
    """Elementwise ops, a reduction and a matrix product on wrapped tensors, forward and
    backward: the ops seen and the values."""
    x = wrap(lib.tensor(_data((3, 4))), True)
    w = wrap(lib.tensor(_data((4, 2), 1)), False)
    y = (x * 2 + x).mm(w)
    loss = (y * y).sum()
    loss.backward()
    return loss, x


@pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)
def test_logging_tensor_sees_the_ops_below_autograd(lib):
    log = []
    LoggingTensor = logging_tensor(lib, log)
    loss, x = _program(lib, lambda t, rg: LoggingTensor(t, requires_grad=rg))
    assert type(loss) is LoggingTensor and type(x.grad) is LoggingTensor
    # forward: the ops as aten names them, once each (autograd records the outer op only)
    assert log[:5] == ["aten.mul.Tensor", "aten.add.Tensor", "aten.mm.default", "aten.mul.Tensor", "aten.sum.default"]
    # backward's ops went through the subclass too
    assert "aten.mm.default" in log[5:] and len(log) > 8
    plain_x = lib.tensor(_data((3, 4)), requires_grad=True)
    plain_w = lib.tensor(_data((4, 2), 1))
    ref = ((plain_x * 2 + plain_x).mm(plain_w) ** 2).sum()
    ref.backward()
    np.testing.assert_allclose(np.asarray(x.grad.elem.tolist()), np.asarray(plain_x.grad.tolist()), rtol=1e-5)
    np.testing.assert_allclose(loss.elem.item(), ref.item(), rtol=1e-5)


def test_logging_tensor_ops_match_pytorch():
    torch = pytest.importorskip("torch")
    logs = {}
    for lib in (minitorch, torch):
        log = logs[lib.__name__] = []
        LoggingTensor = logging_tensor(lib, log)
        _program(lib, lambda t, rg: LoggingTensor(t, requires_grad=rg))
    forward = 5
    assert logs["minitorch"][:forward] == logs["torch"][:forward]
    # in backward, the matrix products PyTorch runs (grad of mm: two mm's)
    assert logs["minitorch"].count("aten.mm.default") == logs["torch"].count("aten.mm.default")


def test_wrapper_metadata_and_no_memory():
    log = []
    LoggingTensor = logging_tensor(minitorch, log)
    inner = minitorch.arange(12.0).reshape(3, 4).t()
    t = LoggingTensor(inner)
    assert t.shape == (4, 3) and t.stride() == (1, 4) and t.dtype == minitorch.float32
    assert t.device == minitorch.device("cpu") and not t.requires_grad
    for read in (lambda: t.tolist(), lambda: t.data_ptr(), lambda: np.asarray(memoryview(t))):
        with pytest.raises(RuntimeError, match="doesn't have storage"):
            read()
    # item() goes to __torch_dispatch__ (aten._local_scalar_dense), but for more than one element
    with pytest.raises(RuntimeError, match="a Tensor with 12 elements cannot be converted to Scalar"):
        t.item()
    assert "aten._local_scalar_dense.default" not in log
    assert "tensor(" in repr(t) and "0." in repr(t)
    meta = minitorch.Tensor._make_wrapper_subclass(LoggingTensor, (2, 3), dtype=minitorch.int64, device="meta")
    assert meta.stride() == (3, 1) and meta.device.type == "meta" and meta.dtype == minitorch.int64


@pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)
def test_item_and_conversions_reach_dispatch(lib):
    """item(), float(), int() and bool() of a wrapper send aten._local_scalar_dense, whose
    handler's number they return (PyTorch's; a wrapper has no memory to read)."""
    log = []
    LoggingTensor = logging_tensor(lib, log)
    t = LoggingTensor(lib.tensor([2.5]))
    assert (t.item(), float(t), int(t), bool(t)) == (2.5, 2.5, 2, True)
    assert log == ["aten._local_scalar_dense.default"] * 4
    assert LoggingTensor(lib.tensor(3)).sum().item() == 3


def test_gradient_object_outlives_its_python_references():
    """A wrapper made in backward lives on in C only (as a leaf's grad, accumulated): its Python
    object, with its elem, comes back (PyObject preservation), and goes with the tensor."""
    log = []
    LoggingTensor = logging_tensor(minitorch, log)
    x = LoggingTensor(minitorch.ones(3), requires_grad=True)
    for _ in range(2):
        (x * 3).sum().backward()
    gc.collect()
    assert type(x.grad) is LoggingTensor and x.grad.elem.tolist() == [6.0, 6.0, 6.0]
    x.grad = None
    del x
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is LoggingTensor] and not gc.garbage


@pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)
def test_dispatch_mode_sees_every_op_and_nests(lib):
    dispatch, _ = _modules(lib)
    outer_log, inner_log = [], []
    Outer, Inner = logging_mode(lib, outer_log), logging_mode(lib, inner_log)
    x = lib.ones(2, 3, requires_grad=True)
    assert dispatch._get_current_dispatch_mode() is None
    with Outer() as outer:
        with Inner() as inner:
            assert dispatch._get_current_dispatch_mode() is inner
            assert dispatch._get_current_dispatch_mode_stack() == [outer, inner]
            z = lib.zeros(2, 3)
            (x * 2 + z).sum().backward()
        assert dispatch._get_current_dispatch_mode() is outer
    assert dispatch._get_current_dispatch_mode() is None
    assert inner_log[:4] == ["aten.zeros.default", "aten.mul.Tensor", "aten.add.Tensor", "aten.sum.default"]
    assert outer_log == inner_log  # each op the inner mode ran went on to the outer one
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_mode_ops_match_pytorch_for_an_mlp():
    torch = pytest.importorskip("torch")
    logs = {}
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        log = logs[lib.__name__] = []
        lin = lib.nn.Linear(4, 3)
        x = lib.tensor(_data((5, 4)))
        with logging_mode(lib, log)():
            lin(x).sum().backward()
    matmuls = [f for f in logs["torch"] if f.split(".")[1] in ("addmm", "mm", "t")]
    assert [f for f in logs["minitorch"] if f.split(".")[1] in ("addmm", "mm", "t")] == matmuls


def test_plain_tensors_and_make_subclass_without_dispatch_are_unaffected():
    class Plain(minitorch.Tensor):
        pass

    p = minitorch.Tensor._make_subclass(Plain, minitorch.ones(2))
    assert (p + 1).tolist() == [2.0, 2.0]
    log = []

    class Spy(minitorch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append(str(func))
            return func(*[a.inner if isinstance(a, cls) else a for a in args], **(kwargs or {}))

        __torch_function__ = _C._disabled_torch_function_impl

    base = minitorch.ones(2)
    s = minitorch.Tensor._make_subclass(Spy, base)
    s.inner = base
    out = s * 3
    assert log == ["aten.mul.Tensor"] and type(out) is minitorch.Tensor and out.tolist() == [3.0, 3.0]
    assert s.tolist() == [1.0, 1.0]  # its memory is base's: read as any tensor's


def test_dispatch_errors_propagate():
    dispatch, _ = _modules(minitorch)

    class Boom(dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError(f"no {func}")

    x = minitorch.ones(2)
    with pytest.raises(ValueError, match="no aten.add.Tensor"):
        with Boom():
            x + 1
    assert dispatch._get_current_dispatch_mode() is None
    assert (minitorch.ones(2) + 1).tolist() == [2.0, 2.0]


def test_op_overload_objects():
    aten = minitorch.ops.aten
    f = aten.add.Tensor
    assert str(f) == "aten.add.Tensor" and f.__name__ == "add.Tensor"
    assert f.overloadpacket == aten.add and f.overloadpacket.__name__ == "add"
    assert f._schema.name == "aten::add" and f._schema.overload_name == "Tensor"
    assert {aten.mm: 1}[aten.mm] == 1 and aten.mm.default == aten.mm.default
    assert f(minitorch.ones(2), minitorch.ones(2)).tolist() == [2.0, 2.0]
