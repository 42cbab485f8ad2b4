"""grad_fn._saved_<name>: what a node kept of its op's arguments and results, named by the op's
schema as PyTorch's nodes are (_saved_self, _saved_mat2, _saved_exponent, _saved_dim,
_saved_result), through the unpack hook of saved_tensors_hooks, and PyTorch's errors: an
AttributeError for a name the node lacks, the freed-graph RuntimeError after backward."""
import numpy as np
import pytest

import minitorch


def saved(lib):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    m = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    w = lib.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    y = x.pow(2)
    e = x.exp()
    z = m @ w
    s = m.sum(dim=1, keepdim=True)
    return {
        "self_is_input": y.grad_fn._saved_self is x,
        "exponent": y.grad_fn._saved_exponent,
        "exponent_type": type(y.grad_fn._saved_exponent).__name__,
        "result": e.grad_fn._saved_result.detach().numpy().tolist(),
        "result_fresh": e.grad_fn._saved_result is not e,
        "mm": [z.grad_fn._saved_self.detach().numpy().tolist(), z.grad_fn._saved_mat2.detach().numpy().tolist()],
        "dim": tuple(s.grad_fn._saved_dim),
        "keepdim": s.grad_fn._saved_keepdim,
        "names": [hasattr((x * 3).grad_fn, "_saved_other"), hasattr(y.grad_fn, "_saved_nothing")],
    }


def test_saved_attributes_match_pytorch():
    torch = pytest.importorskip("torch")
    assert saved(minitorch) == saved(torch)


def test_saved_attribute_errors():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute '_saved_self'"):
        y.grad_fn._saved_self
    with pytest.raises(AttributeError):
        x.sin().grad_fn._saved_result7
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_result
    leaf = minitorch.ones(2, requires_grad=True)
    with pytest.raises(AttributeError):
        (leaf * 2).grad_fn.next_functions[0][0]._saved_self  # AccumulateGrad keeps nothing


def test_saved_attribute_goes_through_unpack_hook():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with minitorch.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t + 1):
        y = x.sin()
    np.testing.assert_allclose(y.grad_fn._saved_self.detach().numpy(), [11.0, 21.0])
    np.testing.assert_allclose(y.grad_fn._saved_self.detach().numpy(), [11.0, 21.0])  # unpacked again


def test_saved_input_modified_in_place_raises_version_error():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.sin()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.grad_fn._saved_self
