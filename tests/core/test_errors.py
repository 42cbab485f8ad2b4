"""Bad calls raise the exception PyTorch raises, and none of them crashes the interpreter.

Each call of the table runs in a child process (so a segfault or a sanitizer abort fails the
tests instead of killing pytest); the child prints, per call, the class of what it raised. The
parent runs the same calls against PyTorch and compares. If the child dies, the call it died on
is recorded as a crash and a new child carries on from the next call."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from helpers import child_env as helpers_child_env

ROOT = Path(__file__).resolve().parents[2]

# (id, the call: Python source run with L = minitorch, or L = torch in the parent)
CASES = [
    # sizes
    ("zeros_negative", "L.zeros(-1)"),
    ("empty_negative", "L.empty(2, -3)"),
    ("empty_overflow", "L.empty(2**62, 2**62)"),
    ("empty_overflow_3d", "L.empty(2**31, 2**31, 2**31)"),
    ("empty_out_of_memory", "L.empty(2**50)"),
    ("ones_size_too_big_for_int64", "L.ones(2**63)"),
    ("zeros_float_size", "L.zeros(2.5)"),
    ("zeros_str_size", "L.zeros('a')"),
    ("zeros_none_in_size", "L.zeros((2, None))"),
    ("full_int_size", "L.full(2, 7)"),
    # dtypes and keyword arguments
    ("zeros_str_dtype", "L.zeros(2, dtype='float32')"),
    ("zeros_bad_kwarg", "L.zeros(2, foo=1)"),
    ("zeros_misspelt_dtype_kwarg", "L.zeros(2, dtyp=L.int64)"),
    ("tensor_bad_kwarg", "L.tensor([1], foo=1)"),
    ("zeros_int_requires_grad", "L.zeros(2, requires_grad=True, dtype=L.int64)"),
    ("tensor_int_requires_grad", "L.tensor([1, 2], requires_grad=True)"),
    ("rand_int64", "L.rand(2, dtype=L.int64)"),
    ("randn_bool", "L.randn(2, dtype=L.bool)"),
    ("arange_zero_step", "L.arange(0, 1, 0)"),
    ("arange_wrong_sign", "L.arange(5, 0)"),
    ("arange_nan", "L.arange(float('nan'))"),
    # tensor(data)
    ("tensor_ragged", "L.tensor([[1, 2], [3]])"),
    ("tensor_list_then_scalar", "L.tensor([[1, 2], 3])"),
    ("tensor_scalar_then_list", "L.tensor([1, [2, 3]])"),
    ("tensor_str_element", "L.tensor([1, 'a'])"),
    ("tensor_none", "L.tensor(None)"),
    ("tensor_int_overflow", "L.tensor([2**64])"),
    ("tensor_of_multi_element_tensors", "L.tensor([L.zeros(2), L.zeros(2)])"),
    # views
    ("view_wrong_numel", "L.zeros(2, 3).view(4)"),
    ("view_two_inferred", "L.zeros(2, 3).view(-1, -1)"),
    ("view_negative_size", "L.zeros(2, 3).view(-2, 3)"),
    ("view_of_transposed", "L.zeros(2, 3).t().view(6)"),
    ("view_float_size", "L.zeros(2, 3).view(2, 3.0)"),
    ("reshape_wrong_numel", "L.zeros(2, 3).reshape(5)"),
    ("permute_duplicate_dims", "L.zeros(2, 3).permute(0, 0)"),
    ("permute_too_few_dims", "L.zeros(2, 3).permute(0)"),
    ("permute_dim_out_of_range", "L.zeros(2, 3).permute(0, 2)"),
    ("transpose_dim_out_of_range", "L.zeros(2, 3).transpose(0, 2)"),
    ("t_of_3d", "L.zeros(2, 3, 4).t()"),
    ("expand_non_singleton", "L.zeros(3, 1).expand(4, 4)"),
    ("expand_leading_minus_one", "L.zeros(3).expand(-1, 3)"),
    ("expand_fewer_dims", "L.zeros(2, 3).expand(3)"),
    ("squeeze_dim_out_of_range", "L.zeros(2, 3).squeeze(2)"),
    ("unsqueeze_dim_out_of_range", "L.zeros(2, 3).unsqueeze(3)"),
    ("flatten_start_after_end", "L.zeros(2, 3).flatten(1, 0)"),
    ("flatten_dim_out_of_range", "L.zeros(2, 3).flatten(0, 2)"),
    ("as_strided_huge_sizes", "L.zeros(6).as_strided((2**62, 2**62), (0, 0))"),
    ("as_strided_huge_stride", "L.zeros(6).as_strided((3,), (2**63 - 1,))"),
    ("as_strided_huge_offset", "L.zeros(6).as_strided((2,), (1,), 2**63 - 1)"),
    ("as_strided_out_of_bounds", "L.zeros(6).as_strided((7,), (1,))"),
    ("as_strided_negative_offset", "L.zeros(6).as_strided((2,), (1,), -1)"),
    ("as_strided_negative_stride", "L.zeros(6).as_strided((2,), (-1,))"),
    ("as_strided_length_mismatch", "L.zeros(6).as_strided((2,), (1, 1))"),
    ("size_dim_out_of_range", "L.zeros(2, 2).size(2)"),
    ("size_two_args", "L.zeros(2).size(0, 1)"),
    ("size_of_0d", "L.zeros(()).size(0)"),
    ("stride_of_0d", "L.zeros(()).stride(0)"),
    # indexing
    ("index_out_of_range", "L.zeros(3)[5]"),
    ("index_too_many", "L.zeros(3)[0, 0]"),
    ("index_zero_step", "L.zeros(3)[::0]"),
    ("index_negative_step", "L.zeros(3)[::-1]"),
    ("index_float", "L.zeros(3)[1.5]"),
    ("index_str", "L.zeros(3)['a']"),
    ("index_huge_int", "L.zeros(3)[2**70]"),
    ("index_0d", "L.zeros(())[0]"),
    ("setitem_out_of_range", "t = L.zeros(3); t[5] = 1"),
    ("setitem_shape_mismatch", "t = L.zeros(3, 4); t[0] = L.zeros(2)"),
    ("setitem_str", "t = L.zeros(3); t[0] = 'a'"),
    ("delitem", "t = L.zeros(3); del t[0]"),
    ("setitem_int_overflow", "t = L.zeros(2, dtype=L.int64); t[0] = 2**70"),
    # ops
    ("mm_of_1d", "L.mm(L.zeros(3), L.zeros(3))"),
    ("mm_shape_mismatch", "L.mm(L.zeros(2, 3), L.zeros(4, 5))"),
    ("matmul_bool", "L.zeros(2, 2, dtype=L.bool) @ L.zeros(2, 2, dtype=L.bool)"),
    ("matmul_dtype_mismatch", "L.zeros(2, 2) @ L.zeros(2, 2, dtype=L.float64)"),
    ("matmul_0d", "L.matmul(L.tensor(1.0), L.tensor(1.0))"),
    ("bmm_of_2d", "L.bmm(L.zeros(2, 3), L.zeros(3, 2))"),
    ("dot_size_mismatch", "L.dot(L.zeros(3), L.zeros(4))"),
    ("mv_size_mismatch", "L.mv(L.zeros(2, 3), L.zeros(4))"),
    ("add_broadcast_mismatch", "L.zeros(2, 3) + L.zeros(4)"),
    ("add__output_shape", "L.zeros(3).add_(L.zeros(2, 3))"),
    ("div__int_result", "L.zeros(3, dtype=L.int64).div_(2)"),
    ("add_str", "L.zeros(2).add('a')"),
    ("add_positional_alpha", "L.zeros(2).add(L.zeros(2), 1)"),
    ("add_missing_arg", "L.add(L.zeros(2))"),
    ("copy__shape_mismatch", "L.zeros(2, 3).copy_(L.zeros(3, 2))"),
    ("copy__into_expanded", "L.zeros(3, 1).expand(3, 4).copy_(L.ones(3, 4))"),
    ("add__into_expanded", "L.zeros(3).expand(2, 3).add_(1)"),
    ("select_out_of_range", "L.zeros(3).select(0, 3)"),
    ("sum_dim_out_of_range", "L.zeros(2, 3).sum(dim=3)"),
    ("sum_repeated_dim", "L.zeros(2, 3).sum(dim=(0, 0))"),
    # indexing, selection and sorting
    ("index_select_out_of_range", "L.zeros(3).index_select(0, L.tensor([3]))"),
    ("gather_negative_index", "L.zeros(3).gather(0, L.tensor([-1]))"),
    ("scatter__huge_index", "L.zeros(3).scatter_(0, L.tensor([2**62]), 1.0)"),
    ("scatter_add_rank_mismatch", "L.zeros(3).scatter_add(0, L.tensor([[0]]), L.ones(1, 1))"),
    ("masked_fill_float_mask", "L.zeros(3).masked_fill(L.zeros(3), 1)"),
    ("masked_select_shape", "L.zeros(3).masked_select(L.ones(4, dtype=L.bool))"),
    ("sort_dim_out_of_range", "L.zeros(3).sort(1)"),
    ("topk_k_too_big", "L.zeros(3).topk(4)"),
    ("getitem_tensor_out_of_range", "L.zeros(3)[L.tensor([3])]"),
    ("getitem_huge_tensor_index", "L.zeros(3)[L.tensor([2**62, -2**62])]"),
    ("getitem_float_tensor", "L.zeros(3)[L.tensor([0.5])]"),
    ("getitem_mask_shape", "L.zeros(3)[L.tensor([True, False])]"),
    ("getitem_lists_too_many", "L.zeros(3)[[0], [0]]"),
    ("getitem_lists_not_broadcasting", "L.zeros(3, 3)[[0, 1], [0, 1, 2]]"),
    ("setitem_list_out_of_range", "t = L.zeros(3); t[[0, 5]] = 1"),
    ("setitem_mask_value_shape", "t = L.zeros(3); t[t == 0] = L.ones(2)"),
    ("index_put__dtype", "L.zeros(3).index_put_((L.tensor([0]),), L.tensor([1]))"),
    # scalars and conversions
    ("item_of_many", "L.zeros(2).item()"),
    ("float_of_many", "float(L.zeros(2))"),
    ("bool_of_many", "bool(L.zeros(2))"),
    ("len_of_0d", "len(L.zeros(()))"),
    ("numpy_requires_grad", "L.ones(2, requires_grad=True).numpy()"),
    ("from_numpy_list", "L.from_numpy([1, 2])"),
    ("from_numpy_negative_stride", "L.from_numpy(np.arange(3.0)[::-1])"),
    ("from_numpy_big_endian", "L.from_numpy(np.zeros(3, '>f4'))"),
    ("to_unknown_device", "L.zeros(2).to('xpu:0:1')"),
]

# Calls where minitorch is known to differ: "class" (raises, but not PyTorch's class) or
# "noraise" (does not raise at all). A crash is never listed here: it fails.
BUGS = {
}

IDS = [c[0] for c in CASES]
SOURCES = dict(CASES)

CHILD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import minitorch as L
cases = json.loads(sys.stdin.read())
print("READY", flush=True)
for i in range(int(sys.argv[1]), len(cases)):
    try:
        exec(cases[i], {"L": L, "np": np})
    except Exception as e:
        res = [c.__name__ for c in type(e).__mro__]
    else:
        res = None
    print(json.dumps([i, res]), flush=True)
"""


def child_env():
    env = helpers_child_env()
    if "ASAN_OPTIONS" in env or "libasan" in env.get("LD_PRELOAD", ""):
        # Under AddressSanitizer a huge malloc must fail as malloc does, not abort the process.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "allocator_may_return_null=1"]))
    return env


@pytest.fixture(scope="module")
def child():
    """Runs every call in child processes: {index: class MRO names or None}, crashes, exit codes."""
    sources = [src for _, src in CASES]
    results, crashes, codes = {}, {}, []
    start = 0
    while start < len(sources):
        try:
            p = subprocess.run(
                [sys.executable, "-c", CHILD, str(start)], input=json.dumps(sources), capture_output=True,
                text=True, timeout=120, env=child_env(), cwd=str(ROOT),
            )
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, rc = "timed out", "timeout"
        codes.append(rc)
        lines = out.splitlines()
        if "READY" not in lines:
            pytest.fail(f"the child could not import minitorch (exit {rc}):\n{err[-3000:]}")
        last = start - 1
        for line in lines:
            if line.startswith("["):
                i, res = json.loads(line)
                results[i] = res
                last = i
        if rc == 0:
            break
        report = err if len(err) < 4000 else err[:2000] + "\n...\n" + err[-2000:]
        crashes[last + 1] = f"exit {rc}: {report}"
        start = last + 2
    return results, crashes, codes


def torch_result(torch, src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(src, {"L": torch, "np": np})
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e)
    return None


def marks_for(case, test):
    kind, reason = BUGS.get(case, (None, None))
    if kind == "noraise" or (kind == "class" and test == "torch"):
        return [pytest.mark.xfail(strict=True, reason=reason)]
    return []


@pytest.mark.parametrize("case", [pytest.param(c, marks=marks_for(c, "raises")) for c in IDS], ids=IDS)
def test_bad_call_raises(case, child):
    results, crashes, _ = child
    i = IDS.index(case)
    assert i not in crashes, f"{SOURCES[case]} crashed the interpreter: {crashes[i]}"
    assert results[i] is not None, f"{SOURCES[case]} did not raise"
    assert results[i][0] not in ("SystemError", "AssertionError"), f"{SOURCES[case]} raised {results[i][0]}"


@pytest.mark.parametrize("case", [pytest.param(c, marks=marks_for(c, "torch")) for c in IDS], ids=IDS)
def test_bad_call_raises_like_torch(case, child):
    torch = pytest.importorskip("torch")
    results, crashes, _ = child
    i = IDS.index(case)
    assert i not in crashes, f"{SOURCES[case]} crashed the interpreter: {crashes[i]}"
    expected = torch_result(torch, SOURCES[case])
    assert expected is not None, f"the table is wrong: PyTorch accepts {SOURCES[case]}"
    got = results[i]
    assert got is not None, f"{SOURCES[case]} did not raise; PyTorch raises {expected.__name__}"
    expected_mro = [c.__name__ for c in expected.__mro__]
    assert got[0] in expected_mro or expected.__name__ in got, (
        f"{SOURCES[case]} raised {got[0]}; PyTorch raises {expected.__name__}"
    )


def test_children_exit_cleanly(child):
    _, crashes, codes = child
    assert codes == [0], f"crashes: { {SOURCES[IDS[i]]: msg for i, msg in crashes.items()} }"


def test_every_case_ran(child):
    results, crashes, _ = child
    assert set(results) | set(crashes) == set(range(len(CASES)))


def test_case_ids_are_unique():
    assert len(set(IDS)) == len(IDS)
    assert set(BUGS) <= set(IDS)
