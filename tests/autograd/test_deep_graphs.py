"""Autograd graphs of any depth and node shape are freed and run backwards in constant stack.

Each graph is built, run and freed on a thread with a 256 KiB stack, in a child process (a stack
overflow kills the child, not pytest). The graphs and their checks (grads, every node freed)
are the memory fuzzer's (tests/fuzz/fuzz_memory.py: GRAPHS, deep_graph)."""
import signal
import subprocess
import sys

import pytest

import minitorch

from helpers import ROOT, child_env

FUZZ = ROOT / "tests" / "fuzz"
sys.path.insert(0, str(FUZZ))
from fuzz_memory import GRAPHS  # noqa: E402


def in_child(calls, timeout=300):
    """Runs deep_graph(*args) for each args in a child; fails with the call that broke."""
    code = (f"import sys; sys.path.insert(0, {str(FUZZ)!r})\n"
            "from fuzz_memory import deep_graph\n"
            f"for args in {calls!r}:\n"
            "    print(args, flush=True)\n"
            "    built, error = deep_graph(*args)\n"
            "    assert error is None, error\n")
    proc = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        # the child's stderr in both cases: under the sanitizers an abort comes with its report
        how = f"signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else "exit"
        how += f"; its stderr ends:\n{proc.stderr[-3000:]}"
        last = proc.stdout.strip().splitlines()[-1:] or ["(before the first graph)"]
        pytest.fail(f"the child died in deep_graph{last[0]}: {how}")


@pytest.mark.parametrize("shape", GRAPHS)
def test_deep_graph_freed_and_backpropagated_on_a_small_stack(shape):
    # was: a segfault in mt_node_release/free_node, which recursed once per node for every node
    # with more than one edge (y + 0.0, y + w, total + loss, stack, a ladder)
    in_child([(shape, 100_000, "free"), (shape, 100_000, "backward")])


def test_million_node_chain_on_a_small_stack():
    in_child([("add scalar", 1_000_000, "backward")])


def test_backward_graph_of_a_deep_loss():
    # was: RecursionError (minitorch.viz walked next_functions recursively)
    w = minitorch.ones(2, requires_grad=True)
    total = 0
    for _ in range(5_000):
        total = total + (w * 2.0).sum()
    g = minitorch.viz.backward_graph(total)
    # per step: add, sum, mul; w's AccumulateGrad once; the loss
    assert len(g.nodes) == 3 * 5_000 + 1 + 1
    assert len(g.edges) == 4 * 5_000  # add: 2 (the first: 1), sum: 1, mul: 1; the loss: 1
    assert {n.name for n in g.nodes} == {"AddBackward0", "SumBackward0", "MulBackward0", "AccumulateGrad", "loss"}
