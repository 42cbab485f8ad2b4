"""opcheck, as torch.library.opcheck: checks that a Python-defined op is registered correctly.

Its tests, by PyTorch's names: test_schema (an argument the schema does not mark mutable is left
unchanged; no result aliases an input), test_autograd_registration (an op whose inputs require
grad has an Autograd or composite kernel), test_faketensor (the fake kernel's results have the
real ones' shapes, dtypes and devices: run on real inputs, as minitorch has no fake tensors) and
test_aot_dispatch_dynamic (the fake kernel exists, and two runs of forward and backward agree).
"""
from __future__ import annotations

from typing import Optional

from .. import _C, _ops

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


def _opdef(op) -> "_ops.OpDef":
    from .custom_ops import CustomOpDef

    if isinstance(op, CustomOpDef):
        return op._opdef
    if isinstance(op, _ops.OpOverload) and isinstance(op._fn, _ops.OpDef):
        return op._fn
    if isinstance(op, _ops.OpOverloadPacket) and "default" in op.overloads():
        return op.default._fn
    raise ValueError(f"opcheck(op, ...): op must be a custom op (custom_op's result or an OpOverload of one), "
                     f"got {op!r}")


def _clone(v):
    if isinstance(v, _C.TensorBase):
        c = v.detach().clone()
        return c.requires_grad_(v.requires_grad) if v.is_floating_point() else c
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    return v


def _outputs(out) -> list:
    return [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, _C.TensorBase)]


def _same(a, b) -> bool:
    from .. import equal

    same_nan = (a != a) & (b != b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.numel() == 0 or equal(a.where(~same_nan, 0), b.where(~same_nan, 0))


def _no_fake(op: "_ops.OpDef") -> RuntimeError:
    target = op.custom if op.custom is not None else op.qualname
    fn = op.custom._init_fn.__name__ if op.custom is not None else op.name
    return RuntimeError(f"There was no fake impl registered for {target}. This is necessary for "
                        f"torch.compile/export/fx tracing to work. Please use `{fn}.register_fake` to add an fake impl.")


def test_schema(op, args, kwargs) -> None:
    args, kwargs = _clone(args), _clone(kwargs)
    values = op.bind(args, kwargs)
    before = [_clone(v) for v in values]
    op(*args, **kwargs)
    for p, v, b in zip(op.schema.arguments, values, before):
        changed = [not _same(x.detach(), y.detach()) for x, y in zip(_ops._tensors_of([v]), _ops._tensors_of([b]))]
        if any(changed) and not p.is_write:
            raise RuntimeError(f"Argument {p.name} is not defined as mutable but was mutated")


def test_autograd_registration(op, args, kwargs) -> None:
    needs = any(t.requires_grad for t in _ops._tensors_of(op.bind(args, kwargs)))
    if needs and _ops.kernel(op.qualname, "Autograd") is None and \
            _ops.kernel(op.qualname, "CompositeImplicitAutograd") is None:
        raise AssertionError(f"{op.qualname}: its inputs require grad but it has no Autograd kernel. Please use "
                             "register_autograd to add one (or register a CompositeImplicitAutograd kernel).")


def test_faketensor(op, args, kwargs) -> None:
    fake = op.fake()
    if fake is None:
        raise _no_fake(op)
    from .. import no_grad

    with no_grad():
        want = _outputs(op(*_clone(args), **_clone(kwargs)))
        got = _outputs(fake(*_clone(args), **_clone(kwargs)))
    if len(got) != len(want):
        raise RuntimeError(f"{op.qualname}: the fake impl returned {len(got)} tensors, the kernel {len(want)}")
    where = (f"When comparing the output of {op!r} on FakeTensor and concrete Tensors, found mismatched tensor "
             "metadata: ")
    for k, (g, w) in enumerate(zip(got, want)):
        for what in ("shape", "dtype", "device"):
            if getattr(g, what) != getattr(w, what):
                raise RuntimeError(f"{where}output {k} has {what} {getattr(w, what)}, the fake impl's "
                                   f"{getattr(g, what)}")
        # strides matter only along dims of more than one element, as PyTorch compares them
        for d, (size, sg, sw) in enumerate(zip(g.shape, g.stride(), w.stride())):
            if size > 1 and sg != sw:
                raise RuntimeError(f"{where}Stride mismatch! Strides are {w.stride()} and {g.stride()} "
                                   f"(mismatched at {d})!")


def test_aot_dispatch_dynamic(op, args, kwargs) -> None:
    if op.fake() is None:
        raise _no_fake(op)
    runs = []
    for _ in range(2):
        a, kw = _clone(args), _clone(kwargs)
        outs = _outputs(op(*a, **kw))
        diff = [o for o in outs if o.requires_grad]
        leaves = [t for t in _ops._tensors_of(op.bind(a, kw)) if t.requires_grad]
        grads = []
        if diff and leaves:
            from ..autograd import grad

            grads = grad([o.sum() for o in diff], leaves, allow_unused=True)
        runs.append((outs, grads))
    (o1, g1), (o2, g2) = runs
    for x, y in zip(list(o1) + [g for g in g1 if g is not None], list(o2) + [g for g in g2 if g is not None]):
        if not _same(x.detach(), y.detach()):
            raise RuntimeError(f"{op.qualname}: two runs of the op (forward and backward) disagree")


_TESTS = {f.__name__: f for f in (test_schema, test_autograd_registration, test_faketensor, test_aot_dispatch_dynamic)}


def opcheck(op, args: tuple, kwargs: Optional[dict] = None, *, test_utils=DEFAULT_TEST_UTILS,
            raise_exception: bool = True, rtol: Optional[float] = None, atol: Optional[float] = None) -> dict:
    """Runs the tests on op(*args, **kwargs): {test name: "SUCCESS" or its exception}; with
    raise_exception, the first failure raises OpCheckError."""
    target = _opdef(op)
    kwargs = kwargs or {}
    names = [test_utils] if isinstance(test_utils, str) else list(test_utils)
    results = {}
    for name in names:
        if name not in _TESTS:
            raise ValueError(f"test_utils: {name} is not one of {list(_TESTS)}")
        try:
            _TESTS[name](target, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as e:  # noqa: BLE001 - reported, or raised as OpCheckError
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
    return results
