"""distributed.elastic.multiprocessing.errors: @record writes torchelastic's error file, as PyTorch's."""
import json

import pytest

from launching import launch, needs_mpi
from minitorch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure, record

LIBS = ["minitorch", "torch"]


def errors_module(lib):
    if lib == "torch":
        pytest.importorskip("torch")
        from torch.distributed.elastic.multiprocessing import errors
        return errors
    from minitorch.distributed.elastic.multiprocessing import errors
    return errors


@pytest.mark.parametrize("lib", LIBS)
def test_record_writes_the_error_file_and_raises(tmp_path, monkeypatch, lib):
    errors = errors_module(lib)
    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))

    @errors.record
    def main(x):
        raise ValueError(f"bad batch {x}")

    with pytest.raises(ValueError, match="bad batch 3"):
        main(3)
    data = json.loads(path.read_text())
    assert data["message"]["message"] == "ValueError: bad batch 3"
    assert sorted(data["message"]["extraInfo"]) == ["py_callstack", "timestamp"]
    assert "raise ValueError" in data["message"]["extraInfo"]["py_callstack"]
    assert int(data["message"]["extraInfo"]["timestamp"]) > 0


@pytest.mark.parametrize("lib", LIBS)
def test_record_passes_results_and_exits(tmp_path, monkeypatch, lib):
    errors = errors_module(lib)
    monkeypatch.delenv("TORCHELASTIC_ERROR_FILE", raising=False)
    assert errors.record(lambda a, b=1: a + b)(2, b=5) == 7
    assert errors.record(lambda: exit(0))() is None  # exit(0) is a success
    with pytest.raises(SystemExit):
        errors.record(lambda: exit(3))()
    with pytest.raises(KeyError):  # without an error file, only the exception
        errors.record(lambda: {}["k"])()
    assert list(tmp_path.iterdir()) == []


def test_child_failed_error_copies_the_first_failure(tmp_path, monkeypatch):
    child = tmp_path / "child.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(child))
    with pytest.raises(RuntimeError):
        record(lambda: (_ for _ in ()).throw(RuntimeError("rank 1 diverged")))()
    failure = ProcessFailure(local_rank=1, pid=123, exitcode=1, error_file=str(child))
    assert failure.message == "RuntimeError: rank 1 diverged"
    parent = tmp_path / "parent.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(parent))

    def launcher():
        raise ChildFailedError("train.py", {1: failure})

    with pytest.raises(ChildFailedError, match="train.py FAILED"):
        record(launcher)()
    assert json.loads(parent.read_text())["message"]["message"] == "RuntimeError: rank 1 diverged"
    assert ChildFailedError("x", {1: failure}).get_first_failure() == (1, failure)


@needs_mpi
def test_launcher_gives_each_process_an_error_file(tmp_path):
    """As torchrun: TORCHELASTIC_ERROR_FILE per process, which @record fills; the launcher reports
    the root cause with its traceback and copies the file to its own TORCHELASTIC_ERROR_FILE."""
    own = tmp_path / "launcher_error.json"
    logs = tmp_path / "logs"
    run = launch(tmp_path, 2, "elastic_error.py", "record", launcher_args=["--log-dir", str(logs), "--rdzv-id", "job7"],
                 env={"TORCHELASTIC_ERROR_FILE": str(own)})
    assert run.returncode == 1, run.stderr
    files = {f.parent.name: f for f in logs.glob("job7_*/attempt_0/*/error.json")}
    # record's fault handler opens every process's file; only the failed one wrote into it
    assert "1" in files and all(files[r].read_text() == "" for r in files if r != "1")
    data = json.loads(files["1"].read_text())
    assert data["message"]["message"] == "ValueError: rank 1 found a bad batch"
    assert "raise ValueError" in data["message"]["extraInfo"]["py_callstack"]
    copied = json.loads(own.read_text())
    assert copied["message"]["message"] == "ValueError: rank 1 found a bad batch"
    assert copied["message"]["errorCode"] == 1
    err = run.stderr
    assert "elastic_error.py FAILED" in err and "Root Cause (first observed failure):" in err
    assert "rank      : 1 (local_rank: 1)" in err and "exitcode  : 1" in err
    assert f"error_file: {files['1']}" in err and "raise ValueError" in err


@needs_mpi
def test_launcher_reports_a_failure_without_record(tmp_path):
    run = launch(tmp_path, 2, "elastic_error.py", "plain")
    assert run.returncode == 1
    assert "error_file: <N/A>" in run.stderr
    assert "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html" in run.stderr
    assert "ValueError: rank 1 found a bad batch" in run.stderr  # the bootstrap's traceback
