"""SQLite session store: the embedded default, one file under the data directory.

Every statement runs on one worker thread (a sqlite3 connection belongs to its thread), which also
serialises this process's writers. Each change is one IMMEDIATE transaction, so a crash keeps a turn
whole or not at all. WAL lets reads run beside a write; synchronous=FULL makes a committed turn
survive a power cut as well as a crash, for one fsync per turn.

Layout (schema version in PRAGMA user_version, upgraded by `_MIGRATIONS` on open):
  sessions(session_id, user_id, collection, created_at, last_active_at, turn_count, closed, closed_at,
           quota_key, stored_bytes)
      timestamps in epoch microseconds; closed is NULL, 'expired' or 'terminated'; quota_key whom
      the session counts against, stored_bytes the UTF-8 bytes of its kept turns' bodies
  turns(session_id, seq, body)   seq is the turn's 1-based position in the whole conversation,
      body the Turn as JSON; turns beyond max_turns are deleted oldest first
  meta(name, value)   'page_token_key': the key that signs ListSessions page tokens
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from services.agent.sessions.base import Change, SessionStore, TurnChange, not_found, unavailable
from services.agent.sessions.lifecycle import (
    Clock,
    SessionConfig,
    SessionRecord,
    to_micros,
    utc_now,
)
from services.agent.sessions.model import Turn
from services.agent.sessions.paging import KEY_BYTES, Cursor

FILENAME = "sessions.sqlite3"

_MIGRATIONS = (
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        collection TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_active_at INTEGER NOT NULL,
        turn_count INTEGER NOT NULL,
        closed TEXT,
        closed_at INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX sessions_by_user ON sessions (user_id, last_active_at DESC, session_id DESC);
    CREATE INDEX open_sessions_by_activity ON sessions (last_active_at) WHERE closed IS NULL;
    CREATE INDEX closed_sessions_by_end ON sessions (closed_at) WHERE closed IS NOT NULL;
    CREATE TABLE turns (
        session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    """,
    """
    CREATE INDEX open_sessions_by_user ON sessions (user_id, last_active_at) WHERE closed IS NULL;
    CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
    """,
    """
    ALTER TABLE sessions ADD COLUMN quota_key TEXT NOT NULL DEFAULT '';
    ALTER TABLE sessions ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE sessions SET quota_key = 'user:' || user_id, stored_bytes = (
        SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM turns
        WHERE turns.session_id = sessions.session_id
    );
    CREATE INDEX open_sessions_by_quota ON sessions (quota_key, last_active_at) WHERE closed IS NULL;
    CREATE INDEX stored_bytes_by_quota ON sessions (quota_key, stored_bytes);
    """,
)
SCHEMA_VERSION = len(_MIGRATIONS)

_COLUMNS = (
    "session_id",
    "user_id",
    "collection",
    "created_at",
    "last_active_at",
    "turn_count",
    "closed",
    "closed_at",
    "quota_key",
    "stored_bytes",
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM sessions"
_INSERT = f"INSERT INTO sessions ({', '.join(_COLUMNS)}) VALUES ({', '.join(':' + c for c in _COLUMNS)})"
_UPDATE = (
    f"UPDATE sessions SET {', '.join(f'{c} = :{c}' for c in _COLUMNS[1:])} WHERE session_id = :session_id"
)
_BATCH = 50

T = TypeVar("T")


class SqliteSessionStore(SessionStore):
    """Use `await SqliteSessionStore.open(data_dir)`; the constructor does no I/O."""

    def __init__(self, path: Path, config: SessionConfig | None = None, *, clock: Clock = utc_now) -> None:
        super().__init__(config or SessionConfig(), clock)
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessions-sqlite")
        self._conn: sqlite3.Connection | None = None

    @classmethod
    async def open(
        cls, data_dir: Path, config: SessionConfig | None = None, *, clock: Clock = utc_now
    ) -> SqliteSessionStore:
        """Opens (creating, or upgrading the schema of) data_dir/sessions.sqlite3."""
        store = cls(Path(data_dir) / FILENAME, config, clock=clock)
        try:
            await store._run(store._connect)
        except BaseException:
            store._executor.shutdown()
            raise
        return store

    async def close(self) -> None:
        if self._conn is not None:
            await self._run(self._conn.close)
            self._conn = None
        self._executor.shutdown()

    async def _run(self, work: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, work, *args)
        except (sqlite3.Error, OSError) as exc:
            raise unavailable("sqlite", str(self.path), exc) from exc

    # Storage primitives: each awaits one job on the worker thread.

    async def _insert(self, record: SessionRecord, active_since: datetime) -> bool:
        return await self._run(self._insert_now, record, active_since)

    async def _fetch(self, session_id: str, turns: int) -> tuple[SessionRecord, list[Turn]] | None:
        return await self._run(self._fetch_now, session_id, turns)

    async def _update(
        self, session_id: str, change: Change, turn: Turn | None = None
    ) -> tuple[SessionRecord, SessionRecord]:
        return await self._run(self._update_now, session_id, change, turn)

    async def _update_turn(self, session_id: str, query_id: str, change: TurnChange) -> Turn | None:
        return await self._run(self._update_turn_now, session_id, query_id, change)

    async def _iter_user(self, user_id: str, after: Cursor | None) -> AsyncIterator[SessionRecord]:
        while True:
            records = await self._run(self._user_page_now, user_id, after)
            for record in records:
                yield record
            if len(records) < _BATCH:
                return
            after = Cursor.after(records[-1])

    async def _iter_turns(self, active_since: datetime) -> AsyncIterator[tuple[SessionRecord, Turn]]:
        after: str | None = ""
        while after is not None:
            batch, after = await self._run(self._turns_page_now, to_micros(active_since), after)
            for pair in batch:
                yield pair

    async def _least_recent_open(self, key: str, active_since: datetime, count: int) -> list[str]:
        return await self._run(self._least_recent_open_now, key, active_since, count)

    async def _stored_bytes(self, key: str) -> int:
        return await self._run(self._stored_bytes_now, key)

    async def _idle_open(self, before: datetime) -> list[str]:
        return await self._run(self._idle_open_now, before)

    async def _purge(self, closed_before: datetime) -> int:
        return await self._run(self._purge_now, closed_before)

    async def _load_page_token_key(self) -> bytes:
        return await self._run(self._page_token_key_now)

    # The jobs, on the worker thread.

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are the explicit BEGINs below; timeout: wait for another
        # process's write lock rather than fail at once.
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"schema version {version}; this build knows up to {SCHEMA_VERSION}")
        for number, script in enumerate(_MIGRATIONS[version:], start=version + 1):
            try:
                conn.executescript(f"BEGIN IMMEDIATE;{script}PRAGMA user_version = {number}; COMMIT;")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise sqlite3.ProgrammingError("the session database is closed")
        return self._conn

    @contextmanager
    def _transaction(self, begin: str = "BEGIN IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """IMMEDIATE takes the write lock up front, so a read-modify-write cannot interleave."""
        conn = self._db()
        conn.execute(begin)
        try:
            yield conn
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def _insert_now(self, record: SessionRecord, active_since: datetime) -> bool:
        with self._transaction() as conn:
            (open_sessions,) = conn.execute(
                "SELECT count(*) FROM sessions WHERE quota_key = ? AND closed IS NULL AND last_active_at >= ?",
                (record.quota_key, to_micros(active_since)),
            ).fetchone()
            if open_sessions >= self.config.max_open_per_user:
                return False
            conn.execute(_INSERT, record.to_fields())
        return True

    def _fetch_now(self, session_id: str, turns: int) -> tuple[SessionRecord, list[Turn]] | None:
        with self._transaction("BEGIN") as conn:  # one snapshot for the record and its turns
            row = conn.execute(f"{_SELECT} WHERE session_id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            bodies = conn.execute(
                "SELECT body FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT ?", (session_id, turns)
            ).fetchall()
        return SessionRecord.from_fields(dict(row)), [Turn.from_json(body) for (body,) in reversed(bodies)]

    def _update_now(
        self, session_id: str, change: Change, turn: Turn | None
    ) -> tuple[SessionRecord, SessionRecord]:
        with self._transaction() as conn:
            row = conn.execute(f"{_SELECT} WHERE session_id = ?", (session_id,)).fetchone()
            if row is None:
                raise not_found(session_id)
            before = SessionRecord.from_fields(dict(row))
            after = change(before)
            if after == before:
                return before, after
            if turn is not None:
                stored = self._stored_bytes_now(before.quota_key)
                if stored >= self.config.max_stored_bytes_per_user:
                    raise self.storage_full(stored)
                body = turn.to_json()
                oldest_kept = after.turn_count - self.config.max_turns
                (dropped,) = conn.execute(
                    "SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM turns "
                    "WHERE session_id = ? AND seq <= ?",
                    (session_id, oldest_kept),
                ).fetchone()
                after = replace(after, stored_bytes=after.stored_bytes + len(body.encode()) - dropped)
                conn.execute(
                    "INSERT INTO turns (session_id, seq, body) VALUES (?, ?, ?)",
                    (session_id, after.turn_count, body),
                )
                conn.execute("DELETE FROM turns WHERE session_id = ? AND seq <= ?", (session_id, oldest_kept))
            conn.execute(_UPDATE, after.to_fields())
        return before, after

    def _update_turn_now(self, session_id: str, query_id: str, change: TurnChange) -> Turn | None:
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT seq, body FROM turns WHERE session_id = ? AND json_extract(body, '$.query_id') = ?",
                (session_id, query_id),
            ).fetchone()
            if row is None:
                return None
            before = Turn.from_json(row["body"])
            body = change(before).to_json()
            conn.execute(
                "UPDATE turns SET body = ? WHERE session_id = ? AND seq = ?", (body, session_id, row["seq"])
            )
            conn.execute(
                "UPDATE sessions SET stored_bytes = stored_bytes + ? WHERE session_id = ?",
                (len(body.encode()) - len(row["body"].encode()), session_id),
            )
        return before

    def _user_page_now(self, user_id: str, after: Cursor | None) -> list[SessionRecord]:
        where, params = "user_id = ?", [user_id]
        if after is not None:
            where += " AND (last_active_at, session_id) < (?, ?)"
            params += [after.last_active_us, after.session_id]
        query = f"{_SELECT} WHERE {where} ORDER BY last_active_at DESC, session_id DESC LIMIT {_BATCH}"
        rows = self._db().execute(query, params).fetchall()
        return [SessionRecord.from_fields(dict(row)) for row in rows]

    def _turns_page_now(
        self, active_since_us: int, after: str
    ) -> tuple[list[tuple[SessionRecord, Turn]], str | None]:
        """The turns of the next _BATCH sessions (by id, after `after`) active since then, and the
        id to continue after (None at the end)."""
        with self._transaction("BEGIN") as conn:  # one snapshot for the records and their turns
            rows = conn.execute(
                f"{_SELECT} WHERE last_active_at >= ? AND session_id > ? ORDER BY session_id LIMIT {_BATCH}",
                (active_since_us, after),
            ).fetchall()
            records = {row["session_id"]: SessionRecord.from_fields(dict(row)) for row in rows}
            bodies = conn.execute(
                f"SELECT session_id, body FROM turns WHERE session_id IN ({', '.join('?' * len(records))}) "
                "ORDER BY session_id, seq",
                list(records),
            ).fetchall()
        turns = [(records[session_id], Turn.from_json(body)) for session_id, body in bodies]
        return turns, (rows[-1]["session_id"] if len(rows) == _BATCH else None)

    def _least_recent_open_now(self, key: str, active_since: datetime, count: int) -> list[str]:
        rows = (
            self._db()
            .execute(
                "SELECT session_id FROM sessions WHERE quota_key = ? AND closed IS NULL AND last_active_at >= ? "
                "ORDER BY last_active_at LIMIT ?",
                (key, to_micros(active_since), count),
            )
            .fetchall()
        )
        return [session_id for (session_id,) in rows]

    def _stored_bytes_now(self, key: str) -> int:
        query = "SELECT coalesce(sum(stored_bytes), 0) FROM sessions WHERE quota_key = ?"
        (stored,) = self._db().execute(query, (key,)).fetchone()
        return stored

    def _idle_open_now(self, before: datetime) -> list[str]:
        query = "SELECT session_id FROM sessions WHERE closed IS NULL AND last_active_at < ?"
        rows = self._db().execute(query, (to_micros(before),)).fetchall()
        return [session_id for (session_id,) in rows]

    def _page_token_key_now(self) -> bytes:
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('page_token_key', ?)",
                (secrets.token_bytes(KEY_BYTES),),
            )
            (key,) = conn.execute("SELECT value FROM meta WHERE name = 'page_token_key'").fetchone()
        return key

    def _purge_now(self, closed_before: datetime) -> int:
        with self._transaction() as conn:
            deleted = conn.execute(
                "DELETE FROM sessions WHERE closed IS NOT NULL AND closed_at < ?", (to_micros(closed_before),)
            )
        return deleted.rowcount
