"""default_collate and default_convert next to PyTorch's: the same structure, dtypes, shapes and
values for tensors, NumPy arrays and scalars, Python numbers, strings, dicts, tuples, lists and
namedtuples; the same errors."""
import collections

import numpy as np
import pytest
from data_compare import same_structure, to_lib

import minitorch
from minitorch.utils.data import default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])
rng = np.random.default_rng(0)

SAMPLES = {
    "tensors": lambda i: rng.standard_normal((2, 3)).astype(np.float32),
    "int64 tensors": lambda i: np.arange(i, i + 4),
    "float": lambda i: i * 0.5,
    "int": lambda i: i,
    "bool": lambda i: i % 2 == 0,
    "str": lambda i: f"s{i}",
    "bytes": lambda i: b"b",
    "numpy scalar": lambda i: np.float32(i),
    "numpy int scalar": lambda i: np.int64(i),
    "tuple": lambda i: (rng.standard_normal(3).astype(np.float32), i),
    "list": lambda i: [i, 2.0 * i, f"x{i}"],
    "dict": lambda i: {"image": rng.standard_normal((1, 2, 2)), "label": i, "name": f"n{i}"},
    "namedtuple": lambda i: Point(np.float64(i), [i, i + 1]),
    "nested": lambda i: {"a": (i, {"b": [np.arange(2) + i]}), "c": Point(1.5, "z")},
}


@pytest.mark.parametrize("kind", SAMPLES)
def test_default_collate_matches_pytorch(kind):
    torch = pytest.importorskip("torch")
    samples = [SAMPLES[kind](i) for i in range(4)]
    ours = default_collate([to_lib(s, minitorch) for s in samples])
    theirs = torch.utils.data.default_collate([to_lib(s, torch) for s in samples])
    same_structure(ours, theirs, torch)
    # NumPy arrays (not made tensors first) collate into tensors too
    same_structure(default_collate(samples), torch.utils.data.default_collate(samples), torch)


@pytest.mark.parametrize("kind", SAMPLES)
def test_default_convert_matches_pytorch(kind):
    torch = pytest.importorskip("torch")
    sample = SAMPLES[kind](1)
    same_structure(default_convert(sample), torch.utils.data.default_convert(sample), torch)


def test_collate_dtypes_without_pytorch():
    assert default_collate([1.0, 2.0]).dtype == minitorch.float64
    assert default_collate([1, 2]).dtype == minitorch.int64
    assert default_collate([True, False]).dtype == minitorch.bool
    assert default_collate([np.float32(1), np.float32(2)]).dtype == minitorch.float32
    batch = default_collate([(minitorch.ones(3), 1)] * 5)
    assert isinstance(batch, list) and batch[0].shape == (5, 3) and batch[1].tolist() == [1] * 5
    assert default_collate(["a", "b"]) == ["a", "b"]


def test_collate_errors_match_pytorch():
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([minitorch.ones(2), minitorch.ones(3)])


def test_collate_fn_map_is_extensible():
    from minitorch.utils.data._utils.collate import collate, default_collate_fn_map

    class Box:
        pass

    def collate_box(batch, *, collate_fn_map=None):
        return len(batch)

    assert collate([{"b": Box()}, {"b": Box()}], collate_fn_map={**default_collate_fn_map, Box: collate_box}) == {"b": 2}
