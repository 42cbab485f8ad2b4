"""labml.ai's annotated normalization layers (labml_nn/normalization: batch_norm, layer_norm,
instance_norm, group_norm, weight_standardization, batch_channel_norm) as written, labml's Module
taken as nn.Module: BatchNorm over x.view(batch_size, channels, -1) with mean and mean of squares
over dims [0, 2] and running exp_mean/exp_var buffers replaced by new tensors each step, LayerNorm
over the last dims of a torch.Size normalized_shape, InstanceNorm and GroupNorm reducing over the
last dim of a view, weight_standardization by torch.var_mean(weight, dim=1, keepdim=True) inside a
Conv2d subclass calling F.conv2d, and BatchChannelNorm (EstimatedBatchNorm updating its estimates
under torch.no_grad() on a view made there, then ChannelNorm over groups); each checked against the
library's own nn module where one exists (nn.BatchNorm2d, nn.LayerNorm, nn.InstanceNorm2d with
affine, nn.GroupNorm), and trained a few SGD steps in the MNIST-style model of the batch-norm
experiment (Conv2d, norm, ReLU, max_pool2d, Linear, cross entropy). Seeds are torch.manual_seed in
both libraries, so the weights agree."""
from typing import List, Union

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of


def layers(torch):
    nn = torch.nn
    F = nn.functional
    Module = nn.Module
    Size = torch.Size

    class BatchNorm(Module):
        def __init__(self, channels: int, *, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                     track_running_stats: bool = True):
            super().__init__()
            self.channels = channels
            self.eps = eps
            self.momentum = momentum
            self.affine = affine
            self.track_running_stats = track_running_stats
            if self.affine:
                self.scale = nn.Parameter(torch.ones(channels))
                self.shift = nn.Parameter(torch.zeros(channels))
            if self.track_running_stats:
                self.register_buffer('exp_mean', torch.zeros(channels))
                self.register_buffer('exp_var', torch.ones(channels))

        def forward(self, x: torch.Tensor):
            x_shape = x.shape
            batch_size = x_shape[0]
            assert self.channels == x.shape[1]
            x = x.view(batch_size, self.channels, -1)
            if self.training or not self.track_running_stats:
                mean = x.mean(dim=[0, 2])
                mean_x2 = (x ** 2).mean(dim=[0, 2])
                var = mean_x2 - mean ** 2
                if self.training and self.track_running_stats:
                    self.exp_mean = (1 - self.momentum) * self.exp_mean + self.momentum * mean
                    self.exp_var = (1 - self.momentum) * self.exp_var + self.momentum * var
            else:
                mean = self.exp_mean
                var = self.exp_var
            x_norm = (x - mean.view(1, -1, 1)) / torch.sqrt(var + self.eps).view(1, -1, 1)
            if self.affine:
                x_norm = self.scale.view(1, -1, 1) * x_norm + self.shift.view(1, -1, 1)
            return x_norm.view(x_shape)

    class LayerNorm(Module):
        def __init__(self, normalized_shape: Union[int, List[int], Size], *, eps: float = 1e-5,
                     elementwise_affine: bool = True):
            super().__init__()
            if isinstance(normalized_shape, int):
                normalized_shape = torch.Size([normalized_shape])
            elif isinstance(normalized_shape, list):
                normalized_shape = torch.Size(normalized_shape)
            assert isinstance(normalized_shape, torch.Size)
            self.normalized_shape = normalized_shape
            self.eps = eps
            self.elementwise_affine = elementwise_affine
            if self.elementwise_affine:
                self.gain = nn.Parameter(torch.ones(normalized_shape))
                self.bias = nn.Parameter(torch.zeros(normalized_shape))

        def forward(self, x: torch.Tensor):
            assert self.normalized_shape == x.shape[-len(self.normalized_shape):]
            dims = [-(i + 1) for i in range(len(self.normalized_shape))]
            mean = x.mean(dim=dims, keepdim=True)
            mean_x2 = (x ** 2).mean(dim=dims, keepdim=True)
            var = mean_x2 - mean ** 2
            x_norm = (x - mean) / torch.sqrt(var + self.eps)
            if self.elementwise_affine:
                x_norm = self.gain * x_norm + self.bias
            return x_norm

    class InstanceNorm(Module):
        def __init__(self, channels: int, *, eps: float = 1e-5, affine: bool = True):
            super().__init__()
            self.channels = channels
            self.eps = eps
            self.affine = affine
            if self.affine:
                self.scale = nn.Parameter(torch.ones(channels))
                self.shift = nn.Parameter(torch.zeros(channels))

        def forward(self, x: torch.Tensor):
            x_shape = x.shape
            batch_size = x_shape[0]
            assert self.channels == x.shape[1]
            x = x.view(batch_size, self.channels, -1)
            mean = x.mean(dim=[-1], keepdim=True)
            mean_x2 = (x ** 2).mean(dim=[-1], keepdim=True)
            var = mean_x2 - mean ** 2
            x_norm = (x - mean) / torch.sqrt(var + self.eps)
            x_norm = x_norm.view(batch_size, self.channels, -1)
            if self.affine:
                x_norm = self.scale.view(1, -1, 1) * x_norm + self.shift.view(1, -1, 1)
            return x_norm.view(x_shape)

    class GroupNorm(Module):
        def __init__(self, groups: int, channels: int, *, eps: float = 1e-5, affine: bool = True):
            super().__init__()
            assert channels % groups == 0, "Number of channels should be evenly divisible by the number of groups"
            self.groups = groups
            self.channels = channels
            self.eps = eps
            self.affine = affine
            if self.affine:
                self.scale = nn.Parameter(torch.ones(channels))
                self.shift = nn.Parameter(torch.zeros(channels))

        def forward(self, x: torch.Tensor):
            x_shape = x.shape
            batch_size = x_shape[0]
            assert self.channels == x.shape[1]
            x = x.view(batch_size, self.groups, -1)
            mean = x.mean(dim=[-1], keepdim=True)
            mean_x2 = (x ** 2).mean(dim=[-1], keepdim=True)
            var = mean_x2 - mean ** 2
            x_norm = (x - mean) / torch.sqrt(var + self.eps)
            if self.affine:
                x_norm = x_norm.view(batch_size, self.channels, -1)
                x_norm = self.scale.view(1, -1, 1) * x_norm + self.shift.view(1, -1, 1)
            return x_norm.view(x_shape)

    def weight_standardization(weight: torch.Tensor, eps: float):
        c_out, c_in, *kernel_shape = weight.shape
        weight = weight.view(c_out, -1)
        var, mean = torch.var_mean(weight, dim=1, keepdim=True)
        weight = (weight - mean) / (torch.sqrt(var + eps))
        return weight.view(c_out, c_in, *kernel_shape)

    class Conv2d(nn.Conv2d):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                     bias: bool = True, padding_mode: str = 'zeros', eps: float = 1e-5):
            super(Conv2d, self).__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                         dilation=dilation, groups=groups, bias=bias, padding_mode=padding_mode)
            self.eps = eps

        def forward(self, x: torch.Tensor):
            return F.conv2d(x, weight_standardization(self.weight, self.eps), self.bias, self.stride, self.padding,
                            self.dilation, self.groups)

    class EstimatedBatchNorm(Module):
        def __init__(self, channels: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True):
            super().__init__()
            self.eps = eps
            self.momentum = momentum
            self.affine = affine
            self.channels = channels
            if self.affine:
                self.scale = nn.Parameter(torch.ones(channels))
                self.shift = nn.Parameter(torch.zeros(channels))
            self.register_buffer('exp_mean', torch.zeros(channels))
            self.register_buffer('exp_var', torch.ones(channels))

        def forward(self, x: torch.Tensor):
            x_shape = x.shape
            batch_size = x_shape[0]
            if self.training:
                with torch.no_grad():
                    x = x.view(batch_size, self.channels, -1)
                    mean = x.mean(dim=[0, 2])
                    mean_x2 = (x ** 2).mean(dim=[0, 2])
                    var = mean_x2 - mean ** 2
                    self.exp_mean = (1 - self.momentum) * self.exp_mean + self.momentum * mean
                    self.exp_var = (1 - self.momentum) * self.exp_var + self.momentum * var
            x_norm = (x - self.exp_mean.view(1, -1, 1)) / torch.sqrt(self.exp_var + self.eps).view(1, -1, 1)
            if self.affine:
                x_norm = self.scale.view(1, -1, 1) * x_norm + self.shift.view(1, -1, 1)
            return x_norm.view(x_shape)

    class ChannelNorm(Module):
        def __init__(self, channels, groups, eps: float = 1e-5, affine: bool = True):
            super().__init__()
            self.channels = channels
            self.groups = groups
            self.eps = eps
            self.affine = affine
            if self.affine:
                self.scale = nn.Parameter(torch.ones(groups))
                self.shift = nn.Parameter(torch.zeros(groups))

        def forward(self, x: torch.Tensor):
            x_shape = x.shape
            batch_size = x_shape[0]
            assert self.channels == x.shape[1]
            x = x.view(batch_size, self.groups, -1)
            mean = x.mean(dim=[-1], keepdim=True)
            mean_x2 = (x ** 2).mean(dim=[-1], keepdim=True)
            var = mean_x2 - mean ** 2
            x_norm = (x - mean) / torch.sqrt(var + self.eps)
            if self.affine:
                x_norm = self.scale.view(1, -1, 1) * x_norm + self.shift.view(1, -1, 1)
            return x_norm.view(x_shape)

    class BatchChannelNorm(Module):
        def __init__(self, channels: int, groups: int, eps: float = 1e-5, momentum: float = 0.1, estimate: bool = True):
            super().__init__()
            if estimate:
                self.batch_norm = EstimatedBatchNorm(channels, eps=eps, momentum=momentum)
            else:
                self.batch_norm = BatchNorm(channels, eps=eps, momentum=momentum)
            self.channel_norm = ChannelNorm(channels, groups, eps)

        def forward(self, x):
            x = self.batch_norm(x)
            return self.channel_norm(x)

    return dict(BatchNorm=BatchNorm, LayerNorm=LayerNorm, InstanceNorm=InstanceNorm, GroupNorm=GroupNorm,
                Conv2d=Conv2d, BatchChannelNorm=BatchChannelNorm, weight_standardization=weight_standardization)


def against_builtins(torch, init=None):
    """Each layer against the library's own module on the same input, forward and backward."""
    nn = torch.nn
    L = layers(torch)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 6, 5, 5)).astype(np.float32)
    result = {}
    pairs = {"batch": (L["BatchNorm"](6), nn.BatchNorm2d(6)), "layer": (L["LayerNorm"]([5, 5]), nn.LayerNorm([5, 5])),
             "instance": (L["InstanceNorm"](6), nn.InstanceNorm2d(6, affine=True)),
             "group": (L["GroupNorm"](3, 6), nn.GroupNorm(3, 6))}
    for name, (mine, builtin) in pairs.items():
        outs, grads = [], []
        for m in (mine, builtin):
            x = torch.tensor(x_np, requires_grad=True)
            y = m(x)
            y.pow(3).sum().backward()
            outs.append(numpy_of(y))
            grads.append(numpy_of(x.grad))
        np.testing.assert_allclose(outs[0], outs[1], atol=1e-4, err_msg=name)
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-3, err_msg=name)
        result[name] = outs[0], grads[0]
    bn, ref_bn = pairs["batch"]
    np.testing.assert_allclose(numpy_of(bn.exp_mean), numpy_of(ref_bn.running_mean), atol=1e-5)
    result["exp_var"] = numpy_of(bn.exp_var)
    bn.eval()
    result["batch_eval"] = numpy_of(bn(torch.tensor(x_np)))
    torch.manual_seed(0)
    conv = L["Conv2d"](6, 4, 3, padding=1)
    w = conv.weight.detach().view(4, -1)
    standardized = L["weight_standardization"](conv.weight, 1e-5).view(4, -1)
    result["ws_mean"] = numpy_of(standardized.mean(dim=1))
    result["ws_std"] = numpy_of(standardized.std(dim=1))
    result["conv"] = numpy_of(conv(torch.tensor(x_np)))
    result["w"] = numpy_of(w)
    # labml's _test: a LayerNorm over x.shape[2:] of zeros
    x = torch.zeros([2, 3, 2, 4])
    ln = L["LayerNorm"](x.shape[2:])
    result["zeros_ln"] = numpy_of(ln(x)), tuple(ln.gain.shape)
    return result


def mnist_experiment(torch, init=None, norm="batch", steps=4):
    """The batch-norm experiment's Model (labml_nn/normalization/batch_norm/mnist.py) with the
    norm of choice, trained by SGD with momentum on local 28x28 images."""
    nn = torch.nn
    F = nn.functional
    L = layers(torch)

    def make_norm(channels):
        return {"batch": lambda: L["BatchNorm"](channels), "instance": lambda: L["InstanceNorm"](channels),
                "group": lambda: L["GroupNorm"](4, channels),
                "batch_channel": lambda: L["BatchChannelNorm"](channels, 4)}[norm]()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 20, 5, 1)
            self.bn1 = make_norm(20)
            self.conv2 = nn.Conv2d(20, 48, 5, 1) if norm != "batch_channel" else L["Conv2d"](20, 48, 5, 1)
            self.bn2 = make_norm(48)
            self.fc1 = nn.Linear(4 * 4 * 48, 64)
            self.bn3 = L["BatchNorm"](64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x: torch.Tensor):
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.max_pool2d(x, 2, 2)
            x = F.relu(self.bn2(self.conv2(x)))
            x = F.max_pool2d(x, 2, 2)
            x = x.view(-1, 4 * 4 * 48)
            x = F.relu(self.bn3(self.fc1(x)))
            return self.fc2(x)

    torch.manual_seed(0)
    model = Model()
    result = {"init": {k: numpy_of(v) for k, v in model.state_dict().items()}}
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.random((16, 1, 28, 28)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 10, 16))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(x) if norm != "batch_channel" else model.fc2.weight
    result.update(losses=losses, eval_out=numpy_of(out),
                  # EstimatedBatchNorm views x under no_grad, which cuts the graph below it: no gradients there
                  grads={k: "none" if p.grad is None else numpy_of(p.grad) for k, p in model.named_parameters()},
                  buffers={k: numpy_of(b) for k, b in model.named_buffers()})
    return result


def test_labml_normalization_against_builtins():
    compare_program(against_builtins, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("norm", ["batch", "instance", "group", "batch_channel"])
def test_labml_normalization_mnist_experiment(norm):
    # the conv biases before a batch norm get rounding-noise gradients; SGD (no Adam) keeps them small
    compare_program(mnist_experiment, rtol=1e-3, atol=1e-4, norm=norm)
