"""Two pytorch.org tutorials built on function transforms and compilation. "Neural Tangent
Kernels": a CNN (conv1..conv3 with x.relu(), x.flatten(1), fc), params detached from
named_parameters, fnet_single through functional_call(net, params, (x.unsqueeze(0),)).squeeze(0),
the NTK by Jacobian contraction (vmap(jacrev(fnet_single), (None, 0)), .values(), flatten(2),
einsum 'Naf,Mbf->NMab' stacked and summed; 'trace' and 'diagonal' modes) and by NTK-vector
products (vjp of func_x1, jvp of func_x2 over the vjps, vmap over an eye basis, a vmap of a vmap),
the two methods checked equal with torch.allclose as the page does. "Introduction to
torch.compile": foo(sin + cos) by torch.compile(foo) and as @torch.compile, MyModule (Linear +
relu) by mod.compile() and torch.compile(mod), nested functions and an OuterModule,
torch.compiler.disable(recursive=False), a graph-breaking bar with torch.compile(bar) and
fullgraph=False, mode="reduce-overhead", backend="eager", torch.fx.symbolic_trace refusing
data-dependent control flow, torch._dynamo.reset / config / mark_dynamic; the Inductor CPU backend
tutorial's torch._inductor.config switches (cpp.enable_kernel_profile, freezing) around a compiled
module's inference, profiled; a training step as a compiled function
(opt.zero_grad(True), CrossEntropyLoss, backward, step), the compiled and eager models agreeing."""
import importlib
import warnings

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def neural_tangent_kernels(torch, init=None):
    nn = torch.nn
    functional_call, vmap, vjp, jvp, jacrev = (torch.func.functional_call, torch.func.vmap, torch.func.vjp,
                                               torch.func.jvp, torch.func.jacrev)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, (3, 3))
            self.conv2 = nn.Conv2d(4, 4, (3, 3))
            self.conv3 = nn.Conv2d(4, 4, (3, 3))
            self.fc = nn.Linear(16, 3)

        def forward(self, x):
            x = self.conv1(x)
            x = x.relu()
            x = self.conv2(x)
            x = x.relu()
            x = self.conv3(x)
            x = x.flatten(1)
            x = self.fc(x)
            return x

    rng = np.random.default_rng(0)
    x_train = torch.tensor(rng.standard_normal((5, 3, 8, 8)), dtype=torch.float32)
    x_test = torch.tensor(rng.standard_normal((3, 3, 8, 8)), dtype=torch.float32)
    torch.manual_seed(0)
    net = CNN()
    result = {}
    start_from(torch, net, init, result)

    # Detaching the parameters because we won't be calling Tensor.backward().
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute='full'):
        # Compute J(x1)
        jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]

        # Compute J(x2)
        jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]

        # Compute J(x1) @ J(x2).T
        einsum_expr = None
        if compute == 'full':
            einsum_expr = 'Naf,Mbf->NMab'
        elif compute == 'trace':
            einsum_expr = 'Naf,Maf->NM'
        elif compute == 'diagonal':
            einsum_expr = 'Naf,Maf->NMa'
        else:
            assert False

        result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
        result = result.sum(0)
        return result

    def empirical_ntk_ntk_vps(func, params, x1, x2, compute='full'):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func(params, x1)

            def func_x2(params):
                return func(params, x2)

            output, vjp_fn = vjp(func_x1, params)

            def get_ntk_slice(vec):
                # This computes ``vec @ J(x2).T``
                # `vec` is some unit vector (a single slice of the Identity matrix)
                vjps = vjp_fn(vec)
                # This computes ``J(X1) @ vjps``
                _, jvps = jvp(func_x2, (params,), vjps)
                return jvps

            # Here's our identity matrix
            basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
            return vmap(get_ntk_slice)(basis)

        # ``get_ntk(x1, x2)`` computes the NTK for a single data point x1, x2
        # Since the x1, x2 inputs to ``empirical_ntk_ntk_vps`` are batched,
        # we actually wish to compute the NTK between every pair of data points
        # between {x1} and {x2}. That's what the ``vmaps`` here do.
        result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

        if compute == 'full':
            return result
        if compute == 'trace':
            return torch.einsum('NMKK->NM', result)
        if compute == 'diagonal':
            return torch.einsum('NMKK->NMK', result)

    for compute in ('full', 'trace', 'diagonal'):
        res1 = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, compute)
        res2 = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, compute)
        result[compute] = (numpy_of(res1), numpy_of(res2), tuple(res1.shape),
                           bool(torch.allclose(res1, res2, atol=1e-5)))
    return result


def test_neural_tangent_kernels():
    compare_program(neural_tangent_kernels, rtol=1e-4, atol=1e-5)


def compile_intro(torch, init=None, steps=3):
    nn = torch.nn
    rng = np.random.default_rng(1)

    def randn(*shape):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.float32)

    def foo(x, y):
        a = torch.sin(x)
        b = torch.cos(y)
        return a + b

    result = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt_foo1 = torch.compile(foo)
        t1, t2 = randn(10, 10), randn(10, 10)
        result["foo1"] = numpy_of(opt_foo1(t1, t2))

        @torch.compile
        def opt_foo2(x, y):
            a = torch.sin(x)
            b = torch.cos(y)
            return a + b

        result["foo2"] = numpy_of(opt_foo2(t1, t2))
        result["foo_eager_equal"] = bool(torch.allclose(foo(t1, t2), opt_foo2(t1, t2)))

        t = randn(10, 100)

        class MyModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(100, 10)

            def forward(self, x):
                return torch.nn.functional.relu(self.lin(x))

        torch.manual_seed(0)
        mod1 = MyModule()
        mod2 = MyModule()
        mod2.load_state_dict(mod1.state_dict())
        model = nn.Sequential(nn.Linear(100, 32), nn.ReLU(), nn.Linear(32, 4))
        start_from(torch, {"a": mod1, "b": mod2, "train": model}, init, result)
        mod1.compile()
        result["mod1"] = numpy_of(mod1(t))
        opt_mod2 = torch.compile(mod2)
        result["mod2"] = numpy_of(opt_mod2(t))
        result["mod2_keys"] = sorted(opt_mod2.state_dict().keys())

        def nested_function(x):
            return torch.sin(x)

        @torch.compile
        def outer_function(x, y):
            a = nested_function(x)
            b = torch.cos(y)
            return a + b

        result["outer"] = numpy_of(outer_function(t1, t2))

        class OuterModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner_module = MyModule()
                self.outer_lin = nn.Linear(10, 2)

            def forward(self, x):
                x = self.inner_module(x)
                return torch.nn.functional.relu(self.outer_lin(x))

        torch.manual_seed(1)
        outer_mod = OuterModule()
        outer_mod.inner_module.load_state_dict(mod1.state_dict())
        outer_mod.outer_lin.weight.data = torch.tensor(np.linspace(-1, 1, 20).reshape(2, 10), dtype=torch.float32)
        outer_mod.outer_lin.bias.data.fill_(0.1)
        outer_mod.compile()
        result["outer_mod"] = numpy_of(outer_mod(t))

        def complex_conjugate(z):
            return torch.conj(z)

        @torch.compiler.disable(recursive=False)
        def complex_function(real, imag):
            # Assuming this function cause problems in the compilation
            z = torch.complex(real, imag)
            return complex_conjugate(z)

        def outer_function2():
            real = torch.tensor([2, 3], dtype=torch.float32)
            imag = torch.tensor([4, 5], dtype=torch.float32)
            z = complex_function(real, imag)
            return torch.abs(z)

        result["disabled"] = numpy_of(torch.compile(outer_function2)())

        def bar(a, b):
            x = a / (torch.abs(a) + 1)
            if b.sum() < 0:
                b = b * -1
            return x * b

        opt_bar = torch.compile(bar)
        inp1, inp2 = randn(10), randn(10)
        result["bar"] = [numpy_of(opt_bar(inp1, inp2)), numpy_of(opt_bar(inp1, -inp2))]
        opt_bar_fullgraph = torch.compile(bar, fullgraph=False, dynamic=True, mode="reduce-overhead")
        result["bar_fg"] = numpy_of(opt_bar_fullgraph(inp1, inp2))
        result["bar_eager_backend"] = numpy_of(torch.compile(bar, backend="eager")(inp1, inp2))

        # Comparison to TorchScript and FX tracing: data-dependent control flow
        def f1(x, y):
            if x.sum() < 0:
                return -y
            return y

        def test_fns(fn1, fn2, args):
            out1 = fn1(*args)
            out2 = fn2(*args)
            return torch.allclose(out1, out2)

        inp1, inp2 = randn(5, 5), randn(5, 5)
        try:
            torch.fx.symbolic_trace(f1)
            result["fx_f1"] = "traced"
        except Exception as e:
            result["fx_f1"] = type(e).__name__
        compile_f1 = torch.compile(f1)
        result["compile_f1"] = [test_fns(f1, compile_f1, (inp1, inp2)), test_fns(f1, compile_f1, (-inp1, inp2))]
        torch._dynamo.reset()
        torch._dynamo.config.cache_size_limit = 16
        x_dyn = randn(6, 4)
        torch._dynamo.mark_dynamic(x_dyn, 0)
        result["dynamic"] = numpy_of(torch.compile(foo, dynamic=True)(x_dyn, x_dyn))
        torch._dynamo.reset()

        # The Inductor CPU backend tutorial's switches, then inference of a compiled module
        config = importlib.import_module(torch.__name__ + "._inductor.config")  # import torch._inductor.config as config
        config.cpp.enable_kernel_profile = True
        config.freezing = True
        try:
            frozen = torch.compile(MyModule().eval())
            frozen.load_state_dict(opt_mod2.state_dict())
            with torch.no_grad():
                result["inductor_cpu"] = numpy_of(frozen(t))
            with torch.profiler.profile() as p:
                with torch.no_grad():
                    frozen(t)
            result["inductor_profiled"] = len(p.key_averages()) > 0
        finally:
            config.cpp.enable_kernel_profile = False
            config.freezing = False

        # end-to-end: a training step compiled as a function
        opt = torch.optim.Adam(model.parameters())
        model = torch.compile(model)

        @torch.compile
        def train(mod, data):
            opt.zero_grad(True)
            pred = mod(data[0])
            loss = torch.nn.CrossEntropyLoss()(pred, data[1])
            loss.backward()
            opt.step()
            return loss

        losses = []
        for _ in range(steps):
            data = (randn(16, 100), torch.tensor(rng.integers(0, 4, 16)))
            losses.append(train(model, data).item())
        result["losses"] = losses
        model.eval()
        with torch.no_grad():
            result["eval"] = numpy_of(model(t))
    return result


def test_compile_intro():
    compare_program(compile_intro)


def compile_stance(torch, init=None):
    """The "Dynamic Compilation Control with torch.compiler.set_stance" recipe: a compiled foo
    that branches on torch.compiler.is_compiling(), set_stance("force_eager") as a decorator, a
    with-block and a call, back to "default"; "eager_on_recompile" around calls with new shapes
    (its "fail_on_recompile" lines are left out: minitorch compiles nothing, so never
    recompiles)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @torch.compile
        def foo(x):
            if torch.compiler.is_compiling():
                # torch.compile is active
                return x + 1
            else:
                # torch.compile is not active
                return x - 1

        inp = torch.zeros(3)
        printed = [foo(inp).tolist()]  # compiled, prints 1

        @torch.compiler.set_stance("force_eager")
        def bar(x):
            # force disable the compiler
            return foo(x)

        printed.append(bar(inp).tolist())  # not compiled, prints -1
        with torch.compiler.set_stance("force_eager"):
            printed.append(foo(inp).tolist())  # not compiled, prints -1
        torch.compiler.set_stance("force_eager")
        printed.append(foo(inp).tolist())  # not compiled, prints -1
        torch.compiler.set_stance("default")
        printed.append(foo(inp).tolist())  # compiled, prints 1

        @torch.compile
        def my_huge_model(x):
            return torch.relu(x) * 2 if torch.compiler.is_compiling() else torch.relu(x)

        rng = np.random.default_rng(7)
        first = torch.tensor(rng.standard_normal(3), dtype=torch.float32)
        printed.append(numpy_of(my_huge_model(first)))
        with torch.compiler.set_stance("eager_on_recompile"):
            printed.append(numpy_of(my_huge_model(first * 3)))  # same shape: the compiled code
    return {"printed": printed}


def test_compile_set_stance_recipe():
    compare_program(compile_stance)
