"""A sequence classifier: an LSTM (batch_first) reads noisy sequences, its last hidden state goes
through a Linear layer; the class says whether the sequence rises or falls. Adam, cross-entropy."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def make_sequences(n, length, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    slope = np.where(labels == 1, 1.0, -1.0)[:, None] * rng.uniform(0.5, 1.5, (n, 1))
    x = slope * np.linspace(-1, 1, length)[None, :] + 0.3 * rng.standard_normal((n, length))
    return x[..., None].astype(np.float32), labels.astype(np.int64)


def lstm_classifier(torch, init=None, steps=15, batch=16, length=12):
    nn = torch.nn
    torch.manual_seed(0)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(input_size=1, hidden_size=16, num_layers=1, batch_first=True)
            self.head = nn.Linear(16, 2)

        def forward(self, x):  # x (B, T, 1)
            _, (h_n, _) = self.lstm(x)
            return self.head(h_n[-1])

    model = Classifier()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    criterion = nn.CrossEntropyLoss()
    x_all, y_all = make_sequences(steps * batch, length, seed=0)
    losses = []
    for step in range(steps):
        x = torch.from_numpy(x_all[step * batch:(step + 1) * batch])
        y = torch.from_numpy(y_all[step * batch:(step + 1) * batch])
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    x_test, y_test = make_sequences(64, length, seed=1)
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test))
    accuracy = (logits.argmax(-1) == torch.from_numpy(y_test)).float().mean().item()
    result.update(losses=losses, logits=numpy_of(logits), accuracy=accuracy,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_lstm_sequence_classifier():
    ref, _ = compare_program(lstm_classifier)
    assert ref["accuracy"] > 0.8
