"""Sequence programs in ordinary PyTorch style, run under PyTorch and minitorch from the same
weights and data, compared step by step:
- a word-level LSTM language model over variable-length sentences, packed (pack_padded_sequence,
  pad_packed_sequence), two layers with dropout 0, gradient clipping, SGD;
- a bidirectional GRU sequence tagger on padded batches (pack_padded_sequence with
  enforce_sorted=False), CrossEntropyLoss with ignore_index, Adam;
- a 1-D CNN classifier of signals (Conv1d, BatchNorm1d, MaxPool1d, AdaptiveAvgPool1d), AdamW and
  a StepLR schedule, then evaluation mode."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

VOCAB, PAD = 30, 0


def sentences(rng, n, max_len=11):
    """n token sequences of lengths 3..max_len over 1..VOCAB-1, following a simple rule (each
    token is the previous plus 1 or 2, mod VOCAB), padded with PAD; their lengths."""
    lengths = rng.integers(3, max_len + 1, n)
    out = np.full((n, max_len), PAD, np.int64)
    for i, length in enumerate(lengths):
        t = rng.integers(1, VOCAB)
        for j in range(length):
            out[i, j] = t
            t = (t + rng.integers(1, 3)) % (VOCAB - 1) + 1
    return out, lengths.astype(np.int64)


def packed_lstm_lm(torch, init=None, steps=6, batch=8):
    nn = torch.nn
    rnn_utils = nn.utils.rnn
    torch.manual_seed(0)

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 16, padding_idx=PAD)
            self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True)
            self.out = nn.Linear(24, VOCAB)

        def forward(self, tokens, lengths):  # tokens (B, T), lengths (B,) sorted descending
            packed = rnn_utils.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True)
            out, (h, c) = self.lstm(packed)
            padded, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True,
                                                                total_length=tokens.shape[1])
            return self.out(padded), out_lengths, h

    model = LanguageModel()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    rng = np.random.default_rng(3)
    losses, norms = [], []
    for _ in range(steps):
        tokens, lengths = sentences(rng, batch)
        order = np.argsort(-lengths, kind="stable")
        tokens, lengths = tokens[order], lengths[order]
        x = torch.from_numpy(tokens[:, :-1].copy())
        y = torch.from_numpy(tokens[:, 1:].copy())
        logits, out_lengths, h = model(x, torch.from_numpy(np.maximum(lengths - 1, 1)))
        loss = criterion(logits.reshape(-1, VOCAB), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, norms=norms, last_logits=numpy_of(logits), h=numpy_of(h),
                  out_lengths=numpy_of(out_lengths),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_packed_lstm_language_model():
    ref, _ = compare_program(packed_lstm_lm)
    assert ref["losses"][-1] < ref["losses"][0]


def gru_tagger(torch, init=None, steps=8, batch=6):
    nn = torch.nn
    rnn_utils = nn.utils.rnn
    torch.manual_seed(0)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 12, padding_idx=PAD)
            self.gru = nn.GRU(12, 10, batch_first=True, bidirectional=True)
            self.tag = nn.Linear(20, 3)

        def forward(self, tokens, lengths):
            packed = rnn_utils.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                                    enforce_sorted=False)
            out, _ = self.gru(packed)
            out, _ = rnn_utils.pad_packed_sequence(out, batch_first=True, padding_value=0.0,
                                                   total_length=tokens.shape[1])
            return self.tag(out)

    model = Tagger()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    criterion = nn.CrossEntropyLoss(ignore_index=-100)
    rng = np.random.default_rng(5)
    losses = []
    for _ in range(steps):
        tokens, lengths = sentences(rng, batch)
        tags = np.where(tokens == PAD, -100, tokens % 3)
        logits = model(torch.from_numpy(tokens), torch.from_numpy(lengths))
        loss = criterion(logits.reshape(-1, 3), torch.from_numpy(tags).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    tokens, lengths = sentences(np.random.default_rng(6), 16)
    with torch.no_grad():
        pred = model(torch.from_numpy(tokens), torch.from_numpy(lengths)).argmax(-1)
    mask = tokens != PAD
    accuracy = float((numpy_of(pred)[mask] == (tokens % 3)[mask]).mean())
    result.update(losses=losses, pred=numpy_of(pred), accuracy=accuracy,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_bidirectional_gru_tagger_on_unsorted_packed_batches():
    compare_program(gru_tagger)


def signals(rng, n, length=32):
    """Noisy sines (class 0), square waves (1) and ramps (2), as (n, 2, length) float32."""
    labels = rng.integers(0, 3, n)
    t = np.linspace(0, 4 * np.pi, length)
    phase = rng.uniform(0, 2 * np.pi, (n, 1))
    base = np.where(labels[:, None] == 0, np.sin(t + phase),
                    np.where(labels[:, None] == 1, np.sign(np.sin(t + phase)), (t + phase) % 2 - 1))
    x = np.stack([base, np.gradient(base, axis=1)], 1) + 0.2 * rng.standard_normal((n, 2, length))
    return x.astype(np.float32), labels.astype(np.int64)


def cnn1d(torch, init=None, steps=10, batch=16):
    nn = torch.nn
    torch.manual_seed(0)
    # no bias before BatchNorm (its gradient is zero up to rounding, which Adam would amplify)
    model = nn.Sequential(
        nn.Conv1d(2, 8, kernel_size=5, padding=2, bias=False), nn.BatchNorm1d(8), nn.ReLU(),
        nn.MaxPool1d(2),
        nn.Conv1d(8, 16, kernel_size=3, padding=1, padding_mode="reflect"), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 3))
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    rng = np.random.default_rng(7)
    losses = []
    for _ in range(steps):
        x, y = signals(rng, batch)
        loss = criterion(model(torch.from_numpy(x)), torch.from_numpy(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    model.eval()
    x, y = signals(np.random.default_rng(8), 32)
    with torch.no_grad():
        logits = model(torch.from_numpy(x))
    result.update(losses=losses, logits=numpy_of(logits), lr=scheduler.get_last_lr(),
                  running_mean=numpy_of(model[1].running_mean),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_1d_cnn_classifier():
    compare_program(cnn1d)
