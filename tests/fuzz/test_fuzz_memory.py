"""The memory fuzzer (fuzz_memory.py), run in a worker subprocess: buffer consumers over random
layouts, exports that outlive their tensor's storage, and deep graphs on a small stack. A
segfault, a sanitizer report or a hang shows as the worker dying, with the call it was running.

MINITORCH_FUZZ_MEMORY_EXAMPLES sets the number of buffer and export calls (2,000 by default),
MINITORCH_FUZZ_DEEP_NODES the autograd nodes spent on deep graphs (10^6 by default, 2*10^5
under the sanitizers), MINITORCH_FUZZ_SEED the seed (as test_fuzz.py).
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import child_env

HERE = Path(__file__).resolve().parent
ARTIFACTS = Path(os.environ.get("MINITORCH_TEST_ARTIFACTS") or HERE.parent / "artifacts")
SEED = os.environ.get("MINITORCH_FUZZ_SEED", "0")
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")
N_CALLS = int(os.environ.get("MINITORCH_FUZZ_MEMORY_EXAMPLES", "2000"))
DEEP_NODES = int(os.environ.get("MINITORCH_FUZZ_DEEP_NODES", "200000" if SANITIZED else "1000000"))


def test_memory_fuzz(tmp_path, record_property, pytestconfig):
    trace = tmp_path / "current_call.txt"
    # LD_PRELOAD and ASAN_OPTIONS pass on: the sanitizer run covers the worker. -X dev: CPython's
    # debug allocator hooks catch a write to a freed object at the call that made it.
    env = child_env(PYTHONHASHSEED=SEED)
    timeout = 120 + N_CALLS * (0.1 if SANITIZED else 0.02) + DEEP_NODES * (5e-4 if SANITIZED else 5e-5)
    cmd = [sys.executable, "-X", "dev", str(HERE / "fuzz_memory.py"), str(N_CALLS), str(trace), SEED,
           str(DEEP_NODES)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        call = trace.read_text(errors="replace") if trace.exists() else "?"
        pytest.fail(f"memory fuzz worker hung (no answer in {timeout:.0f} s) in the call:\n{call}\n"
                    f"stderr:\n{(e.stderr or b'')[-4000:]!r}")
    call = trace.read_text(errors="replace") if trace.exists() else ""
    if proc.returncode != 0 or not proc.stdout.strip():
        code = proc.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        pytest.fail(f"memory fuzz worker died ({how}) in the call:\n{call or '(between calls)'}\n"
                    f"worker stderr (last 8000 characters):\n{proc.stderr[-8000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    b, x, g = (report["counts"][k] for k in ("buffer", "lifetime", "graphs"))
    line = (f"memory fuzz (seed {SEED}): {b['calls']} buffer calls ({b['refused']} refused, {b['read']} read), "
            f"{x['calls']} exports outliving a change, {g['calls']} deep graphs ({g['nodes']} nodes)")
    print("\n" + line)
    record_property("memory_fuzz_calls", b["calls"] + x["calls"] + g["calls"])
    pytestconfig._minitorch_fuzz_lines = getattr(pytestconfig, "_minitorch_fuzz_lines", []) + [line]
    lines = [f"- {f['kind']}: {f['detail'][:600]}\n    {f['call'][:600]!r}" for f in report["failures"]]
    if lines:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"fuzz_memory_seed{SEED}.json").write_text(json.dumps(report, indent=1))
    assert not lines, (f"{report['distinct']} distinct bad outcomes (reproduce one with `cd tests/fuzz && python -c "
                       f"'from fuzz_memory import *; exec(CALL)'`); the first ones:\n" + "\n".join(lines[:30]))
    assert b["calls"] + x["calls"] >= N_CALLS * 0.9
    assert g["nodes"] >= DEEP_NODES * 0.9
