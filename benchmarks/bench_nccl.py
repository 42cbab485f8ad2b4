"""NCCL all_reduce of minitorch.distributed (backend "nccl"), one process per GPU:
    python -m minitorch.distributed.run --nproc-per-node N benchmarks/bench_nccl.py [--emu]
Each rank uses cuda:LOCAL_RANK; for each size (float32, 1 MB to 256 MB; 4 KB to 1 MB with --emu,
the emulated device's NCCL in shared memory) it checks the sum once, then times all_reduce (the
median of the repeats, the device synchronised around each), and rank 0 prints a table: size, time,
algorithm bandwidth (bytes / time) and bus bandwidth (x 2(N-1)/N, as nccl-tests reports it)."""
import argparse
import os
import statistics
import time

import minitorch
import minitorch.distributed as dist


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--emu", action="store_true", help="small sizes, for the emulated device")
    p.add_argument("--repeats", type=int, default=10)
    args = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = f"cuda:{local % minitorch.cuda.device_count()}"
    minitorch.cuda.set_device(dev)
    dist.init_process_group("nccl")
    r, n = dist.get_rank(), dist.get_world_size()
    from minitorch.distributed import _nccl

    sizes = [4 << 10, 64 << 10, 1 << 20] if args.emu else [1 << 20, 16 << 20, 64 << 20, 256 << 20]
    rows = []
    for size in sizes:
        t = minitorch.full((size // 4,), float(r + 1), device=dev)
        dist.all_reduce(t)
        minitorch.cuda.synchronize()
        want = n * (n + 1) / 2
        ok = bool((t == want).all().item())
        times = []
        for _ in range(args.repeats):
            minitorch.cuda.synchronize()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            minitorch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        s = statistics.median(times)
        rows.append((size, s, size / s / 1e9, size / s / 1e9 * 2 * (n - 1) / n, ok))
    if r == 0:
        print(f"NCCL {'.'.join(map(str, _nccl.version()))} all_reduce, float32, {n} ranks "
              f"({'emulated device' if minitorch.cuda._is_emulated() else minitorch.cuda.get_device_name(dev)})")
        print(f"{'size':>10} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}  sum")
        for size, s, alg, bus, ok in rows:
            print(f"{size:>10} {s * 1e6:>12.1f} {alg:>13.2f} {bus:>13.2f}  {'ok' if ok else 'WRONG'}")
    bad = sum(not row[-1] for row in rows)
    dist.destroy_process_group()
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
