"""minitorch.utils.checkpoint beside torch.utils.checkpoint: checkpoint (use_reentrant True and
False) and checkpoint_sequential give the values and gradients of the plain run, for the input
and every parameter, with dropout's masks the same in the recomputation (preserve_rng_state);
keyword arguments, nested inputs, outputs that are tuples, warnings and errors as PyTorch's."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy


def mlp(lib, p=0.0):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(p), lib.nn.Linear(8, 8), lib.nn.ReLU(),
                             lib.nn.Linear(8, 3))


def copy_weights(src, dst):
    dst.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


X = np.random.default_rng(3).standard_normal((5, 4))


def run(lib, model, mode, x_grad=True, seed=7):
    lib.manual_seed(seed)
    x = lib.tensor(X, dtype=lib.float32).requires_grad_(x_grad)
    if mode == "plain":
        y = model(x)
    elif mode == "seq":
        y = lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False)
    else:
        y = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=mode == "reentrant")
    loss = (y * y).sum()
    loss.backward()
    grads = [as_numpy(p.grad) if lib is minitorch else p.grad.numpy() for p in model.parameters()]
    xg = None if x.grad is None else (as_numpy(x.grad) if lib is minitorch else x.grad.numpy())
    return (as_numpy(y.detach()) if lib is minitorch else y.detach().numpy()), grads, xg


def same_as_plain_run(model, mode):
    want = run(minitorch, model, "plain")
    model.zero_grad()
    got = run(minitorch, model, mode)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant", "seq"])
def test_checkpoint_matches_the_plain_run(mode):
    same_as_plain_run(mlp(minitorch), mode)


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant"])
def test_dropout_masks_are_replayed(mode):
    model = mlp(minitorch, p=0.5)
    model.train()
    same_as_plain_run(model, mode)


def test_without_preserve_rng_state_masks_differ():
    model = mlp(minitorch, p=0.5)
    model.train()
    want = run(minitorch, model, "plain")
    model.zero_grad()
    minitorch.manual_seed(7)
    x = minitorch.tensor(X, dtype=minitorch.float32).requires_grad_()
    y = minitorch.utils.checkpoint.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)
    (y * y).sum().backward()
    assert not all(np.allclose(as_numpy(p.grad), w) for p, w in zip(model.parameters(), want[1]))


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant", "seq"])
def test_beside_torch(mode):
    torch = pytest.importorskip("torch")
    tm = mlp(torch)
    mm = mlp(minitorch)
    copy_weights(tm, mm)
    want, got = run(torch, tm, mode), run(minitorch, mm, mode)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-6)


def test_non_reentrant_reaches_parameters_when_the_input_needs_no_grad():
    model = mlp(minitorch)
    want = run(minitorch, model, "plain", x_grad=False)
    model.zero_grad()
    got = run(minitorch, model, "non_reentrant", x_grad=False)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert got[2] is None


def test_kwargs_nested_inputs_and_tuple_outputs():
    a = minitorch.tensor([1.0, 2.0], requires_grad=True)
    b = minitorch.tensor([3.0, -1.0], requires_grad=True)

    def f(pair, *, scale):
        x, y = pair["x"], pair["y"]
        return x * y * scale, (x + y).exp(), 5

    out = minitorch.utils.checkpoint.checkpoint(f, {"x": a, "y": b}, scale=2.0, use_reentrant=False)
    assert out[2] == 5
    (out[0].sum() + out[1].sum()).backward()
    np.testing.assert_allclose(as_numpy(a.grad), as_numpy(b.detach() * 2 + (a + b).detach().exp()), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(b.grad), as_numpy(a.detach() * 2 + (a + b).detach().exp()), rtol=1e-6)


def test_warnings_and_errors():
    x = minitorch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        minitorch.utils.checkpoint.checkpoint(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        minitorch.utils.checkpoint.checkpoint(lambda t, k: t * k, x, k=2, use_reentrant=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        minitorch.utils.checkpoint.checkpoint(lambda t: t * 2, x, use_reentrant=False)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        minitorch.utils.checkpoint.checkpoint(lambda t: t * 2, minitorch.ones(2), use_reentrant=True)


def test_non_reentrant_with_nothing_to_differentiate_inside():
    # a frozen block before a trainable head: backward passes through, giving the block nothing
    frozen = minitorch.nn.Linear(4, 4).requires_grad_(False)
    head = minitorch.nn.Linear(4, 1)
    x = minitorch.tensor(X, dtype=minitorch.float32)
    y = minitorch.utils.checkpoint.checkpoint(frozen, x, use_reentrant=False)
    head(y).sum().backward()
    assert head.weight.grad is not None and frozen.weight.grad is None
