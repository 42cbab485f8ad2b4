"""utils.swap_tensors and the __future__ switches that nn.Module's conversions and load_state_dict
read (set_swap_module_params_on_conversion, set_overwrite_module_params_on_conversion), against
PyTorch: which objects stay, which are new, and what they hold."""
import weakref

import numpy as np
import pytest

import minitorch


def _torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _restore_future():
    yield
    for lib in (minitorch,):
        lib.__future__.set_swap_module_params_on_conversion(False)
        lib.__future__.set_overwrite_module_params_on_conversion(False)
    torch = pytest.importorskip("torch")
    torch.__future__.set_swap_module_params_on_conversion(False)
    torch.__future__.set_overwrite_module_params_on_conversion(False)


def _swap_story(lib):
    t1 = lib.arange(2)
    t2 = lib.nn.Parameter(lib.arange(3.0))
    t2.grad = lib.ones(3)
    t1.note = "one"
    ids = id(t1), id(t2)
    lib.utils.swap_tensors(t1, t2)
    return [ids == (id(t1), id(t2)), type(t1).__name__, type(t2).__name__, t1.tolist(), t2.tolist(),
            t1.requires_grad, t2.requires_grad, t1.grad.tolist(), t2.grad, getattr(t2, "note", None),
            hasattr(t1, "note")]


def test_swap_tensors_as_torch():
    assert _swap_story(minitorch) == _swap_story(_torch())


def test_swap_tensors_keeps_autograd_history_with_the_contents():
    for lib in (minitorch, _torch()):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        c = lib.zeros(2)
        lib.utils.swap_tensors(b, c)
        assert c.grad_fn is not None and b.grad_fn is None
        c.sum().backward()
        np.testing.assert_array_equal(np.asarray(a.grad.tolist()), [3.0, 3.0])


@pytest.mark.parametrize("case", ["weakref", "slots"])
def test_swap_tensors_refusals_as_torch(case):
    torch = _torch()
    messages = []
    for lib in (minitorch, torch):
        t1, t2 = lib.zeros(2), lib.ones(2)
        keep = None
        if case == "weakref":
            keep = weakref.ref(t1)
        else:
            class Slotted(lib.Tensor):
                __slots__ = ("extra",)

            t2 = t2.as_subclass(Slotted)
        with pytest.raises(RuntimeError) as info:
            lib.utils.swap_tensors(t1, t2)
        messages.append(str(info.value))
        del keep
    assert messages[0] == messages[1]


def _conversion_story(lib, swap, overwrite, with_grad):
    lib.__future__.set_swap_module_params_on_conversion(swap)
    lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    m.register_buffer("steps", lib.tensor(4))
    w, b, grad = m.weight, m.bias, None
    if with_grad:
        m(lib.ones(1, 3)).sum().backward()
        grad = m.weight.grad
    m.double()
    story = [m.weight is w, m.bias is b, m.weight.dtype == lib.float64, type(m.weight).__name__,
             m.weight.requires_grad, m.steps.dtype == lib.int64, m.weight.detach().numpy().tolist()]
    if with_grad:
        story += [m.weight.grad is grad, m.weight.grad.dtype == lib.float64, m.weight.grad.tolist()]
    return story


@pytest.mark.parametrize("swap,overwrite", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("with_grad", [False, True])
def test_module_conversion_follows_future_switches(swap, overwrite, with_grad):
    torch = _torch()
    assert _conversion_story(minitorch, swap, overwrite, with_grad) == \
        _conversion_story(torch, swap, overwrite, with_grad)


def _load_story(lib, assign):
    lib.__future__.set_swap_module_params_on_conversion(True)
    lib.manual_seed(0)
    m = lib.nn.BatchNorm1d(3)
    w, rm = m.weight, m.running_mean
    state = {k: v + 1 if v.is_floating_point() else v for k, v in m.state_dict().items()}
    given = state["weight"]
    result = m.load_state_dict(state, assign=assign)
    return [tuple(result.missing_keys), m.weight is w, m.running_mean is rm, m.weight is given,
            type(m.weight).__name__, m.weight.requires_grad, m.weight.tolist(), m.running_mean.tolist(),
            m.weight.data_ptr() == given.data_ptr()]


@pytest.mark.parametrize("assign", [False, True])
def test_load_state_dict_swaps_under_the_future_switch(assign):
    assert _load_story(minitorch, assign) == _load_story(_torch(), assign)


def test_load_state_dict_swap_refuses_module_load_returning_an_input():
    torch = _torch()
    messages = []
    for lib in (minitorch, torch):
        class Lazy(lib.Tensor):
            def module_load(self, other, assign=False):
                return other

        lib.__future__.set_swap_module_params_on_conversion(True)
        m = lib.nn.Linear(2, 2)
        m.weight = lib.nn.Parameter(m.weight.detach().as_subclass(Lazy))
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict({"weight": lib.zeros(2, 2), "bias": lib.zeros(2)})
        messages.append(str(info.value).split("an exception occurred : ")[-1])
    assert messages[0] == messages[1]
