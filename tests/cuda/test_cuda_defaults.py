"""The default device on a CUDA device (the emulated one without a GPU): set_default_device and
`with minitorch.device("cuda")` send the factories there, per thread; out= and indexing with
Python sequences on CUDA tensors."""
import threading

import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

CUDA0 = minitorch.device("cuda", 0)

FACTORIES = {
    "zeros": lambda: minitorch.zeros(2, 3),
    "ones": lambda: minitorch.ones(2),
    "empty": lambda: minitorch.empty(2),
    "full": lambda: minitorch.full((2,), 1.5),
    "arange": lambda: minitorch.arange(4),
    "linspace": lambda: minitorch.linspace(0, 1, 3),
    "logspace": lambda: minitorch.logspace(0, 1, 3),
    "eye": lambda: minitorch.eye(2),
    "rand": lambda: minitorch.rand(2),
    "randn": lambda: minitorch.randn(2),
    "randint": lambda: minitorch.randint(0, 5, (3,)),
    "randperm": lambda: minitorch.randperm(4),
    "tensor": lambda: minitorch.tensor([1.0, 2.0]),
    "linear": lambda: minitorch.nn.Linear(2, 3).weight,
}


@pytest.mark.parametrize("make", FACTORIES.values(), ids=FACTORIES.keys())
def test_factories_follow_the_device_context(make):
    with minitorch.device("cuda") as d:
        assert d == minitorch.device("cuda")
        assert make().device == CUDA0
        assert minitorch.get_default_device() == CUDA0
    assert make().device.type == "cpu"


def test_set_default_device_and_what_it_leaves_alone():
    minitorch.set_default_device("cuda")
    try:
        x = minitorch.ones(2, 2)
        assert x.device == CUDA0
        assert minitorch.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins
        assert minitorch.zeros_like(minitorch.ones(2, device="cpu")).device.type == "cpu"  # the input's
        assert x.new_zeros(3).device == CUDA0 and minitorch.from_numpy(np.ones(2)).device.type == "cpu"
        with minitorch.device("cpu"):
            assert minitorch.ones(1).device.type == "cpu"
        assert minitorch.ones(1).device == CUDA0
        assert_same((x * 2).sum(), (minitorch.ones(2, 2, device="cpu") * 2).sum())
    finally:
        minitorch.set_default_device(None)
    assert minitorch.ones(1).device.type == "cpu" and minitorch.get_default_device() == minitorch.device("cpu")


@pytest.mark.skipif(minitorch.cuda.device_count() < 2, reason="needs two devices")
def test_default_device_with_an_index_and_the_current_device():
    with minitorch.device("cuda:1"):
        assert minitorch.zeros(1).device == minitorch.device("cuda", 1)
    with minitorch.device("cuda"):  # "cuda": whichever is current at each call
        with minitorch.cuda.device(1):
            assert minitorch.zeros(1).device == minitorch.device("cuda", 1)
            assert minitorch.get_default_device() == minitorch.device("cuda", 1)
        assert minitorch.zeros(1).device == CUDA0


def test_the_default_device_is_per_thread():
    seen = []
    with minitorch.device("cuda"):
        worker = threading.Thread(target=lambda: seen.append(minitorch.zeros(1).device.type))
        worker.start()
        worker.join()
        assert minitorch.zeros(1).device.type == "cuda"
    assert seen == ["cpu"]


def test_set_default_tensor_type_cuda():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minitorch.set_default_tensor_type(minitorch.cuda.DoubleTensor)
        try:
            assert minitorch.zeros(2).device == CUDA0 and minitorch.zeros(2).dtype == minitorch.float64
            assert minitorch.Tensor(2).device == CUDA0
        finally:
            minitorch.set_default_tensor_type(minitorch.FloatTensor)
    assert minitorch.zeros(2).device.type == "cpu" and minitorch.get_default_dtype() == minitorch.float32


def test_out_on_cuda():
    a = minitorch.tensor([[1.0, -2.0], [3.0, 4.0]])
    for fn in (lambda x, o: minitorch.add(x, x, out=o), lambda x, o: minitorch.mm(x, x, out=o),
               lambda x, o: minitorch.sum(x, 1, out=o), lambda x, o: minitorch.cat([x, x], out=o)):
        o = minitorch.empty(0, device="cuda")
        assert fn(a.cuda(), o) is o
        assert_same(o, fn(a, minitorch.empty(0)))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device cuda:0, but got cpu instead"):
        minitorch.add(a.cuda(), 1, out=minitorch.empty(2, 2))
    o = minitorch.empty(0, device="cuda")
    assert minitorch.zeros(2, out=o) is o and o.device == CUDA0  # a factory makes its result on out's device


def test_indexing_cuda_tensors_with_sequences():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = minitorch.tensor(a, device="cuda")
    with minitorch.device("cuda"):  # the index tensors made from the sequences stay on the CPU
        for index in (range(2), (slice(None), range(1, 3)), [[0, 1], [1, 0]], np.array([1, 0]),
                      np.array([True, False]), (0, [True, False, True]), np.int64(1)):
            assert_same(t[index], minitorch.tensor(a)[index])
    t[range(1)] = 5.0
    a[range(1)] = 5.0
    assert_same(t, minitorch.tensor(a))
