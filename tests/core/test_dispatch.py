"""The op table and the dispatcher: what exists, which key runs, and the composites' real
decomposition as the journey trace records it."""
import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch._journey import record

TESTS = Path(__file__).resolve().parents[1]


# Calls on these names are NumPy's, PyTorch's or the standard library's, not minitorch's.
NOT_MINITORCH = {"np", "numpy", "math", "cmath", "torch", "random", "re", "os", "sys", "operator", "builtins"}


def called_attributes(source: str) -> set:
    """The names called as attributes in Python source (`minitorch.x(`, `m.x(`, `F.x(`, `t.x(`),
    leaving out calls on NumPy, PyTorch and standard modules and bare names (the builtins `all(`,
    `slice(`, `abs(`), so only a real call of an op counts, not text in a string or a comment."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = node.func.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in NOT_MINITORCH):
                names.add(node.func.attr)
    return names


def test_the_op_test_guard_counts_only_real_calls():
    src = "all(x)\nslice(1)\nnp.sort(a)\ntorch.nn.functional.gelu(t)\ns = 'x.topk(2)'  # y.flip(0)\n"
    assert called_attributes(src) == set()
    assert called_attributes("m.all(x)\nF.gelu(t)\n(x > 0).any()\nminitorch._C.max_dim(x, 0)\n") == {
        "all", "gelu", "any", "max_dim"}


def test_every_op_has_a_test():
    """Walks _C.OPS: an op that no test calls fails here (the unary table's rows are called by
    the tests it drives)."""
    called = set()
    for path in [*TESTS.rglob("test_*.py"), TESTS / "unary_table.py"]:
        called |= called_attributes(path.read_text())
    missing = [op for op in minitorch._C.OPS if op not in called]
    assert not missing, f"ops without a test: {missing}"


def test_every_op_has_a_kernel_and_its_python_forms():
    for op in minitorch._C.OPS:
        info = minitorch._C._op_info(op)
        table = minitorch._C._dispatch_table(op)
        assert table, f"{op} has no kernel"
        # an overload (max_dim) carries its Python name in the schema (max)
        assert info["schema"].split("(")[0] in (op, op.rsplit("_", 1)[0]), op
        if info["function"]:
            assert callable(getattr(minitorch, op)), op
        if info["method"]:
            assert callable(getattr(minitorch.Tensor, op)), op


def test_host_slots_name_the_batch_sizes_of_the_packed_ops():
    """ops.def's HOST_SLOTS(mask) bits name the tensor slots that stay on the host for data on any
    device (the dispatcher leaves them out of the call's device): the packed recurrent ops'
    batch_sizes, and nothing else."""
    host = {}
    for op in minitorch._C.OPS:
        info = minitorch._C._op_info(op)
        if info["host_slots"]:
            schema = info["schema"]
            params = [p.split("=")[0].split() for p in schema[schema.index("(") + 1:schema.rindex(")")].split(", ")]
            tensors = [name for typ, name in (p for p in params if len(p) == 2) if typ.rstrip("?") == "Tensor"]
            mask = info["host_slots"]
            host[op] = [tensors[k] for k in range(mask.bit_length()) if mask >> k & 1]
    assert host == {op: ["batch_sizes"] for op in ("lstm_data", "gru_data", "rnn_tanh_data", "rnn_relu_data",
                                                   "_lstm_layer", "_gru_layer", "_rnn_layer")}
    assert minitorch._C._op_info("lstm_data")["host_slots"] == 0b10
    assert minitorch._C._op_info("add")["host_slots"] == 0


def test_dispatch_table_shows_keys():
    table = minitorch._C._dispatch_table("addmm")
    table.pop("CUDA", None)  # registered by _C_cuda where it is built (with cuBLAS)
    assert table == {"CPU": "mt_cpu_addmm", "Meta": "mt_meta_addmm", "Autograd": "mt_autograd_kernel"}
    assert minitorch._C._dispatch_table("linear") == {"CompositeImplicitAutograd": "mt_composite_linear"}
    with pytest.raises(ValueError):
        minitorch._C._dispatch_table("no_such_op")


def test_rows_may_share_a_kernel():
    """An ops.def row's CPU_AS(kernel) names the kernel it shares: the 2-D and 3-D poolings (with
    and without indices) have one kernel per family, which the op's plan tells apart."""
    cpu = {op: minitorch._C._dispatch_table(op)["CPU"] for op in minitorch._C.OPS if "pool" in op and "unpool" not in op}
    assert cpu["max_pool2d"] == cpu["max_pool3d_with_indices"] == "mt_cpu_max_pool"
    assert cpu["avg_pool3d_backward"] == cpu["avg_pool2d_backward"] == "mt_cpu_avg_pool_backward"
    assert cpu["_adaptive_avg_pool3d_backward"] == "mt_cpu_adaptive_avg_pool_backward"
    x = minitorch.arange(2 * 4 * 4 * 4.0).reshape(2, 4, 4, 4)
    assert minitorch.max_pool2d(x, 2).shape == (2, 4, 2, 2)  # the same kernel, by rank
    assert minitorch.max_pool3d(x, 2).shape == (2, 2, 2, 2)
    out, idx = minitorch._C.max_pool3d_with_indices(x, 2)
    assert idx.dtype == minitorch.int64 and minitorch.equal(out, minitorch.max_pool3d(x, 2))


def ops_of(events):
    return [(e.depth, e.name) for e in events if e.layer == "Op"]


def test_linear_decomposes_into_t_transpose_as_strided_and_addmm():
    x, w, b = minitorch.ones(1, 4), minitorch.ones(8, 4), minitorch.ones(8)
    _, events = record(nn.functional.linear, x, w, b)
    assert ops_of(events) == [(0, "linear"), (1, "t"), (2, "transpose"), (3, "as_strided"), (1, "addmm")]
    keys = {e.name: e.detail for e in events if e.layer == "Op"}
    assert keys["addmm"] == "CPU" and keys["linear"] == "CompositeImplicitAutograd"
    assert [e.name for e in events if e.layer == "Library"] == ["cblas_sgemv"]


def test_batched_linear_flattens_into_addmm():
    """A contiguous input of 3 dims or more is one addmm over its rows (PyTorch's
    _flatten_nd_linear: on CUDA one cuBLASLt product with the bias epilogue); any other batched
    input goes through matmul, then add."""
    _, events = record(nn.functional.linear, minitorch.ones(2, 3, 4), minitorch.ones(5, 4), minitorch.ones(5))
    names = [n for _, n in ops_of(events)]
    assert names[:4] == ["linear", "t", "transpose", "as_strided"]
    assert "addmm" in names and "view" in names and "matmul" not in names and "add" not in names
    _, events = record(nn.functional.linear, minitorch.ones(3, 2, 4).transpose(0, 1), minitorch.ones(5, 4),
                       minitorch.ones(5))
    names = [n for _, n in ops_of(events)]
    assert names[4] == "matmul" and "add" in names and "addmm" not in names


def test_relu_is_clamp_min():
    _, events = record(minitorch.relu, minitorch.ones(3))
    assert ops_of(events) == [(0, "relu"), (1, "clamp_min")]
    assert [e.name for e in events if e.layer == "Kernel"] == ["mt_cpu_clamp_min"]


def test_seed_network_journey():
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    _, events = record(model, minitorch.randn(1, 4))
    py = [(e.depth, e.name) for e in events if e.layer == "Python"]
    assert py == [(0, "Sequential"), (1, "Linear"), (1, "ReLU"), (1, "Linear")]
    assert [e.name for e in events if e.layer == "Kernel"] == ["mt_cpu_addmm", "mt_cpu_clamp_min", "mt_cpu_addmm"]
    for outer, inner in zip(events, events[1:]):
        if inner.depth > outer.depth:
            assert outer.us >= inner.us - 1e-3, "a child took longer than its parent"


def test_seed_network_matches_numpy():
    minitorch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(5, 4)
    p = {k: v.numpy().astype(np.float64) for k, v in model.state_dict().items()}
    h = np.maximum(x.numpy().astype(np.float64) @ p["0.weight"].T + p["0.bias"], 0)
    np.testing.assert_allclose(model(x).detach().numpy(), h @ p["2.weight"].T + p["2.bias"], atol=1e-6)


def test_main_job_prints_the_journey(tmp_path):
    out = subprocess.run([sys.executable, "-m", "minitorch", "--device", "cpu", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for line in ("Op::linear", "Op::addmm", "Kernel::mt_cpu_addmm", "Library::cblas_sgemv", "Op::clamp_min",
                 "output y = model(x):"):
        assert line in out.stdout


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="a CUDA device is usable")
def test_cuda_factories_without_a_device_raise_pytorchs_error():
    # Factories accept the device and fail without a usable one, as PyTorch's: AssertionError
    # on a build without the CUDA backend (MINITORCH_CUDA=0), RuntimeError where it is built.
    cls = RuntimeError if minitorch.cuda.is_built() else AssertionError
    with pytest.raises(cls):
        minitorch.zeros(2, device="cuda")


def test_grad_mode_flag_is_thread_local_state():
    assert minitorch.is_grad_enabled()
    with minitorch.no_grad():
        assert not minitorch.is_grad_enabled()
        with minitorch.enable_grad():
            assert minitorch.is_grad_enabled()
    assert minitorch.is_grad_enabled()

    @minitorch.no_grad()
    def f():
        return minitorch.is_grad_enabled()

    assert f() is False and minitorch.is_grad_enabled()
    minitorch.set_grad_enabled(False)
    assert not minitorch.is_grad_enabled()
    minitorch.set_grad_enabled(True)


def test_cpu_allocator_counts_bytes():
    before = minitorch._C._cpu_allocator_stats()
    t = minitorch.empty(1000, dtype=minitorch.float64)
    mid = minitorch._C._cpu_allocator_stats()
    assert mid["allocated_bytes"] - before["allocated_bytes"] == 8000
    assert mid["peak_allocated_bytes"] >= mid["allocated_bytes"]
    assert t.data_ptr() % 64 == 0
    del t
    assert minitorch._C._cpu_allocator_stats()["allocated_bytes"] == before["allocated_bytes"]


def test_type_stub_is_generated_from_the_op_table():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_stub", TESTS.parent / "tools" / "gen_stub.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (TESTS.parent / "minitorch" / "_C.pyi").read_text() == gen.render(), "run python tools/gen_stub.py"


def stub_arity(annotation: ast.expr, classes: dict):
    """The number of tensors a stub return annotation promises: 1, k for a tuple or named tuple
    of k tensors, "list" for Tuple[TensorBase, ...], 0 for None (the optimizer steps); None for
    anything else."""
    text = ast.unparse(annotation)
    if text == "None":
        return 0
    if text == "TensorBase":
        return 1
    if text == "Tuple[TensorBase, ...]":
        return "list"
    if text.startswith("Tuple[") and all(e.strip() == "TensorBase" for e in text[6:-1].split(",")):
        return text.count("TensorBase")
    fields = classes.get(text)
    if fields and all(ast.unparse(f.annotation).strip("'\"") == "TensorBase" for f in fields):
        return len(fields)
    return None


def test_type_stub_has_every_op_with_its_number_of_results():
    """Independently of the generator: every op of the table is a function of the stub (and a
    TensorBase method where it is one), returning as many tensors as the op does at run time."""
    tree = ast.parse((TESTS.parent / "minitorch" / "_C.pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    fields = {name: [f for f in c.body if isinstance(f, ast.AnnAssign)] for name, c in classes.items()}
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    methods = {n.name: n for n in classes["TensorBase"].body if isinstance(n, ast.FunctionDef)}
    for op in minitorch._C.OPS:
        info = minitorch._C._op_info(op)
        want = "list" if info["nout"] == -1 else info["nout"]
        assert op in functions, f"{op} is not in _C.pyi"
        assert stub_arity(functions[op].returns, fields) == want, f"{op} returns {want} in _C.pyi"
        if info["method"]:
            assert op in methods and stub_arity(methods[op].returns, fields) == want, f"TensorBase.{op}"
    # two results come as named tuples with the stub's field names
    names = [f.target.id for f in fields["_ValuesIndices"]]
    x = minitorch.tensor([[3.0, 1.0], [2.0, 4.0]])
    for result in (minitorch._C.sort(x), minitorch._C.topk(x, 1), minitorch._C.max_dim(x, 1)):
        assert [getattr(result, name) is result[k] for k, name in enumerate(names)] == [True, True]
