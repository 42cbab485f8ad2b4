"""torch.jit.trace's replay next to the eager module, minitorch and PyTorch side by side in one
process, one thread: per-call thread CPU time (time.thread_time, best of several repeats) of a
small MLP and a small CNN, eager and traced, and the time to trace and to save + load. Quote the
ratios: the machines are shared and noisy.
Run: python benchmarks/bench_jit.py [--quick]
"""
import io
import sys
import time
import warnings

import numpy as np

import minitorch

try:
    import torch
except ImportError:
    torch = None

warnings.filterwarnings("ignore", category=DeprecationWarning)


def per_call_us(fn, number):
    fn()
    best = float("inf")
    for _ in range(3 if "--quick" in sys.argv else 7):
        start = time.thread_time()
        for _ in range(number):
            fn()
        best = min(best, time.thread_time() - start)
    return best / number * 1e6


def mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).eval()


def cnn(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 13 * 13, 10)).eval()


def rows():
    rng = np.random.default_rng(0)
    inputs = {"mlp": rng.standard_normal((8, 32), np.float32), "cnn": rng.standard_normal((4, 1, 28, 28), np.float32)}
    libs = [("minitorch", minitorch)] + ([("torch", torch)] if torch is not None else [])
    number = 50 if "--quick" in sys.argv else 300
    for name, make in (("mlp", mlp), ("cnn", cnn)):
        for label, lib in libs:
            model = make(lib)
            x = lib.from_numpy(inputs[name])
            with lib.no_grad():
                traced = lib.jit.trace(model, x)
                eager_us = per_call_us(lambda: model(x), number)
                traced_us = per_call_us(lambda: traced(x), number)
            trace_us = per_call_us(lambda: lib.jit.trace(model, x, check_trace=False), max(5, number // 20))

            def round_trip():
                buf = io.BytesIO()
                lib.jit.save(traced, buf)
                buf.seek(0)
                lib.jit.load(buf)
            save_load_us = per_call_us(round_trip, max(5, number // 20))
            yield name, label, eager_us, traced_us, trace_us, save_load_us


def main():
    if torch is not None:
        torch.set_num_threads(1)
    minitorch.set_num_threads(1)
    print(f"{'case':5} {'library':10} {'eager us':>10} {'traced us':>10} {'traced/eager':>13} {'trace us':>10} "
          f"{'save+load us':>13}")
    got = {}
    for name, label, eager, traced, trace, save_load in rows():
        got[name, label] = (eager, traced, trace, save_load)
        print(f"{name:5} {label:10} {eager:10.1f} {traced:10.1f} {traced / eager:13.2f} {trace:10.1f} "
              f"{save_load:13.1f}")
    for name in ("mlp", "cnn"):
        if (name, "torch") in got:
            m, t = got[name, "minitorch"], got[name, "torch"]
            print(f"{name}: minitorch/PyTorch  eager {m[0] / t[0]:.2f}  traced {m[1] / t[1]:.2f}  "
                  f"trace {m[2] / t[2]:.2f}  save+load {m[3] / t[3]:.2f}")


if __name__ == "__main__":
    main()
