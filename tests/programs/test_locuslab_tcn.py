"""locuslab/TCN: TCN/tcn.py as published (Chomp1d by x[:, :, :-self.chomp_size].contiguous(),
TemporalBlock's dilated nn.Conv1d layers wrapped in torch.nn.utils.weight_norm, init_weights'
self.conv1.weight.data.normal_(0, 0.01) on the weight weight_norm recomputes, an optional 1x1
downsample on the residual), TemporalConvNet's dilations 2 ** i, and the adding problem
(TCN/adding_problem): model.py's TCN reading the last step y1[:, :, -1], utils.data_generator
(positions by np.random.choice(seq_length, size=2, replace=False), torch.cat((X_num, X_mask),
dim=1)), add_test.py's train loop (Adam, F.mse_loss, clip_grad_norm_, the last short batch X_train[i:])
and evaluate() under torch.no_grad(); and the char-level model of TCN/char_cnn (an nn.Embedding
whose output is transposed into the TCN, a decoder on every step, encoder.weight.data.uniform_
and the output .contiguous() before cross_entropy), on seeded arrays in place of their data."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def tcn_module(torch):
    """tcn.py as published, for the library `torch`."""
    nn = torch.nn
    weight_norm = torch.nn.utils.weight_norm  # tcn.py's `from torch.nn.utils import weight_norm`

    class Chomp1d(nn.Module):
        def __init__(self, chomp_size):
            super(Chomp1d, self).__init__()
            self.chomp_size = chomp_size

        def forward(self, x):
            return x[:, :, :-self.chomp_size].contiguous()

    class TemporalBlock(nn.Module):
        def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
            super(TemporalBlock, self).__init__()
            self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                               stride=stride, padding=padding, dilation=dilation))
            self.chomp1 = Chomp1d(padding)
            self.relu1 = nn.ReLU()
            self.dropout1 = nn.Dropout(dropout)

            self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                               stride=stride, padding=padding, dilation=dilation))
            self.chomp2 = Chomp1d(padding)
            self.relu2 = nn.ReLU()
            self.dropout2 = nn.Dropout(dropout)

            self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                     self.conv2, self.chomp2, self.relu2, self.dropout2)
            self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
            self.relu = nn.ReLU()
            self.init_weights()

        def init_weights(self):
            self.conv1.weight.data.normal_(0, 0.01)
            self.conv2.weight.data.normal_(0, 0.01)
            if self.downsample is not None:
                self.downsample.weight.data.normal_(0, 0.01)

        def forward(self, x):
            out = self.net(x)
            res = x if self.downsample is None else self.downsample(x)
            return self.relu(out + res)

    class TemporalConvNet(nn.Module):
        def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
            super(TemporalConvNet, self).__init__()
            layers = []
            num_levels = len(num_channels)
            for i in range(num_levels):
                dilation_size = 2 ** i
                in_channels = num_inputs if i == 0 else num_channels[i - 1]
                out_channels = num_channels[i]
                layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1, dilation=dilation_size,
                                         padding=(kernel_size - 1) * dilation_size, dropout=dropout)]

            self.network = nn.Sequential(*layers)

        def forward(self, x):
            return self.network(x)

    return TemporalConvNet


def adding_problem_program(torch, init=None, epochs=2):
    import warnings

    nn = torch.nn
    F = torch.nn.functional
    TemporalConvNet = tcn_module(torch)

    class TCN(nn.Module):
        def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
            super(TCN, self).__init__()
            self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
            self.linear = nn.Linear(num_channels[-1], output_size)
            self.init_weights()

        def init_weights(self):
            self.linear.weight.data.normal_(0, 0.01)

        def forward(self, x):
            y1 = self.tcn(x)
            return self.linear(y1[:, :, -1])

    rng = np.random.RandomState(1111)

    def data_generator(N, seq_length):
        X_num = torch.from_numpy(rng.rand(N, 1, seq_length).astype(np.float32))  # torch.rand([N, 1, seq_length])
        X_mask = torch.zeros([N, 1, seq_length])
        Y = torch.zeros([N, 1])
        for i in range(N):
            positions = rng.choice(seq_length, size=2, replace=False)
            X_mask[i, 0, positions[0]] = 1
            X_mask[i, 0, positions[1]] = 1
            Y[i, 0] = X_num[i, 0, positions[0]] + X_num[i, 0, positions[1]]
        X = torch.cat((X_num, X_mask), dim=1)
        return X, Y

    seq_length, batch_size, clip, lr = 40, 32, 1.0, 4e-3
    X_train, Y_train = data_generator(100, seq_length)
    X_test, Y_test = data_generator(50, seq_length)
    channel_sizes = [16] * 4
    torch.manual_seed(1111)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.nn.utils.weight_norm is deprecated in PyTorch 2
        model = TCN(2, 1, channel_sizes, kernel_size=5, dropout=0.0)
    result = {"keys": sorted(model.state_dict())}
    start_from(torch, model, init, result)
    optimizer = getattr(torch.optim, "Adam")(model.parameters(), lr=lr)

    def train(epoch):
        model.train()
        total_loss = 0
        losses = []
        for i in range(0, X_train.size(0), batch_size):
            if i + batch_size > X_train.size(0):
                x, y = X_train[i:], Y_train[i:]
            else:
                x, y = X_train[i:(i + batch_size)], Y_train[i:(i + batch_size)]
            optimizer.zero_grad()
            output = model(x)
            loss = F.mse_loss(output, y)
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            total_loss += loss.item()
            losses.append(loss.item())
        return losses

    def evaluate():
        model.eval()
        with torch.no_grad():
            output = model(X_test)
            test_loss = F.mse_loss(output, Y_test)
            return test_loss.item()

    result["train"] = [train(ep) for ep in range(1, epochs + 1)]
    result["test"] = evaluate()
    result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


def char_cnn_program(torch, init=None, steps=3):
    import warnings

    nn = torch.nn
    F = torch.nn.functional
    TemporalConvNet = tcn_module(torch)

    class TCN(nn.Module):  # TCN/char_cnn/model.py
        def __init__(self, input_size, output_size, num_channels, kernel_size=2, dropout=0.2, emb_dropout=0.2):
            super(TCN, self).__init__()
            self.encoder = nn.Embedding(output_size, input_size)
            self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
            self.decoder = nn.Linear(num_channels[-1], output_size)
            self.decoder.weight = self.encoder.weight
            self.drop = nn.Dropout(emb_dropout)
            self.init_weights()

        def init_weights(self):
            self.encoder.weight.data.normal_(0, 0.01)
            self.decoder.bias.data.fill_(0)
            self.decoder.weight.data.normal_(0, 0.01)

        def forward(self, x):
            # input has dimension (N, L_in), and emb has dimension (N, L_in, C_in)
            emb = self.drop(self.encoder(x))
            y = self.tcn(emb.transpose(1, 2))
            o = self.decoder(y.transpose(1, 2))
            return o.contiguous()

    n_characters, emsize = 20, 16
    torch.manual_seed(1111)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TCN(emsize, n_characters, [16] * 3, kernel_size=3, dropout=0.0, emb_dropout=0.0)
    result = {"tied": model.decoder.weight is model.encoder.weight}
    start_from(torch, model, init, result)
    rng = np.random.RandomState(0)
    data = torch.from_numpy(rng.randint(0, n_characters, (4, 33)))
    optimizer = torch.optim.SGD(model.parameters(), lr=4.0)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        inp, target = data[:, :-1], data[:, 1:]
        optimizer.zero_grad()
        output = model(inp)
        eff_history = 10
        final_output = output[:, eff_history:].contiguous().view(-1, n_characters)
        final_target = target[:, eff_history:].contiguous().view(-1)
        loss = criterion(final_output, final_target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.15)
        optimizer.step()
        losses.append(loss.item())
    result.update(losses=losses, state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_tcn_adding_problem():
    compare_program(adding_problem_program, rtol=1e-3, atol=1e-4)


def test_tcn_char_cnn():
    compare_program(char_cnn_program, rtol=1e-3, atol=1e-4)
