"""Backward passes on two Python threads at once against one thread running both in turn.

Each of two MLPs has its own graph (built once, retain_graph=True); the backward of both is
timed on one thread, one after the other, then on two threads, one graph each. Kernels run
single-threaded (set_num_threads(1)), so the ratio shows the engine's concurrency alone: about
2x with two free cores, 1x when runs take turns. Best of repeats; no time is asserted.

    PYTHONPATH=. python3 benchmarks/bench_backward_threads.py [--width 512] [--repeats 5]
"""
import argparse
import threading
import time

import numpy as np


def mlp_loss(lib, width, batch, seed):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((batch, width), dtype=np.float32))
    ws = [lib.tensor(rng.standard_normal((width, width), dtype=np.float32) / width ** 0.5, requires_grad=True)
          for _ in range(4)]
    h = x
    for w in ws:
        h = (h @ w).tanh()
    return h.pow(2).mean()


def best(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(lib, width, batch, repeats, steps):
    losses = [mlp_loss(lib, width, batch, s) for s in range(2)]

    def run(loss):
        for _ in range(steps):
            loss.backward(retain_graph=True)

    def serial():
        for loss in losses:
            run(loss)

    def threaded():
        ts = [threading.Thread(target=run, args=(loss,)) for loss in losses]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    serial()  # warm up
    return best(serial, repeats), best(threaded, repeats)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    libs = {}
    import minitorch

    libs["minitorch"] = minitorch
    try:
        import torch

        libs["PyTorch"] = torch
    except ImportError:
        pass
    print(f"{'library':<10} {'one thread, both (ms)':>22} {'two threads (ms)':>17} {'ratio':>6}")
    for name, lib in libs.items():
        lib.set_num_threads(1)
        one, two = measure(lib, args.width, args.batch, args.repeats, args.steps)
        print(f"{name:<10} {one * 1e3:>22.1f} {two * 1e3:>17.1f} {one / two:>6.2f}")


if __name__ == "__main__":
    main()
