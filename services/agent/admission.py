"""Admission: a few jobs run at once, and one that cannot finish in its deadline is refused.

Under load an answer that starts anyway degrades silently: its validation times out and it is
delivered unchecked, or withheld after the reader waited for it. So answers run at most `limit` at
a time; a request waits its turn only while the jobs ahead of it and its own (each as long as
the median of recent ones) still fit before its deadline, and is otherwise refused at once with
RESOURCE_EXHAUSTED, which a client may retry later or elsewhere. The calls to an LLM endpoint are
admitted the same way (models/guided.py): a server that computes one answer at a time (and a
llama-cpp-python server cuts a streaming answer short when another request arrives) is given one.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import AsyncIterator

from prometheus_client import Gauge

from services.common.errors import ResourceExhausted
from services.common.metrics import ANSWERS_IN_FLIGHT

# Recent answer durations the estimate is the median of, and how long one counts: an estimate
# that only busy times fed must not refuse questions forever once the agent is idle.
_WINDOW = 32
_MAX_AGE_SECONDS = 300.0
# A waiting request gives up this share of its time left early, so that the refusal reaches the
# client before its own deadline does.
_REPLY_MARGIN = 0.1


class Admission:
    """`limit` jobs at a time; `jobs` names them in a refusal ("answers", "model calls") and
    `in_flight` counts the running ones."""

    def __init__(self, limit: int, *, jobs: str = "answers", in_flight: Gauge = ANSWERS_IN_FLIGHT) -> None:
        self._limit = limit
        self._jobs = jobs
        self._in_flight = in_flight
        self._slots = asyncio.Semaphore(limit)
        self._running = 0
        self._waiting = 0
        self._durations: deque[tuple[float, float]] = deque(maxlen=_WINDOW)  # (finished at, seconds)

    @property
    def expected_seconds(self) -> float:
        """How long a job takes, from the jobs run in the last _MAX_AGE_SECONDS (0 with none)."""
        recent = [
            seconds for finished, seconds in self._durations if time.monotonic() - finished < _MAX_AGE_SECONDS
        ]
        return statistics.median(recent) if recent else 0.0

    def expected_wait(self) -> float:
        """How long a request arriving now would wait for a slot."""
        if self._running + self._waiting < self._limit:
            return 0.0
        rounds_ahead = (self._waiting + self._running - self._limit) // self._limit + 1
        return rounds_ahead * self.expected_seconds

    @contextlib.asynccontextmanager
    async def slot(self, deadline: float) -> AsyncIterator[None]:
        """Holds a slot for one job; `deadline` is a time.monotonic() instant."""
        answer_s = self.expected_seconds
        now = time.monotonic()
        if now + self.expected_wait() + answer_s > deadline:
            raise self._busy()
        give_up = deadline - answer_s - _REPLY_MARGIN * (deadline - now)
        self._waiting += 1
        try:
            async with asyncio.timeout_at(_loop_time(give_up)):
                await self._slots.acquire()
        except TimeoutError:
            raise self._busy() from None
        finally:
            self._waiting -= 1
        self._running += 1
        self._in_flight.inc()
        started = time.monotonic()
        try:
            yield
            # Only jobs run to the end say how long one takes: one cut short by its client,
            # its deadline or an error says nothing (and one the attacker paced would say anything).
            self._durations.append((time.monotonic(), time.monotonic() - started))
        finally:
            self._running -= 1
            self._in_flight.dec()
            self._slots.release()

    def _busy(self) -> ResourceExhausted:
        return ResourceExhausted(
            f"the agent is running {self._running} {self._jobs} with {self._waiting} waiting, and one "
            f"more would not finish before this question's deadline (one takes about "
            f"{self.expected_seconds:.1f} s); retry later"
        )


def _loop_time(monotonic_instant: float) -> float:
    """A time.monotonic() instant on the event loop's clock (they may differ)."""
    return asyncio.get_running_loop().time() + (monotonic_instant - time.monotonic())
