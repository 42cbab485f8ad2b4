"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss (PyTorch 2.13's): the cross entropy of
linear logits, 1-D and batched input, K-dimensional weights, bias, class weights, ignore_index
(None meaning -100), label smoothing, probabilities as target, every reduction, with and without
LinearCrossEntropyOptions; against NumPy in float64 and PyTorch, values and gradients."""
import numpy as np
import pytest

import minitorch
from helpers import check, same_as_torch, torch

R = np.random.default_rng(11)
N, IN, C = 4, 5, 6
X = R.standard_normal((N, IN))
W = R.standard_normal((C, IN))
B = R.standard_normal((C,))
WK = R.standard_normal((C, 3, IN))
BK = R.standard_normal((C, 3))
T = np.array([0, 5, 2, 2])
TK = R.integers(0, C, (N, 3))
CW = R.uniform(0.5, 2.0, (C,))


def _options(lib, chunked):
    return lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if chunked else None


def _ref(x, w, t, b=None, ignore=-100, reduction="mean"):
    """NumPy's cross entropy of x @ w.T + b with class indices t (1-D t)."""
    z = x @ w.T + (0 if b is None else b)
    logp = z - np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)) - z.max(-1, keepdims=True)
    keep = t != ignore
    losses = -np.where(keep, logp[np.arange(len(t)), np.where(keep, t, 0)], 0.0)
    return {"none": losses, "sum": losses.sum(), "mean": losses.sum() / keep.sum()}[reduction]


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_values_against_numpy(reduction, chunked):
    check(lambda lib, x, w, b: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(T), linear_bias=b, reduction=reduction, options=_options(lib, chunked)),
        lambda x, w, b: _ref(x, w, T, b, reduction=reduction), [X, W, B], layout="transposed", atol=1e-10)
    t = np.array([0, 5, -100, 1])  # the default ignore_index is cross_entropy's -100
    check(lambda lib, x, w: lib.nn.functional.linear_cross_entropy(x, w, lib.tensor(t), reduction=reduction),
          lambda x, w: _ref(x, w, t, reduction=reduction), [X, W], atol=1e-10)


CASES = {
    "plain": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(x, w, lib.tensor(T)),
    "bias_weight_smooth": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(T), linear_bias=b, weight=cw, label_smoothing=0.2),
    "ignore_index": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(T), ignore_index=2, reduction="sum"),
    "unbatched": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(x[1], w, lib.tensor(3)),
    "k_dims": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x, wk, lib.tensor(TK), linear_bias=bk, reduction="none"),
    "k_dims_probabilities": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x, wk, (x[:, :1] * wk[:, 0, 0]).unsqueeze(-1).expand(N, C, 3).softmax(1).detach(), weight=cw),
    "chunked_options": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(T), linear_bias=b, options=_options(lib, True)),
    "k_dims_unbatched": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(
        x[0], wk, lib.tensor(TK[0])),
    "bad_target": lambda lib, x, w, b, wk, bk, cw: lib.nn.functional.linear_cross_entropy(x, w, lib.tensor([0, 9])),
}


@pytest.mark.parametrize("fn", list(CASES.values()), ids=list(CASES))
def test_against_torch_values_and_gradients(fn):
    same_as_torch(fn, [X, W, B, WK, BK, CW], layout="transposed", atol=1e-9, rtol=1e-9)


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
def test_k_dims_unbatched_message():
    msgs = []
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.linear_cross_entropy(lib.ones(IN), lib.ones(C, 3, IN), lib.tensor(1))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("bias,out_features", [(False, ()), (True, (4, 3))])
def test_module_as_torch(bias, out_features):
    mod = minitorch.nn.LinearCrossEntropyLoss(IN, C, out_features=out_features, bias=bias,
                                              weight=minitorch.tensor(CW, dtype=minitorch.float32), label_smoothing=0.1)
    assert {k: tuple(v.shape) for k, v in mod.state_dict().items()} == {
        "weight": (C,), "linear.weight": (C * int(np.prod(out_features)), IN),
        **({"linear.bias": (C * int(np.prod(out_features)),)} if bias else {})}
    target = R.integers(0, C, (N, *out_features))
    x = minitorch.tensor(X, dtype=minitorch.float32, requires_grad=True)
    loss = mod(x, minitorch.tensor(target))
    loss.backward()
    assert mod.linear.weight.grad is not None and x.grad is not None
    if torch is None:
        return
    tmod = torch.nn.LinearCrossEntropyLoss(IN, C, out_features=out_features, bias=bias,
                                           weight=torch.tensor(CW, dtype=torch.float32), label_smoothing=0.1)
    tmod.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in mod.state_dict().items()})
    assert repr(mod) == repr(tmod)
    tx = torch.tensor(X, dtype=torch.float32, requires_grad=True)
    tloss = tmod(tx, torch.tensor(target))
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(mod.linear.weight.grad.numpy(), tmod.linear.weight.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_options_fields():
    o = minitorch.nn.LinearCrossEntropyOptions(allow_retain_graph=True, acc_policy="compact")
    assert (o.allow_retain_graph, o.batch_chunk_size, o.chunking_method, o.acc_policy, o.acc_dtype) == (
        True, None, "auto", "compact", None)
    if torch is not None:
        assert repr(minitorch.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
