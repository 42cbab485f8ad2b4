"""One op, one place: an op's checks and messages live in its front end (csrc/ops/), run once for
every device, and a backend kernel only computes. Checked from the source and from _C's tables."""
import re
from pathlib import Path

import minitorch

ROOT = Path(__file__).resolve().parents[2]

# A C string literal, and a run of adjacent ones, PRId64 and the like between them (the compiler
# joins them into one string).
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
RUN = rf"{LITERAL}(?:\s*(?:PRI\w+\s*)?{LITERAL})*"
MT_FAIL = re.compile(rf"\bmt_fail\s*\(\s*\w+\s*,\s*({RUN})")
FORMAT_SPEC = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:ll|l|z|h)?[diouxXeEfgGcsp%]?")

# Ops whose kernels accept any tensor: nothing for a front end to check or plan.
NOTHING_TO_CHECK = {
    "nonzero": "any tensor has nonzero elements (or none)",
    "_unique2": "any tensor has distinct values",
}


def joined(run):
    """The text of a run of adjacent C string literals (escapes as written, PRI macros left out)."""
    return "".join(lit[1:-1] for lit in re.findall(LITERAL, run))


def strip_comments(source):
    """source without its comments; string and character literals kept whole."""
    code = rf"({LITERAL}|'(?:[^'\\\n]|\\.)*')|/\*.*?\*/|//[^\n]*"
    return re.sub(code, lambda m: m.group(1) or " ", source, flags=re.S)


def literals(paths):
    found = set()
    for path in paths:
        for run in re.finditer(RUN, strip_comments(path.read_text())):
            found.add(joined(run.group(0)))
    return found


def is_message(fmt):
    """A format with words in it, not only conversions ("%s")."""
    return re.search(r"[A-Za-z]{2}", FORMAT_SPEC.sub("", fmt)) is not None


def cuda_formats():
    formats = {}
    for path in sorted((ROOT / "cuda").glob("*.[ch]")):
        for m in MT_FAIL.finditer(strip_comments(path.read_text())):
            formats.setdefault(joined(m.group(1)), path.name)
    return formats


def test_the_source_is_where_the_test_looks():
    formats = cuda_formats()
    assert any("CUDA error" in f for f in formats), "cuda/*.c's mt_fail formats were not found"
    assert "index out of range in self" in literals(ROOT.glob("csrc/**/*.c"))


def test_no_message_is_written_in_both_the_core_and_the_cuda_backend():
    """A message the CUDA backend raises exists in csrc/ too: the check or the message belongs
    in the op's front end (csrc/ops/) or in ops/fails.h, which every backend calls."""
    core = literals(list(ROOT.glob("csrc/**/*.c")) + list(ROOT.glob("csrc/**/*.h")))
    both = {f: where for f, where in cuda_formats().items()
            if is_message(f) and any(f in lit for lit in core)}
    assert not both, f"messages written in cuda/ and csrc/ alike: {both}"


def test_every_op_with_a_kernel_has_a_front_end():
    """Each op with a CPU kernel (and so a backend kernel per device) has its checks in a front end
    run once for every device: registered in ops/front.h's MT_FRONTS (run by the dispatcher) or
    the elementwise family's (run by the kernels generated from ops/elementwise.def)."""
    missing, dead = [], []
    for op in minitorch._C.OPS:
        front = minitorch._C._op_info(op)["front"]
        has_kernel = "CPU" in minitorch._C._dispatch_table(op)
        if has_kernel and front is None and op not in NOTHING_TO_CHECK:
            missing.append(op)
        if front == "dispatcher" and not has_kernel:
            dead.append(op)  # the dispatcher runs a front end only before a backend kernel
    assert not missing, f"ops with kernels and no front end: {missing}"
    assert not dead, f"front ends that never run (the op has no backend kernel): {dead}"
    assert all(minitorch._C._op_info(op)["front"] is None for op in NOTHING_TO_CHECK)


def test_front_ends_are_the_kinds_described():
    assert minitorch._C._op_info("sum")["front"] == "dispatcher"
    assert minitorch._C._op_info("add")["front"] == "elementwise"
    assert minitorch._C._op_info("linear")["front"] is None  # composite: its parts have them
