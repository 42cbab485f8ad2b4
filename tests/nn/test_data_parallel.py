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


# ---- replicate, scatter, parallel_apply, gather: DataParallel's pieces, on one device ----

def test_the_pieces_refuse_the_cpu_as_torch():
    """PyTorch's nn.parallel works on accelerator devices; a CPU device is refused alike."""
    net = model(minitorch)
    for fn in (lambda lib, n: lib.nn.parallel.replicate(n, ["cpu"]),
               lambda lib, n: lib.nn.parallel.scatter(lib.ones(4, 2), ["cpu"])):
        with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
            fn(minitorch, net)
        with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
            fn(torch, model(torch))
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        minitorch.nn.parallel.gather([minitorch.ones(2)], -1)
    with pytest.raises(AssertionError, match="The number of modules 1 is not equal to the number of inputs 2"):
        minitorch.nn.parallel.parallel_apply([net], [minitorch.ones(1, 4), minitorch.ones(1, 4)])


@pytest.mark.skipif(not os.environ.get("MINITORCH_CUDA_EMU") and not minitorch.cuda.is_available(),
                    reason="needs a CUDA device (or MINITORCH_CUDA_EMU=1)")
def test_replicate_scatter_apply_gather_on_one_device():
    """DataParallel by hand on device 0: the replica shares the module's parameters (so the
    gradients reach them) and has none of its own, scatter splits tensors through containers and
    repeats the rest, gather concatenates (stacks 0-dim tensors, with PyTorch's warning) on the
    target device; the result and the gradients are the module's own."""
    if not minitorch.cuda.is_available():
        pytest.skip(minitorch.cuda._unavailable_reason())
    P = minitorch.nn.parallel
    net = model(minitorch).to("cuda:0")
    x = minitorch.randn(6, 4)
    replicas = P.replicate(net, [0])
    assert len(replicas) == 1 and list(replicas[0].parameters()) == [] and replicas[0][0].weight is net[0].weight
    detached = P.replicate(net, [0], detach=True)[0]
    assert detached[0].weight.grad_fn is None and detached[0].weight is not net[0].weight
    inputs = P.scatter((x, {"scale": x, "n": 2}), [0])
    assert len(inputs) == 1 and inputs[0][1]["n"] == 2 and inputs[0][0].device == minitorch.device("cuda:0")
    halves = P.scatter(x, [0, 0])
    assert [tuple(h.shape) for h in halves] == [(3, 4), (3, 4)]
    outs = P.parallel_apply(replicas, [inputs[0][0]], devices=[0])
    out = P.gather(outs, -1)
    assert out.device == minitorch.device("cpu")
    want = net.cpu()(x)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)
    net.to("cuda:0")
    net(x.to("cuda:0")).pow(2).sum().backward()
    want_grads = [p.grad.cpu().numpy() for p in net.parameters()]
    net.zero_grad()
    P.gather(P.parallel_apply(P.replicate(net, [0]), [x.to("cuda:0")]), 0).pow(2).sum().backward()
    for p, g in zip(net.parameters(), want_grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g, rtol=1e-5, atol=1e-6)
    assert np.abs(want_grads[-1]).sum() > 0
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        v = P.gather([minitorch.tensor(1.0, device="cuda:0"), minitorch.tensor(2.0, device="cuda:0")], 0)
    assert v.tolist() == [1.0, 2.0]
    pair = P.gather([(minitorch.ones(2, device="cuda:0"), {"a": minitorch.zeros(1, device="cuda:0")})] * 2, 0)
    assert tuple(pair[0].shape) == (4,) and tuple(pair[1]["a"].shape) == (2,)
