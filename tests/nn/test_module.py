"""minitorch.nn: Module bookkeeping, containers, Linear/ReLU, init, compared with PyTorch's behaviour.

Tests that need PyTorch build the same structure in both libraries (a factory takes the `nn`
namespace) and compare strings or values; they skip where torch is not installed.
"""
import math
from collections import OrderedDict

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.nn import init


def seed_net(nn_ns):
    return nn_ns.Sequential(nn_ns.Linear(4, 8), nn_ns.ReLU(), nn_ns.Linear(8, 2))


def make_nested(nn_ns, make_buffer):
    """Net(body: Sequential, head: Linear without bias, blocks: ModuleList, empty, buffer)."""

    class Net(nn_ns.Module):
        def __init__(self):
            super().__init__()
            self.body = seed_net(nn_ns)
            self.head = nn_ns.Linear(2, 3, bias=False)
            self.blocks = nn_ns.ModuleList(
                [nn_ns.Linear(3, 3) for _ in range(3)] + [nn_ns.ReLU(inplace=True), nn_ns.Identity()]
            )
            self.empty = nn_ns.Sequential()
            self.register_buffer("running", make_buffer(3))

        def forward(self, x):
            return self.head(self.body(x))

    return Net()


class Toy(nn.Module):
    """Two parameters, a buffer, a non-persistent buffer and a child, in a known order."""

    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(mt.zeros(2))
        self.a = nn.Parameter(mt.ones(3, 2))
        self.register_buffer("count", mt.zeros(1, dtype=mt.int64))
        self.register_buffer("scratch", mt.zeros(4), persistent=False)
        self.child = nn.Linear(2, 2)
        self.plain = 5


def as_np(t):
    return np.array(t.tolist())


def from_np(a, dtype=None):
    return mt.tensor(np.asarray(a).tolist(), dtype=dtype or mt.float32)


# ---- Parameter --------------------------------------------------------------------------------


def test_parameter_shares_storage_and_requires_grad():
    data = mt.ones(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, mt.Tensor)
    assert type(data) is mt.Tensor
    assert p.data_ptr() == data.data_ptr()
    assert p.requires_grad and tuple(p.shape) == (2, 3)
    assert not nn.Parameter(mt.ones(2), requires_grad=False).requires_grad
    assert nn.Parameter().numel() == 0


def test_parameter_repr():
    p = nn.Parameter(mt.ones(2))
    assert repr(p) == "Parameter containing:\n" + mt.Tensor.__repr__(p)
    assert str(p) == f"{p}" == repr(p)


def test_parameter_repr_matches_torch():
    torch = pytest.importorskip("torch")
    assert repr(nn.Parameter(mt.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))


def test_parameter_deepcopy_and_pickle():
    import copy
    import pickle

    p = nn.Parameter(from_np([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad
        assert q.data_ptr() != p.data_ptr() and q.tolist() == [1.0, 2.0]
    frozen = nn.Parameter(mt.ones(1), requires_grad=False)
    assert not copy.deepcopy(frozen).requires_grad


def test_module_deepcopy_and_pickle_keep_sharing():
    import copy
    import pickle

    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    for twin in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert repr(twin) == repr(net) and twin[0] is twin[2]
        assert all(isinstance(p, nn.Parameter) for p in twin.parameters())
        for a, b in zip(net.parameters(), twin.parameters()):
            assert a.data_ptr() != b.data_ptr() and a.tolist() == b.tolist()


# ---- registration and walking -----------------------------------------------------------------


def test_registration_order_and_lookup():
    m = Toy()
    assert [n for n, _ in m.named_parameters()] == ["b", "a", "child.weight", "child.bias"]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["b", "a"]
    assert [n for n, _ in m.named_parameters(prefix="toy")][0] == "toy.b"
    assert [n for n, _ in m.named_buffers()] == ["count", "scratch"]
    assert [n for n, _ in m.named_children()] == ["child"]
    assert list(m.children()) == [m.child]
    assert m.a is m._parameters["a"] and m.count is m._buffers["count"]
    assert m.plain == 5 and "plain" not in m._parameters
    assert len(list(m.parameters())) == 4 and len(list(m.buffers())) == 2


def test_named_modules_prefixes_and_dedup():
    net = seed_net(nn)
    assert [n for n, _ in net.named_modules()] == ["", "0", "1", "2"]
    assert [n for n, _ in net.named_modules(prefix="net")] == ["net", "net.0", "net.1", "net.2"]
    assert list(net.modules())[0] is net
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in twice.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in twice.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(twice.named_modules(remove_duplicate=False))) == 4
    assert len(list(twice.children())) == 2


def test_reassign_delete_and_none():
    m = Toy()
    m.a = None
    assert "a" in m._parameters and m.a is None
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["b"]
    m.a = nn.Parameter(mt.zeros(1))
    del m.b
    assert "b" not in m._parameters
    with pytest.raises(AttributeError):
        m.b
    del m.child
    assert list(m.children()) == []
    m.child = nn.ReLU()  # a plain attribute name becomes a module again
    assert m._modules["child"] is m.child
    del m.scratch
    assert "scratch" not in m._non_persistent_buffers_set
    m.register_parameter("c", None)
    assert m.c is None and "c" in m._parameters
    m.add_module("sub", None)
    assert m.sub is None and list(m.children()) == [m.child]
    m.register_module("sub2", nn.Identity())
    assert isinstance(m.sub2, nn.Identity)


def test_attribute_errors_match_torch():
    torch = pytest.importorskip("torch")

    def errors(nn_ns, tensor):
        lin = nn_ns.Linear(2, 2)
        lin.register_buffer("bb", tensor(1))
        lin.add_module("mm", nn_ns.ReLU())
        out = []
        cases = [
            lambda: lin.foo,
            lambda: setattr(lin, "weight", 5),
            lambda: setattr(lin, "bb", 3),
            lambda: setattr(lin, "mm", 3),
            lambda: lin.register_buffer("weight", tensor(1)),
            lambda: lin.register_parameter("a.b", None),
            lambda: lin.register_parameter("", None),
            lambda: lin.add_module("z", 3),
            lambda: lin.register_buffer("z", 3),
            lambda: lin.train(1),
            lambda: nn_ns.Module().forward(),
        ]
        for case in cases:
            with pytest.raises(Exception) as info:
                case()
            out.append((info.type, str(info.value)))
        return out

    assert errors(nn, mt.zeros) == errors(torch.nn, torch.zeros)


def test_assign_before_init_is_an_error():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mt.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_register_parameter_rejects_plain_tensor():
    with pytest.raises(TypeError, match="object to parameter 'z'"):
        nn.Module().register_parameter("z", mt.zeros(1))


def test_dir_lists_registered_names():
    names = dir(Toy())
    for name in ("a", "b", "count", "child", "plain", "forward"):
        assert name in names


# ---- repr -------------------------------------------------------------------------------------


SEED_REPR = (
    "Sequential(\n"
    "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
    "  (1): ReLU()\n"
    "  (2): Linear(in_features=8, out_features=2, bias=True)\n"
    ")"
)


def test_seed_repr():
    assert repr(seed_net(nn)) == SEED_REPR


def test_seed_repr_matches_torch():
    torch = pytest.importorskip("torch")
    assert repr(seed_net(nn)) == repr(seed_net(torch.nn)) == SEED_REPR


def test_nested_repr_matches_torch():
    torch = pytest.importorskip("torch")
    ours = make_nested(nn, mt.zeros)
    theirs = make_nested(torch.nn, torch.zeros)
    assert repr(ours) == repr(theirs)
    assert "(0-2): 3 x Linear(in_features=3, out_features=3, bias=True)" in repr(ours)


def test_repr_extra_lines_none_children_and_leaves():
    torch = pytest.importorskip("torch")

    def build(nn_ns):
        class Multi(nn_ns.Module):
            def extra_repr(self):
                return "a=1\nb=2"

        class Outer(nn_ns.Module):
            def __init__(self):
                super().__init__()
                self.add_module("c", None)
                self.d = Multi()

            def extra_repr(self):
                return "hello"

        return [Outer(), Multi(), nn_ns.Module(), nn_ns.ModuleList(), nn_ns.ReLU(inplace=True),
                nn_ns.Linear(1, 1, bias=False), nn_ns.Identity()]

    assert [repr(m) for m in build(nn)] == [repr(m) for m in build(torch.nn)]


# ---- state_dict -------------------------------------------------------------------------------


def test_state_dict_keys_shapes_and_detach():
    m = Toy()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["b", "a", "count", "child.weight", "child.bias"]  # no non-persistent buffer
    assert [tuple(v.shape) for v in sd.values()] == [(2,), (3, 2), (1,), (2, 2), (2,)]
    assert not any(isinstance(v, nn.Parameter) for v in sd.values())
    assert not sd["a"].requires_grad
    assert sd["a"].data_ptr() == m.a.data_ptr()  # detached, not copied
    kept = m.state_dict(keep_vars=True)
    assert kept["a"] is m.a
    assert list(m.state_dict(prefix="toy.")) [0] == "toy.b"


def test_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")
    ours = make_nested(nn, mt.zeros).state_dict()
    theirs = make_nested(torch.nn, torch.zeros).state_dict()
    assert list(ours) == list(theirs)
    assert [tuple(v.shape) for v in ours.values()] == [tuple(v.shape) for v in theirs.values()]


def test_load_state_dict_round_trip():
    mt.manual_seed(1)
    src = seed_net(nn)
    mt.manual_seed(2)
    dst = seed_net(nn)
    ptrs = [p.data_ptr() for p in dst.parameters()]
    params = list(dst.parameters())
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(as_np(a), as_np(b), err_msg=name)
    assert [p.data_ptr() for p in dst.parameters()] == ptrs  # copied in place
    assert all(p is q for p, q in zip(dst.parameters(), params))
    assert all(p.requires_grad for p in dst.parameters())


def test_load_state_dict_assign_replaces_tensors():
    dst = nn.Linear(2, 2)
    sd = {"weight": mt.ones(2, 2), "bias": mt.zeros(2)}
    dst.load_state_dict(sd, assign=True)
    assert isinstance(dst.weight, nn.Parameter) and dst.weight.requires_grad
    assert dst.weight.data_ptr() == sd["weight"].data_ptr()


def test_load_state_dict_non_strict_reports_keys():
    lin = nn.Linear(4, 8)
    res = lin.load_state_dict({"weight": mt.zeros(8, 4), "x": mt.zeros(1)}, strict=False)
    assert res == (["bias"], ["x"])
    assert res._fields == ("missing_keys", "unexpected_keys")
    assert repr(res) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['x'])"
    np.testing.assert_array_equal(as_np(lin.weight), np.zeros((8, 4)))


def _load_error(module, state_dict, strict=True):
    with pytest.raises(RuntimeError) as info:
        module.load_state_dict(state_dict, strict=strict)
    return str(info.value)


def test_strict_error_message():
    msg = _load_error(nn.Linear(4, 8), {"weight": mt.zeros(8, 4), "foo": mt.zeros(1)})
    assert msg == (
        "Error(s) in loading state_dict for Linear:\n"
        '\tMissing key(s) in state_dict: "bias". \n'
        '\tUnexpected key(s) in state_dict: "foo". '
    )
    assert _load_error(nn.Linear(4, 8), {}) == (
        "Error(s) in loading state_dict for Linear:\n"
        '\tMissing key(s) in state_dict: "weight", "bias". '
    )


STRICT_CASES = [
    ("linear", lambda z: {"weight": z(8, 4), "foo": z(1)}),
    ("linear", lambda z: {}),
    ("seed", lambda z: {"weight": z(8, 4), "bias": z(8), "x": z(1)}),
    ("seed", lambda z: {"0.weight": z(8, 4), "0.bias": z(8), "2.weight": z(2, 8), "3.bias": z(2),
                        "1.weight": z(1), "2.extra.w": z(1)}),
    ("nested", lambda z: {"body.0.weight": z(8, 4), "head.bias": z(3), "running": z(3)}),
]


@pytest.mark.parametrize("which,make_sd", STRICT_CASES)
def test_strict_error_matches_torch(which, make_sd):
    torch = pytest.importorskip("torch")

    def build(nn_ns, zeros):
        if which == "linear":
            return nn_ns.Linear(4, 8)
        if which == "seed":
            return seed_net(nn_ns)
        return make_nested(nn_ns, zeros)

    ours = _load_error(build(nn, mt.zeros), make_sd(mt.zeros))
    theirs = _load_error(build(torch.nn, torch.zeros), make_sd(torch.zeros))
    assert ours == theirs
    res_ours = build(nn, mt.zeros).load_state_dict(make_sd(mt.zeros), strict=False)
    res_theirs = build(torch.nn, torch.zeros).load_state_dict(make_sd(torch.zeros), strict=False)
    assert tuple(res_ours) == tuple(res_theirs)


def test_size_mismatch_message():
    lin = nn.Linear(4, 8)
    bad = mt.zeros(8, 3)
    msg = _load_error(lin, {"weight": bad, "bias": mt.zeros(8)})
    assert msg == (
        "Error(s) in loading state_dict for Linear:\n"
        f"\tsize mismatch for weight: copying a param with shape {bad.shape} from checkpoint, "
        f"the shape in current model is {lin.weight.shape}."
    )
    # a shape mismatch is an error even when not strict, and comes after the key lists
    assert _load_error(lin, {"weight": bad, "bias": mt.zeros(8)}, strict=False) == msg
    msg = _load_error(lin, {"weight": bad, "bias": mt.zeros(8), "x": mt.zeros(1)})
    assert msg.split("\n\t")[1:] == [
        'Unexpected key(s) in state_dict: "x". ',
        f"size mismatch for weight: copying a param with shape {bad.shape} from checkpoint, "
        f"the shape in current model is {lin.weight.shape}.",
    ]


def test_size_mismatch_matches_torch():
    torch = pytest.importorskip("torch")
    ours = _load_error(nn.Linear(4, 8), {"weight": mt.zeros(8, 3), "bias": mt.zeros(8), "x": mt.zeros(1)})
    theirs = _load_error(
        torch.nn.Linear(4, 8), {"weight": torch.zeros(8, 3), "bias": torch.zeros(8), "x": torch.zeros(1)}
    )
    # Shapes print as each library's Size does; everything around them is PyTorch's text.
    theirs = theirs.replace(str(torch.Size([8, 3])), str(mt.zeros(8, 3).shape))
    theirs = theirs.replace(str(torch.Size([8, 4])), str(mt.zeros(8, 4).shape))
    assert ours == theirs


def test_load_state_dict_rejects_non_mapping():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(1, 1).load_state_dict([1, 2])


# ---- modes, grads, apply, dtype ---------------------------------------------------------------


def test_train_eval_propagate():
    net = make_nested(nn, mt.zeros)
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.body.train()
    assert net.body[2].training and not net.head.training and not net.training
    assert net.train() is net
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)


def test_zero_grad():
    net = seed_net(nn)
    for p in net.parameters():
        p.grad = mt.ones(*p.shape)
    grads = [p.grad for p in net.parameters()]
    net.zero_grad(set_to_none=False)
    for p, g in zip(net.parameters(), grads):
        assert p.grad is g
        np.testing.assert_array_equal(as_np(p.grad), np.zeros(tuple(p.shape)))
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.zero_grad(set_to_none=False)  # grads already None: nothing to zero
    assert all(p.grad is None for p in net.parameters())


def test_requires_grad_():
    net = seed_net(nn)
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first():
    seen = []
    net = seed_net(nn)
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]


def test_to_double_keeps_parameters_and_int_buffers():
    m = Toy()
    assert m.to(mt.float64) is m
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    assert {p.dtype for p in m.parameters()} == {mt.float64}
    assert m.count.dtype == mt.int64  # to(dtype) casts floating-point tensors only
    assert m.scratch.dtype == mt.float64
    assert [n for n, _ in m.named_parameters()] == ["b", "a", "child.weight", "child.bias"]
    m.float()
    assert {p.dtype for p in m.parameters()} == {mt.float32}
    m.double()
    assert m.child.weight.dtype == mt.float64 and m.count.dtype == mt.int64
    m.to(dtype=mt.float32)
    assert m.child.weight.dtype == mt.float32
    m.to(mt.zeros(1, dtype=mt.float64))
    assert m.child.weight.dtype == mt.float64


def test_to_same_dtype_and_cpu_keep_identity():
    net = seed_net(nn)
    params = list(net.parameters())
    net.to(mt.float32)
    net.cpu()
    net.to("cpu")
    net.to(device="cpu", dtype=mt.float32)
    assert all(p is q for p, q in zip(net.parameters(), params))


def test_to_converts_grads():
    lin = nn.Linear(2, 2)
    lin.weight.grad = mt.ones(2, 2)
    lin.double()
    assert lin.weight.grad.dtype == mt.float64


def test_to_rejects_integer_dtype():
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        nn.Linear(1, 1).to(mt.int64)


# ---- containers -------------------------------------------------------------------------------


def test_sequential_indexing_and_slicing():
    net = seed_net(nn)
    assert len(net) == 3
    assert isinstance(net[0], nn.Linear) and isinstance(net[1], nn.ReLU)
    assert net[-1] is net[2] and net[-3] is net[0]
    tail = net[1:]
    assert type(tail) is nn.Sequential and list(tail._modules) == ["1", "2"]
    assert tail[0] is net[1] and tail[1] is net[2]
    assert list(net[::2]._modules) == ["0", "2"]
    assert list(net) == [net[0], net[1], net[2]]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        net[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        net[-4]


def test_sequential_append_set_delete():
    net = seed_net(nn)
    relu = nn.ReLU()
    assert net.append(relu) is net and net[3] is relu and len(net) == 4
    ident = nn.Identity()
    net[1] = ident
    assert net[1] is ident
    del net[0]
    assert list(net._modules) == ["0", "1", "2"] and net[0] is ident
    del net[1:]
    assert len(net) == 1
    assert net.pop(0) is ident and len(net) == 0
    both = nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Identity())
    assert [type(m).__name__ for m in both] == ["ReLU", "Identity"]
    net.insert(0, nn.ReLU())
    net.extend([nn.Identity()])
    assert [type(m).__name__ for m in net] == ["ReLU", "Identity"]


def test_sequential_from_ordered_dict():
    net = nn.Sequential(OrderedDict([("fc", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert list(net._modules) == ["fc", "act"]
    assert net.fc is net[0] and isinstance(net.act, nn.ReLU)
    assert [n for n, _ in net.named_parameters()] == ["fc.weight", "fc.bias"]
    assert list(net[:1]._modules) == ["fc"]


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and isinstance(layers[-1], nn.Linear)
    assert type(layers[1:]) is nn.ModuleList and len(layers[1:]) == 2
    layers.append(nn.ReLU())
    layers.extend([nn.Identity()])
    layers += [nn.ReLU()]
    assert [type(m).__name__ for m in layers] == ["Linear"] * 3 + ["ReLU", "Identity", "ReLU"]
    layers.insert(0, nn.Identity())
    assert isinstance(layers[0], nn.Identity) and list(layers._modules)[-1] == "6"
    del layers[0]
    assert list(layers._modules) == [str(i) for i in range(6)]
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    with pytest.raises(IndexError, match="index 9 is out of range"):
        layers[9]
    with pytest.raises(NotImplementedError):
        layers(mt.zeros(1))


# ---- Linear, ReLU and init --------------------------------------------------------------------


def test_linear_attributes():
    lin = nn.Linear(3, 5)
    assert tuple(lin.weight.shape) == (5, 3) and tuple(lin.bias.shape) == (5,)
    assert lin.weight.dtype == mt.float32
    no_bias = nn.Linear(3, 5, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    assert "bias" in no_bias._parameters
    assert nn.Linear(3, 5, dtype=mt.float64).weight.dtype == mt.float64


def test_linear_init_bounds_and_spread():
    mt.manual_seed(0)
    fan_in = 256
    lin = nn.Linear(fan_in, 128)
    bound = 1 / math.sqrt(fan_in)
    w, b = as_np(lin.weight), as_np(lin.bias)
    assert np.all(np.abs(w) <= bound) and np.all(np.abs(b) <= bound)
    # U(-bound, bound) has std bound/sqrt(3); 32768 draws estimate it to well under 2%.
    assert abs(w.std() / (bound / math.sqrt(3)) - 1) < 0.02
    assert abs(w.mean()) < 0.02 * bound
    assert np.abs(w).max() > 0.99 * bound  # the whole range is used, not a narrower one
    assert len(np.unique(w)) > 0.9 * w.size


def test_init_functions():
    t = mt.empty(4, 5)
    assert init.zeros_(t) is t
    np.testing.assert_array_equal(as_np(t), np.zeros((4, 5)))
    init.ones_(t)
    np.testing.assert_array_equal(as_np(t), np.ones((4, 5)))
    init.constant_(t, 2.5)
    np.testing.assert_array_equal(as_np(t), np.full((4, 5), 2.5))
    init.uniform_(t, -3.0, -2.0)
    assert np.all((as_np(t) >= -3.0) & (as_np(t) <= -2.0))
    big = mt.empty(64, 32, 3, 3)
    assert init._calculate_fan_in_and_fan_out(big) == (32 * 9, 64 * 9)
    init.kaiming_uniform_(big, mode="fan_out", nonlinearity="relu")
    assert np.abs(as_np(big)).max() <= math.sqrt(2.0) * math.sqrt(3.0 / (64 * 9))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(mt.empty(3))
    with pytest.raises(ValueError, match=r"Mode x not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(mt.empty(3, 3), mode="x")
    x = mt.empty(0, 3)
    with pytest.warns(UserWarning, match="zero-element"):
        assert init.kaiming_uniform_(x) is x


def test_xavier_and_normal_init():
    mt.manual_seed(0)
    t = mt.empty(200, 100)
    init.xavier_uniform_(t, gain=2.0)
    assert np.abs(as_np(t)).max() <= 2.0 * math.sqrt(6.0 / 300)
    if not hasattr(mt.Tensor, "normal_"):
        assert not hasattr(init, "normal_")
        return
    a = as_np(init.normal_(t, 1.0, 2.0))
    assert abs(a.mean() - 1.0) < 0.05 and abs(a.std() / 2.0 - 1) < 0.03
    a = as_np(init.kaiming_normal_(t, nonlinearity="relu"))
    assert abs(a.std() / math.sqrt(2.0 / 100) - 1) < 0.03
    a = as_np(init.xavier_normal_(t))
    assert abs(a.std() / math.sqrt(2.0 / 300) - 1) < 0.03


def test_calculate_gain_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
             ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)]
    for name, param in cases:
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for bad in [("foo", None), ("leaky_relu", "x")]:
        with pytest.raises(ValueError) as ours:
            init.calculate_gain(*bad)
        with pytest.raises(ValueError) as theirs:
            torch.nn.init.calculate_gain(*bad)
        assert str(ours.value) == str(theirs.value)


def test_relu_module_and_functional():
    x = from_np([[-1.0, 2.0], [0.5, -3.0]])
    np.testing.assert_array_equal(as_np(nn.ReLU()(x)), [[0.0, 2.0], [0.5, 0.0]])
    np.testing.assert_array_equal(as_np(x), [[-1.0, 2.0], [0.5, -3.0]])  # untouched
    y = F.relu(x, inplace=True)
    assert y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(as_np(x), [[0.0, 2.0], [0.5, 0.0]])
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    ident = nn.Identity(54, unused="argument")
    assert ident(x) is x


def test_seed_forward_matches_numpy():
    mt.manual_seed(0)
    net = seed_net(nn)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    w1, b1 = as_np(net[0].weight), as_np(net[0].bias)
    w2, b2 = as_np(net[2].weight), as_np(net[2].bias)
    expected = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    out = net(from_np(x))
    assert tuple(out.shape) == (5, 2) and out.dtype == mt.float32
    np.testing.assert_allclose(as_np(out), expected, rtol=1e-6, atol=1e-6)


def test_linear_without_bias_forward():
    lin = nn.Linear(3, 2, bias=False)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(as_np(lin(from_np(x))), x @ as_np(lin.weight).T, rtol=1e-6, atol=1e-6)


# ---- calling: hooks and tracing ---------------------------------------------------------------


class AddOne(nn.Module):
    def forward(self, x, scale=1):
        return ("out", x, scale)


def test_forward_hooks():
    m = AddOne()
    calls = []
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    post = m.register_forward_hook(lambda mod, args, out: calls.append((args, out)) or out + ("hooked",))
    assert m(1) == ("out", 2, 1, "hooked")
    assert calls == [((2,), ("out", 2, 1))]
    pre.remove()
    post.remove()
    assert m(1) == ("out", 1, 1)
    m.register_forward_pre_hook(lambda mod, args: 10)  # a non-tuple result becomes (result,)
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,), prepend=True)
    assert m(1) == ("out", 10, 1)


def test_forward_hooks_with_kwargs():
    m = AddOne()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 3}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out + (kwargs["scale"],), with_kwargs=True)
    assert m(1) == ("out", 1, 3, 3)
    with m.register_forward_hook(lambda mod, args, out: "replaced"):
        assert m(1) == "replaced"
    assert m(1) == ("out", 1, 3, 3)


def test_trace_frames_wrap_forward():
    def python_ranges():
        return [(e[0], e[2]) for e in mt._C._trace_stop() if e[1] == "Python"]  # (depth, name)

    net = nn.Sequential(nn.Identity(), AddOne())
    mt._C._trace_start()
    try:
        assert net(1) == ("out", 1, 1)
    finally:
        raw = mt._C._trace_stop()
    assert [(e[0], e[2]) for e in raw if e[1] == "Python"] == [(0, "Sequential"), (1, "Identity"), (1, "AddOne")]
    # each range closes when its call returns: the children lie inside the parent
    (seq, ident, add) = [e for e in raw if e[1] == "Python"]
    assert seq[5] <= ident[5] <= ident[6] <= add[5] <= add[6] <= seq[6]
    # a call that raises still closes its range, and hooks run inside it
    mt._C._trace_start()
    with pytest.raises(NotImplementedError):
        nn.Module()()
    m = AddOne()
    m.register_forward_hook(lambda mod, args, out: out + ("hooked",))
    assert m(1) == ("out", 1, 1, "hooked")
    mt._C._trace_enter("after", "user_annotation")
    mt._C._trace_exit()
    assert python_ranges() == [(0, "Module"), (0, "AddOne"), (0, "after")]


def test_trace_records_module_frames():
    if not hasattr(mt._C, "_trace_start"):
        pytest.skip("the core has no journey trace")
    net = seed_net(nn)
    x = mt.ones(3, 4)
    mt._C._trace_start()
    try:
        net(x)
    finally:
        events = mt._C._trace_stop()
    frames = [(ev[0], ev[2]) for ev in events if ev[1] == "Python"]
    assert frames == [(0, "Sequential"), (1, "Linear"), (1, "ReLU"), (1, "Linear")]
    assert not mt._C._trace_enabled()
