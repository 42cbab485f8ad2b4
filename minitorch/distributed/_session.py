"""A session of its own for each rank started without the launcher, as mpiexec gives its ranks.

Linux's autogroup (on by default on desktop and server kernels) schedules each session as one
group: a busy machine shares its CPUs among sessions first, then among a session's processes. The
ranks of mp.spawn, multiprocessing.Process or a shell loop are all in their starter's session, so
together they get one session's share, where mpiexec's proxy starts each rank in a session of its
own (setsid) and the same ranks get a share each. MPICH's ranks poll for each other: with one
share between them, each poll takes CPU time from the peer it waits for (a 4 MB all_reduce took
1.4-27x the launcher's time on a loaded 2-core machine).

A rank that leaves its session no longer gets the signals sent to its old process group (the
terminal's Ctrl-C, a supervisor's killpg), so it leaves a relay behind (_relay.py, a small process
of its own that sleeps in recv) in that group, which sends those signals on to it. The two are
joined by a socket: the relay ends with the rank, and the rank kills itself should the relay be
killed by SIGKILL (a killpg that the rank would have died of in its old group).

A process group leader (a shell job started with job control) cannot leave its session and stays;
MINITORCH_DIST_OWN_SESSION=0 turns the move off.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from typing import Optional

_relay: Optional[subprocess.Popen] = None  # this rank's relay, once it left its session
_READY_TIMEOUT = 30.0  # seconds for the relay's interpreter to start (a loaded machine is slow)


def _watch(link: socket.socket) -> None:
    """A daemon thread of the rank: the end of the relay's stream means the relay was killed."""
    try:
        while link.recv(64):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def enter_own_session() -> bool:
    """Moves this process to a session (and so an autogroup) of its own, leaving a signal relay in
    its old process group. True when it moved; False when it could not (a process group leader,
    no setsid, turned off) or already had (a second init_process_group)."""
    global _relay
    if _relay is not None or os.environ.get("MINITORCH_DIST_OWN_SESSION", "1") == "0":
        return False
    if not hasattr(os, "setsid") or os.getpgid(0) == os.getpid():
        return False
    ours, theirs = socket.socketpair()
    relay_py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_relay.py")
    try:
        # started before setsid: the relay is born in this process's group and session
        relay = subprocess.Popen([sys.executable, "-S", relay_py, str(os.getpid()), str(theirs.fileno())],
                                 pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, close_fds=True)
    except OSError:
        ours.close()
        theirs.close()
        return False
    theirs.close()
    ours.settimeout(_READY_TIMEOUT)
    try:
        ready = ours.recv(1) == b"r"  # its handlers are in place: no signal is lost in between
        if ready:
            os.setsid()
    except OSError:
        ready = False
    if not ready:  # it did not start, or this process cannot leave its session: stay, without it
        relay.kill()
        relay.wait()
        ours.close()
        return False
    ours.settimeout(None)
    _relay = relay
    threading.Thread(target=_watch, args=(ours,), name="minitorch-signal-relay", daemon=True).start()
    return True
