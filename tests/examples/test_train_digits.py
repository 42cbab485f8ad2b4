"""examples/train_digits.py trains to PyTorch-tutorial accuracy: at least 95% held out."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import child_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="scikit-learn's compiled parts are not built for AddressSanitizer")
def test_train_digits_reaches_95_percent():
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    run = subprocess.run([sys.executable, str(EXAMPLE), "--epochs", "15"], capture_output=True, text=True,
                         timeout=300, env=child_env())
    assert run.returncode == 0, run.stderr[-2000:]
    accuracy = float(re.search(r"held-out accuracy: ([0-9.]+)%", run.stdout).group(1))
    assert accuracy >= 95.0, run.stdout
    assert "loss=" in run.stderr  # the tqdm bar shows the loss
