"""The optimizer steps on CUDA (cuda/ops_optim.c, optim.cu) against the CPU: the seed network and
an MLP trained with SGD (momentum), Adam, AdamW and RMSprop match the CPU run step for step.

Tolerances, on every parameter and loss after every step and on the state at the end: float32
rtol 1e-4, atol 1e-5; float64 rtol 1e-10, atol 1e-12. The update kernels compute with the CPU
loops' formulas (core/optim_math.h), but the gradients they get differ by a few ulps between the
devices (the matrix products and reductions sum in another order, on the emulated device too; a
real GPU also contracts a * b + c into one rounding), and Adam's and RMSprop's division by a
running RMS turns a few ulps of a tiny gradient into some 1e-6 of a normalised step.
"""
import numpy as np
import pytest

import minitorch
from minitorch import nn

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = nn.functional
TOL = {minitorch.float32: {"rtol": 1e-4, "atol": 1e-5}, minitorch.float64: {"rtol": 1e-10, "atol": 1e-12}}

OPTIMIZERS = [
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-2}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.1, "maximize": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 1e-2}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
    ("AdamW", {"lr": 1e-2, "amsgrad": True, "maximize": True}),
    ("RMSprop", {"lr": 1e-2}),
    ("RMSprop", {"lr": 1e-2, "alpha": 0.9, "centered": True, "momentum": 0.5, "weight_decay": 1e-2}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in OPTIMIZERS]


def seed_network():
    """python -m minitorch's network (examples/seed_network.py)."""
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def mlp():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))


def mse_task(rng, dtype):
    return (minitorch.tensor(rng.standard_normal((16, 4))).to(dtype),
            minitorch.tensor(rng.standard_normal((16, 2))).to(dtype), F.mse_loss)


def classification_task(rng, dtype):
    return (minitorch.tensor(rng.standard_normal((32, 10))).to(dtype),
            minitorch.tensor(rng.integers(0, 3, size=32)), F.cross_entropy)


def train_both(make_model, task, name, kwargs, dtype, steps):
    """Trains one model on the CPU and a copy on CUDA; checks the parameters after every step."""
    minitorch.manual_seed(0)
    rng = np.random.default_rng(0)
    cpu_model = make_model().to(dtype)
    gpu_model = make_model().to(dtype)
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.cuda()
    x, y, loss_fn = task(rng, dtype)
    xg, yg = x.cuda(), y.cuda()
    opts = [getattr(minitorch.optim, name)(m.parameters(), **kwargs) for m in (cpu_model, gpu_model)]
    tol = TOL[dtype]
    for step in range(steps):
        losses = []
        for model, opt, inp, target in ((cpu_model, opts[0], x, y), (gpu_model, opts[1], xg, yg)):
            opt.zero_grad()
            loss = loss_fn(model(inp), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[1], losses[0], **tol, err_msg=f"loss, step {step}")
        for (pname, p), q in zip(cpu_model.named_parameters(), gpu_model.parameters()):
            assert q.is_cuda and q.dtype == p.dtype
            np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), **tol,
                                       err_msg=f"{pname}, step {step}")
    # the state too, on the parameters' device (the step counts as well)
    for p, q in zip(cpu_model.parameters(), gpu_model.parameters()):
        for key, value in opts[0].state[p].items():
            other = opts[1].state[q][key]
            assert other.device == q.device and value.device == p.device, key
            np.testing.assert_allclose(other.cpu().numpy(), value.numpy(), **tol, err_msg=key)
    return losses


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=IDS)
def test_seed_network_trains_alike(name, kwargs):
    losses = train_both(seed_network, mse_task, name, kwargs, minitorch.float32, steps=20)
    assert np.isfinite(losses).all()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=IDS)
def test_mlp_trains_alike(name, kwargs):
    train_both(mlp, classification_task, name, kwargs, minitorch.float32, steps=15)


@pytest.mark.parametrize("name,kwargs", [OPTIMIZERS[1], OPTIMIZERS[4], OPTIMIZERS[6], OPTIMIZERS[8]],
                         ids=[IDS[1], IDS[4], IDS[6], IDS[8]])
def test_mlp_trains_alike_in_float64(name, kwargs):
    train_both(mlp, classification_task, name, kwargs, minitorch.float64, steps=8)


@pytest.mark.parametrize("name,kwargs", [OPTIMIZERS[0], OPTIMIZERS[4], OPTIMIZERS[8]],
                         ids=[IDS[0], IDS[4], IDS[8]])
def test_strided_parameters_and_grads(name, kwargs):
    """A transposed parameter, a sliced gradient: updated through dense copies, in place."""
    rng = np.random.default_rng(1)
    base = rng.standard_normal((5, 3)).astype(np.float32)
    grads = [rng.standard_normal((6, 5)).astype(np.float32) for _ in range(3)]
    params = []
    for device in ("cpu", "cuda"):
        p = nn.Parameter(minitorch.tensor(base, device=device).t())
        assert not p.is_contiguous()
        opt = getattr(minitorch.optim, name)([p], **kwargs)
        for g in grads:
            p.grad = minitorch.tensor(g, device=device)[::2]
            opt.step()
        params.append(p)
    np.testing.assert_allclose(params[1].detach().cpu().numpy(), params[0].detach().numpy(), rtol=1e-5, atol=1e-7)


def test_step_counts_versions_and_the_profiler():
    p = nn.Parameter(minitorch.randn(4, 3, device="cuda"))
    p.grad = minitorch.randn(4, 3, device="cuda")
    opt = minitorch.optim.AdamW([p])
    version = p._version
    with minitorch.profiler.profile() as prof:
        opt.step()
    names = [e.key for e in prof.key_averages()]
    assert "Op::_fused_adamw_" in names and "Kernel::mt_cuda__fused_adamw_" in names
    assert p._version == version + 1
    step = opt.state[p]["step"]
    assert step.is_cuda and step.dtype == minitorch.float32 and step.item() == 1.0
    opt.step()
    assert step.item() == 2.0


def test_a_state_dict_from_the_cpu_moves_its_steps_to_the_parameters_device():
    cpu = nn.Parameter(minitorch.randn(3))
    cpu.grad = minitorch.randn(3)
    opt = minitorch.optim.Adam([cpu])
    opt.step()
    gpu = nn.Parameter(cpu.detach().cuda())
    gpu.grad = cpu.grad.cuda()
    opt2 = minitorch.optim.Adam([gpu])
    opt2.load_state_dict(opt.state_dict())
    assert all(v.is_cuda for v in opt2.state[gpu].values())
    opt.step()
    opt2.step()
    np.testing.assert_allclose(gpu.detach().cpu().numpy(), cpu.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_errors_are_the_cpus():
    hyper = {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "weight_decay": 0.0, "eps": 1e-8,
             "amsgrad": False, "maximize": False}
    for bad in (
        lambda d: ([minitorch.ones(3, device=d)], [minitorch.ones(2, device=d)]),
        lambda d: ([minitorch.ones(3, device=d)], [minitorch.ones(3, device=d, dtype=minitorch.float64)]),
        lambda d: ([minitorch.ones(3, device=d, dtype=minitorch.int64)], [minitorch.ones(3, device=d)]),
    ):
        messages = []
        for d in ("cpu", "cuda"):
            params, grads = bad(d)
            state = [minitorch.zeros(3, device=d)]
            with pytest.raises(RuntimeError) as info:
                minitorch._C._fused_adam_(params, grads, state, state, [], [minitorch.tensor(0.0, device=d)], **hyper)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    p = minitorch.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        minitorch._C._fused_sgd_([p], [minitorch.ones(3)], [], weight_decay=0.0, momentum=0.0, lr=0.1,
                                 dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
    np.testing.assert_array_equal(p.cpu().numpy(), np.ones(3, np.float32))


@pytest.mark.parametrize("name,kwargs", [OPTIMIZERS[0], OPTIMIZERS[4], OPTIMIZERS[8]],
                         ids=[IDS[0], IDS[4], IDS[8]])
def test_a_group_on_two_devices_steps_once_per_device(name, kwargs):
    """One group holding CPU and CUDA parameters: each device's parameters are one op of their own
    (as PyTorch groups its fused steps by device), and both move as they would alone."""
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(4).astype(np.float32) for _ in range(2)]
    grads = [rng.standard_normal(4).astype(np.float32) for _ in range(2)]
    mixed = [nn.Parameter(minitorch.tensor(values[0])), nn.Parameter(minitorch.tensor(values[1], device="cuda"))]
    alone = [nn.Parameter(minitorch.tensor(v)) for v in values]
    opts = [getattr(minitorch.optim, name)(ps, **kwargs) for ps in (mixed, alone)]
    for _ in range(3):
        for ps, opt in zip((mixed, alone), opts):
            for p, g in zip(ps, grads):
                p.grad = minitorch.tensor(g, device=p.device)
            opt.step()
    assert mixed[1].is_cuda and opts[0].state[mixed[1]] and opts[0].state[mixed[0]]
    for p, q in zip(mixed, alone):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)
