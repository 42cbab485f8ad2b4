"""nn.attention.flex_attention (flex_attention, create_block_mask, BlockMask, create_mask, and_masks,
or_masks, noop_mask, AuxRequest) against PyTorch's eager implementation: outputs and logsumexp over
score_mods and mask_mods, GQA, batch-broadcast keys, non-contiguous inputs, the block structure of
the masks, PyTorch's errors; and the backward on the emulated CUDA device (PyTorch has none on the
CPU) against scaled_dot_product_attention with the same mask."""
import importlib
import math
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, to_layout, torch_alike, torch_layout, same_error

torch = pytest.importorskip("torch")


def fa(lib):
    return importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < 3


def qkv(shape=(2, 4, 7, 8), kv_heads=None, kv_batch=None, ev=None, seed=0):
    rng = np.random.default_rng(seed)
    B, H, L, E = shape
    kshape = (kv_batch or B, kv_heads or H, L, E)
    return (rng.standard_normal(shape).astype(np.float32), rng.standard_normal(kshape).astype(np.float32),
            rng.standard_normal(kshape[:-1] + (ev or E,)).astype(np.float32))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_plain_and_causal(layout):
    arrays = qkv()
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(q, k, v), *arrays, layout=layout, atol=1e-5)
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(
        q, k, v, block_mask=fa(lib).create_block_mask(causal, None, None, 7, 7, device="cpu")), *arrays,
        layout=layout, atol=1e-5)


def test_score_mods_masks_scale_and_lse():
    bias = np.random.default_rng(1).standard_normal(4).astype(np.float32)

    def run(lib, q, k, v):
        f = fa(lib)
        b_h = lib.tensor(bias)
        mask = f.create_block_mask(f.and_masks(causal, sliding), 2, 4, 7, 7, device="cpu", BLOCK_SIZE=2)
        out, aux = f.flex_attention(q, k, v, score_mod=lambda s, b, h, qi, ki: s + b_h[h] * (qi - ki),
                                    block_mask=mask, scale=0.3, return_aux=f.AuxRequest(lse=True))
        soft = f.flex_attention(q, k, v, score_mod=lambda s, b, h, qi, ki: 20 * lib.tanh(s / 20))
        either = f.create_block_mask(f.or_masks(lambda b, h, qi, ki: qi == 0, lambda b, h, qi, ki: ki > 4),
                                     None, 4, 7, 7, device="cpu")
        return out, aux.lse, soft, f.flex_attention(q, k, v, block_mask=either)

    torch_alike(run, *qkv(), atol=1e-5)


def test_fully_masked_rows_give_zero_and_minus_inf_lse():
    def run(lib, q, k, v):
        f = fa(lib)
        mask = f.create_block_mask(lambda b, h, qi, ki: qi < 3, None, None, 7, 7, device="cpu")
        return f.flex_attention(q, k, v, block_mask=mask, return_lse=True)

    out, lse = torch_alike(run, *qkv(), atol=1e-5)
    assert not as_numpy(out)[:, :, 3:].any() and np.isneginf(as_numpy(lse)[:, :, 3:]).all()


def test_gqa_batch_broadcast_and_value_dim():
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(q, k, v, enable_gqa=True),
                *qkv(kv_heads=2, ev=5), atol=1e-5)
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(
        q, k, v, block_mask=fa(lib).create_block_mask(causal, 2, None, 7, 7, device="cpu")),
        *qkv(kv_batch=1), atol=1e-5)


def test_float64_and_bfloat16():
    arrays = qkv()
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(q.double(), k.double(), v.double()), *arrays)
    torch_alike(lambda lib, q, k, v: fa(lib).flex_attention(q.bfloat16(), k.bfloat16(), v.bfloat16()).float(),
                *arrays, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("B,H,L,S,bs", [(None, None, 5, 5, 128), (2, 3, 7, 9, 2), (1, 2, 16, 12, (4, 3))])
def test_block_mask_structure(B, H, L, S, bs):
    masks = {}
    for lib in (minitorch, torch):
        f = fa(lib)
        m = f.create_block_mask(f.and_masks(causal, sliding), B, H, L, S, device="cpu", BLOCK_SIZE=bs)
        masks[lib] = (m.shape, m.BLOCK_SIZE, round(m.sparsity(), 6), m.numel(), str(m),
                      *[None if t is None else t.numpy() for t in (m.kv_num_blocks, m.kv_indices,
                                                                  m.full_kv_num_blocks, m.full_kv_indices,
                                                                  m.q_num_blocks, m.q_indices, m.to_dense())],
                      f.create_mask(sliding, B, H, L, S, device="cpu").numpy(),
                      f.create_mask(lambda s, b, h, qi, ki: lib.where(qi >= ki, s, -math.inf), B, H, L, S,
                                    device="cpu").numpy())
    for k, (g, w) in enumerate(zip(masks[minitorch], masks[torch])):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype, k
            np.testing.assert_array_equal(g, w, err_msg=str(k))
        else:
            assert g == w, (k, g, w)


def test_block_mask_repr_and_from_kv_blocks():
    for lib in (minitorch, torch):
        f = fa(lib)
        m = f.create_block_mask(causal, None, None, 6, 6, device="cpu", BLOCK_SIZE=2)
        text = repr(m).replace(lib.__name__, "torch")
        m2 = f.BlockMask.from_kv_blocks(m.kv_num_blocks, m.kv_indices, BLOCK_SIZE=2)
        if lib is minitorch:
            got = (text, m2.shape, m2.to_dense().numpy(), m2.q_num_blocks.numpy())
        else:
            want = (text, m2.shape, m2.to_dense().numpy(), m2.q_num_blocks.numpy())
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])


@pytest.mark.parametrize("case", ["heads", "gqa_multiple", "embed", "three_d", "short_mask", "long_mask",
                                  "batch", "lse_and_aux", "max_scores_cpu", "requires_grad_cpu"])
def test_errors_as_pytorch(case):
    q, k, v = qkv()

    def call(lib, q, k, v):
        f = fa(lib)
        if case == "heads":
            return f.flex_attention(q, k[:, :3], v[:, :3])
        if case == "gqa_multiple":
            return f.flex_attention(q, k[:, :3], v[:, :3], enable_gqa=True)
        if case == "embed":
            return f.flex_attention(q, k[..., :4], v)
        if case == "three_d":
            return f.flex_attention(q[0], k[0], v[0])
        if case == "short_mask":
            return f.flex_attention(q, k, v, block_mask=f.create_block_mask(causal, None, None, 5, 5, device="cpu"))
        if case == "long_mask":
            return f.flex_attention(q, k, v, block_mask=f.create_block_mask(causal, None, None, 9, 9, device="cpu"))
        if case == "batch":
            return f.flex_attention(q, k[:1], v[:1])
        if case == "lse_and_aux":
            return f.flex_attention(q, k, v, return_lse=True, return_aux=f.AuxRequest(lse=True))
        if case == "max_scores_cpu":
            return f.flex_attention(q, k, v, return_aux=f.AuxRequest(max_scores=True))
        return f.flex_attention(q.requires_grad_(), k, v)

    same_error(call, q, k, v)


def test_mask_combinators_reject_non_callables():
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
            fa(lib).and_masks(causal, 3)
        with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
            fa(lib).or_masks(None)


def test_backward_on_the_emulated_device():
    """On a CUDA device flex_attention has a backward: the gradients of a causal flex_attention
    equal those of PyTorch's scaled_dot_product_attention(is_causal=True)."""
    if not minitorch.cuda.is_available():
        pytest.skip("no CUDA device (real or emulated)")
    arrays = qkv(shape=(1, 2, 5, 4))
    weight = np.random.default_rng(3).standard_normal((1, 2, 5, 4)).astype(np.float32)
    xs = [to_layout(a, "contiguous", device="cuda").requires_grad_() for a in arrays]
    f = fa(minitorch)
    out = f.flex_attention(*xs, block_mask=f.create_block_mask(causal, None, None, 5, 5, device="cuda"))
    (out * minitorch.tensor(weight, device="cuda")).sum().backward()
    ts = [torch_layout(torch, a, "contiguous").requires_grad_() for a in arrays]
    t_out = torch.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
    (t_out * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(as_numpy(out.cpu()), t_out.detach().numpy(), atol=1e-5)
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(as_numpy(x.grad.cpu()), t.grad.numpy(), atol=1e-5)
