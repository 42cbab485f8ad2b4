"""DLPack: zero-copy exchange with NumPy and PyTorch, both capsule kinds, the deleter running
exactly once, read-only sources, and the errors PyTorch raises."""
import gc
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitorch
from helpers import dlpack_sample, dlpack_stats, to_layout

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
DTYPES = ["bool", "int32", "int64", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       layout=st.sampled_from(["contiguous", "transposed", "sliced"]))
def test_to_numpy_shares_memory(dtype, shape, layout):
    if layout != "contiguous" and len(shape) == 0:
        layout = "contiguous"
    a = dlpack_sample(dtype, shape)
    t = to_layout(a, layout) if shape and 0 not in shape else minitorch.tensor(a)
    n = np.from_dlpack(t)
    assert n.dtype == a.dtype and n.shape == a.shape
    np.testing.assert_array_equal(n, a)
    if t.numel():
        assert n.ctypes.data == t.data_ptr()
        for d, size in enumerate(t.shape):
            if size > 1:  # a size-1 dim's stride is free
                assert n.strides[d] == t.stride(d) * t.element_size()


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_numpy_shares_memory_both_ways(dtype):
    base = dlpack_sample(dtype, (4, 6))
    view = base[1:, ::2].T  # offset, non-unit and transposed strides
    t = minitorch.from_dlpack(view)
    assert t.dtype == getattr(minitorch, dtype) and tuple(t.shape) == view.shape
    assert t.stride() == tuple(s // view.itemsize for s in view.strides)
    assert t.data_ptr() == view.ctypes.data
    np.testing.assert_array_equal(t.numpy(), view)
    if dtype != "bool":
        view[0, 0] = 42
        assert t[0, 0].item() == 42
        t[1, 1] = 7
        assert view[1, 1] == 7


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_round_trip_zero_copy(dtype):
    t = minitorch.tensor(dlpack_sample(dtype, (3, 5)))[:, 1::2]
    p = torch.from_dlpack(t)
    assert p.data_ptr() == t.data_ptr() and p.stride() == t.stride()
    assert str(p.dtype).split(".")[1] == dtype
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    q = torch.tensor(dlpack_sample(dtype, (4, 3))).t()[1:]
    m = minitorch.from_dlpack(q)
    assert m.data_ptr() == q.data_ptr() and m.stride() == q.stride()
    np.testing.assert_array_equal(m.numpy(), q.numpy())
    if dtype == "float32":
        q[0, 0] = 99
        assert m[0, 0].item() == 99


def test_capsule_kinds_and_device():
    t = minitorch.ones(2)
    assert t.__dlpack_device__() == (1, 0)
    assert 'dltensor"' in repr(t.__dlpack__())
    assert 'dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(1, 0)))
    assert '"dltensor_versioned"' in repr(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_capsule_consumed_once_and_renamed(max_version):
    t = minitorch.arange(4.0)
    cap = t.__dlpack__(max_version=max_version)
    m = minitorch.from_dlpack(cap)
    assert repr(cap).startswith('<capsule object "used_dltensor')
    assert m.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="consumed only once"):
        minitorch.from_dlpack(cap)


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_deleter_runs_exactly_once(max_version):
    before = dlpack_stats()
    t = minitorch.arange(6.0)
    # dropped unconsumed: the capsule's destructor runs the deleter
    t.__dlpack__(max_version=max_version)
    # consumed by minitorch, NumPy and PyTorch: the consumer runs it when its tensor dies
    caps = [t.__dlpack__(max_version=max_version) for _ in range(2)]
    m = minitorch.from_dlpack(caps[0])
    a = np.from_dlpack(t)
    p = torch.from_dlpack(t) if torch is not None else None
    mid = dlpack_stats()
    assert mid["exported"] - before["exported"] == 4 + (p is not None)
    assert mid["deleted"] - before["deleted"] == 1
    del caps, m, a, p
    after = dlpack_stats()
    assert after["exported"] - before["exported"] == after["deleted"] - before["deleted"]
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0))  # producer untouched


def test_import_releases_producer_once():
    a = np.arange(8.0)
    base = sys.getrefcount(a)
    ts = [minitorch.from_dlpack(a) for _ in range(3)]
    views = [t[1:] for t in ts]
    assert sys.getrefcount(a) > base
    del ts
    gc.collect()
    assert sys.getrefcount(a) > base  # the views still hold the memory
    del views
    gc.collect()
    assert sys.getrefcount(a) == base


def test_copy_flags():
    t = minitorch.arange(4.0)
    c = minitorch.from_dlpack(t, copy=True)
    assert c.data_ptr() != t.data_ptr()
    assert minitorch.from_dlpack(t, copy=False).data_ptr() == t.data_ptr()
    n = np.from_dlpack(t, copy=True)
    assert n.ctypes.data != t.data_ptr()
    np.testing.assert_array_equal(n, t.numpy())
    a = np.arange(3.0)
    assert minitorch.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data


def test_read_only_source():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        minitorch.from_dlpack(a, copy=False)
    t = minitorch.from_dlpack(a)  # copied: minitorch tensors are writable
    assert t.data_ptr() != a.ctypes.data
    t[0] = 5
    assert a[0] == 0


def test_deferred_copy_is_left_only_for_device_memory():
    # defer=True (how from_dlpack imports CUDA memory) returns (tensor, copy_needed); host
    # memory is copied in C as before, so copy_needed is False here, shared or copied
    a = np.arange(3.0)
    shared, needed = minitorch._C._from_dlpack_capsule(a.__dlpack__(), None, True)
    assert not needed and shared.data_ptr() == a.ctypes.data
    copied, needed = minitorch._C._from_dlpack_capsule(a.__dlpack__(), True, True)
    assert not needed and copied.data_ptr() != a.ctypes.data
    np.testing.assert_array_equal(copied.numpy(), a)


def test_unsupported_dtypes_and_devices():
    for dt, name in ((np.uint16, "uint16"), (np.uint32, "uint32"), (np.uint64, "uint64")):  # PyTorch 2.3+'s
        t = minitorch.from_dlpack(np.arange(3, dtype=dt))
        assert t.dtype == getattr(minitorch, name) and t.tolist() == [0, 1, 2]
    torch = sys.modules.get("torch") or pytest.importorskip("torch")
    with pytest.raises(BufferError, match=r"unsupported DLPack dtype \(code 14, bits 8"):
        minitorch.from_dlpack(torch.zeros(2, dtype=torch.float8_e8m0fnu))  # no minitorch dtype
    with pytest.raises(BufferError, match="negative strides"):
        minitorch.from_dlpack(np.arange(3.0)[::-1])
    with pytest.raises(BufferError, match="Unsupported device_type: 7"):
        minitorch.ones(2).__dlpack__(dl_device=(7, 0))
    with pytest.raises(ValueError, match=r"cannot move \(i.e. copy=False\) tensor from cpu to cuda:0"):
        minitorch.ones(2).__dlpack__(dl_device=(2, 0), copy=False)
    if not minitorch.cuda.is_available():  # dl_device=CUDA copies there, which needs a device
        with pytest.raises((RuntimeError, AssertionError)):
            minitorch.ones(2).__dlpack__(dl_device=(2, 0))

        class OnCuda:  # CUDA memory is refused before the producer is asked for it
            def __dlpack_device__(self):
                return (2, 0)

            def __dlpack__(self, **kwargs):
                raise AssertionError("not asked")
        with pytest.raises((RuntimeError, AssertionError), match="CUDA"):
            minitorch.from_dlpack(OnCuda())


def test_export_errors_match_torch():
    for lib in [minitorch] + ([torch] if torch is not None else []):
        with pytest.raises(BufferError, match="require gradient"):
            lib.ones(2, requires_grad=True).__dlpack__()
        with pytest.raises(AssertionError, match="stream should be None on cpu"):
            lib.ones(2).__dlpack__(stream=3)
        with pytest.raises(TypeError, match="stream must be"):
            lib.ones(2).__dlpack__(stream="x")
    assert minitorch.ones(2).detach().__dlpack__(stream=-1) is not None


def test_export_to_the_host_device_id_ignored():
    t = minitorch.arange(3.0)
    # the host has one device: any id names it, as in PyTorch, and nothing is copied
    assert minitorch.from_dlpack(t.__dlpack__(dl_device=(1, 1))).data_ptr() == t.data_ptr()
    c = minitorch.from_dlpack(t.__dlpack__(dl_device=(1, 0), copy=True))
    assert c.data_ptr() != t.data_ptr()


@pytest.mark.parametrize("device", ["cpu", minitorch.device("cpu")])
@pytest.mark.parametrize("copy", [None, False, True])
def test_from_dlpack_device_cpu(device, copy):
    for src in (np.arange(4.0), minitorch.arange(4.0)):
        ptr = src.ctypes.data if isinstance(src, np.ndarray) else src.data_ptr()
        t = minitorch.from_dlpack(src, device=device, copy=copy)
        assert t.device == minitorch.device("cpu")
        assert (t.data_ptr() == ptr) == (copy is not True)
        np.testing.assert_array_equal(t.numpy(), np.arange(4.0))
    if torch is not None:
        p = torch.arange(4.0)
        r = torch.from_dlpack(p, device=device if isinstance(device, str) else "cpu", copy=copy)
        assert (r.data_ptr() == p.data_ptr()) == (copy is not True)


def test_from_dlpack_device_errors_match_torch():
    libs = [minitorch] + ([torch] if torch is not None else [])
    for lib in libs:
        a = np.arange(3.0)
        with pytest.raises(AssertionError, match="unsupported device type: <class 'int'>"):
            lib.from_dlpack(a, device=0)
        with pytest.raises(ValueError, match=r"cannot move DLPack tensor from device \(1, 0\) to "
                                             r"\(2, 1\) without copying. Set copy=None or copy=True."):
            lib.from_dlpack(a, device="cuda:1", copy=False)
        for kw in ({"copy": True}, {"device": "cpu"}):
            with pytest.raises(AssertionError, match="not supported when ext_tensor is already a "
                                                     "DLPack capsule"):
                lib.from_dlpack(lib.ones(2).__dlpack__(), **kw)
    if not minitorch.cuda.is_available():  # a move to CUDA needs a device
        with pytest.raises((RuntimeError, AssertionError)):
            minitorch.from_dlpack(np.arange(3.0), device="cuda:0")


def test_stream_argument_on_cpu():
    t = minitorch.ones(2)
    # None and -1 (PyTorch's default: no synchronization) are the only streams a CPU tensor takes
    for s in (None, -1):
        assert minitorch.from_dlpack(t.__dlpack__(stream=s)).data_ptr() == t.data_ptr()
    for lib in [minitorch] + ([torch] if torch is not None else []):
        for s in (0, 1, 2, 12345):
            with pytest.raises(AssertionError, match="stream should be None on cpu"):
                lib.ones(2).__dlpack__(stream=s)
        with pytest.raises(TypeError, match="stream must be"):
            lib.ones(2).__dlpack__(stream=1.0)
    # requires_grad is refused before the stream is looked at, as in PyTorch
    with pytest.raises(BufferError, match="require gradient"):
        minitorch.ones(2, requires_grad=True).__dlpack__(stream="x")


def test_record_stream_knows_imported_memory():
    assert minitorch._C._dlpack_is_imported(minitorch.from_dlpack(np.arange(2.0)))
    assert minitorch._C._dlpack_is_imported(minitorch.from_dlpack(np.arange(4.0))[1:])
    assert not minitorch._C._dlpack_is_imported(minitorch.arange(2.0))
    with pytest.raises(TypeError):
        minitorch._C._dlpack_is_imported(3)


def crafted_capsule(dev_type, dev_id, versioned):
    """A capsule of minitorch's whose DLTensor claims another device (as a crafted or buggy
    producer's could)."""
    import ctypes

    cap = minitorch.arange(4.0).__dlpack__(max_version=(1, 0) if versioned else None)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    managed = get(cap, b"dltensor_versioned" if versioned else b"dltensor")
    # DLManagedTensorVersioned opens with version, manager_ctx, deleter, flags (8 bytes each);
    # DLManagedTensor with the DLTensor, whose device follows its data pointer
    device = (ctypes.c_int32 * 2).from_address(managed + (32 if versioned else 0) + 8)
    device[0], device[1] = dev_type, dev_id
    return cap


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("dev_id", [-5, -1, 64, 2**31 - 1])
def test_capsule_of_a_cuda_device_we_lack_is_refused(dev_id, versioned):
    # a capsule claiming CUDA device -5 made a tensor on cuda:-5 (and one on a device we do not
    # have); a capsule is checked like a producer's __dlpack_device__, and the C import refuses a
    # negative id itself
    before = dlpack_stats()
    # a build without CUDA says so as PyTorch's CPU build does (AssertionError, "not compiled")
    with pytest.raises(RuntimeError if minitorch.cuda.is_built() else AssertionError):
        minitorch.from_dlpack(crafted_capsule(2, dev_id, versioned))
    if dev_id < 0:
        with pytest.raises(BufferError, match=f"invalid CUDA device id {dev_id}"):
            minitorch._C._from_dlpack_capsule(crafted_capsule(2, dev_id, versioned), None)
    after = dlpack_stats()  # each refused capsule's deleter ran once
    assert after["exported"] - before["exported"] == after["deleted"] - before["deleted"]
