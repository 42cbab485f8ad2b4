"""python -m minitorch: the seed network, y = model(x), and the path the call took, read off the profiler.

Runs on the best device present, prints the journey table and the tree of the call, writes the Chrome
trace (seed_trace.json, for Perfetto or chrome://tracing) and says which layers it could not see.
"""
import os

import minitorch
from minitorch import nn
from minitorch.profiler import ProfilerActivity, profile, supported_activities

TRACE = "seed_trace.json"
GRAPH = "seed_graph.svg"


def main() -> None:
    minitorch.manual_seed(0)
    gpu = ProfilerActivity.CUDA in supported_activities()
    device = "cuda" if gpu else "cpu"
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    x = minitorch.randn(1, 4).to(device)
    model(x)  # warm-up: first calls pay for lazy initialisation in OpenBLAS (and CUDA)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
        y = model(x)

    print("model:", model, sep="\n")
    print("\ninput x:", x, sep="\n")
    print("\noutput y = model(x):", y, sep="\n")
    print(f"\nThe journey of y = model(x) on {device.upper()}, layer by layer "
          "(Python -> Op [dispatch key] -> Kernel -> Library, with Mem events):\n")
    print(prof.journey())
    prof.export_chrome_trace(TRACE)
    events = prof.events()
    kernels = sorted({e.name for e in events if e.layer in ("Kernel", "Library")})
    print(f"\n{sum(e.layer == 'Op' for e in events)} ops dispatched; kernels and library calls: {', '.join(kernels)}")
    print(f"Chrome trace written to {os.path.abspath(TRACE)} (open it in https://ui.perfetto.dev)")
    minitorch.viz.trace(model, x).save(GRAPH)
    print(f"Graph of the network written to {os.path.abspath(GRAPH)}")
    seen = {e.layer for e in events} | ({"Mem"} if prof.memory_events() else set())
    missing = [layer for layer in ("Python", "Op", "Library", "Runtime", "Kernel", "Mem") if layer not in seen]
    if not gpu:
        print("CUDA not available: CPU path shown (no Runtime events, no GPU kernels or GPU times).")
    elif minitorch.cuda._is_emulated():
        print(f"CUDA device: {minitorch.cuda.get_device_name()} (MINITORCH_CUDA_EMU=1): the "
              "backend's kernels and library calls ran on the CPU; the GPU times are the emulation's.")
    elif missing:
        print(f"Layers not seen: {', '.join(missing)}")
    print("Every op above went through minitorch._C's dispatcher; "
          "minitorch._C._dispatch_table('addmm') shows its kernels:", minitorch._C._dispatch_table("addmm"))


if __name__ == "__main__":
    main()
