"""A DDPM training step and sampler as the diffusion tutorials write them: betas from
torch.linspace (and the cosine schedule with torch.clip), alphas_cumprod by torch.cumprod,
alphas_cumprod_prev by F.pad(..., (1, 0), value=1.0), an extract() that gathers per-timestep
coefficients with a.gather(-1, t.cpu()) and reshapes to (batch, 1, 1, 1), q_sample with
torch.randn_like noise, a sinusoidal time embedding (math.log(10000) / (half_dim - 1),
torch.exp(torch.arange(half_dim) * -emb), torch.cat((emb.sin(), emb.cos()), dim=-1)), a small
UNet of ResNet blocks with GroupNorm, SiLU, time-conditioned shift through rearranged
Linear output, Conv2d downsampling, ConvTranspose2d upsampling and torch.cat skips, F.smooth_l1_loss
/ F.mse_loss, Adam; and the reverse process p_sample under @torch.no_grad() with
torch.full((b,), i, dtype=torch.long) and posterior variances."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def ddpm(torch, init=None, steps=3, timesteps=50, schedule="linear"):
    nn, F = torch.nn, torch.nn.functional

    def linear_beta_schedule(timesteps):
        beta_start = 0.0001
        beta_end = 0.02
        return torch.linspace(beta_start, beta_end, timesteps)

    def cosine_beta_schedule(timesteps, s=0.008):
        steps = timesteps + 1
        x = torch.linspace(0, timesteps, steps)
        alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
        alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
        betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
        return torch.clip(betas, 0.0001, 0.9999)

    betas = linear_beta_schedule(timesteps) if schedule == "linear" else cosine_beta_schedule(timesteps)
    alphas = 1. - betas
    alphas_cumprod = torch.cumprod(alphas, axis=0)
    alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
    sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
    sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)
    posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)

    def extract(a, t, x_shape):
        batch_size = t.shape[0]
        out = a.gather(-1, t.cpu())
        return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)

    rng = np.random.default_rng(0)

    def q_sample(x_start, t, noise=None):
        if noise is None:
            noise = torch.randn_like(x_start)
        sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape)
        return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise

    class SinusoidalPositionEmbeddings(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, time):
            device = time.device
            half_dim = self.dim // 2
            embeddings = math.log(10000) / (half_dim - 1)
            embeddings = torch.exp(torch.arange(half_dim, device=device) * -embeddings)
            embeddings = time[:, None] * embeddings[None, :]
            embeddings = torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)
            return embeddings

    class Block(nn.Module):
        def __init__(self, dim, dim_out, groups=4):
            super().__init__()
            self.proj = nn.Conv2d(dim, dim_out, 3, padding=1)
            self.norm = nn.GroupNorm(groups, dim_out)
            self.act = nn.SiLU()

        def forward(self, x, scale_shift=None):
            x = self.proj(x)
            x = self.norm(x)
            if scale_shift is not None:
                scale, shift = scale_shift
                x = x * (scale + 1) + shift
            return self.act(x)

    class ResnetBlock(nn.Module):
        def __init__(self, dim, dim_out, *, time_emb_dim=None, groups=4):
            super().__init__()
            self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2)) if time_emb_dim else None
            self.block1 = Block(dim, dim_out, groups=groups)
            self.block2 = Block(dim_out, dim_out, groups=groups)
            self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

        def forward(self, x, time_emb=None):
            scale_shift = None
            if self.mlp is not None and time_emb is not None:
                time_emb = self.mlp(time_emb)
                time_emb = time_emb[:, :, None, None]
                scale_shift = time_emb.chunk(2, dim=1)
            h = self.block1(x, scale_shift=scale_shift)
            h = self.block2(h)
            return h + self.res_conv(x)

    class Unet(nn.Module):
        def __init__(self, dim=8, channels=1):
            super().__init__()
            time_dim = dim * 4
            self.init_conv = nn.Conv2d(channels, dim, 1, padding=0)
            self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(dim), nn.Linear(dim, time_dim), nn.GELU(),
                                          nn.Linear(time_dim, time_dim))
            self.down1 = ResnetBlock(dim, dim, time_emb_dim=time_dim)
            self.downsample = nn.Conv2d(dim, dim * 2, 4, 2, 1)
            self.mid = ResnetBlock(dim * 2, dim * 2, time_emb_dim=time_dim)
            self.upsample = nn.ConvTranspose2d(dim * 2, dim, 4, 2, 1)
            self.up1 = ResnetBlock(dim * 2, dim, time_emb_dim=time_dim)
            self.final_conv = nn.Conv2d(dim, channels, 1)

        def forward(self, x, time):
            x = self.init_conv(x)
            r = x.clone()
            t = self.time_mlp(time)
            h = self.down1(x, t)
            x = self.downsample(h)
            x = self.mid(x, t)
            x = self.upsample(x)
            x = torch.cat((x, h), dim=1)
            x = self.up1(x, t)
            return self.final_conv(x + r)

    torch.manual_seed(0)
    model = Unet()
    result = {"sched": [numpy_of(betas), numpy_of(alphas_cumprod), numpy_of(posterior_variance)]}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def p_losses(denoise_model, x_start, t, noise=None, loss_type="l1"):
        if noise is None:
            noise = torch.randn_like(x_start)
        x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
        predicted_noise = denoise_model(x_noisy, t)
        if loss_type == 'l1':
            loss = F.l1_loss(noise, predicted_noise)
        elif loss_type == 'l2':
            loss = F.mse_loss(noise, predicted_noise)
        elif loss_type == "huber":
            loss = F.smooth_l1_loss(noise, predicted_noise)
        else:
            raise NotImplementedError()
        return loss

    losses = []
    for step, loss_type in zip(range(steps), ["huber", "l2", "l1"] * steps):
        batch = torch.from_numpy(rng.uniform(-1, 1, (4, 1, 8, 8)).astype(np.float32))
        optimizer.zero_grad()
        batch_size = batch.shape[0]
        t = torch.from_numpy(rng.integers(0, timesteps, (batch_size,)))
        noise = torch.from_numpy(rng.standard_normal(batch.shape).astype(np.float32))
        loss = p_losses(model, batch, t, noise=noise, loss_type=loss_type)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result["losses"] = losses
    own_noise = torch.randn_like(batch)
    result["own"] = {"randn_like": [list(own_noise.shape), str(own_noise.dtype)]}

    @torch.no_grad()
    def p_sample(model, x, t, t_index, z):
        betas_t = extract(betas, t, x.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x.shape)
        sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t, x.shape)
        model_mean = sqrt_recip_alphas_t * (x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t)
        if t_index == 0:
            return model_mean
        posterior_variance_t = extract(posterior_variance, t, x.shape)
        return model_mean + torch.sqrt(posterior_variance_t) * z

    @torch.no_grad()
    def p_sample_loop(model, shape):
        b = shape[0]
        img = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        imgs = []
        for i in reversed(range(0, timesteps, 10)):
            z = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
            img = p_sample(model, img, torch.full((b,), i, dtype=torch.long), i, z)
            imgs.append(img.cpu().numpy())
        return imgs

    model.eval()
    result["samples"] = p_sample_loop(model, (2, 1, 8, 8))
    return result


def test_ddpm_linear_schedule():
    compare_program(ddpm, rtol=1e-3, atol=1e-4)


def test_ddpm_cosine_schedule():
    compare_program(ddpm, schedule="cosine", rtol=1e-3, atol=1e-4)
