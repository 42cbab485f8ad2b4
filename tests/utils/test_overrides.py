"""minitorch.overrides: the __torch_function__ helpers, compared with torch.overrides."""
import pytest

import minitorch


def _libs():
    torch = pytest.importorskip("torch")
    return [minitorch, torch]


def _classes(lib):
    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("base", func.__name__, [t.__name__ for t in types], len(args))

    class Child(Base):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented if kwargs.get("defer") else ("child", [t.__name__ for t in types])

    class Refuses:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    return Base, Child, Refuses


def test_has_and_handle_as_torch():
    results = []
    for lib in _libs():
        o = lib.overrides
        Base, Child, Refuses = _classes(lib)
        t = lib.ones(2)

        def api(*args, **kwargs):
            return "plain"

        b, c = Base(), Child()
        row = [o.has_torch_function((t, 1)), o.has_torch_function((t, b)), o.has_torch_function_unary(t),
               o.has_torch_function_unary(c), o.has_torch_function_variadic(t, 2, c),
               o.handle_torch_function(api, (b, c), b, c), o.handle_torch_function(api, (b, c), b, c, defer=True),
               o.is_tensor_like(t), o.is_tensor_like(b), o.is_tensor_like([1])]
        with pytest.raises(TypeError) as err:
            o.handle_torch_function(api, (Refuses(),), 1)
        row.append(str(err.value).split(":")[0])
        results.append(row)
    assert results[0] == results[1]


def test_wrap_torch_function_dispatches():
    for lib in _libs():
        Base, _, _ = _classes(lib)

        @lib.overrides.wrap_torch_function(lambda x, y=None: (x,))
        def f(x, y=None):
            return "own"

        assert f(1) == "own"
        assert f(Base())[0] == "base"


def test_ignored_functions_are_torch_s():
    torch = pytest.importorskip("torch")
    ours = minitorch.overrides.get_ignored_functions()
    assert len(ours) > 40
    theirs = torch.overrides.get_ignored_functions()
    for f in ours:
        assert getattr(torch, f.__name__) in theirs, f.__name__
    assert minitorch.add not in ours


def test_tensor_method_or_property():
    assert minitorch.overrides.is_tensor_method_or_property(minitorch.Tensor.backward)
    assert not minitorch.overrides.is_tensor_method_or_property(len)
