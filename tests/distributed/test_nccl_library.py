"""The real NCCL, where the nvidia-nccl-cu13 wheel (or MINITORCH_NCCL_LIBRARY) and the real
_C_cuda are both here: _C_cuda loads libnccl.so.2 by dlopen and finds every symbol it calls (no GPU
needed for ncclGetVersion and ncclGetUniqueId). Skipped elsewhere (CI installs no NCCL)."""
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import child_env

import minitorch
from minitorch.distributed import _nccl

_REAL = any(Path(minitorch.__file__).parent.glob("_C_cuda.*.so"))


@pytest.mark.skipif(not _REAL or _nccl.library_path() is None,
                    reason="needs the real _C_cuda and NCCL (pip install nvidia-nccl-cu13)")
def test_real_nccl_loads_and_makes_unique_ids():
    code = ("import minitorch\nfrom minitorch.distributed import _nccl\nc = minitorch.cuda._C_cuda\n"
            "v = c.nccl_load(_nccl.library_path())\nprint(v, len(c.nccl_unique_id()), c.nccl_unique_id() != "
            "c.nccl_unique_id())\n")
    env = child_env()
    env.pop("MINITORCH_CUDA_EMU", None)  # the real module, not the emulated device's
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    version, size, fresh = p.stdout.split()
    assert int(version) >= 21200 and int(size) == 128 and fresh == "True"


def test_missing_library_is_explained():
    code = ("import minitorch\nc = minitorch.cuda._C_cuda\ntry:\n    c.nccl_load('/nonexistent/libnccl.so.2')\n"
            "except RuntimeError as e:\n    print(e)\n")
    if not _REAL:
        pytest.skip("needs the real _C_cuda (the emulated one has NCCL built in)")
    env = child_env()
    env.pop("MINITORCH_CUDA_EMU", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "NCCL could not be loaded" in p.stdout and "pip install nvidia-nccl-cu13" in p.stdout, p.stdout + p.stderr
