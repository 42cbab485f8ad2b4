"""minitorch.library, as torch.library: ops defined from Python (custom_op and the Library API),
their kernels, fake kernels and gradients, opcheck, minitorch.ops, the profiler's events for them,
and Python kernels that replace a built-in op's kernel in the C dispatcher. Each form runs in
minitorch and, where installed, PyTorch, with the same values, gradients and exception classes."""
import gc
import itertools
import warnings
from typing import List, Optional, Sequence

import numpy as np
import pytest

import minitorch
from helpers import check, check_grad

try:
    import torch
except ImportError:
    torch = None

LIBS = [minitorch] + ([torch] if torch is not None else [])
_names = itertools.count()
rng = np.random.default_rng(0)


def as_numpy(t) -> np.ndarray:
    """A minitorch or PyTorch tensor's values."""
    return np.array(t.detach().cpu().tolist())


def fresh_ns() -> str:
    """A namespace no earlier test used (registrations are process-wide, in PyTorch too)."""
    return f"mt_lib_test{next(_names)}"


@pytest.fixture(params=LIBS, ids=lambda lib: lib.__name__)
def lib(request):
    return request.param


def make_mymul(lib, ns: str):
    """mymul(x, y, *, scale=1.0) = x * y * scale with its gradient (reduced to each input's shape,
    so broadcast inputs work) and its fake kernel: the op the tests below share."""
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{ns}::mymul", mutates_args=())
    def mymul(x: Tensor, y: Tensor, *, scale: float = 1.0) -> Tensor:
        return x * y * scale

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.scale = keyword_only_inputs["scale"]

    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx = (grad * y * ctx.scale).sum_to_size(x.shape) if ctx.needs_input_grad[0] else None
        gy = (grad * x * ctx.scale).sum_to_size(y.shape) if ctx.needs_input_grad[1] else None
        return gx, gy

    mymul.register_autograd(backward, setup_context=setup_context)

    @mymul.register_fake
    def _(x, y, *, scale=1.0):
        return lib.empty(lib.broadcast_shapes(x.shape, y.shape), dtype=lib.promote_types(x.dtype, y.dtype))

    return mymul


MYMUL = {lib: make_mymul(lib, "mt_lib_shared") for lib in LIBS}


# ---- custom_op: values, gradients, minitorch.ops, opcheck ----

@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((0, 4), (1, 4))])
def test_custom_op_values_against_numpy_and_torch(shapes, layout):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    check(lambda lib, x, y: MYMUL[lib](x, y, scale=2.0), lambda x, y: x * y * 2.0, arrays, layout=layout)
    check(lambda lib, x, y: lib.ops.mt_lib_shared.mymul(x, y), lambda x, y: x * y, arrays, layout=layout)
    check(lambda lib, x, y: lib.ops.mt_lib_shared.mymul.default(x, y, scale=-1.0), lambda x, y: -x * y, arrays)


def test_custom_op_nan_and_inf_pass_through():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32)
    check(lambda lib, a, b: MYMUL[lib](a, b), lambda a, b: a * b, [x, x[::-1].copy()])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3), (3,))])
def test_custom_op_gradients(shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    check_grad(lambda lib, x, y: MYMUL[lib](x, y, scale=3.0), arrays)
    check_grad(lambda lib, x, y: MYMUL[lib](x, y), arrays, layout="transposed")


def test_custom_op_grad_fn_and_schema(lib):
    x = lib.ones(2, requires_grad=True)
    out = MYMUL[lib](x, x)
    assert type(out.grad_fn).__name__ == "GeneratedBackwardFor_mt_lib_shared_mymul_defaultBackward"
    assert str(MYMUL[lib]._opoverload._schema) == \
        "mt_lib_shared::mymul(Tensor x, Tensor y, *, float scale=1.) -> Tensor"
    assert repr(MYMUL[lib]) == "<CustomOpDef(mt_lib_shared::mymul)>"
    assert lib.ops.mt_lib_shared.mymul.overloads() == ["default"]


def test_opcheck_passes_for_a_well_registered_op(lib):
    x = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    got = lib.library.opcheck(MYMUL[lib], (x, x.detach()), {"scale": 2.0})
    assert got == {k: "SUCCESS" for k in
                   ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")}


def test_opcheck_finds_undeclared_mutation_and_missing_fake(lib):
    ns = fresh_ns()

    @lib.library.custom_op(f"{ns}::sneaky", mutates_args=())
    def sneaky(x: lib.Tensor) -> lib.Tensor:
        x.add_(1)
        return x.clone()

    res = lib.library.opcheck(sneaky, (lib.ones(2),), raise_exception=False)
    assert str(res["test_schema"]) == "Argument x is not defined as mutable but was mutated"
    assert isinstance(res["test_faketensor"], RuntimeError)
    assert "There was no fake impl registered for <CustomOpDef" in str(res["test_faketensor"])
    assert res["test_autograd_registration"] == "SUCCESS"
    with pytest.raises(Exception, match="test_schema failed with Argument x is not defined as mutable") as e:
        lib.library.opcheck(sneaky, (lib.ones(2),))
    assert type(e.value).__name__ == "OpCheckError"


def test_opcheck_finds_a_fake_with_the_wrong_shape_or_layout(lib):
    ns = fresh_ns()

    @lib.library.custom_op(f"{ns}::grow", mutates_args=())
    def grow(x: lib.Tensor) -> lib.Tensor:
        return x.repeat(2, 1)

    grow.register_fake(lambda x: lib.empty_like(x))
    res = lib.library.opcheck(grow, (lib.ones(2, 3),), raise_exception=False)
    assert isinstance(res["test_faketensor"], RuntimeError)
    # the right shape in another layout; a second registration replaces the first
    grow.register_fake(lambda x: x.new_empty(x.shape[1], 2 * x.shape[0]).t())
    res = lib.library.opcheck(grow, (lib.ones(2, 3),), raise_exception=False)
    assert "found mismatched tensor metadata: Stride mismatch! Strides are (3, 1) and (1, 4)" in str(res["test_faketensor"])
    grow.register_fake(lambda x: x.new_empty(2 * x.shape[0], x.shape[1]))
    assert lib.library.opcheck(grow, (lib.ones(2, 3),), test_utils="test_faketensor") == {"test_faketensor": "SUCCESS"}


def test_mutating_op_with_declared_mutation(lib):
    ns = fresh_ns()

    @lib.library.custom_op(f"{ns}::bump", mutates_args={"x"})
    def bump(x: lib.Tensor, n: int) -> None:
        x.add_(n)

    t = lib.zeros(3)
    assert bump(t, 2) is None
    np.testing.assert_array_equal(as_numpy(t), [2, 2, 2])
    assert str(bump._opoverload._schema).endswith("::bump(Tensor(a0!) x, SymInt n) -> ()")
    assert all(v == "SUCCESS" for v in lib.library.opcheck(bump, (lib.zeros(3), 1)).values())


def test_numpy_kernel_and_register_kernel(lib):
    """The tutorial's form: a kernel through NumPy, and a device kernel that replaces the default."""
    ns = fresh_ns()

    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=(), device_types="cpu")
    def numpy_sin(x: lib.Tensor) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.numpy()))

    x = rng.standard_normal(5).astype(np.float32)
    np.testing.assert_allclose(as_numpy(numpy_sin(lib.tensor(x))), np.sin(x), rtol=1e-6)
    numpy_sin.register_kernel("cpu")(lambda x: lib.from_numpy(np.cos(x.numpy())))
    np.testing.assert_allclose(as_numpy(getattr(lib.ops, ns).numpy_sin(lib.tensor(x))), np.cos(x), rtol=1e-6)


def test_register_autograd_by_name_and_setup_context_without_keywords(lib):
    ns = fresh_ns()

    @lib.library.custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: lib.Tensor) -> lib.Tensor:
        return x * x * x

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    lib.library.register_autograd(f"{ns}::cube", lambda ctx, g: 3 * g * ctx.saved_tensors[0] ** 2, setup_context=setup)
    x = lib.tensor(rng.standard_normal(4), requires_grad=True)
    assert lib.autograd.gradcheck(cube, (x,))


def make_tutorial_ops(lib, ns: str):
    """The ops of PyTorch's "Custom Python Operators" tutorial: crop (a kernel outside the
    library's ops, its fake kernel, its gradient) and numpy_sin (a mutating op whose kernel
    writes through NumPy)."""
    @lib.library.custom_op(f"{ns}::crop", mutates_args=())
    def crop(pic: lib.Tensor, box: Sequence[int]) -> lib.Tensor:
        x0, y0, x1, y1 = box
        return lib.from_numpy(np.ascontiguousarray(pic.numpy()[..., y0:y1, x0:x1]))

    @crop.register_fake
    def _(pic, box):
        x0, y0, x1, y1 = box
        return pic.new_empty(pic.shape[0], y1 - y0, x1 - x0)  # the kernel's layout: opcheck compares strides

    def setup_context(ctx, inputs, output):
        ctx.pic_shape = inputs[0].shape
        ctx.box = inputs[1]

    def backward(ctx, grad_output):
        grad_input = grad_output.new_zeros(ctx.pic_shape)
        grad_input[..., ctx.box[1]:ctx.box[3], ctx.box[0]:ctx.box[2]] = grad_output
        return grad_input, None

    crop.register_autograd(backward, setup_context=setup_context)

    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args={"output"}, device_types="cpu")
    def numpy_sin(input: lib.Tensor, output: lib.Tensor) -> None:
        np.sin(input.numpy(), out=output.numpy())

    return crop, numpy_sin


def test_the_custom_python_operators_tutorial(lib):
    crop, numpy_sin = make_tutorial_ops(lib, fresh_ns())
    pic = rng.random((3, 8, 10))
    got = crop(lib.tensor(pic), (2, 1, 7, 5))
    np.testing.assert_array_equal(as_numpy(got), pic[:, 1:5, 2:7])
    for example in ([lib.tensor(pic), [0, 0, 4, 4]], [lib.tensor(pic, requires_grad=True), (1, 2, 9, 8)]):
        assert set(lib.library.opcheck(crop, example).values()) == {"SUCCESS"}
    x = lib.tensor(pic, requires_grad=True)
    assert lib.autograd.gradcheck(lambda t: crop(t, (2, 1, 7, 5)), (x,))
    inp, out = lib.tensor(pic[0]), lib.empty(8, 10, dtype=lib.float64)
    numpy_sin(inp, out)
    np.testing.assert_allclose(as_numpy(out), np.sin(pic[0]))
    assert set(lib.library.opcheck(numpy_sin, (inp, out)).values()) == {"SUCCESS"}
    compiled = lib.compile(lambda t: crop(t, (0, 0, 2, 2)).sum(), fullgraph=True)
    assert compiled(lib.tensor(pic)).item() == pytest.approx(pic[:, :2, :2].sum())


# ---- the Library API ----

def test_library_define_impl_and_composite_gradient(lib):
    ns = fresh_ns()
    L = lib.library.Library(ns, "DEF")
    assert L.define("twice(Tensor x, *, float by=2.0) -> Tensor") == "twice"
    L.impl("twice", lambda x, *, by: x * by, "CPU")
    L.define("sin2(Tensor x) -> Tensor")
    L.impl("sin2", lambda x: x.sin() * 2, "CompositeImplicitAutograd")
    ops = getattr(lib.ops, ns)
    x = rng.standard_normal((2, 3))
    np.testing.assert_allclose(as_numpy(ops.twice(lib.tensor(x), by=3.0)), 3 * x)
    t = lib.tensor(x, requires_grad=True)
    ops.sin2(t).sum().backward()
    np.testing.assert_allclose(as_numpy(t.grad), 2 * np.cos(x), rtol=1e-6)  # through the decomposition
    L._destroy()
    with pytest.raises(AttributeError, match="object has no attribute 'twice'"):
        ops.twice
    with pytest.raises(AssertionError, match="Library object has been destroyed"):
        L.impl("twice", lambda x, *, by: x, "CPU")


def test_library_autograd_key_and_register_autograd_on_a_defined_op(lib):
    ns = fresh_ns()
    L = lib.library.Library(ns, "FRAGMENT")
    L.define("square(Tensor x) -> Tensor")
    L.impl("square", lambda x: x * x, "CPU")

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    lib.library.register_autograd(f"{ns}::square", lambda ctx, g: 2 * g * ctx.saved_tensors[0],
                                  setup_context=setup, lib=L)
    x = lib.tensor(rng.standard_normal(3), requires_grad=True)
    assert lib.autograd.gradcheck(getattr(lib.ops, ns).square, (x,))
    L._destroy()


def test_define_and_impl_functions(lib):
    ns = fresh_ns()
    lib.library.define(f"{ns}::plus", "(Tensor x, SymInt n) -> Tensor")

    @lib.library.impl(f"{ns}::plus", "cpu")
    def plus(x, n):
        return x + n

    assert as_numpy(getattr(lib.ops, ns).plus(lib.zeros(2), 5)).tolist() == [5, 5]
    L = lib.library.Library(fresh_ns(), "DEF")
    L.define("minus(Tensor x) -> Tensor")

    @lib.library.impl(L, "minus", "CPU")
    def minus(x):
        return -x

    assert as_numpy(getattr(lib.ops, L.ns).minus(lib.ones(2))).tolist() == [-1, -1]
    L._destroy()


def test_overloads(lib):
    ns = fresh_ns()
    L = lib.library.Library(ns, "DEF")
    L.define("f(Tensor x) -> Tensor")
    L.define("f.scaled(Tensor x, float s) -> Tensor")
    L.impl("f", lambda x: x + 1, "CPU")
    L.impl("f.scaled", lambda x, s: x * s, "CPU")
    f = getattr(lib.ops, ns).f
    assert sorted(f.overloads()) == ["default", "scaled"]
    assert as_numpy(f.scaled(lib.ones(1), 4.0)).tolist() == [4]
    assert as_numpy(f.default(lib.ones(1))).tolist() == [2]
    assert as_numpy(f(lib.ones(1), 3.0)).tolist() == [3]  # the overload whose schema fits
    L._destroy()


# ---- Python kernels for built-in ops ----

def warns_override(lib):
    """minitorch warns at each override; PyTorch once a process ("Warning only once for all
    operators"), so only minitorch's is checked."""
    if lib is minitorch:
        return pytest.warns(UserWarning, match="Overriding a previously registered kernel")
    return warnings.catch_warnings(action="ignore")


def _override(lib, name, fn, key="CPU"):
    L = lib.library.Library("aten", "IMPL")
    with warns_override(lib):
        L.impl(name, fn, key)
    return L


def test_builtin_override_reaches_every_front(lib):
    calls = []

    def my_relu(x):
        calls.append(tuple(x.shape))
        return x * 2

    L = _override(lib, "relu", my_relu)
    x = lib.tensor([-1.0, 2.0])
    for fn in (lib.relu, lib.nn.functional.relu, lambda t: t.relu(), lib.ops.aten.relu, lib.ops.aten.relu.default):
        assert as_numpy(fn(x)).tolist() == [-2, 4]
    assert len(calls) == 5
    # the built-in gradient formula stays (PyTorch keeps its ReluBackward0 too)
    t = lib.tensor([-1.0, 2.0], requires_grad=True)
    lib.relu(t).sum().backward()
    assert as_numpy(t.grad).tolist() == [0, 1]
    L._destroy()
    assert as_numpy(lib.relu(x)).tolist() == [0, 2]


def test_ops_aten(lib):
    x = lib.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert as_numpy(lib.ops.aten.add.Tensor(x, x, alpha=2)).tolist() == [[3, -6], [9, 1.5]]
    values, indices = lib.ops.aten.max.dim(x, 1)
    assert as_numpy(values).tolist() == [1, 3] and as_numpy(indices).tolist() == [0, 0]
    assert str(lib.ops.aten.relu.default._schema) == "aten::relu(Tensor self) -> Tensor"
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'no_such_op'"):
        lib.ops.aten.no_such_op


def test_builtin_override_is_undone_when_the_library_goes(lib):
    L = _override(lib, "neg", lambda x: x + 100)
    assert as_numpy(-lib.ones(1)).tolist() == [101]
    del L
    gc.collect()
    assert as_numpy(-lib.ones(1)).tolist() == [-1]


def test_stacked_overrides_come_back_in_order():
    L1 = _override(minitorch, "exp", lambda x: x + 1)
    L2 = _override(minitorch, "exp", lambda x: x + 2)
    one = minitorch.zeros(1)
    assert minitorch.exp(one).item() == 2
    L2._destroy()
    assert minitorch.exp(one).item() == 1
    L3 = _override(minitorch, "exp", lambda x: x + 3)
    L1._destroy()  # a lower registration goes; the top stays
    assert minitorch.exp(one).item() == 3
    L3._destroy()
    assert minitorch.exp(one).item() == 1.0


def test_builtin_override_gets_arguments_as_pytorch_passes_them(lib):
    """Arguments equal to their defaults are left out (keyword-only ones, and trailing positional
    ones); the others come as the schema has them."""
    seen = []

    def my_add(*args, **kwargs):
        seen.append(([type(a).__name__ for a in args], kwargs))
        return lib.sub(args[0], args[1])

    L = _override(lib, "add.Tensor", my_add)
    assert as_numpy(lib.ones(2) + lib.ones(2)).tolist() == [0, 0]
    lib.add(lib.ones(2), lib.ones(2), alpha=3)
    assert seen == [(["Tensor", "Tensor"], {}), (["Tensor", "Tensor"], {"alpha": 3})]
    L._destroy()
    assert as_numpy(lib.ones(2) + lib.ones(2)).tolist() == [2, 2]
    got = []
    L = _override(lib, "max.dim", lambda *a, **k: got.append((len(a), k)) or (a[0].sum(a[1]), a[0].argmin(a[1])))
    lib.max(lib.ones(2, 2), 1)
    lib.max(lib.ones(2, 2), 1, keepdim=True)
    assert got == [(2, {}), (3, {})]
    L._destroy()


def test_builtin_override_with_several_results(lib):
    L = _override(lib, "max.dim", lambda x, dim, keepdim=False: (x.sum(dim, keepdim), x.argmin(dim, keepdim)))
    got = lib.max(lib.tensor([[1.0, 5.0], [3.0, 2.0]]), 1)
    assert as_numpy(got.values).tolist() == [6, 5] and as_numpy(got.indices).tolist() == [0, 1]
    L._destroy()
    assert as_numpy(lib.max(lib.tensor([[1.0, 5.0]]), 1).values).tolist() == [5]


def test_builtin_override_list_arguments(lib):
    """Tensor[] and int[] arguments come as lists, as in PyTorch."""
    got = []

    def record(*args, **kwargs):
        got.append(([type(a).__name__ for a in args], [a for a in args if isinstance(a, list) and
                                                         all(isinstance(i, int) for i in a)], kwargs))
        return args[0][0].clone() if isinstance(args[0], list) else args[0].clone()

    L = lib.library.Library("aten", "IMPL")
    with warnings.catch_warnings(action="ignore"):
        L.impl("cat", record, "CPU")
        L.impl("permute", record, "CPU")
    lib.cat([lib.ones(1), lib.zeros(1)])
    lib.cat([lib.ones(1), lib.zeros(1)], 0)
    lib.ones(2, 3).permute(1, 0)
    L._destroy()
    assert got == [(["list"], [], {}), (["list"], [], {}), (["Tensor", "list"], [[1, 0]], {})]
    assert lib.cat([lib.ones(1), lib.zeros(1)]).shape == (2,)


def test_builtin_override_gets_the_generator_object():
    """A Generator argument comes as a Generator sharing the caller's state."""
    seen = []

    def my_rand(size, *, generator=None, **kwargs):
        seen.append(generator)
        return minitorch.zeros(size)

    L = _override(minitorch, "rand", my_rand)
    g = minitorch.Generator().manual_seed(3)
    minitorch.rand(2, generator=g)
    minitorch.rand(2)
    L._destroy()
    assert isinstance(seen[0], minitorch.Generator) and seen[0].initial_seed() == 3 and seen[1] is None
    assert minitorch.rand(2, generator=seen[0]).tolist() == minitorch.rand(2, generator=g.manual_seed(3)).tolist()


def test_builtin_override_errors_propagate():
    def bad(x):
        raise KeyError("from the kernel")

    L = _override(minitorch, "sigmoid", bad)
    with pytest.raises(KeyError, match="from the kernel"):
        minitorch.sigmoid(minitorch.ones(1))
    L._destroy()
    L = _override(minitorch, "sigmoid", lambda x: 3)
    with pytest.raises(TypeError, match="sigmoid: a Python kernel returned int where a Tensor was expected"):
        minitorch.sigmoid(minitorch.ones(1))
    L._destroy()
    assert minitorch.sigmoid(minitorch.zeros(1)).item() == 0.5


def test_builtin_override_returning_its_input_makes_no_cycle():
    L = _override(minitorch, "tanh", lambda x: x)
    x = minitorch.ones(2, requires_grad=True)
    y = minitorch.tanh(x)
    assert y is not x and x.grad_fn is None and y.grad_fn is not None
    L._destroy()


def test_profiler_shows_custom_and_overridden_ops():
    L = _override(minitorch, "relu", lambda x: x.abs())
    x = minitorch.ones(2)
    with minitorch.profiler.profile() as prof:
        MYMUL[minitorch](x, x)
        minitorch.relu(x)
    names = [(e.name, e.detail, e.depth) for e in prof.events()]
    assert ("Op::mt_lib_shared::mymul", "CPU", 0) in names
    assert ("Op::relu", "CPU", 0) in names and ("Kernel::python_kernel", "CPU", 1) in names
    assert ("Op::abs", "CPU", 2) in names  # what the Python kernel ran, inside
    assert "Op::mt_lib_shared::mymul" in [e.key for e in prof.key_averages()]
    L._destroy()


# ---- errors, as PyTorch raises them ----

@pytest.mark.parametrize("schema", ["f(Tensor x -> Tensor", "f(Tens x) -> Tensor", "f(Tensor x)", "f(Tensor) -> Tensor",
                                    "f(Tensor x) -> Tensor y z"])
def test_bad_schemas(lib, schema):
    L = lib.library.Library(fresh_ns(), "FRAGMENT")
    with pytest.raises(RuntimeError, match=r"(expected|unknown type specifier).*\n"):
        L.define(schema)


def test_registration_errors(lib):
    ns = fresh_ns()
    L = lib.library.Library(ns, "DEF")
    L.define("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=r"Tried to register an operator \(.*::g\(Tensor x\) -> Tensor\) with the same"):
        L.define("g(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match=f"Only a single TORCH_LIBRARY can be used to register the namespace {ns};"):
        lib.library.Library(ns, "DEF")
    with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY .* namespace aten;"):
        lib.library.Library("aten", "DEF")
    with pytest.raises(ValueError, match="Unsupported kind: FOO"):
        lib.library.Library(ns, "FOO")
    with pytest.raises(RuntimeError, match="could not parse dispatch key: BadKey"):
        L.impl("g", lambda x: x, "BadKey")
    with pytest.raises(RuntimeError, match="Cannot define an operator inside of a TORCH_LIBRARY_IMPL block"):
        lib.library.Library(ns, "IMPL").define("h(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::g' with arguments from the 'CPU' backend"):
        getattr(lib.ops, ns).g(lib.ones(1))
    with pytest.raises(AttributeError, match=f"'_OpNamespace' '{ns}' object has no attribute 'nope'"):
        getattr(lib.ops, ns).nope
    with pytest.raises(RuntimeError, match=f"operator {ns}::nope does not exist"):
        lib.library.register_fake(f"{ns}::nope")(lambda x: x)
    L.impl("g", lambda x: x + 1, "CPU")
    with warns_override(lib):
        L.impl("g", lambda x: x + 2, "CPU")
    with pytest.raises(RuntimeError, match="there's already a kernel registered from python overriding g's behavior"):
        L.impl("g", lambda x: x + 3, "CPU", allow_override=False)
    assert as_numpy(getattr(lib.ops, ns).g(lib.zeros(1))).tolist() == [2]
    L._destroy()


def test_call_errors(lib):
    op = lib.ops.mt_lib_shared.mymul
    with pytest.raises(RuntimeError, match=r"mymul\(\) (expected at most|takes) 2 .*argument\(s\) but .*3"):
        op(lib.ones(1), lib.ones(1), lib.ones(1))
    with pytest.raises(RuntimeError, match=r"mymul\(\) is missing value for argument 'y'"):
        op(lib.ones(1))
    with pytest.raises(RuntimeError, match=r"Expected a value of type 'Tensor' for argument 'y' but instead found type 'int'"):
        op(lib.ones(1), 3)
    with pytest.raises(RuntimeError, match="but no autograd formula was registered"):
        ns = fresh_ns()
        plain = lib.library.custom_op(f"{ns}::plain", mutates_args=())(_plain_kernel(lib))
        plain(lib.ones(2, requires_grad=True)).sum().backward()


def _plain_kernel(lib):
    def plain(x: lib.Tensor) -> lib.Tensor:
        return x * 2

    return plain


def test_custom_op_definition_errors(lib):
    with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
        lib.library.custom_op(f"{fresh_ns()}::f", lambda x: x, mutates_args=())
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'mutates_args'"):
        lib.library.custom_op(f"{fresh_ns()}::f")
    with pytest.raises(ValueError):
        lib.library.custom_op("no_namespace", mutates_args=())(_plain_kernel(lib))
    with pytest.raises(RuntimeError, match="device type at start of device string: tpu"):
        MYMUL[lib].register_kernel("tpu")(lambda x, y, *, scale: x)

    @lib.library.custom_op(f"{fresh_ns()}::same", mutates_args=())
    def same(x: lib.Tensor) -> lib.Tensor:
        return x

    with pytest.raises(RuntimeError, match=r"must not also be an input to this custom operator"):
        same(lib.ones(1))


def test_infer_schema_matches_torch(lib):
    T = lib.Tensor

    def f(x: T, y: List[int], z: float = 1.0, w: bool = False, s: str = "a", o: Optional[T] = None,
          n: Optional[int] = None) -> tuple:
        ...

    f.__annotations__["return"] = tuple[T, T]

    def g(x: T, xs: List[T]) -> List[T]:
        ...

    def h(x: T, *, k: int = 3) -> None:
        ...

    infer = lib.library.infer_schema
    assert infer(f, mutates_args=()) == ('(Tensor x, SymInt[] y, float z=1.0, bool w=False, str s="a", '
                                         'Tensor? o=None, SymInt? n=None) -> (Tensor, Tensor)')
    assert infer(g, mutates_args=()) == "(Tensor x, Tensor[] xs) -> Tensor[]"
    assert infer(h, mutates_args={"x"}) == "(Tensor(a0!) x, *, SymInt k=3) -> ()"
    with pytest.raises(ValueError, match="in mutates_args were not found"):
        infer(h, mutates_args={"q"})


def test_overhead_hook_is_off_for_ops_without_python_kernels():
    """An op whose Python kernel went keeps no trace of it: the C slot is cleared."""
    L = _override(minitorch, "abs", lambda x: x)
    L._destroy()
    with minitorch.profiler.profile() as prof:
        minitorch.abs(minitorch.ones(1))
    assert "Kernel::python_kernel" not in [e.name for e in prof.events()]
    assert "Kernel::mt_cpu_abs" in [e.name for e in prof.events()]
