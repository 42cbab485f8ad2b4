"""torch.autograd.grad_mode's names and set_multithreading_enabled, against torch's; the
torch.utils.model_zoo alias of hub."""
import threading

import pytest

import minitorch
from minitorch.autograd import grad_mode


def test_grad_mode_module_names_as_torchs():
    torch = pytest.importorskip("torch")
    import torch.autograd.grad_mode as theirs

    assert set(grad_mode.__all__) >= set(theirs.__all__) - {"enforce_grad_layout_policy"}
    assert grad_mode.no_grad is minitorch.no_grad and grad_mode.set_grad_enabled is minitorch.set_grad_enabled
    assert grad_mode.inference_mode is minitorch.inference_mode and grad_mode.enable_grad is minitorch.enable_grad


def test_set_multithreading_enabled_scopes_the_mode():
    assert minitorch.autograd.is_multithreading_enabled()
    with grad_mode.set_multithreading_enabled(False):
        assert not minitorch.autograd.is_multithreading_enabled()
        seen = []
        t = threading.Thread(target=lambda: seen.append(minitorch.autograd.is_multithreading_enabled()))
        t.start()
        t.join()
        assert seen == [True]  # per thread, as PyTorch's autograd state
        x = minitorch.ones(3, requires_grad=True)
        (x * 2).sum().backward()  # backward runs the same with the switch off
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert minitorch.autograd.is_multithreading_enabled()
    setter = grad_mode.set_multithreading_enabled(False)  # sets at once, like set_grad_enabled
    assert not minitorch.autograd.is_multithreading_enabled()
    setter.__exit__(None, None, None)
    assert minitorch.autograd.is_multithreading_enabled()


def test_set_multithreading_enabled_as_decorator():
    @grad_mode.set_multithreading_enabled(False)
    def inside():
        return minitorch.autograd.is_multithreading_enabled()

    assert minitorch.autograd.is_multithreading_enabled()
    assert inside() is False
    assert minitorch.autograd.is_multithreading_enabled()


def test_model_zoo_load_url_is_hubs():
    import minitorch.utils.model_zoo as model_zoo

    assert model_zoo.load_url is minitorch.hub.load_state_dict_from_url
