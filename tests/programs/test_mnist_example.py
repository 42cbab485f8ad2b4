"""pytorch/examples' mnist/main.py: an argparse Namespace of options, a Net of two Conv2d, two
Dropout, F.max_pool2d, torch.flatten(x, 1) and F.log_softmax(x, dim=1); train() logging
'Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}' every log_interval batches with
batch_idx * len(data) and len(train_loader.dataset); test() summing
F.nll_loss(output, target, reduction='sum').item(), pred = output.argmax(dim=1, keepdim=True),
correct += pred.eq(target.view_as(pred)).sum().item(); Adadelta(lr=1.0) with StepLR(step_size=1,
gamma=0.7), a TensorDataset in place of the download, use_accel through torch.accelerator, and
torch.save of the state_dict; then mnist_rnn's LSTM over image rows with its rnn(x)[0][:, -1]."""
import argparse
import io

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def mnist(torch, init=None, epochs=2, rnn=False):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    from_numpy = torch.from_numpy
    StepLR = torch.optim.lr_scheduler.StepLR

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(8 * 5 * 5, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    class RNNNet(nn.Module):
        def __init__(self):
            super(RNNNet, self).__init__()
            self.rnn = nn.LSTM(input_size=14, hidden_size=16, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(16)
            self.dropout1 = nn.Dropout2d(0.25)
            self.dropout2 = nn.Dropout2d(0.5)
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 10)

        def forward(self, input):
            input = input.reshape(-1, 14, 14)
            output, hidden = self.rnn(input)
            output = output[:, -1, :]
            output = self.batchnorm(output)
            output = self.dropout1(output)
            output = self.fc1(output)
            output = F.relu(output)
            output = self.dropout2(output)
            output = self.fc2(output)
            output = F.log_softmax(output, dim=1)
            return output

    logs = []

    def train(args, model, device, train_loader, optimizer, epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            if batch_idx % args.log_interval == 0:
                logs.append('Train Epoch: {} [{}/{} ({:.0f}%)]'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader)))
                logs.append(loss.item())
                if args.dry_run:
                    break

    def test(model, device, test_loader):
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction='sum').item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        logs.append('Test set: Accuracy: {}/{} ({:.0f}%)'.format(
            correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
        logs.append(test_loss)

    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--test-batch-size', type=int, default=32)
    parser.add_argument('--epochs', type=int, default=epochs)
    parser.add_argument('--lr', type=float, default=1.0)
    parser.add_argument('--gamma', type=float, default=0.7)
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--dry-run', action='store_true')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--log-interval', type=int, default=2)
    parser.add_argument('--save-model', action='store_true', default=True)
    args = parser.parse_args([])
    use_accel = not args.no_accel and torch.accelerator.is_available() and False
    torch.manual_seed(args.seed)
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        cuda_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)
    rng = np.random.default_rng(0)
    mean, std = 0.1307, 0.3081
    images = (rng.random((64, 1, 14, 14)).astype(np.float32) - mean) / std
    labels = rng.integers(0, 10, 64)
    dataset1 = torch.utils.data.TensorDataset(from_numpy(images[:48]), from_numpy(labels[:48]))
    dataset2 = torch.utils.data.TensorDataset(from_numpy(images[48:]), from_numpy(labels[48:]))
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)
    model = (RNNNet() if rnn else Net()).to(device)
    result = {}
    start_from(torch, model, init, result)
    # dropout draws come from each library's own generator: switch them off for the comparison
    for m in model.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout2d)):
            m.p = 0.0
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    lrs = []
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    if args.save_model:
        buf = io.BytesIO()
        torch.save(model.state_dict(), buf)
        buf.seek(0)
        state = torch.load(buf)
        result["saved"] = {k: numpy_of(v) for k, v in state.items()}
    result.update(logs=[x if isinstance(x, str) else float(x) for x in logs if isinstance(x, float)],
                  text=[x for x in logs if isinstance(x, str)], lrs=lrs)
    return result


def test_mnist_example_adadelta_steplr():
    compare_program(mnist, rtol=1e-3, atol=1e-4)


@pytest.mark.filterwarnings("ignore:dropout2d")  # mnist_rnn passes 2-D input to Dropout2d, both warn
def test_mnist_rnn_example():
    compare_program(mnist, rnn=True, rtol=1e-3, atol=1e-4)
