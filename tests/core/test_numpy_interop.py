"""NumPy interop: Tensor.numpy(), np.asarray(t), __array__ and from_numpy share memory (no copy) in
both directions, with the right dtype and strides, for the five dtypes; unsupported dtypes and
negative strides are refused; and each side keeps the memory alive as long as it needs it."""
import ctypes
import gc
import hashlib
import io
import struct
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import shapes

DTYPES = {
    "float32": minitorch.float32,
    "float64": minitorch.float64,
    "int64": minitorch.int64,
    "int32": minitorch.int32,
    "bool": minitorch.bool,
}


def strides_of_long_dims(shape, strides):
    """Strides of the dims with more than one element: the others' strides mean nothing (NumPy's
    buffer export normalises them for contiguous arrays)."""
    return tuple(st for n, st in zip(shape, strides) if n > 1)


def address(a):
    return a.__array_interface__["data"][0]


def sample(dtype, shape=(2, 3)):
    return (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)


def other_value(dtype):
    return np.array(1 if dtype == "bool" else 9).astype(dtype)


# ---- tensor -> NumPy ----

@pytest.mark.parametrize("convert", [lambda t: t.numpy(), np.asarray, lambda t: t.__array__()],
                         ids=["numpy", "asarray", "__array__"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_to_numpy_shares_memory(dtype, convert):
    t = minitorch.tensor(sample(dtype), dtype=DTYPES[dtype])
    a = convert(t)
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
    assert address(a) == t.data_ptr()
    assert a.strides == tuple(s * t.element_size() for s in t.stride())
    a[1, 2] = other_value(dtype)
    assert t[1, 2].item() == other_value(dtype)
    t[0, 0] = other_value(dtype).item()
    assert a[0, 0] == other_value(dtype)


@pytest.mark.parametrize(
    "make",
    [lambda: minitorch.arange(12.0).view(3, 4).t(),
     lambda: minitorch.arange(12.0).view(3, 4)[1:, ::2],
     lambda: minitorch.arange(24.0).view(2, 3, 4).permute(2, 0, 1)[1],
     lambda: minitorch.arange(3.0).expand(4, 3),
     lambda: minitorch.arange(6.0)[3:],
     lambda: minitorch.zeros(2, 0, 3),
     lambda: minitorch.tensor(2.5)],
    ids=["transposed", "sliced", "permuted_selected", "expanded", "offset", "empty", "0d"],
)
def test_strided_tensor_to_numpy(make):
    t = make()
    a = t.numpy()
    assert a.shape == tuple(t.shape)
    if t.numel():
        assert address(a) == t.data_ptr()
        assert a.strides == tuple(s * t.element_size() for s in t.stride())
    assert a.tolist() == t.tolist()


def test_numpy_of_view_writes_into_base():
    base = minitorch.zeros(3, 4)
    a = base.t()[1:].numpy()
    a[:] = 7
    assert base.tolist() == [[0.0, 7.0, 7.0, 7.0]] * 3


def test_numpy_results_share_one_buffer():
    t = minitorch.arange(6.0)
    assert np.shares_memory(t.numpy(), np.asarray(t[2:]))


def test_np_array_copies():
    t = minitorch.arange(6.0)
    a = np.array(t)
    assert address(a) != t.data_ptr()
    a[0] = 5
    assert t[0].item() == 0


@pytest.mark.parametrize("np_dtype", [np.float64, np.int64, np.float32])
def test_array_with_dtype_casts(np_dtype):
    t = minitorch.tensor([1.5, 2.5])
    a = np.asarray(t, dtype=np_dtype)
    assert a.dtype == np_dtype
    np.testing.assert_array_equal(a, np.array([1.5, 2.5]).astype(np_dtype))
    assert t.__array__(np_dtype).dtype == np_dtype


def test_array_copy_flag():
    t = minitorch.arange(3.0)
    assert address(t.__array__(copy=True)) != t.data_ptr()
    assert address(t.__array__(copy=False)) == t.data_ptr()


def test_numpy_ufuncs_take_tensors():
    t = minitorch.tensor([1.0, 4.0])
    np.testing.assert_array_equal(np.sqrt(t), [1.0, 2.0])
    np.testing.assert_array_equal(np.add(t, 1), [2.0, 5.0])


@pytest.mark.parametrize(
    "fn",
    [lambda t, a: t + a, lambda t, a: t * a.astype(np.float64), lambda t, a: t - a, lambda t, a: t.float() / a,
     lambda t, a: t + a[0], lambda t, a: t.double() + a.astype(np.float32), lambda t, a: np.add(t, a),
     lambda t, a: np.sqrt(t.double()), lambda t, a: t.reshape(3, 1) + a],
    ids=["add", "mul_f64", "sub", "div", "add_0d", "add_f32", "np_add", "np_sqrt", "broadcast"],
)
def test_tensor_with_ndarray_gives_a_tensor_like_torch(fn):
    # Tensor + ndarray falls to NumPy (the Tensor's operator declines the array), which returned an
    # ndarray; PyTorch's __array_wrap__ makes NumPy's result a Tensor again.
    a = np.array([1, 2, 4])
    out = fn(minitorch.tensor([3, 5, 7]), a)
    assert isinstance(out, minitorch.Tensor)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PyTorch's one-argument __array_wrap__
        want = fn(torch.tensor([3, 5, 7]), a)
    assert isinstance(want, torch.Tensor)
    assert str(out.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(out.shape) == tuple(want.shape)
    np.testing.assert_array_equal(out.numpy(), want.numpy())


def test_numpy_of_requires_grad_raises():
    t = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        t.numpy()
    assert t.numpy(force=True).tolist() == [1.0, 1.0]
    assert t.detach().numpy().tolist() == [1.0, 1.0]


def test_numpy_of_requires_grad_with_grad_mode_off():
    # PyTorch refuses only while grad mode is on: under no_grad, and so in an autograd.Function's
    # forward, the array shares the tensor's memory
    t = minitorch.ones(2, requires_grad=True)
    with minitorch.no_grad():
        a = t.numpy()
        assert np.asarray(t).tolist() == [1.0, 1.0]
    a[0] = 5.0
    assert t.detach().tolist() == [5.0, 1.0]

    class ViaNumPy(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return minitorch.tensor(np.cumsum(x.numpy()))

        @staticmethod
        def backward(ctx, g):
            return g.flip(0).cumsum(0).flip(0)

    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ViaNumPy.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()  # grad mode on again


def test_memoryview_of_tensor():
    t = minitorch.zeros(2, 3, dtype=minitorch.int32).t()
    m = memoryview(t)
    assert m.format == "i" and m.itemsize == 4 and m.shape == (3, 2) and m.strides == (4, 12)
    assert not m.readonly


# ---- NumPy -> tensor ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_from_numpy_shares_memory(dtype):
    a = sample(dtype)
    t = minitorch.from_numpy(a)
    assert t.dtype == DTYPES[dtype]
    assert t.shape == a.shape and t.stride() == (3, 1) and t.storage_offset() == 0
    assert t.data_ptr() == address(a)
    assert t.tolist() == a.tolist()
    a[1, 1] = other_value(dtype)
    assert t[1, 1].item() == other_value(dtype)
    t[0, 2] = other_value(dtype).item()
    assert a[0, 2] == other_value(dtype)
    assert address(t.numpy()) == address(a)


@pytest.mark.parametrize("np_dtype, dtype", [(np.intc, "int32"), (np.longlong, "int64"), (np.int_, "int64"),
                                             (np.single, "float32"), (np.double, "float64"), (np.bool_, "bool")])
def test_from_numpy_dtype_aliases(np_dtype, dtype):
    assert minitorch.from_numpy(np.zeros(2, dtype=np_dtype)).dtype == DTYPES[dtype]


@st.composite
def strided_arrays(draw):
    """A view of a NumPy array: any shape, positive steps, an offset, and a permutation of axes."""
    shape = draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    base = (np.arange(int(np.prod(shape))) + 1).astype(dtype).reshape(shape)
    index = tuple(slice(draw(st.integers(0, s - 1)), None, draw(st.integers(1, 3))) for s in shape)
    perm = draw(st.permutations(range(len(shape))))
    return base, base[index].transpose(perm)


@given(strided_arrays())
def test_from_numpy_strided_shares_memory(arrays):
    base, a = arrays
    t = minitorch.from_numpy(a)
    assert t.shape == a.shape
    assert strides_of_long_dims(t.shape, t.stride()) == strides_of_long_dims(a.shape, [s // a.itemsize for s in a.strides])
    assert t.data_ptr() == address(a)
    assert t.tolist() == a.tolist()
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.shares_memory(t.numpy(), base)
    if a.size and a.dtype != np.bool_:
        t.fill_(0)
        assert not a.any()


@given(strided_arrays())
def test_from_numpy_strides_match_torch(arrays):
    torch = pytest.importorskip("torch")
    _, a = arrays
    t, r = minitorch.from_numpy(a), torch.from_numpy(a)
    assert t.shape == tuple(r.shape)
    assert strides_of_long_dims(t.shape, t.stride()) == strides_of_long_dims(r.shape, r.stride())


@pytest.mark.parametrize(
    "a",
    [np.zeros((2, 0, 3)), np.array(3.5), np.zeros(0, dtype=np.int32), np.broadcast_to(np.arange(3.0), (2, 3))],
    ids=["empty", "0d", "empty_int32", "broadcast"],
)
def test_from_numpy_special_arrays(a):
    t = minitorch.from_numpy(a)
    assert t.shape == a.shape
    assert t.tolist() == a.tolist()
    if a.size and a.ndim:
        assert t.stride() == tuple(s // a.itemsize for s in a.strides)


@pytest.mark.parametrize(
    "np_dtype",
    [np.longdouble, np.object_, "U3", [("a", "f4"), ("b", "i4")], "datetime64[s]"],
    ids=["longdouble", "object", "str", "struct", "datetime"],
)
def test_from_numpy_unsupported_dtype_raises_type_error(np_dtype):
    with pytest.raises(TypeError):
        minitorch.from_numpy(np.zeros(3, dtype=np_dtype))
    with pytest.raises(TypeError):
        minitorch.tensor(np.zeros(3, dtype=np_dtype))


@pytest.mark.parametrize("np_dtype", [np.longdouble, np.clongdouble])
def test_unsupported_dtype_message(np_dtype):
    with pytest.raises(TypeError, match="can't convert np.ndarray of type .*The only supported types are") as got:
        minitorch.from_numpy(np.zeros(3, dtype=np_dtype))
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError) as want:
        torch.from_numpy(np.zeros(3, dtype=np_dtype))
    # the list of types as PyTorch's (the array's type is named as NumPy's str() gives it)
    assert str(got.value).split(". ")[1] == str(want.value).split(". ")[1]


@pytest.mark.parametrize(
    "make",
    [lambda: np.arange(5.0)[::-1], lambda: np.arange(6).reshape(2, 3)[:, ::-1],
     lambda: np.arange(6, dtype=np.int32).reshape(2, 3)[::-1], lambda: np.flip(np.ones((2, 2, 2)), 1)],
    ids=["1d", "2d_last", "2d_first", "flip"],
)
def test_negative_strides_raise_value_error(make):
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is negative"):
        minitorch.from_numpy(make())


def test_tensor_of_negative_stride_array():
    # PyTorch's tensor() refuses them too (it shares through from_numpy first).
    with pytest.raises(ValueError, match="negative"):
        minitorch.tensor(np.arange(5.0)[::-1])


def test_misaligned_strides_raise_value_error():
    a = np.ndarray((2,), dtype=np.int32, buffer=np.zeros(12, np.int8), offset=1, strides=(5,))
    with pytest.raises(ValueError, match="not a multiple of the element byte size"):
        minitorch.from_numpy(a)


def test_from_numpy_rejects_non_arrays():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        minitorch.from_numpy([1, 2])
    with pytest.raises(TypeError):
        minitorch.from_numpy("abc")


def test_from_numpy_refuses_read_only_non_arrays():
    with pytest.raises(TypeError):
        minitorch.from_numpy(memoryview(b"abcdefgh").cast("q"))


def test_from_numpy_up_to_numpys_64_dims():
    a = np.arange(2.0).reshape((1,) * 40 + (2,) + (1,) * 23)
    t = minitorch.from_numpy(a)
    assert t.dim() == 64 and np.shares_memory(t.numpy(), a)
    nested = [0.0]
    for _ in range(64):
        nested = [nested]
    with pytest.raises(RuntimeError, match="only tensors with up to 64 dims are supported"):
        minitorch.tensor(nested)  # 65 dims: PyTorch makes it, minitorch stops at 64


# ---- lifetimes ----

def test_tensor_keeps_array_alive():
    a = np.arange(6.0)
    ref = weakref.ref(a)
    t = minitorch.from_numpy(a)[2:]
    del a
    gc.collect()
    assert ref() is not None
    assert t.tolist() == [2.0, 3.0, 4.0, 5.0]
    t.fill_(1)
    del t
    gc.collect()
    assert ref() is None, "the array leaked after its last tensor died"


def test_views_of_from_numpy_keep_array_alive():
    a = np.arange(12.0).reshape(3, 4)
    ref = weakref.ref(a)
    v = minitorch.from_numpy(a).t()[1]
    del a
    gc.collect()
    assert v.tolist() == [1.0, 5.0, 9.0]
    del v
    gc.collect()
    assert ref() is None


def test_array_keeps_storage_alive():
    # The array holds the storage it points into, not the tensor (whose storage `.data =` swaps).
    gc.collect()
    before = minitorch._C._live_objects()["storages"]
    t = minitorch.arange(6.0)
    a = t.numpy()[1:]
    del t
    gc.collect()
    assert minitorch._C._live_objects()["storages"] == before + 1
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    a[:] = 0
    del a
    gc.collect()
    assert minitorch._C._live_objects()["storages"] == before, "the storage leaked after its last array died"


def live_storages():
    gc.collect()
    return minitorch._C._live_objects()["storages"]


def reuse_freed_memory():
    """Fresh blocks of the sizes just freed, so that an array left dangling would read 7s."""
    return [minitorch.full((n,), 7.0) for n in (8, 64) for _ in range(100)]


# Each export of the tensor's memory (read back as a list); each must hold the storage it
# points into.
EXPORTS = {
    "numpy": (lambda t: t.numpy(), lambda a: a.tolist()),
    "asarray": (np.asarray, lambda a: a.tolist()),
    "memoryview": (memoryview, lambda m: m.tolist()),
    "np.from_dlpack": (np.from_dlpack, lambda a: a.tolist()),
    "dlpack capsule": (lambda t: t.__dlpack__(), lambda c: minitorch.from_dlpack(c).tolist()),
}


@pytest.mark.parametrize("export", EXPORTS)
def test_export_outlives_data_assignment(export):
    # was: `a = t.numpy(); t.data = minitorch.zeros(5); a.sum()` read freed memory (a segfault)
    make, read = EXPORTS[export]
    t = minitorch.arange(64.0)
    expect = t.tolist()
    before = live_storages()
    a = make(t)
    t.data = minitorch.zeros(5, dtype=minitorch.int32)
    junk = reuse_freed_memory()
    assert live_storages() == before + 1 + len(junk)  # the old storage, held by a, and the new one
    assert read(a) == expect
    assert t.tolist() == [0] * 5
    del a
    assert live_storages() == before + len(junk)


@pytest.mark.parametrize("convert", ["double", "float64", "float"])
@pytest.mark.parametrize("export", EXPORTS)
def test_export_of_a_parameter_outlives_module_conversion(export, convert):
    # was: `a = lin.weight.numpy(); lin.double(); a.sum()` on a frozen module read freed memory
    make, read = EXPORTS[export]
    lin = minitorch.nn.Linear(8, 8)
    lin.requires_grad_(False)
    if convert == "float":
        lin.double()
    expect = lin.weight.tolist()
    a = make(lin.weight)
    {"double": lin.double, "float64": lambda: lin.to(minitorch.float64), "float": lin.float}[convert]()
    junk = reuse_freed_memory()
    assert read(a) == expect
    del junk


def test_array_of_view_outlives_base_and_view():
    t = minitorch.arange(12.0).view(3, 4)
    a = np.asarray(t.t()[2:])
    del t
    gc.collect()
    assert a.tolist() == [[2.0, 6.0, 10.0], [3.0, 7.0, 11.0]]


def test_round_trip_chain_lifetime():
    a = np.arange(8, dtype=np.int32)
    b = minitorch.from_numpy(a)[::2].numpy()
    c = minitorch.from_numpy(b)
    del a, b
    gc.collect()
    assert c.tolist() == [0, 2, 4, 6]
    c[1] = 5
    assert c.numpy().tolist() == [0, 5, 4, 6]


def test_many_round_trips_do_not_leak():
    a = np.arange(1000.0)
    ref = weakref.ref(a)
    t = minitorch.from_numpy(a)
    for _ in range(200):
        t = minitorch.from_numpy(t.numpy())
    del a
    gc.collect()
    assert t[999].item() == 999.0
    del t
    gc.collect()
    assert ref() is None


def test_unaligned_array_is_copied_by_tensor_and_refused_by_from_numpy():
    # A float64 view at an odd byte offset: sharing it would make every kernel load misaligned.
    raw = np.arange(17, dtype=np.uint8)
    a = raw[1:17].view(np.float64)
    assert a.ctypes.data % 8 != 0
    with pytest.raises(ValueError, match="not aligned"):
        minitorch.from_numpy(a)
    t = minitorch.tensor(a)
    assert t.data_ptr() % 8 == 0
    np.testing.assert_array_equal(t.numpy(), a)


# ---- the buffer protocol's other consumers (bytes, hashlib, io, struct) ----

# Each reads a buffer as view->len plain bytes: it asks for no strides, so the export must be
# C-contiguous or refused.
BYTE_CONSUMERS = {
    "bytes +": lambda t: b"" + t,
    "bytearray +": lambda t: bytes(bytearray() + t),
    "b''.join": lambda t: b"".join([t]),
    "hashlib": lambda t: hashlib.sha256(t).digest(),
    "io.BytesIO": lambda t: io.BytesIO(t).getvalue(),
    "struct": lambda t: struct.unpack_from(f"{t.numel() * t.element_size()}s", t)[0],
}
NON_CONTIGUOUS = {
    "expanded": lambda: minitorch.ones(1).expand(100),
    "expanded 2-d": lambda: minitorch.arange(3.0).expand(4, 3),
    "sliced": lambda: minitorch.arange(10, dtype=minitorch.int32)[::2],
    "transposed": lambda: minitorch.arange(6.0).view(2, 3).t(),
}
CONTIGUOUS = {
    "plain": lambda: minitorch.arange(6, dtype=minitorch.int64).view(2, 3),
    "0-d": lambda: minitorch.tensor(2.5),
    "empty": lambda: minitorch.zeros(3, 0),
    "offset": lambda: minitorch.arange(10.0)[3:7],
    "size-1 dims": lambda: minitorch.arange(4.0).view(4, 1).expand(4, 1)[:, :1],
    "bool": lambda: minitorch.tensor([True, False, True]),
}


def expected_digest(consumer, data):
    return hashlib.sha256(data).digest() if consumer == "hashlib" else data


@pytest.mark.parametrize("layout", NON_CONTIGUOUS)
@pytest.mark.parametrize("consumer", BYTE_CONSUMERS)
def test_byte_consumers_refuse_non_contiguous_tensors(consumer, layout):
    # was: b"" + ones(1).expand(100) returned 400 bytes read from a 4-byte storage
    t = NON_CONTIGUOUS[layout]()
    with pytest.raises((BufferError, TypeError)):
        BYTE_CONSUMERS[consumer](t)


@pytest.mark.parametrize("layout", CONTIGUOUS)
@pytest.mark.parametrize("consumer", BYTE_CONSUMERS)
def test_byte_consumers_read_contiguous_tensors(consumer, layout):
    t = CONTIGUOUS[layout]()
    data = np.ascontiguousarray(np.asarray(t)).tobytes()
    assert len(data) == t.numel() * t.element_size()
    assert BYTE_CONSUMERS[consumer](t) == expected_digest(consumer, data)


def test_hashing_a_huge_expanded_tensor_raises_instead_of_reading_past_it():
    # was: a segfault, 800 MB read from a 4-byte storage
    with pytest.raises(BufferError, match="not C-contiguous"):
        hashlib.sha256(minitorch.ones(1).expand(200_000_000))


@pytest.mark.parametrize("layout", NON_CONTIGUOUS)
def test_strided_consumers_still_view_non_contiguous_tensors(layout):
    # memoryview and NumPy ask for strides: they see the tensor's own, zero-copy
    t = NON_CONTIGUOUS[layout]()
    a = np.asarray(t)
    assert a.ctypes.data == t.data_ptr()
    assert a.strides == tuple(s * t.element_size() for s in t.stride())
    assert bytes(memoryview(t)) == np.ascontiguousarray(a).tobytes()
    assert a.tolist() == t.tolist()


# PyBUF_FORMAT with PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS
CONTIGUITY_FLAGS = {"C": 0x04 | 0x38, "F": 0x04 | 0x58, "any": 0x04 | 0x98}


def exports_buffer(obj, flags):
    """Whether PyObject_GetBuffer(obj, flags) succeeds (ctypes raises the exporter's error)."""
    view = (ctypes.c_byte * 256)()  # room for a Py_buffer
    ctypes.pythonapi.PyObject_GetBuffer.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.c_void_p]
    try:
        ctypes.pythonapi.PyObject_GetBuffer(obj, view, flags)
    except (BufferError, ValueError):  # NumPy says ValueError
        return False
    ctypes.pythonapi.PyBuffer_Release(view)
    return True


@pytest.mark.parametrize("order", CONTIGUITY_FLAGS)
@pytest.mark.parametrize("make", [lambda: minitorch.arange(6.0).view(2, 3),
                                  lambda: minitorch.arange(6.0).view(3, 2).t(),
                                  lambda: minitorch.arange(12.0).view(3, 4)[:, ::2],
                                  lambda: minitorch.ones(1).expand(5)], ids=["C", "F", "sliced", "expanded"])
def test_contiguity_requests_are_answered_as_numpy_does(make, order):
    t = make()
    assert exports_buffer(t, CONTIGUITY_FLAGS[order]) == exports_buffer(np.asarray(t), CONTIGUITY_FLAGS[order])


def test_a_read_only_array_is_shared_with_a_warning_once():
    # PyTorch shares a read-only array's memory and warns once that writing is undefined; a
    # fresh interpreter, since the warning is once per process
    import subprocess
    import sys

    from helpers import child_env

    code = (
        "import warnings, numpy as np, minitorch\n"
        "a = np.arange(3.0); a.flags.writeable = False\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    t, u = minitorch.from_numpy(a), minitorch.from_numpy(a)\n"
        "    c = minitorch.tensor(a)\n"
        "print(len(w), 'not writable' in str(w[0].message), t.tolist(), c.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True", "[0.0,", "1.0,", "2.0]", "[0.0,", "1.0,", "2.0]"]
