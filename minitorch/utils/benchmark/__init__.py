"""torch.utils.benchmark: Timer runs a Python statement many times and gives a Measurement
(the time of one run: mean, median, interquartile range, printed as PyTorch prints it);
Compare lays several out as a table. Timings are real (timeit's clock, in blocks of runs)."""
from __future__ import annotations

import dataclasses
import enum
import math
import textwrap
import timeit as _timeit
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

import minitorch

from .fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias  # noqa: E402

__all__ = ["Compare", "FuzzedParameter", "FuzzedTensor", "Fuzzer", "Language", "Measurement", "ParameterAlias",
           "TaskSpec", "Timer", "select_unit"]

_WARN_IQR = 0.1  # an interquartile range above this fraction of the median is reported
_GROSS_IQR = 0.25  # ... and above this one, called environmental influence
_MAX_FIGURES = 4  # significant figures Compare shows at most
_MIN_CI = 25e-9  # seconds: no confidence interval is taken as narrower than this


def select_unit(t: float) -> Tuple[str, float]:
    """The unit ("ns", "us", "ms" or "s") that shows t seconds as a number below 1000, and its size."""
    exponent = int(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _dedent_block(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its setup and the labels a Measurement is printed with."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: Optional[str] = None
    sub_label: Optional[str] = None
    description: Optional[str] = None
    env: Optional[str] = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        tail = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + tail
        if "\n" not in self.stmt:
            return self.stmt + tail
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return "setup: " + self.setup

    def summarize(self) -> str:
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


class Measurement:
    """raw_times: seconds per block of number_per_run runs; times: seconds per run."""

    def __init__(self, number_per_run: int, raw_times: List[float], task_spec: TaskSpec,
                 metadata: Optional[Dict[Any, Any]] = None) -> None:
        self.number_per_run, self.raw_times = number_per_run, list(raw_times)
        self.task_spec, self.metadata = task_spec, metadata
        per_run = np.sort(np.asarray(self.times, dtype=np.float64))
        if per_run.size:
            self._median, self._mean = float(np.quantile(per_run, 0.5)), float(per_run.mean())
            self._p25, self._p75 = float(np.quantile(per_run, 0.25)), float(np.quantile(per_run, 0.75))
        self._sorted = per_run

    def __getattr__(self, name: str) -> Any:
        if name in ("stmt", "setup", "global_setup", "label", "sub_label", "description", "env", "num_threads"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> List[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return self._median

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def iqr(self) -> float:
        return self._p75 - self._p25

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return self.task_spec.env if self.task_spec.env is not None else "Unspecified env"

    @property
    def as_row_name(self) -> str:
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def meets_confidence(self, threshold: float = _WARN_IQR) -> bool:
        return self.iqr / self.median < threshold

    @property
    def _warnings(self) -> List[str]:
        if self.meets_confidence(_WARN_IQR):
            return []
        why = ("This suggests significant environmental influence." if not self.meets_confidence(_GROSS_IQR)
               else "This could indicate system fluctuation.")
        return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                f"measurement.\n           {why}"]

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings)

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the middle half of the runs supports (1 to 4)."""
        n = self._sorted.size
        middle = self._sorted[n // 4:math.ceil(3 * n / 4)]
        interval = max(1.645 * float(middle.std()) / math.sqrt(middle.size), _MIN_CI)
        return min(max(int(math.floor(math.log10(self._median / interval))), 1), _MAX_FIGURES)

    def __repr__(self) -> str:
        n = self._sorted.size
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self),
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines += self._warnings
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> List["Measurement"]:
        """One Measurement per TaskSpec, of all their runs' times (number_per_run 1)."""
        groups: "OrderedDict[TaskSpec, List[float]]" = OrderedDict()
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


class Timer:
    """Times stmt (after setup) in the namespace globals, with `torch` bound to minitorch, on
    num_threads threads."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = _timeit.default_timer, globals: Optional[Dict[str, Any]] = None,
                 label: Optional[str] = None, sub_label: Optional[str] = None, description: Optional[str] = None,
                 env: Optional[str] = None, num_threads: int = 1, language: Any = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("minitorch's Timer times Python statements only (no C++ timing)")
        namespace = dict(globals or {})
        namespace.setdefault("torch", minitorch)
        namespace.setdefault("minitorch", minitorch)
        if global_setup:
            exec(global_setup, namespace)  # noqa: S102 (the caller's code, as timeit runs it)
        # a block string written inside a function is stored (and printed) dedented, without its
        # first newline and trailing blanks, as PyTorch's Timer stores it
        stmt, setup = _dedent_block(stmt), _dedent_block(setup)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)
        self._timer = _timeit.Timer(stmt=stmt or "pass", setup=setup or "pass", timer=timer, globals=namespace)

    def _blocks(self, number: int) -> float:
        """Seconds for `number` runs, on the Timer's thread count."""
        saved = minitorch.get_num_threads()
        minitorch.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            minitorch.set_num_threads(saved)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of `number` runs (after a short warm-up)."""
        self._blocks(max(number // 100, 2))
        return Measurement(number, [self._blocks(number)], self._task_spec)

    def autorange(self, callback: Optional[Callable[[int, float], None]] = None) -> Measurement:
        """timeit.Timer.autorange: one block of 1, 2, 5, 10, 20, ... runs taking at least 0.2 s."""
        number, taken = self._timer.autorange(callback)
        return Measurement(number, [taken], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: grown tenfold until a block dwarfs the timer's own overhead (1e4 times)
        and lasts a thousandth of min_run_time, or lasts min_run_time by itself."""
        overhead = float(np.median([self._blocks(0) for _ in range(5)]))
        number = 1
        while True:
            taken = self._blocks(number)
            if taken > min_run_time or (taken >= min_run_time / 1000 and overhead / max(taken, 1e-12) <= 1e-4):
                return number
            number *= 10

    def _measure(self, number: int, done: Callable[[List[float], float], bool],
                 callback: Optional[Callable[[int, float], None]]) -> Measurement:
        times: List[float] = []
        total = 0.0
        while not done(times, total):
            taken = self._blocks(number)
            times.append(taken)
            total += taken
            if callback is not None:
                callback(number, taken)
        return Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback: Optional[Callable[[int, float], None]] = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of one size (chosen so that the timer's overhead vanishes) until min_run_time is spent."""
        number = self._block_size(min_run_time)
        return self._measure(number, lambda times, total: total >= min_run_time, callback)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Optional[Callable[[int, float], None]] = None) -> Measurement:
        """Blocks until at least min_run_time is spent and the interquartile range of at least
        four blocks is below threshold times the median, or max_run_time is spent."""
        number = self._block_size(0.05)

        def done(times: List[float], total: float) -> bool:
            if total >= max_run_time:
                return True
            return (len(times) > 3 and total >= min_run_time
                    and Measurement(number, times, self._task_spec).meets_confidence(threshold))

        return self._measure(number, done, callback)


class Compare:
    """A table of Measurements: one per (label, description, sub_label), rows by sub_label (or
    statement) and thread count, columns by description, times in one unit with the figures
    their spread supports."""

    def __init__(self, results: List[Measurement]) -> None:
        self._results = Measurement.merge(results)
        self._trim = False
        self._colorize = False

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = True  # terminals only: the plain table is what minitorch prints

    def extend_results(self, results: List[Measurement]) -> None:
        self._results = Measurement.merge(self._results + list(results))

    def __str__(self) -> str:
        return "\n".join(self._render_group(label, group) for label, group in self._by_label().items())

    def print(self) -> None:
        print(str(self))

    def _by_label(self) -> "OrderedDict[Optional[str], List[Measurement]]":
        groups: "OrderedDict[Optional[str], List[Measurement]]" = OrderedDict()
        for m in self._results:
            groups.setdefault(m.task_spec.label, []).append(m)
        return groups

    def _render_group(self, label: Optional[str], group: List[Measurement]) -> str:
        columns = list(OrderedDict.fromkeys(m.task_spec.description for m in group))
        rows = list(OrderedDict.fromkeys((m.task_spec.num_threads, m.as_row_name) for m in group))
        unit, scale = select_unit(min(m.median for m in group))
        cell: Dict[Tuple[int, str, Optional[str]], str] = {}
        for m in group:
            value = m.median / scale
            digits = max(m.significant_figures - int(math.floor(math.log10(value))) - 1, 1) if self._trim and \
                value > 0 else 1
            cell[(m.task_spec.num_threads, m.as_row_name, m.task_spec.description)] = f"{value:.{digits}f}"
        name_width = max(len(r[1]) for r in rows) + 2
        widths = [max([len(c or "")] + [len(cell.get((r[0], r[1], c), "")) for r in rows]) + 2 for c in columns]
        header = " " * name_width + "|" + "|".join(f"{(c or ''):^{w}}" for c, w in zip(columns, widths))
        out = ["[" + f" {label or ''} ".center(len(header) - 2, "-") + "]", header]
        for threads in OrderedDict.fromkeys(r[0] for r in rows):
            out.append(f"{threads} threads: ".ljust(len(header), "-"))
            for t, name in (r for r in rows if r[0] == threads):
                out.append(f"{name:>{name_width - 1}} |" + "|".join(
                    f"{cell.get((t, name, c), ''):^{w}}" for c, w in zip(columns, widths)))
        unit_names = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
        out += ["", f"Times are in {unit_names[unit]} ({unit}).", ""]
        return "\n".join(out)
