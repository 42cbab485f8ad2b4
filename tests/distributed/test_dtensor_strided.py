"""DTensor's _StridedShard (PyTorch's placement for a sharded dimension flattened behind others):
views that make and undo it, distribute_tensor, redistribute and full_tensor with it on 1-D and
2-D meshes, a pointwise op that keeps it and a reduction that replicates it first, gradients
through it; on 2 and 4 ranks (gloo), compared line by line with PyTorch's run of the same script
where torch is installed, and with NumPy's values without it."""
from pathlib import Path

import numpy as np
import pytest

from launching import chunk, needs_mpi, spawned_stdout

pytestmark = needs_mpi
SCRIPT = Path(__file__).resolve().parent / "scripts" / "dtensor_strided.py"


def _lines(out, name):
    """{rank: the rest of the line} of the lines of that name."""
    return {int(line.split()[0]): line.split(None, 1)[1][len(name) + 1:] for line in out
            if line.split(None, 1)[1].startswith(name + " ")}


@pytest.mark.parametrize("n", [2, 4])
def test_strided_shard_matches_pytorch(n):
    got = spawned_stdout(SCRIPT, "minitorch", nprocs=n)
    x = np.arange(24.0).reshape(4, 6)
    for r, rest in _lines(got, "view24").items():  # each rank's columns, row by row
        start, length = chunk(6, n, r)
        assert rest == f"(_StridedShard(dim=0, sf=4),) (24,) {x[:, start:start + length].reshape(-1).tolist()}"
    for name in ("full", "distribute full") + (("2d full",) if n == 4 else ()):
        assert set(_lines(got, name).values()) == {"True"}, name
    assert set(_lines(got, "sum").values()) == {"276.0"}
    assert set(_lines(got, "grad").values()) == {str((2 * x).reshape(-1).tolist())}
    assert "Cannot flatten unevenly sharded tensor" in _lines(got, "flatten all")[0]
    pytest.importorskip("torch")
    assert got == spawned_stdout(SCRIPT, "torch", nprocs=n)
