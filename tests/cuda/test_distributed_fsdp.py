"""FSDP on CUDA tensors with backend "nccl" (the emulated device's NCCL in CI) against one process
training on the CPU, distributed.checkpoint of the CUDA model and its optimizer, and fully_shard's
DTensor parameters on a "cuda" mesh."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from launching import SCRIPTS, launch, needs_mpi, ok  # noqa: E402

sys.path.insert(0, str(SCRIPTS))
from fsdp_models import mlp, train  # noqa: E402

pytestmark = [needs_mpi, pytest.mark.skipif(minitorch.cuda.device_count() < 2, reason="needs two CUDA devices")]


def test_fsdp_on_nccl_matches_one_process(tmp_path):
    run = ok(launch(tmp_path, 2, "fsdp_cuda.py", str(tmp_path / "ckpt"), timeout=240))
    _, want, norms = train(mlp(0), "mlp", 3, optim="adam",
                           clip=lambda m: minitorch.nn.utils.clip_grad_norm_(m.parameters(), 0.5))
    _, sgd, _ = train(mlp(0), "mlp", 3)
    for r in range(2):
        got = run.result(r)
        assert list(got["devices"]) == [f"cuda:{r}"]
        np.testing.assert_allclose(got["steps"], want, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(got["norms"], norms, rtol=1e-10)
        # loaded back after one more step: the checkpoint's state (the third step's)
        np.testing.assert_array_equal(got["restored"], got["steps"][-1])
        assert list(got["fs_devices"]) == [f"cuda:{r} cuda"]
        np.testing.assert_allclose(got["fs_steps"], sgd, rtol=1e-9, atol=1e-11)
