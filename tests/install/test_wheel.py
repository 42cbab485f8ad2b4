"""The wheel pip builds from this checkout holds the whole package: every package and module of
minitorch/ (they are found, not listed), the type stub and _C, and not the emulated CUDA device,
a test tool. (make test-wheel installs it in a fresh environment and runs smoke.py.)"""
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(os.environ.get("MINITORCH_SANITIZE_RUN") == "1",
                                reason="pip and the compilers do not run under the sanitizers' preload")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # The build reuses the checkout's objects (build/obj.*), so this is a relink, not a rebuild.
    env = {k: v for k, v in os.environ.items() if k != "MINITORCH_CUDA_EMU"}
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
                          "-w", str(out), ROOT], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    (path,) = out.glob("minitorch-*.whl")
    with zipfile.ZipFile(path) as z:
        return z.namelist()


def test_every_module_of_the_tree_is_in_the_wheel(wheel):
    # the tree's files, not pkgutil.walk_packages: that imports each package by its bare name,
    # and minitorch/multiprocessing would be walked as the standard library's multiprocessing
    src = os.path.join(ROOT, "minitorch")
    for folder, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py"))]
        rel = os.path.relpath(folder, ROOT)
        for f in files:
            if f.endswith(".py"):  # extension modules: below
                want = f"{rel}/{f}".replace(os.sep, "/")
                assert want in wheel, f"{want} is missing from the wheel"


def test_the_wheel_has_the_extension_and_stub_and_no_emulated_device(wheel):
    assert any(n.startswith("minitorch/_C.") and n.endswith(".so") for n in wheel), wheel
    assert "minitorch/_C.pyi" in wheel
    assert not [n for n in wheel if "_C_cuda_emu" in n]
    assert not [n for n in wheel if n.startswith(("tests/", "csrc/", "cuda/", "benchmarks/", "examples/"))]
