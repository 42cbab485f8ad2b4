"""The launcher (python -m minitorch.distributed.run) and init_process_group outside it."""
import subprocess
import sys

import pytest

from helpers import child_env

from launching import launch, needs_mpi, ok


@needs_mpi
def test_launcher_sets_torchrun_variables(tmp_path):
    n = 4
    run = ok(launch(tmp_path, n, "env.py", "--flag", "x y"))
    ports = set()
    for r in range(n):
        res = run.result(r)
        assert int(res["RANK"]) == r == int(res["mpi_rank"]) == int(res["LOCAL_RANK"])
        assert int(res["WORLD_SIZE"]) == n == int(res["LOCAL_WORLD_SIZE"])
        assert str(res["MASTER_ADDR"]) == "127.0.0.1"
        ports.add(int(res["MASTER_PORT"]))
        assert list(res["argv"]) == ["--flag", "x y"]
        assert str(res["name"]) == "__main__"
        assert str(res["backend"]) == "mpi"
    assert len(ports) == 1


def _python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True,
                          timeout=timeout)


def test_minitorch_imports_no_mpi():
    p = _python("import sys, minitorch, minitorch.distributed, minitorch.nn.parallel\n"
                "assert 'mpi4py' not in sys.modules\nprint(minitorch.distributed.is_initialized())")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"


@needs_mpi
def test_single_process_without_launcher():
    p = _python("import minitorch, minitorch.distributed as d\n"
                "d.init_process_group('gloo', rank=0, world_size=1)\n"
                "t = minitorch.arange(4.)\nd.all_reduce(t, op=d.ReduceOp.AVG)\n"
                "print(d.get_rank(), d.get_world_size(), t.tolist())\n"
                "try:\n    d.init_process_group()\nexcept ValueError as e:\n    print(e)\n"
                "d.destroy_process_group()\n")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0] == "0 1 [0.0, 1.0, 2.0, 3.0]"
    assert lines[1] == "trying to initialize the default process group twice!"


@needs_mpi
def test_world_without_launcher_explains():
    # without the launcher, the processes meet through a store: env:// needs MASTER_ADDR (PyTorch's error)
    env = {k: v for k, v in child_env().items() if k not in ("MASTER_ADDR", "MASTER_PORT")}
    p = subprocess.run([sys.executable, "-c", "import minitorch.distributed as d\n"
                        "d.init_process_group('mpi', rank=1, world_size=2)"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode != 0
    assert ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
            "MASTER_ADDR expected, but not set") in p.stderr
    # a process whose MPI already started alone cannot join a bigger world: the launcher, or a store first
    p = _python("import minitorch.distributed as d\nd.init_process_group('mpi', rank=0, world_size=1)\n"
                "d.destroy_process_group()\nd.init_process_group('mpi', rank=1, world_size=2)")
    assert p.returncode != 0
    assert "python -m minitorch.distributed.run --nproc-per-node 2" in p.stderr
    assert "give them a store to meet through" in p.stderr


@needs_mpi
@pytest.mark.parametrize("use_env", [False, True])
def test_legacy_launch_passes_local_rank(tmp_path, use_env):
    n = 2
    run = ok(launch(tmp_path, n, "legacy_launch.py", "a", "b", via="launch",
                    launcher_args=["--use-env"] if use_env else []))
    assert "torch.distributed.launch is deprecated" in run.stderr  # PyTorch's FutureWarning
    for r in range(n):
        res = run.result(r)
        assert int(res["local_rank_env"]) == r
        assert int(res["local_rank_arg"]) == (-1 if use_env else r)
        assert list(res["rest"]) == ["a", "b"]


def test_legacy_launch_refuses_no_python_without_use_env():
    from minitorch.distributed import launch as legacy

    with pytest.raises(ValueError, match="you must also set the '--use-env' flag"):
        legacy.launch(legacy.parse_args(["--no-python", "--nproc-per-node", "2", "prog"]))
