"""kuangliu/pytorch-cifar's model zoo and its main.py training loop, the way the repository writes
them: ResNet18 (BasicBlock, `out += self.shortcut(x)` with an empty nn.Sequential shortcut),
PreActResNet18 (`self.shortcut(out) if hasattr(self, 'shortcut') else x`), DenseNet-BC for CIFAR
(Bottleneck's torch.cat([out, x], 1), Transition's F.avg_pool2d(out, 2), growth 12), DPN26's dual
path (x[:, :d, :, :] + out[:, :d, :, :] cat with the dense parts; grouped 3x3 conv), ShuffleNetV2
(ShuffleBlock's view/permute/reshape channel shuffle, SplitBlock's int(x.size(1) * ratio) slices),
MobileNetV2 (inverted residuals from a cfg list, depthwise groups=planes), EfficientNet-B0 (swish
written as x * x.sigmoid(), squeeze-excitation through F.adaptive_avg_pool2d, drop_connect by
torch.empty([...]).bernoulli_(keep) with x.div_ and x.mul_ in training), RegNetX_200MF and
RegNetY_400MF-style SE (cfg dicts, grouped convs of group_width), DLA (Tree built with
self.__setattr__('level_%d' % i, ...) and read back by self.__getattr__, Root's torch.cat(xs, 1)),
SENet18 (F.avg_pool2d(out, out.size(2)), F.sigmoid) and GoogLeNet (Inception's four branches).
Each model is trained by main.py's loop (run with --lr 0.01) for one batch of 32x32 images
normalised with the CIFAR mean and std: CrossEntropyLoss(label_smoothing=0.1), SGD(momentum=0.9, weight_decay=5e-4),
CosineAnnealingLR(T_max=200) stepped per epoch, `_, predicted = outputs.max(1)`,
predicted.eq(targets).sum().item(), the progress message 'Loss: %.3f | Acc: %.3f%% (%d/%d)'; then
test() under net.eval() and torch.no_grad(), and the checkpoint dict {'net': state_dict, 'acc',
'epoch'} through torch.save / torch.load, reloaded into a fresh model. The models' widths are the
repository's; the batches hold 2 images so that each program stays a few seconds on a CPU."""
import io
import math

import numpy as np
import pytest

from prog_helpers import assert_same_results, numpy_of, run_both, start_from


def cifar_models(torch):
    """The repository's models/ package, written against `torch`; returns {name: constructor}."""
    nn, F = torch.nn, torch.nn.functional

    def conv_bn_relu(in_planes, out_planes, **conv):
        return [nn.Conv2d(in_planes, out_planes, **conv), nn.BatchNorm2d(out_planes), nn.ReLU(True)]

    def pool_and_classify(out, linear):
        """The head every model file ends its forward with: a 4x4 average pool of the last
        feature map, flattened, then the classifier."""
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        return linear(out)

    # ---- models/resnet.py ----
    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, in_planes, planes, stride=1):
            super(BasicBlock, self).__init__()
            self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.shortcut = nn.Sequential()
            if stride != 1 or in_planes != self.expansion * planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(self.expansion * planes))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.shortcut(x)
            out = F.relu(out)
            return out

    class ResNet(nn.Module):
        def __init__(self, block, num_blocks, num_classes=10):
            super(ResNet, self).__init__()
            self.in_planes = 64
            self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.layer1 = self._make_layer(block, 64, num_blocks[0], stride=1)
            self.layer2 = self._make_layer(block, 128, num_blocks[1], stride=2)
            self.layer3 = self._make_layer(block, 256, num_blocks[2], stride=2)
            self.layer4 = self._make_layer(block, 512, num_blocks[3], stride=2)
            self.linear = nn.Linear(512 * block.expansion, num_classes)

        def _make_layer(self, block, planes, num_blocks, stride):
            strides = [stride] + [1] * (num_blocks - 1)
            layers = []
            for stride in strides:
                layers.append(block(self.in_planes, planes, stride))
                self.in_planes = planes * block.expansion
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer1(out)
            out = self.layer2(out)
            out = self.layer3(out)
            out = self.layer4(out)
            return pool_and_classify(out, self.linear)

    def ResNet18():
        return ResNet(BasicBlock, [2, 2, 2, 2])

    # ---- models/preact_resnet.py ----
    class PreActBlock(nn.Module):
        """Pre-activation version of the BasicBlock."""
        expansion = 1

        def __init__(self, in_planes, planes, stride=1):
            super(PreActBlock, self).__init__()
            self.bn1 = nn.BatchNorm2d(in_planes)
            self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
            if stride != 1 or in_planes != self.expansion * planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False))

        def branch(self, x):
            out = F.relu(self.bn1(x))
            shortcut = self.shortcut(out) if hasattr(self, 'shortcut') else x
            out = self.conv1(out)
            out = self.conv2(F.relu(self.bn2(out)))
            return out, shortcut

        def forward(self, x):
            out, shortcut = self.branch(x)
            out += shortcut
            return out

    class PreActResNet(ResNet):
        def __init__(self, block, num_blocks, num_classes=10):
            super(PreActResNet, self).__init__(block, num_blocks, num_classes)
            del self.bn1  # pre-activation: the stem conv feeds the first block's BatchNorm
            self.bn = nn.BatchNorm2d(512 * block.expansion)

        def forward(self, x):
            out = self.conv1(x)
            out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
            out = F.relu(self.bn(out))
            return pool_and_classify(out, self.linear)

    def PreActResNet18():
        return PreActResNet(PreActBlock, [2, 2, 2, 2])

    # ---- models/densenet.py ----
    class Bottleneck(nn.Module):
        def __init__(self, in_planes, growth_rate):
            super(Bottleneck, self).__init__()
            self.bn1 = nn.BatchNorm2d(in_planes)
            self.conv1 = nn.Conv2d(in_planes, 4 * growth_rate, kernel_size=1, bias=False)
            self.bn2 = nn.BatchNorm2d(4 * growth_rate)
            self.conv2 = nn.Conv2d(4 * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)

        def forward(self, x):
            out = self.conv1(F.relu(self.bn1(x)))
            out = self.conv2(F.relu(self.bn2(out)))
            out = torch.cat([out, x], 1)
            return out

    class Transition(nn.Module):
        def __init__(self, in_planes, out_planes):
            super(Transition, self).__init__()
            self.bn = nn.BatchNorm2d(in_planes)
            self.conv = nn.Conv2d(in_planes, out_planes, kernel_size=1, bias=False)

        def forward(self, x):
            out = self.conv(F.relu(self.bn(x)))
            out = F.avg_pool2d(out, 2)
            return out

    class DenseNet(nn.Module):
        def __init__(self, block, nblocks, growth_rate=12, reduction=0.5, num_classes=10):
            super(DenseNet, self).__init__()
            self.growth_rate = growth_rate
            num_planes = 2 * growth_rate
            self.conv1 = nn.Conv2d(3, num_planes, kernel_size=3, padding=1, bias=False)

            for i in range(3):  # densenet.py spells out these three stages one by one
                self.add_module('dense%d' % (i + 1), self._make_dense_layers(block, num_planes, nblocks[i]))
                num_planes += nblocks[i] * growth_rate
                out_planes = int(math.floor(num_planes * reduction))
                self.add_module('trans%d' % (i + 1), Transition(num_planes, out_planes))
                num_planes = out_planes

            self.dense4 = self._make_dense_layers(block, num_planes, nblocks[3])
            num_planes += nblocks[3] * growth_rate

            self.bn = nn.BatchNorm2d(num_planes)
            self.linear = nn.Linear(num_planes, num_classes)

        def _make_dense_layers(self, block, in_planes, nblock):
            layers = []
            for i in range(nblock):
                layers.append(block(in_planes, self.growth_rate))
                in_planes += self.growth_rate
            return nn.Sequential(*layers)

        def forward(self, x):
            out = self.conv1(x)
            out = self.trans1(self.dense1(out))
            out = self.trans2(self.dense2(out))
            out = self.trans3(self.dense3(out))
            out = self.dense4(out)
            return pool_and_classify(F.relu(self.bn(out)), self.linear)

    def densenet_cifar():
        return DenseNet(Bottleneck, [6, 12, 24, 16], growth_rate=12)

    # ---- models/dpn.py ----
    class DPNBottleneck(nn.Module):
        def __init__(self, last_planes, in_planes, out_planes, dense_depth, stride, first_layer):
            super(DPNBottleneck, self).__init__()
            self.out_planes = out_planes
            self.dense_depth = dense_depth
            self.conv1 = nn.Conv2d(last_planes, in_planes, kernel_size=1, bias=False)
            self.bn1 = nn.BatchNorm2d(in_planes)
            self.conv2 = nn.Conv2d(in_planes, in_planes, kernel_size=3, stride=stride, padding=1, groups=32,
                                   bias=False)
            self.bn2 = nn.BatchNorm2d(in_planes)
            self.conv3 = nn.Conv2d(in_planes, out_planes + dense_depth, kernel_size=1, bias=False)
            self.bn3 = nn.BatchNorm2d(out_planes + dense_depth)
            self.shortcut = nn.Sequential()
            if first_layer:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(last_planes, out_planes + dense_depth, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(out_planes + dense_depth))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = F.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            x = self.shortcut(x)
            d = self.out_planes
            out = torch.cat([x[:, :d, :, :] + out[:, :d, :, :], x[:, d:, :, :], out[:, d:, :, :]], 1)
            out = F.relu(out)
            return out

    class DPN(nn.Module):
        def __init__(self, cfg):
            super(DPN, self).__init__()
            in_planes, out_planes = cfg['in_planes'], cfg['out_planes']
            num_blocks, dense_depth = cfg['num_blocks'], cfg['dense_depth']
            self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.last_planes = 64
            self.layer1 = self._make_layer(in_planes[0], out_planes[0], num_blocks[0], dense_depth[0], stride=1)
            self.layer2 = self._make_layer(in_planes[1], out_planes[1], num_blocks[1], dense_depth[1], stride=2)
            self.layer3 = self._make_layer(in_planes[2], out_planes[2], num_blocks[2], dense_depth[2], stride=2)
            self.layer4 = self._make_layer(in_planes[3], out_planes[3], num_blocks[3], dense_depth[3], stride=2)
            self.linear = nn.Linear(out_planes[3] + (num_blocks[3] + 1) * dense_depth[3], 10)

        def _make_layer(self, in_planes, out_planes, num_blocks, dense_depth, stride):
            strides = [stride] + [1] * (num_blocks - 1)
            layers = []
            for i, stride in enumerate(strides):
                layers.append(DPNBottleneck(self.last_planes, in_planes, out_planes, dense_depth, stride, i == 0))
                self.last_planes = out_planes + (i + 2) * dense_depth
            return nn.Sequential(*layers)

        forward = ResNet.forward  # dpn.py's forward is resnet.py's, line for line

    def DPN26():
        cfg = {
            'in_planes': (96, 192, 384, 768),
            'out_planes': (256, 512, 1024, 2048),
            'num_blocks': (2, 2, 2, 2),
            'dense_depth': (16, 32, 24, 128),
        }
        return DPN(cfg)

    # ---- models/shufflenetv2.py ----
    class ShuffleBlock(nn.Module):
        def __init__(self, groups=2):
            super(ShuffleBlock, self).__init__()
            self.groups = groups

        def forward(self, x):
            """Channel shuffle: [N,C,H,W] -> [N,g,C/g,H,W] -> [N,C/g,g,H,w] -> [N,C,H,W]"""
            N, C, H, W = x.size()
            g = self.groups
            return x.view(N, g, C // g, H, W).permute(0, 2, 1, 3, 4).reshape(N, C, H, W)

    class SplitBlock(nn.Module):
        def __init__(self, ratio):
            super(SplitBlock, self).__init__()
            self.ratio = ratio

        def forward(self, x):
            c = int(x.size(1) * self.ratio)
            return x[:, :c, :, :], x[:, c:, :, :]

    def shuffle_branch(in_channels, channels, stride):
        """ShuffleNetV2's convolution branch: 1x1 conv, 3x3 depthwise conv of `stride` (no ReLU
        after it), 1x1 conv, each followed by BatchNorm."""
        return nn.Sequential(
            *conv_bn_relu(in_channels, channels, kernel_size=1, bias=False),
            nn.Conv2d(channels, channels, kernel_size=3, stride=stride, padding=1, groups=channels, bias=False),
            nn.BatchNorm2d(channels),
            *conv_bn_relu(channels, channels, kernel_size=1, bias=False))

    class ShuffleUnit(nn.Module):
        def __init__(self, in_channels, split_ratio=0.5):
            super(ShuffleUnit, self).__init__()
            self.split = SplitBlock(split_ratio)
            in_channels = int(in_channels * split_ratio)
            self.branch = shuffle_branch(in_channels, in_channels, stride=1)
            self.shuffle = ShuffleBlock()

        def forward(self, x):
            x1, x2 = self.split(x)
            out = self.branch(x2)
            out = torch.cat([x1, out], 1)
            out = self.shuffle(out)
            return out

    class DownBlock(nn.Module):
        def __init__(self, in_channels, out_channels):
            super(DownBlock, self).__init__()
            mid_channels = out_channels // 2
            # left
            self.conv1 = nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=2, padding=1,
                                   groups=in_channels, bias=False)
            self.bn1 = nn.BatchNorm2d(in_channels)
            self.conv2 = nn.Conv2d(in_channels, mid_channels, kernel_size=1, bias=False)
            self.bn2 = nn.BatchNorm2d(mid_channels)
            # right
            self.right = shuffle_branch(in_channels, mid_channels, stride=2)
            self.shuffle = ShuffleBlock()

        def forward(self, x):
            # left
            out1 = self.bn1(self.conv1(x))
            out1 = F.relu(self.bn2(self.conv2(out1)))
            # right
            out2 = self.right(x)
            # concat
            out = torch.cat([out1, out2], 1)
            out = self.shuffle(out)
            return out

    configs = {
        0.5: {'out_channels': (48, 96, 192, 1024), 'num_blocks': (3, 7, 3)},
        1: {'out_channels': (116, 232, 464, 1024), 'num_blocks': (3, 7, 3)},
    }

    class ShuffleNetV2(nn.Module):
        def __init__(self, net_size):
            super(ShuffleNetV2, self).__init__()
            out_channels = configs[net_size]['out_channels']
            num_blocks = configs[net_size]['num_blocks']
            self.conv1 = nn.Conv2d(3, 24, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(24)
            self.in_channels = 24
            self.layer1 = self._make_layer(out_channels[0], num_blocks[0])
            self.layer2 = self._make_layer(out_channels[1], num_blocks[1])
            self.layer3 = self._make_layer(out_channels[2], num_blocks[2])
            self.conv2 = nn.Conv2d(out_channels[2], out_channels[3], kernel_size=1, stride=1, padding=0,
                                   bias=False)
            self.bn2 = nn.BatchNorm2d(out_channels[3])
            self.linear = nn.Linear(out_channels[3], 10)

        def _make_layer(self, out_channels, num_blocks):
            layers = [DownBlock(self.in_channels, out_channels)]
            for i in range(num_blocks):
                layers.append(ShuffleUnit(out_channels))
                self.in_channels = out_channels
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer3(self.layer2(self.layer1(out)))
            out = F.relu(self.bn2(self.conv2(out)))
            return pool_and_classify(out, self.linear)

    # ---- models/mobilenetv2.py ----
    class InvertedResidual(nn.Module):
        """expand + depthwise + pointwise"""

        def __init__(self, in_planes, out_planes, expansion, stride):
            super(InvertedResidual, self).__init__()
            self.stride = stride
            planes = expansion * in_planes
            self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=1, stride=1, padding=0, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, groups=planes,
                                   bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, out_planes, kernel_size=1, stride=1, padding=0, bias=False)
            self.bn3 = nn.BatchNorm2d(out_planes)
            self.shortcut = nn.Sequential()
            if stride == 1 and in_planes != out_planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=1, padding=0, bias=False),
                    nn.BatchNorm2d(out_planes))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = F.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            out = out + self.shortcut(x) if self.stride == 1 else out
            return out

    class MobileNetV2(nn.Module):
        # (expansion, out_planes, num_blocks, stride)
        cfg = [(1, 16, 1, 1),
               (6, 24, 2, 1),  # NOTE: change stride 2 -> 1 for CIFAR10
               (6, 32, 3, 2),
               (6, 64, 4, 2),
               (6, 96, 3, 1),
               (6, 160, 3, 2),
               (6, 320, 1, 1)]

        def __init__(self, num_classes=10):
            super(MobileNetV2, self).__init__()
            # NOTE: change conv1 stride 2 -> 1 for CIFAR10
            self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.layers = self._make_layers(in_planes=32)
            self.conv2 = nn.Conv2d(320, 1280, kernel_size=1, stride=1, padding=0, bias=False)
            self.bn2 = nn.BatchNorm2d(1280)
            self.linear = nn.Linear(1280, num_classes)

        def _make_layers(self, in_planes):
            layers = []
            for expansion, out_planes, num_blocks, stride in self.cfg:
                strides = [stride] + [1] * (num_blocks - 1)
                for stride in strides:
                    layers.append(InvertedResidual(in_planes, out_planes, expansion, stride))
                    in_planes = out_planes
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layers(out)
            out = F.relu(self.bn2(self.conv2(out)))
            # NOTE: change pooling kernel_size 7 -> 4 for CIFAR10
            return pool_and_classify(out, self.linear)

    # ---- models/efficientnet.py ----
    def swish(x):
        return x * x.sigmoid()

    def drop_connect(x, drop_ratio):
        keep_ratio = 1.0 - drop_ratio
        mask = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device)
        mask.bernoulli_(keep_ratio)
        x.div_(keep_ratio)
        x.mul_(mask)
        return x

    class SE(nn.Module):
        """Squeeze-and-Excitation block with Swish (regnet.py's has ReLU)."""

        def __init__(self, in_channels, se_channels, activation=swish):
            super(SE, self).__init__()
            self.activation = activation
            self.se1 = nn.Conv2d(in_channels, se_channels, kernel_size=1, bias=True)
            self.se2 = nn.Conv2d(se_channels, in_channels, kernel_size=1, bias=True)

        def forward(self, x):
            out = F.adaptive_avg_pool2d(x, (1, 1))
            out = self.activation(self.se1(out))
            out = self.se2(out).sigmoid()
            out = x * out
            return out

    class MBBlock(nn.Module):
        """expansion + depthwise + pointwise + squeeze-excitation"""

        def __init__(self, in_channels, out_channels, kernel_size, stride, expand_ratio=1, se_ratio=0.,
                     drop_rate=0.):
            super(MBBlock, self).__init__()
            self.stride = stride
            self.drop_rate = drop_rate
            self.expand_ratio = expand_ratio
            # Expansion
            channels = expand_ratio * in_channels
            self.conv1 = nn.Conv2d(in_channels, channels, kernel_size=1, stride=1, padding=0, bias=False)
            self.bn1 = nn.BatchNorm2d(channels)
            # Depthwise conv
            self.conv2 = nn.Conv2d(channels, channels, kernel_size=kernel_size, stride=stride,
                                   padding=(1 if kernel_size == 3 else 2), groups=channels, bias=False)
            self.bn2 = nn.BatchNorm2d(channels)
            # SE layers
            se_channels = int(in_channels * se_ratio)
            self.se = SE(channels, se_channels)
            # Output
            self.conv3 = nn.Conv2d(channels, out_channels, kernel_size=1, stride=1, padding=0, bias=False)
            self.bn3 = nn.BatchNorm2d(out_channels)
            # Skip connection if in and out shapes are the same (MV-V2 style)
            self.has_skip = (stride == 1) and (in_channels == out_channels)

        def forward(self, x):
            out = x if self.expand_ratio == 1 else swish(self.bn1(self.conv1(x)))
            out = swish(self.bn2(self.conv2(out)))
            out = self.se(out)
            out = self.bn3(self.conv3(out))
            if self.has_skip:
                if self.training and self.drop_rate > 0:
                    out = drop_connect(out, self.drop_rate)
                out = out + x
            return out

    class EfficientNet(nn.Module):
        def __init__(self, cfg, num_classes=10):
            super(EfficientNet, self).__init__()
            self.cfg = cfg
            self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.layers = self._make_layers(in_channels=32)
            self.linear = nn.Linear(cfg['out_channels'][-1], num_classes)

        def _make_layers(self, in_channels):
            layers = []
            cfg = [self.cfg[k] for k in ['expansion', 'out_channels', 'num_blocks', 'kernel_size', 'stride']]
            b = 0
            blocks = sum(self.cfg['num_blocks'])
            for expansion, out_channels, num_blocks, kernel_size, stride in zip(*cfg):
                strides = [stride] + [1] * (num_blocks - 1)
                for stride in strides:
                    drop_rate = self.cfg['drop_connect_rate'] * b / blocks
                    layers.append(MBBlock(in_channels, out_channels, kernel_size, stride, expansion,
                                          se_ratio=0.25, drop_rate=drop_rate))
                    in_channels = out_channels
            return nn.Sequential(*layers)

        def forward(self, x):
            out = swish(self.bn1(self.conv1(x)))
            out = self.layers(out)
            out = F.adaptive_avg_pool2d(out, 1)
            out = out.view(out.size(0), -1)
            dropout_rate = self.cfg['dropout_rate']
            if self.training and dropout_rate > 0:
                out = F.dropout(out, p=dropout_rate)
            out = self.linear(out)
            return out

    def EfficientNetB0():
        cfg = {
            'num_blocks': [1, 2, 2, 3, 3, 4, 1],
            'expansion': [1, 6, 6, 6, 6, 6, 6],
            'out_channels': [16, 24, 40, 80, 112, 192, 320],
            'kernel_size': [3, 3, 5, 3, 5, 5, 3],
            'stride': [1, 2, 2, 2, 1, 2, 1],
            'dropout_rate': 0.2,
            'drop_connect_rate': 0.2,
        }
        return EfficientNet(cfg)

    # ---- models/regnet.py ----
    class RegBlock(nn.Module):
        def __init__(self, w_in, w_out, stride, group_width, bottleneck_ratio, se_ratio):
            super(RegBlock, self).__init__()
            # 1x1
            w_b = int(round(w_out * bottleneck_ratio))
            self.conv1 = nn.Conv2d(w_in, w_b, kernel_size=1, bias=False)
            self.bn1 = nn.BatchNorm2d(w_b)
            # 3x3
            num_groups = w_b // group_width
            self.conv2 = nn.Conv2d(w_b, w_b, kernel_size=3, stride=stride, padding=1, groups=num_groups, bias=False)
            self.bn2 = nn.BatchNorm2d(w_b)
            # se
            self.with_se = se_ratio > 0
            if self.with_se:
                w_se = int(round(w_in * se_ratio))
                self.se = SE(w_b, w_se, activation=F.relu)
            # 1x1
            self.conv3 = nn.Conv2d(w_b, w_out, kernel_size=1, bias=False)
            self.bn3 = nn.BatchNorm2d(w_out)
            self.shortcut = nn.Sequential()
            if stride != 1 or w_in != w_out:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(w_in, w_out, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(w_out))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = F.relu(self.bn2(self.conv2(out)))
            if self.with_se:
                out = self.se(out)
            out = self.bn3(self.conv3(out))
            out += self.shortcut(x)
            out = F.relu(out)
            return out

    class RegNet(nn.Module):
        def __init__(self, cfg, num_classes=10):
            super(RegNet, self).__init__()
            self.cfg = cfg
            self.in_planes = 64
            self.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.layer1 = self._make_layer(0)
            self.layer2 = self._make_layer(1)
            self.layer3 = self._make_layer(2)
            self.layer4 = self._make_layer(3)
            self.linear = nn.Linear(self.cfg['widths'][-1], num_classes)

        def _make_layer(self, idx):
            depth = self.cfg['depths'][idx]
            width = self.cfg['widths'][idx]
            stride = self.cfg['strides'][idx]
            group_width = self.cfg['group_width']
            bottleneck_ratio = self.cfg['bottleneck_ratio']
            se_ratio = self.cfg['se_ratio']
            layers = []
            for i in range(depth):
                s = stride if i == 0 else 1
                layers.append(RegBlock(self.in_planes, width, s, group_width, bottleneck_ratio, se_ratio))
                self.in_planes = width
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer4(self.layer3(self.layer2(self.layer1(out))))
            out = F.adaptive_avg_pool2d(out, (1, 1))
            out = out.view(out.size(0), -1)
            out = self.linear(out)
            return out

    def RegNetX_200MF(se_ratio=0):
        cfg = {
            'depths': [1, 1, 4, 7],
            'widths': [24, 56, 152, 368],
            'strides': [1, 1, 2, 2],
            'group_width': 8,
            'bottleneck_ratio': 1,
            'se_ratio': se_ratio,
        }
        return RegNet(cfg)

    def RegNetY_200MF():
        # RegNetY is RegNetX with squeeze-excitation in every block
        return RegNetX_200MF(se_ratio=0.25)

    # ---- models/dla.py ----
    class Root(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size=1):
            super(Root, self).__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=1,
                                  padding=(kernel_size - 1) // 2, bias=False)
            self.bn = nn.BatchNorm2d(out_channels)

        def forward(self, xs):
            x = torch.cat(xs, 1)
            out = F.relu(self.bn(self.conv(x)))
            return out

    class Tree(nn.Module):
        def __init__(self, block, in_channels, out_channels, level=1, stride=1):
            super(Tree, self).__init__()
            self.level = level
            if level == 1:
                self.root = Root(2 * out_channels, out_channels)
                self.left_node = block(in_channels, out_channels, stride=stride)
                self.right_node = block(out_channels, out_channels, stride=1)
            else:
                self.root = Root((level + 1) * out_channels, out_channels)
                for i in reversed(range(1, level)):
                    subtree = Tree(block, in_channels, out_channels, level=i, stride=stride)
                    self.__setattr__('level_%d' % i, subtree)
                self.left_node = block(out_channels, out_channels, stride=1)
                self.right_node = block(out_channels, out_channels, stride=1)

        def forward(self, x):
            xs = []
            for i in reversed(range(1, self.level)):
                level_i = self.__getattr__('level_%d' % i)
                x = level_i(x)
                xs.append(x)
            x = self.left_node(x)
            xs.append(x)
            x = self.right_node(x)
            xs.append(x)
            out = self.root(xs)
            return out

    class DLA(nn.Module):
        def __init__(self, block=BasicBlock, num_classes=10):
            super(DLA, self).__init__()
            self.base = nn.Sequential(*conv_bn_relu(3, 16, kernel_size=3, stride=1, padding=1, bias=False))
            self.layer1 = nn.Sequential(*conv_bn_relu(16, 16, kernel_size=3, stride=1, padding=1, bias=False))
            self.layer2 = nn.Sequential(*conv_bn_relu(16, 32, kernel_size=3, stride=1, padding=1, bias=False))
            self.layer3 = Tree(block, 32, 64, level=1, stride=1)
            self.layer4 = Tree(block, 64, 128, level=2, stride=2)
            self.layer5 = Tree(block, 128, 256, level=2, stride=2)
            self.layer6 = Tree(block, 256, 512, level=1, stride=2)
            self.linear = nn.Linear(512, num_classes)

        def forward(self, x):
            out = self.base(x)
            out = self.layer1(out)
            out = self.layer2(out)
            out = self.layer3(out)
            out = self.layer4(out)
            out = self.layer5(out)
            out = self.layer6(out)
            return pool_and_classify(out, self.linear)

    # ---- models/senet.py ----
    class SEPreActBlock(PreActBlock):
        def __init__(self, in_planes, planes, stride=1):
            super(SEPreActBlock, self).__init__(in_planes, planes, stride)
            # SE layers
            self.fc1 = nn.Conv2d(planes, planes // 16, kernel_size=1)
            self.fc2 = nn.Conv2d(planes // 16, planes, kernel_size=1)

        def forward(self, x):
            out, shortcut = self.branch(x)
            # Squeeze
            w = F.avg_pool2d(out, out.size(2))
            w = F.relu(self.fc1(w))
            w = F.sigmoid(self.fc2(w))
            # Excitation
            out = out * w
            out += shortcut
            return out

    def SENet18():
        # senet.py's SENet is ResNet's stem, stages and head around this block
        return ResNet(SEPreActBlock, [2, 2, 2, 2])

    # ---- models/googlenet.py ----
    class Inception(nn.Module):
        def __init__(self, in_planes, n1x1, n3x3red, n3x3, n5x5red, n5x5, pool_planes):
            super(Inception, self).__init__()
            # 1x1 conv branch
            self.b1 = nn.Sequential(*conv_bn_relu(in_planes, n1x1, kernel_size=1))
            # 1x1 conv -> 3x3 conv branch
            self.b2 = nn.Sequential(*conv_bn_relu(in_planes, n3x3red, kernel_size=1),
                                    *conv_bn_relu(n3x3red, n3x3, kernel_size=3, padding=1))
            # 1x1 conv -> 5x5 conv branch (two 3x3)
            self.b3 = nn.Sequential(*conv_bn_relu(in_planes, n5x5red, kernel_size=1),
                                    *conv_bn_relu(n5x5red, n5x5, kernel_size=3, padding=1),
                                    *conv_bn_relu(n5x5, n5x5, kernel_size=3, padding=1))
            # 3x3 pool -> 1x1 conv branch
            self.b4 = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1),
                                    *conv_bn_relu(in_planes, pool_planes, kernel_size=1))

        def forward(self, x):
            y1 = self.b1(x)
            y2 = self.b2(x)
            y3 = self.b3(x)
            y4 = self.b4(x)
            return torch.cat([y1, y2, y3, y4], 1)

    class GoogLeNet(nn.Module):
        def __init__(self):
            super(GoogLeNet, self).__init__()
            self.pre_layers = nn.Sequential(*conv_bn_relu(3, 192, kernel_size=3, padding=1))
            self.a3 = Inception(192, 64, 96, 128, 16, 32, 32)
            self.b3 = Inception(256, 128, 128, 192, 32, 96, 64)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            self.a4 = Inception(480, 192, 96, 208, 16, 48, 64)
            self.b4 = Inception(512, 160, 112, 224, 24, 64, 64)
            self.c4 = Inception(512, 128, 128, 256, 24, 64, 64)
            self.d4 = Inception(512, 112, 144, 288, 32, 64, 64)
            self.e4 = Inception(528, 256, 160, 320, 32, 128, 128)
            self.a5 = Inception(832, 256, 160, 320, 32, 128, 128)
            self.b5 = Inception(832, 384, 192, 384, 48, 128, 128)
            self.avgpool = nn.AvgPool2d(8, stride=1)
            self.linear = nn.Linear(1024, 10)

        def forward(self, x):
            out = self.pre_layers(x)
            out = self.a3(out)
            out = self.b3(out)
            out = self.maxpool(out)
            out = self.a4(out)
            out = self.b4(out)
            out = self.c4(out)
            out = self.d4(out)
            out = self.e4(out)
            out = self.maxpool(out)
            out = self.a5(out)
            out = self.b5(out)
            out = self.avgpool(out)
            out = out.view(out.size(0), -1)
            out = self.linear(out)
            return out

    return {
        "ResNet18": ResNet18, "PreActResNet18": PreActResNet18, "densenet_cifar": densenet_cifar,
        "DPN26": DPN26, "ShuffleNetV2": lambda: ShuffleNetV2(net_size=0.5), "MobileNetV2": MobileNetV2,
        "EfficientNetB0": EfficientNetB0, "RegNetX_200MF": RegNetX_200MF, "RegNetY_200MF": RegNetY_200MF,
        "DLA": DLA, "SENet18": SENet18, "GoogLeNet": GoogLeNet,
    }


MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)


def cifar_batches(n_batches, batch, seed):
    """Random 32x32 RGB images in [0, 1] with a class-dependent colour cast, normalised like
    transforms.Normalize(MEAN, STD), and their labels (10 classes)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        y = rng.integers(0, 10, batch)
        x = rng.uniform(0, 1, (batch, 3, 32, 32))
        x[:, 0] += (y[:, None, None] % 3) * 0.2
        x[:, 1] += (y[:, None, None] % 2) * 0.3
        x = (np.clip(x, 0, 1) - np.array(MEAN)[:, None, None]) / np.array(STD)[:, None, None]
        out.append((x.astype(np.float32), y))
    return out


def cifar_main(torch, init=None, arch="ResNet18", lr=0.01, batch=2, n_batches=1):
    nn, optim = torch.nn, torch.optim
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    torch.manual_seed(0)
    best_acc = 0  # best test accuracy
    start_epoch = 0  # start from epoch 0 or last checkpoint epoch

    print_lines = []
    net = cifar_models(torch)[arch]()
    net = net.to(device)
    result = {}
    start_from(torch, net, init, result)

    trainloader = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in cifar_batches(n_batches, batch, 1)]
    testloader = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in cifar_batches(1, batch, 2)]

    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)

    # Training
    def train(epoch):
        net.train()
        train_loss = 0
        correct = 0
        total = 0
        losses = []
        for batch_idx, (inputs, targets) in enumerate(trainloader):
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()

            train_loss += loss.item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
            losses.append(loss.item())
            print_lines.append('Loss: %.3f | Acc: %.3f%% (%d/%d)'
                               % (train_loss / (batch_idx + 1), 100. * correct / total, correct, total))
        return losses

    def test(epoch):
        nonlocal best_acc
        net.eval()
        test_loss = 0
        correct = 0
        total = 0
        with torch.no_grad():
            for batch_idx, (inputs, targets) in enumerate(testloader):
                inputs, targets = inputs.to(device), targets.to(device)
                outputs = net(inputs)
                loss = criterion(outputs, targets)
                test_loss += loss.item()
                _, predicted = outputs.max(1)
                total += targets.size(0)
                correct += predicted.eq(targets).sum().item()
        # Save checkpoint.
        acc = 100. * correct / total
        buffer = io.BytesIO()
        state = {'net': net.state_dict(), 'acc': acc, 'epoch': epoch}
        torch.save(state, buffer)
        if acc > best_acc:
            best_acc = acc
        return test_loss, outputs, buffer

    for epoch in range(start_epoch, start_epoch + 1):
        result["losses"] = train(epoch)
        test_loss, outputs, buffer = test(epoch)
        scheduler.step()

    buffer.seek(0)
    checkpoint = torch.load(buffer)
    fresh = cifar_models(torch)[arch]()
    fresh.load_state_dict(checkpoint['net'])
    fresh.eval()
    with torch.no_grad():
        again = fresh(testloader[0][0])
    result.update(test_loss=test_loss, logits=numpy_of(outputs), reloaded=numpy_of(again),
                  epoch=checkpoint['epoch'], lr=scheduler.get_last_lr(), printed=print_lines,
                  n_params=sum(p.numel() for p in net.parameters()),
                  state={k: numpy_of(v) for k, v in net.state_dict().items()})
    return result


def compare_printed(got, ref):
    """The progress lines: same text, the 3-decimal numbers within a last-digit unit."""
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.split("|")[1] == r.split("|")[1], (g, r)  # accuracy and counts exactly
        assert abs(float(g.split()[1]) - float(r.split()[1])) <= 1.5e-3, (g, r)


ARCHS = ["ResNet18", "PreActResNet18", "densenet_cifar", "DPN26", "ShuffleNetV2", "MobileNetV2",
         "EfficientNetB0", "RegNetX_200MF", "RegNetY_200MF", "DLA", "SENet18", "GoogLeNet"]


@pytest.mark.parametrize("arch", ARCHS)
def test_cifar_architecture(arch):
    ref, got = run_both(cifar_main, arch=arch)
    compare_printed(got.pop("printed"), ref.pop("printed"))
    # Deep BatchNorm networks after a momentum step: the eval-mode logits run through running
    # statistics of one batch of 4, so they get a looser bound than the training losses.
    assert_same_results({k: got[k] for k in ("losses", "n_params", "epoch", "lr")},
                        {k: ref[k] for k in ("losses", "n_params", "epoch", "lr")}, rtol=1e-4, atol=1e-5)
    assert_same_results({k: got[k] for k in ("logits", "reloaded", "test_loss", "state")},
                        {k: ref[k] for k in ("logits", "reloaded", "test_loss", "state")}, rtol=2e-3, atol=2e-4)
    np.testing.assert_array_equal(got["reloaded"], got["logits"])
    assert 1.0 < ref["losses"][0] < 4.0  # ten classes from a random start: near log(10)
