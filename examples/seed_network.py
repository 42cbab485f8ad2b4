"""The seed network, written as PyTorch code: `import minitorch as torch` is the only change.

Builds nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 2)), runs a batch through it, checks the
result against NumPy with the same weights, saves and reloads the weights, and shows the path
one call took through the stack. Run: python examples/seed_network.py
"""
import io

import numpy as np

import minitorch as torch
from minitorch import nn
from minitorch._journey import format_tree, record

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
print(model)

x = torch.randn(3, 4)
with torch.no_grad():
    y = model(x)
print("y =", y)

# The same computation in NumPy, from the model's own weights.
w = {name: p.numpy().astype(np.float64) for name, p in model.state_dict().items()}
ref = np.maximum(x.numpy() @ w["0.weight"].T + w["0.bias"], 0) @ w["2.weight"].T + w["2.bias"]
print("max |minitorch - numpy| =", float(np.abs(y.numpy() - ref).max()))

# Weights survive a save/load round trip (PyTorch's checkpoint format: torch.load reads it too).
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
clone = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
print(clone.load_state_dict(torch.load(buf)))
assert clone(x).tolist() == y.tolist()

_, events = record(model, x[:1])
print(format_tree(events))
