"""A small Swin Transformer as microsoft/Swin-Transformer's models/swin_transformer.py writes it,
with timm's DropPath and trunc_normal_: window_partition / window_reverse by view, permute and
contiguous; WindowAttention's relative position bias table (nn.Parameter of zeros drawn by
trunc_normal_(std=.02)) indexed through a relative_position_index buffer built from
torch.stack(torch.meshgrid([coords_h, coords_w], indexing='ij')), torch.flatten(coords, 1),
coords_flatten[:, :, None] - coords_flatten[:, None, :] and in-place += / *= on its slices;
qkv reshaped and permuted into q, k, v, attn + bias.unsqueeze(0), the shifted-window mask added by
view(B_ // nW, nW, ...) + mask.unsqueeze(1).unsqueeze(0); SwinTransformerBlock's attention mask
(img_mask filled through slice objects, masked_fill(attn_mask != 0, float(-100.0))) and the cyclic
shift torch.roll(x, shifts=(-s, -s), dims=(1, 2)) and back; the shift turned off where the
resolution is no larger than the window; DropPath (x.new_empty(shape).bernoulli_(keep_prob),
div_); PatchMerging by x[:, 0::2, 1::2, :] slices and torch.cat(..., -1); PatchEmbed by a strided
Conv2d; self.apply(self._init_weights) with trunc_normal_ and nn.init.constant_; the head on
torch.flatten(self.avgpool(x.transpose(1, 2)), 1). Trained a few steps by the repository's
main.py pattern: AdamW over two parameter groups (no weight decay for norms, biases and
relative_position_bias_table, set_weight_decay's rule), CrossEntropyLoss(label_smoothing=0.1),
clip_grad_norm_ and a per-step cosine schedule through CosineAnnealingLR; then eval logits."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from timm_layers import timm_layers

IMG, CLASSES = 16, 4


def swin_models(torch):
    nn = torch.nn
    trunc_normal_ = nn.init.trunc_normal_

    Mlp, DropPath, init_vit_weights = timm_layers(torch)

    def window_partition(x, window_size):
        """x: (B, H, W, C) -> windows: (num_windows*B, window_size, window_size, C)"""
        B, H, W, C = x.shape
        x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
        windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)
        return windows

    def window_reverse(windows, window_size, H, W):
        """windows: (num_windows*B, window_size, window_size, C) -> x: (B, H, W, C)"""
        B = int(windows.shape[0] / (H * W / window_size / window_size))
        x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
        x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)
        return x

    class WindowAttention(nn.Module):
        """Window based multi-head self attention (W-MSA) with relative position bias; shifted and
        non-shifted windows alike."""

        def __init__(self, dim, window_size, num_heads, qkv_bias=True, qk_scale=None, attn_drop=0., proj_drop=0.):
            super().__init__()
            self.dim = dim
            self.window_size = window_size  # Wh, Ww
            self.num_heads = num_heads
            head_dim = dim // num_heads
            self.scale = qk_scale or head_dim ** -0.5

            # define a parameter table of relative position bias
            self.relative_position_bias_table = nn.Parameter(
                torch.zeros((2 * window_size[0] - 1) * (2 * window_size[1] - 1), num_heads))  # 2*Wh-1 * 2*Ww-1, nH

            # get pair-wise relative position index for each token inside the window
            coords_h = torch.arange(self.window_size[0])
            coords_w = torch.arange(self.window_size[1])
            coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing='ij'))  # 2, Wh, Ww
            coords_flatten = torch.flatten(coords, 1)  # 2, Wh*Ww
            relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]  # 2, Wh*Ww, Wh*Ww
            relative_coords = relative_coords.permute(1, 2, 0).contiguous()  # Wh*Ww, Wh*Ww, 2
            relative_coords[:, :, 0] += self.window_size[0] - 1  # shift to start from 0
            relative_coords[:, :, 1] += self.window_size[1] - 1
            relative_coords[:, :, 0] *= 2 * self.window_size[1] - 1
            relative_position_index = relative_coords.sum(-1)  # Wh*Ww, Wh*Ww
            self.register_buffer("relative_position_index", relative_position_index)

            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.attn_drop = nn.Dropout(attn_drop)
            self.proj = nn.Linear(dim, dim)
            self.proj_drop = nn.Dropout(proj_drop)

            trunc_normal_(self.relative_position_bias_table, std=.02)
            self.softmax = nn.Softmax(dim=-1)

        def forward(self, x, mask=None):
            """x: (num_windows*B, N, C); mask: (num_windows, Wh*Ww, Wh*Ww) of 0 and -100, or None"""
            B_, N, C = x.shape
            qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # make torchscript happy (cannot use tensor as tuple)

            q = q * self.scale
            attn = (q @ k.transpose(-2, -1))

            relative_position_bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(
                self.window_size[0] * self.window_size[1], self.window_size[0] * self.window_size[1], -1)
            relative_position_bias = relative_position_bias.permute(2, 0, 1).contiguous()  # nH, Wh*Ww, Wh*Ww
            attn = attn + relative_position_bias.unsqueeze(0)

            if mask is not None:
                nW = mask.shape[0]
                attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.view(-1, self.num_heads, N, N)
            attn = self.softmax(attn)
            attn = self.attn_drop(attn)

            x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
            x = self.proj(x)
            x = self.proj_drop(x)
            return x

    class SwinTransformerBlock(nn.Module):
        def __init__(self, dim, input_resolution, num_heads, window_size=7, shift_size=0, mlp_ratio=4.,
                     qkv_bias=True, qk_scale=None, drop=0., attn_drop=0., drop_path=0.,
                     act_layer=nn.GELU, norm_layer=nn.LayerNorm):
            super().__init__()
            self.dim = dim
            self.input_resolution = input_resolution
            self.num_heads = num_heads
            self.window_size = window_size
            self.shift_size = shift_size
            self.mlp_ratio = mlp_ratio
            if min(self.input_resolution) <= self.window_size:
                # if window size is larger than input resolution, we don't partition windows
                self.shift_size = 0
                self.window_size = min(self.input_resolution)
            assert 0 <= self.shift_size < self.window_size, "shift_size must in 0-window_size"

            self.norm1 = norm_layer(dim)
            self.attn = WindowAttention(
                dim, window_size=(self.window_size, self.window_size), num_heads=num_heads,
                qkv_bias=qkv_bias, qk_scale=qk_scale, attn_drop=attn_drop, proj_drop=drop)

            self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
            self.norm2 = norm_layer(dim)
            mlp_hidden_dim = int(dim * mlp_ratio)
            self.mlp = Mlp(in_features=dim, hidden_features=mlp_hidden_dim, act_layer=act_layer, drop=drop)

            if self.shift_size > 0:
                # calculate attention mask for SW-MSA
                H, W = self.input_resolution
                img_mask = torch.zeros((1, H, W, 1))  # 1 H W 1
                h_slices = (slice(0, -self.window_size),
                            slice(-self.window_size, -self.shift_size),
                            slice(-self.shift_size, None))
                w_slices = (slice(0, -self.window_size),
                            slice(-self.window_size, -self.shift_size),
                            slice(-self.shift_size, None))
                cnt = 0
                for h in h_slices:
                    for w in w_slices:
                        img_mask[:, h, w, :] = cnt
                        cnt += 1

                mask_windows = window_partition(img_mask, self.window_size)  # nW, window_size, window_size, 1
                mask_windows = mask_windows.view(-1, self.window_size * self.window_size)
                attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
                attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))
            else:
                attn_mask = None

            self.register_buffer("attn_mask", attn_mask)

        def forward(self, x):
            H, W = self.input_resolution
            B, L, C = x.shape
            assert L == H * W, "input feature has wrong size"

            shortcut = x
            x = self.norm1(x)
            x = x.view(B, H, W, C)

            # cyclic shift
            if self.shift_size > 0:
                shifted_x = torch.roll(x, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
            else:
                shifted_x = x

            # partition windows
            x_windows = window_partition(shifted_x, self.window_size)  # nW*B, window_size, window_size, C
            x_windows = x_windows.view(-1, self.window_size * self.window_size, C)  # nW*B, window_size*window_size, C

            # W-MSA/SW-MSA
            attn_windows = self.attn(x_windows, mask=self.attn_mask)  # nW*B, window_size*window_size, C

            # merge windows
            attn_windows = attn_windows.view(-1, self.window_size, self.window_size, C)
            shifted_x = window_reverse(attn_windows, self.window_size, H, W)  # B H' W' C

            # reverse cyclic shift
            if self.shift_size > 0:
                x = torch.roll(shifted_x, shifts=(self.shift_size, self.shift_size), dims=(1, 2))
            else:
                x = shifted_x
            x = x.view(B, H * W, C)

            # FFN
            x = shortcut + self.drop_path(x)
            x = x + self.drop_path(self.mlp(self.norm2(x)))
            return x

    class PatchMerging(nn.Module):
        def __init__(self, input_resolution, dim, norm_layer=nn.LayerNorm):
            super().__init__()
            self.input_resolution = input_resolution
            self.dim = dim
            self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
            self.norm = norm_layer(4 * dim)

        def forward(self, x):
            """x: B, H*W, C"""
            H, W = self.input_resolution
            B, L, C = x.shape
            assert L == H * W, "input feature has wrong size"
            assert H % 2 == 0 and W % 2 == 0, f"x size ({H}*{W}) are not even."

            x = x.view(B, H, W, C)

            x0 = x[:, 0::2, 0::2, :]  # B H/2 W/2 C
            x1 = x[:, 1::2, 0::2, :]  # B H/2 W/2 C
            x2 = x[:, 0::2, 1::2, :]  # B H/2 W/2 C
            x3 = x[:, 1::2, 1::2, :]  # B H/2 W/2 C
            x = torch.cat([x0, x1, x2, x3], -1)  # B H/2 W/2 4*C
            x = x.view(B, -1, 4 * C)  # B H/2*W/2 4*C

            x = self.norm(x)
            x = self.reduction(x)
            return x

    class BasicLayer(nn.Module):
        """A basic Swin Transformer layer for one stage."""

        def __init__(self, dim, input_resolution, depth, num_heads, window_size, mlp_ratio=4., qkv_bias=True,
                     qk_scale=None, drop=0., attn_drop=0., drop_path=0., norm_layer=nn.LayerNorm, downsample=None):
            super().__init__()
            self.dim = dim
            self.input_resolution = input_resolution
            self.depth = depth

            # build blocks
            self.blocks = nn.ModuleList([
                SwinTransformerBlock(dim=dim, input_resolution=input_resolution, num_heads=num_heads,
                                     window_size=window_size, shift_size=0 if (i % 2 == 0) else window_size // 2,
                                     mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, qk_scale=qk_scale, drop=drop,
                                     attn_drop=attn_drop,
                                     drop_path=drop_path[i] if isinstance(drop_path, list) else drop_path,
                                     norm_layer=norm_layer)
                for i in range(depth)])

            # patch merging layer
            if downsample is not None:
                self.downsample = downsample(input_resolution, dim=dim, norm_layer=norm_layer)
            else:
                self.downsample = None

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            if self.downsample is not None:
                x = self.downsample(x)
            return x

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=224, patch_size=4, in_chans=3, embed_dim=96, norm_layer=None):
            super().__init__()
            img_size = (img_size, img_size)
            patch_size = (patch_size, patch_size)
            patches_resolution = [img_size[0] // patch_size[0], img_size[1] // patch_size[1]]
            self.img_size = img_size
            self.patch_size = patch_size
            self.patches_resolution = patches_resolution
            self.num_patches = patches_resolution[0] * patches_resolution[1]
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
            self.norm = norm_layer(embed_dim) if norm_layer is not None else None

        def forward(self, x):
            B, C, H, W = x.shape
            assert H == self.img_size[0] and W == self.img_size[1], \
                f"Input image size ({H}*{W}) doesn't match model ({self.img_size[0]}*{self.img_size[1]})."
            x = self.proj(x).flatten(2).transpose(1, 2)  # B Ph*Pw C
            if self.norm is not None:
                x = self.norm(x)
            return x

    class SwinTransformer(nn.Module):
        def __init__(self, img_size=224, patch_size=4, in_chans=3, num_classes=1000, embed_dim=96,
                     depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24], window_size=7, mlp_ratio=4., qkv_bias=True,
                     qk_scale=None, drop_rate=0., attn_drop_rate=0., drop_path_rate=0.1, norm_layer=nn.LayerNorm,
                     ape=False, patch_norm=True, **kwargs):
            super().__init__()
            self.num_classes = num_classes
            self.num_layers = len(depths)
            self.embed_dim = embed_dim
            self.ape = ape
            self.patch_norm = patch_norm
            self.num_features = int(embed_dim * 2 ** (self.num_layers - 1))
            self.mlp_ratio = mlp_ratio

            # split image into non-overlapping patches
            self.patch_embed = PatchEmbed(img_size=img_size, patch_size=patch_size, in_chans=in_chans,
                                          embed_dim=embed_dim, norm_layer=norm_layer if self.patch_norm else None)
            num_patches = self.patch_embed.num_patches
            patches_resolution = self.patch_embed.patches_resolution
            self.patches_resolution = patches_resolution

            # absolute position embedding
            if self.ape:
                self.absolute_pos_embed = nn.Parameter(torch.zeros(1, num_patches, embed_dim))
                trunc_normal_(self.absolute_pos_embed, std=.02)

            self.pos_drop = nn.Dropout(p=drop_rate)

            # stochastic depth
            dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]  # stochastic depth decay rule

            # build layers
            self.layers = nn.ModuleList()
            for i_layer in range(self.num_layers):
                layer = BasicLayer(dim=int(embed_dim * 2 ** i_layer),
                                   input_resolution=(patches_resolution[0] // (2 ** i_layer),
                                                     patches_resolution[1] // (2 ** i_layer)),
                                   depth=depths[i_layer], num_heads=num_heads[i_layer], window_size=window_size,
                                   mlp_ratio=self.mlp_ratio, qkv_bias=qkv_bias, qk_scale=qk_scale, drop=drop_rate,
                                   attn_drop=attn_drop_rate,
                                   drop_path=dpr[sum(depths[:i_layer]):sum(depths[:i_layer + 1])],
                                   norm_layer=norm_layer,
                                   downsample=PatchMerging if (i_layer < self.num_layers - 1) else None)
                self.layers.append(layer)

            self.norm = norm_layer(self.num_features)
            self.avgpool = nn.AdaptiveAvgPool1d(1)
            self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 else nn.Identity()

            self.apply(self._init_weights)

        _init_weights = staticmethod(init_vit_weights)  # timm's trunc_normal_ Linear, unit LayerNorm

        def no_weight_decay(self):
            return {'absolute_pos_embed'}

        def no_weight_decay_keywords(self):
            return {'relative_position_bias_table'}

        def forward_features(self, x):
            x = self.patch_embed(x)
            if self.ape:
                x = x + self.absolute_pos_embed
            x = self.pos_drop(x)

            for layer in self.layers:
                x = layer(x)

            x = self.norm(x)  # B L C
            x = self.avgpool(x.transpose(1, 2))  # B C 1
            x = torch.flatten(x, 1)
            return x

        def forward(self, x):
            x = self.forward_features(x)
            x = self.head(x)
            return x

    return SwinTransformer, window_partition, window_reverse


def set_weight_decay(model, skip_list=(), skip_keywords=()):
    """optimizer.py's parameter groups: no weight decay for 1-d parameters, biases and the names
    listed by the model."""
    has_decay = []
    no_decay = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue  # frozen weights
        if len(param.shape) == 1 or name.endswith(".bias") or (name in skip_list) or \
                any(keyword in name for keyword in skip_keywords):
            no_decay.append(param)
        else:
            has_decay.append(param)
    return [{'params': has_decay}, {'params': no_decay, 'weight_decay': 0.}]


def images(rng, n):
    """Four classes of 16x16 RGB images: a bright quadrant (the label) plus noise."""
    y = rng.integers(0, CLASSES, n)
    x = 0.5 * rng.standard_normal((n, 3, IMG, IMG))
    for i, c in enumerate(y):
        r, col = divmod(int(c), 2)
        x[i, :, r * 8:(r + 1) * 8, col * 8:(col + 1) * 8] += 1.0
    return x.astype(np.float32), y.astype(np.int64)


def swin(torch, init=None, steps=4, batch=6, drop_path_rate=0.2):
    nn = torch.nn
    torch.manual_seed(0)
    SwinTransformer, window_partition, window_reverse = swin_models(torch)
    model = SwinTransformer(img_size=IMG, patch_size=2, in_chans=3, num_classes=CLASSES, embed_dim=16,
                            depths=[2, 2], num_heads=[2, 4], window_size=4, mlp_ratio=2.,
                            drop_path_rate=drop_path_rate)
    result = {"n_params": sum(p.numel() for p in model.parameters()),
              "index": numpy_of(model.layers[0].blocks[0].attn.relative_position_index),
              "mask": numpy_of(model.layers[0].blocks[1].attn_mask),
              "shifts": [blk.shift_size for layer in model.layers for blk in layer.blocks]}
    probe = torch.arange(2 * 8 * 8 * 3, dtype=torch.float32).view(2, 8, 8, 3)
    windows = window_partition(probe, 4)
    result["windows"] = numpy_of(windows)
    result["round_trip"] = bool(torch.equal(window_reverse(windows, 4, 8, 8), probe))
    start_from(torch, model, init, result)

    parameters = set_weight_decay(model, model.no_weight_decay(), model.no_weight_decay_keywords())
    optimizer = torch.optim.AdamW(parameters, eps=1e-8, betas=(0.9, 0.999), lr=2e-3, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps, eta_min=1e-5)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    rng = np.random.default_rng(1)
    losses, norms, lrs = [], [], []
    model.train()
    for idx in range(steps):
        samples, targets = (torch.from_numpy(a) for a in images(rng, batch))
        outputs = model(samples)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        norms.append(grad_norm.item())
        lrs.append(optimizer.param_groups[0]["lr"])
    x_test, y_test = images(np.random.default_rng(2), 8)
    torch.manual_seed(3)  # the stochastic-depth draws of one train-mode forward
    with torch.no_grad():
        train_logits = model(torch.from_numpy(x_test))
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test))
    result.update(losses=losses, norms=norms, lrs=lrs, logits=numpy_of(logits), train_logits=numpy_of(train_logits),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_swin_transformer():
    ref, got = compare_program(swin)
    assert ref["shifts"] == [0, 2, 0, 0]  # the second stage's 4x4 grid fits one window: no shift
    assert ref["round_trip"] and got["round_trip"]
    assert ref["index"].shape == (16, 16) and ref["index"].max() == 48  # (2*4-1)**2 - 1
    assert set(np.unique(ref["mask"])) == {0.0, -100.0}
    # DropPath dropped some residual branches in train mode: the two forwards differ
    assert np.abs(ref["train_logits"] - ref["logits"]).max() > 1e-3


def test_swin_transformer_without_drop_path():
    ref, got = compare_program(swin, drop_path_rate=0.0, steps=2)
    np.testing.assert_allclose(got["train_logits"], got["logits"], rtol=1e-5, atol=1e-6)
