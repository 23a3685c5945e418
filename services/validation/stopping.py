"""Stopping a check whose call is over: its deadline has passed or its caller went away.

A check runs in a worker thread (it is seconds of CPU on a long answer and context), and asyncio
cannot stop a thread: cancelling the call cancels the coroutine awaiting it, and the thread would
work on to the end for nobody (a large request did, for more than ten minutes). So the checker
calls `StopSignal.check()` between claims and between embedding batches, and the thread ends there.
"""

from __future__ import annotations

import threading
import time

from services.common.errors import DeadlineExceeded


class CheckAbandoned(Exception):
    """Raised in the worker thread once nobody waits for its verdict; nobody sees it either."""


class StopSignal:
    """Set by the call's coroutine, checked by the thread doing the work."""

    def __init__(self, seconds_left: float | None = None) -> None:
        """seconds_left: the call's remaining time (None: no deadline)."""
        self._deadline = None if seconds_left is None else time.monotonic() + seconds_left
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        """The caller is gone (cancelled): the work stops at its next check."""
        self._abandoned.set()

    def check(self) -> None:
        """Raises when the work should stop: DeadlineExceeded once the deadline has passed (the
        call answers DEADLINE_EXCEEDED, as gRPC would), CheckAbandoned once abandoned."""
        if self._abandoned.is_set():
            raise CheckAbandoned("the call was cancelled")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise DeadlineExceeded("validation did not finish before the call's deadline")
