"""Device-side assertions (cuda/device_assert.h): an out-of-range index, class
or target is found by the kernel, the op returns without waiting for the device, and the next
synchronisation raises PyTorch's AcceleratorError (a RuntimeError) "CUDA error: device-side
assert triggered" with the kernel's assertion. The emulated runtime counts the host's waits, so the tests also show
which ops wait (nonzero, masked_select, unique, the copies to the host) and which do not."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
HEAD = "^CUDA error: device-side assert triggered\n"
needs_emu = pytest.mark.skipif(not minitorch.cuda._is_emulated(),
                               reason="the emulated runtime counts host synchronisations")


def dev(a, dtype=None):
    return minitorch.tensor(np.asarray(a), dtype=dtype, device="cuda")


def values(*shape):
    return dev(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


BAD_CALLS = {
    "getitem": (lambda: values(4, 5)[dev([1, 4])], "index 4 is out of bounds for size 4"),
    "getitem negative": (lambda: values(4, 5)[:, dev([-6])], "index -6 is out of bounds for size 5"),
    "index_put_": (lambda: values(4, 5).index_put_((dev([7]),), values(5)), "index 7 is out of bounds"),
    "index_select": (lambda: values(4, 5).index_select(1, dev([0, 5])), "index 5 is out of bounds"),
    "gather": (lambda: values(4, 5).gather(1, dev([[0, -1]])), "index -1 is out of bounds"),
    "scatter_add_": (lambda: values(4, 5).scatter_add_(0, dev([[9]]), values(1, 1)), "index 9 is out of bounds"),
    "embedding": (lambda: F.embedding(dev([[0, 3], [10, 1]]), values(10, 3)), "index 10 is out of bounds for size 10"),
    "embedding backward": (lambda: minitorch._C.embedding_dense_backward(values(2, 3), dev([0, 6]), 6, -1, False),
                           "index 6 is out of bounds for size 6"),
    "one_hot": (lambda: F.one_hot(dev([0, 3]), 3), "index 3 is out of bounds for size 3"),
    # composites of the indexing ops: their kernels check (index_add_/index_copy_ take [0, size))
    "take": (lambda: values(4, 5).take(dev([3, -21])), "index -21 is out of bounds for size 20"),
    "index_add_": (lambda: values(4, 5).index_add_(0, dev([1, -1]), values(2, 5)), "index -1 is out of bounds for size 4"),
    "index_copy_": (lambda: values(4, 5).index_copy_(1, dev([5]), values(4, 1)), "index 5 is out of bounds for size 5"),
    "index_fill_": (lambda: values(4, 5).index_fill_(0, dev([4]), 1.0), "index 4 is out of bounds for size 4"),
    "max_unpool2d": (lambda: F.max_unpool2d(values(1, 1, 2, 2), dev(np.array([[[[0, 1], [2, 16]]]])), 2),
                     "index 16 is out of bounds for size 16"),  # a (4, 4) plane
    # a source shorter than the mask's ones: the running count reaches past it
    "masked_scatter_": (lambda: values(2, 3).masked_scatter_(dev([True, False, True]), values(3)),
                        "index 3 is out of bounds for size 3"),
    "nll_loss": (lambda: F.nll_loss(values(3, 4), dev([0, 4, 1])), "target 4 is out of bounds for 4 classes"),
    "cross_entropy": (lambda: F.cross_entropy(values(3, 4), dev([0, -3, 1])), "target -3 is out of bounds"),
    "bernoulli_": (lambda: values(3).bernoulli_(dev([0.5, 1.5, 0.0], minitorch.float32)), "0 <= p1 && p1 <= 1"),
    "bernoulli NaN": (lambda: minitorch.bernoulli(dev([0.5, np.nan], minitorch.float64)), "0 <= p1 && p1 <= 1"),
    "binary_cross_entropy": (lambda: F.binary_cross_entropy(dev([0.5, 1.5], minitorch.float32), dev([0.0, 1.0], minitorch.float32)),
                             "input_val >= zero && input_val <= one"),
    # the max poolings' backward (one kernel for both ranks) names the op of the call
    "max_pool2d backward": (lambda: minitorch._C.max_pool2d_with_indices_backward(
        values(1, 1, 2, 2), values(1, 1, 4, 4), 2, 2, 0, 1, False, dev(np.full((1, 1, 2, 2), 16))),
        "max_pool2d index 16 is out of bounds for a plane of 16"),
    "max_pool3d backward": (lambda: minitorch._C.max_pool3d_with_indices_backward(
        values(1, 1, 1, 2, 2), values(1, 1, 2, 4, 4), 2, 2, 0, 1, False, dev(np.full((1, 1, 1, 2, 2), -1))),
        "max_pool3d index -1 is out of bounds for a plane of 32"),
}


@needs_emu
@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_a_bad_value_is_raised_at_the_next_synchronisation(name):
    call, detail = BAD_CALLS[name]
    minitorch.cuda.synchronize()
    before = minitorch.cuda._emu_sync_count()
    call()  # returns: the kernel recorded the failure, nothing waited for it
    assert minitorch.cuda._emu_sync_count() == before
    with pytest.raises(minitorch.AcceleratorError, match=HEAD) as e:
        minitorch.cuda.synchronize()
    assert detail in str(e.value) and "Assertion `" in str(e.value)
    assert "CUDA_LAUNCH_BLOCKING=1" in str(e.value)
    # raised once: the device works on
    minitorch.cuda.synchronize()
    assert values(2, 2).sum().item() == pytest.approx(float(np.random.default_rng(0).standard_normal((2, 2)).astype(np.float32).sum()))


def test_every_synchronisation_point_raises_it():
    """item(), cpu(), printing, tolist, a stream's and an event's synchronize."""
    def fail():
        values(4, 5)[dev([4])]
    for sync in (lambda: values(1).item(), lambda: values(3).cpu(), lambda: str(values(2)),
                 lambda: values(2).tolist(), lambda: minitorch.cuda.current_stream().synchronize()):
        fail()
        with pytest.raises(RuntimeError, match=HEAD):
            sync()
    fail()
    event = minitorch.cuda.Event()
    event.record()
    with pytest.raises(RuntimeError, match=HEAD):
        event.synchronize()
    minitorch.cuda.synchronize()


def test_the_kernel_skips_only_the_bad_elements():
    w = values(6, 3)
    out = F.embedding(dev([0, 7, 2]), w)
    with pytest.raises(RuntimeError, match=HEAD):
        minitorch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy()[[0, 2]], w.cpu().numpy()[[0, 2]])
    # the gradient's good rows arrive, the bad one is dropped
    g = minitorch._C.embedding_dense_backward(minitorch.ones(3, 2, device="cuda"), dev([1, 9, 1]), 4, -1, False)
    with pytest.raises(RuntimeError, match=HEAD):
        g.cpu()
    np.testing.assert_array_equal(g.cpu().numpy(), [[0, 0], [2, 2], [0, 0], [0, 0]])


@needs_emu
def test_ops_that_wait_as_pytorch_does():
    x = dev([0.0, 1.0, 0.0, 2.0], minitorch.float32)
    for fn, waits in ((lambda: x.nonzero(), 1), (lambda: x.masked_select(x > 0), 1),
                      (lambda: minitorch.unique(x), 1), (lambda: x.sum(), 0), (lambda: x[dev([1, 3])], 0),
                      (lambda: F.one_hot(dev([0, 2])), 1), (lambda: F.one_hot(dev([0, 2]), 4), 0),
                      (lambda: F.nll_loss(values(3, 4), dev([0, 3, 1])), 0),
                      # the value checks of the draws read their summary back at once (PyTorch's
                      # multinomial reads twice, its with-replacement kernel checks on the device);
                      # bernoulli_'s kernel checks p on the device, as PyTorch's
                      (lambda: minitorch.multinomial(x + 1, 2), 1),
                      (lambda: minitorch.multinomial(x.view(2, 2) + 1, 3, True), 1),
                      (lambda: minitorch.bernoulli(x / 4), 0), (lambda: minitorch.poisson(x), 1),
                      # PyTorch's CUDA embedding_bag takes the offsets as given; fill_ with a
                      # 0-dim tensor on the device is a copy there
                      (lambda: F.embedding_bag(dev([0, 2, 1]), values(4, 3), dev([0, 1])), 0),
                      (lambda: values(2, 3).fill_(x[3]), 0), (lambda: values(2).fill_(2.5), 0)):
        before = minitorch.cuda._emu_sync_count()
        fn()
        assert minitorch.cuda._emu_sync_count() - before == waits
