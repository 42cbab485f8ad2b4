"""C code calls ops through the typed API generated from ops.def (tools/gen_ops_api.py), and the
binding boxes Python calls into the same mt_args slots: a schema with more arguments of a kind than
mt_args holds is refused at build time (the generator, then the compiler) and at import (the
binding's schema parse), never written past the end of an array."""
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import minitorch
from minitorch import _C

ROOT = Path(__file__).resolve().parents[2]

# the schema type of each slot array of mt_args, as the binding names it
SLOT_TYPES = {"t": "Tensor", "s": "Scalar", "i": "int", "l": "int[]", "b": "bool", "str": "str",
              "f": "float", "tl": "Tensor[]"}


def gen_ops_api():
    spec = importlib.util.spec_from_file_location("gen_ops_api", ROOT / "tools" / "gen_ops_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def schema_with(typ, n, name="too_many"):
    return f"{name}(" + ", ".join(f"{typ} a{k}" for k in range(n)) + ")"


def test_the_binding_reports_the_slots_it_boxes_into():
    assert _C._schema_slots("add(Tensor self, Tensor other, *, Scalar alpha=1)") == [
        ("input", "Tensor", 0), ("other", "Tensor", 1), ("alpha", "Scalar", 0)]
    assert _C._schema_slots("f(int[] size, int dim, int[1] dims, Tensor|Scalar x, int? k=None)") == [
        ("size", "int[]", 0), ("dim", "int", 0), ("dims", "int[1]", 1), ("x", "Tensor|Scalar", 0),
        ("k", "int", 1)]


# the names Python knows a schema's parameter by (csrc/python/schema.c's python_name)
PYTHON_NAMES = {**{(op, "self"): "input" for op in _C.OPS}, ("copy_", "src"): "other"}


def test_the_binding_and_the_typed_api_box_every_op_alike():
    """Each argument of each op sits in the same slot whether Python or C calls the op."""
    gen = gen_ops_api()
    checked = 0
    for op in _C.OPS:
        schema = _C._op_info(op)["schema"]
        ps, _ = gen.params(op, schema)
        typed = {PYTHON_NAMES.get((op, name), name): k for _, _, name, _, k in ps}
        bound = {name: slot for name, _, slot in _C._schema_slots(schema) if slot >= 0}
        assert typed == bound, op
        checked += 1
    assert checked == len(_C.OPS) > 500


@pytest.mark.parametrize("arr", sorted(SLOT_TYPES))
def test_a_schema_that_overflows_a_slot_is_refused_at_import(arr):
    sizes = gen_ops_api().slot_sizes()
    assert _C._schema_slots(schema_with(SLOT_TYPES[arr], sizes[arr]))  # the most it holds fits
    with pytest.raises(SystemError, match=rf"too_many\(.*more {re.escape(SLOT_TYPES[arr])} "
                                          rf"arguments than mt_args holds \({sizes[arr]}\)"):
        _C._schema_slots(schema_with(SLOT_TYPES[arr], sizes[arr] + 1))


def test_a_schema_with_more_parameters_than_the_binding_reads_is_refused():
    # within every slot's capacity (4 bools, 4 ints, 3 Scalars, 5 int[], 1 str), 17 in all
    kinds = ["bool"] * 4 + ["int"] * 4 + ["Scalar"] * 3 + ["int[]"] * 5 + ["str"]
    text = "wide(" + ", ".join(f"{t} a{k}" for k, t in enumerate(kinds)) + ")"
    assert len(_C._schema_slots(text.replace(", str a16", ""))) == 16
    with pytest.raises(SystemError, match=r"wide\(.*more than 16 parameters"):
        _C._schema_slots(text)
    with pytest.raises(SystemError, match="unknown schema type 'Tensorz'"):
        _C._schema_slots("bad(Tensorz x)")


@pytest.mark.parametrize("arr", sorted(SLOT_TYPES))
def test_the_generator_refuses_a_schema_that_overflows_a_slot(arr, monkeypatch):
    gen = gen_ops_api()
    sizes = gen.slot_sizes()
    fits = schema_with(SLOT_TYPES[arr], sizes[arr], "fits")
    monkeypatch.setattr(gen, "rows", lambda: iter([("fits", "1", "0", fits)]))
    text = gen.generate()
    assert "mt_op_fits(" in text
    if arr not in ("tl",):
        assert f'_Static_assert(MT_ARGS_FIT({arr}, {sizes[arr]}), "fits: too many {arr}[] arguments' in text
    over = schema_with(SLOT_TYPES[arr], sizes[arr] + 1)
    monkeypatch.setattr(gen, "rows", lambda: iter([("too_many", "1", "0", over)]))
    with pytest.raises(SystemExit, match=rf"too_many: {sizes[arr] + 1} arguments in slot {arr}\[\], "
                                         rf"mt_args holds {sizes[arr]}"):
        gen.generate()


def test_the_compiler_checks_each_generated_function_against_mt_args():
    """The generated header asserts each op's counts (_Static_assert), so an mt_args shrunk below a
    schema's needs stops the build; the assertion itself fails one past a slot's size."""
    cc = shutil.which("cc") or shutil.which("gcc")
    header = ROOT / "build" / "gen" / "dispatch" / "ops_api.h"
    if cc is None or not header.exists():
        pytest.skip("no C compiler or no generated header (build first)")
    text = header.read_text()
    gen = gen_ops_api()
    for op, _, _, schema in gen.rows():
        _, counts = gen.params(op, schema)
        for arr in set(counts) & {"t", "s", "i", "l", "b", "str", "f"}:
            assert f'_Static_assert(MT_ARGS_FIT({arr}, {counts[arr]}), "{op}: too many' in text
    sizes = gen.slot_sizes()

    def compiles(n):
        src = f'#include "dispatch/ops_api.h"\n_Static_assert(MT_ARGS_FIT(t, {n}), "too many t[]");\n'
        # the compiler runs without the sanitizer run's preloaded libasan (gcc's own leaks at exit
        # would fail it)
        env = dict(os.environ, LD_PRELOAD="", ASAN_OPTIONS="", LSAN_OPTIONS="")
        r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", str(ROOT / "csrc"), "-I",
                            str(ROOT / "build" / "gen"), "-x", "c", "-"], input=src, text=True,
                           capture_output=True, env=env)
        return r.returncode == 0, r.stderr

    assert compiles(sizes["t"])[0]
    ok, err = compiles(sizes["t"] + 1)
    assert not ok and "too many t[]" in err


# Where C code fills mt_args itself rather than calling mt_op_*: the binding, the generated API,
# and the boxed calls, which re-run a call they were handed (or a saved one) with one argument
# changed, call an op given by its id (op_chain.h's expression steps, a tensor with a number),
# or call a kernel below the dispatcher. A fixed op called from C goes through its mt_op_*.
BOXED = {
    "csrc/python/args.c": "the binding: Python arguments into their slots",
    "csrc/python/tensor_number.c": "the binding's operator slots (a + b): an op by id",
    "csrc/ops/op_chain.h": "bin() and un(): an op by id, its other arguments at their defaults",
    "csrc/ops/composite.c": "mt_call_with_number: an op by id with a wrapped number",
    "csrc/dispatch/complex.c": "the call handed to the complex fallback, again on the real parts",
    "csrc/dispatch/widen.c": "copy_'s kernel for a key, below the dispatcher",
    "csrc/dispatch/host_fallback.c": "the call handed to the host round trip, on host copies",
    "csrc/autograd/formulas_shape.c": "a node's saved call re-run for its indices",
    "csrc/autograd/formulas_resample.c": "a node's saved call re-run as its partner op",
    "csrc/autograd/views.c": "unbind's and split's pieces boxed as their view op's call, for its node",
}
LOCAL_ARGS = re.compile(r"\bmt_args\s+(\w+)\s*[;=]")  # an mt_args of a function's own


def fills_by_hand(code):
    """Whether C code fills an mt_args of its own: mt_args_init, or an argument slot of a local
    mt_args assigned."""
    if re.search(r"\bmt_args_init\s*\(\s*&", code):
        return True
    names = set(LOCAL_ARGS.findall(code))
    return any(re.search(rf"\b{n}\.(?:t|s|i|b|l|f|str|tl|tls)\[[^]]*\]\s*=[^=]", code) for n in names)


def test_c_code_calls_fixed_ops_through_the_typed_api():
    assert fills_by_hand("mt_args a;\nmt_args_init(&a);") and fills_by_hand("mt_args c = *a; c.t[1] = x;")
    assert not fills_by_hand("corners3 c; c.f[k] = 1;") and not fills_by_hand("mt_args c = *a; c.out[0] = 0;")
    found = {}
    for path in sorted(list(ROOT.glob("csrc/**/*.[ch]")) + list(ROOT.glob("cuda/*.[ch]"))):
        rel = str(path.relative_to(ROOT))
        code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
        if fills_by_hand(code):
            found[rel] = True
    assert "csrc/ops/op_chain.h" in found  # the scan sees a hand-filled call
    unexpected = sorted(set(found) - set(BOXED))
    assert not unexpected, f"mt_args filled by hand outside the boxed calls: {unexpected}"


def test_the_op_by_id_helpers_fill_what_each_op_takes():
    """op_chain.h's bin() and un() box their operands into t[0] (and t[1]) and leave the rest as
    mt_args_init does (None); mt_call_with_number its tensor and a wrapped number. So each op they
    call must take those tensors first and have a default for every other argument (a required
    one would be read as None)."""
    calls = {}
    helper = re.compile(r"\b(bin|un|mt_call_with_number|mt_ags_with_number)\(\s*(?:&?\w+,\s*)?MT_OP_(\w+)\b")
    for path in ROOT.glob("csrc/**/*.[ch]"):
        code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
        for m in helper.finditer(code):
            calls.setdefault((m.group(1), m.group(2)), str(path.relative_to(ROOT)))
    assert ("bin", "mul") in calls and ("un", "neg") in calls and len(calls) > 50
    wrong = []
    for (fn, op), where in sorted(calls.items()):
        schema = _C._op_info(op)["schema"]
        params = [p.strip() for p in schema[schema.index("(") + 1:schema.rindex(")")].split(",")]
        params = [p for p in params if p != "*"]
        n = 1 if fn == "un" else 2
        first, rest = params[:n], params[n:]
        if not (len(first) == n and all(p.split()[0] in ("Tensor", "Tensor|Scalar") for p in first)
                and all("=" in p or p.startswith("Tensor(a!)") for p in rest)):
            wrong.append(f"{fn}(MT_OP_{op}) in {where}: {schema}")
    assert not wrong, wrong
