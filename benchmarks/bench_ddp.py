"""minitorch.distributed (MPI) beside torch.distributed (gloo), on this machine (issue 23).

1. all_reduce (SUM, float32) of 1 KB to 256 MB between 2 processes, each call timed alone (200
   calls up to 4 MB, fewer above): the best and the median time per call, and the bus bandwidth
   of the best, busbw = bytes * 2 (n - 1) / n / time (NCCL-tests' definition), for minitorch's
   MPI engine started by minitorch's launcher ("minitorch"), minitorch's processes started on
   their own ("minitorch-store": RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set by this script,
   no launcher; they meet through a TCPStore, which starts their MPI world), and PyTorch's gloo
   started both ways too ("torch", "torch-store"). "store/launcher" is the ratio of the two
   minitorch modes' medians, "torch s/l" the same for gloo (mpiexec starts each rank in a session
   of its own, this script starts them in its session: under Linux's autogroup a loaded machine
   gives one session's processes one share of CPU time; minitorch's store-mode ranks move to
   sessions of their own in init_process_group, gloo's stay), "minitorch/torch" the launcher
   mode's median over gloo's. MINITORCH_DIST_OWN_SESSION=0 keeps minitorch's ranks in this
   script's session, for a comparison.
2. A DDP training step (an MLP 256-1024-1024-10, batch 64 per process, SGD) at 1 and 2 processes:
   time per step and samples per second (weak scaling: each process its own 64 samples), minitorch
   beside PyTorch.
The processes share the machine's cores (2 here): quote ratios, and the load (uptime); a loaded
machine gives bimodal runs (two ranks polling on one CPU take turns of a time slice).
Run: PYTHONPATH=. python benchmarks/bench_ddp.py [--quick] [--nproc 2] [--only-allreduce]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

QUICK = "--quick" in sys.argv
SIZES = [1 << k for k in range(10, 29, 2)]  # 1 KB .. 256 MB
if QUICK:
    SIZES = [s for s in SIZES if s <= 16 << 20]


def _arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


NPROC = int(_arg("--nproc", "2"))


def _lib(engine):
    if engine.startswith("torch"):
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        return torch, dist
    import minitorch
    import minitorch.distributed as dist

    dist.init_process_group("mpi" if engine == "minitorch" else "gloo")
    return minitorch, dist


def _calls(size):
    """How many all_reduce calls of `size` bytes to time: 200 up to 4 MB, then about 1 GB's worth."""
    return 200 if size <= (4 << 20) else max(5, (1 << 30) // size)


def worker_allreduce(engine, out):
    lib, dist = _lib(engine)
    rows = []
    for size in SIZES:
        t = lib.ones(size // 4, dtype=lib.float32)
        for _ in range(3):
            dist.all_reduce(t)
        times = []
        dist.barrier()
        for _ in range(_calls(size)):
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - t0)
        rows.append((size, min(times), statistics.median(times)))
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def worker_ddp(engine, out):
    lib, dist = _lib(engine)
    nn = lib.nn
    lib.manual_seed(0)
    net = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    ddp = nn.parallel.DistributedDataParallel(net)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.01)
    x = lib.randn(64, 256)
    y = lib.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    best = float("inf")
    n = 5 if QUICK else 10
    for _ in range(3):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, (time.perf_counter() - t0) / n)
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(best, f)
    dist.destroy_process_group()


def launch(nproc, kind, engine):
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    env = dict(os.environ, OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         env.get("PYTHONPATH", "")])
    worker = [os.path.abspath(__file__), "--worker", kind, engine, out] + (["--quick"] if QUICK else [])
    if not engine.endswith("-store"):
        subprocess.run([sys.executable, "-m", "minitorch.distributed.run", "--nproc-per-node", str(nproc), *worker],
                       env=env, check=True)
    else:  # no launcher: each process started here, with torchrun's variables, as mp.spawn's would be
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = [subprocess.Popen([sys.executable, *worker], env=dict(env, RANK=str(r), LOCAL_RANK=str(r),
                                                                       WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                                                                       MASTER_PORT=str(port)))
                 for r in range(nproc)]
        codes = [p.wait() for p in procs]
        if any(codes):
            raise subprocess.CalledProcessError(max(codes, key=abs), procs[0].args)
    with open(out) as f:
        res = json.load(f)
    os.unlink(out)
    return res


def _has_torch():
    try:
        import torch.distributed as tdist

        return tdist.is_available() and tdist.is_gloo_available()
    except ImportError:
        return False


def main():
    engines = ["minitorch", "minitorch-store"] + (["torch", "torch-store"] if _has_torch() else [])
    print(f"load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"all_reduce (SUM, float32) between {NPROC} processes: time per call, bus bandwidth")
    res = {e: {size: (best, med) for size, best, med in launch(NPROC, "allreduce", e)} for e in engines}
    print(f"{'bytes':>10} " + " ".join(f"{e + ' best/median us':>30} {'GB/s':>7}" for e in engines)
          + f" {'store/launcher':>15}" + (f" {'torch s/l':>10} {'minitorch/torch':>16}" if "torch" in engines else ""))
    for size in SIZES:
        cells = []
        for e in engines:
            best, med = res[e][size]
            bus = size * 2 * (NPROC - 1) / NPROC / best / 1e9
            cells.append(f"{best * 1e6:14.1f} /{med * 1e6:14.1f} {bus:7.3f}")
        ratio = f" {res['minitorch-store'][size][1] / res['minitorch'][size][1]:15.2f}"
        if "torch" in engines:
            ratio += (f" {res['torch-store'][size][1] / res['torch'][size][1]:10.2f}"
                      f" {res['minitorch'][size][1] / res['torch'][size][1]:16.2f}")
        print(f"{size:>10} " + " ".join(cells) + ratio)
    if "--only-allreduce" in sys.argv:
        return
    print("DDP step (MLP 256-1024-1024-10, batch 64 per process, SGD): ms per step, samples/s")
    for e in engines:
        t1 = launch(1, "ddp", e)
        t2 = launch(2, "ddp", e)
        print(f"{e:>15}: 1 process {t1 * 1e3:8.2f} ms ({64 / t1:8.0f}/s); 2 processes {t2 * 1e3:8.2f} ms "
              f"({128 / t2:8.0f}/s); scaling {128 / t2 / (64 / t1):.2f}x")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        kind, engine, out = sys.argv[i + 1:i + 4]
        (worker_allreduce if kind == "allreduce" else worker_ddp)(engine, out)
    else:
        main()
