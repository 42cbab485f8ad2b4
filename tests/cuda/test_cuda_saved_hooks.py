"""Saved-tensor hooks and checkpoint(use_reentrant=False) on a CUDA device: save_on_cpu packs
each saved tensor to the host and unpacks it back to the device; gradients equal the CPU's."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("pin_memory", (False, True))
def test_save_on_cpu_moves_saved_tensors_to_the_host_and_back(pin_memory):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    devices, grads = [], {}
    for dev in ("cpu", "cuda"):
        x = minitorch.tensor(a).to(dev).requires_grad_()
        w = minitorch.tensor(b).to(dev).requires_grad_()
        hooks = minitorch.autograd.graph.save_on_cpu(pin_memory=pin_memory)
        pack, unpack = hooks.pack_hook, hooks.unpack_hook

        def seen_pack(t):
            packed = pack(t)
            devices.append((dev, packed[1].device.type))
            return packed

        with minitorch.autograd.graph.saved_tensors_hooks(seen_pack, lambda p: unpack(p)):
            y = (x @ w).tanh().sum()
        y.backward()
        grads[dev] = (x.grad, w.grad)
    assert devices and all(where == "cpu" for _, where in devices)
    for got, want in zip(grads["cuda"], grads["cpu"]):
        assert_same(got, want)


def test_checkpoint_non_reentrant_on_the_device():
    a = RNG.standard_normal((5, 4)).astype(np.float32)
    grads = {}
    for dev in ("cpu", "cuda"):
        minitorch.manual_seed(0)
        model = minitorch.nn.Sequential(minitorch.nn.Linear(4, 8), minitorch.nn.Tanh(), minitorch.nn.Linear(8, 2))
        model = model.to(dev)
        x = minitorch.tensor(a).to(dev).requires_grad_()
        y = minitorch.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
        y.sum().backward()
        grads[dev] = (x.grad, model[0].weight.grad)
    for got, want in zip(grads["cuda"], grads["cpu"]):
        assert_same(got, want)
