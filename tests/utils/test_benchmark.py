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


def test_timer_stores_block_strings_dedented_as_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.benchmark import Timer as TorchTimer

    cases = [("x * y", """
        x = torch.ones((128,))
        y = torch.ones((4,))[:1]
        """), ("""
        z = x * 2
        z.sum()
        """, "x = torch.ones(3)\n\n"), ("x + 1  ", "  x = 1")]
    for stmt, setup in cases:
        ours, theirs = benchmark.Timer(stmt, setup).timeit(3), TorchTimer(stmt, setup).timeit(3)
        assert (ours.stmt, ours.setup) == (theirs.stmt, theirs.setup)
        assert printed_task(ours) == printed_task(theirs)


def printed_task(m):
    """The lines of repr(m) between its object line and its timings: the statement and setup."""
    lines = repr(m).splitlines()[1:]
    return lines[:next(k for k, line in enumerate(lines) if re.match(r"  (Median: )?\d", line))]


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


def _fuzz_runs(lib, bench, seed, n):
    fuzzer = bench.Fuzzer(
        parameters=[bench.FuzzedParameter("k0", minval=1, maxval=1000, distribution="loguniform"),
                    bench.FuzzedParameter("k1", minval=2, maxval=9, distribution="uniform"),
                    bench.FuzzedParameter("scale", minval=0.5, maxval=2.0, distribution="uniform")],
        tensors=[bench.FuzzedTensor("x", size=("k0", "k1"), min_elements=16, max_elements=2000,
                                    probability_contiguous=0.4),
                 bench.FuzzedTensor("i", size=("k1", 3), steps=(2, 1), dtype=lib.int64)],
        constraints=[lambda params: params["k0"] != params["k1"]],  # called with the dict, as PyTorch calls it
        seed=seed)
    runs = [(params, {name: (t.numpy().copy(), t.stride(), props[name]["is_contiguous"], props[name]["numel"],
                             list(props[name]["order"]), props[name]["steps"]) for name, t in tensors.items()})
            for tensors, props, params in fuzzer.take(n)]
    return runs, fuzzer.rejection_rate


def test_fuzzer_draws_pytorchs_parameters_and_tensors():
    """Fuzzer.take(n): the parameters from a NumPy RandomState of the seed (loguniform and integer
    and float uniform draws, resampled until the constraints and the tensors' element limits
    hold), the tensors from manual_seed of its next draw (so PyTorch's values), laid out in a
    permuted order with chance 1 - probability_contiguous and strided by steps; the same as
    PyTorch's fuzzer, draw for draw."""
    torch = pytest.importorskip("torch")
    import torch.utils.benchmark as tbench
    for seed in (0, 5):
        got, got_rate = _fuzz_runs(minitorch, benchmark, seed, 8)
        want, want_rate = _fuzz_runs(torch, tbench, seed, 8)
        assert got_rate == want_rate
        for (gp, gt), (wp, wt) in zip(got, want):
            assert gp == wp
            for name in wt:
                np.testing.assert_array_equal(gt[name][0], wt[name][0])
                assert gt[name][1:] == wt[name][1:]
    for params, tensors in got:
        assert 16 <= params["k0"] * params["k1"] <= 2000 and params["k0"] != params["k1"]
        assert tensors["i"][5] == (2, 1) and tensors["i"][0].min() >= 1


def test_fuzzer_aliases_and_errors():
    """ParameterAlias (through a dict distribution, which must sum to one as the docs say), a cycle
    of aliases, duplicate names, an unknown distribution, impossible constraints."""
    fuzzer = benchmark.Fuzzer(
        parameters=[benchmark.FuzzedParameter("x_len", 4, 64, distribution="uniform"),
                    benchmark.FuzzedParameter("y_len", distribution={1: 0.5, benchmark.ParameterAlias("x_len"): 0.5})],
        tensors=[benchmark.FuzzedTensor("x", size=("x_len",)), benchmark.FuzzedTensor("y", size=("y_len",))],
        seed=3)
    seen = set()
    for tensors, _, params in fuzzer.take(20):
        assert params["y_len"] in (1, params["x_len"])
        seen.add(params["y_len"] == 1)
        assert (tensors["x"] + tensors["y"]).shape == (params["x_len"],)
    assert seen == {True, False}
    assert repr(benchmark.ParameterAlias("k")) == "ParameterAlias[alias_to: k]"
    cyc = benchmark.Fuzzer(parameters=[benchmark.FuzzedParameter("a", distribution={benchmark.ParameterAlias("b"): 1.0}),
                                       benchmark.FuzzedParameter("b", distribution={benchmark.ParameterAlias("a"): 1.0})],
                           tensors=[], seed=0)
    with pytest.raises(ValueError, match="ParameterAlias cycle detected"):
        next(cyc.take(1))
    with pytest.raises(ValueError, match="Duplicate names in parameters and tensors"):
        benchmark.Fuzzer(parameters=[benchmark.FuzzedParameter("x", 1, 2, distribution="uniform")],
                         tensors=[benchmark.FuzzedTensor("x", size=("x",))])
    with pytest.raises(AssertionError, match="Unknown distribution: normal"):
        benchmark.FuzzedParameter("x", 1, 2, distribution="normal")
    with pytest.raises(AssertionError, match="Distribution is not normalized"):
        benchmark.FuzzedParameter("x", distribution={1: 0.3, 2: 0.3})
    never = benchmark.Fuzzer(parameters=[benchmark.FuzzedParameter("n", 1, 4, distribution="uniform")],
                             tensors=[benchmark.FuzzedTensor("t", size=("n",), min_elements=10)], seed=0)
    with pytest.raises(ValueError, match="Failed to generate a set of valid parameters"):
        next(never.take(1))
    assert never.rejection_rate == 1.0
