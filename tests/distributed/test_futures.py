"""minitorch.futures.Future (what Work.get_future() and DDP's comm hooks return), beside
torch.futures.Future's behaviour."""
import pytest

import minitorch
from minitorch.futures import Future, collect_all, wait_all


def test_set_result_then_chain():
    f = Future()
    assert not f.done()
    g = f.then(lambda fut: fut.value() * 2)
    h = g.then(lambda fut: fut.value() + 1)
    with pytest.raises(RuntimeError, match="not completed"):
        h.value()
    f.set_result(20)
    assert f.done() and f.value() == 20
    assert h.wait() == 41 and g.value() == 40
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(1)


def test_exception_propagates_through_then():
    f = Future()
    g = f.then(lambda fut: fut.value() + 1)
    f.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        f.wait()
    with pytest.raises(ValueError, match="boom"):
        g.wait()


def test_callbacks_and_collect_all():
    seen = []
    a, b = Future(), Future()
    a.add_done_callback(lambda fut: seen.append(fut.value()))
    both = collect_all([a, b])
    a.set_result("x")
    b.set_result("y")
    assert seen == ["x"]
    assert [f.value() for f in both.wait()] == ["x", "y"]
    assert wait_all([a, b]) == ["x", "y"]
    assert minitorch.futures.Future is Future


def test_torch_agrees():
    torch = pytest.importorskip("torch")
    for lib in (torch.futures, minitorch.futures):
        f = lib.Future()
        g = f.then(lambda fut: fut.value() * 3)
        f.set_result(5)
        assert g.wait() == 15


def test_wait_blocks_until_another_thread_sets_the_result():
    # an RPC's reply, or an @async_execution function's batch, completes a Future from another
    # thread: wait() blocks until then, as torch.futures.Future.wait does
    import threading
    import time

    for complete, check in ((lambda f: f.set_result(7), lambda f: f.wait() == 7),
                            (lambda f: f.set_exception(ValueError("late")), None)):
        f = Future()
        seen = []
        f.add_done_callback(lambda fut: seen.append(fut.done()))
        threading.Thread(target=lambda: (time.sleep(0.05), complete(f))).start()
        if check is None:
            with pytest.raises(ValueError, match="late"):
                f.wait()
        else:
            assert check(f)
        assert f.done() and seen == [True]
