"""lucidrains' vit-pytorch written with einops, as its ViT was: patches embedded by
Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)') in an nn.Sequential with LayerNorm and Linear,
q, k, v split by rearrange(t, 'b n (h d) -> b h n d'), attention scores from
einsum('b h i d, b h j d -> b h i j') and the weighted sum from einops.einsum, heads merged by
rearrange, the class token repeat(cls, '1 1 d -> b 1 d'), pre-norm residual blocks with GELU, the
head through Reduce('b n d -> b d', 'mean') or the class token; a few Adam steps. The layers come from
einops.layers.<the library's name>: einops.layers.torch under PyTorch, einops.layers.minitorch
under minitorch (the same layers, as minitorch modules)."""
import importlib

import numpy as np
import pytest

from prog_helpers import compare_program, fit, numpy_of, start_from

einops = pytest.importorskip("einops")


def vit(torch, init=None, steps=3, pool="cls"):
    from einops import rearrange, repeat

    nn = torch.nn
    layers = importlib.import_module("einops.layers." + torch.__name__)
    Rearrange, Reduce = layers.Rearrange, layers.Reduce
    torch.manual_seed(0)

    class FeedForward(nn.Module):
        def __init__(self, dim, hidden_dim):
            super().__init__()
            self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(),
                                     nn.Linear(hidden_dim, dim))

        def forward(self, x):
            return self.net(x)

    class Attention(nn.Module):
        def __init__(self, dim, heads=2, dim_head=8):
            super().__init__()
            inner_dim = dim_head * heads
            self.heads = heads
            self.scale = dim_head ** -0.5
            self.norm = nn.LayerNorm(dim)
            self.attend = nn.Softmax(dim=-1)
            self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
            self.to_out = nn.Linear(inner_dim, dim)

        def forward(self, x):
            x = self.norm(x)
            qkv = self.to_qkv(x).chunk(3, dim=-1)
            q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
            dots = torch.einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
            attn = self.attend(dots)
            out = einops.einsum(attn, v, "b h i j, b h j d -> b h i d")
            return self.to_out(rearrange(out, "b h n d -> b n (h d)"))

    class ViT(nn.Module):
        def __init__(self, image_size=8, patch_size=4, num_classes=3, dim=16, depth=2, channels=3):
            super().__init__()
            num_patches = (image_size // patch_size) ** 2
            patch_dim = channels * patch_size * patch_size
            self.to_patch_embedding = nn.Sequential(
                Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch_size, p2=patch_size),
                nn.LayerNorm(patch_dim), nn.Linear(patch_dim, dim), nn.LayerNorm(dim))
            self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
            self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
            self.layers = nn.ModuleList([nn.ModuleList([Attention(dim), FeedForward(dim, 2 * dim)])
                                         for _ in range(depth)])
            self.pool = Reduce("b n d -> b d", "mean") if pool == "mean" else None
            self.mlp_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

        def forward(self, img):
            x = self.to_patch_embedding(img)
            b, n, _ = x.shape
            cls_tokens = repeat(self.cls_token, "1 1 d -> b 1 d", b=b)
            x = torch.cat((cls_tokens, x), dim=1)
            x = x + self.pos_embedding[:, :(n + 1)]
            for attn, ff in self.layers:
                x = attn(x) + x
                x = ff(x) + x
            x = self.pool(x) if self.pool is not None else x[:, 0]
            return self.mlp_head(x)

    model = ViT()
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(1)
    images = torch.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    labels = torch.tensor(rng.integers(0, 3, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    result["losses"] = fit(opt, lambda: nn.functional.cross_entropy(model(images), labels), steps)
    result["patch_grad"] = numpy_of(model.to_patch_embedding[2].weight.grad)
    result["cls_grad"] = numpy_of(model.cls_token.grad)
    with torch.no_grad():
        result["logits"] = numpy_of(model(images))
    return result


@pytest.mark.parametrize("pool", ["cls", "mean"])
def test_vit_with_einops_layers(pool):
    ref, got = compare_program(vit, pool=pool)
    assert ref["losses"][-1] < ref["losses"][0]  # it learns
