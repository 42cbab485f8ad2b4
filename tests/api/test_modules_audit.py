"""nn modules, audited against PyTorch: for each nn module of the audit's list (and their
neighbours), built with the same arguments in both libraries: print(module) the same (up to the
library's own name in a dtype or legacy type), the same state_dict keys and shapes, parameters and
buffers in the same order; PyTorch's state_dict loads (through NumPy); then, on the same input,
the same outputs (shape, dtype, values) and, after the backward of the same random weighting, the
same gradients of every parameter and input. Each case names the first difference it finds."""
import collections
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
CASES = []


def f(*shape):
    """A maker of a float32 standard normal array of the shape (drawn when the case runs)."""
    return lambda: R.standard_normal(shape).astype(np.float32)


def M(name, make, inp=None, train=False):  # noqa: N802 - the table's short name
    CASES.append(pytest.param(make, inp, train, id=name))


def _named_shapes(items):
    return [(k, tuple(t.shape)) for k, t in items]


def _leaf(lib, x):
    if not isinstance(x, np.ndarray):
        return tuple(_leaf(lib, y) for y in x) if isinstance(x, tuple) else x
    t = lib.tensor(x)
    return t.requires_grad_() if t.dtype.is_floating_point else t


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _grads_equal(what, mine, theirs):
    assert (mine is None) == (theirs is None), f"{what}: gradient {mine} vs PyTorch's {theirs}"
    if theirs is not None:
        np.testing.assert_allclose(as_numpy(mine), theirs.numpy(), atol=1e-3, rtol=1e-3, equal_nan=True,
                                   err_msg=what)


def module_same_as_torch(make, inp, train):
    tm, mm = make(torch), make(minitorch)
    assert repr(mm).replace("minitorch.", "torch.") == repr(tm)
    assert _named_shapes(mm.state_dict().items()) == _named_shapes(tm.state_dict().items())
    assert _named_shapes(mm.named_parameters()) == _named_shapes(tm.named_parameters())
    assert _named_shapes(mm.named_buffers()) == _named_shapes(tm.named_buffers())
    result = mm.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    if inp is None:
        return
    if not train:
        tm.eval()
        mm.eval()
    arrays = inp()
    arrays = arrays if isinstance(arrays, tuple) else (arrays,)
    t_in, m_in = [_leaf(torch, x) for x in arrays], [_leaf(minitorch, x) for x in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_outs = _flat(tm(*t_in))
        except Exception as e:  # noqa: BLE001 - minitorch must raise alike
            with pytest.raises(type(e)) as mine:
                mm(*m_in)
            assert str(mine.value).split("\n")[0] == str(e).split("\n")[0]
            return
        m_outs = _flat(mm(*m_in))
    assert len(m_outs) == len(t_outs)
    t_loss, m_loss = 0, 0
    for k, (t, m) in enumerate(zip(t_outs, m_outs)):
        assert (m is None) == (t is None), f"output {k}"
        if t is None:
            continue
        assert tuple(m.shape) == tuple(t.shape), f"output {k}: shape"
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"output {k}: dtype"
        np.testing.assert_allclose(as_numpy(m).astype(np.float64), t.detach().numpy().astype(np.float64),
                                   atol=1e-4, rtol=1e-4, equal_nan=True, err_msg=f"output {k}")
        assert m.requires_grad == t.requires_grad, f"output {k}: requires_grad"
        if t.requires_grad:
            w = R.standard_normal(tuple(t.shape))
            t_loss = t_loss + (t * torch.tensor(w, dtype=t.dtype)).sum()
            m_loss = m_loss + (m * minitorch.tensor(w, dtype=m.dtype)).sum()
    if isinstance(t_loss, int):
        return
    t_loss.backward()
    m_loss.backward()
    for (k, p), (_, q) in zip(tm.named_parameters(), mm.named_parameters()):
        _grads_equal(k, q.grad, p.grad)
    for k, (t, m) in enumerate(zip(t_in, m_in)):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            _grads_equal(f"input {k}", m.grad, t.grad)


M("Linear", lambda L: L.nn.Linear(4, 3), f(2, 4))
M("Linear nobias", lambda L: L.nn.Linear(4, 3, bias=False), f(2, 4))
M("Bilinear", lambda L: L.nn.Bilinear(2, 3, 4), lambda: (f(5, 2)(), f(5, 3)()))
M("Identity", lambda L: L.nn.Identity(3, x=1), f(2, 4))
M("Conv1d", lambda L: L.nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=1, groups=2, bias=False), f(1, 2, 9))
M("Conv1d pad same", lambda L: L.nn.Conv1d(2, 4, 3, padding="same", padding_mode="reflect"), f(1, 2, 9))
M("Conv2d", lambda L: L.nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=1), f(2, 3, 6, 5))
M("Conv2d circ", lambda L: L.nn.Conv2d(3, 4, 3, padding=2, padding_mode="circular", dilation=2), f(2, 3, 6, 5))
M("ConvTranspose2d", lambda L: L.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), f(2, 3, 4, 4))
M("ConvTranspose1d", lambda L: L.nn.ConvTranspose1d(3, 4, 3, stride=2, groups=1), f(2, 3, 4))
M("MaxPool1d", lambda L: L.nn.MaxPool1d(2), f(2, 3, 8))
M("MaxPool1d s", lambda L: L.nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True), f(2, 3, 8))
M("MaxPool2d", lambda L: L.nn.MaxPool2d(2, 2), f(2, 3, 8, 8))
M("MaxPool2d idx", lambda L: L.nn.MaxPool2d(3, 2, 1, return_indices=True), f(2, 3, 8, 8))
M("AvgPool1d", lambda L: L.nn.AvgPool1d(3, 2, 1, count_include_pad=False), f(2, 3, 8))
M("AvgPool2d", lambda L: L.nn.AvgPool2d(2), f(2, 3, 8, 8))
M("AdaptiveAvgPool2d", lambda L: L.nn.AdaptiveAvgPool2d((1, 1)), f(2, 3, 8, 8))
M("AdaptiveAvgPool2d None", lambda L: L.nn.AdaptiveAvgPool2d((None, 3)), f(2, 3, 8, 7))
M("AdaptiveMaxPool1d", lambda L: L.nn.AdaptiveMaxPool1d(3), f(2, 3, 8))
M("BatchNorm1d", lambda L: L.nn.BatchNorm1d(4), f(5, 4), train=True)
M("BatchNorm1d noaff", lambda L: L.nn.BatchNorm1d(4, affine=False, track_running_stats=False), f(5, 4, 3), train=True)
M("BatchNorm2d", lambda L: L.nn.BatchNorm2d(3, momentum=None, eps=1e-3), f(2, 3, 4, 4), train=True)
M("BatchNorm2d eval", lambda L: L.nn.BatchNorm2d(3), f(2, 3, 4, 4))
M("LayerNorm", lambda L: L.nn.LayerNorm(4), f(2, 3, 4))
M("LayerNorm tuple", lambda L: L.nn.LayerNorm((3, 4), elementwise_affine=False), f(2, 3, 4))
M("LayerNorm nobias", lambda L: L.nn.LayerNorm(4, bias=False), f(2, 3, 4))
M("GroupNorm", lambda L: L.nn.GroupNorm(2, 4), f(2, 4, 3))
M("GroupNorm noaff", lambda L: L.nn.GroupNorm(2, 4, affine=False), f(2, 4, 3))
M("InstanceNorm1d", lambda L: L.nn.InstanceNorm1d(4), f(2, 4, 5))
M("InstanceNorm2d aff", lambda L: L.nn.InstanceNorm2d(4, affine=True, track_running_stats=True), f(2, 4, 5, 5), train=True)
M("RMSNorm", lambda L: L.nn.RMSNorm(4), f(2, 4))
M("Embedding", lambda L: L.nn.Embedding(10, 3, padding_idx=0), lambda: (R.integers(0, 10, (2, 5)),))
M("Embedding maxnorm", lambda L: L.nn.Embedding(10, 3, max_norm=1.0), lambda: (R.integers(0, 10, (2, 5)),))
M("EmbeddingBag", lambda L: L.nn.EmbeddingBag(10, 3, mode="mean"), lambda: (R.integers(0, 10, (2, 5)),))
M("EmbeddingBag sum", lambda L: L.nn.EmbeddingBag(10, 3, mode="sum"), lambda: (R.integers(0, 10, (8,)), np.array([0, 3])))
M("EmbeddingBag max", lambda L: L.nn.EmbeddingBag(10, 3, mode="max"), lambda: (R.integers(0, 10, (2, 4)),))
M("Dropout", lambda L: L.nn.Dropout(0.3), f(2, 4))
M("Dropout inplace", lambda L: L.nn.Dropout(p=0.2, inplace=True))
M("Dropout2d", lambda L: L.nn.Dropout2d(), f(2, 4, 3, 3))
M("Dropout1d", lambda L: L.nn.Dropout1d(0.1), f(2, 4, 3))
M("AlphaDropout", lambda L: L.nn.AlphaDropout(0.1), f(2, 4, 3))
for act, args in [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("SELU", ()), ("CELU", (2.0,)), ("GELU", ()),
                  ("Softplus", (2, 10)), ("Softsign", ()), ("Hardtanh", (-2.0, 2.0)), ("Mish", ()), ("Hardswish", ()), ("Hardsigmoid", ()),
                  ("LogSigmoid", ()), ("Sigmoid", ()), ("Tanh", ()), ("SiLU", ()), ("Tanhshrink", ()), ("Softshrink", (0.3,)), ("Hardshrink", ()),
                  ("Threshold", (0.1, 20.0)), ("Softmin", (1,)), ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("Softmax2d", ()), ("GLU", ()), ("PReLU", ()), ("PReLU", (4,)),]:
    M(act + str(args), lambda L, a=act, g=args: getattr(L.nn, a)(*g), f(2, 4, 3, 2))
M("GELU tanh", lambda L: L.nn.GELU(approximate="tanh"), f(2, 4))
M("ReLU inplace", lambda L: L.nn.ReLU(inplace=True))
M("LeakyReLU inplace", lambda L: L.nn.LeakyReLU(0.1, True))
M("ELU inplace", lambda L: L.nn.ELU(inplace=True))
M("Hardtanh inplace", lambda L: L.nn.Hardtanh(inplace=True))
M("Softmax none", lambda L: L.nn.Softmax())
M("Flatten", lambda L: L.nn.Flatten(), f(2, 3, 4))
M("Flatten 0", lambda L: L.nn.Flatten(0, -1), f(2, 3, 4))
M("Unflatten", lambda L: L.nn.Unflatten(1, (2, 2)), f(2, 4))
M("Upsample", lambda L: L.nn.Upsample(scale_factor=2, mode="nearest"), f(1, 2, 3, 3))
M("Upsample bil", lambda L: L.nn.Upsample(size=(5, 4), mode="bilinear", align_corners=True), f(1, 2, 3, 3))
M("UpsamplingNearest2d", lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), f(1, 2, 3, 3))
M("PixelShuffle", lambda L: L.nn.PixelShuffle(2), f(1, 8, 3, 3))
M("PixelUnshuffle", lambda L: L.nn.PixelUnshuffle(2), f(1, 2, 4, 4))
M("Unfold", lambda L: L.nn.Unfold(kernel_size=2, stride=1, padding=1), f(1, 2, 4, 4))
M("Fold", lambda L: L.nn.Fold(output_size=(3, 3), kernel_size=2), f(1, 8, 4))
M("ZeroPad2d", lambda L: L.nn.ZeroPad2d((1, 2, 0, 1)), f(1, 2, 3, 3))
M("ReflectionPad1d", lambda L: L.nn.ReflectionPad1d(2), f(1, 2, 5))
M("ReplicationPad2d", lambda L: L.nn.ReplicationPad2d(1), f(1, 2, 3, 3))
M("CircularPad1d", lambda L: L.nn.CircularPad1d((1, 2)), f(1, 2, 4))
M("ConstantPad1d", lambda L: L.nn.ConstantPad1d(2, 3.5), f(1, 2, 4))
M("ConstantPad2d", lambda L: L.nn.ConstantPad2d((1, 0, 2, 0), -1.0), f(1, 2, 4, 4))
M("CosineSimilarity", lambda L: L.nn.CosineSimilarity(dim=1, eps=1e-6), lambda: (f(3, 4)(), f(3, 4)()))
M("PairwiseDistance", lambda L: L.nn.PairwiseDistance(p=1.0, keepdim=True), lambda: (f(3, 4)(), f(3, 4)()))
M("ChannelShuffle", lambda L: L.nn.ChannelShuffle(2), f(1, 4, 2, 2))
for loss, args, inp in [
    ("MSELoss", (), lambda: (f(3, 4)(), f(3, 4)())),
    ("L1Loss", (), lambda: (f(3, 4)(), f(3, 4)())),
    ("SmoothL1Loss", (), lambda: (f(3, 4)(), f(3, 4)())),
    ("HuberLoss", (), lambda: (f(3, 4)(), f(3, 4)())),
    ("KLDivLoss", (), lambda: (f(3, 4)(), f(3, 4)())),
    ("BCELoss", (), lambda: (R.random((3, 4)).astype(np.float32), R.random((3, 4)).astype(np.float32))),
    ("BCEWithLogitsLoss", (), lambda: (f(3, 4)(), R.random((3, 4)).astype(np.float32))),
    ("CrossEntropyLoss", (), lambda: (f(3, 4)(), R.integers(0, 4, (3,)))),
    ("NLLLoss", (), lambda: (f(3, 4)(), R.integers(0, 4, (3,)))),
    ("MarginRankingLoss", (), lambda: (f(3)(), f(3)(), np.sign(f(3)()))),
    ("CosineEmbeddingLoss", (), lambda: (f(3, 4)(), f(3, 4)(), np.array([1., -1., 1.], np.float32))),
    ("HingeEmbeddingLoss", (), lambda: (f(3, 4)(), np.sign(f(3, 4)()))),
    ("SoftMarginLoss", (), lambda: (f(3, 4)(), np.sign(f(3, 4)()))),
    ("MultiLabelSoftMarginLoss", (), lambda: (f(3, 4)(), (R.random((3, 4)) > .5).astype(np.float32))),
    ("MultiMarginLoss", (), lambda: (f(3, 4)(), R.integers(0, 4, (3,)))),
    ("TripletMarginLoss", (), lambda: (f(3, 4)(), f(3, 4)(), f(3, 4)())),
    ("PoissonNLLLoss", (), lambda: (f(3, 4)(), R.random((3, 4)).astype(np.float32))),
    ("GaussianNLLLoss", (), lambda: (f(3, 4)(), f(3, 4)(), R.random((3, 4)).astype(np.float32) + .1)),
    ("CTCLoss", (), None),
]:
    M(loss, lambda L, l=loss, a=args: getattr(L.nn, l)(*a), inp)
M("CrossEntropyLoss kw", lambda L: L.nn.CrossEntropyLoss(weight=L.tensor([1., 2., 3., 4.]), ignore_index=1, reduction="sum", label_smoothing=0.1), lambda: (f(3, 4)(), R.integers(0, 4, (3,))))
M("NLLLoss w", lambda L: L.nn.NLLLoss(weight=L.ones(4)), lambda: (f(3, 4)(), R.integers(0, 4, (3,))))
M("BCELoss w", lambda L: L.nn.BCELoss(weight=L.ones(4)), lambda: (R.random((3, 4)).astype(np.float32), R.random((3, 4)).astype(np.float32)))
M("BCEWithLogitsLoss pw", lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.ones(4) * 2), lambda: (f(3, 4)(), R.random((3, 4)).astype(np.float32)))
M("SmoothL1Loss beta", lambda L: L.nn.SmoothL1Loss(reduction="none", beta=0.5), lambda: (f(3, 4)(), f(3, 4)()))
M("HuberLoss delta", lambda L: L.nn.HuberLoss(delta=0.5), lambda: (f(3, 4)(), f(3, 4)()))
M("KLDivLoss bm", lambda L: L.nn.KLDivLoss(reduction="batchmean", log_target=True), lambda: (f(3, 4)(), f(3, 4)()))
M("MSELoss sum", lambda L: L.nn.MSELoss(reduction="sum"), lambda: (f(3, 4)(), f(3, 4)()))
M("Sequential", lambda L: L.nn.Sequential(L.nn.Linear(4, 3), L.nn.ReLU(), L.nn.Linear(3, 2)), f(2, 4))
M("Sequential OD", lambda L: L.nn.Sequential(collections.OrderedDict([("fc", L.nn.Linear(4, 3)), ("act", L.nn.Tanh())])), f(2, 4))
M("ModuleList", lambda L: L.nn.ModuleList([L.nn.Linear(4, 3), L.nn.ReLU()]))
M("ModuleDict", lambda L: L.nn.ModuleDict({"a": L.nn.Linear(4, 3), "b": L.nn.ReLU()}))
M("ParameterList", lambda L: L.nn.ParameterList([L.nn.Parameter(L.ones(2)), L.nn.Parameter(L.ones(2, 3))]))
M("ParameterDict", lambda L: L.nn.ParameterDict({"a": L.nn.Parameter(L.ones(2))}))
M("Empty Sequential", lambda L: L.nn.Sequential())
M("nested", lambda L: L.nn.Sequential(L.nn.Sequential(L.nn.Conv2d(1, 2, 3), L.nn.BatchNorm2d(2)), L.nn.ModuleList([L.nn.Dropout(0.5)])))
M("RNN", lambda L: L.nn.RNN(4, 5), f(3, 2, 4))
M("RNN full", lambda L: L.nn.RNN(4, 5, num_layers=2, nonlinearity="relu", bias=False, batch_first=True, bidirectional=True), f(2, 3, 4))
M("RNN h0", lambda L: L.nn.RNN(4, 5, 2), lambda: (f(3, 2, 4)(), f(2, 2, 5)()))
M("RNN unbatched", lambda L: L.nn.RNN(4, 5), f(3, 4))
M("LSTM", lambda L: L.nn.LSTM(4, 5), f(3, 2, 4))
M("LSTM full", lambda L: L.nn.LSTM(4, 5, num_layers=2, batch_first=True, bidirectional=True), f(2, 3, 4))
M("LSTM proj", lambda L: L.nn.LSTM(4, 5, proj_size=2, num_layers=2, bidirectional=True), f(3, 2, 4))
M("LSTM h0c0", lambda L: L.nn.LSTM(4, 5), lambda: (f(3, 2, 4)(), (f(1, 2, 5)(), f(1, 2, 5)())))
M("LSTM dropout", lambda L: L.nn.LSTM(4, 5, 2, dropout=0.3))
M("GRU", lambda L: L.nn.GRU(4, 5), f(3, 2, 4))
M("GRU full", lambda L: L.nn.GRU(4, 5, num_layers=3, batch_first=True, bidirectional=True, bias=False), f(2, 3, 4))
M("RNNCell", lambda L: L.nn.RNNCell(4, 5), f(2, 4))
M("RNNCell relu", lambda L: L.nn.RNNCell(4, 5, bias=False, nonlinearity="relu"), lambda: (f(2, 4)(), f(2, 5)()))
M("LSTMCell", lambda L: L.nn.LSTMCell(4, 5), f(2, 4))
M("LSTMCell hc", lambda L: L.nn.LSTMCell(4, 5), lambda: (f(2, 4)(), (f(2, 5)(), f(2, 5)())))
M("GRUCell", lambda L: L.nn.GRUCell(4, 5), f(2, 4))
M("GRUCell unb", lambda L: L.nn.GRUCell(4, 5), f(4))
M("MHA", lambda L: L.nn.MultiheadAttention(8, 2), lambda: (f(3, 2, 8)(), f(3, 2, 8)(), f(3, 2, 8)()))
M("MHA bf", lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True, bias=False), lambda: (f(2, 3, 8)(), f(2, 4, 8)(), f(2, 4, 8)()))
M("MHA kdim", lambda L: L.nn.MultiheadAttention(8, 2, kdim=5, vdim=6, add_bias_kv=True, add_zero_attn=True), lambda: (f(3, 2, 8)(), f(4, 2, 5)(), f(4, 2, 6)()))
M("TEL", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), f(3, 2, 8))
M("TEL bf nf", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"), f(2, 3, 8))
M("TDL", lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), lambda: (f(3, 2, 8)(), f(4, 2, 8)()))
M("TE", lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, enable_nested_tensor=False), f(3, 2, 8))
M("TE norm", lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, norm=L.nn.LayerNorm(8), enable_nested_tensor=False), f(3, 2, 8))
M("TD", lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2), lambda: (f(3, 2, 8)(), f(4, 2, 8)()))
M("Transformer", lambda L: L.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0), lambda: (f(3, 2, 8)(), f(4, 2, 8)()))
M("Transformer bf", lambda L: L.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=True), lambda: (f(2, 3, 8)(), f(2, 4, 8)()))


@pytest.mark.parametrize("make,inp,train", CASES)
def test_module_same_as_torch(make, inp, train):
    module_same_as_torch(make, inp, train)


@pytest.mark.parametrize("lib_name", ["torch", "minitorch"])
def test_square_subsequent_mask(lib_name):
    lib = torch if lib_name == "torch" else minitorch
    mask = lib.nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(np.array(mask.tolist()), np.triu(np.full((3, 3), -np.inf), 1))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm(norm_type):
    """F.embedding(max_norm=) rescales, in place and outside autograd, the rows of the weight it
    looks up whose norm exceeds max_norm (one version bump), as PyTorch; EmbeddingBag likewise."""
    w0 = (np.random.default_rng(1).standard_normal((6, 3)) * 2).astype(np.float32)
    idx = np.array([[1, 2], [1, 4]])
    results = []
    for lib in (torch, minitorch):
        w = lib.tensor(w0, requires_grad=True)
        before = w._version
        out = lib.nn.functional.embedding(lib.tensor(idx), w, max_norm=1.0, norm_type=norm_type)
        (out * lib.tensor(np.arange(12.0, dtype=np.float32).reshape(2, 2, 3))).sum().backward()
        bag = lib.nn.EmbeddingBag(6, 3, max_norm=0.5, norm_type=norm_type, mode="mean")
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(w0))
        pooled = bag(lib.tensor([[0, 5, 5], [3, 3, 1]]))
        results.append([np.array(x.tolist()) for x in (out, w, w.grad, pooled, bag.weight)] + [w._version - before])
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, atol=1e-5, rtol=1e-5)
    assert results[1][-1] == 1


def test_embedding_renorm_errors():
    w = np.ones((3, 2), np.float32)
    for bad in (lambda lib: lib.embedding_renorm_(lib.tensor(w), lib.tensor([1.5]), 1.0, 2.0),
                lambda lib: lib.embedding_renorm_(lib.tensor(w)[0], lib.tensor([1]), 1.0, 2.0)):
        with pytest.raises(RuntimeError) as theirs:
            bad(torch)
        with pytest.raises(RuntimeError) as mine:
            bad(minitorch)
        assert str(mine.value) == str(theirs.value)
