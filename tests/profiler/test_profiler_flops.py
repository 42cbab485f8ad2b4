"""profile(with_flops=True): the FLOPs of each op as PyTorch counts them, and the table's column."""
import pytest

import minitorch

torch = pytest.importorskip("torch")


def _calls(lib):
    F = lib.nn.functional
    lib.manual_seed(0)
    lib.mm(lib.randn(5, 7), lib.randn(7, 3))
    lib.addmm(lib.randn(3), lib.randn(5, 7), lib.randn(7, 3))
    lib.bmm(lib.randn(2, 5, 7), lib.randn(2, 7, 3))
    lib.baddbmm(lib.randn(2, 5, 3), lib.randn(2, 5, 7), lib.randn(2, 7, 3))
    F.conv2d(lib.randn(2, 4, 9, 9), lib.randn(6, 2, 3, 3), stride=2, padding=1, groups=2)
    F.conv2d(lib.randn(1, 3, 10, 12), lib.randn(5, 3, 3, 2), padding=(2, 1), dilation=(2, 3))
    F.conv2d(lib.randn(1, 3, 8, 8), lib.randn(4, 3, 3, 3), stride=(1, 2))
    lib.randn(4, 5).mul(lib.randn(5))
    lib.randn(4, 5).add(lib.randn(4, 5))
    lib.randn(3, 6) * 2
    F.linear(lib.randn(5, 7), lib.randn(3, 7), lib.randn(3))
    lib.randn(6, 4).sum()


def _counted(lib):
    with lib.profiler.profile(with_flops=True) as p:
        _calls(lib)
    prefix = "Op::" if lib is minitorch else "aten::"
    got = [(e.name[len(prefix):], e.flops) for e in p.events() if e.name.startswith(prefix) and e.flops]
    return got, p


def test_flops_of_each_op_are_pytorchs():
    ours, _ = _counted(minitorch)
    theirs, _ = _counted(torch)
    assert sorted(ours) == sorted(theirs)
    assert ("conv2d", 10800) in ours


def test_without_with_flops_nothing_is_counted():
    with minitorch.profiler.profile(record_shapes=True) as p:
        minitorch.mm(minitorch.randn(5, 7), minitorch.randn(7, 3))
    assert all(e.flops == 0 for e in p.events())
    assert "FLOPs" not in p.key_averages().table()


def test_table_has_pytorchs_flops_column():
    _, p = _counted(minitorch)
    table = p.key_averages().table(sort_by="flops", row_limit=5)
    header = table.splitlines()[1]
    assert header.rstrip().endswith("Total FLOPs")  # the smallest count (20) sets the unit
    avg = {e.key: e.flops for e in p.key_averages()}
    rows = {line.split()[0]: line.split()[-1] for line in table.splitlines()[3:8]}
    assert rows["Op::conv2d"] == f"{avg['Op::conv2d']:.3f}"  # sorted by flops: conv2d's three calls lead
    _, tp = _counted(torch)
    tavg = {e.key.replace("aten::", "Op::"): e.flops for e in tp.key_averages() if e.flops}
    for k, v in tavg.items():
        assert avg[k] == v, k
