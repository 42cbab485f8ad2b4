"""MAML on sine-wave regression, as the meta-learning tutorials write it: a functional network
(F.linear with weights from a list, or torch.func.functional_call over dict(model.named_parameters())),
an inner loop of grads = torch.autograd.grad(loss, fast_weights, create_graph=True) and fast
weights w - inner_lr * g built with a list comprehension, the query loss of every task summed into
a meta loss divided by the task count, meta_optimizer (Adam) on the second-order gradient, the
first-order variant with create_graph=False and grad detached, and evaluation after k adaptation
steps under a fresh copy made by copy.deepcopy(model)."""
import copy
from collections import OrderedDict

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def maml(torch, init=None, meta_steps=3, tasks=3, inner_steps=2, first_order=False, functional_call=False):
    nn, F = torch.nn, torch.nn.functional

    class SineNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(OrderedDict([
                ("l1", nn.Linear(1, 32)), ("relu1", nn.ReLU()),
                ("l2", nn.Linear(32, 32)), ("relu2", nn.ReLU()),
                ("l3", nn.Linear(32, 1))]))

        def forward(self, x):
            return self.net(x)

        def functional_forward(self, x, weights):
            x = F.relu(F.linear(x, weights[0], weights[1]))
            x = F.relu(F.linear(x, weights[2], weights[3]))
            return F.linear(x, weights[4], weights[5])

    torch.manual_seed(0)
    model = SineNet()
    result = {}
    start_from(torch, model, init, result)
    meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inner_lr = 0.01
    rng = np.random.default_rng(0)

    def sample_task():
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)

        def draw(k):
            x = rng.uniform(-5, 5, (k, 1)).astype(np.float32)
            return torch.from_numpy(x), torch.from_numpy((amplitude * np.sin(x - phase)).astype(np.float32))

        return draw

    def adapt(x, y, steps, create_graph):
        if functional_call:
            params = dict(model.named_parameters())
            for _ in range(steps):
                loss = F.mse_loss(torch.func.functional_call(model, params, (x,)), y)
                grads = torch.autograd.grad(loss, params.values(), create_graph=create_graph)
                params = {name: w - inner_lr * (g if create_graph else g.detach())
                          for (name, w), g in zip(params.items(), grads)}
            return lambda inp: torch.func.functional_call(model, params, (inp,))
        fast_weights = list(model.parameters())
        for _ in range(steps):
            loss = F.mse_loss(model.functional_forward(x, fast_weights), y)
            grads = torch.autograd.grad(loss, fast_weights, create_graph=create_graph)
            fast_weights = [w - inner_lr * (g if create_graph else g.detach()) for w, g in zip(fast_weights, grads)]
        return lambda inp: model.functional_forward(inp, fast_weights)

    meta_losses = []
    for step in range(meta_steps):
        meta_optimizer.zero_grad()
        meta_loss = 0.0
        for _ in range(tasks):
            draw = sample_task()
            x_s, y_s = draw(10)
            x_q, y_q = draw(10)
            adapted = adapt(x_s, y_s, inner_steps, create_graph=not first_order)
            meta_loss = meta_loss + F.mse_loss(adapted(x_q), y_q)
        meta_loss = meta_loss / tasks
        meta_loss.backward()
        meta_optimizer.step()
        meta_losses.append(meta_loss.item())
    result["meta_losses"] = meta_losses
    result["grads"] = [numpy_of(p.grad) for p in model.parameters()]

    draw = sample_task()
    x_s, y_s = draw(10)
    x_t = torch.linspace(-5, 5, 20).unsqueeze(1)
    clone = copy.deepcopy(model)
    opt = torch.optim.SGD(clone.parameters(), lr=inner_lr)
    curve = []
    for k in range(3):
        opt.zero_grad()
        loss = F.mse_loss(clone(x_s), y_s)
        loss.backward()
        opt.step()
        curve.append(loss.item())
    with torch.no_grad():
        result["adapted"] = numpy_of(clone(x_t))
    result["curve"] = curve
    result["same_init"] = all(bool((a == b).all()) for a, b in zip(model.parameters(), model.parameters()))
    return result


def test_maml_second_order():
    compare_program(maml, rtol=1e-3, atol=1e-4)


def test_maml_first_order():
    compare_program(maml, first_order=True, rtol=1e-3, atol=1e-4)


def test_maml_functional_call():
    compare_program(maml, functional_call=True, rtol=1e-3, atol=1e-4)
