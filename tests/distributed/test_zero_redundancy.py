"""ZeroRedundancyOptimizer over 2 processes against PyTorch's Adam in one process on the full batch."""
import sys

import numpy as np
import pytest

from launching import SCRIPTS, launch, needs_mpi, ok

sys.path.insert(0, str(SCRIPTS))
from mlp import data, model  # noqa: E402


def torch_adam(steps):
    """PyTorch's Adam (lr 0.01, then 0.005 from step 2) of mlp.model on the full batches: each
    step's parameters and the final optimizer state."""
    torch = pytest.importorskip("torch")
    ref = model(seed=0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.ReLU(),
                              torch.nn.Linear(8, 2)).double()
    net.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    opt = torch.optim.Adam(net.parameters(), lr=0.01, betas=(0.8, 0.99))
    out = []
    for step in range(steps):
        if step == 2:
            opt.param_groups[0]["lr"] = 0.005
        x, y = data(step)
        opt.zero_grad()
        torch.nn.functional.mse_loss(net(torch.tensor(x.numpy())), torch.tensor(y.numpy())).backward()
        opt.step()
        out.append(np.concatenate([p.detach().numpy().reshape(-1) for p in net.parameters()]))
    return np.stack(out), opt.state_dict()


def greedy_partition(sizes, n):
    """PyTorch's documented sorted-greedy rule: largest first, each to the least-loaded rank."""
    load, owner = [0] * n, {}
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        rank = load.index(min(load))
        owner[i] = rank
        load[rank] += sizes[i]
    return owner


@needs_mpi
def test_zero_redundancy_adam_matches_full_batch(tmp_path):
    n = 2
    run = ok(launch(tmp_path, n, "zero.py"))
    res = [run.result(r) for r in range(n)]
    want, state = torch_adam(4)
    sizes = [p.numel() for p in model(seed=0).parameters()]
    owner = greedy_partition(sizes, n)
    for r in range(n):
        np.testing.assert_allclose(res[r]["steps"], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(res[r]["steps_bucket"], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(res[r]["mine"], sorted(i for i, o in owner.items() if o == r))
        assert float(res[r]["local_lr"]) == 0.005
        assert "consolidate_state_dict(to=" in str(res[r]["unconsolidated"])
        np.testing.assert_array_equal(res[r]["continued"], res[r]["reloaded"])
        np.testing.assert_array_equal(res[r]["continued"], res[0]["continued"])
        assert int(res[r]["n_buckets"]) == n
        assert str(res[r]["empty"]) == "ZeroRedundancyOptimizer got an empty parameter list"
        # the new group went to the least-loaded rank; its step reached every rank
        np.testing.assert_allclose(res[r]["extra"], np.full(3, 1 - 0.5 / (1 + 1e-8)), rtol=1e-12)  # Adam: one lr step
    assert [bool(res[r]["extra_here"]) for r in range(n)].count(True) == 1
    np.testing.assert_array_equal(res[0]["state_keys"], range(len(sizes)))
    np.testing.assert_array_equal(res[0]["steps_in_state"], [4.0] * len(sizes))
    assert float(res[0]["group_lr"]) == 0.005
    torch_sq = np.concatenate([state["state"][i]["exp_avg_sq"].numpy().reshape(-1) for i in range(len(sizes))])
    np.testing.assert_allclose(res[0]["exp_avg_sq"], torch_sq, rtol=1e-10, atol=1e-15)
