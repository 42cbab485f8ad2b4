"""clamp's and clip's bounds as PyTorch's overloads take them: both tensors or both numbers (a
0-dim tensor passes for a number), each with None allowed; a tensor with dims beside a number
fits neither, PyTorch's TypeError "received an invalid combination of arguments" (methods,
functions, in-place forms, positional and keyword bounds, out=). Against PyTorch where installed."""
import numpy as np
import pytest

import minitorch
from api_audit import a, same_call, table
from helpers import same_as_torch, torch

# a non-tensor input: minitorch names the argument ("argument 'input' ... must be Tensor"), PyTorch
# lists its overloads; both TypeError
cases, add = table(known={"inplace_function_not_tensor"})
T3 = lambda lib: lib.tensor([-1.0, 0.5, 3.0, 0.25])  # noqa: E731

# refused: a tensor with dims and a number
add("method_kw", lambda lib: a(lib).clamp(min=lib.zeros(4), max=2.0))
add("method_kw_max_tensor", lambda lib: a(lib).clamp(min=0.5, max=lib.zeros(4)))
add("method_positional", lambda lib: a(lib).clamp(lib.zeros(4), 2.0))
add("method_mixed", lambda lib: a(lib).clamp(lib.zeros(4), max=2))
add("method_int_tensor", lambda lib: a(lib).clamp(0, lib.ones(3, 4)))
add("inplace_method", lambda lib: a(lib).clamp_(min=lib.zeros(4), max=2.0))
add("function_kw", lambda lib: lib.clamp(a(lib), min=0.0, max=lib.zeros(4)))
add("function_positional", lambda lib: lib.clamp(a(lib), lib.zeros(4), 2.0))
add("function_input_kw", lambda lib: lib.clamp(input=a(lib), min=lib.zeros(4), max=2))
add("inplace_function", lambda lib: lib.clamp_(a(lib), lib.zeros(4), 2))
add("inplace_function_ok", lambda lib: (lambda x: [lib.clamp_(x, -0.5, 0.5) is x, x])(a(lib)))
add("inplace_function_keywords", lambda lib: lib.clamp_(input=a(lib), max=lib.zeros(4)))
add("inplace_function_not_tensor", lambda lib: lib.clamp_(5, 0, 1))
add("function_out", lambda lib: lib.clamp(a(lib), min=lib.zeros(4), max=2.0, out=lib.empty(3, 4)))
add("clip_function", lambda lib: lib.clip(a(lib), lib.zeros(4), True))
add("clip_method", lambda lib: a(lib).clip(min=lib.zeros(4), max=2.0))
add("clip_inplace", lambda lib: a(lib).clip_(min=lib.zeros(4), max=2.0))
add("parameter_bound", lambda lib: a(lib).clamp(min=lib.nn.Parameter(lib.zeros(4)), max=1))
# accepted: the Tensor form, the Number form, a 0-dim tensor as a number, None for either bound
add("both_tensors", lambda lib: a(lib).clamp(min=lib.zeros(4), max=T3(lib)))
add("both_numbers", lambda lib: a(lib).clamp(min=-0.5, max=0.5))
add("zero_dim_min", lambda lib: a(lib).clamp(min=lib.tensor(0.0), max=2.0))
add("zero_dim_max_positional", lambda lib: lib.clamp(a(lib), 0, lib.tensor(0.5)))
add("tensor_and_none", lambda lib: lib.clamp(a(lib), min=lib.zeros(4), max=None))
add("none_and_tensor", lambda lib: a(lib).clip(None, T3(lib)))
add("none_and_number", lambda lib: lib.clip(a(lib), None, 0.25))
add("neither", lambda lib: lib.clamp(a(lib)))
add("bad_type", lambda lib: lib.clamp(a(lib), min="a"))


@pytest.mark.parametrize("fn", cases)
def test_clamp_overloads(fn):
    same_call(fn)


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
def test_whole_message_of_the_function_form():
    got = want = None
    with pytest.raises(TypeError) as got:
        minitorch.clamp(minitorch.ones(3), min=0.0, max=minitorch.zeros(3))
    with pytest.raises(TypeError) as want:
        torch.clamp(torch.ones(3), min=0.0, max=torch.zeros(3))
    assert str(got.value) == str(want.value)


def test_tensor_bounds_values_and_gradients():
    """The accepted mixes compute as PyTorch's, gradients included (the tensor bounds get theirs)."""
    x = np.array([[-2.0, 0.1, 0.7, 5.0], [1.0, -0.3, 0.2, 0.0]])
    lo = np.array([-1.0, 0.0, 0.5, 1.0])
    hi = np.array([0.5, 0.05, 2.0, 1.5])
    same_as_torch(lambda lib, t, l, h: t.clamp(min=l, max=h), [x, lo, hi])
    same_as_torch(lambda lib, t, l: lib.clamp(t, l, None), [x, lo], layout="transposed")
    same_as_torch(lambda lib, t, l: t.clip(min=l[1].detach(), max=0.6), [x, lo])


def test_zero_dim_bound_that_needs_grad_is_a_tensor():
    """PyTorch's parser takes a 0-dim tensor for a Number only where it needs no grad."""
    def call(lib):
        return lib.ones(3).clamp(min=lib.tensor(0.0, requires_grad=True), max=0.6)
    with pytest.raises(TypeError, match="clamp.. received an invalid combination of arguments"):
        call(minitorch)
    same_call(call)
    same_call(lambda lib: lib.ones(3).clamp(min=lib.tensor(0.5, requires_grad=True)))
