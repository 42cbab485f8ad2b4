"""torch.utils.data, audited against PyTorch: DataLoader's argument forms (batch_size,
None, drop_last, sampler, batch_sampler, collate_fn, workers, pin_memory, their conflicts),
default_collate and default_convert on tensors, numbers, NumPy arrays and scalars, strings, dicts,
tuples and namedtuples, random_split, Subset, ConcatDataset and the samplers (lengths and
contents where the random streams do not decide them). Each case is fn(lib), compared by
api_audit.same_call."""
import collections

import numpy as np
import pytest

from api_audit import same_call, table

CASES, P = table()
Pt = collections.namedtuple("Pt", "x y")
def DL(L, **kw):
    ds = L.utils.data.TensorDataset(L.arange(10.).reshape(5, 2), L.arange(5))
    return [b for b in L.utils.data.DataLoader(ds, **kw)]
P("DataLoader basic", lambda L: DL(L, batch_size=2))
P("DataLoader drop_last", lambda L: DL(L, batch_size=2, drop_last=True))
P("DataLoader len", lambda L: len(L.utils.data.DataLoader(L.utils.data.TensorDataset(L.arange(5)), batch_size=2, drop_last=True)))
P("DataLoader bs None", lambda L: DL(L, batch_size=None))
P("DataLoader collate_fn", lambda L: DL(L, batch_size=3, collate_fn=lambda b: len(b)))
P("DataLoader batch_sampler", lambda L: DL(L, batch_sampler=[[0, 4], [2]]))
P("DataLoader sampler", lambda L: DL(L, sampler=[4, 3, 2], batch_size=2))
P("DataLoader shuffle+sampler", lambda L: DL(L, sampler=[4, 3, 2], shuffle=True))
P("DataLoader bs+batch_sampler", lambda L: DL(L, batch_sampler=[[0]], batch_size=2))
P("DataLoader shuffle len", lambda L: [len(b[0]) for b in DL(L, batch_size=2, shuffle=True, generator=L.Generator().manual_seed(0))])
P("DataLoader workers", lambda L: DL(L, batch_size=2, num_workers=2))
P("DataLoader pin", lambda L: DL(L, batch_size=2, pin_memory=True))
P("collate dict", lambda L: L.utils.data.default_collate([{"a": L.tensor(1.), "b": 2}, {"a": L.tensor(3.), "b": 4}]))
P("collate np", lambda L: L.utils.data.default_collate([np.ones(2, np.float32), np.zeros(2, np.float32)]))
P("collate float", lambda L: L.utils.data.default_collate([1.5, 2.5]))
P("collate bool", lambda L: L.utils.data.default_collate([True, False]))
P("collate str", lambda L: L.utils.data.default_collate(["a", "b"]))
P("collate nt", lambda L: L.utils.data.default_collate([Pt(1, L.ones(2)), Pt(2, L.zeros(2))]))
P("collate tuple", lambda L: L.utils.data.default_collate([(1, [2, 3]), (4, [5, 6])]))
P("collate np scalar", lambda L: L.utils.data.default_collate([np.float32(1), np.float32(2)]))
P("collate np int", lambda L: L.utils.data.default_collate([np.int64(1), np.int64(2)]))
P("collate ragged", lambda L: L.utils.data.default_collate([L.ones(2), L.ones(3)]))
P("collate uneven", lambda L: L.utils.data.default_collate([(1, 2), (1,)]))
P("default_convert", lambda L: L.utils.data.default_convert([np.ones(2), 3]))
P("random_split lens", lambda L: [len(s) for s in L.utils.data.random_split(range(10), [3, 7])])
P("random_split frac", lambda L: [len(s) for s in L.utils.data.random_split(range(10), [0.33, 0.67])])
P("random_split bad", lambda L: L.utils.data.random_split(range(10), [3, 6]))
P("Subset", lambda L: (lambda s: (len(s), s[1], s.indices))(L.utils.data.Subset(list(range(10)), [5, 7])))
P("ConcatDataset", lambda L: (lambda c: (len(c), c[4], c[-1], c.cumulative_sizes))(L.utils.data.ConcatDataset([range(3), range(10, 14)])))
P("ConcatDataset add", lambda L: len(L.utils.data.TensorDataset(L.ones(2)) + L.utils.data.TensorDataset(L.ones(3))))
P("SequentialSampler", lambda L: list(L.utils.data.SequentialSampler(range(4))))
P("RandomSampler len", lambda L: (len(L.utils.data.RandomSampler(range(4), replacement=True, num_samples=7)), sorted(L.utils.data.RandomSampler(range(4)))))
P("BatchSampler", lambda L: list(L.utils.data.BatchSampler(range(7), 3, False)))
P("BatchSampler drop", lambda L: (list(L.utils.data.BatchSampler(range(7), 3, True)), len(L.utils.data.BatchSampler(range(7), 3, True))))
P("SubsetRandomSampler", lambda L: sorted(L.utils.data.SubsetRandomSampler([3, 5, 9])))
P("WeightedRandomSampler", lambda L: (lambda s: (len(s), set(s) <= {1}))(L.utils.data.WeightedRandomSampler([0., 1., 0.], 5)))
P("WeightedRandomSampler norepl err", lambda L: list(L.utils.data.WeightedRandomSampler([0., 1., 0.], 5, replacement=False)))
P("get_worker_info main", lambda L: L.utils.data.get_worker_info())
P("TensorDataset mismatch", lambda L: L.utils.data.TensorDataset(L.ones(2), L.ones(3)))
P("Dataset add", lambda L: type(L.utils.data.TensorDataset(L.ones(2)) + L.utils.data.TensorDataset(L.ones(2))).__name__)


@pytest.mark.parametrize("fn", CASES)
def test_same_as_torch(fn):
    same_call(fn)
