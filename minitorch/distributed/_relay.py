"""The signal relay of a rank that left its session (see _session.py), run as a script of its own
(`python -S _relay.py <rank pid> <socket fd>`), without minitorch.

It stays in the process group and session the rank was started in, where the terminal's Ctrl-C
(SIGINT), Ctrl-\\ (SIGQUIT) and hang-up (SIGHUP), and a kill of the whole group (`kill -TERM -<pgid>`,
a supervisor's killpg) land, and sends each such signal on to the rank. Ctrl-Z (SIGTSTP) stops the
rank (SIGSTOP: a process alone in a session of its own ignores SIGTSTP) and then this relay, as a
job's processes stop together; SIGCONT goes on to the rank once the job continues.

Its socket's other end is the rank's: when the rank ends, the relay reads the end of the stream and
exits; when the relay is killed by a signal it cannot catch (SIGKILL to the group, which would have
killed the rank in its old group), the rank reads the end of the stream and kills itself.
"""
import os
import signal
import socket
import sys

# what reaches a process group from its terminal or its supervisor, sent on as it came
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
              signal.SIGCONT)


def main() -> int:
    rank, fd = int(sys.argv[1]), int(sys.argv[2])
    link = socket.socket(fileno=fd)

    def forward(signum, frame) -> None:
        try:
            os.kill(rank, signum)
        except ProcessLookupError:
            os._exit(0)

    def stop(signum, frame) -> None:
        try:
            os.kill(rank, signal.SIGSTOP)
        except ProcessLookupError:
            os._exit(0)
        os.kill(os.getpid(), signal.SIGSTOP)  # the job stops as one; its SIGCONT resumes the rank too

    for sig in _FORWARDED:
        signal.signal(sig, forward)
    signal.signal(signal.SIGTSTP, stop)
    link.sendall(b"r")  # ready: the rank may leave its group now
    while True:
        try:
            if not link.recv(64):  # the rank ended (or closed its end)
                return 0
        except InterruptedError:
            continue
        except OSError:
            return 0


if __name__ == "__main__":
    sys.exit(main())
