"""Throughput of large ops: minitorch next to NumPy and PyTorch, in one process.

Cases: add and mul on 16M float32 with the memory bandwidth they imply (two
reads and a write per element), sum over 16M, softmax over (4096, 1024) rows, sgemm at 1024^3
and 2048^3, and conv2d on (32, 64, 56, 56) with 64 3x3 filters and padding 1 (no NumPy twin).
Best of several repeats; quote the ratios. Each thread count runs in its own process
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, which NumPy's OpenBLAS reads too, and
torch.set_num_threads), as bench_cpu.py's cases.
Run: PYTHONPATH=. python benchmarks/bench_ops.py [--quick] [--threads 1,2]
"""
import sys
import time

import numpy as np

from bench_cpu import libraries, per_thread_count

QUICK = "--quick" in sys.argv


def best_seconds(fn, repeats=3 if QUICK else 7):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def make_cases(libs):
    n = (1 << 22) if QUICK else (1 << 24)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    cases = []
    elem_bytes = 3 * 4 * n  # two inputs read, one output written

    def tensors(lib, *arrays):
        return [np.asarray(x) if lib is np else lib.from_numpy(x) for x in arrays]

    for label, op in (("add", lambda x, y: x + y), ("mul", lambda x, y: x * y)):
        fns = {}
        for name, lib in libs.items():
            x, y = tensors(lib, a, b)
            fns[name] = lambda x=x, y=y, op=op: op(x, y)
        cases.append((f"{label} {n >> 20}M float32", fns, lambda s: f"{elem_bytes / s / 1e9:6.1f} GB/s"))
    fns = {}
    for name, lib in libs.items():
        (x,) = tensors(lib, a)
        fns[name] = (lambda x=x: x.sum())
    cases.append((f"sum {n >> 20}M float32", fns, lambda s: f"{4 * n / s / 1e9:6.1f} GB/s"))
    rows = rng.standard_normal((1024 if QUICK else 4096, 1024), np.float32)
    fns = {}
    for name, lib in libs.items():
        if lib is np:
            fns[name] = lambda x=rows: _np_softmax(x)
        else:
            (x,) = tensors(lib, rows)
            fns[name] = lambda x=x: x.softmax(-1)
    nbytes = 2 * rows.nbytes  # one read, one write
    cases.append((f"softmax {rows.shape}", fns, lambda s: f"{nbytes / s / 1e9:6.1f} GB/s"))
    for size in ((512, 1024) if QUICK else (1024, 2048)):
        m1 = rng.standard_normal((size, size), np.float32)
        m2 = rng.standard_normal((size, size), np.float32)
        fns = {}
        for name, lib in libs.items():
            x, y = tensors(lib, m1, m2)
            fns[name] = lambda x=x, y=y: x @ y
        flops = 2 * size**3
        cases.append((f"sgemm {size}^3", fns, lambda s, f=flops: f"{f / s / 1e9:6.1f} GFLOP/s"))
    n_img = 8 if QUICK else 32
    img = rng.standard_normal((n_img, 64, 56, 56), np.float32)
    w = rng.standard_normal((64, 64, 3, 3), np.float32) * 0.05
    fns = {}
    for name, lib in libs.items():
        if lib is not np:  # NumPy has no convolution
            x, k = tensors(lib, img, w)
            fns[name] = lambda x=x, k=k, lib=lib: lib.nn.functional.conv2d(x, k, padding=1)
    conv_flops = 2 * n_img * 64 * 56 * 56 * 64 * 9
    cases.append((f"conv2d ({n_img},64,56,56) 3x3", fns, lambda s: f"{conv_flops / s / 1e9:6.1f} GFLOP/s"))
    return cases


def run_one(threads):
    libs = dict(libraries(threads), numpy=np)
    for label, fns, rate in make_cases(libs):
        t = {name: best_seconds(fn) for name, fn in fns.items()}
        cell = lambda name: f"{t[name] * 1e3:8.2f} ms {rate(t[name])}" if name in t else f"{'-':>22}"
        ratio = lambda name: f"{t[name] / t['minitorch']:9.2f}" if name in t else f"{'-':>9}"
        print(f"{threads:>2} {label:<22} {cell('minitorch'):>22} {cell('numpy'):>22} {cell('torch'):>22} "
              f"{ratio('numpy')} {ratio('torch')}", flush=True)


def main():
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<22} {'minitorch':>22} {'numpy':>22} {'torch':>22} {'mt/numpy':>9} {'mt/torch':>9}",
        "(time per call, and the rate it implies; ratios are minitorch's throughput over the other's)"])


if __name__ == "__main__":
    main()
