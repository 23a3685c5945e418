"""Concurrency limits that refuse at once (RESOURCE_EXHAUSTED) rather than queue.

A queued call would hold its client until its deadline; a refused one can be retried later or
elsewhere, and a server that refuses stays able to answer what it did accept.
"""

from __future__ import annotations

from collections.abc import Iterator
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
