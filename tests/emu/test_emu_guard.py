"""The emulated device's memory guard (cuda/emu/guard.cc): host code that reads or writes a CUDA
tensor's memory directly (here through ctypes on data_ptr()) dies with one line naming the block,
as it would crash or read garbage on a GPU, while kernels, copies and cuBLAS calls still reach it;
MINITORCH_EMU_GUARD=0 turns it off. Each case runs in a subprocess, since the guard aborts.
Under ASan the guard is off (device blocks stay on ASan's heap), so these skip there."""
import importlib.util
import os
import re
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("minitorch._C_cuda_emu") is None,
                       reason="the emulated device (minitorch._C_cuda_emu) is not built"),
    pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                       reason="the guard is off under AddressSanitizer"),
]

# Device work of each kind first (a kernel, copies both ways, a cuBLAS product, a CUB sort),
# which must all work, then the host access given as argv[1].
SCRIPT = r"""
import ctypes, sys
import minitorch
a = minitorch.arange(12, dtype=minitorch.float32).reshape(3, 4).to("cuda")
b = (a @ a.T + 1).sum(1)
s = a.flatten().sort(descending=True).values
print("work", b.tolist(), s[:2].tolist(), a.cpu().sum().item(), flush=True)
p = a.data_ptr() + 4
print("addr", hex(p), flush=True)
if sys.argv[1] == "read":
    print("value", ctypes.c_float.from_address(p).value, flush=True)
elif sys.argv[1] == "write":
    ctypes.memset(p, 0, 4)
    print("value", a[0, 1].item(), flush=True)
else:  # a host fault outside device memory goes to the handler before ours
    ctypes.string_at(0)
"""


def run(access, **env):
    e = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    e.update(MINITORCH_CUDA_EMU="1", PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT, access], capture_output=True,
                          text=True, env=e, timeout=120, cwd=ROOT)


WORK = "work [117.0, 381.0, 645.0] [11.0, 10.0] 66.0"


@pytest.mark.parametrize("access", ["read", "write"])
def test_host_access_to_device_memory_dies_naming_the_block(access):
    r = run(access)
    assert r.returncode == -signal.SIGABRT, r.stdout + r.stderr
    assert WORK in r.stdout and "value" not in r.stdout
    addr = re.search(r"addr (0x[0-9a-f]+)", r.stdout).group(1)
    m = re.search(r"minitorch CUDA emulation: host code touched device memory at (0x[0-9a-f]+) "
                  r"\(block of (\d+) bytes on cuda:0, offset (\d+)\)", r.stderr)
    assert m, r.stderr
    assert int(m.group(1), 16) == int(addr, 16) and int(m.group(3)) < int(m.group(2))
    assert "Python" in r.stderr  # the backtrace follows (the interpreter's frames)


def test_guard_off():
    r = run("read", MINITORCH_EMU_GUARD="0")
    assert r.returncode == 0, r.stderr
    assert WORK in r.stdout and "value 1.0" in r.stdout


def test_faults_elsewhere_reach_the_previous_handler():
    r = run("null")
    assert r.returncode == -signal.SIGSEGV, r.stdout + r.stderr
    assert "Fatal Python error: Segmentation fault" in r.stderr  # faulthandler's
    assert "touched device memory" not in r.stderr
