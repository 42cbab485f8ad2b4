"""valgrind memcheck finds no definitely lost block from minitorch's C code in a short session
(tests/leaks/valgrind_check.sh). Skipped where valgrind is not installed, and in the sanitizer run
(an ASan build cannot run under valgrind)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("valgrind_check.sh")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.skipif(os.environ.get("MINITORCH_SANITIZE_RUN") == "1",
                    reason="the sanitizer build cannot run under valgrind")
def test_valgrind_finds_no_definite_leak_from_our_code(capsys):
    r = subprocess.run(["bash", str(SCRIPT), sys.executable], capture_output=True, text=True,
                       timeout=600)
    with capsys.disabled():
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("valgrind:")]
        print("\n" + (lines[0] if lines else r.stderr[-2000:]))
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
