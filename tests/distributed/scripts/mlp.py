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
