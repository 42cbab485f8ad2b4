"""F.scaled_dot_product_attention (a composite of device ops) and nn.MultiheadAttention on the
CUDA device against the CPU: values and gradients with masks, causal, GQA; errors alike."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, raises_alike

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
RNG = np.random.default_rng(27)


def leaves(*arrays, device):
    return [minitorch.tensor(a, device=device, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal", "gqa"])
def test_sdpa_on_the_device(kind, dtype):
    q, k, v = (RNG.standard_normal(s).astype(dtype) for s in ((2, 4, 5, 3), (2, 2, 6, 3), (2, 2, 6, 4)))
    if kind != "gqa":
        q = q[:, :2]
    mask = {"bool": RNG.random((5, 6)) < 0.6, "float": RNG.standard_normal((2, 1, 5, 6)).astype(dtype)}.get(kind)
    if kind == "bool":
        mask[2] = False  # a fully masked row: zeros
    results = []
    for device in ("cpu", "cuda"):
        x = leaves(q, k, v, device=device)
        m = None if mask is None else minitorch.tensor(mask, device=device)
        out = F.scaled_dot_product_attention(*x, attn_mask=m, is_causal=kind == "causal", enable_gqa=kind == "gqa")
        (out * out).sum().backward()
        results.append([out] + [t.grad for t in x])
    for got, want in zip(*results[::-1]):
        assert_same(got, want, atol=1e-5, rtol=1e-4)


def test_sdpa_errors_and_mha_on_the_device():
    q = minitorch.ones(2, 3, 4)
    raises_alike(lambda a: F.scaled_dot_product_attention(a, a, a, attn_mask=minitorch.ones(3, 3, device=a.device,
                                                                                         dtype=minitorch.bool),
                                                          is_causal=True), q)
    mha = minitorch.nn.MultiheadAttention(4, 2, batch_first=True)
    x = minitorch.tensor(RNG.standard_normal((2, 3, 4)).astype(np.float32))
    want, w_want = mha(x, x, x)
    mha.to("cuda")
    got, w_got = mha(x.to("cuda"), x.to("cuda"), x.to("cuda"))
    assert_same(got, want, atol=1e-5)
    assert_same(w_got, w_want, atol=1e-5)
