"""One training step (forward, loss, backward, SGD step): minitorch next to PyTorch, in one process.

Cases: the seed network (Linear(4, 8) - ReLU - Linear(8, 2), MSE loss) at batch 1, where the
time is per-op overhead, and an MLP 64-256-10 (cross-entropy) at batch 128, where it is
arithmetic. Both libraries start from the same weights and data. Prints per-step times (best of
several repeats, the libraries alternating) and minitorch's speed over PyTorch's; quote the
ratios. Each thread count runs in its own process (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
torch.set_num_threads), as bench_cpu.py's cases.
Run: PYTHONPATH=. python benchmarks/bench_train.py [--quick] [--threads 1,2]
"""
import sys

import numpy as np

from bench_cpu import alternate, libraries, per_thread_count

QUICK = "--quick" in sys.argv


def steps(step, number):
    """number training steps in one call, timed together."""
    def run():
        for _ in range(number):
            step()
    return run


def build(lib, sizes, seed_weights):
    layers = []
    for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = lib.nn.Linear(i, o)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(seed_weights[2 * k]))
            lin.bias.copy_(lib.tensor(seed_weights[2 * k + 1]))
        layers += [lin, lib.nn.ReLU()]
    return lib.nn.Sequential(*layers[:-1])


def step_fn(lib, sizes, x, target, loss_name):
    rng = np.random.default_rng(0)
    weights = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        weights += [rng.standard_normal((o, i), np.float32) / np.sqrt(i), np.zeros(o, np.float32)]
    model = build(lib, sizes, weights)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = getattr(lib.nn, loss_name)()
    xt, tt = lib.tensor(x), lib.tensor(target)

    def step():
        loss = loss_fn(model(xt), tt)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def run_one(threads):
    libs = libraries(threads)
    rng = np.random.default_rng(1)
    cases = [
        ("seed network, batch 1", (4, 8, 2), rng.standard_normal((1, 4), np.float32),
         rng.standard_normal((1, 2), np.float32), "MSELoss", 2000),
        ("MLP 64-256-10, batch 128", (64, 256, 10), rng.standard_normal((128, 64), np.float32),
         rng.integers(0, 10, 128), "CrossEntropyLoss", 200),
    ]
    for label, sizes, x, target, loss_name, number in cases:
        number = number // 10 if QUICK else number
        fns = {name: steps(step_fn(lib, sizes, x, target, loss_name), number) for name, lib in libs.items()}
        t = {name: best / number * 1e6 for name, best in alternate(fns, 3 if QUICK else 7).items()}
        ratio = f"{t['torch'] / t['minitorch']:16.2f}" if "torch" in t else f"{'-':>16}"
        torch_cell = f"{t['torch']:9.1f} us" if "torch" in t else f"{'-':>12}"
        print(f"{threads:>2} {label:<28} {t['minitorch']:9.1f} us {torch_cell} {ratio}", flush=True)


def main():
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<28} {'minitorch':>12} {'torch':>12} {'torch/minitorch':>16}",
        "(time per step; the last column is minitorch's speed relative to PyTorch's, > 1 is faster)"])


if __name__ == "__main__":
    main()
