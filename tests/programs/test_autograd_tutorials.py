"""The advanced autograd tutorials: forward-mode AD (fwAD.dual_level, make_dual, unpack_dual with
.primal/.tangent, custom Functions with jvp and ctx.save_for_forward, a module's parameters made
dual through functional_call, torch.func.jvp and jacfwd against jacrev, gradcheck with
check_forward_ad); saved-tensor hooks (packing to a list of copies and unpacking by index, to
NumPy, to a registry standing for files, save_on_cpu around a model's forward,
grad_fn._saved_self/_saved_result/_saved_exponent and the error once the graph is freed); double
backward through custom Functions in the setup_context style, one saving an intermediate it
returns as an output (gradcheck and gradgradcheck in float64)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def forward_mode(torch, init=None):
    fwAD = torch.autograd.forward_ad
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    primal = torch.tensor(rng.standard_normal((10, 10)), dtype=torch.float32)
    tangent = torch.tensor(rng.standard_normal((10, 10)), dtype=torch.float32)

    def fn(x, y):
        return x ** 2 + y ** 2

    result = {}
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input, 1.0)
        jvp = fwAD.unpack_dual(dual_output).tangent
        p, t = fwAD.unpack_dual(dual_output)
        result.update(jvp=numpy_of(jvp), primal=numpy_of(p), unpacked_same=bool((t == jvp).all()),
                      outside_none=fwAD.unpack_dual(primal).tangent is None)
        sig = torch.sigmoid(dual_input) * F.softplus(dual_input).tanh()
        result["chain"] = numpy_of(fwAD.unpack_dual(sig).tangent)
    result["after_level_none"] = fwAD.unpack_dual(dual_output).tangent is None

    model = torch.nn.Linear(5, 5)
    result_init = {}
    start_from(torch, model, init["model"] if init else None, result_init)
    result["init"] = {"model": result_init.get("init")}
    x = torch.tensor(rng.standard_normal((16, 5)), dtype=torch.float32)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=torch.float32)
                for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(x)
        result["module_jvp"] = numpy_of(fwAD.unpack_dual(out).tangent)
    from_func = torch.func.functional_call
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
        out = from_func(model, dual_params, x)
        result["functional_jvp"] = numpy_of(fwAD.unpack_dual(out).tangent)

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            ctx.save_for_forward(a)
            ctx.k = k
            return a * k + a ** 2

        @staticmethod
        def jvp(ctx, ga, gk):
            (a,) = ctx.saved_tensors
            return ga * (ctx.k + 2 * a)

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("not used")

    small = torch.tensor(rng.standard_normal(6), dtype=torch.float64, requires_grad=True)
    small_t = torch.tensor(rng.standard_normal(6), dtype=torch.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(small, small_t)
        result["fn_jvp"] = numpy_of(fwAD.unpack_dual(Fn.apply(d)).tangent)
        result["scale_jvp"] = numpy_of(fwAD.unpack_dual(Scale.apply(d, 3.0)).tangent)
    result["gradcheck_fwd"] = torch.autograd.gradcheck(Fn.apply, (small,), check_forward_ad=True,
                                                       check_backward_ad=False, check_undefined_grad=False,
                                                       check_batched_grad=False)

    f = lambda v: (v.sin() * v.cos().exp()).sum(0)  # noqa: E731
    v = torch.tensor(rng.standard_normal((3, 4)), dtype=torch.float32)
    out, jvp_out = torch.func.jvp(f, (v,), (torch.ones_like(v),))
    result.update(func_jvp=numpy_of(jvp_out), func_out=numpy_of(out),
                  jacfwd=numpy_of(torch.func.jacfwd(f)(v)), jacrev=numpy_of(torch.func.jacrev(f)(v)))
    return result


def saved_tensor_hooks(torch, init=None):
    rng = np.random.default_rng(1)
    result = {}
    x = torch.tensor(rng.standard_normal(5), dtype=torch.float32, requires_grad=True)
    y = x.pow(2)
    result["saved_self_equal"] = bool((y.grad_fn._saved_self == x).all())
    result["saved_self_is_x"] = y.grad_fn._saved_self is x
    result["saved_exponent"] = y.grad_fn._saved_exponent
    e = x.exp()
    result["saved_result_equal"] = bool(e.equal(e.grad_fn._saved_result))

    storage = []

    def pack(t):
        storage.append(t.clone())
        return len(storage) - 1

    def unpack(idx):
        return storage[idx]

    a = torch.tensor(rng.standard_normal(5), dtype=torch.float32, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        b = a * a.sin()
    b.sum().backward()
    result.update(hooked_grad=numpy_of(a.grad), packed=len(storage) > 0)

    def pack_hook(t):
        return t.numpy().copy() if not t.requires_grad else t

    def unpack_hook(t):
        return torch.from_numpy(t) if isinstance(t, np.ndarray) else t

    w = torch.tensor(rng.standard_normal((4, 4)), dtype=torch.float32, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        z = (w @ w.t()).tanh().sum()
    z.backward()
    result["numpy_hooks_grad"] = numpy_of(w.grad)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    start_from(torch, model, init, result)
    inp = torch.tensor(rng.standard_normal((3, 6)), dtype=torch.float32)
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        loss = model(inp).pow(2).mean()
    loss.backward()
    result.update(save_on_cpu_grad=numpy_of(model[0].weight.grad), loss=loss.item())

    class SelfDeletingTempFile:
        registry = {}

        def __init__(self, name):
            self.name = name

    def pack_to_disk(t):
        f = SelfDeletingTempFile(f"t{len(SelfDeletingTempFile.registry)}")
        SelfDeletingTempFile.registry[f.name] = t.detach().numpy().copy()
        return f

    def unpack_from_disk(f):
        return torch.tensor(SelfDeletingTempFile.registry[f.name])

    q = torch.tensor(rng.standard_normal(4), dtype=torch.float32, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_to_disk, unpack_from_disk):
        r = (q * q).sum()
    r.backward()
    result["disk_grad"] = numpy_of(q.grad)

    h = torch.tensor(rng.standard_normal(3), dtype=torch.float32, requires_grad=True)
    out = (h * 2).exp()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t * 2):
        hooked = h.sin()
    result.update(hooked_saved=numpy_of(hooked.grad_fn._saved_self), saved_mul_other=out.grad_fn._saved_result.shape[0])
    out.sum().backward()
    try:
        out.grad_fn._saved_result
    except RuntimeError as e:
        result["freed"] = str(e).split(".")[0]
    return result


def double_backward(torch, init=None):
    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            result = x ** 3
            dx = 3 * x ** 2
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            result = grad_output * dx + grad_dx * 6 * x
            return result

    def my_cube(x):
        result, dx = MyCube.apply(x)
        return result

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return grad_out * result

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal(4), dtype=torch.double, requires_grad=True)
    result = {
        "cube_gc": torch.autograd.gradcheck(my_cube, x),
        "cube_ggc": torch.autograd.gradgradcheck(my_cube, x),
        "exp_ggc": torch.autograd.gradgradcheck(Exp.apply, x),
        "sinh_gc": torch.autograd.gradcheck(sinh, x),
        "sinh_ggc": torch.autograd.gradgradcheck(sinh, x),
    }
    y = my_cube(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    s = sinh(x)
    (gs,) = torch.autograd.grad(s.sum(), x, create_graph=True)
    (ggs,) = torch.autograd.grad(gs.sum(), x)
    result.update(g=numpy_of(g), gg=numpy_of(gg), gs=numpy_of(gs), ggs=numpy_of(ggs),
                  cube_fn=type(y.grad_fn).__name__.endswith("Backward"))
    return result


def test_forward_mode_ad():
    ref, got = compare_program(forward_mode, rtol=1e-5, atol=1e-6)
    assert got["unpacked_same"] and got["outside_none"] and got["after_level_none"] and got["gradcheck_fwd"]


def test_saved_tensor_hooks():
    ref, got = compare_program(saved_tensor_hooks, rtol=1e-5, atol=1e-6)
    assert got["packed"] and got["saved_self_is_x"] == ref["saved_self_is_x"]


def test_double_backward_custom_function():
    ref, got = compare_program(double_backward, rtol=1e-10, atol=1e-12)
    assert all(got[k] for k in ("cube_gc", "cube_ggc", "exp_ggc", "sinh_gc", "sinh_ggc"))
