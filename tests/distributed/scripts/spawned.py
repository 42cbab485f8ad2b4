"""Starts a test script's ranks without the launcher, as scripts whose processes meet through a
store do: `spawned.py <how> <n> <script> <out> [args]`. Each rank runs scripts/<script> as __main__
with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR (127.0.0.1) and MASTER_PORT (a free port) in its
environment, so that init_process_group's env:// meets through a TCPStore. how: "spawn"
(minitorch.multiprocessing.spawn, join=True: the first failure stops the others and is raised
here), "process" (a multiprocessing.Process per rank, all joined: a failed rank leaves the others
running, so that they report it themselves). The exit status is the first failed rank's (1 when
spawn raised)."""
import os
import runpy
import socket
import sys
import traceback

import minitorch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))


def rank_main(rank: int, n: int, script: str, argv) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(n))
    sys.argv = [script, *argv]
    sys.path.insert(0, HERE)
    runpy.run_path(os.path.join(HERE, script), run_name="__main__")


def _process(rank: int, n: int, script: str, argv) -> None:
    try:
        rank_main(rank, n, script, argv)
    except SystemExit as e:
        raise SystemExit(e.code)
    except BaseException:  # noqa: BLE001 - reported, then the status
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


def main() -> int:
    how, n, script, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if how == "spawn":
        try:
            mp.spawn(rank_main, args=(n, script, argv), nprocs=n, join=True)
        except Exception:  # noqa: BLE001 - the failed rank's error, as PyTorch's spawn reports it
            traceback.print_exc()
            return 1
        return 0
    ctx = __import__("multiprocessing").get_context("spawn")
    procs = [ctx.Process(target=_process, args=(r, n, script, argv)) for r in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    codes = [p.exitcode for p in procs]
    return next((c if c > 0 else 1 for c in codes if c != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
