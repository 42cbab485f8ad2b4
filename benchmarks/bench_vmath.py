"""float32 exp, log, tanh, sigmoid, softmax, log_softmax and silu of (1024, 1024) (issue 21): minitorch's AVX-512 loops
(cpu/vmath_avx512.c, where the CPU has AVX-512), its portable loops (cpu/vmath.h, what AVX2-only
CPUs run; minitorch._C._set_vmath_avx512(False)) and PyTorch 2.13's, called in turn (A, B, C, A,
...) in one process at 1 and at 2 threads, each keeping its best of many repeats. Times are the
calling thread's CPU time (time.thread_time) at 1 thread, where the wall clock of a shared
machine counts other jobs' turns, and wall time at 2 threads (CPU time of one thread would hide
the second). Ratios are minitorch's time over PyTorch's (below 1 is faster).
softmax and log_softmax run over the last dim, silu, softplus, mish, elu, selu and logsigmoid are\ntorch.nn.functional's with their defaults.
Run: PYTHONPATH=. python benchmarks/bench_vmath.py [--repeats N] [--ops exp,sigmoid,...]
"""
import sys
import time

import numpy as np

import bench_cpu
import minitorch

try:
    import torch
except ImportError:
    torch = None


# op name: call(library, tensor), the same for minitorch and torch
CALLS = {
    "exp": lambda lib, t: t.exp(),
    "log": lambda lib, t: t.log(),
    "tanh": lambda lib, t: t.tanh(),
    "sigmoid": lambda lib, t: t.sigmoid(),
    "softmax": lambda lib, t: t.softmax(-1),
    "logsoftmax": lambda lib, t: t.log_softmax(-1),
    "silu": lambda lib, t: lib.nn.functional.silu(t),
    "softplus": lambda lib, t: lib.nn.functional.softplus(t),
    "mish": lambda lib, t: lib.nn.functional.mish(t),
    "elu": lambda lib, t: lib.nn.functional.elu(t),
    "selu": lambda lib, t: lib.nn.functional.selu(t),
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
    # log_sigmoid's backward kernel with g = x (PyTorch's aten op takes the forward's buffer too)
    "logsigmoid_bw": lambda lib, t: (lib._C.log_sigmoid_backward(t, t) if lib.__name__ == "minitorch"
                                     else lib.ops.aten.log_sigmoid_backward(t, t, t)),
}


def main():
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 60
    ops = sys.argv[sys.argv.index("--ops") + 1].split(",") if "--ops" in sys.argv else list(CALLS)
    threads_list = (1,) if "--one-thread" in sys.argv else (1, 2)
    x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32) * 3
    has_avx512 = minitorch._C._set_vmath_avx512(True)
    print(f"{'th':>2} {'op':<10} {'avx512':>8} {'portable':>9} {'torch':>8} {'avx512/torch':>13} "
          f"{'portable/torch':>15}   (ms; AVX-512 loops {'on' if has_avx512 else 'absent'})")
    for threads in threads_list:
        minitorch.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        bench_cpu.CLOCK = time.thread_time if threads == 1 else time.perf_counter  # alternate's clock
        for op in ops:
            a = np.abs(x) + np.float32(0.1) if op == "log" else x
            m = minitorch.tensor(a)
            fns = {}
            if has_avx512:
                fns["avx512"] = lambda: (minitorch._C._set_vmath_avx512(True), CALLS[op](minitorch, m))
            fns["portable"] = lambda: (minitorch._C._set_vmath_avx512(False), CALLS[op](minitorch, m))
            if torch is not None:
                t = torch.tensor(a)
                fns["torch"] = lambda: CALLS[op](torch, t)
            best = bench_cpu.alternate(fns, repeats)
            minitorch._C._set_vmath_avx512(True)
            ms = {k: f"{best[k] * 1e3:.3f}" if k in best else "-" for k in ("avx512", "portable", "torch")}
            ratio = {k: f"{best[k] / best['torch']:.2f}x" if k in best and "torch" in best else "-"
                     for k in ("avx512", "portable")}
            print(f"{threads:>2} {op:<10} {ms['avx512']:>8} {ms['portable']:>9} {ms['torch']:>8} "
                  f"{ratio['avx512']:>13} {ratio['portable']:>15}")


if __name__ == "__main__":
    main()
