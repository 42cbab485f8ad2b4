"""Sparse gradients against PyTorch and NumPy: embedding(sparse=True) (F.embedding, nn.Embedding,
nn.EmbeddingBag) gives its weight a sparse COO .grad, an entry per looked-up index, uncoalesced,
padding_idx's rows left out; AccumulateGrad's sums (sparse + sparse concatenates, sparse + dense
is dense); autograd.grad; .grad assignment; zero_grad; the optimizers that take sparse gradients
(SparseAdam, SGD, Adagrad) step for step, and the errors of the others and of clip_grad_norm_."""
import numpy as np
import pytest

import minitorch
from helpers import to_layout

torch = pytest.importorskip("torch")
rng = np.random.default_rng(0)
V, D = 7, 3  # num_embeddings, embedding_dim


def dense_grad(idx, go, padding_idx=None):
    """NumPy reference: the weight gradient of embedding(idx) with grad_output go."""
    out = np.zeros((V, go.shape[-1]))
    np.add.at(out, np.asarray(idx, dtype=np.int64).reshape(-1), go.reshape(-1, go.shape[-1]))
    if padding_idx is not None:
        out[padding_idx % V] = 0
    return out


def run(lib, weight, idx, go, **kw):
    """weight's .grad after embedding(idx, weight, sparse=True, **kw) backward with go."""
    w = lib.tensor(weight, requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor(idx, dtype=lib.int64), w, sparse=True, **kw)
    out.backward(lib.tensor(go))
    return w.grad


def same_sparse(g, t, rtol=1e-6):
    """g (minitorch) is torch's t as PyTorch lays it out: layout, size, coalesced, the very
    indices and values (uncoalesced: in lookup order)."""
    assert g.is_sparse and g.layout == minitorch.sparse_coo and t.is_sparse
    assert tuple(g.shape) == tuple(t.shape) and g.dtype == getattr(minitorch, str(t.dtype).split(".")[1])
    assert g.is_coalesced() == t.is_coalesced() and g._nnz() == t._nnz()
    np.testing.assert_array_equal(g._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(g._values().numpy(), t._values().numpy(), rtol=rtol)


@pytest.mark.parametrize("idx", [[1, 4, 1, 0, 4, 4], [[2, 2], [6, 0]], 3, []], ids=["dups", "2d", "0d", "empty"])
@pytest.mark.parametrize("padding_idx", [None, 4, -3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_sparse_grad(idx, padding_idx, dtype):
    weight = rng.standard_normal((V, D)).astype(dtype)
    go = rng.standard_normal(np.shape(idx) + (D,)).astype(dtype)
    go.reshape(-1)[:2] = [np.nan, np.inf][: go.size]  # NaN and inf travel as values
    g = run(minitorch, weight, idx, go, padding_idx=padding_idx)
    if np.ndim(idx) or padding_idx is None:  # PyTorch 2.13 fails a 0-d index with a padding_idx
        same_sparse(g, run(torch, weight, idx, go, padding_idx=padding_idx))
    np.testing.assert_allclose(g.to_dense().numpy(), dense_grad(idx, go, padding_idx), rtol=1e-6)


def test_int32_indices_and_noncontiguous_grad_output():
    weight = rng.standard_normal((V, D))
    idx = np.array([[5, 1, 5], [0, 5, 2]], dtype=np.int32)
    go = rng.standard_normal((3, 2, D)).transpose(1, 0, 2)  # a transposed gradient
    grads = []
    for lib in (minitorch, torch):
        w = lib.tensor(weight, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True)
        out.backward(to_layout(go, "transposed") if lib is minitorch else torch.tensor(go))
        grads.append(w.grad)
    same_sparse(*grads)
    assert grads[0]._indices().dtype == minitorch.int64


def test_module_max_norm_and_scale_grad_by_freq():
    weight = rng.standard_normal((V, D)) * 3
    idx = [[1, 2, 1], [6, 6, 2]]
    mods = []
    for lib in (minitorch, torch):
        emb = lib.nn.Embedding(V, D, max_norm=1.5, sparse=True)
        emb.weight.data = lib.tensor(weight)
        (emb(lib.tensor(idx)) ** 2).sum().backward()
        mods.append(emb)
    np.testing.assert_allclose(mods[0].weight.detach().numpy(), mods[1].weight.detach().numpy(), rtol=1e-6)
    same_sparse(mods[0].weight.grad, mods[1].weight.grad)
    for lib in (minitorch, torch):
        emb = lib.nn.Embedding(V, D, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            emb(lib.tensor([1, 1])).sum().backward()


def accumulate(lib, weight, steps):
    """weight's .grad after each step of (kind, idx): 'sparse' an embedding lookup, 'dense' a
    dense use of the weight, 'both' the two in one backward."""
    w = lib.tensor(weight, requires_grad=True)
    seen = []
    for kind, idx in steps:
        loss = 0
        if kind in ("sparse", "both"):
            loss = (lib.nn.functional.embedding(lib.tensor(idx, dtype=lib.int64), w, sparse=True) * 2).sum()
        if kind in ("dense", "both"):
            loss = loss + (w * w).sum()
        loss.backward()
        g = w.grad  # PyTorch adds into a sparse .grad in place: what it holds now, kept
        seen.append((g.is_sparse, g.to_dense().numpy().copy(), g._nnz() if g.is_sparse else None,
                     g.coalesce().indices().numpy() if g.is_sparse else None, g))
    return seen


@pytest.mark.parametrize("steps", [
    [("sparse", [1, 3]), ("sparse", [3, 3, 0])],  # sparse + sparse: the entries of both
    [("sparse", [1]), ("sparse", [2])],  # two one-entry (coalesced) gradients
    [("dense", []), ("sparse", [2, 2])],  # dense .grad += sparse: dense, in place
    [("sparse", [5, 1]), ("dense", [])],  # sparse .grad + dense: dense
    [("both", [4, 4, 0])],  # sparse and dense into one buffer
    [("sparse", [6, 6]), ("sparse", [])],
], ids=["sparse+sparse", "one-entry", "dense+sparse", "sparse+dense", "one-backward", "empty"])
def test_accumulate_grad(steps):
    weight = rng.standard_normal((V, D))
    got, want = accumulate(minitorch, weight, steps), accumulate(torch, weight, steps)
    for g, t in zip(got, want):
        assert g[0] == t[0]  # sparse or not
        np.testing.assert_allclose(g[1], t[1])
        np.testing.assert_array_equal(g[3], t[3])  # the rows it has
    # minitorch's sparse + sparse concatenates the entries, as PyTorch's does where it cannot add
    # in place (PyTorch merges where both are coalesced, and where the values allow)
    if all(kind == "sparse" for kind, _ in steps):
        assert [g[2] for g in got] == list(np.cumsum([len(idx) for _, idx in steps]))
    if steps[0][0] == "dense":
        assert got[0][4] is got[-1][4]  # added into in place, as PyTorch's


def test_sparse_and_view_gradients_meet():
    """A slice of the weight, then a lookup of V rows (values as large as the weight): the
    slice's gradient goes into the sparse one's buffer as a dense sum, never into its values."""
    weight = rng.standard_normal((V, D))
    got = []
    for lib in (minitorch, torch):
        w = lib.tensor(weight, requires_grad=True)
        part = w[1:]
        emb = lib.nn.functional.embedding(lib.tensor(np.arange(V)[::-1].copy()), w, sparse=True)
        ((part * 3).sum() + (emb * 2).sum()).backward()
        got.append(w.grad)
    assert not got[0].is_sparse and not got[1].is_sparse
    np.testing.assert_allclose(got[0].numpy(), got[1].numpy())


def test_autograd_grad_and_assigned_grad():
    weight = rng.standard_normal((V, D))
    got = []
    for lib in (minitorch, torch):
        w = lib.tensor(weight, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([3, 0, 3]), w, sparse=True)
        (g,) = lib.autograd.grad(out.sum(), w)
        got.append(g)
        assert w.grad is None
    same_sparse(*got)
    p = minitorch.nn.Parameter(minitorch.zeros(V, D))
    s = minitorch.sparse_coo_tensor([[1, 5]], minitorch.ones(2, D), (V, D)).coalesce()
    p.grad = s
    assert p.grad.is_sparse and p.grad.is_coalesced() and p.grad._nnz() == 2
    np.testing.assert_array_equal(p.grad.to_dense().numpy(), s.to_dense().numpy())
    for bad in (minitorch.sparse_coo_tensor([[1]], minitorch.ones(1, D), (V + 1, D)),
                minitorch.sparse_coo_tensor([[1]], minitorch.ones(1, D, dtype=minitorch.float64), (V, D)),
                minitorch.zeros(V, D).to_sparse_csr()):
        with pytest.raises(RuntimeError, match="attempting to assign a gradient"):
            p.grad = bad
    p.grad = None
    assert p.grad is None


@pytest.mark.parametrize("owner", ["optimizer", "module"])
def test_zero_grad_keeps_no_entries(owner):
    """zero_grad(set_to_none=False) empties a sparse .grad (nnz 0), as PyTorch's zero_()."""
    nnz = []
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(V, D, sparse=True)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        zero = opt.zero_grad if owner == "optimizer" else emb.zero_grad
        seen = []
        for idx in ([1, 2], [2, 2, 3]):
            emb(lib.tensor(idx)).sum().backward()
            seen.append(emb.weight.grad._nnz())
            zero(set_to_none=False)
            seen.append(emb.weight.grad._nnz())
        nnz.append(seen)
    assert nnz[0] == nnz[1] == [2, 0, 3, 0]


def train(lib, make_opt, steps, maximize_sign=1, **opt_kw):
    """A few steps of an embedding under make_opt, duplicate indices in each batch; the weights
    after each step and the last step's optimizer state."""
    rows = np.random.default_rng(1).integers(0, V, (steps, 5))
    target = np.random.default_rng(2).standard_normal((5, D))
    w = lib.nn.Parameter(lib.tensor(np.random.default_rng(3).standard_normal((V, D))))
    opt = make_opt(lib)([w], **opt_kw)
    weights = []
    for k in range(steps):
        opt.zero_grad()
        out = lib.nn.functional.embedding(lib.tensor(rows[k]), w, sparse=True)
        (maximize_sign * ((out - lib.tensor(target)) ** 2).sum()).backward()
        opt.step()
        weights.append(w.detach().numpy().copy())
    return weights, opt.state[w]


@pytest.mark.parametrize("name,kw", [
    ("SparseAdam", {"lr": 0.05}),
    ("SparseAdam", {"lr": 0.1, "betas": (0.8, 0.9), "maximize": True}),
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}),
    ("Adagrad", {"lr": 0.2, "lr_decay": 0.01}),
    ("Adagrad", {"lr": 0.2, "initial_accumulator_value": 0.1, "maximize": True}),
])
def test_sparse_optimizers_step_for_step(name, kw):
    sign = -1 if kw.get("maximize") else 1
    got, got_state = train(minitorch, lambda lib: getattr(lib.optim, name), 6, sign, **kw)
    want, want_state = train(torch, lambda lib: getattr(lib.optim, name), 6, sign, **kw)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
    for key in ("exp_avg", "exp_avg_sq", "sum"):
        if key in want_state:
            np.testing.assert_allclose(got_state[key].numpy(), want_state[key].numpy(), rtol=1e-5, atol=1e-7)
    if name == "SparseAdam":
        assert got_state["step"] == want_state["step"] == 6
    if "momentum_buffer" in want_state:
        buf, tbuf = got_state["momentum_buffer"], want_state["momentum_buffer"]
        assert buf.is_sparse and tbuf.is_sparse
        np.testing.assert_allclose(buf.to_dense().numpy(), tbuf.to_dense().numpy(), rtol=1e-5, atol=1e-7)


def error_of(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is compared with PyTorch's
        return type(e), str(e)
    return None, ""


@pytest.mark.parametrize("name,kw", [
    ("Adam", {}), ("AdamW", {}), ("RMSprop", {}), ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}),
    ("Rprop", {}), ("ASGD", {}), ("SGD", {"weight_decay": 0.1}), ("Adagrad", {"weight_decay": 0.1}),
])
def test_optimizers_that_refuse_sparse_gradients(name, kw):
    def step(lib):
        w = lib.nn.Parameter(lib.ones(V, D))
        opt = getattr(lib.optim, name)([w], lr=0.1, **kw)
        lib.nn.functional.embedding(lib.tensor([1, 1]), w, sparse=True).sum().backward()
        opt.step()

    got, want = error_of(minitorch, step), error_of(torch, step)
    assert want[0] is RuntimeError and got == want


def test_sparse_adam_refuses_dense_gradients_and_clip_grad_norm_refuses_sparse():
    def dense(lib):
        w = lib.nn.Parameter(lib.ones(V, D))
        opt = lib.optim.SparseAdam([w])
        (w * 2).sum().backward()
        opt.step()

    def clip(lib):
        emb = lib.nn.Embedding(V, D, sparse=True)
        emb(lib.tensor([1, 2])).sum().backward()
        lib.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)

    got, want = error_of(minitorch, dense), error_of(torch, dense)
    assert want[0] is RuntimeError and got == want
    got, want = error_of(minitorch, clip), error_of(torch, clip)
    assert want[0] is got[0] is NotImplementedError
    assert got[1].split(". ")[0] == want[1].split(". ")[0]  # Could not run 'aten::...' ... 'SparseCPU' backend


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("psw", [False, True])
def test_embedding_bag_sparse(mode, padding_idx, psw):
    if psw and mode != "sum":
        pytest.skip("per_sample_weights is for mode='sum' only")
    weight = rng.standard_normal((V, D))
    idx, offsets = [1, 2, 2, 4, 6, 2, 1], [0, 3, 3, 5]
    sw = rng.standard_normal(len(idx)) if psw else None
    grads = []
    for lib in (minitorch, torch):
        bag = lib.nn.EmbeddingBag(V, D, mode=mode, sparse=True, padding_idx=padding_idx)
        bag.weight.data = lib.tensor(weight)
        out = bag(lib.tensor(idx), lib.tensor(offsets), per_sample_weights=None if sw is None else lib.tensor(sw))
        (out * lib.tensor(np.arange(4 * D, dtype=np.float64).reshape(4, D))).sum().backward()
        grads.append(bag.weight.grad)
    same_sparse(*grads)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        minitorch.nn.EmbeddingBag(V, D, mode="max", sparse=True)(minitorch.tensor(idx), minitorch.tensor(offsets))


def test_sparse_gradients_leak_nothing():
    """Sparse .grads made, summed, assigned, emptied, stepped and dropped, and the errors of
    the engine's sparse paths, leave the counts of live C tensors, storages and nodes as they were."""
    emb = minitorch.nn.Embedding(V, D, sparse=True)
    dense = minitorch.nn.Parameter(minitorch.ones(D))
    opts = [minitorch.optim.SparseAdam(emb.parameters()), minitorch.optim.Adam([dense])]

    def step(k):
        for opt in opts:
            opt.zero_grad(set_to_none=k % 2 == 0)
        out = emb(minitorch.tensor([k % V, 1, 1]))
        (out * dense).sum().backward()
        (emb(minitorch.tensor([2])) * 2).sum().backward()  # sparse + sparse
        minitorch.autograd.grad(emb(minitorch.tensor([3])).sum(), emb.weight)
        for opt in opts:
            opt.step()
        with pytest.raises(RuntimeError):
            minitorch.nn.Embedding(V, D, sparse=True, scale_grad_by_freq=True)(minitorch.tensor([1])).sum().backward()

    for k in range(3):
        step(k)
    before = minitorch._C._live_objects()
    for k in range(20):
        step(k)
    assert minitorch._C._live_objects() == before


def test_grad_data_and_a_weight_that_is_not_a_leaf():
    """p.grad.data.zero_() (older scripts' spelling) empties the sparse .grad; a sparse gradient
    that reaches another node (the weight is w * 2) stays sparse through it, as PyTorch's
    (tests/autograd/test_sparse_grad_paths.py has the other nodes)."""
    emb = minitorch.nn.Embedding(V, D, sparse=True)
    emb(minitorch.tensor([1, 1])).sum().backward()
    emb.weight.grad.data.zero_()
    assert emb.weight.grad._nnz() == 0
    grads = []
    for lib in (minitorch, torch):
        w = lib.ones(V, D, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([2, 5, 2]), w * 2, sparse=True).sum().backward()
        assert w.grad.is_sparse
        grads.append(w.grad.to_dense())
    np.testing.assert_array_equal(grads[0].numpy(), grads[1].numpy())


def test_a_hook_sees_the_gradient_sparse():
    """A gradient hook on the weight gets the sparse gradient, as PyTorch's, and the sparse one it
    returns becomes the .grad: the values it sees, and the .grad, are PyTorch's."""
    seen = []
    for lib in (minitorch, torch):
        w = lib.ones(V, D, requires_grad=True)
        w.register_hook(lambda g: seen.append(g.to_dense() if g.is_sparse else g) or g * 2)
        lib.nn.functional.embedding(lib.tensor([4, 0, 4]), w, sparse=True).sum().backward()
        seen.append(w.grad.to_dense() if w.grad.is_sparse else w.grad)
    for got, want in zip(seen[:2], seen[2:]):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
