"""The DDP test's model and data (imported by the script and by the test's single-process reference)."""
import numpy as np

import minitorch
from minitorch import nn

N, D_IN, D_OUT = 16, 5, 2


def model(seed: int) -> nn.Module:
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(D_IN, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, D_OUT)).double()


def data(step: int):
    g = np.random.default_rng(7 + step)
    return minitorch.from_numpy(g.standard_normal((N, D_IN))), minitorch.from_numpy(g.standard_normal((N, D_OUT)))


def params(m: nn.Module) -> np.ndarray:
    return np.concatenate([p.detach().cpu().numpy().reshape(-1) for p in m.parameters()])


def sgd_steps(module: nn.Module, net: nn.Module, steps: int, rows=slice(None), device: str = "cpu"):
    """SGD (lr 0.1) of module (net, or a DDP of it) on the mean squared error over data(0), ...,
    data(steps - 1), their `rows` on device: the optimizer, and net's parameters after each step."""
    opt = minitorch.optim.SGD(module.parameters(), lr=0.1)
    out = []
    for step in range(steps):
        x, y = data(step)
        opt.zero_grad()
        nn.functional.mse_loss(module(x[rows].to(device)), y[rows].to(device)).backward()
        opt.step()
        out.append(params(net))
    return opt, out
