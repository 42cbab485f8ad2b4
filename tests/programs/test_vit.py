"""A small vision transformer: patch embedding by a strided Conv2d, flatten(2).transpose(1, 2), a
learned class token expanded over the batch, learned position embeddings drawn by
nn.init.trunc_normal_, nn.TransformerEncoder of pre-norm GELU layers (batch_first), a LayerNorm
head on the class token; CrossEntropyLoss with label_smoothing, AdamW with a LambdaLR warmup and
CosineAnnealingLR chained by SequentialLR, accuracy by argmax; the model's eval-mode predictions
with torch.inference_mode."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

IMG, PATCH, DIM, CLASSES = 8, 4, 16, 3


def stripes(rng, n):
    """Images of horizontal, vertical or diagonal stripes (the label) with noise."""
    y = rng.integers(0, CLASSES, n)
    r, c = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    patterns = np.stack([(r % 2), (c % 2), ((r + c) % 2)]).astype(np.float32)
    x = patterns[y][:, None].repeat(3, 1) + 0.3 * rng.standard_normal((n, 3, IMG, IMG)).astype(np.float32)
    return x, y.astype(np.int64)


def vit(torch, init=None, steps=8, batch=12):
    nn = torch.nn
    torch.manual_seed(0)

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=IMG, patch_size=PATCH, in_chans=3, embed_dim=DIM):
            super().__init__()
            self.num_patches = (img_size // patch_size) ** 2
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

        def forward(self, x):
            return self.proj(x).flatten(2).transpose(1, 2)  # B, N, D

    class ViT(nn.Module):
        def __init__(self, depth=2, heads=2, mlp_ratio=2.0):
            super().__init__()
            self.patch_embed = PatchEmbed()
            self.cls_token = nn.Parameter(torch.zeros(1, 1, DIM))
            self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, DIM))
            layer = nn.TransformerEncoderLayer(d_model=DIM, nhead=heads, dim_feedforward=int(DIM * mlp_ratio),
                                               dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(DIM, eps=1e-6)
            self.head = nn.Linear(DIM, CLASSES)
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            nn.init.trunc_normal_(self.cls_token, std=0.02)

        def forward(self, x):
            x = self.patch_embed(x)
            cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
            x = torch.cat((cls_tokens, x), dim=1) + self.pos_embed
            x = self.norm(self.encoder(x))
            return self.head(x[:, 0])

    model = ViT()
    result = {"n_params": sum(p.numel() for p in model.parameters() if p.requires_grad)}
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
    warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (step + 1) / 3)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps - 3, eta_min=1e-4)
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[3])
    rng = np.random.default_rng(0)
    losses, accs, lrs = [], [], []
    model.train()
    for _ in range(steps):
        images, labels = stripes(rng, batch)
        images, labels = torch.from_numpy(images), torch.from_numpy(labels)
        outputs = model(images)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        losses.append(loss.item())
        accs.append((outputs.argmax(dim=1) == labels).float().mean().item())
    model.eval()
    with torch.inference_mode():
        images, labels = stripes(rng, 30)
        logits = model(torch.from_numpy(images))
        probs = logits.softmax(-1)
    params = {k: numpy_of(v) for k, v in model.named_parameters()}
    for name in [k for k in params if k.endswith("in_proj_bias")]:
        # The keys' bias has no gradient but rounding (softmax ignores a shift shared by a row's
        # scores), which AdamW turns into full-size steps: compare the queries' and values' parts.
        params[name] = np.delete(params[name], np.s_[DIM:2 * DIM])
    result.update(losses=losses, accs=accs, lrs=lrs, probs=numpy_of(probs), params=params)
    return result


def test_vision_transformer():
    ref, got = compare_program(vit, rtol=1e-3, atol=1e-4)
    assert ref["losses"][-1] < ref["losses"][0]
