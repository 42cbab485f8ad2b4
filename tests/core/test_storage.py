"""Storages: Tensor.untyped_storage() and .storage(), UntypedStorage, TypedStorage and the legacy
FloatStorage, ... classes against PyTorch's: sizes, bytes, element sizes, values, indexing, the
memory they share with tensors (a write through one is seen by the other), errors."""
import warnings

import numpy as np
import pytest

import minitorch


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation, in both libraries
        yield


def _pair(make):
    torch = pytest.importorskip("torch")
    return make(minitorch), make(torch)


LAYOUTS = [
    lambda lib: lib.arange(6.0).reshape(2, 3)[1:],
    lambda lib: lib.arange(12, dtype=lib.int64).reshape(3, 4).t(),
    lambda lib: lib.arange(10, dtype=lib.int16)[2:7:2],
    lambda lib: lib.tensor([True, False, True]),
    lambda lib: lib.zeros(0),
    lambda lib: lib.arange(4.0, dtype=lib.float64).expand(3, 4),
]


@pytest.mark.parametrize("k", range(len(LAYOUTS)))
def test_storages_of_tensors_as_torch(k):
    m, t = _pair(LAYOUTS[k])
    for kind in ("untyped_storage", "storage"):
        ms, ts = getattr(m, kind)(), getattr(t, kind)()
        assert (ms.size(), len(ms), ms.nbytes(), ms.element_size()) == \
            (ts.size(), len(ts), ts.nbytes(), ts.element_size()), kind
        assert ms.tolist() == ts.tolist()
        assert str(ms.device) == str(ts.device) and ms.is_cuda is False
        assert minitorch.is_storage(ms) and not minitorch.is_storage(m)
        if ms.size():
            assert ms[0] == ts[0] and ms[-1] == ts[-1]
            assert ms.data_ptr() == m.data_ptr() - m.storage_offset() * m.element_size()
    ms, ts = m.storage(), t.storage()
    assert str(ms.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    assert ms.type().split(".")[-1] == ts.type().split(".")[-1]
    assert m.storage_type().__name__ == t.storage_type().__name__


def test_writes_are_shared_both_ways():
    base = minitorch.arange(6.0).reshape(2, 3)
    t = base[1:]
    s = t.storage()
    s[0] = 9.0
    assert base.tolist() == [[9.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    t[0, 1] = -1.0
    assert s[4] == -1.0 and t.untyped_storage().data_ptr() == s.data_ptr()
    x = minitorch.zeros(3)
    u = x.untyped_storage()
    u[0] = 255
    np.testing.assert_array_equal(x.numpy().view(np.uint8)[:4], [255, 0, 0, 0])
    part = u[4:8]  # a slice shares the memory too
    part[3] = 63
    assert x[1].item() == np.frombuffer(bytes([0, 0, 0, 63]), np.float32)[0]
    s.fill_(1.0)
    assert t.tolist() == [[1.0, 1.0, 1.0]]
    u2 = minitorch.UntypedStorage(4)
    u2.copy_(minitorch.UntypedStorage([1, 2, 3, 4]))
    assert u2.tolist() == [1, 2, 3, 4]


def test_constructors_as_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda lib: lib.UntypedStorage(4).size(),
        lambda lib: lib.UntypedStorage([1, 2, 3]).tolist(),
        lambda lib: lib.TypedStorage(3, dtype=lib.float64).size(),
        lambda lib: lib.TypedStorage([1, 2], dtype=lib.int32).tolist(),
        lambda lib: lib.FloatStorage([1, 2, 3]).tolist(),
        lambda lib: lib.FloatStorage(2).size(),
        lambda lib: str(lib.LongStorage([1, 2]).dtype).split(".")[-1],
        lambda lib: lib.BoolStorage([1, 0]).tolist(),
        lambda lib: lib.DoubleStorage([0.5]).element_size(),
        lambda lib: isinstance(lib.FloatStorage([1.0]), lib.TypedStorage),
        lambda lib: lib.is_storage(lib.ByteStorage(2)),
    ]
    for k, case in enumerate(cases):
        assert case(minitorch) == case(torch), k


def test_errors_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        s = lib.arange(6.0).storage()
        with pytest.raises(IndexError, match="index 10 out of range for storage of size 6"):
            s[10]
        with pytest.raises(IndexError, match="index 100 out of range for storage of size 24"):
            s.untyped()[100]
        with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage.__getitem__"):
            s[0:2]


def test_repr_and_sharing_state():
    s = minitorch.tensor([1.0, 2.0]).storage()
    assert repr(s).splitlines() == [" 1.0", " 2.0",
                                    "[minitorch.storage.TypedStorage(dtype=minitorch.float32, device=cpu) of size 2]"]
    assert not s.is_shared()
    with pytest.raises(RuntimeError, match="share_memory_"):
        s.share_memory_()
    t = minitorch.ones(3).share_memory_()
    assert t.untyped_storage().is_shared() and t.storage().share_memory_().is_shared()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        minitorch.storage._told_typed = False
        minitorch.ones(1).storage()


def test_set_as_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda lib, a, b: a.set_(b),
        lambda lib, a, b: a.set_(),
        lambda lib, a, b: a.set_(b.untyped_storage(), 1, (2, 2), (1, 2)),
        lambda lib, a, b: a.set_(b.storage(), 2, (2,)),
        lambda lib, a, b: a.set_(b.storage()),
        lambda lib, a, b: a.set_(lib.arange(3)),
        lambda lib, a, b: lib.zeros(2, requires_grad=True).set_(b),
    ]
    for k, case in enumerate(cases):
        got = []
        for lib in (minitorch, torch):
            a, b = lib.zeros(3), lib.arange(6.0)
            try:
                r = case(lib, a, b)
                assert r is a
                b[2] = 7.0  # a views b's memory now
                got.append((a.tolist(), tuple(a.shape), a.stride(), a.storage_offset()))
            except RuntimeError as e:
                got.append(type(e).__name__)
        assert got[0] == got[1], k
