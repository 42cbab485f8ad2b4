"""The layers over nn.functional: Softmax, LogSoftmax, Dropout, LayerNorm, BatchNorm1d/2d,
Embedding and the loss modules, compared with PyTorch's: reprs, state_dict keys, default
initialisation, train/eval behaviour, running statistics, and bad arguments."""
import numpy as np
import pytest

import minitorch as mt
from minitorch import nn

# (constructor, args, kwargs): built the same way in both libraries
LAYERS = [
    ("Softmax", (1,), {}),
    ("LogSoftmax", (), {}),
    ("Dropout", (), {}),
    ("Dropout", (0.2, True), {}),
    ("LayerNorm", (4,), {}),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3, "elementwise_affine": False, "bias": False}),
    ("LayerNorm", ([5],), {"bias": False}),
    ("BatchNorm1d", (4,), {}),
    ("BatchNorm2d", (3,), {"momentum": None, "affine": False, "track_running_stats": False}),
    ("BatchNorm2d", (2,), {"eps": 0.1, "bias": False}),
    ("Embedding", (10, 3), {}),
    ("Embedding", (10, 3), {"padding_idx": 0, "max_norm": 2.0, "norm_type": 1.0, "sparse": True}),
    ("MSELoss", (), {}),
    ("L1Loss", (), {"reduction": "sum"}),
    ("NLLLoss", (), {"ignore_index": 2}),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}),
    ("BCELoss", (), {}),
    ("BCEWithLogitsLoss", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS)
def test_repr_and_state_dict_keys_match_pytorch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for k, v in theirs.state_dict().items():
        assert tuple(ours.state_dict()[k].shape) == tuple(v.shape)
        assert str(ours.state_dict()[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1]


def test_weighted_losses_keep_their_weights_as_buffers():
    w = mt.ones(3)
    assert list(nn.CrossEntropyLoss(weight=w).state_dict()) == ["weight"]
    assert list(nn.BCEWithLogitsLoss(pos_weight=w).state_dict()) == ["pos_weight"]
    assert list(nn.NLLLoss().state_dict()) == [] and nn.NLLLoss().weight is None


def test_default_initialisation():
    ln, bn = nn.LayerNorm((2, 3)), nn.BatchNorm1d(4)
    assert (ln.weight.detach().numpy() == 1).all() and (ln.bias.detach().numpy() == 0).all()
    assert (bn.weight.detach().numpy() == 1).all() and (bn.bias.detach().numpy() == 0).all()
    assert (bn.running_mean.numpy() == 0).all() and (bn.running_var.numpy() == 1).all()
    assert bn.num_batches_tracked.item() == 0 and bn.num_batches_tracked.dtype == mt.int64
    mt.manual_seed(0)
    e = nn.Embedding(400, 50, padding_idx=-1)
    w = e.weight.detach().numpy()
    assert e.padding_idx == 399 and (w[399] == 0).all()
    assert abs(w[:399].mean()) < 0.02 and abs(w[:399].std() - 1) < 0.02  # N(0, 1)
    assert e.weight.requires_grad
    pre = nn.Embedding.from_pretrained(mt.ones(3, 2))
    assert not pre.weight.requires_grad and (pre.weight.detach().numpy() == 1).all()


def test_layers_compute_as_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3, 5)).astype(np.float32)
    for name, args, kwargs, inp in [
        ("Softmax", (1,), {}, x),
        ("LogSoftmax", (-1,), {}, x),
        ("LayerNorm", ((3, 5),), {}, x),
        ("BatchNorm1d", (3,), {}, x),
        ("BatchNorm2d", (4,), {}, x.reshape(1, 4, 3, 5)),
    ]:
        ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
        got, want = ours(mt.tensor(inp)), theirs(torch.tensor(inp))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_running_stats_train_and_eval_as_pytorch(momentum):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    ours, theirs = nn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(3, momentum=momentum)
    for step in range(3):
        x = (rng.normal(size=(2, 3, 2, 2)) * (step + 1) + step).astype(np.float32)
        np.testing.assert_allclose(ours(mt.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].detach().numpy(), value.numpy(), rtol=1e-5, err_msg=key)
    assert ours.num_batches_tracked.item() == 3
    ours.eval(), theirs.eval()
    x = rng.normal(size=(2, 3, 2, 2)).astype(np.float32)
    before = ours.running_mean.numpy().copy()
    np.testing.assert_allclose(ours(mt.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    assert (ours.running_mean.numpy() == before).all() and ours.num_batches_tracked.item() == 3


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    bn = nn.BatchNorm1d(2, track_running_stats=False).eval()
    x = mt.tensor([[1.0, 10.0], [3.0, 30.0]])
    np.testing.assert_allclose(bn(x).detach().numpy(), [[-1, -1], [1, 1]], atol=1e-4)
    assert bn.running_mean is None and bn.num_batches_tracked is None


def test_dropout_module_train_and_eval():
    mt.manual_seed(0)
    d = nn.Dropout(0.5)
    x = mt.ones(100, 100)
    y = d(x).numpy()
    assert abs((y == 0).mean() - 0.5) < 0.03 and set(np.unique(y)) == {0.0, 2.0}
    d.eval()
    assert d(x) is x


def test_loss_modules_call_the_functionals():
    F = nn.functional
    x, t = mt.randn(4, 3), mt.tensor([0, 2, 1, 2])
    w = mt.tensor([1.0, 2.0, 0.5])
    assert nn.CrossEntropyLoss(w, label_smoothing=0.2)(x, t).item() == F.cross_entropy(x, t, w, label_smoothing=0.2).item()
    assert nn.NLLLoss(ignore_index=2, reduction="sum")(x, t).item() == F.nll_loss(x, t, ignore_index=2, reduction="sum").item()
    assert nn.MSELoss(reduction="none")(x, x * 2).shape == (4, 3)
    assert nn.L1Loss()(x, x).item() == 0.0
    p = x.sigmoid()
    np.testing.assert_allclose(nn.BCELoss()(p, p * 0).item(), nn.BCEWithLogitsLoss()(x, x * 0).item(), rtol=1e-5)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"


def test_bad_layer_arguments():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(2)(mt.zeros(2, 2, 2, 2))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(2)(mt.zeros(2, 2))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        nn.MSELoss(reduction="foo")(mt.zeros(2), mt.zeros(2))
