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


def sentences(paths):
    """The literals of paths that read as a sentence (three words or more), as grep would find
    a message: any literal, not only mt_fail's formats (PyErr_Format, a device assert's text)."""
    return {lit: path.name for path in paths for lit in literals([path])
            if len(re.findall(r"[A-Za-z]{2,}", FORMAT_SPEC.sub("", lit))) >= 3 and " " in lit}


def test_no_sentence_is_written_in_both_the_core_and_the_cuda_backend():
    """The grep of the message test above over every string of cuda/ (.c, .h, .cu): a message
    raised through Python's API or kept for a device-side failure is not a copy of csrc/'s."""
    cuda = sentences(p for p in sorted((ROOT / "cuda").glob("*")) if p.suffix in (".c", ".h", ".cu"))
    assert any("CUDA" in lit for lit in cuda), "cuda/'s literals were not found"
    core = literals(list(ROOT.glob("csrc/**/*.c")) + list(ROOT.glob("csrc/**/*.h")))
    both = {lit: where for lit, where in cuda.items() if lit in core}
    assert not both, f"text written in cuda/ and csrc/ alike: {both}"


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CONDITION = re.compile(r"^\s*#\s*(if|ifdef|ifndef|else|elif|endif)\b(.*)")


def device_includes(source):
    """The quoted includes of source as nvcc reads it: those under `#ifndef __CUDACC__` (host
    code only) are left out (the conditions nest; other conditions count as taken)."""
    names, skipping = [], []  # one entry per open condition: whether its branch is host-only
    for line in source.splitlines():
        m = CONDITION.match(line)
        if m and m.group(1).startswith("if"):
            host_only = (m.group(1) == "ifndef" and m.group(2).strip() == "__CUDACC__") or \
                re.fullmatch(r"\s*!\s*defined\s*\(?\s*__CUDACC__\s*\)?\s*", m.group(2)) is not None
            skipping.append(host_only)
        elif m and m.group(1) in ("else", "elif") and skipping:
            skipping[-1] = False
        elif m and skipping:
            skipping.pop()
        elif not any(skipping) and (inc := INCLUDE.match(line)):
            names.append(inc.group(1))
    return names


def includes(path, seen=None):
    """The files the CUDA compiler reads for path, directly or not (quoted includes found under
    csrc/, the root or beside the includer)."""
    seen = set() if seen is None else seen
    for name in device_includes(path.read_text()):
        for base in (ROOT / "csrc", ROOT, path.parent):
            found = base / name
            if found.is_file():
                if found not in seen:
                    seen.add(found)
                    includes(found, seen)
                break
    return seen


def test_only_the_elementwise_kernels_depend_on_the_elementwise_rows():
    """A change of ops/elementwise.def rebuilds, of the CUDA kernel files, only kernels.cu (the
    functors and their table): the others read the rows' forms (ops/elementwise_forms.h), not the
    rows."""
    rows = ROOT / "csrc" / "ops" / "elementwise.def"
    kernels = sorted((ROOT / "cuda").glob("*.cu"))
    assert len(kernels) > 10, "cuda/*.cu were not found"
    reach = [k.name for k in kernels if rows in includes(k)]
    assert reach == ["kernels.cu"], reach


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
# MT_EW_OP(op, row, flags, shell, schema); shell is _, SHELL(takes) or SHELL_AS(takes, "kernel")
EW_OP_ROW = re.compile(r'^MT_EW_OP\((\w+),\s*(\w+),\s*([^,"]+),\s*(?:_|SHELL\([^)]*\)|SHELL_AS\([^)]*\)),\s*'
                       r'"((\w+)\(.*)"\)\s*$', re.M)


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
    text = 'MT_EW_OP(hypot, hypot, METHOD | FUNCTION, _, "hypot(Tensor self, Tensor other, *, Tensor(a!)? out=None)")\n'
    (m,) = EW_OP_ROW.finditer(text)
    assert m.groups()[:3] == ("hypot", "hypot", "METHOD | FUNCTION") and m.group(5) == "hypot"
    text = 'MT_EW_OP(mul, mul, METHOD, SHELL_AS(U | F, "mul_cpu_reduced_float"), "mul(Tensor self, Tensor other)")\n'
    (m,) = EW_OP_ROW.finditer(text)
    assert m.groups()[:3] == ("mul", "mul", "METHOD") and m.group(4) == "mul(Tensor self, Tensor other)"
    assert not list(EW_OP_ROW.finditer('MT_OP(hypot, CPU, _, _, 1, METHOD, _, "hypot(Tensor self)")\n'))


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
    assert re.search(r"#define MT_EW_OP\(op, row, flags, shell, schema\) "
                     r"MT_OP\(op, CPU, _, _, 1, flags, shell, schema\)", code)


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


# The mt_tensor_empty calls (and _strided, _like) of each kernel file: its workspaces, and the
# results of the kernels whose front ends do not state them yet. A front end states its op's
# results (mt_front_output, csrc/ops/front.h) and the dispatcher allocates them on the call's
# device, so these counts only go down (lower one here when a change lowers it); a kernel file
# not listed allocates nothing.
# Raised once, at the merge that brought them (kernels written beside the move of results into
# the front ends): conv_direct.c's direct gradient kernels keep 6, its workspaces (the padded
# input, packed weight and tap offsets of each direct kernel), conv_nhwc.c's channels-last
# kernels 2 (the gemms' block of col, the direct convolution's packed weights); the convolution
# family's results (conv2d, conv3d, their backward ops, im2col and col2im) are stated by its
# front end. The rest are workspaces and casting helpers, or results still to move into their
# front ends.
KERNEL_ALLOCATIONS = {
    "csrc/cpu/attention.c": 1, "csrc/cpu/conv.c": 3,
    "csrc/cpu/conv_backward.c": 5,  # + conv3d's weight gradient's vol2col block: a workspace
    "csrc/cpu/conv_direct.c": 6, "csrc/cpu/conv_nhwc.c": 2,
    "csrc/cpu/copy.c": 1,
    "csrc/cpu/conv_depthwise.c": 3,  # its packed weights and the NCHW kernel's padded planes: workspaces
    "csrc/cpu/conv_winograd.c": 1,  # its transformed weights, tiles and products: one workspace
    "csrc/cpu/gamma.c": 1, "csrc/cpu/index.c": 1,
    "csrc/cpu/lapack.c": 1, "csrc/cpu/nn.c": 1,
    "csrc/cpu/reduce.c": 2, "csrc/cpu/reduce_two_pass.c": 1,  # about()'s, moved from reduce.c
    "csrc/cpu/reduce_dim.c": 1, "csrc/cpu/sampling.c": 1,
    "csrc/cpu/sort.c": 3, "csrc/cpu/stats.c": 1, "cuda/conv.c": 1,
    "cuda/blas.c": 4,  # + a complex beta as a 0-dim device tensor (k = 0 products): a workspace
    "cuda/conv_gemm.c": 2, "cuda/elementwise.c": 1, "cuda/ops.c": 3, "cuda/ops_index.c": 1,
    "cuda/ops_nn.c": 3, "cuda/ops_norm.c": 3, "cuda/ops_optim.c": 1, "cuda/ops_random.c": 1,
    "cuda/ops_reduce.c": 2, "cuda/ops_select.c": 1, "cuda/ops_shape.c": 1, "cuda/ops_sort.c": 4,
}

# Kernel files whose every op has its results stated by its front end: their kernels write
# a->out[k] and never make or replace it (only workspaces of their own remain).
RESULTS_FROM_THE_DISPATCHER = [
    "csrc/cpu/reduce.c", "csrc/cpu/reduce_two_pass.c", "csrc/cpu/reduce_dim.c", "csrc/cpu/blas.c",
    "csrc/cpu/pool.c",
    "csrc/cpu/pool_backward.c", "csrc/cpu/upsample.c", "csrc/cpu/grid_sample.c",
    "csrc/cpu/nn_backward.c", "csrc/cpu/loss.c", "csrc/cpu/linalg.c", "csrc/cpu/linalg_eig.c",
    "csrc/cpu/linalg_ldl.c", "csrc/cpu/linalg_spectral.c", "csrc/cpu/lapack.c", "csrc/cpu/fft.c",
    "csrc/cpu/factory.c", "csrc/cpu/ranges.c", "csrc/cpu/sampling.c", "csrc/cpu/gamma.c",
    "csrc/cpu/attention.c", "csrc/cpu/rnn_cell.c", "csrc/cpu/mask.c", "cuda/ops_reduce.c",
    "cuda/blas.c", "cuda/ops_pool.c", "cuda/ops_upsample.c", "cuda/ops_grid.c", "cuda/ops_norm.c",
    "cuda/ops_stats.c", "csrc/cpu/conv.c", "csrc/cpu/conv_backward.c", "csrc/cpu/im2col.c",
    "cuda/conv.c", "cuda/conv_gemm.c", "csrc/cpu/sort.c", "cuda/ops_sort.c",
]
# And the kernels of that kind in files whose other kernels still make their results.
KERNELS_WITH_STATED_RESULTS = {
    "csrc/cpu/nn.c": ["mt_cpu_layer_norm", "mt_cpu_batch_norm", "mt_cpu_one_hot"],
    "cuda/ops_nn.c": ["mt_cuda_layer_norm", "mt_cuda_embedding_dense_backward", "mt_cuda_nll_loss"],
    "csrc/cpu/shape.c": ["mt_cpu_cat", "mt_cpu_flip", "mt_cpu_pad_gather"],
    "cuda/ops_shape.c": ["mt_cuda_flip", "mt_cuda_range_factory", "mt_cuda_eye",
                         "mt_cuda_one_hot"],
    "cuda/ops.c": ["mt_cuda_empty"],
    "csrc/cpu/random.c": ["mt_cpu_randperm"],  # the in-place fills return self
    "cuda/ops_random.c": ["mt_cuda_draw_each"],
    "cuda/ops_select.c": ["mt_cuda_nonzero", "mt_cuda_masked_select"],
    "csrc/cpu/stats.c": ["mt_cpu_searchsorted", "mt_cpu_cumulative_extreme", "mt_cpu_histc",
                         "mt_cpu_histogram_bins", "mt_cpu_bincount", "mt_cpu_unique_dim"],
}

ALLOCATION = re.compile(r"\bmt_tensor_empty\w*\s*\(")
# a->out[k] assigned, or handed out by address for a callee to set
MAKES_RESULT = re.compile(r"&\s*a->out\s*\[|\ba->out\s*\[[^]]*\]\s*=(?!=)")


def kernel_files():
    return sorted(list(ROOT.glob("csrc/cpu/*.[ch]")) + list(ROOT.glob("cuda/*.[ch]"))
                  + list(ROOT.glob("cuda/*.cu")))


def test_kernels_allocate_no_more_than_before():
    counts = {}
    for path in kernel_files():
        n = len(ALLOCATION.findall(strip_comments(path.read_text())))
        if n:
            counts[str(path.relative_to(ROOT))] = n
    assert counts.get("csrc/cpu/stats.c"), "the counting found no allocation where there are some"
    grown = {f: (n, KERNEL_ALLOCATIONS.get(f, 0)) for f, n in counts.items()
             if n > KERNEL_ALLOCATIONS.get(f, 0)}
    assert not grown, ("kernel files allocating more than before (found, allowed); state the "
                       f"results in the op's front end instead: {grown}")
    stale = {f: (counts.get(f, 0), n) for f, n in KERNEL_ALLOCATIONS.items() if counts.get(f, 0) < n}
    assert not stale, f"ceilings above what the files allocate (found, allowed): lower them: {stale}"


def function_body(source, name):
    """The definition of C function name in source (STYLE.md: its name opens a line)."""
    m = re.search(rf"^{name}\(.*?^}}", source, flags=re.S | re.M)
    assert m, f"{name} not found"
    return m.group(0)


def test_kernels_whose_front_ends_state_their_results_do_not_make_them():
    assert MAKES_RESULT.search("st = mt_tensor_empty(1, s, dt, dev, &a->out[0]);")
    assert MAKES_RESULT.search("    a->out[0] = out;")
    assert not MAKES_RESULT.search("if (a->out[0] == NULL)")
    made = {}
    for name in RESULTS_FROM_THE_DISPATCHER:
        source = strip_comments((ROOT / name).read_text())
        made[name] = [m.group(0) for m in MAKES_RESULT.finditer(source)]
    for name, kernels in KERNELS_WITH_STATED_RESULTS.items():
        source = strip_comments((ROOT / name).read_text())
        for kernel in kernels:
            made[kernel] = [m.group(0) for m in MAKES_RESULT.finditer(function_body(source, kernel))]
    made = {k: v for k, v in made.items() if v}
    assert not made, f"kernels making results their front ends stated: {made}"


def test_the_dispatcher_allocates_stated_results_on_the_calls_device():
    """The front ends of the migrated families state their results: dtype, shape and
    (contiguous) strides as PyTorch's, for the CPU key (the CUDA key: tests/cuda)."""
    F = minitorch.nn.functional
    m = minitorch.arange(24, dtype=minitorch.float64).reshape(2, 4, 3).sin()
    sq = m[:, :3] @ m[:, :3].transpose(1, 2)
    # sin(k) obeys a two-term recurrence, so m's columns are of rank 2: its third LU pivot is
    # zero or a rounding error, as the BLAS build has it; lu_factor (which refuses a zero pivot)
    # gets a full-rank matrix
    full_rank = m + 3 * minitorch.eye(4, 3, dtype=minitorch.float64)
    g = minitorch.arange(16, dtype=minitorch.float32).reshape(2, 8) / 16
    x = minitorch.arange(24, dtype=minitorch.float32).reshape(2, 3, 4).permute(2, 0, 1)
    F = minitorch.nn.functional
    img = minitorch.arange(96, dtype=minitorch.float32).reshape(2, 3, 4, 4)
    img_cl = img.contiguous(memory_format=minitorch.channels_last)
    w, go = minitorch.ones(4, 3, 3, 3), minitorch.ones(2, 4, 2, 2)
    cases = [
        (x.sum(1), (4, 3), (3, 1), minitorch.float32),
        (x.sum(1, keepdim=True), (4, 1, 3), (3, 3, 1), minitorch.float32),
        (x.int().sum(), (), (), minitorch.int64),
        (x.max(0)[1], (2, 3), (3, 1), minitorch.int64),
        (x.argmax(), (), (), minitorch.int64),
        (x.softmax(0), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (x.cumsum(2, dtype=minitorch.float64), (4, 2, 3), (6, 3, 1), minitorch.float64),
        (x[0] @ x[0].t(), (2, 2), (2, 1), minitorch.float32),
        (minitorch.bmm(x, x.transpose(1, 2)), (4, 2, 2), (4, 2, 1), minitorch.float32),
        (minitorch.dot(x[0, 0], x[1, 0]), (), (), minitorch.float32),
        (minitorch.nn.functional.max_pool2d(x, 2), (4, 1, 1), (1, 1, 1), minitorch.float32),
        (minitorch.nn.functional.max_pool2d(x, 2, return_indices=True)[1], (4, 1, 1),
         (1, 1, 1), minitorch.int64),
        (minitorch.nn.functional.layer_norm(x, (3,)), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (minitorch._C.native_layer_norm(x, [3], None, None, 1e-5)[2], (4, 2, 1), (2, 1, 1),
         minitorch.float32),
        (x.topk(2, dim=0)[0], (2, 2, 3), (6, 3, 1), minitorch.float32),
        (x.argsort(1), (4, 2, 3), (6, 3, 1), minitorch.int64),
        (x.index_select(1, minitorch.tensor([1, 0, 1])), (4, 3, 3), (9, 3, 1), minitorch.float32),
        (x.gather(0, minitorch.zeros(1, 2, 2, dtype=minitorch.int64)), (1, 2, 2), (4, 2, 1),
         minitorch.float32),
        (minitorch.nn.functional.embedding(minitorch.tensor([[1, 0]]), x[0]), (1, 2, 3),
         (6, 3, 1), minitorch.float32),
        (minitorch.cat([x, x.int()], 1), (4, 4, 3), (12, 3, 1), minitorch.float32),
        (x.flip(0), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (x.tril(), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (F.conv2d(img, w), (2, 4, 2, 2), (16, 4, 2, 1), minitorch.float32),
        (F.conv2d(img[0], w, padding=1), (4, 4, 4), (16, 4, 1), minitorch.float32),
        (F.conv3d(img[:, :, None], w[:, :, None]), (2, 4, 1, 2, 2), (16, 4, 4, 2, 1), minitorch.float32),
        (minitorch._C.convolution_backward_input(go, w, [2, 3, 4, 4]), (2, 3, 4, 4), (48, 16, 4, 1),
         minitorch.float32),
        (minitorch._C.convolution_backward_weight(go, img, [4, 3, 3, 3]), (4, 3, 3, 3), (27, 9, 3, 1),
         minitorch.float32),
        (F.unfold(img, 2), (2, 12, 9), (108, 9, 1), minitorch.float32),
        (F.fold(F.unfold(img, 2), (4, 4), 2), (2, 3, 4, 4), (48, 16, 4, 1), minitorch.float32),
        # channels-last results, laid out by the dispatcher after the kernel (mt_front_output_format)
        (F.conv2d(img_cl, w), (2, 4, 2, 2), (16, 1, 8, 4), minitorch.float32),
        (F.max_pool2d(img_cl, 2, return_indices=True)[1], (2, 3, 2, 2), (12, 1, 6, 3), minitorch.int64),
        (F.nll_loss(x, minitorch.zeros(4, 3, dtype=minitorch.int64), reduction="none"), (4, 3),
         (3, 1), minitorch.float32),
        (F.nll_loss(x[:, 0, 0], minitorch.tensor(1), reduction="none"), (), (), minitorch.float32),
        (F.nll_loss(x, minitorch.zeros(4, 3, dtype=minitorch.int64)), (), (), minitorch.float32),
        (F.binary_cross_entropy(x.sigmoid(), x.sigmoid().detach(), reduction="none"), (4, 2, 3),
         (6, 3, 1), minitorch.float32),
        (F.binary_cross_entropy_with_logits(x, x.sigmoid(), reduction="none",
                                            pos_weight=minitorch.ones(3, dtype=minitorch.float64)),
         (4, 2, 3), (6, 3, 1), minitorch.float64),
        (F.binary_cross_entropy_with_logits(x, x.sigmoid(), reduction="sum"), (), (),
         minitorch.float32),
        (x.histc(5), (5,), (1,), minitorch.float32),
        (minitorch.histogram(x, minitorch.tensor([0.0, 2.0, 30.0]))[1], (3,), (1,),
         minitorch.float32),
        (minitorch.tensor([3, 0, 3]).bincount(), (4,), (1,), minitorch.int64),
        (minitorch.tensor([3, 0]).bincount(minitorch.tensor([0.5, 1.0], dtype=minitorch.float64), minlength=6), (6,), (1,),
         minitorch.float64),
        (minitorch.tensor([], dtype=minitorch.int64).bincount(), (0,), (1,), minitorch.int64),
        (minitorch.geqrf(m)[1], (2, 3), (3, 1), minitorch.float64),
        (minitorch.linalg.qr(m, mode="complete")[0], (2, 4, 4), (16, 4, 1), minitorch.float64),
        (minitorch.linalg.qr(m, mode="r")[0], (0,), (1,), minitorch.float64),
        (minitorch.linalg.lu_factor(full_rank)[1], (2, 3), (3, 1), minitorch.int32),
        (minitorch.lu_unpack(*minitorch.linalg.lu_factor(full_rank))[2], (2, 3, 3), (9, 3, 1),
         minitorch.float64),
        (minitorch.linalg.svd(m, full_matrices=False)[2], (2, 3, 3), (9, 3, 1), minitorch.float64),
        (minitorch.linalg.svdvals(m), (2, 3), (3, 1), minitorch.float64),
        (minitorch.linalg.eigvalsh(sq), (2, 3), (3, 1), minitorch.float64),
        (minitorch.linalg.eig(sq)[1], (2, 3, 3), (9, 3, 1), minitorch.complex128),
        (minitorch.linalg.ldl_factor_ex(sq)[2], (2,), (1,), minitorch.int32),
        (minitorch.linalg.lstsq(m, m[..., :2], driver="gelsd")[3], (2, 3), (3, 1), minitorch.float64),
        (minitorch.fft.rfft(m, dim=1), (2, 3, 3), (9, 3, 1), minitorch.complex128),
        (minitorch.fft.irfft(minitorch.fft.rfft(m, dim=1), n=4, dim=1), (2, 4, 3), (12, 3, 1),
         minitorch.float64),
        (minitorch.fft.fft2(x.to(minitorch.complex64)), (4, 2, 3), (6, 3, 1), minitorch.complex64),
        (minitorch.empty(2, 0, 3, dtype=minitorch.int16), (2, 0, 3), (3, 3, 1), minitorch.int16),
        (minitorch.arange(1, 4, 0.5), (6,), (1,), minitorch.float32),
        (minitorch.linspace(0, 1, 5, dtype=minitorch.float64), (5,), (1,), minitorch.float64),
        (minitorch.eye(2, 3, dtype=minitorch.int32), (2, 3), (3, 1), minitorch.int32),
        (minitorch.randperm(7, dtype=minitorch.float32), (7,), (1,), minitorch.float32),
        (minitorch.poisson(x), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (minitorch._standard_gamma(x + 1), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (minitorch._sample_dirichlet(x.double() + 1), (4, 2, 3), (6, 3, 1), minitorch.float64),
        (minitorch._standard_gamma_grad(x + 1, x[:1] + 1), (4, 2, 3), (6, 3, 1), minitorch.float32),
        (minitorch.multinomial(x[0].abs() + 1, 4, True), (2, 4), (4, 1), minitorch.int64),
        (minitorch.multinomial(x[0, 0].abs() + 1, 1), (1,), (1,), minitorch.int64),
        (F.one_hot(minitorch.tensor([[2, 0]]), 4), (1, 2, 4), (8, 4, 1), minitorch.int64),
        (F.one_hot(minitorch.tensor([[2, 0]])), (1, 2, 3), (6, 3, 1), minitorch.int64),
        (F.scaled_dot_product_attention(x, x, x[..., :2]), (4, 2, 2), (4, 2, 1), minitorch.float32),
        (minitorch._C._thnn_fused_lstm_cell(g, g.t().t(), g[:, :2])[2], (2, 8), (8, 1),
         minitorch.float32),
        (minitorch._C._thnn_fused_lstm_cell_backward_impl(g[:, :2], None, g[:, 2:4], g[:, 4:6],
                                                          g, True)[2], (8,), (1,),
         minitorch.float32),
        (F.pad(x, (1, 2), mode="reflect"), (4, 2, 6), (12, 6, 1), minitorch.float32),
        (F.pad(x, (1, 0, 0, 1), mode="replicate"), (4, 3, 4), (12, 4, 1), minitorch.float32),
    ]
    for got, shape, strides, dtype in cases:
        assert (tuple(got.shape), got.stride(), got.dtype) == (shape, strides, dtype)
        assert got.device.type == "cpu" and got._version == 0


def test_stated_results_through_the_host_round_trip():
    """An op without a CUDA kernel runs its CPU kernel on host copies: the results its front end
    stated, allocated on the device by the dispatcher, receive the host ones (new results:
    version 0), and the CPU kernel gets host results to write."""
    if not minitorch.cuda.is_available():
        import pytest
        pytest.skip("no CUDA device (nor the emulated one)")
    assert minitorch._C._dispatch_table("linalg_det")["CUDA"].startswith("mt_cuda_host_")
    a = minitorch.tensor([[[2.0, 1.0], [1.0, 3.0]], [[4.0, 0.0], [0.0, 0.5]]], dtype=minitorch.float64)
    for f in (minitorch.linalg.det, minitorch.linalg.inv, lambda t: minitorch.linalg.slogdet(t)[1]):
        got, want = f(a.cuda()), f(a)
        assert got.device.type == "cuda" and got._version == 0
        assert (tuple(got.shape), got.stride(), got.dtype) == (tuple(want.shape), want.stride(),
                                                                want.dtype)
        assert float((got.cpu() - want).abs().max()) < 1e-12


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_result_only_the_data_sizes(device):
    """lstsq's residuals exist only where every matrix has full rank: its front end states the
    other results and its kernel makes that one (mt_dispatch_result), on the CPU and through the
    host round trip; masked_select's and nonzero's counts, one_hot's largest class likewise."""
    if device == "cuda" and not minitorch.cuda.is_available():
        pytest.skip("no CUDA device (nor the emulated one)")
    A = minitorch.arange(30, dtype=minitorch.float64).reshape(3, 5, 2).cos().to(device)
    B = minitorch.arange(60, dtype=minitorch.float64).reshape(3, 5, 4).sin().to(device)
    full = minitorch.linalg.lstsq(A, B, driver="gelsd")
    short = minitorch.linalg.lstsq(A * 0, B, driver="gelsd")
    assert [tuple(r.shape) for r in full] == [(3, 2, 4), (3, 4), (3,), (3, 2)]
    assert [tuple(r.shape) for r in short] == [(3, 2, 4), (0,), (3,), (3, 2)]
    assert all(r.device.type == device for r in full + short)
    assert float(full.residuals.min()) > 0 and int(short.rank.max()) == 0
    x = minitorch.tensor([[0.0, 2.0, -1.0], [3.0, 0.0, 0.0]], device=device)
    cases = [(x.masked_select(x > 0), (2,), (1,), minitorch.float32),
             (x.t().masked_select(x.t() != 0), (3,), (1,), minitorch.float32),
             (x.nonzero(), (3, 2), (2, 1), minitorch.int64),
             (x[:0].nonzero(), (0, 2), (2, 1), minitorch.int64),
             (minitorch.nn.functional.one_hot(x.long().abs()), (2, 3, 4), (12, 4, 1),
              minitorch.int64)]
    for got, shape, strides, dtype in cases:
        assert (tuple(got.shape), got.stride(), got.dtype, got.device.type) == (shape, strides,
                                                                                dtype, device)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_results_a_kernel_converts_into_are_new(device):
    """A kernel that computes a result elsewhere (a reduced loss, a cast permutation, draws made
    of ops) writes it with the device's own copy, and a draw fills its new result without the
    in-place fills' version bump: the result is new, version 0, as PyTorch's."""
    if device == "cuda" and not minitorch.cuda.is_available():
        pytest.skip("no CUDA device (nor the emulated one)")
    F = minitorch.nn.functional
    x = minitorch.arange(12, dtype=minitorch.float32).reshape(4, 3).div(12).to(device)
    t = minitorch.tensor([0, 1, 2, 1]).to(device)
    results = [F.nll_loss(x, t), F.nll_loss(x, t, reduction="sum"), F.nll_loss(x, t, reduction="none"),
               minitorch.randperm(5, dtype=minitorch.float32, device=device),
               minitorch.randperm(5, device=device), minitorch.multinomial(x + 0.1, 3, True),
               minitorch.multinomial(x + 0.1, 2), minitorch.poisson(x + 1), minitorch._standard_gamma(x + 1),
               x.max(1)[1], x.argmax(), x.sum(0, dtype=minitorch.float64),
               *minitorch._unique2(t, True, True, True), *minitorch._C.unique_dim(x, 0, True, True, True)]
    assert [r._version for r in results] == [0] * len(results)
    assert all(r.device.type == device for r in results)
    assert float(F.nll_loss(x, t).cpu()) == pytest.approx(-(0 + 4 + 8 + 10) / 48)
