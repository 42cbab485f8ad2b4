"""Reference counts of what the C API returns and takes: a fresh result is owned only by its
caller, a call leaves its arguments' counts where they were, and an erroring call, repeated,
neither grows its arguments' counts nor leaves C tensors, storages, autograd nodes, allocator
bytes or Python objects behind (an extra Py_INCREF or a missed release on an error path)."""
import gc
import io
import sys

import numpy as np
import pytest

import minitorch
from minitorch import nn

REPEAT = 500


def _fresh_count():
    o = object()
    return sys.getrefcount(o)


def _held_by_container_count():
    box = [object()]
    return sys.getrefcount(box[0])


FRESH = _fresh_count()
IN_CONTAINER = _held_by_container_count()


def _state():
    gc.collect()
    # pymalloc's block count (0 under PYTHONMALLOC=malloc, as in the sanitizer run) and the
    # objects the garbage collector tracks: a leaked tuple, list, dict or tensor shows in both
    return (minitorch._C._live_objects(), minitorch._C._cpu_allocator_stats()["allocated_bytes"],
            sys.getallocatedblocks() + len(gc.get_objects()))


def assert_no_growth(fn, *watched):
    """fn() run REPEAT times changes neither the watched objects' reference counts nor the
    live C objects and bytes; Python's allocated blocks may wobble, but a leaked object per
    call would add REPEAT of them, in every round. The blocks are the whole interpreter's, so a
    thread an earlier test left running (a notebook client's, a progress bar's) can add some
    during one round: of three rounds, the least growth counts."""
    for _ in range(20):
        fn()
    growth = []
    for _ in range(3):
        counts = [sys.getrefcount(w) for w in watched]
        live, nbytes, blocks = _state()
        for _ in range(REPEAT):
            fn()
        live2, nbytes2, blocks2 = _state()
        assert [sys.getrefcount(w) for w in watched] == counts
        assert live2 == live
        assert nbytes2 == nbytes
        growth.append(blocks2 - blocks)
        if growth[-1] < REPEAT // 5:
            return
    raise AssertionError(f"Python blocks grew by {growth} in three rounds of {REPEAT} calls")


def _tensors():
    minitorch.manual_seed(0)
    a = minitorch.randn(3, 4, requires_grad=True)
    b = minitorch.randn(3, 4)
    return a, b


# Expressions that build a new object in C: the result is the caller's alone.
FRESH_RESULTS = {
    "add": lambda a, b: a + b,
    "method": lambda a, b: b.mul(2.0),
    "function_kwargs": lambda a, b: minitorch.add(b, b, alpha=2),
    "shape": lambda a, b: b.shape,
    "size": lambda a, b: b.size(),
    "size_dim": lambda a, b: b.size(1) + 10**30,  # a big int is never a cached small int
    "stride": lambda a, b: b.stride(),
    "tolist": lambda a, b: b.tolist(),
    "item": lambda a, b: b.sum().item(),
    "numpy": lambda a, b: b.numpy(),
    "from_numpy": lambda a, b: minitorch.from_numpy(np.ones(3)),
    "tensor": lambda a, b: minitorch.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "getitem": lambda a, b: b[0],
    "getitem_mask": lambda a, b: b[b > 0],
    "max_dim": lambda a, b: b.max(0),
    "sort": lambda a, b: b.sort(),
    "split": lambda a, b: minitorch.split(b, 1),
    "cat": lambda a, b: minitorch.cat([b, b]),
    "detach": lambda a, b: a.detach(),
    "dlpack": lambda a, b: b.__dlpack__(),
    "dlpack_device": lambda a, b: b.__dlpack_device__(),
    "from_dlpack": lambda a, b: minitorch.from_dlpack(np.ones(3)),
    "allocator_stats": lambda a, b: minitorch._C._cpu_allocator_stats(),
    "dispatch_table": lambda a, b: minitorch._C._dispatch_table("addmm"),
    "op_info": lambda a, b: minitorch._C._op_info("add"),
    "grad_fn": lambda a, b: (a * 2).sum().grad_fn,
    "next_functions": lambda a, b: (a * 2).sum().grad_fn.next_functions,
    "autograd_grad": lambda a, b: minitorch.autograd.grad((a * b).sum(), [a]),
}


@pytest.mark.parametrize("name", sorted(FRESH_RESULTS))
def test_a_fresh_result_is_owned_by_the_caller_alone(name):
    a, b = _tensors()
    fn = FRESH_RESULTS[name]
    before = (sys.getrefcount(a), sys.getrefcount(b))
    r = fn(a, b)
    assert sys.getrefcount(r) == FRESH
    if isinstance(r, (tuple, list)):
        for item in r:
            if isinstance(item, minitorch.Tensor) or isinstance(item, (tuple, list, dict)):
                assert sys.getrefcount(item) == IN_CONTAINER + 1, item  # + the loop variable
    del r
    assert (sys.getrefcount(a), sys.getrefcount(b)) == before
    assert_no_growth(lambda: fn(a, b), a, b)


def test_grad_returns_the_same_tensor_each_time_and_keeps_no_extra_reference():
    a, b = _tensors()
    (a * b).sum().backward()
    g = a.grad
    assert a.grad is g
    base = sys.getrefcount(g)
    for _ in range(100):
        a.grad
    assert sys.getrefcount(g) == base
    del g
    assert_no_growth(lambda: a.grad, a)
    assert_no_growth(lambda: a.grad_fn, a)


def test_a_tensor_wrapper_dies_with_its_last_reference():
    before = minitorch._C._live_objects()
    t = minitorch.ones(4)
    v = t[1:]
    assert minitorch._C._live_objects()["tensors"] == before["tensors"] + 2
    del t
    # the view keeps its base (PyTorch's v._base) and so its storage; the base's wrapper goes
    assert v._base is not None and minitorch._C._live_objects()["tensors"] == before["tensors"] + 2
    assert minitorch._C._live_objects()["storages"] == before["storages"] + 1
    del v
    assert minitorch._C._live_objects() == before


def _raises(exc, fn):
    def call():
        with pytest.raises(exc):
            fn()
    return call


def _corrupt_file():
    buf = io.BytesIO()
    minitorch.save({"w": minitorch.ones(3)}, buf)
    return buf.getvalue()[:-5]


BAD = _corrupt_file()

# Erroring calls, with the exception class PyTorch raises.
ERRORS = {
    "shape_mismatch": (RuntimeError, lambda a, b: a + b[:2]),
    "mm_shapes": (RuntimeError, lambda a, b: b @ b),
    "bad_dim": (IndexError, lambda a, b: b.sum(5)),
    "bad_index": (IndexError, lambda a, b: b[7]),
    "bad_type": (TypeError, lambda a, b: minitorch.add(b, "x")),
    "bad_kwarg": (TypeError, lambda a, b: b.sum(dimension=0)),
    "view_noncontiguous": (RuntimeError, lambda a, b: b.t().view(12)),
    "inplace_leaf": (RuntimeError, lambda a, b: a.add_(1)),
    "ragged_list": (ValueError, lambda a, b: minitorch.tensor([[1.0], [2.0, 3.0]])),
    "cat_empty": (ValueError, lambda a, b: minitorch.cat([])),
    "cat_shapes": (RuntimeError, lambda a, b: minitorch.cat([b, b[:2]], 1)),
    "dlpack_requires_grad": (BufferError, lambda a, b: a.__dlpack__()),
    "backward_non_scalar": (RuntimeError, lambda a, b: (a * 2).backward()),
    "grad_unused": (RuntimeError, lambda a, b: minitorch.autograd.grad((b * 2).sum(), [a])),
    "load_truncated": (Exception, lambda a, b: minitorch.load(io.BytesIO(BAD))),
    "setitem_shape": (RuntimeError, lambda a, b: b.__setitem__(0, minitorch.ones(5))),
    "linear_shapes": (RuntimeError, lambda a, b: nn.functional.linear(b, b.t())),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_erroring_call_leaks_nothing(name):
    a, b = _tensors()
    exc, fn = ERRORS[name]
    assert_no_growth(_raises(exc, lambda: fn(a, b)), a, b)


def test_backward_twice_leaks_nothing():
    a, b = _tensors()

    def twice():
        loss = (a * b).sum()
        loss.backward()
        with pytest.raises(RuntimeError):
            loss.backward()
    assert_no_growth(twice, a, b)


def test_the_check_sees_a_leak():
    a, b = _tensors()
    kept = []
    with pytest.raises(AssertionError):
        assert_no_growth(lambda: kept.append(b), b)  # one reference to b a call
    kept.clear()
    with pytest.raises(AssertionError):
        assert_no_growth(lambda: kept.append(b + 1))  # one C tensor a call
    kept.clear()
    with pytest.raises(AssertionError):
        assert_no_growth(lambda: kept.append([]))  # one Python object a call


@pytest.mark.parametrize("n", [3, 6])
def test_matrix_exp_leaves_nothing_behind(n):
    """Its Pade sums once overwrote their first terms' temporaries: two tensors a call."""
    a = minitorch.tensor(np.random.default_rng(n).standard_normal((2, n, n)) * 3.0)
    assert_no_growth(lambda: minitorch.linalg.matrix_exp(a), a)
