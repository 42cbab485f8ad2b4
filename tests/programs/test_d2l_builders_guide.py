"""The d2l book's (1.0 edition) "Builders' Guide" chapter and two natural-language sections not
covered elsewhere, as written. Builders' Guide: nn.Sequential of LazyLinear layers, the MLP,
MySequential (add_module(str(idx), module), self.children()), FixedHiddenMLP (a constant
torch.rand weight, a while loop on X.abs().sum() with X /= 2), NestMLP and the chimera; parameter
access (net[2].state_dict(), type(net[2].bias), net[2].weight.grad == None, named_parameters,
a shared layer whose weight.data[0, 0] = 100 shows in both places); initialisation by
net.apply with type(module) == nn.Linear (a materialised LazyLinear is an nn.Linear), normal_,
zeros_, constant_, xavier_uniform_, my_init printing named_parameters and masking
weight.data *= weight.data.abs() >= 5, weight.data[:] += 1; lazy initialisation (an
UninitializedParameter before the first call, apply_init); custom layers (CenteredLayer,
MyLinear of nn.Parameter(torch.randn(...)) using self.weight.data); file I/O (torch.save of a
tensor, a list and a dict, an MLP's state_dict loaded into a fresh lazy clone, Y_clone == Y).
"Sentiment Analysis: Using Recurrent Neural Networks": BiRNN (nn.LSTM(bidirectional=True) over
inputs.T, flatten_parameters(), torch.cat((outputs[0], outputs[-1]), dim=1)), init_weights over
module._flat_weights_names and module._parameters[param], GloVe vectors from TokenEmbedding,
frozen embedding, train_ch13 and predict_sentiment. "Word Similarity and Analogy": TokenEmbedding
reading a GloVe-format text file (written here in place of the download), idx_to_vec indexed by
torch.tensor(indices), knn by torch.mv cosine and torch.topk, get_similar_tokens, get_analogy. And the
Preliminaries chapter (data manipulation with id(Y) checks of in-place Z[:] = X + Y and X += Y,
NumPy conversion, item/float/int; linear algebra with sum(axis=[0, 1]), keepdims, cumsum, dot, mv,
mm, norm; automatic differentiation with grad.zero_(), backward(gradient=...), detach and a
Python-control-flow function; probability with Multinomial(...).sample((10000,)) and cumsum
estimates), "Numerical Stability and Initialization" (sigmoid gradients over torch.arange(-8.0, 8.0,
0.1, requires_grad=True), a product of 100 torch.normal matrices) and the from-scratch relu,
softmax and cross_entropy by y_hat[list(range(len(y_hat))), y]."""
import os

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines, start_from
from test_d2l_nlp_applications import NEGATIVE, POSITIVE, Vocab, d2l_helpers, truncate_pad


def builders_guide(torch, init=None, tmp=None):
    nn, F = torch.nn, torch.nn.functional
    result = {}
    torch.manual_seed(0)
    with captured_run(torch) as out:
        # Layers and Modules
        net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
        X = torch.rand(2, 20)
        print(net(X).shape)

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.LazyLinear(256)
                self.out = nn.LazyLinear(10)

            def forward(self, X):
                return self.out(F.relu(self.hidden(X)))

        net = MLP()
        print(net(X).shape)

        class MySequential(nn.Module):
            def __init__(self, *args):
                super().__init__()
                for idx, module in enumerate(args):
                    self.add_module(str(idx), module)

            def forward(self, X):
                for module in self.children():
                    X = module(X)
                return X

        net = MySequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
        print(net(X).shape)

        class FixedHiddenMLP(nn.Module):
            def __init__(self):
                super().__init__()
                # Random weight parameters that will not compute gradients and
                # therefore keep constant during training
                self.rand_weight = torch.rand((20, 20))
                self.linear = nn.LazyLinear(20)

            def forward(self, X):
                X = self.linear(X)
                X = F.relu(X @ self.rand_weight + 1)
                # Reuse the fully connected layer. This is equivalent to sharing
                # parameters with two fully connected layers
                X = self.linear(X)
                # Control flow
                while X.abs().sum() > 1:
                    X /= 2
                return X.sum()

        net = FixedHiddenMLP()
        print(net(X))

        class NestMLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.LazyLinear(64), nn.ReLU(), nn.LazyLinear(32), nn.ReLU())
                self.linear = nn.LazyLinear(16)

            def forward(self, X):
                return self.linear(self.net(X))

        chimera = nn.Sequential(NestMLP(), nn.LazyLinear(20), FixedHiddenMLP())
        print(chimera(X))

        # Parameter Management
        net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
        X = torch.rand(size=(2, 4))
        print(net(X).shape)
        print(net[2].state_dict())
        print(type(net[2].bias), net[2].bias.data)
        print(net[2].weight.grad == None)  # noqa: E711 - as the book writes it
        print([(name, param.shape) for name, param in net.named_parameters()])
        shared = nn.LazyLinear(8)
        net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(), nn.LazyLinear(1))
        net(X)
        print(net[2].weight.data[0] == net[4].weight.data[0])
        net[2].weight.data[0, 0] = 100
        print(net[2].weight.data[0] == net[4].weight.data[0])

        # Parameter Initialization
        net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
        X = torch.rand(size=(2, 4))
        print(net(X).shape)

        def init_normal(module):
            if type(module) == nn.Linear:
                nn.init.normal_(module.weight, mean=0, std=0.01)
                nn.init.zeros_(module.bias)

        net.apply(init_normal)
        print(net[0].weight.data[0], net[0].bias.data[0])

        def init_constant(module):
            if type(module) == nn.Linear:
                nn.init.constant_(module.weight, 1)
                nn.init.zeros_(module.bias)

        net.apply(init_constant)
        print(net[0].weight.data[0], net[0].bias.data[0])

        def init_xavier(module):
            if type(module) == nn.Linear:
                nn.init.xavier_uniform_(module.weight)

        def init_42(module):
            if type(module) == nn.Linear:
                nn.init.constant_(module.weight, 42)

        net[0].apply(init_xavier)
        net[2].apply(init_42)
        print(net[0].weight.data[0])
        print(net[2].weight.data)

        def my_init(module):
            if type(module) == nn.Linear:
                print("Init", *[(name, param.shape) for name, param in module.named_parameters()][0])
                nn.init.uniform_(module.weight, -10, 10)
                module.weight.data *= module.weight.data.abs() >= 5

        net.apply(my_init)
        print(net[0].weight[:2])
        net[0].weight.data[:] += 1
        net[0].weight.data[0, 0] = 42
        print(net[0].weight.data[0])

        # Lazy Initialization
        net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
        print(net[0].weight)
        X = torch.rand(2, 20)
        net(X)
        print(net[0].weight.shape)

        def apply_init(self, inputs, init=None):
            self.forward(*inputs)
            if init is not None:
                self.net.apply(init)

        class Holder(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))

            def forward(self, X):
                return self.net(X)

        Holder.apply_init = apply_init
        holder = Holder()
        holder.apply_init([torch.rand(3, 5)], init_constant)
        print(holder(torch.ones(1, 5)))

        # Custom Layers
        class CenteredLayer(nn.Module):
            def __init__(self):
                super().__init__()

            def forward(self, X):
                return X - X.mean()

        layer = CenteredLayer()
        print(layer(torch.tensor([1.0, 2, 3, 4, 5])))
        net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
        Y = net(torch.rand(4, 8))
        print(abs(Y.mean().item()) < 1e-6)

        class MyLinear(nn.Module):
            def __init__(self, in_units, units):
                super().__init__()
                self.weight = nn.Parameter(torch.randn(in_units, units))
                self.bias = nn.Parameter(torch.randn(units,))

            def forward(self, X):
                linear = torch.matmul(X, self.weight.data) + self.bias.data
                return F.relu(linear)

        linear = MyLinear(5, 3)
        print(linear.weight)
        print(linear(torch.rand(2, 5)))
        net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
        print(net(torch.rand(2, 64)))

        # File I/O
        x = torch.arange(4)
        torch.save(x, os.path.join(tmp, 'x-file'))
        x2 = torch.load(os.path.join(tmp, 'x-file'))
        print(x2)
        y = torch.zeros(4)
        torch.save([x, y], os.path.join(tmp, 'x-files'))
        x2, y2 = torch.load(os.path.join(tmp, 'x-files'))
        print((x2, y2))
        mydict = {'x': x, 'y': y}
        torch.save(mydict, os.path.join(tmp, 'mydict'))
        mydict2 = torch.load(os.path.join(tmp, 'mydict'))
        print(mydict2)

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = nn.LazyLinear(256)
                self.output = nn.LazyLinear(10)

            def forward(self, x):
                return self.output(F.relu(self.hidden(x)))

        net = MLP()
        X = torch.randn(size=(2, 20))
        Y = net(X)
        torch.save(net.state_dict(), os.path.join(tmp, 'mlp.params'))
        clone = MLP()
        clone.load_state_dict(torch.load(os.path.join(tmp, 'mlp.params')))
        print(clone.eval())
        Y_clone = clone(X)
        print(Y_clone == Y)
        print(type(clone.hidden).__name__, clone.hidden.weight.shape)
    result["printed"] = printed_lines(out)
    return result


def sentiment_birnn(torch, init=None):
    nn = torch.nn
    data = torch.utils.data
    try_all_gpus, train_ch13 = d2l_helpers(torch)
    torch.manual_seed(0)

    def load_data_imdb(batch_size, num_steps=500):
        train_data = [POSITIVE[:4] + NEGATIVE[:4], [1] * 4 + [0] * 4]
        test_data = [POSITIVE[4:] + NEGATIVE[4:], [1] * 2 + [0] * 2]
        train_tokens = [line.split() for line in train_data[0]]
        test_tokens = [line.split() for line in test_data[0]]
        vocab = Vocab(train_tokens, min_freq=1, reserved_tokens=['<pad>'])
        train_features = torch.tensor([truncate_pad(vocab[line], num_steps, vocab['<pad>'])
                                       for line in train_tokens])
        test_features = torch.tensor([truncate_pad(vocab[line], num_steps, vocab['<pad>'])
                                      for line in test_tokens])
        train_iter = data.DataLoader(data.TensorDataset(train_features, torch.tensor(train_data[1])),
                                     batch_size, shuffle=True)
        test_iter = data.DataLoader(data.TensorDataset(test_features, torch.tensor(test_data[1])),
                                    batch_size, shuffle=False)
        return train_iter, test_iter, vocab

    batch_size = 4
    train_iter, test_iter, vocab = load_data_imdb(batch_size, num_steps=10)

    class BiRNN(nn.Module):
        def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, **kwargs):
            super(BiRNN, self).__init__(**kwargs)
            self.embedding = nn.Embedding(vocab_size, embed_size)
            # Set `bidirectional` to True to get a bidirectional RNN
            self.encoder = nn.LSTM(embed_size, num_hiddens, num_layers=num_layers, bidirectional=True)
            self.decoder = nn.Linear(4 * num_hiddens, 2)

        def forward(self, inputs):
            # The shape of `inputs` is (batch size, no. of time steps). Because
            # LSTM requires its input's first dimension to be the temporal
            # dimension, the input is transposed before obtaining token
            # representations. The output shape is (no. of time steps, batch
            # size, word vector dimension)
            embeddings = self.embedding(inputs.T)
            self.encoder.flatten_parameters()
            # Returns hidden states of the last hidden layer at different time
            # steps. The shape of `outputs` is (no. of time steps, batch size,
            # 2 * no. of hidden units)
            outputs, _ = self.encoder(embeddings)
            # Concatenate the hidden states at the initial and final time steps as
            # the input of the fully connected layer. Its shape is (batch size,
            # 4 * no. of hidden units)
            encoding = torch.cat((outputs[0], outputs[-1]), dim=1)
            outs = self.decoder(encoding)
            return outs

    embed_size, num_hiddens, num_layers, devices = 16, 12, 2, try_all_gpus()
    net = BiRNN(len(vocab), embed_size, num_hiddens, num_layers)

    def init_weights(module):
        if type(module) == nn.Linear:
            nn.init.xavier_uniform_(module.weight)
        if type(module) == nn.LSTM:
            for param in module._flat_weights_names:
                if "weight" in param:
                    nn.init.xavier_uniform_(module._parameters[param])

    net.apply(init_weights)
    result = {"names": list(net.encoder._flat_weights_names)}
    start_from(torch, net, init, result)
    glove_embedding = TokenEmbedding(torch, glove_file(vocab.idx_to_token, 16))
    embeds = glove_embedding[vocab.idx_to_token]
    result["embeds_shape"] = list(embeds.shape)
    net.embedding.weight.data.copy_(embeds)
    net.embedding.weight.requires_grad = False

    lr, num_epochs = 0.01, 3
    trainer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = nn.CrossEntropyLoss(reduction="none")
    history, num_batches = train_ch13(net, train_iter, test_iter, loss, trainer, num_epochs, devices)

    def predict_sentiment(net, vocab, sequence):
        """Predict the sentiment of a text sequence."""
        sequence = torch.tensor(vocab[sequence.split()], device=try_all_gpus()[0])
        label = torch.argmax(net(sequence.reshape(1, -1)), dim=1)
        return 'positive' if label == 1 else 'negative'

    net.eval()
    result.update(history=history, batches=num_batches,
                  predictions=[predict_sentiment(net, vocab, s) for s in ("this movie is so great",
                                                                           "this movie is so bad")],
                  state={k: numpy_of(v) for k, v in net.state_dict().items()})
    return result


GLOVE_WORDS = ["the", "a", "great", "movie", "film", "story", "bad", "good", "man", "woman", "king", "queen",
               "son", "daughter", "beijing", "china", "tokyo", "japan", "chip", "chips", "baby", "babies",
               "do", "did", "go", "went", "bad", "worse", "big", "biggest"]


def glove_file(tokens, dim, path=[]):
    """A glove.6b-format text file ("word v1 v2 ...", one a line) for tokens and GLOVE_WORDS; its path."""
    import tempfile
    rng = np.random.default_rng(5)
    words = list(dict.fromkeys([t for t in tokens if t not in ("<unk>", "<pad>")] + GLOVE_WORDS))
    vecs = rng.normal(0, 1, (len(words), dim)).round(5)
    idx = {w: k for k, w in enumerate(words)}
    # analogies hold approximately, as they do in GloVe
    for a, b, c, d in [("man", "woman", "son", "daughter"), ("beijing", "china", "tokyo", "japan"),
                       ("bad", "worse", "big", "biggest"), ("do", "did", "go", "went")]:
        vecs[idx[d]] = (vecs[idx[b]] - vecs[idx[a]] + vecs[idx[c]] + rng.normal(0, 0.05, dim)).round(5)
    fd, name = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w") as f:
        for w, v in zip(words, vecs):
            f.write(w + " " + " ".join(f"{x:.5f}" for x in v) + "\n")
    return name


def TokenEmbedding(torch, embedding_file):
    class TokenEmbedding:
        """Token Embedding."""
        def __init__(self, embedding_name):
            self.idx_to_token, self.idx_to_vec = self._load_embedding(embedding_name)
            self.unknown_idx = 0
            self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

        def _load_embedding(self, embedding_name):
            idx_to_token, idx_to_vec = ['<unk>'], []
            # the book reads os.path.join(d2l.download_extract(embedding_name), 'vec.txt')
            with open(embedding_name, 'r') as f:
                for line in f:
                    elems = line.rstrip().split(' ')
                    token, elems = elems[0], [float(elem) for elem in elems[1:]]
                    # Skip header information, such as the top row in fastText
                    if len(elems) > 1:
                        idx_to_token.append(token)
                        idx_to_vec.append(elems)
            idx_to_vec = [[0] * len(idx_to_vec[0])] + idx_to_vec
            return idx_to_token, torch.tensor(idx_to_vec)

        def __getitem__(self, tokens):
            indices = [self.token_to_idx.get(token, self.unknown_idx) for token in tokens]
            vecs = self.idx_to_vec[torch.tensor(indices)]
            return vecs

        def __len__(self):
            return len(self.idx_to_token)

    try:
        return TokenEmbedding(embedding_file)
    finally:
        os.unlink(embedding_file)


def similarity_analogy(torch, init=None):
    glove_6b50d = TokenEmbedding(torch, glove_file([], 50))
    result = {"len": len(glove_6b50d), "beautiful": glove_6b50d.token_to_idx.get("the"),
              "token": glove_6b50d.idx_to_token[3]}

    def knn(W, x, k):
        # Add 1e-9 for numerical stability
        cos = torch.mv(W, x.reshape(-1,)) / (
            torch.sqrt(torch.sum(W * W, axis=1) + 1e-9) *
            torch.sqrt((x * x).sum()))
        _, topk = torch.topk(cos, k=k)
        return topk, [cos[int(i)] for i in topk]

    def get_similar_tokens(query_token, k, embed):
        topk, cos = knn(embed.idx_to_vec, embed[[query_token]], k + 1)
        lines = []
        for i, c in zip(topk[1:], cos[1:]):  # Exclude the input word
            lines.append(f'cosine sim={float(c):.3f}: {embed.idx_to_token[int(i)]}')
        return lines

    def get_analogy(token_a, token_b, token_c, embed):
        vecs = embed[[token_a, token_b, token_c]]
        x = vecs[1] - vecs[0] + vecs[2]
        topk, cos = knn(embed.idx_to_vec, x, 1)
        return embed.idx_to_token[int(topk[0])]  # Remove unknown words

    result["similar"] = [get_similar_tokens(t, 3, glove_6b50d) for t in ("chip", "baby", "king")]
    result["analogies"] = [get_analogy("man", "woman", "son", glove_6b50d),
                           get_analogy("beijing", "china", "tokyo", glove_6b50d),
                           get_analogy("bad", "worse", "big", glove_6b50d),
                           get_analogy("do", "did", "go", glove_6b50d)]
    assert result["analogies"] == ["daughter", "japan", "biggest", "went"]
    return result


def preliminaries(torch, init=None):
    """The Preliminaries chapter and the numerical-stability and from-scratch sections, as printed."""
    import random
    from importlib import import_module
    Multinomial = import_module(torch.__name__ + ".distributions.multinomial").Multinomial
    random.seed(0)
    with captured_run(torch) as out:
        # ndarray
        x = torch.arange(12, dtype=torch.float32)
        print(x, x.numel(), x.shape)
        X = x.reshape(3, 4); print(X, x.reshape(-1, 4).shape)
        print(torch.zeros((2, 3, 4)).shape, torch.ones((2, 3, 4)).sum())
        print(torch.randn(3, 4).shape)
        print(torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]]))
        print(X[-1], X[1:3]); X[1, 2] = 17; print(X); X[:2, :] = 12; print(X)
        print(torch.exp(x))
        x = torch.tensor([1.0, 2, 4, 8]); y = torch.tensor([2, 2, 2, 2])
        print(x + y, x - y, x * y, x / y, x ** y)
        X = torch.arange(12, dtype=torch.float32).reshape((3,4))
        Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
        print(torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1))
        print(X == Y, X.sum())
        a = torch.arange(3).reshape((3, 1)); b = torch.arange(2).reshape((1, 2)); print(a, b, a + b)
        before = id(Y); Y = Y + X; print(id(Y) == before)
        Z = torch.zeros_like(Y); print('id(Z):', id(Z) == id(Z)); idz = id(Z); Z[:] = X + Y; print(id(Z) == idz)
        before = id(X); X += Y; print(id(X) == before)
        A = X.numpy(); B = torch.from_numpy(A); print(type(A).__name__, type(B).__name__.replace('minitorch','torch'))
        a = torch.tensor([3.5]); print(a, a.item(), float(a), int(a))
        # linear algebra
        x = torch.tensor(3.0); y = torch.tensor(2.0); print(x + y, x * y, x / y, x**y)
        x = torch.arange(3); print(x, x[2], len(x), x.shape)
        A = torch.arange(6).reshape(3, 2); print(A, A.T)
        A = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]]); print(A == A.T)
        print(torch.arange(24).reshape(2, 3, 4))
        A = torch.arange(6, dtype=torch.float32).reshape(2, 3); B = A.clone(); print(A, A + B, A * B)
        a = 2; X = torch.arange(24).reshape(2, 3, 4); print(a + X, (a * X).shape)
        x = torch.arange(3, dtype=torch.float32); print(x, x.sum())
        print(A.shape, A.sum(), A.sum(axis=0).shape, A.sum(axis=1).shape, A.sum(axis=[0, 1]) == A.sum())
        print(A.mean(), A.sum() / A.numel(), A.mean(axis=0), A.sum(axis=0) / A.shape[0])
        sum_A = A.sum(axis=1, keepdims=True); print(sum_A, sum_A.shape, A / sum_A, A.cumsum(axis=0))
        y = torch.ones(3, dtype = torch.float32); print(x, y, torch.dot(x, y), torch.sum(x * y))
        print(A.shape, x.shape, torch.mv(A, x), A@x)
        B = torch.ones(3, 4); print(torch.mm(A, B), A@B)
        u = torch.tensor([3.0, -4.0]); print(torch.norm(u), torch.abs(u).sum(), torch.norm(torch.ones((4, 9))))
        # autograd
        x = torch.arange(4.0); x.requires_grad_(True); print(x.grad)
        y = 2 * torch.dot(x, x); print(y); y.backward(); print(x.grad, x.grad == 4 * x)
        x.grad.zero_(); y = x.sum(); y.backward(); print(x.grad)
        x.grad.zero_(); y = x * x; y.backward(gradient=torch.ones(len(y))); print(x.grad)
        x.grad.zero_(); y = x * x; u = y.detach(); z = u * x; z.sum().backward(); print(x.grad == u)
        x.grad.zero_(); y.sum().backward(); print(x.grad == 2 * x)
        def f(a):
            b = a * 2
            while b.norm() < 1000:
                b = b * 2
            if b.sum() > 0:
                c = b
            else:
                c = 100 * b
            return c
        a = torch.randn(size=(), requires_grad=True); d = f(a); d.backward(); print(a.grad == d / a)
        # probability
        import random
        num_tosses = 100
        heads = sum([random.random() > 0.5 for _ in range(num_tosses)])
        fair_probs = torch.tensor([0.5, 0.5])
        s = Multinomial(100, fair_probs).sample(); print(s.shape, s.sum())
        print((Multinomial(100, fair_probs).sample() / 100).shape)
        counts = Multinomial(1, fair_probs).sample((10000,))
        cum_counts = counts.cumsum(dim=0)
        estimates = cum_counts / cum_counts.sum(dim=1, keepdims=True)
        estimates = estimates.numpy()
        print(estimates.shape, counts.dtype, counts.sum())
        # numerical stability
        x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
        y = torch.sigmoid(x)
        y.backward(torch.ones_like(x))
        print(x.grad.max(), x.detach().numpy().shape, y.detach().numpy().max())
        M = torch.normal(0, 1, size=(4, 4))
        print('a single matrix \n', M.shape)
        for i in range(100):
            M = M @ torch.normal(0, 1, size=(4, 4))
        print('after multiplying 100 matrices\n', M.shape, torch.isfinite(M).all())
        # mlp scratch pieces
        X = torch.normal(0, 1, (2, 3))
        def relu(X):
            a = torch.zeros_like(X)
            return torch.max(X, a)
        print(relu(X).min() >= 0)
        def softmax(X):
            X_exp = torch.exp(X)
            partition = X_exp.sum(1, keepdims=True)
            return X_exp / partition
        X = torch.rand((2, 5)); X_prob = softmax(X); print(X_prob.shape, X_prob.sum(1))
        y = torch.tensor([0, 2]); y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]]); print(y_hat[[0, 1], y])
        def cross_entropy(y_hat, y):
            return -torch.log(y_hat[list(range(len(y_hat))), y]).mean()
        print(cross_entropy(y_hat, y))
        print(torch.tensor([1.0, 2, 3]).reshape(-1, 1).shape)
    return {"printed": printed_lines(out)}


def test_d2l_builders_guide(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    compare_program(builders_guide, tmp=str(tmp_path / "pt"), mt_options={"tmp": str(tmp_path / "mt")})


def test_d2l_sentiment_birnn():
    compare_program(sentiment_birnn, rtol=1e-3, atol=1e-4)


def test_d2l_word_similarity_analogy():
    compare_program(similarity_analogy)


def test_d2l_preliminaries_and_numerical_stability():
    compare_program(preliminaries)
