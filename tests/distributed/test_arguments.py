"""Bad arguments to the collectives raise what PyTorch's gloo raises (one process, world size 1,
each library in a subprocess of its own)."""
import socket
import subprocess
import sys

import pytest

from helpers import child_env

from launching import needs_mpi

CASES = '''
def tr(name, f):
    try:
        f()
        print(name, "ok")
    except Exception as e:
        print(name, type(e).__name__, str(e).splitlines()[0] if str(e) else "")

T = lib.ones
tr("all_gather_list_length", lambda: d.all_gather([lib.empty(2)] * 2, T(2)))
tr("all_gather_sizes", lambda: d.all_gather([lib.empty(3)], T(2)))
tr("broadcast_root", lambda: d.broadcast(T(2), src=3))
tr("not_a_tensor", lambda: d.all_reduce([1, 2]))
tr("band_float", lambda: d.all_reduce(T(2), op=d.ReduceOp.BAND))
tr("band_int", lambda: d.all_reduce(T(2, dtype=lib.int64), op=d.ReduceOp.BAND))
tr("into_tensor_size", lambda: d.all_gather_into_tensor(lib.empty(3), T(2)))
tr("gather_no_list", lambda: d.gather(T(2), None, dst=0))
tr("scatter_no_list", lambda: d.scatter(T(2), None, src=0))
tr("send_self", lambda: d.send(T(2), dst=0))
tr("non_contiguous", lambda: d.all_reduce(T(3, 2).t()))
tr("avg", lambda: d.all_reduce(T(3), op=d.ReduceOp.AVG))
tr("twice", lambda: d.init_process_group("gloo", rank=0, world_size=1))
d.destroy_process_group()
tr("after_destroy", lambda: d.get_rank())
'''


def _run(prelude: str) -> dict:
    p = subprocess.run([sys.executable, "-c", prelude + CASES], env=child_env(), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return {line.split(" ", 1)[0]: line.split(" ", 2)[1:] for line in p.stdout.splitlines()}


@needs_mpi
def test_argument_errors_as_gloo():
    pytest.importorskip("torch")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    theirs = _run(f"import os\nos.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='{port}')\n"
                  "import torch as lib, torch.distributed as d\nd.init_process_group('gloo', rank=0, world_size=1)\n")
    ours = _run("import minitorch as lib, minitorch.distributed as d\n"
                "d.init_process_group('gloo', rank=0, world_size=1)\n")
    assert set(ours) == set(theirs)
    for name in theirs:
        assert ours[name][0] == theirs[name][0], (name, ours[name], theirs[name])
    # the words PyTorch uses, where they say which argument
    for name in ("not_a_tensor", "band_float", "gather_no_list", "scatter_no_list", "send_self", "twice",
                 "after_destroy"):
        assert ours[name] == theirs[name], (name, ours[name], theirs[name])
