"""A short minitorch session for valgrind memcheck (tests/leaks/valgrind_check.sh): ops, views,
indexing, autograd, an optimizer, nn modules, save/load, DLPack and erroring calls, each a few
times, so that a block our C code forgets to free shows up as definitely lost."""
import io

import numpy as np

import minitorch
from minitorch import nn


def session():
    minitorch.manual_seed(0)
    a = minitorch.randn(4, 5, requires_grad=True)
    b = minitorch.randn(5, 3)
    c = (a @ b).relu().sum(1).mean() + a.exp().max() - a[1:, ::2].abs().sum()
    c.backward()
    minitorch.autograd.grad((a * a).sum(), [a])
    x = minitorch.arange(12.0).reshape(3, 4)
    x[x > 5] = 0.0
    x.sort(1)
    minitorch.cat([x, x]).t().contiguous().tolist()
    minitorch.split(x, 2, 1)
    np.from_dlpack(x)
    minitorch.from_dlpack(np.ones(3))
    minitorch.from_numpy(np.ones((2, 2))).numpy()

    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    opt = minitorch.optim.Adam(model.parameters(), lr=1e-3)
    img = minitorch.randn(2, 1, 6, 6)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(model(img), minitorch.tensor([0, 2])).backward()
        opt.step()
    buf = io.BytesIO()
    minitorch.save(model.state_dict(), buf)
    model.load_state_dict(minitorch.load(io.BytesIO(buf.getvalue())))

    errors = [
        lambda: a + b,
        lambda: b @ b,
        lambda: b.sum(7),
        lambda: b[9],
        lambda: minitorch.tensor([[1.0], [2.0, 3.0]]),
        lambda: a.add_(1),
        lambda: minitorch.load(io.BytesIO(buf.getvalue()[:-7])),
        lambda: (a * 2).backward(),
    ]
    for bad in errors:
        try:
            bad()
        except Exception:
            pass
        else:
            raise AssertionError("expected an error")


for _ in range(3):
    session()
print("valgrind session done")
