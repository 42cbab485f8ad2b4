"""The fuzzer: thousands of random, mostly wrong calls into minitorch, run in a worker subprocess
(fuzz_worker.py), so that a segfault, an abort, a sanitizer report or a hang shows up as the
worker dying or timing out, with the call it was running named.

Every call must either raise one of PyTorch's exception classes or return well-formed tensors
(equal to NumPy's float64 answer for the ops with a reference). MINITORCH_FUZZ_EXAMPLES sets the
number of calls (2,000 by default, for CI; e.g. 100000 for a long hunt), MINITORCH_FUZZ_SEED the
seed (fixed by default, so CI draws the same calls every run).
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import minitorch

HERE = os.path.dirname(os.path.abspath(__file__))
N_CALLS = int(os.environ.get("MINITORCH_FUZZ_EXAMPLES", "2000"))
# a failing run's whole report goes here (as the screenshots of tests/viz/test_chromium.py)
ARTIFACTS = Path(os.environ.get("MINITORCH_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "artifacts")
SEED = os.environ.get("MINITORCH_FUZZ_SEED", "0")


def run_worker(n_calls, tmp_path, extra_args=()):
    """The worker's JSON report; fails the test with the call in flight if the worker died or hung."""
    trace = tmp_path / "current_call.txt"
    env = dict(os.environ)  # LD_PRELOAD and ASAN_OPTIONS too: the sanitizer run covers the worker
    root = os.path.dirname(os.path.dirname(os.path.abspath(minitorch.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    # The draws depend on str hashes (set and dict order): fixed by the seed, a run repeats
    env.setdefault("PYTHONHASHSEED", SEED)
    sanitized = "asan" in env.get("LD_PRELOAD", "")
    timeout = 120 + n_calls * (0.1 if sanitized else 0.02)
    try:
        # -X dev: CPython's debug allocator hooks turn a double free or a write to a freed object
        # into an immediate fatal error at the faulty call, instead of a crash much later
        proc = subprocess.run([sys.executable, "-X", "dev", os.path.join(HERE, "fuzz_worker.py"), str(n_calls),
                               str(trace), SEED, *extra_args],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        call = trace.read_text(errors="replace") if trace.exists() else "?"
        stderr = (e.stderr or b"")[-4000:]
        pytest.fail(f"fuzz worker hung (no answer in {timeout:.0f} s) in the call:\n  {call}\nstderr:\n{stderr!r}")
    call = trace.read_text(errors="replace") if trace.exists() else ""
    if proc.returncode != 0 or not proc.stdout.strip():
        how = f"signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        pytest.fail(f"fuzz worker died ({how}) in the call:\n  {call or '(between calls)'}\n"
                    f"worker stderr (last 8000 characters):\n{proc.stderr[-8000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_random_calls_raise_cleanly_or_answer_right(tmp_path, record_property, pytestconfig):
    report = run_worker(N_CALLS, tmp_path)
    c = report["counts"]
    line = (f"fuzz (seed {SEED}): {c['calls']} calls, {c['raised']} raised, {c['returned']} returned "
            f"({c['checked']} checked against NumPy)")
    print("\n" + line)
    record_property("fuzz_calls", c["calls"])
    pytestconfig._minitorch_fuzz_lines = getattr(pytestconfig, "_minitorch_fuzz_lines", []) + [line]
    lines = [f"- {f['kind']}: {f['call'][:600]}\n    {f['detail'][:600]}" for f in report["failures"]]
    if lines:  # kept whole, for a long run whose output was cut
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"fuzz_seed{SEED}.json").write_text(json.dumps(report, indent=1))
    assert not lines, (f"{report['distinct']} distinct bad outcomes (reproduce one with `cd tests/fuzz && python -c "
                       f"'from fuzz_calls import *; print(CALL)'`); the first ones:\n" + "\n".join(lines[:30]))
    assert c["calls"] >= N_CALLS * 0.9
