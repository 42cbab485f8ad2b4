"""A small CNN classifier and an MLP with float16 or bfloat16 weights (Module.half(), .bfloat16(),
.to(dtype)): forward, cross entropy, backward and a few SGD steps, as PyTorch's CPU runs them
(float32 inside each op, rounded once on store). Both libraries start from the same float32
weights, converted by each."""
import numpy as np
import pytest

from prog_helpers import compare_program, start_from

# One unit in the last place of bfloat16 is 2**-8 relative; a few steps of SGD in which PyTorch's
# CPU sums the products of a matmul or conv in another order move a weight by a unit or two.
TOL = {"float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2)}


def numpy_f32(t) -> np.ndarray:
    """float16/bfloat16 (which NumPy lacks) through float32, exactly."""
    return np.array(t.detach().float().numpy(), copy=True)


def half_cnn(torch, init=None, dtype="bfloat16", how="method", steps=4):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((8, 1, 8, 8)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 3, 8))

    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))
    result = {}
    start_from(torch, model, init, result)
    target = getattr(torch, dtype)
    if how == "method":
        model = model.half() if dtype == "float16" else model.bfloat16()
    else:
        model = model.to(target)
    x = x.to(target)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    losses, dtypes = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.float().item())
        dtypes.append(str(out.dtype).split(".")[-1] + "/" + str(model[0].weight.grad.dtype).split(".")[-1])
    with torch.no_grad():
        probs = model(x).softmax(-1)
    result.update(losses=losses, dtypes=dtypes, probs=numpy_f32(probs),
                  params={k: numpy_f32(v) for k, v in model.named_parameters()})
    return result


def half_mlp(torch, init=None, dtype="float16", how="to", steps=5):
    nn = torch.nn
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.uniform(-2, 2, (32, 4)).astype(np.float32))
    y = torch.from_numpy(np.tanh(rng.uniform(-1, 1, (32, 2))).astype(np.float32))
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    result = {}
    start_from(torch, model, init, result)
    target = getattr(torch, dtype)
    model = model.to(target) if how == "to" else (model.half() if dtype == "float16" else model.bfloat16())
    x, y = x.to(target), y.to(target)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.float().item())
    result.update(losses=losses, dtype=str(model[0].weight.dtype).split(".")[-1],
                  params={k: numpy_f32(v) for k, v in model.named_parameters()})
    return result


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("how", ["method", "to"])
def test_half_cnn(dtype, how):
    rtol, atol = TOL[dtype]
    ref, got = compare_program(half_cnn, rtol=rtol, atol=atol, dtype=dtype, how=how)
    assert ref["dtypes"][0] == f"{dtype}/{dtype}"
    assert ref["losses"][-1] < ref["losses"][0]  # the program does learn


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("how", ["method", "to"])
def test_half_mlp(dtype, how):
    rtol, atol = TOL[dtype]
    ref, got = compare_program(half_mlp, rtol=rtol, atol=atol, dtype=dtype, how=how)
    assert got["dtype"] == dtype
    assert ref["losses"][-1] < ref["losses"][0]
