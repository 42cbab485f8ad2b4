"""Submodules that `import minitorch` leaves for first use (PEP 562's module __getattr__):
minitorch.distributions, minitorch.distributed (and nn.parallel's DistributedDataParallel, which
imports it), minitorch.func and minitorch.vmap. Each is reachable as an attribute, by `import
minitorch.x`, by `from minitorch.x import y` and by `from minitorch import x`, and listed by dir()."""
import subprocess
import sys

import pytest

from helpers import child_env

LAZY = ["minitorch.distributions", "minitorch.distributed", "minitorch.func", "minitorch.nn.parallel.distributed"]


def run(code):
    """code in a fresh interpreter (this one has imported the lazy modules already); its stdout."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(),
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_minitorch_leaves_them_unloaded():
    out = run(f"import sys, minitorch; print([m for m in {LAZY!r} if m in sys.modules])")
    assert out.strip() == "[]"


@pytest.mark.parametrize("code", [
    "import minitorch; assert minitorch.distributions.Normal(0.0, 1.0).sample().shape == ()",
    "import minitorch.distributions.kl as kl; assert callable(kl.kl_divergence)",
    "from minitorch.distributions import Categorical, constraints; assert Categorical and constraints",
    "from minitorch import distributions; assert distributions.Bernoulli",
    "import minitorch; assert minitorch.distributed.is_initialized() is False",
    "import minitorch.distributed as dist; assert dist.is_available() in (True, False)",
    "import minitorch; assert minitorch.nn.parallel.DistributedDataParallel.__name__ == 'DistributedDataParallel'",
    "from minitorch.nn.parallel import DistributedDataParallel; assert DistributedDataParallel",
    "import minitorch; assert minitorch.nn.parallel.distributed.DistributedDataParallel",
    "import minitorch; x = minitorch.ones(3, 2); assert minitorch.vmap(lambda r: r.sum())(x).tolist() == [2.0] * 3",
    "from minitorch import vmap; from minitorch.func import vmap as v; assert vmap is v",
    "import minitorch.func; assert minitorch.func.vmap is minitorch.vmap",
])
def test_reachable_on_first_use(code):
    run(code)


def test_dir_lists_them_and_unknown_names_raise():
    out = run("import minitorch; d = dir(minitorch); print(all(n in d for n in ('distributions', 'distributed', "
              "'func', 'vmap', 'nn', 'Tensor')))")
    assert out.strip() == "True"
    import minitorch

    with pytest.raises(AttributeError, match="module 'minitorch' has no attribute 'no_such_name'"):
        minitorch.no_such_name
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        minitorch.nn.parallel.no_such_name
