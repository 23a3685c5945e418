"""`python -m bench.parent_bound PID ARGS...` runs `python ARGS...` so that it is stopped (SIGTERM)
when process PID, the bench that started it, dies, however it dies.

The signal is asked for here, after exec, rather than in a `preexec_fn` between fork and exec: a
`preexec_fn` makes the child run Python's at-fork hooks, and gRPC's, forked while the bench's gRPC
threads were busy, aborted the child (a service that exited with -6 before it served).
Linux sends the signal when the *thread* that started the child ends: start children from a
thread that lives as long as they should (the benches' event loop thread does)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # prctl(2): the signal Linux sends a process when its parent dies


def main(argv: list[str]) -> None:
    parent, python_args = int(argv[0]), argv[1:]
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # it died before the signal was asked for: no one will send it
            sys.exit(f"bench.parent_bound: process {parent} has already exited")
    # The setting outlives exec (only set-user-ID binaries clear it), so it binds the real command.
    os.execv(sys.executable, [sys.executable, *python_args])


if __name__ == "__main__":
    main(sys.argv[1:])
