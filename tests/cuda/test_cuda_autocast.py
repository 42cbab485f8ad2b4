"""autocast on the CUDA device (real or emulated): PyTorch's CUDA policy (float16 for the
products and convolutions, float32 for the exp/log family, softmax, sums, norms and losses, the
widest dtype for addcmul and friends, binary_cross_entropy refused), values as the CPU computes
the same casts, and a GradScaler training loop under autocast('cuda')."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
R = np.random.default_rng(0)


def rand(*shape, low=-1.0, high=1.0):
    return R.uniform(low, high, shape).astype(np.float32)


def f32(t):
    return np.array(t.detach().float().cpu().numpy(), copy=True)


# name -> (fn(*tensors), arrays, the result dtype under autocast('cuda') for float32 inputs)
CASES = {
    "mm": (lambda a, b: a @ b, [rand(5, 7), rand(7, 3)], "float16"),
    "linear": (lambda x, w, b: F.linear(x, w, b), [rand(4, 8), rand(3, 8), rand(3)], "float16"),
    "mv": (lambda a, v: minitorch.mv(a, v), [rand(4, 6), rand(6)], "float16"),
    "addmv": (lambda c, a, v: minitorch.addmv(c, a, v), [rand(4), rand(4, 6), rand(6)], "float16"),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [rand(1, 2, 5, 5), rand(3, 2, 3, 3)], "float16"),
    "bmm": (lambda a, b: minitorch.bmm(a, b), [rand(2, 3, 4), rand(2, 4, 5)], "float16"),
    "exp": (lambda x: x.exp(), [rand(3, 4)], "float32"),
    "log": (lambda x: x.log(), [rand(3, 4, low=0.1)], "float32"),
    "pow": (lambda x: x ** 2, [rand(3, 4)], "float32"),
    "softmax": (lambda x: x.softmax(-1), [rand(3, 4)], "float32"),
    "log_softmax": (lambda x: F.log_softmax(x, -1), [rand(3, 4)], "float32"),
    "sum": (lambda x: x.sum(), [rand(3, 4)], "float32"),
    "cumsum": (lambda x: x.cumsum(0), [rand(3, 4)], "float32"),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), [rand(3, 4)], "float32"),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [rand(3, 4), rand(3, 4)], "float32"),
    "cross_entropy": (lambda x: F.cross_entropy(x, minitorch.tensor([0, 3, 1], device="cuda")), [rand(3, 4)],
                      "float32"),
    "relu": (lambda x: x.relu(), [rand(3, 4)], "float32"),
}


@pytest.mark.parametrize("half_inputs", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_policy(name, half_inputs):
    fn, arrays, want = CASES[name]
    make = (lambda a: minitorch.tensor(a, device="cuda").half()) if half_inputs else \
        (lambda a: minitorch.tensor(a, device="cuda"))
    with minitorch.autocast("cuda"):
        out = fn(*[make(a) for a in arrays])
    if name == "relu":  # not listed: its input's dtype
        want = "float16" if half_inputs else "float32"
    assert out.device.type == "cuda" and out.dtype == getattr(minitorch, want)
    # the same casts by hand on the CPU
    cast = getattr(minitorch, "float16" if want == "float16" else "float32")
    cpu_in = [minitorch.tensor(a).half().to(cast) if half_inputs else minitorch.tensor(a).to(cast) for a in arrays]
    if name == "cross_entropy":
        expected = F.cross_entropy(cpu_in[0], minitorch.tensor([0, 3, 1]))
    else:
        expected = fn(*cpu_in)
    np.testing.assert_allclose(f32(out), f32(expected), rtol=2e-3, atol=2e-3)


def test_cuda_dtype_given_and_promote():
    x = minitorch.tensor(rand(3, 4), device="cuda").half()
    y = minitorch.tensor(rand(3, 4), device="cuda")
    with minitorch.autocast("cuda"):
        assert x.softmax(-1, dtype=minitorch.float16).dtype == minitorch.float16  # dtype= stands
        assert minitorch.addcmul(x, y, x).dtype == minitorch.float32  # the widest
        assert minitorch.addcmul(x, x, x).dtype == minitorch.float16
        assert minitorch.atan2(x, y).dtype == minitorch.float32
        cpu = minitorch.randn(3, 3)
        assert (cpu @ cpu).dtype == minitorch.float32  # a CPU tensor in a CUDA region
        assert (x.double() @ x.double().t()).dtype == minitorch.float64
    with minitorch.autocast("cpu"):
        assert (y @ y.t()).dtype == minitorch.float32  # a CUDA tensor in a CPU region
    assert (y @ y.t()).dtype == minitorch.float32


def test_cuda_binary_cross_entropy_refused():
    p = minitorch.tensor(rand(4, low=0.1, high=0.9), device="cuda")
    with minitorch.autocast("cuda"):
        with pytest.raises(RuntimeError, match="binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast"):
            F.binary_cross_entropy(p, p)
        assert F.binary_cross_entropy_with_logits(p.half(), p).dtype == minitorch.float32
    assert F.binary_cross_entropy(p, p).dtype == minitorch.float32


def test_cuda_training_with_grad_scaler():
    minitorch.manual_seed(0)
    nn = minitorch.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to("cuda")
    opt = minitorch.optim.SGD(model.parameters(), lr=0.2)
    scaler = minitorch.amp.GradScaler("cuda")
    x = minitorch.tensor(rand(32, 8), device="cuda")
    y = minitorch.tensor(R.integers(0, 3, 32), device="cuda")
    losses = []
    for _ in range(5):
        opt.zero_grad()
        with minitorch.autocast("cuda"):
            out = model(x)
            loss = F.cross_entropy(out, y)
        assert out.dtype == minitorch.float16 and loss.dtype == minitorch.float32
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == minitorch.float32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.dtype == minitorch.float32 for p in model.parameters())
