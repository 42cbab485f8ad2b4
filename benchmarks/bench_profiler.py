"""The profiler's cost: the seed network's forward with the profiler off and on, minitorch beside PyTorch.

Off, minitorch pays one branch per dispatcher entry, per BLAS call and per allocation (a load of a
flag or of the allocator's observer), and one _C._trace_enabled() call per nn.Module call; the last
line estimates that share of a forward. On, every event is a timestamped record in C. Prints
per-forward times (best of several repeats) and ratios; quote the ratios, machines are noisy.
Run: python benchmarks/bench_profiler.py [--quick]

--callgrind counts instructions instead (valgrind; about two minutes): it builds a _C whose profiler
checks are compiled out (MINITORCH_NO_TRACE=1) into a temporary folder and counts the seed
forward's instructions there and in this checkout's _C, profiler off and on. Counts do not
depend on the machine's load, so the off-path cost is measured, not estimated.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import timeit

import minitorch
from minitorch import profiler as mprof

try:
    import torch
    import torch.profiler as tprof
except ImportError:
    torch = None

REPEATS = 3 if "--quick" in sys.argv else 7
NUMBER = 200


def per_call_us(fn, number=NUMBER):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=REPEATS)) / number * 1e6


def on_us(lib_profile, forward, **kwargs):
    """A forward's time inside one long recording (the recording's start and stop are not counted)."""
    with lib_profile(**kwargs):
        return per_call_us(forward)


def seed(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)), lib.randn(1, 4)


def main() -> None:
    model, x = seed(minitorch)
    rows = [("minitorch", per_call_us(lambda: model(x)),
             on_us(mprof.profile, lambda: model(x), activities=[mprof.ProfilerActivity.CPU]),
             on_us(mprof.profile, lambda: model(x), activities=[mprof.ProfilerActivity.CPU],
                   record_shapes=True, profile_memory=True))]
    if torch is not None:
        tmodel, tx = seed(torch)
        with torch.no_grad():
            pass
        rows.append(("PyTorch", per_call_us(lambda: tmodel(tx)),
                     on_us(tprof.profile, lambda: tmodel(tx), activities=[tprof.ProfilerActivity.CPU]),
                     on_us(tprof.profile, lambda: tmodel(tx), activities=[tprof.ProfilerActivity.CPU],
                           record_shapes=True, profile_memory=True)))
    print(f"{'seed forward, us':<18} {'off':>9} {'on':>9} {'on+shapes+mem':>14} {'on/off':>7} {'full/off':>9}")
    for name, off, on, full in rows:
        print(f"{name:<18} {off:9.2f} {on:9.2f} {full:14.2f} {on / off:7.2f} {full / off:9.2f}")
    if len(rows) == 2:
        (_, m_off, m_on, m_full), (_, t_off, t_on, t_full) = rows
        print(f"minitorch/PyTorch  {m_off / t_off:9.2f} {m_on / t_on:9.2f} {m_full / t_full:14.2f}")

    # The off path: 4 Module calls each ask _C._trace_enabled(); C's branches cost about a cycle each.
    check = per_call_us(minitorch._C._trace_enabled, number=20000)
    off = rows[0][1]
    print(f"\noff-path cost: 4 x _C._trace_enabled() = {4 * check:.3f} us of a {off:.2f} us forward "
          f"({400 * check / off:.1f}%); the 12 dispatcher, 2 BLAS and 4 allocator branches are not "
          "measurable by timing (--callgrind counts them)")


# Run under callgrind: the seed forward N times (after a warm-up), profiler off or on.
COUNT_SCRIPT = """
import sys, minitorch
from minitorch import _C
print(minitorch.__file__)
minitorch.manual_seed(0)
m = minitorch.nn.Sequential(minitorch.nn.Linear(4, 8), minitorch.nn.ReLU(), minitorch.nn.Linear(8, 2))
x = minitorch.randn(1, 4)
for _ in range(100):
    m(x)
if sys.argv[1] == "on":
    _C._trace_start(record_shapes=sys.argv[3] == "shapes")
for _ in range(int(sys.argv[2])):
    m(x)
"""


def count(pythonpath: str, mode: str, extra: str = "") -> tuple:
    """Instructions of one iteration, in all and in _C's own code: the difference of two runs
    (1000 and 3000 iterations) cancels the start-up. A recording is never stopped: its
    collection is not the forward's cost."""
    runs = []
    for n in (1000, 3000):
        # one thread: OpenBLAS's idle workers spin, and their count would swamp the forward's
        env = dict(os.environ, PYTHONPATH=pythonpath, OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
        with tempfile.NamedTemporaryFile(suffix=".cg") as out:
            r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}",
                                sys.executable, "-c", COUNT_SCRIPT, mode, str(n), extra],
                               env=env, capture_output=True, text=True, check=True,
                               cwd=pythonpath)  # python -c imports from its folder first
            assert r.stdout.startswith(pythonpath), r.stdout  # the package asked for was measured
            total = int([x for x in r.stderr.splitlines() if "Collected" in x][-1].split()[-1])
            per_fn = subprocess.run(["callgrind_annotate", "--threshold=100", out.name],
                                    capture_output=True, text=True, check=True).stdout
        own = sum(int(line.split()[0].replace(",", "")) for line in per_fn.splitlines()
                  if "minitorch/_C." in line and line.strip()[:1].isdigit())
        runs.append((total, own))
    return tuple((b - a) / 2000 for a, b in zip(*runs))


def callgrind() -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        sys.exit("--callgrind needs valgrind (apt-get install valgrind)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        # a copy of the package whose _C has its checks compiled out
        shutil.copytree(os.path.join(root, "minitorch"), os.path.join(tmp, "minitorch"),
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        env = dict(os.environ, MINITORCH_NO_TRACE="1", MINITORCH_CUDA="0")
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", tmp,
                        "--build-temp", os.path.join(tmp, "obj")], cwd=root, env=env, check=True,
                       capture_output=True)
        base = count(tmp, "off")
    off, on, shapes = count(root, "off"), count(root, "on"), count(root, "on", "shapes")
    print(f"{'seed forward, instructions':<30} {'all':>9} {'in _C':>9} {'all vs off':>11}")
    for name, (total, own) in (("checks compiled out", base), ("profiler off", off),
                               ("profiler on", on), ("profiler on, record_shapes", shapes)):
        print(f"{name:<30} {total:9.0f} {own:9.0f} {total / off[0]:11.3f}")
    # The whole-process counts differ by a few hundred between builds with malloc's layout; the
    # checks are in _C's own code (the C branches) and in the Module calls (_trace_enabled()).
    # (The Module calls' 4 _trace_enabled() calls are in both builds: the default mode times them.)
    c_cost = off[1] - base[1]
    print(f"\noff-path cost of the C checks: {c_cost:.1f} instructions a forward (_C's own count, "
          f"off minus compiled out), {100 * c_cost / off[0]:.3f}% of the forward's {off[0]:.0f}; "
          f"the whole process: {100 * (off[0] - base[0]) / off[0]:.2f}% (with malloc's layout)")


if __name__ == "__main__":
    if "--callgrind" in sys.argv:
        callgrind()
    else:
        main()
