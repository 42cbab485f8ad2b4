"""DataLoader throughput beside PyTorch's: one epoch over 6000 MNIST-sized float samples
(TensorDataset, and a Python Dataset returning NumPy arrays), batch 64, shuffled, in the main
process and with 2 workers. Prints a table of samples per second (best of 3 epochs)."""
import time

import numpy as np

import minitorch

try:
    import torch
except ImportError:  # the table then has no PyTorch column
    torch = None

N, BATCH = 6000, 64
rng = np.random.default_rng(0)
X = rng.random((N, 1, 28, 28), dtype=np.float32)
Y = rng.integers(0, 10, N)


class NumpyDataset:
    def __getitem__(self, i):
        return X[i], int(Y[i])

    def __len__(self):
        return N


def datasets(lib):
    return {"TensorDataset": lib.utils.data.TensorDataset(lib.from_numpy(X), lib.from_numpy(Y)),
            "NumPy samples": NumpyDataset()}


def samples_per_second(lib, dataset, num_workers):
    loader = lib.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=num_workers,
                                       persistent_workers=num_workers > 0)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for batch in loader:
            pass
        best = min(best, time.perf_counter() - t0)
    return N / best


def main():
    libs = [minitorch] + ([torch] if torch is not None else [])
    print(f"{'case':<30}{'minitorch':>12}{'PyTorch':>12}{'ratio':>8}   (samples/s)")
    for name in datasets(minitorch):
        for workers in (0, 2):
            rates = [samples_per_second(lib, datasets(lib)[name], workers) for lib in libs]
            theirs = f"{rates[1]:>12.0f}{rates[0] / rates[1]:>8.2f}" if len(rates) > 1 else f"{'-':>12}{'-':>8}"
            print(f"{name + f', {workers} workers':<30}{rates[0]:>12.0f}{theirs}")


if __name__ == "__main__":
    main()
