"""Training steps of sequence models (issue 20): minitorch beside PyTorch, in one process.

Cases: an LSTM language model (Embedding(1000, 128) - LSTM(128, 256, 2 layers) - Linear(256, 1000),
cross-entropy, Adam) on a (32, 35) batch, the same model on packed sequences of lengths 8 to 35
(pack_padded_sequence with enforce_sorted=False, pad_packed_sequence before the head), the same
model with a GRU in place of the LSTM (padded), and a Transformer encoder (2 nn.TransformerEncoderLayer,
d_model 128, 4 heads, feed-forward 512, batch_first, causal mask, dropout 0) with a linear head on a
(16, 64) batch of tokens, cross-entropy, AdamW. Both libraries start from the same weights (one
state_dict copied through NumPy). Each thread count runs in its own process; the libraries
alternate step by step and keep their best of several repeats. The last column is minitorch's
time over PyTorch's (target: at most 1.25). Quote ratios: the machine is shared.
Run: PYTHONPATH=. python benchmarks/bench_models.py [--quick] [--threads 1,2] [--only CASE]
"""
import sys

import numpy as np

from bench_cpu import alternate, arg, libraries, per_thread_count, print_row

QUICK = "--quick" in sys.argv
VOCAB = 1000


def lstm_lm(lib, rnn="LSTM"):
    nn = lib.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 128)
            self.rnn = getattr(nn, rnn)(128, 256, num_layers=2, batch_first=True)
            self.head = nn.Linear(256, VOCAB)

        def forward(self, x):
            out, _ = self.rnn(self.embed(x))
            return self.head(out)

    return LM(), lib.optim.Adam, (32, 35)


def gru_lm(lib):
    return lstm_lm(lib, "GRU")


# the packed case's sequence lengths (fixed: both libraries see the same batch)
LENGTHS = np.random.default_rng(1).integers(8, 36, 32)
LENGTHS[0] = 35


def packed_lstm_lm(lib):
    model, opt, shape = lstm_lm(lib)
    rnn_utils = lib.nn.utils.rnn

    def forward(x):
        packed = rnn_utils.pack_padded_sequence(model.embed(x), lib.tensor(LENGTHS), batch_first=True,
                                                enforce_sorted=False)
        out, _ = rnn_utils.pad_packed_sequence(model.rnn(packed)[0], batch_first=True, total_length=x.shape[1])
        return model.head(out)

    model.forward = forward
    return model, opt, shape


def transformer(lib):
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 128)
            layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(128, VOCAB)

        def forward(self, x):
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
            return self.head(self.encoder(self.embed(x), mask=mask, is_causal=True))

    return Encoder(), lib.optim.AdamW, (16, 64)


def training_step(lib, make, weights, tokens):
    model, opt_class, _ = make(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = opt_class(model.parameters(), lr=1e-3)
    x, y = lib.tensor(tokens[:, :-1]), lib.tensor(tokens[:, 1:])
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()

    return step


def run_one(threads):
    libs = libraries(threads)
    minitorch = libs["minitorch"]
    minitorch.manual_seed(0)
    rng = np.random.default_rng(0)
    cases = (("LSTM LM step", lstm_lm), ("packed LSTM LM step", packed_lstm_lm),
             ("GRU LM step", gru_lm),             ("Transformer encoder step", transformer))
    for label, make in cases:
        if arg("--only", "") not in label:
            continue
        model, _, (batch, steps) = make(minitorch)
        weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        tokens = rng.integers(0, VOCAB, (batch, steps + 1))
        fns = {name: training_step(lib, make, weights, tokens) for name, lib in libs.items()}
        print_row(threads, label, 28, alternate(fns, 3 if QUICK else 10), ("minitorch", "torch"), 2)


def main():
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<28} {'minitorch':>9} {'torch':>9} {'mt/torch':>8}",
        "(best ms per training step over alternating repeats; the last column is minitorch's over PyTorch's)"])


if __name__ == "__main__":
    main()
