"""Training end to end on CUDA against the CPU, and how often a training step
waits for the device (point 3).

Four models train on the CPU and on the CUDA device (the emulated one in CI) from the same initial
weights and the same batches: the seed network (examples/seed_network.py), an MLP, a small CNN
(conv2d, batch_norm, relu, max_pool2d, linear, cross_entropy) and a GPT-style block (token and
position embeddings, layer_norm, causal self-attention through F.scaled_dot_product_attention,
a GELU MLP, a tied-free head, cross_entropy over the tokens), each with SGD (momentum 0.9) and
AdamW. After every step the losses match, and at the end every parameter (and batch_norm's
running statistics).

Tolerances (float32): losses rtol 1e-4, atol 1e-5 at every step; parameters rtol 1e-4,
atol 2e-5 after the last step. The devices sum in other orders (matrix products, reductions,
atomics in the scatter-adds of embedding's and max_pool's gradients), so gradients differ by a
few ulps, which AdamW's normalised steps turn into some 1e-6 of a parameter; a handful of steps
keeps that far below the tolerances (tests/cuda/test_cuda_optim.py measures the optimizer kernels
alone, with the same tolerances).

The synchronisation count: the emulated runtime counts each time the host waits for the device
(minitorch.cuda._emu_sync_count). Forward, backward and the optimizer step of the MLP wait for
nothing; loss.item() waits once (its copy to the host), as in PyTorch.
"""
import numpy as np
import pytest

import minitorch
from minitorch import nn

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = nn.functional
LOSS_TOL = {"rtol": 1e-4, "atol": 1e-5}
PARAM_TOL = {"rtol": 1e-4, "atol": 2e-5}
OPTIMIZERS = {
    "sgd": ("SGD", {"lr": 0.05, "momentum": 0.9}),
    "adamw": ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
}


def seed_network():
    """python -m minitorch's network (examples/seed_network.py)."""
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def mlp():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))


def cnn():
    """(N, 1, 8, 8) -> 3 classes. The convolution before batch_norm has no bias, as usual: the
    batch's mean takes it out again, so its gradient is 0 up to rounding, which AdamW's
    normalised step would turn into steps of size lr that differ between the devices."""
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


class GPTBlock(nn.Module):
    """A one-block GPT: embeddings, pre-norm causal attention and GELU MLP with residuals, a head.
    The q, k, v projection has no bias (as in many GPTs): the keys' bias adds one number to a
    whole row of scores, which softmax ignores, so its gradient is 0 up to rounding (see cnn)."""

    def __init__(self, vocab=13, ctx=8, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.shape
        pos = minitorch.arange(t, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.ln_f(x))


def regression(rng):
    return [(rng.standard_normal((16, 4)), rng.standard_normal((16, 2)))]


def classes(features, n=3):
    def batches(rng):
        return [(rng.standard_normal((24,) + features), rng.integers(0, n, size=24)) for _ in range(2)]
    return batches


def tokens(rng):
    return [(rng.integers(0, 13, size=(3, 8)), rng.integers(0, 13, size=(3, 8))) for _ in range(2)]


def token_loss(logits, target):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


MODELS = {
    "seed": (seed_network, regression, F.mse_loss, 10),
    "mlp": (mlp, classes((10,)), F.cross_entropy, 8),
    "cnn": (cnn, classes((1, 8, 8)), F.cross_entropy, 6),
    "gpt": (GPTBlock, tokens, token_loss, 6),
}


def as_tensor(a, device):
    a = np.asarray(a)
    return minitorch.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a, device=device)


def train_both(model_name, opt_name):
    """Trains one model on the CPU and a copy on CUDA; returns the largest differences of the
    losses (over the steps) and of the parameters and buffers (at the end)."""
    make, data, loss_fn, steps = MODELS[model_name]
    name, kwargs = OPTIMIZERS[opt_name]
    minitorch.manual_seed(0)
    rng = np.random.default_rng(0)
    cpu_model = make()
    gpu_model = make()
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.cuda()
    batches = data(rng)
    opts = [getattr(minitorch.optim, name)(m.parameters(), **kwargs) for m in (cpu_model, gpu_model)]
    loss_diff = 0.0
    for step in range(steps):
        x, y = batches[step % len(batches)]
        losses = []
        for model, opt, device in ((cpu_model, opts[0], "cpu"), (gpu_model, opts[1], "cuda")):
            opt.zero_grad()
            loss = loss_fn(model(as_tensor(x, device)), as_tensor(y, device))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[1], losses[0], **LOSS_TOL, err_msg=f"loss, step {step}")
        loss_diff = max(loss_diff, abs(losses[1] - losses[0]))
    param_diff = 0.0
    for (pname, p), q in zip(cpu_model.state_dict().items(), gpu_model.state_dict().values()):
        assert q.is_cuda and q.dtype == p.dtype, pname
        got, want = q.cpu().numpy(), p.numpy()
        np.testing.assert_allclose(got, want, **PARAM_TOL, err_msg=pname)
        if want.dtype.kind == "f":
            param_diff = max(param_diff, float(np.abs(got - want).max(initial=0)))
    # training moved the weights: the comparison is not of two untouched copies
    moved = [not np.array_equal(p.detach().numpy(), q.detach().cpu().numpy())
             for p, q in zip(cpu_model.parameters(), make().parameters())]
    assert any(moved)
    return loss_diff, param_diff


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
def test_trains_alike_on_cuda(model_name, opt_name):
    loss_diff, param_diff = train_both(model_name, opt_name)
    print(f"{model_name} {opt_name}: max |loss diff| {loss_diff:.2e}, max |param diff| {param_diff:.2e}")


# ---- synchronisations ----

needs_emu = pytest.mark.skipif(not minitorch.cuda._is_emulated(),
                               reason="the emulated runtime counts host synchronisations")


def syncs_of(fn):
    before = minitorch.cuda._emu_sync_count()
    result = fn()
    return minitorch.cuda._emu_sync_count() - before, result


@needs_emu
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_a_training_step_waits_only_for_item(opt_name):
    name, kwargs = OPTIMIZERS[opt_name]
    minitorch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = mlp().cuda()
    opt = getattr(minitorch.optim, name)(model.parameters(), **kwargs)
    x = minitorch.tensor(rng.standard_normal((24, 10)).astype(np.float32), device="cuda")
    y = minitorch.tensor(rng.integers(0, 3, size=24), device="cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(2):  # the first step makes the optimizer's state; both wait for nothing
        count, loss = syncs_of(step)
        assert count == 0
    count, value = syncs_of(loss.item)
    assert count == 1 and np.isfinite(value)
    count, _ = syncs_of(minitorch.cuda.synchronize)
    assert count == 1


@needs_emu
def test_the_other_models_step_without_waiting():
    """The CNN's and the GPT block's forward, backward and AdamW step: no host synchronisation."""
    rng = np.random.default_rng(1)
    for make, (x, y), loss_fn in ((cnn, classes((1, 8, 8))(rng)[0], F.cross_entropy),
                                  (GPTBlock, tokens(rng)[0], token_loss)):
        model = make().cuda()
        opt = minitorch.optim.AdamW(model.parameters(), lr=1e-2)
        xg, yg = as_tensor(x, "cuda"), as_tensor(y, "cuda")

        def step():
            opt.zero_grad()
            loss = loss_fn(model(xg), yg)
            loss.backward()
            opt.step()

        for _ in range(2):
            count, _ = syncs_of(step)
            assert count == 0, make.__name__


def scaled_steps(device, steps=7, bad=(2, 3)):
    """SGD under a GradScaler (growth_interval 2) on device; the loss is inf on the bad steps.
    Returns (scale, growth tracker, host waits of scale+backward+step+update) per step."""
    minitorch.manual_seed(0)
    model = mlp().to(device)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.05)
    scaler = minitorch.amp.GradScaler(device, init_scale=2.0**8, growth_interval=2)
    x = as_tensor(np.random.default_rng(2).standard_normal((24, 10)), device)
    y = as_tensor(np.random.default_rng(3).integers(0, 3, size=24), device)
    out = []
    for i in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * (float("inf") if i in bad else 1.0)

        def step():
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        counted = device == "cuda" and minitorch.cuda._is_emulated()
        waits = syncs_of(step)[0] if counted else step()
        out.append((scaler.get_scale(), scaler._get_growth_tracker(), waits))
    return out


def test_grad_scaler_step_waits_once():
    """GradScaler.step reads found_inf back once (PyTorch's _maybe_opt_step does too) and
    update() backs off or grows the scale on the device without waiting (PyTorch's
    _amp_update_scale_); the scales and trackers are the CPU run's."""
    got, want = scaled_steps("cuda"), scaled_steps("cpu")
    assert [g[:2] for g in got] == [w[:2] for w in want]
    # grown after 2 good steps, backed off by the 2 bad ones, grown again
    assert [g[0] for g in got] == [256.0, 512.0, 256.0, 128.0, 128.0, 256.0, 256.0]
    if minitorch.cuda._is_emulated():
        assert [g[2] for g in got] == [1] * len(got)
