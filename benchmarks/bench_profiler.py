"""The profiler's cost: the seed network's forward with the profiler off and on, minitorch beside PyTorch.

Off, minitorch pays one branch per dispatcher entry, per BLAS call and per allocation (a load of a
flag or of the allocator's observer), and one _C._trace_enabled() call per nn.Module call; the last
line estimates that share of a forward. On, every event is a timestamped record in C. Prints
per-forward times (best of several repeats) and ratios; quote the ratios, machines are noisy.
Run: python benchmarks/bench_profiler.py [--quick]
"""
import sys
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
          "measurable by timing (count them with callgrind)")


if __name__ == "__main__":
    main()
