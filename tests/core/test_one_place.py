"""One op, one place: an op's checks and messages live in its front end (csrc/ops/), run once for
every device, and a backend kernel only computes. Checked from the source and from _C's tables."""
import importlib.util
import re
from pathlib import Path

import pytest

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


# ---- the elementwise family: one row per op ----

EW_DEF = ROOT / "csrc" / "ops" / "elementwise.def"
OPS_DEF = ROOT / "csrc" / "dispatch" / "ops.def"
EW_OP_ROW = re.compile(r'^MT_EW_OP\((\w+),\s*(\w+),\s*([^,"]+),\s*"((\w+)\(.*)"\)\s*$', re.M)


def gen_ops_api():
    spec = importlib.util.spec_from_file_location("gen_ops_api", ROOT / "tools" / "gen_ops_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ew_op_rows():
    """[(op, loop row, flags, schema)] of elementwise.def's MT_EW_OP lines, in order."""
    found = [(m.group(1), m.group(2), m.group(3).strip(), m.group(4))
             for m in EW_OP_ROW.finditer(strip_comments(EW_DEF.read_text()))]
    assert len(found) > 200, "elementwise.def's MT_EW_OP lines were not found"
    return found


def test_the_row_reader_sees_what_a_row_looks_like():
    text = 'MT_EW_OP(hypot, hypot, METHOD | FUNCTION, "hypot(Tensor self, Tensor other, *, Tensor(a!)? out=None)")\n'
    (m,) = EW_OP_ROW.finditer(text)
    assert m.groups()[:3] == ("hypot", "hypot", "METHOD | FUNCTION") and m.group(5) == "hypot"
    assert not list(EW_OP_ROW.finditer('MT_OP(hypot, CPU, _, _, 1, METHOD, "hypot(Tensor self)")\n'))


def test_every_elementwise_op_is_declared_by_exactly_one_row():
    """An op of the family is one MT_EW_OP line of ops/elementwise.def (name, loop row, flags,
    schema): no op has two, no op of the family has a row of its own in ops.def, and every line
    runs a loop row of the table and is the op its schema names."""
    rows = ew_op_rows()
    names = [op for op, _, _, _ in rows]
    assert len(names) == len(set(names)), f"declared twice: {sorted({n for n in names if names.count(n) > 1})}"
    loops = set(re.findall(r"^MT_EW\((\w+),", strip_comments(EW_DEF.read_text()), re.M))
    assert all(row in loops for _, row, _, _ in rows), [op for op, row, _, _ in rows if row not in loops]
    assert all(schema.startswith(op + "(") for op, _, _, schema in rows)
    own = set(re.findall(r"^\s*MT_OP\((\w+),", strip_comments(OPS_DEF.read_text()), re.M))
    assert len(own) > 300, "ops.def's MT_OP rows were not found"
    both = sorted(own & set(names))
    assert not both, f"elementwise ops with a separate ops.def row: {both}"


def test_ops_def_takes_the_family_from_its_table_once():
    code = strip_comments(OPS_DEF.read_text())
    assert code.count('#include "ops/elementwise.def"') == 1
    assert re.search(r"#define MT_EW_OP\(op, row, flags, schema\) MT_OP\(op, CPU, _, _, 1, flags, schema\)", code)


def test_every_consumer_reads_the_one_row():
    """The binding's schema and forms, the dispatcher's kernels and the family's front end, the
    typed C API's generator (tools/gen_ops_api.py) and the stub (minitorch/_C.pyi) all see each
    MT_EW_OP line as it is written, and the family is exactly the ops of those lines."""
    rows = ew_op_rows()
    family = {op for op in minitorch._C.OPS if minitorch._C._op_info(op)["front"] == "elementwise"}
    assert family == {op for op, _, _, _ in rows}
    for op, _, flags, schema in rows:
        info = minitorch._C._op_info(op)
        assert info["schema"] == schema, op
        assert info["nout"] == 1 and info["cuda"] is None, op
        assert (info["method"], info["function"], info["inplace"]) == \
            ("METHOD" in flags, "FUNCTION" in flags, "INPLACE" in flags), op
        assert "CPU" in minitorch._C._dispatch_table(op), op
    generated = list(gen_ops_api().rows())
    assert [name for name, _, _, _ in generated] == list(minitorch._C.OPS)
    by_name = {name: (flags, schema) for name, _, flags, schema in generated}
    assert all(by_name[op] == (flags, schema) for op, _, flags, schema in rows)
    stub = (ROOT / "minitorch" / "_C.pyi").read_text()
    missing = [op for op, _, _, _ in rows if not re.search(rf"\bdef {op}\(", stub)]
    assert not missing, f"not in _C.pyi (python3 tools/gen_stub.py): {missing}"


def test_the_cuda_backend_registers_every_op_of_the_family():
    """_C registers a device backend's kernel for each MT_EW_OP line (dispatch/backend.c), running
    the loops _C_cuda generates from the MT_EW rows."""
    if not minitorch.cuda.is_available():
        pytest.skip("no CUDA device (MINITORCH_CUDA_EMU=1 emulates one)")
    for op, _, _, _ in ew_op_rows():
        assert "CUDA" in minitorch._C._dispatch_table(op), op
