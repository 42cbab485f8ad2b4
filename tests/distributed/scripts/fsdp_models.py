"""The FSDP tests' models, data and training loop (imported by scripts/fsdp.py and by the tests'
single-process references)."""
import numpy as np

import minitorch
from minitorch import nn

N = 16  # the full batch; each of the n ranks takes N / n rows


class Block(nn.Module):
    """An MLP block (a unit of its own under ModuleWrapPolicy({Block}))."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


def mlp(seed: int) -> nn.Module:
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 6), nn.Tanh(), Block(6), Block(6), nn.Linear(6, 3)).double()


def tied(seed: int) -> nn.Module:
    """An MLP whose first and last Linear share one weight (registered twice)."""
    minitorch.manual_seed(seed)
    m = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 5, bias=False), nn.Tanh(), nn.Linear(5, 3)).double()
    m[2].weight = m[0].weight
    return m


def transformer(seed: int) -> nn.Module:
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8),
                         nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
                         nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
                         nn.Linear(8, 3)).double()


def data(kind: str, step: int):
    g = np.random.default_rng(100 + step)
    shape = (N, 4, 5) if kind == "transformer" else (N, 5)
    y_shape = (N, 4, 3) if kind == "transformer" else (N, 3)
    return minitorch.from_numpy(g.standard_normal(shape)), minitorch.from_numpy(g.standard_normal(y_shape))


def error(fn) -> str:
    """What fn raised, as "Class: words" ("" when it returned)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the tests compare class and words)
        return f"{type(e).__name__}: {e}"
    return ""


def held_and_comm(model, rows, held):
    """Which units hold their full parameters after a forward (held(model)), and the counts of
    the backward's all-gathers and reduce-scatters."""
    x, y = data("mlp", 8)
    loss = nn.functional.mse_loss(model(x[rows]), y[rows])
    units = held(model)
    with minitorch.profiler.profile() as prof:
        loss.backward()
    names = [e.key for e in prof.key_averages() for _ in range(e.count)]
    model.zero_grad()
    return units, [names.count(c) for c in ("Comm::all_gather_into_tensor", "Comm::reduce_scatter_tensor")]


def full_params(state: dict) -> np.ndarray:
    return np.concatenate([v.detach().cpu().numpy().reshape(-1) for v in state.values()])


def train(model: nn.Module, kind: str, steps: int, rows=slice(None), optim: str = "sgd", clip=None,
          state=None):
    """steps of training (SGD lr 0.1, or Adam lr 0.01) on the MSE over data(kind, 0..steps-1)'s
    rows; after each step state() (default model.state_dict()). Returns (optimizer, the states
    flattened, the gradient norms that clip_grad_norm_ returned)."""
    opt = (minitorch.optim.SGD(model.parameters(), lr=0.1) if optim == "sgd"
           else minitorch.optim.Adam(model.parameters(), lr=0.01))
    states, norms = [], []
    for step in range(steps):
        x, y = data(kind, step)
        opt.zero_grad()
        nn.functional.mse_loss(model(x[rows]), y[rows]).backward()
        if clip is not None:
            norms.append(float(clip(model)))
        opt.step()
        states.append(full_params(state() if state else model.state_dict()))
    return opt, np.stack(states), np.array(norms)
