"""nn.DataParallel and nn.parallel.data_parallel: without CUDA the wrapper runs the
module as it is, with PyTorch's "module." state_dict prefix, outputs and gradients; on the
emulated CUDA device inputs move to device_ids[0] and the output to output_device, and a module
left on the CPU is refused with PyTorch's message."""
import os

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


def model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))


def test_without_cuda_it_is_the_module(monkeypatch):
    monkeypatch.setattr(minitorch.cuda, "is_available", lambda: False)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    got, ref = minitorch.nn.DataParallel(model(minitorch)), torch.nn.DataParallel(model(torch))
    assert got.device_ids == ref.device_ids == [] and list(got.state_dict()) == list(ref.state_dict())
    assert repr(got) == repr(ref)
    out_m, out_t = got(minitorch.tensor(x)), ref(torch.tensor(x))
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-6)
    out_m.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(got.module[0].weight.grad.numpy(), ref.module[0].weight.grad.numpy(), rtol=1e-6)
    fn = minitorch.nn.parallel.data_parallel(got.module, minitorch.tensor(x))
    np.testing.assert_array_equal(fn.detach().numpy(), out_m.detach().numpy())


@pytest.mark.skipif(not os.environ.get("MINITORCH_CUDA_EMU") and not minitorch.cuda.is_available(),
                    reason="needs a CUDA device (or MINITORCH_CUDA_EMU=1)")
def test_on_cuda_inputs_and_outputs_move():
    if not minitorch.cuda.is_available():
        pytest.skip(minitorch.cuda._unavailable_reason())
    net = model(minitorch)
    x = minitorch.randn(5, 4)
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device cuda:0 "
                                           r"\(device_ids\[0\]\) but found one of them on device: cpu"):
        minitorch.nn.DataParallel(net, device_ids=[0])(x)
    dp = minitorch.nn.DataParallel(net.to("cuda:0"), device_ids=[0])
    out = dp(x)
    assert out.device == minitorch.device("cuda:0")
    np.testing.assert_allclose(out.cpu().detach().numpy(), net.cpu()(x).detach().numpy(), rtol=1e-5, atol=1e-6)
