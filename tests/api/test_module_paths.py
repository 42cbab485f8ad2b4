"""Module paths that published programs import names from, beside the top-level names:
`from torch.autograd.variable import Variable`, `from torch.distributions.beta import Beta`,
`torch.utils.dlpack.to_dlpack`, ... Each path imports under minitorch and gives the object the
top-level name gives, and (where torch is installed) the same path exists in torch."""
import importlib

import numpy as np
import pytest

import minitorch

PATHS = [
    ("autograd.variable", "Variable", lambda m: m.autograd.Variable),
    ("distributions.beta", "Beta", lambda m: m.distributions.Beta),
    ("distributions.chi2", "Chi2", lambda m: m.distributions.Chi2),
    ("utils.dlpack", "from_dlpack", lambda m: m.from_dlpack),
    ("optim.lr_scheduler", "StepLR", lambda m: m.optim.lr_scheduler.StepLR),
    ("distributions.normal", "Normal", lambda m: m.distributions.Normal),
]


@pytest.mark.parametrize("path,name,top", PATHS, ids=[p for p, _, _ in PATHS])
def test_path_gives_the_top_level_object(path, name, top):
    module = importlib.import_module("minitorch." + path)
    assert getattr(module, name) is top(minitorch)
    try:
        import torch
    except ImportError:
        return
    assert hasattr(importlib.import_module("torch." + path), name)


def test_utils_dlpack_round_trip_shares_memory():
    x = minitorch.arange(6.0).reshape(2, 3)
    y = minitorch.utils.dlpack.from_dlpack(minitorch.utils.dlpack.to_dlpack(x))
    y[0, 0] = 7.0
    assert x[0, 0].item() == 7.0
    z = minitorch.utils.dlpack.from_dlpack(np.arange(4.0))
    np.testing.assert_array_equal(z.numpy(), [0.0, 1.0, 2.0, 3.0])


def test_variable_from_its_old_module_returns_a_tensor_that_records_gradients():
    from minitorch.autograd.variable import Variable

    v = Variable(minitorch.ones(2), requires_grad=True)
    assert type(v) is minitorch.Tensor
    (v * 3).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0])


def test_beta_from_its_module_samples_in_the_unit_interval():
    from minitorch.distributions.beta import Beta

    minitorch.manual_seed(0)
    s = Beta(minitorch.tensor([2.0]), minitorch.tensor([3.0])).sample((500,))
    assert 0 < s.min().item() and s.max().item() < 1
    assert abs(s.mean().item() - 0.4) < 0.05


# A public class names the module PyTorch's names as its own (its __module__), which code compares,
# prints and pickle follows: d2l's train() steps a scheduler whose __module__ == lr_scheduler.__name__
# and calls any other one with the epoch, so OneCycleLR reported from a private file stopped it; and
# tutorials print(type(x)), <class 'torch.Tensor'> under PyTorch.
OWN_MODULES = [
    ("", ["Tensor", "device", "finfo", "iinfo", "Stream", "Event", "Size", "dtype"]),  # print(type(x))
    ("optim.lr_scheduler", ["ChainedScheduler", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "StepLR"]),
    ("optim", ["Adafactor", "Muon", "SGD"]),
    ("distributions", ["Beta", "Chi2", "Gamma"]),
    ("autograd.grad_mode", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]),
    ("nn", ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d"]),  # beside the class each becomes
    ("cuda.amp", ["autocast", "GradScaler"]),
    ("cpu.amp", ["autocast", "GradScaler"]),
    ("distributed", ["Backend", "GroupMember", "PrefixStore", "ProcessGroup", "ReduceOp", "Store", "Work",
                     "DistError", "DistStoreError"]),
]


@pytest.mark.parametrize("path,names", OWN_MODULES, ids=[p or "torch" for p, _ in OWN_MODULES])
def test_public_classes_name_pytorchs_module(path, names):
    import pickle

    module = importlib.import_module("minitorch" + ("." + path if path else ""))
    try:
        import torch
    except ImportError:
        torch = None
    for name in names:
        cls = getattr(module, name)
        assert pickle.loads(pickle.dumps(cls)) is cls  # the named module really holds it
        if torch is not None:
            theirs = getattr(importlib.import_module("torch" + ("." + path if path else "")), name).__module__
            assert cls.__module__ == "mini" + theirs, name


def test_stores_pytorch_defines_in_c_name_the_public_module():
    # PyTorch's FileStore, HashStore and TCPStore name its private torch._C._distributed_c10d.
    import pickle

    for name in ("FileStore", "HashStore", "TCPStore"):
        cls = getattr(minitorch.distributed, name)
        assert cls.__module__ == "minitorch.distributed" and pickle.loads(pickle.dumps(cls)) is cls


def test_d2l_scheduler_dispatch_by_module():
    from minitorch.optim import lr_scheduler

    opt = minitorch.optim.SGD([minitorch.nn.Parameter(minitorch.zeros(1))], lr=0.1)
    for scheduler in (lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=4),
                      lr_scheduler.ReduceLROnPlateau(opt),
                      lr_scheduler.SequentialLR(opt, [lr_scheduler.ConstantLR(opt), lr_scheduler.StepLR(opt, 1)],
                                                milestones=[1])):
        assert scheduler.__module__ == lr_scheduler.__name__, type(scheduler).__name__


def test_type_of_a_tensor_prints_as_pytorchs():
    assert str(type(minitorch.ones(1))) == "<class 'minitorch.Tensor'>"
    assert str(type(minitorch.device("cpu"))) == "<class 'minitorch.device'>"
    assert str(type(minitorch.nn.Parameter(minitorch.ones(1)))) == "<class 'minitorch.nn.parameter.Parameter'>"
