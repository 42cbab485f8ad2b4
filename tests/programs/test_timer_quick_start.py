"""The "Timer quick start" recipe's Python part as published: measure(b_size) builds
torch.utils.benchmark.Timer("x * y", f-string setup written inside the function) and runs
blocked_autorange(min_run_time=...), printing each Measurement with print(m, "\\n"). Timings are
each library's own, so the printed text is compared by its structure: the object line, the
statement, the dedented setup block as PyTorch stores it, a Median (and IQR when there are four
or more blocks) in a unit that select_unit picks, and the "N measurements, M runs per measurement,
1 thread" line. The recipe's later parts time C++ statements (Language.CPP, compiled against
libtorch) and count instructions with Callgrind: minitorch has no C++ front end, and says so."""
import io
import re
from contextlib import redirect_stdout

import pytest

from prog_helpers import run_both

OBJECT = re.compile(r"<(torch|minitorch)\.utils\.benchmark\.(utils\.common\.)?Measurement object at 0x[0-9a-f]+>")
TIMING = re.compile(r"  (Median: )?\d+\.\d\d (ns|us|ms|s)$")
IQR = re.compile(r"  IQR:    \d+\.\d\d (ns|us|ms|s) \(\d+\.\d\d to \d+\.\d\d\)$")
COUNTS = re.compile(r"  (\d+) measurements?, (\d+) runs (per measurement,|,) 1 thread$")
WARNING = re.compile(r"  WARNING: Interquartile range is \d+\.\d% of the median measurement\.$")


def timer_quick_start(torch, init=None, min_run_time=0.1):
    import importlib
    benchmark = importlib.import_module(f"{torch.__name__}.utils.benchmark")
    Language, Timer = benchmark.Language, benchmark.Timer

    def measure(b_size):
        return Timer(
            "x * y",
            f"""
            x = torch.ones((128,))
            y = torch.ones(({b_size},))
            """,
        ).blocked_autorange(min_run_time=min_run_time)

    out = io.StringIO()
    with redirect_stdout(out):
        print(measure(b_size=128), "\n")
        print(measure(b_size=1), "\n")
    return {"printed": out.getvalue(), "language": [Language.PYTHON.name, Language.CPP.name]}


def structure(printed):
    """Each printed Measurement as its lines with the timings replaced by what they must match."""
    blocks = []
    for block in printed.split(" \n\n"):
        if not block.strip():
            continue
        lines = block.strip("\n").splitlines()
        assert OBJECT.fullmatch(lines[0]), lines[0]
        k = next(k for k, line in enumerate(lines) if TIMING.match(line))
        c = next(c for c, line in enumerate(lines) if COUNTS.match(line))
        n = int(COUNTS.match(lines[c])[1])
        # a wide spread adds a warning of two lines (timings are noisy on a shared machine)
        assert c == len(lines) - 1 or (c == len(lines) - 3 and WARNING.match(lines[c + 1])
                                       and lines[c + 2].startswith("           This ")), lines
        assert (n >= 4) == bool(IQR.match(lines[k + 1])), lines
        blocks.append(lines[1:k])
    return blocks


def test_timer_quick_start_python_part():
    ref, got = run_both(timer_quick_start)
    assert structure(got["printed"]) == structure(ref["printed"]) == [
        ["x * y", "setup:", "  x = torch.ones((128,))", f"  y = torch.ones(({b},))", ""] for b in (128, 1)]
    assert got["language"] == ref["language"]


def test_timer_quick_start_cpp_part_is_refused():
    import minitorch
    from minitorch.utils.benchmark import Language, Timer
    with pytest.raises(NotImplementedError, match="C\\+\\+"):
        Timer("x * y;", "auto x = torch::ones({128});", language=Language.CPP)
    assert minitorch.utils.benchmark.Timer("x", "x = 1").timeit(1).number_per_run == 1
