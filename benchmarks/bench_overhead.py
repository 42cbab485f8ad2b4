"""Per-call overhead: minitorch next to NumPy and PyTorch, in one process.

Cases are tiny on purpose, so the time is the cost of getting from Python to the kernel and
back (argument parsing, dispatch, output allocation), not arithmetic. Prints per-call times
(best of several repeats) and ratios; quote the ratios, the machines are shared and noisy.
Run: python benchmarks/bench_overhead.py [--quick]
"""
import sys
import timeit

import numpy as np

import minitorch

try:
    import torch
except ImportError:
    torch = None


def per_call_us(fn, number):
    fn()
    repeats = 3 if "--quick" in sys.argv else 7
    return min(timeit.repeat(fn, number=number, repeat=repeats)) / number * 1e6


def seed(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def cases():
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((8, 4), np.float32), rng.standard_normal(8, dtype=np.float32)
    w2, b2 = rng.standard_normal((2, 8), np.float32), rng.standard_normal(2, dtype=np.float32)
    x = rng.standard_normal((1, 4), np.float32)
    one = np.ones(1, np.float32)

    def numpy_seed():
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2

    libs = {"minitorch": minitorch}
    if torch is not None:
        libs["torch"] = torch
    out = {}
    for name, lib in libs.items():
        a, b = lib.tensor(one), lib.tensor(one)
        lx, lw, lb = lib.tensor(x), lib.tensor(w1), lib.tensor(b1)
        net = seed(lib)
        lin = lib.nn.functional.linear
        with lib.no_grad():
            out.setdefault("add, 1 element (a + b)", {})[name] = lambda a=a, b=b: a + b
            # Default arguments bind this iteration's objects (a closure would see the last lib's).
            out.setdefault("linear, 1x4 @ 4x8 + bias", {})[name] = lambda lin=lin, lx=lx, lw=lw, lb=lb: lin(lx, lw, lb)
            out.setdefault("seed network forward", {})[name] = lambda net=net, lx=lx: net(lx)
    out["add, 1 element (a + b)"]["numpy"] = lambda: one + one
    out["linear, 1x4 @ 4x8 + bias"]["numpy"] = lambda: x @ w1.T + b1
    out["seed network forward"]["numpy"] = numpy_seed
    return out


def main():
    number = 2000 if "--quick" in sys.argv else 20000
    rows = []
    for case, fns in cases().items():
        t = {lib: per_call_us(fn, number) for lib, fn in fns.items()}
        rows.append((case, t))
    print(f"{'case':<28} {'minitorch':>11} {'numpy':>9} {'torch':>9} {'mt/numpy':>9} {'mt/torch':>9}")
    for case, t in rows:
        mt, npy, th = t["minitorch"], t.get("numpy"), t.get("torch")
        fmt = lambda v: f"{v:8.2f}us" if v is not None else f"{'-':>10}"
        ratio = lambda a, b: f"{a / b:9.2f}" if b else f"{'-':>9}"
        print(f"{case:<28} {fmt(mt):>11} {fmt(npy):>9} {fmt(th):>9} {ratio(mt, npy)} {ratio(mt, th)}")
    if torch is None:
        print("(PyTorch is not installed: install torch==2.13.0 for the comparison)")


if __name__ == "__main__":
    main()
