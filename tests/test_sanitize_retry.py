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


def test_a_fourth_run_goes_without_the_leak_check(tmp_path):
    """after three tracer crashes in a row the child runs once more with detect_leaks=0 (a child
    that fails every run, whatever its options, fails so)"""
    r, runs = child(tmp_path, 10, TRACER)
    assert (r.returncode, runs) == (1, 4)
    assert "LeakSanitizer has encountered a fatal error" in r.stderr
    seen = tmp_path / "options"
    code = ("import os, sys; open(sys.argv[1], 'a').write(os.environ.get('ASAN_OPTIONS', '') + '|');"
            "sys.exit(0 if 'detect_leaks=0' in os.environ.get('ASAN_OPTIONS', '') else "
            "sys.stderr.write(sys.argv[2]) or 1)")
    r = subprocess.run([sys.executable, "-c", code, str(seen), TRACER.replace("\\n", "\n")],
                       capture_output=True, text=True, env=dict(os.environ, LD_PRELOAD="", ASAN_OPTIONS="x=1"))
    assert r.returncode == 0
    assert seen.read_text().split("|")[:4] == ["x=1", "x=1", "x=1", "x=1:detect_leaks=0"]


def test_check_applies_after_the_retries(tmp_path):
    """check=True raised on the first crash, before any retry (CI: a child with check=True)"""
    runs = tmp_path / "runs"
    env = dict(os.environ, LD_PRELOAD="", ASAN_OPTIONS="", LSAN_OPTIONS="")
    r = subprocess.run([sys.executable, "-c", CHILD, str(runs), "3", TRACER.replace("\\n", "\n")],
                       capture_output=True, text=True, env=env, check=True)
    assert (r.returncode, int(runs.read_text())) == (0, 3)
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "r2"), "2", LEAK.replace("\\n", "\n")],
                       capture_output=True, text=True, env=env, check=True)


def test_leak_report_is_not_run_again(tmp_path):
    r, runs = child(tmp_path, 2, LEAK)
    assert (r.returncode, runs) == (1, 1)
    assert "detected memory leaks" in r.stderr
