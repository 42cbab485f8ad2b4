"""Dive into Deep Learning's attention pooling by similarity (Nadaraya-Watson regression), both
editions as written. The first: sorted torch.rand training points, f(x) = 2 sin(x) + x**0.8 plus
torch.normal noise, the nonparametric pooling through repeat_interleave(...).reshape and softmax,
torch.bmm on unsqueezed weights, and the parametric NWKernelRegression (a learnable w drawn by
torch.rand((1,), requires_grad=True)) trained on leave-one-out keys picked by a boolean mask
(1 - torch.eye(n)).type(torch.bool), MSELoss(reduction='none') summed, SGD; then its predictions
and attention weights. The second: gaussian, boxcar, constant and epanechikov kernels on
pairwise distances, k.type(torch.float32) normalised by k.sum(0), y_train @ attention_w."""
import pytest

from prog_helpers import compare_program, numpy_of


def nadaraya_watson(torch, init=None, epochs=5):
    nn = torch.nn
    result = {}
    # the bmm warm-up
    X = torch.ones((2, 1, 4))
    Y = torch.ones((2, 4, 6))
    weights = torch.ones((2, 10)) * 0.1
    values = torch.arange(20.0).reshape((2, 10))
    result.update(bmm_shape=list(torch.bmm(X, Y).shape),
                  bmm=numpy_of(torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1))))

    torch.manual_seed(0)
    n_train = 50  # No. of training examples
    x_train, _ = torch.sort(torch.rand(n_train) * 5)  # Training inputs

    def f(x):
        return 2 * torch.sin(x) + x ** 0.8

    y_train = f(x_train) + torch.normal(0.0, 0.5, (n_train,))  # Training outputs
    x_test = torch.arange(0, 5, 0.1)  # Testing examples
    y_truth = f(x_test)  # Ground-truth outputs for the testing examples
    n_test = len(x_test)  # No. of testing examples
    y_hat_mean = torch.repeat_interleave(y_train.mean(), n_test)
    # Shape of `X_repeat`: (`n_test`, `n_train`), where each row contains the
    # same testing inputs (i.e., same queries)
    X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
    # Note that `x_train` contains the keys. Shape of `attention_weights`:
    # (`n_test`, `n_train`), where each row contains attention weights to be
    # assigned among the values (`y_train`) given each query
    attention_weights = nn.functional.softmax(-(X_repeat - x_train) ** 2 / 2, dim=1)
    # Each element of `y_hat` is weighted average of values, where weights are
    # attention weights
    y_hat = torch.matmul(attention_weights, y_train)
    result.update(x_train=numpy_of(x_train), y_train=numpy_of(y_train), y_truth=numpy_of(y_truth),
                  y_hat_mean=numpy_of(y_hat_mean), y_hat=numpy_of(y_hat), attention=numpy_of(attention_weights))

    class NWKernelRegression(nn.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = nn.Parameter(torch.rand((1,), requires_grad=True))

        def forward(self, queries, keys, values):
            # Shape of the output `queries` and `attention_weights`:
            # (no. of queries, no. of key-value pairs)
            queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
            self.attention_weights = nn.functional.softmax(-((queries - keys) * self.w) ** 2 / 2, dim=1)
            # Shape of `values`: (no. of queries, no. of key-value pairs)
            return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)

    # Shape of `X_tile`: (`n_train`, `n_train`), where each column contains the
    # same training inputs
    X_tile = x_train.repeat((n_train, 1))
    # Shape of `Y_tile`: (`n_train`, `n_train`), where each column contains the
    # same training outputs
    Y_tile = y_train.repeat((n_train, 1))
    # Shape of `keys`: ('n_train', 'n_train' - 1)
    keys = X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    # Shape of `values`: ('n_train', 'n_train' - 1)
    values = Y_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
    net = NWKernelRegression()
    loss = nn.MSELoss(reduction='none')
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    losses, ws = [], []
    for epoch in range(epochs):
        trainer.zero_grad()
        l = loss(net(x_train, keys, values), y_train)  # noqa: E741 (the book's name)
        l.sum().backward()
        trainer.step()
        losses.append(float(l.sum()))
        ws.append(net.w.item())
    # Shape of `keys`: (`n_test`, `n_train`), where each column contains the same
    # training inputs (i.e., same keys)
    keys = x_train.repeat((n_test, 1))
    # Shape of `value`: (`n_test`, `n_train`)
    values = y_train.repeat((n_test, 1))
    y_hat = net(x_test, keys, values).unsqueeze(1).detach()
    result.update(keys_shape=list(keys.shape), losses=losses, ws=ws, y_hat_param=numpy_of(y_hat),
                  attention_param=numpy_of(net.attention_weights.unsqueeze(0).unsqueeze(0)))

    # the second edition's kernels
    def gaussian(x):
        return torch.exp(-x ** 2 / 2)

    def boxcar(x):
        return torch.abs(x) < 1.0

    def constant(x):
        return 1.0 + 0 * x

    def epanechikov(x):
        return torch.max(1 - torch.abs(x), torch.zeros_like(x))

    def nadaraya_watson(x_train, y_train, x_val, kernel):
        dists = x_train.reshape((-1, 1)) - x_val.reshape((1, -1))
        # Each column/row corresponds to each query/key
        k = kernel(dists).type(torch.float32)
        # Normalization over keys for each query
        attention_w = k / k.sum(0)
        y_hat = y_train @ attention_w
        return y_hat, attention_w

    def f2(x):
        return 2 * torch.sin(x) + x

    n = 40
    x_train, _ = torch.sort(torch.rand(n) * 5)
    y_train = f2(x_train) + torch.randn(n)
    x_val = torch.arange(0, 5, 0.1)
    kernels = (gaussian, boxcar, constant, epanechikov)
    for kernel in kernels:
        y_hat, attention_w = nadaraya_watson(x_train, y_train, x_val, kernel)
        result[kernel.__name__] = (numpy_of(y_hat), numpy_of(attention_w))
    sigmas = (0.1, 0.2, 0.5, 1)
    for sigma in sigmas:
        y_hat, _ = nadaraya_watson(x_train, y_train, x_val, lambda x: torch.exp(-x ** 2 / (2 * sigma ** 2)))
        result[f"sigma{sigma}"] = numpy_of(y_hat)
    return result


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # float(l.sum()), as the book
def test_d2l_nadaraya_watson_attention_pooling():
    ref, got = compare_program(nadaraya_watson)
    assert ref["keys_shape"] == [50, 50]
    assert ref["losses"][-1] < ref["losses"][0]
    assert (got["boxcar"][1] >= 0).all()
