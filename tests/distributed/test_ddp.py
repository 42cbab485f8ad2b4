"""DistributedDataParallel over 4 processes against single-process training on the full batch."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launch, needs_mpi, ok

sys.path.insert(0, str(SCRIPTS))
from mlp import model, sgd_steps  # noqa: E402


def reference_steps():
    """The same 5 steps in one process on the full batch of 16 (the last two as two halves)."""
    net = model(seed=0)
    return np.stack(sgd_steps(net, net, 5)[1])


@needs_mpi
@pytest.mark.parametrize("via", ["launcher", "spawn"])
def test_ddp_matches_full_batch(tmp_path, via):
    n = 4
    run = ok(launch(tmp_path, n, "ddp.py", via=via))
    res = [run.result(r) for r in range(n)]
    want = reference_steps()
    assert int(res[0]["n_buckets"]) > 1
    for r in range(n):
        # step by step, every rank: the parameters of single-process full-batch training
        np.testing.assert_allclose(res[r]["steps"], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(res[r]["steps"], res[0]["steps"])
    # no_sync kept the first micro-batch's gradients local: they differ across ranks
    assert not np.allclose(res[0]["local_grad_after_no_sync"], res[1]["local_grad_after_no_sync"])
    for r in range(n):
        assert int(res[r]["comm_events"]) >= 1
        assert bool(res[r]["journey_comm"])
        assert int(res[r]["trace_comm"]) == int(res[0]["n_buckets"])


@needs_mpi
def test_ddp_unused_parameters(tmp_path):
    n = 2
    run = ok(launch(tmp_path, n, "ddp.py"))
    res = [run.result(r) for r in range(n)]
    mean_a = sum(res[r]["local_a"] for r in range(n)) / n
    for r in range(n):
        np.testing.assert_allclose(res[r]["unused_a"], mean_a, rtol=1e-12)
        np.testing.assert_allclose(res[r]["unused_a_2"], mean_a, rtol=1e-12)
        # b is used by rank 0 only: its gradient, averaged with the others' zeros
        np.testing.assert_allclose(res[r]["unused_b"], res[0]["local_b"] / n, rtol=1e-12)
        assert bool(res[r]["unused_c_is_none"])
        assert "Expected to have finished reduction in the prior iteration" in str(res[r]["unfinished_error"])
        # broadcast_buffers: both forwards began from rank 0's running statistics
        np.testing.assert_array_equal(res[r]["bn_pre"][0], np.zeros(4))
        np.testing.assert_array_equal(res[r]["bn_pre"][1], res[0]["bn_post1"])
    assert not np.allclose(res[0]["bn_post1"], res[1]["bn_post1"])  # the local batches moved them apart


def test_distributed_sampler_matches_torch():
    from minitorch.utils.data.distributed import DistributedSampler

    torch = __import__("pytest").importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for size, n, shuffle, drop_last, epoch in [(10, 4, True, False, 0), (10, 4, True, True, 3), (7, 2, False, False, 0),
                                               (3, 5, True, False, 1), (12, 3, True, False, 2)]:
        for r in range(n):
            ours = DistributedSampler(range(size), num_replicas=n, rank=r, shuffle=shuffle, drop_last=drop_last, seed=4)
            theirs = TorchSampler(range(size), num_replicas=n, rank=r, shuffle=shuffle, drop_last=drop_last, seed=4)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


def test_distributed_sampler_covers_the_dataset():
    from minitorch.utils.data.distributed import DistributedSampler

    seen = []
    for r in range(3):
        s = DistributedSampler(range(9), num_replicas=3, rank=r, seed=1)
        seen += list(s)
    assert sorted(seen) == list(range(9))
    import pytest

    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(9), num_replicas=3, rank=3)
