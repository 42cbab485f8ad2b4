"""BatchNorm's state dicts are of version 2 (they hold num_batches_tracked). A state dict with no
version or version 1 (a plain dict, a checkpoint from before the counter, converted weights) that
lacks num_batches_tracked loads under strict=True, keeping the module's own count, as PyTorch's;
with version 2 metadata the key is missing as any other."""
from collections import OrderedDict

import pytest

import minitorch
from helpers import torch


def model(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Flatten(), lib.nn.Linear(2, 2),
                             lib.nn.BatchNorm1d(2))


def without_counter(sd, metadata=None):
    out = OrderedDict((k, v) for k, v in sd.items() if not k.endswith("num_batches_tracked"))
    if metadata is not None:
        out._metadata = metadata
    return out


def test_state_dict_records_version_2():
    sd = model(minitorch).state_dict()
    assert sd._metadata["1"]["version"] == 2 and sd._metadata["4"]["version"] == 2
    assert sd._metadata["0"]["version"] == 1


def test_unversioned_state_dict_without_counter_loads_strictly():
    m = model(minitorch)
    m[1].num_batches_tracked.fill_(7)
    old = without_counter(model(minitorch).state_dict())
    assert m.load_state_dict(old).missing_keys == []
    assert m[1].num_batches_tracked.item() == 7 and m[4].num_batches_tracked.item() == 0
    result = m.load_state_dict({"0.weight": minitorch.zeros(2, 1, 3, 3)}, strict=False)
    assert "1.num_batches_tracked" not in result.missing_keys and "1.running_mean" in result.missing_keys


def test_version_2_state_dict_without_counter_is_missing_it():
    m = model(minitorch)
    sd = m.state_dict()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.num_batches_tracked", '
                                           '"4.num_batches_tracked"'):
        m.load_state_dict(without_counter(sd, sd._metadata))
    version_1 = {k: dict(v, version=1) if k in ("1", "4") else v for k, v in sd._metadata.items()}
    assert m.load_state_dict(without_counter(sd, version_1)).missing_keys == []


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_incompatible_keys_match_torch():
    results = []
    for lib in (minitorch, torch):
        m = model(lib)
        partial = {k: v for k, v in model(lib).state_dict().items() if k.startswith("1.") or k == "junk"}
        partial["junk"] = lib.zeros(1)
        r = m.load_state_dict(without_counter(partial), strict=False)
        results.append((sorted(r.missing_keys), sorted(r.unexpected_keys)))
    assert results[0] == results[1]


def test_untracked_batch_norm_adds_nothing():
    m = minitorch.nn.BatchNorm1d(3, track_running_stats=False)
    assert m.load_state_dict({"weight": minitorch.ones(3), "bias": minitorch.zeros(3)}).missing_keys == []
    assert m.num_batches_tracked is None
