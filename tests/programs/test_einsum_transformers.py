"""Attention written with torch.einsum, as two much-copied sources write it. Aladdin Persson's
"Transformer from scratch": SelfAttention with torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
(operands passed as one list), masked_fill(mask == 0, float("-1e20")), softmax of energy /
(embed_size ** (1 / 2)) over dim=3, einsum("nhql,nlhd->nqhd", ...), positions from torch.arange(0,
seq_length).expand(N, seq_length), src and trg masks from unsqueeze(1).unsqueeze(2) and
torch.tril(torch.ones(...)).expand(N, 1, trg_len, trg_len); its __main__ check, then training on a
copy task. And a lucidrains-style Perceiver (einops' rearrange/repeat written as reshape, permute
and expand): einsum equations with spaces ('b i d, b j d -> b i j'), a mask filled in place with
-torch.finfo(sim.dtype).max, exists/default helpers, PreNorm with a context norm, GEGLU, Fourier
features indexed by scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)], torch.meshgrid(...,
indexing='ij'), learned latents cross-attending to the data; AdamW."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def aladdin_transformer(torch, init=None, steps=6, batch=8, seq=7):
    nn = torch.nn
    torch.manual_seed(0)

    class SelfAttention(nn.Module):
        def __init__(self, embed_size, heads):
            super(SelfAttention, self).__init__()
            self.embed_size = embed_size
            self.heads = heads
            self.head_dim = embed_size // heads
            assert (self.head_dim * heads == embed_size), "Embedding size needs to be divisible by heads"
            self.values = nn.Linear(embed_size, embed_size)
            self.keys = nn.Linear(embed_size, embed_size)
            self.queries = nn.Linear(embed_size, embed_size)
            self.fc_out = nn.Linear(embed_size, embed_size)

        def forward(self, values, keys, query, mask):
            # Get number of training examples
            N = query.shape[0]
            value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
            values = self.values(values)  # (N, value_len, embed_size)
            keys = self.keys(keys)  # (N, key_len, embed_size)
            queries = self.queries(query)  # (N, query_len, embed_size)
            # Split the embedding into self.heads different pieces
            values = values.reshape(N, value_len, self.heads, self.head_dim)
            keys = keys.reshape(N, key_len, self.heads, self.head_dim)
            queries = queries.reshape(N, query_len, self.heads, self.head_dim)
            # Einsum does matrix mult. for query*keys for each training example
            # with every other training example, don't be confused by einsum
            # it's just how I like doing matrix multiplication & bmm
            energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
            # queries shape: (N, query_len, heads, heads_dim),
            # keys shape: (N, key_len, heads, heads_dim)
            # energy: (N, heads, query_len, key_len)
            # Mask padded indices so their weights become 0
            if mask is not None:
                energy = energy.masked_fill(mask == 0, float("-1e20"))
            # Normalize energy values similarly to seq2seq + attention
            # so that they sum to 1. Also divide by scaling factor for
            # better stability
            attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
            # attention shape: (N, heads, query_len, key_len)
            out = torch.einsum("nhql,nlhd->nqhd", [attention, values]).reshape(
                N, query_len, self.heads * self.head_dim
            )
            # attention shape: (N, heads, query_len, key_len)
            # values shape: (N, value_len, heads, heads_dim)
            # out after matrix multiply: (N, query_len, heads, head_dim), then
            # we reshape and flatten the last two dimensions.
            out = self.fc_out(out)
            # Linear layer doesn't modify the shape, final shape will be
            # (N, query_len, embed_size)
            return out

    class TransformerBlock(nn.Module):
        def __init__(self, embed_size, heads, dropout, forward_expansion):
            super(TransformerBlock, self).__init__()
            self.attention = SelfAttention(embed_size, heads)
            self.norm1 = nn.LayerNorm(embed_size)
            self.norm2 = nn.LayerNorm(embed_size)
            self.feed_forward = nn.Sequential(
                nn.Linear(embed_size, forward_expansion * embed_size),
                nn.ReLU(),
                nn.Linear(forward_expansion * embed_size, embed_size),
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, value, key, query, mask):
            attention = self.attention(value, key, query, mask)
            # Add skip connection, run through normalization and finally dropout
            x = self.dropout(self.norm1(attention + query))
            forward = self.feed_forward(x)
            out = self.dropout(self.norm2(forward + x))
            return out

    class Encoder(nn.Module):
        def __init__(self, src_vocab_size, embed_size, num_layers, heads, device, forward_expansion, dropout,
                     max_length):
            super(Encoder, self).__init__()
            self.embed_size = embed_size
            self.device = device
            self.word_embedding = nn.Embedding(src_vocab_size, embed_size)
            self.position_embedding = nn.Embedding(max_length, embed_size)
            self.layers = nn.ModuleList(
                [
                    TransformerBlock(
                        embed_size,
                        heads,
                        dropout=dropout,
                        forward_expansion=forward_expansion,
                    )
                    for _ in range(num_layers)
                ]
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, mask):
            N, seq_length = x.shape
            positions = torch.arange(0, seq_length).expand(N, seq_length).to(self.device)
            out = self.dropout(
                (self.word_embedding(x) + self.position_embedding(positions))
            )
            # In the Encoder the query, key, value are all the same, it's in the
            # decoder this will change. This might look a bit odd in this case.
            for layer in self.layers:
                out = layer(out, out, out, mask)
            return out

    class DecoderBlock(nn.Module):
        def __init__(self, embed_size, heads, forward_expansion, dropout, device):
            super(DecoderBlock, self).__init__()
            self.norm = nn.LayerNorm(embed_size)
            self.attention = SelfAttention(embed_size, heads=heads)
            self.transformer_block = TransformerBlock(
                embed_size, heads, dropout, forward_expansion
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, value, key, src_mask, trg_mask):
            attention = self.attention(x, x, x, trg_mask)
            query = self.dropout(self.norm(attention + x))
            out = self.transformer_block(value, key, query, src_mask)
            return out

    class Decoder(nn.Module):
        def __init__(self, trg_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout, device,
                     max_length):
            super(Decoder, self).__init__()
            self.device = device
            self.word_embedding = nn.Embedding(trg_vocab_size, embed_size)
            self.position_embedding = nn.Embedding(max_length, embed_size)
            self.layers = nn.ModuleList(
                [
                    DecoderBlock(embed_size, heads, forward_expansion, dropout, device)
                    for _ in range(num_layers)
                ]
            )
            self.fc_out = nn.Linear(embed_size, trg_vocab_size)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, enc_out, src_mask, trg_mask):
            N, seq_length = x.shape
            positions = torch.arange(0, seq_length).expand(N, seq_length).to(self.device)
            x = self.dropout((self.word_embedding(x) + self.position_embedding(positions)))
            for layer in self.layers:
                x = layer(x, enc_out, enc_out, src_mask, trg_mask)
            out = self.fc_out(x)
            return out

    class Transformer(nn.Module):
        def __init__(self, src_vocab_size, trg_vocab_size, src_pad_idx, trg_pad_idx, embed_size=512, num_layers=6,
                     forward_expansion=4, heads=8, dropout=0, device="cpu", max_length=100):
            super(Transformer, self).__init__()
            self.encoder = Encoder(src_vocab_size, embed_size, num_layers, heads, device, forward_expansion,
                                   dropout, max_length)
            self.decoder = Decoder(trg_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout,
                                   device, max_length)
            self.src_pad_idx = src_pad_idx
            self.trg_pad_idx = trg_pad_idx
            self.device = device

        def make_src_mask(self, src):
            src_mask = (src != self.src_pad_idx).unsqueeze(1).unsqueeze(2)
            # (N, 1, 1, src_len)
            return src_mask.to(self.device)

        def make_trg_mask(self, trg):
            N, trg_len = trg.shape
            trg_mask = torch.tril(torch.ones((trg_len, trg_len))).expand(
                N, 1, trg_len, trg_len
            )
            return trg_mask.to(self.device)

        def forward(self, src, trg):
            src_mask = self.make_src_mask(src)
            trg_mask = self.make_trg_mask(trg)
            enc_src = self.encoder(src, src_mask)
            out = self.decoder(trg, enc_src, src_mask, trg_mask)
            return out

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.tensor([[1, 5, 6, 4, 3, 9, 5, 2, 0], [1, 8, 7, 3, 4, 5, 6, 7, 2]]).to(device)
    trg = torch.tensor([[1, 7, 4, 3, 5, 9, 2, 0], [1, 5, 6, 2, 4, 7, 6, 2]]).to(device)
    src_pad_idx = 0
    trg_pad_idx = 0
    src_vocab_size = 10
    trg_vocab_size = 10
    model = Transformer(src_vocab_size, trg_vocab_size, src_pad_idx, trg_pad_idx, embed_size=32, num_layers=2,
                        heads=4, device=device).to(device)
    result = {}
    start_from(torch, model, init, result)
    out = model(x, trg[:, :-1])
    result["main"] = (tuple(out.shape), numpy_of(out))

    # train it to copy: BOS=1, EOS=2, PAD=0, tokens 3..9
    rng = np.random.default_rng(0)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    criterion = nn.CrossEntropyLoss(ignore_index=trg_pad_idx)
    losses = []
    for step in range(steps):
        lengths = rng.integers(2, seq - 1, batch)
        src = np.zeros((batch, seq), dtype=np.int64)
        for i, n in enumerate(lengths):
            src[i, 0], src[i, 1:n + 1], src[i, n + 1] = 1, rng.integers(3, 10, n), 2
        src = torch.from_numpy(src)
        output = model(src, src[:, :-1])
        output = output.reshape(-1, output.shape[2])
        target = src[:, 1:].reshape(-1)
        optimizer.zero_grad()
        loss = criterion(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1)
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def rearrange_heads(t, h):
    """einops' rearrange(t, 'b n (h d) -> (b h) n d', h=h)."""
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3).reshape(b * h, n, hd // h)


def merge_heads(t, h):
    """einops' rearrange(t, '(b h) n d -> b n (h d)', h=h)."""
    bh, n, d = t.shape
    return t.reshape(bh // h, h, n, d).permute(0, 2, 1, 3).reshape(bh // h, n, h * d)


def perceiver(torch, init=None, steps=5, batch=6, size=8, num_latents=8, latent_dim=32, depth=2):
    nn, F = torch.nn, torch.nn.functional
    einsum = torch.einsum
    torch.manual_seed(0)

    def exists(val):
        return val is not None

    def default(val, d):
        return val if exists(val) else d

    def fourier_encode(x, max_freq, num_bands=4):
        x = x.unsqueeze(-1)
        device, dtype, orig_x = x.device, x.dtype, x
        scales = torch.linspace(1., max_freq / 2, num_bands, device=device, dtype=dtype)
        scales = scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)]
        x = x * scales * math.pi
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
            q, k, v = map(lambda t: rearrange_heads(t, h), (q, k, v))
            sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
            if exists(mask):
                mask = mask.reshape(mask.shape[0], -1)  # rearrange(mask, 'b ... -> b (...)')
                max_neg_value = -torch.finfo(sim.dtype).max
                mask = mask.repeat_interleave(h, dim=0)[:, None, :]  # repeat(mask, 'b j -> (b h) () j', h=h)
                sim.masked_fill_(~mask, max_neg_value)
            # attention, what we cannot get enough of
            attn = sim.softmax(dim=-1)
            attn = self.dropout(attn)
            out = einsum('b i j, b j d -> b i d', attn, v)
            out = merge_heads(out, h)
            return self.to_out(out)

    class Perceiver(nn.Module):
        def __init__(self, *, num_freq_bands, depth, max_freq, input_channels=3, input_axis=2,
                     num_latents=512, latent_dim=512, cross_heads=1, latent_heads=8, cross_dim_head=64,
                     latent_dim_head=64, num_classes=1000):
            super().__init__()
            self.input_axis = input_axis
            self.max_freq = max_freq
            self.num_freq_bands = num_freq_bands
            fourier_channels = (input_axis * ((num_freq_bands * 2) + 1))
            input_dim = fourier_channels + input_channels
            self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
            self.layers = nn.ModuleList([])
            for i in range(depth):
                self.layers.append(nn.ModuleList([
                    PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=cross_heads, dim_head=cross_dim_head),
                            context_dim=input_dim),
                    PreNorm(latent_dim, FeedForward(latent_dim)),
                    nn.ModuleList([nn.ModuleList([
                        PreNorm(latent_dim, Attention(latent_dim, heads=latent_heads, dim_head=latent_dim_head)),
                        PreNorm(latent_dim, FeedForward(latent_dim))])])
                ]))
            self.to_logits = nn.Sequential(nn.LayerNorm(latent_dim), nn.Linear(latent_dim, num_classes))

        def forward(self, data, mask=None, return_embeddings=False):
            b, *axis, _, device, dtype = *data.shape, data.device, data.dtype
            assert len(axis) == self.input_axis, 'input data must have the right number of axis'
            # calculate fourier encoded positions in the range of [-1, 1], for all axis
            axis_pos = list(map(lambda size: torch.linspace(-1., 1., steps=size, device=device, dtype=dtype), axis))
            pos = torch.stack(torch.meshgrid(*axis_pos, indexing='ij'), dim=-1)
            enc_pos = fourier_encode(pos, self.max_freq, self.num_freq_bands)
            enc_pos = enc_pos.reshape(*enc_pos.shape[:-2], -1)  # rearrange(enc_pos, '... n d -> ... (n d)')
            enc_pos = enc_pos.expand(b, *enc_pos.shape)  # repeat(enc_pos, '... -> b ...', b=b)
            data = torch.cat((data, enc_pos), dim=-1)
            # concat to channels of data and flatten axis
            data = data.reshape(b, -1, data.shape[-1])  # rearrange(data, 'b ... d -> b (...) d')
            x = self.latents.expand(b, *self.latents.shape)  # repeat(self.latents, 'n d -> b n d', b=b)
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
            return self.to_logits(x.mean(dim=-2))  # Reduce('b n d -> b d', 'mean')

    model = Perceiver(num_freq_bands=4, depth=depth, max_freq=8., input_channels=1, input_axis=2,
                      num_latents=num_latents, latent_dim=latent_dim, cross_heads=1, latent_heads=4, cross_dim_head=16,
                      latent_dim_head=8, num_classes=3)
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        labels = rng.integers(0, 3, batch)
        img = rng.normal(0, 0.3, (batch, size, size, 1))
        for i, c in enumerate(labels):
            img[i, :, :, 0] += [np.eye(size), np.eye(size)[::-1], np.ones((size, size)) * 0.5][c]
        data = torch.tensor(img, dtype=torch.float32)
        mask = torch.from_numpy(rng.random((batch, size, size)) > 0.1)
        logits = model(data, mask=mask)
        loss = F.cross_entropy(logits, torch.from_numpy(labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        embeddings = model(data, return_embeddings=True)
    result.update(losses=losses, embeddings=numpy_of(embeddings),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_transformer_from_scratch_with_einsum():
    ref, got = compare_program(aladdin_transformer, rtol=1e-3, atol=1e-4)
    assert ref["main"][0] == (2, 7, 10)


def test_perceiver_with_einsum_and_masks():
    ref, got = compare_program(perceiver, rtol=1e-3, atol=1e-4)
    assert ref["embeddings"].shape == (6, 8, 32)
