"""Bool tensors whose bytes are not 0 or 1: NumPy memory viewed as bool and shared by from_numpy
(or a DLPack capsule) may hold any byte. PyTorch reads such a byte as byte != 0; every kernel and
cast of minitorch must too (loading it through a C bool is undefined behaviour: ~t gave
[T, T, T, F] for bytes [2, 0, 255, 1], sum 258, long() [2, 0, 255, 1], and nonzero() wrote past
its output), and every bool minitorch writes must be 0 or 1.

Each op runs on a tensor over dirty bytes and on one over the same truth values as clean bytes:
the results must be equal (and PyTorch's, on the clean ones), and any bool result clean."""
import numpy as np
import pytest

import minitorch

RAW = np.array([[2, 0, 255, 1], [0, 7, 1, 128], [254, 0, 0, 3]], dtype=np.uint8)


def dirty_and_clean(layout):
    """Two bool arrays of the same truth values, over RAW's bytes and over 0/1 bytes, laid out
    contiguous, transposed, sliced or as a broadcast row."""
    dirty, clean = RAW.view(np.bool_), RAW != 0
    if layout == "transposed":
        return dirty.T, clean.T
    if layout == "sliced":
        return dirty[:, ::2], clean[:, ::2]
    if layout == "broadcast":
        return np.broadcast_to(dirty[:1], (3, 4)), np.broadcast_to(clean[:1], (3, 4))
    return dirty, clean


def as_tensor(a, device):
    # from_numpy shares the bytes (no normalising copy); .to copies them raw to another device
    if a.strides and 0 in a.strides:  # a broadcast view: expand a row that from_numpy can share
        return minitorch.from_numpy(np.ascontiguousarray(a[:1])).to(device).expand(*a.shape)
    return minitorch.from_numpy(a).to(device)


def storage_start(t):
    return t.data_ptr() - t.storage_offset() * t.element_size()


def values(r, src=None):
    """A result as comparable Python values (tensors, tuples of them, numbers, strings). A bool
    result minitorch wrote (not a view of src) must hold only 0 and 1."""
    if isinstance(r, minitorch.Tensor):
        is_view = src is not None and r.device == src.device and storage_start(r) == storage_start(src)
        r = r.cpu()
        if r.dtype == minitorch.bool and not is_view:
            raw = np.array(memoryview(r.contiguous()), copy=True).view(np.uint8)
            assert raw.size == 0 or raw.max() <= 1, f"a bool result holds bytes {np.unique(raw)}"
        return (str(r.dtype), tuple(r.shape), r.tolist())
    if isinstance(r, (tuple, list)):
        return tuple(values(x, src) for x in r)
    return r


def other_of(m, b):
    """A clean bool tensor of b's shape and device, of mixed values."""
    return m.arange(b.numel()).reshape(b.shape).to(b.device) % 3 == 0


OPS = {
    "invert": lambda m, b: ~b,
    "logical_not": lambda m, b: m.logical_not(b),
    "bitwise_not": lambda m, b: m.bitwise_not(b),
    "sign": lambda m, b: m.sign(b),
    "isnan": lambda m, b: m.isnan(b),
    "long": lambda m, b: b.long(),
    "int": lambda m, b: b.int(),
    "float": lambda m, b: b.float(),
    "double": lambda m, b: b.double(),
    "bool": lambda m, b: b.to(m.bool, copy=True),
    "clone": lambda m, b: b.clone(),
    "contiguous": lambda m, b: b.t().contiguous(),
    "exp": lambda m, b: m.exp(b),
    "add": lambda m, b: b + other_of(m, b),
    "add_alpha": lambda m, b: m.add(b, b, alpha=2),
    "add_int": lambda m, b: b + 3,
    "mul": lambda m, b: b * other_of(m, b),
    "mul_self": lambda m, b: b * b,
    "and": lambda m, b: b & other_of(m, b),
    "or": lambda m, b: b | b,
    "eq": lambda m, b: b == other_of(m, b),
    "eq_self": lambda m, b: b == b.clone(),
    "ne": lambda m, b: b != other_of(m, b),
    "lt": lambda m, b: b < other_of(m, b),
    "ge": lambda m, b: b >= other_of(m, b),
    "eq_number": lambda m, b: b == 1,
    "logical_and": lambda m, b: m.logical_and(b, other_of(m, b)),
    "logical_or": lambda m, b: m.logical_or(b, b),
    "maximum": lambda m, b: m.maximum(b, other_of(m, b)),
    "minimum": lambda m, b: m.minimum(b, b),
    "where_condition": lambda m, b: m.where(b, 1.5, -1.0),
    "where_values": lambda m, b: m.where(b, b, other_of(m, b)),
    "sum": lambda m, b: b.sum(),
    "sum_dim": lambda m, b: b.sum(1),
    "prod": lambda m, b: b.prod(),
    "any": lambda m, b: b.any(),
    "all_dim": lambda m, b: b.all(0),
    "amax": lambda m, b: m.amax(b, 1),
    "max": lambda m, b: b.max(),
    "min_dim": lambda m, b: b.min(1),
    "argmax": lambda m, b: b.int().argmax(),
    "cumsum": lambda m, b: b.cumsum(1),
    "cumprod": lambda m, b: b.cumprod(0),
    "sort": lambda m, b: m.sort(b, dim=1, stable=True),
    "argsort": lambda m, b: m.argsort(b.flatten(), stable=True),
    "topk": lambda m, b: m.topk(b.int(), 2, 1)[0],  # the indices of ties may differ
    "unique": lambda m, b: m.unique(b),
    "unique_counts": lambda m, b: m.unique(b, return_counts=True),
    "mask_index": lambda m, b: m.arange(b.numel()).reshape(b.shape).to(b.device)[b],
    "mask_index_2d": lambda m, b: m.arange(b.numel()).reshape(b.shape).to(b.device)[b[:, 1]],
    "mask_put": lambda m, b: m.zeros(b.shape).to(b.device).index_put_((b,), m.tensor(2.0).to(b.device)),
    "masked_fill": lambda m, b: m.zeros(b.shape).to(b.device).masked_fill(b, 1.5),
    "masked_select": lambda m, b: m.masked_select(m.arange(b.numel()).reshape(b.shape).to(b.device), b),
    "masked_select_values": lambda m, b: m.masked_select(b, other_of(m, b)),
    "nonzero": lambda m, b: m.nonzero(b),
    "argwhere": lambda m, b: m.argwhere(b),
    "index_values": lambda m, b: b[m.tensor([2, 0, 1]).to(b.device)],
    "index_select": lambda m, b: m.index_select(b, 1, m.tensor([b.shape[1] - 1, 0, 0]).to(b.device)),
    "gather": lambda m, b: m.gather(b, 1, (m.arange(2 * b.shape[0]).reshape(-1, 2) % 2).to(b.device)),
    "index_put_values": lambda m, b: m.zeros(b.shape, dtype=m.bool).to(b.device).index_put_(
        (m.tensor([0, 2]).to(b.device),), b[:2]),
    "setitem_values": lambda m, b: setitem(m.zeros(b.shape, dtype=m.bool).to(b.device), b),
    "cat": lambda m, b: m.cat([b, b]),
    "stack": lambda m, b: m.stack([b, b]),
    "flip": lambda m, b: m.flip(b, (0, 1)),
    "tril": lambda m, b: m.tril(b),
    "repeat": lambda m, b: b.repeat(2, 1),
    "copy_": lambda m, b: m.zeros(b.shape).to(b.device).copy_(b),
    "copy_bool": lambda m, b: m.zeros(b.shape, dtype=m.bool).to(b.device).copy_(b),
    "matmul": lambda m, b: b.double() @ b.double().t(),
    "tolist": lambda m, b: b.tolist(),
    "item": lambda m, b: [b[i, j].item() for i in range(b.shape[0]) for j in range(b.shape[1])],
    "bool_of": lambda m, b: [bool(b[i, j]) for i in range(b.shape[0]) for j in range(b.shape[1])],
    "repr": lambda m, b: repr(b).split("(", 1)[1].split(", device")[0],
}


def setitem(t, v):
    t[...] = v
    return t


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast"])
@pytest.mark.parametrize("name", list(OPS))
def test_bool_bytes_read_as_nonzero(name, layout, device):
    dirty, clean = dirty_and_clean(layout)
    fn = OPS[name]
    src = as_tensor(dirty, device)
    got = values(fn(minitorch, src), src)
    want = values(fn(minitorch, as_tensor(clean, device)))
    assert got == want
    torch = pytest.importorskip("torch")
    if name != "repr":  # PyTorch prints its own way
        assert plain(want) == plain(fn(torch, torch.from_numpy(np.ascontiguousarray(clean))))


def plain(r):
    """values() without dtype and shape, for comparing with PyTorch's result."""
    if hasattr(r, "tolist"):
        return r.tolist()
    if isinstance(r, tuple) and len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], tuple):
        return r[2]
    if isinstance(r, (tuple, list)):
        return [plain(x) for x in r]
    return r


def test_bool_bytes_issue_example(device):
    t = as_tensor(np.array([2, 0, 255, 1], np.uint8).view(np.bool_), device)
    assert (~t).tolist() == [False, True, False, False]
    assert t.sum().item() == 3
    assert t.long().tolist() == [1, 0, 1, 1]
