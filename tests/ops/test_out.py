"""out= on the functions PyTorch has it for, against PyTorch: the values written into out, out's
dtype rule (each family's message), resizing with PyTorch's warning, the same object returned,
two results into a tuple, and the autograd refusal. One path serves every op (csrc/python/out.c)."""
import warnings

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

F = np.array([[1.5, -2.5], [3.5, 4.5]], dtype=np.float32)
I = np.array([[1, 2], [3, 4]], dtype=np.int64)
B = np.array([[True, False], [True, True]])
IDX = np.array([[0, 1], [1, 0]])

UNARY = ("neg exp log log1p sqrt rsqrt sin cos tanh sigmoid abs sign reciprocal exp2 expm1 log2 log10 "
         "logical_not bitwise_not square").split()
BINARY = ("add sub mul div true_divide floor_divide remainder fmod pow eq ne lt le gt ge logical_and "
          "logical_or bitwise_and bitwise_or maximum minimum hypot").split()
ALONG = "sum mean prod amax amin all any var std logsumexp argmax argmin cumsum cumprod softmax log_softmax".split()

CASES = {name: (lambda n: lambda L, x, o: getattr(L, n)(x, out=o))(name) for name in UNARY}
CASES.update({name: (lambda n: lambda L, x, o: getattr(L, n)(x, x, out=o))(name) for name in BINARY})
CASES.update({name: (lambda n: lambda L, x, o: getattr(L, n)(x, 0, out=o))(name) for name in ALONG})
CASES.update({
    "add_alpha": lambda L, x, o: L.add(x, x, alpha=2, out=o),
    "clamp": lambda L, x, o: L.clamp(x, 0, 2, out=o),
    "clamp_min": lambda L, x, o: L.clamp_min(x, 0, out=o),
    "clamp_max": lambda L, x, o: L.clamp_max(x, 0, out=o),
    "where": lambda L, x, o: L.where(x > 0, x, x, out=o),
    "sum_all": lambda L, x, o: L.sum(x, (0, 1), out=o),
    "mean_keepdim": lambda L, x, o: L.mean(x, 1, keepdim=True, out=o),
    "max_all": lambda L, x, o: L.max(x, out=o),
    "max_other": lambda L, x, o: L.max(x, x, out=o),
    "mm": lambda L, x, o: L.mm(x, x, out=o),
    "bmm": lambda L, x, o: L.bmm(x[None], x[None], out=o),
    "mv": lambda L, x, o: L.mv(x, x[0], out=o),
    "dot": lambda L, x, o: L.dot(x[0], x[0], out=o),
    "matmul": lambda L, x, o: L.matmul(x, x, out=o),
    "addmm": lambda L, x, o: L.addmm(x, x, x, out=o),
    "baddbmm": lambda L, x, o: L.baddbmm(x[None], x[None], x[None], out=o),
    "addmv": lambda L, x, o: L.addmv(x[0], x, x[0], out=o),
    "outer": lambda L, x, o: L.outer(x[0], x[0], out=o),
    "ger": lambda L, x, o: L.ger(x[0], x[0], out=o),
    "cat": lambda L, x, o: L.cat([x, x], out=o),
    "concat": lambda L, x, o: L.concat([x, x], 1, out=o),
    "concatenate": lambda L, x, o: L.concatenate([x, x], out=o),
    "stack": lambda L, x, o: L.stack([x, x], 1, out=o),
    "tril": lambda L, x, o: L.tril(x, out=o),
    "triu": lambda L, x, o: L.triu(x, 1, out=o),
    "index_select": lambda L, x, o: L.index_select(x, 0, L.tensor(IDX[0]), out=o),
    "gather": lambda L, x, o: L.gather(x, 0, L.tensor(IDX), out=o),
    "scatter": lambda L, x, o: L.scatter(x, 0, L.tensor(IDX), x, out=o),
    "scatter_add": lambda L, x, o: L.scatter_add(x, 0, L.tensor(IDX), x, out=o),
    "masked_select": lambda L, x, o: L.masked_select(x, L.tensor(B), out=o),
    "argsort": lambda L, x, o: L.argsort(x, dim=0, stable=False, out=o),
    "nonzero": lambda L, x, o: L.nonzero(x, out=o),
    "nonzero_tuple": lambda L, x, o: L.nonzero(x, as_tuple=True, out=o),
    "zeros": lambda L, x, o: L.zeros(2, 3, out=o),
    "ones": lambda L, x, o: L.ones((3,), out=o),
    "full": lambda L, x, o: L.full((2,), 7, out=o),
    "arange": lambda L, x, o: L.arange(1, 7, 2, out=o),
    "eye": lambda L, x, o: L.eye(2, 3, out=o),
    "linspace": lambda L, x, o: L.linspace(0, 4, 5, out=o),
    "logspace": lambda L, x, o: L.logspace(0, 2, 3, out=o),
    "empty": lambda L, x, o: L.empty(2, 2, out=o).shape,
})
DTYPES = ("float32", "float64", "int64", "bool")
# PyTorch's full max/min refuse an out they cannot cast to with a bare TORCH_CHECK ("Expected
# canCast( typeMetaToScalarType(self.dtype()), ...) to be true"): the class is compared
CLASS_ONLY = {"max_all"}


def run(lib, name, x, out_dtype, out_shape=(0,)):
    o = lib.zeros(out_shape, dtype=getattr(lib, out_dtype))
    try:
        r = CASES[name](lib, lib.tensor(x), o)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return type(e), str(e).split("\n")[0], None
    if isinstance(r, (tuple, torch.Size, minitorch.Size)):
        return "shape", tuple(r), None
    assert r is o, f"{name} returned another object than out"
    return "ok", str(o.dtype).split(".")[-1], np.asarray(o)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_like_torch(name):
    for x in (F, I, B):
        for out_dtype in DTYPES:
            ours, theirs = run(minitorch, name, x, out_dtype), run(torch, name, x, out_dtype)
            what = f"{name}({x.dtype} -> out {out_dtype})"
            if NotImplementedError in (ours[0], theirs[0]):
                # a dtype one of them has no kernel for, refused before or after out's check
                assert "ok" not in (ours[0], theirs[0]), (what, ours, theirs)
                continue
            if name in CLASS_ONLY:
                assert ours[0] == theirs[0], what
                continue
            assert ours[:2] == theirs[:2], what
            if ours[0] == "ok":
                np.testing.assert_allclose(ours[2].astype(np.float64), theirs[2].astype(np.float64),
                                           rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("name", ["add", "exp", "sum", "mm", "cat", "where", "clamp", "max_all"])
def test_out_of_another_shape_is_resized_with_torchs_warning(name):
    for shape in ((3,), (5, 5, 1)):
        msgs = []
        for lib in (minitorch, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                got = run(lib, name, F, "float32", shape)
            msgs.append([str(m.message).split(" (Triggered")[0] for m in w])
            assert got[0] == "ok"
        assert msgs[0] == msgs[1] and len(msgs[0]) == 1 and "was resized since it had shape" in msgs[0][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for an empty out
        assert run(minitorch, name, F, "float32", (0,))[0] == "ok"


def test_out_keeps_its_strides_and_counts_a_version():
    a = minitorch.tensor(F)
    o = minitorch.zeros(2, 2).t()
    version, stride = o._version, o.stride()
    assert minitorch.add(a, a, out=o) is o
    assert o.stride() == stride and o._version == version + 1
    np.testing.assert_array_equal(np.asarray(o), F + F)
    base = minitorch.zeros(4, 4)
    minitorch.mul(a, 2, out=base[::2, 1::2])
    assert base[::2, 1::2].tolist() == (F * 2).tolist() and base.sum().item() == (F * 2).sum()


def test_out_may_be_an_input():
    for lib in (minitorch, torch):
        a = lib.tensor(F)
        lib.add(a, a, alpha=2, out=a)  # as add_ (an elementwise op reads each element before)
        np.testing.assert_allclose(np.asarray(a), F * 3, rtol=1e-6)
        b = lib.tensor(F)
        with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
            lib.cat([b[:1], b[1:]], 1, out=b)  # PyTorch refuses an out that overlaps an input in part


def test_two_results_into_a_tuple():
    for lib in (minitorch, torch):
        x = lib.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 9.0]])
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.max(x, 1, out=(v, i))
        assert r.values is v and r.indices is i and v.tolist() == [5.0, 9.0] and i.tolist() == [1, 2]
        r = lib.min(x, dim=0, keepdim=True, out=[v, i])
        assert r[0] is v and v.tolist() == [[1.0, 2.0, 2.0]]
        r = lib.sort(x, 1, descending=True, out=(v, i))
        assert r.values is v and i.tolist() == [[1, 2, 0], [2, 0, 1]]
        r = lib.topk(x, 2, out=(v, i))
        assert r.indices is i and v.tolist() == [[5.0, 2.0], [9.0, 3.0]]


@pytest.mark.parametrize("call", [
    lambda L, x: L.max(x, 0, out=(x,)),
    lambda L, x: L.max(x, 0, out=[x, 3]),
    lambda L, x: L.max(x, 0, out=(L.empty(0), L.empty(0))),
    lambda L, x: L.max(x, 0, out=L.empty(0)),
], ids=["one_tensor", "not_a_tensor", "indices_dtype", "not_a_tuple"])
def test_bad_out_like_torch(call):
    for lib in (minitorch, torch):
        with pytest.raises(Exception) as e:  # noqa: PT011 - compared below
            call(lib, lib.ones(2, 2))
        if lib is minitorch:
            ours = e.value
    assert type(ours) is type(e.value)
    if "invalid combination" not in str(e.value):
        assert str(ours) == str(e.value)


def test_out_of_another_type():
    with pytest.raises(TypeError, match="add\\(\\): argument 'out' must be Tensor, not int"):
        minitorch.add(minitorch.ones(2), 1, out=3)
    with pytest.raises(TypeError, match="max\\(\\): argument 'out' must be tuple of Tensors, not Tensor"):
        minitorch.max(minitorch.ones(2), 0, out=minitorch.ones(2))


@pytest.mark.parametrize("name", ["add", "exp", "sum", "mm", "matmul", "cat", "stack", "where", "max_dim"])
def test_out_refuses_autograd_as_torch(name):
    calls = {"max_dim": lambda L, x, o: L.max(x, 0, out=(o, L.empty(0, dtype=L.int64)))}
    call = calls.get(name, CASES.get(name))
    for lib in (minitorch, torch):
        x, o = lib.tensor(F, requires_grad=True), lib.empty(0)
        with pytest.raises(RuntimeError) as e:
            call(lib, x, o)
        fname = "max" if name == "max_dim" else name
        assert str(e.value) == (f"{fname}(): functions with out=... arguments don't support automatic "
                                "differentiation, but one of the arguments requires grad.")
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            call(lib, lib.tensor(F), lib.empty(0, requires_grad=True))
        with lib.no_grad():
            call(lib, x, o)
            assert not o.requires_grad


def test_resize_like_torch():
    for lib in (minitorch, torch):
        t = lib.arange(6.0)
        ptr = t.data_ptr()
        assert t.resize_(2, 2) is t and tuple(t.shape) == (2, 2) and t.stride() == (2, 1)
        assert t.data_ptr() == ptr and t.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        t.resize_((3, 3))
        assert tuple(t.shape) == (3, 3) and t.flatten()[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert t.resize_(0).shape == (0,)
        with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
            t.resize_(-1)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.ones(2, requires_grad=True).resize_(3)
    v = minitorch.arange(8.0)[2:]
    v.resize_(8)  # grows past its storage: a new one, from its offset
    assert v[:6].tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
