"""The losses, distances and normalize against PyTorch (and finite differences):
values and gradients of every input for each reduction, on strided inputs, with broadcasting
where PyTorch allows it; node names; the legacy size_average/reduce arguments; bad calls raise
PyTorch's class and message; the loss and distance modules."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import check_grad, same_as_torch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20)
REDUCTIONS = ["mean", "sum", "none"]


def F(lib):
    return lib.nn.functional


def rand(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(np.float64)


def signs(*shape):
    return np.where(RNG.standard_normal(shape) > 0, 1.0, -1.0)


X, Y = rand(4, 5), rand(4, 5)
POS = rand(4, 5, low=0.1, high=3.0)
T4, T5, T45 = signs(4), signs(5), signs(4, 5)

# name: (call(L, *tensors, reduction), inputs); the gradients of every float input are compared
LOSSES = {
    "smooth_l1": (lambda L, x, y, r: F(L).smooth_l1_loss(x, y, reduction=r, beta=0.8), [X, Y]),
    "smooth_l1_beta0": (lambda L, x, y, r: F(L).smooth_l1_loss(x, y, reduction=r, beta=0.0), [X, Y]),
    "smooth_l1_broadcast": (lambda L, x, y, r: F(L).smooth_l1_loss(x, y[0], reduction=r), [X, Y]),
    "huber": (lambda L, x, y, r: F(L).huber_loss(x, y, reduction=r, delta=0.6), [X, Y]),
    "huber_weight": (lambda L, x, y, w, r: F(L).huber_loss(x, y, reduction=r, weight=w), [X, Y, POS]),
    "soft_margin": (lambda L, x, y, r: F(L).soft_margin_loss(x, y, reduction=r), [X, signs(4, 5)]),
    "kl_div": (lambda L, x, y, r: F(L).kl_div(x.log_softmax(1), y.softmax(1), reduction=r), [X, Y]),
    "kl_div_zero_target": (lambda L, x, y, r: F(L).kl_div(x, L.relu(y), reduction=r), [X, Y]),
    "kl_div_log_target": (lambda L, x, y, r: F(L).kl_div(x, y.log_softmax(1), reduction=r, log_target=True), [X, Y]),
    "margin_ranking": (lambda L, a, b, t, r: F(L).margin_ranking_loss(a, b, t, margin=0.3, reduction=r),
                       [rand(6), rand(6), signs(6)]),
    "hinge_embedding": (lambda L, x, t, r: F(L).hinge_embedding_loss(x, t, margin=0.7, reduction=r), [X, signs(4, 5)]),
    "cosine_embedding": (lambda L, a, b, t, r: F(L).cosine_embedding_loss(a, b, t, margin=0.2, reduction=r), [X, Y, T4]),
    "cosine_embedding_1d": (lambda L, a, b, t, r: F(L).cosine_embedding_loss(a[0], b[0], t[0], reduction=r), [X, Y, T4]),
    "poisson_log": (lambda L, x, y, r: F(L).poisson_nll_loss(x, y, reduction=r), [X, POS * 3]),
    "poisson_full": (lambda L, x, y, r: F(L).poisson_nll_loss(x, y, log_input=False, full=True, reduction=r),
                     [POS, np.round(POS * 3)]),
    "gaussian_nll": (lambda L, x, y, v, r: F(L).gaussian_nll_loss(x, y, v, reduction=r), [X, Y, POS]),
    "gaussian_nll_full": (lambda L, x, y, v, r: F(L).gaussian_nll_loss(x, y, v[:, :1], full=True, reduction=r),
                          [X, Y, POS]),
    "gaussian_nll_float_var": (lambda L, x, y, r: F(L).gaussian_nll_loss(x, y, 0.5, reduction=r), [X, Y]),
    "triplet": (lambda L, a, p, n, r: F(L).triplet_margin_loss(a, p, n, reduction=r), [X, Y, rand(4, 5)]),
    "triplet_swap_p1": (lambda L, a, p, n, r: F(L).triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True, reduction=r),
                        [X, Y, rand(4, 5)]),
    "multilabel_soft_margin": (lambda L, x, y, w, r: F(L).multilabel_soft_margin_loss(x, (y > 0).double(), w[0], reduction=r),
                               [X, Y, POS]),
    "bce_weight": (lambda L, x, y, w, r: F(L).binary_cross_entropy(x.sigmoid(), y.sigmoid(), weight=w, reduction=r),
                   [X, Y, POS]),
    "bce_weight_row": (lambda L, x, y, w, r: F(L).binary_cross_entropy(x.sigmoid(), y.sigmoid(), weight=w[0], reduction=r),
                       [X, Y, POS]),
    "bce_weight_col": (lambda L, x, y, w, r: F(L).binary_cross_entropy(x.sigmoid(), y.sigmoid(), weight=w[:, :1], reduction=r),
                       [X, Y, POS]),
}
NODES = {"smooth_l1": "SmoothL1LossBackward0", "huber": "HuberLossBackward0", "soft_margin": "SoftMarginLossBackward0"}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("name", LOSSES)
def test_losses_match_torch(name, reduction, layout):
    fn, inputs = LOSSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # broadcast targets, kl_div's mean
        same_as_torch(lambda L, *t: fn(L, *t, reduction), inputs, layout=layout, atol=1e-10, rtol=1e-8)
    if name in NODES and reduction != "none":
        x = minitorch.tensor(inputs[0], requires_grad=True)
        assert fn(minitorch, x, *[minitorch.tensor(a) for a in inputs[1:]], reduction).grad_fn.name() == NODES[name]


@pytest.mark.parametrize("name", ["smooth_l1", "huber", "kl_div", "triplet", "poisson_log", "gaussian_nll"])
def test_loss_gradients_match_finite_differences(name):
    fn, inputs = LOSSES[name]
    check_grad(lambda L, *t: fn(L, *t, "sum"), inputs, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["soft_margin", "cosine_embedding", "margin_ranking", "hinge_embedding"])
def test_loss_gradients_with_sign_targets_match_finite_differences(name):
    """Targets of +-1 get no gradient: only the other inputs vary."""
    fn, inputs = LOSSES[name]
    target = minitorch.tensor(inputs[-1])
    check_grad(lambda L, *t: fn(L, *t, target if L is minitorch else torch.tensor(inputs[-1]), "mean"), inputs[:-1],
               atol=1e-6, rtol=1e-5)


def test_kl_div_batchmean_and_warnings():
    x, y = minitorch.tensor(X).log_softmax(1), minitorch.tensor(Y).softmax(1)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F(minitorch).kl_div(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = F(minitorch).kl_div(x, y, reduction="batchmean")
    assert got.item() == pytest.approx(F(minitorch).kl_div(x, y, reduction="sum").item() / 4, rel=1e-12)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        legacy = F(minitorch).kl_div(x, y, size_average=False)
    assert legacy.item() == pytest.approx(got.item() * 4, rel=1e-12)


@pytest.mark.parametrize("legacy", [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}])
def test_legacy_reduction_arguments(legacy):
    for fn, inputs in (
        (lambda L, x, y: F(L).smooth_l1_loss(x, y, **legacy), [X, Y]),
        (lambda L, x, y: F(L).soft_margin_loss(x, y, **legacy), [X, signs(4, 5)]),
        (lambda L, a, b, t: F(L).margin_ranking_loss(a, b, t, **legacy), [rand(6), rand(6), signs(6)]),
        (lambda L, x, y: F(L).poisson_nll_loss(x, y, **legacy), [X, POS]),
        (lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n, **legacy), [X, Y, POS]),
        (lambda L, x, y: F(L).multilabel_soft_margin_loss(x, (y > 0).double(), **legacy), [X, Y]),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same_as_torch(fn, inputs, atol=1e-10, rtol=1e-8)


def errors_alike(fn, *arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as e:
            fn(minitorch, *[minitorch.tensor(a) for a in arrays])
        with pytest.raises(Exception) as te:
            fn(torch, *[torch.tensor(a) for a in arrays])
    assert type(e.value) is type(te.value), (e.value, te.value)
    assert str(e.value).replace("minitorch.Size", "torch.Size") == str(te.value)


def test_loss_errors_like_torch():
    errors_alike(lambda L, x, y: F(L).smooth_l1_loss(x, y, beta=-1.0), X, Y)
    errors_alike(lambda L, x, y: F(L).huber_loss(x, y, delta=0.0), X, Y)
    errors_alike(lambda L, x, y: F(L).huber_loss(x, y, weight=L.ones(5)), X, Y)
    errors_alike(lambda L, x, y: F(L).kl_div(x, y, reduction="bad"), X, Y)
    errors_alike(lambda L, a, b, t: F(L).margin_ranking_loss(a, b[0], t), X, Y, X)
    errors_alike(lambda L, a, b, t: F(L).cosine_embedding_loss(a, b, t), X, Y, X)
    errors_alike(lambda L, a, b, t: F(L).cosine_embedding_loss(a, b, t[0]), X, Y, T4)
    errors_alike(lambda L, a, b, t: F(L).cosine_embedding_loss(a[0], b[0], t), X, Y, T4)
    errors_alike(lambda L, a, p, n: F(L).triplet_margin_loss(a, p[0], n), X, Y, X)
    errors_alike(lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n, margin=0.0), X, Y, X)
    errors_alike(lambda L, x, y: F(L).poisson_nll_loss(x, y, reduction="bad"), X, Y)
    errors_alike(lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, -v), X, Y, POS)
    errors_alike(lambda L, x, y: F(L).gaussian_nll_loss(x, y, -1.0), X, Y)
    errors_alike(lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, v[:2]), X, Y, POS)
    errors_alike(lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, v, reduction="bad"), X, Y, POS)
    errors_alike(lambda L, x, y: F(L).multilabel_soft_margin_loss(x, y, reduction="bad"), X, Y)
    errors_alike(lambda L, x, y: F(L).soft_margin_loss(x, y.requires_grad_()), X, Y)  # target: not differentiable


def test_losses_called_as_torch_functions():
    """The torch.* spellings PyTorch has (with the Reduction enum)."""
    x, y = minitorch.tensor(X), minitorch.tensor(Y)
    tx, ty = torch.tensor(X), torch.tensor(Y)
    t4 = minitorch.tensor(T4)
    pairs = [
        (minitorch.kl_div(x, y.softmax(1), 2), torch.kl_div(tx, ty.softmax(1), 2)),
        (minitorch.margin_ranking_loss(x[0], y[0], t4.repeat(2)[:5], 0.1, 1),
         torch.margin_ranking_loss(tx[0], ty[0], torch.tensor(T4).repeat(2)[:5], 0.1, 1)),
        (minitorch.hinge_embedding_loss(x, y.sign(), 1.0, 0), torch.hinge_embedding_loss(tx, ty.sign(), 1.0, 0)),
        (minitorch.cosine_embedding_loss(x, y, t4, 0.0, 1), torch.cosine_embedding_loss(tx, ty, torch.tensor(T4), 0.0, 1)),
        (minitorch.poisson_nll_loss(x, y.abs(), True, True, 1e-8, 2), torch.poisson_nll_loss(tx, ty.abs(), True, True, 1e-8, 2)),
        (minitorch.triplet_margin_loss(x, y, y * 2, 1.0, 2, 1e-6, False, 1),
         torch.triplet_margin_loss(tx, ty, ty * 2, 1.0, 2, 1e-6, False, 1)),
        (minitorch._C.smooth_l1_loss(x, y, 1, 0.5), torch._C._nn.smooth_l1_loss(tx, ty, 1, 0.5)),
        (minitorch._C.huber_loss(x, y, 2, 0.5), torch._C._nn.huber_loss(tx, ty, 2, 0.5)),
        (minitorch._C.soft_margin_loss(x, y.sign(), 0), torch._C._nn.soft_margin_loss(tx, ty.sign(), 0)),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)


# ---- distances and normalize ----

DISTANCES = {
    "cosine_similarity": lambda L, a, b: F(L).cosine_similarity(a, b),
    "cosine_similarity_dim0_broadcast": lambda L, a, b: F(L).cosine_similarity(a, b[:1], dim=0, eps=1e-6),
    "cosine_similarity_1d": lambda L, a, b: L.cosine_similarity(a[0], b[0], dim=0),
    "cosine_similarity_zero_vector": lambda L, a, b: F(L).cosine_similarity(a * L.tensor([[0.0], [1.0], [1.0], [1.0]]), b),
    "pairwise_distance": lambda L, a, b: F(L).pairwise_distance(a, b),
    "pairwise_distance_p1_keepdim": lambda L, a, b: F(L).pairwise_distance(a, b, p=1.0, keepdim=True),
    "pairwise_distance_inf_broadcast": lambda L, a, b: L.pairwise_distance(a, b[0], float("inf")),
    "pairwise_distance_1d": lambda L, a, b: F(L).pairwise_distance(a[0], b[0], p=3.0),
    "normalize": lambda L, a, b: F(L).normalize(a),
    "normalize_p1_dim0": lambda L, a, b: F(L).normalize(a, p=1.0, dim=0),
    "normalize_zero_rows": lambda L, a, b: F(L).normalize(a * L.tensor([[0.0], [1.0], [1.0], [1.0]]), dim=-1),
    "normalize_3d": lambda L, a, b: F(L).normalize(a.reshape(2, 2, 5), p=3.0, dim=1),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("name", DISTANCES)
def test_distances_match_torch(name, layout):
    same_as_torch(DISTANCES[name], [X, Y], layout=layout, atol=1e-10, rtol=1e-8)
    same_as_torch(DISTANCES[name], [X.astype(np.float32), Y.astype(np.float32)], layout=layout, atol=1e-5, rtol=1e-5)


def test_distance_gradients_and_errors():
    check_grad(DISTANCES["cosine_similarity"], [X, Y])
    check_grad(DISTANCES["pairwise_distance"], [X, Y])
    check_grad(lambda L, a: F(L).normalize(a), [X])
    assert F(minitorch).cosine_similarity(minitorch.tensor(X, requires_grad=True), minitorch.tensor(Y)).grad_fn.name() == "SumBackward1"
    errors_alike(lambda L, a, b: F(L).cosine_similarity(a.long(), b.long()), X, Y)
    errors_alike(lambda L, a, b: F(L).cosine_similarity(a, b[:, :2]), X, Y)
    same_as_torch(lambda L, a, b: F(L).cosine_similarity(a, b.float()), [X, Y], atol=1e-6)  # promoted to double
    out = minitorch.zeros(4, 5, dtype=minitorch.float64)
    assert F(minitorch).normalize(minitorch.tensor(X), out=out) is out
    np.testing.assert_allclose(out.numpy(), F(torch).normalize(torch.tensor(X)).numpy(), rtol=1e-12)


MODULES = [
    lambda nn: nn.SmoothL1Loss(), lambda nn: nn.SmoothL1Loss(reduction="sum", beta=0.5), lambda nn: nn.HuberLoss(delta=2),
    lambda nn: nn.SoftMarginLoss(), lambda nn: nn.KLDivLoss(reduction="batchmean"), lambda nn: nn.KLDivLoss(log_target=True),
    lambda nn: nn.MarginRankingLoss(margin=0.5), lambda nn: nn.CosineEmbeddingLoss(), lambda nn: nn.HingeEmbeddingLoss(2.0),
    lambda nn: nn.PoissonNLLLoss(log_input=False, full=True), lambda nn: nn.GaussianNLLLoss(full=True),
    lambda nn: nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True), lambda nn: nn.MultiLabelSoftMarginLoss(),
    lambda nn: nn.MultiLabelSoftMarginLoss(weight=nn.Parameter(nn.Parameter.__mro__[1](np.arange(1.0, 6.0)))),
    lambda nn: nn.CosineSimilarity(dim=0), lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True),
]
CALLS = {
    "MarginRankingLoss": lambda m, L: m(L.tensor(X[0]), L.tensor(Y[0]), L.tensor(T5)),
    "CosineEmbeddingLoss": lambda m, L: m(L.tensor(X), L.tensor(Y), L.tensor(T4)),
    "TripletMarginLoss": lambda m, L: m(L.tensor(X), L.tensor(Y), L.tensor(POS)),
    "GaussianNLLLoss": lambda m, L: m(L.tensor(X), L.tensor(Y), L.tensor(POS)),
    "PoissonNLLLoss": lambda m, L: m(L.tensor(POS), L.tensor(np.round(POS * 2))),
    "KLDivLoss": lambda m, L: m(L.tensor(X).log_softmax(1), L.tensor(Y).log_softmax(1)),
    "MultiLabelSoftMarginLoss": lambda m, L: m(L.tensor(X), L.tensor((Y > 0) * 1.0)),
    "SoftMarginLoss": lambda m, L: m(L.tensor(X), L.tensor(T45)),
    "HingeEmbeddingLoss": lambda m, L: m(L.tensor(X), L.tensor(T45)),
}


@pytest.mark.parametrize("make", MODULES)
def test_loss_and_distance_modules_match_torch(make):
    m, t = make(minitorch.nn), make(torch.nn)
    assert repr(m) == repr(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    call = CALLS.get(type(m).__name__, lambda mod, L: mod(L.tensor(X), L.tensor(Y)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = call(m, minitorch), call(t, torch)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)


def test_loss_module_arguments_like_torch():
    errors_alike(lambda L: L.nn.TripletMarginLoss(margin=-1))
    errors_alike(lambda L: L.nn.HuberLoss(delta="x"))
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert minitorch.nn.SmoothL1Loss(size_average=False).reduction == "sum"
