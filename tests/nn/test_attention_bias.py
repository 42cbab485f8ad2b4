"""nn.attention.bias (causal_upper_left, causal_lower_right, CausalBias, CausalVariant) against
PyTorch: the materialised masks and what print shows, scaled_dot_product_attention with either bias
(values and gradients, float32 and float16, scale and GQA passed on), the errors and the warning;
and the __torch_function__ of a tensor subclass given as attn_mask, which receives
F.scaled_dot_product_attention itself as the public API."""
import importlib
import warnings

import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, same_error

torch = pytest.importorskip("torch")


def bias(lib):
    return importlib.import_module(f"{lib.__name__}.nn.attention.bias")


def qkv(L=3, S=6, H=2, Hkv=2, E=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, h, n, E)).astype(np.float32) for h, n in ((H, L), (Hkv, S), (Hkv, S))]


@pytest.mark.parametrize("L,S", [(3, 6), (4, 4), (1, 5)])
def test_masks_and_print(L, S):
    for name in ("causal_upper_left", "causal_lower_right"):
        got = getattr(bias(minitorch), name)(L, S)
        want = getattr(bias(torch), name)(L, S)
        assert isinstance(got, minitorch.Tensor) and type(got).__name__ == "CausalBias"
        assert tuple(got.shape) == tuple(want.shape)  # the uninitialised tensor PyTorch's makes too
        assert (got.variant.name, got.seq_len_q, got.seq_len_kv) == (want.variant.name, L, S)
        assert int(got.variant) == int(want.variant)
        np.testing.assert_array_equal(got._materialize().numpy(), want._materialize().numpy())
        assert got._materialize().dtype == minitorch.bool
        assert str(got) == str(want) and repr(got) == repr(want)


@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("L,S", [(3, 6), (5, 5)])
def test_sdpa_with_a_causal_bias(variant, L, S):
    same_as_torch(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, getattr(bias(lib), variant)(L, S)), qkv(L, S), atol=1e-5)
    same_as_torch(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=getattr(bias(lib), variant)(L, S), scale=0.3, enable_gqa=True), qkv(L, S, H=4), atol=1e-5)
    same_as_torch(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q.half(), k.half(), v.half(), getattr(bias(lib), variant)(L, S)).float(), qkv(L, S), atol=2e-3, rtol=2e-3)


def test_upper_left_is_is_causal_and_lower_right_differs():
    q, k, v = (minitorch.tensor(a) for a in qkv())
    F = minitorch.nn.functional
    ul = F.scaled_dot_product_attention(q, k, v, bias(minitorch).causal_upper_left(3, 6))
    lr = F.scaled_dot_product_attention(q, k, v, bias(minitorch).causal_lower_right(3, 6))
    assert minitorch.allclose(ul, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert not minitorch.allclose(ul, lr)
    assert type(ul) is minitorch.Tensor and type(lr) is minitorch.Tensor


def test_errors_and_warning_as_pytorch():
    same_error(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, bias(lib).causal_upper_left(3, 6), is_causal=True), *qkv())
    for lib in (minitorch, torch):
        b = bias(lib)
        with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
            b.causal_lower_right(1, 2, 3)
        with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
            b.causal_upper_left(4)
        with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
            b.CausalBias(1, 2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            b.causal_lower_right(5, 2)
        assert [str(w.message) for w in caught] == [
            "Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!"]


def test_a_subclass_mask_sees_the_public_function():
    for lib in (minitorch, torch):
        F = lib.nn.functional
        seen = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(func is F.scaled_dot_product_attention)
                return super().__torch_function__(func, types, args, kwargs or {})

        q, k, v = (lib.tensor(a) for a in qkv())
        mask = lib.ones(3, 6, dtype=lib.bool).tril().as_subclass(Logged)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        assert seen[0] and type(out) is Logged
