"""What is particular to each session backend: its storage layout and its failures."""

from __future__ import annotations

import socket
import sqlite3
import time
from datetime import timedelta

import pytest
from structlog.testing import capture_logs

from services.agent.sessions import RedisSessionStore, SessionConfig, SqliteSessionStore
from services.agent.sessions.sqlite import _MIGRATIONS, FILENAME, SCHEMA_VERSION
from services.common.errors import Reason, Unavailable
from tests.private_redis import private_redis
from tests.unit.agent.session_helpers import REDIS_URL, FakeClock, make_turn, sync_redis


def closed_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def assert_says_only_store_unavailable(error: Unavailable, where: str) -> None:
    """What the client reads names no host, URL or file; the log keeps where and why."""
    assert error.message == "session store unavailable"
    assert (error.reason, error.metadata) == (Reason.DEPENDENCY_UNAVAILABLE, {"service": "sessions"})
    assert where not in str(error)


def logged(logs: list[dict], event: str) -> list[dict]:
    return [entry for entry in logs if entry["event"] == event]


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
    with capture_logs() as logs, pytest.raises(Unavailable) as error:
        await SqliteSessionStore.open(data_dir)
    assert_says_only_store_unavailable(error.value, str(tmp_path))
    [entry] = logged(logs, "session_store_unavailable")
    assert (entry["backend"], entry["where"]) == ("sqlite", str(data_dir / FILENAME))


async def test_sqlite_refuses_a_schema_newer_than_it_knows(tmp_path) -> None:
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute("PRAGMA user_version = 99")
    with capture_logs() as logs, pytest.raises(Unavailable) as error:
        await SqliteSessionStore.open(tmp_path)
    assert_says_only_store_unavailable(error.value, str(tmp_path))
    assert "schema version 99" in logged(logs, "session_store_unavailable")[0]["error"]


async def test_sqlite_upgrades_a_database_of_the_first_schema(tmp_path) -> None:
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.executescript(_MIGRATIONS[0])
        db.execute(
            "INSERT INTO sessions VALUES ('00000000-0000-4000-8000-000000000001', 'alice', 'book', "
            "1767603600000000, 1767603600000000, 0, NULL, NULL)"
        )
        db.execute("PRAGMA user_version = 1")
    store = await SqliteSessionStore.open(tmp_path, SessionConfig(max_open_per_user=2), clock=FakeClock())
    try:
        await store.create("alice", "book")
        await store.create("alice", "book")  # the session stored before the upgrade counts: it is ended
        old = await store.get("00000000-0000-4000-8000-000000000001", "alice")
        assert old.state.ended
        listed = [s.session_id for s in (await store.list("alice", include_ended=True))[0]]
        assert listed[-1] == "00000000-0000-4000-8000-000000000001"  # the oldest, listed last
    finally:
        await store.close()
    with sqlite3.connect(tmp_path / FILENAME) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_redis_down_is_unavailable_and_only_the_log_says_where() -> None:
    port = closed_loopback_port()
    url = f"redis://127.0.0.1:{port}/0"
    started = time.monotonic()
    with capture_logs() as logs, pytest.raises(Unavailable) as error:
        await RedisSessionStore.open(url)
    assert_says_only_store_unavailable(error.value, f"127.0.0.1:{port}")
    [entry] = logged(logs, "session_store_unavailable")
    assert (entry["backend"], entry["where"]) == ("redis", f"127.0.0.1:{port}/0")

    store = RedisSessionStore(url)
    try:
        with pytest.raises(Unavailable):
            await store.create("alice", "book")
        with pytest.raises(Unavailable):
            await store.list("alice")
    finally:
        await store.close()
    assert time.monotonic() - started < 10  # a few quick retries, not redis-py's default ten


@pytest.mark.parametrize(
    ("options", "warning"),
    [
        (("--save", "", "--appendonly", "no"), "session_store_not_durable"),
        (("--save", "", "--rename-command", "CONFIG", ""), "session_store_durability_unknown"),
        (("--save", "", "--appendonly", "yes"), None),
        (("--save", "3600 1", "--appendonly", "no"), None),
    ],
    ids=["nothing-on-disk", "config-forbidden", "aof", "rdb"],
)
async def test_redis_without_persistence_is_reported_at_open(options: tuple[str, ...], warning) -> None:
    with private_redis(*options) as server:
        with capture_logs() as logs:
            store = await RedisSessionStore.open(server.url)
        await store.close()
    reported = [e for e in logs if e["event"].startswith("session_store_")]
    assert [e["event"] for e in reported] == ([warning] if warning else [])
    for entry in reported:
        assert entry["log_level"] == "warning" and entry["where"] == str(server.socket)
        assert "appendonly" in entry["advice"]


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
