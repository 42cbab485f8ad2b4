"""Nested tensors (minitorch.nested) against PyTorch and NumPy: nested_tensor / as_nested_tensor
(copies and leaves, or autograd kept), is_nested, size(i) of regular and irregular dims, unbind,
to_padded_tensor (padding value, output_size, its checks), pointwise ops on the buffer (unary,
binary with a nested or a scalar operand, nn.functional's relu / gelu), softmax and linear over
the components, with gradients; the jagged layout (nested_tensor(layout=jagged),
nested_tensor_from_jagged, offsets, values, printing); and the attention layers' nested fast path
(MultiheadAttention, TransformerEncoderLayer, and TransformerEncoder's zeros at padded positions)."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*nested tensors is in prototype.*")
rng = np.random.default_rng(0)
SHAPES = [(2, 3), (4, 3), (1, 3)]


def parts(shapes=SHAPES, transposed=False):
    out = [rng.standard_normal(s) for s in shapes]
    return [np.ascontiguousarray(a.T).T if transposed else a for a in out]  # Fortran order: non-contiguous


def nested(lib, arrays, **kw):
    return lib.nested.nested_tensor([lib.tensor(a) for a in arrays], **kw)


def padded_ref(arrays, value=0.0):
    big = [max(a.shape[d] for a in arrays) for d in range(arrays[0].ndim)]
    out = np.full((len(arrays), *big), value)
    for i, a in enumerate(arrays):
        out[(i,) + tuple(slice(0, s) for s in a.shape)] = a
    return out


def same_components(got, want, atol=1e-6):
    g, w = got.unbind(), want.unbind()
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(as_numpy(a), b.detach().numpy(), atol=atol, rtol=1e-5)


def test_construct_sizes_unbind_and_print():
    arrays = parts()
    nt, tt = nested(minitorch, arrays), nested(torch, arrays)
    assert nt.is_nested and not minitorch.ones(2).is_nested and nt.layout == minitorch.strided
    assert nt.dim() == tt.dim() == 3 and nt.size(0) == tt.size(0) == 3 and nt.size(2) == nt.size(-1) == 3
    assert nt.dtype == minitorch.float64 and nt.numel() == tt.numel() and not nt.requires_grad
    for d in (1, ):
        for lib_nt in (nt, tt):
            with pytest.raises(RuntimeError, match=f"Given dimension {d} is irregular and does not have a size."):
                lib_nt.size(d)
    for lib_nt in (nt, tt):
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib_nt.size(3)
        with pytest.raises(RuntimeError, match="can only be unbound along dimension 0"):
            lib_nt.unbind(1)
    for got, a in zip(nt.unbind(), arrays):
        np.testing.assert_array_equal(got.numpy(), a)
    assert repr(nt).replace("minitorch.", "torch.") == repr(tt)
    assert repr(nested(minitorch, [])) == repr(nested(torch, []))
    source = minitorch.tensor(arrays[0])
    copy = minitorch.nested.nested_tensor([source])
    source.add_(1)  # nested_tensor copies
    np.testing.assert_array_equal(copy.unbind()[0].numpy(), arrays[0])
    ragged = [[1.0, 2.0], [3.0]]
    assert repr(minitorch.nested.nested_tensor(ragged)) == repr(torch.nested.nested_tensor(ragged))
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="All Tensors given to nested_tensor must have the same dimension"):
            lib.nested.nested_tensor([lib.ones(2, 3), lib.ones(3)])


@pytest.mark.parametrize("transposed", [False, True])
def test_to_padded_tensor(transposed):
    arrays = parts([(2, 3, 1), (1, 2, 4)], transposed)
    for value in (0.0, -1.5, float("nan")):
        got = minitorch.nested.to_padded_tensor(nested(minitorch, arrays), value)
        want = torch.nested.to_padded_tensor(nested(torch, arrays), value)
        np.testing.assert_array_equal(got.numpy(), padded_ref(arrays, value))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    size = (3, 4, 3, 5)
    got = nested(minitorch, arrays).to_padded_tensor(2.0, size)
    want = torch.nested.to_padded_tensor(nested(torch, arrays), 2.0, size)
    assert tuple(got.shape) == size
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="Truncation is not supported"):
            lib.nested.to_padded_tensor(nested(lib, arrays), 0.0, (2, 1, 3, 4))


def test_as_nested_tensor_keeps_autograd_and_leaf_grad():
    arrays = parts()
    weights = rng.standard_normal((3, 4, 3))
    grads = []
    for lib in (minitorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        nt = lib.nested.as_nested_tensor(xs)
        y = lib.nested.to_padded_tensor((nt * 3).sin(), 0.0)
        (y * lib.tensor(weights)).sum().backward()
        grads.append([x.grad.numpy() for x in xs])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    for lib in (minitorch, torch):
        leaf = nested(lib, arrays, requires_grad=True)
        assert leaf.requires_grad and leaf.is_leaf
        assert lib.nested.as_nested_tensor(leaf, layout=lib.strided) is leaf


@pytest.mark.parametrize("name", ["add", "mul", "sub", "div", "relu", "gelu", "neg", "sin", "abs"])
def test_pointwise(name):
    arrays, others = parts(), parts()
    ops = {"add": lambda lib, x, y: x + y, "mul": lambda lib, x, y: x * y, "sub": lambda lib, x, y: x - 2.5,
           "div": lambda lib, x, y: x / 4, "relu": lambda lib, x, y: lib.nn.functional.relu(x),
           "gelu": lambda lib, x, y: lib.nn.functional.gelu(x), "neg": lambda lib, x, y: -x,
           "sin": lambda lib, x, y: x.sin(), "abs": lambda lib, x, y: lib.abs(x)}
    fn = ops[name]
    got = fn(minitorch, nested(minitorch, arrays), nested(minitorch, others))
    want = fn(torch, nested(torch, arrays), nested(torch, others))
    assert got.is_nested
    same_components(got, want)
    ref = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - 2.5,
           "div": lambda a, b: a / 4, "neg": lambda a, b: -a, "sin": lambda a, b: np.sin(a),
           "abs": lambda a, b: np.abs(a), "relu": lambda a, b: np.maximum(a, 0)}.get(name)
    if ref is not None:
        for g, a, b in zip(got.unbind(), arrays, others):
            np.testing.assert_allclose(g.numpy(), ref(a, b), rtol=1e-12)
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="Expected both self and other to be nested"):
            nested(lib, arrays) + lib.ones(3, dtype=lib.float64)


@pytest.mark.parametrize("dim", [-1, 1, 2])
def test_softmax_and_linear(dim):
    arrays = parts([(2, 3), (4, 3)])
    for name in ("softmax", "log_softmax"):
        got = getattr(minitorch.nn.functional, name)(nested(minitorch, arrays), dim)
        if name == "softmax":
            same_components(got, torch.nn.functional.softmax(nested(torch, arrays), dim))
        for g, a in zip(got.unbind(), arrays):  # (PyTorch's strided nested tensors have no log_softmax)
            d = dim - 1 if dim > 0 else dim
            e = np.exp(a - a.max(d, keepdims=True))
            want = e / e.sum(d, keepdims=True)
            np.testing.assert_allclose(g.numpy(), np.log(want) if name == "log_softmax" else want, rtol=1e-6)
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="Cannot apply softmax across nested dimension 0"):
            nested(lib, arrays).softmax(0)
    w, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
    grads = []
    for lib in (minitorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        wt, bt = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.nn.functional.linear(lib.nested.as_nested_tensor(xs), wt, bt)
        out = lib.nested.to_padded_tensor(out.softmax(-1), 0.0)
        assert tuple(out.shape) == (2, 4, 5)
        (out * lib.tensor(np.arange(40.0).reshape(2, 4, 5))).sum().backward()
        grads.append([t.grad.numpy() for t in xs + [wt, bt]] + [out.detach().numpy()])
    for g, want in zip(*grads):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_layer_norm(layout):
    arrays = parts([(2, 3), (4, 3)])
    grads = []
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        norm = lib.nn.LayerNorm(3, dtype=lib.float64)
        with lib.no_grad():
            norm.weight.copy_(lib.tensor([1.0, 2.0, -1.0]))
            norm.bias.copy_(lib.tensor([0.5, 0.0, 1.0]))
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = norm(lib.nested.as_nested_tensor(xs, layout=getattr(lib, layout)))
        assert out.is_nested
        padded = lib.nested.to_padded_tensor(out, 0.0)
        (padded * lib.tensor(np.arange(24.0).reshape(2, 4, 3))).sum().backward()
        grads.append([padded.detach().numpy()] + [x.grad.numpy() for x in xs] + [norm.weight.grad.numpy()])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)
    with pytest.raises(RuntimeError, match="must be regular"):
        minitorch.nn.functional.layer_norm(nested(minitorch, arrays), (4, 3))


def test_jagged_layout():
    arrays = parts()
    nj, tj = nested(minitorch, arrays, layout=minitorch.jagged), nested(torch, arrays, layout=torch.jagged)
    assert nj.layout == minitorch.jagged and repr(nj.layout) == "minitorch.jagged"
    assert nj.dim() == 3 and nj.size(0) == 3 and nj.size(-1) == 3
    assert repr(nj.size(1)).startswith("j") and repr(nj.shape) == f"minitorch.Size([3, {nj.size(1)!r}, 3])"
    # a Size, as PyTorch's (its ragged entry kept, slices and comparisons as a Size's)
    assert isinstance(nj.shape, minitorch.Size) and isinstance(tj.shape, torch.Size) and nj.size() == nj.shape
    assert nj.shape[1:] == minitorch.Size([nj.size(1), 3]) and isinstance(nj.shape[1:], minitorch.Size)
    assert list(nj.shape) == [3, nj.size(1), 3] and len(nj.shape) == 3 and nj.shape[-1] == 3
    np.testing.assert_array_equal(nj.offsets().numpy(), tj.offsets().numpy())
    np.testing.assert_array_equal(nj.values().numpy(), tj.values().numpy())
    assert repr(nj).startswith("NestedTensor(size=(3, j") and repr(nj).endswith(
        "offsets=tensor([0, 2, 6, 7]), contiguous=True)")
    assert repr(nj.exp().size(1)) == repr(nj.size(1))  # the same lengths: the same ragged size
    for name in ("exp", "relu"):
        same_components(getattr(nj, name)(), getattr(tj, name)())
    same_components(nj.softmax(-1), tj.softmax(-1))
    same_components(nj + nj, tj + tj)
    values = rng.standard_normal((7, 3))
    offsets = [0, 2, 6, 7]
    got = minitorch.nested.nested_tensor_from_jagged(minitorch.tensor(values), minitorch.tensor(offsets))
    want = torch.nested.nested_tensor_from_jagged(torch.tensor(values), torch.tensor(offsets))
    same_components(got, want)
    by_lengths = minitorch.nested.nested_tensor_from_jagged(minitorch.tensor(values),
                                                           lengths=minitorch.tensor([2, 4, 1]))
    np.testing.assert_array_equal(by_lengths.offsets().numpy(), offsets)
    v = minitorch.tensor(values, requires_grad=True)  # a view of values: gradients reach them
    minitorch.nested.to_padded_tensor(minitorch.nested.nested_tensor_from_jagged(v, minitorch.tensor(offsets)) * 2,
                                      0.0).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.full((7, 3), 2.0))


def _attention_pair(d_model=8, nhead=2):
    layers = []
    for lib in (torch, minitorch):
        lib.manual_seed(0)
        layers.append(lib.nn.TransformerEncoderLayer(d_model, nhead, 16, dropout=0.0, batch_first=True))
    layers[1].load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in layers[0].state_dict().items()})
    return layers


def test_attention_layers_take_nested_inputs_in_the_fast_path():
    arrays = [a.astype(np.float32) for a in parts([(3, 8), (5, 8), (1, 8)])]
    results = []
    for lib, layer in zip((torch, minitorch), _attention_pair()):
        layer.eval()
        with lib.no_grad():
            nt = nested(lib, arrays)
            out = layer(nt)
            attn, w = layer.self_attn(nt, nt, nt)
            attn2, w2 = layer.self_attn(nt, nt, nt, need_weights=False)
        assert out.is_nested and attn.is_nested and w2 is None
        results.append((out, attn, w.numpy()))
        with pytest.raises(AssertionError, match="because grad is enabled"):
            layer(nested(lib, arrays))
        layer.train()
        with lib.no_grad(), pytest.raises(AssertionError, match="training is enabled"):
            layer.self_attn(nt, nt, nt)
    (t_out, t_attn, t_w), (m_out, m_attn, m_w) = results
    same_components(m_out, t_out, atol=1e-5)
    same_components(m_attn, t_attn, atol=1e-5)
    np.testing.assert_allclose(m_w, t_w, atol=1e-6)


@pytest.mark.parametrize("case", ["eval_nograd", "train", "grad", "not_left_aligned", "no_mask"])
def test_encoder_output_matches_fast_path(case):
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    pad = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], bool)
    if case == "not_left_aligned":
        pad[0] = [1, 0, 0, 0, 1]
    outs = []
    for lib, layer in zip((torch, minitorch), _attention_pair()):
        enc = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8))
        if lib is minitorch:
            enc.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in outs[0][1].items()})
            enc.norm.bias.data.fill_(0.25)  # padded rows come out as the norm's bias
        else:
            enc.norm.bias.data.fill_(0.25)
        enc.train(case == "train")
        mask = None if case == "no_mask" else lib.tensor(pad)
        with lib.set_grad_enabled(case == "grad"):
            out = enc(lib.tensor(x), src_key_padding_mask=mask)
        outs.append((out.detach().numpy(), enc.state_dict()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], atol=2e-5)
    if case == "eval_nograd":
        np.testing.assert_allclose(outs[1][0][0, 3:], 0.25, atol=1e-6)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reductions(name):
    arrays = parts([(2, 3), (4, 3), (1, 3)])
    jag = [nested(lib, arrays, layout=lib.jagged) for lib in (minitorch, torch)]
    for dim, keepdim in ((-1, False), (2, True), (1, False), (1, True), ((0, 1), False)):
        got = getattr(jag[0], name)(dim, keepdim=keepdim)
        want = getattr(jag[1], name)(dim, keepdim=keepdim)
        if want.is_nested:
            same_components(got, want)
        else:
            assert not got.is_nested and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    if name == "sum":
        np.testing.assert_allclose(jag[0].sum().item(), sum(a.sum() for a in arrays))
    ref = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[name]
    np.testing.assert_allclose(getattr(jag[0], name)(1).numpy(), np.stack([ref(a, 0) for a in arrays]))
    strided = nested(minitorch, arrays)
    for g, a in zip(getattr(minitorch, name)(strided, -1, keepdim=True).unbind(), arrays):
        np.testing.assert_allclose(g.numpy(), ref(a, -1, keepdims=True))
    for lib in (minitorch, torch):
        for dim, keepdim, words in ((-1, False, "always requires keepdim=True"), (1, True, "across the last dim"),
                                    ((1, 2), True, "single dimension")):
            if name != "sum":  # PyTorch's strided nested tensors have sum alone
                continue
            with pytest.raises(RuntimeError, match=words):
                nested(lib, arrays).sum(dim, keepdim=keepdim)
        with pytest.raises(RuntimeError, match="reducing along the batch dimension but not the ragged"):
            nested(lib, arrays, layout=lib.jagged).sum(0)
    # PyTorch 2.13 has no backward for some of these on jagged tensors: finite differences decide
    xs = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    minitorch.autograd.gradcheck(
        lambda *t: getattr(minitorch.nested.as_nested_tensor(list(t), layout=minitorch.jagged), name)(1), xs)
