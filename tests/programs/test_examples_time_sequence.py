"""pytorch/examples' time_sequence_prediction as published: generate_sine_wave.py (np.random.seed(2),
shifted sine waves in float64, torch.save of the NumPy array into open('traindata.pt', 'wb')) and
train.py run with --device cpu (the 51-unit Sequence of two nn.LSTMCell and a Linear with a
dummy_param = nn.Parameter(torch.empty(0)) whose .device places the zero states, built by
Sequence().to(device).double(), nn.MSELoss().to(device), data by
torch.from_numpy(torch.load('traindata.pt', weights_only=False)) (the script's bare torch.load
refuses a NumPy array since PyTorch 2.6), LBFGS(lr=0.8) with a closure printing each loss, and the
test loss of `future` steps fed back under no_grad). Smaller: 8 waves of 40 points, 2 steps and
future=20; matplotlib's figure is left out (not installed), its data y kept. Printed logs and
predictions are compared number by number from the script's seeds."""
import os

import numpy as np

from prog_helpers import captured_run, compare_in_folders, numpy_of, printed_lines


def generate_sine_wave(torch, T=20, L=40, N=8):
    np.random.seed(2)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    torch.save(data, open('traindata.pt', 'wb'))


def train_main(torch, init=None, workdir=None, steps=2, future=20):
    nn, optim = torch.nn, torch.optim
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        generate_sine_wave(torch)

        class Sequence(nn.Module):
            def __init__(self):
                super(Sequence, self).__init__()
                self.lstm1 = nn.LSTMCell(1, 51)
                self.lstm2 = nn.LSTMCell(51, 51)
                self.linear = nn.Linear(51, 1)
                self.dummy_param = nn.Parameter(torch.empty(0))

            def forward(self, input, future=0):
                outputs = []
                device = self.dummy_param.device
                h_t = torch.zeros(input.size(0), 51, dtype=torch.double).to(device)
                c_t = torch.zeros(input.size(0), 51, dtype=torch.double).to(device)
                h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double).to(device)
                c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double).to(device)
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
                outputs = torch.cat(outputs, dim=1)
                return outputs

        with captured_run(torch) as out:
            device_name = 'cpu'  # --device cpu
            if device_name == 'cuda' and not torch.cuda.is_available():
                print('cuda is not available')
            device = torch.device(device_name)
            np.random.seed(0)
            torch.manual_seed(0)
            data = torch.from_numpy(torch.load('traindata.pt', weights_only=False)).to(device)
            input = data[3:, :-1]
            target = data[3:, 1:]
            test_input = data[:3, :-1]
            test_target = data[:3, 1:]
            seq = Sequence().to(device).double()
            criterion = nn.MSELoss().to(device)
            optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
            predictions = []
            for i in range(steps):
                print('STEP: ', i)

                def closure():
                    optimizer.zero_grad()
                    out = seq(input)
                    loss = criterion(out, target)
                    print('loss:', loss.item())
                    loss.backward()
                    return loss
                optimizer.step(closure)
                with torch.no_grad():
                    pred = seq(test_input, future=future)
                    loss = criterion(pred[:, :-future], test_target)
                    print('test loss:', loss.item())
                    y = pred.cpu().detach().numpy()
                predictions.append(y)
    finally:
        os.chdir(cwd)
    return {"printed": printed_lines(out), "predictions": predictions, "dtype": str(y.dtype),
            "dummy": [tuple(seq.dummy_param.shape), str(seq.dummy_param.dtype).split(".")[-1]],
            "params": {k: numpy_of(v) for k, v in seq.named_parameters()}}


def test_time_sequence_prediction_example(tmp_path):
    ref, got = compare_in_folders(train_main, tmp_path, "workdir", rtol=1e-6, atol=1e-9)
    printed = got["printed"]
    assert printed[0] == "STEP:  0" and printed.count("STEP:  1") == 1
    assert 2 * 20 < len(printed) <= 2 * 22 + 2  # LBFGS's max_iter=20 closures a step, fewer once converged
    assert got["dtype"] == "float64" and got["dummy"] == [(0,), "float64"]
    assert got["predictions"][-1].shape == (3, 39 + 20)
