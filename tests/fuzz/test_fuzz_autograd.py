"""The autograd fuzzer (fuzz_autograd.py) in a worker subprocess: full-range slices, losses with
broadcast targets, NaN and inf into gradients, custom autograd.Functions and in-place ops in the
graph, each compared with PyTorch where it is installed. A crash or a hang names the call it was in.

MINITORCH_FUZZ_EXAMPLES sets the number of calls (2,000 by default), MINITORCH_FUZZ_SEED the seed.
"""
import json
import os
import signal
import subprocess
import sys

import pytest

from helpers import child_env

HERE = os.path.dirname(os.path.abspath(__file__))
N_CALLS = int(os.environ.get("MINITORCH_FUZZ_EXAMPLES", "2000"))
SEED = os.environ.get("MINITORCH_FUZZ_SEED", "0")


def test_autograd_calls_agree_with_pytorch(tmp_path, pytestconfig):
    trace = tmp_path / "current_call.txt"
    env = child_env(PYTHONHASHSEED=SEED)  # LD_PRELOAD and ASAN_OPTIONS pass on: a sanitized run covers it
    timeout = 120 + N_CALLS * (0.2 if "asan" in env.get("LD_PRELOAD", "") else 0.05)
    try:
        proc = subprocess.run([sys.executable, "-X", "dev", os.path.join(HERE, "fuzz_autograd.py"), str(N_CALLS),
                               str(trace), SEED], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"autograd fuzz worker hung ({timeout:.0f} s) in:\n{trace.read_text(errors='replace')}")
    if proc.returncode != 0 or not proc.stdout.strip():
        how = f"signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else f"exit {proc.returncode}"
        pytest.fail(f"autograd fuzz worker died ({how}) in:\n{trace.read_text(errors='replace') or '(between calls)'}\n"
                    f"stderr:\n{proc.stderr[-8000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    c = report["counts"]
    line = (f"autograd fuzz (seed {SEED}): {c['calls']} calls, {c['compared']} compared with PyTorch "
            f"(index {c['index']}, loss {c['loss']}, special {c['special']}, function {c['function']}, "
            f"inplace {c['inplace']}); known differences: "
            + (", ".join(f"{k} ({v['count']})" for k, v in report["known"].items()) or "none"))
    print("\n" + line)
    pytestconfig._minitorch_fuzz_lines = getattr(pytestconfig, "_minitorch_fuzz_lines", []) + [line]
    lines = [f"- [{f['family']}] {f['detail'][:800]}\n{f['call'][:1500]}" for f in report["failures"]]
    assert not lines, f"{report['distinct']} distinct differences; the first ones:\n" + "\n".join(lines[:20])
    assert c["calls"] >= N_CALLS * 0.9
