"""Elementwise ops whose output is large enough (8 MiB or more in all, whatever the threads' share)
to be written past the caches with non-temporal stores (cpu/elementwise.c's streaming_loop): the
values must be those of the ordinary loops, for every output element size, with broadcast and
strided inputs, at 1 and 2 threads, with outputs that do not start on a 16-byte boundary,
and with dense runs of the output too short to stream beside runs that stream from odd offsets."""
import numpy as np
import pytest

import minitorch
from helpers import check

rng = np.random.default_rng(7)
N = (3 << 20) + 5  # 12 MiB of float32, not a multiple of the 2 KiB block


def test_add_mul_float32(threads):
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    check(lambda m, x, y: m.add(x, y, alpha=2.5), lambda x, y: x + 2.5 * y, [a, b])
    check(lambda m, x, y: x * y, lambda x, y: x * y, [a, b])


def test_strided_and_broadcast_inputs(threads):
    a = rng.standard_normal((1536, 2048)).astype(np.float32)
    row = rng.standard_normal(2048).astype(np.float32)
    check(lambda m, x, y: x + y, lambda x, y: x + y, [a, row])
    check(lambda m, x, y: x - y, lambda x, y: x - y, [a, row], layout="transposed")
    check(lambda m, x: x.exp(), lambda x: np.exp(x), [a], rtol=1e-6)


def test_short_and_odd_runs(threads):
    # rows of 3 (12-byte runs, stored as usual) and of 1031 (4124-byte runs, streamed, each
    # starting 12 bytes further into a 16-byte boundary than the last): 12-13 MiB either way
    for cols in (3, 1031):
        a = rng.standard_normal((N // cols, cols)).astype(np.float32)
        b = rng.standard_normal(cols).astype(np.float32)
        check(lambda m, x, y: m.add(x, y, alpha=0.5), lambda x, y: x + 0.5 * y, [a, b])
        check(lambda m, x, y: x * y, lambda x, y: x * y, [a, b], layout="transposed")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.int16])
def test_other_element_sizes(dtype, threads):
    a = (rng.standard_normal(N) * 100).astype(dtype)
    b = (rng.standard_normal(N) * 100).astype(dtype)
    got = (minitorch.tensor(a) * minitorch.tensor(b)).numpy()
    np.testing.assert_array_equal(got, a * b)


def test_bool_output_and_misaligned_output(threads):
    a = rng.standard_normal(3 * N).astype(np.float32)
    np.testing.assert_array_equal((minitorch.tensor(a) > 0).numpy(), a > 0)  # 1-byte elements
    base = minitorch.zeros(N + 3)
    out = base[3:]  # 12 bytes past the allocation's start
    x = minitorch.tensor(a[:N])
    minitorch.add(x, x, out=out)
    np.testing.assert_array_equal(base.numpy()[3:], a[:N] + a[:N])
    out.add_(x)  # in place: the loop writes the misaligned view itself
    np.testing.assert_array_equal(base.numpy()[3:], a[:N] + a[:N] + a[:N])
    assert (base.numpy()[:3] == 0).all()


def test_in_place(threads):
    """In place the output is an input, whose lines the loop reads anyway: it is not streamed
    (streaming would only evict what the next op reads); the values must not change for that."""
    a = rng.standard_normal(N).astype(np.float32)
    t = minitorch.tensor(a)
    t.mul_(3.0).add_(1.0)
    np.testing.assert_allclose(t.numpy(), a * np.float32(3.0) + np.float32(1.0), rtol=1e-6)
