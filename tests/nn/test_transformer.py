"""nn.TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and
nn.Transformer against PyTorch with weights copied through state_dict: parameter names and shapes,
outputs in eval mode, and in train mode (dropout 0) the gradients of the inputs and of every
parameter; norm_first, activations given as a string or a callable, bias=False, batch_first,
unbatched input, every mask and causal hint; generate_square_subsequent_mask; errors."""
import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(27)
TOL = dict(rtol=1e-4, atol=2e-5)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def build(lib, name, *args, **kwargs):
    """lib.nn.<name>(*args, **kwargs), where an arg may be a function of lib (a layer to stack)."""
    args = [a(lib) if callable(a) and not isinstance(a, type) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor's notice, the same in both
        return getattr(lib.nn, name)(*args, **kwargs)


def pair(name, *args, **kwargs):
    theirs, ours = build(torch, name, *args, **kwargs), build(mt, name, *args, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def compare(theirs, ours, arrays, masks=None, **kw):
    """eval-mode outputs, then train-mode outputs and the gradients of inputs and parameters."""
    masks = masks or {}
    for train in (False, True):
        res = []
        for lib, mod in ((torch, theirs), (mt, ours)):
            mod.train(train)
            xs = [lib.tensor(a, requires_grad=train) for a in arrays]
            m = {k: lib.tensor(v) for k, v in masks.items()}
            out = mod(*xs, **m, **kw)
            if train:
                (out * lib.tensor(np.cos(np.arange(out.numel())).astype(np.float32).reshape(out.shape))).sum().backward()
            res.append((out, xs, dict(mod.named_parameters())))
        (to, tx, tp), (mo, mx, mp) = res
        np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), **TOL)
        if not train:
            continue
        for a, b in zip(mx, tx):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)
        for name, p in tp.items():
            if p.grad is None:
                assert mp[name].grad is None, name
            else:
                np.testing.assert_allclose(mp[name].grad.numpy(), p.grad.numpy(), err_msg=name, **TOL)
        theirs.zero_grad()
        ours.zero_grad()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer(norm_first, batch_first):
    theirs, ours = pair("TransformerEncoderLayer", 8, 2, dim_feedforward=12, dropout=0.0, norm_first=norm_first,
                        batch_first=batch_first)
    x = rand(3, 5, 8)
    compare(theirs, ours, [x])
    seq, batch = (5, 3) if batch_first else (3, 5)
    pad = np.zeros((batch, seq), dtype=bool)
    pad[1, seq - 2:] = True
    causal = np.triu(np.full((seq, seq), -np.inf, dtype=np.float32), 1)
    compare(theirs, ours, [x], {"src_mask": causal}, is_causal=True)
    compare(theirs, ours, [x], {"src_mask": causal, "src_key_padding_mask": pad})
    compare(theirs, ours, [x[:, 0]], {"src_mask": np.triu(np.ones((3, 3), dtype=bool), 1)})


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_activation_and_bias(activation):
    act = {"silu": None}.get(activation, activation)
    for bias in (True, False):
        kw = dict(dim_feedforward=12, dropout=0.0, bias=bias, batch_first=True)
        if act is None:
            theirs = torch.nn.TransformerEncoderLayer(8, 2, activation=torch.nn.functional.silu, **kw)
            ours = nn.TransformerEncoderLayer(8, 2, activation=mt.nn.functional.silu, **kw)
            ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
        else:
            theirs, ours = pair("TransformerEncoderLayer", 8, 2, activation=act, **kw)
        compare(theirs, ours, [rand(2, 4, 8)])
        assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu
    theirs, ours = pair("TransformerDecoderLayer", 8, 2, activation="gelu", dim_feedforward=12, dropout=0.0)
    compare(theirs, ours, [rand(4, 2, 8), rand(6, 2, 8)])
    for lib in (torch, mt):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    ours = nn.TransformerEncoderLayer(8, 2, activation=nn.GELU())
    assert ours.activation_relu_or_gelu == 2


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first):
    theirs, ours = pair("TransformerDecoderLayer", 8, 2, dim_feedforward=12, dropout=0.0, norm_first=norm_first)
    tgt, mem = rand(4, 3, 8), rand(6, 3, 8)
    compare(theirs, ours, [tgt, mem])
    causal = np.triu(np.full((4, 4), -np.inf, dtype=np.float32), 1)
    mem_pad = np.zeros((3, 6), dtype=bool)
    mem_pad[2, 4:] = True
    tgt_pad = np.zeros((3, 4), dtype=bool)
    tgt_pad[0, 3] = True
    compare(theirs, ours, [tgt, mem], {"tgt_mask": causal, "memory_key_padding_mask": mem_pad,
                                      "tgt_key_padding_mask": tgt_pad})
    compare(theirs, ours, [tgt, mem], {"tgt_mask": causal, "memory_mask": rand(4, 6)}, tgt_is_causal=True)


def test_stacks_with_norm():
    enc_layer = lambda lib: lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0)  # noqa: E731
    theirs, ours = pair("TransformerEncoder", enc_layer, 3, norm=None)
    compare(theirs, ours, [rand(5, 2, 8)])
    t_enc = torch.nn.TransformerEncoder(enc_layer(torch), 2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    m_enc = nn.TransformerEncoder(enc_layer(mt), 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    m_enc.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in t_enc.state_dict().items()})
    causal = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    compare(t_enc, m_enc, [rand(5, 2, 8)], {"mask": causal})  # detected as causal
    pad = np.zeros((2, 5), dtype=bool)
    pad[1, 2:] = True
    compare(t_enc, m_enc, [rand(5, 2, 8)], {"src_key_padding_mask": pad})
    dec_layer = lambda lib: lib.nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0)  # noqa: E731
    theirs, ours = pair("TransformerDecoder", dec_layer, 2, norm=None)
    compare(theirs, ours, [rand(4, 2, 8), rand(5, 2, 8)], {"tgt_mask": np.triu(np.full((4, 4), -np.inf,
                                                                                         dtype=np.float32), 1)})
    assert len(ours.layers) == 2 and ours.layers[0] is not ours.layers[1]


def test_nested_tensor_notice():
    layer = nn.TransformerEncoderLayer(8, 2)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False "
                                         "because encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 1)
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, batch_first=True), 1)


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, True)])
def test_transformer(batch_first, norm_first):
    theirs, ours = pair("Transformer", d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                        dim_feedforward=16, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    src, tgt = (rand(2, 6, 8), rand(2, 4, 8)) if batch_first else (rand(6, 2, 8), rand(4, 2, 8))
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4).numpy()
    pad = np.zeros((2, 6), dtype=bool)
    pad[0, 4:] = True
    compare(theirs, ours, [src, tgt], {"tgt_mask": tgt_mask, "src_key_padding_mask": pad,
                                       "memory_key_padding_mask": pad})
    compare(theirs, ours, [src[0] if batch_first else src[:, 0], tgt[0] if batch_first else tgt[:, 0]])
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_transformer_init_and_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4)
    t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert m.dtype == mt.float32
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=mt.float64).dtype == mt.float64
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    w = model.encoder.layers[0].self_attn.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (8 + 24)) and w.std() > 0.1
    assert model.d_model == 8 and model.nhead == 2 and model.batch_first is False
    assert isinstance(model.encoder.norm, nn.LayerNorm) and isinstance(model.decoder.norm, nn.LayerNorm)
    for lib in (torch, mt):
        tr = lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
        with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
            tr(lib.ones(3, 2, 8), lib.ones(3, 1, 8))
        with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
            tr(lib.ones(3, 2, 6), lib.ones(3, 2, 6))


def test_dropout_in_train_mode_changes_outputs():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.5)
    x = mt.tensor(rand(4, 2, 8))
    layer.eval()
    a = layer(x)
    assert mt.equal(a, layer(x))
    layer.train()
    assert not mt.allclose(layer(x), a)
