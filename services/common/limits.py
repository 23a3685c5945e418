"""Limits that refuse at once (RESOURCE_EXHAUSTED) rather than queue: on concurrency, and on rates.

A queued call would hold its client until its deadline; a refused one can be retried later or
elsewhere, and a server that refuses stays able to answer what it did accept. A rate refusal says
when a retry will pass (google.rpc.RetryInfo, "try again in N s").
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from services.common.errors import ResourceExhausted


class ConcurrencyLimit:
    """At most `limit` holders of a slot at a time, on one event loop (no thread may share it)."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit = limit
        self.what = what
        self.active = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        if self.active >= self.limit:
            raise ResourceExhausted(
                f"{self.limit} {self.what} already running, the most this server takes; retry later"
            )
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1


def over_rate(per_minute: int, what: str, tokens: float) -> ResourceExhausted:
    """The refusal of a token bucket holding `tokens` (< 1) that refills `per_minute` a minute."""
    wait = max(1, math.ceil((1 - tokens) * 60 / per_minute))
    return ResourceExhausted(
        f"more than {per_minute} {what} a minute: try again in {wait} s", retry_after_seconds=wait
    )


class RateLimit:
    """A token bucket per key: `per_minute` calls a minute, a minute's worth at once at most.

    At most `max_keys` buckets are kept (least recently used dropped: a dropped key starts full
    again, which only ever lets a caller through). One event loop, like ConcurrencyLimit.
    """

    def __init__(
        self,
        per_minute: int,
        what: str,
        *,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_minute = per_minute
        self.what = what
        self._max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key: (tokens, at)

    def take(self, key: str) -> None:
        """Spends one token of `key`'s bucket, or raises ResourceExhausted saying when to retry."""
        now = self._clock()
        tokens, at = self._buckets.pop(key, (float(self.per_minute), now))
        tokens = min(float(self.per_minute), tokens + (now - at) * self.per_minute / 60)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            raise over_rate(self.per_minute, self.what, tokens)
        self._buckets[key] = (tokens - 1, now)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
