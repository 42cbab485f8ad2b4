"""Public names of torch, torch.Tensor, torch.nn and torch.nn.functional that were missing, each
against PyTorch where installed: the sym_* helpers, torch.cond and torch.while_loop run eagerly,
empty_permuted, norm_except_dim (values and gradients), get_device_module, is_vulkan_available,
init_num_threads; Tensor.is_mps/is_xpu/... device flags, volatile and is_set_to; nn.NLLLoss2d,
nn.factory_kwargs, nn.common_types; F.grad and F's has_torch_function/handle_torch_function."""
import math
import warnings

import numpy as np
import pytest

import minitorch
from api_audit import a, b, bo, i, same_call, sq, table
from helpers import same_as_torch, torch

cases, add = table()

add("sym_int_float", lambda lib: [lib.sym_int(3.7), lib.sym_int(-3.7), lib.sym_int(5), lib.sym_float(3)])
add("sym_max_min", lambda lib: [lib.sym_max(2, 3.0), lib.sym_max(4, 3), lib.sym_min(2, 3), lib.sym_min(2.5, 3)])
add("sym_not_ite", lambda lib: [lib.sym_not(True), lib.sym_not(0), lib.sym_ite(True, 1, 2), lib.sym_ite(False, 1, 2)])
add("sym_sqrt_sum", lambda lib: [lib.sym_sqrt(4), lib.sym_sqrt(2.25), lib.sym_sum([1, 2, 3]), lib.sym_sum((0.5, 2))])
add("constrain_ok", lambda lib: [lib.sym_constrain_range(2, min=0, max=3), lib.sym_constrain_range(-5, max=3),
                                 lib.sym_constrain_range_for_size(0), lib.sym_constrain_range(2.5, max=3),
                                 lib.sym_fresh_size(3)])
add("constrain_above", lambda lib: lib.sym_constrain_range(5, max=3))
add("constrain_tensor", lambda lib: lib.sym_constrain_range(lib.tensor(5), min=0, max=3))
add("constrain_tensor_dims", lambda lib: lib.sym_constrain_range(lib.tensor([5, 1]), max=3))
add("constrain_for_size_negative", lambda lib: lib.sym_constrain_range_for_size(-1))
add("constrain_for_size_min", lambda lib: lib.sym_constrain_range_for_size(1, min=2))
add("cond_tensor_true", lambda lib: lib.cond(lib.tensor(True), lambda x: x + 1, lambda x: x - 1, (a(lib),)))
add("cond_bool_false", lambda lib: lib.cond(False, lambda x, y: x * y, lambda x, y: x - y, [a(lib), sq(lib)[:3]]))
add("cond_tensor_pred_many", lambda lib: lib.cond(lib.tensor([True, False]), lambda x: x, lambda x: x, (a(lib),)))
add("while_loop", lambda lib: lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                                             (lib.tensor(0), a(lib))))
add("while_loop_never", lambda lib: lib.while_loop(lambda x: x.sum() > 1e9, lambda x: (x + 1,), (a(lib),)))
add("empty_permuted", lambda lib: [tuple(lib.empty_permuted((2, 3, 4), (2, 0, 1)).stride()),
                                   lib.empty_permuted((2, 3, 4), (0, 2, 1), dtype=lib.float64).dtype,
                                   lib.empty_permuted((2, 3), (1, 0), requires_grad=True).requires_grad,
                                   tuple(lib.empty_permuted((2, 3, 4), (2, 0, 1)).shape)])
add("empty_permuted_duplicate", lambda lib: lib.empty_permuted((2, 3), (0, 0)))
add("empty_permuted_length", lambda lib: lib.empty_permuted((2, 3), (0,)))
add("norm_except_dim_0", lambda lib: lib.norm_except_dim(sq(lib)))
add("norm_except_dim_1_p3", lambda lib: lib.norm_except_dim(a(lib), 3, 1))
add("norm_except_dim_all", lambda lib: lib.norm_except_dim(a(lib), 2, -1))
add("norm_except_dim_middle", lambda lib: lib.norm_except_dim(lib.ones(2, 3, 4), 1, 1))
add("norm_except_dim_1d", lambda lib: lib.norm_except_dim(lib.tensor([-3.0, 4.0]), 2, 0))
add("norm_except_dim_float_pow", lambda lib: lib.norm_except_dim(a(lib), 1.5, 0))
add("is_vulkan_available", lambda lib: lib.is_vulkan_available())
add("init_num_threads", lambda lib: lib.init_num_threads())
add("thread_safe_generator", lambda lib: [lib.thread_safe_generator(), lib.random.thread_safe_generator()])
add("device_module_cpu", lambda lib: lib.get_device_module("cpu").__name__.split(".")[-1])
add("device_module_cuda", lambda lib: lib.get_device_module(lib.device("cuda", 1)).__name__.split(".")[-1])
add("device_module_bad", lambda lib: lib.get_device_module(3))
add("device_flags", lambda lib: [getattr(a(lib), f) for f in ("is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia",
                                                              "is_vulkan", "is_xla")])
add("volatile", lambda lib: a(lib).volatile)
add("dequantize_plain", lambda lib: [a(lib).dequantize(), lib.ones(2, dtype=lib.float64).dequantize(),
                                     i(lib).dequantize(), lib.dequantize(i(lib)), lib.dequantize(bo(lib))])
add("dequantize_self", lambda lib: (lambda x: x.dequantize() is x)(a(lib)))
add("module_load", lambda lib: (lambda p, o: [p.module_load(o), p.module_load(o, assign=True), p])(
    lib.nn.Parameter(a(lib)), b(lib)))
add("module_load_new_object", lambda lib: (lambda p, o: [p.module_load(o) is p, p.module_load(o, True) is o])(
    lib.nn.Parameter(a(lib)), b(lib)))
add("is_set_to", lambda lib: (lambda x: [x.is_set_to(x), x.is_set_to(x[:]), x.is_set_to(x.view(3, 4)),
                                         x.is_set_to(x.clone()), x[1:].is_set_to(x[:2]), x.is_set_to(x.t()),
                                         lib.empty(0).is_set_to(lib.empty(0))])(a(lib)))
add("nll_loss_2d", lambda lib: lib.nn.NLLLoss2d(ignore_index=1)(lib.log_softmax(lib.ones(2, 3, 2, 2), 1),
                                                              lib.tensor([[[0, 1], [2, 0]], [[1, 1], [2, 2]]])))
add("factory_kwargs", lambda lib: lib.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": lib.float64}}))
add("factory_kwargs_none", lambda lib: lib.nn.factory_kwargs(None))
add("factory_kwargs_twice", lambda lib: lib.nn.factory_kwargs({"dtype": lib.float64,
                                                               "factory_kwargs": {"dtype": lib.float64}}))
add("has_torch_function", lambda lib: [lib.nn.functional.has_torch_function_unary(a(lib)),
                                       lib.nn.functional.has_torch_function_variadic(a(lib), 1),
                                       lib.nn.functional.has_torch_function((a(lib), a(lib)))])


@pytest.mark.parametrize("fn", cases)
def test_against_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_call(fn)


def test_norm_except_dim_gradients():
    x = np.random.default_rng(2).standard_normal((3, 4, 2))
    for dim, p in ((0, 2), (1, 3), (2, 1), (-1, 2)):
        same_as_torch(lambda lib, t: lib.norm_except_dim(t, p, dim), [x], layout="transposed")
    want = np.sqrt((x ** 2).sum(axis=(0, 2))).reshape(1, 4, 1)
    np.testing.assert_allclose(minitorch.norm_except_dim(minitorch.tensor(x), 2, 1).numpy(), want, rtol=1e-12)


def test_eager_control_flow_keeps_autograd():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    y = minitorch.cond(x.sum() > 0, lambda t: t * 3, lambda t: t, (x,))
    (_, z) = minitorch.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t * t), (0, y))
    z.sum().backward()
    # z = (3x)^4, dz/dx = 4 * 81 x^3
    np.testing.assert_allclose(x.grad.numpy(), 4 * 81 * np.array([1.0, 8.0]))
    assert minitorch.sym_int(-2.5) == -2 and isinstance(minitorch.sym_float(2), float)
    assert math.isclose(minitorch.sym_sqrt(minitorch.tensor(4.0)), 2.0)


def test_warnings_and_modules():
    with pytest.warns(UserWarning, match=r"^volatile was removed \(Variable.volatile is always False\)$"):
        assert minitorch.ones(1).volatile is False
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = minitorch.nn.NLLLoss2d()
    assert isinstance(loss, minitorch.nn.NLLLoss)
    assert minitorch.nn.functional.grad is minitorch.nn.grad and minitorch.nn.functional.grad.conv2d_input
    assert minitorch.nn.common_types.__name__ == "minitorch.nn.common_types"
    assert minitorch.get_device_module() in (minitorch.cpu, minitorch.cuda)
    assert minitorch.get_device_module("cuda:0") is minitorch.cuda
    with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding module"):
        minitorch.get_device_module("meta")
    with pytest.raises(TypeError, match="unexpected kwargs"):
        minitorch.nn.factory_kwargs({"bias": True})
