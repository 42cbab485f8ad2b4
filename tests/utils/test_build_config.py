"""minitorch.__config__, backends.cpu and utils.collect_env: read from the build and the process."""
import subprocess
import sys

import pytest

import minitorch

from helpers import child_env


def test_show_and_parallel_info_report_this_process():
    shown = minitorch.__config__.show()
    assert shown.startswith("minitorch built with:")
    assert f"CPU capability usage: {minitorch.backends.cpu.get_cpu_capability()}" in shown
    assert "OpenBLAS" in shown
    before = minitorch.get_num_threads()
    try:
        minitorch.set_num_threads(1)
        assert "at::get_num_threads() : 1\n" in minitorch.__config__.parallel_info()
    finally:
        minitorch.set_num_threads(before)
    assert "ATen parallel backend: OpenMP" in minitorch.__config__.parallel_info()


def test_cpu_capability_is_torchs():
    torch = pytest.importorskip("torch")
    assert minitorch.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    # PyTorch names the same levels from the same CPU flags (its ZVECTOR/SVE levels are not x86)
    assert minitorch.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()


def test_collect_env_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "minitorch.utils.collect_env"], env=child_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Collecting environment information..." in out.stdout
    assert f"PyTorch version: {minitorch.__version__}" in out.stdout
    assert f"Is CUDA available: {minitorch.cuda.is_available()}" in out.stdout
    env = minitorch.utils.collect_env.get_env_info()
    assert env.num_threads == minitorch.get_num_threads()


def test_model_zoo_is_hubs_loader():
    assert minitorch.utils.model_zoo.load_url is minitorch.hub.load_state_dict_from_url
