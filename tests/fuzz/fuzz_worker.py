"""The fuzzer's worker process: `python fuzz_worker.py N_CALLS TRACE_FILE [SEED] [--cuda]`.

--cuda: each call runs on CPU tensors and on CUDA copies of them, and the outcomes are compared
(fuzz_cuda.py) instead of checked against NumPy.

Draws N_CALLS calls with hypothesis (fuzz_calls.calls; the same calls every run for one SEED,
0 by default), runs each and checks it. Before each call
its source is written over TRACE_FILE, so that when the process dies (a segfault, an abort, a
sanitizer report) or hangs, the parent names the call that did it. At the end one JSON line on
stdout gives the counts and every failing call (the first few of each kind).
"""
import faulthandler
import json
import os
import resource
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_calls import MADE, ALLOWED, PYTHON_OVERFLOWS, TORCH_ASSERTIONS, calls, check_overlap, check_values, reference, well_formed  # noqa: E402

from fuzz_drive import drive  # noqa: E402
import minitorch  # noqa: E402


def main():
    argv = [a for a in sys.argv[1:] if a != "--cuda"]
    cuda = "--cuda" in sys.argv[1:]
    n_calls, trace_path = int(argv[0]), argv[1]
    fixed_seed = int(argv[2]) if len(argv) > 2 else 0
    faulthandler.enable()
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        # A size that slipped past a check must fail to allocate, not swap the machine to death
        # (ASan reserves terabytes of address space, so no limit there).
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    minitorch._C._set_alloc_poison(True)
    warnings.simplefilter("ignore")
    trace = os.open(trace_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    counts = {"calls": 0, "raised": 0, "returned": 0, "checked": 0}
    if cuda:
        import random

        from fuzz_cuda import run_pair
        counts["mixed"] = 0
        rng = random.Random(fixed_seed)
    failures, seen, notes = [], {}, {}

    def note(label, src, detail):
        # a message that differs between the CPU and CUDA: reported, not failed
        key = (label, detail[:60])
        if key not in notes and len(notes) < 100:
            notes[key] = {"call": src, "detail": detail[:600]}

    def fail(label, src, kind, detail):
        key = (label, kind, detail.splitlines()[0][:60] if detail else "")
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2 and len(failures) < 200:
            failures.append({"call": src, "kind": kind, "detail": detail[:2000]})

    def run_one(label, src, thunk, info):
        data = (("[cuda] " if cuda else "") + src).encode("utf-8", "replace")[:4000]
        os.ftruncate(trace, 0)
        os.pwrite(trace, data, 0)
        if cuda:
            run_pair(label, src, thunk, info, rng, counts, fail, note)
            return
        counts["calls"] += 1
        try:
            result = thunk()
        except ALLOWED:
            counts["raised"] += 1
            return
        except AssertionError as e:
            if not any(words in str(e) for words in TORCH_ASSERTIONS):
                fail(label, src, "wrong exception class", f"AssertionError: {e}")
            counts["raised"] += 1
            return
        except OverflowError as e:
            if not any(words in str(e) for words in PYTHON_OVERFLOWS):
                fail(label, src, "wrong exception class", f"OverflowError: {e}")
            counts["raised"] += 1
            return
        except BaseException as e:  # noqa: BLE001 - anything else is what we hunt
            fail(label, src, "wrong exception class", f"{type(e).__name__}: {e}")
            counts["raised"] += 1
            return
        counts["returned"] += 1
        try:
            well_formed(result)
            if info and info[0] == "overlap":
                check_overlap(result, info)
                counts["checked"] += 1
            elif info and info[0] == "ref":
                ref = reference(info[1], info[2], info[3])
                if ref is not None:
                    check_values(result, ref)
                    counts["checked"] += 1
        except ALLOWED + (AssertionError,) as e:
            fail(label, src, "bad result", f"{type(e).__name__}: {e}")

    drive(calls(), lambda call: run_one(*call), n_calls, fixed_seed, after_batch=MADE.clear)
    os.ftruncate(trace, 0)
    print(json.dumps({"counts": counts, "failures": failures, "distinct": len(seen), "notes": list(notes.values())}),
          flush=True)


if __name__ == "__main__":
    main()
