"""Helpers of the session store tests: a movable clock, sample turns, the test Redis."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.agent.sessions import Source, ToolCallRecord, Turn

REDIS_URL = os.environ.get("GLOSSATOR_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@dataclass
class FakeClock:
    """The stores' clock; tests move it instead of waiting."""

    now: datetime = datetime(2026, 1, 5, 9, 0, 0, 123456, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def sync_redis() -> redis.Redis:
    """A client for checks and cleanup that fails at once when nothing listens."""
    return redis.Redis.from_url(
        REDIS_URL, socket_connect_timeout=1, socket_timeout=1, retry=Retry(NoBackoff(), 0)
    )


def require_redis() -> str:
    """The test Redis URL, or a skip saying how to get one when nothing answers there."""
    client = sync_redis()
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL} ({exc}); set GLOSSATOR_TEST_REDIS_URL to run these tests")
    finally:
        client.close()
    return REDIS_URL


def make_turn(n: int, clock: FakeClock) -> Turn:
    return Turn(
        query_id=f"q{n}",
        query=f"What does chapter {n} say about café crème?",
        answer=f"It says ü {n} [1].",
        created_at=clock(),
        sources=[
            Source(
                index=1,
                chunk_id=f"chunk-{n}",
                source_url="https://example.org/book#ch",
                section_title="Coffee",
                section_path=["Book", "Chapter", "Coffee"],
                chunk_index=n,
                relevance_score=0.8125,
                extracted_text="Crème is …",
                title="Book",
                document_id="doc-1",
            )
        ],
        tool_calls=[
            ToolCallRecord(
                name="retrieval_tool",
                arguments=json.dumps({"query": f"chapter {n}", "top_k": 5}),
                output=f"[1] chunk-{n}",
            )
        ],
        user_context={"chapter": str(n), "level": "beginner"},
        selected_text="a highlighted passage" if n % 2 else "",
    )
