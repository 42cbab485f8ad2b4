"""The d2l book's recurrent and regularisation chapters (1.0 edition): a Vocab over characters from
collections.Counter, GRUScratch and LSTMScratch (parameters made by init_weight lambdas and
triple()/triple helpers, nn.Parameter(torch.randn(*shape) * sigma), a Python loop over time steps
`for X in inputs`), RNNLMScratch's one_hot(X.T, vocab_size).type(torch.float32) and
torch.stack(outputs, 1), clip_gradients through torch.sqrt(sum(torch.sum(p.grad ** 2) ...)) and
param.grad[:] *= grad_clip_val / norm, greedy predict() with int(Y.argmax(axis=2).reshape(1)),
math.exp perplexity; the concise nn.GRU/nn.LSTM model (num_layers=2, dropout) with a LazyLinear
head and .swapaxes(0, 1); and weight decay and dropout from scratch (l2_penalty, dropout_layer
with (torch.rand(X.shape) > dropout).float())."""
import collections
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

TEXT = ("the time traveller for so it will be convenient to speak of him was expounding a recondite "
        "matter to us his grey eyes shone and twinkled and his usually pale face was flushed and animated "
        "the fire burned brightly and the soft radiance of the incandescent lights in the lilies of silver "
        "caught the bubbles that flashed and passed in our glasses")


class Vocab:
    """Vocabulary for text."""
    def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
        # Flatten a 2D list if needed
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        # Count token frequencies
        counter = collections.Counter(tokens)
        self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
        # The list of unique tokens
        self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
            token for token, freq in self.token_freqs if freq >= min_freq])))
        self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

    def __len__(self):
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if not isinstance(tokens, (list, tuple)):
            return self.token_to_idx.get(tokens, self.unk)
        return [self.__getitem__(token) for token in tokens]

    @property
    def unk(self):  # Index for the unknown token
        return self.token_to_idx['<unk>']


def scratch_rnn_lm(torch, init=None, cell="gru", num_steps=8, batch_size=6, epochs=3, lr=1.0):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    vocab = Vocab(list(TEXT))
    corpus = vocab[list(TEXT)]
    array = torch.tensor([corpus[i:i + num_steps + 1] for i in range(len(corpus) - num_steps)])
    X_all, Y_all = array[:, :-1], array[:, 1:]

    def gate(num_inputs, num_hiddens, sigma):
        """d2l's init_weight and triple lambdas: an input and a hidden weight and a bias."""
        init_weight = lambda *shape: nn.Parameter(torch.randn(*shape) * sigma)
        return (init_weight(num_inputs, num_hiddens), init_weight(num_hiddens, num_hiddens),
                nn.Parameter(torch.zeros(num_hiddens)))

    class GRUScratch(nn.Module):
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.num_inputs, self.num_hiddens, self.sigma = num_inputs, num_hiddens, sigma
            triple = lambda: gate(num_inputs, num_hiddens, sigma)
            self.W_xz, self.W_hz, self.b_z = triple()  # Update gate
            self.W_xr, self.W_hr, self.b_r = triple()  # Reset gate
            self.W_xh, self.W_hh, self.b_h = triple()  # Candidate hidden state

        def forward(self, inputs, H=None):
            if H is None:
                # Initial state with shape: (batch_size, num_hiddens)
                H = torch.zeros((inputs.shape[1], self.num_hiddens), device=inputs.device)
            outputs = []
            for X in inputs:
                Z = torch.sigmoid(torch.matmul(X, self.W_xz) + torch.matmul(H, self.W_hz) + self.b_z)
                R = torch.sigmoid(torch.matmul(X, self.W_xr) + torch.matmul(H, self.W_hr) + self.b_r)
                H_tilde = torch.tanh(torch.matmul(X, self.W_xh) + torch.matmul(R * H, self.W_hh) + self.b_h)
                H = Z * H + (1 - Z) * H_tilde
                outputs.append(H)
            return outputs, H

    class LSTMScratch(nn.Module):
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.num_inputs, self.num_hiddens, self.sigma = num_inputs, num_hiddens, sigma
            triple = lambda: gate(num_inputs, num_hiddens, sigma)
            self.W_xi, self.W_hi, self.b_i = triple()  # Input gate
            self.W_xf, self.W_hf, self.b_f = triple()  # Forget gate
            self.W_xo, self.W_ho, self.b_o = triple()  # Output gate
            self.W_xc, self.W_hc, self.b_c = triple()  # Input node

        def forward(self, inputs, H_C=None):
            if H_C is None:
                # Initial state with shape: (batch_size, num_hiddens)
                H = torch.zeros((inputs.shape[1], self.num_hiddens), device=inputs.device)
                C = torch.zeros((inputs.shape[1], self.num_hiddens), device=inputs.device)
            else:
                H, C = H_C
            outputs = []
            for X in inputs:
                I = torch.sigmoid(torch.matmul(X, self.W_xi) + torch.matmul(H, self.W_hi) + self.b_i)
                F_ = torch.sigmoid(torch.matmul(X, self.W_xf) + torch.matmul(H, self.W_hf) + self.b_f)
                O = torch.sigmoid(torch.matmul(X, self.W_xo) + torch.matmul(H, self.W_ho) + self.b_o)
                C_tilde = torch.tanh(torch.matmul(X, self.W_xc) + torch.matmul(H, self.W_hc) + self.b_c)
                C = F_ * C + I * C_tilde
                H = O * torch.tanh(C)
                outputs.append(H)
            return outputs, (H, C)

    class RNNLMScratch(nn.Module):
        """The RNN-based language model implemented from scratch."""
        def __init__(self, rnn, vocab_size):
            super().__init__()
            self.rnn, self.vocab_size = rnn, vocab_size
            self.W_hq = nn.Parameter(torch.randn(self.rnn.num_hiddens, self.vocab_size) * self.rnn.sigma)
            self.b_q = nn.Parameter(torch.zeros(self.vocab_size))

        def one_hot(self, X):
            # Output shape: (num_steps, batch_size, vocab_size)
            return F.one_hot(X.T, self.vocab_size).type(torch.float32)

        def output_layer(self, rnn_outputs):
            outputs = [torch.matmul(H, self.W_hq) + self.b_q for H in rnn_outputs]
            return torch.stack(outputs, 1)

        def forward(self, X, state=None):
            embs = self.one_hot(X)
            rnn_outputs, _ = self.rnn(embs, state)
            return self.output_layer(rnn_outputs)

        def predict(self, prefix, num_preds, vocab, device=None):
            state, outputs = None, [vocab[prefix[0]]]
            for i in range(len(prefix) + num_preds - 1):
                X = torch.tensor([[outputs[-1]]], device=device)
                embs = self.one_hot(X)
                rnn_outputs, state = self.rnn(embs, state)
                if i < len(prefix) - 1:  # Warm-up period
                    outputs.append(vocab[prefix[i + 1]])
                else:  # Predict num_preds steps
                    Y = self.output_layer(rnn_outputs)
                    outputs.append(int(Y.argmax(axis=2).reshape(1)))
            return ''.join([vocab.idx_to_token[i] for i in outputs])

    rnn = (GRUScratch if cell == "gru" else LSTMScratch)(num_inputs=len(vocab), num_hiddens=24)
    model = RNNLMScratch(rnn, vocab_size=len(vocab))
    result = {}
    start_from(torch, model, init, result)

    def clip_gradients(grad_clip_val, model):
        params = [p for p in model.parameters() if p.requires_grad]
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > grad_clip_val:
            for param in params:
                param.grad[:] *= grad_clip_val / norm
        return float(norm)

    rng = np.random.default_rng(0)
    optim = torch.optim.SGD(model.parameters(), lr)
    perplexities, norms = [], []
    for epoch in range(epochs):
        order = rng.permutation(len(X_all))[:4 * batch_size]
        for b in range(0, len(order), batch_size):
            idx = torch.tensor(order[b:b + batch_size])
            X, Y = X_all[idx], Y_all[idx]
            Y_hat = model(X)
            l = F.cross_entropy(Y_hat.reshape(-1, Y_hat.shape[-1]), Y.reshape(-1))
            optim.zero_grad()
            with torch.no_grad():
                l.backward()
                norms.append(clip_gradients(1, model))
                optim.step()
            perplexities.append(math.exp(l.item()))
    result.update(perplexities=perplexities, norms=norms, text=model.predict('the time', 12, vocab),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def concise_rnn_lm(torch, init=None, cell="GRU", num_steps=8, batch_size=6, steps=6, lr=2.0):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    vocab = Vocab(list(TEXT))
    corpus = torch.tensor(vocab[list(TEXT)])

    class RNNLM(nn.Module):
        """The RNN-based language model implemented with high-level APIs."""
        def __init__(self, rnn, vocab_size):
            super().__init__()
            self.rnn, self.vocab_size = rnn, vocab_size
            self.linear = nn.LazyLinear(self.vocab_size)

        def forward(self, X, state=None):
            embs = F.one_hot(X.T, self.vocab_size).type(torch.float32)
            rnn_outputs, _ = self.rnn(embs, state)
            return self.linear(rnn_outputs).swapaxes(0, 1)

    rnn = getattr(nn, cell)(len(vocab), 32, num_layers=2, dropout=0.0)
    model = RNNLM(rnn, len(vocab))
    model(corpus[:num_steps].reshape(1, -1))  # materialise the lazy head
    result = {}
    start_from(torch, model, init, result)
    optim = torch.optim.SGD(model.parameters(), lr)
    rng = np.random.default_rng(1)
    losses = []
    for step in range(steps):
        starts = rng.integers(0, len(corpus) - num_steps - 1, batch_size)
        X = torch.stack([corpus[s:s + num_steps] for s in starts])
        Y = torch.stack([corpus[s + 1:s + num_steps + 1] for s in starts])
        Y_hat = model(X)
        l = F.cross_entropy(Y_hat.reshape(-1, Y_hat.shape[-1]), Y.reshape(-1))
        optim.zero_grad()
        l.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        losses.append(l.item())
    result.update(losses=losses, params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def weight_decay_and_dropout(torch, init=None, lambd=3.0, num_epochs=5, lr=0.03):
    torch.manual_seed(0)
    n_train, num_inputs = 20, 50
    rng = np.random.default_rng(2)
    true_w, true_b = torch.ones((num_inputs, 1)) * 0.01, 0.05
    X = torch.tensor(rng.normal(size=(n_train, num_inputs)), dtype=torch.float32)
    y = torch.matmul(X, true_w) + true_b + torch.tensor(rng.normal(0, 0.01, (n_train, 1)), dtype=torch.float32)

    def l2_penalty(w):
        return (w ** 2).sum() / 2

    w = torch.tensor(rng.normal(0, 1, (num_inputs, 1)), dtype=torch.float32, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for epoch in range(num_epochs):
        for i in range(0, n_train, 5):
            Xb, yb = X[i:i + 5], y[i:i + 5]
            l = ((torch.matmul(Xb, w) + b - yb) ** 2 / 2).mean() + lambd * l2_penalty(w)
            l.backward()
            with torch.no_grad():
                for param in (w, b):
                    param -= lr * param.grad
                    param.grad.zero_()
            losses.append(l.item())

    def dropout_layer(X, dropout):
        assert 0 <= dropout <= 1
        if dropout == 1:
            return torch.zeros_like(X)
        mask = (torch.rand(X.shape) > dropout).float()
        return mask * X / (1.0 - dropout)

    X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
    torch.manual_seed(7)
    dropped = [numpy_of(dropout_layer(X, p)) for p in (0, 0.5, 1)]
    return {"losses": losses, "w_norm": float(torch.norm(w)), "dropped": dropped}


def test_gru_from_scratch():
    ref, got = compare_program(scratch_rnn_lm, cell="gru")
    assert ref["perplexities"][-1] < ref["perplexities"][0] and ref["text"].startswith("the time")


def test_lstm_from_scratch():
    compare_program(scratch_rnn_lm, cell="lstm")


def test_concise_deep_gru_and_lstm():
    compare_program(concise_rnn_lm, cell="GRU")
    compare_program(concise_rnn_lm, cell="LSTM")


def test_weight_decay_and_dropout_from_scratch():
    ref, got = compare_program(weight_decay_and_dropout)
    for dropped in (ref["dropped"], got["dropped"]):
        x = np.arange(16).reshape(2, 8)
        np.testing.assert_array_equal(dropped[0], x)
        assert set(np.unique(dropped[1] / np.maximum(x, 1))) <= {0.0, 2.0}  # kept ones doubled
        np.testing.assert_array_equal(dropped[2], 0)
