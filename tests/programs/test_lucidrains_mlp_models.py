"""Three of lucidrains' small model repositories as their modules are written, trained a few steps
on local data: mlp-mixer-pytorch (MLPMixer as an nn.Sequential built by a function: einops
Rearrange of patches, PreNormResidual, FeedForward whose dense layer is functools.partial(
nn.Conv1d, kernel_size=1) for token mixing and nn.Linear for channel mixing, Reduce('b n c -> b c',
'mean')); g-mlp-pytorch (gMLP as a causal language model: Residual(PreNorm(PreShiftTokens(
gMLPBlock))), token shifts by F.pad(t, (0, 0, amount, -amount)) with a negative pad that crops,
x.split(feats_per_shift, dim=-1), the SpatialGatingUnit with nn.init.uniform_ of its (heads, n, n)
weight, a causal mask from torch.ones(...).triu_(1).bool() and masked_fill, einsum('b h n d, h m n
-> b h m d'), the bias rearranged 'h n -> () h n ()', and the tiny attention branch with
sim.masked_fill_(mask[None, ...], -torch.finfo(q.dtype).max)); vit-pytorch's simple_vit
(posemb_sincos_2d through torch.meshgrid(..., indexing="ij"), temperature ** omega, pe.type(dtype),
x += self.pos_embedding.to(device, dtype=x.dtype), q, k, v by chunk and map(lambda t: rearrange(...)),
mean pooling). The einops layers come from einops.layers.<library> (torch or minitorch), as
test_vit_einops does; weights from torch.manual_seed (both libraries draw PyTorch's streams)."""
import importlib
from functools import partial

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of

einops = pytest.importorskip("einops")


def images(n=8, size=16, channels=3, classes=4):
    rng = np.random.default_rng(0)
    y = rng.integers(0, classes, n)
    x = rng.normal(0, 0.5, (n, channels, size, size)).astype(np.float32)
    for i, c in enumerate(y):
        x[i, :, 2 * c:2 * c + 3, :] += 1.0
    return x, y


def mlp_mixer(torch, init=None):
    nn = torch.nn
    layers = importlib.import_module("einops.layers." + torch.__name__)
    Rearrange, Reduce = layers.Rearrange, layers.Reduce
    torch.manual_seed(0)

    def pair(x):
        return x if isinstance(x, tuple) else (x, x)

    class PreNormResidual(nn.Module):
        def __init__(self, dim, fn):
            super().__init__()
            self.fn = fn
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return self.fn(self.norm(x)) + x

    def FeedForward(dim, expansion_factor=4, dropout=0., dense=nn.Linear):
        inner_dim = int(dim * expansion_factor)
        return nn.Sequential(
            dense(dim, inner_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            dense(inner_dim, dim),
            nn.Dropout(dropout)
        )

    def MLPMixer(*, image_size, channels, patch_size, dim, depth, num_classes, expansion_factor=4,
                 expansion_factor_token=0.5, dropout=0.):
        image_h, image_w = pair(image_size)
        assert (image_h % patch_size) == 0 and (image_w % patch_size) == 0, 'image must be divisible by patch size'
        num_patches = (image_h // patch_size) * (image_w // patch_size)
        chan_first, chan_last = partial(nn.Conv1d, kernel_size=1), nn.Linear

        return nn.Sequential(
            Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch_size, p2=patch_size),
            nn.Linear((patch_size ** 2) * channels, dim),
            *[nn.Sequential(
                PreNormResidual(dim, FeedForward(num_patches, expansion_factor, dropout, chan_first)),
                PreNormResidual(dim, FeedForward(dim, expansion_factor_token, dropout, chan_last))
            ) for _ in range(depth)],
            nn.LayerNorm(dim),
            Reduce('b n c -> b c', 'mean'),
            nn.Linear(dim, num_classes)
        )

    model = MLPMixer(image_size=16, channels=3, patch_size=4, dim=32, depth=2, num_classes=4, dropout=0.1)
    x, y = images()
    img, labels = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        pred = model(img)  # (8, 4)
        loss = torch.nn.functional.cross_entropy(pred, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(img)
    return {"losses": losses, "eval": numpy_of(out), "shape": list(pred.shape)}


def g_mlp(torch, init=None):
    from einops import rearrange

    nn = torch.nn
    F = torch.nn.functional
    einsum = torch.einsum
    torch.manual_seed(0)

    def exists(val):
        return val is not None

    def dropout_layers(layers, prob_survival):
        if prob_survival == 1:
            return layers
        raise NotImplementedError  # the repository draws by random.uniform; not used here

    def shift(t, amount, mask=None):
        if amount == 0:
            return t
        return F.pad(t, (0, 0, amount, -amount), value=0.)

    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            return self.fn(x) + x

    class PreShiftTokens(nn.Module):
        def __init__(self, shifts, fn):
            super().__init__()
            self.fn = fn
            self.shifts = tuple(shifts)

        def forward(self, x, **kwargs):
            if self.shifts == (0,):
                return self.fn(x, **kwargs)
            shifts = self.shifts
            segments = len(shifts)
            feats_per_shift = x.shape[-1] // segments
            splitted = x.split(feats_per_shift, dim=-1)
            segments_to_shift, rest = splitted[:segments], splitted[segments:]
            segments_to_shift = list(map(lambda args: shift(*args), zip(segments_to_shift, shifts)))
            x = torch.cat((*segments_to_shift, *rest), dim=-1)
            return self.fn(x, **kwargs)

    class PreNorm(nn.Module):
        def __init__(self, dim, fn):
            super().__init__()
            self.fn = fn
            self.norm = nn.LayerNorm(dim)

        def forward(self, x, **kwargs):
            x = self.norm(x)
            return self.fn(x, **kwargs)

    class Attention(nn.Module):
        def __init__(self, dim_in, dim_out, dim_inner, causal=False):
            super().__init__()
            self.scale = dim_inner ** -0.5
            self.causal = causal
            self.to_qkv = nn.Linear(dim_in, dim_inner * 3, bias=False)
            self.to_out = nn.Linear(dim_inner, dim_out)

        def forward(self, x):
            device = x.device
            q, k, v = self.to_qkv(x).chunk(3, dim=-1)
            sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
            if self.causal:
                mask = torch.ones(sim.shape[-2:], device=device).triu(1).bool()
                sim.masked_fill_(mask[None, ...], -torch.finfo(q.dtype).max)
            attn = sim.softmax(dim=-1)
            out = einsum('b i j, b j d -> b i d', attn, v)
            return self.to_out(out)

    class SpatialGatingUnit(nn.Module):
        def __init__(self, dim, dim_seq, causal=False, act=nn.Identity(), heads=1, init_eps=1e-3):
            super().__init__()
            dim_out = dim // 2
            self.heads = heads
            self.causal = causal
            self.norm = nn.LayerNorm(dim_out)
            self.act = act
            # parameters
            shape = (heads, dim_seq, dim_seq)
            weight = torch.zeros(shape)
            self.weight = nn.Parameter(weight)
            init_eps /= dim_seq
            nn.init.uniform_(self.weight, -init_eps, init_eps)
            self.bias = nn.Parameter(torch.ones(heads, dim_seq))

        def forward(self, x, gate_res=None):
            device, n, h = x.device, x.shape[1], self.heads
            res, gate = x.chunk(2, dim=-1)
            gate = self.norm(gate)
            weight, bias = self.weight, self.bias
            if self.causal:
                weight, bias = weight[:, :n, :n], bias[:, :n]
                mask = torch.ones(weight.shape[-2:], device=device).triu_(1).bool()
                mask = rearrange(mask, 'i j -> () i j')
                weight = weight.masked_fill(mask, 0.)
            gate = rearrange(gate, 'b n (h d) -> b h n d', h=h)
            gate = einsum('b h n d, h m n -> b h m d', gate, weight)
            gate = gate + rearrange(bias, 'h n -> () h n ()')
            gate = rearrange(gate, 'b h n d -> b n (h d)')
            if exists(gate_res):
                gate = gate + gate_res
            return self.act(gate) * res

    class gMLPBlock(nn.Module):
        def __init__(self, *, dim, dim_ff, seq_len, heads=1, attn_dim=None, causal=False, act=nn.Identity()):
            super().__init__()
            self.proj_in = nn.Sequential(
                nn.Linear(dim, dim_ff),
                nn.GELU()
            )
            self.attn = Attention(dim, dim_ff // 2, attn_dim, causal) if exists(attn_dim) else None
            self.sgu = SpatialGatingUnit(dim_ff, seq_len, causal, act, heads)
            self.proj_out = nn.Linear(dim_ff // 2, dim)

        def forward(self, x):
            gate_res = self.attn(x) if exists(self.attn) else None
            x = self.proj_in(x)
            x = self.sgu(x, gate_res=gate_res)
            x = self.proj_out(x)
            return x

    class gMLP(nn.Module):
        def __init__(self, *, num_tokens=None, dim, depth, seq_len, heads=1, ff_mult=4, attn_dim=None,
                     prob_survival=1., causal=False, shift_tokens=0, act=nn.Identity()):
            super().__init__()
            assert (dim % heads) == 0, 'dimension must be divisible by number of heads'
            dim_ff = dim * ff_mult
            self.seq_len = seq_len
            self.prob_survival = prob_survival
            self.to_embed = nn.Embedding(num_tokens, dim) if exists(num_tokens) else nn.Identity()
            token_shifts = tuple(range(0 if causal else -shift_tokens, shift_tokens + 1))
            self.layers = nn.ModuleList([Residual(PreNorm(dim, PreShiftTokens(token_shifts, gMLPBlock(
                dim=dim, heads=heads, dim_ff=dim_ff, seq_len=seq_len, attn_dim=attn_dim, causal=causal,
                act=act)))) for i in range(depth)])
            self.to_logits = nn.Sequential(
                nn.LayerNorm(dim),
                nn.Linear(dim, num_tokens)
            ) if exists(num_tokens) else nn.Identity()

        def forward(self, x):
            x = self.to_embed(x)
            layers = self.layers if not self.training else dropout_layers(self.layers, self.prob_survival)
            out = nn.Sequential(*layers)(x)
            return self.to_logits(out)

    model = gMLP(num_tokens=20, dim=16, depth=2, seq_len=12, heads=2, causal=True, shift_tokens=1, attn_dim=8,
                 act=nn.Tanh())
    rng = np.random.default_rng(1)
    seq = torch.from_numpy(rng.integers(0, 20, (4, 13)))
    x, y = seq[:, :-1], seq[:, 1:]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(3):
        logits = model(x)  # (4, 12, 20)
        loss = F.cross_entropy(rearrange(logits, 'b n c -> b c n'), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def simple_vit(torch, init=None):
    from einops import rearrange

    nn = torch.nn
    Rearrange = importlib.import_module("einops.layers." + torch.__name__).Rearrange
    torch.manual_seed(0)

    def pair(t):
        return t if isinstance(t, tuple) else (t, t)

    def posemb_sincos_2d(h, w, dim, temperature: int = 10000, dtype=torch.float32):
        y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        assert (dim % 4) == 0, "feature dimension must be multiple of 4 for sincos emb"
        omega = torch.arange(dim // 4) / (dim // 4 - 1)
        omega = 1.0 / (temperature ** omega)

        y = y.flatten()[:, None] * omega[None, :]
        x = x.flatten()[:, None] * omega[None, :]
        pe = torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)
        return pe.type(dtype)

    class FeedForward(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.net = nn.Sequential(
                nn.LayerNorm(dim),
                nn.Linear(dim, hidden_dim),
                nn.GELU(),
                nn.Linear(hidden_dim, dim),
            )

        def forward(self, x):
            return self.net(x)

    class Attention(nn.Module):
        def __init__(self, dim, heads=8, dim_head=64):
            super().__init__()
            inner_dim = dim_head * heads
            self.heads = heads
            self.scale = dim_head ** -0.5
            self.norm = nn.LayerNorm(dim)
            self.attend = nn.Softmax(dim=-1)
            self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
            self.to_out = nn.Linear(inner_dim, dim, bias=False)

        def forward(self, x):
            x = self.norm(x)
            qkv = self.to_qkv(x).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)
            dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            attn = self.attend(dots)
            out = torch.matmul(attn, v)
            out = rearrange(out, 'b h n d -> b n (h d)')
            return self.to_out(out)

    class Transformer(nn.Module):
        def __init__(self, dim, depth, heads, dim_head, mlp_dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.layers = nn.ModuleList([])
            for _ in range(depth):
                self.layers.append(nn.ModuleList([
                    Attention(dim, heads=heads, dim_head=dim_head),
                    FeedForward(dim, mlp_dim)
                ]))

        def forward(self, x):
            for attn, ff in self.layers:
                x = attn(x) + x
                x = ff(x) + x
            return self.norm(x)

    class SimpleViT(nn.Module):
        def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels=3,
                     dim_head=64):
            super().__init__()
            image_height, image_width = pair(image_size)
            patch_height, patch_width = pair(patch_size)
            assert image_height % patch_height == 0 and image_width % patch_width == 0, \
                'Image dimensions must be divisible by the patch size.'
            patch_dim = channels * patch_height * patch_width
            self.to_patch_embedding = nn.Sequential(
                Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch_height, p2=patch_width),
                nn.LayerNorm(patch_dim),
                nn.Linear(patch_dim, dim),
                nn.LayerNorm(dim),
            )
            self.pos_embedding = posemb_sincos_2d(
                h=image_height // patch_height,
                w=image_width // patch_width,
                dim=dim,
            )
            self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)
            self.pool = "mean"
            self.to_latent = nn.Identity()
            self.linear_head = nn.Linear(dim, num_classes)

        def forward(self, img):
            device = img.device
            x = self.to_patch_embedding(img)
            x += self.pos_embedding.to(device, dtype=x.dtype)
            x = self.transformer(x)
            x = x.mean(dim=1)
            x = self.to_latent(x)
            return self.linear_head(x)

    v = SimpleViT(image_size=16, patch_size=4, num_classes=4, dim=32, depth=2, heads=4, mlp_dim=64, dim_head=8)
    x, y = images()
    img, labels = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(v.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        preds = v(img)  # (8, 4)
        loss = nn.functional.cross_entropy(preds, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "pos": numpy_of(v.pos_embedding),
            "state": {k: numpy_of(t) for k, t in v.state_dict().items()}}


@pytest.mark.parametrize("program", [mlp_mixer, g_mlp, simple_vit], ids=["mlp_mixer", "g_mlp", "simple_vit"])
def test_lucidrains_model(program):
    # Adam turns rounding-level gradient differences into steps of lr: compare at 1e-3.
    compare_program(program, rtol=1e-3, atol=1e-4)
