"""rosinality's stylegan2-pytorch (model.py, train.py, distributed.py and the CPU paths of op/:
upfirdn2d_native, fused_leaky_relu, conv2d_gradfix's fallback to F.conv2d / F.conv_transpose2d) on
NumPy "images", channel widths scaled down: PixelNorm (torch.rsqrt), make_kernel (k[None, :] *
k[:, None], k /= k.sum()), upfirdn2d_native (a 6-D view, F.pad with an 8-element pad list, negative
crops, torch.flip of the kernel, a strided slice out[:, ::down_y, ::down_x, :]), Blur, Upsample,
EqualLinear (torch.randn(...).div_(lr_mul), torch.zeros(...).fill_(bias_init)), EqualConv2d, the
modulated/demodulated convolution as one grouped conv2d or a grouped conv_transpose2d(stride=2) over
the batch, NoiseInjection (image.new_empty(...).normal_()), ConstantInput, the Generator's noise
buffers registered on a bare nn.Module, style mixing with random.randint and
torch.randn(n, batch, dim).unbind(0), ModuleList slices self.convs[::2]; the Discriminator
(ConvLayer setting self.padding before nn.Sequential.__init__, ResBlock, the minibatch stddev over a
6-D view with var(0, unbiased=False) and mean([2, 3, 4], keepdims=True)); train.py's loop:
requires_grad flags, the logistic losses through F.softplus, the lazy R1 penalty (autograd.grad of
real_pred.sum() w.r.t. the real images with create_graph=True under no_weight_gradients(), then
backward: double backward through upfirdn2d, grouped convolutions and leaky ReLU), the path-length
regulariser (torch.randn_like, autograd.grad w.r.t. the latents, create_graph, `+= 0 *
fake_img[0, 0, 0, 0]`), the Adam betas (0 ** ratio, 0.99 ** ratio), accumulate() into g_ema through
.data.mul_(decay).add_(..., alpha=1 - decay), and reduce_loss_dict/reduce_sum without a process group."""
import contextlib
import math
import random
import warnings
from collections import abc

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

# model.py's channel table, scaled down (the published one starts at 512)
CHANNELS = {4: 16, 8: 16, 16: 8, 32: 8, 64: 8, 128: 8, 256: 8, 512: 4, 1024: 4}


def stylegan2_modules(torch):
    nn = torch.nn
    F = torch.nn.functional

    # ---- op/fused_act.py (CPU path) ----
    class FusedLeakyReLU(nn.Module):
        def __init__(self, channel, bias=True, negative_slope=0.2, scale=2 ** 0.5):
            super().__init__()
            if bias:
                self.bias = nn.Parameter(torch.zeros(channel))
            else:
                self.bias = None
            self.negative_slope = negative_slope
            self.scale = scale

        def forward(self, input):
            return fused_leaky_relu(input, self.bias, self.negative_slope, self.scale)

    def fused_leaky_relu(input, bias=None, negative_slope=0.2, scale=2 ** 0.5):
        if input.device.type == "cpu":
            if bias is not None:
                rest_dim = [1] * (input.ndim - bias.ndim - 1)
                return (
                    F.leaky_relu(
                        input + bias.view(1, bias.shape[0], *rest_dim), negative_slope=0.2
                    )
                    * scale
                )
            else:
                return F.leaky_relu(input, negative_slope=0.2) * scale
        raise RuntimeError("the CUDA extension is not built here")

    # ---- op/upfirdn2d.py (native path) ----
    def upfirdn2d(input, kernel, up=1, down=1, pad=(0, 0)):
        if not isinstance(up, abc.Iterable):
            up = (up, up)
        if not isinstance(down, abc.Iterable):
            down = (down, down)
        if len(pad) == 2:
            pad = (pad[0], pad[1], pad[0], pad[1])
        if input.device.type == "cpu":
            out = upfirdn2d_native(input, kernel, *up, *down, *pad)
        else:
            raise RuntimeError("the CUDA extension is not built here")
        return out

    def upfirdn2d_native(input, kernel, up_x, up_y, down_x, down_y, pad_x0, pad_x1, pad_y0, pad_y1):
        _, channel, in_h, in_w = input.shape
        input = input.reshape(-1, in_h, in_w, 1)
        _, in_h, in_w, minor = input.shape
        kernel_h, kernel_w = kernel.shape
        out = input.view(-1, in_h, 1, in_w, 1, minor)
        out = F.pad(out, [0, 0, 0, up_x - 1, 0, 0, 0, up_y - 1])
        out = out.view(-1, in_h * up_y, in_w * up_x, minor)
        out = F.pad(
            out, [0, 0, max(pad_x0, 0), max(pad_x1, 0), max(pad_y0, 0), max(pad_y1, 0)]
        )
        out = out[
            :,
            max(-pad_y0, 0): out.shape[1] - max(-pad_y1, 0),
            max(-pad_x0, 0): out.shape[2] - max(-pad_x1, 0),
            :,
        ]
        out = out.permute(0, 3, 1, 2)
        out = out.reshape(
            [-1, 1, in_h * up_y + pad_y0 + pad_y1, in_w * up_x + pad_x0 + pad_x1]
        )
        w = torch.flip(kernel, [0, 1]).view(1, 1, kernel_h, kernel_w)
        out = F.conv2d(out, w)
        out = out.reshape(
            -1,
            minor,
            in_h * up_y + pad_y0 + pad_y1 - kernel_h + 1,
            in_w * up_x + pad_x0 + pad_x1 - kernel_w + 1,
        )
        out = out.permute(0, 2, 3, 1)
        out = out[:, ::down_y, ::down_x, :]
        out_h = (in_h * up_y + pad_y0 + pad_y1 - kernel_h + down_y) // down_y
        out_w = (in_w * up_x + pad_x0 + pad_x1 - kernel_w + down_x) // down_x
        return out.view(-1, channel, out_h, out_w)

    # ---- op/conv2d_gradfix.py ----
    class conv2d_gradfix:
        enabled = True
        weight_gradients_disabled = False

        @staticmethod
        @contextlib.contextmanager
        def no_weight_gradients():
            old = conv2d_gradfix.weight_gradients_disabled
            conv2d_gradfix.weight_gradients_disabled = True
            yield
            conv2d_gradfix.weight_gradients_disabled = old

        @staticmethod
        def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
            if conv2d_gradfix.could_use_op(input):
                raise RuntimeError("the custom op needs CUDA")
            return F.conv2d(input=input, weight=weight, bias=bias, stride=stride, padding=padding,
                            dilation=dilation, groups=groups)

        @staticmethod
        def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                             dilation=1):
            if conv2d_gradfix.could_use_op(input):
                raise RuntimeError("the custom op needs CUDA")
            return F.conv_transpose2d(input=input, weight=weight, bias=bias, stride=stride, padding=padding,
                                      output_padding=output_padding, dilation=dilation, groups=groups)

        @staticmethod
        def could_use_op(input):
            if (not conv2d_gradfix.enabled) or (not torch.backends.cudnn.enabled):
                return False
            if input.device.type != "cuda":
                return False
            if any(torch.__version__.startswith(x) for x in ["1.7.", "1.8."]):
                return True
            warnings.warn(f"conv2d_gradfix not supported on PyTorch {torch.__version__}. Falling back to "
                          "torch.nn.functional.conv2d().")
            return False

    # ---- model.py ----
    class PixelNorm(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, input):
            return input * torch.rsqrt(torch.mean(input ** 2, dim=1, keepdim=True) + 1e-8)

    def make_kernel(k):
        k = torch.tensor(k, dtype=torch.float32)
        if k.ndim == 1:
            k = k[None, :] * k[:, None]
        k /= k.sum()
        return k

    class Upsample(nn.Module):
        def __init__(self, kernel, factor=2):
            super().__init__()
            self.factor = factor
            kernel = make_kernel(kernel) * (factor ** 2)
            self.register_buffer("kernel", kernel)
            p = kernel.shape[0] - factor
            pad0 = (p + 1) // 2 + factor - 1
            pad1 = p // 2
            self.pad = (pad0, pad1)

        def forward(self, input):
            out = upfirdn2d(input, self.kernel, up=self.factor, down=1, pad=self.pad)
            return out

    class Blur(nn.Module):
        def __init__(self, kernel, pad, upsample_factor=1):
            super().__init__()
            kernel = make_kernel(kernel)
            if upsample_factor > 1:
                kernel = kernel * (upsample_factor ** 2)
            self.register_buffer("kernel", kernel)
            self.pad = pad

        def forward(self, input):
            out = upfirdn2d(input, self.kernel, pad=self.pad)
            return out

    class EqualConv2d(nn.Module):
        def __init__(self, in_channel, out_channel, kernel_size, stride=1, padding=0, bias=True):
            super().__init__()
            self.weight = nn.Parameter(
                torch.randn(out_channel, in_channel, kernel_size, kernel_size)
            )
            self.scale = 1 / math.sqrt(in_channel * kernel_size ** 2)
            self.stride = stride
            self.padding = padding
            if bias:
                self.bias = nn.Parameter(torch.zeros(out_channel))
            else:
                self.bias = None

        def forward(self, input):
            out = conv2d_gradfix.conv2d(
                input,
                self.weight * self.scale,
                bias=self.bias,
                stride=self.stride,
                padding=self.padding,
            )
            return out

        def __repr__(self):
            return (
                f"{self.__class__.__name__}({self.weight.shape[1]}, {self.weight.shape[0]},"
                f" {self.weight.shape[2]}, stride={self.stride}, padding={self.padding})"
            )

    class EqualLinear(nn.Module):
        def __init__(self, in_dim, out_dim, bias=True, bias_init=0, lr_mul=1, activation=None):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(out_dim, in_dim).div_(lr_mul))
            if bias:
                self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init))
            else:
                self.bias = None
            self.activation = activation
            self.scale = (1 / math.sqrt(in_dim)) * lr_mul
            self.lr_mul = lr_mul

        def forward(self, input):
            if self.activation:
                out = F.linear(input, self.weight * self.scale)
                out = fused_leaky_relu(out, self.bias * self.lr_mul)
            else:
                out = F.linear(
                    input, self.weight * self.scale, bias=self.bias * self.lr_mul
                )
            return out

        def __repr__(self):
            return (
                f"{self.__class__.__name__}({self.weight.shape[1]}, {self.weight.shape[0]})"
            )

    class ModulatedConv2d(nn.Module):
        def __init__(self, in_channel, out_channel, kernel_size, style_dim, demodulate=True, upsample=False,
                     downsample=False, blur_kernel=[1, 3, 3, 1], fused=True):
            super().__init__()
            self.eps = 1e-8
            self.kernel_size = kernel_size
            self.in_channel = in_channel
            self.out_channel = out_channel
            self.upsample = upsample
            self.downsample = downsample
            if upsample:
                factor = 2
                p = (len(blur_kernel) - factor) - (kernel_size - 1)
                pad0 = (p + 1) // 2 + factor - 1
                pad1 = p // 2 + 1
                self.blur = Blur(blur_kernel, pad=(pad0, pad1), upsample_factor=factor)
            if downsample:
                factor = 2
                p = (len(blur_kernel) - factor) + (kernel_size - 1)
                pad0 = (p + 1) // 2
                pad1 = p // 2
                self.blur = Blur(blur_kernel, pad=(pad0, pad1))
            fan_in = in_channel * kernel_size ** 2
            self.scale = 1 / math.sqrt(fan_in)
            self.padding = kernel_size // 2
            self.weight = nn.Parameter(
                torch.randn(1, out_channel, in_channel, kernel_size, kernel_size)
            )
            self.modulation = EqualLinear(style_dim, in_channel, bias_init=1)
            self.demodulate = demodulate
            self.fused = fused

        def forward(self, input, style):
            batch, in_channel, height, width = input.shape
            style = self.modulation(style).view(batch, 1, in_channel, 1, 1)
            weight = self.scale * self.weight * style
            if self.demodulate:
                demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
                weight = weight * demod.view(batch, self.out_channel, 1, 1, 1)
            weight = weight.view(
                batch * self.out_channel, in_channel, self.kernel_size, self.kernel_size
            )
            if self.upsample:
                input = input.view(1, batch * in_channel, height, width)
                weight = weight.view(
                    batch, self.out_channel, in_channel, self.kernel_size, self.kernel_size
                )
                weight = weight.transpose(1, 2).reshape(
                    batch * in_channel, self.out_channel, self.kernel_size, self.kernel_size
                )
                out = conv2d_gradfix.conv_transpose2d(
                    input, weight, padding=0, stride=2, groups=batch
                )
                _, _, height, width = out.shape
                out = out.view(batch, self.out_channel, height, width)
                out = self.blur(out)
            elif self.downsample:
                input = self.blur(input)
                _, _, height, width = input.shape
                input = input.view(1, batch * in_channel, height, width)
                out = conv2d_gradfix.conv2d(
                    input, weight, padding=0, stride=2, groups=batch
                )
                _, _, height, width = out.shape
                out = out.view(batch, self.out_channel, height, width)
            else:
                input = input.view(1, batch * in_channel, height, width)
                out = conv2d_gradfix.conv2d(
                    input, weight, padding=self.padding, groups=batch
                )
                _, _, height, width = out.shape
                out = out.view(batch, self.out_channel, height, width)
            return out

    class NoiseInjection(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(1))

        def forward(self, image, noise=None):
            if noise is None:
                batch, _, height, width = image.shape
                noise = image.new_empty(batch, 1, height, width).normal_()
            return image + self.weight * noise

    class ConstantInput(nn.Module):
        def __init__(self, channel, size=4):
            super().__init__()
            self.input = nn.Parameter(torch.randn(1, channel, size, size))

        def forward(self, input):
            batch = input.shape[0]
            out = self.input.repeat(batch, 1, 1, 1)
            return out

    class StyledConv(nn.Module):
        def __init__(self, in_channel, out_channel, kernel_size, style_dim, upsample=False,
                     blur_kernel=[1, 3, 3, 1], demodulate=True):
            super().__init__()
            self.conv = ModulatedConv2d(in_channel, out_channel, kernel_size, style_dim, upsample=upsample,
                                        blur_kernel=blur_kernel, demodulate=demodulate)
            self.noise = NoiseInjection()
            self.activate = FusedLeakyReLU(out_channel)

        def forward(self, input, style, noise=None):
            out = self.conv(input, style)
            out = self.noise(out, noise=noise)
            out = self.activate(out)
            return out

    class ToRGB(nn.Module):
        def __init__(self, in_channel, style_dim, upsample=True, blur_kernel=[1, 3, 3, 1]):
            super().__init__()
            if upsample:
                self.upsample = Upsample(blur_kernel)
            self.conv = ModulatedConv2d(in_channel, 3, 1, style_dim, demodulate=False)
            self.bias = nn.Parameter(torch.zeros(1, 3, 1, 1))

        def forward(self, input, style, skip=None):
            out = self.conv(input, style)
            out = out + self.bias
            if skip is not None:
                skip = self.upsample(skip)
                out = out + skip
            return out

    class Generator(nn.Module):
        def __init__(self, size, style_dim, n_mlp, channel_multiplier=2, blur_kernel=[1, 3, 3, 1], lr_mlp=0.01):
            super().__init__()
            self.size = size
            self.style_dim = style_dim
            layers = [PixelNorm()]
            for i in range(n_mlp):
                layers.append(EqualLinear(style_dim, style_dim, lr_mul=lr_mlp, activation="fused_lrelu"))
            self.style = nn.Sequential(*layers)
            self.channels = dict(CHANNELS)
            self.input = ConstantInput(self.channels[4])
            self.conv1 = StyledConv(self.channels[4], self.channels[4], 3, style_dim, blur_kernel=blur_kernel)
            self.to_rgb1 = ToRGB(self.channels[4], style_dim, upsample=False)
            self.log_size = int(math.log(size, 2))
            self.num_layers = (self.log_size - 2) * 2 + 1
            self.convs = nn.ModuleList()
            self.upsamples = nn.ModuleList()
            self.to_rgbs = nn.ModuleList()
            self.noises = nn.Module()
            in_channel = self.channels[4]
            for layer_idx in range(self.num_layers):
                res = (layer_idx + 5) // 2
                shape = [1, 1, 2 ** res, 2 ** res]
                self.noises.register_buffer(f"noise_{layer_idx}", torch.randn(*shape))
            for i in range(3, self.log_size + 1):
                out_channel = self.channels[2 ** i]
                self.convs.append(StyledConv(in_channel, out_channel, 3, style_dim, upsample=True,
                                             blur_kernel=blur_kernel))
                self.convs.append(StyledConv(out_channel, out_channel, 3, style_dim, blur_kernel=blur_kernel))
                self.to_rgbs.append(ToRGB(out_channel, style_dim))
                in_channel = out_channel
            self.n_latent = self.log_size * 2 - 2

        def make_noise(self):
            device = self.input.input.device
            noises = [torch.randn(1, 1, 2 ** 2, 2 ** 2, device=device)]
            for i in range(3, self.log_size + 1):
                for _ in range(2):
                    noises.append(torch.randn(1, 1, 2 ** i, 2 ** i, device=device))
            return noises

        def mean_latent(self, n_latent):
            latent_in = torch.randn(n_latent, self.style_dim, device=self.input.input.device)
            latent = self.style(latent_in).mean(0, keepdim=True)
            return latent

        def get_latent(self, input):
            return self.style(input)

        def forward(self, styles, return_latents=False, inject_index=None, truncation=1, truncation_latent=None,
                    input_is_latent=False, noise=None, randomize_noise=True):
            if not input_is_latent:
                styles = [self.style(s) for s in styles]
            if noise is None:
                if randomize_noise:
                    noise = [None] * self.num_layers
                else:
                    noise = [getattr(self.noises, f"noise_{i}") for i in range(self.num_layers)]
            if truncation < 1:
                style_t = []
                for style in styles:
                    style_t.append(truncation_latent + truncation * (style - truncation_latent))
                styles = style_t
            if len(styles) < 2:
                inject_index = self.n_latent
                if styles[0].ndim < 3:
                    latent = styles[0].unsqueeze(1).repeat(1, inject_index, 1)
                else:
                    latent = styles[0]
            else:
                if inject_index is None:
                    inject_index = random.randint(1, self.n_latent - 1)
                latent = styles[0].unsqueeze(1).repeat(1, inject_index, 1)
                latent2 = styles[1].unsqueeze(1).repeat(1, self.n_latent - inject_index, 1)
                latent = torch.cat([latent, latent2], 1)
            out = self.input(latent)
            out = self.conv1(out, latent[:, 0], noise=noise[0])
            skip = self.to_rgb1(out, latent[:, 1])
            i = 1
            for conv1, conv2, noise1, noise2, to_rgb in zip(
                self.convs[::2], self.convs[1::2], noise[1::2], noise[2::2], self.to_rgbs
            ):
                out = conv1(out, latent[:, i], noise=noise1)
                out = conv2(out, latent[:, i + 1], noise=noise2)
                skip = to_rgb(out, latent[:, i + 2], skip)
                i += 2
            image = skip
            if return_latents:
                return image, latent
            else:
                return image, None

    class ConvLayer(nn.Sequential):
        def __init__(self, in_channel, out_channel, kernel_size, downsample=False, blur_kernel=[1, 3, 3, 1],
                     bias=True, activate=True):
            layers = []
            if downsample:
                factor = 2
                p = (len(blur_kernel) - factor) + (kernel_size - 1)
                pad0 = (p + 1) // 2
                pad1 = p // 2
                layers.append(Blur(blur_kernel, pad=(pad0, pad1)))
                stride = 2
                self.padding = 0
            else:
                stride = 1
                self.padding = kernel_size // 2
            layers.append(
                EqualConv2d(in_channel, out_channel, kernel_size, padding=self.padding, stride=stride,
                            bias=bias and not activate)
            )
            if activate:
                layers.append(FusedLeakyReLU(out_channel, bias=bias))
            super().__init__(*layers)

    class ResBlock(nn.Module):
        def __init__(self, in_channel, out_channel, blur_kernel=[1, 3, 3, 1]):
            super().__init__()
            self.conv1 = ConvLayer(in_channel, in_channel, 3)
            self.conv2 = ConvLayer(in_channel, out_channel, 3, downsample=True)
            self.skip = ConvLayer(in_channel, out_channel, 1, downsample=True, activate=False, bias=False)

        def forward(self, input):
            out = self.conv1(input)
            out = self.conv2(out)
            skip = self.skip(input)
            out = (out + skip) / math.sqrt(2)
            return out

    class Discriminator(nn.Module):
        def __init__(self, size, channel_multiplier=2, blur_kernel=[1, 3, 3, 1]):
            super().__init__()
            channels = dict(CHANNELS)
            convs = [ConvLayer(3, channels[size], 1)]
            log_size = int(math.log(size, 2))
            in_channel = channels[size]
            for i in range(log_size, 2, -1):
                out_channel = channels[2 ** (i - 1)]
                convs.append(ResBlock(in_channel, out_channel, blur_kernel))
                in_channel = out_channel
            self.convs = nn.Sequential(*convs)
            self.stddev_group = 4
            self.stddev_feat = 1
            self.final_conv = ConvLayer(in_channel + 1, channels[4], 3)
            self.final_linear = nn.Sequential(
                EqualLinear(channels[4] * 4 * 4, channels[4], activation="fused_lrelu"),
                EqualLinear(channels[4], 1),
            )

        def forward(self, input):
            out = self.convs(input)
            batch, channel, height, width = out.shape
            group = min(batch, self.stddev_group)
            stddev = out.view(
                group, -1, self.stddev_feat, channel // self.stddev_feat, height, width
            )
            stddev = torch.sqrt(stddev.var(0, unbiased=False) + 1e-8)
            stddev = stddev.mean([2, 3, 4], keepdims=True).squeeze(2)
            stddev = stddev.repeat(group, 1, height, width)
            out = torch.cat([out, stddev], 1)
            out = self.final_conv(out)
            out = out.view(batch, -1)
            out = self.final_linear(out)
            return out

    return Generator, Discriminator, conv2d_gradfix


def stylegan2_program(torch, init=None, iters=4, size=8, mixing=0.9):
    import argparse

    F = torch.nn.functional
    autograd = torch.autograd
    optim = torch.optim
    dist = torch.distributed
    Generator, Discriminator, conv2d_gradfix = stylegan2_modules(torch)

    # ---- distributed.py ----
    def get_world_size():
        if not dist.is_available():
            return 1
        if not dist.is_initialized():
            return 1
        return dist.get_world_size()

    def reduce_sum(tensor):
        if not dist.is_available():
            return tensor
        if not dist.is_initialized():
            return tensor
        tensor = tensor.clone()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor

    def reduce_loss_dict(loss_dict):
        world_size = get_world_size()
        if world_size < 2:
            return loss_dict
        raise RuntimeError("one process here")

    # ---- train.py ----
    def data_sampler(dataset, shuffle, distributed):
        if distributed:
            return torch.utils.data.distributed.DistributedSampler(dataset, shuffle=shuffle)
        if shuffle:
            return torch.utils.data.RandomSampler(dataset)
        else:
            return torch.utils.data.SequentialSampler(dataset)

    def requires_grad(model, flag=True):
        for p in model.parameters():
            p.requires_grad = flag

    def accumulate(model1, model2, decay=0.999):
        par1 = dict(model1.named_parameters())
        par2 = dict(model2.named_parameters())
        for k in par1.keys():
            par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)

    def sample_data(loader):
        while True:
            for batch in loader:
                yield batch

    def d_logistic_loss(real_pred, fake_pred):
        real_loss = F.softplus(-real_pred)
        fake_loss = F.softplus(fake_pred)
        return real_loss.mean() + fake_loss.mean()

    def d_r1_loss(real_pred, real_img):
        with conv2d_gradfix.no_weight_gradients():
            grad_real, = autograd.grad(
                outputs=real_pred.sum(), inputs=real_img, create_graph=True
            )
        grad_penalty = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
        return grad_penalty

    def g_nonsaturating_loss(fake_pred):
        loss = F.softplus(-fake_pred).mean()
        return loss

    def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
        noise = torch.randn_like(fake_img) / math.sqrt(
            fake_img.shape[2] * fake_img.shape[3]
        )
        grad, = autograd.grad(
            outputs=(fake_img * noise).sum(), inputs=latents, create_graph=True
        )
        path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
        path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
        path_penalty = (path_lengths - path_mean).pow(2).mean()
        return path_penalty, path_mean.detach(), path_lengths

    def make_noise(batch, latent_dim, n_noise, device):
        if n_noise == 1:
            return torch.randn(batch, latent_dim, device=device)
        noises = torch.randn(n_noise, batch, latent_dim, device=device).unbind(0)
        return noises

    def mixing_noise(batch, latent_dim, prob, device):
        if prob > 0 and random.random() < prob:
            return make_noise(batch, latent_dim, 2, device)
        else:
            return [make_noise(batch, latent_dim, 1, device)]

    args = argparse.Namespace(iter=iters, batch=4, n_sample=4, size=size, r1=10, path_regularize=2,
                              path_batch_shrink=2, d_reg_every=2, g_reg_every=2, mixing=mixing, lr=0.002,
                              channel_multiplier=2, augment=False, augment_p=0, latent=16, n_mlp=2,
                              start_iter=0, distributed=False)
    device = "cpu"
    random.seed(0)
    torch.manual_seed(0)
    generator = Generator(args.size, args.latent, args.n_mlp, channel_multiplier=args.channel_multiplier).to(device)
    discriminator = Discriminator(args.size, channel_multiplier=args.channel_multiplier).to(device)
    g_ema = Generator(args.size, args.latent, args.n_mlp, channel_multiplier=args.channel_multiplier).to(device)
    g_ema.eval()
    result = {"d_repr": repr(discriminator.convs[1].conv2[1])}
    start_from(torch, {"g": generator, "d": discriminator}, init, result)
    accumulate(g_ema, generator, 0)
    g_reg_ratio = args.g_reg_every / (args.g_reg_every + 1)
    d_reg_ratio = args.d_reg_every / (args.d_reg_every + 1)
    g_optim = optim.Adam(generator.parameters(), lr=args.lr * g_reg_ratio,
                         betas=(0 ** g_reg_ratio, 0.99 ** g_reg_ratio))
    d_optim = optim.Adam(discriminator.parameters(), lr=args.lr * d_reg_ratio,
                         betas=(0 ** d_reg_ratio, 0.99 ** d_reg_ratio))
    images = np.tanh(np.random.default_rng(0).standard_normal((8, 3, size, size))).astype(np.float32)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images))
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch,
                                         sampler=data_sampler(dataset, shuffle=False, distributed=args.distributed),
                                         drop_last=True)
    loader = sample_data(loader)
    mean_path_length = 0
    r1_loss = torch.tensor(0.0, device=device)
    path_loss = torch.tensor(0.0, device=device)
    path_lengths = torch.tensor(0.0, device=device)
    mean_path_length_avg = 0
    loss_dict = {}
    g_module = generator
    accum = 0.5 ** (32 / (10 * 1000))
    log = []
    for idx in range(args.iter):
        i = idx + args.start_iter
        real_img, = next(loader)
        real_img = real_img.to(device)
        requires_grad(generator, False)
        requires_grad(discriminator, True)
        noise = mixing_noise(args.batch, args.latent, args.mixing, device)
        fake_img, _ = generator(noise)
        real_img_aug = real_img
        fake_pred = discriminator(fake_img)
        real_pred = discriminator(real_img_aug)
        d_loss = d_logistic_loss(real_pred, fake_pred)
        loss_dict["d"] = d_loss
        loss_dict["real_score"] = real_pred.mean()
        loss_dict["fake_score"] = fake_pred.mean()
        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()
        d_regularize = i % args.d_reg_every == 0
        if d_regularize:
            real_img.requires_grad = True
            real_img_aug = real_img
            real_pred = discriminator(real_img_aug)
            r1_loss = d_r1_loss(real_pred, real_img)
            discriminator.zero_grad()
            (args.r1 / 2 * r1_loss * args.d_reg_every + 0 * real_pred[0]).backward()
            d_optim.step()
        loss_dict["r1"] = r1_loss
        requires_grad(generator, True)
        requires_grad(discriminator, False)
        noise = mixing_noise(args.batch, args.latent, args.mixing, device)
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        g_loss = g_nonsaturating_loss(fake_pred)
        loss_dict["g"] = g_loss
        generator.zero_grad()
        g_loss.backward()
        g_optim.step()
        g_regularize = i % args.g_reg_every == 0
        if g_regularize:
            path_batch_size = max(1, args.batch // args.path_batch_shrink)
            noise = mixing_noise(path_batch_size, args.latent, args.mixing, device)
            fake_img, latents = generator(noise, return_latents=True)
            path_loss, mean_path_length, path_lengths = g_path_regularize(fake_img, latents, mean_path_length)
            generator.zero_grad()
            weighted_path_loss = args.path_regularize * args.g_reg_every * path_loss
            if args.path_batch_shrink:
                weighted_path_loss += 0 * fake_img[0, 0, 0, 0]
            weighted_path_loss.backward()
            g_optim.step()
            mean_path_length_avg = (reduce_sum(mean_path_length).item() / get_world_size())
        loss_dict["path"] = path_loss
        loss_dict["path_length"] = path_lengths.mean()
        accumulate(g_ema, g_module, accum)
        loss_reduced = reduce_loss_dict(loss_dict)
        log.append({k: loss_reduced[k].mean().item() for k in ("d", "g", "r1", "path", "real_score",
                                                               "fake_score", "path_length")}
                   | {"mean_path_length_avg": mean_path_length_avg})
    result["log"] = log
    result["d_grad"] = numpy_of(discriminator.final_linear[0].weight.grad)
    result["g_grad"] = numpy_of(generator.convs[0].conv.weight.grad)
    with torch.no_grad():
        g_ema.eval()
        sample_z = torch.from_numpy(np.random.default_rng(1).standard_normal((args.n_sample, args.latent))
                                    .astype(np.float32))
        sample, _ = g_ema([sample_z], randomize_noise=False)
        mean_latent = g_ema.mean_latent(16)
        trunc, _ = g_ema([sample_z], truncation=0.7, truncation_latent=mean_latent, randomize_noise=False)
    result["sample"], result["trunc"] = numpy_of(sample), numpy_of(trunc)
    return result


def test_stylegan2_training_with_lazy_regularisation():
    compare_program(stylegan2_program, rtol=2e-3, atol=2e-4)


def test_stylegan2_16px_without_mixing():
    compare_program(stylegan2_program, iters=2, size=16, mixing=0.0, rtol=2e-3, atol=2e-4)
