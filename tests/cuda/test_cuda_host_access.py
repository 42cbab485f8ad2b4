"""The Python-side ways of getting a CUDA tensor's values to the host (printing, item, tolist,
cpu, iteration, pickle, copy, minitorch.save) give them, and numpy() refuses as PyTorch does.
On the emulated device these run under its memory guard (cuda/emu/guard.cc), so a path that
read device memory from host code would abort the run rather than pass by luck."""
import copy
import io
import pickle

import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

VALUES = [[0.0, 1.5, -2.0], [3.0, 4.25, 5.0]]


@pytest.fixture
def t():
    return minitorch.tensor(VALUES, device="cuda")


def test_printing_and_scalars(t):
    assert repr(t) == "tensor([[ 0.0000,  1.5000, -2.0000],\n        [ 3.0000,  4.2500,  5.0000]], device='cuda:0')"
    assert str(t[1, 1]) == "tensor(4.2500, device='cuda:0')"
    assert t[1, 1].item() == 4.25 and float(t[0, 1]) == 1.5 and int(t[1, 2]) == 5 and bool(t[0, 1])
    assert f"{t[0, 2]:.1f}" == "-2.0"
    assert t.tolist() == VALUES and t.T.tolist() == [list(c) for c in zip(*VALUES)]
    assert [r.tolist() for r in t] == VALUES
    assert t.long().tolist() == [[0, 1, -2], [3, 4, 5]] and t.bool().tolist()[0] == [False, True, True]


def test_numpy_refuses_and_cpu_copies(t):
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        t.numpy()
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        np.asarray(t)
    np.testing.assert_array_equal(t.cpu().numpy(), VALUES)
    np.testing.assert_array_equal(t[:, 1:].cpu().numpy(), np.array(VALUES)[:, 1:])


def test_pickle_and_copy_keep_the_device(t):
    for u in (pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t)):
        assert u.device == t.device and u.tolist() == VALUES and u.data_ptr() != t.data_ptr()
    g = minitorch.ones(2, device="cuda", requires_grad=True)
    assert pickle.loads(pickle.dumps(g)).requires_grad


def test_save_and_load(t):
    f = io.BytesIO()
    minitorch.save({"t": t, "view": t[:, 1]}, f)
    f.seek(0)
    d = minitorch.load(f, map_location="cuda")
    assert d["t"].device == t.device and d["t"].tolist() == VALUES and d["view"].tolist() == [1.5, 4.25]
    d["t"][1, 1] = -7.0  # the view came back a view of the same device storage, as in PyTorch
    assert d["view"].device == t.device and d["view"].tolist() == [1.5, -7.0] and d["view"].stride() == (3,)
    f.seek(0)  # without map_location each tensor goes back to its device, as in PyTorch
    assert minitorch.load(f)["t"].device == t.device
    f = io.BytesIO()
    minitorch.save(list(minitorch.nn.Linear(2, 3).to("cuda:1").parameters()), f)
    f.seek(0)
    ps = minitorch.load(f)
    assert all(p.device == minitorch.device("cuda:1") and isinstance(p, minitorch.nn.Parameter) for p in ps)


def test_a_copy_across_devices_counts_one_write(t):
    """copy_ between the host and the device changes dst's version by one, whatever its layout
    (a strided host dst is written through the CPU's copy_, which counts it), as PyTorch; the
    host copies .cpu() and .to() make are new results."""
    targets = [(minitorch.zeros(3, 2).t(), t), (minitorch.zeros(2, 3), t),
               (minitorch.zeros(4, 3)[::2], t), (minitorch.zeros(3, 2, device="cuda").t(), t.cpu()),
               (minitorch.zeros(2, 3, device="cuda"), t.cpu())]
    for dst, src in targets:
        before = dst._version
        dst.copy_(src)
        assert dst._version == before + 1, (dst.shape, dst.stride(), dst.device)
        assert dst.tolist() == VALUES
    for host in (t.t().cpu(), t.cpu(), t[:, ::2].to("cpu"), t.t().to(minitorch.float64).cpu()):
        assert host._version == 0
