"""meshgrid without indexing= warns once per process, as PyTorch's TORCH_WARN_ONCE: not at each
call site under the "default" filter, nor again under "always" once it has warned."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

SCRIPT = r"""
import sys, warnings
lib = __import__(sys.argv[1])
counts = []
x = lib.arange(3)
for flt in ("default", "default", "always"):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter(flt)
        lib.meshgrid(x, x)
        lib.meshgrid(x, x)
        lib.meshgrid(x, x, indexing="xy")
        counts.append(sum("indexing argument" in str(m.message) for m in w))
print(counts)
"""


def warnings_seen(lib):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", SCRIPT, lib], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def test_meshgrid_warns_once_per_process_like_torch():
    assert warnings_seen("minitorch") == warnings_seen("torch") == "[1, 0, 0]"
