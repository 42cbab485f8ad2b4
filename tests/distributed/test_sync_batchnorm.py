"""nn.SyncBatchNorm over 2 and 4 processes against one BatchNorm2d over the full batch (PyTorch's
and minitorch's): outputs, input and parameter gradients, running statistics."""
import numpy as np
import pytest

from launching import launch, needs_mpi, ok

import minitorch


def full_batch():
    """scripts/sync_bn.py's batch in one process with a plain BatchNorm2d."""
    rng = np.random.default_rng(5)
    full = rng.standard_normal((8, 3, 4, 5)) * 2 + 1
    weight_out = rng.standard_normal((8, 3, 4, 5))
    x = minitorch.tensor(full).requires_grad_(True)
    bn = minitorch.nn.BatchNorm2d(3, momentum=0.3).double()
    with minitorch.no_grad():
        bn.weight.copy_(minitorch.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(minitorch.tensor([0.1, 0.2, -0.3]))
    out = bn(x)
    (out * minitorch.tensor(weight_out)).sum().backward()
    return dict(out=out.detach().numpy(), grad=x.grad.numpy(), weight_grad=bn.weight.grad.numpy(),
                bias_grad=bn.bias.grad.numpy(), running_mean=bn.running_mean.numpy(),
                running_var=bn.running_var.numpy())


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_sync_batchnorm_matches_full_batch(tmp_path, n):
    run = ok(launch(tmp_path, n, "sync_bn.py"))
    want = full_batch()
    part = 8 // n
    for r in range(n):
        got = run.result(r)
        assert str(got["kind"]) == "SyncBatchNorm"
        assert int(got["batches"]) == 1
        np.testing.assert_allclose(got["out"], want["out"][r * part:(r + 1) * part], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got["grad"], want["grad"][r * part:(r + 1) * part], rtol=1e-10, atol=1e-12)
        for key in ("weight_grad", "bias_grad", "running_mean", "running_var"):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-10, atol=1e-12, err_msg=key)
