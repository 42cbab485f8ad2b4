"""Time-series prediction in the style of the PyTorch examples' time_sequence_prediction: sine
waves in float64 (torch.from_numpy of NumPy's float64), a Sequence model of two nn.LSTMCell and a
Linear made .double(), the input split into steps by input.split(1, dim=1), hidden states from
torch.zeros(..., dtype=torch.double), `future` steps fed back, outputs torch.cat'ed; LBFGS with a
closure, then the test loss and predictions under no_grad."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

T, L, N = 20, 60, 12


def sines(seed):
    rng = np.random.default_rng(seed)
    x = np.empty((N, L), np.int64)
    x[:] = np.array(range(L)) + rng.integers(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype("float64")


def time_series(torch, init=None, steps=3, future=10):
    nn = torch.nn
    torch.manual_seed(0)
    data = sines(2)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 16)
            self.lstm2 = nn.LSTMCell(16, 16)
            self.linear = nn.Linear(16, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return torch.cat(outputs, dim=1)

    seq = Sequence()
    seq.double()
    result = {}
    start_from(torch, seq, init, result)
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8)
    losses, test_losses = [], []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    result.update(losses=losses, test_losses=test_losses, y=y, dtype=str(y.dtype),
                  params={k: numpy_of(v) for k, v in seq.named_parameters()})
    return result


def test_lstmcell_float64_lbfgs():
    # float64 throughout: LBFGS's curvature pairs amplify rounding, but far below these tolerances
    ref, got = compare_program(time_series, rtol=1e-7, atol=1e-9)
    assert got["dtype"] == "float64"
    assert ref["test_losses"][-1] < ref["losses"][0]
