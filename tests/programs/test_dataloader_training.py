"""A classifier trained from a Dataset through DataLoaders with two worker processes: a custom
Sampler that shuffles with NumPy (so both libraries see the same batches), then shuffle=True,
whose order comes from each library's own generator and is checked for structure only."""
import numpy as np

from prog_helpers import compare_program, numpy_of, run_both, start_from


def make_dataset(torch, n=96, features=8, classes=3):
    class Blobs(torch.utils.data.Dataset):
        """Gaussian blobs around three centres; an item is (features, label, index)."""

        def __init__(self):
            rng = np.random.default_rng(1)
            centres = rng.normal(0, 2, size=(classes, features))
            self.y = rng.integers(0, classes, size=n)
            self.x = (centres[self.y] + rng.normal(0, 1, size=(n, features))).astype(np.float32)

        def __len__(self):
            return n

        def __getitem__(self, i):
            return torch.from_numpy(self.x[i]), int(self.y[i]), i

    return Blobs()


def make_sampler(torch, n, seed):
    class NumpyShuffle(torch.utils.data.Sampler):
        """A new NumPy permutation of range(n) every epoch."""

        def __init__(self):
            self.rng = np.random.default_rng(seed)

        def __iter__(self):
            return iter(self.rng.permutation(n).tolist())

        def __len__(self):
            return n

    return NumpyShuffle()


def dataloader_training(torch, init=None, epochs=2, shuffle="sampler"):
    nn = torch.nn
    torch.manual_seed(0)
    data = make_dataset(torch)
    if shuffle == "sampler":
        loader = torch.utils.data.DataLoader(data, batch_size=16, sampler=make_sampler(torch, len(data), 2),
                                             num_workers=2, persistent_workers=True)
    else:
        loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True, num_workers=2)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()

    losses, orders, sizes = [], [], []
    for _ in range(epochs):
        model.train()
        order = []
        for x, y, index in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            order += index.tolist()
            sizes.append(len(y))
        orders.append(order)

    model.eval()
    test_loader = torch.utils.data.DataLoader(data, batch_size=32, num_workers=2)
    correct = 0
    with torch.no_grad():
        for x, y, _ in test_loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
    result.update(losses=losses, orders=orders, sizes=sizes, accuracy=correct / len(data),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_dataloader_workers_training_loop():
    ref, _ = compare_program(dataloader_training)
    assert ref["accuracy"] > 0.8


def test_dataloader_workers_shuffle_structure():
    # shuffle=True draws from each library's generator: the orders differ, the structure must not.
    ref, got = run_both(dataloader_training, shuffle=True)
    for res in (ref, got):
        assert res["sizes"] == [16] * 12
        for order in res["orders"]:
            assert sorted(order) == list(range(96))  # every item once per epoch
        assert res["orders"][0] != res["orders"][1]  # a new order each epoch
        assert res["losses"][-1] < res["losses"][0]
    assert got["accuracy"] > 0.8
