"""Trains an MLP to read handwritten digits, written as PyTorch code (`import minitorch as torch`).

The data is scikit-learn's bundled 8x8 digits (1,797 images, loaded from the installed package:
no download). 80% train, 20% held out; Adam, cross-entropy, a tqdm progress bar with the loss;
prints the held-out accuracy. Run: python examples/train_digits.py [--epochs N]
Needs scikit-learn and tqdm: `make demo` installs them (or pip install scikit-learn tqdm).
"""
import argparse

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import minitorch as torch
from minitorch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=15)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()

torch.manual_seed(0)
digits = load_digits()
X = (digits.data / 16.0).astype(np.float32)  # pixel intensities 0..16 -> 0..1
y = digits.target.astype(np.int64)
order = np.random.default_rng(0).permutation(len(X))
split = int(0.8 * len(X))
train, test = order[:split], order[split:]
X_train, y_train = torch.tensor(X[train]), torch.tensor(y[train])
X_test, y_test = torch.tensor(X[test]), torch.tensor(y[test])

model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
loss_fn = nn.CrossEntropyLoss()

steps_per_epoch = (len(train) + args.batch_size - 1) // args.batch_size
with tqdm(total=args.epochs * steps_per_epoch, desc="training", unit="step") as bar:
    for epoch in range(args.epochs):
        perm = torch.randperm(len(train))
        for start in range(0, len(train), args.batch_size):
            idx = perm[start:start + args.batch_size]
            loss = loss_fn(model(X_train[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}")
            bar.update()

model.eval()
with torch.no_grad():
    predicted = model(X_test).argmax(dim=1)
accuracy = (predicted == y_test).float().mean().item()
print(f"held-out accuracy: {accuracy:.2%} on {len(test)} images")
