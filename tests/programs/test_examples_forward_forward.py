"""pytorch/examples' mnist_forward_forward/main.py as published, MNIST replaced by a local dataset
of 28x28 images with its interface (train=, transform=, (image, label) items) and smaller sizes
(64 training images in one batch, layers of 64, 30 epochs): get_y_neg (y.clone(), a Python list
of the other labels indexed by torch.randint(len(...), size=(1,)), .item() into y_neg[idx]),
overlay_y_on_x (x_[:, :classes] *= 0.0, x_[range(n), y] = x.max()), Net keeping its layers in a
plain list and overriding Module.train(x_pos, x_neg), Layer subclassing nn.Linear with
super().__init__(in_features, out_features, bias, device, dtype) and its own Adam, forward by
x / (x.norm(2, 1, keepdim=True) + 1e-4) and torch.mm with self.weight.T, the loss
torch.log1p(torch.exp(torch.cat([...]))).mean(), torch.xpu.is_available() in the device choice,
predict by goodness per label (sum of a list of tensors, torch.cat, argmax). From the script's
seed both libraries draw the same weights and negative labels (PyTorch's CPU stream), so the
printed log is compared number by number."""
import argparse

import numpy as np

from prog_helpers import captured_run, compare_program, printed_lines


def local_mnist(torch, train_size=64, test_size=32):
    """torchvision's MNIST as the script calls it, on seeded NumPy images (pixels in [0, 1])."""

    class MNIST(torch.utils.data.Dataset):
        def __init__(self, root, train=True, download=False, transform=None):
            rng = np.random.default_rng(0 if train else 1)
            n = train_size if train else test_size
            self.targets = rng.integers(0, 10, n)
            # a bright bar per class on noise, so that the labels can be learned
            self.data = rng.random((n, 28, 28)).astype(np.float32) * 0.3
            for i, c in enumerate(self.targets):
                self.data[i, 2 * c:2 * c + 3] += 0.7
            self.transform = transform

        def __len__(self):
            return len(self.targets)

        def __getitem__(self, i):
            img = torch.tensor(self.data[i]).unsqueeze(0)
            return (self.transform(img) if self.transform else img), int(self.targets[i])

    return MNIST


def forward_forward_main(torch, init=None, epochs=30):
    nn = torch.nn
    DataLoader = torch.utils.data.DataLoader
    Adam = torch.optim.Adam
    with captured_run(torch, seed=1) as out:
        def get_y_neg(y):
            y_neg = y.clone()
            for idx, y_samp in enumerate(y):
                allowed_indices = list(range(10))
                allowed_indices.remove(y_samp.item())
                y_neg[idx] = torch.tensor(allowed_indices)[torch.randint(len(allowed_indices), size=(1,))].item()
            return y_neg.to(device)

        def overlay_y_on_x(x, y, classes=10):
            x_ = x.clone()
            x_[:, :classes] *= 0.0
            x_[range(x.shape[0]), y] = x.max()
            return x_

        class Net(torch.nn.Module):
            def __init__(self, dims):
                super().__init__()
                self.layers = []
                for d in range(len(dims) - 1):
                    self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

            def predict(self, x):
                goodness_per_label = []
                for label in range(10):
                    h = overlay_y_on_x(x, label)
                    goodness = []
                    for layer in self.layers:
                        h = layer(h)
                        goodness = goodness + [h.pow(2).mean(1)]
                    goodness_per_label += [sum(goodness).unsqueeze(1)]
                goodness_per_label = torch.cat(goodness_per_label, 1)
                return goodness_per_label.argmax(1)

            def train(self, x_pos, x_neg):
                h_pos, h_neg = x_pos, x_neg
                for i, layer in enumerate(self.layers):
                    print("training layer: ", i)
                    h_pos, h_neg = layer.train(h_pos, h_neg)

        class Layer(nn.Linear):
            def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
                super().__init__(in_features, out_features, bias, device, dtype)
                self.relu = torch.nn.ReLU()
                self.opt = Adam(self.parameters(), lr=args.lr)
                self.threshold = args.threshold
                self.num_epochs = args.epochs

            def forward(self, x):
                x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
                return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

            def train(self, x_pos, x_neg):
                for i in range(self.num_epochs):
                    g_pos = self.forward(x_pos).pow(2).mean(1)
                    g_neg = self.forward(x_neg).pow(2).mean(1)
                    loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
                    if i % args.log_interval == 0:
                        print("Loss: ", loss.item())
                return self.forward(x_pos).detach(), self.forward(x_neg).detach()
        args = argparse.Namespace(epochs=epochs, lr=0.03, no_cuda=True, no_xpu=False, no_mps=False, seed=1,
                                  train_size=64, threshold=2, test_size=32, log_interval=10,
                                  save_model=False)  # the --no_cuda run
        torch.manual_seed(args.seed)
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        use_xpu = not args.no_xpu and torch.xpu.is_available()
        use_mps = not args.no_mps and torch.backends.mps.is_available()
        if use_cuda:
            device = torch.device("cuda")
        elif use_xpu:
            device = torch.device("xpu")
        elif use_mps:
            device = torch.device("mps")
        else:
            device = torch.device("cpu")
        train_kwargs = {"batch_size": args.train_size}
        test_kwargs = {"batch_size": args.test_size}
        MNIST = local_mnist(torch)
        transform = lambda x: torch.flatten((x - 0.1307) / 0.3081)  # noqa: E731 (ToTensor, Normalize, Lambda)
        train_loader = DataLoader(MNIST("./data/", train=True, download=True, transform=transform), **train_kwargs)
        test_loader = DataLoader(MNIST("./data/", train=False, download=True, transform=transform), **test_kwargs)
        net = Net([784, 64, 64])
        x, y = next(iter(train_loader))
        x, y = x.to(device), y.to(device)
        x_pos = overlay_y_on_x(x, y)
        y_neg = get_y_neg(y)
        x_neg = overlay_y_on_x(x, y_neg)
        net.train(x_pos, x_neg)
        print("train error:", 1.0 - net.predict(x).eq(y).float().mean().item())
        x_te, y_te = next(iter(test_loader))
        x_te, y_te = x_te.to(device), y_te.to(device)
        if args.save_model:
            torch.save(net.state_dict(), "mnist_ff.pt")
        print("test error:", 1.0 - net.predict(x_te).eq(y_te).float().mean().item())
    return {"printed": printed_lines(out), "state": list(net.state_dict()), "y_neg": y_neg.tolist()}


def test_mnist_forward_forward_example():
    ref, got = compare_program(forward_forward_main)
    printed = got["printed"]
    assert printed[0] == "training layer:  0" and printed.count("training layer:  1") == 1
    assert sum(line.startswith("Loss: ") for line in printed) == 6
    assert printed[-2].startswith("train error: ") and printed[-1].startswith("test error: ")
    assert got["state"] == []  # the layers live in a plain list: not submodules
