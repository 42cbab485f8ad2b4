"""use_deterministic_algorithms: utils.deterministic.fill_uninitialized_memory fills empty()
memory as PyTorch's, and warn_only / the debug mode reach the dispatcher (the alerts of the CUDA
ops are tested in tests/cuda/test_cuda_deterministic.py)."""
import numpy as np
import pytest

import minitorch
import minitorch.utils.deterministic as det


@pytest.fixture
def deterministic():
    yield
    minitorch.use_deterministic_algorithms(False)
    det.fill_uninitialized_memory = True


def _fills(lib):
    t = lib.ones(2)
    t.resize_(4)
    return [lib.empty(3), lib.empty(2, dtype=lib.int32), lib.empty(2, dtype=lib.int64), lib.empty(2, dtype=lib.uint8),
            lib.empty(2, dtype=lib.int8), lib.empty(2, dtype=lib.int16), lib.empty(2, dtype=lib.bool),
            lib.empty(2, dtype=lib.float64), lib.empty_like(lib.ones(2, 2)), lib.ones(2).new_empty(3),
            lib.empty_strided((2, 2), (1, 2)), t]


def test_fill_uninitialized_memory_as_torch(deterministic):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (minitorch, torch):
        lib.use_deterministic_algorithms(True)
        try:
            results.append([(str(t.dtype).split(".")[-1], t.numpy().tolist()) for t in _fills(lib)])
        finally:
            lib.use_deterministic_algorithms(False)
    ours, theirs = results
    assert len(ours) == len(theirs)
    for (dt_m, v_m), (dt_t, v_t) in zip(ours, theirs):
        assert dt_m == dt_t
        np.testing.assert_array_equal(np.array(v_m), np.array(v_t))


def test_fill_keeps_requires_grad(deterministic):
    minitorch.use_deterministic_algorithms(True)
    for x in (minitorch.empty(3, requires_grad=True), minitorch.empty_like(minitorch.ones(3), requires_grad=True),
              minitorch.ones(1).new_empty(3, requires_grad=True)):
        assert x.is_leaf and x.requires_grad and x.grad_fn is None
        assert bool(x.isnan().all())
        (x * 2).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_fill_switch(deterministic):
    assert det.fill_uninitialized_memory is True
    with pytest.raises(RuntimeError, match="expected a bool, but got int"):
        det.fill_uninitialized_memory = 1
    minitorch.use_deterministic_algorithms(True)
    assert bool(minitorch.empty(4).isnan().all())
    det.fill_uninitialized_memory = False
    assert det.fill_uninitialized_memory is False
    e = minitorch.empty(4, dtype=minitorch.int64)  # whatever memory held; no longer the fill value
    assert e.shape == (4,)
    minitorch.use_deterministic_algorithms(False)
    det.fill_uninitialized_memory = True
    assert minitorch.zeros(3).sum().item() == 0  # empty() outside the mode: no fill asked


def test_modes_roundtrip(deterministic):
    minitorch.set_deterministic_debug_mode("warn")
    assert minitorch.are_deterministic_algorithms_enabled()
    assert minitorch.is_deterministic_algorithms_warn_only_enabled()
    minitorch.set_deterministic_debug_mode(0)
    assert minitorch.get_deterministic_debug_mode() == 0
    # CPU ops have deterministic kernels: no alert on the CPU
    minitorch.use_deterministic_algorithms(True)
    x = minitorch.rand(10)
    assert minitorch.histc(x, bins=4).sum().item() == 10
    assert minitorch.cumsum(x, 0).shape == (10,)


def _python_op_calls(lib):
    F = lib.nn.functional
    x = lib.tensor(np.arange(16, dtype="float32").reshape(1, 1, 4, 4))
    o, i = F.max_pool2d(x, 2, return_indices=True)
    o1, i1 = F.max_pool1d(x[0, :, 0], 2, return_indices=True)
    return [
        lambda: F.max_unpool2d(o, i, 2),
        lambda: F.max_unpool1d(o1, i1, 2),
        lambda: F.max_unpool3d(o.unsqueeze(2), i.unsqueeze(2), (1, 2, 2)),
        lambda: lib.zeros(4).put_(lib.tensor([0, 1]), lib.ones(2)),
    ]


def test_python_ops_alert_as_torch(deterministic):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (minitorch, torch):
        calls = _python_op_calls(lib)
        for call in calls:
            call()  # off: runs
        lib.use_deterministic_algorithms(True)
        row = []
        try:
            for call in calls:
                with pytest.raises(RuntimeError) as err:
                    call()
                row.append(str(err.value))
            lib.zeros(4).put_(lib.tensor([0, 1]), lib.ones(2), accumulate=True)  # deterministic on the CPU
            lib.use_deterministic_algorithms(True, warn_only=True)
            with pytest.warns(UserWarning, match="max_unpooling2d_forward_out does not have a deterministic"):
                calls[0]()
        finally:
            lib.use_deterministic_algorithms(False)
        messages.append(row)
    assert messages[0] == messages[1]


def test_resize_fills_its_new_elements(deterministic):
    # freed memory of ones first, which the grown storage may reuse: the fill must come from resize_
    minitorch.use_deterministic_algorithms(True)
    for n in (4, 64, 1000):
        junk = minitorch.ones(n + 8)
        del junk
        t = minitorch.ones(2)
        t.resize_(n)
        assert t[:2].tolist() == [1.0, 1.0] and bool(t[2:].isnan().all())
    t = minitorch.ones(2, dtype=minitorch.int64)
    t.resize_(2, 3)
    assert t.flatten().tolist() == [1, 1] + [2**63 - 1] * 4
    minitorch.use_deterministic_algorithms(False)
    t = minitorch.zeros(2)
    t.resize_(3)  # outside the mode: no fill, no error
    assert t.shape == (3,)
