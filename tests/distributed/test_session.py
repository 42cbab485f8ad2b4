"""Ranks started without the launcher leave their starter's session, as mpiexec's ranks are started
(distributed/_session.py: under Linux's autogroup a session is one scheduling group, and ranks that
poll for each other in one group take CPU time from each other), and the signals sent to their old
process group still reach them through a relay: Ctrl-C (SIGINT to the group), a supervisor's
SIGTERM or SIGKILL to the group end every rank."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import child_env
from launching import SCRIPTS, needs_mpi

pytestmark = [needs_mpi, pytest.mark.skipif(not hasattr(os, "setsid"), reason="POSIX sessions")]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _start(tmp_path, how: str, env=None):
    """spawned.py <how> 2 interrupt.py in a session of its own (as a shell's job); waits until both
    ranks run their loop of all_reduce and returns the process and the ranks' self-reports."""
    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, str(SCRIPTS / "spawned.py"), how, "2", "interrupt.py", str(out)]
    proc = subprocess.Popen(cmd, env=child_env(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1", **(env or {})),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not all((out / f"rank{r}.json").exists() for r in range(2)):
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(f"the ranks did not start (exit {proc.returncode})\nstdout:\n{stdout}\nstderr:\n{stderr}")
        time.sleep(0.05)
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    return proc, out, ranks


def _end_all(proc, ranks) -> None:
    for info in ranks:
        for pid in (info["pid"], info["relay"]):
            if pid > 0 and _alive(pid):
                os.kill(pid, signal.SIGKILL)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.communicate()


def _wait_gone(pids, seconds: float) -> list:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_signal_to_the_starters_group_ends_every_rank(tmp_path, sig):
    proc, out, ranks = _start(tmp_path, "process")
    try:
        starter_group = os.getpgid(proc.pid)
        for info in ranks:
            # a session (and autogroup) of its own, its relay left in the starter's group
            assert info["sid"] == info["pid"] and info["pgid"] == info["pid"], info
            assert info["relay"] > 0 and os.getpgid(info["relay"]) == starter_group, info
        if ranks[0]["autogroup"]:
            assert ranks[0]["autogroup"] != ranks[1]["autogroup"], ranks
        os.killpg(starter_group, sig)  # what Ctrl-C in a terminal, or a supervisor, does to a job
        left = _wait_gone([info["pid"] for info in ranks] + [info["relay"] for info in ranks], 60)
        assert left == [], f"still running after {sig.name}: {left}"
        if sig == signal.SIGINT:  # Python's KeyboardInterrupt, in each rank's own loop
            assert all((out / f"rank{r}.interrupted").exists() for r in range(2))
    finally:
        _end_all(proc, ranks)


def test_turned_off_ranks_stay_in_the_starters_session(tmp_path):
    proc, out, ranks = _start(tmp_path, "process", env={"MINITORCH_DIST_OWN_SESSION": "0"})
    try:
        for info in ranks:
            assert info["sid"] == proc.pid and info["relay"] == -1, info
        os.killpg(proc.pid, signal.SIGINT)
        assert _wait_gone([info["pid"] for info in ranks], 60) == []
    finally:
        _end_all(proc, ranks)


def test_a_process_group_leader_stays(monkeypatch):
    import minitorch.distributed._session as session

    monkeypatch.setattr(session.os, "getpgid", lambda pid: os.getpid())
    assert session.enter_own_session() is False
    assert session._relay is None


def test_a_relay_that_cannot_start_leaves_the_rank_where_it_was(monkeypatch):
    import minitorch.distributed._session as session

    monkeypatch.setattr(session.sys, "executable", "/nonexistent/python")
    monkeypatch.setattr(session.os, "getpgid", lambda pid: -1)  # not a group leader: it would move
    sid = os.getsid(0)
    assert session.enter_own_session() is False
    assert session._relay is None and os.getsid(0) == sid


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_the_launcher_ends_every_rank(tmp_path, sig):
    """mpiexec's ranks are in sessions of their own: Ctrl-C (SIGINT to the launcher's group) or a
    supervisor's SIGTERM to the launcher must still end them, through the launcher."""
    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, "-m", "minitorch.distributed.run", "--kill-grace", "2", "--nproc-per-node", "2",
           str(SCRIPTS / "interrupt.py"), str(out)]
    proc = subprocess.Popen(cmd, env=child_env(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    ranks = []
    try:
        deadline = time.monotonic() + 120
        while not all((out / f"rank{r}.json").exists() for r in range(2)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
        assert all(info["sid"] == info["pid"] for info in ranks), ranks  # mpiexec's own sessions
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # the terminal's Ctrl-C: the launcher's group only
        else:
            proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig
        assert _wait_gone([info["pid"] for info in ranks], 30) == []
    finally:
        _end_all(proc, ranks)
