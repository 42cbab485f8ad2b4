"""The CPU paths issue 21 made faster, against PyTorch: the thread count (one pool for minitorch's
loops and OpenBLAS's), max_pool2d keeping its indices for the backward and its double backward,
and layer_norm / batch_norm on edge rows (one element, huge values, NaN) at 1 and 2 threads."""
import numpy as np
import pytest

import minitorch
from helpers import child_env, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")
rng = np.random.default_rng(0)


@pytest.fixture(params=[1, 2])
def threads(request):
    """Runs the test at 1 and at 2 threads, and restores the count."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(request.param)
    yield request.param
    minitorch.set_num_threads(before)


# ---- threads ----

def test_set_num_threads_round_trip():
    before = minitorch.get_num_threads()
    try:
        for n in (1, 3, 2):
            minitorch.set_num_threads(n)
            assert minitorch.get_num_threads() == n
            a = minitorch.tensor(rng.standard_normal((300, 300)).astype(np.float32))
            np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-4, atol=1e-3)
            np.testing.assert_allclose((a + 1).sum().item(), (a.numpy() + 1).sum(dtype=np.float64), rtol=1e-5)
    finally:
        minitorch.set_num_threads(before)


@pytest.mark.parametrize("value, message", [
    (0, "set_num_threads expects a positive integer"),
    (-1, "set_num_threads expects a positive integer"),
    (1.5, "set_num_threads expects an int, but got float"),
    ("a", "set_num_threads expects an int, but got str"),
    (True, "set_num_threads expects an int, but got bool"),
])
def test_set_num_threads_errors(value, message):
    libs = [minitorch] + ([torch] if torch is not None else [])
    for lib in libs:
        with pytest.raises(RuntimeError, match=message):
            lib.set_num_threads(value)


def test_numpy_integer_thread_count():
    before = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(np.int64(1))
        assert minitorch.get_num_threads() == 1
    finally:
        minitorch.set_num_threads(before)


def test_defaults_follow_omp_num_threads():
    """OMP_NUM_THREADS sets the count of both pools' one pool; interop threads may be set once."""
    import subprocess
    import sys

    code = ("import minitorch as t; print(t.get_num_threads()); "
            "assert t.get_num_interop_threads() >= 1; t.set_num_interop_threads(3); "
            "print(t.get_num_interop_threads())\n"
            "try:\n    t.set_num_interop_threads(2)\nexcept RuntimeError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], env=child_env(OMP_NUM_THREADS="1"),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:3] == ["1", "3", "Error: cannot set number of interop threads after parallel work has "
                                 "started or set_num_interop_threads called"]
