"""ermongroup/ddim's diffusion UNet and training loop (models/diffusion.py, functions/losses.py,
models/ema.py, functions/denoising.py, runners/diffusion.py), the PyTorch port of the original
DDPM network, at a tiny size: get_timestep_embedding (math.log(10000) / (half_dim - 1),
torch.exp(torch.arange(half_dim, dtype=torch.float32) * -emb), timesteps.float()[:, None] *
emb[None, :], torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)); swish as x * torch.sigmoid(x);
GroupNorm(num_groups=32, eps=1e-6); Upsample by F.interpolate(x, scale_factor=2.0,
mode="nearest") then a conv; Downsample by F.pad(x, (0, 1, 0, 1), mode="constant", value=0) and a
stride-2 conv; ResnetBlock with the time embedding added as temb_proj(...)[:, :, None, None] and a
1x1 nin_shortcut; AttnBlock in the bottleneck (1x1 q/k/v convs, reshape and permute, torch.bmm,
w_ * (int(c) ** (-0.5)), softmax(dim=2)); the Model assembling down / mid / up stages from bare
nn.Module() containers with .block, .attn, .downsample attributes and nn.ModuleList,
up.insert(0, up), skip connections by torch.cat([h, hs.pop()], dim=1). Training: data scaled to
[-1, 1], betas from np.linspace(..., dtype=np.float64) turned into a tensor, antithetic timesteps
torch.cat([t, num_timesteps - t - 1], dim=0)[:n] from torch.randint, noise by torch.randn_like,
noise_estimation_loss ((1 - b).cumprod(dim=0).index_select(0, t).view(-1, 1, 1, 1), x0 * a.sqrt()
+ e * (1.0 - a).sqrt(), (e - output).square().sum(dim=(1, 2, 3)).mean(dim=0)), Adam,
clip_grad_norm_, EMAHelper (shadow copies by param.data.clone(), ema.load_state_dict into a
copy.deepcopy of the model); sampling by generalized_steps (DDIM, eta=0) and with eta=1 (a DDPM
step: torch.randn_like noise at each step) under torch.no_grad()."""
import copy
import math

import numpy as np

from prog_helpers import assert_same_results, numpy_of, run_both, start_from

RES = 8


def diffusion_model(torch):
    nn = torch.nn

    def get_timestep_embedding(timesteps, embedding_dim):
        """Sinusoidal embeddings of the timesteps, as in Denoising Diffusion Probabilistic Models
        (from Fairseq / tensor2tensor, slightly different from section 3.5 of "Attention Is All
        You Need")."""
        assert len(timesteps.shape) == 1

        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float32) * -emb)
        emb = emb.to(device=timesteps.device)
        emb = timesteps.float()[:, None] * emb[None, :]
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)
        if embedding_dim % 2 == 1:  # zero pad
            emb = torch.nn.functional.pad(emb, (0, 1, 0, 0))
        return emb

    def nonlinearity(x):
        # swish
        return x * torch.sigmoid(x)

    def Normalize(in_channels):
        return torch.nn.GroupNorm(num_groups=32, num_channels=in_channels, eps=1e-6, affine=True)

    class Upsample(nn.Module):
        def __init__(self, in_channels, with_conv):
            super().__init__()
            self.with_conv = with_conv
            if self.with_conv:
                self.conv = torch.nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1)

        def forward(self, x):
            x = torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
            if self.with_conv:
                x = self.conv(x)
            return x

    class Downsample(nn.Module):
        def __init__(self, in_channels, with_conv):
            super().__init__()
            self.with_conv = with_conv
            if self.with_conv:
                # no asymmetric padding in torch conv, must do it ourselves
                self.conv = torch.nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=2, padding=0)

        def forward(self, x):
            if self.with_conv:
                pad = (0, 1, 0, 1)
                x = torch.nn.functional.pad(x, pad, mode="constant", value=0)
                x = self.conv(x)
            else:
                x = torch.nn.functional.avg_pool2d(x, kernel_size=2, stride=2)
            return x

    class ResnetBlock(nn.Module):
        def __init__(self, *, in_channels, out_channels=None, conv_shortcut=False, dropout, temb_channels=512):
            super().__init__()
            self.in_channels = in_channels
            out_channels = in_channels if out_channels is None else out_channels
            self.out_channels = out_channels
            self.use_conv_shortcut = conv_shortcut

            self.norm1 = Normalize(in_channels)
            self.conv1 = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
            self.temb_proj = torch.nn.Linear(temb_channels, out_channels)
            self.norm2 = Normalize(out_channels)
            self.dropout = torch.nn.Dropout(dropout)
            self.conv2 = torch.nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
            if self.in_channels != self.out_channels:
                if self.use_conv_shortcut:
                    self.conv_shortcut = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1,
                                                         padding=1)
                else:
                    self.nin_shortcut = torch.nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1,
                                                        padding=0)

        def forward(self, x, temb):
            h = x
            h = self.norm1(h)
            h = nonlinearity(h)
            h = self.conv1(h)

            h = h + self.temb_proj(nonlinearity(temb))[:, :, None, None]

            h = self.norm2(h)
            h = nonlinearity(h)
            h = self.dropout(h)
            h = self.conv2(h)

            if self.in_channels != self.out_channels:
                if self.use_conv_shortcut:
                    x = self.conv_shortcut(x)
                else:
                    x = self.nin_shortcut(x)

            return x + h

    class AttnBlock(nn.Module):
        def __init__(self, in_channels):
            super().__init__()
            self.in_channels = in_channels

            self.norm = Normalize(in_channels)
            self.q = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
            self.k = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
            self.v = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)
            self.proj_out = torch.nn.Conv2d(in_channels, in_channels, kernel_size=1, stride=1, padding=0)

        def forward(self, x):
            h_ = x
            h_ = self.norm(h_)
            q = self.q(h_)
            k = self.k(h_)
            v = self.v(h_)

            # compute attention
            b, c, h, w = q.shape
            q = q.reshape(b, c, h * w)
            q = q.permute(0, 2, 1)   # b,hw,c
            k = k.reshape(b, c, h * w)  # b,c,hw
            w_ = torch.bmm(q, k)     # b,hw,hw    w[b,i,j]=sum_c q[b,i,c]k[b,c,j]
            w_ = w_ * (int(c) ** (-0.5))
            w_ = torch.nn.functional.softmax(w_, dim=2)

            # attend to values
            v = v.reshape(b, c, h * w)
            w_ = w_.permute(0, 2, 1)   # b,hw,hw (first hw of k, second of q)
            h_ = torch.bmm(v, w_)     # b, c,hw (hw of q) h_[b,c,j] = sum_i v[b,c,i] w_[b,i,j]
            h_ = h_.reshape(b, c, h, w)

            h_ = self.proj_out(h_)

            return x + h_

    class Model(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            ch, out_ch, ch_mult = config.model.ch, config.model.out_ch, tuple(config.model.ch_mult)
            num_res_blocks = config.model.num_res_blocks
            attn_resolutions = config.model.attn_resolutions
            dropout = config.model.dropout
            in_channels = config.model.in_channels
            resolution = config.data.image_size
            resamp_with_conv = config.model.resamp_with_conv

            self.ch = ch
            self.temb_ch = self.ch * 4
            self.num_resolutions = len(ch_mult)
            self.num_res_blocks = num_res_blocks
            self.resolution = resolution
            self.in_channels = in_channels

            # timestep embedding
            self.temb = nn.Module()
            self.temb.dense = nn.ModuleList([
                torch.nn.Linear(self.ch, self.temb_ch),
                torch.nn.Linear(self.temb_ch, self.temb_ch),
            ])

            # downsampling
            self.conv_in = torch.nn.Conv2d(in_channels, self.ch, kernel_size=3, stride=1, padding=1)

            curr_res = resolution
            in_ch_mult = (1,) + ch_mult
            self.down = nn.ModuleList()
            block_in = None
            for i_level in range(self.num_resolutions):
                block = nn.ModuleList()
                attn = nn.ModuleList()
                block_in = ch * in_ch_mult[i_level]
                block_out = ch * ch_mult[i_level]
                for i_block in range(self.num_res_blocks):
                    block.append(ResnetBlock(in_channels=block_in, out_channels=block_out,
                                             temb_channels=self.temb_ch, dropout=dropout))
                    block_in = block_out
                    if curr_res in attn_resolutions:
                        attn.append(AttnBlock(block_in))
                down = nn.Module()
                down.block = block
                down.attn = attn
                if i_level != self.num_resolutions - 1:
                    down.downsample = Downsample(block_in, resamp_with_conv)
                    curr_res = curr_res // 2
                self.down.append(down)

            # middle
            self.mid = nn.Module()
            self.mid.block_1 = ResnetBlock(in_channels=block_in, out_channels=block_in,
                                           temb_channels=self.temb_ch, dropout=dropout)
            self.mid.attn_1 = AttnBlock(block_in)
            self.mid.block_2 = ResnetBlock(in_channels=block_in, out_channels=block_in,
                                           temb_channels=self.temb_ch, dropout=dropout)

            # upsampling
            self.up = nn.ModuleList()
            for i_level in reversed(range(self.num_resolutions)):
                block = nn.ModuleList()
                attn = nn.ModuleList()
                block_out = ch * ch_mult[i_level]
                skip_in = ch * ch_mult[i_level]
                for i_block in range(self.num_res_blocks + 1):
                    if i_block == self.num_res_blocks:
                        skip_in = ch * in_ch_mult[i_level]
                    block.append(ResnetBlock(in_channels=block_in + skip_in, out_channels=block_out,
                                             temb_channels=self.temb_ch, dropout=dropout))
                    block_in = block_out
                    if curr_res in attn_resolutions:
                        attn.append(AttnBlock(block_in))
                up = nn.Module()
                up.block = block
                up.attn = attn
                if i_level != 0:
                    up.upsample = Upsample(block_in, resamp_with_conv)
                    curr_res = curr_res * 2
                self.up.insert(0, up)  # prepend to get consistent order

            # end
            self.norm_out = Normalize(block_in)
            self.conv_out = torch.nn.Conv2d(block_in, out_ch, kernel_size=3, stride=1, padding=1)

        def forward(self, x, t):
            assert x.shape[2] == x.shape[3] == self.resolution

            # timestep embedding
            temb = get_timestep_embedding(t, self.ch)
            temb = self.temb.dense[0](temb)
            temb = nonlinearity(temb)
            temb = self.temb.dense[1](temb)

            # downsampling
            hs = [self.conv_in(x)]
            for i_level in range(self.num_resolutions):
                for i_block in range(self.num_res_blocks):
                    h = self.down[i_level].block[i_block](hs[-1], temb)
                    if len(self.down[i_level].attn) > 0:
                        h = self.down[i_level].attn[i_block](h)
                    hs.append(h)
                if i_level != self.num_resolutions - 1:
                    hs.append(self.down[i_level].downsample(hs[-1]))

            # middle
            h = hs[-1]
            h = self.mid.block_1(h, temb)
            h = self.mid.attn_1(h)
            h = self.mid.block_2(h, temb)

            # upsampling
            for i_level in reversed(range(self.num_resolutions)):
                for i_block in range(self.num_res_blocks + 1):
                    h = self.up[i_level].block[i_block](torch.cat([h, hs.pop()], dim=1), temb)
                    if len(self.up[i_level].attn) > 0:
                        h = self.up[i_level].attn[i_block](h)
                if i_level != 0:
                    h = self.up[i_level].upsample(h)

            # end
            h = self.norm_out(h)
            h = nonlinearity(h)
            h = self.conv_out(h)
            return h

    return Model, get_timestep_embedding


class Namespace:
    """The runner's config: nested attribute access over dicts (as its dict2namespace makes)."""

    def __init__(self, **entries):
        for key, value in entries.items():
            setattr(self, key, Namespace(**value) if isinstance(value, dict) else value)


CONFIG = dict(
    data=dict(image_size=RES, channels=3),
    model=dict(ch=32, out_ch=3, ch_mult=[1, 2], num_res_blocks=1, attn_resolutions=[RES // 2], dropout=0.0,
               in_channels=3, resamp_with_conv=True, ema_rate=0.9),
    diffusion=dict(beta_schedule="linear", beta_start=0.0001, beta_end=0.02, num_diffusion_timesteps=100),
    optim=dict(lr=2e-4, weight_decay=0.000, beta1=0.9, amsgrad=False, eps=1e-8, grad_clip=1.0),
)


def get_beta_schedule(beta_schedule, *, beta_start, beta_end, num_diffusion_timesteps):
    def sigmoid(x):
        return 1 / (np.exp(-x) + 1)

    if beta_schedule == "linear":
        betas = np.linspace(beta_start, beta_end, num_diffusion_timesteps, dtype=np.float64)
    elif beta_schedule == "sigmoid":
        betas = np.linspace(-6, 6, num_diffusion_timesteps)
        betas = sigmoid(betas) * (beta_end - beta_start) + beta_start
    else:
        raise NotImplementedError(beta_schedule)
    assert betas.shape == (num_diffusion_timesteps,)
    return betas


class EMAHelper(object):
    def __init__(self, mu=0.999):
        self.mu = mu
        self.shadow = {}

    def register(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                self.shadow[name] = param.data.clone()

    def update(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                self.shadow[name].data = (1. - self.mu) * param.data + self.mu * self.shadow[name].data

    def ema(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                param.data.copy_(self.shadow[name].data)

    def ema_copy(self, module):
        module_copy = copy.deepcopy(module)
        self.ema(module_copy)
        return module_copy

    def state_dict(self):
        return self.shadow

    def load_state_dict(self, state_dict):
        self.shadow = state_dict


def images(rng, n):
    """8x8 RGB images in [0, 1]: smooth colour gradients with a random bright square."""
    r, c = np.meshgrid(np.linspace(0, 1, RES), np.linspace(0, 1, RES), indexing="ij")
    out = np.empty((n, 3, RES, RES))
    for i in range(n):
        a = rng.uniform(0, 1, 3)
        out[i] = a[:, None, None] * r + (1 - a[:, None, None]) * c
        y, x = rng.integers(0, RES - 3, 2)
        out[i, :, y:y + 3, x:x + 3] = 1.0
    return out.astype(np.float32)


def diffusion_training(torch, init=None, steps=3, batch=4, sample_steps=4):
    torch.manual_seed(0)
    config = Namespace(**CONFIG)
    Model, get_timestep_embedding = diffusion_model(torch)
    model = Model(config)
    result = {"n_params": sum(p.numel() for p in model.parameters()),
              "temb": numpy_of(get_timestep_embedding(torch.tensor([0, 7, 99]), 33))}
    start_from(torch, model, init, result)

    betas = get_beta_schedule(beta_schedule=config.diffusion.beta_schedule,
                              beta_start=config.diffusion.beta_start, beta_end=config.diffusion.beta_end,
                              num_diffusion_timesteps=config.diffusion.num_diffusion_timesteps)
    b = torch.from_numpy(betas).float()
    num_timesteps = betas.shape[0]

    def noise_estimation_loss(model, x0, t, e, b, keepdim=False):
        a = (1 - b).cumprod(dim=0).index_select(0, t).view(-1, 1, 1, 1)
        x = x0 * a.sqrt() + e * (1.0 - a).sqrt()
        output = model(x, t.float())
        if keepdim:
            return (e - output).square().sum(dim=(1, 2, 3))
        else:
            return (e - output).square().sum(dim=(1, 2, 3)).mean(dim=0)

    optimizer = torch.optim.Adam(model.parameters(), lr=config.optim.lr, weight_decay=config.optim.weight_decay,
                                 betas=(config.optim.beta1, 0.999), amsgrad=config.optim.amsgrad,
                                 eps=config.optim.eps)
    ema_helper = EMAHelper(mu=config.model.ema_rate)
    ema_helper.register(model)

    rng = np.random.default_rng(1)
    losses, ts, norms = [], [], []
    torch.manual_seed(1)  # timesteps and noise: both libraries draw PyTorch's CPU streams
    for step in range(steps):
        x = torch.from_numpy(images(rng, batch))
        n = x.size(0)
        model.train()
        x = 2 * x - 1.0  # data_transform: [0, 1] -> [-1, 1]
        e = torch.randn_like(x)
        # antithetic sampling
        t = torch.randint(low=0, high=num_timesteps, size=(n // 2 + 1,))
        t = torch.cat([t, num_timesteps - t - 1], dim=0)[:n]
        loss = noise_estimation_loss(model, x, t, e, b)
        optimizer.zero_grad()
        loss.backward()
        if step == 0:  # each parameter's largest gradient, to tell the ones that get none
            result["own"] = {"grad0": {k: p.grad.abs().max().item() for k, p in model.named_parameters()}}
        try:
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.grad_clip)))
        except Exception:
            pass
        optimizer.step()
        ema_helper.update(model)
        losses.append(loss.item())
        ts.append(t.tolist())

    def compute_alpha(beta, t):
        beta = torch.cat([torch.zeros(1).to(beta.device), beta], dim=0)
        a = (1 - beta).cumprod(dim=0).index_select(0, t + 1).view(-1, 1, 1, 1)
        return a

    def generalized_steps(x, seq, model, b, **kwargs):
        with torch.no_grad():
            n = x.size(0)
            seq_next = [-1] + list(seq[:-1])
            x0_preds = []
            xs = [x]
            for i, j in zip(reversed(seq), reversed(seq_next)):
                t = (torch.ones(n) * i).to(x.device)
                next_t = (torch.ones(n) * j).to(x.device)
                at = compute_alpha(b, t.long())
                at_next = compute_alpha(b, next_t.long())
                xt = xs[-1].to(x.device)
                et = model(xt, t)
                x0_t = (xt - et * (1 - at).sqrt()) / at.sqrt()
                x0_preds.append(x0_t.to('cpu'))
                c1 = kwargs.get("eta", 0) * ((1 - at / at_next) * (1 - at_next) / (1 - at)).sqrt()
                c2 = ((1 - at_next) - c1 ** 2).sqrt()
                xt_next = at_next.sqrt() * x0_t + c1 * torch.randn_like(x) + c2 * et
                xs.append(xt_next.to('cpu'))
        return xs, x0_preds

    def inverse_data_transform(X):
        return torch.clamp((X + 1.0) / 2.0, 0.0, 1.0)

    ema_model = ema_helper.ema_copy(model)
    ema_model.eval()
    skip = num_timesteps // sample_steps
    seq = range(0, num_timesteps, skip)
    x = torch.randn(2, config.data.channels, config.data.image_size, config.data.image_size)
    ddim_xs, ddim_x0 = generalized_steps(x, seq, ema_model, b, eta=0.0)
    ddpm_xs, _ = generalized_steps(x, seq, ema_model, b, eta=1.0)
    result.update(losses=losses, ts=ts, norms=norms, ddim=numpy_of(inverse_data_transform(ddim_xs[-1])),
                  ddim_x0=[numpy_of(p) for p in ddim_x0], ddpm=numpy_of(inverse_data_transform(ddpm_xs[-1])),
                  ema={k: numpy_of(v) for k, v in ema_helper.state_dict().items()},
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_diffusion_unet_training_and_sampling():
    ref, got = run_both(diffusion_training)
    # Adam steps each weight by up to lr whatever its gradient's size, so a weight whose gradient
    # is near zero moves by rounding noise: the weights get atol 1e-4 (half of lr = 2e-4). Some
    # biases get no gradient at all but that noise (a conv or temb bias right before a GroupNorm
    # of one channel per group, the attention's k bias, which softmax drops): they are bounded by
    # the steps' total. Losses, gradient norms and samples are compared at the usual tolerance.
    grad0 = ref["own"]["grad0"]
    largest = max(grad0.values())
    null = sorted(k for k, g in grad0.items() if g < 1e-4 * largest)
    assert "mid.attn_1.k.bias" in null and "mid.attn_1.q.bias" not in null
    for key in ("state", "ema"):
        for name in null:
            np.testing.assert_allclose(got[key].pop(name), ref[key].pop(name), rtol=0, atol=2 * 3 * 2e-4)
        assert_same_results(got.pop(key), ref.pop(key), atol=1e-4, path=key)
    assert_same_results(got, ref)
    assert ref["temb"].shape == (3, 33) and np.all(ref["temb"][:, -1] == 0)  # odd width: zero pad
    assert all(len(t) == 4 and t[0] + t[3] == 99 for t in ref["ts"])  # antithetic pairs
    assert np.abs(ref["ddpm"] - ref["ddim"]).max() > 1e-3  # eta=1 draws fresh noise each step
