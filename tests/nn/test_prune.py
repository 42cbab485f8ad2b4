"""nn.utils.prune against torch.nn.utils.prune: the same weights give the same masks for the
deterministic methods (l1, ln, custom, global l1, iterative), the same counts for the random
ones, the same parameters, buffers, hooks and state_dict keys, the same errors."""
import numpy as np
import pytest

import minitorch


def _torch():
    return pytest.importorskip("torch")


def _prune(lib):
    return __import__(lib.__name__ + ".nn.utils.prune", fromlist=["x"])


def _model(lib, seed=0):
    """A conv and a linear layer with distinct weights (no ties in magnitudes or norms)."""
    rng = np.random.default_rng(seed)
    conv, lin = lib.nn.Conv2d(2, 4, 3), lib.nn.Linear(5, 3)
    with lib.no_grad():
        for j, p in enumerate(list(conv.parameters()) + list(lin.parameters())):
            values = (rng.permutation(p.numel()) - p.numel() / 2 + 0.25) * (1 + 0.013 * j)
            p.copy_(lib.tensor(values.reshape(p.shape).astype("float32")))
    return conv, lin


def _state(mod):
    return {k: v.detach().numpy().copy() for k, v in mod.state_dict().items()}


def _same_states(a, b):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _both(fn):
    torch = _torch()
    return [fn(lib, _prune(lib), *_model(lib)) for lib in (minitorch, torch)]


STEPS = {
    "l1_fraction": lambda lib, P, conv, lin: P.l1_unstructured(conv, "weight", amount=0.3),
    "l1_count": lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount=4),
    "l1_bias_zero": lambda lib, P, conv, lin: P.l1_unstructured(lin, "bias", amount=0.0),
    "ln2_dim0": lambda lib, P, conv, lin: P.ln_structured(conv, "weight", amount=0.5, n=2, dim=0),
    "ln1_dim1": lambda lib, P, conv, lin: P.ln_structured(lin, "weight", amount=2, n=1, dim=1),
    "lninf_neg_dim": lambda lib, P, conv, lin: P.ln_structured(conv, "weight", amount=1, n=float("inf"), dim=-1),
    "identity": lambda lib, P, conv, lin: P.identity(lin, "weight"),
    "custom": lambda lib, P, conv, lin: P.custom_from_mask(lin, "bias", lib.tensor([1.0, 0.0, 1.0])),
    "iterative": lambda lib, P, conv, lin: (P.l1_unstructured(conv, "weight", amount=0.2),
                                           P.ln_structured(conv, "weight", amount=1, n=2, dim=0),
                                           P.l1_unstructured(conv, "weight", amount=5)),
    "global": lambda lib, P, conv, lin: P.global_unstructured([(conv, "weight"), (lin, "weight"), (lin, "bias")],
                                                             pruning_method=P.L1Unstructured, amount=20),
    "importance": lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount=5,
                                                              importance_scores=-lin.weight.detach()),
    "remove": lambda lib, P, conv, lin: (P.l1_unstructured(lin, "weight", amount=0.5), P.remove(lin, "weight"),
                                        P.ln_structured(conv, "weight", 1, 1, 0), P.remove(conv, "weight")),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_masks_and_state_as_torch(step):
    def run(lib, P, conv, lin):
        STEPS[step](lib, P, conv, lin)
        x = lib.tensor(np.linspace(-1, 1, 2 * 2 * 5 * 5, dtype="float32").reshape(2, 2, 5, 5))
        out = conv(x).sum() + lin(lib.ones(2, 5)).sum()
        out.backward()
        grads = {n: p.grad.numpy().copy() for n, p in list(conv.named_parameters()) + list(lin.named_parameters())
                 if p.grad is not None}
        kinds = [type(h).__name__ for m in (conv, lin) for h in m._forward_pre_hooks.values()]
        return _state(conv), _state(lin), out.item(), grads, kinds, P.is_pruned(conv), P.is_pruned(lin)

    mine, theirs = _both(run)
    _same_states(mine[0], theirs[0])
    _same_states(mine[1], theirs[1])
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-5)
    assert list(mine[3]) == list(theirs[3])
    for k in mine[3]:
        np.testing.assert_allclose(mine[3][k], theirs[3][k], rtol=1e-5, err_msg=k)
    assert mine[4:] == theirs[4:]


def test_pruned_attribute_follows_orig():
    conv, lin = _model(minitorch)
    P = _prune(minitorch)
    P.l1_unstructured(lin, "weight", amount=0.5)
    assert "weight" not in dict(lin.named_parameters()) and "weight_orig" in dict(lin.named_parameters())
    assert "weight_mask" in dict(lin.named_buffers())
    with minitorch.no_grad():
        lin.weight_orig.mul_(2)
    lin(minitorch.ones(1, 5))  # the pre-hook recomputes weight
    np.testing.assert_array_equal(lin.weight.detach().numpy(), (lin.weight_orig * lin.weight_mask).detach().numpy())
    assert int((lin.weight == 0).sum()) == 8


@pytest.mark.parametrize("fn,amount,kw", [("random_unstructured", 0.4, {}), ("random_unstructured", 7, {}),
                                         ("random_structured", 2, {"dim": 0}),
                                         ("random_structured", 0.5, {"dim": 1})])
def test_random_counts_as_torch(fn, amount, kw):
    def run(lib, P, conv, lin):
        getattr(P, fn)(conv, "weight", amount, **kw)
        mask = conv.weight_mask.numpy()
        if fn == "random_structured":
            dims = tuple(d for d in range(4) if d != kw["dim"])
            return int((mask.sum(dims) == 0).sum()), mask.sum()
        return int((mask == 0).sum()), mask.dtype

    mine, theirs = _both(run)
    assert mine == theirs


@pytest.mark.parametrize("fn,amount,kw", [("random_unstructured", 0.3, {}), ("random_unstructured", 5, {}),
                                         ("random_structured", 2, {"dim": 0})])
def test_random_masks_follow_the_seed_as_torch(fn, amount, kw):
    """From one seed the random methods draw PyTorch's stream and prune the entries PyTorch prunes
    (RandomUnstructured: those of largest draw), twice in a row (the second on what is left)."""
    def run(lib, P, conv, lin):
        lib.manual_seed(3)
        getattr(P, fn)(conv, "weight", amount, **kw)
        first = conv.weight_mask.numpy().copy()
        getattr(P, fn)(conv, "weight", amount, **kw)
        return first, conv.weight_mask.numpy()

    for mine, theirs in zip(*_both(run)):
        np.testing.assert_array_equal(mine, theirs)


def test_iterative_random_never_reprunes():
    lin = minitorch.nn.Linear(10, 10)
    P = _prune(minitorch)
    for _ in range(4):
        P.random_unstructured(lin, "weight", amount=10)
    container = next(iter(lin._forward_pre_hooks.values()))
    assert isinstance(container, P.PruningContainer) and len(container) == 4
    assert int((lin.weight_mask == 0).sum()) == 40


def test_prune_method_and_compute_mask():
    torch = _torch()
    w = np.arange(12, dtype="float32").reshape(3, 4) - 5.5
    for lib in (minitorch, torch):
        P = _prune(lib)
        t = lib.tensor(w)
        m = P.L1Unstructured(amount=4)
        np.testing.assert_array_equal(m.prune(t).numpy(), np.where(np.abs(w) < 2, 0, w))
        scaled = lib.tensor(w * np.array([1.0, 0.5, 1.0, 2.0], dtype="float32"))
        mask = P.LnStructured(amount=1, n=1, dim=1).compute_mask(scaled, lib.ones_like(t)).numpy()
        np.testing.assert_array_equal(mask, np.tile([1.0, 0.0, 1.0, 1.0], (3, 1)))


ERRORS = [
    (lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount=-1), ValueError,
     "amount=-1 should either be a float in the range"),
    (lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount=1.5), ValueError, "amount=1.5 should"),
    (lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount="a"), TypeError, "Invalid type for amount"),
    (lambda lib, P, conv, lin: P.l1_unstructured(lin, "weight", amount=100), ValueError,
     "amount=100 should be smaller than the number of parameters to prune=15"),
    (lambda lib, P, conv, lin: P.ln_structured(lin, "bias", amount=1, n=2, dim=0), ValueError,
     "Structured pruning can only be applied to multidimensional tensors"),
    (lambda lib, P, conv, lin: P.ln_structured(lin, "weight", amount=1, n=2, dim=2), IndexError, "Invalid index 2"),
    (lambda lib, P, conv, lin: P.remove(lin, "weight"), ValueError,
     "Parameter 'weight' of module .* has to be pruned before pruning can be removed"),
    (lambda lib, P, conv, lin: P.global_unstructured([(lin, "weight")], P.RandomStructured, amount=1),
     TypeError, 'Only "unstructured" PRUNING_TYPE supported'),
    (lambda lib, P, conv, lin: P.global_unstructured(3, P.L1Unstructured, amount=1), TypeError,
     "parameters is not an Iterable"),
]


@pytest.mark.parametrize("call,exc,msg", ERRORS)
def test_errors_as_torch(call, exc, msg):
    def run(lib, P, conv, lin):
        with pytest.raises(exc, match=msg):
            call(lib, P, conv, lin)
        return list(lin.state_dict()), [type(p).__name__ for p in lin.parameters()]

    mine, theirs = _both(run)
    assert mine == theirs
