"""The options every PyTorch factory takes beside dtype and device: layout= (torch.strided; a
non-layout refused with PyTorch's TypeError) and pin_memory= (False; True refused as PyTorch refuses
it without an accelerator; a non-bool refused), on the factory ops of the binding (empty, zeros,
ones, full, rand, randn, randint, randperm, arange, linspace, logspace, eye, tril/triu_indices),
normal and the factories written in Python (new_*, *_like, randint_like); the casts'
memory_format= (Tensor.float(...), cpu(...)) and cuda()'s non_blocking=; each against PyTorch
where it is installed."""
import pytest

import minitorch
from api_audit import a, same_call, table
from helpers import torch

LIBS = [minitorch] + ([torch] if torch is not None else [])

cases, add = table()

FACTORIES = {
    "empty": lambda lib, **k: lib.empty(2, 3, **k).shape,
    "zeros": lambda lib, **k: lib.zeros((2, 3), **k),
    "ones": lambda lib, **k: lib.ones(2, **k),
    "full": lambda lib, **k: lib.full((2,), 1.5, **k),
    "rand": lambda lib, **k: lib.rand(3, **k).shape,
    "randn": lambda lib, **k: lib.randn(3, **k).shape,
    "randint": lambda lib, **k: lib.randint(0, 4, (3,), **k).shape,
    "randperm": lambda lib, **k: lib.randperm(4, **k).shape,
    "normal": lambda lib, **k: lib.normal(0.0, 1.0, (2,), **k).shape,
    "arange": lambda lib, **k: lib.arange(1, 7, 2, **k),
    "linspace": lambda lib, **k: lib.linspace(0, 1, 5, **k),
    "logspace": lambda lib, **k: lib.logspace(0, 2, 3, **k),
    "eye": lambda lib, **k: lib.eye(2, 3, **k),
    "tril_indices": lambda lib, **k: lib.tril_indices(3, 3, **k),
    "triu_indices": lambda lib, **k: lib.triu_indices(3, 2, 1, **k),
    "new_empty": lambda lib, **k: a(lib).new_empty(2, **k).shape,
    "new_zeros": lambda lib, **k: a(lib).new_zeros(2, **k),
    "new_ones": lambda lib, **k: a(lib).new_ones((2, 1), **k),
    "new_full": lambda lib, **k: a(lib).new_full((2,), 3, **k),
    "zeros_like": lambda lib, **k: lib.zeros_like(a(lib), **k),
    "ones_like": lambda lib, **k: lib.ones_like(a(lib), **k),
    "empty_like": lambda lib, **k: lib.empty_like(a(lib), **k).shape,
    "full_like": lambda lib, **k: lib.full_like(a(lib), 2, **k),
    "rand_like": lambda lib, **k: lib.rand_like(a(lib), **k).shape,
    "randn_like": lambda lib, **k: lib.randn_like(a(lib), **k).shape,
    "randint_like": lambda lib, **k: lib.randint_like(a(lib), 3, **k).shape,
}
for name, make in FACTORIES.items():
    add(f"{name}_strided", lambda lib, make=make: make(lib, layout=lib.strided, pin_memory=False))
    add(f"{name}_none", lambda lib, make=make: make(lib, layout=None, dtype=lib.float64))

add("float_channels_last", lambda lib: lib.ones(2, 3, 4, 5).float(memory_format=lib.channels_last).stride())
add("double_channels_last", lambda lib: lib.ones(2, 3, 4, 5).double(memory_format=lib.channels_last).stride())
add("half_contiguous", lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1).half(memory_format=lib.contiguous_format)
    .stride())
add("long_preserve", lambda lib: [lib.ones(3, 4).t().long().stride(), lib.ones(3, 4).t().long().dtype])
add("casts", lambda lib: [getattr(a(lib), n)(memory_format=lib.preserve_format).dtype
                          for n in ("float", "double", "long", "int", "bool", "half", "bfloat16", "byte", "char",
                                    "short", "cfloat", "cdouble")])
add("cast_rank_3_channels_last", lambda lib: a(lib).float(memory_format=lib.channels_last))
add("cpu_channels_last", lambda lib: lib.ones(2, 3, 4, 5).cpu(memory_format=lib.channels_last).stride())


@pytest.mark.parametrize("fn", cases)
def test_against_torch(fn):
    same_call(fn)


@pytest.mark.parametrize("name", list(FACTORIES))
@pytest.mark.parametrize("bad", [{"layout": 1}, {"pin_memory": "yes"}], ids=["layout_int", "pin_memory_str"])
def test_option_of_a_wrong_type(name, bad):
    """A TypeError, as PyTorch's (whose overloaded factories word it as an invalid combination)."""
    for lib in LIBS:
        with pytest.raises(TypeError, match="layout|pin_memory"):
            FACTORIES[name](lib, **bad)


def test_casts_take_memory_format_by_keyword_only():
    for lib in LIBS:
        with pytest.raises(TypeError, match="positional argument"):
            lib.ones(2).int(lib.preserve_format)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_pin_memory_true(name):
    """Without an accelerator PyTorch's RuntimeError; with one (MINITORCH_CUDA_EMU=1) the tensor is
    made in host memory, as Tensor.pin_memory() makes it."""
    if minitorch.cuda.is_available():
        got = FACTORIES[name](minitorch, pin_memory=True)
        assert got is not None
    else:
        with pytest.raises(RuntimeError, match=r"^pin_memory=True requires a CUDA or other accelerator backend"):
            FACTORIES[name](minitorch, pin_memory=True)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_sparse_layout_refused(name):
    """A factory here makes strided tensors only: another layout is refused by name."""
    with pytest.raises(NotImplementedError, match=r"layout=minitorch.sparse_coo is not supported"):
        FACTORIES[name](minitorch, layout=minitorch.sparse_coo)


def test_cuda_non_blocking_keyword():
    x = minitorch.ones(2)
    if minitorch.cuda.is_available():
        y = x.cuda(non_blocking=True)
        assert y.device.type == "cuda" and y.cpu(memory_format=minitorch.preserve_format).tolist() == [1.0, 1.0]
        assert x.cuda(0, True).device.type == "cuda"
    else:
        # as PyTorch: AssertionError ("not compiled with CUDA enabled") in a CPU-only build,
        # RuntimeError in a CUDA build on a machine without a device
        with pytest.raises((RuntimeError, AssertionError)):
            x.cuda(non_blocking=True)
