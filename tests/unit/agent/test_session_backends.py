"""What is particular to each session backend: its storage layout and its failures."""

from __future__ import annotations

import socket
import sqlite3
import time
from datetime import timedelta

import pytest

from services.agent.sessions import RedisSessionStore, SessionConfig, SqliteSessionStore
from services.agent.sessions.sqlite import FILENAME, SCHEMA_VERSION
from services.common.errors import Unavailable
from tests.unit.agent.session_helpers import REDIS_URL, FakeClock, make_turn, sync_redis


def closed_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_sqlite_file_is_wal_with_a_versioned_schema(tmp_path) -> None:
    store = await SqliteSessionStore.open(tmp_path / "data")
    await store.close()
    assert store.path == tmp_path / "data" / FILENAME
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


@pytest.mark.parametrize("blocker", ["data dir is a file", "database is a directory"])
async def test_sqlite_unusable_location_is_unavailable(tmp_path, blocker: str) -> None:
    data_dir = tmp_path / "data"
    if blocker == "data dir is a file":
        data_dir.write_text("")
    else:
        (data_dir / FILENAME).mkdir(parents=True)
    with pytest.raises(Unavailable, match=r"session database .* is unavailable"):
        await SqliteSessionStore.open(data_dir)


async def test_sqlite_refuses_a_schema_newer_than_it_knows(tmp_path) -> None:
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(Unavailable, match="schema version 99"):
        await SqliteSessionStore.open(tmp_path)


async def test_redis_down_is_unavailable_with_a_clear_message() -> None:
    url = f"redis://127.0.0.1:{closed_loopback_port()}/0"
    started = time.monotonic()
    with pytest.raises(Unavailable, match=r"Redis at 127\.0\.0\.1:\d+/0 is unavailable"):
        await RedisSessionStore.open(url)

    store = RedisSessionStore(url)
    try:
        with pytest.raises(Unavailable):
            await store.create("alice", "book")
        with pytest.raises(Unavailable):
            await store.list("alice")
    finally:
        await store.close()
    assert time.monotonic() - started < 10  # a few quick retries, not redis-py's default ten


@pytest.mark.redis
async def test_redis_keys_are_prefixed_capped_and_expire(redis_prefix: str) -> None:
    config = SessionConfig(max_turns=3, expire_after=timedelta(hours=2), retention=timedelta(days=1))
    clock = FakeClock()
    store = await RedisSessionStore.open(REDIS_URL, config, key_prefix=redis_prefix, clock=clock)
    try:
        session_id = (await store.create("alice", "book")).session_id
        for n in range(5):
            await store.append_turn(session_id, "alice", make_turn(n, clock))
        clock.advance(hours=1)
        await store.end(session_id, "alice")
    finally:
        await store.close()

    client = sync_redis()
    try:
        session_key = f"{redis_prefix}session:{session_id}"
        assert set(client.scan_iter(match="*" + session_id + "*")) == {
            session_key.encode(),
            f"{session_key}:turns".encode(),
        }
        assert client.llen(f"{session_key}:turns") == 3
        day_ms = 24 * 3600 * 1000
        # Ended an hour ago (by the fake clock): forgotten a day of retention after that.
        assert day_ms - 60_000 < client.pttl(session_key) <= day_ms
        assert day_ms - 60_000 < client.pttl(f"{session_key}:turns") <= day_ms
        assert 0 < client.pttl(f"{redis_prefix}user:alice") <= day_ms + 2 * 3600 * 1000
        assert client.zscore(f"{redis_prefix}open", session_id) is None
        assert client.zscore(f"{redis_prefix}closed", session_id) is not None
    finally:
        client.close()


def test_config_rejects_inconsistent_idle_times() -> None:
    with pytest.raises(ValueError, match="inactive_after < expire_after"):
        SessionConfig(inactive_after=timedelta(hours=2), expire_after=timedelta(hours=1))
    with pytest.raises(ValueError, match="max_turns"):
        SessionConfig(max_turns=0)
