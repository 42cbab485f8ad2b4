"""Models written from scratch the way the d2l book writes them: synthetic linear-regression data
through torch.normal and matmul, a data_iter yielding index batches, sgd updating under no_grad
with param -= lr * param.grad / batch_size; softmax regression with its own softmax, cross-entropy
by fancy indexing y_hat[range(len(y_hat)), y] and an Accumulator of accuracy; batch norm written
out with torch.is_grad_enabled() and moving statistics; an RNN from scratch over F.one_hot(X.T)
with tanh(mm) cells and grad_clipping through p.grad[:] *= theta / norm; a masked softmax by
sequence_mask (X[~mask] = value, repeat_interleave of valid lengths), additive attention and a
sinusoidal positional encoding written into P[:, :, 0::2]."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_seq2seq import masked_softmax, models


class Accumulator:
    """d2l's Accumulator: sums over `n` variables (the book's other chapters import it too)."""

    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


def linear_and_softmax(torch, init=None, epochs=3, batch_size=10):
    rng = np.random.default_rng(0)
    result = {"own": {}}
    # synthetic_data: the library's own normals, compared by their statistics
    torch.manual_seed(0)
    true_w, true_b = torch.tensor([2, -3.4]), 4.2
    X = torch.normal(0, 1, (1000, len(true_w)))
    y = torch.matmul(X, true_w) + true_b
    y += torch.normal(0, 0.01, y.shape)
    result["own"]["synthetic"] = [numpy_of(X), numpy_of(y.reshape((-1, 1)))]
    features = torch.from_numpy(rng.standard_normal((100, 2)).astype(np.float32))
    labels = (torch.matmul(features, true_w) + true_b).reshape((-1, 1))

    def data_iter(batch_size, features, labels):
        num_examples = len(features)
        indices = list(range(num_examples))
        rng.shuffle(indices)
        for i in range(0, num_examples, batch_size):
            batch_indices = torch.tensor(indices[i: min(i + batch_size, num_examples)])
            yield features[batch_indices], labels[batch_indices]

    w = torch.from_numpy(rng.normal(0, 0.01, (2, 1)).astype(np.float32)).requires_grad_()
    b = torch.zeros(1, requires_grad=True)

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    lin_losses = []
    for epoch in range(epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = squared_loss(linreg(X, w, b), y)
            l.sum().backward()
            sgd([w, b], 0.03, batch_size)
        with torch.no_grad():
            train_l = squared_loss(linreg(features, w, b), labels)
            lin_losses.append(float(train_l.mean()))

    # softmax regression from scratch
    num_inputs, num_outputs = 12, 3
    W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
    with torch.no_grad():
        W.copy_(torch.from_numpy(rng.normal(0, 0.01, (num_inputs, num_outputs)).astype(np.float32)))
    B = torch.zeros(num_outputs, requires_grad=True)

    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    def net(X):
        return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + B)

    def cross_entropy(y_hat, y):
        return - torch.log(y_hat[range(len(y_hat)), y])

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    centers = rng.standard_normal((num_outputs, num_inputs)).astype(np.float32)
    yl = rng.integers(0, num_outputs, 60)
    Xs = torch.from_numpy(centers[yl] + rng.standard_normal((60, num_inputs)).astype(np.float32))
    ys = torch.from_numpy(yl)
    soft = []
    for epoch in range(epochs):
        metric = Accumulator(3)
        for i in range(0, 60, 20):
            X, y = Xs[i:i + 20], ys[i:i + 20]
            y_hat = net(X)
            l = cross_entropy(y_hat, y)
            l.sum().backward()
            sgd([W, B], 0.1, X.shape[0])
            metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
        soft.append([metric[0] / metric[2], metric[1] / metric[2]])
    result.update(lin_losses=lin_losses, w=numpy_of(w), b=numpy_of(b), soft=np.array(soft), W=numpy_of(W))
    return result


def batchnorm_and_rnn(torch, init=None, steps=4):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    rng = np.random.default_rng(1)

    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
        if not torch.is_grad_enabled():
            X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
        else:
            assert len(X.shape) in (2, 4)
            if len(X.shape) == 2:
                mean = X.mean(dim=0)
                var = ((X - mean) ** 2).mean(dim=0)
            else:
                mean = X.mean(dim=(0, 2, 3), keepdim=True)
                var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
            X_hat = (X - mean) / torch.sqrt(var + eps)
            moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
            moving_var = (1.0 - momentum) * moving_var + momentum * var
        Y = gamma * X_hat + beta
        return Y, moving_mean.data, moving_var.data

    class BatchNorm(nn.Module):
        def __init__(self, num_features, num_dims):
            super().__init__()
            shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
            self.gamma = nn.Parameter(torch.ones(shape))
            self.beta = nn.Parameter(torch.zeros(shape))
            self.moving_mean = torch.zeros(shape)
            self.moving_var = torch.ones(shape)

        def forward(self, X):
            if self.moving_mean.device != X.device:
                self.moving_mean = self.moving_mean.to(X.device)
                self.moving_var = self.moving_var.to(X.device)
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5, momentum=0.1)
            return Y

    net = nn.Sequential(nn.Conv2d(1, 4, kernel_size=3), BatchNorm(4, num_dims=4), nn.Sigmoid(),
                        nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
                        nn.Linear(4 * 3 * 3, 8), BatchNorm(8, num_dims=2), nn.Sigmoid(), nn.Linear(8, 2))

    def init_weights(m):
        if type(m) == nn.Linear or type(m) == nn.Conv2d:
            nn.init.xavier_uniform_(m.weight)

    net.apply(init_weights)
    result = {}
    start_from(torch, net, init, result)
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    loss = nn.CrossEntropyLoss(reduction="none")
    bn_losses = []
    for _ in range(steps):
        X = torch.from_numpy(rng.standard_normal((16, 1, 8, 8)).astype(np.float32))
        y = torch.from_numpy((rng.random(16) < 0.5).astype(np.int64))
        trainer.zero_grad()
        l = loss(net(X), y)
        l.mean().backward()
        trainer.step()
        bn_losses.append(l.mean().item())
    with torch.no_grad():
        bn_eval = net(torch.from_numpy(rng.standard_normal((4, 1, 8, 8)).astype(np.float32)))

    # RNN from scratch
    vocab_size, num_hiddens = 10, 16

    def get_params(vocab_size, num_hiddens):
        num_inputs = num_outputs = vocab_size

        def normal(shape):
            return torch.from_numpy(rng.standard_normal(shape).astype(np.float32)) * 0.01

        W_xh = normal((num_inputs, num_hiddens))
        W_hh = normal((num_hiddens, num_hiddens))
        b_h = torch.zeros(num_hiddens)
        W_hq = normal((num_hiddens, num_outputs))
        b_q = torch.zeros(num_outputs)
        params = [W_xh, W_hh, b_h, W_hq, b_q]
        for param in params:
            param.requires_grad_(True)
        return params

    def init_rnn_state(batch_size, num_hiddens):
        return (torch.zeros((batch_size, num_hiddens)),)

    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
            Y = torch.mm(H, W_hq) + b_q
            outputs.append(Y)
        return torch.cat(outputs, dim=0), (H,)

    class RNNModelScratch:
        def __init__(self, vocab_size, num_hiddens, get_params, init_state, forward_fn):
            self.vocab_size, self.num_hiddens = vocab_size, num_hiddens
            self.params = get_params(vocab_size, num_hiddens)
            self.init_state, self.forward_fn = init_state, forward_fn

        def __call__(self, X, state):
            X = F.one_hot(X.T, self.vocab_size).type(torch.float32)
            return self.forward_fn(X, state, self.params)

        def begin_state(self, batch_size):
            return self.init_state(batch_size, self.num_hiddens)

    def grad_clipping(net, theta):
        params = net.params
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm
        return float(norm)

    model = RNNModelScratch(vocab_size, num_hiddens, get_params, init_rnn_state, rnn)
    rnn_log = []
    state = None
    for _ in range(steps):
        X = torch.from_numpy(rng.integers(0, vocab_size, (4, 6)))
        Y = (X + 1) % vocab_size
        if state is None:
            state = model.begin_state(batch_size=X.shape[0])
        else:
            for s in state:
                s.detach_()
        y = Y.T.reshape(-1)
        y_hat, state = model(X, state)
        l = nn.CrossEntropyLoss()(y_hat, y.long()).mean()
        for param in model.params:
            param.grad = None
        l.backward()
        norm = grad_clipping(model, 1)
        with torch.no_grad():
            for param in model.params:
                param -= 1.0 * param.grad
        rnn_log.append([l.item(), norm, math.exp(l.item())])
    result.update(bn_losses=bn_losses, bn_eval=numpy_of(bn_eval), rnn_log=np.array(rnn_log),
                  moving=numpy_of(net[1].moving_var), rnn_params=[numpy_of(p) for p in model.params])
    return result


def attention(torch, init=None):
    torch.manual_seed(0)
    rng = np.random.default_rng(2)

    # the d2l classes, as the translation chapters use them too
    d2l = models(torch)
    AdditiveAttention, PositionalEncoding = d2l["AdditiveAttention"], d2l["PositionalEncoding"]

    queries = torch.from_numpy(rng.standard_normal((2, 1, 20)).astype(np.float32))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = torch.tensor([2, 6])
    attn = AdditiveAttention(num_hiddens=8, dropout=0.1)
    attn.eval()
    attn(queries, keys, values, valid_lens)  # materialises the lazy layers
    result = {}
    start_from(torch, attn, init, result)
    out = attn(queries, keys, values, valid_lens)
    out.sum().backward()
    masked = masked_softmax(torch, torch.from_numpy(rng.random((2, 2, 4)).astype(np.float32)),
                            torch.tensor([[1, 3], [2, 4]]))
    pe = PositionalEncoding(32, 0)
    pe.eval()
    encoded = pe(torch.zeros((1, 60, 32)))
    result.update(out=numpy_of(out), weights=numpy_of(attn.attention_weights), masked=numpy_of(masked),
                  grad=numpy_of(attn.W_q.weight.grad), encoded=numpy_of(encoded))
    return result


def test_linear_and_softmax_regression_from_scratch():
    ref, got = compare_program(linear_and_softmax)
    X, y = got["own"]["synthetic"]
    np.testing.assert_allclose(X.mean(0), 0, atol=0.12)
    np.testing.assert_allclose(np.linalg.lstsq(np.c_[X, np.ones(1000)], y, rcond=None)[0].ravel(), [2, -3.4, 4.2],
                               atol=1e-2)


def test_batchnorm_and_rnn_from_scratch():
    compare_program(batchnorm_and_rnn, rtol=1e-3, atol=1e-4)


def test_masked_softmax_additive_attention_positional_encoding():
    ref, got = compare_program(attention)
    assert (got["weights"][0, 0, 2:] < 1e-6).all()
