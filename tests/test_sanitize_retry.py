"""The sanitizer run's subprocess.run (tests/conftest.py) runs a child again when its LeakSanitizer
crashed in its own tracer, and only then: a leak report or another failure comes back at once."""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("MINITORCH_SANITIZE_RUN") != "1",
                                reason="the retry is installed only in the sanitizer run")

CHILD = """
import sys
from pathlib import Path
runs = Path(sys.argv[1])
n = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(n))
if n < int(sys.argv[2]):
    sys.stderr.write(sys.argv[3])
    sys.exit(1)
"""
TRACER = ("Tracer caught signal 11: addr=0x4f8 pc=0x1 sp=0x2\\n"
          "==1==LeakSanitizer has encountered a fatal error.\\n")
LEAK = "==1==ERROR: LeakSanitizer: detected memory leaks\\n"


def child(tmp_path, fail_runs, message, text=True):
    runs = tmp_path / "runs"
    env = dict(os.environ, LD_PRELOAD="", ASAN_OPTIONS="", LSAN_OPTIONS="")  # a plain Python child
    r = subprocess.run([sys.executable, "-c", CHILD, str(runs), str(fail_runs), message.replace("\\n", "\n")],
                       capture_output=True, text=text, env=env)
    return r, int(runs.read_text())


def test_tracer_crash_runs_again(tmp_path):
    r, runs = child(tmp_path, 2, TRACER)
    assert (r.returncode, runs) == (0, 2)


def test_tracer_crash_with_bytes_output(tmp_path):
    r, runs = child(tmp_path, 3, TRACER, text=False)
    assert (r.returncode, runs) == (0, 3)


def test_gives_up_after_three_runs(tmp_path):
    r, runs = child(tmp_path, 10, TRACER)
    assert (r.returncode, runs) == (1, 3)
    assert "LeakSanitizer has encountered a fatal error" in r.stderr


def test_leak_report_is_not_run_again(tmp_path):
    r, runs = child(tmp_path, 2, LEAK)
    assert (r.returncode, runs) == (1, 1)
    assert "detected memory leaks" in r.stderr
