"""Convolutions across the shapes models use: minitorch beside PyTorch, in one process.

Which path minitorch takes depends on the shape (csrc/cpu/conv_direct.c's direct float32 kernel for
few taps per output, for rows that fill its vectors and for width strides; im2col + OpenBLAS gemm
otherwise), so one case says little: these are first layers (1 and 3 input channels, 3x3, 5x5,
the ResNet stem's 7x7 stride 2), LeNet's layers, ResNet's 3x3 stages from 56x56 to 7x7 and their
stride-2 downsamplings, a 1x1 projection, conv3d, and conv1d over sequences with many taps; forward, and forward + backward for a few;
the backward alone (weight's gradient, input's) of the narrow and strided deep layers.
The "CL" cases run channels_last inputs and weights (as model.to(memory_format=torch.channels_last)
and an input converted alike): conv2d, and a conv -> batch_norm -> relu -> max_pool2d block whose
results all stay channels-last.
PyTorch runs its first conv2d before timing (its first call picks slower paths for later ones).
Each thread count runs in its own process; the libraries alternate call by call and keep their
best of several repeats; the last column is minitorch's time over PyTorch's. Quote ratios.
Forward cases also time the bound of gemm-bound work: "sgemm" is minitorch's OpenBLAS sgemm on the
im2col-equivalent shape, (N*OH*OW, C/groups*KH*KW) @ (C/groups*KH*KW, OC/groups) once per group, in
the same alternation (what im2col + gemm would cost with a free im2col).
Run: PYTHONPATH=. python benchmarks/bench_conv.py [--quick] [--threads 1,2] [--only SUBSTRING] [--repeats N]
"""
import sys

import numpy as np

from bench_cpu import alternate, arg, libraries, per_thread_count, print_row

QUICK = "--quick" in sys.argv
REPEATS = int(arg("--repeats", 3 if QUICK else 10))  # more on a loaded machine

# (label, input shape, weight shape, stride, padding, with a backward case)
CASES = [
    ("MNIST conv1 1->32 3x3", (64, 1, 28, 28), (32, 1, 3, 3), 1, 1, True),
    ("CIFAR conv1 3->64 3x3", (32, 3, 32, 32), (64, 3, 3, 3), 1, 1, True),
    ("LeNet conv2 6->16 5x5", (16, 6, 14, 14), (16, 6, 5, 5), 1, 0, False),
    ("3->16 5x5 on 64x64", (8, 3, 64, 64), (16, 3, 5, 5), 1, 2, False),
    ("ResNet stem 7x7/2", (8, 3, 224, 224), (64, 3, 7, 7), 2, 3, False),
    ("64->64 3x3 on 56x56", (8, 64, 56, 56), (64, 64, 3, 3), 1, 1, True),
    ("64->128 3x3/2 on 56x56", (8, 64, 56, 56), (128, 64, 3, 3), 2, 1, False),
    ("128->128 3x3 on 28x28", (8, 128, 28, 28), (128, 128, 3, 3), 1, 1, False),
    ("256->256 3x3 on 14x14", (8, 256, 14, 14), (256, 256, 3, 3), 1, 1, False),
    ("512->512 3x3 on 7x7", (8, 512, 7, 7), (512, 512, 3, 3), 1, 1, False),
    ("128->256 3x3/2 on 28x28", (8, 128, 28, 28), (256, 128, 3, 3), 2, 1, False),
    ("256->512 3x3/2 on 14x14", (8, 256, 14, 14), (512, 256, 3, 3), 2, 1, False),
    ("1x1 256->64 on 14x14", (8, 256, 14, 14), (64, 256, 1, 1), 1, 0, False),
    ("conv3d 4->16 3x3x3 on 16^3", (8, 4, 16, 16, 16), (16, 4, 3, 3, 3), 1, 1, True),
    ("conv3d 16->32 3x3x3 on 16x32x32", (4, 16, 16, 32, 32), (32, 16, 3, 3, 3), 1, 1, False),
    ("conv1d 64->64 k9 on 1024", (8, 64, 1024), (64, 64, 9), 1, 4, True),
    ("conv1d 128->128 k3 on 500", (8, 128, 500), (128, 128, 3), 1, 1, False),
    ("conv1d 32->32 k31 on 200", (8, 32, 200), (32, 32, 31), 1, 15, False),
]


# channels_last cases: (label, input shape, weight shape, stride, padding, with a backward case,
# groups)
CL_CASES = [
    ("CL 32->64 3x3 on 32x32", (8, 32, 32, 32), (64, 32, 3, 3), 1, 1, True, 1),
    ("CL 64->64 3x3 on 56x56", (8, 64, 56, 56), (64, 64, 3, 3), 1, 1, False, 1),
    ("CL CIFAR conv1 3->64 3x3", (32, 3, 32, 32), (64, 3, 3, 3), 1, 1, False, 1),
    ("CL groups=2 64->64 3x3 on 56x56", (8, 64, 56, 56), (64, 32, 3, 3), 1, 1, False, 2),
]


# backward alone, the weight's gradient ("wgrad") and the input's ("igrad"), on the layers where
# it trailed: narrow planes, the stride-2 downsamplings, and a batch that two threads do not split
# evenly: (label, input shape, weight shape, stride, padding)
BWD_CASES = [
    ("128->128 3x3 on 28x28", (8, 128, 28, 28), (128, 128, 3, 3), 1, 1),
    ("256->256 3x3 on 14x14", (8, 256, 14, 14), (256, 256, 3, 3), 1, 1),
    ("64->128 3x3/2 on 56x56", (8, 64, 56, 56), (128, 64, 3, 3), 2, 1),
    ("128->256 3x3/2 on 28x28", (8, 128, 28, 28), (256, 128, 3, 3), 2, 1),
    ("256->512 3x3/2 on 14x14", (8, 256, 14, 14), (512, 256, 3, 3), 2, 1),
    ("N=7 128->128 3x3 on 28x28", (7, 128, 28, 28), (128, 128, 3, 3), 1, 1),
    ("N=7 128->256 3x3/2 on 28x28", (7, 128, 28, 28), (256, 128, 3, 3), 2, 1),
]


def make_bwd_cases(libs, rng):
    cases = []
    for label, xs, ws, stride, pad in BWD_CASES:
        x, w = rng.standard_normal(xs, np.float32), rng.standard_normal(ws, np.float32)
        for kind in ("wgrad", "igrad"):
            fns = {}
            for name, lib in libs.items():
                xt = lib.tensor(x, requires_grad=kind == "igrad")
                wt = lib.tensor(w, requires_grad=kind == "wgrad")
                y = lib.nn.functional.conv2d(xt, wt, None, stride, pad)
                g = lib.ones_like(y)
                fns[name] = lambda y=y, t=(wt if kind == "wgrad" else xt), g=g, lib=lib: lib.autograd.grad(
                    y, (t,), g, retain_graph=True)
            cases.append((f"{label} {kind}", fns))
    return cases


def sgemm_bound(lib, xs, ws, stride, pad, groups):
    """minitorch's sgemm on the convolution's im2col-equivalent shape, once per group."""
    m = xs[0] * int(np.prod([(i + 2 * pad - k) // stride + 1 for i, k in zip(xs[2:], ws[2:])]))
    rng = np.random.default_rng(2)
    a = lib.tensor(rng.standard_normal((m, int(np.prod(ws[1:]))), np.float32))
    b = lib.tensor(rng.standard_normal((int(np.prod(ws[1:])), ws[0] // groups), np.float32))
    return lambda: [a @ b for _ in range(groups)]


def cl_block(lib, xt, wt, stride, pad, groups):
    F = lib.nn.functional
    y = F.batch_norm(F.conv2d(xt, wt, None, stride, pad, 1, groups), None, None, training=True)
    return F.max_pool2d(F.relu(y), 2)


def make_cl_cases(libs, rng):
    cases = []
    for label, xs, ws, stride, pad, backward, groups in CL_CASES:
        x, w = rng.standard_normal(xs, np.float32), rng.standard_normal(ws, np.float32)
        for kind in ("conv forward", "block forward") + (("conv fwd+bwd", "block fwd+bwd") if backward else ()):
            fns = {}
            for name, lib in libs.items():
                grad = "bwd" in kind
                cl = lib.channels_last
                xt = lib.tensor(x).contiguous(memory_format=cl).requires_grad_(grad)
                wt = lib.tensor(w).contiguous(memory_format=cl).requires_grad_(grad)
                f = cl_block if kind.startswith("block") else (
                    lambda lib, xt, wt, s, p, g: lib.nn.functional.conv2d(xt, wt, None, s, p, 1, g))
                if grad:
                    y = f(lib, xt, wt, stride, pad, groups)
                    g = lib.ones_like(y)
                    fns[name] = lambda y=y, xt=xt, wt=wt, g=g, lib=lib: lib.autograd.grad(y, (xt, wt), g, retain_graph=True)
                else:
                    fns[name] = lambda f=f, lib=lib, xt=xt, wt=wt, s=stride, p=pad, g=groups: f(lib, xt, wt, s, p, g)
            if kind == "conv forward":
                fns["sgemm"] = sgemm_bound(libs["minitorch"], xs, ws, stride, pad, groups)
            cases.append((f"{label} {kind}", fns))
    return cases


def make_cases(libs, rng):
    cases = []
    for label, xs, ws, stride, pad, backward in CASES:
        if QUICK and xs[0] > 8:
            xs = (8,) + xs[1:]
        x, w = rng.standard_normal(xs, np.float32), rng.standard_normal(ws, np.float32)
        for with_grad in (False, True) if backward else (False,):
            fns = {}
            for name, lib in libs.items():
                conv = getattr(lib.nn.functional, f"conv{len(xs) - 2}d")
                xt, wt = lib.tensor(x, requires_grad=with_grad), lib.tensor(w, requires_grad=with_grad)
                if with_grad:
                    y = conv(xt, wt, None, stride, pad)
                    g = lib.ones_like(y)
                    fns[name] = lambda y=y, xt=xt, wt=wt, g=g, lib=lib: lib.autograd.grad(y, (xt, wt), g, retain_graph=True)
                else:
                    fns[name] = lambda xt=xt, wt=wt, conv=conv, s=stride, p=pad: conv(xt, wt, None, s, p)
            if not with_grad:
                fns["sgemm"] = sgemm_bound(libs["minitorch"], xs, ws, stride, pad, 1)
            cases.append((f"{label} {'fwd+bwd' if with_grad else 'forward'}", fns))
    return cases


def run_one(threads):
    libs = libraries(threads)
    if "torch" in libs:  # PyTorch's first convolution sets up what its later ones use
        libs["torch"].nn.functional.conv2d(libs["torch"].ones(1, 3, 8, 8), libs["torch"].ones(4, 3, 3, 3))
    only = arg("--only", "")
    for label, fns in (make_cases(libs, np.random.default_rng(0)) + make_bwd_cases(libs, np.random.default_rng(2))
                       + make_cl_cases(libs, np.random.default_rng(1))):
        if only in label:
            print_row(threads, label, 40, alternate(fns, REPEATS), ("minitorch", "torch", "sgemm"), 3)


def main():
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<40} {'minitorch':>9} {'torch':>9} {'sgemm':>9} {'mt/torch':>8}",
        "(best time in ms over alternating repeats; sgemm: the im2col-equivalent gemm's, forward only;",
        "the last column is minitorch's time over PyTorch's)"])


if __name__ == "__main__":
    main()
