"""python -m minitorch as a command-line tool: its flags, its output within 100 columns (or the
width asked), where its two files go, and --device cuda where no CUDA device can be used."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minitorch
from minitorch import nn
from minitorch.profiler import profile

ROOT = Path(minitorch.__file__).resolve().parents[1]
EMU_BUILT = any((ROOT / "minitorch").glob("_C_cuda_emu*.so"))
EMU_RUN = "MINITORCH_CUDA_EMU=1 python -m minitorch --device cuda"


def main_job(*args, cwd, columns="100", emu=False):
    """Runs python -m minitorch in cwd without a terminal; COLUMNS=columns, or unset with None."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = columns
    if emu:
        env["MINITORCH_CUDA_EMU"] = "1"
    return subprocess.run([sys.executable, "-m", "minitorch", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def widest(text):
    return max(len(line) for line in text.split("\n"))


def flat(text):
    """text without its whitespace: a path or a name, wherever the output wrapped it."""
    return "".join(text.split())


def test_help_lists_the_flags(tmp_path):
    out = main_job("--help", cwd=tmp_path, columns="200")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m minitorch")
    for flag in ("--help", "--device {cpu,cuda}", "--out DIR", "--wide", "minitorch-journey"):
        assert flag in out.stdout
    assert widest(out.stdout) <= 100 and not list(tmp_path.iterdir())


def test_a_bad_flag_is_a_usage_error(tmp_path):
    out = main_job("--device", "tpu", cwd=tmp_path)
    assert out.returncode == 2 and "invalid choice: 'tpu'" in out.stderr and not out.stdout


@pytest.mark.parametrize("columns", ["100", "200", "80", None], ids=["100", "200", "80", "no-COLUMNS"])
def test_default_output_fits_the_terminal(tmp_path, columns):
    """Every line, from the model's repr to the dispatch table: within COLUMNS, at most 100 and at
    least 80 (100 where COLUMNS is unset and there is no terminal)."""
    out = main_job(cwd=tmp_path, columns=columns)
    assert out.returncode == 0, out.stderr
    assert widest(out.stdout) <= min(int(columns or 100), 100)
    for text in ("model:", "input x:", "output y = model(x):", "layer by layer", "Event", "Layer",
                 "What it is", "Op::addmm", "The tree of Python::Sequential", "ops dispatched",
                 "Chrome trace written to", "Graph of the network written to", "_dispatch_table('addmm')"):
        assert text in out.stdout
    assert any(line.startswith("└─ Python::Linear") for line in out.stdout.split("\n"))


def test_the_default_folder_is_named_and_holds_both_files(tmp_path):
    out = main_job(cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "minitorch-journey"
    assert "./minitorch-journey/" in out.stdout and flat(str(folder / "seed_trace.json")) in flat(out.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minitorch-journey"]
    assert sorted(p.name for p in folder.iterdir()) == ["seed_graph.svg", "seed_trace.json"]


def test_out_writes_both_files_there_and_nothing_in_the_cwd(tmp_path):
    cwd, folder = tmp_path / "cwd", tmp_path / "made" / "for it"
    cwd.mkdir()
    out = main_job("--out", str(folder), cwd=cwd)
    assert out.returncode == 0, out.stderr
    assert not list(cwd.iterdir())
    trace = json.loads((folder / "seed_trace.json").read_text())
    assert any(e.get("name") == "Op::addmm" for e in trace["traceEvents"])
    assert (folder / "seed_graph.svg").read_text().startswith("<svg")
    for name in ("seed_trace.json", "seed_graph.svg"):
        assert flat(str(folder / name)) in flat(out.stdout)
    assert "minitorch-journey" not in out.stdout


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a CUDA device is usable here")
def test_device_cuda_without_cuda_says_why_and_what_to_do(tmp_path):
    out = main_job("--device", "cuda", "--out", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and not out.stdout and not list(tmp_path.iterdir())
    err = out.stderr.strip()
    assert "Traceback" not in err and "\n\n" not in err and widest(err) <= 100  # one paragraph
    assert "--device cuda, but CUDA is not available" in err and "--device cpu" in err
    assert EMU_RUN in err and "MINITORCH_CUDA_EMU=1 make build" in err
    if os.environ.get("MINITORCH_CUDA_EMU") != "1":
        assert " ".join(minitorch.cuda._unavailable_reason().split()) in " ".join(err.split())


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a CUDA device is usable here")
def test_without_a_gpu_it_says_how_to_see_the_gpu_journey(tmp_path):
    out = main_job("--out", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "on CPU, layer by layer" in out.stdout and "CUDA not available: CPU path shown" in out.stdout
    for step in ("MINITORCH_CUDA_EMU=1 make build", "MINITORCH_CUDA_EMU=1 pip install .", EMU_RUN):
        assert step in out.stdout


def test_wide_gives_the_full_rows(tmp_path):
    out = main_job("--wide", "--device", "cpu", "--out", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.split("\n") if line.lstrip().startswith("Op::linear ")]
    full = "dispatcher entry, composite kernel (written in ops), inputs [[1, "
    assert rows and all(full in r for r in rows)
    header = next(line for line in out.stdout.split("\n") if line.startswith("Event"))
    assert header.split() == ["Event", "Layer", "What", "it", "is", "CPU", "time", "GPU", "time", "Device"]
    assert widest(out.stdout) > 100  # one line per row, however wide


@pytest.mark.skipif(not EMU_BUILT, reason="minitorch/_C_cuda_emu*.so not built (MINITORCH_CUDA_EMU=1 make build)")
@pytest.mark.parametrize("columns", ["100", None], ids=["100", "no-COLUMNS"])
def test_the_gpu_journey_on_the_emulated_device_fits(tmp_path, columns):
    out = main_job("--device", "cuda", "--out", str(tmp_path), cwd=tmp_path, columns=columns, emu=True)
    assert out.returncode == 0, out.stderr
    assert widest(out.stdout) <= 100
    assert "on CUDA, layer by layer" in out.stdout and "emulated CUDA device (CPU)" in out.stdout
    for text in ("Runtime::LaunchKernel", "GPU time", "CUDA:0", "ew_kernel<ew::clamp_min_f32>"):
        assert text in out.stdout


def test_journey_fits_the_width_it_is_given():
    """prof.journey(width=...): the table and the tree within width, nothing lost; without a width,
    the one-line rows notebooks read (a str with an HTML form)."""
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(1, 4)
    with profile(record_shapes=True, profile_memory=True) as prof:
        model(x)
    wide = prof.journey()
    assert hasattr(wide, "_repr_html_") and widest(wide) > 100
    for width in (80, 100, 120):
        text = prof.journey(width=width)
        assert type(text) is str and widest(text) <= width
        assert "The tree of Python::Sequential" in text and "└─ Library::cblas_sgemv" in text
        for name in {e.name for e in prof.events()}:
            assert name in text
        if width >= 100:
            assert "[[1, 4], [8, 4], [8]]" in text  # a description wraps between words
