"""lucidrains' perceiver-pytorch as perceiver_pytorch.py and perceiver_io.py write it: cache_fn
(functools.wraps, _cache/key keyword arguments) for weight-tied layers, fourier_encode (torch.linspace
with device= and dtype=, indexing by (*((None,) * (len(x.shape) - 1)), Ellipsis), sin/cos of x *
scales * pi), PreNorm with a context norm passed through **kwargs, GEGLU, Attention over '(b h) n d'
from einops.rearrange with torch.einsum and a padding mask (rearrange 'b ... -> b (...)', repeat
'b j -> (b h) () j', -torch.finfo(sim.dtype).max, sim.masked_fill_(~mask, ...)), the Perceiver's
image input ('b, *axis, _, device, dtype = *data.shape, data.device, data.dtype', torch.meshgrid(*axis_pos,
indexing='ij'), repeat '... -> b ...'), the latent array repeated per batch, nested ModuleLists
unpacked in the forward, the Reduce('b n d -> b d', 'mean') classifier head; then PerceiverLM
(PerceiverIO with decoder queries, nn.Embedding positions through rearrange 'n d -> () n d', and
dropout_seq's structured sequence dropout: torch.randn logits, masked_fill, topk(...).indices,
advanced indexing seq[batch_indices, keep_indices], torch.ceil(...).int() keep counts). A few
Adam steps on NumPy data; the layers come from einops.layers.<the library's name>."""
import importlib
from functools import wraps
from math import pi

import numpy as np
import pytest

from prog_helpers import compare_program, fit, numpy_of, start_from

einops = pytest.importorskip("einops")


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def cache_fn(f):
    cache = dict()

    @wraps(f)
    def cached_fn(*args, _cache=True, key=None, **kwargs):
        if not _cache:
            return f(*args, **kwargs)
        nonlocal cache
        if key in cache:
            return cache[key]
        result = f(*args, **kwargs)
        cache[key] = result
        return result
    return cached_fn


def perceiver_modules(torch):
    """The classes of perceiver_pytorch.py and perceiver_io.py over `torch`."""
    from einops import rearrange, repeat

    nn = torch.nn
    F = torch.nn.functional
    einsum = torch.einsum
    Reduce = importlib.import_module("einops.layers." + torch.__name__).Reduce

    def fourier_encode(x, max_freq, num_bands=4):
        x = x.unsqueeze(-1)
        device, dtype, orig_x = x.device, x.dtype, x
        scales = torch.linspace(1., max_freq / 2, num_bands, device=device, dtype=dtype)
        scales = scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)]
        x = x * scales * pi
        x = torch.cat([x.sin(), x.cos()], dim=-1)
        x = torch.cat((x, orig_x), dim=-1)
        return x

    class PreNorm(nn.Module):
        def __init__(self, dim, fn, context_dim=None):
            super().__init__()
            self.fn = fn
            self.norm = nn.LayerNorm(dim)
            self.norm_context = nn.LayerNorm(context_dim) if exists(context_dim) else None

        def forward(self, x, **kwargs):
            x = self.norm(x)
            if exists(self.norm_context):
                context = kwargs['context']
                normed_context = self.norm_context(context)
                kwargs.update(context=normed_context)
            return self.fn(x, **kwargs)

    class GEGLU(nn.Module):
        def forward(self, x):
            x, gates = x.chunk(2, dim=-1)
            return x * F.gelu(gates)

    class FeedForward(nn.Module):
        def __init__(self, dim, mult=4, dropout=0.):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(dim, dim * mult * 2),
                GEGLU(),
                nn.Linear(dim * mult, dim),
                nn.Dropout(dropout)
            )

        def forward(self, x):
            return self.net(x)

    class Attention(nn.Module):
        def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.):
            super().__init__()
            inner_dim = dim_head * heads
            context_dim = default(context_dim, query_dim)
            self.scale = dim_head ** -0.5
            self.heads = heads
            self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
            self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias=False)
            self.dropout = nn.Dropout(dropout)
            self.to_out = nn.Linear(inner_dim, query_dim)

        def forward(self, x, context=None, mask=None):
            h = self.heads
            q = self.to_q(x)
            context = default(context, x)
            k, v = self.to_kv(context).chunk(2, dim=-1)
            q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> (b h) n d', h=h), (q, k, v))
            sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
            if exists(mask):
                mask = rearrange(mask, 'b ... -> b (...)')
                max_neg_value = -torch.finfo(sim.dtype).max
                mask = repeat(mask, 'b j -> (b h) () j', h=h)
                sim.masked_fill_(~mask, max_neg_value)
            # attention, what we cannot get enough of
            attn = sim.softmax(dim=-1)
            attn = self.dropout(attn)
            out = einsum('b i j, b j d -> b i d', attn, v)
            out = rearrange(out, '(b h) n d -> b n (h d)', h=h)
            return self.to_out(out)

    class Perceiver(nn.Module):
        def __init__(self, *, num_freq_bands, depth, max_freq, input_channels=3, input_axis=2, num_latents=512,
                     latent_dim=512, cross_heads=1, latent_heads=8, cross_dim_head=64, latent_dim_head=64,
                     num_classes=1000, attn_dropout=0., ff_dropout=0., weight_tie_layers=False,
                     fourier_encode_data=True, self_per_cross_attn=1, final_classifier_head=True):
            super().__init__()
            self.input_axis = input_axis
            self.max_freq = max_freq
            self.num_freq_bands = num_freq_bands
            self.fourier_encode_data = fourier_encode_data
            fourier_channels = (input_axis * ((num_freq_bands * 2) + 1)) if fourier_encode_data else 0
            input_dim = fourier_channels + input_channels
            self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
            get_cross_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=cross_heads,
                                                                   dim_head=cross_dim_head, dropout=attn_dropout),
                                             context_dim=input_dim)
            get_cross_ff = lambda: PreNorm(latent_dim, FeedForward(latent_dim, dropout=ff_dropout))
            get_latent_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, heads=latent_heads,
                                                                    dim_head=latent_dim_head, dropout=attn_dropout))
            get_latent_ff = lambda: PreNorm(latent_dim, FeedForward(latent_dim, dropout=ff_dropout))
            get_cross_attn, get_cross_ff, get_latent_attn, get_latent_ff = map(
                cache_fn, (get_cross_attn, get_cross_ff, get_latent_attn, get_latent_ff))
            self.layers = nn.ModuleList([])
            for i in range(depth):
                should_cache = i > 0 and weight_tie_layers
                cache_args = {'_cache': should_cache}
                self_attns = nn.ModuleList([])
                for block_ind in range(self_per_cross_attn):
                    self_attns.append(nn.ModuleList([
                        get_latent_attn(**cache_args, key=block_ind),
                        get_latent_ff(**cache_args, key=block_ind)
                    ]))
                self.layers.append(nn.ModuleList([
                    get_cross_attn(**cache_args),
                    get_cross_ff(**cache_args),
                    self_attns
                ]))
            self.to_logits = nn.Sequential(
                Reduce('b n d -> b d', 'mean'),
                nn.LayerNorm(latent_dim),
                nn.Linear(latent_dim, num_classes)
            ) if final_classifier_head else nn.Identity()

        def forward(self, data, mask=None, return_embeddings=False):
            b, *axis, _, device, dtype = *data.shape, data.device, data.dtype
            assert len(axis) == self.input_axis, 'input data must have the right number of axis'
            if self.fourier_encode_data:
                # calculate fourier encoded positions in the range of [-1, 1], for all axis
                axis_pos = list(map(lambda size: torch.linspace(-1., 1., steps=size, device=device, dtype=dtype), axis))
                pos = torch.stack(torch.meshgrid(*axis_pos, indexing='ij'), dim=-1)
                enc_pos = fourier_encode(pos, self.max_freq, self.num_freq_bands)
                enc_pos = rearrange(enc_pos, '... n d -> ... (n d)')
                enc_pos = repeat(enc_pos, '... -> b ...', b=b)
                data = torch.cat((data, enc_pos), dim=-1)
            # concat to channels of data and flatten axis
            data = rearrange(data, 'b ... d -> b (...) d')
            x = repeat(self.latents, 'n d -> b n d', b=b)
            # layers
            for cross_attn, cross_ff, self_attns in self.layers:
                x = cross_attn(x, context=data, mask=mask) + x
                x = cross_ff(x) + x
                for self_attn, self_ff in self_attns:
                    x = self_attn(x) + x
                    x = self_ff(x) + x
            # allow for fetching embeddings
            if return_embeddings:
                return x
            # to logits
            return self.to_logits(x)

    # ---- perceiver_io.py ----
    def dropout_seq(seq, mask, dropout):
        b, n, *_, device = *seq.shape, seq.device
        logits = torch.randn(b, n, device=device)
        if exists(mask):
            mask_value = -torch.finfo(logits.dtype).max
            logits = logits.masked_fill(~mask, mask_value)
        keep_prob = 1. - dropout
        num_keep = max(1, int(keep_prob * n))
        keep_indices = logits.topk(num_keep, dim=1).indices
        batch_indices = torch.arange(b, device=device)
        batch_indices = rearrange(batch_indices, 'b -> b 1')
        seq = seq[batch_indices, keep_indices]
        if exists(mask):
            seq_counts = mask.sum(dim=-1)
            seq_keep_counts = torch.ceil(seq_counts * keep_prob).int()
            keep_mask = torch.arange(num_keep, device=device) < rearrange(seq_keep_counts, 'b -> b 1')
            mask = mask[batch_indices, keep_indices] & keep_mask
        return seq, mask

    class PerceiverIO(nn.Module):
        def __init__(self, *, depth, dim, queries_dim, logits_dim=None, num_latents=512, latent_dim=512,
                     cross_heads=1, latent_heads=8, cross_dim_head=64, latent_dim_head=64, weight_tie_layers=False,
                     decoder_ff=False, seq_dropout_prob=0.):
            super().__init__()
            self.seq_dropout_prob = seq_dropout_prob
            self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
            self.cross_attend_blocks = nn.ModuleList([
                PreNorm(latent_dim, Attention(latent_dim, dim, heads=cross_heads, dim_head=cross_dim_head),
                        context_dim=dim),
                PreNorm(latent_dim, FeedForward(latent_dim))
            ])
            get_latent_attn = lambda: PreNorm(latent_dim, Attention(latent_dim, heads=latent_heads,
                                                                    dim_head=latent_dim_head))
            get_latent_ff = lambda: PreNorm(latent_dim, FeedForward(latent_dim))
            get_latent_attn, get_latent_ff = map(cache_fn, (get_latent_attn, get_latent_ff))
            self.layers = nn.ModuleList([])
            cache_args = {'_cache': weight_tie_layers}
            for i in range(depth):
                self.layers.append(nn.ModuleList([
                    get_latent_attn(**cache_args),
                    get_latent_ff(**cache_args)
                ]))
            self.decoder_cross_attn = PreNorm(queries_dim, Attention(queries_dim, latent_dim, heads=cross_heads,
                                                                     dim_head=cross_dim_head), context_dim=latent_dim)
            self.decoder_ff = PreNorm(queries_dim, FeedForward(queries_dim)) if decoder_ff else None
            self.to_logits = nn.Linear(queries_dim, logits_dim) if exists(logits_dim) else nn.Identity()

        def forward(self, data, mask=None, queries=None):
            b, *_, device = *data.shape, data.device
            x = repeat(self.latents, 'n d -> b n d', b=b)
            cross_attn, cross_ff = self.cross_attend_blocks
            # structured dropout, as done in perceiver AR
            if self.training and self.seq_dropout_prob > 0.:
                data, mask = dropout_seq(data, mask, self.seq_dropout_prob)
            # cross attention only happens once for Perceiver IO
            x = cross_attn(x, context=data, mask=mask) + x
            x = cross_ff(x) + x
            # layers
            for self_attn, self_ff in self.layers:
                x = self_attn(x) + x
                x = self_ff(x) + x
            if not exists(queries):
                return x
            # make sure queries contains batch dimension
            if queries.ndim == 2:
                queries = repeat(queries, 'n d -> b n d', b=b)
            # cross attend from decoder queries to latents
            latents = self.decoder_cross_attn(queries, context=x)
            # optional decoder feedforward
            if exists(self.decoder_ff):
                latents = latents + self.decoder_ff(latents)
            # final linear out
            return self.to_logits(latents)

    class PerceiverLM(nn.Module):
        def __init__(self, *, dim, num_tokens, max_seq_len, **kwargs):
            super().__init__()
            self.token_emb = nn.Embedding(num_tokens, dim)
            self.pos_emb = nn.Embedding(max_seq_len, dim)
            self.perceiver_io = PerceiverIO(dim=dim, queries_dim=dim, logits_dim=num_tokens, **kwargs)

        def forward(self, x, mask=None):
            n, device = x.shape[1], x.device
            x = self.token_emb(x)
            pos_emb = self.pos_emb(torch.arange(n, device=device))
            pos_emb = rearrange(pos_emb, 'n d -> () n d')
            x = x + pos_emb
            logits = self.perceiver_io(x, mask=mask, queries=x)
            return logits

    return Perceiver, PerceiverLM


def perceiver_classifier(torch, init=None, steps=3, weight_tie_layers=False, masked=False):
    Perceiver, _ = perceiver_modules(torch)
    torch.manual_seed(0)
    model = Perceiver(
        input_channels=3,          # number of channels for each token of the input
        input_axis=2,              # number of axis for input data (2 for images, 3 for video)
        num_freq_bands=6,          # number of freq bands, with original value (2 * K + 1)
        max_freq=10.,              # maximum frequency, hyperparameter depending on how fine the data is
        depth=3,                   # depth of net
        num_latents=8,             # number of latents, or induced set points, or centroids
        latent_dim=16,             # latent dimension
        cross_heads=1,             # number of heads for cross attention. paper said 1
        latent_heads=2,            # number of heads for latent self attention, 8
        cross_dim_head=8,          # number of dimensions per cross attention head
        latent_dim_head=8,         # number of dimensions per latent self attention head
        num_classes=5,             # output number of classes
        attn_dropout=0.,
        ff_dropout=0.,
        weight_tie_layers=weight_tie_layers,  # whether to weight tie layers (optional, as indicated in the diagram)
        fourier_encode_data=True,  # whether to auto-fourier encode the data, using the input_axis given
        self_per_cross_attn=2      # number of self attention blocks per cross attention
    )
    result = {"n_params": sum(p.numel() for p in model.parameters()), "state_keys": sorted(model.state_dict())}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(0)
    img = torch.tensor(rng.standard_normal((2, 6, 5, 3)).astype(np.float32))  # 1 imagenet-like image, channels last
    labels = torch.tensor(rng.integers(0, 5, 2))
    mask = None
    if masked:
        mask = torch.tensor(rng.random((2, 6, 5)) > 0.3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    result["losses"] = fit(opt, lambda: torch.nn.functional.cross_entropy(model(img, mask=mask), labels), steps)
    result["latents_grad"] = numpy_of(model.latents.grad)
    with torch.no_grad():
        result["embeddings"] = numpy_of(model(img, mask=mask, return_embeddings=True))
    return result


def perceiver_lm(torch, init=None, steps=3, seq_dropout_prob=0.):
    _, PerceiverLM = perceiver_modules(torch)
    torch.manual_seed(0)
    model = PerceiverLM(
        num_tokens=20,          # number of tokens
        dim=16,                 # dimension of sequence to be encoded
        depth=2,                # depth of net
        max_seq_len=12,         # maximum sequence length
        num_latents=6,          # number of latents, or induced set points, or centroids
        latent_dim=16,          # latent dimension
        cross_heads=1,          # number of heads for cross attention. paper said 1
        latent_heads=2,         # number of heads for latent self attention, 8
        cross_dim_head=8,       # number of dimensions per cross attention head
        latent_dim_head=8,      # number of dimensions per latent self attention head
        weight_tie_layers=False,  # whether to weight tie layers (optional, as indicated in the diagram)
        seq_dropout_prob=seq_dropout_prob,
    )
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    seq = torch.tensor(rng.integers(0, 20, (2, 12)))
    mask = torch.ones(2, 12).bool()
    mask[1, 9:] = False
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    if seq_dropout_prob:
        # the structured dropout keeps a subset of the positions: a representation per query stays
        logits = model.perceiver_io(model.token_emb(seq), mask=mask)
        result["dropped_latents"] = numpy_of(logits)
        model.eval()

    def loss_fn():
        logits = model(seq, mask=mask)  # (1, 512, 20000)
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), seq)

    result["losses"] = fit(opt, loss_fn, steps)
    result["emb_grad"] = numpy_of(model.token_emb.weight.grad)
    return result


@pytest.mark.parametrize("weight_tie_layers", [False, True])
def test_perceiver_classifier(weight_tie_layers):
    ref, got = compare_program(perceiver_classifier, weight_tie_layers=weight_tie_layers)
    assert ref["losses"][-1] < ref["losses"][0]


def test_perceiver_classifier_with_padding_mask():
    compare_program(perceiver_classifier, masked=True)


@pytest.mark.parametrize("seq_dropout_prob", [0., 0.25])
def test_perceiver_io_language_model(seq_dropout_prob):
    compare_program(perceiver_lm, seq_dropout_prob=seq_dropout_prob)
