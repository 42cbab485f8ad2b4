"""Dive into Deep Learning's convolution chapter and its GAN chapter as the PyTorch edition writes
them. Convolutions: corr2d by explicit loops writing Y[i, j], the Conv2D module with
nn.Parameter(torch.rand(kernel_size)), edge detection, a kernel learned by nn.LazyConv2d(1,
kernel_size=(1, 2), bias=False) through conv2d.weight.data[:] -= lr * conv2d.weight.grad,
comp_conv2d's X.reshape((1, 1) + X.shape) over paddings and strides, corr2d_multi_in(_out) through
sum() of a generator and torch.stack, the 1x1 convolution as a matmul, pool2d by loops and
nn.MaxPool2d/AvgPool2d with paddings and strides; LeNet of LazyConv2d/LazyLinear initialised by
apply_init (a forward, then net.apply(init_cnn) with xavier_uniform_), layer_summary, trained with
SGD and d2l.Classifier's accuracy (argmax(axis=1).type(Y.dtype)). The GAN: data by
torch.matmul(X, A) + b with an int64 b, load_array's TensorDataset/DataLoader, update_D/update_G
with BCEWithLogitsLoss(reduction='sum') on ones/zeros reshaped to the outputs, nn.init.normal_ on
every parameter, two Adams, the Accumulator of losses, net_G(Z).detach().numpy()."""
import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import build
from test_from_scratch import Accumulator


def convolutions(torch, init=None, epochs=4, batch_size=8):
    nn, F = torch.nn, torch.nn.functional
    result = {}

    def corr2d(X, K):
        """Compute 2D cross-correlation."""
        h, w = K.shape
        Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
        for i in range(Y.shape[0]):
            for j in range(Y.shape[1]):
                Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
        return Y

    X = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    K = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    result["corr2d"] = numpy_of(corr2d(X, K))

    class Conv2D(nn.Module):
        def __init__(self, kernel_size):
            super().__init__()
            self.weight = nn.Parameter(torch.rand(kernel_size))
            self.bias = nn.Parameter(torch.zeros(1))

        def forward(self, x):
            return corr2d(x, self.weight) + self.bias

    torch.manual_seed(0)
    own = Conv2D((1, 2))
    X = torch.ones((6, 8))
    X[:, 2:6] = 0
    K = torch.tensor([[1.0, -1.0]])
    Y = corr2d(X, K)
    result.update(edges=numpy_of(Y), edges_t=numpy_of(corr2d(X.t(), K)), own_conv=numpy_of(own(X)))
    # Construct a two-dimensional convolutional layer with 1 output channel and a
    # kernel of shape (1, 2). For the sake of simplicity, we ignore the bias here
    conv2d = nn.LazyConv2d(1, kernel_size=(1, 2), bias=False)
    # The two-dimensional convolutional layer uses four-dimensional input and
    # output in the format of (example, channel, height, width), where the batch
    # size (number of examples in the batch) and the number of channels are both 1
    X = X.reshape((1, 1, 6, 8))
    Y = Y.reshape((1, 1, 6, 7))
    lr = 3e-2  # Learning rate
    conv2d(X)
    start_from(torch, {"conv2d": conv2d}, init and init["conv2d"], result.setdefault("conv2d", {}))
    log = io.StringIO()
    with redirect_stdout(log):
        for i in range(10):
            Y_hat = conv2d(X)
            l = (Y_hat - Y) ** 2  # noqa: E741 (the book's name)
            conv2d.zero_grad()
            l.sum().backward()
            # Update the kernel
            conv2d.weight.data[:] -= lr * conv2d.weight.grad
            if (i + 1) % 2 == 0:
                print(f'epoch {i + 1}, loss {l.sum():.3f}')
    result.update(learned=numpy_of(conv2d.weight.data.reshape((1, 2))), log=log.getvalue())

    def comp_conv2d(conv2d, X):
        X = X.reshape((1, 1) + X.shape)
        Y = conv2d(X)
        # Strip the first two dimensions: examples and channels
        return Y.reshape(Y.shape[2:])

    X = torch.rand(size=(8, 8))
    result["padded"] = [list(comp_conv2d(c, X).shape) for c in (
        nn.LazyConv2d(1, kernel_size=3, padding=1), nn.LazyConv2d(1, kernel_size=(5, 3), padding=(2, 1)),
        nn.LazyConv2d(1, kernel_size=3, padding=1, stride=2),
        nn.LazyConv2d(1, kernel_size=(3, 5), padding=(0, 1), stride=(3, 4)))]

    def corr2d_multi_in(X, K):
        # Iterate through the 0th dimension (channel) of K first, then add them up
        return sum(corr2d(x, k) for x, k in zip(X, K))

    def corr2d_multi_in_out(X, K):
        # Iterate through the 0th dimension of K, and each time, perform
        # cross-correlation operations with input X. All of the results are
        # stacked together
        return torch.stack([corr2d_multi_in(X, k) for k in K], 0)

    def corr2d_multi_in_out_1x1(X, K):
        c_i, h, w = X.shape
        c_o = K.shape[0]
        X = X.reshape((c_i, h * w))
        K = K.reshape((c_o, c_i))
        # Matrix multiplication in the fully connected layer
        Y = torch.matmul(K, X)
        return Y.reshape((c_o, h, w))

    X = torch.tensor([[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
                      [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
    K = torch.tensor([[[0.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]])
    result["multi_in"] = numpy_of(corr2d_multi_in(X, K))
    K = torch.stack((K, K + 1, K + 2), 0)
    result["multi_in_out"] = numpy_of(corr2d_multi_in_out(X, K))
    X = torch.normal(0, 1, (3, 3, 3))
    K = torch.normal(0, 1, (2, 3, 1, 1))
    Y1 = corr2d_multi_in_out_1x1(X, K)
    Y2 = corr2d_multi_in_out(X, K)
    assert float(torch.abs(Y1 - Y2).sum()) < 1e-6
    result["one_by_one"] = numpy_of(Y1)

    def pool2d(X, pool_size, mode='max'):
        p_h, p_w = pool_size
        Y = torch.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
        for i in range(Y.shape[0]):
            for j in range(Y.shape[1]):
                if mode == 'max':
                    Y[i, j] = X[i: i + p_h, j: j + p_w].max()
                elif mode == 'avg':
                    Y[i, j] = X[i: i + p_h, j: j + p_w].mean()
        return Y

    X = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    result.update(pool_max=numpy_of(pool2d(X, (2, 2))), pool_avg=numpy_of(pool2d(X, (2, 2), 'avg')))
    X = torch.arange(16, dtype=torch.float32).reshape((1, 1, 4, 4))
    X2 = torch.cat((X, X + 1), 1)
    result["pools"] = [numpy_of(p(x)) for p, x in (
        (nn.MaxPool2d(3), X), (nn.MaxPool2d(3, padding=1, stride=2), X),
        (nn.MaxPool2d((2, 3), stride=(2, 3), padding=(0, 1)), X), (nn.MaxPool2d(3, padding=1, stride=2), X2),
        (nn.AvgPool2d((2, 3), stride=(2, 3), padding=(0, 1)), X2))]

    # LeNet
    def init_cnn(module):
        """Initialize weights for CNNs."""
        if type(module) == nn.Linear or type(module) == nn.Conv2d:
            nn.init.xavier_uniform_(module.weight)

    class LeNet(nn.Module):
        """The LeNet-5 model."""

        def __init__(self, lr=0.1):
            super().__init__()
            self.lr = lr
            self.net = build(torch, "lenet")  # the book's LeNet-5 Sequential, 3 classes

        def forward(self, X):
            return self.net(X)

        def apply_init(self, inputs, init=None):
            self.forward(*inputs)
            if init is not None:
                self.net.apply(init)

        def layer_summary(self, X_shape):
            X = torch.randn(*X_shape)
            for layer in self.net:
                X = layer(X)
                print(layer.__class__.__name__, 'output shape:\t', tuple(X.shape))

        def loss(self, Y_hat, Y, averaged=True):
            Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
            Y = Y.reshape((-1,))
            return F.cross_entropy(Y_hat, Y, reduction='mean' if averaged else 'none')

        def accuracy(self, Y_hat, Y, averaged=True):
            """Compute the number of correct predictions."""
            Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
            preds = Y_hat.argmax(axis=1).type(Y.dtype)
            compare = (preds == Y.reshape(-1)).type(torch.float32)
            return compare.mean() if averaged else compare

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), self.lr)

    rng = np.random.default_rng(0)
    images = rng.random((32, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 3, 32)
    images[np.arange(32), 0, labels * 2, :] += 2.0  # a class-dependent stripe to learn
    data = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    torch.manual_seed(0)
    train_loader = torch.utils.data.DataLoader(data, batch_size, shuffle=True)
    model = LeNet(lr=0.9)
    model.apply_init([next(iter(train_loader))[0]], init_cnn)
    start_from(torch, model, init and init["lenet"], result.setdefault("lenet", {}))
    summary = io.StringIO()
    with redirect_stdout(summary):
        model.layer_summary((1, 1, 28, 28))
    optim = model.configure_optimizers()
    losses, accs = [], []
    for epoch in range(epochs):
        model.train()
        for X, Y in train_loader:
            loss = model.loss(model(X), Y)
            optim.zero_grad()
            with torch.no_grad():  # d2l.Trainer.fit_epoch's order
                loss.backward()
                optim.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            accs.append(float(model.accuracy(model(torch.from_numpy(images)), torch.from_numpy(labels))))
    result.update(summary=summary.getvalue(), losses=losses, accs=accs,
                  n_params=sum(p.numel() for p in model.parameters()))
    return result


def gan(torch, init=None, num_epochs=4):
    nn = torch.nn
    torch.manual_seed(0)
    X = torch.normal(0.0, 1, (64, 2))
    A = torch.tensor([[1, 2], [-0.1, 0.5]])
    b = torch.tensor([1, 2])
    data = torch.matmul(X, A) + b
    batch_size = 8

    def load_array(data_arrays, batch_size, is_train=True):
        """Construct a PyTorch data iterator."""
        dataset = torch.utils.data.TensorDataset(*data_arrays)
        return torch.utils.data.DataLoader(dataset, batch_size, shuffle=is_train)

    data_iter = load_array((data,), batch_size)
    net_G = nn.Sequential(nn.Linear(2, 2))
    net_D = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 3), nn.Tanh(), nn.Linear(3, 1))

    def update_D(X, Z, net_D, net_G, loss, trainer_D):
        """Update discriminator."""
        batch_size = X.shape[0]
        ones = torch.ones((batch_size,), device=X.device)
        zeros = torch.zeros((batch_size,), device=X.device)
        trainer_D.zero_grad()
        real_Y = net_D(X)
        fake_X = net_G(Z)
        # Do not need to compute gradient for `net_G`, detach it from
        # computing gradients.
        fake_Y = net_D(fake_X.detach())
        loss_D = (loss(real_Y, ones.reshape(real_Y.shape)) + loss(fake_Y, zeros.reshape(fake_Y.shape))) / 2
        loss_D.backward()
        trainer_D.step()
        return loss_D

    def update_G(Z, net_D, net_G, loss, trainer_G):
        """Update generator."""
        batch_size = Z.shape[0]
        ones = torch.ones((batch_size,), device=Z.device)
        trainer_G.zero_grad()
        # We could reuse `fake_X` from `update_D` to save computation
        fake_X = net_G(Z)
        # Recomputing `fake_Y` is needed since `net_D` is changed
        fake_Y = net_D(fake_X)
        loss_G = loss(fake_Y, ones.reshape(fake_Y.shape))
        loss_G.backward()
        trainer_G.step()
        return loss_G

    result = {"data": numpy_of(data), "dtype": str(data.dtype).split(".")[1]}

    def train(net_D, net_G, data_iter, num_epochs, lr_D, lr_G, latent_dim, data):
        loss = nn.BCEWithLogitsLoss(reduction='sum')
        for w in net_D.parameters():
            nn.init.normal_(w, 0, 0.02)
        for w in net_G.parameters():
            nn.init.normal_(w, 0, 0.02)
        start_from(torch, {"D": net_D, "G": net_G}, init, result)
        trainer_D = torch.optim.Adam(net_D.parameters(), lr=lr_D)
        trainer_G = torch.optim.Adam(net_G.parameters(), lr=lr_G)
        losses, fakes = [], []
        for epoch in range(num_epochs):
            # Train one epoch
            metric = Accumulator(3)  # loss_D, loss_G, num_examples
            for (X,) in data_iter:
                batch_size = X.shape[0]
                Z = torch.normal(0, 1, size=(batch_size, latent_dim))
                metric.add(update_D(X, Z, net_D, net_G, loss, trainer_D),
                           update_G(Z, net_D, net_G, loss, trainer_G), batch_size)
            # Visualize generated examples
            Z = torch.normal(0, 1, size=(100, latent_dim))
            fake_X = net_G(Z).detach().numpy()
            # Show the losses
            loss_D, loss_G = metric[0] / metric[2], metric[1] / metric[2]
            losses.append((loss_D, loss_G))
            fakes.append(fake_X)
        return np.array(losses), fakes

    lr_D, lr_G, latent_dim = 0.05, 0.005, 2
    losses, fakes = train(net_D, net_G, data_iter, num_epochs, lr_D, lr_G, latent_dim, data[:100].detach().numpy())
    result.update(losses=losses, fakes=fakes, G=numpy_of(net_G[0].weight))
    return result


def test_d2l_convolutions_pooling_lenet():
    ref, got = compare_program(convolutions)
    np.testing.assert_allclose(got["learned"], [[1.0, -1.0]], atol=0.1)
    assert got["padded"] == [[8, 8], [8, 8], [4, 4], [2, 2]]
    assert "Flatten output shape:\t (1, 400)" in got["summary"]
    assert ref["losses"][-1] < ref["losses"][0]


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # float(loss_D), as the book
def test_d2l_gan_gaussian():
    ref, got = compare_program(gan)
    assert got["dtype"] == "float32"
