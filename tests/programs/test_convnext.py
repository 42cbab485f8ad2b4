"""A small ConvNeXt as facebookresearch/ConvNeXt's models/convnext.py writes it, trained by the
pieces of its main.py / engine.py / utils.py and timm that a run uses: the block (depthwise 7x7
Conv2d with groups=dim, permute to channels-last, nn.LayerNorm-style norm, Linear 4x expansion,
GELU, layer scale gamma = nn.Parameter(init * torch.ones((dim))), permute back, DropPath); the
hand-written LayerNorm for data_format="channels_first" (x.mean(1, keepdim=True), (x - u).pow(2),
torch.sqrt(s + eps), self.weight[:, None, None] * x + self.bias[:, None, None]) beside
F.layer_norm for channels_last; stem and downsampling layers in an nn.ModuleList, dp_rates from
torch.linspace(...).item(), self.apply(self._init_weights) with trunc_normal_ and constant_, the
head scaled by head.weight.data.mul_(head_init_scale), x.mean([-2, -1]) before the last norm.
Training: timm's Mixup (lam from NumPy's beta, x.flip(0).mul_(1. - lam), x.mul_(lam).add_(...),
targets by torch.full(...).scatter_(1, target.long().view(-1, 1), on_value)),
SoftTargetCrossEntropy (torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1).mean()), AdamW over
decay / no-decay parameter groups, utils.cosine_scheduler's NumPy per-iteration lr and weight-decay
schedules written into param_groups, gradient accumulation (loss /= update_freq, step every
update_freq iterations) and timm's ModelEmaV2 (copy.deepcopy, ema_v.copy_(...) over
state_dict().values() under torch.no_grad()); then the model and its EMA evaluated."""
import copy
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

IMG, CLASSES = 32, 5


def convnext_model(torch):
    nn, F = torch.nn, torch.nn.functional
    trunc_normal_ = nn.init.trunc_normal_

    class DropPath(nn.Module):
        """timm's stochastic depth: whole residual branches dropped per sample in training."""

        def __init__(self, drop_prob=0.):
            super().__init__()
            self.drop_prob = drop_prob

        def forward(self, x):
            if self.drop_prob == 0. or not self.training:
                return x
            keep_prob = 1 - self.drop_prob
            shape = (x.shape[0],) + (1,) * (x.ndim - 1)
            random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
            random_tensor.floor_()  # binarize
            return x.div(keep_prob) * random_tensor

    class LayerNorm(nn.Module):
        r""" LayerNorm that supports two data formats: channels_last (default) or channels_first.
        The ordering of the dimensions in the inputs. channels_last corresponds to inputs with
        shape (batch_size, height, width, channels) while channels_first corresponds to inputs
        with shape (batch_size, channels, height, width).
        """

        def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(normalized_shape))
            self.bias = nn.Parameter(torch.zeros(normalized_shape))
            self.eps = eps
            self.data_format = data_format
            if self.data_format not in ["channels_last", "channels_first"]:
                raise NotImplementedError
            self.normalized_shape = (normalized_shape, )

        def forward(self, x):
            if self.data_format == "channels_last":
                return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
            elif self.data_format == "channels_first":
                u = x.mean(1, keepdim=True)
                s = (x - u).pow(2).mean(1, keepdim=True)
                x = (x - u) / torch.sqrt(s + self.eps)
                x = self.weight[:, None, None] * x + self.bias[:, None, None]
                return x

    class Block(nn.Module):
        r""" ConvNeXt Block. There are two equivalent implementations:
        (1) DwConv -> LayerNorm (channels_first) -> 1x1 Conv -> GELU -> 1x1 Conv; all in (N, C, H, W)
        (2) DwConv -> Permute to (N, H, W, C); LayerNorm (channels_last) -> Linear -> GELU -> Linear; Permute back
        We use (2) as we find it slightly faster in PyTorch
        """

        def __init__(self, dim, drop_path=0., layer_scale_init_value=1e-6):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)  # depthwise conv
            self.norm = LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)  # pointwise/1x1 convs, implemented with linear layers
            self.act = nn.GELU()
            self.pwconv2 = nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)),
                                      requires_grad=True) if layer_scale_init_value > 0 else None
            self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()

        def forward(self, x):
            input = x
            x = self.dwconv(x)
            x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
            x = self.norm(x)
            x = self.pwconv1(x)
            x = self.act(x)
            x = self.pwconv2(x)
            if self.gamma is not None:
                x = self.gamma * x
            x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)

            x = input + self.drop_path(x)
            return x

    class ConvNeXt(nn.Module):
        def __init__(self, in_chans=3, num_classes=1000, depths=[3, 3, 9, 3], dims=[96, 192, 384, 768],
                     drop_path_rate=0., layer_scale_init_value=1e-6, head_init_scale=1.):
            super().__init__()

            self.downsample_layers = nn.ModuleList()  # stem and 3 intermediate downsampling conv layers
            stem = nn.Sequential(
                nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
                LayerNorm(dims[0], eps=1e-6, data_format="channels_first"))
            self.downsample_layers.append(stem)
            for i in range(3):
                downsample_layer = nn.Sequential(
                    LayerNorm(dims[i], eps=1e-6, data_format="channels_first"),
                    nn.Conv2d(dims[i], dims[i + 1], kernel_size=2, stride=2))
                self.downsample_layers.append(downsample_layer)

            self.stages = nn.ModuleList()  # 4 feature resolution stages, each consisting of multiple residual blocks
            dp_rates = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
            cur = 0
            for i in range(4):
                stage = nn.Sequential(
                    *[Block(dim=dims[i], drop_path=dp_rates[cur + j],
                            layer_scale_init_value=layer_scale_init_value) for j in range(depths[i])])
                self.stages.append(stage)
                cur += depths[i]

            self.norm = nn.LayerNorm(dims[-1], eps=1e-6)  # final norm layer
            self.head = nn.Linear(dims[-1], num_classes)

            self.apply(self._init_weights)
            self.head.weight.data.mul_(head_init_scale)
            self.head.bias.data.mul_(head_init_scale)

        def _init_weights(self, m):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=.02)
                nn.init.constant_(m.bias, 0)

        def forward_features(self, x):
            for i in range(4):
                x = self.downsample_layers[i](x)
                x = self.stages[i](x)
            return self.norm(x.mean([-2, -1]))  # global average pooling, (N, C, H, W) -> (N, C)

        def forward(self, x):
            x = self.forward_features(x)
            x = self.head(x)
            return x

    return ConvNeXt, LayerNorm


def one_hot(torch, x, num_classes, on_value=1., off_value=0.):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(1, x, on_value)


def mixup_target(torch, target, num_classes, lam=1., smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(torch, target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(torch, target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1. - lam)


def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0, start_warmup_value=0,
                     warmup_steps=-1):
    """utils.py's per-iteration schedule, a NumPy array."""
    warmup_schedule = np.array([])
    warmup_iters = warmup_epochs * niter_per_ep
    if warmup_steps > 0:
        warmup_iters = warmup_steps
    if warmup_epochs > 0:
        warmup_schedule = np.linspace(start_warmup_value, base_value, warmup_iters)
    iters = np.arange(epochs * niter_per_ep - warmup_iters)
    schedule = np.array([final_value + 0.5 * (base_value - final_value) * (1 + math.cos(math.pi * i / (len(iters))))
                         for i in iters])
    schedule = np.concatenate((warmup_schedule, schedule))
    assert len(schedule) == epochs * niter_per_ep
    return schedule


def images(rng, n):
    """Five classes of 32x32 RGB images: a coloured blob at a class-dependent place, with noise."""
    y = rng.integers(0, CLASSES, n)
    x = 0.4 * rng.standard_normal((n, 3, IMG, IMG))
    r, c = np.meshgrid(np.arange(IMG), np.arange(IMG), indexing="ij")
    for i, k in enumerate(y):
        cy, cx = 6 + 5 * k, 26 - 5 * k
        x[i, k % 3] += np.exp(-((r - cy) ** 2 + (c - cx) ** 2) / 18.0)
    return x.astype(np.float32), y.astype(np.int64)


def convnext(torch, init=None, iters=6, batch=4, update_freq=2, layer_scale_init_value=0.1):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    ConvNeXt, LayerNorm = convnext_model(torch)
    model = ConvNeXt(num_classes=CLASSES, depths=[1, 1, 2, 1], dims=[8, 16, 24, 32], drop_path_rate=0.1,
                     layer_scale_init_value=layer_scale_init_value, head_init_scale=0.5)
    result = {"n_params": sum(p.numel() for p in model.parameters() if p.requires_grad)}
    start_from(torch, model, init, result)

    # the hand-written channels_first norm against F.layer_norm on the permuted input
    probe = torch.from_numpy(np.random.default_rng(3).standard_normal((2, 8, 3, 5)).astype(np.float32))
    ln_first = LayerNorm(8, eps=1e-6, data_format="channels_first")
    ln_last = LayerNorm(8, eps=1e-6)
    result["ln_gap"] = (ln_first(probe) - ln_last(probe.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)).abs().max().item()

    class ModelEmaV2(nn.Module):
        def __init__(self, model, decay=0.9999, device=None):
            super(ModelEmaV2, self).__init__()
            # make a copy of the model for accumulating moving average of weights
            self.module = copy.deepcopy(model)
            self.module.eval()
            self.decay = decay

        def _update(self, model, update_fn):
            with torch.no_grad():
                for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                    ema_v.copy_(update_fn(ema_v, model_v))

        def update(self, model):
            self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    class SoftTargetCrossEntropy(nn.Module):
        def forward(self, x, target):
            loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
            return loss.mean()

    model_ema = ModelEmaV2(model, decay=0.9)
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if len(param.shape) == 1 or name.endswith(".bias") or name.endswith(".gamma") else decay).append(param)
    optimizer = torch.optim.AdamW([{"params": no_decay, "weight_decay": 0.},
                                   {"params": decay, "weight_decay": 0.05}], lr=4e-3)
    num_training_steps_per_epoch = iters // update_freq
    lr_schedule_values = cosine_scheduler(4e-3, 1e-5, 1, num_training_steps_per_epoch)
    wd_schedule_values = cosine_scheduler(0.05, 0.1, 1, num_training_steps_per_epoch)
    criterion = SoftTargetCrossEntropy()

    rng = np.random.default_rng(1)
    losses, lrs = [], []
    model.train()
    optimizer.zero_grad()
    for data_iter_step in range(iters):
        step = data_iter_step // update_freq
        if data_iter_step % update_freq == 0:
            for i, param_group in enumerate(optimizer.param_groups):
                param_group["lr"] = lr_schedule_values[step]
                if param_group["weight_decay"] > 0:
                    param_group["weight_decay"] = wd_schedule_values[step]
        x_np, y_np = images(rng, batch)
        samples, targets = torch.from_numpy(x_np), torch.from_numpy(y_np)
        lam = float(rng.beta(0.8, 0.8))  # Mixup: the same pairing (batch flipped) in both libraries
        x_flipped = samples.flip(0).mul_(1. - lam)
        samples.mul_(lam).add_(x_flipped)
        targets = mixup_target(torch, targets, CLASSES, lam, smoothing=0.1)

        output = model(samples)
        loss = criterion(output, targets)
        loss_value = loss.item()
        assert math.isfinite(loss_value)
        loss /= update_freq
        loss.backward()
        if (data_iter_step + 1) % update_freq == 0:
            optimizer.step()
            optimizer.zero_grad()
            model_ema.update(model)
        losses.append(loss_value)
        lrs.append(optimizer.param_groups[0]["lr"])

    x_test, _ = images(np.random.default_rng(2), 6)
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test))
        ema_logits = model_ema.module(torch.from_numpy(x_test))
    result.update(losses=losses, lrs=lrs, logits=numpy_of(logits), ema_logits=numpy_of(ema_logits),
                  wd=[g["weight_decay"] for g in optimizer.param_groups],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()},
                  ema_state={k: numpy_of(v) for k, v in model_ema.module.state_dict().items()})
    return result


def test_convnext():
    ref, got = compare_program(convnext)
    assert ref["ln_gap"] < 1e-5 and got["ln_gap"] < 1e-5
    # the EMA (decay 0.9 over 3 updates) lags the trained model
    assert np.abs(ref["ema_logits"] - ref["logits"]).max() > 1e-4


def test_convnext_paper_layer_scale():
    """layer_scale_init_value=1e-6, the paper's: each block starts as (almost) the identity."""
    compare_program(convnext, iters=2, layer_scale_init_value=1e-6)
