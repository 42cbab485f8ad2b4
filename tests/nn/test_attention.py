"""F.scaled_dot_product_attention (one op: on the CPU without dropout the fused kernel
_scaled_dot_product_flash_attention_for_cpu with its recomputing backward, else a composite of
matmul, softmax and dropout) against NumPy and PyTorch: values and gradients with bool and float masks, causal, scale, GQA, broadcast
batch dims, non-contiguous inputs, empty sequences, fully masked rows, float64, double backward,
errors; nn.MultiheadAttention and F.multi_head_attention_forward against PyTorch with weights
copied through state_dict: outputs, attention weights, gradients of the inputs and of every
parameter, for each of its options."""
import math

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from helpers import LAYOUTS, check, same_as_torch, same_error, torch

F = mt.nn.functional
RNG = np.random.default_rng(27)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def sdpa(lib, *args, **kw):
    return lib.nn.functional.scaled_dot_product_attention(*args, **kw)


def ref_sdpa(q, k, v, mask=None, is_causal=False, scale=None, gqa=False):
    """NumPy's attention in float64: softmax(q k^T * scale + mask) v, rows of only -inf give 0."""
    if gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if is_causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool))
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    dead = np.all(s == -np.inf, axis=-1, keepdims=True)
    s = np.where(dead, 0.0, s)
    e = np.exp(s - s.max(-1, keepdims=True)) if s.shape[-1] else s
    p = np.where(dead, 0.0, e / e.sum(-1, keepdims=True)) if s.shape[-1] else s
    return p @ v


@pytest.mark.parametrize("layout", LAYOUTS)
def test_values_and_gradients(layout):
    q, k, v = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 7)
    check(sdpa, ref_sdpa, [q, k, v], layout=layout, atol=1e-5)
    same_as_torch(sdpa, [q, k, v], layout=layout, atol=1e-5)


def test_bool_and_float_masks_broadcast():
    q, k, v = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 7)
    bmask = RNG.random((4, 6)) < 0.6
    bmask[:, 0] = True
    fmask = rand(2, 1, 4, 6)
    for mask in (bmask, fmask, bmask[None, None], rand(1, 6), RNG.random((3, 4, 6)) < 0.5):
        check(lambda m, *a: sdpa(m, *a[:3], attn_mask=a[3]), ref_sdpa, [q, k, v, mask], atol=1e-5)
        same_as_torch(lambda m, *a: sdpa(m, *a[:3], attn_mask=a[3]), [q, k, v, mask], atol=1e-5)


def test_fully_masked_rows_give_zero_and_finite_gradients():
    q, k, v = rand(2, 4, 5), rand(2, 6, 5), rand(2, 6, 3)
    bmask = np.ones((4, 6), dtype=bool)
    bmask[1] = False
    fmask = np.zeros((4, 6), dtype=np.float32)
    fmask[2] = -np.inf
    fmask[0, 3] = -np.inf
    for mask in (bmask, fmask):
        out = check(lambda m, *a: sdpa(m, *a[:3], attn_mask=a[3]), ref_sdpa, [q, k, v, mask], atol=1e-5)
        assert np.isfinite(out.numpy()).all()
        same_as_torch(lambda m, *a: sdpa(m, *a[:3], attn_mask=a[3].detach()), [q, k, v, mask], atol=1e-5)
    x = [mt.tensor(a, requires_grad=True) for a in (q, k, v)]
    sdpa(mt, *x, attn_mask=mt.tensor(bmask)).sum().backward()
    assert all(np.isfinite(t.grad.numpy()).all() for t in x)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5)])
def test_causal_and_scale(shape):
    L, S = shape
    q, k, v = rand(2, 2, L, 3), rand(2, 2, S, 3), rand(2, 2, S, 4)
    check(lambda m, *a: sdpa(m, *a, is_causal=True), lambda *a: ref_sdpa(*a, is_causal=True), [q, k, v], atol=1e-5)
    same_as_torch(lambda m, *a: sdpa(m, *a, is_causal=True), [q, k, v], atol=1e-5)
    for scale in (0.3, -0.7, 2.0):
        check(lambda m, *a: sdpa(m, *a, scale=scale), lambda *a: ref_sdpa(*a, scale=scale), [q, k, v], atol=1e-5)
        same_as_torch(lambda m, *a: sdpa(m, *a, scale=scale, is_causal=True), [q, k, v], atol=1e-5)


def test_gqa_and_broadcast_batch():
    q, k, v = rand(2, 6, 4, 5), rand(2, 2, 7, 5), rand(2, 3, 7, 4)
    check(lambda m, *a: sdpa(m, *a, enable_gqa=True), lambda *a: ref_sdpa(*a, gqa=True), [q, k, v], atol=1e-5)
    same_as_torch(lambda m, *a: sdpa(m, *a, enable_gqa=True), [q, k, v], atol=1e-5)
    # batch dims broadcast (3-D key against 4-D query), and 2-D inputs
    q, k, v = rand(2, 3, 4, 5), rand(3, 6, 5), rand(3, 6, 2)
    check(sdpa, ref_sdpa, [q, k, v], atol=1e-5)
    same_as_torch(sdpa, [q, k, v], atol=1e-5)
    check(sdpa, ref_sdpa, [q[0, 0], k[0], v[0]], atol=1e-5)


def test_empty_sequences_and_float64():
    check(sdpa, ref_sdpa, [rand(2, 0, 5), rand(2, 6, 5), rand(2, 6, 3)])
    check(sdpa, ref_sdpa, [rand(2, 4, 5), rand(2, 0, 5), rand(2, 0, 3)])
    same_as_torch(sdpa, [rand(2, 4, 5), rand(2, 0, 5), rand(2, 0, 3)])
    d = [rand(2, 4, 5, dtype=np.float64), rand(2, 6, 5, dtype=np.float64), rand(2, 6, 3, dtype=np.float64)]
    out = check(sdpa, ref_sdpa, d, atol=1e-12, rtol=1e-10)
    assert out.dtype == mt.float64
    same_as_torch(sdpa, d, atol=1e-12, rtol=1e-10)
    mask = rand(4, 6, dtype=np.float64)
    x = [mt.tensor(a, requires_grad=True) for a in d + [mask]]
    mt.autograd.gradcheck(lambda *t: sdpa(mt, *t[:3], attn_mask=t[3]), x)
    mt.autograd.gradcheck(lambda *t: sdpa(mt, *t[:3], is_causal=True, scale=0.4), x[:3])


def test_double_backward():
    d = [rand(2, 4, 3, dtype=np.float64), rand(2, 5, 3, dtype=np.float64), rand(2, 5, 2, dtype=np.float64)]
    mask = np.ones((4, 5), dtype=bool)
    mask[1, 2:] = False

    def second(lib):
        x = [lib.tensor(a, requires_grad=True) for a in d]
        out = sdpa(lib, *x, attn_mask=lib.tensor(mask))
        g = lib.autograd.grad((out ** 2).sum(), x, create_graph=True)
        sum(gi.pow(2).sum() for gi in g).backward()
        return [t.grad.numpy() for t in x]

    got = second(mt)
    if torch is not None:
        for a, b in zip(got, second(torch)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_dropout():
    q, k, v = (mt.tensor(rand(2, 8, 4)) for _ in range(3))
    mt.manual_seed(0)
    a = sdpa(mt, q, k, v, dropout_p=0.5)
    mt.manual_seed(0)
    assert mt.equal(a, sdpa(mt, q, k, v, dropout_p=0.5))
    assert not mt.equal(a, sdpa(mt, q, k, v))
    assert mt.equal(sdpa(mt, q, k, v, dropout_p=1.0), mt.zeros(2, 8, 4))


def test_errors():
    q, k, v = rand(2, 4, 5), rand(2, 6, 5), rand(2, 6, 3)
    mask = np.ones((4, 6), dtype=bool)
    same_error(lambda m, *a: sdpa(m, *a, is_causal=True), q, k, v, mask)
    same_error(sdpa, q, k.astype(np.float64), v)
    same_error(sdpa, q[0, 0], k, v)
    same_error(sdpa, q, k, v, mask.astype(np.int64))
    same_error(lambda m, *a: sdpa(m, *a, enable_gqa=True), rand(2, 4, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 3))
    with pytest.raises(RuntimeError):
        sdpa(mt, mt.tensor(q), mt.tensor(k), mt.tensor(v[:, :4]))


def test_profiler_shows_one_op():
    q = mt.tensor(rand(2, 3, 4, 5))  # 4-D: PyTorch's flash path
    with mt.profiler.profile() as prof:
        sdpa(mt, q, q, q)
    names = [e.key for e in prof.key_averages()]
    assert "Op::scaled_dot_product_attention" in names
    assert "Op::_scaled_dot_product_flash_attention_for_cpu" in names  # the fused CPU kernel


def test_fused_cpu_kernel_directly():
    """The fused kernel (float inputs on the CPU without dropout) against the composite's math
    (what every other call takes) through its own op, and its front end's checks."""
    q, k, v, m = rand(6, 4, 5), rand(6, 7, 5), rand(6, 7, 3), rand(6, 4, 7)
    fused = mt._C._scaled_dot_product_flash_attention_for_cpu
    for causal in (False, True):
        for mask in (None, m):
            if causal and mask is not None:
                continue
            got = mt._C._scaled_dot_product_flash_attention_for_cpu(
                mt.tensor(q), mt.tensor(k), mt.tensor(v), 0.0, causal,
                attn_mask=None if mask is None else mt.tensor(mask), scale=0.3)
            want = ref_sdpa(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64),
                            None if mask is None else mask.astype(np.float64), is_causal=causal, scale=0.3)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="expected 3-D"):
        fused(mt.tensor(q[0]), mt.tensor(k), mt.tensor(v))
    with pytest.raises(RuntimeError, match="do not match"):
        fused(mt.tensor(q), mt.tensor(k), mt.tensor(v[:, :3]))
    with pytest.raises(RuntimeError, match="attn_mask and is_causal together"):
        fused(mt.tensor(q), mt.tensor(k), mt.tensor(v), 0.0, True, attn_mask=mt.tensor(m))
    with pytest.raises(RuntimeError, match="floating point inputs of one dtype"):
        fused(mt.tensor(q), mt.tensor(k).double(), mt.tensor(v))
    # dropout takes the composite path: the same values with p=0 through the fused kernel
    x = [mt.tensor(a) for a in (q, k, v)]
    np.testing.assert_allclose(sdpa(mt, *x).numpy(), ref_sdpa(*(a.astype(np.float64) for a in (q, k, v))),
                               rtol=1e-5, atol=1e-6)


# the calls PyTorch 2.13 sends to its CPU flash kernel (one ScaledDotProductFlashAttentionForCpuBackward0
# node over the inputs' own nodes) and to its math path (matmul's UnsafeViewBackward0 over a bmm)
NODE_CASES = {
    "3d": ((1, 2, 4), (1, 2, 4), (1, 2, 4), {}),
    "3d causal": ((2, 3, 4), (2, 3, 4), (2, 3, 4), {"is_causal": True}),
    "4d": ((2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 2, 4), {}),
    "4d causal": ((2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 2, 4), {"is_causal": True}),
    "4d bool mask": ((2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 4), {"mask": ((2, 5), "bool")}),
    "4d float mask": ((2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 4), {"mask": ((2, 1, 2, 5), "float32")}),
    "4d mask needing grad": ((2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 4), {"mask": ((2, 5), "grad")}),
    "4d dropout": ((2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 2, 4), {"dropout_p": 0.5}),
    "4d broadcast batch": ((2, 3, 2, 4), (1, 3, 2, 4), (1, 3, 2, 4), {}),
    "4d other value size": ((2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 2, 6), {}),
    "4d float64": ((2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 2, 4), {"dtype": "float64"}),
    "4d non-contiguous": ((2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 4), {"transpose": True}),
    "5d": ((2, 2, 3, 4, 8), (2, 2, 3, 5, 8), (2, 2, 3, 5, 8), {}),
}


def sdpa_node(lib, arrays, mask, kw):
    """(node type, name, next nodes' types), the output and the inputs' gradients of one call on
    the arrays (each given (B, L, H, E) and turned to (B, H, L, E) when kw asks to transpose)."""
    kw = dict(kw)
    dtype = getattr(lib, kw.pop("dtype", "float32"))
    turn = kw.pop("transpose", False)
    leaves = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    q, k, v = (t.transpose(1, 2) if turn else t for t in leaves)
    if mask is not None:
        kw["attn_mask"] = lib.tensor(mask, requires_grad=kw.pop("mask_grad", False))
    lib.manual_seed(0)
    y = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    f = y.grad_fn
    y.sum().backward()
    grads = [t.grad.numpy() if lib is mt else t.grad.detach().numpy() for t in leaves]
    return (type(f).__name__, f.name(), [type(e).__name__ for e, _ in f.next_functions]), y, grads


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("case", NODE_CASES)
def test_sdpa_records_pytorchs_node(case):
    qs, ks, vs, kw = NODE_CASES[case]
    kw = dict(kw)
    turned = (lambda s: s[:1] + s[2:3] + s[1:2] + s[3:]) if kw.get("transpose") else (lambda s: s)
    arrays = [rand(*turned(s)) for s in (qs, ks, vs)]
    mask = None
    if "mask" in kw:
        shape, kind = kw.pop("mask")
        mask = rand(*shape) > 0 if kind == "bool" else rand(*shape)
        kw["mask_grad"] = kind == "grad"
    got, y, grads = sdpa_node(mt, arrays, mask, kw)
    want, ty, tgrads = sdpa_node(torch, arrays, mask, kw)
    assert got == want
    if "dropout_p" not in kw:
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
        for a, b in zip(grads, tgrads):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_fused_kernel_takes_4d():
    """The fused op on 4-D (B, H, L, E) inputs as they are, against the math path."""
    q, k, v, m = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 5), rand(2, 3, 4, 6)
    got = mt._C._scaled_dot_product_flash_attention_for_cpu(mt.tensor(q), mt.tensor(k), mt.tensor(v),
                                                            attn_mask=mt.tensor(m), scale=0.4)
    want = ref_sdpa(*(a.astype(np.float64) for a in (q, k, v, m)), scale=0.4)
    assert got.shape == (2, 3, 4, 5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="do not match"):
        mt._C._scaled_dot_product_flash_attention_for_cpu(mt.tensor(q), mt.tensor(k[:1]), mt.tensor(v[:1]))
    with pytest.raises(RuntimeError, match="of one rank"):
        mt._C._scaled_dot_product_flash_attention_for_cpu(mt.tensor(q), mt.tensor(k[0]), mt.tensor(v[0]))


# Queries laid out as attention modules make them (view(B, L, H, E).transpose(1, 2) and others):
# (sizes in memory order, the permutation back to (B, H, L, E)); PyTorch's fused CPU kernel lays
# its result out in the query's order, so y.transpose(1, 2).view(B, L, H * E) works.
QUERY_LAYOUTS = [((2, 3, 4, 5), (0, 1, 2, 3)), ((2, 4, 3, 5), (0, 2, 1, 3)), ((3, 2, 4, 5), (1, 0, 2, 3)),
                 ((4, 3, 2, 5), (2, 1, 0, 3)), ((2, 5, 3, 4), (0, 2, 3, 1)), ((1, 4, 3, 5), (0, 2, 1, 3))]


@pytest.mark.parametrize("memory,perm", QUERY_LAYOUTS)
def test_result_follows_the_query_layout(memory, perm):
    """The fused path's result is dense in the query's order of dims (a query whose last dim is
    not innermost, and the math path (3-D, dropout), give contiguous results), values unchanged."""
    qm = rand(*memory)
    B, H, L = (memory[p] for p in perm[:3])
    k, v = rand(B, H, 6, 5), rand(B, H, 6, 5)
    outs = {}
    for lib in (mt, torch) if torch is not None else (mt,):
        q = lib.tensor(qm).permute(*perm)
        y = sdpa(lib, q, lib.tensor(k), lib.tensor(v))
        outs[lib.__name__] = (y.stride(), y.transpose(1, 2).is_contiguous())
        np.testing.assert_allclose(y.numpy(), ref_sdpa(np.transpose(qm, perm).astype(np.float64), k, v),
                                   rtol=1e-5, atol=1e-6)
        if perm == (0, 2, 1, 3):
            assert y.transpose(1, 2).view(B, L, -1).shape == (B, L, H * 5)
    if torch is not None:
        assert outs["minitorch"] == outs["torch"]
    q3 = mt.tensor(rand(4, 3, 5)).transpose(0, 1)
    assert sdpa(mt, q3, mt.tensor(rand(3, 6, 5)), mt.tensor(rand(3, 6, 5))).is_contiguous()
    q4 = mt.tensor(rand(2, 4, 3, 5)).transpose(1, 2)  # value's head size differs: the math path
    assert sdpa(mt, q4, mt.tensor(rand(2, 3, 6, 5)), mt.tensor(rand(2, 3, 6, 7))).is_contiguous()


# ---- nn.MultiheadAttention ----

def mha_pair(*args, **kwargs):
    """(PyTorch's MultiheadAttention, minitorch's) with PyTorch's weights loaded into minitorch's."""
    theirs = torch.nn.MultiheadAttention(*args, **kwargs)
    ours = nn.MultiheadAttention(*args, **kwargs)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def run_both(theirs, ours, arrays, masks=None, **kw):
    """Both modules on the same inputs (q, k, v: the same tensor where the arrays are the same
    object); compares outputs and weights, then gradients of inputs and every parameter."""
    masks = masks or {}
    res = []
    for lib, mod in ((torch, theirs), (mt, ours)):
        made = {}
        xs = []
        for a in arrays:
            if id(a) not in made:
                made[id(a)] = lib.tensor(a, requires_grad=True)
            xs.append(made[id(a)])
        m = {name: lib.tensor(a) for name, a in masks.items()}
        out, w = mod(*xs, **m, **kw)
        loss = (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))).sum()
        loss.backward()
        res.append((out, w, list(made.values()), dict(mod.named_parameters())))
    (to, tw, tx, tp), (mo, mw, mx, mp) = res
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert (mw is None) == (tw is None)
    if tw is not None:
        np.testing.assert_allclose(mw.detach().numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-6)
    for a, b in zip(mx, tx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert list(mp) == list(tp)
    for name in tp:
        if tp[name].grad is None:
            assert mp[name].grad is None, name
            continue
        np.testing.assert_allclose(mp[name].grad.numpy(), tp[name].grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


@needs_torch
def test_mha_parameters_and_init():
    theirs, ours = mha_pair(8, 2, add_bias_kv=True)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear" and isinstance(ours.out_proj, nn.Linear)
    sep, tsep = nn.MultiheadAttention(8, 4, kdim=3, vdim=5, bias=False), torch.nn.MultiheadAttention(8, 4, kdim=3,
                                                                                                  vdim=5, bias=False)
    assert list(sep.state_dict()) == list(tsep.state_dict())
    fresh = nn.MultiheadAttention(16, 4)
    assert not fresh.in_proj_bias.detach().numpy().any() and not fresh.out_proj.bias.detach().numpy().any()
    bound = math.sqrt(6 / (16 + 48))
    assert np.abs(fresh.in_proj_weight.detach().numpy()).max() <= bound
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 3)


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_self_attention(batch_first, need_weights, average):
    theirs, ours = mha_pair(8, 2, batch_first=batch_first)
    x = rand(3, 5, 8)
    run_both(theirs, ours, [x, x, x], need_weights=need_weights, average_attn_weights=average)


@needs_torch
def test_mha_cross_attention_kdim_vdim_bias_kv_zero_attn():
    q, kv = rand(4, 2, 8), rand(6, 2, 8)
    run_both(*mha_pair(8, 4), [q, kv, kv])
    run_both(*mha_pair(8, 4), [q, kv, rand(6, 2, 8)])
    run_both(*mha_pair(8, 2, kdim=3, vdim=5), [q, rand(6, 2, 3), rand(6, 2, 5)])
    run_both(*mha_pair(8, 2, kdim=3, vdim=5), [q, rand(6, 2, 3), rand(6, 2, 5)], need_weights=False)
    run_both(*mha_pair(8, 2, add_bias_kv=True, add_zero_attn=True), [q, kv, kv])
    run_both(*mha_pair(8, 2, add_bias_kv=True, add_zero_attn=True), [q, kv, kv], need_weights=False)
    run_both(*mha_pair(8, 2, bias=False), [q, kv, kv])


@needs_torch
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks(need_weights):
    x = rand(5, 3, 8)
    pad = np.zeros((3, 5), dtype=bool)
    pad[0, 3:] = True
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    fcausal = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    per_head = rand(3 * 2, 5, 5)
    for masks in ({"key_padding_mask": pad}, {"attn_mask": causal}, {"attn_mask": fcausal},
                  {"attn_mask": per_head}, {"attn_mask": causal, "key_padding_mask": pad},
                  {"attn_mask": fcausal, "key_padding_mask": pad.astype(np.float32) * -1e4}):
        run_both(*mha_pair(8, 2), [x, x, x], masks, need_weights=need_weights)
    run_both(*mha_pair(8, 2, add_bias_kv=True, add_zero_attn=True), [x, x, x],
             {"attn_mask": causal, "key_padding_mask": pad}, need_weights=need_weights)
    run_both(*mha_pair(8, 2), [x, x, x], {"attn_mask": fcausal}, need_weights=need_weights, is_causal=True)


@needs_torch
def test_mha_unbatched_and_errors():
    x = rand(5, 8)
    run_both(*mha_pair(8, 2), [x, x, x], {"key_padding_mask": np.array([0, 0, 0, 1, 1], dtype=bool)})
    run_both(*mha_pair(8, 2), [x, x, x], {"attn_mask": rand(2, 5, 5)}, need_weights=False)
    theirs, ours = mha_pair(8, 2)
    cases = [
        lambda lib, mod: mod(lib.ones(2, 3, 4, 8), lib.ones(2, 3, 4, 8), lib.ones(2, 3, 4, 8)),
        lambda lib, mod: mod(lib.ones(5, 3, 8), lib.ones(5, 8), lib.ones(5, 8)),
        lambda lib, mod: mod(lib.ones(5, 3, 8), lib.ones(5, 3, 8), lib.ones(5, 3, 8), attn_mask=lib.ones(4, 4)),
        lambda lib, mod: mod(lib.ones(5, 3, 8), lib.ones(5, 3, 8), lib.ones(5, 3, 8),
                             key_padding_mask=lib.ones(3, 5, dtype=lib.int64)),
        lambda lib, mod: mod(lib.ones(5, 3, 8), lib.ones(5, 3, 8), lib.ones(5, 3, 8), is_causal=True),
        lambda lib, mod: mod(lib.ones(5, 3, 6), lib.ones(5, 3, 6), lib.ones(5, 3, 6)),
        lambda lib, mod: mod(lib.ones(5, 3, 8), lib.ones(5, 3, 8), lib.ones(5, 3, 8),
                             key_padding_mask=lib.zeros(3, 4, dtype=lib.bool)),
    ]
    for case in cases:
        with pytest.raises(Exception) as want:
            case(torch, theirs)
        with pytest.raises(want.type) as got:
            case(mt, ours)
        assert str(got.value) == str(want.value).replace("torch.Size", "minitorch.Size")


@needs_torch
def test_multi_head_attention_forward_functional():
    theirs, ours = mha_pair(8, 2)
    x = rand(4, 2, 8)
    res = []
    for lib, mod in ((torch, theirs), (mt, ours)):
        t = lib.tensor(x)
        res.append(lib.nn.functional.multi_head_attention_forward(
            t, t, t, 8, 2, mod.in_proj_weight, mod.in_proj_bias, None, None, False, 0.0, mod.out_proj.weight,
            mod.out_proj.bias, training=False, need_weights=True))
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_mha_runs_without_pytorch():
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.1)
    x = mt.tensor(rand(2, 5, 8), requires_grad=True)
    out, w = mha(x, x, x)
    assert tuple(out.shape) == (2, 5, 8) and tuple(w.shape) == (2, 5, 5)
    np.testing.assert_allclose(w.detach().numpy().sum(-1) if not mha.training else np.ones((2, 5)), 1, rtol=1e-5)
    out.sum().backward()
    assert x.grad is not None and mha.in_proj_weight.grad is not None
    mha.eval()
    out, w = mha(x, x, x, need_weights=True)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1, rtol=1e-5)
