"""openai/improved-diffusion's UNet and GaussianDiffusion at a tiny size (unet.py, nn.py,
gaussian_diffusion.py, losses.py, resample.py, train_util.py): gradient checkpointing by its own
CheckpointFunction (an autograd.Function that reruns the block in backward under
th.enable_grad() on x.detach().requires_grad_(True) inputs and differentiates it there by
th.autograd.grad(..., allow_unused=True)); GroupNorm32 computing in float32; zero_module
(p.detach().zero_()); timestep_embedding with max_period; TimestepEmbedSequential dispatching on
isinstance(layer, TimestepBlock); ResBlock with use_scale_shift_norm (emb_out.chunk(2, dim=1),
out_norm(h) * (1 + scale) + shift, emb_out[..., None] while len(emb_out.shape) < len(h.shape));
AttentionBlock with QKVAttention (qkv.reshape(...).split(ch, dim=1), th.einsum("bct,bcs->bts",
q * scale, k * scale), th.softmax(weight.float(), dim=-1).type(weight.dtype)); Upsample by
F.interpolate(x, scale_factor=2, mode="nearest"), Downsample by a stride-2 conv. Training with
learned variances (the hybrid loss): the cosine beta schedule in NumPy, _extract_into_tensor
(th.from_numpy(arr)[timesteps].float(), res[..., None], expand), q_sample, th.split(model_output,
C, dim=1), the variational bound on frozen_out = th.cat([model_output.detach(),
model_var_values], dim=1) through normal_kl and discretized_gaussian_log_likelihood (th.where,
approx_standard_normal_cdf by th.tanh, clamp(min=1e-12)), mean_flat, UniformSampler's
np.random.choice timesteps, AdamW, update_ema by targ.detach().mul_(rate).add_(src, alpha=1 -
rate); then p_sample steps with th.randn_like noise and a (t != 0) mask under th.no_grad()."""
import math
from abc import abstractmethod

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

RES, C = 8, 3


def improved_diffusion_unet(th):
    nn, F = th.nn, th.nn.functional

    class CheckpointFunction(th.autograd.Function):
        @staticmethod
        def forward(ctx, run_function, length, *args):
            ctx.run_function = run_function
            ctx.input_tensors = list(args[:length])
            ctx.input_params = list(args[length:])
            with th.no_grad():
                output_tensors = ctx.run_function(*ctx.input_tensors)
            return output_tensors

        @staticmethod
        def backward(ctx, *output_grads):
            ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
            with th.enable_grad():
                # Fixes a bug where the first op in run_function modifies the
                # Tensor storage in place, which is not allowed for detach()'d
                # Tensors.
                shallow_copies = [x.view_as(x) for x in ctx.input_tensors]
                output_tensors = ctx.run_function(*shallow_copies)
            input_grads = th.autograd.grad(output_tensors, ctx.input_tensors + ctx.input_params, output_grads,
                                           allow_unused=True)
            del ctx.input_tensors
            del ctx.input_params
            del output_tensors
            return (None, None) + input_grads

    def checkpoint(func, inputs, params, flag):
        """Evaluate a function without caching intermediate activations, allowing for reduced
        memory at the expense of extra compute in the backward pass."""
        if flag:
            args = tuple(inputs) + tuple(params)
            return CheckpointFunction.apply(func, len(inputs), *args)
        else:
            return func(*inputs)

    class GroupNorm32(nn.GroupNorm):
        def forward(self, x):
            return super().forward(x.float()).type(x.dtype)

    def normalization(channels):
        return GroupNorm32(8, channels)

    def zero_module(module):
        """Zero out the parameters of a module and return it."""
        for p in module.parameters():
            p.detach().zero_()
        return module

    def timestep_embedding(timesteps, dim, max_period=10000):
        """Create sinusoidal timestep embeddings: timesteps a 1-D Tensor of N indices, one per
        batch element (may be fractional); returns an [N x dim] Tensor."""
        half = dim // 2
        freqs = th.exp(-math.log(max_period) * th.arange(start=0, end=half, dtype=th.float32) / half)
        args = timesteps[:, None].float() * freqs[None]
        embedding = th.cat([th.cos(args), th.sin(args)], dim=-1)
        if dim % 2:
            embedding = th.cat([embedding, th.zeros_like(embedding[:, :1])], dim=-1)
        return embedding

    class TimestepBlock(nn.Module):
        """Any module where forward() takes timestep embeddings as a second argument."""

        @abstractmethod
        def forward(self, x, emb):
            """Apply the module to `x` given `emb` timestep embeddings."""

    class TimestepEmbedSequential(nn.Sequential, TimestepBlock):
        """A sequential module that passes timestep embeddings to the children that support it
        as an extra input."""

        def forward(self, x, emb):
            for layer in self:
                if isinstance(layer, TimestepBlock):
                    x = layer(x, emb)
                else:
                    x = layer(x)
            return x

    class Upsample(nn.Module):
        def __init__(self, channels, use_conv):
            super().__init__()
            self.channels = channels
            self.use_conv = use_conv
            if use_conv:
                self.conv = nn.Conv2d(channels, channels, 3, padding=1)

        def forward(self, x):
            assert x.shape[1] == self.channels
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            if self.use_conv:
                x = self.conv(x)
            return x

    class Downsample(nn.Module):
        def __init__(self, channels, use_conv):
            super().__init__()
            self.channels = channels
            if use_conv:
                self.op = nn.Conv2d(channels, channels, 3, stride=2, padding=1)
            else:
                self.op = nn.AvgPool2d(kernel_size=2, stride=2)

        def forward(self, x):
            assert x.shape[1] == self.channels
            return self.op(x)

    class ResBlock(TimestepBlock):
        def __init__(self, channels, emb_channels, dropout, out_channels=None, use_scale_shift_norm=False,
                     use_checkpoint=False):
            super().__init__()
            self.channels = channels
            self.out_channels = out_channels or channels
            self.use_checkpoint = use_checkpoint
            self.use_scale_shift_norm = use_scale_shift_norm

            self.in_layers = nn.Sequential(
                normalization(channels),
                nn.SiLU(),
                nn.Conv2d(channels, self.out_channels, 3, padding=1),
            )
            self.emb_layers = nn.Sequential(
                nn.SiLU(),
                nn.Linear(emb_channels, 2 * self.out_channels if use_scale_shift_norm else self.out_channels),
            )
            self.out_layers = nn.Sequential(
                normalization(self.out_channels),
                nn.SiLU(),
                nn.Dropout(p=dropout),
                zero_module(nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1)),
            )
            if self.out_channels == channels:
                self.skip_connection = nn.Identity()
            else:
                self.skip_connection = nn.Conv2d(channels, self.out_channels, 1)

        def forward(self, x, emb):
            return checkpoint(self._forward, (x, emb), self.parameters(), self.use_checkpoint)

        def _forward(self, x, emb):
            h = self.in_layers(x)
            emb_out = self.emb_layers(emb).type(h.dtype)
            while len(emb_out.shape) < len(h.shape):
                emb_out = emb_out[..., None]
            if self.use_scale_shift_norm:
                out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
                scale, shift = th.chunk(emb_out, 2, dim=1)
                h = out_norm(h) * (1 + scale) + shift
                h = out_rest(h)
            else:
                h = h + emb_out
                h = self.out_layers(h)
            return self.skip_connection(x) + h

    class QKVAttention(nn.Module):
        def forward(self, qkv):
            """qkv: an [N x (H * 3 * C) x T] tensor of Qs, Ks, and Vs; returns [N x (H * C) x T]"""
            ch = qkv.shape[1] // 3
            q, k, v = th.split(qkv, ch, dim=1)
            scale = 1 / math.sqrt(math.sqrt(ch))
            weight = th.einsum("bct,bcs->bts", q * scale, k * scale)  # More stable with f16 than dividing afterwards
            weight = th.softmax(weight.float(), dim=-1).type(weight.dtype)
            return th.einsum("bts,bcs->bct", weight, v)

    class AttentionBlock(nn.Module):
        def __init__(self, channels, num_heads=1, use_checkpoint=False):
            super().__init__()
            self.channels = channels
            self.num_heads = num_heads
            self.use_checkpoint = use_checkpoint
            self.norm = normalization(channels)
            self.qkv = nn.Conv1d(channels, channels * 3, 1)
            self.attention = QKVAttention()
            self.proj_out = zero_module(nn.Conv1d(channels, channels, 1))

        def forward(self, x):
            return checkpoint(self._forward, (x,), self.parameters(), self.use_checkpoint)

        def _forward(self, x):
            b, c, *spatial = x.shape
            x = x.reshape(b, c, -1)
            qkv = self.qkv(self.norm(x))
            qkv = qkv.reshape(b * self.num_heads, -1, qkv.shape[2])
            h = self.attention(qkv)
            h = h.reshape(b, -1, h.shape[-1])
            h = self.proj_out(h)
            return (x + h).reshape(b, c, *spatial)

    class UNetModel(nn.Module):
        def __init__(self, in_channels, model_channels, out_channels, num_res_blocks, attention_resolutions,
                     dropout=0, channel_mult=(1, 2, 4, 8), conv_resample=True, use_checkpoint=False, num_heads=1,
                     use_scale_shift_norm=False):
            super().__init__()
            self.model_channels = model_channels
            time_embed_dim = model_channels * 4
            self.time_embed = nn.Sequential(
                nn.Linear(model_channels, time_embed_dim),
                nn.SiLU(),
                nn.Linear(time_embed_dim, time_embed_dim),
            )

            self.input_blocks = nn.ModuleList(
                [TimestepEmbedSequential(nn.Conv2d(in_channels, model_channels, 3, padding=1))])
            input_block_chans = [model_channels]
            ch = model_channels
            ds = 1
            for level, mult in enumerate(channel_mult):
                for _ in range(num_res_blocks):
                    layers = [ResBlock(ch, time_embed_dim, dropout, out_channels=mult * model_channels,
                                       use_checkpoint=use_checkpoint, use_scale_shift_norm=use_scale_shift_norm)]
                    ch = mult * model_channels
                    if ds in attention_resolutions:
                        layers.append(AttentionBlock(ch, use_checkpoint=use_checkpoint, num_heads=num_heads))
                    self.input_blocks.append(TimestepEmbedSequential(*layers))
                    input_block_chans.append(ch)
                if level != len(channel_mult) - 1:
                    self.input_blocks.append(TimestepEmbedSequential(Downsample(ch, conv_resample)))
                    input_block_chans.append(ch)
                    ds *= 2

            self.middle_block = TimestepEmbedSequential(
                ResBlock(ch, time_embed_dim, dropout, use_checkpoint=use_checkpoint,
                         use_scale_shift_norm=use_scale_shift_norm),
                AttentionBlock(ch, use_checkpoint=use_checkpoint, num_heads=num_heads),
                ResBlock(ch, time_embed_dim, dropout, use_checkpoint=use_checkpoint,
                         use_scale_shift_norm=use_scale_shift_norm),
            )

            self.output_blocks = nn.ModuleList([])
            for level, mult in list(enumerate(channel_mult))[::-1]:
                for i in range(num_res_blocks + 1):
                    layers = [ResBlock(ch + input_block_chans.pop(), time_embed_dim, dropout,
                                       out_channels=model_channels * mult, use_checkpoint=use_checkpoint,
                                       use_scale_shift_norm=use_scale_shift_norm)]
                    ch = model_channels * mult
                    if ds in attention_resolutions:
                        layers.append(AttentionBlock(ch, use_checkpoint=use_checkpoint, num_heads=num_heads))
                    if level and i == num_res_blocks:
                        layers.append(Upsample(ch, conv_resample))
                        ds //= 2
                    self.output_blocks.append(TimestepEmbedSequential(*layers))

            self.out = nn.Sequential(
                normalization(ch),
                nn.SiLU(),
                zero_module(nn.Conv2d(model_channels, out_channels, 3, padding=1)),
            )

        def forward(self, x, timesteps):
            hs = []
            emb = self.time_embed(timestep_embedding(timesteps, self.model_channels))
            h = x
            for module in self.input_blocks:
                h = module(h, emb)
                hs.append(h)
            h = self.middle_block(h, emb)
            for module in self.output_blocks:
                cat_in = th.cat([h, hs.pop()], dim=1)
                h = module(cat_in, emb)
            return self.out(h)

    return UNetModel


def betas_for_alpha_bar(num_diffusion_timesteps, alpha_bar, max_beta=0.999):
    betas = []
    for i in range(num_diffusion_timesteps):
        t1 = i / num_diffusion_timesteps
        t2 = (i + 1) / num_diffusion_timesteps
        betas.append(min(1 - alpha_bar(t2) / alpha_bar(t1), max_beta))
    return np.array(betas)


def gaussian_diffusion(th, T):
    """GaussianDiffusion's arrays and the functions of training_losses (hybrid loss) and p_sample."""
    betas = betas_for_alpha_bar(T, lambda t: math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2)
    alphas = 1.0 - betas
    alphas_cumprod = np.cumprod(alphas, axis=0)
    alphas_cumprod_prev = np.append(1.0, alphas_cumprod[:-1])
    sqrt_alphas_cumprod = np.sqrt(alphas_cumprod)
    sqrt_one_minus_alphas_cumprod = np.sqrt(1.0 - alphas_cumprod)
    sqrt_recip_alphas_cumprod = np.sqrt(1.0 / alphas_cumprod)
    sqrt_recipm1_alphas_cumprod = np.sqrt(1.0 / alphas_cumprod - 1)
    posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
    posterior_log_variance_clipped = np.log(np.append(posterior_variance[1], posterior_variance[1:]))
    posterior_mean_coef1 = betas * np.sqrt(alphas_cumprod_prev) / (1.0 - alphas_cumprod)
    posterior_mean_coef2 = (1.0 - alphas_cumprod_prev) * np.sqrt(alphas) / (1.0 - alphas_cumprod)

    def _extract_into_tensor(arr, timesteps, broadcast_shape):
        res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
        while len(res.shape) < len(broadcast_shape):
            res = res[..., None]
        return res.expand(broadcast_shape)

    def mean_flat(tensor):
        return tensor.mean(dim=list(range(1, len(tensor.shape))))

    def normal_kl(mean1, logvar1, mean2, logvar2):
        return 0.5 * (-1.0 + logvar2 - logvar1 + th.exp(logvar1 - logvar2)
                      + ((mean1 - mean2) ** 2) * th.exp(-logvar2))

    def approx_standard_normal_cdf(x):
        return 0.5 * (1.0 + th.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * th.pow(x, 3))))

    def discretized_gaussian_log_likelihood(x, *, means, log_scales):
        assert x.shape == means.shape == log_scales.shape
        centered_x = x - means
        inv_stdv = th.exp(-log_scales)
        plus_in = inv_stdv * (centered_x + 1.0 / 255.0)
        cdf_plus = approx_standard_normal_cdf(plus_in)
        min_in = inv_stdv * (centered_x - 1.0 / 255.0)
        cdf_min = approx_standard_normal_cdf(min_in)
        log_cdf_plus = th.log(cdf_plus.clamp(min=1e-12))
        log_one_minus_cdf_min = th.log((1.0 - cdf_min).clamp(min=1e-12))
        cdf_delta = cdf_plus - cdf_min
        log_probs = th.where(x < -0.999, log_cdf_plus,
                             th.where(x > 0.999, log_one_minus_cdf_min, th.log(cdf_delta.clamp(min=1e-12))))
        assert log_probs.shape == x.shape
        return log_probs

    def q_sample(x_start, t, noise):
        return (_extract_into_tensor(sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + _extract_into_tensor(sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def q_posterior_mean_variance(x_start, x_t, t):
        posterior_mean = (_extract_into_tensor(posterior_mean_coef1, t, x_t.shape) * x_start
                          + _extract_into_tensor(posterior_mean_coef2, t, x_t.shape) * x_t)
        return posterior_mean, _extract_into_tensor(posterior_log_variance_clipped, t, x_t.shape)

    def p_mean_variance(model_output, x, t, clip_denoised=True):
        model_output, model_var_values = th.split(model_output, C, dim=1)
        min_log = _extract_into_tensor(posterior_log_variance_clipped, t, x.shape)
        max_log = _extract_into_tensor(np.log(betas), t, x.shape)
        # The model_var_values is [-1, 1] for [min_var, max_var].
        frac = (model_var_values + 1) / 2
        model_log_variance = frac * max_log + (1 - frac) * min_log
        pred_xstart = (_extract_into_tensor(sqrt_recip_alphas_cumprod, t, x.shape) * x
                       - _extract_into_tensor(sqrt_recipm1_alphas_cumprod, t, x.shape) * model_output)
        if clip_denoised:
            pred_xstart = pred_xstart.clamp(-1, 1)
        model_mean, _ = q_posterior_mean_variance(pred_xstart, x, t)
        return model_mean, model_log_variance, pred_xstart

    def vb_terms_bpd(model_output, x_start, x_t, t):
        true_mean, true_log_variance_clipped = q_posterior_mean_variance(x_start, x_t, t)
        mean, log_variance, _ = p_mean_variance(model_output, x_t, t, clip_denoised=False)
        kl = normal_kl(true_mean, true_log_variance_clipped, mean, log_variance)
        kl = mean_flat(kl) / np.log(2.0)
        decoder_nll = -discretized_gaussian_log_likelihood(x_start, means=mean, log_scales=0.5 * log_variance)
        decoder_nll = mean_flat(decoder_nll) / np.log(2.0)
        # At the first timestep return the decoder NLL, otherwise return KL(q(x_{t-1}|x_t,x_0) || p(x_{t-1}|x_t))
        return th.where((t == 0), decoder_nll, kl)

    def training_losses(model, x_start, t, noise):
        x_t = q_sample(x_start, t, noise=noise)
        terms = {}
        model_output = model(x_t, t)
        B = x_t.shape[0]
        assert model_output.shape == (B, C * 2, *x_t.shape[2:])
        model_output, model_var_values = th.split(model_output, C, dim=1)
        # Learn the variance using the variational bound, but don't let it affect our mean prediction.
        frozen_out = th.cat([model_output.detach(), model_var_values], dim=1)
        terms["vb"] = vb_terms_bpd(frozen_out, x_start, x_t, t)
        terms["vb"] *= T / 1000.0  # Divide by 1000 for equivalence with initial implementation.
        terms["mse"] = mean_flat((noise - model_output) ** 2)
        terms["loss"] = terms["mse"] + terms["vb"]
        return terms

    def p_sample(model, x, t):
        model_mean, model_log_variance, pred_xstart = p_mean_variance(model(x, t), x, t)
        noise = th.randn_like(x)
        nonzero_mask = (t != 0).float().view(-1, *([1] * (len(x.shape) - 1)))  # no noise when t == 0
        return model_mean + nonzero_mask * th.exp(0.5 * model_log_variance) * noise, pred_xstart

    return training_losses, p_sample


def images(rng, n):
    """8x8 RGB images scaled to [-1, 1]: a bright disc on a colour gradient."""
    r, c = np.meshgrid(np.arange(RES), np.arange(RES), indexing="ij")
    out = np.empty((n, C, RES, RES))
    for i in range(n):
        cy, cx = rng.uniform(2, 6, 2)
        disc = ((r - cy) ** 2 + (c - cx) ** 2 < 4).astype(float)
        out[i] = rng.uniform(0, 0.5, (C, 1, 1)) * c / RES + disc
    return (2 * np.clip(out, 0, 1) - 1).astype(np.float32)


def improved_diffusion(th, init=None, steps=3, batch=4, T=50, use_checkpoint=True):
    th.manual_seed(0)
    UNetModel = improved_diffusion_unet(th)
    model = UNetModel(in_channels=C, model_channels=16, out_channels=2 * C, num_res_blocks=1,
                      attention_resolutions=(2,), channel_mult=(1, 2), use_checkpoint=use_checkpoint, num_heads=2,
                      use_scale_shift_norm=True)
    result = {"zeroed": float(sum(p.abs().sum() for p in model.out[-1].parameters()))}
    start_from(th, model, init, result)
    training_losses, p_sample = gaussian_diffusion(th, T)
    ema_params = [p.detach().clone() for p in model.parameters()]
    opt = th.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)

    def update_ema(target_params, source_params, rate=0.99):
        for targ, src in zip(target_params, source_params):
            targ.detach().mul_(rate).add_(src, alpha=1 - rate)

    rng = np.random.default_rng(1)
    np_random = np.random.RandomState(2)  # resample.py's UniformSampler draws with np.random
    th.manual_seed(1)
    losses, mses, vbs = [], [], []
    for step in range(steps):
        batch_x = th.from_numpy(images(rng, batch))
        w = np.ones([T])
        p = w / np.sum(w)
        indices_np = np_random.choice(len(p), size=(batch,), p=p)
        t = th.from_numpy(indices_np).long()
        weights = th.from_numpy(1 / (len(p) * p[indices_np])).float()
        noise = th.randn_like(batch_x)
        terms = training_losses(model, batch_x, t, noise)
        loss = (terms["loss"] * weights).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        update_ema(ema_params, model.parameters())
        losses.append(loss.item())
        mses.append(terms["mse"].mean().item())
        vbs.append(numpy_of(terms["vb"]))

    samples = []
    with th.no_grad():
        x = th.randn(2, C, RES, RES)
        for i in [3, 2, 1, 0]:
            x, pred_xstart = p_sample(model, x, th.tensor([i] * 2))
            samples.append(numpy_of(x))
    result.update(losses=losses, mses=mses, vbs=vbs, samples=samples, ema=[numpy_of(p) for p in ema_params],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_improved_diffusion_with_checkpointing():
    ref, got = compare_program(improved_diffusion)
    assert ref["zeroed"] == got["zeroed"] == 0.0  # zero_module on the output conv
    assert ref["state"]["out.2.weight"].any()  # trained away from zero through the checkpointed blocks


def test_checkpointing_changes_nothing():
    """use_checkpoint only trades memory for compute: the same numbers as without it."""
    ref, got = compare_program(improved_diffusion, steps=1, use_checkpoint=False)
    ref_ckpt, got_ckpt = compare_program(improved_diffusion, steps=1)
    np.testing.assert_allclose(got_ckpt["losses"], got["losses"], rtol=1e-6)
    for k in got["state"]:
        np.testing.assert_allclose(got_ckpt["state"][k], got["state"][k], rtol=1e-4, atol=1e-6, err_msg=k)
