"""The GPU benchmark (benchmarks/device_check.sh runs it): each case on minitorch and beside it on
PyTorch's CUDA build on the same GPU, then one table, last:

  sgemm 4096^3 and 8192^3 (TFLOP/s), add of 256M floats (GB/s, and its ratio to a device-to-device
  copy of the same bytes, cudaMemcpy's speed), sum of 256M floats (GB/s), softmax over the rows of
  8192x8192 (GB/s), a ResNet-style conv2d (32x64x56x56, 64 3x3 filters; TFLOP/s), one training step
  of GPT-2 small (12 layers, 768 wide, 12 heads, vocabulary 50257; batch 4 of 512 tokens, AdamW; ms),
  the launch latency of a 1-element add (us per call, the host's cost: n calls, one synchronize)
  and a cached allocation (a 1 MiB tensor made and dropped; ns); and issue 22's second round
  (round2): linear on 8x1024x768 (TFLOP/s), and with GELU as two ops and as _addmm_activation's
  epilogue (ms), the conv2d without cuDNN, softmax's backward and a
  sum over dim 0 of 8192x8192 (GB/s), cross_entropy forward and backward over 4096x8192 and
  grid_sample's forward and backward on 16x32x128x128 (ms).

`--emu` runs the same cases at small sizes (the emulated device computes on the CPU); PyTorch's
column is then empty, since the emulation is no GPU to compare on. The first argument, if any, is
a folder for the table (bench_cuda.txt) and a JSON copy. A case that fails is reported on stderr
and in the table's last lines, and the others still run.

Timing: wall clock around n calls with a synchronize before and after; throughput rows take the
best of `repeats` rounds, latencies the median."""
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

FULL = dict(gemm=(4096, 8192), elems=256 << 20, softmax=8192, conv=(32, 64, 56), repeats=5,
            gpt=dict(layers=12, embd=768, heads=12, vocab=50257, batch=4, block=512), latency_n=2000,
            linear=(8, 1024, 768), ce=(4096, 8192), grid=(16, 32, 128))
SMALL = dict(gemm=(64, 128), elems=1 << 16, softmax=128, conv=(2, 8, 12), repeats=2,
             gpt=dict(layers=2, embd=32, heads=2, vocab=64, batch=2, block=16), latency_n=50,
             linear=(2, 16, 32), ce=(64, 128), grid=(2, 3, 8))


def timed(fn, sync, n, repeats):
    """Best seconds per call of fn over `repeats` rounds of n calls (after one warm-up call)."""
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


def median_s(fn, sync, n, rounds=11):
    """Median seconds per call of fn over `rounds` rounds of n calls."""
    fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def randn(lib, *shape):
    return lib.randn(*shape).to("cuda") if lib is minitorch else lib.randn(*shape, device="cuda")


def sgemm(lib, sync, sz):
    out = {}
    for n in sz["gemm"]:
        a, b = randn(lib, n, n), randn(lib, n, n)
        out[f"sgemm {n}^3 (TFLOP/s)"] = 2 * n**3 / timed(lambda: a @ b, sync, 2, sz["repeats"]) / 1e12
    return out


def memory_bound(lib, sync, sz):
    n, r = sz["elems"], sz["repeats"]
    x, y, z = lib.ones(n, device="cuda"), lib.ones(n, device="cuda"), lib.empty(n, device="cuda")
    label = f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
    out = {f"add {label} f32 (GB/s)": 3 * 4 * n / timed(lambda: lib.add(x, y), sync, 5, r) / 1e9,
           f"copy D2D {label} f32 (GB/s)": 2 * 4 * n / timed(lambda: z.copy_(x), sync, 5, r) / 1e9,
           f"sum {label} f32 (GB/s)": 4 * n / timed(lambda: x.sum(), sync, 5, r) / 1e9}
    s = sz["softmax"]
    m = randn(lib, s, s)
    out[f"softmax {s}x{s} (GB/s)"] = 2 * 4 * s * s / timed(lambda: lib.softmax(m, dim=-1), sync, 3, r) / 1e9
    # the block scan, and a transposed add (32-bit indexing with the fast dividers)
    out[f"cumsum {s}x{s} (GB/s)"] = 2 * 4 * s * s / timed(lambda: m.cumsum(-1), sync, 3, r) / 1e9
    t = m.t()
    out[f"add transposed {s}x{s} (GB/s)"] = 3 * 4 * s * s / timed(lambda: m + t, sync, 3, r) / 1e9
    return out


def conv(lib, sync, sz):
    n, c, hw = sz["conv"]
    x, w, b = randn(lib, n, c, hw, hw), randn(lib, c, c, 3, 3), randn(lib, c)
    s = timed(lambda: lib.nn.functional.conv2d(x, w, b, padding=1), sync, 2, sz["repeats"])
    return {f"conv2d {n}x{c}x{hw}x{hw} 3x3 (TFLOP/s)": 2 * n * c * hw * hw * c * 9 / s / 1e12}


def round2(lib, sync, sz):
    """Issue 22's second round: linear on a (B, T, C) input (one cuBLASLt product with the bias
    epilogue), conv2d without cuDNN (im2col + cuBLAS, cudnn.enabled False), softmax's backward
    and cross_entropy's forward and backward (a row per block), a sum over dim 0 (threads over
    the kept columns) and grid_sample's forward and backward (a CUDA kernel each)."""
    F, r = lib.nn.functional, sz["repeats"]
    out = {}
    B, T, C = sz["linear"]
    x, w, b = randn(lib, B, T, C), randn(lib, 4 * C, C), randn(lib, 4 * C)
    s = timed(lambda: F.linear(x, w, b), sync, 3, r)
    out[f"linear {B}x{T}x{C} -> {4 * C} (TFLOP/s)"] = 2 * B * T * C * 4 * C / s / 1e12
    # the same product with GELU: as two ops, and fused into cuBLASLt's GELU_BIAS epilogue
    x2, wt = x.reshape(B * T, C), w.t()
    s = timed(lambda: F.gelu(F.linear(x, w, b), approximate="tanh"), sync, 3, r)
    out[f"linear+gelu {B}x{T}x{C} (ms)"] = s * 1e3
    s = timed(lambda: lib._addmm_activation(b, x2, wt, use_gelu=True), sync, 3, r)
    out[f"_addmm_activation gelu {B}x{T}x{C} (ms)"] = s * 1e3
    n, c, hw = sz["conv"]
    xc, wc, bc = randn(lib, n, c, hw, hw), randn(lib, c, c, 3, 3), randn(lib, c)
    with lib.backends.cudnn.flags(enabled=False):
        s = timed(lambda: F.conv2d(xc, wc, bc, padding=1), sync, 1, max(2, r - 2))
    out[f"conv2d no cuDNN {n}x{c}x{hw}x{hw} (TFLOP/s)"] = 2 * n * c * hw * hw * c * 9 / s / 1e12
    q = sz["softmax"]
    y, g = lib.softmax(randn(lib, q, q), dim=-1), randn(lib, q, q)
    s = timed(lambda: lib._softmax_backward_data(g, y, -1, y.dtype), sync, 3, r)
    out[f"softmax backward {q}x{q} (GB/s)"] = 3 * 4 * q * q / s / 1e9
    m = randn(lib, q, q)
    out[f"sum dim 0 of {q}x{q} (GB/s)"] = 4 * q * q / timed(lambda: m.sum(0), sync, 3, r) / 1e9
    rows, classes = sz["ce"]
    logits = randn(lib, rows, classes).requires_grad_(True)
    target = (lib.randint(0, classes, (rows,)).to("cuda") if lib is minitorch
              else lib.randint(0, classes, (rows,), device="cuda"))
    s = timed(lambda: F.cross_entropy(logits, target).backward(), sync, 3, r)
    out[f"cross_entropy fwd+bwd {rows}x{classes} (ms)"] = s * 1e3
    N, Cg, S = sz["grid"]
    inp = randn(lib, N, Cg, S, S).requires_grad_(True)
    grid = (randn(lib, N, S, S, 2) * 0.9).requires_grad_(True)
    out[f"grid_sample {N}x{Cg}x{S}x{S} fwd (ms)"] = timed(
        lambda: F.grid_sample(inp, grid, align_corners=False), sync, 3, r) * 1e3
    out[f"grid_sample {N}x{Cg}x{S}x{S} fwd+bwd (ms)"] = timed(
        lambda: F.grid_sample(inp, grid, align_corners=False).sum().backward(), sync, 3, r) * 1e3
    return out


def gpt2(lib, cfg):
    """GPT-2 small's shape (nanoGPT's model): pre-LayerNorm blocks of causal attention and a GELU
    MLP, a tied head; built from lib's nn so that both libraries run the same program."""
    nn, F = lib.nn, lib.nn.functional
    E, H = cfg["embd"], cfg["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(E), nn.LayerNorm(E)
            self.c_attn, self.c_proj = nn.Linear(E, 3 * E), nn.Linear(E, E)
            self.mlp = nn.Sequential(nn.Linear(E, 4 * E), nn.GELU(approximate="tanh"), nn.Linear(4 * E, E))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(E, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(cfg["vocab"], E), nn.Embedding(cfg["block"], E)
            self.blocks = nn.ModuleList([Block() for _ in range(cfg["layers"])])
            self.ln_f = nn.LayerNorm(E)

        def forward(self, idx, pos):
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.ln_f(x) @ self.wte.weight.t()  # the head tied to the embedding

    return GPT()


def gpt2_step(lib, sync, sz):
    cfg = sz["gpt"]
    lib.manual_seed(0)
    model = gpt2(lib, cfg).to("cuda")
    opt = lib.optim.AdamW(model.parameters(), lr=1e-4)
    B, T, V = cfg["batch"], cfg["block"], cfg["vocab"]
    idx = (lib.randint(0, V, (B, T)).to("cuda") if lib is minitorch
           else lib.randint(0, V, (B, T), device="cuda"))
    pos = lib.arange(T).to("cuda") if lib is minitorch else lib.arange(T, device="cuda")

    def step():
        logits = model(idx[:, :-1], pos[:-1])
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, V), idx[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    name = f"GPT-2 {cfg['layers']}x{cfg['embd']} train step B{B} T{T} (ms)"
    return {name: timed(step, sync, 1, max(2, sz["repeats"] - 2)) * 1e3}


def latencies(lib, sync, sz):
    t = lib.ones(1, device="cuda")
    n = sz["latency_n"]
    return {"launch: 1-element add (us)": timed(lambda: t + t, sync, n, 3) * 1e6,
            "cached alloc 1 MiB (ns)": median_s(lambda: lib.empty(1 << 18, device="cuda"), sync, n) * 1e9}


GROUPS = (sgemm, memory_bound, conv, round2, gpt2_step, latencies)


def cases(lib, sync, sz, failed):
    """Every row; a group that raises is reported in `failed` and left out."""
    out = {}
    for group in GROUPS:
        try:
            out.update(group(lib, sync, sz))
        except Exception as e:  # a first run on a new machine: keep the rows that work
            msg = f"{lib.__name__} {group.__name__}: {type(e).__name__}: {str(e)[:200]}"
            print(f"a benchmark failed: {msg}", file=sys.stderr)
            failed.append(msg)
    return out


def table(mine, theirs, failed, device):
    lines = [f"GPU: {device}", f"{'case':<44}{'minitorch':>12}{'PyTorch':>12}{'ratio':>8}"]
    for k, v in mine.items():
        p = theirs.get(k)
        lines.append(f"{k:<44}{v:>12.4g}{(f'{p:.4g}' if p else '-'):>12}{(f'{v / p:.2f}' if p else '-'):>8}")
    adds = [k for k in mine if k.startswith("add ")]
    copies = [k for k in mine if k.startswith("copy D2D ")]
    if adds and copies:
        mt = mine[adds[0]] / mine[copies[0]]
        pt = theirs[adds[0]] / theirs[copies[0]] if adds[0] in theirs and copies[0] in theirs else None
        lines.append(f"{'add GB/s / cudaMemcpy D2D GB/s':<44}{mt:>12.3g}{(f'{pt:.3g}' if pt else '-'):>12}")
    lines += [f"FAILED: {f}" for f in failed]
    return "\n".join(lines)


def main(argv):
    emu = "--emu" in argv
    args = [a for a in argv if a != "--emu"]
    if not minitorch.cuda.is_available():
        sys.exit(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}")
    sz = SMALL if emu or minitorch.cuda._is_emulated() else FULL
    failed = []
    mine = cases(minitorch, minitorch.cuda.synchronize, sz, failed)
    has_torch = torch is not None and torch.cuda.is_available() and not minitorch.cuda._is_emulated()
    theirs = cases(torch, torch.cuda.synchronize, sz, failed) if has_torch else {}
    if not has_torch:
        why = ("PyTorch is not installed" if torch is None else "the emulated device is no GPU to compare on"
               if minitorch.cuda._is_emulated() else "PyTorch has no CUDA here")
        print(f"no PyTorch column: {why}", file=sys.stderr)
    text = table(mine, theirs, failed, minitorch.cuda.get_device_name())
    print(text)
    if args:
        os.makedirs(args[0], exist_ok=True)
        with open(os.path.join(args[0], "bench_cuda.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(args[0], "bench_cuda.json"), "w") as f:
            json.dump({"minitorch": mine, "pytorch": theirs, "failed": failed}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
