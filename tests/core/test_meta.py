"""The meta device: tensors with a shape, strides and a dtype but no data. Every op on them
gives the result PyTorch's meta device gives (shape, strides, dtype, device), its shape errors
included; data access raises PyTorch's errors. Compared with torch where it is installed."""
import copy
import gc

import pytest

import minitorch
from helpers import raises_like_torch, same_error

torch = pytest.importorskip("torch")


def meta_of(lib, shape, dtype="float32", layout="contiguous"):
    t = lib.empty(shape, device="meta", dtype=getattr(lib, dtype))
    if layout == "transposed" and len(shape) >= 2:
        t = lib.empty(shape[::-1], device="meta", dtype=getattr(lib, dtype)).transpose(0, -1)
    return t


def describe(r):
    if isinstance(r, (tuple, list)):
        return [describe(x) for x in r]
    return (tuple(r.shape), r.stride(), str(r.dtype).rsplit(".", 1)[-1], r.device.type, r.is_meta)


CASES = {
    "add_broadcast": lambda lib: meta_of(lib, (2, 3)) + meta_of(lib, (3,)),
    "mul_number_promotes": lambda lib: meta_of(lib, (2, 3), "int64") * 1.5,
    "transposed_exp": lambda lib: meta_of(lib, (3, 4), layout="transposed").exp(),
    "matmul_batched": lambda lib: meta_of(lib, (5, 2, 3)) @ meta_of(lib, (3, 4)),
    "sum_dim": lambda lib: meta_of(lib, (2, 3, 4)).sum(1, keepdim=True),
    "max_dim": lambda lib: tuple(meta_of(lib, (2, 3)).max(dim=1)),
    "split": lambda lib: meta_of(lib, (7, 2)).split(3),
    "cat": lambda lib: lib.cat([meta_of(lib, (2, 3)), meta_of(lib, (4, 3))]),
    "view_t": lambda lib: meta_of(lib, (2, 6)).view(3, 4).t(),
    "empty_shape": lambda lib: meta_of(lib, (0, 3)).sum(0),
    "scalar": lambda lib: meta_of(lib, ()).neg(),
    "conv2d": lambda lib: lib.nn.functional.conv2d(meta_of(lib, (1, 3, 8, 8)), meta_of(lib, (4, 3, 3, 3)), padding=1),
    "softmax": lambda lib: meta_of(lib, (2, 5)).softmax(-1),
    "linear": lambda lib: lib.nn.functional.linear(meta_of(lib, (4, 3)), meta_of(lib, (5, 3)), meta_of(lib, (5,))),
    "index_select": lambda lib: meta_of(lib, (5, 3)).index_select(0, lib.empty(4, device="meta", dtype=lib.int64)),
    "cpu_scalar_joins": lambda lib: meta_of(lib, (2,)) * lib.tensor(3.0),
    "to_float64": lambda lib: meta_of(lib, (2, 3), layout="transposed").to(lib.float64),
    "factories": lambda lib: (lib.zeros(2, 3, device="meta"), lib.ones(4, device="meta", dtype=lib.int32),
                              lib.full((2,), 7, device="meta"), lib.randn(3, device="meta"),
                              lib.arange(5, device="meta"), lib.empty_like(meta_of(lib, (2, 2)))),
    "to_meta": lambda lib: lib.ones(2, 3).t().to("meta"),
    "rfft": lambda lib: lib.fft.rfft(meta_of(lib, (3, 8))),
    # (contiguous: minitorch's CPU inv returns row-major results, PyTorch's column-major ones)
    "linalg_inv": lambda lib: lib.linalg.inv(meta_of(lib, (2, 3, 3))).contiguous(),
    "multinomial": lambda lib: meta_of(lib, (2, 5)).multinomial(3),
    "int_index": lambda lib: meta_of(lib, (3, 4))[lib.empty(2, device="meta", dtype=lib.int64)],
    "cross_entropy": lambda lib: lib.nn.functional.cross_entropy(meta_of(lib, (4, 5)), meta_of(lib, (4,), "int64")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_like_torch(name):
    got, want = CASES[name](minitorch), CASES[name](torch)
    assert describe(got) == describe(want)


ERRORS = {
    "item": lambda lib: meta_of(lib, ()).item(),
    "item_many": lambda lib: meta_of(lib, (2,)).item(),
    "tolist": lambda lib: meta_of(lib, (2,)).tolist(),
    "numpy": lambda lib: meta_of(lib, (2,)).numpy(),
    "to_cpu": lambda lib: meta_of(lib, (2,)).to("cpu"),
    "cpu": lambda lib: meta_of(lib, (2,)).cpu(),
    "copy_out": lambda lib: lib.zeros(2).copy_(meta_of(lib, (2,))),
    "float": lambda lib: float(meta_of(lib, ())),
    "nonzero": lambda lib: meta_of(lib, (3,)).nonzero(),
    "bool_mask_index": lambda lib: meta_of(lib, (3,))[meta_of(lib, (3,), "bool")],
    "unique": lambda lib: meta_of(lib, (3,)).unique(),
    "linalg_inv_shape": lambda lib: lib.linalg.inv(meta_of(lib, (3, 4))),
    "masked_select": lambda lib: meta_of(lib, (3,)).masked_select(meta_of(lib, (3,), "bool")),
    "shape_mismatch": lambda lib: meta_of(lib, (2, 3)) + meta_of(lib, (4,)),
    "mm_shapes": lambda lib: meta_of(lib, (2, 3)) @ meta_of(lib, (2, 3)),
    "mixed_devices": lambda lib: meta_of(lib, (2, 3)) + lib.ones(2, 3),
    "conv_channels": lambda lib: lib.nn.functional.conv2d(meta_of(lib, (1, 2, 5, 5)), meta_of(lib, (4, 3, 3, 3))),
}
# the data-access messages; a shape error has the CPU's message (PyTorch's meta kernels word
# some of theirs apart), so only its class is compared
MESSAGES = {"item", "item_many", "tolist", "to_cpu", "cpu", "copy_out", "numpy"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_like_torch(name):
    if name in MESSAGES:
        same_error(ERRORS[name])
    else:
        assert raises_like_torch(ERRORS[name]) is not None


def test_device_objects_and_printing():
    d = minitorch.device("meta")
    assert (d.type, d.index, str(d), repr(d)) == ("meta", None, "meta", "device(type='meta')")
    x = minitorch.empty(2, 3, device=d)
    assert x.is_meta and x.device == d and x.device.type == "meta" and not x.is_cuda
    for lib_x in [(x, torch.empty(2, 3, device="meta")),
                  (minitorch.ones(2, dtype=minitorch.int64, device="meta"), torch.ones(2, dtype=torch.int64, device="meta")),
                  (minitorch.empty(0, device="meta"), torch.empty(0, device="meta")),
                  (minitorch.empty((), device="meta", requires_grad=True), torch.empty((), device="meta", requires_grad=True))]:
        assert repr(lib_x[0]) == repr(lib_x[1]).replace("torch.", "minitorch.")
    assert not minitorch.ones(2).is_meta


def test_in_place_and_views_keep_the_argument():
    x = minitorch.empty(4, 3, device="meta")
    assert x.add_(1) is x and x._version == 1
    row = x[1]
    row.mul_(2)
    assert x._version == 2 and row._base is x
    assert x.uniform_() is x and x._version == 3
    v = x.view(3, 4)
    assert v._base is x and v.data_ptr() == 0


def test_device_context_and_default():
    with minitorch.device("meta"):
        made = [minitorch.zeros(3), minitorch.tensor([1.0, 2.0]), minitorch.arange(3), minitorch.nn.Linear(2, 3).weight]
        with minitorch.device("cpu"):
            assert minitorch.zeros(1).device.type == "cpu"
    assert all(t.is_meta for t in made)
    assert minitorch.zeros(1).device.type == "cpu"
    minitorch.set_default_device("meta")
    try:
        assert minitorch.ones(2).is_meta
    finally:
        minitorch.set_default_device(None)


def test_modules_to_meta_and_to_empty():
    m = minitorch.nn.Sequential(minitorch.nn.Linear(3, 4), minitorch.nn.BatchNorm1d(4))
    meta = copy.deepcopy(m).to("meta")
    assert all(p.is_meta for p in meta.parameters()) and all(b.is_meta for b in meta.buffers())
    assert not any(p.is_meta for p in m.parameters())
    out = meta(minitorch.empty(5, 3, device="meta"))
    assert out.is_meta and tuple(out.shape) == (5, 4) and out.grad_fn is not None
    back = meta.to_empty(device="cpu")
    assert all(p.device.type == "cpu" and not p.is_meta for p in back.parameters())
    assert tuple(back[0].weight.shape) == (4, 3)
    # a model far larger than memory costs nothing on the meta device
    big = minitorch.nn.Linear(100_000, 100_000, device="meta")
    assert big.weight.is_meta and tuple(big.weight.shape) == (100_000, 100_000)
    skipped = minitorch.nn.utils.skip_init(minitorch.nn.Linear, 3, 5)
    assert skipped.weight.device.type == "cpu" and tuple(skipped.weight.shape) == (5, 3)


def test_autograd_on_meta():
    x = minitorch.randn(3, 4, device="meta", requires_grad=True)
    w = minitorch.randn(4, 2, device="meta", requires_grad=True)
    (x @ w).relu().sum().backward()
    tx = torch.randn(3, 4, device="meta", requires_grad=True)
    tw = torch.randn(4, 2, device="meta", requires_grad=True)
    (tx @ tw).relu().sum().backward()
    assert describe([x.grad, w.grad]) == describe([tx.grad, tw.grad])


def test_meta_tensors_leave_nothing_behind():
    gc.collect()
    before = minitorch._C._live_objects()
    for _ in range(3):
        x = minitorch.empty(4, 3, device="meta")
        (x.t() @ x).sum(0).split(1)
        x[1:].add_(1)
    del x
    gc.collect()
    assert minitorch._C._live_objects() == before
