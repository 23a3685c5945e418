"""Session store fixtures: every store test runs against SQLite and against Redis.

Redis tests use GLOSSATOR_TEST_REDIS_URL (default redis://127.0.0.1:6379/15) with a key prefix of
their own, deleted afterwards; they are skipped when no Redis answers there.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator

import pytest

from services.agent.sessions import (
    RedisSessionStore,
    SessionConfig,
    SessionStore,
    SqliteSessionStore,
)
from tests.unit.agent.session_helpers import REDIS_URL, FakeClock, require_redis, sync_redis

Opener = Callable[[SessionConfig | None, FakeClock], Awaitable[SessionStore]]


@pytest.fixture(scope="session")
def redis_url() -> str:
    return require_redis()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"glossator-test:{uuid.uuid4().hex}:"
    yield prefix
    client = sync_redis()
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def opener(request: pytest.FixtureRequest, tmp_path) -> Opener:
    """Opens a store of the backend under test, always on the same storage: a second open is a restart."""
    if request.param == "sqlite":
        return lambda config, clock: SqliteSessionStore.open(tmp_path, config, clock=clock)
    prefix = request.getfixturevalue("redis_prefix")
    return lambda config, clock: RedisSessionStore.open(REDIS_URL, config, key_prefix=prefix, clock=clock)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def open_store(opener: Opener, clock: FakeClock):
    """`await open_store(config=None)`; every store opened is closed after the test."""
    opened: list[SessionStore] = []

    async def open_(config: SessionConfig | None = None) -> SessionStore:
        store = await opener(config, clock)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        await store.close()


@pytest.fixture
async def store(open_store) -> SessionStore:
    return await open_store()
