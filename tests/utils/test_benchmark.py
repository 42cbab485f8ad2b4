"""utils.benchmark: Timer really times, Measurement's statistics and printing as torch's."""
import re
import time

import numpy as np
import pytest

import minitorch
from minitorch.utils import benchmark


def test_timer_measures_real_time():
    slow = benchmark.Timer("time.sleep(0.002)", globals={"time": time})
    m = slow.timeit(5)
    assert m.number_per_run == 5 and len(m.raw_times) == 1
    assert 0.002 <= m.median < 0.05 and m.mean == m.median
    fast = benchmark.Timer("x + 1", setup="x = 1").blocked_autorange(min_run_time=0.02)
    assert fast.median < m.median / 100
    assert sum(fast.raw_times) >= 0.02 and fast.number_per_run >= 10


def test_timer_binds_torch_and_threads():
    seen = []
    t = benchmark.Timer("seen.append((torch is minitorch, torch.get_num_threads()))", globals={"seen": seen},
                        num_threads=1)
    t.timeit(3)
    assert seen[-1] == (True, 1)


def test_adaptive_autorange_stops_on_confidence_or_time():
    calls = []
    m = benchmark.Timer("sum(range(50))").adaptive_autorange(threshold=10.0, min_run_time=0.01, max_run_time=1.0,
                                                             callback=lambda n, t: calls.append((n, t)))
    assert len(m.raw_times) >= 4 and len(calls) == len(m.raw_times)
    capped = benchmark.Timer("time.sleep(0.001)", globals={"time": time}).adaptive_autorange(
        threshold=0.0, max_run_time=0.05)
    assert sum(capped.raw_times) < 0.5


def test_measurement_statistics_and_repr_as_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.benchmark.utils.common import Measurement as TM
    from torch.utils.benchmark.utils.common import TaskSpec as TS

    raw = [1.0e-3, 1.2e-3, 1.1e-3, 5.0e-3, 1.05e-3]
    for times, kw in [(raw, {}), (raw[:2], {"label": "L", "sub_label": "s", "description": "d"}),
                      (raw[:1], {"setup": "x = 1\ny = 2"}), (raw[:4], {})]:
        spec = dict(stmt="f(x)", setup="pass", **kw) if "setup" not in kw else dict(stmt="f(x)", **kw)
        ours = benchmark.Measurement(10, times, benchmark.TaskSpec(**spec))
        theirs = TM(10, times, TS(**spec))
        for attr in ("mean", "median", "iqr"):
            np.testing.assert_allclose(getattr(ours, attr), getattr(theirs, attr), rtol=1e-12)
        assert ours.significant_figures == theirs.significant_figures
        assert ours.has_warnings == theirs.has_warnings and ours.title == theirs.title
        strip = lambda s: re.sub(r"<.* object at 0x[0-9a-f]+>", "<obj>", s)  # noqa: E731
        assert strip(repr(ours)) == strip(repr(theirs))
    merged = benchmark.Measurement.merge([ours, ours])
    assert len(merged) == 1 and merged[0].number_per_run == 1 and len(merged[0].times) == 8


def test_compare_lists_every_measurement():
    spec = dict(stmt="f()", setup="pass", label="add")
    ms = [benchmark.Measurement(1, [1e-6, 1.1e-6], benchmark.TaskSpec(sub_label=r, description=c, **spec))
          for r in ("small", "large") for c in ("minitorch", "numpy")]
    text = str(benchmark.Compare(ms))
    assert "add" in text and "small" in text and "large" in text and "numpy" in text
    assert "Times are in microseconds (us)." in text
    assert text.count("1.0") + text.count("1.1") >= 4
