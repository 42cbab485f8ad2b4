"""Test set-up shared by every layer: hypothesis profiles, poisoned allocations, devices."""
import os
import signal
import sys

import pytest
from hypothesis import HealthCheck, settings

import minitorch
from no_torch import block_torch_if_asked

# A suite started in the background of a shell without job control (`cmd &` in a script) inherits
# SIGINT ignored, and so would every child it starts: the tests of Ctrl-C (a rank's or a DataLoader's
# KeyboardInterrupt) need it as a terminal has it. A handler here is reset to the default in children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The sanitizer run cannot load PyTorch: `import torch` fails there (tests/no_torch.py).
block_torch_if_asked()

if os.environ.get("MINITORCH_SANITIZE_RUN") == "1":
    import subprocess

    _run = subprocess.run
    _LSAN_CRASH = "LeakSanitizer has encountered a fatal error"

    def _run_past_lsan_tracer_crashes(*args, check=False, **kwargs):
        """subprocess.run, again when the child's LeakSanitizer crashed in its own exit-time thread
        tracer ("Tracer caught signal 11"; google/sanitizers#1353, a race in the sanitizer runtime,
        known with threads that end as the process does, as OpenBLAS's server threads do). It
        reports no leak and says nothing about our code. After three such crashes in a row the
        child runs once more without the leak check (ASan and UBSan stay on). `check` is applied
        here, after the retries: passed through, the first crash raised before any retry (CI, a
        test's child with check=True). A leak report or any other failure is returned as it came."""
        for attempt in range(4):
            if attempt == 3:
                env = dict(kwargs.get("env") or os.environ)
                env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
                kwargs = {**kwargs, "env": env}
            result = _run(*args, **kwargs)
            out = [x if isinstance(x, str) else x.decode("utf-8", "replace")
                   for x in (result.stdout, result.stderr) if isinstance(x, (str, bytes))]
            if result.returncode == 0 or not any(_LSAN_CRASH in x and "Tracer caught signal" in x for x in out):
                break
            print(f"\n(LeakSanitizer's tracer crashed in a child process; running it again: {result.args!r:.200})",
                  file=sys.__stderr__)
        if check:
            result.check_returncode()
        return result

    subprocess.run = _run_past_lsan_tracer_crashes

    # multiprocessing's spawn and forkserver children start through util.spawnv_passfds and exit
    # normally, so LeakSanitizer's exit-time tracer runs in them too and hits the same race (CI
    # saw mp.spawn's process 0 abort so, "Tracer caught signal 11", no leak reported). Their
    # failures reach the test only as an exit signal, with nothing to tell the race from a leak,
    # so they run without the leak check; ASan and UBSan stay on in them, and every code path they
    # run is leak-checked in the test process itself.
    import multiprocessing.util

    _spawnv_passfds = multiprocessing.util.spawnv_passfds

    def _spawnv_passfds_without_leak_check(*args, **kwargs):
        saved = os.environ.get("ASAN_OPTIONS")
        os.environ["ASAN_OPTIONS"] = (saved + ":" if saved else "") + "detect_leaks=0"
        try:
            return _spawnv_passfds(*args, **kwargs)
        finally:
            if saved is None:
                os.environ.pop("ASAN_OPTIONS")
            else:
                os.environ["ASAN_OPTIONS"] = saved

    multiprocessing.util.spawnv_passfds = _spawnv_passfds_without_leak_check

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("MINITORCH_HYPOTHESIS", "ci"))


@pytest.fixture(autouse=True, scope="session")
def poisoned_allocations():
    """Fresh CPU memory is 0xff bytes (NaN / -1), so an output element a kernel never wrote
    shows up as a mismatch instead of passing by luck on zeroed memory."""
    minitorch._C._set_alloc_poison(True)
    yield
    minitorch._C._set_alloc_poison(False)


def available_devices():
    devs = ["cpu"]
    cuda = getattr(minitorch, "cuda", None)
    if cuda is not None and cuda.is_available():
        devs.append("cuda")
    return devs


@pytest.fixture(params=available_devices())
def device(request):
    """Runs a test on every device present: cpu, and cuda where a GPU is."""
    return request.param


@pytest.fixture(params=["avx512", "portable"])
def vmath_path(request):
    """Runs a test of float32 exp or log through their AVX-512 loops (skipped where the CPU
    has no AVX-512) and through vmath.h's portable ones, which AVX2-only CPUs run; restores the
    default (AVX-512 where the CPU has it)."""
    on = minitorch._C._set_vmath_avx512(request.param == "avx512")
    if request.param == "avx512" and not on:
        pytest.skip("the CPU has no AVX-512")
    yield request.param
    minitorch._C._set_vmath_avx512(True)


@pytest.fixture(params=[1, 2])
def threads(request):
    """Runs the test at 1 and at 2 threads, and restores the count."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(request.param)
    yield request.param
    minitorch.set_num_threads(before)


_workers_with_leaks = []  # (xdist's controller) the workers whose leak check found leaks


def _lsan(name):
    import ctypes

    return getattr(ctypes.CDLL(None), name, None)


def pytest_sessionfinish(session):
    """Under the sanitizers with pytest-xdist, each worker checks for leaks here, as its session ends,
    and hands the result to the controller in its workeroutput: a worker's own exit status is not
    seen by xdist, so a leak found only at its exit (below) would be printed and the run still pass."""
    config = session.config
    if os.environ.get("MINITORCH_SANITIZE_RUN") != "1":
        return
    if not hasattr(config, "workeroutput"):  # the controller, or a run without workers
        if _workers_with_leaks:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    check = _lsan("__lsan_do_recoverable_leak_check")
    if check is not None:
        config.workeroutput["lsan_leaks"] = bool(check())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(xdist's controller) a worker is done: remember whether its leak check found leaks."""
    if getattr(node, "workeroutput", {}).get("lsan_leaks"):
        _workers_with_leaks.append(node.gateway.id)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _workers_with_leaks:
        terminalreporter.write_line(f"LeakSanitizer found leaks in worker(s) {', '.join(_workers_with_leaks)}: "
                                    "their reports are above", red=True)


def pytest_unconfigure(config):
    """Under the sanitizers, the leak check runs here, once the suite is done and every thread is
    idle, instead of at process exit: there LeakSanitizer's thread tracer can crash as OpenBLAS's
    threads end ("Tracer caught signal 11", google/sanitizers#1353; it ended a fresh-check's
    test-sanitize after all of its tests had passed). The check is the same one (leaks still end
    the run with an error), and the exit-time check then does not run again."""
    if os.environ.get("MINITORCH_SANITIZE_RUN") != "1":
        return
    check = _lsan("__lsan_do_leak_check")
    if check is not None:
        check()
