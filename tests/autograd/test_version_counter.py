"""Version counters belong to a tensor and its views, as in PyTorch, not to the storage: views and
detach() share their base's counter, `.data` has its own; autograd refuses a saved tensor changed
in place (directly or through a view) and accepts a change through `.data`. Each case runs in
PyTorch and in minitorch: the same gradients, or the same error, and the same _version values."""
import pytest

import minitorch

torch = pytest.importorskip("torch")

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def data_add(lib, x):
    y = (x * x).sum()
    x.data.add_(1)
    y.backward()
    return x.grad


def data_view_add(lib, x):
    y = (x * x).sum()
    x.data[1:].add_(1)
    y.backward()
    return x.grad


def detach_of_data_add(lib, x):
    y = (x * x).sum()
    x.data.detach().add_(1)
    y.backward()
    return x.grad


def detach_add(lib, x):
    y = (x * x).sum()
    x.detach().add_(1)
    y.backward()
    return x.grad


def saved_add(lib, x):
    a = x * 1
    y = (a * a).sum()
    a.add_(1)
    y.backward()
    return x.grad


def view_of_saved_add(lib, x):
    a = x * 1
    y = (a * a).sum()
    with lib.no_grad():
        a[1:].add_(1)
    y.backward()
    return x.grad


def base_of_saved_view_mul(lib, x):
    a = x * 1
    b = a[1:]
    y = (b * b).sum()
    a.mul_(2)
    y.backward()
    return x.grad


def saved_leaf_data_then_detach(lib, x):
    y = (x.exp()).sum()  # exp saves its output
    x.data.mul_(2)  # the leaf, not the saved output
    y.backward()
    return x.grad


def optimizer_style_update(lib, x):
    """What SGD written by hand does: p.data.add_(-lr * grad) between two backward passes."""
    for _ in range(2):
        y = (x * x).sum()
        y.backward()
        x.data.add_(x.grad, alpha=-0.1)
    return x.detach()


CASES = [data_add, data_view_add, detach_of_data_add, detach_add, saved_add, view_of_saved_add,
         base_of_saved_view_mul, saved_leaf_data_then_detach, optimizer_style_update]


def outcome(lib, case):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    try:
        return "ok", case(lib, x).tolist()
    except RuntimeError as e:
        assert MODIFIED in str(e), str(e)
        return "modified", None


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_against_pytorch(case):
    assert outcome(minitorch, case) == outcome(torch, case)


def versions(lib):
    x = lib.ones(4)
    d, v, det = x.data, x[1:], x.detach()
    seen = [(x._version, d._version, v._version, det._version)]
    for t in (d, v, det, x, d[:2]):
        t.add_(1)
        seen.append((x._version, d._version, v._version, det._version))
    x.data = lib.zeros(4)  # x keeps its counter
    x.add_(1)
    seen.append((x._version, d._version, v._version, det._version))
    return seen


def test_version_values_against_pytorch():
    assert versions(minitorch) == versions(torch)


def test_parameter_shares_its_sources_counter():
    """nn.Parameter(t) aliases t as detach() does: the same counter, as in PyTorch."""
    for lib in (minitorch, torch):
        t = lib.ones(3)
        p = lib.nn.Parameter(t)
        t.add_(1)
        assert p._version == t._version == 1
