"""Training with torch.func, as the tutorials and DP-SGD scripts write it: a small CNN trained by
DP-SGD (per-sample gradients from vmap(grad(...)) over functional_call, each clipped to a norm
bound, summed, noised with NumPy's draws, averaged), and an ensemble of MLPs trained together
through stack_module_state + vmap with one Adam over the stacked parameters. The per-step losses
and the final weights match PyTorch's."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

CLASSES = 3


def dp_sgd_cnn(torch, init=None, steps=4, batch=6, clip=1.0, sigma=0.5):
    nn, F = torch.nn, torch.nn.functional
    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, CLASSES))
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((batch, 1, 8, 8)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, CLASSES, batch))

    def loss_of(params, sample, target):
        out = functional_call(model, params, (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))
    losses = []
    for _ in range(steps):
        params = {k: v.detach() for k, v in model.named_parameters()}
        grads = per_sample(params, x, y)
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
        scale = (clip / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for name, p in model.named_parameters():
                g = (grads[name] * scale.view(-1, *[1] * (grads[name].dim() - 1))).sum(0)
                noise = torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=torch.float32)
                p -= 0.1 * (g + sigma * clip * noise) / batch
        losses.append(F.cross_entropy(model(x), y).item())
    result.update(losses=losses, norms=numpy_of(norms), state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def ensemble_adam(torch, init=None, steps=5, members=3, batch=8):
    nn, F = torch.nn, torch.nn.functional
    functional_call, stack_module_state, vmap = torch.func.functional_call, torch.func.stack_module_state, torch.vmap

    torch.manual_seed(0)
    models = nn.ModuleList([nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, CLASSES))
                            for _ in range(members)])
    result = {}
    start_from(torch, models, init, result)
    params, buffers = stack_module_state(list(models))
    base = models[0]

    def fmodel(p, b, x):
        return functional_call(base, (p, b), (x,))

    rng = np.random.default_rng(4)
    x = torch.tensor(rng.standard_normal((members, batch, 5)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, CLASSES, (members, batch)))
    opt = torch.optim.Adam(params.values(), lr=0.05)
    losses = []
    for _ in range(steps):
        logits = vmap(fmodel)(params, buffers, x)  # (members, batch, CLASSES)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    shared = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
    result.update(losses=losses, shared=numpy_of(shared), params={k: numpy_of(v) for k, v in params.items()})
    return result


def test_dp_sgd_per_sample_gradients():
    ref, _ = compare_program(dp_sgd_cnn)
    assert len(ref["losses"]) == 4


def test_ensemble_trained_with_vmap():
    ref, _ = compare_program(ensemble_adam)
    assert ref["losses"][-1] < ref["losses"][0]
