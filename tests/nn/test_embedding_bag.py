"""F.embedding_bag (the composite of csrc/ops/embedding_bag.c, torch.embedding_bag) and
nn.EmbeddingBag against PyTorch with the same weights: every mode, offsets with empty bags,
include_last_offset, 2-D input, per_sample_weights, padding_idx; values and the gradients of
the weight and the per-sample weights; from_pretrained, repr; and errors (class and message)."""
import numpy as np
import pytest

import minitorch
from helpers import raises_like_torch, same_as_torch, same_error, torch

RNG = np.random.default_rng(3)
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])


def weight(dtype="float64"):
    return RNG.standard_normal((10, 3)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets,last", [([0, 4], False), ([0, 4, 4, 7], False), ([0, 3, 10], True),
                                          ([0, 0, 5, 10], True), ([0], False)])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_bag_1d_with_offsets(mode, offsets, last, padding_idx, dtype):
    tol = 1e-12 if dtype == "float64" else 1e-6
    same_as_torch(lambda m, w: m.nn.functional.embedding_bag(
        m.tensor(IDX), w, m.tensor(offsets), mode=mode, include_last_offset=last, padding_idx=padding_idx),
        [weight(dtype)], atol=tol, rtol=tol)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input(mode, layout):
    same_as_torch(lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX.reshape(5, 2)), w, mode=mode),
                  [weight()], layout=layout, atol=1e-12)


def test_per_sample_weights():
    psw = RNG.standard_normal(IDX.shape)
    same_as_torch(lambda m, w, p: m.nn.functional.embedding_bag(
        m.tensor(IDX), w, m.tensor([0, 3, 3]), mode="sum", per_sample_weights=p), [weight(), psw], atol=1e-12)
    same_as_torch(lambda m, w, p: m.nn.functional.embedding_bag(
        m.tensor(IDX.reshape(2, 5)), w, mode="sum", per_sample_weights=p, padding_idx=0),
        [weight(), psw.reshape(2, 5)], atol=1e-12)


def np_bag_grad_scaled(idx, offsets, mode, psw, padding_idx, num):
    """float64 weight gradient of the sum of embedding_bag's output with scale_grad_by_freq: each
    entry's row gets its weight (psw, over its bag's kept count in mean mode) over its index's count
    among all the indices; padding entries and the padding row get nothing."""
    counts = np.bincount(idx, minlength=num)
    bags = np.searchsorted(np.asarray(offsets), np.arange(len(idx)), side="right") - 1
    kept = idx != padding_idx if padding_idx is not None else np.ones(len(idx), bool)
    per_bag = np.bincount(bags[kept], minlength=len(offsets))
    grad = np.zeros((num, 3))
    for k, (i, b) in enumerate(zip(idx, bags)):
        if kept[k]:
            grad[i] += (psw[k] if psw is not None else 1.0) / (per_bag[b] if mode == "mean" else 1) / counts[i]
    return grad


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("offsets,padding_idx,psw", [([0, 4], None, False), ([0, 0, 5, 7], 4, False),
                                                     ([0, 3, 3], 9, True), ([0], None, True)])
def test_scale_grad_by_freq(mode, offsets, padding_idx, psw):
    """Each row's gradient over its index's count in the batch (PyTorch's documented rule), against
    NumPy; the values unchanged. IDX holds 4, 2 and 0 twice, the others once."""
    if psw and mode != "sum":
        pytest.skip("per_sample_weights are sum mode's only")
    p = RNG.standard_normal(IDX.shape) if psw else None
    w = minitorch.tensor(weight(), requires_grad=True)
    kwargs = dict(mode=mode, padding_idx=padding_idx, per_sample_weights=None if p is None else minitorch.tensor(p))
    out = minitorch.nn.functional.embedding_bag(minitorch.tensor(IDX), w, minitorch.tensor(offsets),
                                                scale_grad_by_freq=True, **kwargs)
    plain = minitorch.nn.functional.embedding_bag(minitorch.tensor(IDX), w, minitorch.tensor(offsets), **kwargs)
    np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
    out.sum().backward()
    want = np_bag_grad_scaled(IDX, offsets, mode, p, padding_idx, 10)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12, atol=1e-15)


# Every index as often as the others: PyTorch's CPU kernel scales the k-th distinct index by the
# count of the k-th index in sorted order (not its own), which agrees with the rule only then.
EVEN = np.array([3, 1, 3, 0, 1, 0, 7, 7])


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("offsets,padding_idx", [([0, 3], None), ([0, 0, 5], 1), ([0], None)])
def test_scale_grad_by_freq_as_torch(mode, offsets, padding_idx):
    same_as_torch(lambda m, w: m.nn.functional.embedding_bag(
        m.tensor(EVEN), w, m.tensor(offsets), mode=mode, padding_idx=padding_idx, scale_grad_by_freq=True),
        [weight()], atol=1e-12, rtol=1e-12)
    same_as_torch(lambda m, w, p: m.nn.functional.embedding_bag(
        m.tensor(EVEN), w, m.tensor(offsets), mode="sum", per_sample_weights=p, scale_grad_by_freq=True),
        [weight(), RNG.standard_normal(EVEN.shape)], atol=1e-12, rtol=1e-12)


def test_scale_grad_by_freq_sparse_refused_at_backward():
    """As PyTorch's: the forward runs, the backward refuses (its embedding_backward's words)."""
    def backward(m, w):
        m.nn.functional.embedding_bag(m.tensor(IDX), w.requires_grad_(), m.tensor([0, 4]), mode="sum",
                                      sparse=True, scale_grad_by_freq=True).sum().backward()

    same_error(backward, weight())


def test_scale_grad_by_freq_module_and_2d_input():
    w = weight()
    ours = minitorch.nn.EmbeddingBag.from_pretrained(minitorch.tensor(w), freeze=False, mode="mean",
                                                     scale_grad_by_freq=True)
    ours(minitorch.tensor(IDX.reshape(5, 2))).sum().backward()
    want = np_bag_grad_scaled(IDX, list(range(0, 10, 2)), "mean", None, None, 10)
    np.testing.assert_allclose(ours.weight.grad.numpy(), want, rtol=1e-12, atol=1e-15)
    if torch is not None:
        theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), freeze=False, mode="mean",
                                                       scale_grad_by_freq=True)
        theirs(torch.tensor(EVEN.reshape(4, 2))).sum().backward()
        ours.weight.grad = None
        ours(minitorch.tensor(EVEN.reshape(4, 2))).sum().backward()
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_all_four_results_of_the_op_match_pytorch(dtype):
    """torch.embedding_bag's output, offset2bag, bag_size and max_indices (ties in max mode,
    empty bags, padding, per-sample weights, include_last_offset) on random small cases."""
    if torch is None:
        pytest.skip("compares with PyTorch")
    rng = np.random.default_rng(1)
    for _ in range(100):
        v, d, n, b = (int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(0, 9)),
                      int(rng.integers(1, 4)))
        w, idx = rng.integers(-2, 3, (v, d)).astype(dtype), rng.integers(0, v, n)
        offsets = np.sort(rng.integers(0, n + 1, b))
        offsets[0] = 0
        pad = None if rng.integers(0, 2) else int(rng.integers(0, v))
        last = bool(rng.integers(0, 2)) and b > 1
        if last:
            offsets[-1] = n
        psw = rng.standard_normal(n).astype(dtype) if rng.integers(0, 2) else None
        for mode in (0, 1, 2):
            p = psw if mode == 0 else None
            want = torch.embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(offsets), False, mode, False,
                                       None if p is None else torch.tensor(p), last, pad)
            got = minitorch.embedding_bag(minitorch.tensor(w), minitorch.tensor(idx), minitorch.tensor(offsets),
                                          False, mode, False, None if p is None else minitorch.tensor(p), last, pad)
            np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), atol=1e-6)
            for g, t in zip(got[1:], want[1:]):
                assert g.tolist() == t.tolist()


def test_the_op_directly():
    w = minitorch.tensor(weight())
    out, offset2bag, bag_size, _ = minitorch.embedding_bag(w, minitorch.tensor(IDX), minitorch.tensor([0, 4]),
                                                           False, 1)
    assert offset2bag.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1] and bag_size.tolist() == [4, 6]
    np.testing.assert_allclose(out.numpy()[0], w.numpy()[[1, 2, 4, 5]].mean(0))


def test_module_and_from_pretrained():
    w = weight()
    ours = minitorch.nn.EmbeddingBag.from_pretrained(minitorch.tensor(w), mode="max", padding_idx=3)
    assert not ours.weight.requires_grad
    y = ours(minitorch.tensor(IDX), minitorch.tensor([0, 5]))
    if torch is not None:
        theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="max", padding_idx=3)
        np.testing.assert_allclose(y.numpy(), theirs(torch.tensor(IDX), torch.tensor([0, 5])).numpy())
        for args, kwargs in [((10, 3), {}), ((10, 3), {"mode": "sum", "padding_idx": -2, "max_norm": 1.0}),
                             ((4, 2), {"norm_type": 1.0, "include_last_offset": True})]:
            assert repr(minitorch.nn.EmbeddingBag(*args, **kwargs)) == repr(torch.nn.EmbeddingBag(*args, **kwargs))
    bag = minitorch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=1)
    assert bag.weight.requires_grad and tuple(bag.weight.shape) == (10, 3)
    assert not bag.weight[1].detach().numpy().any()
    bag(minitorch.tensor(IDX.reshape(2, 5))).sum().backward()
    assert not bag.weight.grad[1].numpy().any() and bag.weight.grad[2].numpy().all()


@pytest.mark.parametrize("call", [
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([[0]])),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX.reshape(1, 2, 5)), w),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w[0], m.tensor([0])),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0]), mode="min"),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0]), mode="max", sparse=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0]), mode="max",
                                               scale_grad_by_freq=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0]), mode="mean",
                                               per_sample_weights=w[:, 0]),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0, 11])),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX).to(m.float32), w, m.tensor([0])),
])
def test_embedding_bag_errors(call):
    same_error(call, weight())


@pytest.mark.parametrize("call,start", [
    # PyTorch's messages name its own types (torch.Tensor, torch.Size) or go on with a tensor's print
    (lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX.reshape(2, 5)), w, m.tensor([0])),
     "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. "
     "However, found offsets of type <class 'minitorch"),
    (lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([0]), per_sample_weights=w[0]),
     "embedding_bag: If per_sample_weights (minitorch.Size([3])) is not None, then it must have the same shape "
     "as the input (minitorch.Size([10]))"),
    (lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDX), w, m.tensor([1, 4])),
     "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
     "However, got 1"),
])
def test_embedding_bag_errors_in_minitorch_words(call, start):
    raises_like_torch(call, weight())
    with pytest.raises(Exception) as e:
        call(minitorch, minitorch.tensor(weight()))
    assert str(e.value).startswith(start)


# Offsets that go backwards or below zero, on the CPU, where PyTorch's float32 sum and mean
# (its fbgemm kernels) refuse them with these words. Its other paths (float64, max, padding_idx)
# return values for such offsets that no bag layout gives; minitorch refuses them alike there.
BAD_OFFSETS = [([0, 4, 2], False), ([0, 4, 2, 10], True), ([0, 5, 3], True), ([0, 4, 4, 3], False),
               ([0, 4, 2], False)]


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("offsets,last", BAD_OFFSETS)
@pytest.mark.parametrize("odtype", ["int64", "int32"])
def test_embedding_bag_offsets_backwards_as_torch(mode, offsets, last, odtype):
    same_error(lambda m, w: m.nn.functional.embedding_bag(
        m.tensor(IDX), w, m.tensor(np.array(offsets, odtype)), mode=mode, include_last_offset=last),
        weight("float32"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_offsets_refused_on_every_path(mode, dtype, padding_idx):
    w = minitorch.tensor(weight(dtype))
    with pytest.raises(RuntimeError, match=r"^Expected i < index_size to be true, but got false\."):
        minitorch.nn.functional.embedding_bag(minitorch.tensor(IDX), w, minitorch.tensor([0, 4, 2]), mode=mode,
                                              padding_idx=padding_idx)
    with pytest.raises(RuntimeError, match=r"^Your input appears to be incorrect: the last offset value"):
        minitorch.nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=True)(
            minitorch.tensor(IDX), minitorch.tensor([0, 5, 3]))
    # a negative offset is PyTorch's IndexError (mean and max, and float64 sum; float32 sum reads
    # out of bounds there)
    with pytest.raises(IndexError, match="^index out of range in self$"):
        minitorch.nn.functional.embedding_bag(minitorch.tensor(IDX), w, minitorch.tensor([0, -1]), mode=mode)
    if torch is not None and (mode != "sum" or dtype == "float64"):
        with pytest.raises(IndexError, match="^index out of range in self$"):
            torch.nn.functional.embedding_bag(torch.tensor(IDX), torch.tensor(weight(dtype)), torch.tensor([0, -1]),
                                              mode=mode)
    # equal offsets (an empty bag) stay valid
    out = minitorch.nn.functional.embedding_bag(minitorch.tensor(IDX), w, minitorch.tensor([0, 4, 4, 7]), mode=mode,
                                                padding_idx=padding_idx)
    assert tuple(out.shape) == (4, 3) and not out[1].any()


@pytest.mark.parametrize("idtype,odtype,name", [("int64", "int64", "LongTensor"), ("int64", "int32", "LongTensor"),
                                                 ("int32", "int32", "IntTensor")])
def test_embedding_bag_first_offset_message(idtype, odtype, name):
    """PyTorch's message goes on with the offending value's print, in the indices' and offsets'
    common type, named the legacy way."""
    call = lambda m, w: m.nn.functional.embedding_bag(  # noqa: E731
        m.tensor(IDX.astype(idtype)), w, m.tensor(np.array([2, 4], odtype)))
    raises_like_torch(call, weight())
    with pytest.raises(RuntimeError) as e:
        call(minitorch, minitorch.tensor(weight()))
    want = ("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
            f"However, got 2\n[ minitorch.{name}{{}} ]")
    assert str(e.value) == want
    if torch is not None:
        with pytest.raises(RuntimeError) as t:
            call(torch, torch.tensor(weight()))
        assert str(t.value) == want.replace("minitorch.", "torch.")
