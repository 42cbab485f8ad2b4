"""The d2l book's convolutional chapters as its 1.0 edition writes them: LeNet of LazyConv2d,
Sigmoid, AvgPool2d and LazyLinear; NiN blocks ending in AdaptiveAvgPool2d((1, 1)) and Flatten;
GoogLeNet's Inception block (four branches joined by torch.cat(..., dim=1)); ResNet's Residual
with use_1x1conv and LazyBatchNorm2d (Y += X); DenseNet's DenseBlock and transition_block. Each
model is materialised by apply_init (one forward of a dummy batch, then net.apply(init_cnn) with
xavier_uniform_), its layer_summary walk recorded, then trained a few SGD steps with
CrossEntropyLoss and evaluated with d2l's accuracy (argmax(axis=1), type(y.dtype) == y)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def make_images(n, size, seed):
    """Class 0: a bright horizontal band; 1: a vertical band; 2: a diagonal; with noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(0, 0.3, (n, 1, size, size))
    for i, c in enumerate(y):
        k = rng.integers(2, size - 2)
        if c == 0:
            x[i, 0, k - 1:k + 1, :] += 1
        elif c == 1:
            x[i, 0, :, k - 1:k + 1] += 1
        else:
            x[i, 0] += np.eye(size)
    return x.astype(np.float32), y


def build(torch, name):
    nn, F = torch.nn, torch.nn.functional

    def nin_block(out_channels, kernel_size, strides, padding):
        return nn.Sequential(
            nn.LazyConv2d(out_channels, kernel_size, strides, padding), nn.ReLU(),
            nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU(),
            nn.LazyConv2d(out_channels, kernel_size=1), nn.ReLU())

    class Inception(nn.Module):
        # c1--c4 are the number of output channels for each branch
        def __init__(self, c1, c2, c3, c4, **kwargs):
            super(Inception, self).__init__(**kwargs)
            # Branch 1
            self.b1_1 = nn.LazyConv2d(c1, kernel_size=1)
            # Branch 2
            self.b2_1 = nn.LazyConv2d(c2[0], kernel_size=1)
            self.b2_2 = nn.LazyConv2d(c2[1], kernel_size=3, padding=1)
            # Branch 3
            self.b3_1 = nn.LazyConv2d(c3[0], kernel_size=1)
            self.b3_2 = nn.LazyConv2d(c3[1], kernel_size=5, padding=2)
            # Branch 4
            self.b4_1 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
            self.b4_2 = nn.LazyConv2d(c4, kernel_size=1)

        def forward(self, x):
            b1 = F.relu(self.b1_1(x))
            b2 = F.relu(self.b2_2(F.relu(self.b2_1(x))))
            b3 = F.relu(self.b3_2(F.relu(self.b3_1(x))))
            b4 = F.relu(self.b4_2(self.b4_1(x)))
            return torch.cat((b1, b2, b3, b4), dim=1)

    class Residual(nn.Module):
        """The Residual block of ResNet models."""
        def __init__(self, num_channels, use_1x1conv=False, strides=1):
            super().__init__()
            self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1, stride=strides)
            self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
            if use_1x1conv:
                self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1, stride=strides)
            else:
                self.conv3 = None
            self.bn1 = nn.LazyBatchNorm2d()
            self.bn2 = nn.LazyBatchNorm2d()

        def forward(self, X):
            Y = F.relu(self.bn1(self.conv1(X)))
            Y = self.bn2(self.conv2(Y))
            if self.conv3:
                X = self.conv3(X)
            Y += X
            return F.relu(Y)

    def conv_block(num_channels):
        return nn.Sequential(
            nn.LazyBatchNorm2d(), nn.ReLU(),
            nn.LazyConv2d(num_channels, kernel_size=3, padding=1))

    class DenseBlock(nn.Module):
        def __init__(self, num_convs, num_channels):
            super(DenseBlock, self).__init__()
            layer = []
            for i in range(num_convs):
                layer.append(conv_block(num_channels))
            self.net = nn.Sequential(*layer)

        def forward(self, X):
            for blk in self.net:
                Y = blk(X)
                # Concatenate input and output of each block along the channels
                X = torch.cat((X, Y), dim=1)
            return X

    def transition_block(num_channels):
        return nn.Sequential(
            nn.LazyBatchNorm2d(), nn.ReLU(),
            nn.LazyConv2d(num_channels, kernel_size=1),
            nn.AvgPool2d(kernel_size=2, stride=2))

    num_classes = 3
    if name == "lenet":
        return nn.Sequential(
            nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
            nn.AvgPool2d(kernel_size=2, stride=2),
            nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
            nn.AvgPool2d(kernel_size=2, stride=2),
            nn.Flatten(),
            nn.LazyLinear(120), nn.Sigmoid(),
            nn.LazyLinear(84), nn.Sigmoid(),
            nn.LazyLinear(num_classes))
    if name == "nin":
        return nn.Sequential(
            nin_block(24, kernel_size=5, strides=2, padding=0),
            nn.MaxPool2d(3, stride=2),
            nin_block(32, kernel_size=3, strides=1, padding=1),
            nn.MaxPool2d(3, stride=2),
            nn.Dropout(0.5),
            nin_block(num_classes, kernel_size=3, strides=1, padding=1),
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.Flatten())
    if name == "googlenet":
        b1 = nn.Sequential(nn.LazyConv2d(8, kernel_size=7, stride=2, padding=3), nn.ReLU(),
                           nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
        b2 = nn.Sequential(nn.LazyConv2d(8, kernel_size=1), nn.ReLU(),
                           nn.LazyConv2d(24, kernel_size=3, padding=1), nn.ReLU(),
                           nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
        b3 = nn.Sequential(Inception(8, (12, 16), (2, 4), 4), Inception(16, (16, 24), (4, 12), 8),
                           nn.MaxPool2d(kernel_size=3, stride=2, padding=1))
        return nn.Sequential(b1, b2, b3, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LazyLinear(num_classes))
    if name == "resnet":
        b1 = nn.Sequential(nn.LazyConv2d(8, kernel_size=7, stride=2, padding=3), nn.LazyBatchNorm2d(), nn.ReLU(),
                           nn.MaxPool2d(kernel_size=3, stride=2, padding=1))

        def block(num_residuals, num_channels, first_block=False):
            blk = []
            for i in range(num_residuals):
                if i == 0 and not first_block:
                    blk.append(Residual(num_channels, use_1x1conv=True, strides=2))
                else:
                    blk.append(Residual(num_channels))
            return nn.Sequential(*blk)

        return nn.Sequential(b1, block(2, 8, first_block=True), block(2, 16), nn.AdaptiveAvgPool2d((1, 1)),
                             nn.Flatten(), nn.LazyLinear(num_classes))
    # DenseNet
    num_channels, growth_rate, arch = 16, 8, (3, 3)
    layers = [nn.Sequential(nn.LazyConv2d(16, kernel_size=7, stride=2, padding=3), nn.LazyBatchNorm2d(), nn.ReLU(),
                            nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]
    for i, num_convs in enumerate(arch):
        layers.append(DenseBlock(num_convs, growth_rate))
        # The number of output channels in the previous dense block
        num_channels += num_convs * growth_rate
        # A transition layer that halves the number of channels is added between the dense blocks
        if i != len(arch) - 1:
            num_channels //= 2
            layers.append(transition_block(num_channels))
    return nn.Sequential(*layers, nn.LazyBatchNorm2d(), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                         nn.LazyLinear(num_classes))


def d2l_cnn(torch, init=None, name="lenet", size=28, steps=4, batch_size=16, lr=0.1):
    nn = torch.nn
    torch.manual_seed(0)
    net = build(torch, name)

    def init_cnn(module):
        """Initialize weights for CNNs."""
        if type(module) == nn.Linear or type(module) == nn.Conv2d:
            nn.init.xavier_uniform_(module.weight)

    def apply_init(inputs, init=None):
        net(*inputs)
        if init is not None:
            net.apply(init)

    def layer_summary(X_shape):
        X = torch.randn(*X_shape)
        summary = []
        for layer in net:
            X = layer(X)
            summary.append((layer.__class__.__name__, tuple(X.shape)))
        return summary

    apply_init([torch.zeros(batch_size, 1, size, size)], init_cnn)
    result = {"summary": layer_summary((1, 1, size, size))}
    start_from(torch, net, init, result)

    def accuracy(y_hat, y):
        """Compute the number of correct predictions."""
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    X_all, y_all = make_images(steps * batch_size, size, seed=1)
    loss = nn.CrossEntropyLoss()
    trainer = torch.optim.SGD(net.parameters(), lr=lr)
    losses = []
    net.train()
    for i in range(steps):
        X = torch.tensor(X_all[i * batch_size:(i + 1) * batch_size])
        y = torch.tensor(y_all[i * batch_size:(i + 1) * batch_size])
        trainer.zero_grad()
        y_hat = net(X)
        l = loss(y_hat, y)
        l.backward()
        trainer.step()
        losses.append(l.item())
    net.eval()
    X_test, y_test = make_images(32, size, seed=2)
    with torch.no_grad():
        logits = net(torch.tensor(X_test))
    result.update(losses=losses, logits=numpy_of(logits), correct=accuracy(logits, torch.tensor(y_test)),
                  state={k: numpy_of(v) for k, v in net.state_dict().items()})
    return result


def test_lenet():
    ref, got = compare_program(d2l_cnn, name="lenet")
    assert ref["summary"][-1] == ("Linear", (1, 3)) and ref["summary"][2] == ("AvgPool2d", (1, 6, 14, 14))


def test_nin():
    ref, got = compare_program(d2l_cnn, name="nin", size=32)
    assert ref["summary"][-1] == ("Flatten", (1, 3))


def test_googlenet():
    ref, got = compare_program(d2l_cnn, name="googlenet", size=32)
    assert ref["summary"][2] == ("Sequential", (1, 60, 2, 2))  # 16 + 24 + 12 + 8 channels


def test_resnet():
    compare_program(d2l_cnn, name="resnet", size=32, lr=0.05)


def test_densenet():
    ref, got = compare_program(d2l_cnn, name="densenet", size=32, lr=0.05)
    assert ref["summary"][1] == ("DenseBlock", (1, 40, 8, 8))
