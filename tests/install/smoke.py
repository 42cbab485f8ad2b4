"""A smoke test of minitorch as pip installs it, run from outside the checkout (make test-wheel,
in CI on a fresh virtual environment): the package comes from site-packages, not the source tree;
every package and module of the tree is there and imports; the emulated CUDA device, a test
tool, is not shipped; the seed network's forward and backward agree with NumPy; the main job
runs from another folder and writes where it is told."""
import importlib
import importlib.util
import os
import pkgutil
import subprocess
import sys
import sysconfig
import tempfile

import numpy as np

import minitorch
from minitorch import nn

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.dirname(os.path.abspath(minitorch.__file__))

# Modules that extend an optional library and are imported only once it is loaded (minitorch's
# einops backend): they import where it is installed, and otherwise fail on that library alone.
NEEDS = {"minitorch._einops.backend": "einops", "minitorch._einops.layers": "einops"}


def tree_modules():
    """minitorch's Python packages and modules as the checkout has them (its built extensions
    depend on how it was built: _C is checked on its own). The tree's files, not
    pkgutil.walk_packages over it: that imports each package by its bare name, and
    minitorch/multiprocessing would be walked as the standard library's."""
    src = os.path.join(CHECKOUT, "minitorch")
    found = set()
    for folder, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py"))]
        package = os.path.relpath(folder, CHECKOUT).replace(os.sep, ".")
        found |= {package if f == "__init__.py" else f"{package}.{f[:-3]}" for f in files if f.endswith(".py")}
    return found


def main() -> None:
    site_dirs = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    assert os.path.realpath(os.path.dirname(PACKAGE)) in site_dirs, f"minitorch not imported from site-packages: {PACKAGE}"
    assert os.getcwd() != CHECKOUT
    installed = {m.name for m in pkgutil.walk_packages(minitorch.__path__, "minitorch.")} | {"minitorch"}
    missing = sorted(tree_modules() - installed)
    assert not missing, f"in the checkout but not installed: {missing}"
    for name in sorted(installed):
        library = NEEDS.get(name)
        if library is None or importlib.util.find_spec(library) is not None:
            importlib.import_module(name)
            continue
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            assert e.name == library, f"{name} needs {e.name}, not only {library}"
        else:
            raise AssertionError(f"{name} imported without {library}")
    assert importlib.util.find_spec("minitorch._C_cuda_emu") is None, "the emulated device is a test tool"
    assert os.path.isfile(os.path.join(PACKAGE, "_C.pyi"))
    assert importlib.util.find_spec("minitorch._C").origin.startswith(PACKAGE)

    # The seed network, forward and backward, against NumPy with the same weights.
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(3, 4)
    y = model(x)
    y.sum().backward()
    p = {k: v.detach().numpy().astype(np.float64) for k, v in model.state_dict().items()}
    h = np.maximum(x.numpy() @ p["0.weight"].T + p["0.bias"], 0)
    np.testing.assert_allclose(y.detach().numpy(), h @ p["2.weight"].T + p["2.bias"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model[2].bias.grad.numpy(), np.full(2, 3.0))
    np.testing.assert_allclose(model[2].weight.grad.numpy(), np.tile(h.sum(0), (2, 1)), rtol=1e-5, atol=1e-5)

    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as out:
        run = subprocess.run([sys.executable, "-m", "minitorch", "--out", out], cwd=cwd, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Op::addmm" in run.stdout, run.stdout
        assert sorted(os.listdir(out)) == ["seed_graph.svg", "seed_trace.json"], os.listdir(out)
        assert os.listdir(cwd) == [], os.listdir(cwd)
    print(f"minitorch {getattr(minitorch, '__version__', '')} from {PACKAGE}: {len(installed)} modules "
          f"import, the seed network matches NumPy, the main job runs; CUDA: "
          f"{'built' if minitorch.cuda.is_built() else 'not built'}")


if __name__ == "__main__":
    main()
