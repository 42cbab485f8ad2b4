"""What every end-to-end program shares: weights copied from PyTorch's model into minitorch's,
tensors to NumPy, and the comparison of two programs' results.

A program is written once as `program(torch, init=None, **options)`, the way a PyTorch user writes
a script, with the library passed in as `torch`. It builds its model and calls
`start_from(torch, model, init, result)`: with init=None (the PyTorch run) that records the model's initial
state_dict as NumPy arrays under result["init"]; with the arrays (the minitorch run) it loads them,
so both runs start from the same weights. Data and every random draw that has to agree between the
runs come from NumPy; draws from the library's own generator (dropout masks, multinomial, randperm)
are compared by statistics or structure instead: a program returns those under result["own"], which
assert_same_results leaves out. run_both runs PyTorch first and minitorch second on the same
options, so a missing minitorch API raises from the minitorch run.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import socket
import subprocess
import sys
from typing import Callable, Iterator

import numpy as np
import pytest

import minitorch

# float32 programs of a few steps: differences in summation order grow with each step.
RTOL = 2e-4
ATOL = 2e-5
UNPAIRED = {"init", "own"}  # result keys that differ between the libraries by design


def numpy_of(t) -> np.ndarray:
    """A tensor of either library as a NumPy copy (detached, on the CPU)."""
    return np.array(t.detach().cpu().numpy(), copy=True)


def state_numpy(model) -> dict:
    """model.state_dict() as {name: NumPy array}."""
    return {k: numpy_of(v) for k, v in model.state_dict().items()}


def split_bias_before_norm(state: dict, biases) -> tuple[dict, dict]:
    """(state without `biases` and the running means, those): the bias of a layer that feeds a
    BatchNorm gets a gradient of rounding noise only (the batch mean takes it out), which Adam
    scales into full steps, so such biases and the running means they move differ between the
    libraries by design. The second dict goes under result["own"]; the first is compared."""
    state = dict(state)
    noisy = {k: state.pop(k) for k in list(state) if k in biases or k.endswith("running_mean")}
    return state, noisy


def free_port() -> int:
    """A loopback port free now (a script's MASTER_PORT, so that concurrent runs do not collide)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_EMULATED_GPUS: list = []


def _emulated_gpus(env: dict) -> bool:
    """Whether a child with env sees two emulated GPUs (asked once per session)."""
    if not _EMULATED_GPUS:
        probe = "import sys, minitorch; sys.exit(0 if minitorch.cuda.device_count() >= 2 else 1)"
        _EMULATED_GPUS.append(subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                                             timeout=120).returncode == 0)
    return _EMULATED_GPUS[0]


def run_script(args: list, cwd, timeout: float = 180, gpus: bool = False, **env: str) -> subprocess.CompletedProcess:
    """`python args...` in cwd with this checkout's minitorch, one thread, the two emulated GPUs
    when gpus, and env; fails the test with the output when it exits non-zero."""
    from helpers import child_env

    extra = dict(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1", **env)
    if gpus:
        extra.update(MINITORCH_CUDA_EMU="1", MINITORCH_CUDA="1")
        if not _emulated_gpus(child_env(**extra)):
            pytest.skip("the emulated CUDA device is not built (make test-cpu's configuration)")
    proc = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=child_env(**extra), capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


needs_distributed = pytest.mark.skipif(
    not minitorch.distributed.is_available() or os.environ.get("MINITORCH_SANITIZE_RUN") == "1",
    reason="minitorch.distributed needs mpi4py and an MPI library")


def start_from(torch, model, init: dict | None, result: dict) -> None:
    """Loads `init` (a state_dict as NumPy arrays) into model, or, with init=None, records the
    model's own initial state in result["init"]. model may be a dict of named modules (a GAN's
    generator and critic); init is then a dict of their states."""
    models = model if isinstance(model, dict) else {None: model}
    if init is None:
        states = {name: state_numpy(m) for name, m in models.items()}
        result["init"] = states if isinstance(model, dict) else states[None]
        return
    for name, m in models.items():
        state = init if name is None else init[name]
        m.load_state_dict({k: torch.tensor(v) for k, v in state.items()})


def fit(optimizer, loss_fn: Callable, steps: int) -> list:
    """`steps` plain training steps (zero_grad, loss_fn().backward(), step); the losses as floats."""
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_both(program: Callable, mt_options: dict | None = None, **options) -> tuple[dict, dict]:
    """(PyTorch's result, minitorch's result) of program with the same options (and for minitorch
    those of mt_options too) and the same initial weights."""
    torch = pytest.importorskip("torch")
    # One thread: these models are tiny, and on a busy machine PyTorch's pool costs ~20 ms a backward.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ref = program(torch, **options)
    finally:
        torch.set_num_threads(threads)
    got = program(minitorch, init=ref.get("init"), **{**options, **(mt_options or {})})
    return ref, got


def assert_same_results(got, ref, *, rtol: float = RTOL, atol: float = ATOL, path: str = "result") -> None:
    """got equals ref key by key and item by item: arrays and floats within rtol/atol (integers and
    strings exactly); a key only ref has is a failure. "init" (the input) and "own" (draws from each
    library's own generator) are not compared."""
    if isinstance(ref, Printed):
        assert_same_printed(got, ref, rtol=rtol, atol=atol, path=path)
    elif isinstance(ref, dict):
        missing = set(ref) - set(got) - UNPAIRED
        assert not missing, f"{path}: minitorch's result lacks {sorted(missing)}"
        for key in ref:
            if key not in UNPAIRED:
                assert_same_results(got[key], ref[key], rtol=rtol, atol=atol, path=f"{path}[{key!r}]")
    elif isinstance(ref, (list, tuple)) and not (ref and isinstance(ref[0], (int, float, np.number))):
        assert len(got) == len(ref), f"{path}: {len(got)} items, PyTorch's {len(ref)}"
        for k, (g, r) in enumerate(zip(got, ref)):
            assert_same_results(g, r, rtol=rtol, atol=atol, path=f"{path}[{k}]")
    else:
        g, r = np.asarray(got), np.asarray(ref)
        assert g.shape == r.shape, f"{path}: shape {g.shape}, PyTorch's {r.shape}"
        if r.dtype.kind in "fc":
            np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(g, r, err_msg=path)


def compare_program(program: Callable, *, rtol: float = RTOL, atol: float = ATOL, mt_options: dict | None = None,
                    **options) -> tuple[dict, dict]:
    """Runs program under both libraries (run_both) and asserts the same results; returns both."""
    ref, got = run_both(program, mt_options, **options)
    assert_same_results(got, ref, rtol=rtol, atol=atol)
    return ref, got


def compare_in_folders(program: Callable, tmp_path, option: str, **kwargs) -> tuple[dict, dict]:
    """compare_program for a program that writes files: each library gets a new folder of its
    own under tmp_path ("pt", "mt") as the option named `option`."""
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    return compare_program(program, mt_options={option: tmp_path / "mt"}, **{option: tmp_path / "pt"}, **kwargs)


class Printed(list):
    """The lines a program printed (printed_lines), compared by assert_same_results as text whose
    decimal numbers may differ within the tolerance: minitorch sums float32 in double where PyTorch
    sums in float32 lanes, so a 5th decimal or a sum printed as 1.0000 against 1. may differ."""


_DECIMAL = re.compile(r"(-?\d+\.\d*(?:e[-+]?\d+)?)")


@contextlib.contextmanager
def captured_run(torch, seed: int = 0) -> Iterator[io.StringIO]:
    """A program run as in a fresh process seeded with seed (its first shuffles and draws agree
    between the libraries), what it prints captured into the StringIO it yields."""
    torch.manual_seed(seed)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out


def printed_lines(out) -> Printed:
    """What a program printed into the StringIO out, line by line; the library's name
    (minitorch.Size, minitorch.float32) and objects' addresses (<PowBackward0 object at 0x...>)
    differ by design."""
    text = re.sub(r"\bat 0x[0-9a-f]+", "at 0x", out.getvalue().replace("minitorch", "torch"))
    return Printed(text.splitlines())


def assert_same_printed(got: list, ref: list, *, rtol: float, atol: float, path: str) -> None:
    """Line by line: the same text around the decimals, the decimals within rtol/atol (a printed
    number is rounded, so also within one unit of its last printed digit)."""
    assert len(got) == len(ref), f"{path}: {len(got)} lines, PyTorch's {len(ref)}"
    for k, (g, r) in enumerate(zip(got, ref)):
        gs, rs = _DECIMAL.split(g), _DECIMAL.split(r)
        assert gs[0::2] == rs[0::2], f"{path}[{k}]: {g!r}, PyTorch's {r!r}"
        for gn, rn in zip(gs[1::2], rs[1::2]):
            digits = len(rn.split(".")[1].split("e")[0])
            unit = 10.0 ** -digits * (10.0 ** int(rn.split("e")[1]) if "e" in rn else 1.0)
            assert abs(float(gn) - float(rn)) <= atol + rtol * abs(float(rn)) + unit, \
                f"{path}[{k}]: {g!r}, PyTorch's {r!r}"
