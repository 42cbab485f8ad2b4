"""Datasets and samplers next to torch.utils.data's: the same samples for the same indices, the
same lengths, splits and errors; random samplers draw permutations or weighted draws with the
right distribution, reproducibly after manual_seed."""
import collections
import warnings

import pytest

import minitorch
from minitorch.utils import data



class Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


class Count(data.IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


def test_tensor_dataset():
    x, y = minitorch.arange(12).reshape(6, 2), minitorch.arange(6)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8, 9] and b.item() == 4
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(x, minitorch.arange(5))


def test_concat_chain_subset_stack():
    cat = data.ConcatDataset([Squares(3), Squares(4)])
    assert len(cat) == 7 and [cat[i] for i in range(7)] == [0, 1, 4, 0, 1, 4, 9] and cat[-1] == 9
    assert cat.cumulative_sizes == [3, 7]
    assert (Squares(2) + Squares(1)).cumulative_sizes == [2, 3]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-8]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        data.ConcatDataset([Count(0, 2)])
    chain = Count(0, 2) + Count(5, 7)
    assert isinstance(chain, data.ChainDataset) and list(chain) == [0, 1, 5, 6] and len(chain) == 4
    sub = data.Subset(Squares(10), [9, 2, 5])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [81, 4, 25] and sub.__getitems__([0, 2]) == [81, 25]
    stack = data.StackDataset(Squares(3), Squares(3))
    assert stack[2] == (4, 4) and data.StackDataset(a=Squares(2), b=Squares(2))[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        data.StackDataset(Squares(2), Squares(3))
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        data.Dataset()[0]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [1 / 3] * 3, [0.1, 0.1, 0.8]])
def test_random_split_lengths_match_pytorch(lengths):
    torch = pytest.importorskip("torch")
    minitorch.manual_seed(0)
    ours = data.random_split(Squares(10), lengths)
    theirs = torch.utils.data.random_split(Squares(10), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    indices = sorted(i for s in ours for i in s.indices)
    assert indices == list(range(10))  # a partition of the dataset


def test_random_split_is_reproducible_and_errors():
    minitorch.manual_seed(3)
    a = [s.indices for s in data.random_split(range(20), [5, 15])]
    minitorch.manual_seed(3)
    assert a == [s.indices for s in data.random_split(range(20), [5, 15])]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        data.random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        data.random_split(range(5), [1.5, -0.5])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        data.random_split(range(2), [0.9, 0.1, 0.0])
    assert any("Length of split at index 2 is 0" in str(x.message) for x in w)


def test_sequential_and_batch_samplers_match_pytorch():
    torch = pytest.importorskip("torch")
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False), (0, 2, False)]:
        ours = data.BatchSampler(data.SequentialSampler(range(n)), bs, drop)
        theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(n)), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_random_sampler_draws():
    minitorch.manual_seed(1)
    perm = list(data.RandomSampler(range(50)))
    assert sorted(perm) == list(range(50)) and perm != list(range(50))
    more = list(data.RandomSampler(range(10), num_samples=25))
    assert len(more) == 25 and sorted(more[:10]) == list(range(10)) and sorted(more[10:20]) == list(range(10))
    repl = list(data.RandomSampler(range(5), replacement=True, num_samples=70))
    assert len(repl) == 70 and set(repl) == set(range(5))
    minitorch.manual_seed(1)
    assert list(data.RandomSampler(range(50))) == perm
    sub = list(data.SubsetRandomSampler([10, 20, 30, 40]))
    assert sorted(sub) == [10, 20, 30, 40] and len(data.SubsetRandomSampler([1, 2])) == 2


def test_weighted_random_sampler_distribution():
    minitorch.manual_seed(2)
    draws = list(data.WeightedRandomSampler([1.0, 0.0, 3.0], 4000))
    counts = collections.Counter(draws)
    assert counts[1] == 0 and 0.7 < counts[2] / 4000 < 0.8
    no_repl = list(data.WeightedRandomSampler(minitorch.tensor([5.0, 1.0, 0.0, 2.0]), 3, replacement=False))
    assert sorted(no_repl) == [0, 1, 3]
    draw = list(data.WeightedRandomSampler([0.0, 1.0, 0.0], 3, replacement=False))
    assert draw[0] == 1 and sorted(draw) == [0, 1, 2]  # zero weights come last, as in PyTorch
    firsts = collections.Counter(next(iter(data.WeightedRandomSampler([8.0, 1.0, 1.0], 2, replacement=False)))
                                 for _ in range(500))
    assert 0.7 < firsts[0] / 500 < 0.9


SAMPLER_ERRORS = [
    (lambda d: d.RandomSampler(range(3), replacement=1), TypeError,
     "replacement should be a boolean value, but got replacement=1"),
    (lambda d: d.RandomSampler(range(3), num_samples=0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
    (lambda d: d.BatchSampler(range(3), 0, False), ValueError,
     "batch_size should be a positive integer value, but got batch_size=0"),
    (lambda d: d.BatchSampler(range(3), 2, 1), ValueError, "drop_last should be a boolean value, but got drop_last=1"),
    (lambda d: d.WeightedRandomSampler([1.0], 0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
    (lambda d: d.WeightedRandomSampler([[1.0]], 2), ValueError,
     r"weights should be a 1d sequence but given weights have shape \(1, 1\)"),
    (lambda d: list(d.WeightedRandomSampler([0.0, 0.0], 3)), RuntimeError,
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
    (lambda d: list(d.WeightedRandomSampler([1.0, -1.0], 3)), RuntimeError,
     r"invalid multinomial distribution \(encountering probability entry < 0\)"),
    (lambda d: list(d.WeightedRandomSampler([1.0], 2, replacement=False)), RuntimeError,
     r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement"),
]


@pytest.mark.parametrize("make,exc,message", SAMPLER_ERRORS)
def test_sampler_errors_match_pytorch(make, exc, message):
    with pytest.raises(exc, match=message):
        make(data)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(exc, match=message):
        make(torch.utils.data)


def test_generators_reach_minitorchs_random_functions(monkeypatch):
    """A sampler's generator= goes to minitorch.randperm/randint/multinomial; without one, a sampler
    seeds a fresh minitorch.Generator from the default generator, as PyTorch's RandomSampler does."""
    seen = []

    class FakeGenerator:
        def manual_seed(self, seed):
            seen.append(("seed", type(seed)))
            return self

    def spy(fn):
        def call(*args, generator=None, **kwargs):
            seen.append((fn.__name__, generator))
            return fn(*args, **kwargs)
        return call

    for name in ("randperm", "randint", "multinomial"):
        monkeypatch.setattr(minitorch, name, spy(getattr(minitorch, name)))
    g = FakeGenerator()
    list(data.RandomSampler(range(4), generator=g))
    list(data.RandomSampler(range(4), replacement=True, generator=g))
    list(data.SubsetRandomSampler([1, 2], generator=g))
    list(data.WeightedRandomSampler([1.0, 2.0], 3, generator=g))
    data.random_split(range(4), [2, 2], generator=g)
    # (a permutation sampler draws one more, empty-sliced, permutation at the end: PyTorch does too)
    assert seen == [("randperm", g), ("randperm", g), ("randint", g), ("randperm", g), ("multinomial", g),
                    ("randperm", g)]
    seen.clear()
    monkeypatch.setattr(minitorch, "Generator", FakeGenerator, raising=False)
    list(data.RandomSampler(range(4)))
    assert seen[0] == ("seed", int) and seen[1][0] == "randperm" and isinstance(seen[1][1], FakeGenerator)
