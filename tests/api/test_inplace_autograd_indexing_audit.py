"""In-place autograd and indexing, audited against PyTorch: in-place methods
(the same object back, the same values and one version bump each), the random fills (shape and
dtype: the streams differ), in-place ops on views of tensors that require grad (CopySlices), the
saved-tensor version check and its message, hooks, retain_grad, double backward through the
kernel formulas, and every index form for reading and writing (Python ranges and sequences,
NumPy arrays, masks, Ellipsis, None, out-of-range). Each case is fn(lib), compared by
api_audit.same_call."""
import numpy as np
import pytest

import minitorch
from api_audit import A, a, b, bo, i, same_call, table, v

try:
    import torch
except ImportError:
    torch = None

_TENSORS = [minitorch.Tensor] + ([torch.Tensor] if torch is not None else [])


# Differences the audit found and left (the report lists them): PyTorch 2.13 takes more than one
# Ellipsis in an index (NumPy refuses), and refuses a uint8 mask in an assignment (masked_fill_'s
# error) where minitorch assigns through it as through a bool mask.
KNOWN = {"getitem two ell", "setitem two ell", "setitem tensor val two ell", "setitem uint8 mask",
         "setitem tensor val uint8 mask"}


CASES, P = table(KNOWN)


def ip(name):
    def g(L):
        x = a(L).clone(); v0 = x._version
        r = name(L, x)
        if isinstance(r, tuple(_TENSORS)) and r is not x:
            return (r is x, r, x._version - v0)
        return (r is x, x if r is x else r, x._version - v0)
    return g
for nm, fn in [("add_", lambda L, x: x.add_(1)), ("add_ alpha", lambda L, x: x.add_(b(L), alpha=2)), ("sub_", lambda L, x: x.sub_(1)),
               ("mul_", lambda L, x: x.mul_(b(L))), ("div_", lambda L, x: x.div_(2)), ("div_ floor", lambda L, x: x.div_(2, rounding_mode="floor")),
               ("clamp_", lambda L, x: x.clamp_(-0.1, 0.1)), ("clamp_min_", lambda L, x: x.clamp_min_(0)), ("clamp_ t", lambda L, x: x.clamp_(min=v(L))),
               ("pow_", lambda L, x: x.pow_(2)), ("exp_", lambda L, x: x.exp_()), ("abs_", lambda L, x: x.abs_()), ("neg_", lambda L, x: x.neg_()),
               ("sigmoid_", lambda L, x: x.sigmoid_()), ("tanh_", lambda L, x: x.tanh_()), ("relu_", lambda L, x: x.relu_()), ("zero_", lambda L, x: x.zero_()),
               ("fill_", lambda L, x: x.fill_(3)), ("copy_", lambda L, x: x.copy_(v(L))), ("masked_fill_", lambda L, x: x.masked_fill_(bo(L), 0)),
               ("t_", lambda L, x: x.t_()), ("unsqueeze_", lambda L, x: x.unsqueeze_(0)), ("squeeze_", lambda L, x: x.squeeze_()), ("transpose_", lambda L, x: x.transpose_(0, 1)),
               ("resize_", lambda L, x: x.resize_(2, 2)), ("addmm_", lambda L, x: x.addmm_(a(L), L.ones(4, 4))), ("lerp_", lambda L, x: x.lerp_(b(L), 0.5)),
               ("scatter_", lambda L, x: x.scatter_(1, L.tensor([[0], [1], [2]]), 0.)), ("index_put_", lambda L, x: x.index_put_((L.tensor([0, 1]),), L.tensor(1.))),
               ("setitem", lambda L, x: x.__setitem__((0, slice(None)), 5)), ("floor_divide_", lambda L, x: x.floor_divide_(2)), ("remainder_", lambda L, x: x.remainder_(2)),
               ("mul_ int into float", lambda L, x: x.mul_(2)), ("add_ float into int", lambda L, x: i(L).add_(1.5)), ("sqrt_", lambda L, x: x.sqrt_()),
               ("uniform_", lambda L, x: x.uniform_().shape), ("normal_", lambda L, x: x.normal_(0, 1).shape), ("random_", lambda L, x: x.random_(0, 5).shape),
               ("bernoulli_", lambda L, x: x.bernoulli_(0.5).shape), ("exponential_", lambda L, x: x.exponential_().shape), ("cauchy_", lambda L, x: x.cauchy_().shape),
               ("geometric_", lambda L, x: x.geometric_(0.5).shape), ("log_normal_", lambda L, x: x.log_normal_().shape), ("nan_to_num_", lambda L, x: x.nan_to_num_()),
               ("logical_not_", lambda L, x: x.logical_not_()), ("sign_", lambda L, x: x.sign_()), ("fmod_", lambda L, x: x.fmod_(0.3)), ("atan2_", lambda L, x: x.atan2_(b(L))),
               ("hardtanh F inplace", lambda L, x: L.nn.functional.hardtanh(x, inplace=True)), ("relu F inplace", lambda L, x: L.nn.functional.relu(x, inplace=True)),
               ("leaky F inplace", lambda L, x: L.nn.functional.leaky_relu(x, 0.1, inplace=True)), ("elu F inplace", lambda L, x: L.nn.functional.elu(x, inplace=True)),
               ("dropout F inplace eval", lambda L, x: L.nn.functional.dropout(x, 0.5, training=False, inplace=True)),
               ]:
    P("inplace " + nm, ip(fn))
# autograd on in-place
def ag(fn):
    def g(L):
        leaf = a(L).requires_grad_()
        h = leaf * 1
        out = fn(L, h)
        out.sum().backward() if out.requires_grad else None
        return out, leaf.grad, h._version
    return g
P("ag setitem", ag(lambda L, h: (h.__setitem__(0, 5), h * h)[1]))
P("ag t mul_", ag(lambda L, h: (h.t().mul_(2), h * h)[1]))
P("ag relu view", ag(lambda L, h: (L.nn.functional.relu(h[1:], inplace=True), h.exp())[1]))
P("ag add_ view", ag(lambda L, h: (h[:, 1].add_(h[:, 0]), h * 2)[1]))
P("ag exp_ then use", ag(lambda L, h: (lambda y: (y.exp_(), y)[1])(h.sigmoid())))
P("ag saved modified", ag(lambda L, h: (lambda y: (y.mul_(2), y)[1])(h.exp())))
P("ag leaf inplace", lambda L: a(L).requires_grad_().add_(1))
P("ag leaf view inplace", lambda L: a(L).requires_grad_()[0].add_(1))
P("ag version err", ag(lambda L, h: (lambda y: (lambda z: (y.add_(1), z)[1])(y * y))(h.exp())))
P("ag grad_fn name", lambda L: type((lambda h: (h.__setitem__(0, 5), h)[1])(a(L).requires_grad_() * 1).grad_fn).__name__)
P("ag grad_fn t mul_", lambda L: type((lambda h: (h.t().mul_(2), h)[1])(a(L).requires_grad_() * 1).grad_fn).__name__)
P("ag retain_grad", lambda L: (lambda x: (lambda y: (y.retain_grad(), (y*2).sum().backward(), y.grad, y.retains_grad)[2:])(x*3))(a(L).requires_grad_()))
P("ag register_hook", lambda L: (lambda x: (x.register_hook(lambda g: g * 2), (x*3).sum().backward(), x.grad)[2])(a(L).requires_grad_()))
P("ag post acc hook", lambda L: (lambda x, seen: (x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone())), (x*3).sum().backward(), seen)[2])(a(L).requires_grad_(), []))
P("ag double backward", lambda L: (lambda x: L.autograd.grad(L.autograd.grad((x**3).sum(), x, create_graph=True)[0].sum(), x))(a(L).requires_grad_()))
P("ag gp conv", lambda L: (lambda x, w: L.autograd.grad(L.autograd.grad(L.nn.functional.conv2d(x, w).pow(2).sum(), x, create_graph=True)[0].pow(2).sum(), w))(L.tensor(A).reshape(1, 1, 3, 4).requires_grad_(), L.ones(1, 1, 2, 2).requires_grad_()))
P("ag gp maxpool", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.max_pool2d(x, 2).pow(2).sum(), x, create_graph=True)[0].pow(2).sum(), x))(L.tensor(A).reshape(1, 1, 3, 4).requires_grad_()))
P("ag gp layernorm", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.layer_norm(x, (4,)).pow(3).sum(), x, create_graph=True)[0].pow(2).sum(), x))(a(L).requires_grad_()))
P("ag gp ce", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.cross_entropy(x, L.tensor([0, 1, 3])), x, create_graph=True)[0].pow(2).sum(), x))(a(L).requires_grad_()))
P("ag gp bce", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.binary_cross_entropy_with_logits(x, L.ones(3, 4)), x, create_graph=True)[0].pow(2).sum(), x))(a(L).requires_grad_()))
P("ag gp avgpool", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.avg_pool2d(x, 2).pow(2).sum(), x, create_graph=True)[0].pow(2).sum(), x))(L.tensor(A).reshape(1, 1, 3, 4).requires_grad_()))
P("ag gp batchnorm", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.batch_norm(x, None, None, training=True).pow(3).sum(), x, create_graph=True)[0].pow(2).sum(), x))(a(L).requires_grad_()))
P("ag gp leaky", lambda L: (lambda x: L.autograd.grad(L.autograd.grad(L.nn.functional.leaky_relu(x, 0.2).pow(3).sum(), x, create_graph=True)[0].pow(2).sum(), x))(a(L).requires_grad_()))
P("ag inplace cmp", ag(lambda L, h: (lambda y: (y.gt_(0), y)[1])(h * 1)))
P("ag nonleaf .grad", lambda L: (a(L).requires_grad_() * 2).grad)
# indexing
x = lambda L: L.arange(24).reshape(2, 3, 4)
for nm, idx in [("range", lambda L: range(1, 3)), ("list", lambda L: [0, 2]), ("list bool", lambda L: [True, False]), ("tuple ints", lambda L: (1, 2)),
                ("ellipsis", lambda L: (Ellipsis, 1)), ("None", lambda L: (None, 0, None)), ("neg step?", lambda L: slice(None, None, 2)),
                ("tensor bool", lambda L: L.tensor([True, False])), ("tensor int", lambda L: L.tensor([[0, 1], [1, 0]])), ("mixed adv", lambda L: (L.tensor([0, 1]), slice(None), L.tensor([1, 2]))),
                ("adv sep", lambda L: (L.tensor([0, 1]), 0, L.tensor([1, 2]))), ("np int", lambda L: np.int64(1)), ("np arr", lambda L: np.array([0, 1])), ("np bool arr", lambda L: np.array([True, False])),
                ("0d tensor", lambda L: L.tensor(1)), ("bool scalar", lambda L: True), ("list of lists", lambda L: [[0, 1], [1, 0]]), ("range step", lambda L: (slice(None), range(0, 3, 2))),
                ("bool mask 2d", lambda L: L.arange(6).reshape(2, 3) > 2), ("oob", lambda L: 5), ("oob list", lambda L: [0, 7]), ("empty list", lambda L: []), ("float idx", lambda L: 1.0),
                ("ellipsis mid", lambda L: (0, Ellipsis, 0)), ("two ell", lambda L: (Ellipsis, Ellipsis)), ("neg", lambda L: (-1, -2)), ("slice big", lambda L: slice(-10, 10)),
                ("int32 tensor", lambda L: L.tensor([1, 0], dtype=L.int32)), ("uint8 mask", lambda L: L.tensor([1, 0], dtype=L.uint8))]:
    P("getitem " + nm, lambda L, idx=idx: x(L)[idx(L)])
    P("setitem " + nm, lambda L, idx=idx: (lambda t: (t.__setitem__(idx(L), 99), t)[1])(x(L)))
    P("setitem tensor val " + nm, lambda L, idx=idx: (lambda t: (t.__setitem__(idx(L), L.tensor(7)), t)[1])(x(L)))
P("setitem bcast", lambda L: (lambda t: (t.__setitem__((slice(None), 0), L.tensor([1, 2, 3, 4])), t)[1])(x(L)))
P("setitem float into int", lambda L: (lambda t: (t.__setitem__(0, 1.7), t)[1])(x(L)))
P("setitem list val", lambda L: (lambda t: (t.__setitem__((0, 0), [5, 6, 7, 8]), t)[1])(x(L)))
P("setitem dup adv", lambda L: (lambda t: (t.__setitem__(L.tensor([0, 0]), 3), t)[1])(x(L)))
P("index_put accumulate", lambda L: x(L).index_put_((L.tensor([0, 0]),), L.tensor(1), accumulate=True))
P("getitem grad", lambda L: (lambda t: (t[[0, 0], 1:].sum().backward(), t.grad)[1])(L.tensor(A).requires_grad_()))


@pytest.mark.parametrize("fn", CASES)
def test_same_as_torch(fn):
    same_call(fn)


def _stale_message(lib, make, anomaly=False):
    """The error of a backward through a tensor saved and then changed in place."""
    with lib.autograd.set_detect_anomaly(anomaly):
        loss = make(lib)
        with pytest.raises(RuntimeError) as e:
            loss.backward()
    return str(e.value).replace("minitorch.", "torch.")


STALE = {
    "output of exp, then add_": lambda lib: (lambda h: (lambda z: (h.add_(1), z.sum())[1])(h * h))(
        lib.ones(3, requires_grad=True).exp()),
    "half": lambda lib: (lambda h: (lambda z: (h.mul_(2), z.sum())[1])(h * h))(
        lib.ones(3, requires_grad=True).exp().half()),
    "CopySlices": lambda lib: (lambda h: (lambda z: (h.__setitem__(0, 2.0), z.sum())[1])(h * h))(
        lib.ones(3, 3, requires_grad=True) * 1),
    "leaf under no_grad": lambda lib: (lambda x: (lambda z: (lib.no_grad()(x.add_)(1), z.sum())[1])(x * x))(
        lib.ones(3, requires_grad=True)),
    "resized input": lambda lib: (lambda x: (lambda y: (x.resize_(5), y)[1])(
        (lib.ones(3, requires_grad=True) * x).sum()))(lib.arange(3.0)),
}


@pytest.mark.parametrize("anomaly", [False, True])
@pytest.mark.parametrize("case", sorted(STALE))
def test_saved_tensor_modified_message(case, anomaly):
    """PyTorch's words: the node named without its Backward0 ending (torch::autograd::CopySlices
    in full), every dtype's legacy name, the hint of anomaly mode or of its absence."""
    mine = _stale_message(minitorch, STALE[case], anomaly)
    assert "is at version" in mine
    if torch is None:
        return
    want = _stale_message(torch, STALE[case], anomaly)
    assert mine == want


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 2), (20,), (3, 4, 1)])
def test_resize_version_and_strides(shape):
    """resize_ to another shape bumps the version and makes self contiguous; to the same shape it
    changes nothing (a transposed tensor keeps its strides), as PyTorch's."""
    results = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        x = lib.zeros(4, 3).t()
        before = x._version
        x.resize_(*shape)
        results.append((x._version - before, tuple(x.stride()), tuple(x.shape)))
    assert results[0][2] == shape
    assert results[0][0] == (0 if shape == (3, 4) else 1)
    assert len(set(results)) == 1, results
