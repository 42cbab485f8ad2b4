"""minitorch.distributed with CUDA tensors (on the emulated device in CI): 2 processes of the
launcher run collectives and DDP on the device, against NumPy and single-process CPU training."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from launching import launch, needs_mpi, ok  # noqa: E402
from test_ddp import reference_steps  # noqa: E402
from mlp import data, model  # noqa: E402

pytestmark = [needs_mpi, pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs a CUDA device")]


def test_cuda_collectives_and_ddp(tmp_path):
    n = 2
    run = ok(launch(tmp_path, n, "ddp_cuda.py", timeout=120))
    res = [run.result(r) for r in range(n)]
    base = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    want = reference_steps()[:3]
    for r in range(n):
        np.testing.assert_allclose(res[r]["all_reduce"], base * 3)
        assert str(res[r]["all_reduce_device"]).startswith("cuda")
        np.testing.assert_array_equal(res[r]["all_reduce_view"], np.arange(6.0).reshape(3, 2).T)
        np.testing.assert_array_equal(res[r]["all_gather"], np.repeat(np.arange(n, dtype=np.float32), 2).reshape(n, 2))
        np.testing.assert_array_equal(res[r]["broadcast"], np.full(3, n - 1.0, np.float32))
        np.testing.assert_allclose(res[r]["steps"], want, rtol=1e-9, atol=1e-12)
        assert str(res[r]["grad_device"]).startswith("cuda")
        assert str(res[r]["moved_device"]) == "cuda:0"
        np.testing.assert_allclose(res[r]["moved_out"], model(seed=0)(data(0)[0]).detach().numpy(), rtol=1e-12)
        np.testing.assert_array_equal(res[r]["kept_ids"], [0, 0])
        assert "device_ids and output_device arguments only work with single-device" in str(res[r]["cpu_ids"])
        assert str(res[r]["two_ids"]) == "device_ids can only be None or contain a single element."
