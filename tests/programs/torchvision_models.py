"""torchvision's ResNet as the published programs reach into it (torchvision is not installed):
BasicBlock (conv1/bn1/relu/conv2/bn2 and an optional downsample), ResNet with torchvision's module
names (conv1, bn1, relu, maxpool, layer1-4, avgpool, fc) and initialisation (kaiming_normal_ with
mode='fan_out' for convolutions, BatchNorm weights 1 and biases 0), and resnet18(pretrained=False)
with narrower widths where a test asks. Built for the library a program runs on:
`BasicBlock, ResNet, resnet18 = torchvision_resnet(torch)`."""


def torchvision_resnet(torch):
    nn = torch.nn

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, layers=(2, 2, 2, 2), num_classes=1000, widths=(64, 128, 256, 512)):
            super().__init__()
            self.inplanes = widths[0]
            self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(widths[0], layers[0])
            self.layer2 = self._make_layer(widths[1], layers[1], stride=2)
            self.layer3 = self._make_layer(widths[2], layers[2], stride=2)
            self.layer4 = self._make_layer(widths[3], layers[3], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(widths[3], num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                           nn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    def resnet18(pretrained=False, **kwargs):
        return ResNet(**kwargs)

    return BasicBlock, ResNet, resnet18
