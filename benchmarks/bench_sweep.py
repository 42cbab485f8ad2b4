"""A sweep of everyday ops at the sizes models use: minitorch beside PyTorch and NumPy, in one
process, at 1 and 2 threads (issue 21: no kernel slower than PyTorch's). Each case is one call
(reductions, indexing, data movement, pointwise with scalars, random draws, norms, linear
algebra, FFTs), the libraries alternating, best of the repeats. Quote ratios (the machine is shared);
a case far above 1 names a kernel to look at.
Run: PYTHONPATH=. python3 benchmarks/bench_sweep.py [--quick] [--threads 1,2] [--only NAME] [--cpu-time]
"""
import json
import os
import subprocess
import sys

import numpy as np

from bench_cpu import QUICK, alternate, arg, libraries, per_thread_count, print_row

CASES = {
 "sort 1M": lambda l, d: l.sort(d["V"]),
 "topk 1M k=100": lambda l, d: l.topk(d["V"], 100),
 "argsort rows": lambda l, d: l.argsort(d["A"], dim=1),
 "cumsum 1M": lambda l, d: l.cumsum(d["V"], 0),
 "cumsum dim0": lambda l, d: l.cumsum(d["A"], 0),
 "sum dim0": lambda l, d: d["A"].sum(0),
 "sum dim1": lambda l, d: d["A"].sum(1),
 "mean all": lambda l, d: d["V"].mean(),
 "var dim1": lambda l, d: d["A"].var(1),
 "std all": lambda l, d: d["V"].std(),
 "nansum 1M": lambda l, d: l.nansum(d["VN"]),
 "nanmean dim1": lambda l, d: l.nanmean(d["VN"].reshape(1024, 1024), 1),
 "norm all": lambda l, d: d["V"].norm(),
 "argmax dim1": lambda l, d: d["A"].argmax(1),
 "max dim0": lambda l, d: d["A"].max(0),
 "amax dim1": lambda l, d: d["A"].amax(1),
 # many short rows (issue 21): 64k rows of 16 floats, 40k of 24, 20k of 50 and of 100 (with NaN for
 # nansum; 20k of 50 doubles), reduced
 # along the row (the last dim), and (4096, 16, 16) along its middle dim
 "sum rows16": lambda l, d: d["S16"].sum(1),
 "sum rows50": lambda l, d: d["S50"].sum(1),
 "sum rows24": lambda l, d: d["S24"].sum(-1),
 "sum rows100": lambda l, d: d["S100"].sum(-1),
 "mean rows100": lambda l, d: d["S100"].mean(-1),
 "mean rows16": lambda l, d: d["S16"].mean(-1),
 "nansum rows50": lambda l, d: l.nansum(d["S50N"], 1),
 "nansum rows100": lambda l, d: l.nansum(d["S100N"], -1),
 "sum rows50 f64": lambda l, d: d["S50D"].sum(1),
 "nansum rows50 f64": lambda l, d: l.nansum(d["S50D"], 1),
 "amax rows16": lambda l, d: d["S16"].amax(1),
 "amax rows50": lambda l, d: d["S50"].amax(1),
 "amin rows50": lambda l, d: d["S50"].amin(1),
 "amax mid16": lambda l, d: d["S16"].view(4096, 16, 16).amax(1),
 "max rows16": lambda l, d: d["S16"].max(1),
 "max rows50": lambda l, d: d["S50"].max(1),
 "max mid16": lambda l, d: d["S16"].view(4096, 16, 16).max(1),
 "argmax rows50": lambda l, d: d["S50"].argmax(1),
 "softmax dim0": lambda l, d: l.softmax(d["A"], 0),
 "softmax dim1": lambda l, d: l.softmax(d["A"], 1),
 "log_softmax dim1": lambda l, d: l.log_softmax(d["A"], 1),
 "transpose contig": lambda l, d: d["A"].t().contiguous(),
 "permute 4d contig": lambda l, d: d["X4"].permute(0, 2, 3, 1).contiguous(),
 "index_select": lambda l, d: l.index_select(d["A"], 0, d["IDX"]),
 "index_select 1d": lambda l, d: l.index_select(d["V"], 0, d["IDX"]),
 "gather": lambda l, d: l.gather(d["A"], 1, d["G"]),
 "scatter_add": lambda l, d: l.zeros(512, 512).scatter_add_(1, d["G"], d["A"]),
 "index_add": lambda l, d: l.zeros(512, 512).index_add_(0, d["IDX"][:512], d["A"]),
 "advanced idx": lambda l, d: d["A"][d["IDX"]],
 "mask select": lambda l, d: d["V"][d["V"] > 0],
 "where": lambda l, d: l.where(d["V"] > 0, d["V"], 0.0),
 "clamp": lambda l, d: d["V"].clamp(-0.5, 0.5),
 "pow 2.5": lambda l, d: d["V"].abs().pow(2.5),
 "sqrt": lambda l, d: d["V"].abs().sqrt(),
 "sigmoid": lambda l, d: d["V"].sigmoid(),
 "relu": lambda l, d: l.relu(d["V"]),
 "gelu": lambda l, d: l.nn.functional.gelu(d["V"]),
 "silu": lambda l, d: l.nn.functional.silu(d["V"]),
 "div": lambda l, d: d["V"] / (d["V"] + 3),
 "fmod": lambda l, d: l.fmod(d["V"], 0.3),
 "remainder": lambda l, d: l.remainder(d["V"], 0.3),
 "floor": lambda l, d: d["V"].floor(),
 "round": lambda l, d: d["V"].round(),
 "eq": lambda l, d: d["V"] == 0.5,
 "bool any": lambda l, d: (d["V"] > 3).any(),
 "to float64": lambda l, d: d["V"].double(),
 "to int64": lambda l, d: d["V"].long(),
 "f64 to half": lambda l, d: d["D"].half(),
 "cat dim0": lambda l, d: l.cat([d["A"], d["A"], d["A"]], 0),
 "cat dim1": lambda l, d: l.cat([d["A"], d["A"], d["A"]], 1),
 "stack": lambda l, d: l.stack([d["A"], d["A"]], 0),
 "repeat": lambda l, d: d["A"].repeat(2, 2),
 "expand contig": lambda l, d: d["A"][:1].expand(512, 512).contiguous(),
 "flip": lambda l, d: l.flip(d["A"], [0, 1]),
 "roll": lambda l, d: l.roll(d["A"], 3, 1),
 "tril": lambda l, d: l.tril(d["A"]),
 "pad reflect": lambda l, d: l.nn.functional.pad(d["X4"], (2, 2, 2, 2), mode="reflect"),
 "pad const": lambda l, d: l.nn.functional.pad(d["X4"], (2, 2, 2, 2)),
 "interp bilinear": lambda l, d: l.nn.functional.interpolate(d["X4"], scale_factor=2, mode="bilinear"),
 "interp nearest": lambda l, d: l.nn.functional.interpolate(d["X4"], scale_factor=2, mode="nearest"),
 "avg_pool2d": lambda l, d: l.nn.functional.avg_pool2d(d["X4"], 2),
 "max_pool2d": lambda l, d: l.nn.functional.max_pool2d(d["X4"], 2),
 "adaptive_avg": lambda l, d: l.nn.functional.adaptive_avg_pool2d(d["X4"], 1),
 "batch_norm eval": lambda l, d: l.nn.functional.batch_norm(d["X4"], d["rm"], d["rv"], training=False),
 "group_norm": lambda l, d: l.nn.functional.group_norm(d["X4"], 8),
 "instance_norm": lambda l, d: l.nn.functional.instance_norm(d["X4"]),
 "layer_norm": lambda l, d: l.nn.functional.layer_norm(d["A"], (512,)),
 "bmm": lambda l, d: l.bmm(d["B3"], d["B3"]),
 "matmul 4d": lambda l, d: d["B3"].view(4, 8, 64, 64) @ d["B3"].view(4, 8, 64, 64).transpose(-1, -2),
 "einsum bij,bjk": lambda l, d: l.einsum("bij,bjk->bik", d["B3"], d["B3"]),
 "mm 512": lambda l, d: d["A"] @ d["A"],
 "mv": lambda l, d: d["A"] @ d["A"][0],
 "outer": lambda l, d: l.outer(d["A"][0], d["A"][1]),
 "cdist": lambda l, d: l.cdist(d["A"][:256], d["A"][256:]),
 "embedding": lambda l, d: l.nn.functional.embedding(d["IDX"], d["A"]),
 "one_hot": lambda l, d: l.nn.functional.one_hot(d["IDX"], 512),
 "unfold": lambda l, d: l.nn.functional.unfold(d["X4"], 3, padding=1),
 "pixel_shuffle": lambda l, d: l.nn.functional.pixel_shuffle(d["X4"], 2),
 "unique": lambda l, d: l.unique(d["IDX"]),
 "bincount": lambda l, d: l.bincount(d["IDX"]),
 "histc": lambda l, d: l.histc(d["V"], 100),
 "nonzero": lambda l, d: (d["V"] > 1).nonzero(),
 "randn 1M": lambda l, d: l.randn(1 << 20),
 "rand 1M": lambda l, d: l.rand(1 << 20),
 "randperm 100k": lambda l, d: l.randperm(100000),
 "multinomial": lambda l, d: l.multinomial(d["P"], 100, replacement=True),
 "dropout": lambda l, d: l.nn.functional.dropout(d["V"], 0.5),
 "mse_loss": lambda l, d: l.nn.functional.mse_loss(d["A"], d["A"].flip(0)),
 "cross_entropy": lambda l, d: l.nn.functional.cross_entropy(d["A"], d["IDX"][:512]),
 "sdpa": lambda l, d: l.nn.functional.scaled_dot_product_attention(d["Q"], d["Q"], d["Q"], is_causal=True),
 "linalg.inv": lambda l, d: l.linalg.inv(d["S"]),
 "linalg.solve": lambda l, d: l.linalg.solve(d["S"], d["A"][:256, :64]),
 "cholesky": lambda l, d: l.linalg.cholesky(d["SPD"]),
 "svd 128": lambda l, d: l.linalg.svd(d["S"][:128, :128]),
 "eigh 128": lambda l, d: l.linalg.eigh(d["SPD"][:128, :128]),
 "fft 1M": lambda l, d: l.fft.fft(d["V"]),
 "rfft2": lambda l, d: l.fft.rfft2(d["A"]),
 "rfft FNO": lambda l, d: l.fft.rfft(d["F4"]),
 "fft FNO c64": lambda l, d: l.fft.fft(d["F4C"]),
 "ifft FNO c64": lambda l, d: l.fft.ifft(d["F4C"]),
 "irfft FNO": lambda l, d: l.fft.irfft(d["F4C"]),
 "fft FNO c128": lambda l, d: l.fft.fft(d["F4Z"]),
 "view_as_real add": lambda l, d: l.view_as_real(d["F4C"]) + 1,
}

# the convolutions' cases: input, weight, stride, padding, groups, channels-last; MobileNet's
# depthwise 3x3 (stride 1 and 2), ResNeXt-like groups (16 channels a group, and 2-11 output
# channels a group: groups=8/16 on 64, ResNeXt's 32 groups of 4 on 128), a first layer, conv3d of
# bench_conv.py and a 16 -> 32 one whose weight gradient is 3-D
CONV = {
    "conv3d CL": ((8, 4, 16, 16, 16), (16, 4, 3, 3, 3), 1, 1, 1, True),
    "conv3d 16-32": ((4, 16, 16, 32, 32), (32, 16, 3, 3, 3), 1, 1, 1, False),
    "conv3d 16-32 CL": ((4, 16, 16, 32, 32), (32, 16, 3, 3, 3), 1, 1, 1, True),
    "dwconv CL": ((32, 32, 56, 56), (32, 1, 3, 3), 1, 1, 32, True),
    "dwconv/2 CL": ((32, 64, 56, 56), (64, 1, 3, 3), 2, 1, 64, True),
    "dwconv NCHW": ((32, 32, 56, 56), (32, 1, 3, 3), 1, 1, 32, False),
    "groups=4 CL": ((8, 64, 56, 56), (64, 16, 3, 3), 1, 1, 4, True),
    "groups=2 CL": ((8, 64, 56, 56), (64, 32, 3, 3), 1, 1, 2, True),
    "groups=8 CL": ((8, 64, 56, 56), (64, 8, 3, 3), 1, 1, 8, True),
    "groups=16 CL": ((8, 64, 56, 56), (64, 4, 3, 3), 1, 1, 16, True),
    "groups=32 ResNeXt": ((32, 128, 28, 28), (128, 4, 3, 3), 1, 1, 32, False),
    "groups=32 ResNeXt CL": ((32, 128, 28, 28), (128, 4, 3, 3), 1, 1, 32, True),
    "CIFAR conv1 CL": ((32, 3, 32, 32), (64, 3, 3, 3), 1, 1, 1, True),
}


for _name in CONV:  # each convolution's forward, and its input's and weight's gradients
    CASES[f"{_name} fwd"] = lambda l, d, name=_name: conv(l, d, name)
    CASES[f"{_name} bwd"] = lambda l, d, name=_name: conv_grad(l, d, name)


def conv(l, d, name):
    x, w = d["conv"][name][:2]
    _, _, stride, pad, groups, _ = CONV[name]
    fn = l.nn.functional.conv3d if x.dim() == 5 else l.nn.functional.conv2d
    return fn(x, w, None, stride, pad, 1, groups)


def conv_grad(l, d, name):
    """The input's and the weight's gradients of the case's convolution (its forward not timed)."""
    x, w, y, gy = d["conv"][name]
    return l.autograd.grad(y, (x, w), gy, retain_graph=True)


def conv_inputs(lib, only):
    """Each convolution case's (input, weight, output, ones like it), in its layout."""
    rng, out = np.random.default_rng(1), {}
    for name, (xs, ws, stride, pad, groups, cl) in CONV.items():
        if not any(only in f"{name} {kind}" for kind in ("fwd", "bwd")):
            continue
        x, w = rng.standard_normal(xs, np.float32), rng.standard_normal(ws, np.float32)
        fmt = (lib.channels_last if len(xs) == 4 else lib.channels_last_3d) if cl else lib.contiguous_format
        x = lib.tensor(x).contiguous(memory_format=fmt).requires_grad_(True)
        w = lib.tensor(w).contiguous(memory_format=fmt).requires_grad_(True)
        d = {"conv": {name: (x, w)}}
        y = conv(lib, d, name)
        out[name] = (x, w, y, lib.ones_like(y))
    return out


# The float32 reductions over all of a (1024, 1024) and a (4096, 4096) matrix, over its last
# dim and over its first ("red OP all|last|first 1M|16M"): the ones models and statistics use
# most, at a size that stays in L3 and one that streams from memory. A reduction over all
# elements that takes dims spells them out (logsumexp has no all-dims default).
REDUCTIONS = {
    "sum": (lambda l, x, **k: x.sum(**k), lambda x, **k: x.sum(**k)),
    "mean": (lambda l, x, **k: x.mean(**k), lambda x, **k: x.mean(**k)),
    "var": (lambda l, x, **k: x.var(**k), lambda x, **k: x.var(ddof=1, **k)),
    "std": (lambda l, x, **k: x.std(**k), lambda x, **k: x.std(ddof=1, **k)),
    "norm": (lambda l, x, **k: x.norm(**k), lambda x, **k: np.linalg.norm(x, **k)),
    "amax": (lambda l, x, **k: x.amax(**k), lambda x, **k: x.max(**k)),
    "argmax": (lambda l, x, **k: x.argmax(**k), lambda x, **k: x.argmax(**k)),
    "logsumexp": (lambda l, x, **k: l.logsumexp(x, **k), None),
}
RED_DIMS = {"all": None, "last": -1, "first": 0}
RED_SIZES = {"1M": "R1", "16M": "R16"}


def _reduction_case(op, where, key, torch_like):
    """minitorch's/PyTorch's call for one reduction case."""
    dim = RED_DIMS[where]
    if dim is None and op == "logsumexp":
        return lambda l, d: torch_like(l, d[key], dim=(0, 1))
    if dim is None:
        return lambda l, d: torch_like(l, d[key])
    return lambda l, d: torch_like(l, d[key], dim=dim)


def _reduction_numpy(op, where, key, numpy_like):
    dim = RED_DIMS[where]
    if dim is None:
        return lambda d: numpy_like(d[key])
    return lambda d: numpy_like(d[key], axis=dim)


for _op, (_tl, _np) in REDUCTIONS.items():
    for _where in RED_DIMS:
        for _size, _key in RED_SIZES.items():
            CASES[f"red {_op} {_where} {_size}"] = _reduction_case(_op, _where, _key, _tl)

# NumPy's twin of a case, where NumPy has the op (the rest print "-")
NUMPY = {
    "sort 1M": lambda d: np.sort(d["V"]),
    "cumsum 1M": lambda d: np.cumsum(d["V"]),
    "cumsum dim0": lambda d: np.cumsum(d["A"], 0),
    "sum dim0": lambda d: d["A"].sum(0),
    "sum dim1": lambda d: d["A"].sum(1),
    "mean all": lambda d: d["V"].mean(),
    "var dim1": lambda d: d["A"].var(1, ddof=1),
    "std all": lambda d: d["V"].std(ddof=1),
    "nansum 1M": lambda d: np.nansum(d["VN"]),
    "nanmean dim1": lambda d: np.nanmean(d["VN"].reshape(1024, 1024), 1),
    "norm all": lambda d: np.linalg.norm(d["V"]),
    "argmax dim1": lambda d: d["A"].argmax(1),
    "amax dim1": lambda d: d["A"].max(1),
    "sum rows16": lambda d: d["S16"].sum(1),
    "sum rows50": lambda d: d["S50"].sum(1),
    "sum rows24": lambda d: d["S24"].sum(-1),
    "sum rows100": lambda d: d["S100"].sum(-1),
    "mean rows100": lambda d: d["S100"].mean(-1),
    "mean rows16": lambda d: d["S16"].mean(-1),
    "nansum rows50": lambda d: np.nansum(d["S50N"], 1),
    "nansum rows100": lambda d: np.nansum(d["S100N"], -1),
    "sum rows50 f64": lambda d: d["S50D"].sum(1),
    "nansum rows50 f64": lambda d: np.nansum(d["S50D"], 1),
    "amax rows16": lambda d: d["S16"].max(1),
    "amax rows50": lambda d: d["S50"].max(1),
    "amin rows50": lambda d: d["S50"].min(1),
    "amax mid16": lambda d: d["S16"].reshape(4096, 16, 16).max(1),
    "argmax rows50": lambda d: d["S50"].argmax(1),
    "transpose contig": lambda d: np.ascontiguousarray(d["A"].T),
    "permute 4d contig": lambda d: np.ascontiguousarray(d["X4"].transpose(0, 2, 3, 1)),
    "index_select": lambda d: np.take(d["A"], d["IDX"], 0),
    "index_select 1d": lambda d: np.take(d["V"], d["IDX"]),
    "gather": lambda d: np.take_along_axis(d["A"], d["G"], 1),
    "advanced idx": lambda d: d["A"][d["IDX"]],
    "mask select": lambda d: d["V"][d["V"] > 0],
    "where": lambda d: np.where(d["V"] > 0, d["V"], np.float32(0)),
    "clamp": lambda d: np.clip(d["V"], np.float32(-0.5), np.float32(0.5)),
    "pow 2.5": lambda d: np.abs(d["V"]) ** np.float32(2.5),
    "sqrt": lambda d: np.sqrt(np.abs(d["V"])),
    "relu": lambda d: np.maximum(d["V"], np.float32(0)),
    "div": lambda d: d["V"] / (d["V"] + np.float32(3)),
    "fmod": lambda d: np.fmod(d["V"], np.float32(0.3)),
    "remainder": lambda d: np.remainder(d["V"], np.float32(0.3)),
    "floor": lambda d: np.floor(d["V"]),
    "round": lambda d: np.round(d["V"]),
    "eq": lambda d: d["V"] == np.float32(0.5),
    "to float64": lambda d: d["V"].astype(np.float64),
    "to int64": lambda d: d["V"].astype(np.int64),
    "f64 to half": lambda d: d["D"].astype(np.float16),
    "cat dim0": lambda d: np.concatenate([d["A"]] * 3, 0),
    "cat dim1": lambda d: np.concatenate([d["A"]] * 3, 1),
    "stack": lambda d: np.stack([d["A"], d["A"]], 0),
    "repeat": lambda d: np.tile(d["A"], (2, 2)),
    "flip": lambda d: np.ascontiguousarray(np.flip(d["A"], (0, 1))),
    "roll": lambda d: np.roll(d["A"], 3, 1),
    "tril": lambda d: np.tril(d["A"]),
    "pad reflect": lambda d: np.pad(d["X4"], ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect"),
    "pad const": lambda d: np.pad(d["X4"], ((0, 0), (0, 0), (2, 2), (2, 2))),
    "bmm": lambda d: d["B3"] @ d["B3"],
    "mm 512": lambda d: d["A"] @ d["A"],
    "mv": lambda d: d["A"] @ d["A"][0],
    "outer": lambda d: np.outer(d["A"][0], d["A"][1]),
    "embedding": lambda d: d["A"][d["IDX"]],
    "unique": lambda d: np.unique(d["IDX"]),
    "bincount": lambda d: np.bincount(d["IDX"]),
    "nonzero": lambda d: np.argwhere(d["V"] > 1),
    "linalg.inv": lambda d: np.linalg.inv(d["S"]),
    "linalg.solve": lambda d: np.linalg.solve(d["S"], d["A"][:256, :64]),
    "cholesky": lambda d: np.linalg.cholesky(d["SPD"]),
    "svd 128": lambda d: np.linalg.svd(d["S"][:128, :128]),
    "eigh 128": lambda d: np.linalg.eigh(d["SPD"][:128, :128]),
    "fft 1M": lambda d: np.fft.fft(d["V"]),
    "rfft2": lambda d: np.fft.rfft2(d["A"]),
    "rfft FNO": lambda d: np.fft.rfft(d["F4"]),
    "fft FNO c64": lambda d: np.fft.fft(d["F4C"]),
    "ifft FNO c64": lambda d: np.fft.ifft(d["F4C"]),
    "irfft FNO": lambda d: np.fft.irfft(d["F4C"]),
    "fft FNO c128": lambda d: np.fft.fft(d["F4Z"]),
}
for _op, (_tl, _np) in REDUCTIONS.items():
    for _where in RED_DIMS:
        for _size, _key in RED_SIZES.items():
            if _np is not None:
                NUMPY[f"red {_op} {_where} {_size}"] = _reduction_numpy(_op, _where, _key, _np)


def data(lib, seed=0):
    """The cases' inputs, the same numbers for every library (lib None: the NumPy arrays)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    s = a[:256, :256] + 16 * np.eye(256, dtype=np.float32)
    arrays = {
        "A": a, "V": rng.standard_normal(1 << 20).astype(np.float32),
        "X4": rng.standard_normal((16, 32, 32, 32)).astype(np.float32), "IDX": rng.integers(0, 512, 4096),
        "B3": rng.standard_normal((32, 64, 64)).astype(np.float32), "G": rng.integers(0, 512, (512, 512)),
        "rm": np.zeros(32, np.float32), "rv": np.ones(32, np.float32), "P": np.full(1000, 1e-3, np.float32),
        "Q": rng.standard_normal((4, 8, 128, 64)).astype(np.float32), "S": s, "SPD": s @ s.T,
    }
    arrays["VN"] = rng.standard_normal(1 << 20).astype(np.float32)
    arrays["VN"][::97] = np.nan  # the NaN-skipping reductions' input: one NaN in 97
    # a Fourier Neural Operator's activations (batch, channels, 64x64 grid)
    arrays["F4"] = rng.standard_normal((20, 32, 64, 64)).astype(np.float32)
    arrays["F4C"] = (arrays["F4"] + 1j * arrays["F4"][::-1]).astype(np.complex64)
    arrays["F4Z"] = arrays["F4C"].astype(np.complex128)
    arrays["R1"] = rng.standard_normal((1024, 1024)).astype(np.float32)  # the reductions' inputs
    arrays["R16"] = rng.standard_normal((4096, 4096)).astype(np.float32)
    arrays["S16"] = rng.standard_normal((1 << 16, 16)).astype(np.float32)  # short rows
    arrays["S50"] = rng.standard_normal((20000, 50)).astype(np.float32)
    arrays["S24"] = rng.standard_normal((40000, 24)).astype(np.float32)
    arrays["S100"] = rng.standard_normal((20000, 100)).astype(np.float32)
    arrays["S50N"], arrays["S100N"] = arrays["S50"].copy(), arrays["S100"].copy()
    arrays["S50N"][:, ::13], arrays["S100N"][::7, 3] = np.nan, np.nan  # nansum's rows
    arrays["S50D"] = rng.standard_normal((20000, 50))  # float64 rows
    arrays["D"] = rng.standard_normal(1 << 20)  # float64
    return arrays if lib is None else {k: lib.tensor(v) for k, v in arrays.items()}


def run_one(threads):
    """NumPy's cases alone (--numpy-alone: their best times as JSON), or minitorch's and
    PyTorch's beside NumPy's from MT_BENCH_NUMPY: NumPy's OpenBLAS threads spin after each call,
    and in the same process they would take the second core from the others."""
    alone = "--numpy-alone" in sys.argv
    only = arg("--only", "")
    repeats = 3 if QUICK else 7
    if alone:
        arrays, best = data(None), {}
        for label, fn in NUMPY.items():
            if only in label:
                best[label] = alternate({"numpy": lambda d=arrays, fn=fn: fn(d)}, repeats)["numpy"]
        print(json.dumps(best))
        return
    numpy_best = json.loads(os.environ.get("MT_BENCH_NUMPY", "{}"))
    libs = libraries(threads)
    libs["minitorch"].set_num_threads(threads)
    inputs = {name: data(lib) for name, lib in libs.items()}
    for name, lib in libs.items():
        inputs[name]["conv"] = conv_inputs(lib, only)
    for label, case in CASES.items():
        if only not in label:
            continue
        fns = {name: (lambda lib=lib, d=inputs[name]: case(lib, d)) for name, lib in libs.items()}
        best = alternate(fns, repeats)
        if label in numpy_best:
            best["numpy"] = numpy_best[label]
        print_row(threads, label, 20, best, ("minitorch", "torch", "numpy"), 3)


def numpy_alone(threads, env):
    script = [sys.executable, __file__, "--child", threads, "--numpy-alone"] + sys.argv[1:]
    done = subprocess.run(script, env=env, check=True, capture_output=True, text=True)
    return {"MT_BENCH_NUMPY": done.stdout.strip().splitlines()[-1]}


if __name__ == "__main__":
    per_thread_count(__file__, run_one, [
        f"{'th':>2} {'case':<20} {'minitorch':>9} {'torch':>9} {'numpy':>9} {'mt/torch':>8}",
        "(best time in ms over alternating repeats; the last column is minitorch's time over PyTorch's;",
        "NumPy's cases ran before, in a process of their own)"], numpy_alone)
