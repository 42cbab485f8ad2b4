"""DTensor's sharding propagation for the ops that move dimensions and the layers' ops
(scripts/dtensor_layouts.py) over 2 and 4 processes: every result's values and every operand's
gradient equal the same op's on the whole tensor in one process; the layouts are PyTorch's
(compared with PyTorch's own run of the same script under torchrun, where torch is installed),
a dimension flattened behind another (_StridedShard) included."""
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from helpers import child_env
from launching import SCRIPTS, launch, needs_mpi, ok

SCRIPT = "dtensor_layouts.py"
CASES = 43  # the script's cases (each run on x and z, sharded by rows and by columns)


def results(run_dir, module, n):
    out = {}
    for r in range(n):
        with np.load(run_dir / f"{module}-rank{r}.npz") as f:
            out[r] = {k: f[k][()] for k in f.files}
    return out


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    runs = {}

    def run(n):
        if n not in runs:
            done = ok(launch(tmp_path_factory.mktemp(f"layouts{n}"), n, SCRIPT, "minitorch", timeout=120))
            runs[n] = results(done.out, "minitorch", n)
        return runs[n]

    return run


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_values_and_gradients_are_one_process_ones(launched, n):
    for r, got in launched(n).items():
        cases = [k for k in got if "|" not in k]
        assert len(cases) == 2 * 2 * CASES
        failed = {k: str(got[k]) for k in cases if f"{k}|value" not in got}
        for k, msg in failed.items():  # only the invalid shapes and the uneven flattenings raise
            assert ("is invalid for input of size 35" in msg or "flatten unevenly sharded tensor" in msg
                    or "cannot be evenly sharded" in msg), (k, msg)
        assert {k for k, msg in failed.items() if "Cannot flatten" in msg} == {
            "x0.view(-1)", "x0.reshape(-1)", "x0.flatten()"}
        unflatten = {k for k, msg in failed.items() if "Cannot unflatten" in msg}
        assert unflatten == (set() if n == 2 else {"z0.view(2,-1)", "z0.view(2,4,6)", "z1.view(2,-1)",
                                                   "z1.view(lead,2,-1)", "z1.unflatten(1)"}), unflatten
        for k in cases:
            if k not in failed:
                assert float(got[f"{k}|value"]) < 1e-12, (k, got[k])
                assert float(got[f"{k}|grad"]) < 1e-12, (k, got[k])


@needs_mpi
def test_layouts_over_two_ranks(launched):
    got = launched(2)[1]
    want = {
        "z0.view(-1)": "(48,) (Shard(dim=0),) (24,)",
        "z0.view(2,4,6)": "(2, 4, 6) (Shard(dim=0),) (1, 4, 6)",
        "z1.view(lead,2,-1)": "(8, 2, 3) (Shard(dim=1),) (8, 1, 3)",
        "z1.view(2,-1)": "(2, 24) (Replicate(),) (2, 24)",
        "x0.unsqueeze(0)": "(1, 7, 5) (Shard(dim=1),) (1, 3, 5)",
        "x0.permute(1,0)": "(5, 7) (Shard(dim=1),) (5, 3)",
        "x0.[1:5]": "(4, 5) (Replicate(),) (4, 5)",
        "x0.[:,1:3]": "(7, 2) (Shard(dim=0),) (3, 2)",
        "x1.[2]": "(5,) (Shard(dim=0),) (2,)",
        "x0.cat0": "(14, 5) (Replicate(),) (14, 5)",
        "x0.stack0": "(2, 7, 5) (Shard(dim=1),) (2, 3, 5)",
        "x1.softmax-1": "(7, 5) (Replicate(),) (7, 5)",
        "x0.layer_norm": "(7, 5) (Shard(dim=0),) (3, 5)",
        "z0.cross_entropy_S0": "() (Partial(avg),) ()",
        "z0.embedding": ("(2, 3, 6) (_MaskPartial(reduce_op=sum, offset_shape=minitorch.Size([8, 6]), "
                         "offset_dim=0),) (2, 3, 6)"),
        "x1.embedding": "(2, 3, 5) (Shard(dim=2),) (2, 3, 2)",
        "z1.mm": "(8, 3) (Partial(sum),) (8, 3)",
    }
    for key, layout in want.items():
        assert str(got[key]) == layout, key
    assert str(got["x0.cross_entropy_R"]) == ("RuntimeError: The intermediate results of nll_loss cannot be evenly "
                                              "sharded, resulting in biased mean result.")


def _torch_run(tmp_path, n):
    """scripts/dtensor_layouts.py under PyTorch's torchrun (gloo on the CPU), or a skip."""
    pytest.importorskip("torch")
    out = tmp_path / "torch"
    out.mkdir()
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(n),
           str(SCRIPTS / SCRIPT), str(out), "torch"]
    env = child_env(OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)  # PyTorch's run needs no minitorch
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.skip("PyTorch's run of the script did not end within 180 s")
    if p.returncode != 0:
        pytest.skip(f"PyTorch cannot run DTensor over gloo here: {err[-500:]}")
    return results(out, "torch", n)


@needs_mpi
def test_layouts_are_pytorchs(launched, tmp_path):
    theirs = _torch_run(tmp_path, 2)
    for r, ours in launched(2).items():
        for key, their in theirs[r].items():
            if "|" in key:
                continue
            mine, their = str(ours[key]), str(their).replace("torch.Size", "minitorch.Size")
            # PyTorch's errors add the op's spec after the message
            assert their.startswith(mine), f"{key}: minitorch {mine!r}, PyTorch {their!r}"
