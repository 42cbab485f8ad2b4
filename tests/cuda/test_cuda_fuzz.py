"""The fuzzer's CUDA mode (tests/fuzz/fuzz_cuda.py): random, mostly wrong calls, each run on CPU
tensors and on CUDA copies of them (same values, views and strides) in a worker subprocess;
the outcomes must agree (the same exception class, or equal results on the device), and mixed
CPU/CUDA calls must raise PyTorch's same-device error where PyTorch does.

MINITORCH_FUZZ_CUDA_EXAMPLES sets the number of calls (1,500 by default, about 10 s on the emulated
device; e.g. 5000 for a hunt), MINITORCH_FUZZ_SEED the seed, as for the CPU fuzzer.
"""
import json
import os
import sys

import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
from test_fuzz import ARTIFACTS, SEED, run_worker  # noqa: E402

N_CALLS = int(os.environ.get("MINITORCH_FUZZ_CUDA_EXAMPLES", "1500"))


def test_random_calls_agree_on_cpu_and_cuda(tmp_path, record_property, pytestconfig):
    report = run_worker(N_CALLS, tmp_path, ["--cuda"])
    c = report["counts"]
    line = (f"CUDA fuzz (seed {SEED}): {c['calls']} calls, {c['raised']} raised, {c['returned']} returned "
            f"({c['checked']} equal to the CPU's), {c['mixed']} with mixed devices, "
            f"{len(report['notes'])} messages that differ")
    print("\n" + line)
    for n in report["notes"]:
        print(f"  message differs: {n['call'][:300]}\n    {n['detail']}")
    record_property("fuzz_cuda_calls", c["calls"])
    pytestconfig._minitorch_fuzz_lines = getattr(pytestconfig, "_minitorch_fuzz_lines", []) + [line]
    lines = [f"- {f['kind']}: [cuda] {f['call'][:600]}\n    {f['detail'][:600]}" for f in report["failures"]]
    if lines:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"fuzz_cuda_seed{SEED}.json").write_text(json.dumps(report, indent=1))
    assert not lines, f"{report['distinct']} distinct disagreements between CPU and CUDA; the first ones:\n" + "\n".join(lines[:30])
    assert c["calls"] >= N_CALLS * 0.9
