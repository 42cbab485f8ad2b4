"""python -m minitorch: the seed network, y = model(x), and the path the call took, read off the profiler.

Runs on the best device present (or --device), prints the journey table and the tree of the call
fitted to the terminal (at most MAX_WIDTH columns; --wide prints them unwrapped), writes the Chrome
trace (seed_trace.json, for Perfetto or chrome://tracing) and the graph of the network
(seed_graph.svg) into --out, and says which layers it could not see. `--help` lists the flags.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import List, Optional

import minitorch
from minitorch import nn
from minitorch.profiler import ProfilerActivity, profile
from minitorch.profiler.journey import wrap

TRACE = "seed_trace.json"
GRAPH = "seed_graph.svg"
OUT = "minitorch-journey"  # the default folder for TRACE and GRAPH, under the working directory
MAX_WIDTH = 100  # wider terminals get this too: a journey stretched to 200 columns reads worse
MIN_WIDTH = 80  # narrower ones get this: the GPU table's two text columns are unreadable below it
EMU_STEPS = ("    MINITORCH_CUDA_EMU=1 make build     # in a checkout; make test builds it too\n"
             "    MINITORCH_CUDA_EMU=1 pip install .  # or this, outside one\n"
             "    MINITORCH_CUDA_EMU=1 python -m minitorch --device cuda")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m minitorch",
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=_width(wide=False)),
        description="Runs the seed network nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)) "
                    "on a (1, 4) input under minitorch's profiler and prints the journey of y = model(x): "
                    "the layered table and the tree of the call, Python module down to kernels and "
                    "library calls.",
        epilog="Without a GPU, the emulated CUDA device shows the GPU journey: build minitorch with "
               "MINITORCH_CUDA_EMU=1 (make build, or pip install .), then run "
               "MINITORCH_CUDA_EMU=1 python -m minitorch --device cuda.")
    p.add_argument("--device", choices=("cpu", "cuda"), default=None,
                   help="where the network runs (default: cuda when minitorch.cuda.is_available(), else cpu)")
    p.add_argument("--out", metavar="DIR", default=OUT,
                   help=f"folder for {TRACE} and {GRAPH}, created if needed (default: ./{OUT}/)")
    p.add_argument("--wide", action="store_true",
                   help=f"print the table and the tree unwrapped, one line per row (by default they fit "
                        f"the terminal, at most {MAX_WIDTH} columns)")
    return p


def _width(wide: bool) -> Optional[int]:
    """The columns the output fits in: the terminal's (MAX_WIDTH with none), kept within [MIN_WIDTH,
    MAX_WIDTH]; None with --wide."""
    if wide:
        return None
    return max(MIN_WIDTH, min(shutil.get_terminal_size((MAX_WIDTH, 24)).columns, MAX_WIDTH))


def _no_cuda_reason() -> str:
    """Why no CUDA device can be used, as a sentence."""
    reason = minitorch.cuda._unavailable_reason() or "no CUDA device found"
    if os.environ.get("MINITORCH_CUDA_EMU") == "1" and not minitorch.cuda.is_built():
        reason = "MINITORCH_CUDA_EMU=1, but minitorch was built without the emulated CUDA device"
    return reason if reason.rstrip(")").endswith(".") else reason + "."


def _refuse_cuda(width: Optional[int]) -> int:
    """--device cuda where no CUDA device can be used: why, and what to do, on stderr; status 2."""
    text = (f"python -m minitorch: error: --device cuda, but CUDA is not available: {_no_cuda_reason()} "
            "Run on a machine with an NVIDIA GPU and a minitorch built there with the CUDA toolkit, "
            "or pass --device cpu for the CPU journey, or see the GPU journey on minitorch's emulated "
            "CUDA device (the backend's code, run on the CPU): build minitorch with it "
            "(`MINITORCH_CUDA_EMU=1 make build` in a checkout, or `MINITORCH_CUDA_EMU=1 pip install .`), "
            "then run `MINITORCH_CUDA_EMU=1 python -m minitorch --device cuda`.")
    print("\n".join(wrap(text, width or MAX_WIDTH)), file=sys.stderr)
    return 2


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    width = _width(args.wide)
    has_cuda = minitorch.cuda.is_available()
    device = args.device or ("cuda" if has_cuda else "cpu")
    if device == "cuda" and not has_cuda:
        return _refuse_cuda(width)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print(f"python -m minitorch: error: --out {args.out}: {e.strerror}", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out)

    def say(text: str = "") -> None:
        print("\n".join(line for part in text.split("\n") for line in wrap(part, width)))

    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    x = minitorch.randn(1, 4)
    model(x.to(device))  # warm-up: first calls pay for lazy initialisation in OpenBLAS (and CUDA)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
        # the article's path: the input moved to the device (Op::to and its Runtime::Memcpy), the
        # forward, and on a GPU the wait for it to finish (Runtime::DeviceSynchronize)
        x_dev = x.to(device)
        y = model(x_dev)
        if device == "cuda":
            minitorch.cuda.synchronize()

    say(f"model:\n{model}")
    say(f"\ninput x:\n{x}")
    say(f"\noutput y = model(x):\n{y}")
    say(f"\nThe journey of y = model(x.to({device!r})) on {device.upper()}, layer by layer "
        "(Python -> Op [dispatch key] -> Kernel -> Library, with Mem events):\n")
    # the tree of the forward (the first Python module), not of the input's move before it
    module = next((e.name for e in prof.events() if e.layer == "Python"), None)
    print(prof.journey(module, width=width))
    say("\nThe same journey as the article's table, one row per event as it happened:\n")
    print(prof.article_table(width=width))
    events = prof.events()
    kernels = sorted({e.name for e in events if e.layer in ("Kernel", "Library")})
    ops = sum(e.layer == "Op" for e in events)
    say(f"\n{ops} ops dispatched; kernels and library calls: {', '.join(kernels)}")

    prof.export_chrome_trace(os.path.join(out, TRACE))
    say(f"Chrome trace written to {os.path.join(out, TRACE)} (open it in https://ui.perfetto.dev)")
    minitorch.viz.trace(model, x_dev).save(os.path.join(out, GRAPH))
    say(f"Graph of the network written to {os.path.join(out, GRAPH)}")
    if args.out == OUT:
        say(f"(both in ./{OUT}/, the default folder; --out DIR puts them elsewhere)")

    seen = {e.layer for e in events} | ({"Mem"} if prof.memory_events() else set())
    missing = [x for x in ("Python", "Op", "Library", "Runtime", "Kernel", "Mem") if x not in seen]
    if device == "cpu" and has_cuda:
        say("CPU path shown (--device cpu); --device cuda shows the GPU journey.")
    elif device == "cpu":
        say("CUDA not available: CPU path shown (no Runtime events, no GPU kernels or GPU times). "
            f"Why: {_no_cuda_reason()}")
        say("To see the GPU journey without a GPU, build minitorch with its emulated CUDA device (the "
            "backend's code, run on the CPU) and run on it:\n" + EMU_STEPS)
    elif minitorch.cuda._is_emulated():
        say(f"CUDA device: {minitorch.cuda.get_device_name()} (MINITORCH_CUDA_EMU=1): the "
            "backend's kernels and library calls ran on the CPU; the GPU times are the emulation's.")
    elif missing:
        say(f"Layers not seen: {', '.join(missing)}")
    say("Every op above went through minitorch._C's dispatcher; minitorch._C._dispatch_table('addmm') "
        f"shows its kernels: {minitorch._C._dispatch_table('addmm')}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader left (| head): no traceback, and none at exit for stdout
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
