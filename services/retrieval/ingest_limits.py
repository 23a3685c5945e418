"""Limits on Ingest streams, so that a client that stops sending cannot hold a collection or the server.

An Ingest stream holds its collection from the first document to its end. A stream left open
without messages held it for good (a second ingest waited out its deadline), and such streams
held RPC slots until Search and health checks were refused. So a stream ends DEADLINE_EXCEEDED
when its client is idle too long or the stream lasts too long (the documents it had acknowledged
stay stored: ingest is idempotent, the rest can follow in a new stream). An ingest into a busy
collection is ABORTED after a short wait instead of queueing behind it (Indexer.ingest).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

from services.common.errors import DeadlineExceeded

T = TypeVar("T")


async def paced(messages: AsyncIterator[T], idle_seconds: float, total_seconds: float) -> AsyncIterator[T]:
    """The stream's messages, ended with DeadlineExceeded when the next one takes longer than
    `idle_seconds` to come or the stream runs past `total_seconds` (from its first read)."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + total_seconds
    iterator = aiter(messages)
    while True:
        left = ends - loop.time()
        try:
            message = await asyncio.wait_for(anext(iterator), max(0.0, min(idle_seconds, left)))
        except StopAsyncIteration:
            return
        except TimeoutError:
            kept = "documents already acknowledged are kept; send the rest in a new stream"
            if left <= idle_seconds:
                raise DeadlineExceeded(f"Ingest stream ran longer than {total_seconds:g} s; {kept}") from None
            raise DeadlineExceeded(f"no Ingest message for {idle_seconds:g} s; {kept}") from None
        yield message
