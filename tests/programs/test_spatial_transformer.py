"""A spatial transformer network in the style of the PyTorch tutorial: a classifier whose input
first goes through a localization net (Conv2d, MaxPool2d, ReLU) and a regressor of the 2x3
affine matrix, initialised to the identity (weight zeroed, bias copied from a tensor); the grid
from F.affine_grid and the resampling by F.grid_sample; F.dropout in training, log_softmax and
F.nll_loss, SGD; the transformed batch in eval mode."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SIDE = 12


def blobs(rng, n):
    """Images with a bright square in one of four quadrants (the label), shifted a little."""
    x = rng.standard_normal((n, 1, SIDE, SIDE)).astype(np.float32) * 0.1
    y = rng.integers(0, 4, n)
    for i, q in enumerate(y):
        r, c = (q // 2) * 6 + rng.integers(0, 3), (q % 2) * 6 + rng.integers(0, 3)
        x[i, 0, r:r + 3, c:c + 3] += 1
    return x, y.astype(np.int64)


def stn(torch, init=None, steps=6, batch=16, align_corners=False):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, kernel_size=3)
            self.conv2_drop = nn.Dropout2d(p=0.0)
            self.fc1 = nn.Linear(6 * 5 * 5, 20)
            self.fc2 = nn.Linear(20, 4)
            self.localization = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=3),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True),
            )
            self.fc_loc = nn.Sequential(nn.Linear(4 * 5 * 5, 16), nn.ReLU(True), nn.Linear(16, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 4 * 5 * 5)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=align_corners)
            return F.grid_sample(x, grid, align_corners=align_corners)

        def forward(self, x):
            x = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv1(x)), 2))
            x = x.view(-1, 6 * 5 * 5)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, p=0.0, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net()
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    losses = []
    model.train()
    for _ in range(steps):
        data, target = blobs(rng, batch)
        data, target = torch.from_numpy(data), torch.from_numpy(target)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        data, target = blobs(rng, 32)
        data, target = torch.from_numpy(data), torch.from_numpy(target)
        output = model(data)
        test_loss = F.nll_loss(output, target, reduction="sum").item()
        pred = output.max(1, keepdim=True)[1]
        correct = pred.eq(target.view_as(pred)).sum().item()
        transformed = model.stn(data).cpu()
    result.update(losses=losses, test_loss=test_loss, correct=correct, transformed=numpy_of(transformed),
                  theta_bias=numpy_of(model.fc_loc[2].bias))
    return result


def test_spatial_transformer_network():
    compare_program(stn)


def test_spatial_transformer_align_corners():
    compare_program(stn, align_corners=True, steps=3)
