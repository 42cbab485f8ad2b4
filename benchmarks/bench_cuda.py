"""The GPU benchmark: sgemm, vector add against a device-to-device copy, the sum of 256M
floats, softmax and cumsum of 8192x8192 and a transposed add (as bandwidth), the launch
latency of a tiny add, the cached allocation latency (a 1 MiB tensor made and dropped) and the
seed network's forward latency, each beside PyTorch on the same GPU. Prints a table and writes
it (and a JSON copy) into the folder given as the first argument, if any.

Timing: wall clock around n calls, with a synchronize before and after; throughput rows take
the best of `repeats` rounds, latency rows of the allocator and the seed network the median."""
import json
import os
import statistics
import sys
import time

import minitorch

try:
    import torch
except ImportError:  # the table then has no PyTorch column
    torch = None


def timed(fn, sync, n, repeats=5):
    """Best seconds per call of fn over `repeats` rounds of n calls."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def median_us(fn, sync, n=200, rounds=11):
    """Median microseconds per call of fn over `rounds` rounds of n calls."""
    fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times) * 1e6


def seed_network(lib, device):
    """The seed network of python -m minitorch and its (1, 4) input, on device."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    return model, lib.randn(1, 4).to(device)


def sgemm(lib, sync, device, n):
    a = lib.randn(n, n).to(device) if lib is minitorch else lib.randn(n, n, device=device)
    b = lib.randn(n, n).to(device) if lib is minitorch else lib.randn(n, n, device=device)
    return {f"sgemm {n}^3 (TFLOP/s)": 2 * n**3 / timed(lambda: a @ b, sync, 5 if n == 4096 else 2) / 1e12}


def bandwidth(lib, sync, device):
    n = 256 << 20
    x = lib.ones(n, device=device)
    y = lib.ones(n, device=device)
    z = lib.empty(n, device=device)
    s_add = timed(lambda: lib.add(x, y), sync, 10)
    s_copy = timed(lambda: z.copy_(x), sync, 10)
    return {"add 256M f32 (GB/s)": 3 * 4 * n / s_add / 1e9, "copy 256M f32 (GB/s)": 2 * 4 * n / s_copy / 1e9}


def reductions(lib, sync, device):
    """The grid-wide sum, the row kernels (softmax a row per block, the block scan) and a
    strided add (32-bit indexing, fast dividers), as bandwidth: bytes read and written."""
    n = 256 << 20
    x = lib.ones(n, device=device)
    m = lib.ones(8192, 8192, device=device)
    t = lib.ones(8192, 8192, device=device).t()
    out = {"sum 256M f32 (GB/s)": 4 * n / timed(lambda: x.sum(), sync, 10) / 1e9}
    out["softmax 8192^2 (GB/s)"] = 2 * 4 * m.numel() / timed(lambda: lib.softmax(m, -1), sync, 10) / 1e9
    out["cumsum 8192^2 (GB/s)"] = 2 * 4 * m.numel() / timed(lambda: m.cumsum(-1), sync, 10) / 1e9
    out["add transposed 64M (GB/s)"] = 3 * 4 * m.numel() / timed(lambda: m + t, sync, 10) / 1e9
    return out


def latencies(lib, sync, device):
    t = lib.ones(1, device=device)
    out = {"tiny add (us/op)": timed(lambda: t + t, sync, 2000) * 1e6}
    # A 1 MiB float32 tensor made and dropped: the caching allocator's hit path, no cudaMalloc.
    out["cached alloc 1 MiB (us)"] = median_us(lambda: lib.empty(1 << 18, device=device), sync, 1000)
    model, x = seed_network(lib, device)
    out["seed forward (us)"] = median_us(lambda: model(x), sync, 500)
    return out


def cases(lib, sync, device):
    """Every row; a group that raises is reported and left out, so the others still print."""
    out = {}
    groups = [lambda: sgemm(lib, sync, device, 4096), lambda: sgemm(lib, sync, device, 8192),
              lambda: bandwidth(lib, sync, device), lambda: reductions(lib, sync, device),
              lambda: latencies(lib, sync, device)]
    for group in groups:
        try:
            out.update(group())
        except Exception as e:  # a first run on a new machine: keep the rows that work
            print(f"{lib.__name__}: a benchmark failed: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def main():
    if not minitorch.cuda.is_available():
        sys.exit(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}")
    mine = cases(minitorch, minitorch.cuda.synchronize, "cuda")
    theirs = cases(torch, torch.cuda.synchronize, "cuda") if torch is not None and torch.cuda.is_available() else {}
    lines = [f"GPU: {minitorch.cuda.get_device_name()}",
             f"{'case':<26}{'minitorch':>12}{'PyTorch':>12}{'ratio':>8}"]
    for k, v in mine.items():
        p = theirs.get(k)
        ratio = f"{v / p:.2f}" if p else "-"
        lines.append(f"{k:<26}{v:>12.2f}{(f'{p:.2f}' if p else '-'):>12}{ratio:>8}")
    if "add 256M f32 (GB/s)" in mine:
        lines.append(f"elementwise add / copy bandwidth: {mine['add 256M f32 (GB/s)'] / mine['copy 256M f32 (GB/s)']:.2f}")
    text = "\n".join(lines)
    print(text)
    if len(sys.argv) > 1:
        os.makedirs(sys.argv[1], exist_ok=True)
        with open(os.path.join(sys.argv[1], "bench_cuda.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(sys.argv[1], "bench_cuda.json"), "w") as f:
            json.dump({"minitorch": mine, "pytorch": theirs}, f, indent=1)


if __name__ == "__main__":
    main()
