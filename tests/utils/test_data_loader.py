"""DataLoader in the main process (num_workers=0) next to PyTorch's: the same batches for the same
index sequences (a sampler, a batch_sampler, batch_size=None, drop_last, collate_fn, an
IterableDataset), the same len() and the same errors; shuffling is a permutation, reproducible
after manual_seed."""
import collections

import numpy as np
import pytest
from data_compare import same_structure

import minitorch
from minitorch.utils import data

Pair = collections.namedtuple("Pair", ["image", "label"])


class ArrayDataset:
    """Map-style samples built from NumPy, as tensors of the given library: a dict of an image,
    a label and a name, or a namedtuple, depending on `kind`."""

    def __init__(self, lib, n=11, kind="dict"):
        rng = np.random.default_rng(0)
        self.images = rng.standard_normal((n, 2, 3)).astype(np.float32)
        self.lib, self.n, self.kind = lib, n, kind

    def __getitem__(self, i):
        image = self.lib.from_numpy(self.images[i].copy())
        if self.kind == "dict":
            return {"image": image, "label": i % 3, "name": f"n{i}", "w": float(i)}
        return Pair(image, np.int64(i))

    def __len__(self):
        return self.n


class Stream:
    """An iterable dataset (given a library's IterableDataset class) of n float arrays."""

    @staticmethod
    def make(lib, n=10):
        class S(lib.utils.data.IterableDataset):
            def __iter__(self):
                return (np.full(2, k, dtype=np.float32) for k in range(n))

            def __len__(self):
                return n
        return S()


ORDER = [4, 1, 7, 7, 0, 10, 3, 2, 9]
LOADERS = {
    "default": dict(),
    "batch_size": dict(batch_size=4),
    "sampler": dict(batch_size=3, sampler=ORDER),
    "drop_last": dict(batch_size=4, sampler=ORDER, drop_last=True),
    "batch_sampler": dict(batch_sampler=[[3, 1], [0], [10, 2, 5]]),
    "no batching": dict(batch_size=None, sampler=ORDER[:4]),
    "collate_fn": dict(batch_size=2, collate_fn=lambda batch: [s["name"] for s in batch]),
    "namedtuple": dict(batch_size=5, kind="namedtuple"),
}


@pytest.mark.parametrize("case", LOADERS)
def test_loader_batches_match_pytorch(case):
    torch = pytest.importorskip("torch")
    kwargs = dict(LOADERS[case])
    kind = kwargs.pop("kind", "dict")
    ours = data.DataLoader(ArrayDataset(minitorch, kind=kind), **kwargs)
    theirs = torch.utils.data.DataLoader(ArrayDataset(torch, kind=kind), **kwargs)
    assert len(ours) == len(theirs)
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        same_structure(a, b, torch)


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                                    dict(batch_size=5)])
def test_iterable_dataset_batches_match_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    ours = data.DataLoader(Stream.make(minitorch), **kwargs)
    theirs = torch.utils.data.DataLoader(Stream.make(torch), **kwargs)
    assert len(ours) == len(theirs)
    for a, b in zip(list(ours), list(theirs), strict=True):
        same_structure(a, b, torch)


def test_shuffle_is_a_reproducible_permutation():
    ds = data.TensorDataset(minitorch.arange(20))
    minitorch.manual_seed(5)
    first = [b[0].tolist() for b in data.DataLoader(ds, batch_size=6, shuffle=True)]
    assert [len(b) for b in first] == [6, 6, 6, 2] and sorted(sum(first, [])) == list(range(20))
    second = [b[0].tolist() for b in data.DataLoader(ds, batch_size=6, shuffle=True)]
    assert second != first  # a new permutation each epoch
    minitorch.manual_seed(5)
    assert [b[0].tolist() for b in data.DataLoader(ds, batch_size=6, shuffle=True)] == first


def test_loader_attributes():
    ds = data.TensorDataset(minitorch.arange(10))
    loader = data.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)
    assert isinstance(loader.sampler, data.RandomSampler) and isinstance(loader.batch_sampler, data.BatchSampler)
    assert loader.batch_size == 4 and loader.drop_last and len(loader) == 2 and loader.collate_fn is data.default_collate
    assert data.DataLoader(ds, batch_size=None).collate_fn is data.default_convert
    if minitorch.cuda.is_available():
        pinned = data.DataLoader(ds, batch_size=5, pin_memory=True)  # accepted; batches stay in pageable memory
    else:
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
            pinned = data.DataLoader(ds, batch_size=5, pin_memory=True)
    assert [b[0].tolist() for b in pinned] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


LOADER_ERRORS = [
    (dict(num_workers=-1), "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                              "sampler, and drop_last"),
    (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching and is mutually exclusive "
                                            "with drop_last"),
    (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), "multiprocessing_context option should specify a valid "
                                                          "start method in"),
]


@pytest.mark.parametrize("kwargs,message", LOADER_ERRORS)
def test_loader_errors_match_pytorch(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        data.DataLoader(range(4), **kwargs)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        torch.utils.data.DataLoader(range(4), **kwargs)


def test_iterable_dataset_rejects_samplers_and_frozen_attributes():
    stream = Stream.make(minitorch)
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified shuffle option, "
                                         "but got shuffle=True"):
        data.DataLoader(stream, shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        data.DataLoader(stream, sampler=[0])
    loader = data.DataLoader(range(3))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 2
    loader.num_workers = 0  # not frozen, as in PyTorch
    assert data.get_worker_info() is None


def test_profiler_shows_each_next_as_pytorch_names_it():
    from minitorch.profiler import profile

    with profile() as prof:
        for _ in data.DataLoader(data.TensorDataset(minitorch.arange(6)), batch_size=3):
            pass
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"] == 3  # 2 batches, then the end
    assert counts["Op::stack"] == 2
