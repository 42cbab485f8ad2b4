"""A collective that timed out aborts its group, with the library named by PROGRAM_TORCH
(minitorch, or PyTorch for the reference, gloo on the CPU): on a group of a short timeout, rank 1
never calls, rank 0's all_reduce times out, and every later call on that group (blocking, async,
barrier) raises at once; the default group works on. Rank 0 prints what each call raised and whether it was quick, so that the two libraries'
outputs can be compared line by line."""
import datetime
import importlib
import os
import sys
import time

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
dist = importlib.import_module(torch.__name__ + ".distributed")
mp = torch.multiprocessing
TIMEOUT = 1.5


def attempt(name, fn):
    """Runs fn, printing on rank 0 what it did."""
    say = print if dist.get_rank() == 0 else (lambda *a, **k: None)
    t0 = time.monotonic()
    try:
        work = fn()
        issued = time.monotonic() - t0
        if work is not None:
            say(name, "issued", issued < TIMEOUT - 0.5, flush=True)
            work.wait()
        say(name, "ok", flush=True)
    except RuntimeError as e:
        seconds = time.monotonic() - t0
        say(name, "RuntimeError", "timed out" if "imed out" in str(e) else "",
              "closure" if "Application timeout caused pair closure" in str(e) else "",
              "took the timeout" if seconds > TIMEOUT - 0.3 else "at once" if seconds < TIMEOUT - 0.5 else seconds,
              flush=True)


def run(rank, n, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    # the processes of a loaded machine may start seconds apart: they meet with a long timeout
    dist.init_process_group("gloo", rank=rank, world_size=n, timeout=datetime.timedelta(seconds=60))
    g = dist.new_group(timeout=datetime.timedelta(seconds=TIMEOUT))
    dist.barrier(group=g)
    t = torch.ones(4)
    if rank == 0:
        attempt("all_reduce", lambda: dist.all_reduce(t, group=g))
        attempt("all_reduce again", lambda: dist.all_reduce(t, group=g))
        attempt("broadcast", lambda: dist.broadcast(t, src=0, group=g))
        attempt("async all_reduce", lambda: dist.all_reduce(t, async_op=True, group=g))
        attempt("barrier", lambda: dist.barrier(group=g))
        attempt("all_gather", lambda: dist.all_gather([torch.empty(4) for _ in range(n)], t, group=g))
    else:
        time.sleep(TIMEOUT + 4)  # never calls: rank 0's all_reduce times out, then rank 0 is done
    x = torch.ones(3)
    attempt("default group all_reduce", lambda: dist.all_reduce(x))
    if rank == 0:
        print("sum", x.tolist(), flush=True)
    sys.stdout.flush()
    os._exit(0)  # the group is broken: neither library's shutdown would finish it


if __name__ == "__main__":
    mp.spawn(run, args=(int(sys.argv[1]), int(sys.argv[2])), nprocs=int(sys.argv[1]), join=True)
