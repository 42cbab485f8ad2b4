"""DTensor.__setitem__ with a DTensor value writes each rank's part of the region, on sharded
dimensions too (PyTorch 2.13 leaves a Shard(0) tensor unchanged for d[1] = v: it writes into a
replicated copy); what PyTorch 2.13 refuses (a number, a plain tensor, a mask on a sharded
tensor) raises its errors, as it does under gloo on 2 ranks."""
import numpy as np
import pytest

from launching import launch, needs_mpi, ok

pytestmark = needs_mpi


@pytest.mark.parametrize("n", [2, 3])
def test_setitem(tmp_path, n):
    run = ok(launch(tmp_path, n, "dtensor_setitem.py", timeout=120))
    for r in range(n):
        res = run.result(r)
        cases = [k for k in res if "|" in k and not k.startswith("want")]
        assert len(cases) == 3 * 12 * 2
        for key in cases + ["sharded value"]:
            np.testing.assert_array_equal(res[key], res[f"want {key}"], err_msg=key)
        assert list(res["errors"]) == [
            "number: NotImplementedError: Operator aten.fill_.Tensor does not have a sharding strategy registered.",
            "tensor: RuntimeError: aten.copy_.default got mixed torch.Tensor and DTensor, need to convert all "
            "torch.Tensor to DTensor before calling distributed operators!",
            "mask: RuntimeError: aten.index_put_.default: in-place operations that require placement changes are "
            "not supported. The input has placement (Shard(dim=0),), but no valid strategy preserves this "
            "placement. Please use the out-of-place version of this operation instead."]
        x = np.arange(30, dtype=np.float32).reshape(5, 6)
        np.testing.assert_array_equal(res["mask"], np.where(x > 20, 0, x))
