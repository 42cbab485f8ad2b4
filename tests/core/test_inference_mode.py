"""Inference mode and inference tensors against PyTorch 2.13: which tensors are inference
tensors (made in the mode; views take their base's kind), is_inference_mode_enabled, nesting
with inference_mode(False), the decorator forms, and PyTorch's errors outside the mode for an
inference tensor updated in place, saved for backward, made to require grad, or asked its
version; what stays allowed (reading, out-of-place ops, ops that save nothing)."""
import pytest

import minitorch
from minitorch import nn

torch = pytest.importorskip("torch")


def both(fn):
    """fn(lib) in each library: (result, None) or (None, exception)."""
    out = []
    for lib in (minitorch, torch):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # noqa: BLE001 - compared
            out.append((None, e))
    return out


def same(fn):
    (got, err), (want, t_err) = both(fn)
    if err or t_err:
        assert err is not None and t_err is not None, f"minitorch {err!r}, PyTorch {t_err!r}"
        assert type(err) is type(t_err) and str(err) == str(t_err), f"{err!r} vs {t_err!r}"
        return None
    assert got == want, f"{got} != {want}"
    return got


def made_in_mode(lib):
    with lib.inference_mode():
        return lib.ones(3)


def test_flags_inside_and_outside():
    def fn(lib):
        with lib.inference_mode():
            x = lib.ones(3)
            inside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), x.is_inference(), x[:2].is_inference())
            with lib.inference_mode(False):
                nested = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), lib.ones(1).is_inference())
        outside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled(), x.is_inference(), x[1:].is_inference(),
                   (x + 1).is_inference(), x.clone().is_inference(), x.detach().is_inference(),
                   lib.is_inference(x), lib.ones(2).is_inference())
        return inside, nested, outside

    assert same(fn) == ((True, False, True, True), (False, True, False),
                        (False, True, True, True, False, False, True, True, False))


def test_views_of_normal_tensors_made_in_mode():
    def fn(lib):
        n = lib.arange(4.0)
        with lib.inference_mode():
            v = n[:2]
            w = n * 2
            v.add_(1)
        v.add_(1)  # a view of a normal tensor stays normal
        return v.is_inference(), w.is_inference(), n.tolist()

    assert same(fn) == (False, True, [2.0, 3.0, 2.0, 3.0])


@pytest.mark.parametrize("op", ["add_", "zero_", "copy_", "setitem", "view_mul_", "relu_inplace", "fill_",
                                "index_put_"])
def test_inplace_outside_mode_raises(op):
    def fn(lib):
        x = made_in_mode(lib)
        f = {"add_": lambda: x.add_(1), "zero_": lambda: x.zero_(), "copy_": lambda: x.copy_(lib.zeros(3)),
             "setitem": lambda: x.__setitem__(0, 5.0), "view_mul_": lambda: x[:2].mul_(2),
             "relu_inplace": lambda: lib.nn.functional.relu(x, inplace=True), "fill_": lambda: x.fill_(2),
             "index_put_": lambda: x.index_put_((lib.tensor([0]),), lib.tensor(3.0))}[op]
        f()
        return x.tolist()

    (_, err), (_, t_err) = both(fn)
    assert isinstance(t_err, RuntimeError) and "Inplace update to inference tensor" in str(t_err)
    assert type(err) is RuntimeError and str(err) == str(t_err)


def test_inplace_inside_mode_allowed():
    def fn(lib):
        x = made_in_mode(lib)
        with lib.inference_mode():
            x.add_(2)
            x[0] = 7.0
        return x.tolist()

    assert same(fn) == [7.0, 3.0, 3.0]


@pytest.mark.parametrize("op", ["mul", "matmul", "add", "linear_input", "sum"])
def test_saved_for_backward(op):
    def fn(lib):
        x = made_in_mode(lib)
        w = lib.ones(3, requires_grad=True)
        f = {"mul": lambda: w * x, "matmul": lambda: lib.matmul(w, x), "add": lambda: w + x,
             "linear_input": lambda: lib.nn.functional.linear(x.view(1, 3), w.view(1, 3)),
             "sum": lambda: (w.sum() + x.sum())}[op]
        out = f()
        out.sum().backward()
        return w.grad.tolist()

    same(fn)


def test_requires_grad_and_version():
    same(lambda lib: made_in_mode(lib).requires_grad_())
    same(lambda lib: setattr(made_in_mode(lib), "requires_grad", True))
    same(lambda lib: made_in_mode(lib)._version)
    same(lambda lib: made_in_mode(lib).requires_grad_(False).requires_grad)

    def inside(lib):
        with lib.inference_mode():
            y = lib.ones(2, requires_grad=True)
            z = y * 2
            return y.requires_grad, y.is_inference(), z.requires_grad, z.grad_fn is None

    assert same(inside) == (True, True, False, True)


def test_decorator_forms():
    def fn(lib):
        @lib.inference_mode()
        def f():
            return lib.is_inference_mode_enabled(), lib.ones(1).is_inference()

        @lib.inference_mode
        def g():
            return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

        @lib.inference_mode(False)
        def h():
            return lib.is_inference_mode_enabled()

        with lib.inference_mode():
            inner = h()
        return f(), g(), inner, lib.is_inference_mode_enabled()

    assert same(fn) == ((True, True), (True, False), False, False)


def test_module_outputs_cannot_join_autograd():
    def fn(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 2)
        with lib.inference_mode():
            out = m(lib.ones(1, 2))
        flags = (out.is_inference(), out.requires_grad)
        m(out).sum().backward()
        return flags

    same(fn)
    assert nn.Linear is minitorch.nn.Linear


def test_reading_inference_tensors_outside():
    def fn(lib):
        x = made_in_mode(lib)
        return x.tolist(), (x * 3).tolist(), x.numpy().tolist(), x.sum().item(), lib.ones(3).add_(x).tolist()

    same(fn)
