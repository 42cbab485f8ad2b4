"""facebookresearch/mae's masked autoencoder (models_mae.py, util/pos_embed.py, main_pretrain.py,
engine_pretrain.py, util/lr_sched.py and its visualisation demo) at a small size: fixed 2-D sin-cos
position embeddings computed in NumPy (np.meshgrid, np.einsum('m,d->md'), np.concatenate) and
copied in by pos_embed.data.copy_(torch.from_numpy(...).float().unsqueeze(0)) into a
requires_grad=False Parameter; xavier_uniform_ on the patch projection viewed as 2-D
(w.view([w.shape[0], -1])), normal_(std=.02) class and mask tokens, self.apply(_init_weights);
timm's Block with qkv.reshape(...).permute(2, 0, 3, 1, 4).unbind(0) and
F.scaled_dot_product_attention; random_masking (torch.rand noise, argsort twice, ids_keep,
torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D)), the binary mask restored by
gather); the decoder's mask tokens by self.mask_token.repeat(...), unshuffled by gather with
ids_restore; patchify / unpatchify through imgs.reshape(shape=(...)) and
torch.einsum('nchpwq->nhwpqc', x); the norm_pix_loss target (mean, var(dim=-1, keepdim=True),
(var + 1.e-6)**.5) and the loss averaged over the removed patches. Pre-training as main_pretrain
runs it: AdamW(param_groups, betas=(0.9, 0.95)) with timm's no-weight-decay groups, per-iteration
half-cycle cosine lr with warmup (lr_sched.adjust_learning_rate), accum_iter gradient
accumulation, the NativeScaler built on torch.cuda.amp.GradScaler and torch.cuda.amp.autocast
(disabled without a GPU, as on a CPU machine), clip_grad_norm_ inside it; then the demo's
reconstruction: unpatchify, torch.einsum('nchw->nhwc', y), mask.unsqueeze(-1).repeat(...), the
masked and pasted images."""
import math
import warnings
from functools import partial

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

IMG, PATCH = 16, 4


# --- util/pos_embed.py (NumPy only) ---
def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False):
    """grid_size: int of the grid height and width
    return: pos_embed: [grid_size*grid_size, embed_dim] or [1+grid_size*grid_size, embed_dim] (w/ or w/o cls_token)"""
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0)

    grid = grid.reshape([2, 1, grid_size, grid_size])
    pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    if cls_token:
        pos_embed = np.concatenate([np.zeros([1, embed_dim]), pos_embed], axis=0)
    return pos_embed


def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
    assert embed_dim % 2 == 0
    # use half of dimensions to encode grid_h
    emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
    emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])  # (H*W, D/2)
    emb = np.concatenate([emb_h, emb_w], axis=1)  # (H*W, D)
    return emb


def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    """embed_dim: output dimension for each position; pos: a list of positions to be encoded,
    size (M,); out: (M, D)"""
    assert embed_dim % 2 == 0
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.
    omega = 1. / 10000**omega  # (D/2,)

    pos = pos.reshape(-1)  # (M,)
    out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product

    emb_sin = np.sin(out)  # (M, D/2)
    emb_cos = np.cos(out)  # (M, D/2)

    emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
    return emb


def mae_model(torch):
    nn, F = torch.nn, torch.nn.functional

    class PatchEmbed(nn.Module):
        """timm's 2D image to patch embedding."""

        def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
            super().__init__()
            self.img_size = (img_size, img_size)
            self.patch_size = (patch_size, patch_size)
            self.grid_size = (img_size // patch_size, img_size // patch_size)
            self.num_patches = self.grid_size[0] * self.grid_size[1]
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

        def forward(self, x):
            return self.proj(x).flatten(2).transpose(1, 2)  # BCHW -> BNC

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=8, qkv_bias=False):
            super().__init__()
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            x = F.scaled_dot_product_attention(q, k, v, dropout_p=0.)
            x = x.transpose(1, 2).reshape(B, N, C)
            return self.proj(x)

    class Mlp(nn.Module):
        def __init__(self, in_features, hidden_features):
            super().__init__()
            self.fc1 = nn.Linear(in_features, hidden_features)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(hidden_features, in_features)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class Block(nn.Module):
        def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False, norm_layer=nn.LayerNorm):
            super().__init__()
            self.norm1 = norm_layer(dim)
            self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias)
            self.norm2 = norm_layer(dim)
            self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio))

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            x = x + self.mlp(self.norm2(x))
            return x

    class MaskedAutoencoderViT(nn.Module):
        """ Masked Autoencoder with VisionTransformer backbone
        """
        def __init__(self, img_size=224, patch_size=16, in_chans=3,
                     embed_dim=1024, depth=24, num_heads=16,
                     decoder_embed_dim=512, decoder_depth=8, decoder_num_heads=16,
                     mlp_ratio=4., norm_layer=nn.LayerNorm, norm_pix_loss=False):
            super().__init__()

            # --------------------------------------------------------------------------
            # MAE encoder specifics
            self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
            num_patches = self.patch_embed.num_patches

            def fixed_pos_embed(dim):  # fixed sin-cos embedding, written by initialize_weights
                return nn.Parameter(torch.zeros(1, num_patches + 1, dim), requires_grad=False)

            def transformer(dim, heads, depth):
                return nn.ModuleList([Block(dim, heads, mlp_ratio, qkv_bias=True, norm_layer=norm_layer)
                                      for i in range(depth)])

            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.pos_embed = fixed_pos_embed(embed_dim)
            self.blocks = transformer(embed_dim, num_heads, depth)
            self.norm = norm_layer(embed_dim)
            # --------------------------------------------------------------------------

            # --------------------------------------------------------------------------
            # MAE decoder specifics
            self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim, bias=True)

            self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_embed_dim))

            self.decoder_pos_embed = fixed_pos_embed(decoder_embed_dim)
            self.decoder_blocks = transformer(decoder_embed_dim, decoder_num_heads, decoder_depth)

            self.decoder_norm = norm_layer(decoder_embed_dim)
            self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size**2 * in_chans, bias=True)  # decoder to patch
            # --------------------------------------------------------------------------

            self.norm_pix_loss = norm_pix_loss

            self.initialize_weights()

        def initialize_weights(self):
            # initialization
            # initialize (and freeze) pos_embed by sin-cos embedding
            pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1], int(self.patch_embed.num_patches**.5),
                                                cls_token=True)
            self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))

            decoder_pos_embed = get_2d_sincos_pos_embed(self.decoder_pos_embed.shape[-1],
                                                        int(self.patch_embed.num_patches**.5), cls_token=True)
            self.decoder_pos_embed.data.copy_(torch.from_numpy(decoder_pos_embed).float().unsqueeze(0))

            # initialize patch_embed like nn.Linear (instead of nn.Conv2d)
            w = self.patch_embed.proj.weight.data
            torch.nn.init.xavier_uniform_(w.view([w.shape[0], -1]))

            # timm's trunc_normal_(std=.02) is effectively normal_(std=0.02) as cutoff is too big (2.)
            torch.nn.init.normal_(self.cls_token, std=.02)
            torch.nn.init.normal_(self.mask_token, std=.02)

            # initialize nn.Linear and nn.LayerNorm
            self.apply(self._init_weights)

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                # we use xavier_uniform following official JAX ViT:
                torch.nn.init.xavier_uniform_(m.weight)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.LayerNorm):
                nn.init.constant_(m.bias, 0)
                nn.init.constant_(m.weight, 1.0)

        def patchify(self, imgs):
            """imgs: (N, 3, H, W) -> x: (N, L, patch_size**2 *3)"""
            p = self.patch_embed.patch_size[0]
            assert imgs.shape[2] == imgs.shape[3] and imgs.shape[2] % p == 0

            h = w = imgs.shape[2] // p
            x = imgs.reshape(shape=(imgs.shape[0], 3, h, p, w, p))
            x = torch.einsum('nchpwq->nhwpqc', x)
            x = x.reshape(shape=(imgs.shape[0], h * w, p**2 * 3))
            return x

        def unpatchify(self, x):
            """x: (N, L, patch_size**2 *3) -> imgs: (N, 3, H, W)"""
            p = self.patch_embed.patch_size[0]
            h = w = int(x.shape[1]**.5)
            assert h * w == x.shape[1]

            x = x.reshape(shape=(x.shape[0], h, w, p, p, 3))
            x = torch.einsum('nhwpqc->nchpwq', x)
            imgs = x.reshape(shape=(x.shape[0], 3, h * p, h * p))
            return imgs

        def random_masking(self, x, mask_ratio):
            """Per-sample random masking by per-sample shuffling, the shuffle done by argsort of
            random noise. x: [N, L, D], sequence"""
            N, L, D = x.shape  # batch, length, dim
            len_keep = int(L * (1 - mask_ratio))

            noise = torch.rand(N, L, device=x.device)  # noise in [0, 1]

            # sort noise for each sample
            ids_shuffle = torch.argsort(noise, dim=1)  # ascend: small is keep, large is remove
            ids_restore = torch.argsort(ids_shuffle, dim=1)

            # keep the first subset
            ids_keep = ids_shuffle[:, :len_keep]
            x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))

            # generate the binary mask: 0 is keep, 1 is remove
            mask = torch.ones([N, L], device=x.device)
            mask[:, :len_keep] = 0
            # unshuffle to get the binary mask
            mask = torch.gather(mask, dim=1, index=ids_restore)

            return x_masked, mask, ids_restore

        def forward_encoder(self, x, mask_ratio):
            # embed patches
            x = self.patch_embed(x)

            # add pos embed w/o cls token
            x = x + self.pos_embed[:, 1:, :]

            # masking: length -> length * mask_ratio
            x, mask, ids_restore = self.random_masking(x, mask_ratio)

            # append cls token
            cls_token = self.cls_token + self.pos_embed[:, :1, :]
            cls_tokens = cls_token.expand(x.shape[0], -1, -1)
            x = torch.cat((cls_tokens, x), dim=1)

            # apply Transformer blocks
            for blk in self.blocks:
                x = blk(x)
            x = self.norm(x)

            return x, mask, ids_restore

        def forward_decoder(self, x, ids_restore):
            # embed tokens
            x = self.decoder_embed(x)

            # append mask tokens to sequence
            mask_tokens = self.mask_token.repeat(x.shape[0], ids_restore.shape[1] + 1 - x.shape[1], 1)
            x_ = torch.cat([x[:, 1:, :], mask_tokens], dim=1)  # no cls token
            x_ = torch.gather(x_, dim=1, index=ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))  # unshuffle
            x = torch.cat([x[:, :1, :], x_], dim=1)  # append cls token

            # add pos embed
            x = x + self.decoder_pos_embed

            # apply Transformer blocks
            for blk in self.decoder_blocks:
                x = blk(x)
            x = self.decoder_norm(x)

            # predictor projection
            x = self.decoder_pred(x)

            # remove cls token
            x = x[:, 1:, :]

            return x

        def forward_loss(self, imgs, pred, mask):
            """imgs: [N, 3, H, W]; pred: [N, L, p*p*3]; mask: [N, L], 0 is keep, 1 is remove"""
            target = self.patchify(imgs)
            if self.norm_pix_loss:
                mean = target.mean(dim=-1, keepdim=True)
                var = target.var(dim=-1, keepdim=True)
                target = (target - mean) / (var + 1.e-6)**.5

            loss = (pred - target) ** 2
            loss = loss.mean(dim=-1)  # [N, L], mean loss per patch

            loss = (loss * mask).sum() / mask.sum()  # mean loss on removed patches
            return loss

        def forward(self, imgs, mask_ratio=0.75):
            latent, mask, ids_restore = self.forward_encoder(imgs, mask_ratio)
            pred = self.forward_decoder(latent, ids_restore)  # [N, L, p*p*3]
            loss = self.forward_loss(imgs, pred, mask)
            return loss, pred, mask

    return MaskedAutoencoderViT


def make_native_scaler(torch):
    """util/misc.py's NativeScalerWithGradNormCount."""

    def get_grad_norm_(parameters, norm_type: float = 2.0):
        if isinstance(parameters, torch.Tensor):
            parameters = [parameters]
        parameters = [p for p in parameters if p.grad is not None]
        norm_type = float(norm_type)
        if len(parameters) == 0:
            return torch.tensor(0.)
        device = parameters[0].grad.device
        total_norm = torch.norm(torch.stack([torch.norm(p.grad.detach(), norm_type).to(device)
                                             for p in parameters]), norm_type)
        return total_norm

    class NativeScalerWithGradNormCount:
        state_dict_key = "amp_scaler"

        def __init__(self):
            self._scaler = torch.cuda.amp.GradScaler()

        def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False, update_grad=True):
            self._scaler.scale(loss).backward(create_graph=create_graph)
            if update_grad:
                if clip_grad is not None:
                    assert parameters is not None
                    self._scaler.unscale_(optimizer)  # unscale the gradients of optimizer's assigned params in-place
                    norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
                else:
                    self._scaler.unscale_(optimizer)
                    norm = get_grad_norm_(parameters)
                self._scaler.step(optimizer)
                self._scaler.update()
            else:
                norm = None
            return norm

        def state_dict(self):
            return self._scaler.state_dict()

    return NativeScalerWithGradNormCount


def adjust_learning_rate(optimizer, epoch, args):
    """Decay the learning rate with half-cycle cosine after warmup"""
    if epoch < args["warmup_epochs"]:
        lr = args["lr"] * epoch / args["warmup_epochs"]
    else:
        lr = args["min_lr"] + (args["lr"] - args["min_lr"]) * 0.5 * \
            (1. + math.cos(math.pi * (epoch - args["warmup_epochs"]) / (args["epochs"] - args["warmup_epochs"])))
    for param_group in optimizer.param_groups:
        if "lr_scale" in param_group:
            param_group["lr"] = lr * param_group["lr_scale"]
        else:
            param_group["lr"] = lr
    return lr


def param_groups_weight_decay(model, weight_decay=1e-5, no_weight_decay_list=()):
    """timm's optim_factory.param_groups_weight_decay."""
    no_weight_decay_list = set(no_weight_decay_list)
    decay = []
    no_decay = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            no_decay.append(param)
        else:
            decay.append(param)
    return [
        {'params': no_decay, 'weight_decay': 0.},
        {'params': decay, 'weight_decay': weight_decay}]


def images(rng, n):
    """Smooth random 16x16 RGB images (sums of a few sinusoids), normalised per channel."""
    r, c = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    out = np.zeros((n, 3, IMG, IMG))
    for i in range(n):
        for ch in range(3):
            fy, fx, ph = rng.uniform(0.1, 0.6, 2).tolist() + [rng.uniform(0, 6.3)]
            out[i, ch] = np.sin(fy * r + fx * c + ph) + 0.1 * rng.standard_normal((IMG, IMG))
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    return ((out * 0.5 + 0.5 - mean[:, None, None]) / std[:, None, None]).astype(np.float32)


def mae(torch, init=None, iters=4, batch=4, accum_iter=2, norm_pix_loss=True):
    torch.manual_seed(0)
    MaskedAutoencoderViT = mae_model(torch)
    model = MaskedAutoencoderViT(img_size=IMG, patch_size=PATCH, in_chans=3, embed_dim=32, depth=2, num_heads=4,
                                 decoder_embed_dim=16, decoder_depth=1, decoder_num_heads=2, mlp_ratio=2.,
                                 norm_layer=partial(torch.nn.LayerNorm, eps=1e-6), norm_pix_loss=norm_pix_loss)
    result = {"pos_embed": numpy_of(model.pos_embed),
              "n_trainable": sum(p.numel() for p in model.parameters() if p.requires_grad)}
    start_from(torch, model, init, result)

    args = {"lr": 1.5e-4 * batch * accum_iter / 256 * 100, "min_lr": 0., "warmup_epochs": 1, "epochs": 2,
            "weight_decay": 0.05, "mask_ratio": 0.75}
    param_groups = param_groups_weight_decay(model, args["weight_decay"])
    optimizer = torch.optim.AdamW(param_groups, lr=args["lr"], betas=(0.9, 0.95))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GradScaler and autocast warn that CUDA is not available
        loss_scaler = make_native_scaler(torch)()
    rng = np.random.default_rng(1)
    data_loader = [torch.from_numpy(images(rng, batch)) for _ in range(iters)]

    losses, lrs, norms = [], [], []
    model.train(True)
    optimizer.zero_grad()
    torch.manual_seed(1)  # the masking noise: torch.rand draws the same stream in both libraries
    for epoch in range(2):
        for data_iter_step, samples in enumerate(data_loader[epoch * iters // 2:(epoch + 1) * iters // 2]):
            # we use a per iteration (instead of per epoch) lr scheduler
            if data_iter_step % accum_iter == 0:
                adjust_learning_rate(optimizer, data_iter_step / len(data_loader) + epoch, args)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with torch.cuda.amp.autocast():
                    loss, _, _ = model(samples, mask_ratio=args["mask_ratio"])
            loss_value = loss.item()
            if not math.isfinite(loss_value):
                raise ValueError("Loss is {}, stopping training".format(loss_value))
            loss /= accum_iter
            norm = loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters(),
                               update_grad=(data_iter_step + 1) % accum_iter == 0)
            if (data_iter_step + 1) % accum_iter == 0:
                optimizer.zero_grad()
                norms.append(norm.item())
            losses.append(loss_value)
            lrs.append(optimizer.param_groups[0]["lr"])

    # the visualisation demo: one image, its masked version and the reconstruction pasted in
    x = torch.from_numpy(images(np.random.default_rng(2), 1))
    torch.manual_seed(2)
    loss, y, mask = model(x.float(), mask_ratio=0.75)
    y = model.unpatchify(y)
    y = torch.einsum('nchw->nhwc', y).detach().cpu()
    mask = mask.detach()
    mask = mask.unsqueeze(-1).repeat(1, 1, model.patch_embed.patch_size[0]**2 * 3)  # (N, H*W, p*p*3)
    mask = model.unpatchify(mask)  # 1 is removing, 0 is keeping
    mask = torch.einsum('nchw->nhwc', mask).detach().cpu()
    x = torch.einsum('nchw->nhwc', x)
    im_masked = x * (1 - mask)
    im_paste = x * (1 - mask) + y * mask
    patches = model.patchify(x.permute(0, 3, 1, 2))
    result.update(losses=losses, lrs=lrs, norms=norms, demo_loss=loss.item(), im_masked=numpy_of(im_masked),
                  im_paste=numpy_of(im_paste), mask=numpy_of(mask), kept=int((mask[0, :, :, 0] == 0).sum()),
                  round_trip=bool(torch.equal(model.unpatchify(patches), x.permute(0, 3, 1, 2))),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_mae_pretraining():
    ref, got = compare_program(mae)
    assert ref["kept"] == got["kept"] == 4 * PATCH * PATCH  # 25% of the 16 patches
    assert ref["round_trip"] and got["round_trip"]
    # the position embeddings are frozen: still the sin-cos table after training
    np.testing.assert_allclose(got["state"]["pos_embed"], ref["pos_embed"], rtol=0, atol=0)
    assert len(ref["norms"]) == 2


def test_mae_plain_pixel_loss():
    compare_program(mae, iters=2, norm_pix_loss=False)
