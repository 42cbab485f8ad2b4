"""minitorch.func (torch.func) against PyTorch's: vmap (in_dims/out_dims pytrees, None entries,
nesting, chunk_size, empty batches, randomness, errors), grad/grad_and_value (argnums, has_aux,
nesting, closures over tensors that require grad), vjp, jvp, jacrev, jacfwd, hessian, and the
tutorials' patterns: per-sample gradients with functional_call + vmap(grad), model ensembles with
stack_module_state + vmap, Jacobians and Hessians of small functions, neural tangent kernels."""
import numpy as np
import pytest

import minitorch
from helpers import torch
from minitorch.utils import _pytree

rng = np.random.default_rng(0)
A = rng.standard_normal((3,))
B = rng.standard_normal((2, 3))
X = rng.standard_normal((4, 3))
Y = rng.standard_normal((4, 2, 3))


def _flat(res, lib):
    """(structure, arrays) of a pytree of results: tuples/lists/dicts kept, tensors as arrays."""
    if isinstance(res, lib.Tensor):
        return "T", [res.detach().numpy()]
    if isinstance(res, dict):
        parts = {k: _flat(v, lib) for k, v in res.items()}
        return {k: p[0] for k, p in parts.items()}, [a for p in parts.values() for a in p[1]]
    if isinstance(res, (tuple, list)):
        parts = [_flat(r, lib) for r in res]
        return (type(res).__name__, tuple(p[0] for p in parts)), [a for p in parts for a in p[1]]
    return repr(res), []


def same(prog, atol=1e-6, rtol=1e-5):
    """prog(lib) returns a pytree of tensors; minitorch's matches PyTorch's in structure, shapes,
    dtypes and values. Returns minitorch's result."""
    got = prog(minitorch)
    s_got, a_got = _flat(got, minitorch)
    for a in a_got:
        assert np.isfinite(a).all()
    if torch is None:
        return got
    s_want, a_want = _flat(prog(torch), torch)
    assert s_got == s_want
    for g, w in zip(a_got, a_want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol)
    return got


def same_error(prog):
    """prog(lib) raises the same class with the same message in both libraries."""
    msgs = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(Exception) as e:
            prog(lib)
        msgs.append((type(e.value).__name__, str(e.value).replace("minitorch.", "torch.")
                     .replace("torch._tensor.Tensor", "torch.Tensor")))
    assert len(set(msgs)) == 1, msgs


# ---- pytrees ----

def test_pytree_round_trip_and_repr():
    from collections import OrderedDict, namedtuple

    P = namedtuple("P", "a b")
    tree = (1, [2, None], {"x": 3, "y": (4,)}, P(5, 6), OrderedDict(z=7))
    leaves, spec = _pytree.tree_flatten(tree)
    assert leaves == [1, 2, None, 3, 4, 5, 6, 7]
    assert _pytree.tree_unflatten(leaves, spec) == tree
    assert _pytree.tree_map(lambda v: v, tree) == tree
    if torch is not None:
        from torch.utils import _pytree as tp

        t_spec = tp.tree_flatten((1, [2, 3], {"a": 4}, None))[1]
        assert repr(_pytree.tree_flatten((1, [2, 3], {"a": 4}, None))[1]) == repr(t_spec)
        assert _pytree.treespec_pprint(spec) == tp.treespec_pprint(tp.tree_flatten(tree)[1])
    assert _pytree._broadcast_to_and_flatten((0, None), _pytree.tree_structure((1, [2, 3]))) == [0, None, None]
    assert _pytree._broadcast_to_and_flatten((0, None, 1), _pytree.tree_structure((1, [2, 3]))) is None


# ---- vmap ----

VMAPS = {
    "basic": lambda lib: lib.vmap(lambda x: x.sin() * 2)(lib.tensor(X)),
    "dot": lambda lib: lib.vmap(lib.dot)(lib.tensor(X), lib.tensor(X[::-1].copy())),
    "in_dims_none": lambda lib: lib.vmap(lambda x, y: x @ y, in_dims=(0, None))(lib.tensor(Y), lib.tensor(A)),
    "in_dim_1": lambda lib: lib.vmap(lambda x: x.sum(0), in_dims=1)(lib.tensor(Y)),
    "in_dim_neg": lambda lib: lib.vmap(lambda x: x.cumsum(0), in_dims=-1)(lib.tensor(Y)),
    "out_dim_1": lambda lib: lib.vmap(lambda x: x * 3, out_dims=1)(lib.tensor(Y)),
    "out_dim_neg": lambda lib: lib.vmap(lambda x: x.t(), out_dims=-1)(lib.tensor(Y)),
    "tuple_out": lambda lib: lib.vmap(lambda x: (x.max(), x.exp()), out_dims=(0, 1))(lib.tensor(X)),
    "out_dims_none": lambda lib: lib.vmap(lambda x, y: (x * 2, y), in_dims=(0, None), out_dims=(0, None))(
        lib.tensor(X), lib.tensor(A)),
    "dict_in": lambda lib: lib.vmap(lambda d: d["a"] + d["b"].sum(), in_dims=({"a": 0, "b": None},))(
        {"a": lib.tensor(X), "b": lib.tensor(B)}),
    "list_in_prefix": lambda lib: lib.vmap(lambda xs: xs[0] * xs[1], in_dims=([0, 1],))(
        [lib.tensor(X), lib.tensor(X.T.copy())]),
    "dict_out": lambda lib: lib.vmap(lambda x: {"s": x.sum(), "p": [x.prod()]})(lib.tensor(X)),
    "kwargs": lambda lib: lib.vmap(lambda x, scale: x * scale)(lib.tensor(X), scale=lib.tensor(A)),
    "nested": lambda lib: lib.vmap(lib.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(
        lib.tensor(A), lib.tensor(X)),
    "nested_outer_product": lambda lib: lib.vmap(lib.vmap(lib.mul, (None, 0)), (0, None))(lib.tensor(A),
                                                                                          lib.tensor(B[0])),
    "chunked": lambda lib: lib.vmap(lambda x: x.norm(), chunk_size=3)(lib.tensor(X)),
    "non_contiguous": lambda lib: lib.vmap(lambda x: x.softmax(0))(lib.tensor(Y).transpose(0, 2)),
    "matmul_batched": lambda lib: lib.vmap(lib.mm)(lib.tensor(Y), lib.tensor(Y).transpose(1, 2)),
    "nan": lambda lib: lib.vmap(lambda x: lib.nan_to_num(x / 0.0, posinf=1.0, neginf=-1.0, nan=0.5))(
        lib.tensor(np.array([[0.0, 1.0], [-1.0, 0.0]]))),
    "empty_batch": lambda lib: lib.vmap(lambda x: x.sum(0), out_dims=1)(lib.zeros(0, 2, 3)),
    "scalar_elements": lambda lib: lib.vmap(lambda x: x * x)(lib.tensor(A)),
}


@pytest.mark.parametrize("name", sorted(VMAPS))
def test_vmap_as_torch(name):
    same(VMAPS[name])


def test_vmap_gradient_flows_through():
    def prog(lib):
        x = lib.tensor(Y, requires_grad=True)
        w = lib.tensor(A, requires_grad=True)
        out = lib.vmap(lambda m, v: (m @ v).tanh(), in_dims=(0, None))(x, w)
        (out * lib.arange(8.0, dtype=lib.float64).view(4, 2)).sum().backward()
        return out, x.grad, w.grad

    same(prog)


def test_vmap_inplace_writes_through():
    def prog(lib):
        x = lib.tensor(X)
        out = lib.vmap(lambda r: r.mul_(2))(x)
        return out, x

    same(prog)


VMAP_ERRORS = {
    "sizes": lambda lib: lib.vmap(lib.add)(lib.ones(2, 3), lib.ones(3, 3)),
    "no_tensor": lambda lib: lib.vmap(lambda x: x, in_dims=None)(lib.ones(2)),
    "no_inputs": lambda lib: lib.vmap(lambda: 1)(),
    "in_dims_type": lambda lib: lib.vmap(lambda x: x, in_dims=[0])(lib.ones(2)),
    "in_dims_structure": lambda lib: lib.vmap(lambda x, y: x, in_dims=(0, 0, 0))(lib.ones(2), lib.ones(2)),
    "in_dim_range": lambda lib: lib.vmap(lambda x: x, in_dims=2)(lib.ones(2, 3)),
    "in_dim_non_tensor": lambda lib: lib.vmap(lambda x, n: x * n)(lib.ones(2), 3),
    "in_dim_float": lambda lib: lib.vmap(lambda x: x, in_dims=(0.5,))(lib.ones(2)),
    "out_not_tensor": lambda lib: lib.vmap(lambda x: 3)(lib.ones(2)),
    "out_dims_structure": lambda lib: lib.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(lib.ones(2)),
    "out_dims_type": lambda lib: lib.vmap(lambda x: x, out_dims="a")(lib.ones(2)),
    "out_dim_none_batched": lambda lib: lib.vmap(lambda x: x * 2, out_dims=None)(lib.tensor(A)),
    "randomness_value": lambda lib: lib.vmap(lambda x: x, randomness="sometimes"),
    "chunk_size": lambda lib: lib.vmap(lambda x: x, chunk_size=0),
    "random_error": lambda lib: lib.vmap(lambda x: x + lib.rand(()))(lib.ones(3)),
    "random_like_error": lambda lib: lib.vmap(lambda x: lib.randn_like(x))(lib.ones(3, 2)),
}


@pytest.mark.parametrize("name", sorted(VMAP_ERRORS))
def test_vmap_errors_as_torch(name):
    same_error(VMAP_ERRORS[name])


def test_vmap_randomness_same_and_different():
    minitorch.manual_seed(0)
    same_rows = minitorch.vmap(lambda x: x + minitorch.rand(3), randomness="same")(minitorch.zeros(4, 3))
    assert all(minitorch.equal(same_rows[0], r) for r in same_rows[1:])
    minitorch.manual_seed(0)
    diff_rows = minitorch.vmap(lambda x: x + minitorch.rand(3), randomness="different")(minitorch.zeros(4, 3))
    assert not any(minitorch.equal(diff_rows[0], r) for r in diff_rows[1:])
    minitorch.manual_seed(0)
    drop = minitorch.vmap(lambda x: minitorch.nn.functional.dropout(x, 0.5), randomness="same")(minitorch.ones(5, 40))
    assert all(minitorch.equal(drop[0], r) for r in drop[1:]) and (drop[0] == 0).any()
    minitorch.manual_seed(0)
    drop = minitorch.vmap(lambda x: minitorch.nn.functional.dropout(x, 0.5), randomness="different")(
        minitorch.ones(5, 40))
    assert not minitorch.equal(drop[0], drop[1])


def test_vmap_keeps_name_and_calls_once_per_element():
    calls = []

    def f(x):
        calls.append(tuple(x.shape))
        return x

    g = minitorch.vmap(f, in_dims=1)
    assert g.__name__ == "f"
    g(minitorch.ones(2, 5, 3))
    assert calls == [(2, 3)] * 5


# ---- grad, vjp, jvp, jacobians ----

def f_scalar(lib, x):
    return (x.pow(3) + x.sin() * x.sum()).sum()


def f_two(lib, x, y):
    return (y @ x.pow(2)).sum() * x.cos().sum() + (y * y).sum()


def f_vec(lib, x):
    return lib.stack([(x * x).sum(), lib.sin(x).prod()])


TRANSFORMS = {
    "grad": lambda lib: lib.func.grad(lambda x: f_scalar(lib, x))(lib.tensor(A)),
    "grad_argnums1": lambda lib: lib.func.grad(lambda x, y: f_two(lib, x, y), argnums=1)(lib.tensor(A),
                                                                                       lib.tensor(B)),
    "grad_argnums_tuple": lambda lib: lib.func.grad(lambda x, y: f_two(lib, x, y), argnums=(0, 1))(
        lib.tensor(A), lib.tensor(B)),
    "grad_argnums_neg": lambda lib: lib.func.grad(lambda x, y: f_two(lib, x, y), argnums=-1)(lib.tensor(A),
                                                                                           lib.tensor(B)),
    "grad_has_aux": lambda lib: lib.func.grad(lambda x: (f_scalar(lib, x), {"sq": x * x, "n": [x.sum()]}),
                                              has_aux=True)(lib.tensor(A)),
    "grad_dict_arg": lambda lib: lib.func.grad(lambda p, x: ((x @ p["w"]) + p["b"]).tanh().sum())(
        {"w": lib.tensor(B.T.copy()), "b": lib.tensor(A[:2])}, lib.tensor(X)),
    "grad_unused": lambda lib: lib.func.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(lib.tensor(A),
                                                                                       lib.tensor(B)),
    "grad_of_grad": lambda lib: lib.func.grad(lambda x: lib.func.grad(lambda y: f_scalar(lib, y))(x).sum())(
        lib.tensor(A)),
    "grad_of_grad_closure": lambda lib: lib.func.grad(
        lambda x: lib.func.grad(lambda y: (x * y).sin().sum())(lib.tensor(A[::-1].copy())).sum())(lib.tensor(A)),
    "grad_and_value": lambda lib: lib.func.grad_and_value(lambda x: f_scalar(lib, x))(lib.tensor(A)),
    "grad_and_value_aux": lambda lib: lib.func.grad_and_value(lambda x: (f_scalar(lib, x), x.exp()), has_aux=True)(
        lib.tensor(A)),
    "grad_kwargs": lambda lib: lib.func.grad(lambda x, scale: (x * scale).exp().sum())(lib.tensor(A), scale=2.0),
    "vjp": lambda lib: (lambda o, fn: (o, fn(lib.tensor(A[:2]))))(*lib.func.vjp(lambda x: f_vec(lib, x),
                                                                              lib.tensor(A))),
    "vjp_two": lambda lib: (lambda o, fn: (o, fn((lib.tensor(A[:2]), lib.tensor(B)))))(
        *lib.func.vjp(lambda x, y: (y @ x.exp(), y * x.tanh()), lib.tensor(A), lib.tensor(B))),
    "vjp_aux": lambda lib: (lambda o, fn, aux: (o, fn(lib.tensor(A[:2])), aux))(
        *lib.func.vjp(lambda x: (f_vec(lib, x), x.sum()), lib.tensor(A), has_aux=True)),
    "jvp": lambda lib: lib.func.jvp(lambda x: f_vec(lib, x), (lib.tensor(A),), (lib.tensor(A[::-1].copy()),)),
    "jvp_two": lambda lib: lib.func.jvp(lambda x, y: (y @ x.exp(), (y * x).sum()), (lib.tensor(A), lib.tensor(B)),
                                        (lib.tensor(A * 0.5), lib.tensor(B * 2))),
    "jvp_aux": lambda lib: lib.func.jvp(lambda x: (x.sin(), x.cos()), (lib.tensor(A),), (lib.tensor(A),),
                                        has_aux=True),
    "jvp_constant_output": lambda lib: lib.func.jvp(lambda x: (x.sin(), lib.ones(2, dtype=lib.float64)),
                                                    (lib.tensor(A),), (lib.tensor(A),)),
    "jvp_linear": lambda lib: lib.func.jvp(lambda x: x * 3 + 1, (lib.tensor(A),), (lib.tensor(A),)),
    "linearize": lambda lib: lib.func.linearize(lambda x: x.sin() * x, lib.tensor(A))[1](lib.tensor(A * 2)),
    "jacrev": lambda lib: lib.func.jacrev(lambda x: f_vec(lib, x))(lib.tensor(A)),
    "jacrev_matrix": lambda lib: lib.func.jacrev(lambda x: x.tanh() @ x.t())(lib.tensor(B)),
    "jacrev_argnums": lambda lib: lib.func.jacrev(lambda x, y: y @ x.exp(), argnums=(0, 1))(lib.tensor(A),
                                                                                          lib.tensor(B)),
    "jacrev_tuple_out": lambda lib: lib.func.jacrev(lambda x: (x.sin(), x.sum()))(lib.tensor(A)),
    "jacrev_dict_arg": lambda lib: lib.func.jacrev(lambda p: p["a"] * p["b"].sum())(
        {"a": lib.tensor(A), "b": lib.tensor(B)}),
    "jacrev_aux": lambda lib: lib.func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(lib.tensor(A)),
    "jacfwd": lambda lib: lib.func.jacfwd(lambda x: f_vec(lib, x))(lib.tensor(A)),
    "jacfwd_argnums": lambda lib: lib.func.jacfwd(lambda x, y: y @ x.exp(), argnums=(0, 1))(lib.tensor(A),
                                                                                          lib.tensor(B)),
    "jacfwd_aux": lambda lib: lib.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(lib.tensor(A)),
    "jacfwd_of_jacrev": lambda lib: lib.func.jacfwd(lib.func.jacrev(lambda x: f_vec(lib, x)))(lib.tensor(A)),
    "jacrev_of_jacrev": lambda lib: lib.func.jacrev(lib.func.jacrev(lambda x: f_scalar(lib, x)))(lib.tensor(A)),
    "hessian": lambda lib: lib.func.hessian(lambda x: f_scalar(lib, x))(lib.tensor(A)),
    "hessian_argnums": lambda lib: lib.func.hessian(lambda x, y: f_two(lib, x, y), argnums=(0, 1))(
        lib.tensor(A), lib.tensor(B)),
    "vmap_grad": lambda lib: lib.vmap(lib.func.grad(lambda x: f_scalar(lib, x)))(lib.tensor(X)),
    "vmap_jacrev": lambda lib: lib.vmap(lib.func.jacrev(lambda x: f_vec(lib, x)))(lib.tensor(X)),
    "vmap_hessian": lambda lib: lib.vmap(lib.func.hessian(lambda x: f_scalar(lib, x)))(lib.tensor(X)),
    "grad_of_vmap": lambda lib: lib.func.grad(lambda w: lib.vmap(lambda r: (r * w).sin().sum())(lib.tensor(X))
                                              .sum())(lib.tensor(A)),
    "vmap_vjp": lambda lib: lib.vmap(lambda x, v: lib.func.vjp(lambda t: t.exp() * t, x)[1](v))(
        lib.tensor(X), lib.tensor(X * 2)),
    "vmap_jvp": lambda lib: lib.vmap(lambda x, v: lib.func.jvp(lambda t: t.exp() * t, (x,), (v,)))(
        lib.tensor(X), lib.tensor(X * 2)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_as_torch(name):
    res = same(TRANSFORMS[name])
    for leaf in _pytree.tree_leaves(res):  # nothing outside required grad
        assert not (isinstance(leaf, minitorch.Tensor) and leaf.requires_grad)


def test_grad_closure_keeps_outer_graph():
    def prog(lib):
        w = lib.tensor(A, requires_grad=True)
        g = lib.func.grad(lambda x: (x * w).sin().sum())(lib.tensor(A * 2))
        assert g.requires_grad
        (g * g).sum().backward()
        return g, w.grad

    same(prog)


def test_grad_of_input_that_requires_grad():
    def prog(lib):
        x = lib.tensor(A, requires_grad=True)
        g = lib.func.grad(lambda t: (t ** 3).sum())(x)
        assert g.requires_grad
        g.sum().backward()
        return g, x.grad

    same(prog)


def test_vjp_fn_reusable_and_create_graph():
    x = minitorch.tensor(A)
    out, fn = minitorch.func.vjp(lambda t: t.exp(), x)
    a = fn(minitorch.ones(3, dtype=minitorch.float64))
    b = fn(minitorch.ones(3, dtype=minitorch.float64) * 2)
    np.testing.assert_allclose(b[0].numpy(), 2 * a[0].numpy())
    assert isinstance(a, tuple) and not a[0].requires_grad


TRANSFORM_ERRORS = {
    "grad_not_scalar": lambda lib: lib.func.grad(lambda x: x * 2)(lib.ones(2)),
    "grad_not_tensor": lambda lib: lib.func.grad(lambda x: 3.0)(lib.ones(2)),
    "grad_aux_not_tensor": lambda lib: lib.func.grad(lambda x: (x.sum(), 3), has_aux=True)(lib.ones(2)),
    "grad_aux_not_pair": lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.ones(2)),
    "grad_argnum_range": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(lib.ones(2)),
    "grad_argnum_type": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=[0])(lib.ones(2)),
    "grad_argnums_dup": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(lib.ones(2), lib.ones(2)),
    "grad_argnums_empty": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=())(lib.ones(2), lib.ones(2)),
    "grad_non_tensor_arg": lambda lib: lib.func.grad(lambda x: x)(3.0),
    "vjp_int_output": lambda lib: lib.func.vjp(lambda x: (x > 0).long(), lib.ones(2)),
    "vjp_cotangent_structure": lambda lib: lib.func.vjp(lambda x: (x, x), lib.ones(2))[1](lib.ones(2)),
    "vjp_empty_output": lambda lib: lib.func.vjp(lambda x: (), lib.ones(2)),
    "jvp_primals_not_tuple": lambda lib: lib.func.jvp(lambda x: x, lib.ones(2), (lib.ones(2),)),
    "jvp_structure": lambda lib: lib.func.jvp(lambda x: x, (lib.ones(2),), (lib.ones(2), lib.ones(2))),
    "jvp_shape": lambda lib: lib.func.jvp(lambda x: x, (lib.ones(2),), (lib.ones(3),)),
    "jvp_not_tensor": lambda lib: lib.func.jvp(lambda x: x, (2.0,), (1.0,)),
    "jvp_strict": lambda lib: lib.func.jvp(lambda x: lib.ones(2), (lib.ones(2),), (lib.ones(2),), strict=True),
    "jacrev_chunk": lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0),
    "jacfwd_randomness": lambda lib: lib.func.jacfwd(lambda x: x, randomness="maybe")(lib.ones(2)),
    "jacfwd_random_error": lambda lib: lib.func.jacfwd(lambda x: x + lib.rand(2))(lib.ones(2)),
    "jacrev_output_not_tensor": lambda lib: lib.func.jacrev(lambda x: 3)(lib.ones(2)),
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_ERRORS))
def test_transform_errors_as_torch(name):
    same_error(TRANSFORM_ERRORS[name])


# ---- functional_call and stack_module_state ----

def _twins(make):
    """The same module in minitorch and (if installed) PyTorch, PyTorch's weights copied in."""
    minitorch.manual_seed(0)
    m = make(minitorch)
    if torch is None:
        return m, None
    t = make(torch).double() if next(m.parameters()).dtype == minitorch.float64 else make(torch)
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    return m, t


class _Lib:
    """Picks the minitorch or PyTorch twin of a module for prog(lib)."""

    def __init__(self, pair):
        self.pair = pair

    def __call__(self, lib):
        return self.pair[0] if lib is minitorch else self.pair[1]


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _cnn(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(1, 4, 3)
            self.conv2 = lib.nn.Conv2d(4, 6, 3)
            self.fc = lib.nn.Linear(6 * 2 * 2, 5)

        def forward(self, x):
            x = lib.nn.functional.relu(self.conv1(x))
            x = lib.nn.functional.max_pool2d(lib.nn.functional.relu(self.conv2(x)), 2)
            x = x.flatten(1)
            return lib.nn.functional.log_softmax(self.fc(x), dim=1)

    return Net()


@pytest.mark.parametrize("make,shape", [(_mlp, (6,)), (_cnn, (1, 8, 8))], ids=["mlp", "cnn"])
def test_per_sample_gradients_tutorial(make, shape):
    """The per-sample-gradients tutorial: vmap(grad(compute_loss), in_dims=(None, None, 0, 0))."""
    model = _Lib(_twins(make))
    data = rng.standard_normal((5,) + shape).astype(np.float32)
    targets = rng.integers(0, 3, 5)

    def prog(lib):
        m = model(lib)
        params = {k: v.detach() for k, v in m.named_parameters()}
        buffers = {k: v.detach() for k, v in m.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch = sample.unsqueeze(0)
            predictions = lib.func.functional_call(m, (params, buffers), (batch,))
            return lib.nn.functional.cross_entropy(predictions, target.unsqueeze(0))

        ft = lib.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))
        return ft(params, buffers, lib.tensor(data), lib.tensor(targets))

    grads = same(prog, atol=1e-5)
    m = model(minitorch)  # and the loop the tutorial compares against
    for i in range(5):
        m.zero_grad()
        out = m(minitorch.tensor(data[i:i + 1]))
        minitorch.nn.functional.cross_entropy(out, minitorch.tensor(targets[i:i + 1])).backward()
        for k, p in m.named_parameters():
            np.testing.assert_allclose(grads[k][i].numpy(), p.grad.numpy(), atol=1e-6)


def test_model_ensembling_tutorial():
    pairs = [_twins(_mlp) for _ in range(3)]
    data = rng.standard_normal((3, 4, 6)).astype(np.float32)

    def prog(lib):
        models = [p[0] if lib is minitorch else p[1] for p in pairs]
        params, buffers = lib.func.stack_module_state(models)
        assert all(v.requires_grad and v.grad_fn is None for v in params.values())
        base = models[0]

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))

        x = lib.tensor(data)
        same_minibatch = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
        different = lib.vmap(fmodel)(params, buffers, x)
        loss = different.pow(2).sum() + same_minibatch.sum()
        loss.backward()
        return same_minibatch, different, {k: v.grad for k, v in params.items()}

    res = same(prog, atol=1e-5)
    for i, (m, _) in enumerate(pairs):
        np.testing.assert_allclose(res[1][i].detach().numpy(), m(minitorch.tensor(data[i])).detach().numpy(),
                                   atol=1e-6)


def test_neural_tangent_kernel_tutorial():
    model = _Lib(_twins(_mlp))
    x1 = rng.standard_normal((3, 6)).astype(np.float32)
    x2 = rng.standard_normal((2, 6)).astype(np.float32)

    def prog(lib):
        m = model(lib)
        params = {k: v.detach() for k, v in m.named_parameters()}

        def fnet_single(params, x):
            return lib.func.functional_call(m, params, (x.unsqueeze(0),)).squeeze(0)

        jac1 = lib.vmap(lib.func.jacrev(fnet_single), (None, 0))(params, lib.tensor(x1))
        jac2 = lib.vmap(lib.func.jacrev(fnet_single), (None, 0))(params, lib.tensor(x2))
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = [j.flatten(2) for j in jac2.values()]
        ntk = lib.stack([lib.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)
        return ntk

    same(prog, atol=1e-5)


def test_jacobians_hessians_tutorial():
    D = 4
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((D, D), (D,), (D,), (3, D))]

    def prog(lib):
        weight, bias, x, batch_x = [lib.tensor(a) for a in arrays]

        def predict(weight, bias, x):
            return lib.nn.functional.linear(x, weight, bias).tanh()

        ft_jac = lib.func.jacrev(predict, argnums=2)(weight, bias, x)
        ft_jac_wb = lib.func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
        fwd = lib.func.jacfwd(predict, argnums=2)(weight, bias, x)
        hess = lib.func.hessian(predict, argnums=2)(weight, bias, x)
        batch_jac = lib.vmap(lib.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, batch_x)
        return ft_jac, ft_jac_wb, fwd, hess, batch_jac

    same(prog, atol=1e-5)


def test_functional_call_leaves_module_unchanged():
    m = _mlp(minitorch)
    before = {k: v.detach().clone() for k, v in m.state_dict().items()}
    new = {k: minitorch.zeros_like(v) for k, v in m.named_parameters()}
    out = minitorch.func.functional_call(m, new, minitorch.ones(2, 6))
    assert not out.any()
    for k, v in m.state_dict().items():
        assert minitorch.equal(v, before[k])
        assert isinstance(dict(m.named_parameters())[k], minitorch.nn.Parameter)
    partial = minitorch.func.functional_call(m, {"2.bias": minitorch.ones(3)}, args=(minitorch.zeros(1, 6),))
    expected = m[2](m[1](m[0](minitorch.zeros(1, 6)))) - m[2].bias + 1
    np.testing.assert_allclose(partial.detach().numpy(), expected.detach().numpy(), atol=1e-6)


def test_functional_call_tied_weights_and_buffers():
    def prog(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight
                self.register_buffer("count", lib.zeros(()))

            def forward(self, x):
                self.count = self.count + 1
                return self.b(self.a(x))

        m = Tied()
        w = lib.tensor(np.arange(4.0).reshape(2, 2).astype(np.float32))
        x = lib.ones(1, 2)
        tied = lib.func.functional_call(m, {"a.weight": w}, (x,))
        untied = lib.func.functional_call(m, {"a.weight": w, "b.weight": w * 2}, (x,), tie_weights=False)
        state = {"a.weight": w, "count": lib.tensor(5.0)}
        lib.func.functional_call(m, state, x)
        return tied, untied, state["count"], m.count

    same(prog)


FUNCTIONAL_CALL_ERRORS = {
    "tied_conflict": lambda lib: lib.func.functional_call(_tied_module(lib), {"a.weight": lib.ones(2, 2),
                                                                              "b.weight": lib.zeros(2, 2)},
                                                          (lib.ones(1, 2),)),
    "strict_missing": lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2)},
                                                           (lib.ones(1, 2),), strict=True),
    "strict_unexpected": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2), "bias": lib.ones(2), "extra": lib.ones(1)},
        (lib.ones(1, 2),), strict=True),
    "repeated_keys": lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), ({"bias": lib.ones(2)},
                                                                                {"bias": lib.ones(2)}),
                                                          (lib.ones(1, 2),)),
    "not_dict": lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), 3, (lib.ones(1, 2),)),
    "stack_empty": lambda lib: lib.func.stack_module_state([]),
    "stack_modes": lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
    "stack_classes": lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Conv1d(2, 2, 1)]),
    "stack_requires_grad": lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2),
                                                                    lib.nn.Linear(2, 2).requires_grad_(False)]),
}


def _tied_module(lib):
    m = lib.nn.Module()
    m.a = lib.nn.Linear(2, 2, bias=False)
    m.b = lib.nn.Linear(2, 2, bias=False)
    m.b.weight = m.a.weight
    return m


@pytest.mark.parametrize("name", sorted(FUNCTIONAL_CALL_ERRORS))
def test_functional_call_errors_as_torch(name):
    same_error(FUNCTIONAL_CALL_ERRORS[name])


def test_replace_all_batch_norm_modules_and_vmap():
    def prog(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        lib.func.replace_all_batch_norm_modules_(net)
        bn = net[1]
        assert bn.running_mean is None and not bn.track_running_stats
        bn.weight.data.fill_(1.5)
        net[0].weight.data.copy_(lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)))
        net[0].bias.data.zero_()
        return lib.vmap(net)(lib.tensor(Y.astype(np.float32)[:, :, :]))

    same(prog, atol=1e-5)


def test_torch_vmap_alias_and_stateless():
    assert minitorch.vmap is minitorch.func.vmap
    with pytest.warns(FutureWarning):
        out = minitorch.nn.utils.stateless.functional_call(minitorch.nn.Linear(2, 1), {
            "weight": minitorch.ones(1, 2), "bias": minitorch.zeros(1)}, (minitorch.ones(1, 2),))
    assert out.item() == 2.0
