"""CPU kernels where models spend their time (issue 21): minitorch beside PyTorch and NumPy.

Cases: a 256^3 matmul followed by a 262k-element add (one thread pool or two), an LSTM's small
products (its gates and their backward) and an attention-sized bmm, a (256, 1024) add
of a transposed operand, float32 exp of 1M elements, add and mul of 4M float32 (48 MiB moved a
call) and add_ in place, out= (mul into out, add into its input, a 256^3 matmul, a sum over
dim 0 of (2048, 2048)), float32 log, log1p, tanh, erf, sigmoid of 1M elements and gelu (both forms), silu, mish,
hardswish, softplus, elu and leaky_relu forward and backward, conv2d (32, 3, 32, 32) with 64 3x3 filters and a bias, conv3d (8, 4, 16, 16, 16) with 16
3x3x3 filters and a bias, a GPT-style block
(B=8, T=64, C=128) forward and forward+backward, max_pool2d (32, 64, 56, 56) 3x3/2 forward and
backward, layer_norm and batch_norm forward and backward, and cross_entropy (4096x1000) forward
and backward. Each thread count runs in its own process (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
and torch.set_num_threads), minitorch and PyTorch alternate call by call and each keeps its best of
many repeats; the ratio is minitorch's time over PyTorch's (below 1 is faster). NumPy's cases run
first, in a process of their own: after each of its matmuls NumPy's OpenBLAS threads (a pool of
its own) spin for a while, and in one process they took the two cores from whichever library ran
next (minitorch's or PyTorch's matmul + add took 17x its time in that slot at two threads). Quote ratios: the
machine is shared. Run: PYTHONPATH=. python benchmarks/bench_cpu.py [--quick] [--threads 1,2]
[--only SUBSTRING] [--cpu-time] (the scripts that import this one take the same options)
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

QUICK = "--quick" in sys.argv
# --cpu-time: each call timed by this process's CPU time (time.process_time) instead of the wall
# clock. On a loaded shared machine the wall clock counts the other jobs' turns on the cores (a
# case swung 40x between runs); CPU time does not. At 2 threads it sums both threads' work, so it
# hides what the second thread gains (or loses to spinning): use it at 1 thread.
CLOCK = time.process_time if "--cpu-time" in sys.argv else time.perf_counter


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def alternate(fns, repeats):
    """Best seconds of each function (wall or, with --cpu-time, CPU), calling them in turn
    (A, B, C, A, B, C, ...)."""
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = CLOCK()
            fn()
            best[name] = min(best[name], CLOCK() - t0)
    return best


def backward_of(lib, y, inputs):
    """The gradients of y (weighted by ones) with respect to inputs, again and again."""
    g = lib.ones_like(y)
    return lambda: lib.autograd.grad(y, inputs, g, retain_graph=True)


def gpt_block(lib, params, x, backward):
    """Pre-norm block: x + attn(ln1(x)), then + mlp(ln2(x)); causal, 4 heads."""
    F = lib.nn.functional
    B, T, C = x.shape
    h = 4

    def run():
        y = F.layer_norm(x, (C,), params["ln1w"], params["ln1b"])
        q, k, v = F.linear(y, params["qkv"], params["qkvb"]).split(C, dim=-1)
        q, k, v = (t.reshape(B, T, h, C // h).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (C // h) ** 0.5)
        att = att.masked_fill(params["mask"], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        z = x + F.linear(y, params["proj"], params["projb"])
        y = F.layer_norm(z, (C,), params["ln2w"], params["ln2b"])
        out = z + F.linear(F.gelu(F.linear(y, params["fc"], params["fcb"])), params["fc2"], params["fc2b"])
        if backward:
            out.sum().backward()
        return out

    return run


def gpt_params(lib, rng, C, T, grad):
    shapes = {"ln1w": (C,), "ln1b": (C,), "qkv": (3 * C, C), "qkvb": (3 * C,), "proj": (C, C),
              "projb": (C,), "ln2w": (C,), "ln2b": (C,), "fc": (4 * C, C), "fcb": (4 * C,),
              "fc2": (C, 4 * C), "fc2b": (C,)}
    p = {k: lib.tensor((rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32), requires_grad=grad)
         for k, s in shapes.items()}
    p["mask"] = lib.tensor(np.triu(np.ones((T, T), bool), 1))
    return p


def make_cases(libs):
    rng = np.random.default_rng(0)
    f32 = np.float32
    cases = []

    def tensors(lib, *arrays, grad=False):
        return [lib.tensor(a, requires_grad=grad) for a in arrays]

    def forward_backward(label, arrays, fn):
        """Two cases: fn(lib, *tensors) of the arrays, and the backward to every input."""
        for backward in (False, True):
            fns = {}
            for name, lib in libs.items():
                if lib is not np:
                    xs = tensors(lib, *arrays, grad=backward)
                    if backward:
                        fns[name] = backward_of(lib, fn(lib, *xs), xs)
                    else:
                        fns[name] = lambda xs=xs, lib=lib: fn(lib, *xs)
            cases.append((f"{label} {'backward' if backward else 'forward'}", fns))

    m1, m2 = rng.standard_normal((256, 256), f32), rng.standard_normal((256, 256), f32)
    v1 = rng.standard_normal(1 << 18, f32)
    fns = {}
    for name, lib in libs.items():
        if lib is np:
            fns[name] = lambda: (m1 @ m2, v1 + v1)
        else:
            a, b, v = tensors(lib, m1, m2, v1)
            fns[name] = lambda a=a, b=b, v=v: (a @ b, v + v)
    cases.append(("matmul 256^3 + add 262k", fns))

    # small products (a generator of their own: the cases after them keep their data): an LSTM's
    # gates h (32, 256) @ W_hh^T and its backward's dgates (32, 1024) @ W_hh, W_hh (1024, 256);
    # attention-sized bmm (64, 128, 64) @ (64, 64, 128)
    grng = np.random.default_rng(21)
    h, w_hh, dg = (grng.standard_normal(s, f32) for s in ((32, 256), (1024, 256), (32, 1024)))
    b1, b2 = grng.standard_normal((64, 128, 64), f32), grng.standard_normal((64, 64, 128), f32)
    products = {"mm LSTM gates (32, 256) @ (1024, 256)^T": ((h, w_hh), lambda p, q: p @ q.T),
                "mm LSTM dgates (32, 1024) @ (1024, 256)": ((dg, w_hh), lambda p, q: p @ q),
                "bmm (64, 128, 64) @ (64, 64, 128)": ((b1, b2), lambda p, q: p @ q)}
    for label, (arrays, fn) in products.items():
        fns = {}
        for name, lib in libs.items():
            xs = arrays if lib is np else tensors(lib, *arrays)
            fns[name] = lambda xs=xs, fn=fn: fn(*xs)
        cases.append((label, fns))

    xt, yt = rng.standard_normal((256, 1024), f32), rng.standard_normal((1024, 256), f32)
    fns = {}
    for name, lib in libs.items():
        if lib is np:
            fns[name] = lambda: xt + yt.T
        else:
            x, y = tensors(lib, xt, yt)
            fns[name] = lambda x=x, y=y: x + y.t()
    cases.append(("add (256, 1024) + transposed", fns))

    ex = rng.standard_normal((1024, 1024), f32) * 10
    fns = {}
    for name, lib in libs.items():
        (x,) = [ex] if lib is np else tensors(lib, ex)
        fns[name] = lambda x=x, lib=lib: lib.exp(x)
    cases.append(("exp (1024, 1024) float32", fns))

    # memory-bound elementwise: 4M float32, two operands read and one written (48 MiB a call)
    va, vb = rng.standard_normal(1 << 22, f32), rng.standard_normal(1 << 22, f32)
    for label, op in (("add", lambda x, y: x + y), ("mul", lambda x, y: x * y)):
        fns = {}
        for name, lib in libs.items():
            x, y = (va, vb) if lib is np else tensors(lib, va, vb)
            fns[name] = lambda x=x, y=y, op=op: op(x, y)
        cases.append((f"{label} 4M float32 (48 MiB)", fns))
    # in place, as an optimizer's step: x += y over 4M float32 (the output is an input)
    fns = {}
    for name, lib in libs.items():
        if lib is np:
            fns[name] = lambda x=va.copy(), y=vb: np.add(x, y, out=x)
        else:
            x, y = tensors(lib, va, vb)
            fns[name] = lambda x=x, y=y: x.add_(y)
    cases.append(("add_ 4M float32 in place", fns))
    # out=, as optimizer-style code writes it: the result straight into out (no copy of it after)
    mo, ms = rng.standard_normal((256, 256), f32), rng.standard_normal((2048, 2048), f32)
    out_cases = {
        "mul 4M float32 out=o": ((va, vb), (1 << 22,), lambda L, x, y, o: L.multiply(x, y, out=o)),
        "add 4M float32 out=x (an input)": ((va, vb), None, lambda L, x, y, o: L.add(x, y, out=x)),
        "mm 256^3 out=c": ((m1, m2), (256, 256), lambda L, x, y, o: L.matmul(x, y, out=o)),
        "sum (2048, 2048) dim 0 out=o": ((ms, ms), (2048,), lambda L, x, y, o: L.sum(x, 0, out=o)),
    }
    for label, (arrays, shape, fn) in out_cases.items():
        fns = {}
        for name, lib in libs.items():
            x, y = [a.copy() for a in arrays] if lib is np else tensors(lib, *arrays)
            o = None if shape is None else (np.empty(shape, f32) if lib is np else lib.empty(shape))
            fns[name] = lambda x=x, y=y, o=o, lib=lib, fn=fn: fn(lib, x, y, o)
        cases.append((label, fns))

    # vmath.h's float32 transcendentals on (1024, 1024); NumPy where it has the function
    ux = rng.standard_normal((1024, 1024), f32) * 3
    unary = {"log": (lambda lib, x: lib.log(x), True), "log1p": (lambda lib, x: lib.log1p(x), True),
             "tanh": (lambda lib, x: lib.tanh(x), False), "erf": (lambda lib, x: lib.erf(x), False),
             "sigmoid": (lambda lib, x: lib.sigmoid(x), False)}
    for label, (fn, positive) in unary.items():
        fns = {}
        for name, lib in libs.items():
            if lib is np and label in ("erf", "sigmoid"):
                continue
            (x,) = [np.abs(ux) if positive else ux] if lib is np else tensors(lib, np.abs(ux) if positive else ux)
            fns[name] = lambda x=x, lib=lib, fn=fn: fn(lib, x)
        cases.append((f"{label} (1024, 1024) float32", fns))
    activations = {"gelu": lambda F, x: F.gelu(x), "gelu tanh": lambda F, x: F.gelu(x, approximate="tanh"),
                   "silu": lambda F, x: F.silu(x), "mish": lambda F, x: F.mish(x),
                   "hardswish": lambda F, x: F.hardswish(x), "softplus": lambda F, x: F.softplus(x),
                   "elu": lambda F, x: F.elu(x), "leaky_relu": lambda F, x: F.leaky_relu(x)}
    for label, fn in activations.items():
        forward_backward(f"{label} (1024, 1024) float32", [ux],
                         lambda lib, x, fn=fn: fn(lib.nn.functional, x))

    cimg = rng.standard_normal((32, 3, 32, 32), f32)
    cw, cb = rng.standard_normal((64, 3, 3, 3), f32), rng.standard_normal(64, f32)
    forward_backward("conv2d (32, 3, 32, 32) 64 3x3 bias", [cimg, cw, cb],
                     lambda lib, x, wt, bt: lib.nn.functional.conv2d(x, wt, bt, padding=1))
    vol = rng.standard_normal((8, 4, 16, 16, 16), f32)
    vw, vb = rng.standard_normal((16, 4, 3, 3, 3), f32), rng.standard_normal(16, f32)
    forward_backward("conv3d (8, 4, 16, 16, 16) 16 3x3x3 bias", [vol, vw, vb],
                     lambda lib, x, wt, bt: lib.nn.functional.conv3d(x, wt, bt, padding=1))

    B, T, C = 8, 64, 128
    xb = rng.standard_normal((B, T, C), f32)
    for backward in (False, True):
        fns = {}
        for name, lib in libs.items():
            if lib is not np:
                p = gpt_params(lib, np.random.default_rng(1), C, T, backward)
                (x,) = tensors(lib, xb, grad=backward)
                fns[name] = gpt_block(lib, p, x, backward)
        cases.append((f"GPT block {B}x{T}x{C} {'fwd+bwd' if backward else 'forward'}", fns))

    img = rng.standard_normal((8 if QUICK else 32, 64, 56, 56), f32)
    for backward in (False, True):
        fns = {}
        for name, lib in libs.items():
            if lib is not np:
                (x,) = tensors(lib, img, grad=backward)
                if backward:
                    fns[name] = backward_of(lib, lib.nn.functional.max_pool2d(x, 3, 2, 1), x)
                else:
                    fns[name] = lambda x=x, lib=lib: lib.nn.functional.max_pool2d(x, 3, 2, 1)
        cases.append((f"max_pool2d {img.shape} 3/2 {'backward' if backward else 'forward'}", fns))

    rows = rng.standard_normal((1024 if QUICK else 4096, 1024), f32)
    w, bias = rng.standard_normal(1024, f32), rng.standard_normal(1024, f32)
    forward_backward(f"layer_norm {rows.shape}", [rows, w, bias],
                     lambda lib, x, wt, bt: lib.nn.functional.layer_norm(x, (1024,), wt, bt))

    bn = rng.standard_normal((8 if QUICK else 32, 64, 56, 56), f32)
    wb, bb = rng.standard_normal(64, f32), rng.standard_normal(64, f32)
    forward_backward(f"batch_norm {bn.shape} train", [bn, wb, bb],
                     lambda lib, x, wt, bt: lib.nn.functional.batch_norm(x, None, None, wt, bt, training=True))

    logits = rng.standard_normal((4096, 1000), f32)
    target = rng.integers(0, 1000, 4096)
    for backward in (False, True):
        fns = {}
        for name, lib in libs.items():
            if lib is not np:
                (x,) = tensors(lib, logits, grad=backward)
                t = lib.tensor(target)
                if backward:
                    loss = lib.nn.functional.cross_entropy(x, t)
                    fns[name] = lambda loss=loss, x=x, lib=lib: lib.autograd.grad(loss, x, retain_graph=True)
                else:
                    fns[name] = lambda x=x, t=t, lib=lib: lib.nn.functional.cross_entropy(x, t)
        cases.append((f"cross_entropy (4096, 1000) {'backward' if backward else 'forward'}", fns))
    return cases


def libraries(threads):
    """minitorch and, where installed, PyTorch set to `threads` threads (a child's libraries).

    minitorch is the one PYTHONPATH names when it is set (to time another checkout's build),
    else the checkout this script is in, whatever the current directory."""
    if not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minitorch

    libs = {"minitorch": minitorch}
    try:
        import torch

        torch.set_num_threads(threads)
        libs["torch"] = torch
    except ImportError:
        pass
    return libs


def print_row(threads, label, width, best, names, digits):
    """One case: each library's best time in ms, then minitorch's over PyTorch's."""
    cells = " ".join(f"{best[n] * 1e3:9.{digits}f}" if n in best else f"{'-':>9}" for n in names)
    ratio = f"{best['minitorch'] / best['torch']:7.2f}x" if "torch" in best else f"{'-':>8}"
    print(f"{threads:>2} {label:<{width}} {cells} {ratio}", flush=True)


def per_thread_count(script, run_one, header, extra_env=None):
    """In a child process per thread count (--threads, 1,2 by default): run_one(threads); the
    parent prints the header lines first. extra_env(threads, env), if given, returns variables
    added to that child's environment."""
    if "-h" in sys.argv or "--help" in sys.argv:
        print(sys.modules["__main__"].__doc__)  # the script's own docstring ends with its Run: line
        return
    if "--child" in sys.argv:
        run_one(int(arg("--child", "1")))
        return
    print("\n".join(header))
    if CLOCK is time.process_time:
        print("(--cpu-time: the times are the process's CPU time, not wall time)")
    for threads in arg("--threads", "1,2").split(","):
        env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
        if extra_env is not None:
            env.update(extra_env(threads, env))
        subprocess.run([sys.executable, script, "--child", threads] + sys.argv[1:], env=env, check=True)


def run_one(threads):
    """NumPy's cases alone (--numpy-alone: their best times as JSON on stdout), or minitorch's and
    PyTorch's, printed beside NumPy's from MT_BENCH_NUMPY."""
    alone = "--numpy-alone" in sys.argv
    libs = {"numpy": np} if alone else libraries(threads)
    numpy_best = {} if alone else json.loads(os.environ.get("MT_BENCH_NUMPY", "{}"))
    only = arg("--only", "")
    repeats = 5 if QUICK else 20
    for label, fns in make_cases(libs):
        if only not in label or not fns:
            continue
        best = alternate(fns, repeats)
        if alone:
            numpy_best[label] = best["numpy"]
            continue
        if label in numpy_best:
            best["numpy"] = numpy_best[label]
        print_row(threads, label, 44, best, ("minitorch", "torch", "numpy"), 3)
    if alone:
        print(json.dumps(numpy_best))


def numpy_alone(threads, env):
    """NumPy's times at `threads` threads, from a process of their own (see the module's note)."""
    script = [sys.executable, __file__, "--child", threads, "--numpy-alone"] + sys.argv[1:]
    done = subprocess.run(script, env=env, check=True, capture_output=True, text=True)
    return {"MT_BENCH_NUMPY": done.stdout.strip().splitlines()[-1]}


def main():
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<44} {'minitorch':>9} {'torch':>9} {'numpy':>9} {'mt/torch':>8}",
        "(best time in ms over alternating repeats of minitorch and PyTorch; the last column is minitorch's",
        "time over PyTorch's; NumPy's cases ran before, in a process of their own, so that its OpenBLAS",
        "threads, which spin after each call, take no core from the others)"], numpy_alone)


if __name__ == "__main__":
    main()
