"""A residual MLP trained with activation checkpointing, as memory-bound training scripts write it:
checkpoint_sequential over the stem, torch.utils.checkpoint.checkpoint(use_reentrant=False) around
each pre-LayerNorm residual block, cross-entropy per sample summed with torch.nansum, an entropy
bonus from torch.special.entr, an orthogonality penalty through torch.linalg.multi_dot and
torch.linalg.vecdot, SGD with momentum and Nesterov; the per-step losses and the final weights
match PyTorch's."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

FEATURES, WIDTH, CLASSES = 10, 32, 4


def checkpointed_mlp(torch, init=None, steps=6, batch=16):
    nn, F = torch.nn, torch.nn.functional
    checkpoint = torch.utils.checkpoint.checkpoint
    checkpoint_sequential = torch.utils.checkpoint.checkpoint_sequential
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(WIDTH)
            self.ff = nn.Sequential(nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH))

        def forward(self, x):
            return x + self.ff(self.norm(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Linear(FEATURES, WIDTH), nn.Tanh(), nn.Linear(WIDTH, WIDTH), nn.Tanh())
            self.blocks = nn.ModuleList([Block() for _ in range(3)])
            self.head = nn.Linear(WIDTH, CLASSES)

        def forward(self, x):
            x = checkpoint_sequential(self.stem, 2, x, use_reentrant=False)
            for block in self.blocks:
                x = checkpoint(block, x, use_reentrant=False)
            return self.head(x)

    model = Net()
    result = {}
    start_from(torch, model, init, result)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((batch, FEATURES)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, CLASSES, batch))
    losses = []
    for _ in range(steps):
        logits = model(x)
        loss = torch.nansum(F.cross_entropy(logits, y, reduction="none")) / batch
        loss = loss - 0.01 * torch.special.entr(F.softmax(logits, dim=-1)).sum(-1).mean()
        w = model.head.weight  # (CLASSES, WIDTH): rows kept near-orthogonal
        gram = torch.linalg.multi_dot([w, w.T, torch.eye(CLASSES)])
        loss = loss + 1e-3 * (gram - torch.eye(CLASSES)).pow(2).sum() + 1e-4 * torch.linalg.vecdot(w, w).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    result.update(losses=losses, state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_checkpointed_residual_mlp():
    ref, _ = compare_program(checkpointed_mlp)
    assert ref["losses"][-1] < ref["losses"][0]
