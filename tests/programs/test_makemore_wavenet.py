"""makemore part 5, the WaveNet: torch.nn-like layers written by hand (Linear with a
kaiming-scaled torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5 weight, BatchNorm1d
that reduces over dim=(0, 1) for 3-D inputs and updates running buffers under torch.no_grad(),
Tanh, Embedding, FlattenConsecutive through x.view(B, T//n, C*n) and squeeze(1), Sequential),
the last layer's weight scaled by 0.1 under no_grad, layer.training switched off for evaluation,
a loss curve reshaped by torch.tensor(lossi).view(-1, k).mean(1), and each layer's out shape."""
import numpy as np

from prog_helpers import compare_program, numpy_of


def wavenet(torch, init=None, steps=6, batch_size=16):
    F = torch.nn.functional
    rng = np.random.default_rng(0)

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.from_numpy(rng.standard_normal((fan_in, fan_out)).astype(np.float32)) / fan_in ** 0.5
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            if self.training:
                if x.ndim == 2:
                    dim = 0
                elif x.ndim == 3:
                    dim = (0, 1)
                xmean = x.mean(dim, keepdim=True)
                xvar = x.var(dim, keepdim=True)
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.from_numpy(rng.standard_normal((num_embeddings, embedding_dim)).astype(np.float32))

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    vocab_size, block_size, n_embd, n_hidden = 27, 8, 8, 32
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = model.parameters()
    for p in parameters:
        p.requires_grad = True
    result = {"nparams": sum(p.nelement() for p in parameters)}
    Xtr = torch.from_numpy(rng.integers(0, vocab_size, (100, block_size)))
    Ytr = torch.from_numpy(rng.integers(0, vocab_size, 100))
    lossi = []
    for i in range(steps):
        ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], batch_size))
        Xb, Yb = Xtr[ix], Ytr[ix]
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 4 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
    result["shapes"] = [(layer.__class__.__name__, tuple(layer.out.shape)) for layer in model.layers]
    result["curve"] = numpy_of(torch.tensor(lossi).view(-1, 2).mean(1))
    for layer in model.layers:
        layer.training = False

    @torch.no_grad()
    def split_loss(x, y):
        logits = model(x)
        return F.cross_entropy(logits, y).item()

    result["train"] = split_loss(Xtr, Ytr)
    result["running"] = [numpy_of(model.layers[3].running_mean), numpy_of(model.layers[3].running_var)]
    g = torch.Generator().manual_seed(2147483647 + 10)
    out, context = [], [0] * block_size
    for _ in range(10):
        logits = model(torch.tensor([context]))
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
    result["own"] = {"sample": out}
    result["params"] = [numpy_of(p) for p in parameters]
    return result


def test_makemore_wavenet_hand_written_layers():
    ref, got = compare_program(wavenet)
    assert ref["shapes"] == got["shapes"]
