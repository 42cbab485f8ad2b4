"""facebookresearch/DiT's models.py at a small config (its DiT class with depth 2, hidden 32,
patch 2 on 8x8 latents, 10 classes), with timm's PatchEmbed, Attention and Mlp (tests/programs/
timm_layers.py), and the pieces of train.py and sample.py around it: adaLN-Zero blocks
(adaLN_modulation(c).chunk(6, dim=1), modulate by unsqueeze(1)), nn.GELU(approximate="tanh"),
LayerNorm(elementwise_affine=False), sinusoidal timestep embeddings, the label embedder's
classifier-free-guidance dropout (torch.rand(n) < p, torch.where(drop_ids, num_classes, labels)),
initialize_weights (self.apply(_basic_init) with xavier_uniform_, the frozen sin-cos pos_embed
Parameter(requires_grad=False) copied from NumPy, xavier_uniform_ on proj.weight.data.view([out, -1]),
zeroed modulation and output layers), unpatchify by reshape(shape=...) and
torch.einsum('nhwpqc->nchpwq'); training as train.py does it (deepcopy into an EMA model,
requires_grad(ema, False), AdamW(lr, weight_decay=0), update_ema's mul_(decay).add_(param.data,
alpha=1 - decay) over OrderedDict(named_parameters())) with a DDPM noise-prediction loss, and
sample.py's forward_with_cfg (torch.split, y_null = 1000-style null class, cfg_scale)."""
import math
from collections import OrderedDict
from copy import deepcopy

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from timm_layers import timm_layers, timm_vit_layers


# https://github.com/facebookresearch/mae/blob/main/util/pos_embed.py (NumPy only)
def get_2d_sincos_pos_embed(embed_dim, grid_size, cls_token=False, extra_tokens=0):
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0)

    grid = grid.reshape([2, 1, grid_size, grid_size])
    pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)
    if cls_token and extra_tokens > 0:
        pos_embed = np.concatenate([np.zeros([extra_tokens, embed_dim]), pos_embed], axis=0)
    return pos_embed


def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
    assert embed_dim % 2 == 0

    # use half of dimensions to encode grid_h
    emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
    emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])  # (H*W, D/2)

    emb = np.concatenate([emb_h, emb_w], axis=1) # (H*W, D)
    return emb


def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    assert embed_dim % 2 == 0
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.
    omega = 1. / 10000**omega  # (D/2,)

    pos = pos.reshape(-1)  # (M,)
    out = np.einsum('m,d->md', pos, omega)  # (M, D/2), outer product

    emb_sin = np.sin(out) # (M, D/2)
    emb_cos = np.cos(out) # (M, D/2)

    emb = np.concatenate([emb_sin, emb_cos], axis=1)  # (M, D)
    return emb


def dit_module(torch):
    """models.py as published, for the library `torch`."""
    nn = torch.nn
    Mlp, _, _ = timm_layers(torch)
    PatchEmbed, Attention = timm_vit_layers(torch)

    def modulate(x, shift, scale):
        return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)

    class TimestepEmbedder(nn.Module):
        """
        Embeds scalar timesteps into vector representations.
        """
        def __init__(self, hidden_size, frequency_embedding_size=256):
            super().__init__()
            self.mlp = nn.Sequential(
                nn.Linear(frequency_embedding_size, hidden_size, bias=True),
                nn.SiLU(),
                nn.Linear(hidden_size, hidden_size, bias=True),
            )
            self.frequency_embedding_size = frequency_embedding_size

        @staticmethod
        def timestep_embedding(t, dim, max_period=10000):
            # https://github.com/openai/glide-text2im/blob/main/glide_text2im/nn.py
            half = dim // 2
            freqs = torch.exp(
                -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half
            ).to(device=t.device)
            args = t[:, None].float() * freqs[None]
            embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
            if dim % 2:
                embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
            return embedding

        def forward(self, t):
            t_freq = self.timestep_embedding(t, self.frequency_embedding_size)
            t_emb = self.mlp(t_freq)
            return t_emb

    class LabelEmbedder(nn.Module):
        """
        Embeds class labels into vector representations. Also handles label dropout for classifier-free guidance.
        """
        def __init__(self, num_classes, hidden_size, dropout_prob):
            super().__init__()
            use_cfg_embedding = dropout_prob > 0
            self.embedding_table = nn.Embedding(num_classes + use_cfg_embedding, hidden_size)
            self.num_classes = num_classes
            self.dropout_prob = dropout_prob

        def token_drop(self, labels, force_drop_ids=None):
            """
            Drops labels to enable classifier-free guidance.
            """
            if force_drop_ids is None:
                drop_ids = torch.rand(labels.shape[0]) < self.dropout_prob
            else:
                drop_ids = force_drop_ids == 1
            labels = torch.where(drop_ids, self.num_classes, labels)
            return labels

        def forward(self, labels, train, force_drop_ids=None):
            use_dropout = self.dropout_prob > 0
            if (train and use_dropout) or (force_drop_ids is not None):
                labels = self.token_drop(labels, force_drop_ids)
            embeddings = self.embedding_table(labels)
            return embeddings

    class DiTBlock(nn.Module):
        """
        A DiT block with adaptive layer norm zero (adaLN-Zero) conditioning.
        """
        def __init__(self, hidden_size, num_heads, mlp_ratio=4.0, **block_kwargs):
            super().__init__()
            self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
            self.attn = Attention(hidden_size, num_heads=num_heads, qkv_bias=True, **block_kwargs)
            self.norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
            mlp_hidden_dim = int(hidden_size * mlp_ratio)
            approx_gelu = lambda: nn.GELU(approximate="tanh")
            self.mlp = Mlp(in_features=hidden_size, hidden_features=mlp_hidden_dim, act_layer=approx_gelu, drop=0)
            self.adaLN_modulation = nn.Sequential(
                nn.SiLU(),
                nn.Linear(hidden_size, 6 * hidden_size, bias=True)
            )

        def forward(self, x, c):
            shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
            x = x + gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))
            x = x + gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
            return x

    class FinalLayer(nn.Module):
        """
        The final layer of DiT.
        """
        def __init__(self, hidden_size, patch_size, out_channels):
            super().__init__()
            self.norm_final = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
            self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels, bias=True)
            self.adaLN_modulation = nn.Sequential(
                nn.SiLU(),
                nn.Linear(hidden_size, 2 * hidden_size, bias=True)
            )

        def forward(self, x, c):
            shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
            x = modulate(self.norm_final(x), shift, scale)
            x = self.linear(x)
            return x

    class DiT(nn.Module):
        """
        Diffusion model with a Transformer backbone.
        """
        def __init__(
            self,
            input_size=32,
            patch_size=2,
            in_channels=4,
            hidden_size=1152,
            depth=28,
            num_heads=16,
            mlp_ratio=4.0,
            class_dropout_prob=0.1,
            num_classes=1000,
            learn_sigma=True,
        ):
            super().__init__()
            self.learn_sigma = learn_sigma
            self.in_channels = in_channels
            self.out_channels = in_channels * 2 if learn_sigma else in_channels
            self.patch_size = patch_size
            self.num_heads = num_heads

            self.x_embedder = PatchEmbed(input_size, patch_size, in_channels, hidden_size, bias=True)
            self.t_embedder = TimestepEmbedder(hidden_size)
            self.y_embedder = LabelEmbedder(num_classes, hidden_size, class_dropout_prob)
            num_patches = self.x_embedder.num_patches
            # Will use fixed sin-cos embedding:
            self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden_size), requires_grad=False)

            self.blocks = nn.ModuleList([
                DiTBlock(hidden_size, num_heads, mlp_ratio=mlp_ratio) for _ in range(depth)
            ])
            self.final_layer = FinalLayer(hidden_size, patch_size, self.out_channels)
            self.initialize_weights()

        def initialize_weights(self):
            # Initialize transformer layers:
            def _basic_init(module):
                if isinstance(module, nn.Linear):
                    torch.nn.init.xavier_uniform_(module.weight)
                    if module.bias is not None:
                        nn.init.constant_(module.bias, 0)
            self.apply(_basic_init)

            # Initialize (and freeze) pos_embed by sin-cos embedding:
            pos_embed = get_2d_sincos_pos_embed(self.pos_embed.shape[-1], int(self.x_embedder.num_patches ** 0.5))
            self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))

            # Initialize patch_embed like nn.Linear (instead of nn.Conv2d):
            w = self.x_embedder.proj.weight.data
            nn.init.xavier_uniform_(w.view([w.shape[0], -1]))

            # Initialize label embedding table:
            nn.init.normal_(self.y_embedder.embedding_table.weight, std=0.02)

            # Initialize timestep embedding MLP:
            nn.init.normal_(self.t_embedder.mlp[0].weight, std=0.02)
            nn.init.normal_(self.t_embedder.mlp[2].weight, std=0.02)

            # Zero-out adaLN modulation layers in DiT blocks:
            for block in self.blocks:
                nn.init.constant_(block.adaLN_modulation[-1].weight, 0)
                nn.init.constant_(block.adaLN_modulation[-1].bias, 0)

            # Zero-out output layers:
            nn.init.constant_(self.final_layer.adaLN_modulation[-1].weight, 0)
            nn.init.constant_(self.final_layer.adaLN_modulation[-1].bias, 0)
            nn.init.constant_(self.final_layer.linear.weight, 0)
            nn.init.constant_(self.final_layer.linear.bias, 0)

        def unpatchify(self, x):
            """
            x: (N, T, patch_size**2 * C)
            imgs: (N, H, W, C)
            """
            c = self.out_channels
            p = self.x_embedder.patch_size[0]
            h = w = int(x.shape[1] ** 0.5)
            assert h * w == x.shape[1]

            x = x.reshape(shape=(x.shape[0], h, w, p, p, c))
            x = torch.einsum('nhwpqc->nchpwq', x)
            imgs = x.reshape(shape=(x.shape[0], c, h * p, h * p))
            return imgs

        def forward(self, x, t, y):
            x = self.x_embedder(x) + self.pos_embed  # (N, T, D), where T = H * W / patch_size ** 2
            t = self.t_embedder(t)                   # (N, D)
            y = self.y_embedder(y, self.training)    # (N, D)
            c = t + y                                # (N, D)
            for block in self.blocks:
                x = block(x, c)                      # (N, T, D)
            x = self.final_layer(x, c)               # (N, T, patch_size ** 2 * out_channels)
            x = self.unpatchify(x)                   # (N, out_channels, H, W)
            return x

        def forward_with_cfg(self, x, t, y, cfg_scale):
            # https://github.com/openai/glide-text2im/blob/main/notebooks/text2im.ipynb
            half = x[: len(x) // 2]
            combined = torch.cat([half, half], dim=0)
            model_out = self.forward(combined, t, y)
            eps, rest = model_out[:, :4], model_out[:, 4:]
            cond_eps, uncond_eps = torch.split(eps, len(eps) // 2, dim=0)
            half_eps = uncond_eps + cfg_scale * (cond_eps - uncond_eps)
            eps = torch.cat([half_eps, half_eps], dim=0)
            return torch.cat([eps, rest], dim=1)

    def DiT_S_2(**kwargs):
        return DiT(depth=12, hidden_size=384, patch_size=2, num_heads=6, **kwargs)

    def DiT_tiny_2(**kwargs):  # the test's config, in the shape of DiT_S_2
        return DiT(depth=2, hidden_size=32, patch_size=2, num_heads=4, **kwargs)

    return DiT_tiny_2


def dit_program(torch, init=None, steps=4):
    DiT_tiny_2 = dit_module(torch)
    F = torch.nn.functional
    NUM_CLASSES, LATENT = 10, 8

    @torch.no_grad()
    def update_ema(ema_model, model, decay=0.9999):
        """
        Step the EMA model towards the current model.
        """
        ema_params = OrderedDict(ema_model.named_parameters())
        model_params = OrderedDict(model.named_parameters())

        for name, param in model_params.items():
            # TODO: Consider applying only to params that require_grad to avoid small numerical changes of pos_embed
            ema_params[name].mul_(decay).add_(param.data, alpha=1 - decay)

    def requires_grad(model, flag=True):
        """
        Set requires_grad flag for all parameters in a model.
        """
        for p in model.parameters():
            p.requires_grad = flag

    torch.manual_seed(0)
    model = DiT_tiny_2(input_size=LATENT, num_classes=NUM_CLASSES)
    result = {"nparams": sum(p.numel() for p in model.parameters()),
              "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
              "pos_embed": numpy_of(model.pos_embed), "num_patches": model.x_embedder.num_patches}
    start_from(torch, model, init, result)
    # zero-initialised modulation and output layers: a fresh DiT predicts zeros
    result["fresh_out"] = numpy_of(model(torch.zeros(1, 4, LATENT, LATENT), torch.tensor([3]), torch.tensor([1])))
    ema = deepcopy(model)  # Create an EMA of the model for use after training
    requires_grad(ema, False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0)
    update_ema(ema, model, decay=0)  # Ensure EMA is initialized with synced weights
    model.train()  # important! This enables embedding dropout for classifier-free guidance
    ema.eval()  # EMA model should always be in eval mode

    # a linear-beta DDPM forward process (diffusion/gaussian_diffusion.py's q_sample and MSE loss)
    T = 50
    betas = np.linspace(1e-4, 0.02, T, dtype=np.float64)
    alphas_cumprod = np.cumprod(1.0 - betas)
    rng = np.random.default_rng(0)
    losses = []
    for step in range(steps):
        x = torch.from_numpy(rng.standard_normal((4, 4, LATENT, LATENT)).astype(np.float32))
        y = torch.from_numpy(rng.integers(0, NUM_CLASSES, 4))
        t = torch.randint(0, T, (x.shape[0],))
        noise = torch.randn_like(x)
        a = torch.from_numpy(alphas_cumprod.astype(np.float32))[t].view(-1, 1, 1, 1)
        x_t = a.sqrt() * x + (1 - a).sqrt() * noise
        model_output = model(x_t, t, y)
        eps_pred, _ = torch.split(model_output, 4, dim=1)
        loss = F.mse_loss(eps_pred, noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema, model, decay=0.9)
        losses.append(loss.item())
    result["losses"] = losses

    model.eval()
    # sample.py's classifier-free guidance: the batch doubled with the null class
    z = torch.from_numpy(rng.standard_normal((2, 4, LATENT, LATENT)).astype(np.float32))
    class_labels = [3, 7]
    y = torch.tensor(class_labels)
    z = torch.cat([z, z], 0)
    y_null = torch.tensor([NUM_CLASSES] * len(class_labels))
    y = torch.cat([y, y_null], 0)
    with torch.no_grad():
        guided = ema.forward_with_cfg(z, torch.tensor([10, 10, 10, 10]), y, cfg_scale=4.0)
    result.update(guided=numpy_of(guided), ema={k: numpy_of(v) for k, v in ema.state_dict().items()},
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_dit_training_ema_and_cfg_sampling():
    compare_program(dit_program)
